"""Token-set weights (roaring bitmaps) and the automaton utilities the compiler uses.

* :mod:`.weights` — interning of token sets to small ids (set operations memoized on ids),
  the dense packed-mask cache, bitmap <-> array/mask conversions.
* :mod:`.automaton` — :func:`topological_order` of a state graph (cycle detection).
"""

from .automaton import topological_order
from .weights import EMPTY_ID, UNIVERSE_ID, WeightTable, bitmap_from_array, mask_from_bitmap

__all__ = ["topological_order", "EMPTY_ID", "UNIVERSE_ID", "WeightTable", "bitmap_from_array",
           "mask_from_bitmap"]
