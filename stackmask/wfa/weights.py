"""Token-set weights: roaring bitmaps, interned to small ints, with a cached dense form.

The semiring is (sets of token ids, ∪, ∩, ∅, universe).  Compilation works on pyroaring
bitmaps; the runtime touches dense packed masks (``numpy.int32`` words, bit ``i % 32`` of word
``i // 32``, the layout of ``Constraint.get_mask``), computed once per interned weight.
"""

from __future__ import annotations

import array
import hashlib
import struct
from typing import Iterable, Union

import numpy as np
from pyroaring import BitMap, FrozenBitMap

from .. import native
from ..memo import Memo

__all__ = [
    "WeightTable",
    "EMPTY_ID",
    "UNIVERSE_ID",
    "as_frozen",
    "bitmap_from_array",
    "mask_from_bitmap",
    "n_words",
]

EMPTY_ID = 0
UNIVERSE_ID = 1

WeightLike = Union[BitMap, FrozenBitMap, Iterable[int]]


def n_words(n_bits: int) -> int:
    """Number of int32 words of a packed mask with ``n_bits`` bits."""
    return (int(n_bits) + 31) // 32


def bitmap_from_array(ids: np.ndarray) -> BitMap:
    """Build a BitMap from a numpy array of non-negative ids (fast path via array.array)."""
    a = np.ascontiguousarray(ids, dtype=np.uint32)
    bm = BitMap()
    if a.size:
        bm.update(array.array("I", a.tobytes()))
    return bm


def as_frozen(w: WeightLike) -> FrozenBitMap:
    if isinstance(w, FrozenBitMap):
        return w
    if isinstance(w, BitMap):
        return FrozenBitMap(w)
    if isinstance(w, np.ndarray):
        return FrozenBitMap(bitmap_from_array(w))
    if isinstance(w, range) and w.step == 1:
        bm = BitMap()
        if len(w):
            bm.add_range(w.start, w.stop)
        return FrozenBitMap(bm)
    return FrozenBitMap(w)


def _canonical(bm: WeightLike) -> FrozenBitMap:
    """The set as a FrozenBitMap with every container in its most compact form, so equal
    sets serialize to equal bytes (the interning key). pyroaring run-optimizes every bitmap
    it builds (its default): one copy, ~8 µs for a 24 KB set, where three passes (copy,
    run_optimize, copy) were most of interning; :func:`as_frozen` builds the other forms."""
    return FrozenBitMap(bm) if isinstance(bm, (BitMap, FrozenBitMap)) else as_frozen(bm)


_RESOLVE = object()


def mask_from_bitmap(bm: WeightLike, n_bits: int, compiled=_RESOLVE) -> np.ndarray:
    """Dense packed mask (int32 words, bit ``i % 32`` of word ``i // 32``) of a token set.

    Compiled (``_native.roaring_dense``; ``compiled``: the module, None for the
    pure-Python path, by default :func:`stackmask.native.module`): the set's portable
    serialization decoded container by container. The pure-Python path below is the
    reference.

    Ids ``>= n_bits`` raise ValueError (a weight must fit the mask width). Small sets
    scatter their ids' bits; large ones decode the roaring portable serialization
    container by container (bitmap containers are copied as they are, array and run
    containers are scattered with numpy), so the cost is a few numpy calls per 65,536
    ids whatever the set's size.
    """
    nw = n_words(n_bits)
    if not isinstance(bm, (BitMap, FrozenBitMap)):
        bm = as_frozen(bm)
    if len(bm) == 0:
        return np.zeros(nw, dtype=np.int32)
    if bm.max() >= n_bits:
        raise ValueError(f"token id {bm.max()} does not fit a mask of {n_bits} bits")
    n = len(bm)
    if compiled is _RESOLVE:
        compiled = native.module()
    if compiled is not None:
        out = np.zeros(nw, dtype=np.int32)
        compiled.roaring_dense(bm.serialize(), out.view(np.uint32))
        return out
    out = _mask_by_pattern(bm, n_bits)
    if out is not None:
        return out
    if n_bits - n <= _MEDIUM_SET < n:
        # nearly every token (typical of masks inside strings and comments): the few
        # missing ids are cheaper to scatter than the set's containers to decode
        universe = BitMap()
        universe.add_range(0, n_bits)
        out = ~mask_from_bitmap(universe - bm, n_bits, None)
        if n_bits & 31:
            out[-1] &= np.int32((1 << (n_bits & 31)) - 1)     # no bits past n_bits
        return out
    if n <= _SMALL_SET:
        # few ids: one scatter of their bits (bitwise_or.at handles ids sharing a word)
        ids = np.frombuffer(bm.to_array(), dtype=np.uint32)
        out = np.zeros(nw, dtype=np.uint32)
        np.bitwise_or.at(out, ids >> 5, _ONE << (ids & 31))
        return out.view(np.int32)
    if n <= _MEDIUM_SET:
        flags = np.zeros(nw * 32, dtype=np.uint8)
        flags[np.frombuffer(bm.to_array(), dtype=np.uint32)] = 1
        return np.packbits(flags, bitorder="little").view(np.int32)
    n_chunks = (nw * 32 + 65535) >> 16
    out = np.zeros(n_chunks * 2048, dtype=np.uint32)
    view = out.view(np.uint8)
    for key, kind, payload in _containers(bm.serialize()):
        chunk = view[key * 8192:(key + 1) * 8192]
        if kind == _BITMAP:
            chunk[:] = np.frombuffer(payload, dtype=np.uint8)
        elif kind == _ARRAY:
            flags = np.zeros(65536, dtype=np.uint8)
            flags[np.frombuffer(payload, dtype="<u2")] = 1
            chunk[:] = np.packbits(flags, bitorder="little")
        else:
            runs = np.frombuffer(payload, dtype="<u2").astype(np.int64).reshape(-1, 2)
            ends = runs[:, 0] + runs[:, 1] + 1                 # sorted, disjoint runs
            gaps = runs[:, 0] - np.concatenate(([0], ends[:-1]))
            lengths = np.empty(2 * len(runs) + 1, dtype=np.int64)
            lengths[0:-1:2] = gaps
            lengths[1::2] = runs[:, 1] + 1
            lengths[-1] = 65536 - ends[-1]
            flags = np.repeat(np.tile(np.array([0, 1], dtype=np.uint8), len(runs) + 1)[:len(lengths)],
                              lengths)
            chunk[:] = np.packbits(flags, bitorder="little")
    return out[:nw].view(np.int32).copy()


_ARRAY, _BITMAP, _RUN = 0, 1, 2
# Measured crossovers (numpy call overhead vs work per id): below _SMALL_SET ids a
# scatter of bits is cheapest, below _MEDIUM_SET a byte-flag array + packbits, above
# that the container-by-container decode (bitmap containers are plain copies).
_SMALL_SET = 1024
_MEDIUM_SET = 8192
_ONE = np.uint32(1)


class _Pattern:
    """A fixed set of every other id (the bits of 0x55555555 words) in each chunk of
    65,536 ids that ids below ``n_bits`` fall in (the last chunk whole, past
    ``n_bits``), held as bitmap containers, and its packed mask. Each chunk holds
    32,768 of the pattern's ids, so the XOR of a token set with it keeps more than
    4,096 ids in every chunk unless the set nearly equals the pattern there (in a last
    chunk of at most 57,342 ids below ``n_bits``, never: the pattern's ids past
    ``n_bits`` stay). Roaring then keeps each container of the XOR as a bitmap and its
    serialization ends with the packed words of every chunk, in order: one buffer
    XOR-ed with the pattern's mask is the set's mask (past ``n_bits`` the pattern's
    bits cancel). The set's own containers (arrays, runs, bitmaps) are never decoded
    one by one."""

    def __init__(self, n_bits: int):
        nw = n_words(n_bits)
        self.n_chunks = (n_bits + 65535) >> 16
        full = np.full(self.n_chunks * 2048, 0x55555555, dtype=np.uint32)
        ids = np.flatnonzero(np.unpackbits(full.view(np.uint8), bitorder="little"))
        bm = BitMap()
        bm.update(array.array("I", ids.astype(np.uint32).tobytes()))
        self.bitmap = FrozenBitMap(bm)           # never run-optimized: bitmap containers
        self.words = full[:nw].copy()
        self.n_words = nw
        # the serialization's head when every chunk is one bitmap container: cookie,
        # container count, then (key, cardinality - 1) per chunk
        self.head = struct.Struct(f"<II{2 * self.n_chunks}H")
        self.keys = tuple(range(self.n_chunks))
        self.payload = 8 + 8 * self.n_chunks      # head + 32-bit offsets per container


_PATTERNS: dict = {}


def _pattern(n_bits: int) -> _Pattern:
    pat = _PATTERNS.get(n_bits)
    if pat is None:
        pat = _PATTERNS.setdefault(n_bits, _Pattern(n_bits))
    return pat


def _mask_by_pattern(bm, n_bits: int):
    """The packed mask of ``bm`` (ids below ``n_bits``) read from the serialization of
    ``bm ^ pattern`` (see :class:`_Pattern`), or None where a container of that XOR is
    not a bitmap container (a chunk where the set nearly equals the pattern): the
    caller decodes the set itself."""
    pat = _pattern(n_bits)
    data = (bm ^ pat.bitmap).serialize()
    head = pat.head
    if len(data) < head.size:
        return None
    h = head.unpack_from(data)
    if h[0] != 12346 or h[1] != pat.n_chunks or h[2::2] != pat.keys or min(h[3::2]) < 4096:
        return None                    # runs, a missing chunk, or an array container
    words = np.frombuffer(data, dtype=np.uint32, count=pat.n_words, offset=pat.payload)
    return np.bitwise_xor(words, pat.words).view(np.int32)


def _containers(data: bytes):
    """``(key, kind, payload bytes)`` of each container of a roaring portable serialization."""
    mv = memoryview(data)
    cookie = int.from_bytes(mv[0:4], "little")
    pos = 4
    if (cookie & 0xFFFF) == 12347:          # SERIAL_COOKIE: has run containers
        size = (cookie >> 16) + 1
        run_flags = bytes(mv[pos:pos + (size + 7) // 8])
        pos += (size + 7) // 8
        has_offsets = size >= 4
    elif cookie == 12346:                    # SERIAL_COOKIE_NO_RUNCONTAINER
        size = int.from_bytes(mv[4:8], "little")
        pos = 8
        run_flags = bytes((size + 7) // 8)
        has_offsets = True
    else:
        raise ValueError("not a roaring portable serialization")
    header = np.frombuffer(data, dtype="<u2", count=2 * size, offset=pos).reshape(-1, 2)
    pos += 4 * size
    if has_offsets:
        pos += 4 * size
    for i in range(size):
        key = int(header[i, 0])
        card = int(header[i, 1]) + 1
        if run_flags[i >> 3] >> (i & 7) & 1:
            n_runs = int.from_bytes(mv[pos:pos + 2], "little")
            yield key, _RUN, mv[pos + 2:pos + 2 + 4 * n_runs]
            pos += 2 + 4 * n_runs
        elif card > 4096:
            yield key, _BITMAP, mv[pos:pos + 8192]
            pos += 8192
        else:
            yield key, _ARRAY, mv[pos:pos + 2 * card]
            pos += 2 * card


def _digest(serialized: bytes) -> bytes:
    """The interning key of a canonical serialization: the first 128 bits of its SHA-256
    digest (a token set over a large vocabulary serializes to up to tens of KB; the index
    keeps 16 bytes per set instead). SHA-256 rather than BLAKE2b: OpenSSL's runs on the
    CPU's SHA instructions, 14 µs for 24 KB where BLAKE2b takes 26 µs."""
    return hashlib.sha256(serialized).digest()[:16]


class WeightTable:
    """Interning table: identical token sets get one small int id.

    ``EMPTY_ID`` (0) is ∅ and ``UNIVERSE_ID`` (1) is ``{0, …, n_tokens-1}``.  Ids are dense
    and stable.  ``dense(id, n_bits)`` caches the packed mask of each weight, computed once.
    Set operations on ids (``intersect``, ``union``, ``difference``) are memoized; each
    result remembers the operand it is closest to (its *base*), and :meth:`to_data` stores a
    set as its symmetric difference with its base where that is much smaller (sets
    of one automaton mostly differ by a few tokens).
    """

    __slots__ = ("n_tokens", "_sets", "_ids", "_dense", "_and", "_or", "_sub", "_blob", "_offsets",
                 "_dense_old", "_cache_bytes", "_base", "_delta", "_nat")

    #: a delta is stored when it is at most this fraction of the set's own serialization
    DELTA_RATIO = 0.5
    #: deltas on deltas: at most this many (decoding a set decodes its chain of bases)
    MAX_DELTA_CHAIN = 8

    #: estimated bytes of one entry of the set-operation memos (a 2-int tuple key, an int,
    #: the dict slot)
    OP_ENTRY_BYTES = 150

    def __init__(self, n_tokens: int) -> None:
        if n_tokens < 0:
            raise ValueError("n_tokens must be >= 0")
        self.n_tokens = int(n_tokens)
        self._sets: list[FrozenBitMap | None] = []   # None: not deserialized yet (see _get)
        # digest of the canonical serialization -> id (canonical: the run-optimized
        # set, each container in its most compact form)
        self._ids: dict[bytes, int] = {}
        self._base = array.array("i")        # per set: the operand it came from, or -1
        self._blob = b""
        self._offsets = None
        self._delta = None                   # loaded: per set, its base if stored as a delta
        self._dense: dict[tuple[int, int], np.ndarray] = Memo()
        self._and: dict[tuple[int, int], int] = Memo()
        self._or: dict[tuple[int, int], int] = Memo()
        self._sub: dict[tuple[int, int], int] = Memo()
        self._dense_old: dict = Memo()
        self._cache_bytes: int | None = None             # None: memos unbounded (compile)
        self._nat = native.module()                      # dense masks compiled, or None
        self.intern(FrozenBitMap())                      # EMPTY_ID == 0
        u = BitMap()
        if self.n_tokens:
            u.add_range(0, self.n_tokens)
        if self.intern(u) != UNIVERSE_ID:
            # n_tokens == 0: the universe is ∅; keep id 1 reserved (intern(∅) gives EMPTY_ID)
            self._sets.append(FrozenBitMap())
            self._base.append(-1)

    def to_data(self) -> dict:
        """The interned sets as plain data: one blob of roaring serializations (a set
        close to its base as the symmetric difference), their offsets and bases, and the
        index of digests. :meth:`from_data` deserializes each set on first use."""
        n = len(self._sets)
        parts = []
        delta = np.full(n, -1, dtype=np.int32)
        chain = [0] * n
        limit, ratio = self.MAX_DELTA_CHAIN, self.DELTA_RATIO
        for i in range(n):
            full = self._serialized(i)
            b = self._base[i] if i < len(self._base) else -1
            if b >= 0 and chain[b] < limit and len(full) > 64:
                d = BitMap(self._get(i) ^ self._get(b))
                d.run_optimize()
                ds = d.serialize()
                if len(ds) <= ratio * len(full):
                    delta[i] = b
                    chain[i] = chain[b] + 1
                    full = ds
            parts.append(full)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        return {"n_tokens": self.n_tokens, "blob": b"".join(parts), "offsets": offsets,
                "delta": delta, "digests": b"".join(self._ids),
                "ids": np.fromiter(self._ids.values(), dtype=np.int64, count=len(self._ids))}

    @classmethod
    def from_data(cls, data: dict) -> "WeightTable":
        """The table of :meth:`to_data`. A base must precede the set stored against it
        (so decoding always ends); malformed data raises ``ValueError``."""
        t = cls.__new__(cls)
        t._nat = native.module()
        t.n_tokens = int(data["n_tokens"])
        t._blob = bytes(data["blob"])
        t._offsets = np.asarray(data["offsets"], dtype=np.int64)
        t._delta = np.asarray(data["delta"], dtype=np.int32)
        n = len(t._offsets) - 1
        if n < 2 or len(t._delta) != n or t._offsets[0] != 0 or t._offsets[-1] != len(t._blob) \
                or (np.diff(t._offsets) < 0).any() or (t._delta >= np.arange(n)).any():
            raise ValueError("malformed token-set table")
        digests, ids = data["digests"], np.asarray(data["ids"], dtype=np.int64)
        if len(digests) != 16 * len(ids) or ((ids < 0) | (ids >= n)).any():
            raise ValueError("malformed token-set index")
        t._sets = [None] * n
        t._ids = dict(zip([digests[i:i + 16] for i in range(0, len(digests), 16)], ids.tolist()))
        t._base = array.array("i", t._delta.tolist())     # saving again keeps the deltas
        t._dense = Memo()
        t._dense_old = Memo()
        t._cache_bytes = None
        t._and = Memo()
        t._or = Memo()
        t._sub = Memo()
        return t

    def set_cache_bytes(self, n: int | None) -> None:
        """Bound the dense-mask cache (two generations, least recently used dropped first)
        and the set-operation memos (cleared when full) to about ``n`` bytes each."""
        self._cache_bytes = None if n is None else int(n)

    def cache_estimate(self) -> tuple[int, int]:
        """(dense cache bytes, estimated set-operation memo bytes)."""
        dense = sum(d.nbytes for d in self._dense.values()) + sum(
            d.nbytes for d in self._dense_old.values())
        return dense, (len(self._and) + len(self._or) + len(self._sub)) * self.OP_ENTRY_BYTES

    def bound_memos(self) -> None:
        """Clear the set-operation memos if they are past the bound of
        :meth:`set_cache_bytes` (before each memo insertion, and when the bound is set)."""
        if self._cache_bytes is not None and (len(self._and) + len(self._or) + len(
                self._sub)) * self.OP_ENTRY_BYTES > self._cache_bytes:
            self._and.clear()
            self._or.clear()
            self._sub.clear()

    def _serialized(self, i: int) -> bytes:
        """The serialization of set ``i`` (canonical, except for a set of a loaded table
        decoded from a difference: that one is only used to be stored again)."""
        return self._get(i).serialize()

    def _get(self, i: int) -> FrozenBitMap:
        s = self._sets[i]
        if s is None:
            s = FrozenBitMap.deserialize(self._blob[int(self._offsets[i]):int(self._offsets[i + 1])])
            b = int(self._delta[i])
            if b >= 0:                       # stored as the symmetric difference with set b
                s = self._get(b) ^ s         # (not canonical: only its serialization needs
            self._sets[i] = s                # to be, and that is not asked of a loaded set)
        return s

    # -- interning -------------------------------------------------------------------------
    @property
    def empty_id(self) -> int:
        return EMPTY_ID

    @property
    def universe_id(self) -> int:
        return UNIVERSE_ID

    @property
    def universe(self) -> FrozenBitMap:
        return self._get(UNIVERSE_ID)

    def intern(self, bm: WeightLike, base: int = -1) -> int:
        """The id of token set ``bm`` (a new id the first time a set is seen); ``base``:
        the id of a set it is probably close to (for storing it as a difference)."""
        fz = _canonical(bm)
        ids = self._ids
        key = _digest(fz.serialize())
        i = ids.get(key)
        if i is None:
            if len(fz) and fz.max() >= self.n_tokens:
                raise ValueError(f"token id {fz.max()} outside the universe 0..{self.n_tokens - 1}")
            i = len(self._sets)
            self._sets.append(fz)
            self._base.append(base)
            ids[key] = i
        return i

    def subset(self, keep) -> tuple["WeightTable", np.ndarray]:
        """A table of only the sets ``keep`` (ids; ``EMPTY_ID`` and ``UNIVERSE_ID`` are
        always kept, at the same ids), renumbered densely in the order of their old ids,
        and ``new_id``: old id -> new id (-1 for a dropped set). A compile interns many
        sets only on the way (unions before a difference, memoized intermediate results):
        the automaton refers to a few percent of them. Each kept set's base becomes its
        nearest kept ancestor."""
        n = len(self._sets)
        flags = np.zeros(n, dtype=bool)
        flags[np.asarray(sorted(set(keep) | {EMPTY_ID, UNIVERSE_ID}), dtype=np.int64)] = True
        old = np.flatnonzero(flags)
        new_id = np.full(n, -1, dtype=np.int64)
        new_id[old] = np.arange(len(old))
        t = WeightTable.__new__(WeightTable)
        t.n_tokens = self.n_tokens
        t._sets = [self._get(int(i)) for i in old]
        t._ids = {d: int(new_id[i]) for d, i in self._ids.items() if flags[i]}
        base = self._base
        nb = array.array("i")
        for i in old.tolist():
            b = base[i] if i < len(base) else -1
            while b >= 0 and not flags[b]:
                b = base[b] if b < len(base) else -1
            nb.append(int(new_id[b]) if b >= 0 else -1)
        t._base = nb
        t._blob = b""
        t._offsets = None
        t._delta = None
        t._dense = Memo()
        t._dense_old = Memo()
        t._and = Memo()
        t._or = Memo()
        t._sub = Memo()
        t._cache_bytes = self._cache_bytes
        t._nat = self._nat
        return t, new_id

    def get(self, wid: int) -> FrozenBitMap:
        return self._get(wid)

    __getitem__ = get

    def __len__(self) -> int:
        return len(self._sets)

    def __contains__(self, bm: WeightLike) -> bool:
        return _digest(_canonical(bm).serialize()) in self._ids

    def is_empty(self, wid: int) -> bool:
        return len(self._get(wid)) == 0

    # -- memoized set algebra on ids ------------------------------------------------------
    def intersect(self, a: int, b: int) -> int:
        if a == b or b == UNIVERSE_ID:
            return a
        if a == UNIVERSE_ID:
            return b
        if a == EMPTY_ID or b == EMPTY_ID:
            return EMPTY_ID
        key = (a, b) if a < b else (b, a)
        r = self._and.get(key)
        if r is None:
            self.bound_memos()
            sa, sb = self._get(a), self._get(b)
            r = self._and[key] = self.intern(sa & sb, a if len(sa) <= len(sb) else b)
        return r

    def union(self, a: int, b: int) -> int:
        if a == b or b == EMPTY_ID:
            return a
        if a == EMPTY_ID:
            return b
        if a == UNIVERSE_ID or b == UNIVERSE_ID:
            return UNIVERSE_ID
        key = (a, b) if a < b else (b, a)
        r = self._or.get(key)
        if r is None:
            self.bound_memos()
            sa, sb = self._get(a), self._get(b)
            r = self._or[key] = self.intern(sa | sb, a if len(sa) >= len(sb) else b)
        return r

    def union_all(self, ids: tuple) -> int:
        """The union of the sets ``ids`` (three or more distinct ids in ascending order,
        none the empty or the full set), interned once: uniting them a pair at a time
        would intern every partial union too (a compile's expansion unites the weights of
        many items at once; on Go 182,000 partial unions held 1.4 GB). Memoized with
        :meth:`union`'s pairs, by the tuple."""
        r = self._or.get(ids)
        if r is None:
            self.bound_memos()
            sets = [self._get(i) for i in ids]
            big = max(range(len(ids)), key=lambda k: len(sets[k]))
            r = self._or[ids] = self.intern(BitMap.union(*sets), ids[big])
        return r

    def difference(self, a: int, b: int) -> int:
        if b == EMPTY_ID or a == EMPTY_ID:
            return a
        if a == b or b == UNIVERSE_ID:
            return EMPTY_ID
        key = (a, b)
        r = self._sub.get(key)
        if r is None:
            self.bound_memos()
            r = self._sub[key] = self.intern(self._get(a) - self._get(b), a)
        return r

    # -- dense masks ----------------------------------------------------------------------
    def dense(self, wid: int, n_bits: int | None = None) -> np.ndarray:
        """Packed int32 mask of weight ``wid`` (cached; read-only array — copy before writing)."""
        nb = self.n_tokens if n_bits is None else int(n_bits)
        d = self.cached_dense(wid, nb)
        if d is None:
            d = mask_from_bitmap(self._get(wid), nb, self._nat)
            d.flags.writeable = False
            self._keep_dense((wid, nb), d)
        return d

    def cached_dense(self, wid: int, n_bits: int):
        """The packed mask of weight ``wid`` if it is in the dense cache, else None (one
        found in the old generation moves back to the current one)."""
        key = (wid, n_bits)
        d = self._dense.get(key)
        if d is None:
            d = self._dense_old.get(key)
            if d is not None:
                self._keep_dense(key, d)
        return d

    def _keep_dense(self, key: tuple, d: np.ndarray) -> None:
        cap = self._cache_bytes
        if cap is not None and (len(self._dense) + 1) * d.nbytes > cap // 2:
            # two generations: the current one becomes the old one (entries used
            # again are promoted back; the rest go with the next rotation)
            self._dense_old = self._dense
            self._dense = Memo()
        self._dense[key] = d

    def clear_dense(self) -> None:
        self._dense.clear()
        self._dense_old.clear()

    @property
    def cache_bytes(self) -> int | None:
        """The bound of :meth:`set_cache_bytes` (None: memos unbounded)."""
        return self._cache_bytes

    def stats(self) -> dict:
        sizes = [len(self._get(i)) for i in range(len(self._sets))]
        return {
            "n_weights": len(self._sets),
            "total_cardinality": int(sum(sizes)),
            "serialized_bytes": int(sum(len(self._serialized(i)) for i in range(len(self._sets)))),
            "dense_cached": len(self._dense),
        }
