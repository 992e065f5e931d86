"""Tests of stackmask.generate: random sentences, terminal texts, mutations.

Sentences are checked three ways: the generator's own reference lexer
(``lex``), an independent maximal-munch lexer written here on top of Python's
``re`` (it shares nothing with the byte DFAs), and Lark: every terminal
sequence is parsed by Lark's Earley parser fed the sequence directly (exact
for every grammar), and every text by the Lark parser whose lexer agrees with
maximal munch on that grammar (LALR for the conflict-free JSON and calc
grammars; Earley with the dynamic lexer elsewhere: Lark's LALR resolves the
shift/reduce conflicts of the Java, Go and SQL grammars by shifting, which
rejects valid sentences, and its standard lexer prefers WS over the C
grammar's NEWLINE literal).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

lark = pytest.importorskip("lark")
from lark.lexer import Lexer, Token  # noqa: E402

from stackmask.grammar import Grammar  # noqa: E402
from stackmask.generate import SentenceGenerator, mutate  # noqa: E402

from conftest import GRAMMAR_DIR, bench_grammar_path  # noqa: E402  (honours $STACKMASK_BENCH)
needs_grammars = pytest.mark.skipif(not GRAMMAR_DIR.is_dir(), reason="benchmark grammars not found")

# name -> (text-level Lark parser, max_terminals used for the parse checks)
BENCH = {
    "json-outlines": ("lalr", 200),
    "calc": ("lalr", 200),
    "c": ("earley", 150),
    "java": ("earley", 150),
    "go": ("earley", 90),
    "sql": ("earley", 30),
}
N_SENTENCES = 30

SS = 'start: s\ns: s s | "a"\n'
EXPR = ('start: e\ne: e "+" e | e "*" e | NUMBER\n'
        '%import common.NUMBER\n%import common.WS\n%ignore WS\n')


@lru_cache(maxsize=None)
def bench_text(name: str) -> str:
    return bench_grammar_path(name).read_text()


@lru_cache(maxsize=None)
def bench_grammar(name: str) -> Grammar:
    return Grammar.from_lark(bench_text(name))


# ---------------------------------------------------------------------------
# an independent maximal-munch lexer on top of `re`
# ---------------------------------------------------------------------------

def _is_reluctant(regex: str) -> bool:
    try:
        from re import _constants as sre_constants, _parser as sre_parse  # Python >= 3.11
    except ImportError:  # pragma: no cover
        import sre_constants  # type: ignore
        import sre_parse  # type: ignore
    MIN_REPEAT = sre_constants.MIN_REPEAT

    def walk(items) -> bool:
        for op, av in items:
            if op is MIN_REPEAT:
                return True
            for x in (av if isinstance(av, (list, tuple)) else (av,)):
                if isinstance(x, sre_parse.SubPattern) and walk(x):
                    return True
                if isinstance(x, (list, tuple)):
                    for y in x:
                        if isinstance(y, sre_parse.SubPattern) and walk(y):
                            return True
        return False
    return walk(sre_parse.parse(regex))


class ReLexer:
    """Global maximal munch with Python's ``re``: at each position the longest
    lexeme any terminal matches (a terminal with a reluctant quantifier only
    matches its shortest member, as in DESIGN.md), ties broken by priority,
    then literal over regex. Lexemes are assumed shorter than ``window``."""

    def __init__(self, grammar: Grammar, window: int = 100):
        self.terms = [(t, re.compile(t.regex), _is_reluctant(t.regex)) for t in grammar.terminals]
        self.ignore = grammar.ignore
        self.window = window

    def longest(self, pat: re.Pattern, reluctant: bool, text: str, pos: int) -> int:
        if pat.match(text, pos) is None:   # no prefix of text[pos:] matches at all
            return -1
        top = min(len(text), pos + self.window)
        ends = range(pos + 1, top + 1) if reluctant else range(top, pos, -1)
        for e in ends:
            if pat.fullmatch(text, pos, e):
                return e
        return -1

    def lex(self, text: str) -> list[frozenset[str]] | None:
        out = []
        pos = 0
        while pos < len(text):
            best, cands = -1, []
            for t, pat, rel in self.terms:
                e = self.longest(pat, rel, text, pos)
                if e > best:
                    best, cands = e, [t]
                elif e == best and e > 0:
                    cands.append(t)
            if best < 0:
                return None
            top = max(t.priority for t in cands)
            cands = [t for t in cands if t.priority == top]
            cands = [t for t in cands if t.is_literal] or cands
            w = frozenset(t.name for t in cands)
            if not w <= self.ignore:
                out.append(w)
            pos = best
        return out


class SeqLexer(Lexer):
    """Feeds Lark a list of terminal names (the intended sequence)."""

    def __init__(self, lexer_conf):
        pass

    def lex(self, data):
        for name in data:
            yield Token(name, name)


@lru_cache(maxsize=None)
def lark_parsers(name: str):
    text = bench_text(name)
    mode, _ = BENCH[name]
    seq = lark.Lark(text, parser="earley", lexer=SeqLexer)
    if mode == "lalr":
        txt = lark.Lark(text, parser="lalr")
    else:
        txt = lark.Lark(text, parser="earley", lexer="dynamic")
    return seq, txt


@lru_cache(maxsize=None)
def bench_sentences(name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    gen = SentenceGenerator(bench_grammar(name), seed=1234, max_terminals=BENCH[name][1])
    return tuple((t, tuple(s)) for t, s in (gen.sentence() for _ in range(N_SENTENCES)))


def check_lexes_as(gen: SentenceGenerator, text: str, seq, relex: ReLexer | None = None) -> int:
    """Assert ``text`` lexes to ``seq``; returns the number of tied lexemes."""
    got = gen.lex(text)
    assert got is not None, f"cannot lex {text!r}"
    assert len(got) == len(seq), f"{text!r}: {len(got)} lexemes for {len(seq)} terminals"
    for i, (w, name) in enumerate(zip(got, seq)):
        assert name in w, f"{text!r}: lexeme {i} is {sorted(w)}, intended {name}"
    if relex is not None:
        assert relex.lex(text) == got, f"re-based lexer disagrees on {text!r}"
    return sum(len(w) > 1 for w in got)


# ---------------------------------------------------------------------------
# benchmark grammars
# ---------------------------------------------------------------------------

@needs_grammars
@pytest.mark.parametrize("name", list(BENCH))
def test_sentences_lex_and_parse(name):
    g = bench_grammar(name)
    gen = SentenceGenerator(g, seed=0)
    relex = ReLexer(g)
    seq_parser, text_parser = lark_parsers(name)
    sents = bench_sentences(name)
    assert len(sents) == N_SENTENCES
    ties = 0
    for text, seq in sents:
        assert len(seq) <= BENCH[name][1]
        ties += check_lexes_as(gen, text, seq, relex)
        seq_parser.parse(list(seq))          # the derivation is a sentence of the grammar
        text_parser.parse(text)              # and so is the text, by Lark's own lexing
    if name != "sql":                        # SQL has a real CNAME/TYPENAME tie
        assert ties == 0
    assert sum(len(s) for _, s in sents) > N_SENTENCES  # not all trivial
    assert len({t for t, _ in sents}) > N_SENTENCES // 2


@needs_grammars
@pytest.mark.parametrize("name", list(BENCH))
def test_default_size_sentences_lex(name):
    """Full-size sentences (default max_terminals=400) lex to their sequence;
    checked with the generator's lexer only (Lark is too slow on them)."""
    gen = SentenceGenerator(bench_grammar(name), seed=99)
    for _ in range(10):
        text, seq = gen.sentence()
        assert len(seq) <= 400
        check_lexes_as(gen, text, seq)


@needs_grammars
@pytest.mark.parametrize("name", list(BENCH))
def test_terminal_text_fullmatches_regex(name):
    g = bench_grammar(name)
    gen = SentenceGenerator(g, seed=0)
    rng = random.Random(7)
    non_ascii = 0
    for t in g.terminals:
        pat = re.compile(t.regex)
        for k in range(24):
            s = gen.terminal_text(t.name, rng, mode=k % 2)
            assert s, f"{t.name}: empty sample"
            assert pat.fullmatch(s), f"{t.name}: {s!r} does not fullmatch {t.regex!r}"
            non_ascii += any(ord(c) > 127 for c in s)
    if name != "calc":  # calc has no terminal admitting non-ASCII characters
        assert non_ascii > 0


@needs_grammars
def test_unlexable_terminals_are_avoided():
    # SQL: the literals "DISTINCT"i / "ALL"i lose to SELECT_CONSTRAINT.9 and
    # "JOIN"i to JOIN_EXPR.5, so UNION DISTINCT, CROSS JOIN ... never appear
    gen = SentenceGenerator(bench_grammar("sql"), seed=3, max_terminals=60)
    assert gen.unlexable_terminals == ("ALL", "DISTINCT", "JOIN")
    for _ in range(30):
        _, seq = gen.sentence()
        assert not set(seq) & {"ALL", "DISTINCT", "JOIN"}


@needs_grammars
def test_separators_only_ignored():
    go = SentenceGenerator(bench_grammar("go"), seed=0)
    # newlines are significant in Go (EOS); only blanks and line continuations are ignored
    assert go.separators[0] == " "
    assert "\n" not in go.separators and "\\\n" in go.separators
    c = SentenceGenerator(bench_grammar("c"), seed=0)
    assert "\n" not in c.separators     # a lone newline lexes as the NEWLINE literal
    js = SentenceGenerator(bench_grammar("json-outlines"), seed=0)
    assert js.separators[:3] == (" ", "\n", "\t")


@needs_grammars
@pytest.mark.parametrize("name", ["json-outlines", "c", "go", "sql"])
def test_determinism(name):
    g = bench_grammar(name)
    a = SentenceGenerator(g, seed=42, max_terminals=80)
    b = SentenceGenerator(g, seed=42, max_terminals=80)
    sa = [a.sentence() for _ in range(8)]
    assert sa == [b.sentence() for _ in range(8)]
    c = SentenceGenerator(g, seed=43, max_terminals=80)
    assert sa != [c.sentence() for _ in range(8)]
    # an explicit rng gives the same stream as the seed
    d = SentenceGenerator(g, seed=None, max_terminals=80)
    rng = random.Random(42)
    assert sa == [d.sentence(rng) for _ in range(8)]


@needs_grammars
def test_determinism_across_hash_seeds():
    """No dependence on set iteration order (PYTHONHASHSEED)."""
    code = (
        "from stackmask.grammar import Grammar\n"
        "from stackmask.generate import SentenceGenerator\n"
        f"g = Grammar.from_lark(open({str(GRAMMAR_DIR / 'go.lark')!r}).read())\n"
        "gen = SentenceGenerator(g, seed=5, max_terminals=60)\n"
        "print(repr([gen.sentence() for _ in range(5)]))\n"
    )
    import stackmask
    root = str(Path(stackmask.__file__).parent.parent)
    outs = set()
    for hs in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hs,
                   PYTHONPATH=os.pathsep.join([root] + [p for p in sys.path if p]))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        outs.add(r.stdout)
    assert len(outs) == 1


# ---------------------------------------------------------------------------
# mutate
# ---------------------------------------------------------------------------

def _first_diff(a: str, b: str) -> int:
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


@needs_grammars
@pytest.mark.parametrize("name", list(BENCH))
def test_mutate(name):
    gen = SentenceGenerator(bench_grammar(name), seed=5, max_terminals=60)
    rng = random.Random(11)
    n_unlexable = n_changed_seq = 0
    for i in range(40):
        text, seq = gen.sentence()
        m, idx = mutate(text, rng, gen if i % 2 == 0 else None)
        assert m != text
        assert 0 <= idx <= min(len(m), len(text))
        assert m[:idx] == text[:idx]
        assert idx == min(len(m), len(text)) or m[idx] != text[idx]
        assert idx == _first_diff(text, m)
        lexed = gen.lex(m)
        if lexed is None:
            n_unlexable += 1
        elif [sorted(w) for w in lexed] != [[s] for s in seq]:
            n_changed_seq += 1
    assert n_unlexable + n_changed_seq > 0   # mutations do make near misses


def test_mutate_edge_cases():
    rng = random.Random(0)
    for text in ["", "a", "ab", "aaaa", "é€😀", "  "]:
        for _ in range(50):
            m, idx = mutate(text, rng)
            assert m != text
            assert idx == _first_diff(text, m)
    # deterministic given the rng
    assert [mutate("hello world", random.Random(3)) for _ in range(3)] == \
           [mutate("hello world", random.Random(3))] * 3


# ---------------------------------------------------------------------------
# small grammars
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [SS, EXPR])
def test_small_ambiguous_grammars(text):
    g = Grammar.from_lark(text)
    gen = SentenceGenerator(g, seed=1, max_terminals=40)
    relex = ReLexer(g)
    parser = lark.Lark(text, parser="earley", lexer="dynamic", ambiguity="resolve")
    lengths = set()
    for _ in range(30):
        t, seq = gen.sentence()
        assert 1 <= len(seq) <= 40
        check_lexes_as(gen, t, seq, relex)
        parser.parse(t)
        lengths.add(len(seq))
    assert len(lengths) > 3


def test_separator_inserted_where_needed():
    g = Grammar.from_lark('start: NAME+\nNAME: /[a-z]+/\n%ignore " "\n')
    gen = SentenceGenerator(g, seed=0)
    assert gen.separators == (" ",)
    multi = 0
    for _ in range(30):
        t, seq = gen.sentence()
        check_lexes_as(gen, t, seq)
        if len(seq) > 1:
            multi += 1
            assert t.count(" ") >= len(seq) - 1
    assert multi > 0


def test_lex_reference():
    gen = SentenceGenerator(Grammar.from_lark(EXPR), seed=0)
    assert gen.lex("1 + 2") == [frozenset({"NUMBER"}), frozenset({"PLUS"}), frozenset({"NUMBER"})]
    assert gen.lex("12") == [frozenset({"NUMBER"})]          # maximal munch: one lexeme
    assert gen.lex("1.5e3*2") == [frozenset({"NUMBER"}), frozenset({"STAR"}), frozenset({"NUMBER"})]
    assert gen.lex("") == []
    assert gen.lex("1 # 2") is None
    # flex-style: "1e" is not a NUMBER, the longest match is "1", then "e" fails
    assert gen.lex("1e") is None
    # literal beats regex at equal length; ties are reported
    g = Grammar.from_lark('start: (A | B | K)+\nA: /[a-z]+/\nB: /[a-z]+/\nK: "if"\n%ignore " "\n')
    gen = SentenceGenerator(g, seed=0)
    assert gen.lex("if iff x") == [frozenset({"K"}), frozenset({"A", "B"}), frozenset({"A", "B"})]


def test_bounds_and_nonterminating_rules():
    # `b` never terminates: never chosen; derivations respect max_depth/max_terminals
    g = Grammar.from_lark('start: a | b\na: "x" a | "x"\nb: "y" b\n')
    gen = SentenceGenerator(g, seed=0, max_depth=5, max_terminals=50)
    for _ in range(200):
        seq = gen.terminal_sequence()
        assert "Y" not in seq and 1 <= len(seq) <= 50
    gen = SentenceGenerator(Grammar.from_lark(SS), seed=0, max_depth=3, max_terminals=1000)
    # depth 3, then minimal height ("a"): at most 2**3 terminals
    assert max(len(gen.terminal_sequence()) for _ in range(300)) <= 8
    gen = SentenceGenerator(Grammar.from_lark(SS), seed=0, max_depth=50, max_terminals=25)
    assert max(len(gen.terminal_sequence()) for _ in range(300)) <= 25


def test_unlexable_grammar_raises():
    # "a" then /a+/: the join always lexes as one B; nothing is ignored
    g = Grammar.from_lark('start: A B\nA: "a"\nB: /a+/\n')
    gen = SentenceGenerator(g, seed=0)
    with pytest.raises(ValueError, match="no lexable sentence"):
        gen.sentence(max_tries=20)
    g = Grammar.from_lark('start: A B\nA: "a"\nB: /a+/\n%ignore " "\n')
    t, seq = SentenceGenerator(g, seed=0).sentence()
    assert seq == ["A", "B"] and " " in t


def test_start_without_finite_sentence():
    g = Grammar.from_lark('start: "x" start\n')
    with pytest.raises(ValueError, match="no finite sentence"):
        SentenceGenerator(g)
