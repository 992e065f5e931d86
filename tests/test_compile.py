"""Compilation internals against direct definitions.

* Terminal outcomes (per lexer configuration, factored by pending DFA state with
  shadows run separately over the vocabulary) equal running the scanner on every
  token from that configuration.
* The Parser DWA's symbolic LR runs agree with the GLR engine: a token is in the
  compiled mask iff committing it leaves a viable head (checked against the oracle
  in the exactness tests; here on small grammars, eager and lazy compilation alike).
* Reports: sizes, acyclicity and the read depth.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from stackmask import Constraint, Grammar, Vocab
from stackmask.compile import make_scanner
from stackmask.compile.build import add_config
from stackmask.compile.parser_dwa import ParserDWA
from stackmask.compile.templates import NO_LHS
from stackmask.compile.templates import expand_emissions as _expand
from stackmask.compile.tables import build_tables
from stackmask.compile.terminal import GONE, TerminalCompiler
from stackmask.lexer.scanner import TRUE, requirement
from stackmask.wfa.reduction import group_rows
from stackmask.compile.token_index import VocabIndex
from stackmask.lexer.scanner import BOUNDARY_CONFIG, IGNORE
from stackmask.runtime import mask_to_ids
from stackmask.wfa.weights import WeightTable

from conftest import plain_copy, read_bench_grammar


def scanner_outcomes(scanner, cfg, tok: bytes) -> set:
    """The definition: run the scanner byte by byte, keep every branch."""
    branches = {((), cfg)}
    for b in tok:
        nb = set()
        for ems, c in branches:
            for em, nc in scanner.step(c, b):
                nb.add((ems if em is None or em == (IGNORE,) else ems + (em,), nc))
        branches = nb
    out = set()
    for ems, c in branches:
        r = requirement(scanner, c)
        if r is not None:
            out.add((ems, r))
    return out


def check_outcomes(tc, sc, index, cfg) -> set:
    """tc.outcomes(cfg) groups every token exactly by its scanner outcomes; returns the
    end configurations."""
    groups, ends = tc.outcomes(cfg)
    got: dict = {}
    for key, pos in groups.items():
        for p in np.asarray(pos).tolist():
            got.setdefault(p, set()).add(key)
    for p, tok in enumerate(index.toks):
        assert got.get(p, set()) == scanner_outcomes(sc, cfg, tok), (sc.config(cfg), tok)
    return ends


def sample_vocab(qwen_vocab, n: int, seed: int) -> Vocab:
    rng = random.Random(seed)
    ids = rng.sample([int(i) for i in qwen_vocab.text_token_ids()], n)
    toks = [qwen_vocab.tokens[i] for i in ids]
    toks += [b" ", b"  ", b"\n", b"*/", b"/*", b"//", b"...", b"..", b"'", b"\\", b'"', b"0x",
             b"1e", b"1.", b"a", b"ab", b"if", b"iff", b"(", b")", b"{", b"}"]
    return Vocab(toks)


@pytest.mark.parametrize("name", ["json-outlines", "c", "java", "go"])
def test_terminal_outcomes_equal_scanner_runs(name, qwen_vocab):
    vocab = sample_vocab(qwen_vocab, 2500, seed=len(name))
    tables = build_tables(read_bench_grammar(name), ambiguous=True)
    sc = make_scanner(tables)
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    todo, seen = [0], {0}
    checked = 0
    while todo and checked < 25 * len(index.toks):
        cfg = todo.pop(0)
        ends = check_outcomes(tc, sc, index, cfg)
        checked += len(index.toks)
        for c in sorted(ends):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert len(seen) > 5 and checked >= 10 * len(index.toks)


def _dfa_run_reference(sc, tok: bytes, s: int) -> int:
    """The lexer DFA from state ``s`` over ``tok``, byte by byte: the last state, GONE
    where a byte leads nowhere, KILLED where a byte enters an accepting state."""
    from stackmask.compile.terminal import KILLED
    trans, accepting = sc.dfa.trans, sc.accepting
    for b in tok:
        s = int(trans[s][b])
        if s < 0:
            return GONE
        if accepting[s]:
            return KILLED
    return s


@pytest.mark.parametrize("name", ["json-outlines", "c", "schema"])
def test_whole_vocabulary_dfa_runs_equal_byte_by_byte_runs(name, qwen_vocab):
    """``TerminalCompiler._dfa_run`` equals the DFA run of each token byte by byte, from
    every state of the lexer DFA, by both of its paths: the whole-vocabulary run (one
    gather per byte column, then only the tokens still running once a column stopped
    more than a quarter) and the run of only the tokens whose first byte the state
    accepts (states with few such bytes). States where most tokens stop at once, where
    they stop over several bytes, and where nearly all run on (inside strings)."""
    vocab = sample_vocab(qwen_vocab, 2000, seed=11)
    vocab = Vocab(list(vocab.tokens) + [b'"' * 3, b"a" * 40, b"0" * 17, b"/*" + b"x" * 30,
                                        b"\\u00e9", b"\xff\xfe"])
    tables = _schema_tables() if name == "schema" else build_tables(read_bench_grammar(name),
                                                                     ambiguous=True)
    sc = make_scanner(tables)
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    pruned = narrow = 0
    n = len(sc.dfa.trans)
    for s in range(n):
        want = [_dfa_run_reference(sc, tok, s) for tok in index.toks]
        assert tc._dfa_run(s).tolist() == want, s
        assert tc._full_run(s).tolist() == want, s
        first = np.flatnonzero(np.asarray(sc.dfa.trans[s]) >= 0)
        pos, fin = tc._narrow_sparse(s, first)
        got = dict(zip(pos.tolist(), fin.tolist()))
        assert [got.get(i, GONE) for i in range(len(want))] == want, s
        # what the construction reads: the cached run (sparse for a narrow state), whole,
        # without its GONE tokens, and at some positions
        pos, fin = tc._sparse_run(s)
        assert dict(zip(pos.tolist(), fin.tolist())) == \
            {i: x for i, x in enumerate(want) if x != GONE}, s
        probe = np.arange(s % 5, len(want), 5)
        assert tc._run_at(s, probe).tolist() == [want[i] for i in probe], s
        assert tc._dfa_run(s).tolist() == want, s
        pruned += sum(1 for x in want if x < 0) * 4 > len(want)
        narrow += len(first) < tc.NARROW_BYTES
    assert pruned and pruned < n         # both regimes of the whole-vocabulary run
    assert narrow and narrow < n         # and both paths of _dfa_run were exercised


# strings with counted lengths, a pattern, an enum and literal keys: many pending DFA
# states inside strings, where most tokens keep the lexeme pending (the DFA-run path)
SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12},
    "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"},
    "kind": {"enum": ["alpha", "beta", "a\"b"]},
    "tags": {"type": "array", "items": {"type": "string", "minLength": 2}},
    "n": {"type": "number"}}, "required": ["name"]}


def _schema_tables():
    from stackmask.grammars.json_schema import convert_schema
    conv = convert_schema(SCHEMA)
    return build_tables(conv.grammar, ambiguous=conv.ambiguous)


def test_terminal_outcomes_equal_scanner_runs_json_schema(qwen_vocab):
    vocab = sample_vocab(qwen_vocab, 3000, seed=7)
    vocab = Vocab(list(vocab.tokens) + [b'"a', b'"ab', b'"alpha"', b'\\"', b'AB-1', b'-12",',
                                        b'"name": "', b'": ["', b'"]}', b'1.5e'])
    sc = make_scanner(_schema_tables())
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    todo, seen = [0], {0}
    while todo and len(seen) < 400:
        ends = check_outcomes(tc, sc, index, todo.pop(0))
        for c in sorted(ends):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert len(seen) > 30


def test_terminal_outcomes_on_the_whole_qwen_vocabulary(qwen_vocab):
    """Every Qwen2.5 token from configurations inside a string (nearly every token keeps
    the lexeme pending: whole-vocabulary DFA run) and at a boundary (most tokens are
    lexed by the trie walk)."""
    sc = make_scanner(_schema_tables())
    index = VocabIndex(qwen_vocab)
    tc = TerminalCompiler(sc, index)
    cfgs = {BOUNDARY_CONFIG}
    for text in (b'{"name": "ab', b'{"name": "x", "tags": ["'):
        cur = {BOUNDARY_CONFIG}
        for b in text:
            cur = {nc for c in cur for _, nc in sc.step(c, b)}
            assert cur, text
        cfgs |= cur
    assert any(not sc.at_boundary(c) for c in cfgs)
    for cfg in sorted(cfgs):
        check_outcomes(tc, sc, index, cfg)


def test_shadowed_configurations_are_covered():
    # keywords vs identifiers and "." vs "..." make configurations with shadows
    g = r"""
    start: (KW | NAME | DOT | ELL)+
    KW: "if" | "iffy"
    NAME: /[a-z]+/
    DOT: "."
    ELL: "..."
    %ignore " "
    """
    toks = [b"i", b"if", b"iff", b"f", b"fy", b"y", b"a", b".", b"..", b"...", b" ", b"i.", b"f."]
    vocab = Vocab(toks)
    tables = build_tables(g, ambiguous=True)
    sc = make_scanner(tables)
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    todo, seen = [0], {0}
    while todo:
        cfg = todo.pop()
        ends = check_outcomes(tc, sc, index, cfg)
        for c in ends:
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert any(sc.config(c)[1] for c in seen), "no configuration with shadows was reached"


def test_bitmap_of_positions_small_and_large_sets():
    """bitmap_of builds sets over half the vocabulary as a complement; both ways give the
    ids of the positions, duplicates included, and nothing else (not the ids without
    bytes)."""
    toks = [b"a", b"b", b"a", None, b"c", b"dd", b"b", b"e", b"", b"f"]
    vocab = Vocab(toks, vocab_size=12)
    index = VocabIndex(vocab)
    rng = random.Random(5)
    n = len(index.toks)
    for k in list(range(n + 1)) * 3:
        pos = np.array(sorted(rng.sample(range(n), k)), dtype=np.int64)
        want = {i for i, t in enumerate(toks) if t and index.toks.index(t) in set(pos.tolist())}
        assert set(index.bitmap_of(pos)) == want, (k, pos)


def test_bitmap_of_compiled_and_python_paths_agree(monkeypatch):
    """Sets of at least ``NATIVE_FROM`` positions are built by the compiled extension;
    on a vocabulary with duplicate tokens and ids without bytes, every size gives the
    same ids on both paths (``STACKMASK_PURE_PYTHON`` forces the Python one)."""
    rng = random.Random(11)
    words = [bytes(rng.choice(b"abcdef") for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    toks = [None if i % 97 == 0 else w for i, w in enumerate(words)]
    index = VocabIndex(Vocab(toks, vocab_size=len(toks) + 5))
    assert index.dups
    n = len(index.toks)
    for k in (0, 1, VocabIndex.NATIVE_FROM - 1, VocabIndex.NATIVE_FROM, 500, n // 2, n - 3, n):
        pos = np.array(rng.sample(range(n), k), dtype=np.int64)
        want = {i for p in pos.tolist() for i in [index.first_id[p], *index.dups.get(p, ())]}
        monkeypatch.delenv("STACKMASK_PURE_PYTHON", raising=False)
        fast = index.bitmap_of(pos)
        monkeypatch.setenv("STACKMASK_PURE_PYTHON", "1")
        slow = index.bitmap_of(pos)
        assert set(fast) == set(slow) == want, k


def test_group_rows_groups_exactly_the_equal_rows():
    rng = np.random.default_rng(3)
    cases = [np.zeros((0, 2), dtype=np.int64), np.array([[5, -2, 7]])]
    for _ in range(60):
        n, k = int(rng.integers(1, 80)), int(rng.integers(1, 6))
        cases.append(rng.integers(-2, int(rng.integers(1, 6)), size=(n, k)))
    cases.append(rng.integers(0, 1 << 20, size=(500, 8)))      # codes overflow: renumbered
    for m in cases:
        order, bounds = group_rows(m)
        groups = [order[bounds[u]:bounds[u + 1]].tolist() for u in range(len(bounds) - 1)]
        want: dict = {}
        for i, row in enumerate(map(tuple, m.tolist())):
            want.setdefault(row, []).append(i)
        assert sorted(groups) == sorted(want.values())


def test_expand_alternatives():
    assert _expand(()) == [()]
    assert sorted(_expand(((1,), (2, 3)))) == [(1, 2), (1, 3)]
    assert sorted(_expand(((IGNORE, 4), (5,)))) == [(4, 5), (5,)]
    assert TRUE == "T"


SMALL = [
    (r"""
    start: expr
    expr: expr "+" expr | expr "*" expr | "(" expr ")" | NUM
    NUM: /[0-9]+/
    %ignore " "
    """, True),
    (r"""
    start: item*
    item: "a" item "b" | "c"
    """, False),
    (r"""
    start: s
    s: s s | "x" | "y" s
    """, True),
]


@pytest.mark.parametrize("grammar,amb", SMALL)
def test_eager_and_lazy_give_the_oracles_masks(grammar, amb):
    toks = [b"(", b")", b"+", b"*", b"1", b"12", b"2+", b"(1", b"1)", b" ", b"+ ", b"a", b"b", b"c",
            b"ab", b"ca", b"x", b"y", b"xy", b"yx", b"xx", b"*(", b")*"]
    vocab = Vocab(toks + [b"<eos>"], eos_token_ids=[len(toks)], special_token_ids=[len(toks)])
    eager = Constraint(grammar, vocab, ambiguous=amb, cache_dir=False)
    lazy = Constraint(grammar, vocab, ambiguous=amb, cache_dir=False, compile="lazy")
    assert eager.compile_stats()["acyclic"]
    rng = random.Random(7)
    for _ in range(30):
        s_e, s_l = eager.start(), lazy.start()
        for _ in range(25):
            m = eager.get_mask(s_e)
            assert np.array_equal(m, eager.reference_mask(s_e))
            assert np.array_equal(lazy.get_mask(s_l), m)
            ids = [i for i in mask_to_ids(m, vocab.size) if i != len(toks)]
            if not ids:
                break
            t = rng.choice(ids)
            s_e, s_l = eager.commit(s_e, t), lazy.commit(s_l, t)


def test_stats_report_size_and_depth(qwen_vocab):
    from stackmask.grammars import load
    c = Constraint(load("json"), qwen_vocab)
    st = c.compile_stats()
    for k in ("configs", "states", "edges", "weights", "acyclic", "max_depth", "compile_s"):
        assert k in st or (k == "compile_s" and c.loaded_from_cache), k
    assert st["acyclic"] is True and st["max_depth"] >= 1
    assert st["configs"] >= 10 and st["states"] >= st["configs"] // 2


def test_get_mask_out_must_be_an_int32_row_of_the_mask_width():
    vocab = Vocab([b"a", b"b", b"ab"] + [bytes([x]) for x in b"0123456789cdefghijklmnopqrstuvwxyz"])
    c = Constraint('start: "a" "b"', vocab, cache_dir=False)
    words = (vocab.size + 31) // 32
    good = np.full(words, -1, dtype=np.int32)
    assert c.get_mask(c.start(), out=good) is good
    assert np.array_equal(good, c.reference_mask(c.start()))
    read_only = np.zeros(words, dtype=np.int32)
    read_only.flags.writeable = False
    for bad in (np.zeros(words, dtype=np.int64), np.zeros(words + 1, dtype=np.int32),
                np.zeros((1, words), dtype=np.int32), np.zeros(words, dtype=np.uint32),
                np.zeros(words, dtype=">i4"), read_only, [0] * words, bytearray(4 * words),
                memoryview(np.zeros(words, dtype=np.int64)), memoryview(read_only),
                memoryview(np.zeros(words + 1, dtype=np.int32)), memoryview(bytearray(4 * words))):
        with pytest.raises(ValueError, match="int32"):
            c.get_mask(c.start(), out=bad)
    s1 = c.commit(c.start(), 0)
    for bad in (np.zeros(words, dtype=np.int64), np.zeros((1, words), dtype=np.int32), read_only,
                [0] * words, memoryview(np.zeros(words, dtype=np.int64)), memoryview(read_only)):
        with pytest.raises(ValueError, match="int32"):
            c.get_mask(s1, out=bad)
    # a writeable memoryview of int32 words of the mask width is filled like an array
    for s in (c.start(), s1):
        arr = np.full(words, 7, dtype=np.int32)
        mv = memoryview(arr)
        assert c.get_mask(s, out=mv) is mv
        assert np.array_equal(arr, c.reference_mask(s))
    # a strided row of the mask width is filled element by element
    for s in (c.start(), s1):
        wide = np.full(2 * words, 7, dtype=np.int32)
        assert c.get_mask(s, out=wide[::2]).base is wide
        assert np.array_equal(wide[::2], c.reference_mask(s)) and (wide[1::2] == 7).all()
    # switching buffers back and forth fills each one, and leaves the other untouched
    other = np.full(words, -1, dtype=np.int32)
    c.get_mask(s1, out=other)
    assert np.array_equal(other, c.reference_mask(s1))
    assert np.array_equal(good, c.reference_mask(c.start()))
    c.get_mask(c.start(), out=other)
    c.get_mask(s1, out=good)
    assert np.array_equal(other, c.reference_mask(c.start()))
    assert np.array_equal(good, c.reference_mask(s1))


def test_the_last_buffer_filled_is_let_go_when_a_text_ends():
    """The masker keeps a view of the last buffer it filled (the next masks are one
    copy) only until EOS is committed: the caller's buffer is then not kept alive."""
    import weakref
    vocab = Vocab([b"a", b"b", b"<eos>"], eos_token_ids=[2])
    c = Constraint('start: "a" "b"', vocab, cache_dir=False)
    buf = np.zeros(c.mask_words, dtype=np.int32)
    alive = weakref.ref(buf)
    s = c.commit(c.start(), 0)
    c.get_mask(s, out=buf)
    s = c.commit(s, 1)
    c.get_mask(s, out=buf)
    assert np.array_equal(buf, c.reference_mask(s))
    del buf
    assert alive() is not None                 # kept: the text goes on
    c.commit(s, 2)
    assert alive() is None                     # let go at the end of the text


@pytest.mark.parametrize("name,amb", [("json-outlines", False), ("calc", False), ("sql", True)])
def test_runs_above_a_state_equal_the_runs_on_the_whole_known_stack(name, amb, qwen_vocab):
    """``run_start`` / ``run_above`` (the run on the states above ``s``, its waiting
    items then reading ``s``) give exactly ``run`` on the whole known stack: success, and
    otherwise the same waiting items, for the start items and goto-waiting items of the
    automaton's first states."""
    tables = build_tables(read_bench_grammar(name), ambiguous=amb)
    sc = make_scanner(tables)
    terms = TerminalCompiler(sc, VocabIndex(qwen_vocab))
    dwa = ParserDWA(tables.lr, tables.normal_form.accepts_empty, WeightTable(qwen_vocab.size))
    add_config(dwa, terms, BOUNDARY_CONFIG, -1)
    tpl = dwa.templates
    rng = random.Random(5)
    checked = {"start": 0, "goto": 0}
    q = 0
    while q < min(len(dwa.items), 60):
        for it, _ in dwa.state_items(q):
            skip, lhs, seq, F = it
            if skip or (lhs == NO_LHS and not seq):
                continue
            states = sorted(tpl.relevant(it))
            for s in rng.sample(states, min(6, len(states))):
                if lhs == NO_LHS:
                    fast, slow = tpl.run_start(s, seq, F), tpl.run((s,), seq, F)
                    checked["start"] += 1
                else:
                    g = tables.lr.goto[s][lhs]
                    fast, slow = tpl.run_above(s, (g,), seq, F), tpl.run((s, g), seq, F)
                    checked["goto"] += 1
                assert (fast is True) == (slow is True), (it, s)    # success
                if fast is not True:
                    assert set(fast) == set(slow), (it, s)            # the waiting items
        dwa.expand(q)              # reach goto-waiting items too
        q += 1
    assert checked["start"] > 20 and checked["goto"] > 5, checked


def test_expand_equals_the_product_of_alternatives_without_infeasible_pairs():
    """expand_emissions builds sequences lexeme by lexeme, dropping adjacent pairs outside
    ``follows``: the same set as every combination of alternatives (IGNORE contributing
    nothing) filtered afterwards."""
    from itertools import product
    rng = random.Random(7)
    for _ in range(300):
        n_terms = rng.randint(1, 4)
        follows = tuple(frozenset(t for t in range(n_terms) if rng.random() < 0.6)
                        for _ in range(n_terms))
        ems = tuple(tuple(rng.sample([IGNORE] + list(range(n_terms)), rng.randint(1, min(3, n_terms + 1))))
                    for _ in range(rng.randint(0, 6)))
        want = set()
        for combo in product(*ems):
            seq = tuple(t for t in combo if t != IGNORE)
            if all(b in follows[a] for a, b in zip(seq, seq[1:])):
                want.add(seq)
        got = _expand(ems, None, follows)
        assert len(got) == len(set(got)) and set(got) == want, (ems, follows)
        unpruned = {tuple(t for t in combo if t != IGNORE) for combo in product(*ems)}
        assert set(_expand(ems)) == unpruned


# -- minimization of the Parser DWA ----------------------------------------------------------

def _walk(dwa, q: int, w0: int, word, lazy: bool = True):
    """The tokens a walk from ``(q, w0)`` over ``word`` (stack states, top first) unites,
    as the runtime walks: edge, else default (complete) or the edge computed now."""
    acc = dwa.weights.get(w0) if w0 else None
    out = set() if acc is None else set(acc)
    for s in word:
        if q < 0:
            break
        e = dwa.trans[q].get(s)
        if e is None:
            if dwa.complete[q]:
                e = dwa.default[q]
            elif lazy:
                e = dwa.edge(q, s)
            if e is None:
                break
        q, w = e
        if w:
            out |= set(dwa.weights.get(w))
    return out


def _random_words(dwa, q: int, rng, n: int, n_symbols: int, length: int):
    """Words that follow ``dwa``'s explicit edges most of the time (else any symbol)."""
    for _ in range(n):
        word, p = [], q
        for _ in range(length):
            keys = list(dwa.trans[p].keys()) if p >= 0 else []
            s = rng.choice(keys) if keys and rng.random() < 0.8 else rng.randrange(n_symbols)
            word.append(s)
            if p >= 0:
                e = dwa.trans[p].get(s)
                if e is None and dwa.complete[p]:
                    e = dwa.default[p]
                p = -1 if e is None else e[0]
        yield word


def test_minimize_synthetic_automaton():
    """Equal states merge (an explicit edge equal to the default is no difference), a
    state that can give nothing becomes -1 (an edge stopping with nothing is no edge
    where there is no default), a state not compiled yet is kept with its edges
    remapped; every walk over every word of 4 symbols gives the same tokens."""
    import itertools
    from types import SimpleNamespace
    tables = build_tables('start: "a"')
    dwa = ParserDWA(tables.lr, False, WeightTable(64))
    A, B, C, D = (dwa.weights.intern(sorted(x)) for x in ({1, 2}, {3}, {4, 5}, {6}))
    E = 0
    dwa.trans = [{1: (1, A), 2: (2, A)},
                 {3: (-1, B)},
                 {3: (-1, B), 4: (3, E)},
                 {5: (4, E)},
                 {},
                 {1: (3, C), 2: (0, D)}]
    dwa.default = [None, (3, E), (3, E), None, None, None]
    dwa.complete = [True, True, True, True, True, False]
    dwa.items = [()] * 6
    dwa._groups = [None] * 6
    dwa._ids = {("k", q): q for q in range(6)}
    dwa.init = {0: (0, E), 1: (3, D), 2: (5, E), 3: (1, C)}
    before = SimpleNamespace(trans=[dict(t) for t in dwa.trans], default=list(dwa.default),
                             complete=list(dwa.complete), init=dict(dwa.init), weights=dwa.weights)
    assert dwa.minimize() == 3                  # 2 into 1; 3 and 4 give nothing
    assert len(dwa.trans) == 3
    assert dwa.trans[0] == {1: (1, A), 2: (1, A)}
    assert dwa.trans[1] == {3: (-1, B)} and dwa.default[1] is None
    assert dwa.trans[2] == {1: (-1, C), 2: (0, D)} and not dwa.complete[2]
    assert dwa.init == {0: (0, E), 1: (-1, D), 2: (2, E), 3: (1, C)}
    assert dwa._ids == {("k", 0): 0, ("k", 1): 1, ("k", 2): 1, ("k", 3): -1, ("k", 4): -1,
                        ("k", 5): 2}
    for cfg in before.init:
        for k in range(5):
            for word in itertools.product(range(6), repeat=k):
                assert (_walk(before, *before.init[cfg], word, lazy=False)
                        == _walk(dwa, *dwa.init[cfg], word, lazy=False)), (cfg, word)
    assert dwa.minimize() == 0


@pytest.mark.parametrize("name", ["json-outlines", "calc"])
@pytest.mark.parametrize("partial", [False, True])
def test_minimized_automaton_walks_like_the_compiled_one(name, partial, qwen_vocab):
    """A compiled automaton and its minimization give the same tokens on random stack
    words from every start, and a state's item set maps to its own state in the index
    (what an edge computed on use interns). ``partial``: a third of the states are made
    not compiled yet, with some of their edges kept (as a budget and first uses leave
    them), so walks compute the others from the items in both automata, interning
    states through the remapped index. Complete: there are states to merge and the
    result is minimal (nothing merges again)."""
    from stackmask.compile.build import build_parser_dwa
    from stackmask.compile.parser_dwa import _state_digest, unpack_items
    from stackmask.compile.token_index import vocab_index
    tables = build_tables(read_bench_grammar(name))
    sc = make_scanner(tables)
    dwa = build_parser_dwa(sc, tables.lr, tables.normal_form.accepts_empty,
                           vocab_index(qwen_vocab), qwen_vocab, WeightTable(qwen_vocab.size))
    assert not dwa.budget_exhausted
    rng = random.Random(11)
    if partial:
        for q in rng.sample(range(len(dwa.trans)), len(dwa.trans) // 3):
            keep = [s for s in dwa.trans[q] if rng.random() < 0.5]
            dwa.trans[q] = {s: dwa.trans[q][s] for s in keep}
            dwa.complete[q] = False
            dwa.default[q] = None
    small = plain_copy(dwa, tables)
    from stackmask import native
    from stackmask.compile import dwa_minimize
    if native.module() is not None:        # the compiled minimization is the same
        small.materialize()
        lists = (small.items, small.trans, small.default, small.complete)
        assert (dwa_minimize.minimize(*lists, native.module())
                == dwa_minimize.minimize(*lists, None))
    merged = small.minimize()
    assert len(small.trans) == len(dwa.trans) - merged
    if not partial:        # (what a random third left incomplete still merges varies)
        assert merged > 0 and small.minimize() == 0
    for q, its in enumerate(small.items):
        its = unpack_items(its) if isinstance(its, bytes) else its
        key = _state_digest(its) if small._digest_ids else frozenset(its)
        assert small._ids[key] == q
    starts = list(dwa.init.items()) + list(dwa.pair_init.items())
    n_lr = tables.lr.n_states
    for key, (q, w) in starts:
        q2, w2 = (small.init if key in small.init else small.pair_init)[key]
        assert w2 == w
        for word in _random_words(dwa, q, rng, 40, n_lr, 30):
            assert _walk(dwa, q, w, word) == _walk(small, q2, w2, word), (key, word)


@pytest.mark.parametrize("name", ["json-outlines", "c"])
def test_head_pairs_read_one_byte_per_class_and_find_every_pair(name):
    """``head_pairs`` reads one byte of each class the lexer treats alike; the pairs it
    finds are those of reading all 256 bytes, on configurations reached by random bytes."""
    from stackmask.compile.build import head_pairs

    def reference(sc, configs):
        out = set()
        for cfg in configs:
            for b in range(256):
                outs = sc.step(cfg, b)
                pending = [c for em, c in outs if em is None]
                for em, c in outs:
                    if em is None or (em != (IGNORE,) and len(em) != 1):
                        continue
                    out.update((c, c2, em != (IGNORE,)) for c2 in pending if c2 != c)
        return out

    sc = make_scanner(build_tables(read_bench_grammar(name), ambiguous=True))
    assert len(sc.byte_representatives) < 256
    rng = random.Random(5)
    configs = {BOUNDARY_CONFIG}
    frontier = [BOUNDARY_CONFIG]
    while frontier and len(configs) < 300:
        cfg = frontier.pop(rng.randrange(len(frontier)))
        for b in rng.sample(range(256), 40):
            for _, c in sc.step(cfg, b):
                if c not in configs:
                    configs.add(c)
                    frontier.append(c)
    want = reference(sc, sorted(configs))
    assert want, "no two-head situation among the configurations"
    assert head_pairs(sc, sorted(configs)) == want


def test_single_outcome_configurations_never_fork():
    """``Scanner.single_outcome``, which ``head_pairs`` skips, holds: such configurations
    give at most one outcome for every byte (counted strings, keys that are strings
    followed by a colon, numbers that grow)."""
    from stackmask import Grammar
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 2000}, "b": {"type": "number"},
        "c": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 700}}}
    sc = make_scanner(build_tables(Grammar.from_json_schema(schema), band=64))
    assert sc.counted
    rng = random.Random(3)
    configs = {BOUNDARY_CONFIG}
    frontier = [BOUNDARY_CONFIG]
    while frontier and len(configs) < 3000:
        cfg = frontier.pop(rng.randrange(len(frontier)))
        for b in rng.sample(range(256), 30) + [ord(c) for c in '"ab:1-, '] * 2:
            for _, c in sc.step(cfg, b):
                if c not in configs:
                    configs.add(c)
                    frontier.append(c)
    single = [c for c in configs if sc.single_outcome(c)]
    assert 10 <= len(single) < len(configs)     # (18 since whitespace is a gap)
    for cfg in single:
        assert all(len(sc.step(cfg, b)) <= 1 for b in range(256)), sc.config(cfg)


def test_construction_keeps_only_small_walks_and_narrow_runs_sparse(qwen_vocab):
    """The terminal compiler's caches over the whole vocabulary: a walk of a lexer state is
    kept for the next configuration of that state only when it is small (a string body's
    walk, ~1 MB, is made again if asked; it never was in the constructions measured), a
    whole-vocabulary run made for a walk is not kept beside it, and a run from a state
    with few live first bytes is kept without its GONE tokens (a dense array per such
    state was most of a generated schema's construction memory). Each result read again
    equals the first."""
    from stackmask.compile.terminal import NarrowRun
    from stackmask.compile.token_index import vocab_index
    sc = make_scanner(_schema_tables())
    index = vocab_index(qwen_vocab)
    tc = TerminalCompiler(sc, index)
    n = len(sc.dfa.trans)
    big = small = narrow = 0
    for d in range(n):
        w = tc._walk(d)
        size = sum(a.nbytes + tc.ENTRY_BYTES for a in w.values())
        assert (d in tc._walks) == (size <= tc.KEEP_WALK_BYTES), d
        again = tc._walk(d)
        assert {k: v.tolist() for k, v in again.items()} == {k: v.tolist() for k, v in w.items()}
        if size > tc.KEEP_WALK_BYTES:
            big += 1
            assert not isinstance(tc._runs.get(d), np.ndarray), d
        else:
            small += 1
    for s in range(n):
        dense = tc._dfa_run(s)
        if tc._narrow(s):
            narrow += 1
            run = tc._runs[s]
            assert isinstance(run, NarrowRun)
            assert run.pos.nbytes + run.fin.nbytes == 8 * int(np.count_nonzero(dense >= 0))
            assert tc._dfa_run(s).tolist() == dense.tolist()
    assert big and small and narrow


def test_a_bounded_terminal_cache_builds_the_same_automaton(monkeypatch, qwen_vocab,
                                                            qwen_encoding):
    """The construction's terminal caches are bounded (``build.TERMINAL_CACHE_BYTES``):
    dropped when full, remade on demand. Dropped all the time (a bound of 256 KB), the
    automaton and every mask are the ones of an unbounded build, and the oracle's."""
    import json

    from stackmask.compile import build, terminal
    schema = {"type": "object", "required": ["name", "tags"],
              "properties": {"name": {"type": "string", "maxLength": 40},
                             "tags": {"type": "array", "items": {"type": "string"}},
                             "size": {"type": "integer", "minimum": 0},
                             "kind": {"enum": ["a", "bb", "ccc"]}}}
    drops = []
    real = terminal.TerminalCompiler._account

    def account(self, n):
        if self.cache_bytes is not None and self._cache_used + n > self.cache_bytes:
            drops.append(n)
        return real(self, n)
    monkeypatch.setattr(terminal.TerminalCompiler, "_account", account)
    g = Grammar.from_json_schema(schema)
    monkeypatch.setattr(build, "TERMINAL_CACHE_BYTES", None)
    whole = Constraint(g, qwen_vocab, cache_dir=False, progress=False)
    assert not drops
    monkeypatch.setattr(build, "TERMINAL_CACHE_BYTES", 256 << 10)
    small = Constraint(g, qwen_vocab, cache_dir=False, progress=False)
    assert len(drops) > 10
    for k in ("configs", "states"):
        assert small.compile_stats()[k] == whole.compile_stats()[k], k
    text = json.dumps({"name": "x" * 39, "tags": ["a", "b c"], "size": 12, "kind": "bb"})
    s1, s2 = whole.start(), small.start()
    toks = qwen_encoding.encode(text)
    assert len(toks) > 10
    for tok in toks:
        m = small.get_mask(s2)
        assert np.array_equal(m, whole.get_mask(s1))
        assert np.array_equal(m, small.reference_mask(s2))
        s1, s2 = whole.commit(s1, tok), small.commit(s2, tok)


@pytest.mark.parametrize("k", [0, 1, 30, 31, 32, 33, 500])
def test_narrow_run_killed_tokens_in_both_forms(k):
    """A narrow run keeps the tokens it killed as positions where fewer than one token in
    32 was (no pass over the vocabulary), else as packed bits; both read the same."""
    from stackmask.compile.terminal import NarrowRun
    n = 1000
    rng = np.random.default_rng(k)
    kill = np.sort(rng.choice(n, k, replace=False)).astype(np.int64)
    run = NarrowRun(np.zeros(0, np.int32), np.zeros(0, np.int32), NarrowRun.killed_of(kill, n))
    assert (run.killed.dtype == np.uint8) == (32 * k > n)
    assert run.killed_positions(n).tolist() == kill.tolist()
    assert run.killed_positions(n).dtype == np.int64
    probe = np.arange(n, dtype=np.int64)
    want = np.zeros(n, dtype=bool)
    want[kill] = True
    assert run.killed_at(probe).tolist() == want.tolist()
    assert run.killed_at(probe[::7]).tolist() == want[::7].tolist()
