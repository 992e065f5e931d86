"""Tests for stackmask.wfa: weight interning, dense masks, the compiler's graph utilities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap, FrozenBitMap

from stackmask.wfa import (
    EMPTY_ID,
    UNIVERSE_ID,
    WeightTable,
    mask_from_bitmap,
    topological_order,
)


def bitmap_from_mask(mask: np.ndarray, n_bits: int | None = None) -> BitMap:
    """The token set of a dense packed mask (inverse of :func:`mask_from_bitmap`).

    Bits at positions ``>= n_bits`` (padding of the last word) are ignored when ``n_bits`` is
    given.
    """
    words = np.ascontiguousarray(mask, dtype=np.int32).astype("<i4", copy=False)
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")
    if n_bits is not None:
        bits = bits[: int(n_bits)]
    return BitMap(np.flatnonzero(bits).tolist())


# ------------------------------------------------------------------------------------------
# graph utilities
# ------------------------------------------------------------------------------------------
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20))))
@settings(max_examples=200, deadline=None)
def test_topological_order_orders_every_edge_or_finds_the_cycle(case):
    n, edges = case
    succ = {q: [b for a, b in edges if a == q] for q in range(n)}
    order = topological_order(range(n), succ)
    # a cycle exists iff repeatedly removing states without successors leaves some
    left = set(range(n))
    while True:
        sinks = {q for q in left if not any(b in left for b in succ[q])}
        if not sinks:
            break
        left -= sinks
    if left:
        assert order is None
    else:
        assert sorted(order) == list(range(n))
        pos = {q: i for i, q in enumerate(order)}
        assert all(pos[a] < pos[b] for a, b in edges)


# ------------------------------------------------------------------------------------------
# weights
# ------------------------------------------------------------------------------------------
def reference_mask(ids, n_bits):
    words = np.zeros((n_bits + 31) // 32, dtype=np.uint64)
    for i in ids:
        words[i // 32] |= np.uint64(1) << np.uint64(i % 32)
    return words.astype(np.uint32).view(np.int32)


def test_weight_table_interning():
    W = WeightTable(100)
    assert W.get(EMPTY_ID) == FrozenBitMap() and W.empty_id == EMPTY_ID
    assert W.get(UNIVERSE_ID) == FrozenBitMap(range(100)) and W.universe_id == UNIVERSE_ID
    a = W.intern(BitMap([1, 2, 3]))
    assert W.intern(FrozenBitMap([3, 2, 1])) == a
    assert W.intern([1, 2, 3]) == a
    assert W.intern(np.array([1, 2, 3])) == a
    assert W.intern(range(0, 100)) == UNIVERSE_ID
    assert W.intern(BitMap()) == EMPTY_ID
    b = W.intern([1, 2])
    assert b != a and W.get(b) == FrozenBitMap([1, 2])
    assert W.intersect(a, b) == b and W.union(a, b) == a
    assert W.difference(a, b) == W.intern([3])
    assert len(W) == 4 + 1          # ∅, U, a, b, {3}
    with pytest.raises(ValueError):
        W.intern([100])


@given(st.frozensets(st.integers(0, 199), max_size=120), st.integers(1, 200))
@settings(max_examples=200, deadline=None)
def test_dense_masks_match_numpy_reference(ids, n_bits):
    ids = frozenset(i for i in ids if i < n_bits)
    W = WeightTable(n_bits)
    wid = W.intern(ids)
    d = W.dense(wid, n_bits)
    ref = reference_mask(sorted(ids), n_bits)
    assert d.dtype == np.int32 and d.shape == ref.shape
    np.testing.assert_array_equal(d, ref)
    assert W.dense(wid, n_bits) is d                    # computed once
    assert not d.flags.writeable
    np.testing.assert_array_equal(mask_from_bitmap(BitMap(ids), n_bits), ref)
    assert bitmap_from_mask(ref) == BitMap(ids)
    assert bitmap_from_mask(ref, n_bits) == BitMap(ids)
    # the universe fast path
    np.testing.assert_array_equal(W.dense(UNIVERSE_ID, n_bits), reference_mask(range(n_bits), n_bits))


def _unpacked_ids(m: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.unpackbits(m.view(np.uint8), bitorder="little"))


@st.composite
def _wide_sets(draw):
    """Token sets of a wide vocabulary (where masks are read through the XOR pattern):
    per chunk of 65,536 ids, nothing, a few ids, many ids, ranges (run containers),
    nearly everything, or nearly the pattern itself (every other id: the XOR keeps
    array containers and the general decoder runs)."""
    n_bits = draw(st.sampled_from([32_000, 131_072, 151_936, 152_064, 200_019, 262_145]))
    ids = []
    for base in range(0, n_bits, 65536):
        end = min(base + 65536, n_bits)
        kind = draw(st.sampled_from(["none", "few", "many", "ranges", "most", "pattern"]))
        if kind == "few":
            ids += draw(st.lists(st.integers(base, end - 1), max_size=50))
        elif kind == "many":
            seed = draw(st.integers(0, 2 ** 32 - 1))
            rng = np.random.default_rng(seed)
            ids += rng.integers(base, end, draw(st.integers(100, 20_000))).tolist()
        elif kind in ("ranges", "most"):
            for _ in range(draw(st.integers(1, 4))):
                a = draw(st.integers(base, end - 1))
                ids += range(a, min(end, a + draw(st.integers(1, 70_000))))
            if kind == "most":
                ids += range(base, end)
        elif kind == "pattern":
            ids += range(base, end, 2)
            ids += draw(st.lists(st.integers(base, end - 1), max_size=20))
    bm = BitMap(ids)
    if draw(st.booleans()):
        bm.run_optimize()
    return bm, n_bits


@given(_wide_sets())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_wide_masks_match_ids(case):
    bm, n_bits = case
    m = mask_from_bitmap(bm, n_bits)
    assert m.dtype == np.int32 and m.shape == ((n_bits + 31) // 32,)
    np.testing.assert_array_equal(_unpacked_ids(m), np.array(bm.to_array(), dtype=np.int64))
    np.testing.assert_array_equal(mask_from_bitmap(FrozenBitMap(bm), n_bits), m)
    assert bitmap_from_mask(m, n_bits) == bm


def test_wide_mask_read_through_the_pattern():
    """The XOR pattern path answers for typical sets of a wide vocabulary, of any width,
    and declines (None) where a chunk of the XOR is an array container (a set nearly
    equal to the pattern there); both give exact masks."""
    from stackmask.wfa.weights import _mask_by_pattern
    n = 151_936
    rng = np.random.default_rng(3)
    for ids in (rng.integers(0, n, 10).tolist(), rng.integers(0, n, 90_000).tolist(),
                list(range(5, n - 3)), list(range(0, 70_000))):
        bm = BitMap(ids)
        m = _mask_by_pattern(bm, n)
        assert m is not None
        np.testing.assert_array_equal(_unpacked_ids(m), np.array(bm.to_array(), dtype=np.int64))
    near = BitMap(range(0, n, 2))             # the pattern itself: the XOR is empty
    assert _mask_by_pattern(near, n) is None
    np.testing.assert_array_equal(_unpacked_ids(mask_from_bitmap(near, n)), np.arange(0, n, 2))
    # a last chunk of 3,411 ids (o200k): the pattern covers the whole chunk, so the XOR
    # keeps bitmap containers there whatever the set (the pattern's ids below 200,019
    # included), and the bits past the width cancel
    short = 200_019
    for ids in ([1, short - 1], list(range(196_608, short, 2)), list(range(196_608, short)),
                rng.integers(0, short, 50_000).tolist()):
        bm = BitMap(ids)
        m = _mask_by_pattern(bm, short)
        assert m is not None and m.shape == ((short + 31) // 32,)
        np.testing.assert_array_equal(_unpacked_ids(m), np.array(bm.to_array(), dtype=np.int64))
    # a last chunk of 62,720 ids (Llama 3's 128,256) nearly equal to the pattern: declined
    wide = 128_256
    near_last = BitMap(range(65_536, wide, 2))
    assert _mask_by_pattern(near_last, wide) is None
    np.testing.assert_array_equal(_unpacked_ids(mask_from_bitmap(near_last, wide)),
                                  np.arange(65_536, wide, 2))


def test_dense_large_and_padding():
    n = 151_646
    rng = np.random.default_rng(0)
    ids = np.unique(rng.integers(0, n, 60_000))
    bm = BitMap(ids.tolist())
    m = mask_from_bitmap(bm, n)
    assert m.shape == ((n + 31) // 32,)
    bits = np.unpackbits(m.view(np.uint8), bitorder="little")
    np.testing.assert_array_equal(np.flatnonzero(bits), ids)
    assert bitmap_from_mask(m, n) == bm
    # padding bits beyond n_bits are ignored when n_bits is given
    m2 = m.copy()
    m2[-1] |= np.int32(-2 ** 31)
    assert bitmap_from_mask(m2, n) == bm
    with pytest.raises(ValueError):
        mask_from_bitmap(BitMap([n]), n)


@given(st.integers(1, 300_000), st.lists(st.tuples(st.floats(0, 1), st.integers(1, 70_000)), max_size=30),
       st.lists(st.floats(0, 1), max_size=6000), st.booleans())
@settings(max_examples=60, deadline=None)
def test_dense_from_every_container_kind(n, ranges, points, optimize):
    """Array, bitmap and run containers (several 65,536-id chunks, partial last word)."""
    bm = BitMap()
    for a, length in ranges:
        start = int(a * (n - 1))
        bm.add_range(start, min(n, start + length))
    bm.update(int(p * (n - 1)) for p in points)
    if optimize:
        bm.run_optimize()
    np.testing.assert_array_equal(mask_from_bitmap(bm, n), reference_mask(sorted(bm), n))


def _plain_copy(W: WeightTable) -> WeightTable:
    """``W`` through its plain data, encoded and decoded as an artifact stores it."""
    from stackmask.plain import Codec
    c = Codec()
    return WeightTable.from_data(c.loads(c.dumps(W.to_data())))


def test_weight_table_stored_as_plain_data_loads_lazily_and_keeps_ids():
    W = WeightTable(1000)
    ids = [W.intern(range(k, 1000, k + 1)) for k in range(1, 40)]
    W2 = _plain_copy(W)
    assert len(W2) == len(W)
    assert all(s is None for s in W2._sets)             # nothing deserialized yet
    assert W2.get(ids[3]) == W.get(ids[3])
    np.testing.assert_array_equal(W2.dense(ids[5]), W.dense(ids[5]))
    # interning after loading finds the existing ids and appends new ones after them
    assert [W2.intern(range(k, 1000, k + 1)) for k in range(1, 40)] == ids
    assert W2.intern([1, 2, 3]) == len(W)
    assert W2.get(W2.union(ids[0], ids[1])) == W.get(ids[0]) | W.get(ids[1])
    E = _plain_copy(WeightTable(0))
    assert E.intern([]) == EMPTY_ID and len(E.get(UNIVERSE_ID)) == 0


def test_weight_table_stores_sets_close_to_their_base_as_differences():
    """Results of set operations are stored as the symmetric difference with the operand
    they came from when that is much smaller: the blob shrinks, every set comes back
    equal whatever order they are decoded in, chains stay bounded, and interning after
    loading (and storing again) finds the same ids."""
    import random
    rng = random.Random(3)
    n = 150_000
    W = WeightTable(n)
    big = W.intern(BitMap(rng.sample(range(n), 90_000)))     # bitmap containers
    ids = [big]
    for k in range(60):          # a chain of near-identical sets and some unions
        small = W.intern(BitMap(rng.sample(range(n), 20)))
        a = rng.choice(ids)
        ids.append(W.difference(a, small) if k % 3 else W.union(a, small))
    full = sum(len(W.get(i).serialize()) for i in range(len(W)))
    state = W.to_data()
    assert len(state["blob"]) < full / 5, (len(state["blob"]), full)
    chains = {}
    for i, b in enumerate(state["delta"].tolist()):
        chains[i] = 0 if b < 0 else chains[b] + 1
    assert max(chains.values()) <= WeightTable.MAX_DELTA_CHAIN
    assert any(b >= 0 for b in state["delta"].tolist())
    for k in range(2):
        W2 = _plain_copy(W)
        order = list(range(len(W)))
        rng.shuffle(order)
        for i in order:
            assert W2.get(i) == W.get(i), i
        assert W2.intern(W.get(ids[-1])) == ids[-1] and W2.intern([7 + k]) == len(W)
        W = W2


def test_interning_is_by_content_whatever_the_container_layout():
    import random
    W = WeightTable(200_000)
    rng = random.Random(0)
    for _ in range(100):
        a, n = rng.randrange(190_000), rng.randrange(1, 9000)
        runs = BitMap()
        runs.add_range(a, a + n)                       # run containers
        plain = BitMap(range(a, a + n))                # array/bitmap containers
        mixed = BitMap(runs) | BitMap(rng.sample(range(a, a + n), min(n, 50)))
        assert W.intern(runs) == W.intern(plain) == W.intern(mixed)
        assert plain in W


@pytest.mark.parametrize("missing", [0, 1, 2, 1000, 8191, 8192, 8193])
@pytest.mark.parametrize("n", [151_936, 151_643, 65_537])
def test_dense_of_nearly_every_token(missing, n):
    """Sets missing at most _MEDIUM_SET ids are decoded through their complement: the
    same mask, and no bit past the width."""
    import random
    from stackmask.wfa import weights as W
    rng = random.Random(missing)
    drop = set(rng.sample(range(n), missing))
    ids = [i for i in range(n) if i not in drop]
    for bm in (BitMap(ids), W._canonical(BitMap(ids))):        # with and without run containers
        np.testing.assert_array_equal(mask_from_bitmap(bm, n), reference_mask(ids, n))


@pytest.mark.parametrize("size", [1, 2, 1023, 1024, 1025, 8191, 8192, 8193, 40_000])
def test_dense_at_the_decoder_crossovers(size):
    """Sets just below/above the small- and medium-set thresholds of mask_from_bitmap
    (bit scatter, byte flags + packbits, container decode) give the same mask."""
    import random
    from stackmask.wfa import weights as W
    assert W._SMALL_SET < W._MEDIUM_SET
    rng = random.Random(size)
    for n in (size + 5, 65_537, 151_936):
        if size > n:
            continue
        ids = sorted(rng.sample(range(n), size))
        bm = BitMap(ids)
        m = mask_from_bitmap(bm, n)
        assert m.dtype == np.int32 and m.shape == ((n + 31) // 32,)
        np.testing.assert_array_equal(m, reference_mask(ids, n))


def test_weight_table_subset_keeps_only_the_asked_sets_renumbered():
    """``subset`` keeps ∅, the universe and the asked sets (same contents, new dense ids
    in the old order), maps dropped ones to -1, re-interns kept sets to their new ids and
    new sets after them, and is stored as plain data (bases re-pointed at kept ancestors)."""
    import random
    rng = random.Random(5)
    n = 50_000
    W = WeightTable(n)
    big = W.intern(BitMap(rng.sample(range(n), 30_000)))
    ids = [big]
    for k in range(40):
        small = W.intern(BitMap(rng.sample(range(n), 15)))
        a = rng.choice(ids)
        ids.append(W.difference(a, small) if k % 2 else W.union(a, small))
    keep = sorted(set(rng.sample(ids, 12)))
    T, new = W.subset(keep)
    assert len(T) == len(set(keep) | {EMPTY_ID, UNIVERSE_ID}) < len(W)
    assert new[EMPTY_ID] == EMPTY_ID and new[UNIVERSE_ID] == UNIVERSE_ID
    kept = [i for i in range(len(W)) if new[i] >= 0]
    assert [int(new[i]) for i in kept] == list(range(len(T)))      # dense, old order
    for i in range(len(W)):
        if new[i] >= 0:
            assert T.get(int(new[i])) == W.get(i)
            assert T.intern(W.get(i)) == new[i]
    dropped = next(i for i in range(len(W)) if new[i] < 0)
    assert T.intern(W.get(dropped)) == len(T) - 1 == len(set(keep) | {0, 1})   # a new id
    T2 = _plain_copy(T)
    for i in range(len(T)):
        assert T2.get(i) == T.get(i)
    assert T2.get(T2.union(int(new[keep[0]]), int(new[keep[-1]]))) == W.get(keep[0]) | W.get(keep[-1])


# -- interning keys ------------------------------------------------------------------------

@st.composite
def roaring_sets(draw):
    """Token sets of a 151,936-id universe with runs, scattered ids and dense chunks (every
    roaring container kind), as a BitMap built without run-optimizing."""
    bm = BitMap(optimize=False)
    for _ in range(draw(st.integers(0, 5))):
        lo = draw(st.integers(0, 151_935))
        bm.add_range(lo, min(151_936, lo + draw(st.sampled_from([1, 2, 3, 17, 4096, 4097, 70_000]))))
    ids = draw(st.lists(st.integers(0, 151_935), max_size=300))
    bm.update(ids)
    if draw(st.booleans()):
        lo = draw(st.integers(0, 2)) << 16
        bm.update(range(lo, min(lo + 65_536, 151_936), draw(st.sampled_from([2, 3, 5]))))
    return bm


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roaring_sets(), st.sampled_from(["bitmap", "frozen", "frozen-unoptimized", "list", "array",
                                      "result"]))
def test_interning_key_is_the_run_optimized_serialization(bm, form):
    """``_canonical`` (one run-optimizing copy) serializes every form of a set exactly as the
    former three-pass version did (copy, run_optimize, copy), so the interning keys of
    artifacts written before still match. (Either way a set whose run and array forms
    are the same size keeps the form it came in: such a set can get two ids, which
    costs a duplicate, never a wrong mask.)"""
    from stackmask.wfa.weights import _canonical, as_frozen
    x = {"bitmap": lambda: BitMap(bm, optimize=False),
         "frozen": lambda: FrozenBitMap(bm),
         "frozen-unoptimized": lambda: FrozenBitMap(bm, optimize=False),
         "list": lambda: list(bm),
         "array": lambda: np.array(list(bm), dtype=np.int64),
         "result": lambda: FrozenBitMap(bm, optimize=False) | BitMap(optimize=False)}[form]()
    before = BitMap(x) if isinstance(x, (BitMap, FrozenBitMap)) else BitMap(as_frozen(x))
    before.run_optimize()
    assert _canonical(x).serialize() == FrozenBitMap(before).serialize()
    assert _canonical(x) == as_frozen(x)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 299), max_size=40), min_size=3, max_size=8))
def test_weight_table_union_all_interns_only_the_union(parts):
    """``union_all`` of three or more sets is the set union, interned once (no partial
    union becomes a set of its own), the same id as pairwise unions reach, memoized."""
    wt = WeightTable(300)
    ids = sorted({wt.intern(BitMap(p)) for p in parts} - {0, 1})
    if len(ids) < 3:
        return
    n = len(wt)
    r = wt.union_all(tuple(ids))
    assert len(wt) <= n + 1
    want = BitMap()
    for i in ids:
        want |= wt.get(i)
    assert wt.get(r) == want
    assert wt.union_all(tuple(ids)) == r
    acc = ids[0]
    for i in ids[1:]:
        acc = wt.union(acc, i)
    assert acc == r
