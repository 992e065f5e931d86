"""The compiled expansion of Parser DWA states (``_native.ExpandCore``) equals the
pure-Python one (``ParserDWA._index`` / ``_edge``).

Each grammar is compiled twice in one process, once with the compiled core and once
with ``ParserDWA._expander`` returning None (the Python expansion; every other compiled
loop still runs, so only the expansion differs). The two automata must be the same up to
the numbering of states and token sets: a walk from the configurations' starts (and the
head pairs') in the same order numbers the states it meets, and each state's edges,
default edge and completeness are compared with token sets by content. A state by state
check then expands states of the Python-built automaton with the core and compares each
edge, default and successor item set with what the Python code computed for it.

Without the extension these tests skip, unless ``STACKMASK_REQUIRE_NATIVE=1``.
"""

from __future__ import annotations


import pytest

from stackmask import Constraint, Grammar, native
from stackmask.compile.parser_dwa import ParserDWA
from stackmask.wfa.weights import EMPTY_ID

from conftest import read_bench_grammar


pytestmark = pytest.mark.usefixtures("needs_native")


SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 40},
    "kind": {"enum": ["a", "bc", "def"]},
    "n": {"type": "integer", "minimum": 0},
    "x": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
    "sub": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
        "ok": {"type": "boolean"}}}]}},
    "required": ["name", "kind"]}


def _grammar(name: str):
    from stackmask import grammars
    if name == "schema":
        return Grammar.from_json_schema(SCHEMA), {}
    if name == "tools":
        from stackmask.grammars.tags import needs_glr, tool_calling
        g = tool_calling([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"},
                                            "unit": {"enum": ["c", "f"]}},
            "required": ["city"]}}}])
        return g, {"ambiguous": needs_glr(g)}
    if name == "json":
        return grammars.load("json"), {}
    return read_bench_grammar(name), {"ambiguous": name in ("c",)}


def canonical(c: Constraint) -> list:
    """The automaton of ``c`` numbered by a walk from its starts, token sets by content."""
    d = c._masker.dwa
    sc = c.scanner
    sets: dict = {}

    def W(w):
        r = sets.get(w)
        if r is None:
            r = sets[w] = tuple(d.weights.get(w))
        return r

    num: dict = {}
    order: list = []

    def visit(q):
        if q is None or q < 0:
            return q
        if q not in num:
            num[q] = len(num)
            order.append(q)
        return num[q]

    def entry(e):
        return None if e is None else (visit(e[0]), W(e[1]))

    out = [("start", repr(sc.config(cfg)), entry(e))
           for cfg, e in sorted(d.init.items(), key=lambda kv: repr(sc.config(kv[0])))]
    out += [("pair", k, entry(e)) for k, e in sorted(d.pair_init.items())]
    k = 0
    while k < len(order):
        q = order[k]
        k += 1
        row = sorted((s, entry(e)) for s, e in (d.trans[q] or {}).items())
        out.append((num[q], row, entry(d.default[q]), d.complete[q]))
    return out


@pytest.mark.parametrize("name", ["json", "schema", "tools", "calc"])
def test_compiled_expansion_builds_the_same_automaton(name, qwen_vocab, monkeypatch):
    g, kw = _grammar(name)
    fast = Constraint(g, qwen_vocab, cache_dir=False, progress=False, **kw)
    with monkeypatch.context() as m:
        m.setattr(ParserDWA, "_expander", lambda self: None)
        pure = Constraint(g, qwen_vocab, cache_dir=False, progress=False, **kw)
    a, b = canonical(fast), canonical(pure)
    assert len(a) > 20
    assert a == b
    sf, sp = fast.compile_stats(), pure.compile_stats()
    for key in ("configs", "states", "edges", "defaults", "max_depth", "states_merged"):
        assert sf[key] == sp[key], key


def _small_vocab():
    from stackmask import Vocab
    toks = [bytes([b]) for b in range(256)]
    toks += [b"int", b"return", b" (", b");", b"0;", b"x =", b"/*", b"*/", b"//", b"\"a",
             b"if (", b"else", b"{\n", b"}\n", b" + ", b"++", b"->", b"0x1F", b"'c'"]
    return Vocab(toks, eos_token_ids=[0])


@pytest.mark.parametrize("name", ["c", "json"])
def test_each_state_expands_alike(name, monkeypatch):
    """State by state, on the Python-built automaton before minimization: the core's
    edges, defaults and successors (interned through the same index) equal the Python
    expansion's, including successors the Python side has not made yet."""
    from stackmask.compile import build_tables, make_scanner
    from stackmask.compile.build import build_parser_dwa
    from stackmask.compile.token_index import vocab_index
    from stackmask.wfa.weights import WeightTable
    g, kw = _grammar(name)
    tables = build_tables(g, ambiguous=kw.get("ambiguous", False))
    vocab = _small_vocab()
    sc = make_scanner(tables)
    with monkeypatch.context() as m:
        m.setattr(ParserDWA, "_expander", lambda self: None)
        dwa = build_parser_dwa(sc, tables.lr, tables.normal_form.accepts_empty,
                               vocab_index(vocab), vocab, WeightTable(vocab.size))
    # the index keyed as the core keys it, to intern the core's successors alike
    runs = native.module().TemplateRuns(tables.lr, tables.normal_form.accepts_empty)
    core = native.module().ExpandCore(runs, dwa.templates.relevant, dwa.weights, EMPTY_ID,
                                      dwa.weights.universe_id)
    items = {q: its for q, its in enumerate(dwa.items) if its is not None}
    assert len(items) > 50
    by_key = {core.key_of(its): q for q, its in items.items()}
    checked = 0
    for q, its in items.items():
        if not dwa.complete[q]:
            continue
        dkey, edges = core.expand(core.key_of(its))
        want_default = dwa.default[q]
        if dkey is None:
            assert want_default is None
        else:
            assert want_default is not None and want_default[1] == EMPTY_ID
            assert by_key[dkey] == want_default[0]
        got = {}
        for s, key, acc in edges:
            dst = by_key[key] if key else -1
            if dst >= 0 or acc != EMPTY_ID:
                got[s] = (dst, acc)
        want = dwa.trans[q]
        assert set(got) == set(want), q
        for s, (dst, acc) in got.items():
            assert dst == want[s][0]
            assert dwa.weights.get(acc) == dwa.weights.get(want[s][1])
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("name", ["schema", "c", "tools"])
def test_template_runs_equal_the_reference(name, qwen_vocab):
    """``_native.TemplateRuns.step`` gives ``Templates.step``'s result, waiting items in
    the same order, for every item of every state of an automaton built on the Python
    path (Qwen2.5's tokens for the schemas: long tokens make long terminal sequences;
    a small vocabulary for C) and every stack state the item reads (every state for a
    skipping item)."""
    from stackmask.compile import build_tables, make_scanner
    from stackmask.compile.build import build_parser_dwa
    from stackmask.compile.templates import SUCCESS, Templates
    from stackmask.compile.token_index import vocab_index
    from stackmask.wfa.weights import WeightTable
    g, kw = _grammar(name)
    tables = build_tables(g, ambiguous=kw.get("ambiguous", False))
    vocab = _small_vocab() if name == "c" else qwen_vocab
    sc = make_scanner(tables)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ParserDWA, "_expander", lambda self: None)
        dwa = build_parser_dwa(sc, tables.lr, tables.normal_form.accepts_empty,
                               vocab_index(vocab), vocab, WeightTable(vocab.size))
    items = sorted({it for its in dwa.items if its for it, _ in its}, key=repr)
    assert len(items) > 100
    accepts_empty = tables.normal_form.accepts_empty
    ref = Templates(tables.lr, accepts_empty)
    runs = native.module().TemplateRuns(tables.lr, accepts_empty)
    n_states = tables.lr.n_states
    steps = succeeded = 0
    for it in items:
        rel = ref.relevant(it)
        for s in (range(n_states) if -1 in rel else sorted(rel)):
            want = ref.step(it, s)
            got = runs.step_items(it, s)
            if want is SUCCESS:
                assert got is True, (it, s)
                succeeded += 1
            else:
                assert got is not True and got == list(want), (it, s)
            steps += 1
    assert steps > 1000 and succeeded > 10


def test_tokens_of_thousands_of_terminals(monkeypatch):
    """A token that lexes into thousands of terminals of an ambiguous grammar (runs as
    deep as the token is long, terminal sequences longer than the interning pools'
    first blocks): both expansions build the same automaton, without recursing per
    terminal."""
    from stackmask import Vocab
    g = 'start: s\ns: s s | "a" | "ab"\n'
    toks = [b"a", b"b", b"ab", b"ab" * 2000, b"a" * 3000, b"ba" * 700, b"<eos>"]
    vocab = Vocab(toks, eos_token_ids=[len(toks) - 1])
    fast = Constraint(g, vocab, ambiguous=True, cache_dir=False, progress=False)
    with monkeypatch.context() as m:
        m.setattr(ParserDWA, "_expander", lambda self: None)
        pure = Constraint(g, vocab, ambiguous=True, cache_dir=False, progress=False)
    assert canonical(fast) == canonical(pure)
    a, b = fast.start(), pure.start()
    for t in (2, 0, 2, 0):           # short tokens: long ones make the GSS work grow
        assert fast.get_mask(a).tolist() == pure.get_mask(b).tolist()
        a, b = fast.commit(a, t), pure.commit(b, t)
