"""The decoding state value and packed token masks.

A :class:`State` is a tuple of *heads*: a GSS node (the top of one or more parse
stacks) paired with a lexer configuration id. States are immutable values; keep
old ones to fork or roll back. A mask is ``int32`` words, bit ``id % 32`` of word
``id // 32``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["State", "mask_to_ids", "ids_to_mask"]


class State:
    """An immutable decoding state. Keep old states to fork or roll back."""

    __slots__ = ("heads", "finished", "mask_key", "mask_src", "__weakref__")

    #: the slots ``__init__`` sets to fixed values (for a new unfinished state): the
    #: compiled commit (``stackmask._native``) builds states without calling ``__init__``
    #: and sets these (a test checks that both give equal states)
    FIXED_SLOTS = (("finished", False), ("mask_key", None), ("mask_src", None))

    def __init__(self, heads: tuple, finished: bool = False):
        self.heads = heads          # tuple of (GSS node, lexer config id)
        self.finished = finished    # EOS committed
        # kept by the masker (:mod:`stackmask.runtime.masker`), not part of the value:
        self.mask_key = None        # the token sets of its mask, set by the masker's first walk
        self.mask_src = None        # its mask, kept on it (the start state only: Masker.pin)

    def __repr__(self) -> str:
        return f"<stackmask.State heads={len(self.heads)}{' finished' if self.finished else ''}>"


def mask_to_ids(mask: np.ndarray, size: int) -> np.ndarray:
    """Sorted ids of the bits set in the packed ``mask`` (below ``size``)."""
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little")[:size]
    return np.flatnonzero(bits)


def ids_to_mask(ids: Iterable[int], size: int, out: np.ndarray | None = None) -> np.ndarray:
    """The packed mask (int32 words) of ``ids`` over ``size`` bits; fills ``out`` when given."""
    words = (size + 31) // 32
    bits = np.zeros(words * 32, dtype=np.uint8)
    idx = np.fromiter(ids, dtype=np.int64)
    if idx.size:
        bits[idx] = 1
    packed = np.packbits(bits, bitorder="little").view("<i4")
    if out is None:
        return packed.astype(np.int32)
    out[...] = packed
    return out
