"""Weighted automata with token-set weights (roaring bitmaps), and the polycyclic monoid.

* :mod:`.monoid` — stack effects ``pop(a1)…pop(ak)·push(b1)…push(bm)`` with immediate
  cancellation and ZERO on mismatch.
* :mod:`.weights` — interning of token sets to small ids, dense packed-mask cache.
* :mod:`.automaton` — WFA / DWA over the (∪, ∩) semiring of token sets: determinize, minimize,
  prune_accepted; "accept here" final weights with early stopping (see its docstring).
"""

from .automaton import (
    ANY,
    DEAD,
    DEFAULT,
    DWA,
    WFA,
    CyclicAutomatonError,
    DeterminizationLimitError,
    determinize,
    is_acyclic,
    max_depth,
    minimize,
    prune_accepted,
    topological_order,
)
from .monoid import IDENTITY, ZERO, StackEffect, apply, compose, pop, push
from .weights import (
    EMPTY_ID,
    UNIVERSE_ID,
    WeightTable,
    bitmap_from_array,
    bitmap_from_mask,
    mask_from_bitmap,
)

__all__ = [
    "ANY", "DEAD", "DEFAULT", "DWA", "WFA", "CyclicAutomatonError", "DeterminizationLimitError",
    "determinize", "is_acyclic", "max_depth", "minimize", "prune_accepted", "topological_order",
    "IDENTITY", "ZERO", "StackEffect", "apply", "compose", "pop", "push",
    "EMPTY_ID", "UNIVERSE_ID", "WeightTable", "bitmap_from_array", "bitmap_from_mask",
    "mask_from_bitmap",
]
