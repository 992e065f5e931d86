"""Tests for stackmask.wfa: monoid laws, weight interning / dense masks, WFA -> DWA algorithms.

Every automaton algorithm is checked against a brute-force path enumeration on random small
WFAs (few states, symbols 0..3 plus the ANY wildcard, token universe 0..40).
"""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap, FrozenBitMap

from stackmask.wfa import (
    ANY,
    DEAD,
    DEFAULT,
    DWA,
    EMPTY_ID,
    IDENTITY,
    UNIVERSE_ID,
    WFA,
    ZERO,
    CyclicAutomatonError,
    DeterminizationLimitError,
    StackEffect,
    WeightTable,
    apply,
    bitmap_from_mask,
    compose,
    determinize,
    is_acyclic,
    mask_from_bitmap,
    max_depth,
    minimize,
    pop,
    prune_accepted,
    push,
)

N_TOK = 41                      # token universe 0..40
SYMS = (0, 1, 2, 3)
WORD_ALPHABET = (0, 1, 2, 3, 4)  # 4 never has an explicit edge: exercises ANY / DEFAULT
ALL_WORDS = [w for n in range(5) for w in itertools.product(WORD_ALPHABET, repeat=n)]

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------------------------------
# strategies
# ------------------------------------------------------------------------------------------
UNIVERSE = frozenset(range(N_TOK))
token_sets = st.one_of(
    st.just(UNIVERSE),
    st.builds(lambda a, b: frozenset(range(min(a, b), max(a, b) + 1)),
              st.integers(0, N_TOK - 1), st.integers(0, N_TOK - 1)),
    st.frozensets(st.integers(0, N_TOK - 1), max_size=25),
    st.frozensets(st.integers(0, N_TOK - 1), max_size=12).map(lambda s: UNIVERSE - s),  # large sets
    st.frozensets(st.integers(0, N_TOK - 1), max_size=30).map(lambda s: UNIVERSE - s),
    st.frozensets(st.integers(0, 7), max_size=8),      # small overlapping sets
)


effects = st.one_of(
    st.just(ZERO),
    st.builds(StackEffect, st.lists(st.integers(0, 2), max_size=3), st.lists(st.integers(0, 2), max_size=3)),
)


@st.composite
def wfas(draw, acyclic=True, max_states=5):
    """Random small WFA; acyclic ones only have edges from a lower to a higher state id."""
    n = draw(st.integers(1, max_states))
    a = WFA(N_TOK)
    for _ in range(n):
        a.add_state()
    initial = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2))
    if draw(st.integers(0, 3)):
        initial[0] = 0                                  # usually start at the top
    for q in initial:
        a.set_initial(q, draw(token_sets))
    for q in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n + 1)):
        a.set_final(q, draw(token_sets))
    if acyclic and n == 1:
        return a
    for _ in range(draw(st.integers(1, 3 * n + 2))):
        if acyclic:
            src = draw(st.integers(0, n - 2))
            dst = draw(st.integers(src + 1, n - 1))
        else:
            src, dst = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        sym = draw(st.sampled_from(SYMS + (ANY,)))
        a.add_transition(src, sym, dst, draw(token_sets))
    return a


@st.composite
def dwas(draw, max_states=6):
    """Random acyclic DWA built directly (not via determinize): arbitrary finals (also the
    universe), DEFAULT edges, dead edges, explicit edges equal to DEFAULT, unreachable states."""
    n = draw(st.integers(1, max_states))
    W = WeightTable(N_TOK)
    d = DWA(W)
    for _ in range(n):
        d.add_state(W.intern(draw(st.one_of(st.just(frozenset()), token_sets))))
    for src in range(n - 1):
        if draw(st.booleans()):
            d.set_default(src, draw(st.integers(src + 1, n - 1)), W.intern(draw(token_sets)))
        for sym in draw(st.lists(st.sampled_from(SYMS), max_size=4, unique=True)):
            kind = draw(st.integers(0, 5))
            if kind == 0:
                d.set_edge(src, sym, DEAD, EMPTY_ID)
            elif kind == 1 and DEFAULT in d.edges[src]:
                d.set_edge(src, sym, *d.edges[src][DEFAULT])
            else:
                d.set_edge(src, sym, draw(st.integers(src + 1, n - 1)), W.intern(draw(token_sets)))
    return d


def reference_run(d: DWA, word) -> BitMap:
    """Straightforward reading of the DWA semantics, on plain Python sets."""
    W = d.weights
    s = d.start
    running = set(range(N_TOK))
    acc = set(W.get(d.final[s]))
    for sym in word:
        e = d.edges[s].get(sym, d.edges[s].get(DEFAULT))
        if e is None:
            break
        s, w = e
        running &= set(W.get(w))
        if not running:
            break
        acc |= running & set(W.get(d.final[s]))
    return BitMap(acc)


def brute_weight(a: WFA, word) -> BitMap:
    """Independent reference: enumerate every path explicitly (accept-here semantics)."""
    W = a.weights
    result = BitMap()

    def rec(q, i, acc: BitMap):
        if not acc:
            return
        f = a.final.get(q)
        if f is not None:
            result.update(acc & W.get(f))
        if i == len(word):
            return
        for sym in (word[i], ANY):
            for dst, w in a.trans[q].get(sym, ()):
                rec(dst, i + 1, acc & W.get(w))

    for q, w in a.initial.items():
        rec(q, 0, BitMap(W.get(w)))
    return result


def assert_same_runs(a: WFA, d: DWA, words=ALL_WORDS):
    for word in words:
        expect = brute_weight(a, word)
        got = d.run(word)
        assert got == expect, (word, got, expect)


def signatures(d: DWA):
    """Per-state (final, normalized edges) — two equal ones are mergeable states."""
    sigs = []
    for s in range(d.n_states):
        sigs.append((d.final[s], tuple(sorted(d.edges[s].items()))))
    return sigs


# ------------------------------------------------------------------------------------------
# monoid
# ------------------------------------------------------------------------------------------
def test_monoid_relations():
    assert push(3) * pop(3) == IDENTITY
    assert push(3) * pop(4) is ZERO
    assert pop(3) * push(3) == StackEffect((3,), (3,))      # not the identity
    assert pop(1) * pop(2) == StackEffect((1, 2), ())
    assert push(1) * push(2) * pop(2) * pop(1) == IDENTITY
    assert push(1) * push(2) * pop(1) is ZERO
    assert pop(5) * push(1) * push(2) * pop(2) * pop(1) * pop(7) * push(9) == StackEffect((5, 7), (9,))
    assert ZERO * pop(1) is ZERO and pop(1) * ZERO is ZERO
    assert hash(StackEffect((1,), (2,))) == hash(StackEffect([1], [2]))
    assert len({StackEffect((1,), (2,)), StackEffect((1,), (2,)), IDENTITY}) == 2
    with pytest.raises(AttributeError):
        IDENTITY.pops = (1,)
    assert pickle.loads(pickle.dumps(ZERO)) is ZERO
    assert pickle.loads(pickle.dumps(StackEffect((1, 2), (3,)))) == StackEffect((1, 2), (3,))
    assert repr(IDENTITY) == "IDENTITY" and repr(ZERO) == "ZERO"


def test_apply_concrete():
    # stacks are top first
    assert apply(pop(5), (5, 4, 0)) == (4, 0)
    assert apply(pop(5), (4, 0)) is None
    assert apply(pop(5), ()) is None
    assert apply(StackEffect((), (1, 2)), (0,)) == (2, 1, 0)       # push 1 then 2: 2 on top
    assert apply(StackEffect((3, 2), (7,)), (3, 2, 1, 0)) == (7, 1, 0)
    assert apply(ZERO, (1, 2)) is None


@given(effects, effects, effects)
@settings(max_examples=300, deadline=None)
def test_monoid_associative(a, b, c):
    assert compose(compose(a, b), c) == compose(a, compose(b, c))


@given(effects)
@settings(max_examples=200, deadline=None)
def test_monoid_identity_and_zero(a):
    assert compose(IDENTITY, a) == a and compose(a, IDENTITY) == a
    assert compose(ZERO, a) is ZERO and compose(a, ZERO) is ZERO


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 2)), max_size=8))
@settings(max_examples=300, deadline=None)
def test_generator_products_normal_form(gens):
    """A product of generators equals the reference: naive rewriting of the word."""
    prod = IDENTITY
    for is_push, s in gens:
        prod = prod * (push(s) if is_push else pop(s))
    # naive: repeatedly rewrite adjacent push(s)pop(t)
    word = list(gens)
    zero = False
    changed = True
    while changed and not zero:
        changed = False
        for i in range(len(word) - 1):
            (p1, s1), (p2, s2) = word[i], word[i + 1]
            if p1 and not p2:
                if s1 != s2:
                    zero = True
                else:
                    del word[i:i + 2]
                changed = True
                break
    if zero:
        assert prod is ZERO
    else:
        # normal form: all pops before all pushes
        assert all(not p for p, _ in word[: len(prod.pops)])
        assert prod == StackEffect([s for p, s in word if not p], [s for p, s in word if p])


@given(effects, effects, st.lists(st.integers(0, 2), max_size=6))
@settings(max_examples=400, deadline=None)
def test_compose_agrees_with_apply(a, b, stack):
    stack = tuple(stack)
    ab = compose(a, b)
    mid = apply(a, stack)
    seq = None if mid is None else apply(b, mid)
    assert apply(ab, stack) == seq


@given(effects, effects)
@settings(max_examples=300, deadline=None)
def test_compose_zero_iff_never_applicable(a, b):
    """ZERO exactly when no concrete stack survives a then b (stacks over ids 0..2, depth ≤ 6)."""
    ab = compose(a, b)
    if ab is ZERO:
        for n in range(7):
            for stack in itertools.product(range(3), repeat=n):
                mid = apply(a, stack)
                assert mid is None or apply(b, mid) is None
    else:
        # the stack made of exactly ab's pops works
        mid = apply(a, ab.pops)
        assert mid is not None and apply(b, mid) is not None


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


# ------------------------------------------------------------------------------------------
# WFA semantics
# ------------------------------------------------------------------------------------------
def test_wfa_accept_here_semantics():
    a = WFA(N_TOK)
    q0 = a.add_state(initial=range(0, 30), final=[0, 1])
    q1 = a.add_state(final=range(0, 41))
    a.add_transition(q0, 1, q1, range(10, 41))
    assert a.weight([]) == BitMap([0, 1])
    assert a.weight([1]) == BitMap([0, 1]) | BitMap(range(10, 30))
    assert a.weight([1, 2, 3]) == a.weight([1])        # the rest of the word is not read
    assert a.weight([2]) == BitMap([0, 1])              # no edge: only what was accepted before
    d = determinize(a)
    for w in ([], [1], [1, 2, 3], [2]):
        assert d.run(w) == a.weight(w)


@given(wfas())
@SETTINGS
def test_wfa_weight_matches_brute_force(a):
    for word in ALL_WORDS:
        assert a.weight(word) == brute_weight(a, word)


# ------------------------------------------------------------------------------------------
# determinize / minimize / prune_accepted
# ------------------------------------------------------------------------------------------
@given(wfas(), st.booleans())
@SETTINGS
def test_determinize_matches_wfa(a, prune):
    d = determinize(a, prune=prune)
    assert d.is_acyclic() and is_acyclic(d)
    assert max_depth(d) <= max(a.n_states - 1, 0)
    assert_same_runs(a, d)
    # longer words: reading stops by itself
    for word in [(0, 1, 2, 3, 0, 1), (4, 4, 4, 4, 4, 4, 4), (3, 2, 1, 0, 4, 3)]:
        assert d.run(word) == brute_weight(a, word)


@given(wfas(acyclic=False, max_states=4))
@SETTINGS
def test_determinize_cyclic_wfa(a):
    d = determinize(a, max_states=10_000)
    for word in ALL_WORDS[:200] + [(0, 0, 0, 0, 0, 0), (1, 2, 1, 2, 1, 2, 1)]:
        assert d.run(word) == brute_weight(a, word)


@given(wfas(), st.booleans())
@SETTINGS
def test_minimize_preserves_and_is_minimal(a, prune):
    d = determinize(a, prune=prune)
    m = minimize(d)
    assert m.n_states <= d.n_states
    assert m.history[-1]["states_before"] == d.n_states
    assert m.history[-1]["states_after"] == m.n_states
    assert_same_runs(a, m)
    # no two structurally equivalent states remain
    sigs = signatures(m)
    assert len(set(sigs)) == len(sigs)
    # every state is reachable and useful (can still accept something)
    assert len(m.reachable()) == m.n_states
    # idempotent
    m2 = minimize(m)
    assert m2.edges == m.edges and m2.final == m.final and m2.start == m.start
    assert max_depth(m) <= max_depth(d)


@given(wfas())
@SETTINGS
def test_prune_accepted_preserves(a):
    d = determinize(a)
    p = prune_accepted(d)
    assert_same_runs(a, p)
    # pruned edges carry no token accepted at their source
    W = d.weights
    for s, edges in enumerate(p.edges):
        for sym, (dst, w) in edges.items():
            assert not (W.get(w) & W.get(p.final[s]))
    mp = minimize(p)
    assert_same_runs(a, mp)
    assert mp.n_states <= minimize(d).n_states


@given(wfas(), st.booleans())
@SETTINGS
def test_run_dense_and_run_id(a, prune):
    d = minimize(determinize(a, prune=prune))
    W = d.weights
    for word in ALL_WORDS[::11]:
        expect = d.run(word)
        np.testing.assert_array_equal(d.run_dense(word, N_TOK), mask_from_bitmap(expect, N_TOK))
        np.testing.assert_array_equal(d.run_dense(word, 64), mask_from_bitmap(expect, 64))
        assert W.get(d.run_id(word)) == expect
    out = d.run_dense([], N_TOK)
    out[:] = 0                                         # the result is the caller's to modify
    assert W.dense(d.final[d.start], N_TOK) is not out


@given(dwas())
@SETTINGS
def test_random_dwa_run_minimize_prune(d):
    """Hand-built DWAs (finals not contained in the running weight, DEFAULT/dead edges)."""
    W = d.weights
    m = minimize(d)
    p = prune_accepted(d)
    pm = minimize(p)
    for word in ALL_WORDS:
        expect = reference_run(d, word)
        assert d.run(word) == expect, word
        assert m.run(word) == expect, word
        assert p.run(word) == expect, word
        assert pm.run(word) == expect, word
    for word in ALL_WORDS[::7]:
        expect = reference_run(d, word)
        np.testing.assert_array_equal(d.run_dense(word, N_TOK), mask_from_bitmap(expect, N_TOK))
        np.testing.assert_array_equal(pm.run_dense(word, N_TOK), mask_from_bitmap(expect, N_TOK))
        assert W.get(d.run_id(word)) == expect
        assert W.get(pm.run_id(word)) == expect
    sigs = signatures(m)
    assert len(set(sigs)) == len(sigs)
    assert len(m.reachable()) == m.n_states
    m2 = minimize(m)
    assert m2.edges == m.edges and m2.final == m.final
    assert m.n_states <= len(d.reachable())
    if m.n_states > 1:
        assert max_depth(m) <= max_depth(d)


# ------------------------------------------------------------------------------------------
# DEFAULT / dead edges, limits, cycles
# ------------------------------------------------------------------------------------------
def test_default_and_dead_edges():
    W = WeightTable(N_TOK)
    d = DWA(W)
    s0 = d.add_state(W.intern([0]))
    s1 = d.add_state(W.intern(range(0, 41)))
    s2 = d.add_state(W.intern([5, 6]))
    d.set_default(s0, s1, W.intern(range(0, 20)))
    d.set_edge(s0, 7, s2, W.intern([5, 30]))
    d.set_edge(s0, 8, DEAD, EMPTY_ID)
    assert d.run([]) == BitMap([0])
    assert d.run([3]) == BitMap(range(0, 20))          # any symbol without an edge: DEFAULT
    assert d.run([7]) == BitMap([0, 5])
    assert d.run([8]) == BitMap([0])                    # dead edge: DEFAULT is not taken
    assert d.run([3, 3, 3]) == BitMap(range(0, 20))
    m = minimize(d)
    p = prune_accepted(d)
    for w in ([], [3], [7], [8], [9, 1], [7, 7]):
        assert m.run(w) == d.run(w) == p.run(w)
        np.testing.assert_array_equal(m.run_dense(w), mask_from_bitmap(d.run(w), N_TOK))
    # an explicit edge identical to DEFAULT is redundant: minimize drops it
    d.set_edge(s0, 9, s1, W.intern(range(0, 20)))
    assert minimize(d).n_edges == m.n_edges
    st_ = d.stats()
    assert st_["n_default_edges"] == 1 and st_["n_dead_edges"] == 1 and st_["max_depth"] == 1


def test_prune_makes_dead_edge_under_default():
    """An explicit edge emptied by pruning must not fall through to DEFAULT."""
    W = WeightTable(N_TOK)
    d = DWA(W)
    s0 = d.add_state(W.intern([1, 2]))
    s1 = d.add_state(W.intern(range(41)))
    s2 = d.add_state(W.intern([30]))
    d.set_default(s0, s2, W.intern([30, 31]))
    d.set_edge(s0, 0, s1, W.intern([1, 2]))             # ⊆ final(s0): becomes ∅
    p = prune_accepted(d)
    assert p.edges[s0][0] == (DEAD, EMPTY_ID)
    for w in ([], [0], [1], [0, 0]):
        assert p.run(w) == d.run(w)


def test_determinize_any_becomes_default():
    a = WFA(N_TOK)
    q0 = a.add_state(initial=True)
    q1 = a.add_state(final=range(0, 10))
    q2 = a.add_state(final=range(5, 41))
    a.add_transition(q0, ANY, q1)
    a.add_transition(q0, 2, q2, range(0, 8))
    d = determinize(a)
    assert DEFAULT in d.edges[d.start] and 2 in d.edges[d.start]
    assert d.run([0]) == BitMap(range(10)) == d.run([1234])
    assert d.run([2]) == BitMap(range(10))              # both paths: {0..9} ∪ {5..7}
    assert_same_runs(a, d)


def test_determinize_limit_raises():
    # a chain where every level doubles the number of distinct subset maps
    k = 8
    a = WFA(2 ** k)
    qs = [a.add_state() for _ in range(2 * k + 1)]
    a.set_initial(qs[0])
    for i in range(k):
        for b in (0, 1):
            a.add_transition(qs[2 * i], b, qs[2 * i + 2], [j for j in range(2 ** k) if (j >> i) & 1 == b])
        a.set_final(qs[2 * i + 2])
    d = determinize(a)
    assert d.n_states == 2 ** (k + 1) - 1
    with pytest.raises(DeterminizationLimitError, match="more than 100 DWA states"):
        determinize(a, max_states=100)


def test_cyclic_dwa_rejected():
    W = WeightTable(N_TOK)
    d = DWA(W)
    s0 = d.add_state(W.intern([1]))
    s1 = d.add_state(W.intern([2]))
    d.set_edge(s0, 0, s1, UNIVERSE_ID)
    d.set_edge(s1, 0, s0, UNIVERSE_ID)
    assert not d.is_acyclic()
    assert d.run([0, 0, 0]) == BitMap([1, 2])
    with pytest.raises(CyclicAutomatonError):
        minimize(d)
    with pytest.raises(CyclicAutomatonError):
        max_depth(d)
    assert d.stats()["acyclic"] is False and d.stats()["max_depth"] is None


def test_minimize_removes_useless_states():
    W = WeightTable(N_TOK)
    d = DWA(W)
    s0 = d.add_state(W.intern([1]))
    s1 = d.add_state(EMPTY_ID)                          # accepts nothing, nothing below
    s2 = d.add_state(W.intern([3]))
    s3 = d.add_state(W.intern([3]))                     # equivalent to s2
    d.set_edge(s0, 0, s1, UNIVERSE_ID)
    d.set_edge(s0, 1, s2, UNIVERSE_ID)
    d.set_edge(s0, 2, s3, UNIVERSE_ID)
    m = minimize(d)
    assert m.n_states == 2 and m.n_edges == 2
    for w in ([], [0], [1], [2], [3]):
        assert m.run(w) == d.run(w)
    empty = DWA(W)
    empty.add_state(EMPTY_ID)
    assert minimize(empty).n_states == 1 and minimize(empty).run([0]) == BitMap()


def test_dwa_pickles():
    a = WFA(N_TOK)
    q0 = a.add_state(initial=True, final=[1])
    q1 = a.add_state(final=[2, 3])
    a.add_transition(q0, 0, q1, [2, 9])
    d = minimize(determinize(a))
    d2 = pickle.loads(pickle.dumps(d))
    assert d2.edges == d.edges and d2.final == d.final
    assert d2.run([0]) == d.run([0]) == BitMap([1, 2])


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
