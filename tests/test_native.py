"""The compiled inner loops (``stackmask._native``) equal the pure-Python reference.

Two constraints of each grammar, one built with the extension and one with
``STACKMASK_PURE_PYTHON=1``, replay the same tokens: every mask is compared bit for
bit and every state head for head (lexer configuration and the whole GSS below the
head, as a canonical tree). Traces: the bundled benchmark traces of every grammar
(``benchmarks/traces``), random walks sampling from the masks, GLR grammars with
several heads; ``fill_masks`` on both paths with repeated rows, ``None`` rows,
negative rows, wide rows and two threads.

Without the extension these tests skip, unless ``STACKMASK_REQUIRE_NATIVE=1`` (set by
``.ci/run``, which builds it): then a missing build fails.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stackmask import Constraint, Grammar, TokenRejected, native
from stackmask.runtime import mask_to_ids

from conftest import AMBIGUOUS_BENCH, BENCH_GRAMMARS, read_bench_grammar

TRACES = Path(__file__).resolve().parents[1] / "benchmarks" / "traces"


pytestmark = pytest.mark.usefixtures("needs_native")


def pair(grammar, vocab, monkeypatch, **kw) -> tuple[Constraint, Constraint]:
    """(compiled, pure) constraints of one grammar."""
    fast = Constraint(grammar, vocab, **kw)
    with monkeypatch.context() as m:
        m.setenv(native.ENV, "1")
        pure = Constraint(grammar, vocab, **kw)
    assert fast.native and not pure.native
    return fast, pure


def stack_id(node, memo: dict, intern: dict) -> int:
    """A number for the GSS below ``node``, equal for equal structures: each node is
    interned as ``(LR state, numbers of its links)`` in ``intern`` (shared by the two
    sides compared); ``memo`` maps ``id(node)`` to its number. Iterative: stacks can be
    deeper than the recursion limit, and a GLR stack is a DAG (no tree expansion)."""
    todo = [node]
    while todo:
        n = todo[-1]
        if id(n) in memo:
            todo.pop()
            continue
        missing = [m for m in n.links if id(m) not in memo]
        if missing:
            todo.extend(missing)
            continue
        todo.pop()
        memo[id(n)] = intern.setdefault((n.state, tuple(memo[id(m)] for m in n.links)),
                                        len(intern))
    return memo[id(node)]


def state_shape(state, intern: dict) -> tuple:
    memo: dict = {}
    return (state.finished, tuple((cfg, stack_id(n, memo, intern)) for n, cfg in state.heads))


_MISSING = object()


def assert_same_slots(a, b, skip: tuple, where: str, memos: tuple = ()) -> None:
    """Objects ``a`` (made by the compiled path, which sets slots without ``__init__``)
    and ``b`` (made by ``__init__``) hold equal values in every slot but ``skip``; slots in
    ``memos`` are caches that either path may have filled by now: set on both."""
    for name in type(b).__slots__:
        if name in skip or name == "__weakref__":
            continue
        va, vb = getattr(a, name, _MISSING), getattr(b, name, _MISSING)
        if name in memos:
            assert (va is _MISSING) == (vb is _MISSING), f"{where}: slot {name}: {va!r} vs {vb!r}"
        else:
            assert va == vb, f"{where}: slot {name}: {va!r} vs {vb!r}"


def _old_nodes(state) -> set:
    """Ids of the nodes of ``state``'s GSS (its heads' stacks)."""
    seen: set = set()
    todo = [n for n, _ in state.heads]
    while todo:
        n = todo.pop()
        if id(n) not in seen:
            seen.add(id(n))
            todo.extend(n.links)
    return seen


def assert_same_new_state(nf, np_, old_f: set, old_p: set, where: str) -> None:
    """The states ``commit`` made on both paths, and the head nodes it made (not those
    of the previous state's GSS, whose memos hold earlier masks), slot by slot, before
    any mask was asked of them."""
    assert_same_slots(nf, np_, ("heads",), where)
    for (a, _), (b, _) in zip(nf.heads, np_.heads):
        assert (id(a) in old_f) == (id(b) in old_p), where
        if id(a) in old_f:
            continue
        # shift_memo: can_shift's memo, filled by viability checks (the compiled commit
        # answers more of them without it)
        assert_same_slots(a, b, ("state", "links", "below"), where, memos=("shift_memo",))
        assert (a.below is None) == (b.below is None) and len(a.links) == len(b.links), where


def replay(fast, pure, ids, label, into_buffer=True):
    """Commit ``ids`` on both, comparing masks (into one reused buffer, and fresh) and
    states after every token; rejections must agree too."""
    words = fast.mask_words
    buf_f = np.zeros(words, dtype=np.int32)
    buf_p = np.zeros(words, dtype=np.int32)
    sf, sp = fast.start(), pure.start()
    for k, t in enumerate(ids + [None]):
        mf = fast.get_mask(sf, out=buf_f) if into_buffer else fast.get_mask(sf)
        mp = pure.get_mask(sp, out=buf_p) if into_buffer else pure.get_mask(sp)
        if not np.array_equal(mf, mp):
            diff = np.flatnonzero(np.unpackbits((mf ^ mp).view(np.uint8), bitorder="little"))
            pytest.fail(f"{label} step {k}: masks differ on {len(diff)} ids, e.g. {diff[:8]}")
        # asked again: the state's memoized weights
        assert np.array_equal(fast.get_mask(sf), mp), f"{label} step {k}: second mask differs"
        if t is None:
            return sf, sp
        rf = rp = None
        try:
            nf = fast.commit(sf, t)
        except TokenRejected as e:
            rf = str(e)
        try:
            np_ = pure.commit(sp, t)
        except TokenRejected as e:
            rp = str(e)
        assert rf == rp, f"{label} step {k}: token {t} rejected {rf} vs {rp}"
        if rf is not None:
            return sf, sp
        intern: dict = {}
        assert state_shape(nf, intern) == state_shape(np_, intern), \
            f"{label} step {k}: states differ after {t}"
        assert_same_new_state(nf, np_, _old_nodes(sf), _old_nodes(sp), f"{label} step {k}")
        sf, sp = nf, np_
    return sf, sp


def _traces(name: str, limit: int | None) -> list[list[int]]:
    path = TRACES / f"{name}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["tokens"] for r in rows[:limit]]


# json-outlines and calc compile in a second: every trace; the others compile on first
# use (lazily) in both constraints, so a few traces by default and all in the slow run
_TRACES_DEFAULT = {"json-outlines": None, "calc": None, "c": 2, "sql": 1, "java": 1, "go": 1}


def _bench_pair(name, vocab, monkeypatch):
    """The fast and pure constraints of benchmark grammar ``name``; "json" is the bundled
    grammar (random walks), not json-outlines (the benchmark folder's json.lark)."""
    if name == "json":
        from stackmask.grammars import load
        text = load("json")
    else:
        text = read_bench_grammar(name)
    lazy = name in ("c", "sql", "java", "go")
    return pair(text, vocab, monkeypatch, ambiguous=name in AMBIGUOUS_BENCH,
                compile="lazy" if lazy else "eager")


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_benchmark_traces_same_masks_and_states(name, qwen_vocab, monkeypatch):
    fast, pure = _bench_pair(name, qwen_vocab, monkeypatch)
    for i, ids in enumerate(_traces(name, _TRACES_DEFAULT[name])):
        replay(fast, pure, list(ids), f"{name} trace {i}", into_buffer=i % 2 == 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_benchmark_traces_same_masks_and_states_all(name, qwen_vocab, monkeypatch):
    fast, pure = _bench_pair(name, qwen_vocab, monkeypatch)
    for i, ids in enumerate(_traces(name, None)):
        replay(fast, pure, list(ids), f"{name} trace {i}", into_buffer=i % 2 == 0)


def random_walk_ids(c: Constraint, rng: random.Random, n: int) -> list[int]:
    """Tokens sampled from ``c``'s masks (text tokens; EOS where allowed at the end)."""
    s = c.start()
    eos = c.vocab.eos_token_ids
    out = []
    for _ in range(n):
        ids = [i for i in mask_to_ids(c.get_mask(s), c.vocab.size).tolist() if i not in eos]
        if not ids:
            break
        t = rng.choice(ids)
        out.append(t)
        s = c.commit(s, t)
    if c.is_accepting(s):
        out.append(min(eos))
    return out


@pytest.mark.parametrize("name", ["json", "calc"])
def test_random_walks_same_masks_and_states(name, qwen_vocab, monkeypatch):
    fast, pure = _bench_pair(name, qwen_vocab, monkeypatch)
    for w in range(6):
        ids = random_walk_ids(pure, random.Random(f"native-{name}-{w}"), 60)
        replay(fast, pure, ids, f"{name} walk {w}", into_buffer=w % 2 == 0)


AMBIGUOUS = {
    # every split is a parse: several heads and branching GSS nodes
    "ss": 'start: s\ns: s s | "a" | "b"\n',
    # lexical ties: a word is a keyword or a name, numbers grow
    "ties": 'start: item+\nitem: KW | NAME | NUM\nKW: "if"\nNAME: /[a-z]+/\nNUM: /[0-9]+/\n'
            '%ignore " "\n',
}


@pytest.mark.parametrize("name", sorted(AMBIGUOUS))
def test_glr_grammars_same_masks_and_states(name, qwen_vocab, monkeypatch):
    fast, pure = pair(AMBIGUOUS[name], qwen_vocab, monkeypatch, ambiguous=True)
    for w in range(4):
        ids = random_walk_ids(pure, random.Random(f"native-{name}-{w}"), 25)
        replay(fast, pure, ids, f"{name} walk {w}", into_buffer=w % 2 == 1)


def test_fill_masks_same_rows(qwen_vocab, monkeypatch):
    from stackmask.grammars import load
    fast, pure = pair(load("json"), qwen_vocab, monkeypatch)
    rng = random.Random("fill")
    ids = random_walk_ids(pure, rng, 40)
    states_f, states_p = [fast.start()], [pure.start()]
    for t in ids[:-1]:
        states_f.append(fast.commit(states_f[-1], t))
        states_p.append(pure.commit(states_p[-1], t))
    words = fast.mask_words
    n = len(states_f)
    # repeated states, None rows, rows given out of order with negatives and a row named twice
    pick = [rng.randrange(n) for _ in range(50)] + [None, 3, 3]
    rows = list(range(len(pick)))
    rng.shuffle(rows)
    rows[-1] = rows[0]                       # named twice: the later state wins
    rows[1] = rows[1] - len(pick) - 2        # negative: from the end (out has 2 spare rows)
    for width, threads in ((words, None), (words + 7, 1), (words + 1, 2)):
        out_f = np.full((len(pick) + 2, width), 12345, dtype=np.int32)
        out_p = out_f.copy()
        sf = [None if i is None else states_f[i] for i in pick]
        sp = [None if i is None else states_p[i] for i in pick]
        fast.fill_masks(sf, out_f, rows, threads=threads)
        pure.fill_masks(sp, out_p, rows)
        assert np.array_equal(out_f, out_p), (width, threads)
        # each row holds the mask of the last state naming it; other rows are untouched
        expect = {}
        for k, i in enumerate(pick):
            expect[rows[k] % len(out_f)] = i
        for r in range(len(out_f)):
            if r not in expect:
                assert (out_f[r] == 12345).all()
            elif expect[r] is None:
                assert (out_f[r] == -1).all()
            else:
                assert np.array_equal(out_f[r, :words], pure.get_mask(states_p[expect[r]]))
                assert (out_f[r, words:] == 0).all()
    # a batch above THREADS_MIN_ROWS (two threads by default), and errors as on the pure path
    big = [states_f[i % n] for i in range(1100)]
    out = np.zeros((1100, words), dtype=np.int32)
    fast.fill_masks(big, out)
    ref = np.zeros_like(out)
    pure.fill_masks([states_p[i % n] for i in range(1100)], ref)
    assert np.array_equal(out, ref)
    with pytest.raises(IndexError):
        fast.fill_masks([states_f[0]], out, rows=[1100])
    with pytest.raises(TypeError):
        fast.fill_masks(["x"], out)
    with pytest.raises(ValueError):
        fast.fill_masks([states_f[0]], out, threads=0)


def test_pure_python_switch(monkeypatch):
    monkeypatch.setenv(native.ENV, "1")
    assert native.module() is None
    assert native.ENV in native.describe()
    monkeypatch.setenv(native.ENV, "0")
    assert native.module() is not None
    assert native.describe().startswith("compiled")


def test_commit_checks_and_rejections_as_pure(qwen_vocab, monkeypatch):
    """Every kind of argument ``commit`` checks, on both paths: the same result or the
    same exception with the same message."""
    from stackmask.grammars import load
    fast, pure = pair(load("json"), qwen_vocab, monkeypatch)
    enc = {b: i for i, b in enumerate(qwen_vocab.tokens) if b is not None}
    eos = min(qwen_vocab.eos_token_ids)

    def outcome(c, state, tok):
        try:
            return ("ok", state_shape(c.commit(state, tok), {}))
        except Exception as e:        # noqa: BLE001 - the type and message are compared
            return (type(e).__name__, str(e))

    def states(c):
        s0 = c.start()
        s1 = c.commit(s0, enc[b'{"'])
        s2 = c.commit(c.commit(c.commit(s1, enc[b"a"]), enc[b'":']), enc[b"1"])
        done = c.commit(c.commit(s2, enc[b"}"]), eos)
        return [s0, s1, s2, done]

    special = sorted(qwen_vocab.special_token_ids - qwen_vocab.eos_token_ids)[:1]
    args = [enc[b"{"], enc[b"["], enc[b"}"], enc[b'"'], enc[b"2"], enc[b"x"], eos, -1,
            qwen_vocab.size, 2**70, 3.0, True, np.int64(enc[b"{"]), np.int32(enc[b"1"]), "7",
            None, *special]
    for k, (sf, sp) in enumerate(zip(states(fast), states(pure))):
        for tok in args:
            assert outcome(fast, sf, tok) == outcome(pure, sp, tok), (k, tok)
    assert outcome(fast, "not a state", enc[b"{"]) == outcome(pure, "not a state", enc[b"{"])


def test_schema_with_bases_and_aliases_same_masks_and_states(qwen_vocab, monkeypatch):
    """A JSON Schema constraint: counted strings (configurations aliased and started on a
    class root), bounded whitespace (weak bases), several heads at numbers."""
    from stackmask import Grammar
    schema = {"type": "object", "properties": {
        "title": {"type": "string", "maxLength": 24},
        "n": {"type": "number"}, "tags": {"type": "array", "items": {"enum": ["a", "bc"]}}},
        "required": ["title", "n"]}
    fast, pure = pair(Grammar.from_json_schema(schema), qwen_vocab, monkeypatch)
    st = fast.compile_stats()
    assert st.get("configs_on_base", 0) + st.get("configs_aliased", 0) > 0, st
    for w in range(6):
        ids = random_walk_ids(pure, random.Random(f"native-schema-{w}"), 50)
        replay(fast, pure, ids, f"schema walk {w}", into_buffer=w % 2 == 0)


# -- construction: the joint trie walk ----------------------------------------------------

def _diff_walk_pairs(tables, index, limit: int):
    """``(scanner, [(cfg, other, is its base), ...])``: configurations reachable from the
    boundary (breadth first, up to ``limit``), each paired with its base where it has one
    and with the next pending configuration of the same shadows (any two walk alike)."""
    from stackmask.compile import make_scanner
    from stackmask.compile.terminal import TerminalCompiler
    sc = make_scanner(tables)
    tc = TerminalCompiler(sc, index)
    todo, seen = [0], [0]
    while todo and len(seen) < limit:
        _, ends = tc.outcomes(todo.pop(0))
        for c in sorted(ends):
            if c not in seen:
                seen.append(c)
                todo.append(c)
    pending = [c for c in seen[:limit] if sc.config(c)[0] >= 0]
    pairs = []
    for i, cfg in enumerate(pending):
        base = tc.base_config(cfg)
        if base is not None:
            pairs.append((cfg, base, True))
        d, shadows = sc.config(cfg)
        other = next((c for c in pending[i + 1:] if sc.config(c)[1] == shadows), None)
        if other is not None:
            pairs.append((sc.intern(d, frozenset()), sc.intern(sc.config(other)[0], frozenset()),
                          False))
    return sc, pairs


def _walk_tables(name: str):
    """Grammar tables for the trie-walk tests: a schema with free keys, a pattern and an
    enum ("schema"), or the C grammar."""
    from stackmask.compile.tables import build_tables
    from stackmask.grammars.json_schema import convert_schema
    if name == "schema":
        conv = convert_schema({"type": "object", "properties": {
            "name": {"type": "string"}, "nickname": {"type": "string", "pattern": "^[a-z]+$"},
            "age": {"type": "integer"}, "tags": {"type": "array", "items": {"enum": ["a", "bc"]}}},
            "required": ["name"]})
        return build_tables(conv.grammar, ambiguous=conv.ambiguous)
    return build_tables(read_bench_grammar("c"), ambiguous=True)


@pytest.mark.parametrize("name", ["schema", "c"])
def test_compiled_diff_walk_equals_the_pure_one(name, qwen_vocab):
    """``trie_walks.diff_walk`` with the compiled twin gives the pure walk's diff, groups and
    ends (or None at the same ``max_tokens``) for configurations and their bases, and for
    unrelated pairs, over the real Qwen2.5 vocabulary's byte-order trie."""
    from stackmask.compile.trie_walks import diff_walk
    from stackmask.compile.token_index import vocab_index
    from stackmask.lexer.scanner import IGNORE
    tables = _walk_tables(name)
    index = vocab_index(qwen_vocab)
    sc, pairs = _diff_walk_pairs(tables, index, 30)
    # one set of tables across the walks, as a construction uses it
    twin = native.module().BranchWalks(sc.step, (IGNORE,), sc.exact, sc.byte_rep)
    assert len(pairs) >= 10

    def key(branches):                  # an outcome key that merges some differing branches
        return frozenset(ems for ems, _ in branches), [c for _, c in branches]

    checked = cut = 0
    for cfg, other, is_base in pairs:
        # unrelated configurations may differ on most of the trie: the pure walk is bounded
        runs = ((None, None), (None, key), (40, None), (0, key)) if is_base else \
            ((2000, None), (2000, key), (40, None))
        for max_tokens, outcome_key in runs:
            want = diff_walk(sc.step, index, cfg, other, {}, max_tokens, outcome_key)
            got = diff_walk(sc.step, index, cfg, other, {}, max_tokens, outcome_key, twin)
            if want is None:
                assert got is None, (cfg, other, max_tokens)
                cut += 1
                continue
            assert got is not None, (cfg, other, max_tokens)
            assert np.array_equal(want[0], got[0]), (cfg, other)
            assert list(want[1]) == list(got[1]), (cfg, other)
            assert all(np.array_equal(want[1][k], got[1][k]) for k in want[1])
            assert want[2] == got[2]
            checked += 1
    assert checked >= 10 and cut >= 1


@pytest.mark.parametrize("name", ["schema", "c"])
def test_compiled_trie_walk_gives_the_pure_outcomes(name, qwen_vocab):
    """A configuration's whole outcomes (``TerminalCompiler.outcomes``: the DFA run, then
    the scanner over the token trie for the tokens that complete a lexeme) are the same
    with the compiled ``walk_positions`` as with the pure walk, over the real vocabulary."""
    from stackmask.compile import make_scanner
    from stackmask.compile.terminal import TerminalCompiler
    from stackmask.compile.token_index import vocab_index
    index = vocab_index(qwen_vocab)
    sc = make_scanner(_walk_tables(name))
    fast, pure = TerminalCompiler(sc, index), TerminalCompiler(sc, index)
    assert fast.walks_twin() is not None
    pure._native_walks = False
    todo, seen, walked = [0], {0}, 0
    while todo and walked < 25:
        cfg = todo.pop(0)
        gf, ef = fast.outcomes(cfg)
        gp, ep = pure.outcomes(cfg)
        assert ef == ep and list(gf) == list(gp), sc.config(cfg)
        for k in gp:
            assert np.array_equal(gf[k], gp[k]), (sc.config(cfg), k)
        walked += 1
        for c in sorted(ep):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert walked == 25


def _hopcroft_both(trans, block, monkeypatch):
    from stackmask.wfa import reduction
    fast = reduction._hopcroft(trans, block)
    monkeypatch.setenv(native.ENV, "1")
    pure = reduction._hopcroft(trans, block)
    monkeypatch.delenv(native.ENV)
    return fast, pure


def test_compiled_hopcroft_equals_the_pure_one(monkeypatch):
    """The compiled refinement gives the pure one's partition, numbered alike, on random
    partial DFAs (dead transitions, several initial blocks, states with no preimage) and
    on a long chain (the shape Moore's rounds leave to Hopcroft)."""
    rng = np.random.default_rng(7)
    for _ in range(400):
        n, C = int(rng.integers(1, 80)), int(rng.integers(1, 6))
        trans = rng.integers(-1, n, size=(n, C))
        trans[rng.random((n, C)) < 0.3] = -1
        block = rng.integers(0, int(rng.integers(1, 5)), size=n)
        fast, pure = _hopcroft_both(trans, block, monkeypatch)
        assert np.array_equal(fast, pure)
        # the result is a partition compatible with the transitions and the blocks
        ext = np.append(fast, -1)
        for a in range(n):
            for b in range(a + 1, n):
                if fast[a] == fast[b]:
                    assert block[a] == block[b] and (ext[trans[a]] == ext[trans[b]]).all()
    n = 5000
    trans = np.full((n, 2), -1)
    trans[np.arange(n - 1), 0] = np.arange(1, n)
    trans[np.arange(0, n - 1, 7), 1] = 0
    block = np.zeros(n, dtype=np.int64)
    block[-1] = 1
    fast, pure = _hopcroft_both(trans, block, monkeypatch)
    assert np.array_equal(fast, pure) and fast.max() + 1 == n


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=300), st.integers(0, 30))
def test_stable_order_is_the_stable_argsort(values, extra):
    """``_native.stable_order`` (a counting sort: the token groups per end state) gives
    ``np.argsort(kind="stable")``; a value out of range raises."""
    from stackmask import _native
    a = np.array(values, dtype=np.int32)
    n_values = (int(a.max()) + 1 if len(a) else 0) + extra
    assert np.array_equal(_native.stable_order(a, n_values), np.argsort(a, kind="stable"))
    if len(a):
        with pytest.raises(ValueError):
            _native.stable_order(a, int(a.max()))
        with pytest.raises(ValueError):
            _native.stable_order(np.array([-1], dtype=np.int32), 5)


def test_token_runs_equal_the_numpy_runs(qwen_vocab, monkeypatch):
    """``_native.run_tokens`` (the lexer DFA run over tokens at construction) gives the
    states the numpy runs give, from every lexer state: whole-vocabulary runs, narrow runs
    (few live first bytes) and the long tokens' runs."""
    from stackmask.compile.terminal import TerminalCompiler
    from stackmask.compile.token_index import vocab_index
    s = {"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^[a-z]{2,9}-[0-9]+$"}, "b": {"type": "integer"},
        "c": {"type": "string", "format": "date-time"}, "d": {"enum": ["x y", "zz"]}}}
    c = Constraint(Grammar.from_json_schema(s), qwen_vocab, cache_dir=False)
    index = vocab_index(qwen_vocab)
    fast = TerminalCompiler(c.scanner, index)
    pure = TerminalCompiler(c.scanner, index)
    assert fast._run_twin is not None
    pure._run_twin = None
    n = c.scanner.dfa.n_states
    narrow = 0
    for q in range(n):
        assert np.array_equal(fast._full_run(q), pure._full_run(q)), q
        first = pure._first_bytes(q)
        if len(first) < pure.NARROW_BYTES:
            narrow += 1
            a, b = fast._narrow_sparse(q, first), pure._narrow_sparse(q, first)
            assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), q
    assert narrow > 10
    for horizon in (4, 12):
        for q in range(min(n, 40)):
            cfg = c.scanner.intern(q, frozenset())
            try:
                a, b = fast.long_outcomes(cfg, horizon), pure.long_outcomes(cfg, horizon)
            except ValueError:
                continue
            assert np.array_equal(a[0], b[0]) and a[2] == b[2]
            assert a[1].keys() == b[1].keys()
            assert all(np.array_equal(a[1][k], b[1][k]) for k in a[1])
