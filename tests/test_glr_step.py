"""The compiled GLR step (``stackmask._native.GLRStep``) builds the graph the reference
``GLR.reduce_all``/``GLR.shift`` build, ``commit`` takes the GLR-along-lexing-paths
branch where the parse branches, and the compiled walk below branching GSS nodes
(``_walk.pxi``) finds the weights of the walk's definition.

Two ``GLR`` objects over the same tables, one with the compiled step and one without,
shift the same terminal sequences (generated sentences and random mutations of them, of
ambiguous grammars and of the benchmark grammars): after every terminal the new top nodes
must be equal as graphs (``test_native.stack_id``: LR state and links, in order) and the
nodes ``reduce_all`` returns must be equal in number and order. The work limit
(``Limits.max_gss_work``) must stop both at the same pass with the same count.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from stackmask import Constraint, native
from stackmask.compile.tables import build_tables
from stackmask.errors import LimitExceeded
from stackmask.generate import SentenceGenerator
from stackmask.glr.gss import GLR
from stackmask.grammar import Grammar

from conftest import read_bench_grammar
from test_compiled_exact import AMBIGUOUS_GRAMMARS, _AMBIGUOUS_FIXED
from test_glr_vs_lark import OWN_AMBIGUOUS, mutate_terminals
from test_native import stack_id

pytestmark = pytest.mark.usefixtures("needs_native")

GRAMMARS = {**{f"amb-{k}": v for k, v in AMBIGUOUS_GRAMMARS.items()},
            **{f"own-{k}": v for k, v in OWN_AMBIGUOUS.items()}}


_TABLES: dict = {}


def tables_of(name: str):
    if name not in _TABLES:
        text = GRAMMARS[name] if name in GRAMMARS else read_bench_grammar(name)
        _TABLES[name] = build_tables(text, ambiguous=True)
    return _TABLES[name]


def shapes(nodes, intern: dict) -> list:
    memo: dict = {}
    return [stack_id(n, memo, intern) for n in nodes]


def run_both(tables, seq: list[str], where: str, max_work=None) -> None:
    """Shift ``seq`` on both GLRs, comparing after every terminal; also ``reduce_all``
    and ``can_shift`` for every terminal at the final nodes."""
    fast = GLR(tables.lr, max_work=max_work, compiled=native.module())
    ref = GLR(tables.lr, max_work=max_work)
    assert fast.shift != ref.shift        # the compiled twin is in place
    nf, nr = [fast.root], [ref.root]
    ids = tables.terminal_ids
    for k, name in enumerate(seq):
        t = ids[name]
        ef = er = None
        try:
            nf2 = fast.shift(nf, t)
        except LimitExceeded as e:
            ef = (e.value, e.maximum, str(e))
        try:
            nr2 = ref.shift(nr, t)
        except LimitExceeded as e:
            er = (e.value, e.maximum, str(e))
        assert ef == er, f"{where} terminal {k}: limits {ef} vs {er}"
        if ef is not None:
            return
        intern: dict = {}
        assert shapes(nf2, intern) == shapes(nr2, intern), f"{where}: graphs differ after terminal {k}"
        for a, b in zip(nf2, nr2):
            assert (a.below is None) == (b.below is None), where
        if not nf2:
            break
        nf, nr = nf2, nr2
    intern = {}
    for t in range(len(tables.lr.terminals)):
        try:
            rf = fast.reduce_all(nf, t)
            rr = ref.reduce_all(nr, t)
        except LimitExceeded:
            continue
        assert shapes(rf, intern) == shapes(rr, intern), f"{where}: reduce_all on {t} differs"
        for a, b in zip(nf, nr):
            assert fast.can_shift(a, t) == ref.can_shift(b, t), where


def sentences(tables, seed: int, n: int, depth: int = 8) -> list[list[str]]:
    """``n`` generated terminal sequences and a random mutation of each."""
    g: Grammar = tables.grammar
    gen = SentenceGenerator(g, max_depth=depth, seed=seed)
    rng = random.Random(seed)
    names = sorted(t.name for t in g.terminals if t.name not in g.ignore)
    out = []
    for _ in range(n):
        seq = gen.terminal_sequence(rng)
        out.append(seq)
        out.append(mutate_terminals(seq, names, rng))
    return out


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_compiled_glr_step_builds_the_reference_graph(name):
    tables = tables_of(name)
    for i, seq in enumerate(sentences(tables, 11, 12)):
        run_both(tables, seq, f"{name} #{i}")


@pytest.mark.parametrize("name", ["go", "java", "sql"])
def test_compiled_glr_step_on_code_grammars(name):
    tables = tables_of(name)
    for i, seq in enumerate(sentences(tables, 5, 4, depth=12)):
        run_both(tables, seq, f"{name} #{i}")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["A", "LPAR", "RPAR"]), max_size=14))
def test_compiled_glr_step_random_sequences(seq):
    """Any sequence over the highly ambiguous ``s: s s | "a" | "(" s ")" |`` (dead ends
    included)."""
    run_both(tables_of("own-ss"), seq, f"ss {seq}")


def test_work_limit_stops_both_at_the_same_pass():
    with pytest.raises(LimitExceeded):     # the sequence passes the limit
        ref = GLR(tables_of("own-ss").lr, max_work=3_000)
        nodes = [ref.root]
        for _ in range(60):
            nodes = ref.shift(nodes, tables_of("own-ss").terminal_ids["A"])
    run_both(tables_of("own-ss"), ["A"] * 60, "ss limit", max_work=3_000)


def test_commit_takes_the_glr_paths_where_the_parse_branches(qwen_vocab, monkeypatch):
    """On an ambiguous grammar the fast commit hands branching tokens to GLR along the
    lexing paths (not to the byte-by-byte loop), on both paths, and the states agree
    with the byte-by-byte loop's masks (``test_commit_fast`` checks every step)."""
    calls = {"paths": 0, "general": 0}
    for pure in (False, True):
        with monkeypatch.context() as m:
            if pure:
                m.setenv(native.ENV, "1")
            c = Constraint(AMBIGUOUS_GRAMMARS["expr"], qwen_vocab, ambiguous=True, compile="lazy")
        orig_general = c._commit_general
        orig_paths = c._commit_paths

        def general(*a):
            calls["general"] += 1
            return orig_general(*a)

        def paths(*a):
            calls["paths"] += 1
            return orig_paths(*a)
        c._commit_general = general
        if pure:
            c._commit_paths = paths
        s = c.start()
        for ch in _AMBIGUOUS_FIXED["expr"][0]:
            s = c.commit(s, qwen_vocab.tokens.index(ch.encode()))
        assert c.is_accepting(s)
        assert calls["general"] == 0, f"pure={pure}: the byte-by-byte loop ran"
        if pure:
            assert calls["paths"] > 0


def oracle_branches(dwa, q: int, node) -> frozenset:
    """The weights met walking every link of ``node`` from automaton state ``q`` down to
    the bottom or a dead end, by the definition (every path, no memo on the nodes)."""
    memo: dict = {}

    def edge(q, s):
        t = dwa.trans[q] or dwa.state_edges(q)
        e = t.get(s)
        if e is None:
            e = dwa.default[q] if dwa.complete[q] else dwa.edge(q, s)
        return e

    def below(q, n) -> frozenset:        # the walk from q over n's links
        key = (q, id(n))
        r = memo.get(key)
        if r is None:
            out = set()
            for m in n.links:
                e = edge(q, m.state)
                if e is None:
                    continue
                if e[1]:
                    out.add(e[1])
                if e[0] >= 0:
                    out |= below(e[0], m)
            r = memo[key] = frozenset(out)
        return r
    return below(q, node)


@pytest.mark.parametrize("name, text", [("expr", "1+2*3-4/5+6*-7-8+9*(1+2)*3+4-5*6/7+8"),
                                        ("ss", "abbabaabbbab"),
                                        ("rlist", "1,2,[3,4],5,6,[7,[8,9]],10,11")])
def test_compiled_branch_walk_equals_the_definition(name, text, qwen_vocab):
    """The compiled walk below branching nodes (``_walk.pxi``) and the masker's Python
    walk give, at every branching node of the GSS after every byte of an ambiguous text
    and from every automaton state, the weights of the walk's definition; the compiled
    walk runs first at each step, so the Python one reads the memos it left."""
    from test_compiled_exact import ambiguous_constraint
    c = ambiguous_constraint(name, qwen_vocab)
    assert c.mask_path is not None
    dwa = c.compiled.dwa
    masker = c._masker
    rng = random.Random(name)
    s = c.start()
    seen_branching = 0
    for ch in text:
        s = c.commit(s, qwen_vocab.tokens.index(ch.encode()))
        c.get_mask(s)                         # the masks' own walks fill memos too
        todo, seen, branching = [n for n, _ in s.heads], set(), []
        while todo:
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if len(n.links) > 1:
                branching.append(n)
            todo.extend(n.links)
        seen_branching += len(branching)
        states = list(range(len(dwa.trans)))
        for n in branching:
            for q in rng.sample(states, min(25, len(states))):
                want = oracle_branches(dwa, q, n)
                assert c.mask_path.branches(q, n) == want, f"{name} {text!r}: compiled, q={q}"
                assert masker.branches(q, n) == want, f"{name} {text!r}: python, q={q}"
    assert seen_branching > 10
