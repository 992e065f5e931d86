"""``minLength``/``maxLength`` beside a ``pattern`` whose length-limited regex would be too
large: the converter keeps the pattern and the length apart (``ecma_regex.limited``: an
``"L"`` node), the terminal spells the length as a lookahead, and the lexer intersects the
two automata (``lexer.terminal_dfa._lookahead_dfa``), counting long repetitions. The language is
checked against the ``jsonschema`` validator at and around every bound, with escapes and
astral characters (one character each), and masks equal the reference oracle with the real
Qwen2.5 vocabulary."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask import Constraint, Grammar
from stackmask.errors import GrammarError
from stackmask.grammars import ecma_regex as R
from stackmask.grammars.json_schema import convert_schema
from stackmask.lexer.terminal_dfa import compile_terminal
from test_counted import _walk
from test_json_schema import BYTES, accepts, check, constraint, jsonschema_valid

HOST = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"
ARN = r"^arn:[\w+=/,.@-]+:[\w+=/,.@-]+:([\w+=/,.@-]*)?:[0-9]+:[\w+=/,.@-]+$"


def _limited_schema(pattern, lo=None, hi=None):
    s = {"type": "string", "pattern": pattern}
    if lo is not None:
        s["minLength"] = lo
    if hi is not None:
        s["maxLength"] = hi
    return s


def _uses_lookahead(schema) -> bool:
    sg = convert_schema(schema, strict=True)
    return any("(?=" in t.regex for t in sg.grammar.terminals if getattr(t, "regex", None))


def _agrees(c, schema, value: str, ensure_ascii=True):
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    want = jsonschema_valid(schema, text)
    if want is None:
        want = bool(re.search(_py(schema["pattern"]), value)) and \
            schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 10 ** 9)
    assert accepts(c, text) == want, (schema, len(value), text[:60])
    return want


def _py(pattern: str) -> str:
    return pattern.replace("\\p{L}", "a-zA-Z")


CASES = [
    # (pattern, minLength, maxLength, a generator of strings of a given length that match
    # the pattern when the length allows it, whether the length is a lookahead: else the
    # pattern cut to what must match is small enough to limit as a regex)
    ("^[a-z]+-[a-z]+$", 3, 300, lambda n, r: "a" * max(1, n // 2) + "-" + "b" * max(1, n - n // 2 - 1), True),
    (".*", 0, 4096, lambda n, r: "".join(r.choice("ab é\u00e9\U0001F600") for _ in range(n)), False),
    ("^https://.*", 1, 8192, lambda n, r: "https://" + "x" * max(0, n - 8), False),
    ("^(https|s3)://([^/]+)/?(.*)$", 0, 1024, lambda n, r: "s3://b/" + "k" * max(0, n - 7), True),
    (HOST, 1, 63, lambda n, r: "a" + "-a" * ((n - 1) // 2) + ("b" if n % 2 == 0 else ""), True),
    (ARN, 20, 2048, lambda n, r: "arn:aws:s3::1:" + "k" * max(1, n - 14), True),
    ("^[a-z]+(-[a-z]+)*$", 200, None, lambda n, r: "-".join("ab" for _ in range(max(1, (n + 1) // 3)))[:max(1, n)], True),
    # the length written into the regex (.{1,2017} then the suffix) is a repetition the lexer
    # cannot count (the suffix reads what it reads): kept apart as a lookahead instead
    ("^.+/\\.well-known/openid-configuration$", 1, 2048,
     lambda n, r: "h/" * max(0, (n - 33) // 2) + "x" * max(1, (n - 33) % 2) + "/.well-known/openid-configuration", True),
]


@pytest.mark.parametrize("pattern,lo,hi,make,lookahead", CASES)
def test_length_beside_pattern_is_exact(pattern, lo, hi, make, lookahead):
    schema = _limited_schema(pattern, lo, hi)
    assert _uses_lookahead(schema) == lookahead
    c = constraint(schema)
    r = random.Random(7)
    seen = set()
    top = (hi if hi is not None else lo) + 3
    for n in sorted({0, 1, 2, 3, lo - 1, lo, lo + 1, top - 4, top - 3, top - 2, 37}):
        if n < 0:
            continue
        v = make(n, r)
        seen.add(_agrees(c, schema, v))
        seen.add(_agrees(c, schema, v, ensure_ascii=False))
    assert seen == {True, False}


def test_characters_count_once_however_spelled():
    schema = _limited_schema(".*é.*", 3, 500)
    assert _uses_lookahead(schema)
    c = constraint(schema)
    for v, ok in (("é\U0001F600\U0001F600", True), ("é\U0001F600", False), ("a" * 499 + "é", True),
                  ("a" * 500 + "é", False), ("\U0001F600" * 499 + "é", True)):
        for ascii_ in (True, False):
            assert accepts(c, json.dumps(v, ensure_ascii=ascii_)) == ok, (len(v), ascii_)
    # a surrogate pair escape is one character, a lone one none
    assert accepts(c, '"\\u00e9\\ud83d\\ude00\\ud83d\\ude00"')
    assert not accepts(c, '"\\u00e9\\ud83d\\ude00"')


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "-", "é", "\U0001F600", '"', "\\"]), min_size=0, max_size=40),
       st.integers(1, 6), st.integers(0, 40))
def test_random_strings_agree_with_jsonschema(chars, lo, span):
    schema = _limited_schema("^[^-]+(-[^-]+)*$", lo, lo + span)
    c = _cached_constraint(lo, lo + span)
    v = "".join(chars)
    text = json.dumps(v)
    assert accepts(c, text) == jsonschema_valid(schema, text), (v, lo, lo + span)


_CACHE: dict = {}


def _cached_constraint(lo, hi):
    c = _CACHE.get((lo, hi))
    if c is None:
        c = _CACHE[(lo, hi)] = constraint(_limited_schema("^[^-]+(-[^-]+)*$", lo, hi))
    return c


def test_impossible_length_makes_the_string_impossible():
    # a pattern of exactly 12 digits cannot have 13..5000 characters
    s = {"type": "object", "properties": {"a": _limited_schema("^[0-9]{12}$|^[a-z]+-[a-z]+-[a-z]+$", 13, 5000),
                                          "b": {"type": "integer"}}}
    c = constraint(s)
    assert accepts(c, '{"a": "ab-cd-efghijk"}')
    assert not accepts(c, '{"a": "123456789012"}')


def test_union_of_limited_strings_is_written_out_or_reported():
    # below the top of a string language (a union) a length beside a pattern must be a
    # regex: small ones are written out, exact; a large one is reported by name
    small = {"anyOf": [_limited_schema("^[a-z]+-[a-z]+$", 3, 12), {"type": "string", "format": "date"}]}
    c = constraint(small)
    assert accepts(c, '"ab-c"') and accepts(c, '"2020-01-02"')
    assert not accepts(c, '"abcdef-ghijkl"') and not accepts(c, '"a-"')
    # too large to write out: terminals of their own where they share no string (a date
    # has no letters), else reported
    large = {"anyOf": [_limited_schema("^[a-z]+-[a-z]+$", 3, 300), {"type": "string", "format": "date"}]}
    c = constraint(large)
    assert accepts(c, json.dumps("a" * 150 + "-" + "b" * 149)) and accepts(c, '"2020-01-02"')
    assert not accepts(c, json.dumps("a" * 150 + "-" + "b" * 150)) and not accepts(c, '"a-"')
    overlapping = {"anyOf": [_limited_schema("^[a-z]+-[a-z]+$", 3, 300), _limited_schema("^a", 1, 290)]}
    with pytest.raises(GrammarError, match="maxLength at #: a length beside a pattern in a union"):
        convert_schema(overlapping, strict=True)
    sg = convert_schema(overlapping, strict=False)
    assert any("maxLength" in w for w in sg.warnings)


def test_the_lexer_reads_a_lookahead_as_an_intersection():
    d = compile_terminal('"(?=(?:[^"\\\\]|\\\\.){2,400}")[a-z]+(?:-[a-z]+)*"', band=64)
    assert d.counters                              # 2..400 is counted with a stall
    for body, ok in (("ab", True), ("a", False), ("a" * 400, True), ("a" * 401, False),
                     ("a-" * 199 + "a", True), ("a-" * 200 + "a", False), ("-ab", False)):
        q = d.run(('"' + body + '"').encode())
        assert (q >= 0 and bool(d.accepts[q])) == ok, (len(body), ok)


@pytest.mark.parametrize("regex", ["a(?=b)", "(?=[a-z]*x)[a-z]+x", "x(?=[a-z]*!)[a-z!]*"])
def test_a_lookahead_that_may_read_past_the_lexeme_is_refused(regex):
    with pytest.raises(GrammarError, match="past the end of the lexeme"):
        compile_terminal(regex)


@pytest.mark.parametrize("regex", ["(a(?=b))*b", "a|(?=b)b", "(?=b)b(?!c)c", "(?=(?=b)b)b",
                                   "x(?=[a-z])[a-z](?!q)[a-z]"])
def test_lookaheads_elsewhere_are_refused(regex):
    with pytest.raises(GrammarError, match="lookahead"):
        compile_terminal(regex)


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="ab-", max_size=14), st.integers(2, 6), st.integers(0, 8))
def test_lexer_lookahead_agrees_with_re(body, lo, span):
    rx = '"(?=[^"]{%d,%d}")(?:[ab]+-[ab]*)"' % (lo, lo + span)
    d = compile_terminal(rx, band=64)
    q = d.run(('"' + body + '"').encode())
    assert (q >= 0 and bool(d.accepts[q])) == (re.fullmatch(rx, '"' + body + '"') is not None)


def test_limited_nodes_in_the_regex_algebra():
    p = R.parse_pattern("^[a-z]+-[a-z]+$")
    x = R.limited(p, 3, 300)
    assert x[0] == "L" and R.length_range(x) == (3, 300)
    assert R.fullmatch(x, "a" * 150 + "-" + "b" * 149) and not R.fullmatch(x, "a" * 150 + "-" + "b" * 150)
    assert not R.is_empty(x) and R.is_empty(R.limited(R.parse_pattern("^[0-9]{12}$"), 13, 5000))
    assert R.limited(R.parse_pattern("^[a-z]*$"), 0, 300)[0] != "L"   # small: a regex
    assert R.is_subset(x, p) and not R.is_subset(p, x)
    with pytest.raises(ValueError):
        R.to_python(R.alt(x, R.lit("zz")))       # below the top it must be written out first
    with pytest.raises(R.TooComplex):
        R.resolve_limits(R.alt(x, R.lit("zz")))


def test_limited_strings_masks_equal_the_oracle(qwen_vocab, tmp_path):
    s = {"type": "object", "properties": {
        "name": _limited_schema("^[a-z]+-[a-z]+$", 3, 200),
        "host": _limited_schema(HOST, 1, 63)}, "required": ["name", "host"]}
    assert _uses_lookahead(s)
    rng = random.Random(11)
    texts = []
    for n, m in ((1, 0), (98, 101), (120, 79), (3, 31)):
        host = "a" + "-b" * m if 2 * m + 1 <= 63 else "a" * 63
        texts.append(json.dumps({"name": "q" * n + "-" + "z" * (200 - n - 1 - (rng.random() < 0.5)),
                                 "host": host}, ensure_ascii=bool(n % 2)))
    g = Grammar.from_json_schema(s)
    for attempt in range(2):
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert not c.compiled.dwa.budget_exhausted
        assert _walk(c, texts, rng, 9 if attempt == 0 else 40) >= 15


def test_a_lookahead_has_no_nfa_of_its_own():
    from stackmask.lexer.regex import regex_to_nfa
    with pytest.raises(GrammarError, match="no NFA of its own"):
        regex_to_nfa('"(?=[^"]{1,3}")a+"')


def _combined_agrees(terms, samples, band=64):
    from stackmask.lexer.combined import compile_lexer
    d = compile_lexer(terms, band=band)
    for s in samples:
        q = d.run(s.encode())
        got = frozenset() if q < 0 else d.accepts[q]
        want = frozenset(i for i, t in enumerate(terms) if re.fullmatch(t.regex, s, re.S))
        assert got == want, (s[:20], len(s), got, want)
    return d


def test_lookahead_terminals_share_one_count():
    # three lengths beside patterns, all counted with stalls at band 64: their lookahead
    # sides are one chain (apart, the product paired every count at which one stalls
    # with every count of the others: past 100,000 states)
    from stackmask.grammar import TerminalDef
    terms = [TerminalDef(name=f"S{i}", regex='"(?=[^"]{%d,%d}")[a-z%d]*"' % (i * 3, 300 + i * 150, i))
             for i in range(4)]
    terms.append(TerminalDef(name="PLAIN", regex='"[^"]{2,700}"'))
    terms.append(TerminalDef(name="KEY", regex='"ab":'))
    rng = random.Random(4)
    samples = ['"ab":', '"ab"', '""']
    for n in (0, 1, 2, 3, 5, 6, 9, 299, 300, 301, 449, 450, 451, 599, 600, 601, 749, 750, 751, 700, 701):
        for alpha in ("ab", "ab0", "ab1", "ab3", "a-"):
            samples.append('"' + "".join(rng.choice(alpha) for _ in range(n)) + '"')
    d = _combined_agrees(terms, samples)
    assert d.counters and d.n_states < 20_000


def test_a_product_too_large_names_its_terminals():
    from stackmask.grammar import TerminalDef
    from stackmask.lexer.combined import compile_lexer
    # unanchored patterns counted apart from each other: their states pair up
    terms = [TerminalDef(name=f"W{i}", regex='"(?:[^"]*%s[^"]*){%d}"' % ("xyzuvw"[i], 2 + i),
                         source=f"#/properties/w{i}") for i in range(6)]
    with pytest.raises(GrammarError, match=r"largest terminal automata: W\d \(#/properties/w\d\)"):
        compile_lexer(terms, band=64)


TAG = "^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$"      # CloudFormation's Tag.Value


def test_wide_class_beside_a_length_is_spelled_raw_beyond_ascii():
    # each character of the class is hundreds of lexer states in its \uXXXX spellings,
    # times 256 counts: over the lexer's limit. The policy keeps the length and the class
    # exact and spells characters beyond ASCII raw only (as ensure_ascii=False does)
    schema = _limited_schema(TAG, None, 256)
    sg = convert_schema(schema, strict=True)
    assert any("raw only" in w and "#" in w for w in sg.warnings), sg.warnings
    c = Constraint(sg.grammar, BYTES, ambiguous=sg.ambiguous)
    r = random.Random(5)
    alpha = "aZ09 _.:/=+-@éЖ中\u3000\U00010400"      # letters, numbers, separators of the class
    for n in (0, 1, 2, 37, 255, 256, 257, 300):
        v = "".join(r.choice(alpha) for _ in range(n))
        ok = n <= 256
        assert accepts(c, json.dumps(v, ensure_ascii=False)) == ok, n
        # the escaped spelling of a value beyond ASCII: rejected by the policy
        assert not accepts(c, json.dumps("é" + v[:200], ensure_ascii=True))
    # "/" raw only too, as json.dumps writes it; the escapes JSON needs stay
    assert accepts(c, '"a/b"')
    assert not accepts(c, '"a\\/b"') and not accepts(c, '"a\\u002fb"')
    for bad in ("a!b", "a\u00a7", "tab\there"):             # outside the class
        assert not accepts(c, json.dumps(bad, ensure_ascii=False))
    raw_quote = convert_schema(_limited_schema('^[\\p{L}"\\\\/]*$', None, 256), strict=True)
    assert any("raw only" in w for w in raw_quote.warnings), raw_quote.warnings
    cq = Constraint(raw_quote.grammar, BYTES, ambiguous=raw_quote.ambiguous)
    assert accepts(cq, json.dumps('a"b\\c/dé', ensure_ascii=False))   # " and \ escaped
    # a class whose escape spellings fit keeps them
    small = convert_schema(_limited_schema("^[a-zé]*$", None, 256), strict=True)
    assert not any("raw only" in w for w in small.warnings)
    assert accepts(constraint(_limited_schema("^[a-zé]*$", None, 256)), json.dumps("aé" * 100))


def _check_values(schema, c, doc, ok, bad):
    """The documents ``doc(v)`` of the values ``ok`` are valid and accepted, those of ``bad``
    invalid and rejected (the validator where it can tell)."""
    for v in ok:
        assert jsonschema_valid(schema, doc(v)) in (True, None), len(v)
        assert accepts(c, doc(v)), len(v)
    for v in bad:
        assert jsonschema_valid(schema, doc(v)) in (False, None), len(v)
        assert not accepts(c, doc(v)), len(v)


#: CloudFormation's License Manager ARN: an unbounded partition name, three counted
#: segments and a last one of up to 1,024 characters that read "/"
LM_ARN = ("^arn:aws[a-zA-Z-]*:[A-Za-z0-9][A-Za-z0-9_/.-]{0,62}:[A-Za-z0-9_/.-]{0,63}:"
          "[A-Za-z0-9_/.-]{0,63}:[A-Za-z0-9][A-Za-z0-9:_/+=,@.-]{0,1023}$")


def test_an_arn_with_long_segments_beside_a_length_is_spelled_raw(qwen_vocab, tmp_path):
    # the length and the last segment count the same characters; with "\/" and "\u002f"
    # at each position of both, their product passes the lexer's limit. Spelled as
    # json.dumps writes it ("/" raw) it fits, and both bounds stay exact
    schema = {"type": "object", "properties": {"arn": _limited_schema(LM_ARN, None, 2048)},
              "required": ["arn"], "additionalProperties": False}
    sg = convert_schema(schema, strict=True)
    assert any("raw only" in w and "#/properties/arn" in w for w in sg.warnings), sg.warnings
    c = Constraint(sg.grammar, qwen_vocab, cache_dir=tmp_path, progress=False)
    assert not c.compiled.dwa.budget_exhausted

    def doc(v):
        return json.dumps({"arn": v})
    base = "arn:aws:license-manager:us-east-1:123456789012:"
    ok = [base + "license/l-" + "a" * 30, base + "x" * 1024,      # the segment's bound
          "arn:aws" + "-" * 900 + ":s:r:a:" + "b" * 1024,          # 1,938 characters
          "arn:aws" + "-" * 1010 + ":s:r:a:" + "b" * 1024]         # 2,048: the length's bound
    bad = [base + "x" * 1025,                                       # the segment's bound + 1
           "arn:aws" + "-" * 1011 + ":s:r:a:" + "b" * 1024,         # 2,049 characters
           "arn:aws:s::" + "b"]                                     # a segment missing
    _check_values(schema, c, doc, ok, bad)
    assert not accepts(c, doc(base + "license/l-1").replace("/", "\\/"))   # the policy
    rng = random.Random(4)
    assert _walk(c, [doc(ok[0]), doc(ok[3])], rng, 23) >= 10


def test_raw_spelling_is_chosen_for_the_largest_band():
    # a length counted with stalls: with escapes it fits the least band's 64 positions per
    # bound but not a vocabulary with tokens of 255 bytes (more positions); raw it fits both
    schema = _limited_schema(TAG, None, 600)
    sg = convert_schema(schema, strict=True)
    assert any("raw only" in w for w in sg.warnings), sg.warnings
    (t,) = [t for t in sg.grammar.terminals if t.name.startswith("STR")]
    assert "\\\\u" not in t.regex.replace("\\\\u00", "")      # no \uXXXX beyond ASCII
    for band in (64, 129, 256):
        assert compile_terminal(t.regex, band=band).counters


def test_a_raw_spelled_length_counts_on_the_chain_of_the_others():
    # the length side of a raw-spelled string counts characters in every spelling, as the
    # other strings' do: one body, so the combined lexer counts them on one chain
    from stackmask.lexer.terminal_dfa import lookahead_parts
    s = {"type": "object", "properties": {"v": _limited_schema("^[\\p{L}]+(-[\\p{L}]+)*$", None, 150),
                                          "w": _limited_schema(ARN, 20, 2048)}}
    sg = convert_schema(s, strict=True)
    assert sum("raw only" in w for w in sg.warnings) == 1
    sides = [lookahead_parts(t.regex, 129) for t in sg.grammar.terminals if "(?=" in t.regex]
    assert len(sides) == 2 and all(p is not None for p in sides)
    (pa, xa), (pb, xb) = [(p[0][0], p[0][1]) for p in sides]
    assert pa == pb and xa == xb


def test_the_largest_integer_as_a_length_bound():
    # maxLength: 2**31 - 1 (CloudFormation writes it): converted in well under a second,
    # counted like any long bound
    s = {"type": "object", "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 2**31 - 1},
                                          "id": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 2**31 - 1}}}
    check(s, ['{"name": "ab"}', json.dumps({"name": "x" * 300, "id": "abc"})],
          ['{"name": "a"}', '{"id": "aB"}', '{"id": ""}'])


def test_a_length_that_would_blow_up_a_written_out_difference_stays_a_lookahead():
    # CloudFormation's RDS tag: a difference of wide Unicode classes written out is small in
    # nodes, but the length written into it repeated each class at every count (6.9 MB of
    # regex text at maxLength 128; 20 s of parsing per terminal): the length stays a
    # lookahead the lexer meets
    x = R.parse_pattern(r"^(?!aws:|rds:)[\p{L}\p{Z}\p{N}_. :/=+\-@]+$")
    y = R.limited(x, 1, 128)
    assert y[0] == "L" and len(R.to_json_string(y, False)) < 400_000
    for s, ok in (("a" * 128, True), ("a" * 129, False), ("aws:x", False), ("aws-x", True),
                  ("é" * 128, True), ("", False), ("rds:", False)):
        assert R.fullmatch(y, s) == ok, (s[:10], len(s))
    check({"type": "string", "pattern": r"^(?!aws:|rds:)[\p{L}\p{Z}\p{N}_. :/=+\-@]+$", "maxLength": 128},
          valid=['"aws-x"', json.dumps("a" * 128), json.dumps("é" * 128, ensure_ascii=False)],
          invalid=['"aws:x"', '""', json.dumps("a" * 129)], validator=False)
    assert R.limited(R.parse_pattern("^[a-z]+$"), 1, 128)[0] != "L"     # small: a regex


#: CloudFormation's IAM role ARN (Transcribe): at most 1,113 characters, at least 19
ROLE_ARN = (r"^arn:(aws|aws-cn|aws-us-gov|aws-iso-{0,1}[a-z]{0,1}):iam::[0-9]{0,63}:role/"
            r"[A-Za-z0-9:_/+=,@.-]{0,1024}$")


def test_a_bound_the_pattern_implies_is_dropped():
    p = R.parse_pattern(ROLE_ARN)
    assert R.length_range(p) == (19, 1113)
    assert R.limited(p, 20, 2048) == ("L", p, 20, None)     # only the lower bound is left
    assert R.limited(p, 19, 2048) is p and R.limited(p, 0, 1113) is p
    x = R.parse_pattern("^[a-z]{3,}-[0-9]+$")
    y = R.limited(x, 6, 2048)
    assert y[0] == "L" and y[2:] == (6, 2048)               # neither implied: both kept
    assert R.limited(x, 5, None) is x                        # 5 is implied: nothing left
    assert R.unimplied_bounds(p, 19, 1113) == (0, None) and R.unimplied_bounds(x, 7, 9) == (7, 9)


def test_a_length_beside_a_pattern_bounded_below_it_compiles(qwen_vocab, tmp_path):
    # maxLength 2048 beside a pattern of at most 1,113 characters says nothing; paired with
    # the pattern's counted segments it made an automaton over the lexer's limit. Only
    # minLength 20 (one more than the pattern's least) is paired with the pattern now
    schema = {"type": "object", "properties": {"role": _limited_schema(ROLE_ARN, 20, 2048)},
              "required": ["role"], "additionalProperties": False}
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=tmp_path, progress=False)
    assert not c.compiled.dwa.budget_exhausted

    def doc(v):
        return json.dumps({"role": v})
    ok = ["arn:aws:iam:::role/x", "arn:aws:iam::123456789012:role/service-role/a",
          "arn:aws-us-gov:iam::" + "1" * 63 + ":role/" + "a" * 1024]       # 1,113: the most
    bad = ["arn:aws:iam:::role/",                                          # 19 < minLength
           "arn:aws:iam::" + "1" * 64 + ":role/x",                         # a segment's bound
           "arn:aws:iam:::role/" + "a" * 1025]
    _check_values(schema, c, doc, ok, bad)
    rng = random.Random(5)
    assert _walk(c, [doc(v) for v in ok], rng, 17) >= 10


def test_a_lexer_too_large_names_pointers_and_keywords():
    # the refusal names each large terminal's pointer and the string keywords there
    from stackmask import LexerTooLarge
    from stackmask.limits import Limits
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "pattern": TAG, "maxLength": 60},
        "b": {"type": "string", "format": "email"}, "c": {"type": "integer"}}}
    g = Grammar.from_json_schema(schema)
    with pytest.raises(LexerTooLarge) as ei:
        Constraint(g, BYTES, cache_dir=False, limits=Limits(max_lexer_states=2000))
    assert "(#/properties/a (pattern, maxLength))" in str(ei.value), str(ei.value)


@pytest.mark.parametrize("lo,hi", [(0, 0), (0, 128), (0, 256), (128, 256), (129, 257), (1, 129),
                                   (200, 10_000), (5000, None), (0, 65_535), (65_535, 65_535),
                                   (1000, 1129), (3, 2_147_483_647)])
def test_a_length_alone_always_fits_the_lexer(lo, hi):
    """The converter builds no automaton to check a string with a length and nothing else
    (``StringsMixin.string_lang``): its chain always fits, with room for the escape
    spellings at four times the states (where :meth:`lexable` would spell them raw)."""
    from stackmask.lexer.counted import DEFAULT_BAND, MIN_BAND
    from stackmask.lexer.dfa import MAX_DFA_STATES
    # the converter's spelling of a string language (EmitMixin.string_regex), escapes included
    regex = '"(?:' + R.to_json_string(R.rep(R.ANY, lo, hi), True) + ')"'
    for band in (MIN_BAND, DEFAULT_BAND):
        d = compile_terminal(regex, band=band)
        assert 4 * d.n_states <= MAX_DFA_STATES, (lo, hi, band, d.n_states)
    schema = {"type": "string", "minLength": lo, **({} if hi is None else {"maxLength": hi})}
    assert regex in {t.regex for t in Grammar.from_json_schema(schema).lexed_terminals}
