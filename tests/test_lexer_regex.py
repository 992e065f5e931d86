"""Terminal regex -> UTF-8 byte DFA: agreement with Python's ``re``.

The oracle is the documented rule (see ``stackmask.lexer``): bytes ``b`` match
a terminal iff ``b`` is valid UTF-8 and ``re.fullmatch(pattern, b.decode())``;
for terminals with a reluctant quantifier additionally no proper prefix may
match (shortest-match rule).
"""

from __future__ import annotations

import itertools
import random
import re
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackmask.errors import GrammarError
from stackmask.lexer.regex import C, sre_parse   # re._parser on 3.11+, sre_parse on 3.10
from stackmask.grammar import Grammar
from stackmask.lexer import DFA, MAX_NFA_STATES, compile_lexer, compile_terminal, terminal_dfas

from conftest import BENCH_GRAMMARS, GRAMMAR_DIR, bench_grammar_path, read_bench_grammar  # honour $STACKMASK_BENCH
GRAMMAR_NAMES = list(BENCH_GRAMMARS)

needs_grammars = pytest.mark.skipif(not GRAMMAR_DIR.is_dir(), reason="benchmark grammars not found")


@lru_cache(maxsize=None)
def load_grammar(name: str) -> Grammar:
    return Grammar.from_lark(bench_grammar_path(name).read_text())


def _all_terminals():
    if not GRAMMAR_DIR.is_dir():
        return []
    out, seen = [], set()
    for g in GRAMMAR_NAMES:
        for t in load_grammar(g).terminals:
            if t.regex not in seen:
                seen.add(t.regex)
                out.append(pytest.param(t.name, t.regex, id=f"{g}-{t.name}"))
    return out


ALL_TERMINALS = _all_terminals()

# ---------------------------------------------------------------------------
# oracle
# ---------------------------------------------------------------------------


def _has_min_repeat(items) -> bool:
    for op, av in items:
        if op is C.MIN_REPEAT:
            return True
        if op is C.SUBPATTERN and _has_min_repeat(av[3]):
            return True
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) and _has_min_repeat(av[2]):
            return True
        if op is C.BRANCH and any(_has_min_repeat(b) for b in av[1]):
            return True
    return False


@lru_cache(maxsize=None)
def is_reluctant(regex: str) -> bool:
    return _has_min_repeat(sre_parse.parse(regex))


@lru_cache(maxsize=None)
def _rx(regex: str):
    return re.compile(regex)


def ref_text(regex: str, s: str) -> bool:
    p = _rx(regex)
    if not p.fullmatch(s):
        return False
    if is_reluctant(regex):
        return not any(p.fullmatch(s[:k]) for k in range(len(s)))
    return True


def ref_bytes(regex: str, b: bytes) -> bool:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ref_text(regex, s)


def matches(dfa: DFA, b: bytes) -> bool:
    r = dfa.fullmatch(b)
    assert r in (frozenset(), frozenset({0}))
    return bool(r)


# ---------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------

_SAMPLER_CACHE: dict[int, tuple] = {}


def _sampler_tables(dfa: DFA):
    key = id(dfa)
    hit = _SAMPLER_CACHE.get(key)
    if hit is not None and hit[0] is dfa:
        return hit[1], hit[2]
    n = dfa.n_states
    succ = []
    for s in range(n):
        row = dfa.trans[s]
        by_t: dict[int, list[int]] = {}
        for b in np.nonzero(row >= 0)[0].tolist():
            by_t.setdefault(int(row[b]), []).append(b)
        succ.append(sorted(by_t.items()))
    # distance (in bytes) to an accepting state
    dist = [0 if dfa.accepts[s] else None for s in range(n)]
    changed = True
    while changed:
        changed = False
        for s in range(n):
            best = dist[s]
            for t, _ in succ[s]:
                if dist[t] is not None and (best is None or dist[t] + 1 < best):
                    best = dist[t] + 1
            if best != dist[s]:
                dist[s] = best
                changed = True
    _SAMPLER_CACHE[key] = (dfa, succ, dist)
    return succ, dist


INTERESTING_BYTES = frozenset(b"\n\r\t \"'\\/*`.-+_0aAzZ9\x00\x7f") | {0x80, 0xBF, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4}


def _pick_byte(bs: list[int], rnd: random.Random) -> int:
    """A byte from ``bs``, biased towards run boundaries and bytes that matter
    to typical terminals (newlines, quotes, backslashes, ...)."""
    k = rnd.randrange(4)
    if k == 0:
        special = [b for b in bs if b in INTERESTING_BYTES]
        if special:
            return rnd.choice(special)
    elif k == 1:
        edges = [b for i, b in enumerate(bs) if i == 0 or bs[i - 1] != b - 1 or i == len(bs) - 1 or bs[i + 1] != b + 1]
        return rnd.choice(edges)
    return rnd.choice(bs)


def sample_bytes(dfa: DFA, rnd: random.Random, wander: int = 12, p_stop: float = 0.3) -> bytes:
    """A random member of the DFA's language: random walk (uniform over distinct
    successor states, then over the bytes leading there), then the shortest way
    to acceptance."""
    succ, dist = _sampler_tables(dfa)
    s, out = 0, bytearray()
    steps = rnd.randint(0, wander)
    while True:
        if dfa.accepts[s] and (not succ[s] or rnd.random() < p_stop):
            return bytes(out)
        if steps > 0:
            t, bs = rnd.choice(succ[s])
            steps -= 1
        else:
            opts = [(t, bs) for t, bs in succ[s] if dist[t] is not None and dist[t] < dist[s]]
            if not opts:  # s accepting with dist 0: stop
                return bytes(out)
            t, bs = rnd.choice(opts)
        out.append(_pick_byte(bs, rnd))
        s = t


EXTRA_CHARS = list("\"'\\\n\r\t /*`.-+_0aZ9") + ["é", "ß", "ſ", "K", "İ", "中", "١", "😀", "\x00", "\u2028", "\U0010ffff", "\ufeff"]


def _alphabet(regex: str) -> list[str]:
    return sorted(set(regex) | set(EXTRA_CHARS) | set(regex.upper()) | set(regex.lower()))


def mutate(s: str, rnd: random.Random, alphabet: list[str]) -> str:
    for _ in range(rnd.randint(1, 3)):
        k = rnd.randrange(6)
        i = rnd.randint(0, len(s))
        if k == 0:
            s = s[:i] + rnd.choice(alphabet) + s[i:]
        elif k == 1 and s:
            i = min(i, len(s) - 1)
            s = s[:i] + s[i + 1:]
        elif k == 2 and s:
            i = min(i, len(s) - 1)
            s = s[:i] + rnd.choice(alphabet) + s[i + 1:]
        elif k == 3:
            s = s[:i]
        elif k == 4:
            j = rnd.randint(0, len(s))
            a, b = min(i, j), max(i, j)
            s = s[:b] + s[a:b] + s[b:]
        else:
            s = s.swapcase()
    return s


def random_candidates(dfa: DFA, regex: str, rnd: random.Random, n: int) -> list[str]:
    alphabet = _alphabet(regex)
    out = []
    for _ in range(n):
        k = rnd.randrange(5)
        if k == 0:
            s = sample_bytes(dfa, rnd).decode()
        elif k == 1:
            s = mutate(sample_bytes(dfa, rnd).decode(), rnd, alphabet)
        elif k == 2:
            s = sample_bytes(dfa, rnd).decode() + sample_bytes(dfa, rnd).decode()
        elif k == 3:
            s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8)))
        else:
            s = sample_bytes(dfa, rnd).decode()
            s = mutate(s + rnd.choice(alphabet) + sample_bytes(dfa, rnd).decode(), rnd, alphabet)
        out.append(s)
    return out


def check_string(dfa: DFA, regex: str, s: str) -> None:
    b = s.encode("utf-8")
    assert matches(dfa, b) == ref_text(regex, s), (regex, s)
    # cutting inside a multi-byte character never yields a match
    pos = 0
    for ch in s:
        w = len(ch.encode("utf-8"))
        for cut in range(1, w):
            assert not matches(dfa, b[:pos + cut]), (regex, b[:pos + cut])
        pos += w


# ---------------------------------------------------------------------------
# every benchmark terminal vs re
# ---------------------------------------------------------------------------


@needs_grammars
@pytest.mark.parametrize("name,regex", ALL_TERMINALS)
def test_benchmark_terminal_seeded(name, regex):
    dfa = compile_terminal(regex, name)
    rnd = random.Random(f"{regex}")
    samples = [sample_bytes(dfa, rnd) for _ in range(40)]
    for b in samples:
        # everything the DFA generates is valid UTF-8 in the terminal's language
        assert ref_bytes(regex, b), (name, regex, b)
    for s in random_candidates(dfa, regex, rnd, 150):
        check_string(dfa, regex, s)


@st.composite
def terminal_string(draw, dfa: DFA, regex: str):
    rnd = draw(st.randoms(use_true_random=False))
    alphabet = _alphabet(regex)
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return sample_bytes(dfa, rnd).decode()
    if kind == 1:
        return mutate(sample_bytes(dfa, rnd).decode(), rnd, alphabet)
    if kind == 2:
        return draw(st.text(st.sampled_from(alphabet), max_size=10))
    pieces = draw(st.lists(st.one_of(st.text(st.sampled_from(alphabet), max_size=3),
                                     st.characters(exclude_categories=("Cs",)).map(str),
                                     st.just(sample_bytes(dfa, rnd).decode())), max_size=4))
    return "".join(pieces)


@needs_grammars
@pytest.mark.parametrize("name,regex", ALL_TERMINALS)
def test_benchmark_terminal_hypothesis(name, regex):
    dfa = compile_terminal(regex, name)

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(terminal_string(dfa, regex))
    def run(s):
        check_string(dfa, regex, s)

    run()


@needs_grammars
def test_reluctant_benchmark_terminals_use_shortest_match():
    rel = {p.values[0]: p.values[1] for p in ALL_TERMINALS if is_reluctant(p.values[1])}
    assert len(rel) >= 5  # /".*?"/, block comments, SQL string, Go strings
    for name, regex in rel.items():
        d = compile_terminal(regex, name)
        # accepting states have no outgoing transitions
        for s in range(d.n_states):
            if d.accepts[s]:
                assert not d.has_successors(s)
    d = compile_terminal(r'".*?"')
    assert matches(d, b'"ab"') and not matches(d, b'"a"b"') and matches(d, '"é中😀"'.encode())
    d = compile_terminal(r"\/\*(.|\n)*?\*\/")
    assert matches(d, b"/* x\n* y */") and not matches(d, b"/* a */ */") and matches(d, b"/**/")
    d = compile_terminal(r'"(?:[^"\\]|\\.)*?"')
    assert matches(d, b'"a\\"b"') and not matches(d, b'"a"b"')
    # a reluctant quantifier anywhere makes the whole terminal shortest-match
    d = compile_terminal(r"(?:a*?){0}ab*")
    assert matches(d, b"a") and not matches(d, b"ab")
    d = compile_terminal(r"x+y*?")
    assert matches(d, b"x") and not matches(d, b"xx") and not matches(d, b"xy")


# ---------------------------------------------------------------------------
# structure: exhaustive over a small alphabet
# ---------------------------------------------------------------------------

STRUCTURE_CASES = [
    "a{3}", "a{2,4}", "(ab){0,3}c", "a{2,}b", "(a|bc){1,3}", "(?:a{0,2}b){2}", "a{0}b",
    "(a|b)*c", "((a|)b)+", "(?:a|b?)+c", "a(?:b|c)*a", "(a*)*b", "(?:a+|b)+",
    "(?P<x>ab)+|c", "(?i:a)B", "(?i)a(?-i:b)c", "(?i)[a-c]+", "A|(?i:b)+", "(?x) a b  # c",
    "a+?", "a*?b", "a{2,3}?", "(?:ab|a)+?", "a??b", "(?:a|ab)(?:c|bcd)*?",
    "[ab]{2}c?",
]


@pytest.mark.parametrize("regex", STRUCTURE_CASES)
def test_structure_exhaustive(regex):
    d = compile_terminal(regex, "T")
    alphabet = "abcAB"
    for n in range(0, 6):
        for tup in itertools.product(alphabet, repeat=n):
            s = "".join(tup)
            if s == "":
                continue
            assert matches(d, s.encode()) == ref_text(regex, s), (regex, s)


def test_bounded_repetition():
    d = compile_terminal("a{1000}", "A", band=1 << 40)       # expanded as written
    assert matches(d, b"a" * 1000)
    assert not matches(d, b"a" * 999) and not matches(d, b"a" * 1001)
    assert d.n_states == 1001 and not d.counters
    d = compile_terminal("a{1000}", "A")                     # counted: 1 + 1 + 257 positions
    assert d.counters and d.n_states == 259
    assert matches(d, b"a" * 1000)
    assert not matches(d, b"a" * 999) and not matches(d, b"a" * 1001)
    d = compile_terminal("(?:ab){2,5}", "A")
    assert [matches(d, b"ab" * k) for k in range(7)] == [False, False, True, True, True, True, False]
    d = compile_terminal("x{3,}", "A")
    assert [matches(d, b"x" * k) for k in range(6)] == [False, False, False, True, True, True]
    d = compile_terminal("[\u4e00-\u9fff]{2}", "A")
    assert matches(d, "中文".encode()) and not matches(d, "中".encode()) and not matches(d, "中文字".encode())


@pytest.mark.parametrize("regex", ["a{100001}", "(?:abc){40000}", "(?:a{1000}){200}", "[\\w]{20000}"])
def test_size_limit(regex):
    with pytest.raises(GrammarError) as ei:
        compile_terminal(regex, "HUGE", band=1 << 40)        # nothing counted
    assert ei.value.name == "HUGE"
    assert "HUGE" in str(ei.value) and str(MAX_NFA_STATES) in str(ei.value)


@pytest.mark.parametrize("regex", ["x(?:a|ab){40000}", "(?:a{1000}){200}", "ab?b{99999}",
                                   "a(?:xy)?b{99999}"])
def test_size_limit_where_nothing_can_be_counted(regex):
    # iterations that are not a prefix code, a repetition inside a counted one, a prefix
    # that can read the repetition's own bytes (``ab?b``: the count is ambiguous); a
    # prefix that cannot is counted and compiles
    if regex.startswith("a(?:xy)"):
        d = compile_terminal(regex, "HUGE")
        assert d.counters and matches(d, b"axy" + b"b" * 99999) and matches(d, b"a" + b"b" * 99999)
        assert not matches(d, b"a" + b"b" * 99998) and not matches(d, b"axy" + b"b" * 100000)
        return
    with pytest.raises(GrammarError) as ei:
        compile_terminal(regex, "HUGE")
    assert ei.value.name == "HUGE"


@pytest.mark.parametrize("regex,n", [("a{100001}", 100001), ("(?:abc){40000}", 40000)])
def test_large_repetitions_are_counted(regex, n):
    d = compile_terminal(regex, "HUGE")
    assert d.counters and d.n_states < 2000
    unit = regex[3:6].encode() if regex.startswith("(?:") else b"a"
    assert matches(d, unit * n) and not matches(d, unit * (n - 1)) and not matches(d, unit * (n + 1))


def test_dfa_size_limit():
    from stackmask.lexer import MAX_DFA_STATES

    with pytest.raises(GrammarError) as ei:
        compile_terminal("(?:a|b)*a(?:a|b){17}", "BLOWUP")  # 2^18 subsets
    assert ei.value.name == "BLOWUP" and "BLOWUP" in str(ei.value) and str(MAX_DFA_STATES) in str(ei.value)


# ---------------------------------------------------------------------------
# Unicode: exact one-character sets, exhaustively over all code points
# ---------------------------------------------------------------------------

_CP = np.array(list(range(0xD800)) + list(range(0xE000, 0x110000)), dtype=np.int64)


@lru_cache(maxsize=None)
def _utf8_matrix():
    cp = _CP
    n = len(cp)
    m = np.zeros((n, 4), dtype=np.int64)
    ln = np.where(cp < 0x80, 1, np.where(cp < 0x800, 2, np.where(cp < 0x10000, 3, 4)))
    one, two, three, four = ln == 1, ln == 2, ln == 3, ln == 4
    m[one, 0] = cp[one]
    m[two, 0] = 0xC0 | (cp[two] >> 6)
    m[two, 1] = 0x80 | (cp[two] & 0x3F)
    m[three, 0] = 0xE0 | (cp[three] >> 12)
    m[three, 1] = 0x80 | ((cp[three] >> 6) & 0x3F)
    m[three, 2] = 0x80 | (cp[three] & 0x3F)
    m[four, 0] = 0xF0 | (cp[four] >> 18)
    m[four, 1] = 0x80 | ((cp[four] >> 12) & 0x3F)
    m[four, 2] = 0x80 | ((cp[four] >> 6) & 0x3F)
    m[four, 3] = 0x80 | (cp[four] & 0x3F)
    # spot check against Python's encoder
    for c in (0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF, 0x20AC):
        i = int(np.searchsorted(cp, c))
        assert bytes(m[i, :ln[i]].tolist()) == chr(c).encode()
    return m, ln


def dfa_single_chars(d: DFA) -> np.ndarray:
    """For every code point (no surrogates): does the DFA accept its UTF-8 encoding?"""
    m, ln = _utf8_matrix()
    state = np.zeros(len(ln), dtype=np.int64)
    for k in range(4):
        act = (ln > k) & (state >= 0)
        state[act] = d.trans[state[act], m[act, k]]
    acc = np.array([bool(a) for a in d.accepts] + [False])
    return acc[state]  # -1 -> False


_UNIVERSE_CHARS = None


def re_single_chars(regex: str) -> np.ndarray:
    global _UNIVERSE_CHARS
    if _UNIVERSE_CHARS is None:
        _UNIVERSE_CHARS = [chr(c) for c in _CP.tolist()]
    p = re.compile(regex)
    return np.fromiter((p.fullmatch(c) is not None for c in _UNIVERSE_CHARS), dtype=bool, count=len(_CP))


SINGLE_CHAR_CASES = [
    r"\w", r"\W", r"\d", r"\s", r"(?i)k", r"(?i)[a-z]", r"(?i)[^k]", r'[^"\\]', r".", r"(?s).",
    r"(?a)\w", r"(?i)ß", r"(?i:[\w])", r"(?ia)[^a-z]", r"[^\W\d_]", r"(?i)\u0130", r"(?i)[^\S\n]",
]


@pytest.mark.parametrize("regex", SINGLE_CHAR_CASES)
def test_single_char_exact_all_codepoints(regex):
    d = compile_terminal(regex, "CH")
    got = dfa_single_chars(d)
    want = re_single_chars(regex)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, [hex(int(_CP[i])) for i in bad[:10]]


def test_unicode_examples():
    w = compile_terminal(r"\w+", "W")
    assert matches(w, "中文字符abc_١٢".encode())
    assert matches(w, "Ünïcödé".encode())
    assert not matches(w, "中 文".encode()) and not matches(w, "😀".encode())
    neg = compile_terminal(r"[^a]+", "N")
    assert matches(neg, "😀👍🏽中\n".encode()) and not matches(neg, "😀a".encode())
    k = compile_terminal(r"(?i)k", "K")
    assert matches(k, b"k") and matches(k, b"K") and matches(k, "\u212a".encode())
    kw = compile_terminal(r"(?i:select)", "SELECT")
    assert matches(kw, b"SeLeCt") and matches(kw, "ſelect".encode()) and not matches(kw, b"selec")
    ascii_i = compile_terminal(r"(?ai)k", "K")
    assert matches(ascii_i, b"K") and not matches(ascii_i, "\u212a".encode())
    r = compile_terminal(r"(?i)[a-z]+", "R")
    assert matches(r, "AbC\u212aſ".encode())
    local = compile_terminal(r"(?i)a(?-i:b)", "L")
    assert matches(local, b"Ab") and not matches(local, b"AB")
    dot = compile_terminal(r"a.b", "D")
    assert matches(dot, "a😀b".encode()) and not matches(dot, b"a\nb")
    assert matches(compile_terminal(r"(?s:a.b)", "D"), b"a\nb")


# ---------------------------------------------------------------------------
# invalid UTF-8
# ---------------------------------------------------------------------------

INVALID = [b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xed\xa0\x80",
           b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
           b"\xf8\x88\x80\x80\x80", b"\xe4\xb8", b"\xf0\x9f\x98", b"\xc3", b"\xc3\xc3\xa9"]


@pytest.mark.parametrize("regex", [r"[\s\S]+", r".+", r"[^a]+", r"\W+", r"(?s).*x", r'".*?"'])
def test_invalid_utf8_never_matches(regex):
    d = compile_terminal(regex, "ANY")
    for bad in INVALID:
        for b in (bad, b"x" + bad, bad + b"x", b'"' + bad + b'"', b"x" + bad + b"x"):
            assert not matches(d, b), (regex, b)
            assert ref_bytes(regex, b) is False


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=8))
def test_random_bytes_vs_oracle(b):
    for regex in (r"[\s\S]+", r"[^a]*b", r"\w+", r"(?i)[a-k\u00e0-\u00ff]+"):
        d = compile_terminal(regex, "B")
        assert matches(d, b) == ref_bytes(regex, b), (regex, b)


# ---------------------------------------------------------------------------
# rejected patterns
# ---------------------------------------------------------------------------

REJECTED = [
    (r"(a)\1", "backreference"),
    (r"(?P<x>a)(?P=x)", "backreference"),
    (r"a(?=b)", "lookahead"),
    (r"a(?!b)", "lookahead"),
    (r"(?<=a)b", "lookbehind"),
    (r"(?<!a)b", "lookbehind"),
    (r"^a", "anchor"),
    (r"a$", "anchor"),
    (r"\ba", "anchor"),
    (r"a\B", "anchor"),
    (r"\Aa", "anchor"),
    (r"a\Z", "anchor"),
    (r"(a)?(?(1)b|c)", "conditional"),
    (r"(?>ab)", "atomic"),
    (r"a*+b", "possessive"),
    (r"a++", "possessive"),
    (r"a?+b", "possessive"),
    (r"a{1,2}+", "possessive"),
    (r"a*", "empty string"),
    (r"(?:)", "empty string"),
    (r"a?|b", "empty string"),
    (r"(?:a|b*)", "empty string"),
    (r"a*?", "empty string"),
    (r"(", "invalid regex"),
    (r"[a-", "invalid regex"),
    (r"a{2,1}", "invalid regex"),
    (r"(?L)a", "invalid regex"),
    (r"\ud800", "matches no string"),
    (r"(?:^){0}a", "anchor"),
    (r"(?:a(?=b)){0}c", "lookahead"),
]


@pytest.mark.parametrize("regex,what", REJECTED)
def test_rejected(regex, what):
    with pytest.raises(GrammarError) as ei:
        compile_terminal(regex, "MY_TERM")
    assert ei.value.name == "MY_TERM"
    msg = str(ei.value)
    assert "MY_TERM" in msg and what in msg.lower(), msg


def test_newer_syntax_hint(monkeypatch):
    """Python 3.10 rejects 3.11's atomic groups and possessive quantifiers as invalid; the
    error then names the construct, as 3.11's "unsupported feature" error does. Simulated
    here on any version (the note is for 3.10's parser errors only)."""
    from stackmask.lexer import regex as lr
    monkeypatch.setattr(lr, "ATOMIC_GROUP", None)

    def hint(pattern, msg, pos):
        return lr.newer_syntax_hint(pattern, re.error(msg, pattern, pos))

    assert "possessive" in hint("a++", "multiple repeat", 2)
    assert "possessive" in hint("a?+b", "multiple repeat", 2)
    assert "possessive" in hint("a{1,2}+", "multiple repeat", 6)
    assert "atomic" in hint("(?>ab)", "unknown extension ?>", 1)
    assert hint("a*?+", "multiple repeat", 3) == ""         # lazy, then '+': invalid in 3.11 too
    assert hint("a**", "multiple repeat", 2) == ""
    assert hint("(", "missing ), unterminated subpattern", 0) == ""


def test_rejected_in_lexer_names_terminal():
    from stackmask.grammar import TerminalDef

    terms = [TerminalDef("OK", "a+"), TerminalDef("BAD", r"(?<=x)y")]
    with pytest.raises(GrammarError) as ei:
        compile_lexer(terms)
    assert ei.value.name == "BAD" and "BAD" in str(ei.value)


# ---------------------------------------------------------------------------
# DFA invariants
# ---------------------------------------------------------------------------


def _check_trimmed(d: DFA):
    assert d.trans.dtype == np.int32 and d.trans.shape == (d.n_states, 256)
    assert len(d.accepts) == d.n_states
    assert d.trans.min() >= -1 and d.trans.max() < d.n_states
    alive = np.array([bool(a) for a in d.accepts])
    while True:
        nxt = alive | (np.append(alive, False)[d.trans]).any(axis=1)
        if (nxt == alive).all():
            break
        alive = nxt
    assert alive.all()
    assert (d.live_out == (d.trans >= 0).any(axis=1)).all()
    assert all(d.has_successors(s) == bool((d.trans[s] >= 0).any()) for s in range(d.n_states))
    assert not d.has_successors(-1)


def _python_moore_blocks(d: DFA) -> int:
    """Independent (slow, dict-based) count of Myhill-Nerode classes."""
    _, cols = np.unique(d.trans.T, axis=0, return_index=True)
    rows = d.trans[:, np.sort(cols)].tolist()
    block = {s: d.accepts[s] for s in range(d.n_states)}
    nb = len(set(block.values()))
    while True:
        sig = {s: (block[s], tuple(block[t] if t >= 0 else None for t in rows[s])) for s in range(d.n_states)}
        ids: dict = {}
        block = {s: ids.setdefault(sig[s], len(ids)) for s in range(d.n_states)}
        if len(ids) == nb:
            return nb
        nb = len(ids)


@needs_grammars
@pytest.mark.parametrize("gname", GRAMMAR_NAMES)
def test_invariants_and_minimality(gname):
    g = load_grammar(gname)
    ds = terminal_dfas(g.terminals)
    for t, d in zip(g.terminals, ds):
        _check_trimmed(d)
        assert all(a in (frozenset(), frozenset({0})) for a in d.accepts)
        assert not d.accepts[0]
        assert _python_moore_blocks(d) == d.n_states, t.name
        assert d is compile_terminal(t.regex, t.name)  # cached
    lex = compile_lexer(g.terminals)
    _check_trimmed(lex)
    assert _python_moore_blocks(lex) == lex.n_states
    assert compile_lexer(list(g.terminals)) is lex


def _equivalent(t1, acc1, t2, acc2) -> bool:
    """Same language (from state 0) for two class-level tables with -1 = dead."""
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        p, q = stack.pop()
        if bool(acc1[p]) != bool(acc2[q]):
            return False
        for c in range(t1.shape[1]):
            a, b = int(t1[p, c]), int(t2[q, c])
            if (a < 0) != (b < 0):
                return False
            if a >= 0 and (a, b) not in seen:
                seen.add((a, b))
                stack.append((a, b))
    return True


@st.composite
def small_tables(draw):
    n = draw(st.integers(1, 14))
    k = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(st.integers(-1, n - 1), min_size=k, max_size=k), min_size=n, max_size=n))
    acc = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(rows, dtype=np.int32).reshape(n, k), np.array(acc, dtype=bool)


@settings(max_examples=300, deadline=None, database=None)
@given(small_tables(), st.sampled_from([0, 1, 12]))
def test_minimize_random_tables(tbl, rounds):
    """Hopcroft (rounds=0), Moore+Hopcroft (1) and Moore (12) give the minimal
    equivalent automaton."""
    import stackmask.wfa.reduction as D

    trans, acc = tbl
    t, old = D.trim(trans, acc)
    if t.shape[0] == 0:
        return
    a = acc[old]
    saved = D._MOORE_ROUNDS
    D._MOORE_ROUNDS = rounds
    try:
        m, old2 = D.minimize(t, a.astype(np.int64))
    finally:
        D._MOORE_ROUNDS = saved
    am = a[old2]
    assert _equivalent(t, a, m, am)
    full = DFA(trans=np.pad(m, ((0, 0), (0, 256 - m.shape[1])), constant_values=-1),
               accepts=tuple(frozenset({0}) if x else frozenset() for x in am.tolist()), n_states=m.shape[0])
    _check_trimmed(full)
    assert _python_moore_blocks(full) == full.n_states


@pytest.mark.parametrize("rounds", [0, 12])
def test_minimize_long_chains(monkeypatch, rounds):
    import stackmask.wfa.reduction as D
    from stackmask.lexer.terminal_dfa import _build_terminal

    monkeypatch.setattr(D, "_MOORE_ROUNDS", rounds)
    d = _build_terminal("a{3000}", "CHAIN", 1 << 40)        # expanded as written
    assert d.n_states == 3001 and matches(d, b"a" * 3000) and not matches(d, b"a" * 2999)
    d = _build_terminal("(?:ab|cd){0,300}x", "CHAIN", 1 << 40)
    assert d.n_states == 3 * 300 + 2  # 301 pair boundaries, 2 x 300 mid-pair states, final
    assert matches(d, b"abcd" * 150 + b"x") and not matches(d, b"ab" * 301 + b"x")
    d = _build_terminal(r'"(?:[^"\\]|\\.){0,50}"', "STR")
    assert _python_moore_blocks(d) == d.n_states
    assert matches(d, ('"' + "é" * 50 + '"').encode()) and not matches(d, ('"' + "é" * 51 + '"').encode())


def test_empty_lexer():
    d = compile_lexer([])
    assert d.n_states == 1 and d.fullmatch(b"") == frozenset() and d.run(b"a") == -1


# ---------------------------------------------------------------------------
# combined lexer
# ---------------------------------------------------------------------------


def _check_lexer_string(lex: DFA, ds: list[DFA], b: bytes):
    st_ = 0
    states = [0] * len(ds)
    for i in range(len(b) + 1):
        want = frozenset(k for k, s in enumerate(states) if s >= 0 and ds[k].accepts[s])
        alive = any(s >= 0 for s in states)
        if alive:
            assert st_ >= 0 and lex.accepts[st_] == want, (b[:i], lex.accepts[st_], want)
        else:
            assert st_ == -1, b[:i]
            return
        if i == len(b):
            break
        st_ = lex.run(b[i:i + 1], st_)
        states = [d.run(b[i:i + 1], s) for d, s in zip(ds, states)]
    assert lex.fullmatch(b) == frozenset(k for k, d in enumerate(ds) if d.fullmatch(b))


def _lexer_candidates(ds, regexes, rnd, n):
    out = []
    for _ in range(n):
        i = rnd.randrange(len(ds))
        s = sample_bytes(ds[i], rnd).decode()
        k = rnd.randrange(4)
        if k == 1:
            s = mutate(s, rnd, _alphabet(regexes[i]))
        elif k == 2:
            s += sample_bytes(ds[rnd.randrange(len(ds))], rnd).decode()
        elif k == 3:
            s = s[: rnd.randint(0, len(s))]
        out.append(s.encode())
    return out


@needs_grammars
@pytest.mark.parametrize("gname", GRAMMAR_NAMES)
def test_lexer_accepts_equal_terminal_fullmatch(gname):
    g = load_grammar(gname)
    ds = terminal_dfas(g.terminals)
    regexes = [t.regex for t in g.terminals]
    lex = compile_lexer(g.terminals)
    rnd = random.Random(gname)
    for b in _lexer_candidates(ds, regexes, rnd, 400):
        _check_lexer_string(lex, ds, b)

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.randoms(use_true_random=False), st.binary(max_size=3))
    def run(r, junk):
        for b in _lexer_candidates(ds, regexes, r, 3):
            _check_lexer_string(lex, ds, b)
            _check_lexer_string(lex, ds, b + junk)

    run()


def test_lexer_small_handmade():
    terms = ["if", "[a-z]+", "[0-9]+", "i[a-z]", r'"[^"]*"', "(?i)IF"]
    lex = compile_lexer(terms)
    assert lex.fullmatch(b"if") == {0, 1, 3, 5}
    assert lex.fullmatch(b"iF") == {5}
    assert lex.fullmatch(b"ix") == {1, 3}
    assert lex.fullmatch(b"abc") == {1}
    assert lex.fullmatch(b"12") == {2}
    assert lex.fullmatch(b'"x"') == {4}
    assert lex.fullmatch(b"1a") == frozenset()
    assert lex.run(b"1a") == -1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 5), st.lists(st.tuples(st.integers(0, 255),
                                                                   st.integers(0, 255)),
                                                         max_size=250), st.integers(0, 2 ** 32))
def test_column_classes_group_equal_columns(n, k, copies, seed):
    from stackmask.wfa.reduction import column_classes
    g = np.random.default_rng(seed).integers(-1, k, size=(n, 256))
    for a, b in copies:
        g[:, a] = g[:, b]
    c = column_classes(g)
    for a in range(256):
        for b in (0, 7, 128, 255):
            assert (c[a] == c[b]) == bool((g[:, a] == g[:, b]).all())
    firsts = [int(x) for i, x in enumerate(c.tolist()) if x not in c[:i]]
    assert firsts == list(range(len(firsts)))          # numbered by first byte


def test_column_classes_of_a_table_taller_than_a_hash_block():
    from stackmask.wfa import reduction
    rng = np.random.default_rng(5)
    n = 2 * reduction._HASH_ROWS + 17                   # rows hashed in three blocks
    base = rng.integers(-1, n, size=(n, 30))
    g = base[:, rng.integers(0, 30, size=256)]
    g[-1, 7] = -2 if g[-1, 7] != -2 else 0       # differs from its twins in the last block only
    want: dict = {}
    assert reduction.column_classes(g).tolist() == [want.setdefault(g[:, b].tobytes(), len(want))
                                              for b in range(256)]


@pytest.mark.parametrize("seed", range(12))
def test_equal_columns_of_a_tall_table_share_a_class(seed):
    """Every pair of equal columns, in a table as tall as a lexer's (thousands of states,
    entries up to the state count): one class. (A floating-point hash summed in another
    order per column split equal columns apart.)"""
    from stackmask.wfa.reduction import column_classes
    rng = np.random.default_rng(seed)
    n = int(rng.integers(500, 3500))
    width = 256 if seed < 3 else int(rng.integers(100, 300))     # bytes, or other symbols
    base = rng.integers(-1, 1 + seed % 3 * n // 2, size=(n, 40)).astype(np.int32)
    g = np.ascontiguousarray(base[:, rng.integers(0, 40, size=width)])
    want: dict = {}
    assert column_classes(g).tolist() == [want.setdefault(g[:, b].tobytes(), len(want))
                                          for b in range(width)]


def _product_bfs_reference(gc: np.ndarray, start: tuple, max_states: int = 0) -> tuple[list, np.ndarray]:
    """The product BFS one tuple of live component states at a time: the reference for
    the level-at-a-time ``fsa.product_bfs``."""
    gc_rows = gc.tolist()
    start = tuple(sorted(start))
    ids = {start: 0}
    states = [start]
    rows = []
    i = 0
    while i < len(states):
        row = []
        for col in zip(*[gc_rows[x] for x in states[i]]):
            key = tuple(x for x in col if x >= 0)
            if not key:
                row.append(-1)
                continue
            if key not in ids:
                ids[key] = len(states)
                states.append(key)
            row.append(ids[key])
        rows.append(row)
        i += 1
    return states, np.array(rows, dtype=np.int32).reshape(len(rows), gc.shape[1])


@pytest.mark.parametrize("which", ["json-outlines", "c", "schema"])
def test_product_by_levels_equals_the_reference(which, monkeypatch):
    """The level-at-a-time product BFS gives the automaton the one-tuple-at-a-time BFS gives
    (both are minimized and renumbered canonically, so the tables are equal)."""
    from stackmask.lexer import dfa as D
    from stackmask.wfa import fsa
    if which == "schema":
        from stackmask.grammars.json_schema import convert_schema
        g = convert_schema({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 40}, "b": {"type": "string", "pattern": "^[a-z]+@x$"},
            "c": {"type": "integer"}, "d": {"enum": ["x", "yy"]}}}).grammar
        terms = [t for t in g.terminals if t.is_lexed]
    else:
        g = Grammar.from_lark(read_bench_grammar(which))     # skipped without ../shared/bench
        terms = [t for t in g.terminals if t.is_lexed]
    from stackmask import native
    dfas = terminal_dfas(terms)
    got = []
    with monkeypatch.context() as m:
        m.setenv(native.ENV, "1")
        m.setattr(fsa, "_SMALL_PRODUCT", 0)                     # every product by levels
        got.append(D.product(dfas))
    if native.module() is not None:
        got.append(D.product(dfas))                             # the compiled search

    def reference_arrays(gc, start, max_states):
        states, trans = _product_bfs_reference(gc, start)
        offs = np.concatenate([[0], np.cumsum([len(s) for s in states])]).astype(np.int64)
        return np.array([x for s in states for x in s], dtype=np.int32), offs, trans
    monkeypatch.setattr(D, "product_arrays", reference_arrays)
    ref = D.product(dfas)
    for new in got:
        assert np.array_equal(new.trans, ref.trans) and new.accepts == ref.accepts


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a+", "ab*c", "[a-c]{2,5}", "(ab|ba)+", "a{0,7}b", "[^ab]x?",
                                 "c+a", "\\d{1,4}", "é+", "x|xy|xyz"]), min_size=1, max_size=5,
                unique=True))
def test_product_by_levels_on_random_terminal_sets(regexes):
    from stackmask.wfa import fsa
    dfas = terminal_dfas(regexes)
    sizes = [d.n_states for d in dfas]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    g = np.vstack([np.where(d.trans >= 0, d.trans + o, -1) for d, o in zip(dfas, offsets)])
    start = tuple(int(o) for o in offsets[:-1])
    s2, t2 = _product_bfs_reference(g, start)
    for way in (fsa._product_levels, fsa._product_tuples):     # product_bfs picks by size
        s1, t1 = way(g, start, 10_000)
        # the same reachable tuples, and the same transitions up to the numbering
        assert sorted(s1) == sorted(s2)
        pos2 = {s: i for i, s in enumerate(s2)}
        perm = np.array([pos2[s] for s in s1])
        mapped = np.where(t1 >= 0, perm[np.maximum(t1, 0)], -1)
        assert np.array_equal(mapped, t2[perm])


def _walk_reference(items):
    """``walk_parse_tree`` as nested generators (its first version): pre-order."""
    from stackmask.lexer.regex import ATOMIC_GROUP, C, POSSESSIVE_REPEAT
    for op, av in items:
        yield op, av
        if op is C.SUBPATTERN:
            yield from _walk_reference(av[3])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, POSSESSIVE_REPEAT):
            yield from _walk_reference(av[2])
        elif op is C.BRANCH:
            for b in av[1]:
                yield from _walk_reference(b)
        elif op is ATOMIC_GROUP:
            yield from _walk_reference(av)
        elif op is C.ASSERT or op is C.ASSERT_NOT:
            yield from _walk_reference(av[1])
        elif op is C.GROUPREF_EXISTS:
            yield from _walk_reference(av[1])
            if av[2] is not None:
                yield from _walk_reference(av[2])


@pytest.mark.parametrize("pattern", [
    r"a(b|c(?:d|e)*)?f", r"(?=ab)a(?!c)b+?", r"(a)?(?(1)b|c)d", r"(a)(?(1)b)",
    r"x(?:y(?:z)*)+|[a-c]{2,3}", "(?:a" * 300 + ")?" * 300,
] + ([r"(?>ab|a)c", r"a++b"] if sys.version_info >= (3, 11) else []))
def test_walk_parse_tree_is_pre_order(pattern):
    from stackmask.lexer.regex import sre_parse, walk_parse_tree
    tree = sre_parse.parse(pattern, 0)
    want = [(op, id(av)) for op, av in _walk_reference(tree)]
    assert [(op, id(av)) for op, av in walk_parse_tree(tree)] == want


def test_lookahead_search_walks_deep_regexes():
    # generated regexes (a length spelled as nested groups) nest deeper than Python's
    # recursion limit: the search that routes a terminal to the lookahead build walks them
    from stackmask.lexer.regex import has_lookahead
    a, c = ("c", ((97, 97),)), ("c", ((99, 99),))
    for bottom, want in ((a, False), (("la", a), True)):
        x = bottom
        for _ in range(3000):
            x = ("s", (a, ("a", (("r", x, 0, 1), c))))
        assert has_lookahead(x) is want


# ---------------------------------------------------------------------------
# completion_bounds with one memo of length ranges against its definition (length_range
# asked afresh at every level)

def _completion_by_definition(x):
    # completion_bounds' own recursion without the memo: every level asks length_range
    # afresh (what it did before the memo)
    from stackmask.lexer.ir import _completion
    return _completion(x, None)


def _ir_trees():
    leaf = st.sampled_from([("c", ((97, 97),)), ("c", ((48, 57),)), ("a", ())])
    return st.recursive(leaf, lambda kids: st.one_of(
        st.lists(kids, min_size=0, max_size=4).map(lambda ys: ("s", tuple(ys))),
        st.lists(kids, min_size=0, max_size=3).map(lambda ys: ("a", tuple(ys))),
        st.tuples(kids, st.integers(0, 3), st.one_of(st.none(), st.integers(0, 4))).filter(
            lambda t: t[2] is None or t[2] >= t[1]).map(lambda t: ("r", t[0], t[1], t[2]))),
        max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(x=_ir_trees())
def test_completion_bounds_with_a_memo_equal_the_definition(x):
    from stackmask.lexer.ir import completion_bounds, length_range
    assert completion_bounds(x) == _completion_by_definition(x)
    assert length_range(x, {}) == length_range(x)


def test_completion_bounds_of_a_deep_regex_are_linear():
    # a written-out regex nests optional groups hundreds deep: asking every level for its
    # subtree's length range was quadratic (seconds on CloudFormation's patterns)
    from stackmask.lexer.ir import completion_bounds
    def deep(n):
        x = ("c", ((97, 97),))
        for _ in range(n):
            x = ("s", (("c", ((98, 98),)), ("r", x, 0, 1)))
        return x
    x = deep(2000)
    calls = 0
    import stackmask.lexer.ir as ir_mod
    real = ir_mod._length_range

    def counted(y, memo):
        nonlocal calls
        calls += 1
        return real(y, memo)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        assert completion_bounds(deep(300)) == _completion_by_definition(deep(300))
        ir_mod._length_range = counted
        assert completion_bounds(x) == (1, 2001)
    finally:
        ir_mod._length_range = real
        sys.setrecursionlimit(old)
    assert calls <= 3 * 2000 + 1             # each node's range once


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 256), wide=st.booleans(), seed=st.integers(0, 2**31))
def test_expand_classes_is_the_full_table(n, k, wide, seed):
    # the class table read through each byte's class, as an int32 C-ordered table
    from stackmask.lexer.dfa import expand_classes
    rng = np.random.default_rng(seed)
    t = rng.integers(-1, n, size=(n, k)).astype(np.int64 if wide else np.int32)
    b2c = rng.integers(0, k, size=256)
    full = expand_classes(t, b2c)
    assert full.dtype == np.int32 and full.flags.c_contiguous and full.shape == (n, 256)
    assert all(full[q, b] == t[q, b2c[b]] for q in range(n) for b in range(256))
