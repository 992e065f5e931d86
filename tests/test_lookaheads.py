"""Lookaheads too large to write out as a regex (``("X", body, looks)`` nodes of the regex
IR: ``ecma_regex.looking``): the ECMA front end keeps them as lookaheads at the top of a
string's language, the terminal spells them as ``(?=...")``/``(?!...")`` after its opening
quote, and the lexer intersects (subtracts) the automata (``lexer.terminal_dfa._lookahead_dfa``,
``lexer.dfa.difference``). Checked against Python's ``re`` (the patterns' semantics), the
``jsonschema`` validator, and masks against the reference oracle with Qwen2.5."""

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
from stackmask.limits import deep_recursion
from test_counted import _walk
from test_json_schema import check, jsonschema_valid

# CloudFormation resource schemas' patterns whose lookaheads, written out as a regex, pass
# the front end's size limit (each was refused as "lookahead too complex")
PASSWORD = r"^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[a-zA-Z\d\S]{8,64}$"
NOT_BLANK = r"^(?!\s*$).{1,256}$"
TAG_VALUE = r"^(?!aws:)(?!memorydb:)[a-zA-Z0-9 _\.\/=+:\-@]{1,256}$"
EMAIL = r"(?=^.{0,265}$)[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,63}"
# lookbehinds before the final '$' too large to write out: lookaheads over the whole string
TRIMMED = r"^(?!\s).{1,256}(?<!\s)$"
NO_DOUBLE_DASH_END = r"^[a-z0-9-]{1,300}(?<!--)$"
# an alternative with a lookahead beside plain ones: one node over the union (lookaheads
# widened by the plain ones; CloudFormation's ServiceDiscovery name)
SERVICE_NAME = (r"^((?=^.{1,127}$)^([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])"
                r"(\.([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9]))*$)|(^\.$)$")
PATTERNS = [PASSWORD, NOT_BLANK, TAG_VALUE, EMAIL, TRIMMED, NO_DOUBLE_DASH_END, SERVICE_NAME,
            r"^(?!\s*$).{1,256}$|^x$", r"^x(?=.{0,5}$)(?!.*q)[a-z]+$"]
ALPHA = "aAbq1 9x:-@.\t\nzZé\"\\"


def _sample(rng: random.Random) -> str:
    n = rng.choice([0, 1, 2, 3, 5, 8, 9, 12, 30, 64, 65, 127, 128, 129, 256, 257, 270])
    pre = rng.choice(["", "aws:", "memorydb:", "x", "Ab1", "a@b.cd", ".", "ab.c-d.e_"])
    return pre + "".join(rng.choice(ALPHA) for _ in range(n))


def _search(pattern: str, s: str) -> bool:
    # ECMA's '$' is the end of the input; Python's also matches before a final newline
    return re.search(_ends_input(pattern), s) is not None


def _ends_input(pattern: str) -> str:
    """``pattern`` with each ``$`` outside character classes as ``\\Z``."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        out.append("\\Z" if c == "$" and not in_class else c)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_keep_their_lookaheads_and_match_as_re(pattern):
    x = R.parse_pattern(pattern)
    if pattern != PATTERNS[-1]:
        assert x[0] == "X", pattern        # kept as lookaheads, not written out
    rng = random.Random(3)
    with deep_recursion():          # (written-out differences nest once per length)
        for _ in range(600):
            s = _sample(rng)
            want = _search(pattern, s)
            assert R.fullmatch(x, s) == want, (pattern, s)
            assert R.re_fullmatch(x, s) == want, (pattern, s)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_lexer_reads_them_exactly(pattern):
    x = R.parse_pattern(pattern)
    with deep_recursion():
        d = compile_terminal('"(?:' + R.to_json_string(x) + ')"', band=64)
    rng = random.Random(5)
    for _ in range(400):
        s = _sample(rng)
        want = _search(pattern, s)
        for spelled in (json.dumps(s), json.dumps(s, ensure_ascii=False)):
            q = d.run(spelled.encode())
            assert (q >= 0 and bool(d.accepts[q])) == want, (pattern, spelled)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab-", max_size=12), st.sampled_from(["a", "ab", "b-", "-"]),
       st.sampled_from(["a", "-b", "ba"]), st.integers(0, 3))
def test_negative_and_several_lookaheads_agree_with_re(body, neg, pos, lo):
    rx = '"(?!%s)(?=[^"]*%s)(?![^"]{%d}")(?:[ab]+-[ab-]*)"' % (neg, pos, lo)
    d = compile_terminal(rx, band=64)
    q = d.run(('"' + body + '"').encode())
    assert (q >= 0 and bool(d.accepts[q])) == (re.fullmatch(rx, '"' + body + '"') is not None)


@pytest.mark.parametrize("pattern", [
    r"(arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:[a-z\-]*\/)?([a-zA-Z0-9]([a-zA-Z0-9-]){0,62})(?<!-)$",
    r"[a-z0-9]([a-z0-9-]){0,5}$", r"b[ab]{0,3}$", r"[ab][ab]{0,3}x$", r"[0-9][0-9a-f]{0,4}$"])
def test_an_unanchored_start_reads_from_the_last_start(pattern):
    # Σ*·c·B{0,n} with c ⊆ B is Σ*·c·(B∖c){0,n}: small automata, the same language
    x = R.parse_pattern(pattern)
    assert x[0] != "X"
    d = compile_terminal('"(?:' + R.to_json_string(R.limited(x, 0, 170)) + ')"', band=64)
    assert d.n_states < 10_000        # (the subset construction passed 100,000 before)
    rng = random.Random(4)
    for _ in range(1500):
        s = "".join(rng.choice("ab-1:/xf") for _ in range(rng.randint(0, 24)))
        if rng.random() < 0.3:
            s = "arn:aws:sagemaker:x:123456789012:a/" + s
        assert R.fullmatch(x, s) == _search(pattern, s), s
        q = d.run(json.dumps(s).encode())
        assert (q >= 0 and bool(d.accepts[q])) == (_search(pattern, s) and len(s) <= 170), s


def test_difference_with_a_counted_side():
    # the subtracted side counts its repetition with stalls (band 64): exact at every count
    d = compile_terminal('"(?![^"]{300,900}")[a-z]{1,2000}"', band=64)
    assert d.counters
    for n in (1, 299, 300, 301, 900, 901, 1500, 2000, 2001):
        q = d.run(('"' + "k" * n + '"').encode())
        assert (q >= 0 and bool(d.accepts[q])) == (n < 300 or 900 < n <= 2000), n


def test_several_patterns_meet_as_lookaheads():
    # the intersection of patterns too large as a regex is lookaheads on the first
    parts = [R.parse_pattern(p) for p in (r"^[a-zA-Z\d\S]{8,64}$", "[a-z]", "[A-Z]", r"\d")]
    x = R.meet(*parts)
    assert x[0] == "X" and len(x[2]) == 3
    rng = random.Random(2)
    for _ in range(300):
        s = "".join(rng.choice("abZ9 -") for _ in range(rng.randint(0, 70)))
        assert R.fullmatch(x, s) == all(R.fullmatch(y, s) for y in parts), s
    assert R.meet(parts[1], parts[3]) == R.intersect(parts[1], parts[3])    # small: a regex
    with pytest.raises(ValueError):
        R.to_python(R.alt(x, R.lit("zz")))       # below the top it must be written out first


def test_schema_languages_with_lookaheads():
    check({"type": "string", "pattern": PASSWORD},
          valid=['"aB3defgh"', '"Zz9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"', json.dumps("aB3" + "x" * 61)],
          invalid=['"aB3defg"', '"ab3defgh"', '"AB3DEFGH"', '"aBcdefgh"', json.dumps("aB3" + "x" * 62)])
    check({"type": "string", "pattern": NOT_BLANK},
          valid=['"a"', '"  a "', json.dumps("x" * 256)],
          invalid=['""', '"   "', '"\\t \\t"', json.dumps("x" * 257)],
          # ECMA-262: '$' is the end of the input (Python's re, which jsonschema uses, also
          # matches it before a final newline)
          policy=['"a\\n"'])
    check({"type": "string", "pattern": TAG_VALUE, "minLength": 1, "maxLength": 256},
          valid=['"aws"', '"aws-x"', '"memorydb"', '"x:aws:"'],
          invalid=['"aws:"', '"aws:x"', '"memorydb:a"', '""', json.dumps("q" * 257)])


def test_patterns_of_an_allof_meet_as_lookaheads():
    # four patterns whose intersection is too large as a regex (before: refused as "several
    # patterns/formats whose intersection is too complex")
    schema = {"type": "string", "allOf": [{"pattern": p} for p in
                                          (r"^[a-zA-Z\d\S]{8,64}$", "[a-z]", "[A-Z]", r"\d")]}
    check(schema, valid=['"aB3defgh"', json.dumps("aB3" + "x" * 61)],
          invalid=['"aB3defg"', '"ab3defgh"', '"AB3DEFGH"', '"aBcdefgh"', json.dumps("aB3" + "x" * 62)])
    g = convert_schema(schema).grammar
    assert [t.regex.count("(?=") for t in g.terminals if t.regex and "(?=" in t.regex] == [3]


def test_lookaheads_in_a_union_are_one_node_terminals_of_their_own_or_reported():
    # below the top of a language (a union of strings) a kept lookahead is written out; too
    # large for that, plain members join it (one node), members with other lookaheads are
    # terminals of their own where they share no string, else the union is reported
    # (strict: refused naming the keyword)
    s = {"anyOf": [{"type": "string", "pattern": PASSWORD}, {"type": "string", "maxLength": 2}]}
    check(s, valid=['"aB3defgh"', '"ab"', '""'], invalid=['"abc"', '"aB3defg"'])
    s = {"anyOf": [{"type": "string", "pattern": TAG_VALUE},
                   {"type": "string", "pattern": "^[a-z]+~[a-z]+$", "maxLength": 300}]}
    # (their automata pass the Boolean operations' product bound: the disjointness test
    # walks the reachable pairs only)
    tag, pair = R.parse_pattern(TAG_VALUE), R.limited(R.parse_pattern("^[a-z]+~[a-z]+$"), 0, 300)
    assert R.is_disjoint(tag, pair)
    assert not R.is_disjoint(tag, R.limited(R.parse_pattern("^[a-z]+-[a-z]+$"), 0, 300))
    g = convert_schema(s).grammar
    assert len([t for t in g.terminals if t.name.startswith("STR")]) == 2
    check(s, valid=['"aws"', '"ab~c"', json.dumps("a" * 150 + "~" + "b" * 149)],
          invalid=['"aws:x"', '"a~"', json.dumps("a" * 150 + "~" + "b" * 150)])
    s = {"anyOf": [{"type": "string", "pattern": PASSWORD}, {"type": "string", "pattern": NOT_BLANK}]}
    with pytest.raises(GrammarError, match="anyOf|pattern"):
        Grammar.from_json_schema(s)


def test_a_whole_pattern_with_lookaheads_as_a_property_name():
    schema = {"type": "object", "patternProperties": {NOT_BLANK: {"type": "integer"}},
              "additionalProperties": False}
    valid = ['{"a": 1}', '{" b ": 2}']
    invalid = ['{"  ": 1}', '{"": 1}', json.dumps({"x" * 257: 1})]
    check(schema, valid=valid, invalid=invalid)
    for t in valid:
        assert jsonschema_valid(schema, t) in (True, None)


def test_lookahead_strings_masks_equal_the_oracle(qwen_vocab, tmp_path):
    s = {"type": "object", "properties": {
        "password": {"type": "string", "pattern": PASSWORD},
        "key": {"type": "string", "pattern": TAG_VALUE, "maxLength": 256},
        "note": {"type": "string", "pattern": NOT_BLANK}},
        "required": ["password", "key", "note"], "additionalProperties": False}
    texts = [json.dumps({"password": "aB3" + "q" * 20, "key": "aws-tag:" + "k" * 40, "note": "  x"}),
             json.dumps({"password": "Zz9" + "é" * 10, "key": "memorydb", "note": "x" * 250},
                        ensure_ascii=False)]
    for t in texts:
        assert jsonschema_valid(s, t) in (True, None)
    g = Grammar.from_json_schema(s)
    rng = random.Random(8)
    c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
    assert not c.compiled.dwa.budget_exhausted
    assert _walk(c, texts, rng, 9) >= 10


def test_a_union_of_strings_of_one_length_stays_one_lookahead():
    # CloudFormation's StackRole: anyOf of two patterns beside one maxLength; each branch
    # is the pattern limited to 256 characters, too large as a regex: the union of the two
    # is one length lookahead over the union of the patterns (before: refused, "a length
    # beside a pattern in a union of string languages")
    schema = {"type": "string", "maxLength": 256, "anyOf": [
        {"pattern": "arn:.+:iam::[0-9]{12}:role/.+"},
        {"pattern": "^(arn:.+:iam::((?!\\*|\\?)[0-9]{12}|(?=.*\\*)[0-9*?]{1,12}|[0-9?]{12}):role/.+|\\*)$"}]}
    a = R.union(("L", R.lit("ab"), 0, 5), ("L", R.lit("cd"), 0, 5))
    assert a[0] == "L" and R.fullmatch(a, "cd") and not R.fullmatch(a, "ce")
    assert R.union(("L", R.lit("ab"), 0, 5), ("L", R.lit("cd"), 0, 6))[0] == "a"
    role = "arn:aws:iam::123456789012:role/"
    check(schema, valid=[json.dumps(role + "x"), '"*"', json.dumps("arn:aws:iam::12*:role/x"),
                         json.dumps(role + "x" * (256 - len(role)))],
          invalid=['"arn:aws:iam::1234:role/x"', '"**"', json.dumps(role + "x" * (257 - len(role))),
                   '""'])


RDS_ONE_OF = {"type": "string", "oneOf": [{"pattern": "^[a-zA-Z]{1}(?:-?[a-zA-Z0-9]){0,62}$"},
                                          {"pattern": "^(?=.{40,128}$)arn.*"}]}


def test_one_of_strings_too_large_to_subtract_are_terminals_of_their_own():
    # CloudFormation's RDS GlobalCluster identifier: exactly one of two overlapping patterns
    # (names of 40-63 characters that start with 'arn' match both); each branch's part is
    # its pattern less the other's, kept as a negative lookahead, one terminal each (they
    # share no string). Before: refused, "overlapping string branches".
    from stackmask.grammars.json_schema import convert_schema
    sg = convert_schema(RDS_ONE_OF)
    assert len([t for t in sg.grammar.terminals if t.name.startswith("STR")]) == 2
    arn_name = "arn" + "x" * 40              # 43 characters: matches both patterns
    check(RDS_ONE_OF,
          valid=['"a"', '"a-b-c"', json.dumps("arn" + "x" * 70), json.dumps("arn:" + "x" * 36),
                 json.dumps("a" * 63)],
          invalid=[json.dumps(arn_name), json.dumps("arn" + "x" * 60), '"-a"', '""',
                   json.dumps("a" * 64), json.dumps("arn" + "x" * 126)])


def test_the_lookahead_check_tries_the_unbounded_languages_small(monkeypatch):
    # whether RDS's lookahead reads within the lexeme is checked on the languages with
    # every repetition unbounded while they are small; past SEES_UNBOUNDED_FIRST states,
    # on the languages as written (4,000 states). Before, the unbounded subset
    # construction ran to the lexer's 100,000-state limit first (3 s each time).
    from stackmask.lexer import terminal_dfa
    from stackmask.lexer.dfa import MAX_DFA_STATES
    from stackmask.wfa.fsa import TooManyStates
    hit = []
    real = terminal_dfa.determinize

    def watched(nfa, width, limit):
        try:
            return real(nfa, width, limit)
        except TooManyStates:
            hit.append(limit)
            raise
    monkeypatch.setattr(terminal_dfa, "determinize", watched)
    for cache in ("_TERMINALS", "_LOOKAHEAD_PARTS", "_GROUPS"):     # built here, not before
        monkeypatch.setattr(terminal_dfa, cache,
                            type(getattr(terminal_dfa, cache))(1 << 20, lambda v: 1))
    Grammar.from_json_schema({"type": "object", "properties": {"id": RDS_ONE_OF},
                              "required": ["id"]})
    assert MAX_DFA_STATES not in hit
    assert set(hit) <= {terminal_dfa.SEES_UNBOUNDED_FIRST}


def test_the_lookahead_check_unbounds_only_long_repetitions(monkeypatch):
    # a short count stays as written (unbounded, ``\\u[0-9a-f]{4}`` beside a wide Unicode
    # class makes the alternation's branches overlap and its automaton blow up); a
    # language with nothing left to unbound is tried once, up to the limit
    from stackmask.lexer import terminal_dfa
    from stackmask.lexer.regex import regex_ir
    from stackmask.lexer.regex import ByteNFA
    rest = regex_ir("(?:[0-9a-f]{4}|g)*!", ByteNFA("t", 1 << 20, "t"))
    assert terminal_dfa._unbounded(rest) == rest
    long = regex_ir("(?:[0-9a-f]{4}|g){0,40}!", ByteNFA("t", 1 << 20, "t"))
    assert terminal_dfa._unbounded(long) != long
    limits = []
    real = terminal_dfa.determinize
    monkeypatch.setattr(terminal_dfa, "determinize",
                        lambda nfa, width, limit: limits.append(limit) or real(nfa, width, limit))
    monkeypatch.setattr(terminal_dfa, "_TERMINALS", type(terminal_dfa._TERMINALS)(1 << 20, lambda v: 1))
    monkeypatch.setattr(terminal_dfa, "_LOOKAHEAD_PARTS",
                        type(terminal_dfa._LOOKAHEAD_PARTS)(1 << 20, lambda v: 1))
    d = terminal_dfa.compile_terminal("(?=[a-z]{0,40}!)(?:[0-9a-f]{4}|g)*!", band=64)
    # the lookahead's language is tried unbounded first, the rest's only as it is
    assert limits.count(terminal_dfa.SEES_UNBOUNDED_FIRST) == 1
    for text, ok in (("abcdg!", True), ("g!", True), ("abc!", False), ("ggggggggggg!", True),
                     ("abcdx!", False)):
        q = d.run(text.encode())
        assert (q >= 0 and bool(d.accepts[q])) == ok, text


def test_one_of_strings_masks_equal_the_oracle(qwen_vocab, tmp_path):
    s = {"type": "object", "properties": {"id": RDS_ONE_OF, "n": {"type": "integer"}},
         "required": ["id", "n"], "additionalProperties": False}
    texts = [json.dumps({"id": "arn:aws:rds::" + "q" * 40, "n": 3}),
             json.dumps({"id": "db-" + "x" * 50, "n": 12})]
    for t in texts:
        assert jsonschema_valid(s, t) in (True, None)
    c = Constraint(Grammar.from_json_schema(s), qwen_vocab, cache_dir=tmp_path, progress=False)
    assert _walk(c, texts, random.Random(6), 9) >= 10


@pytest.mark.parametrize("pattern", [r"^((?!-)[a-z-]+:){2,3}$", r"^(?:(?=a)[ab]){3}$", r"^(x(?!y)|y){1,4}$",
                                     r"^(?:(?!aws)[a-z]{3}\.){1,3}x$"])
def test_assertions_in_a_few_iterations_are_written_out(pattern):
    # a quantified group with a lookahead and at most MAX_UNROLL iterations: its iterations
    # written out in sequence (before: "lookaheads inside a quantified group")
    x = R.parse_pattern(pattern)
    rng = random.Random(9)
    words = ["a", "b", "x", "y", "-", ":", "aws", "awx", "abc", "."]
    for _ in range(1500):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 10)))
        assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)
    with pytest.raises(R.PatternError, match="quantified group"):
        R.parse_pattern(r"^((?!--)[a-z-]:)*$")     # unbounded: still refused


@pytest.mark.parametrize("pattern", [r"^(?:(?!--).)*$", r"^a(?:(?!ab|c)[a-c]){2,5}$", r"^(?:(?!x?)[ab])*$",
                                     r"^(?:(?!b$)[ab])+$", r"^(?:(?!\$\{[a-zA-Z]+:)[^\x00-\x1f])+$"])
def test_a_tempered_token_that_ends_the_input(pattern):
    # (?:(?!N)c)* before '$': the lookahead runs at every position of the text it reads, so
    # the text holds no match of N (CloudFormation's "no ${Resolver:" descriptions; before:
    # "lookaheads inside a quantified group")
    x = R.parse_pattern(pattern)
    rng = random.Random(10)
    words = ["a", "b", "c", "x", "-", "${", "ab:", "Ab", ":", "\n", "$", "\x01"]
    for _ in range(2000):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
        assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)


def test_a_tempered_token_with_a_unicode_class_as_cloudformation_writes_it():
    regex = pytest.importorskip("regex")
    pattern = r"^(?:(?!\$\{[a-zA-Z]+:)[\P{C}])+$"
    schema = {"type": "string", "pattern": pattern, "maxLength": 1000}
    # (beside the length, characters beyond ASCII are spelled raw only: the Strings policy)
    check(schema, valid=['"a ${x} b"', '"${:"', json.dumps("é" * 1000, ensure_ascii=False)],
          invalid=['"a ${Resolve:x}"', '""', '"\\u0001"', json.dumps("é" * 1001, ensure_ascii=False)],
          policy=[json.dumps("é" * 3)],
          validator=False)          # (Python's re, which jsonschema uses, has no \P{C})
    x = R.parse_pattern(pattern)
    rng = random.Random(12)
    for _ in range(1000):
        s = "".join(rng.choice(["a", "${", "ab:", "Ab", ":", "é", "\x01", "\u200b"]) for _ in range(rng.randint(0, 7)))
        assert R.fullmatch(x, s) == (regex.search(_ends_input(pattern), s) is not None), s


@pytest.mark.parametrize("pattern", [r"^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$", r"^a(?=b)*c$",
                                     r"^a(?!b)?b$", r"^a(?!b){2,3}c$", r"^a(?=bc){0,2}b"])
def test_quantified_lookaheads_as_annex_b_reads_them(pattern):
    # ECMA-262 Annex B: a lookahead may be quantified; zero iterations allowed, it tests
    # nothing, else it tests once (CloudFormation's EFS access point path)
    regex = pytest.importorskip("regex")
    x = R.parse_pattern(pattern)
    rng = random.Random(3)
    for _ in range(1500):
        s = "".join(rng.choice(["/", ".", "a", "b", "c", "$", "x", "\n"]) for _ in range(rng.randint(0, 9)))
        assert R.fullmatch(x, s) == (regex.search(_ends_input(pattern), s) is not None), (pattern, s)
    with pytest.raises(R.PatternError, match="quantified assertion"):
        R.parse_pattern("^a$*")


@pytest.mark.parametrize("pattern", [r"^([a-zA-Z][-a-zA-Z0-9]*)|(arn:\b(aws|aws-us-gov|aws-cn)\b:[-a-zA-Z0-9:/._+]*)$",
                                     r"^\bab\b$", r"a\Bb", r"a\b-", r"-\B-", r"a\bb", r"x(ab|cd)\b(e|f)"])
def test_word_boundaries_decided_by_their_neighbours(pattern):
    # \b between characters that are all word characters or all not on each side always
    # holds or never does (CloudFormation's change-set stack name: arn:\b(aws|...)\b:)
    x = R.parse_pattern(pattern)
    rng = random.Random(3)
    words = ["a", "b", "-", ":", "arn:", "aws", "aws-cn", ":x", "e", "f", "x", "cd", "ab"]
    for _ in range(1500):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)


@pytest.mark.parametrize("pattern", [
    r"\b([0-9]|[0-9][0-9])\b", r"a*\bb", r"(?:a|-)\bb", r"\b", r"x\B(a|-)", r"^\b(a|-)x",
    r"(a|-)\b(b|\.)$", r"((25[0-5]|(2[0-4]|1\d|[1-9]|)\d)\.?\b){4}",
    r"cron\((\b[0-5]?[0-9]\b) (\b2[0-3]\b|\b[0-1]?[0-9]\b)", r"(\ba|-\B)+x", r"(^|-)\ba",
    # decided by the characters around their groups (too large to decide on the whole string)
    r"^cron\((\b[0-5]?[0-9]\b) (\b2[0-3]\b|\b[0-1]?[0-9]\b) ([-?*,/\dLW]){1,83} "
    r"([-*,/\d]|[a-zA-Z]{3}){1,23} ([-?#*,/\dL]|[a-zA-Z]{3}){1,13} ([^\)]+)\)$"])
def test_word_boundaries_with_either_neighbour_are_decided_on_the_whole_string(pattern):
    # a \b whose neighbours in its sequence do not decide it (the start of a group, an
    # unanchored end, a character either way: CloudFormation's IPv4 address, an instance
    # number, a cron expression) is decided by the characters that can stand around it
    # across groups and iterations (parser._decide_marks), else is a mark, kept where the
    # characters around it in the whole string make it hold (algebra.resolve_word_boundaries)
    x = R.parse_pattern(pattern)
    rng = random.Random(4)
    words = ["a", "b", "-", ".", "1", "9", "25", "255", "192.", "10.", "x", " ", "cron(", "5",
             "23", ")", "_", "cron(5 23 * * ", "MON ", "L", "W"]
    for _ in range(3000):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
        assert R.fullmatch(x, s) == (re.search(_ends_input(pattern), s, re.ASCII) is not None), \
            (pattern, s)


@pytest.mark.parametrize("pattern", [r"\b(?=ab)\w", r"(a|-)$\b", r"(a|-)\b^", r"(?<=a)\b(a|-)",
                                     r"(?=a\b)a", r"^(?!x\B)\w+$", r"(?=ab\b)\w+"])
def test_undecided_word_boundaries_beside_other_assertions_are_refused(pattern):
    # the other assertions' rewriting would read the mark as a character
    with pytest.raises(R.PatternError, match="word boundary|lookbehind"):
        R.parse_pattern(pattern)


# a host name label (CloudFormation's Redshift JDBC URL): neither first nor last a dash
# (and the same as a domain name: labels of an optional run and a last character)
LABELS_0 = r"^(((?!-)[A-Za-z0-9-]{0,62}[A-Za-z0-9])\.)+((?!-)[A-Za-z0-9-]{1,62}[A-Za-z0-9])(\.)?$"
LABELS = r"^jdbc:(redshift|postgresql)://((?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+(redshift(-serverless)?)\.([a-zA-Z0-9\.\-]+):\d{1,5}/[a-zA-Z0-9_$-]+$"


@pytest.mark.parametrize("pattern", [
    LABELS, r"^((?!-)[a-c-]{1,3}(?<!-)\.){2,3}$", r"^[a-z.]+(?<!\.)x$", r"^(ab|c[0-9])(?<=[0-9b])z$",
    r"^xa?b?(?<=[ab])c$", r"x[ab]{0,3}(?<!b)x", r"(a|b.)(?<![.b])c", r"ab*(?<!b)", r"(?!a)[a-c]{2}",
    r"^(?!x)a?b?c$", r"^(?!-)[a-c-]{1,2}(?<!-)$", r"^(?=[0-9])(ab|[0-9]c)$", r"(x(?<=a))+",
    # the item after the lookahead may be empty: the character is the first the rest reads
    LABELS_0, r"^((?!-)[a-c-]{0,2}[a-c]\.)+$", r"^((?![.-])a?-*[a-c.]){1,4}x$",
    r"^((?!-)a?b(?!-)[a-c-]{0,2}c\.)+$"])
def test_one_character_lookarounds_fold_into_their_neighbours(pattern):
    # a lookbehind of one character after what ends in a character it reads limits that
    # character, a lookahead of one character before what begins with one likewise: also
    # inside a quantified group, where other assertions are refused
    x = R.parse_pattern(pattern)
    rng = random.Random(11)
    words = ["a", "b", "c", "x", "z", "0", "9", "-", ".", "a-b.", "ab.", "-a.", "redshift",
             "jdbc:redshift://", "jdbc:postgresql://", ".redshift.", "e:5439/db", ":1/x"]
    for _ in range(3000):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
        assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)
    for s in ("jdbc:redshift://ab.c-d.redshift.us-east-1:5439/dev",
              "jdbc:postgresql://a.redshift-serverless.x:1/y"):
        assert R.fullmatch(x, s) == _search(pattern, s)


@pytest.mark.parametrize("pattern", [r"^a?b?(?<=[ab])c$", r"(?!a)(?<!b)", r"a(?=b)(?<!c)b",
                                     r"a*(?<!a)b", r"((?<=a)\.|b)+c"])
def test_one_character_lookbehinds_reaching_outside_are_refused(pattern):
    # the character before would be outside the sequence (or none: the start)
    with pytest.raises(R.PatternError, match="lookbehind"):
        R.parse_pattern(pattern)


def test_a_schema_with_undecided_word_boundaries():
    # CloudFormation's Route 53 Global Resolver IPv4 address and ApplicationInsights'
    # instance numbers
    ipv4 = {"type": "string", "minLength": 1, "maxLength": 15,
            "pattern": r"((25[0-5]|(2[0-4]|1\d|[1-9]|)\d)\.?\b){4}"}
    check(ipv4, valid=['"10.0.0.1"', '"192.168.1.255"', '"1.2.3.4"'],
          invalid=['"256.1.1.1x"', '"10.0.0"', '"abc"', '"10.0.0.1234567890"'])
    number = {"type": "string", "minLength": 1, "maxLength": 2, "pattern": r"\b([0-9]|[0-9][0-9])\b"}
    check(number, valid=['"0"', '"42"'], invalid=['"a1"', '"1a"', '""', '"123"'])


@pytest.mark.parametrize("seed", [1, 2])
def test_one_character_lookaheads_in_quantified_groups_agree_with_re(seed):
    # ^(L items)+$ with L a lookahead of one character and items that may read nothing:
    # the patterns parse_pattern accepts match what re matches
    rng = random.Random(seed)
    looks = ["(?!-)", "(?=a)", "(?!a)", "(?=[ab])", "(?![.-])"]
    items = ["a", "b", "-", ".", "[ab-]", "[a-]", "x", "[ab]*", "[a-]{0,3}", "(ab)?", "-*",
             "[ab.]?", "(a|-)*", "[b-]{0,2}"]
    accepted = 0
    for _ in range(300):
        body = rng.choice(looks) + "".join(rng.choice(items) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.5:
            body = rng.choice(items) + body
        pattern = "^(" + body + ")" + rng.choice(["+", "*", "{1,3}", "{2}"]) + \
            rng.choice(["", "x", "[ab]", "-?"]) + "$"
        try:
            x = R.parse_pattern(pattern)
        except R.PatternError:
            continue
        accepted += 1
        for _ in range(100):
            s = "".join(rng.choice("ab-.x") for _ in range(rng.randint(0, 9)))
            assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)
    assert accepted >= 240          # (before the rest of the sequence was read: ~225)


@pytest.mark.parametrize("pattern", [r"^(?=a)(?=a).(?<=a)|-b\Wb$", r"(?=a)(?!-)b(?<!-)[a-]\b",
                                     r"(?!-)a?(?=b)bc"])
def test_a_lookahead_before_a_rest_with_assertions_stays_as_written(pattern):
    # a rest holding a lookbehind, a lookahead or a word boundary is not read for its
    # first character (those would be left inside it): parsed as before, or refused by name
    try:
        x = R.parse_pattern(pattern)
    except R.PatternError:
        return
    rng = random.Random(3)
    for _ in range(1500):
        s = "".join(rng.choice("ab-.c") for _ in range(rng.randint(0, 6)))
        assert R.fullmatch(x, s) == _search(pattern, s), (pattern, s)
