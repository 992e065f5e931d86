"""Counted repetitions (:mod:`stackmask.lexer.counted`): a repetition far beyond the longest
token is compiled as a representative with stalls; the scanner keeps the exact count.

Checked: the lexer's language against Python's ``re`` at and around every bound, the
terminal automaton's size, and masks against the oracle (small vocabularies with long
tokens, and Qwen2.5 on JSON Schema strings with ``maxLength``/``minLength`` in the
thousands), fresh and loaded from the cache."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from stackmask import Constraint, Grammar, Vocab
from stackmask.lexer.counted import split_counted
from stackmask.lexer.terminal_dfa import compile_terminal

from conftest import accepts




def _vocab(extra=()) -> Vocab:
    toks = [bytes([b]) for b in range(256)] + [t.encode() for t in extra]
    return Vocab(toks + [None], eos_token_ids=[len(toks)], special_token_ids=[len(toks)])


def test_large_bounds_compile_small():
    # 65,535 iterations of a JSON string character: a few thousand states, not millions.
    # Count 0 and the K counts up to each bound have positions of their own; each run
    # between them is one stall owing its length - 1 iterations
    d = compile_terminal(r'"(?:[^"\\]|\\.){0,65535}"', band=129)
    assert d.counters and d.counters[1] == (65535 - 129 - 2,)
    assert d.n_states < 2600
    d = compile_terminal(r"a{20000}b", band=64)
    assert d.counters[1] == (20000 - 64 - 2,) and d.n_states < 150
    d = compile_terminal(r"a{1,20000}", band=64)       # counts 0 and 1 (lo) own positions
    assert d.counters[1] == (20000 - 64 - 3,)
    d = compile_terminal(r"x{3000,}", band=64)
    assert d.counters[1] == (3000 - 64 - 2,)
    d = compile_terminal(r"x{1000,3000}", band=64)      # two stalls: below 1000, below 3000
    assert d.counters[1] == (1000 - 64 - 2, 2000 - 64 - 2)
    # small bounds stay as written
    assert not compile_terminal(r"a{1,100}", band=64).counters
    # the largest JSON Schema integers as bounds (CloudFormation's maxLength: 2147483647):
    # the stalls are found from the counts near the bounds, not by stepping every count
    top = 2**31 - 1
    d = compile_terminal(r'"(?:[^"\\]|\\.){0,%d}"' % top, band=129)
    assert d.counters[1] == (top - 129 - 2,) and d.n_states < 2600
    d = compile_terminal(r"x{1000,%d}" % top, band=64)
    assert d.counters[1] == (1000 - 64 - 2, top - 1000 - 64 - 2)


def test_what_is_not_counted():
    assert split_counted(("r", ("c", ((97, 97),)), 0, 10), 64) is None
    # two large repetitions, or one nested in an alternation: expanded as written
    big = ("r", ("c", ((97, 97),)), 0, 500)
    assert split_counted(("s", (big, big)), 64) is None
    assert split_counted(("a", (big, ("c", ((98, 98),)))), 64) is None
    # iterations that are not a prefix code (``a|ab``) cannot be counted: expanded
    d = compile_terminal(r"(?:a|ab){0,200}c", band=64)
    assert not d.counters


GRAMMARS = [
    # (terminal regex, bounds of the counted part, its iterations to draw from, wrapper)
    (r'"(?:[^"\\]|\\["\\n]){300,700}"', (300, 700), ["x", "é", '\\"', "\\n", " "], '"{}"'),
    (r"a{1,400}", (1, 400), ["a"], "{}"),
    (r"(?:ab|c){200}d", (200,), ["ab", "c"], "{}d"),
    (r"<(?:[a-z]|é){150,}>", (150,), ["q", "é"], "<{}>"),
]


@pytest.mark.parametrize("regex,bounds,alphabet,wrap", GRAMMARS,
                         ids=["string", "plain", "exact", "unbounded"])
def test_lexer_language_is_exact_at_the_bounds(regex, bounds, alphabet, wrap):
    c = Constraint(f"start: T\nT: /{regex}/\n", _vocab(), cache_dir=False, progress=False)
    assert c.scanner.counted, "nothing counted: the test checks nothing"
    pat = re.compile(regex)
    rng = random.Random(7)
    lengths = sorted({max(0, b + d) for b in bounds for d in (-2, -1, 0, 1, 2)} | {1000})
    seen = set()
    for n in lengths:
        text = wrap.format("".join(rng.choice(alphabet) for _ in range(n)))
        ok = bool(pat.fullmatch(text))
        seen.add(ok)
        assert accepts(c, text) == ok, (regex, n)
    assert seen == {True, False}


def _walk(c: Constraint, texts, rng, check_every: int):
    """Commit each text token by token (random tokens whose bytes continue it) and compare
    masks with the oracle every ``check_every`` steps and on the last ones."""
    vocab = c.vocab
    by_first: dict = {}
    for i in range(vocab.size):
        b = vocab.token_bytes(i)
        if b and i not in vocab.eos_token_ids:
            by_first.setdefault(b[0], []).append((b, i))
    checked = 0
    for text in texts:
        data = text.encode()
        s = c.start()
        pos = 0
        step = 0
        while pos < len(data):
            fits = [(b, i) for b, i in by_first[data[pos]] if data.startswith(b, pos)]
            b, i = rng.choice(fits)
            s = c.commit(s, i)
            pos += len(b)
            step += 1
            if step % check_every == 0 or len(data) - pos < 12:
                assert np.array_equal(c.get_mask(s), c.reference_mask(s)), (text[:40], pos)
                checked += 1
    return checked


def test_masks_equal_the_oracle_small_vocab(tmp_path):
    # tokens up to 40 bytes: the band is the least one (64), counts far beyond it stall
    extra = ["a" * k for k in (2, 3, 5, 8, 13, 21, 40)] + ['a"', 'aa"', '"a', "é" * 7]
    v = _vocab(extra)
    g = 'start: "[" ITEM ("," ITEM)* "]"\nITEM: /"(?:a|é){130,600}"/\n'
    rng = random.Random(3)
    texts = ["[" + ",".join('"' + "".join(rng.choice("aaaé") for _ in range(n)) + '"'
                            for n in ns) + "]" for ns in [(130, 600), (131, 599, 300)]]
    for attempt in range(2):
        c = Constraint(g, v, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert c.scanner.counted
        assert _walk(c, texts, rng, 25) > 20
        assert not accepts(c, '["' + "a" * 601 + '"]') and not accepts(c, '["' + "a" * 129 + '"]')
        assert accepts(c, '["' + "a" * 600 + '","' + "é" * 130 + '"]')


@pytest.mark.parametrize("schema,texts", [
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 65535}},
      "required": ["s"]},
     ['{"s": "' + "Lorem ipsum dolor sit amet, \\u00e9\\n" * 40 + '"}']),
    ({"type": "object", "properties": {"s": {"type": "string", "minLength": 400, "maxLength": 700}},
      "required": ["s"]},
     ['{"s": "' + ("ab c\u00e9" * 200)[:400] + '"}', '{"s": "' + ("xyz \\\"" * 200)[:700] + '"}']),
    # two counted strings read together (one count for both)
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 1024},
                                       "t": {"type": "string", "minLength": 600, "maxLength": 4096}},
      "required": ["s", "t"]},
     ['{"s": "' + "word " * 204 + 'abcd", "t": "' + "é" * 600 + '"}']),
])
def test_schema_masks_equal_the_oracle(schema, texts, qwen_vocab, tmp_path):
    g = Grammar.from_json_schema(schema)
    rng = random.Random(11)
    for attempt in range(2):
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert c.scanner.counted
        assert _walk(c, texts, rng, 60) >= 10
        # configurations with iterations owed are aliases of compiled plain ones
        assert not c.compiled.dwa.budget_exhausted


def test_counted_strings_read_together_share_one_count():
    # four string terminals with different bounds on the same characters: one automaton
    # with one count (apart, the product pairs every stalled count of one with the other's)
    s = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 1024}, "b": {"type": "string", "maxLength": 4096},
        "c": {"type": "string", "minLength": 2000}, "e": {"type": "string", "maxLength": 65535}},
        "required": ["a", "b"]}
    c = Constraint(Grammar.from_json_schema(s), _vocab(), cache_dir=False, progress=False)
    assert c.scanner.dfa.n_states < 20_000 and len(c.scanner.dfa.counters[1]) == 4
    for a, b, e, ok in [(1024, 4096, 0, True), (1025, 0, 0, False), (0, 4097, 0, False),
                        (0, 0, 65535, True), (0, 0, 65536, False)]:
        text = f'{{"a": "{"x" * a}", "b": "{"y" * b}"' + (f', "e": "{"z" * e}"' if e else "") + "}"
        assert accepts(c, text) == ok, (a, b, e)
    for n, ok in [(1999, False), (2000, True)]:
        assert accepts(c, '{"a": "", "b": "", "c": "' + "é" * n + '"}') == ok


def test_schema_length_bounds_are_enforced(qwen_vocab):
    g = Grammar.from_json_schema({"type": "string", "minLength": 3000, "maxLength": 5000})
    c = Constraint(g, qwen_vocab, cache_dir=False, progress=False)
    for n, ok in [(2999, False), (3000, True), (4321, True), (5000, True), (5001, False)]:
        assert accepts(c, '"' + "é" * n + '"') == ok, n


# -- property: tiny bands, so that short strings cross every stall ---------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from stackmask.compile.tables import build_tables  # noqa: E402
from stackmask.compile import make_scanner  # noqa: E402
from stackmask.lexer.scanner import BOUNDARY_CONFIG  # noqa: E402

_BODIES = [("a", ["a"]), ("[ab]", ["a", "b"]), ("(?:ab|c)", ["ab", "c"]),
           ("(?:é|a)", ["é", "a"]), (r'(?:[^"\\]|\\.)', ["x", '\\"', "\\\\", "é"])]


@st.composite
def _counted_case(draw):
    body, units = draw(st.sampled_from(_BODIES))
    pre = draw(st.sampled_from(["", "<", "q"]))
    post = draw(st.sampled_from(["", ">", "z"]))
    lo = draw(st.integers(0, 14))
    hi = draw(st.one_of(st.none(), st.integers(lo, lo + 16)))
    if lo == 0 and not pre and not post:
        lo = 1                                # a terminal never matches the empty string
        hi = None if hi is None else max(hi, 1)
    band = draw(st.integers(1, 3))
    regex = f"{pre}{body}{{{lo},{'' if hi is None else hi}}}{post}"
    texts = []
    for _ in range(6):
        k = draw(st.integers(0, (hi if hi is not None else lo + 8) + 3))
        mid = "".join(draw(st.sampled_from(units)) for _ in range(k))
        texts.append(pre + mid + post)
    return regex, band, texts


def _scanner_accepts(sc, data: bytes) -> bool:
    """Whether the scanner reads ``data`` as one lexeme: it emits it at the last byte, or
    the lexeme pending after it is complete."""
    cfgs = {BOUNDARY_CONFIG}
    for i, b in enumerate(data):
        outs = [o for c in cfgs for o in sc.step(c, b)]
        if i == len(data) - 1 and any(em for em, _ in outs):
            return True
        cfgs = {c2 for em, c2 in outs if em is None}
        if not cfgs:
            return False
    return any(sc.final_emission(c) for c in cfgs)


@settings(max_examples=150, deadline=None)
@given(_counted_case())
def test_counted_language_equals_re(case):
    regex, band, texts = case
    d = compile_terminal(regex, band=band)
    sc = make_scanner(build_tables(f"start: T\nT: /{regex}/\n", band=band))
    pat = re.compile(regex)
    for text in texts:
        want = bool(pat.fullmatch(text))
        assert bool(d.fullmatch(text.encode())) == want, (regex, band, text)
        assert _scanner_accepts(sc, text.encode()) == want, (regex, band, text)


def _every_step(c: Constraint, text: str, tokens) -> int:
    """Commit ``text`` in the given token strings, comparing masks with the oracle before
    each; returns the steps compared."""
    ids = {c.vocab.token_bytes(i): i for i in range(c.vocab.size) if c.vocab.token_bytes(i)}
    s = c.start()
    done = 0
    for t in tokens:
        assert np.array_equal(c.get_mask(s), c.reference_mask(s)), (done, t[:20])
        s = c.commit(s, ids[t.encode()])
        done += 1
    assert "".join(tokens) == text
    return done


def test_a_length_met_with_a_pattern_keeps_the_room_the_pattern_needs(tmp_path):
    # maxLength 300 beside an unanchored pattern that needs 36 letters: a token of 50
    # blanks read from the length's stall must leave room for them. The stall's state
    # stands for all its counts, so the chain keeps the counts within the band plus what
    # the pattern may still need of the upper bound as positions (counted.reach_for)
    v = _vocab([" " * 50, " " * 60, "a" * 36, " " * 10])
    s = {"type": "string", "pattern": "[a-z]{36}", "minLength": 1, "maxLength": 300}
    c = Constraint(Grammar.from_json_schema(s), v, cache_dir=tmp_path, progress=False)
    for n in (60, 120, 200, 254, 264):
        blanks = [" " * 50] * (n // 50) + [" " * 10] * (n % 50 // 10) + [" "] * (n % 10)
        text = '"' + " " * n + "a" * 36 + '"'
        assert _every_step(c, text, ['"'] + blanks + ["a" * 36, '"']) > 3
    # 265 blanks leave no room for the 36 letters: another blank is masked out
    st = c.start()
    for t in ['"'] + [" " * 50] * 5 + [" " * 10] + [" "] * 4:
        st = c.commit(st, next(i for i in range(v.size) if v.token_bytes(i) == t.encode()))
    m = c.get_mask(st)
    assert np.array_equal(m, c.reference_mask(st))
    bits = np.unpackbits(m.view(np.uint8), bitorder="little")
    assert not bits[ord(" ")] and bits[ord("a")]


def test_a_length_met_with_a_bounded_pattern_keeps_its_lower_bound_exact(tmp_path):
    # minLength 300 beside a pattern whose letters end it (at most 40): a token of 55
    # blanks and 3 letters read from the stall below 300 would seem to leave the letters
    # room to reach the bound if the stall read as its last count; they cannot
    v = _vocab([" " * 55 + "abc", " " * 50, "a" * 30])
    s = {"type": "string", "pattern": "^ *[a-z]{1,40}$", "minLength": 300, "maxLength": 1000}
    c = Constraint(Grammar.from_json_schema(s), v, cache_dir=tmp_path, progress=False)
    text = '"' + " " * 280 + "a" * 30 + '"'
    assert _every_step(c, text, ['"'] + [" " * 50] * 5 + [" "] * 30 + ["a" * 30, '"']) > 30
    text = '"' + " " * 300 + "a" * 30 + '"'
    assert _every_step(c, text, ['"'] + [" " * 50] * 6 + ["a" * 30, '"']) > 5


# --- a chain's copies from x's minimized automaton ---------------------------------------

def _canonical(d) -> tuple:
    """The automaton ``d`` (with its counters and chain arrays) numbered breadth first
    from its start, rewinds read as moves: equal for the same automaton however built."""
    trans = np.asarray(d.trans)
    extra = np.asarray(d.counters[2]) if d.counters else np.zeros((len(trans), 0), int)
    idx, order = {0: 0}, [0]
    for x in order:
        for y in trans[x].tolist() + extra[x].tolist():
            if y >= 0 and y not in idx:
                idx[y] = len(idx)
                order.append(y)
    m = np.array([idx.get(k, -1) for k in range(len(trans))])

    def mp(a):
        a = np.asarray(a)[order]
        return np.where(a >= 0, m[np.maximum(a, 0)], a).tolist()
    out = [len(trans), mp(trans), [sorted(d.accepts[k]) for k in order]]
    if d.counters:
        out += [d.counters[0], d.counters[1], mp(d.counters[2]),
                np.asarray(d.counters[3])[order].tolist()]
    if d.chains:
        out += [np.asarray(a)[order].tolist() for a in d.chains[:5]] + [repr(d.chains[5])]
    return tuple(repr(x) for x in out)


_JSON_CHAR = (r'(?:[\x20\x21\x23-\x5b\x5d-\ud7ff\ue000-\U0010ffff]|\\(?:[btnfr"/\\]|'
              r'u[0-9a-fA-F]{4}))')


@pytest.mark.parametrize("regex,band", [
    ('"' + _JSON_CHAR + '{0,300}"', 64),
    ('"' + _JSON_CHAR + '{0,300}"', 129),
    ('"' + _JSON_CHAR + '{5,160}" ?:', 64),
    ('"' + _JSON_CHAR + '{5000,}"', 129),
    ("[a-z]{1,400}x", 64),
    ("(?:ab|c){200,900}", 64),
    ("(?:é|[\u4e00-\u9fff]){1,500}", 100),
])
def test_chain_copies_are_the_thompson_chain(monkeypatch, regex, band):
    """A chain's copies of ``x`` come from ``x``'s minimized automaton: the counted
    terminal is the very automaton (counters, chain arrays) the Thompson copies of ``x``
    make."""
    from stackmask.lexer import counted, terminal_dfa
    from stackmask.lexer.ir import thompson
    from stackmask.lexer.regex import utf8_leaf

    terminal_dfa.clear_cache()
    got = compile_terminal(regex, band=band)
    assert got.counters or got.chains

    def thompson_copy(nfa, body, cur):
        return thompson(body, nfa, cur, utf8_leaf(nfa))

    groups = []
    real = counted.counted_group

    def spy(members, *a, **k):
        groups.append(members[0][1])
        return real(members, *a, **k)
    monkeypatch.setattr(counted, "_copy_template", lambda steps: None)
    monkeypatch.setattr(terminal_dfa, "counted_group", spy)
    body = (split_counted(_ir(regex), band) or split_counted(_ir(regex), band, True))[1]
    monkeypatch.setattr(counted, "_copy", lambda nfa, template, cur: thompson_copy(nfa, body, cur))
    terminal_dfa.clear_cache()
    want = compile_terminal(regex, band=band)
    terminal_dfa.clear_cache()
    assert groups and groups[0] == body
    assert _canonical(got) == _canonical(want)


def _ir(regex):
    from stackmask.lexer.regex import ByteNFA, regex_ir
    return regex_ir(regex, ByteNFA("", 1, regex))
