"""Compiled loading helpers (``stackmask/_load.pxi``) equal their pure-Python references.

``roaring_dense`` (token sets made dense) and ``roaring_dense_all`` (several ORed into a
mask) against ``mask_from_bitmap``'s Python path, on
random sets of every container kind and mask width, and on malformed serializations
(an error, never a crash or a write out of bounds); ``roaring_of_positions`` (token sets
built from byte-order positions) against pyroaring built id by id; ``EdgeArrays`` (a loaded automaton's
edges, one state at a time) against ``dwa_data.EdgeArrays``, and the checks of
``dwa_data.check_edge_arrays``; ``and_into`` (a term of a mask: a base's mask without a
token set) against the masker's pure path (numpy through scratch rows).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from stackmask import native
from stackmask.compile import dwa_data
from stackmask.wfa.weights import mask_from_bitmap

pytestmark = pytest.mark.usefixtures("needs_native")

WIDTHS = (1, 31, 32, 33, 4096, 65535, 65536, 65537, 151665, 200000)


@st.composite
def token_sets(draw):
    n_bits = draw(st.sampled_from(WIDTHS))
    bm = BitMap()
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["range", "scatter", "one"]))
        lo = draw(st.integers(0, n_bits - 1))
        if kind == "range":                  # run or bitmap containers
            bm.add_range(lo, draw(st.integers(lo, n_bits)))
        elif kind == "scatter":              # array or bitmap containers
            rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
            bm.update(rng.integers(0, n_bits, draw(st.integers(0, 9000))).tolist())
        else:
            bm.add(lo)
    if draw(st.booleans()):
        bm.run_optimize()
    return bm, n_bits


@settings(max_examples=300, deadline=None)
@given(token_sets())
def test_dense_equals_the_python_path(case):
    bm, n_bits = case
    words = (n_bits + 31) // 32
    out = np.zeros(words, dtype=np.uint32)
    native.module().roaring_dense(bm.serialize(), out)
    ref = mask_from_bitmap(bm, n_bits, None)
    assert np.array_equal(out.view(np.int32), ref)
    assert np.array_equal(mask_from_bitmap(bm, n_bits), ref)     # the default: compiled


@settings(max_examples=150, deadline=None)
@given(st.lists(token_sets(), min_size=0, max_size=5), st.integers(0, 2 ** 32 - 1))
def test_dense_all_ors_the_union_into_the_mask(cases, seed):
    """``roaring_dense_all`` (the masker's writes of small token sets) ORs the union of
    the sets into a mask already holding bits."""
    n_bits = 151665
    sets = [bm for bm, nb in cases if len(bm) == 0 or bm.max() < n_bits]
    words = (n_bits + 31) // 32
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 2 ** 32, words, dtype=np.uint64).astype(np.uint32)
    start[rng.random(words) < 0.7] = 0
    out = start.copy()
    native.module().roaring_dense_all([bm.serialize() for bm in sets], out)
    ref = start.view(np.int32).copy()
    for bm in sets:
        ref |= mask_from_bitmap(bm, n_bits, None)
    assert np.array_equal(out.view(np.int32), ref)
    with pytest.raises(TypeError):
        native.module().roaring_dense_all([bytearray(b"xx")], out)
    with pytest.raises(ValueError):
        native.module().roaring_dense_all([BitMap([n_bits + 40]).serialize()], out)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(WIDTHS), st.integers(0, 2 ** 32 - 1), st.integers(0, 3),
       st.sampled_from([0, 1, 60, 4095, 4096, 4097, 9000, 70000]))
def test_roaring_of_positions_equals_pyroaring(n_bits, seed, dense_chunk, k):
    """Any positions (unordered, repeated), ids a permutation of part of the width: the
    deserialized set is pyroaring's, with array and bitmap containers (a whole chunk
    when ``dense_chunk`` is 1) and the last chunk cut at the width."""
    rng = np.random.default_rng(seed)
    first_id = rng.permutation(n_bits)[:max(1, n_bits - 7)].astype(np.int64)
    m = len(first_id)
    pos = rng.integers(0, m, min(k, 3 * m)).astype(np.int64)
    if dense_chunk == 1:
        pos = np.concatenate([pos, np.arange(min(m, 65536), dtype=np.int64)])
    data = native.module().roaring_of_positions(pos, first_id, n_bits)
    got = BitMap.deserialize(data)
    assert got == BitMap(first_id[pos].tolist())
    out = np.zeros((n_bits + 31) // 32, dtype=np.uint32)   # and roaring_dense reads it back
    native.module().roaring_dense(data, out)
    assert np.array_equal(out.view(np.int32), mask_from_bitmap(got, n_bits, None))


def test_roaring_of_positions_rejects_positions_and_ids_out_of_range():
    nat = native.module()
    first_id = np.arange(10, dtype=np.int64)
    for bad in ([-1], [10], [3, 10**9]):
        with pytest.raises(IndexError):
            nat.roaring_of_positions(np.array(bad, dtype=np.int64), first_id, 10)
    with pytest.raises(ValueError):          # an id past the width
        nat.roaring_of_positions(np.array([9], dtype=np.int64), first_id, 9)
    assert BitMap.deserialize(nat.roaring_of_positions(np.zeros(0, dtype=np.int64), first_id,
                                                       10)) == BitMap()


def test_dense_rejects_ids_past_the_mask_and_malformed_data():
    nat = native.module()
    for bm in (BitMap([100]), BitMap(range(90, 200)), BitMap(range(0, 70000, 2))):
        with pytest.raises(ValueError, match="does not fit"):
            nat.roaring_dense(bm.serialize(), np.zeros(3, dtype=np.uint32))
    good = BitMap(range(0, 70000, 3))
    good.add_range(100000, 120000)
    data = good.serialize()
    for bad in (b"", b"\x00\x01", b"junkjunkjunk", data[:len(data) // 2], data[:9]):
        with pytest.raises(ValueError):
            nat.roaring_dense(bad, np.zeros(5000, dtype=np.uint32))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 40))
def test_dense_of_random_bytes_raises_or_stays_in_bounds(data, words):
    """Garbage in: ValueError or bits within the buffer, never a write past it."""
    guard = np.full(words + 8, 0x5A5A5A5A, dtype=np.uint32)
    out = guard[:words]
    out[:] = 0
    try:
        native.module().roaring_dense(data, out)
    except ValueError:
        pass
    assert (guard[words:] == 0x5A5A5A5A).all()


@st.composite
def edge_arrays(draw):
    n = draw(st.integers(1, 40))
    lens = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    m = int(offsets[-1])
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    sym = np.concatenate([rng.choice(5000, k, replace=False) for k in lens] or
                         [np.zeros(0)]).astype(np.int32)
    dst = rng.integers(-1, n, m).astype(np.int32)
    wid = rng.choice([0, 1, 2, 7, 300, 70000], m).astype(np.int32)
    return n, offsets, sym, dst, wid


@settings(max_examples=200, deadline=None)
@given(edge_arrays())
def test_edge_arrays_equal_the_reference(case):
    n, *arrays = case
    arrays = dwa_data.check_edge_arrays(n, *arrays)
    fast = native.module().EdgeArrays(*arrays)
    ref = dwa_data.EdgeArrays(*arrays)
    for q in range(n):
        t = fast.state(q)
        assert t == ref.state(q)
        assert not gc.is_tracked(t) and not any(gc.is_tracked(e) for e in t.values())
    for q in (-1, n):
        for a in (fast, ref):
            with pytest.raises(IndexError):
                a.state(q)


def test_edge_dicts_are_tracked_again_when_given_an_object():
    """An untracked dict of ints is tracked again when a tracked object is put in it
    (CPython's rule): untracking cannot hide a cycle made later."""
    arrays = dwa_data.check_edge_arrays(1, np.array([0, 1], dtype=np.int64),
                                        *(np.array([v], dtype=np.int32) for v in (3, 0, 5)))
    t = native.module().EdgeArrays(*arrays).state(0)
    assert not gc.is_tracked(t)
    t[4] = [t]
    assert gc.is_tracked(t)


def test_edge_array_checks():
    i64, i32 = np.int64, np.int32
    ok = (np.array([0, 1, 3], dtype=i64),) + tuple(np.arange(3, dtype=i32) for _ in range(3))
    assert len(dwa_data.check_edge_arrays(2, *ok)) == 4
    with pytest.raises(TypeError):
        dwa_data.check_edge_arrays(2, ok[0].astype(i32), *ok[1:])
    with pytest.raises(TypeError):
        dwa_data.check_edge_arrays(2, ok[0], ok[1].astype(i64), *ok[2:])
    with pytest.raises(TypeError):
        dwa_data.check_edge_arrays(2, [0, 1, 3], *ok[1:])
    for offsets in ([0, 2, 1], [1, 1, 3], [0, 1, 4], [0, 1], [0, 1, 2, 3]):
        with pytest.raises(ValueError):
            dwa_data.check_edge_arrays(2, np.array(offsets, dtype=i64), *ok[1:])
    with pytest.raises(ValueError):
        dwa_data.check_edge_arrays(2, ok[0], ok[1], ok[2][:2], ok[3])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from((1, 7, 4748)), st.booleans(), st.booleans())
def test_and_into_equals_the_pure_path(seed, words, with_c, accumulate):
    from stackmask.runtime.masker import Masker
    rng = np.random.default_rng(seed)
    a, b, c, start = (rng.integers(-2 ** 31, 2 ** 31, words, dtype=np.int64).astype(np.int32)
                      for _ in range(4))
    for x in (a, b, c):
        x.flags.writeable = False            # the masker's operands are read-only
    want = a & b & ~c if with_c else a & b
    if accumulate:
        want = start | want
    got = start.copy()
    native.module().and_into(got, a, b, c if with_c else None, accumulate)
    assert np.array_equal(got, want)
    pure = Masker.__new__(Masker)            # only what _and_into reads
    pure.native_loops, pure.n_words = None, words
    import threading
    pure._scratch = threading.local()
    for _ in range(2):                       # the second time through the scratch rows
        got = start.copy()
        pure._and_into(got, a, b, c if with_c else None, accumulate)
        assert np.array_equal(got, want)


def test_and_into_rejects_arrays_of_other_lengths():
    a = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError, match="lengths"):
        native.module().and_into(a, a, np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError, match="lengths"):
        native.module().and_into(a, a, a, np.zeros(5, dtype=np.int32))
