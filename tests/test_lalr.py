"""LR(0)/LALR(1) tables with conflicts kept, and the ambiguous=False check.

Oracles: a brute-force canonical LR(1) construction merged by cores (the
definition of LALR(1)), Lark's own LALR analysis on the benchmark grammars,
an Earley recognizer, and tiny LR drivers (deterministic, and a set-of-stacks
GLR) written here."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackmask.errors import GrammarError
from stackmask.grammar import END, Grammar
from stackmask.glr.lalr import LRTables, build_lalr, check_deterministic, lalr_conflicts
from stackmask.glr.normal_form import normalize, nullable_symbols

from conftest import BENCH_GRAMMARS, read_bench_grammar
from grammar_oracles import Earley, plain_grammar

BENCH_NAMES = list(BENCH_GRAMMARS)


def bench_text(name: str) -> str:
    return read_bench_grammar(name)     # skipped without ../shared/bench ($STACKMASK_BENCH)



# ---------------------------------------------------------------------------
# drivers and oracles

def lr_accepts(t: LRTables, tokens) -> bool:
    """Deterministic LR driver; fails the test if it meets a conflict."""
    if any(x not in t.terminal_index for x in tokens):
        return False
    stack = [t.start_state]
    toks = [t.terminal_index[x] for x in tokens] + [0]
    i = 0
    steps = 0
    while True:
        steps += 1
        assert steps < 100000
        a, s = toks[i], stack[-1]
        rs = t.reduce[s].get(a, ())
        sh = t.shift[s].get(a)
        accept = len(stack) == 2 and s == t.accept_state and a == 0
        assert accept + (sh is not None) + len(rs) <= 1, "conflict met by the deterministic driver"
        if accept:
            return True
        if sh is not None:
            stack.append(sh)
            i += 1
        elif rs:
            r = rs[0]
            n = t.rule_len[r]
            if n:
                del stack[-n:]
            stack.append(t.goto[stack[-1]][t.rule_lhs[r]])
        else:
            return False


def glr_accepts(t: LRTables, tokens, limit: int = 200000) -> bool:
    """Set-of-stacks GLR: follows every action (for epsilon-free grammars
    without cycles the reductions between two shifts are finite)."""
    if any(x not in t.terminal_index for x in tokens):
        return False
    toks = [t.terminal_index[x] for x in tokens] + [0]
    stacks = {(t.start_state,)}
    for a in toks:
        seen = set(stacks)
        work = list(stacks)
        while work:
            s = work.pop()
            for r in t.reduce[s[-1]].get(a, ()):
                n = t.rule_len[r]
                base = s[:len(s) - n]
                ns = base + (t.goto[base[-1]][t.rule_lhs[r]],)
                if ns not in seen:
                    seen.add(ns)
                    work.append(ns)
                    assert len(seen) < limit
        if a == 0:
            return (t.start_state, t.accept_state) in seen
        stacks = {s + (t.shift[s[-1]][a],) for s in seen if a in t.shift[s[-1]]}
        if not stacks:
            return False
    raise AssertionError("unreachable")



def canonical_lalr(g: Grammar):
    """Brute force: canonical LR(1) item sets, merged by core.

    Returns (cores, trans, la): cores = set of kernel cores (frozensets of
    (rule, dot), rule -1 = $accept -> start); trans[(core, symbol)] = core;
    la[(core, rule)] = set of lookahead terminal names (complete items)."""
    rules = [(r.origin, r.expansion) for r in g.rules]
    aug = (-1, ("$accept", (g.start,)))
    allr = dict(enumerate(rules))
    allr[-1] = aug[1]
    by_lhs: dict[str, list[int]] = {}
    for i, (a, _) in enumerate(rules):
        by_lhs.setdefault(a, []).append(i)
    nullable = nullable_symbols(g.rules)
    first: dict[str, set[str]] = {a: set() for a in by_lhs}
    changed = True
    while changed:
        changed = False
        for a, exp in rules:
            for s in exp:
                f = first[s] if s in by_lhs else {s}
                if not f <= first[a]:
                    first[a] |= f
                    changed = True
                if s not in nullable:
                    break

    def first_seq(seq, la):
        out = set()
        for s in seq:
            out |= first[s] if s in by_lhs else {s}
            if s not in nullable:
                return out
        out.add(la)
        return out

    def closure(items):
        items = set(items)
        work = list(items)
        while work:
            r, d, la = work.pop()
            exp = allr[r][1]
            if d < len(exp) and exp[d] in by_lhs:
                # None marks "no lookahead" (unproductive context): LR(0)
                # still has the item, so keep it; it never becomes a lookahead
                for b in first_seq(exp[d + 1:], la) or {None}:
                    for r2 in by_lhs[exp[d]]:
                        it = (r2, 0, b)
                        if it not in items:
                            items.add(it)
                            work.append(it)
        return frozenset(items)

    def kernel_core(state):
        return frozenset((r, d) for r, d, _ in state if d > 0 or r == -1)

    start = closure({(-1, 0, END)})
    states = {start}
    work = [start]
    trans = {}
    la: dict = {}
    while work:
        s = work.pop()
        core = kernel_core(s)
        for r, d, b in s:
            if d == len(allr[r][1]) and r != -1:
                got = la.setdefault((core, r), set())
                if b is not None:
                    got.add(b)
        syms = {allr[r][1][d] for r, d, _ in s if d < len(allr[r][1])}
        for x in syms:
            nxt = closure({(r, d + 1, b) for r, d, b in s if d < len(allr[r][1]) and allr[r][1][d] == x})
            trans[(core, x)] = kernel_core(nxt)
            if nxt not in states:
                states.add(nxt)
                work.append(nxt)
    cores = {kernel_core(s) for s in states}
    return cores, trans, la


def assert_matches_canonical(g: Grammar, t: LRTables) -> None:
    cores, trans, la = canonical_lalr(g)
    ours = [frozenset(k) for k in t.kernels]
    assert len(set(ours)) == t.n_states == len(cores)
    assert set(ours) == cores
    for s in range(t.n_states):
        core = ours[s]
        for term, j in t.shift[s].items():
            assert trans[(core, t.terminals[term])] == ours[j]
        for nt, j in t.goto[s].items():
            assert trans[(core, t.nonterminals[nt])] == ours[j]
        n_out = sum(1 for (c, _x) in trans if c == core)
        assert n_out == len(t.shift[s]) + len(t.goto[s])
        got: dict[int, set[str]] = {}
        for term, rs in t.reduce[s].items():
            for r in rs:
                got.setdefault(r, set()).add(t.terminals[term])
        want = {r: las for (c, r), las in la.items() if c == core and las}
        assert got == want, (s, got, want)


# ---------------------------------------------------------------------------
# textbook grammars

def test_dragon_expression_grammar():
    g = plain_grammar({"E": ["E + T", "T"], "T": ["T * F", "F"], "F": ["( E )", "id"]}, start="E")
    t = build_lalr(g)
    assert t.n_states == 12                      # I0..I11 of the dragon book
    assert not t.conflicts
    assert t.terminals[0] == END == "$END"
    assert t.accept_state == t.goto[t.start_state][t.nonterminal_index["E"]]
    assert_matches_canonical(g, t)
    assert lr_accepts(t, "id + id * ( id + id )".split())
    assert not lr_accepts(t, "id + * id".split())
    assert not lr_accepts(t, [])
    check_deterministic(g)


def test_lalr_but_not_slr():
    # dragon book 4.49: S -> L = R | R ; L -> * R | id ; R -> L  (SLR conflict, LALR none)
    g = plain_grammar({"S": ["L = R", "R"], "L": ["* R", "id"], "R": ["L"]}, start="S")
    t = build_lalr(g)
    assert t.n_states == 10
    assert not t.conflicts
    assert_matches_canonical(g, t)
    assert lr_accepts(t, "* id = id".split())
    assert not lr_accepts(t, "id = = id".split())
    check_deterministic(g)


def test_lr1_but_not_lalr_reduce_reduce():
    g = plain_grammar({"S": ["a A d", "b B d", "a B e", "b A e"], "A": ["c"], "B": ["c"]}, start="S")
    t = build_lalr(g)
    assert_matches_canonical(g, t)
    rr = [c for c in t.conflicts if c.kind == "reduce/reduce"]
    assert {c.terminal for c in rr} == {"d", "e"}
    assert all(set(c.rules) == {"A -> c", "B -> c"} for c in rr)
    with pytest.raises(GrammarError) as ei:
        check_deterministic(g)
    assert "reduce/reduce" in str(ei.value) and "A -> c" in str(ei.value)


def test_dangling_else_shift_reduce():
    g = plain_grammar({"S": ["i S", "i S e S", "x"]}, start="S")
    t = build_lalr(g)
    assert_matches_canonical(g, t)
    sr = [c for c in t.conflicts if c.kind == "shift/reduce"]
    assert len(sr) == 1 and sr[0].terminal == "e" and "S -> i S" in sr[0].rules
    # GLR over the conflict table still recognizes the language
    e = Earley(g)
    for n in range(1, 7):
        for w in itertools.product("iex", repeat=n):
            assert glr_accepts(t, w) == e.accepts(w), w


def test_epsilon_rules_and_empty_sentence():
    g = plain_grammar({"S": ["A S b", ""], "A": ["a", ""]}, start="S")
    t = build_lalr(g)
    assert_matches_canonical(g, t)
    g2 = plain_grammar({"S": ["A a", "b"], "A": [""]}, start="S")
    t2 = build_lalr(g2)
    assert not t2.conflicts
    assert_matches_canonical(g2, t2)
    assert lr_accepts(t2, ["a"]) and lr_accepts(t2, ["b"]) and not lr_accepts(t2, [])
    g3 = plain_grammar({"S": ["( S ) S", ""]}, start="S")    # balanced parentheses
    t3 = build_lalr(g3)
    assert not t3.conflicts
    assert_matches_canonical(g3, t3)
    assert lr_accepts(t3, [])
    assert lr_accepts(t3, list("(()())()"))
    assert not lr_accepts(t3, list("(()"))


def test_tables_are_plain_indices():
    g = plain_grammar({"S": ["S s", "s"]}, start="S")
    t = build_lalr(g)
    assert isinstance(t.shift, tuple) and isinstance(t.reduce, tuple) and isinstance(t.goto, tuple)
    assert len(t.shift) == len(t.reduce) == len(t.goto) == t.n_states
    assert t.rules == g.rules and len(t.rule_lhs) == len(t.rule_len) == len(g.rules)
    assert t.start_state == 0
    for s in range(t.n_states):
        assert all(isinstance(k, int) and isinstance(v, int) for k, v in t.shift[s].items())
        assert all(isinstance(v, tuple) for v in t.reduce[s].values())
    assert t.terminal_index == {n: i for i, n in enumerate(t.terminals)}
    assert t.nonterminal_index == {n: i for i, n in enumerate(t.nonterminals)}


# ---------------------------------------------------------------------------
# Lark's own LALR analysis on the benchmark grammars

def _lark_analysis(text: str):
    from lark import Lark
    from lark.common import ParserConf
    from lark.parsers.lalr_analysis import LALR_Analyzer
    lk = Lark(text, parser="lalr")
    an = LALR_Analyzer(ParserConf(lk.rules, {}, ["start"]))
    an.compute_lr0_states()
    an.compute_reads_relations()
    an.compute_includes_lookback()
    an.compute_lookaheads()
    return an


@pytest.mark.parametrize("name", BENCH_NAMES)
def test_same_tables_as_lark(name):
    text = bench_text(name)
    g = Grammar.from_lark(text)
    t = build_lalr(g)
    an = _lark_analysis(text)
    index = {(r.origin, r.expansion): i for i, r in enumerate(g.rules)}

    def rid(rule) -> int:
        if rule.origin.name.startswith("$root_"):
            return -1
        return index[(rule.origin.name, tuple(s.name for s in rule.expansion))]

    ours = {frozenset(k): s for s, k in enumerate(t.kernels)}
    assert len(an.lr0_itemsets) == t.n_states == len(ours)
    for its in an.lr0_itemsets:
        key = frozenset((rid(rp.rule), rp.index) for rp in its.kernel)
        s = ours[key]
        for sym, nxt in its.transitions.items():
            k2 = frozenset((rid(rp.rule), rp.index) for rp in nxt.kernel)
            if sym.is_term:
                assert t.shift[s][t.terminal_index[sym.name]] == ours[k2]
            else:
                assert t.goto[s][t.nonterminal_index[sym.name]] == ours[k2]
        assert len(its.transitions) == len(t.shift[s]) + len(t.goto[s])
        theirs = {(la.name, rid(r)) for la, rules in its.lookaheads.items() for r in rules if rid(r) != -1}
        mine = {(t.terminals[la], r) for la, rs in t.reduce[s].items() for r in rs}
        assert mine == theirs, (name, s)


@pytest.mark.parametrize("name", ["json-outlines", "calc", "c"])
def test_bench_conflict_free_driver_agrees_with_earley(name):
    import random
    g = Grammar.from_lark(bench_text(name))
    t = build_lalr(g)
    assert not t.conflicts
    e = Earley(g)
    rng = random.Random(7)
    terms = sorted({s for r in g.rules for s in r.expansion if g.is_terminal(s)})
    # random walks through the automaton give (mostly) valid prefixes; finish
    # them randomly and mutate, then compare with Earley
    n_acc = 0
    for _ in range(300):
        w = _random_sentence(g, rng)
        if rng.random() < 0.5 and w:
            i = rng.randrange(len(w))
            w = w[:i] + [rng.choice(terms)] + w[i + (rng.random() < 0.5):]
        a = lr_accepts(t, w)
        assert a == e.accepts(w), w
        n_acc += a
    assert 0 < n_acc < 300


def _random_sentence(g: Grammar, rng, depth: int = 8, max_len: int = 10**9) -> list[str]:
    """Random derivation: random rules (that still fit in ``max_len``) down
    to ``depth``, then shortest derivations."""
    by: dict[str, list] = {}
    for r in g.rules:
        by.setdefault(r.origin, []).append(r.expansion)
    ml: dict[str, int] = {}
    wit: dict[str, tuple] = {}
    changed = True
    while changed:
        changed = False
        for a, es in by.items():
            for e in es:
                if all(s not in by or s in ml for s in e):
                    v = sum(ml[s] if s in by else 1 for s in e)
                    if v < ml.get(a, 1 << 30):
                        ml[a], wit[a] = v, e
                        changed = True

    def minlen(e):
        return sum(ml[x] if x in by else 1 for x in e)
    out: list[str] = []
    stack = [(g.start, 0)]
    pending = ml[g.start]
    while stack:
        s, d = stack.pop()
        if s not in by:
            out.append(s)
            pending -= 1
            continue
        pending -= ml[s]
        es = [e for e in by[s] if all(x not in by or x in ml for x in e)
              and len(out) + pending + minlen(e) <= max_len]
        e = wit[s] if d >= depth or not es else rng.choice(es)
        pending += minlen(e)
        stack.extend((x, d + 1) for x in reversed(e))
    return out


@pytest.mark.parametrize("name, start", [
    ("json-outlines", "start"), ("calc", "start"), ("c", "start"), ("sql", "start"), ("java", "start"),
    ("java", "block"), ("java", "expression"), ("go", "start"), ("go", "block"), ("go", "expression")])
def test_bench_normal_form_glr_agrees_with_earley(name, start):
    import random
    g = Grammar.from_lark(bench_text(name), start=start)
    nf = normalize(g)
    t = build_lalr(nf.grammar)
    assert all(n > 0 for n in t.rule_len)
    e = Earley(g)
    rng = random.Random(11)
    terms = sorted({s for r in g.rules for s in r.expansion if g.is_terminal(s)})
    n_acc = n = 0
    while n < 40:
        w = _random_sentence(g, rng, depth=6, max_len=30)
        if not w or len(w) > 30:
            continue
        n += 1
        for v in (w, w[:-1], w[:len(w) // 2] + [rng.choice(terms)] + w[len(w) // 2:]):
            if not v:
                continue
            a = glr_accepts(t, v)
            assert a == e.accepts(v), v
            n_acc += a
    assert n_acc >= 40


# ---------------------------------------------------------------------------
# check_deterministic

@pytest.mark.parametrize("name", ["json-outlines", "calc", "c"])
def test_check_deterministic_passes(name):
    g = Grammar.from_lark(bench_text(name))
    check_deterministic(g)
    assert not build_lalr(g).conflicts


@pytest.mark.parametrize("name, terminal", [("sql", "INTERSECT"), ("java", "RSQB"), ("go", "LESSTHAN")])
def test_check_deterministic_raises_on_bench(name, terminal):
    g = Grammar.from_lark(bench_text(name))
    with pytest.raises(GrammarError) as ei:
        check_deterministic(g)
    msg = str(ei.value)
    assert "ambiguous=True" in msg
    assert f"on {terminal} " in msg
    assert "shift/reduce" in msg


def test_check_deterministic_dangling_else_lark():
    g = Grammar.from_lark("""
        start: stmt
        stmt: "if" "(" COND ")" stmt
            | "if" "(" COND ")" stmt "else" stmt
            | "s" ";"
        COND: "c"
        %ignore " "
    """)
    with pytest.raises(GrammarError) as ei:
        check_deterministic(g)
    msg = str(ei.value)
    assert "ELSE" in msg and "'else'" in msg
    assert "stmt -> IF LPAR COND RPAR stmt" in msg


def test_reduce_reduce_resolved_by_priority():
    ok = Grammar.from_lark("""
        start: a | b
        a.2: "x"
        b: "x"
    """)
    check_deterministic(ok)
    assert build_lalr(ok).conflicts                      # the conflict is there, resolved
    tie = Grammar.from_lark("""
        start: a | b | c
        a.2: "x"
        b.2: "x"
        c: "x"
    """)
    with pytest.raises(GrammarError) as ei:
        check_deterministic(tie)
    assert "reduce/reduce" in str(ei.value)
    assert "a -> X" in str(ei.value) and "b -> X" in str(ei.value)
    assert len(lalr_conflicts(tie)) == 1


def test_shift_reduce_not_resolved_by_priority():
    g = Grammar.from_lark("""
        start: s
        s: ifs | ife | "x"
        ifs.5: "i" s
        ife: "i" s "e" s
    """)
    with pytest.raises(GrammarError) as ei:
        check_deterministic(g)
    assert "shift/reduce" in str(ei.value) and "ifs -> I s" in str(ei.value)


# ---------------------------------------------------------------------------
# random grammars (hypothesis): LALR == merged canonical LR(1); drivers == Earley

NTS = ["S", "A", "B", "C"]
TERMS = ["a", "b"]


@st.composite
def random_grammar(draw):
    spec = {}
    for nt in NTS:
        alts = draw(st.lists(st.lists(st.sampled_from(NTS + TERMS), max_size=3), min_size=1, max_size=3))
        spec[nt] = [" ".join(a) for a in alts]
    return spec


def _productive_start(g: Grammar) -> bool:
    prod: set[str] = set()
    changed = True
    while changed:
        changed = False
        for r in g.rules:
            if r.origin not in prod and all(g.is_terminal(s) or s in prod for s in r.expansion):
                prod.add(r.origin)
                changed = True
    return g.start in prod


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_grammar())
def test_random_lalr_equals_merged_canonical_lr1(spec):
    g = plain_grammar(spec, start="S")
    t = build_lalr(g)
    assert_matches_canonical(g, t)
    if not t.conflicts and _productive_start(g):
        e = Earley(g)
        for n in range(0, 6):
            for w in itertools.product(TERMS, repeat=n):
                assert lr_accepts(t, w) == e.accepts(w), w


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_grammar())
def test_random_normal_form_glr_equals_earley(spec):
    g = plain_grammar(spec, start="S")
    try:
        nf = normalize(g)
    except GrammarError:
        return
    t = build_lalr(nf.grammar)
    e = Earley(g)
    for n in range(1, 7):
        for w in itertools.product(TERMS, repeat=n):
            assert glr_accepts(t, w) == e.accepts(w), w


# the same properties over more random grammars (the default run samples fewer)
@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_grammar())
def test_random_lalr_equals_merged_canonical_lr1_many(spec):
    test_random_lalr_equals_merged_canonical_lr1.hypothesis.inner_test(spec)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_grammar())
def test_random_normal_form_glr_equals_earley_many(spec):
    test_random_normal_form_glr_equals_earley.hypothesis.inner_test(spec)


def test_tables_of_one_grammar_are_built_once(monkeypatch):
    """``Constraint(g, vocab)`` (ambiguous=None) asks for the user grammar's conflicts and
    then checks it deterministic: one LALR build for both, one for the normal form."""
    import stackmask.glr.lalr as lalr
    from stackmask import Constraint, Vocab
    built = []
    real = lalr._build_lalr
    monkeypatch.setattr(lalr, "_build_lalr", lambda g: built.append(g.start) or real(g))
    lalr._RECENT.clear()
    text = 'start: item ("," item)*\nitem: "a" | "b" item\n'
    g = Grammar.from_lark(text)
    t1 = build_lalr(g)
    assert build_lalr(Grammar.of(g)) is t1 and len(built) == 1
    # another grammar is built anew; the tables of a grammar with other rules differ
    g2 = Grammar.from_lark(text.replace('"b"', '"c"'))
    assert build_lalr(g2) is not t1 and len(built) == 2
    built.clear()
    lalr._RECENT.clear()
    vocab = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])
    c = Constraint(g, vocab, cache_dir=False, progress=False)
    assert c.ambiguous is False
    assert len(built) == 2          # the grammar (conflicts, then the check) and its normal form
