"""Hard resource limits (stackmask.Limits) and validate(): a highly ambiguous grammar, a
compile that runs out of time, memory or automaton size, and bad grammars or schemas
raise a clear stackmask error (which limit, the value, how to raise it) instead of
hanging, thrashing or taking the process down; nothing half-built is left behind."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import stackmask
from stackmask import Constraint, GrammarError, LimitExceeded, Limits, StackmaskError, Vocab
from stackmask.grammars import load as load_grammar

JSON = load_grammar("json")
BYTES = Vocab([bytes([i]) for i in range(256)] + [b"</s>"], eos_token_ids=[256],
              special_token_ids=[256])
# s: s s | "a" | <empty>: every split of a^n is a parse; the GSS gains a link per
# position to every earlier one and each reduction pass walks all of them
AMBIGUOUS = 'start: s\ns: s s | "a" |\n'


def cache_files(d: Path) -> list:
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def check_message(e: LimitExceeded, limit: str) -> None:
    assert e.limit == limit
    msg = str(e)
    assert limit in msg and f"Limits({limit}=" in msg and "None" in msg
    assert e.maximum is not None and e.value is not None


def test_highly_ambiguous_grammar_hits_the_gss_limit_fast():
    c = Constraint(AMBIGUOUS, BYTES, ambiguous=True, cache_dir=False,
                   limits=Limits(max_gss_work=20_000))
    a = ord("a")
    s = c.start()
    t0 = time.monotonic()
    with pytest.raises(LimitExceeded) as ei:
        for n in range(1, 2000):       # unprotected, 300 tokens take ~50 s and grow cubically
            s = c.commit(s, a)
    assert time.monotonic() - t0 < 20
    check_message(ei.value, "max_gss_work")
    assert ei.value.value > 20_000 == ei.value.maximum
    assert 10 < n < 400
    # the state before the failing commit is intact
    assert c.is_accepting(s)
    m = c.get_mask(s)
    assert m[a // 32] >> (a % 32) & 1


def test_gss_limit_does_not_affect_ordinary_grammars():
    c = Constraint(JSON, BYTES, cache_dir=False, limits=Limits(max_gss_work=200))
    s = c.commit_bytes(c.start(), b'{"a": [1, 2, {"b": [[[[null]]]]}], "c": "x"}' * 1)
    assert c.is_accepting(s)


def test_compile_time_limit_raises_and_caches_nothing(tmp_path):
    with pytest.raises(LimitExceeded) as ei:
        Constraint(JSON, BYTES, cache_dir=tmp_path, progress=False,
                   limits=Limits(max_compile_seconds=0))
    check_message(ei.value, "max_compile_seconds")
    assert "compile_budget_s" in str(ei.value)
    assert cache_files(tmp_path) == []
    # the soft budget is unchanged: budget 0 compiles the rest on first use
    c = Constraint(JSON, BYTES, cache_dir=tmp_path, progress=False, compile_budget_s=0)
    assert c.compile_stats()["budget_exhausted"]


def test_compile_memory_limit_raises_and_caches_nothing(tmp_path, monkeypatch):
    # the real measurement: a compile against a 150k-token vocabulary grows the RSS by more
    # than a few bytes
    from stackmask import limits as limits_mod
    grown = iter(range(0, 1 << 40, 10 << 20))       # 10 MB more at every sample
    monkeypatch.setattr(limits_mod, "rss_bytes", lambda: next(grown))
    monkeypatch.setattr(limits_mod.CompileGuard, "INTERVAL", 0.0)
    with pytest.raises(LimitExceeded) as ei:
        Constraint(JSON, BYTES, cache_dir=tmp_path, progress=False,
                   limits=Limits(max_compile_memory_bytes=25 << 20))
    check_message(ei.value, "max_compile_memory_bytes")
    assert ei.value.value > 25 << 20
    assert cache_files(tmp_path) == []


def test_compile_with_a_budget_stops_softly_at_half_the_memory_limit(monkeypatch):
    """With a soft budget (the default compile_budget_s) the up-front compile stops when its
    memory growth passes half of max_compile_memory_bytes, and the rest is compiled on first
    use with the same masks; without a budget (None: compile everything) the hard limit
    raises."""
    from stackmask import limits as limits_mod
    monkeypatch.setattr(limits_mod.CompileGuard, "INTERVAL", 0.0)
    grown = iter(range(0, 1 << 40, 1 << 20))        # 1 MB more at every sample
    monkeypatch.setattr(limits_mod, "rss_bytes", lambda: next(grown))
    lim = Limits(max_compile_memory_bytes=64 << 20)
    c = Constraint(JSON, BYTES, cache_dir=False, progress=False, limits=lim)
    st = c.compile_stats()
    assert st["budget_exhausted"] and "memory" in st["budget_used_up"]
    grown = iter(range(0, 1 << 40, 1 << 20))
    with pytest.raises(LimitExceeded) as ei:
        Constraint(JSON, BYTES, cache_dir=False, progress=False, limits=lim, compile_budget_s=None)
    check_message(ei.value, "max_compile_memory_bytes")
    monkeypatch.undo()
    full = Constraint(JSON, BYTES, cache_dir=False, progress=False)
    assert not full.compile_stats()["budget_exhausted"]
    s1, s2 = c.start(), full.start()
    for b in b'{"a": [1, -2.5e3, "x\\n", true, null], "bc": {}}':
        assert np.array_equal(c.get_mask(s1), full.get_mask(s2))
        s1, s2 = c.commit(s1, b), full.commit(s2, b)
    assert c.is_accepting(s1)


def test_compile_memory_limit_real_measurement():
    """The guard's real measurement (no monkeypatching): resident memory grown by a
    touched 200 MB anonymous mapping trips a 50 MB limit. (Neither a whole compile nor a
    numpy array is used here: in a long test session either may reuse memory the
    process already holds and not grow the RSS at all; a fresh mapping's pages are new
    once written.)"""
    import mmap
    from stackmask.limits import CompileGuard, rss_bytes
    guard = CompileGuard(Limits(max_compile_memory_bytes=50 << 20), interval=0.0)
    guard.check()
    before = rss_bytes()
    big = mmap.mmap(-1, 200 << 20)
    page = mmap.PAGESIZE
    for i in range(0, 200 << 20, page):
        big[i] = 1
    assert rss_bytes() - before > 100 << 20
    with pytest.raises(LimitExceeded) as ei:
        guard.check()
    check_message(ei.value, "max_compile_memory_bytes")
    big.close()


def test_automaton_size_limit_eager(tmp_path):
    """Without a budget (compile everything) the state limit raises and nothing is
    cached."""
    with pytest.raises(LimitExceeded) as ei:
        Constraint(JSON, BYTES, cache_dir=tmp_path, progress=False, compile_budget_s=None,
                   limits=Limits(max_automaton_states=5))
    check_message(ei.value, "max_automaton_states")
    assert cache_files(tmp_path) == []
    full = Constraint(JSON, BYTES, cache_dir=tmp_path, progress=False)
    assert full.compile_stats()["states"] > 5


def test_compile_with_a_budget_stops_softly_at_half_the_state_limit():
    """With a soft budget the up-front compile stops once the automaton has half of
    max_automaton_states (the other half is left to first uses); masks stay exact up to
    the limit, and a first use past it raises (the constraint stays usable)."""
    ref = Constraint(JSON, BYTES, cache_dir=False, progress=False)
    n = ref.compile_stats()["states"]
    lim = Limits(max_automaton_states=max(8, 2 * n // 3))
    c = Constraint(JSON, BYTES, cache_dir=False, progress=False, explore_sentences=0,
                   limits=lim)
    st = c.compile_stats()
    assert st["budget_exhausted"] and "automaton states" in st["budget_used_up"]
    assert lim.max_automaton_states // 2 < len(c.compiled.dwa.items) <= lim.max_automaton_states
    s1, s2 = c.start(), ref.start()
    for b in b'{"a": [1, -2.5e3, "x\\n", true, null], "bc": {}}':
        try:
            m = c.get_mask(s1)
        except LimitExceeded as e:
            check_message(e, "max_automaton_states")
        else:
            assert np.array_equal(m, ref.get_mask(s2))
        s1, s2 = c.commit(s1, b), ref.commit(s2, b)


def test_automaton_size_limit_lazy_keeps_the_constraint_usable():
    c = Constraint(JSON, BYTES, cache_dir=False, compile="lazy",
                   limits=Limits(max_automaton_states=3))
    ref = Constraint(JSON, BYTES, cache_dir=False)
    texts = [b"", b"[", b'{"a', b'{"a": [1, ', b"[tr", b'{"a": 1.5e', b"[[[[", b'["x", {"b": null']
    failures = 0
    for t in texts:
        s = c.commit_bytes(c.start(), t)
        try:
            m = c.get_mask(s)
        except LimitExceeded as e:
            check_message(e, "max_automaton_states")
            failures += 1
            continue
        assert np.array_equal(m, ref.get_mask(ref.commit_bytes(ref.start(), t)))
    assert failures
    assert len(c.compiled.dwa.items) <= 3
    # commit never needs the automaton: still works after the failures
    assert c.is_accepting(c.commit_bytes(c.start(), b'{"a": [1, 2]}'))


def test_limits_are_validated():
    with pytest.raises(ValueError, match="max_gss_work"):
        Limits(max_gss_work=-1)
    with pytest.raises(ValueError, match="max_compile_seconds"):
        Limits(max_compile_seconds="10")
    with pytest.raises(TypeError, match="Limits"):
        Constraint(JSON, BYTES, cache_dir=False, limits={"max_gss_work": 1})
    assert Limits() == Limits(max_compile_seconds=None, max_compile_memory_bytes=8 << 30,
                              max_automaton_states=1_000_000, max_gss_work=2_000_000,
                              max_token_sequences=4096)


def test_docs_list_every_limit_and_error():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "semantics.md").read_text()
    section = doc.split("## Limits and errors", 1)[1].split("\n## ", 1)[0]
    import dataclasses
    for f in dataclasses.fields(Limits):
        assert f.name in section, f.name
    for name in ("GrammarError", "TokenRejected", "LimitExceeded", "StackmaskError",
                 "StaleArtifactWarning", "ValueError", "TypeError", "mask_cache_bytes",
                 "memo_cache_bytes", "compile_budget_s", "MAX_DFA_STATES", "MAX_NFA_STATES",
                 "validate"):
        assert name in section, name


# -- validate ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, kind, name", [
    ('start: A\nA: /a(?=b)/\n', "unsupported_regex", "A"),
    ('start: A\nA: /(?<=a)b/\n', "unsupported_regex", "A"),
    ('start: A\nA: /(a)\\1/\n', "unsupported_regex", "A"),
    ('start: A\nA: /^a/\n', "unsupported_regex", "A"),
    ('start: A\nA: /a\\b/\n', "unsupported_regex", "A"),
    ('start: A "x"\nA: /a*/\n', "empty_match", "A"),
    ('start: A\nA: /(?:a|ab){200000}/\n', "too_large", "A"),
    ('start: a\na: b | "x"\nb: a\n', "cycle", None),
    ('start: s\ns: s "a"\n', "empty_language", "start"),
    ('start: e\ne: e "+" e | "x"\n', "conflict", "e"),
    ('start: (\n', "syntax", None),
    ('start: ' + '(' * 3000 + '"a"' + ')' * 3000 + '\n', "syntax", None),
])
def test_validate_reports_without_compiling(text, kind, name, monkeypatch):
    from stackmask.lexer import combined
    import stackmask.compile as compile_pkg
    boom = lambda *a, **k: pytest.fail("validate built the lexer product or a mask automaton")  # noqa: E731
    monkeypatch.setattr(combined, "product", boom)
    monkeypatch.setattr(compile_pkg, "build_parser_dwa", boom)
    r = stackmask.validate(text)
    assert not r.ok and not r
    kinds = [p.kind for p in r]
    assert kind in kinds, r
    if name is not None:
        assert any(p.name == name for p in r if p.kind == kind), r
    with pytest.raises(GrammarError):
        r.raise_for_problems()
    monkeypatch.undo()
    with pytest.raises(StackmaskError):       # a conflict is an error where LALR(1) is promised
        Constraint(text, BYTES, cache_dir=False, ambiguous=False)


def test_validate_accepts_good_grammars_and_ambiguity_when_asked(bench_grammar):
    assert stackmask.validate(JSON).ok
    assert stackmask.validate(bench_grammar("c")).ok
    r = stackmask.validate(bench_grammar("sql"))
    assert [p.kind for p in r] == ["conflict"]
    assert stackmask.validate(bench_grammar("sql"), ambiguous=True).ok
    assert stackmask.validate(stackmask.Grammar.from_lark(JSON)).ok
    with pytest.raises(TypeError):
        stackmask.validate(42)


def test_deeply_nested_inputs_raise_grammar_errors():
    deep_rule = 'start: ' + '(' * 3000 + '"a"' + ')' * 3000 + '\n'
    with pytest.raises(GrammarError, match="nested too deeply"):
        Constraint(deep_rule, BYTES, cache_dir=False)
    # schemas are converted under a raised recursion limit (limits.RECURSION_DEPTH: generated
    # regexes nest deeply), so a schema has to nest deeper than that to be refused
    schema: dict = {"type": "string"}
    for _ in range(20_000):
        schema = {"type": "array", "items": schema}
    with pytest.raises(GrammarError, match="nested too deeply"):
        stackmask.Grammar.from_json_schema(schema)
    with pytest.raises(GrammarError):
        stackmask.Grammar.from_json_schema("[" * 100_000 + "]" * 100_000)
    text = '{"type": "array", "items": ' * 20_000 + '{"type": "string"}' + "}" * 20_000
    with pytest.raises(GrammarError, match="nested too deeply"):
        stackmask.Grammar.from_json_schema(text)


# -- found by the fuzzers (tests/test_fuzz.py) --------------------------------------------

def _vocab(*pieces):
    toks = list(pieces) + [b"<eos>"]
    return Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1])


def test_token_emitting_thousands_of_terminals_compiles():
    """Regression: the symbolic LR run recursed once per terminal a token emits, so a
    6,000-byte token of one-byte terminals raised RecursionError out of Constraint."""
    v = _vocab(b"a", b"b", b"ab" * 3000, b"ba" * 1500 + b"a")
    c = Constraint('start: x+\nx: "a" | "b"\n', v, cache_dir=False, progress=False)
    s = c.start()
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    assert np.array_equal(c.get_mask(s)[:1], np.array([0b1111], dtype=np.int32))
    s = c.commit(s, 2)
    assert c.is_accepting(s)


def test_token_with_many_ambiguous_lexemes_hits_a_limit_instead_of_exponential_time():
    """Each lexically ambiguous lexeme (NAME and HEX tie on "ab") inside one token doubles
    the terminal sequences the compile follows when any order of NAME and HEX can parse:
    2^16 took 15 s, 2^3000 never ends."""
    free = 'start: (NAME | HEX)+\nNAME: /[a-z]+/\nHEX: /[0-9a-f]+/\n%ignore " "\n'
    v = _vocab(b"ab", b"=", b";", b"#", b" ", b"ab " * 3000)
    t0 = time.monotonic()
    with pytest.raises(LimitExceeded) as ei:
        Constraint(free, v, ambiguous=True, cache_dir=False, progress=False)
    assert time.monotonic() - t0 < 30
    check_message(ei.value, "max_token_sequences")
    # where the grammar never lets NAME or HEX follow NAME or HEX, the sequences die after
    # two lexemes (pairs no stack can shift are dropped as they appear): no limit, exact
    g = ('start: stmt+\nstmt: NAME "=" HEX ";" | "#" HEX ";"\nNAME: /[a-z]+/\n'
         'HEX: /[0-9a-f]+/\n%ignore " "\n')
    c = Constraint(g, v, ambiguous=True, cache_dir=False, progress=False)
    s = c.commit_bytes(c.start(), b"ab = ")
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    assert not c.get_mask(s)[0] & (1 << 5) and not c.get_mask(c.start())[0] & (1 << 5)
    # a few ambiguous lexemes per token are fine, and exact
    c = Constraint(g, _vocab(b"ab", b"=", b";", b"#", b" ", b"ab ab ab", b"ab=ab;"),
                   ambiguous=True, cache_dir=False, progress=False)
    for text in (b"", b"ab", b"ab = ab ; #", b"ab ab"):
        try:
            s = c.commit_bytes(c.start(), text)
        except stackmask.TokenRejected:
            continue
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def test_max_lexer_states_bounds_the_combined_lexer(tmp_path):
    text = 'start: A | B\nA: /[a-z]{1,60}x/\nB: /[0-9]{1,60}y/\n'
    Constraint(text, BYTES, cache_dir=tmp_path)           # fits the default
    with pytest.raises(GrammarError, match=r"more than 40 states \(Limits.max_lexer_states\)") as ei:
        Constraint(text, BYTES, cache_dir=False, limits=Limits(max_lexer_states=40))
    # also a LimitExceeded naming the limit
    assert isinstance(ei.value, LimitExceeded) and isinstance(ei.value, stackmask.LexerTooLarge)
    assert (ei.value.limit, ei.value.maximum) == ("max_lexer_states", 40)
    d = Constraint(text, BYTES, cache_dir=False, limits=Limits(max_lexer_states=None))
    s = d.commit_bytes(d.start(), b"abcx")
    assert d.is_accepting(s)
    with pytest.raises(ValueError, match="max_lexer_states"):
        Limits(max_lexer_states=-1)


def test_lexer_too_large_pickles_whole():
    import pickle
    e = stackmask.LexerTooLarge("the combined lexer automaton needs more than 7 states", 7, name="S")
    f = pickle.loads(pickle.dumps(e))
    assert type(f) is type(e) and str(f) == str(e)
    assert (f.limit, f.maximum, f.name, f.value) == ("max_lexer_states", 7, "S", None)
