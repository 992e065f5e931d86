"""The automaton toolkit (``stackmask.wfa.fsa``, ``.reduction``) against brute force on
tiny automata: subset construction + trimming + minimization accept what the NFA
accepts, the minimal automaton has as many states as the NFA's language has residuals,
the product of complete automata pairs their states, and the incremental refinement
equals Moore's."""

from __future__ import annotations

from itertools import product as cartesian

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask.wfa.fsa import Nfa, determinize, product_bfs
from stackmask.wfa.reduction import minimize, refine, trim

MAX_LEN = 6


@st.composite
def small_nfas(draw):
    """An NFA of up to 6 states over up to 3 symbols, with epsilon moves and symbol ranges."""
    k = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    nfa = Nfa(100)
    for _ in range(n):
        nfa.new()
    for s in range(n):
        nfa.eps[s] = sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=2))))
        for _ in range(draw(st.integers(0, 3))):
            lo = draw(st.integers(0, k - 1))
            hi = draw(st.integers(lo, k - 1))
            nfa.edges[s].append((lo, hi, draw(st.integers(0, n - 1))))
    nfa.start = draw(st.integers(0, n - 1))
    nfa.final = draw(st.integers(0, n - 1))
    return nfa, k


def _nfa_accepts(nfa: Nfa, word) -> bool:
    def close(states):
        stack, seen = list(states), set(states)
        while stack:
            for y in nfa.eps[stack.pop()]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        return seen

    cur = close({nfa.start})
    for a in word:
        cur = close({t for s in cur for lo, hi, t in nfa.edges[s] if lo <= a <= hi})
    return nfa.final in cur


def _dfa_accepts(trans, accepting, word) -> bool:
    if len(trans) == 0:
        return False
    s = 0
    for a in word:
        s = trans[s][a]
        if s < 0:
            return False
    return bool(accepting[s])


def _words(k: int, max_len: int):
    for n in range(max_len + 1):
        yield from cartesian(range(k), repeat=n)


def _minimal_dfa(nfa: Nfa, k: int):
    trans, s2c, acc = determinize(nfa, k, 10_000)
    full = trans[:, s2c]
    t, old = trim(full, acc)
    a = acc[old]
    if t.shape[0] == 0:
        return t, a, full, acc
    m, old2 = minimize(t, a.astype(np.int64))
    return m, a[old2], full, acc


@settings(max_examples=300, deadline=None, database=None)
@given(small_nfas())
def test_determinize_minimize_accepts_what_the_nfa_accepts(case):
    nfa, k = case
    m, am, _, _ = _minimal_dfa(nfa, k)
    rows = m.tolist()
    for w in _words(k, MAX_LEN):
        assert _dfa_accepts(rows, am, w) == _nfa_accepts(nfa, w), w


@settings(max_examples=300, deadline=None, database=None)
@given(small_nfas())
def test_minimal_state_count_is_the_number_of_residuals(case):
    """The minimal trimmed DFA has one state per class of equivalent live states, the
    classes found by the table-filling algorithm (an independent reference: pairs marked
    distinguishable until nothing changes; -1 transitions go to a dead sink state)."""
    nfa, k = case
    m, am, full, acc = _minimal_dfa(nfa, k)
    rows = full.tolist()
    n = len(rows)
    sink = n
    reach, stack = {0}, [0]
    while stack:
        for t in rows[stack.pop()]:
            if t >= 0 and t not in reach:
                reach.add(t)
                stack.append(t)

    def step(q, a):
        return sink if q == sink or rows[q][a] < 0 else rows[q][a]

    final = [bool(acc[q]) for q in range(n)] + [False]
    states = sorted(reach) + [sink]
    marked = {(p, q) for i, p in enumerate(states) for q in states[i + 1:] if final[p] != final[q]}
    changed = True
    while changed:
        changed = False
        for i, p in enumerate(states):
            for q in states[i + 1:]:
                if (p, q) in marked:
                    continue
                for a in range(k):
                    x, y = sorted((step(p, a), step(q, a)))
                    if x != y and (x, y) in marked:
                        marked.add((p, q))
                        changed = True
                        break

    def same(p, q):
        return p == q or (min(p, q), max(p, q)) not in marked

    classes: list = []
    for q in sorted(reach):
        if same(q, sink):
            continue                    # dead: trimmed away
        if not any(same(q, c) for c in classes):
            classes.append(q)
    assert len(m) == len(classes)
    # and the minimal automaton is itself minimal and deterministic: no two states alike
    if len(m):
        t2, _ = minimize(m, am.astype(np.int64))
        assert len(t2) == len(m)


@st.composite
def complete_dfas(draw, k):
    n = draw(st.integers(1, 5))
    rows = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=k, max_size=k),
                         min_size=n, max_size=n))
    fin = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(rows, dtype=np.int32), fin


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(st.just(k), complete_dfas(k), complete_dfas(k))))
def test_product_of_complete_dfas_pairs_their_states(case):
    k, (ta, fa), (tb, fb) = case
    na = len(ta)
    g = np.vstack([ta, tb + na])
    states, trans = product_bfs(g, (0, na), 10_000)
    assert all(len(s) == 2 for s in states)
    rows = trans.tolist()
    for w in _words(k, 5):
        q, x, y = 0, 0, 0
        for a in w:
            q, x, y = rows[q][a], ta[x][a], tb[y][a]
        assert states[q] == (x, y + na)


def _refine_naive(cls0, succ, depth):
    """Moore refinement, every round whole: the reference for ``refine``."""
    cls = np.asarray(cls0, dtype=np.int64)
    for _ in range(depth):
        ext = np.append(cls, -1)
        rows = np.column_stack([cls, ext[succ]])
        _, cls = np.unique(rows, axis=0, return_inverse=True)
        cls = cls.reshape(-1)
    return cls


def _same_partition(a, b) -> bool:
    pairs = set(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    return len(pairs) == len(set(np.asarray(a).tolist())) == len(set(np.asarray(b).tolist()))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 120), st.integers(1, 3), st.integers(1, 4), st.data())
def test_refine_equals_the_naive_refinement(m, k, n_obs, data):
    succ = np.array(data.draw(st.lists(st.lists(st.integers(0, m), min_size=k, max_size=k),
                                       min_size=m, max_size=m)), dtype=np.int64)
    cls0 = np.array(data.draw(st.lists(st.integers(0, n_obs - 1), min_size=m, max_size=m)))
    depths = sorted(set(data.draw(st.lists(st.integers(0, 12), min_size=1, max_size=3))))
    parts, rounds = refine(cls0, succ, depths)
    for d in depths:
        assert _same_partition(parts[d], _refine_naive(cls0, succ, d)), (d, rounds)


def test_refine_counted_chain_is_incremental():
    # a chain of 3,000 counts read by one symbol (plus a dead one): every round splits
    # off one state at the chain's end; every depth's partition is right
    m = 3000
    succ = np.column_stack([np.append(np.arange(1, m), m), np.full(m, m)])
    cls0 = np.zeros(m, dtype=np.int64)
    cls0[-1] = 1                                  # the last count: it reads nothing
    parts, rounds = refine(cls0, succ, (15, 128))
    assert rounds == 128
    for d in (15, 128):
        assert len(set(parts[d].tolist())) == d + 2
        assert _same_partition(parts[d], _refine_naive(cls0, succ, d))


# --------------------------------------------------------------------------
# the compiled twins (``stackmask._native``) equal the pure-Python references
# --------------------------------------------------------------------------

def _twins(fn):
    """``fn()`` on the pure-Python path, then on the compiled one (skipped without the
    extension, failed under ``STACKMASK_REQUIRE_NATIVE=1``). (Not monkeypatch: hypothesis
    runs many examples per fixture.)"""
    import os

    from conftest import require_native

    from stackmask import native
    saved = os.environ.pop(native.ENV, None)
    try:
        require_native()
        os.environ[native.ENV] = "1"
        pure = fn()
        del os.environ[native.ENV]
        fast = fn()
    finally:
        os.environ.pop(native.ENV, None)
        if saved is not None:
            os.environ[native.ENV] = saved
    return pure, fast


@st.composite
def wider_nfas(draw):
    """An NFA of up to 30 states over 3, 16 or 256 symbols, with states to keep and a
    state limit that some subset constructions pass."""
    k = draw(st.sampled_from([3, 16, 256]))
    n = draw(st.integers(1, 30))
    nfa = Nfa(1000)
    for _ in range(n):
        nfa.new()
    for s in range(n):
        nfa.eps[s] = draw(st.lists(st.integers(0, n - 1), max_size=2))
        for _ in range(draw(st.integers(0, 3))):
            lo = draw(st.integers(0, k - 1))
            hi = draw(st.integers(lo, min(k - 1, lo + 6)))
            nfa.edges[s].append((lo, hi, draw(st.integers(0, n - 1))))
    nfa.start = draw(st.integers(0, n - 1))
    nfa.final = draw(st.integers(0, n - 1))
    keep = draw(st.lists(st.integers(0, n - 1), max_size=2))
    limit = draw(st.sampled_from([2, 8, 10_000]))
    return nfa, k, keep, limit


@settings(max_examples=400, deadline=None, database=None)
@given(wider_nfas())
def test_compiled_determinize_equals_the_reference(case):
    from stackmask.wfa.fsa import TooManyStates
    nfa, k, keep, limit = case

    def run():
        subsets: list = []
        try:
            t, s2c, acc = determinize(nfa, k, limit, keep=keep, subsets_out=subsets)
        except TooManyStates:
            return "too many"
        return t.tolist(), s2c.tolist(), acc.tolist(), subsets
    pure, fast = _twins(run)
    assert pure == fast


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=4), st.integers(1, 6),
       st.sampled_from([2, 5, 10_000]), st.data())
def test_compiled_product_equals_the_reference(sizes, n_cls, limit, data):
    from stackmask.wfa import fsa
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    gc = np.full((int(offs[-1]), n_cls), -1, dtype=np.int32)
    for i, size in enumerate(sizes):
        for q in range(size):
            for c in range(n_cls):
                if data.draw(st.booleans()):
                    gc[offs[i] + q, c] = offs[i] + data.draw(st.integers(0, size - 1))
    start = tuple(int(o) for o in offs[:-1])
    try:
        want = fsa._product_tuples(gc, start, limit)
        want = (want[0], want[1].tolist())
    except fsa.TooManyStates:
        want = "too many"

    def run():
        try:
            states, trans = fsa.product_bfs(gc, start, limit)
        except fsa.TooManyStates:
            return "too many"
        return states, trans.tolist()
    pure, fast = _twins(run)
    assert fast == want                  # one tuple at a time, numbered alike
    if want != "too many":               # the pure path may go by levels: up to numbering
        assert sorted(pure[0]) == sorted(want[0])


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(1, 40), st.integers(1, 5), st.integers(1, 4), st.data())
def test_compiled_trim_minimize_and_numbering_equal_the_reference(n, k, n_lab, data):
    from stackmask import native
    from stackmask.wfa import fsa, reduction
    t = np.array(data.draw(st.lists(st.lists(st.integers(-1, n - 1), min_size=k, max_size=k),
                                    min_size=n, max_size=n)), dtype=np.int32)
    acc = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    labels = np.array(data.draw(st.lists(st.integers(0, n_lab - 1), min_size=n, max_size=n)))

    def run():
        t2, old = trim(t, acc)
        m = minimize(t2, labels[old]) if len(old) else (t2, old)
        pool = t.reshape(-1)
        offs = np.arange(0, n * k + 1, k, dtype=np.int64)
        ids = fsa.seq_ids(pool, offs, pool[k:], offs[:-1])
        pre = reduction._preimages(t, native.module())
        return [x.tolist() for x in (t2, old, m[0], m[1], ids[0], ids[1]) + tuple(pre)]
    pure, fast = _twins(run)
    assert pure == fast


@pytest.mark.parametrize("seed", [0, 1])
def test_large_automata_minimize_alike_without_moore_rounds(seed, monkeypatch):
    # from _HOPCROFT_FIRST states minimize skips its Moore rounds: the same minimal
    # automaton as with them (a chain, whose rounds would not settle, and random rows)
    import stackmask.wfa.reduction as F
    rng = np.random.default_rng(seed)
    n = F._HOPCROFT_FIRST + 500
    trans = rng.integers(-1, n, size=(n, 3)).astype(np.int32)
    trans[:-1, 0] = np.arange(1, n)              # a chain through every state
    labels = (rng.random(n) < 0.02).astype(np.int64)
    labels[-1] = 1
    got = F.minimize(trans, labels)
    monkeypatch.setattr(F, "_HOPCROFT_FIRST", 1 << 40)
    want = F.minimize(trans, labels)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    chain = np.full((n, 2), -1, dtype=np.int32)
    chain[:-1, 0] = np.arange(1, n)
    chain[:, 1] = np.arange(n) // 2              # pairs of states step back alike
    lab = np.zeros(n, dtype=np.int64)
    lab[-1] = 1
    a = F.minimize(chain, lab)
    monkeypatch.setattr(F, "_HOPCROFT_FIRST", 1)
    b = F.minimize(chain, lab)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
