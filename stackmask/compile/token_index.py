"""The vocabulary index: text tokens in byte order, duplicates grouped, byte columns.

Built once per vocabulary and shared by every grammar (the terminal walk visits
tokens in byte order, so tokens sharing a prefix share the scanner's work). It is
kept per :class:`Vocab` object in process and, given a cache directory, on disk
as plain data keyed by the vocabulary's fingerprint (``vocab-*.smv`` beside the
artifacts), so a new process loads it instead of sorting the vocabulary again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import weakref
from bisect import bisect_left
from pathlib import Path

import numpy as np
from pyroaring import BitMap

from ..native import module as _native_module
from ..plain import Codec
from ..vocab import Vocab
from ..wfa.weights import bitmap_from_array
from .. import artifact

log = logging.getLogger("stackmask")

#: version of the on-disk index layout (part of its key)
INDEX_FORMAT = 1


class VocabIndex:
    """The vocabulary's text tokens sorted by bytes, duplicates grouped (one per vocabulary)."""

    def __init__(self, vocab: Vocab):
        ids = [int(i) for i in vocab.text_token_ids()]
        self.fingerprint = vocab.fingerprint
        tokens = vocab.tokens
        ids.sort(key=lambda i: tokens[i])
        toks: list[bytes] = []
        groups: list[list[int]] = []
        for i in ids:
            b = tokens[i]
            if toks and toks[-1] == b:
                groups[-1].append(i)
            else:
                toks.append(b)
                groups.append([i])
        # the byte strings in order (bisected by the trie walks), as a tuple: the garbage
        # collector untracks a tuple of bytes after its first pass, while every full
        # collection would walk a list's 151k references (touching every token's bytes
        # object: megabytes of the CPU caches flushed, the next mask slower); token ids are
        # kept in arrays for the same reason (a list of 151k id tuples cost ~4 ms per pass)
        self.toks = tuple(toks)
        # byte-order position -> first token id (duplicates are expanded at the end)
        self.first_id = np.array([g[0] for g in groups], dtype=np.int64)
        self.dups = {k: g[1:] for k, g in enumerate(groups) if len(g) > 1}
        self._dup_keys = np.array(sorted(self.dups), dtype=np.int64)
        self._columns = self._byte_columns()
        self._all = None           # bitmap of every text token id (text_ids)
        self._id_bits = None       # 1 + the largest first id (bitmap_of)
        self._horizons: dict = {}  # share -> horizon (horizon)

    def first_byte_bounds(self) -> list[int]:
        """``bounds[b]:bounds[b + 1]``: the byte-order positions of the tokens starting with ``b``."""
        b = getattr(self, "_first_bounds", None)
        if b is None:
            b = self._first_bounds = [bisect_left(self.toks, bytes([x])) for x in range(256)] + [len(self.toks)]
        return b

    def first_byte_cuts(self, positions: np.ndarray) -> list[int]:
        """For ascending byte-order ``positions``: ``cut[b]:cut[b + 1]`` the slice of them
        that starts with byte ``b`` (one search against the bounds as an array, kept: a
        search against the list converts it first, ~15 µs a call)."""
        arr = getattr(self, "_first_bounds_arr", None)
        if arr is None:
            arr = self._first_bounds_arr = np.asarray(self.first_byte_bounds(), dtype=np.int64)
        return np.searchsorted(positions, arr).tolist()

    def common_prefixes(self) -> list[int]:
        """``lcp[p]``: the length of the common prefix of the tokens at byte-order positions
        ``p - 1`` and ``p`` (``lcp[0] == 0``): a walk of the tokens in byte order keeps
        that many bytes of its path from one token to the next."""
        lcp = getattr(self, "_lcp", None)
        if lcp is None:
            toks = self.toks
            lcp = [0] * len(toks)
            for p in range(1, len(toks)):
                a, b = toks[p - 1], toks[p]
                m = min(len(a), len(b))
                k = 0
                while k < m and a[k] == b[k]:
                    k += 1
                lcp[p] = k
            self._lcp = lcp
        return lcp

    def flat_bytes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(blob, offsets)``: every token's bytes in byte order, concatenated (uint8), and
        ``offsets[p]:offsets[p + 1]`` the bytes of position ``p`` (for runs over a few
        positions, e.g. the tokens starting with the bytes a lexer state accepts)."""
        f = getattr(self, "_flat", None)
        if f is None:
            lengths = np.fromiter((len(t) for t in self.toks), dtype=np.int64, count=len(self.toks))
            offsets = np.zeros(len(self.toks) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            f = self._flat = (np.frombuffer(b"".join(self.toks), dtype=np.uint8), offsets)
        return f

    def byte_columns(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The tokens ordered by decreasing length (``order``: byte-order positions) and,
        per byte column ``j``, the ``j``-th bytes of the tokens longer than ``j`` in that
        order (a prefix of it): a whole-vocabulary DFA run is one gather per column over
        a shrinking prefix, with no padding."""
        return self._columns

    def _byte_columns(self) -> tuple[np.ndarray, list[np.ndarray]]:
        lengths = np.fromiter((len(t) for t in self.toks), dtype=np.int64, count=len(self.toks))
        order = np.argsort(-lengths, kind="stable")
        width = int(lengths.max()) if len(lengths) else 0
        flat = np.frombuffer(b"".join(self.toks[i].ljust(width, b"\0") for i in order.tolist()),
                             dtype=np.uint8).reshape(len(order), width)
        counts = np.searchsorted(-lengths[order], -np.arange(width), side="left")  # longer than j
        return order, [np.ascontiguousarray(flat[:int(k), j]) for j, k in enumerate(counts)]

    #: sets of at least this many tokens are built by the compiled extension
    #: (``_native.roaring_of_positions``: ~6 µs for any set, where pyroaring building
    #: from ids costs ~1 µs for a few and ~1-2 ms for tens of thousands)
    NATIVE_FROM = 64

    def bitmap_of(self, positions: np.ndarray) -> BitMap:
        """Token ids of the given byte-order positions (distinct; duplicates included) as a
        bitmap. A set of more than half the vocabulary is built as the complement of the
        others (a bitmap from many unsorted ids costs several times more)."""
        pos = np.asarray(positions, dtype=np.int64)
        n = len(self.toks)
        if len(pos) >= self.NATIVE_FROM:
            native = _native_module()
            if native is not None:          # marked in a bitset, written as roaring's format
                if self._id_bits is None:
                    self._id_bits = int(self.first_id.max(initial=-1)) + 1
                bm = BitMap.deserialize(native.roaring_of_positions(
                    np.ascontiguousarray(pos), self.first_id, self._id_bits))
                extra = self._dup_ids(pos)
                if extra:
                    bm.update(extra)
                return bm
        if 2 * len(pos) <= n:
            return bitmap_from_array(self.ids_of(pos))
        keep = np.ones(n, dtype=bool)
        keep[pos] = False
        return self.text_ids() - bitmap_from_array(self.ids_of(np.flatnonzero(keep)))

    def text_ids(self) -> BitMap:
        """Every text token id (duplicates included), made once per vocabulary (shared:
        do not modify)."""
        if self._all is None:
            self._all = bitmap_from_array(self.ids_of(np.arange(len(self.toks))))
        return self._all

    def max_length(self) -> int:
        """The byte length of the longest token (what ``Vocab.max_token_bytes`` says)."""
        order = self.byte_columns()[0]           # by decreasing length
        return len(self.toks[int(order[0])]) if len(order) else 0

    def horizon(self, share: float) -> int:
        """:func:`base_horizon` of the tokens' byte lengths, made once per ``share`` (a
        sort of the whole vocabulary: ~3 ms with 151k tokens, read by every grammar's
        build)."""
        h = self._horizons.get(share)
        if h is None:
            h = self._horizons[share] = base_horizon(np.diff(self.flat_bytes()[1]), share)
        return h

    def ids_of(self, positions: list[int]) -> np.ndarray:
        """Token ids of the given byte-order positions (duplicates included)."""
        pos = np.asarray(positions, dtype=np.int64)
        out = self.first_id[pos]
        extra = self._dup_ids(pos)
        if extra:
            out = np.concatenate([out, np.asarray(extra, dtype=np.int64)])
        return out

    def _dup_ids(self, pos: np.ndarray) -> list[int]:
        """The ids past the first of the positions ``pos`` whose token has several."""
        if not self.dups:
            return []
        hit = pos[np.isin(pos, self._dup_keys)]
        return [i for p in hit.tolist() for i in self.dups[p]]

    # -- plain data (the on-disk cache) ---------------------------------------------------
    def to_data(self) -> dict:
        """The index as plain data (:mod:`stackmask.plain`): arrays and byte blobs."""
        lengths = np.fromiter((len(t) for t in self.toks), dtype=np.int64, count=len(self.toks))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        keys = sorted(self.dups)
        dup_off = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum([len(self.dups[k]) for k in keys], out=dup_off[1:])
        order, columns = self._columns
        return {"fingerprint": self.fingerprint, "toks": b"".join(self.toks),
                "offsets": offsets, "first_id": self.first_id,
                "dup_keys": np.asarray(keys, dtype=np.int64), "dup_off": dup_off,
                "dup_ids": np.asarray([i for k in keys for i in self.dups[k]], dtype=np.int64),
                "order": order, "columns": tuple(c.tobytes() for c in columns)}

    @classmethod
    def from_data(cls, data: dict) -> "VocabIndex":
        """The index of :meth:`to_data` (malformed data raises ``ValueError``)."""
        self = cls.__new__(cls)
        self.fingerprint = data["fingerprint"]
        blob, off = data["toks"], data["offsets"].tolist()
        if not off or off[0] != 0 or off[-1] != len(blob):
            raise ValueError("malformed vocabulary index")
        self.toks = tuple(blob[a:b] for a, b in zip(off, off[1:]))
        self.first_id = np.array(data["first_id"], dtype=np.int64)
        keys, doff, dids = data["dup_keys"].tolist(), data["dup_off"].tolist(), data["dup_ids"].tolist()
        self.dups = {k: dids[a:b] for k, a, b in zip(keys, doff, doff[1:])}
        self._dup_keys = np.array(keys, dtype=np.int64)
        order = np.array(data["order"], dtype=np.int64)
        columns = [np.frombuffer(c, dtype=np.uint8) for c in data["columns"]]
        if len(self.first_id) != len(self.toks) or len(order) != len(self.toks) or any(
                len(c) > len(order) for c in columns):
            raise ValueError("malformed vocabulary index")
        self._columns = (order, columns)
        self._all = None
        self._id_bits = None
        self._horizons = {}
        return self


def base_horizon(lengths: np.ndarray, share: float) -> int:
    """The smallest ``h`` such that at most ``share`` of the tokens (``lengths``: their
    byte lengths) are longer than ``h``."""
    if not len(lengths):
        return 0
    srt = np.sort(lengths)
    return int(srt[max(0, int(np.ceil(len(srt) * (1 - share))) - 1)])


_INDEX: "weakref.WeakKeyDictionary[Vocab, VocabIndex]" = weakref.WeakKeyDictionary()
_INDEX_LOCK = threading.Lock()
_CODEC = Codec()


def index_location(directory: Path, vocab: Vocab) -> tuple[Path, bytes]:
    """``(path, key)`` of the on-disk index of ``vocab`` in the cache ``directory``."""
    key = hashlib.sha256(f"stackmask-vocab-index:{INDEX_FORMAT}:{artifact.FORMAT_VERSION}:"
                         f"{artifact.code_fingerprint()}\0{vocab.fingerprint}".encode()).digest()
    return directory / f"vocab-{key.hex()[:40]}.smv", key


def vocab_index(vocab: Vocab, directory: Path | None = None) -> VocabIndex:
    """The shared :class:`VocabIndex` of ``vocab``: computed once per vocabulary object;
    with a cache ``directory``, loaded from it (or computed and saved to it)."""
    with _INDEX_LOCK:
        idx = _INDEX.get(vocab)
        if idx is not None:
            return idx
        if directory is not None:
            path, key = index_location(directory, vocab)
            idx = artifact.load(path, key, lambda body: VocabIndex.from_data(_CODEC.loads(body)))
            if idx is not None and idx.fingerprint != vocab.fingerprint:
                idx = None
        if idx is None:
            log.debug("stackmask: indexing the vocabulary (%d tokens)", vocab.size)
            idx = VocabIndex(vocab)
            if directory is not None:
                artifact.try_save(path, key, _CODEC.dumps(idx.to_data()))
        _INDEX[vocab] = idx
        return idx


__all__ = ["VocabIndex", "vocab_index", "index_location", "base_horizon"]
