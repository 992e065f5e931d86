"""The streaming scanner's precomputed lookahead (``finishable``) against a
plain breadth-first search over (DFA state, shadows) pairs, on the lexer
configurations that random byte walks reach in every benchmark grammar."""

from __future__ import annotations

import random

import numpy as np
import pytest

from stackmask.compile.tables import build_tables
from stackmask.lexer.scanner import BOUNDARY, Scanner

from conftest import AMBIGUOUS_BENCH, BENCH_GRAMMARS, read_bench_grammar


def reference_finishable(sc: Scanner, cid: int) -> frozenset:
    d, shadows = sc.config(cid)
    trans = sc.dfa.trans
    start = (0 if d == BOUNDARY else d, shadows)
    seen, todo, out = {start}, [start], set()
    while todo:
        d0, s0 = todo.pop()
        for b in range(256):
            nd = int(trans[d0, b])
            if nd < 0:
                continue
            ns, dead = set(), False
            for s in s0:
                t = int(trans[s, b])
                if t >= 0:
                    if sc.winners[t]:
                        dead = True
                        break
                    ns.add(t)
            if dead:
                continue
            out.update(sc.winners[nd])
            key = (nd, frozenset(ns))
            if key not in seen and sc.dfa.live_out[nd]:
                seen.add(key)
                todo.append(key)
    return frozenset(out)


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_finishable_matches_breadth_first_search(name):
    t = build_tables(read_bench_grammar(name), ambiguous=name in AMBIGUOUS_BENCH)
    sc = Scanner(t.lexer, t.grammar.terminals, t.grammar.ignore, t.terminal_ids)
    rng = random.Random(5)
    alphabet = b" \t\n\"'/*.,;:()[]{}<>=+-!&|0123456789abcdefxyzABCXYZ_\\`#@"
    configs = {0}
    for _ in range(60):
        cfgs = [0]
        for _ in range(rng.randint(1, 25)):
            nxt = [n for c in cfgs for _, n in sc.step(c, rng.choice(alphabet))]
            if not nxt:
                break
            cfgs = nxt[:8]
            configs.update(cfgs)
    with_shadows = [c for c in configs if sc.config(c)[1]]
    assert len(configs) > 3
    for c in sorted(configs)[:400]:
        assert sc.finishable(c) == reference_finishable(sc, c), (name, sc.config(c))
    assert with_shadows or name in ("calc",), "no inhibited configuration exercised"


def test_transition_rows_are_not_walked_by_the_garbage_collector():
    """The lexer's rows for Python lookups (``DFA.rows``, the scanner's) are arrays: a
    list of lists of ints is tracked and every full collection walks each entry (~17 ms
    for a 3,400-state lexer, a pause inside some commit); the rows still read as the
    table does."""
    import gc

    from stackmask.grammars.json_schema import convert_schema
    g = convert_schema({"type": "object", "properties": {"s": {"type": "string", "maxLength": 40}},
                        "required": ["s"]}).grammar
    t = build_tables(g, ambiguous=True, band=129)
    sc = Scanner(t.lexer, t.lexed, t.grammar.ignore, t.terminal_ids, starts=t.mode_starts)
    rows = t.lexer.rows()
    assert len(rows) == t.lexer.n_states > 100
    # an array is one object to the collector (its type its only referent), not 256
    assert sum(len(gc.get_referents(r)) for r in rows) <= len(rows)
    assert all(sc._trans[q] is rows[q] for q in range(len(rows)))
    assert np.array_equal(np.array([list(r) for r in rows]), t.lexer.trans)


def _random_dfa_case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    k = int(rng.integers(1, 5))
    trans = np.where(rng.random((n, k)) < 0.5, rng.integers(0, n, (n, k)), -1).astype(np.int32)
    alts = [("T", i) for i in range(int(rng.integers(1, 140)))]
    winners = tuple(frozenset(alts[j] for j in rng.choice(len(alts), int(rng.integers(0, 3)),
                                                           replace=False))
                    if rng.random() < 0.4 else frozenset() for _ in range(n))
    return trans, list(range(k)), winners


@pytest.mark.parametrize("seed", range(200))
def test_reachable_winners_compiled_equals_the_python_path(seed):
    """``_native.reach_closure`` (Tarjan over bitsets) against the Python Tarjan, on random
    automata with cycles, self loops, dead ends and over 64 alternatives."""
    from stackmask import native
    from stackmask.lexer.scanner import _reachable_winners, _reachable_winners_py
    if native.module() is None:
        pytest.skip("the compiled extension is not built")
    trans, reps, winners = _random_dfa_case(seed)
    assert _reachable_winners(trans, reps, winners) == _reachable_winners_py(trans, reps, winners)


@pytest.mark.parametrize("name", sorted(BENCH_GRAMMARS))
def test_reachable_winners_compiled_equals_the_python_path_on_bench_lexers(name):
    from stackmask import native
    from stackmask.lexer.scanner import _reachable_winners, _reachable_winners_py
    if native.module() is None:
        pytest.skip("the compiled extension is not built")
    t = build_tables(read_bench_grammar(name), ambiguous=name in AMBIGUOUS_BENCH)
    sc = Scanner(t.lexer, t.lexed, t.grammar.ignore, t.terminal_ids, starts=t.mode_starts)
    trans = np.asarray(t.lexer.trans)
    reps = sc._byte_classes
    assert _reachable_winners(trans, reps, sc.winners) == _reachable_winners_py(trans, reps,
                                                                                 sc.winners)
