"""The streaming scanner's precomputed lookahead (``finishable``) against a
plain breadth-first search over (DFA state, shadows) pairs, on the lexer
configurations that random byte walks reach in every benchmark grammar."""

from __future__ import annotations

import random

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
