"""Apply packed token bitmasks to torch logits, on whatever device they live.

The bitmask layout is the one :meth:`stackmask.Constraint.get_mask` returns
and serving engines (vLLM, SGLang, xgrammar) consume: per row, ``int32``
words; token ``i`` is allowed iff bit ``i % 32`` of word ``i // 32`` is set.

    from stackmask.integrations.torch import apply_token_bitmask_inplace
    masks = np.empty((batch, constraint.mask_words), np.int32)
    stackmask.runtime.decoding.fill_masks(constraint, states, masks)
    apply_token_bitmask_inplace(logits, masks)      # logits: (batch, V') on CPU or GPU

The mask is moved to the logits' device once (non-blocking when it comes from
pinned memory) and unpacked there with tensor ops (a shift-and-and over its
bytes); there is no Python loop over the vocabulary.
"""

from __future__ import annotations

import sys
from typing import Sequence

import numpy as np
import torch

__all__ = ["apply_token_bitmask_inplace", "bitmask_to_bool", "allocate_token_bitmask"]

_LITTLE = sys.byteorder == "little"


def allocate_token_bitmask(batch: int, vocab_size: int, pin_memory: bool = False) -> torch.Tensor:
    """A CPU ``int32`` tensor ``(batch, ceil(vocab_size / 32))`` to fill with
    masks (its ``.numpy()`` view can be handed to ``get_mask(out=...)`` /
    ``fill_masks``). ``pin_memory=True`` makes the host-to-GPU copy in
    :func:`apply_token_bitmask_inplace` asynchronous."""
    words = (int(vocab_size) + 31) // 32
    t = torch.empty((int(batch), words), dtype=torch.int32)
    if pin_memory and torch.cuda.is_available():
        t = t.pin_memory()
    return t


def _as_int32_tensor(bitmask) -> torch.Tensor:
    if isinstance(bitmask, torch.Tensor):
        t = bitmask
        if t.dtype == torch.int32:
            return t
        if getattr(torch, "uint32", None) is not None and t.dtype == torch.uint32:
            return t.contiguous().view(torch.int32)
        raise TypeError(f"bitmask must hold int32 words, not {t.dtype}")
    a = np.asarray(bitmask)
    if a.dtype == np.int32:
        pass
    elif a.dtype == np.uint32:
        a = np.ascontiguousarray(a).view(np.int32)
    else:
        raise TypeError(f"bitmask must hold int32 words, not {a.dtype}")
    return torch.from_numpy(np.ascontiguousarray(a))


def _index_tensor(indices, device) -> torch.Tensor:
    if isinstance(indices, torch.Tensor):
        idx = indices.to(device=device, dtype=torch.long)
    else:
        idx = torch.as_tensor(np.asarray(indices, dtype=np.int64).reshape(-1), device=device)
    return idx.reshape(-1)


def bitmask_to_bool(bitmask: torch.Tensor, width: int, allowed: bool = True) -> torch.Tensor:
    """Unpack ``(n, words)`` int32 words into an ``(n, min(width, words*32))``
    bool tensor on the bitmask's device: True where a token is allowed (or,
    with ``allowed=False``, where it is disallowed)."""
    n, words = bitmask.shape
    ncols = min(int(width), words * 32)
    if _LITTLE:
        nbytes = (ncols + 7) // 8
        by = bitmask.contiguous().view(torch.uint8)[:, :nbytes]
        if not allowed:
            by = torch.bitwise_not(by)
        if by.device.type == "cpu":
            # numpy's unpackbits is a tight C loop: several times faster than tensor ops on CPU
            bits = np.unpackbits(by.numpy(), axis=1, count=ncols, bitorder="little")
            return torch.from_numpy(bits.view(np.bool_))
        return _unpack_bytes(by, ncols)
    nw = (ncols + 31) // 32                         # pragma: no cover (big-endian hosts)
    shifts = torch.arange(32, dtype=torch.int32, device=bitmask.device)
    bits = ((bitmask[:, :nw].unsqueeze(-1) >> shifts) & 1).bool()
    bits = bits.reshape(n, nw * 32)[:, :ncols]
    return bits if allowed else ~bits


def _unpack_bytes(by: torch.Tensor, ncols: int) -> torch.Tensor:
    """(n, nbytes) uint8 -> (n, ncols) bool with tensor ops (any device; used off the CPU)."""
    n, nbytes = by.shape
    shifts = torch.arange(8, dtype=torch.uint8, device=by.device)
    bits = (by.unsqueeze(-1) >> shifts) & 1
    return bits.reshape(n, nbytes * 8)[:, :ncols].bool()


def apply_token_bitmask_inplace(logits: torch.Tensor, bitmask, indices: Sequence[int] | None = None
                                ) -> torch.Tensor:
    """Set the logits of disallowed tokens to ``-inf``, in place; returns ``logits``.

    ``logits``: floating tensor ``(batch, V')`` (or ``(V',)``) on any device.
    ``bitmask``: int32 (or uint32) words, numpy array or torch tensor on any
    device, ``(n, words)`` (or ``(words,)``); bit ``i % 32`` of word ``i // 32``
    allows token ``i``.

    Widths: columns ``>= words * 32`` (logits wider than the mask, e.g. a
    model's padded embedding rows) are disallowed; mask bits ``>= V'``
    (logits narrower than the mask) are ignored.

    Rows: with ``indices=None`` the mask must have one row per logits row.
    With ``indices`` (a list/array/tensor of logits row numbers) only those
    rows are masked and the others are left untouched; the mask then either
    has one row per logits row (row ``indices[k]`` of the mask is used, as in
    xgrammar's and vLLM's convention) or exactly ``len(indices)`` rows (row
    ``k`` of the mask applies to logits row ``indices[k]``). The first reading
    wins when both fit (``n == batch == len(indices)``).

    A row whose mask allows nothing becomes all ``-inf``; sampling from it
    yields NaNs, so callers must not produce empty masks (a viable
    :class:`stackmask.State` never has one).
    """
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError("logits must be a floating-point torch tensor")
    bm = _as_int32_tensor(bitmask)
    squeeze = logits.dim() == 1
    lg = logits.unsqueeze(0) if squeeze else logits
    if lg.dim() != 2:
        raise ValueError(f"logits must be (batch, vocab) or (vocab,), got shape {tuple(logits.shape)}")
    if bm.dim() == 1:
        bm = bm.unsqueeze(0)
    if bm.dim() != 2:
        raise ValueError(f"bitmask must be (n, words) or (words,), got shape {tuple(bm.shape)}")
    batch, width = lg.shape
    n, words = bm.shape
    idx = None
    if indices is None:
        if n != batch:
            raise ValueError(f"bitmask has {n} rows but logits have {batch}; pass indices")
    else:
        idx_cpu = _index_tensor(indices, "cpu")
        if idx_cpu.numel() == 0:
            return logits
        if int(idx_cpu.min()) < -batch or int(idx_cpu.max()) >= batch:
            raise IndexError(f"indices out of range for {batch} logits rows")
        idx_cpu = idx_cpu % batch
        if n == batch:
            bm = bm.index_select(0, idx_cpu.to(bm.device))
        elif n != idx_cpu.numel():
            raise ValueError(f"bitmask has {n} rows: expected {batch} (one per logits row) "
                             f"or {idx_cpu.numel()} (one per index)")
        idx = idx_cpu.to(lg.device)
    if bm.device != lg.device:
        bm = bm.to(lg.device, non_blocking=True)
    banned = bitmask_to_bool(bm, width, allowed=False)
    ncols = banned.shape[1]
    neg = float("-inf")
    if idx is None:
        lg[:, :ncols].masked_fill_(banned, neg)
        if width > ncols:
            lg[:, ncols:] = neg
    else:
        sub = lg.index_select(0, idx)
        sub[:, :ncols].masked_fill_(banned, neg)
        if width > ncols:
            sub[:, ncols:] = neg
        lg.index_copy_(0, idx, sub)
    return logits
