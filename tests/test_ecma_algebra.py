"""The Boolean operations of ``grammars.ecma_regex`` (DFAs over code point atoms, built with
the shared automaton toolkit) against Python's ``re`` on the operands, over every short
string of a small alphabet."""

from __future__ import annotations

import random
from itertools import product as cartesian

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask.grammars import ecma_regex as R
from stackmask.lexer.ir import nodes

ALPHABET = "abé\n"          # a non-ASCII letter, and one that '.' does not match
WORDS = ["".join(w) for n in range(5) for w in cartesian(ALPHABET, repeat=n)]


def _tree(draw, d: int, leaf, quants, special=None) -> str:
    """A random pattern of depth ``d``: ``leaf()`` at the leaves (twice as likely as each
    other kind), sequences, alternations, groups quantified by one of ``quants``, and
    ``special(d)`` (the caller's own kind) where given."""
    kinds = ["leaf", "leaf", "seq", "alt", "rep"] + (["special"] if special else [])
    kind = draw(st.sampled_from(kinds)) if d else "leaf"
    if kind == "leaf":
        return leaf()
    if kind == "special":
        return special(d)
    if kind == "seq":
        return _tree(draw, d - 1, leaf, quants, special) + _tree(draw, d - 1, leaf, quants, special)
    if kind == "alt":
        return ("(?:" + _tree(draw, d - 1, leaf, quants, special) + "|"
                + _tree(draw, d - 1, leaf, quants, special) + ")")
    return "(?:" + _tree(draw, d - 1, leaf, quants, special) + ")" + draw(st.sampled_from(quants))


@st.composite
def patterns(draw, depth=2):
    """A small ECMA pattern over ``ALPHABET``, maybe anchored."""
    body = _tree(draw, depth, lambda: draw(st.sampled_from(["a", "b", "é", ".", "[ab]", "[^a]",
                                                            "\\w", "[a-é]"])),
                 ["*", "+", "?", "{1,2}", "{2}"])
    return draw(st.sampled_from(["", "^"])) + body + draw(st.sampled_from(["", "$"]))


def _or_none(op, *args):
    """``op(*args)``, or None where the result is too large to write as a regex (the
    operation refuses; it never answers wrong)."""
    try:
        return op(*args)
    except R.TooComplex:
        return None


@settings(max_examples=120, deadline=None, database=None)
@given(patterns(), patterns())
def test_boolean_operations_agree_with_re(p, q):
    a, b = R.parse_pattern(p), R.parse_pattern(q)
    inter, diff = _or_none(R.intersect, a, b), _or_none(R.difference, a, b)
    comp = _or_none(R.complement, a)
    disjoint, subset = R.is_disjoint(a, b), R.is_subset(a, b)
    for w in WORDS:
        in_a, in_b = R.fullmatch(a, w), R.fullmatch(b, w)
        assert inter is None or R.fullmatch(inter, w) == (in_a and in_b), (p, q, w)
        assert diff is None or R.fullmatch(diff, w) == (in_a and not in_b), (p, q, w)
        assert comp is None or R.fullmatch(comp, w) == (not in_a), (p, w)
        assert not (disjoint and in_a and in_b), (p, q, w)
        assert not (subset and in_a and not in_b), (p, q, w)
    assert inter is None or R.is_empty(inter) == disjoint
    assert diff is None or R.is_empty(diff) == subset


@settings(max_examples=60, deadline=None, database=None)
@given(patterns(), st.integers(0, 3), st.sampled_from([None, 1, 3]))
def test_limit_length_agrees_with_re(p, lo, hi):
    a = R.parse_pattern(p)
    x = R.limit_length(a, lo, hi)
    for w in WORDS:
        want = R.fullmatch(a, w) and lo <= len(w) and (hi is None or len(w) <= hi)
        assert R.fullmatch(x, w) == want, (p, lo, hi, w)


MATCH_WORDS = WORDS + ["a" * 7, "ab" * 5, "\U0001F600a", "b\U0001F600"]


@settings(max_examples=150, deadline=None, database=None)
@given(patterns(depth=3), st.integers(0, 4), st.sampled_from([None, 0, 2, 5]))
def test_fullmatch_reads_the_ir_as_re_does(p, lo, hi):
    """``fullmatch`` (read off the IR) against ``re`` on the IR's Python spelling, for
    parsed patterns, their complements (large IRs) and length-limited nodes."""
    a = R.parse_pattern(p)
    top = hi if hi is None or hi >= lo else lo
    irs = [a, R.rep(a, lo, top), ("L", a, lo, top)]
    comp = _or_none(R.complement, a)
    if comp is not None:
        irs.append(comp)
    for x in irs:
        for w in MATCH_WORDS:
            assert R.fullmatch(x, w) == R.re_fullmatch(x, w), (p, x[0], w)


LOOK_ALPHABET = "ab "        # no line terminator: Python's '$' also matches before a final '\n'
LOOK_WORDS = ["".join(w) for n in range(6) for w in cartesian(LOOK_ALPHABET, repeat=n)]


@st.composite
def lookahead_patterns(draw, depth=3):
    """A small ECMA pattern with lookaheads (positive and negative, nested, anywhere outside
    quantified groups) and anchors."""
    def plain(d):
        return _tree(draw, d, lambda: draw(st.sampled_from(["a", "b", " ", ".", "\\s", "[^a]"])),
                     ["*", "+", "?", "{1,2}"])

    def node(d):
        kind = draw(st.sampled_from(["plain", "look", "seq", "alt", "anchor"] if d else ["plain"]))
        if kind == "plain":
            return plain(min(d, 2))
        if kind == "look":
            return "(?" + draw(st.sampled_from(["=", "!"])) + node(d - 1) + ")"
        if kind == "seq":
            return node(d - 1) + node(d - 1)
        if kind == "alt":
            return "(?:" + node(d - 1) + "|" + node(d - 1) + ")"
        return draw(st.sampled_from(["^", "$"]))
    return node(depth)


@settings(max_examples=250, deadline=None, database=None)
@given(lookahead_patterns())
def test_lookaheads_agree_with_re(p):
    """A pattern with lookaheads finds a match in exactly the strings where Python's
    ``re.search`` does (same semantics on this alphabet), or is refused by name."""
    _agrees_with_re_or_is_refused(p, ("lookahead", "anchored alternatives"))


def _agrees_with_re_or_is_refused(p: str, refusals: tuple) -> None:
    """``p`` finds a match in exactly the words of LOOK_WORDS where ``re.search`` does, or
    is refused with a message naming one of ``refusals``."""
    import re
    try:
        a = R.parse_pattern(p)
    except R.PatternError as e:
        assert any(r in str(e) for r in refusals), (p, e)
        return
    for w in LOOK_WORDS:
        assert R.fullmatch(a, w) == (re.search(p, w) is not None), (p, w)


def _examples_agree_with_re(cases: dict) -> None:
    """Each pattern (key) matches exactly the words (value) that ``re.search`` matches."""
    import re
    for p, words in cases.items():
        a = R.parse_pattern(p)
        for w in words:
            assert R.fullmatch(a, w) == (re.search(p, w) is not None), (p, w)


def test_lookahead_examples():
    cases = {
        "^(?!@@)[\\w@]+$": ["@@a", "@a", "a@@", "", "@"],
        "^(?=.*[a-z])(?=.*\\d).{3,}$": ["ab1", "abc", "a1", "1bc", "x9y"],
        "a(?=b)": ["ab", "a", "ac", "xab", "bab"],
        "(?!a)": ["a", "", "b", "aa"],
        "^(?!.*\\s$).+$": ["ab ", "ab", " a"],
        "(?=a$)": ["a", "ba", "ab", ""],
        "^(?:x(?=y)|y)(?!z)": ["xy", "yz", "y", "xz", "xyz"],
        "(?=(?!a)b)b": ["b", "a", "ab"],
        # '^' inside a lookahead: a test of the start of the input
        "(?!^[0-9]+$)([a-z0-9]+)": ["123", "12a", "a12", "1", "", "-1", "1-", "--"],
        "(?=^a)b*": ["a", "b", "ab", ""],
        "x(?!^a)": ["x", "xa", "ax"],
        "^(?!^1)[0-9]+$": ["1", "12", "21", ""],
        "b|(?!^a)a": ["a", "ba", "aa", "b"],
    }
    _examples_agree_with_re(cases)


@st.composite
def lookbehind_patterns(draw):
    """Top-level alternatives, some ending in a fixed-width lookbehind (Python's ``re`` takes
    no other) right before their ``$``; lookaheads and anchors elsewhere."""
    def branch():
        head = draw(lookahead_patterns(depth=2))
        if not draw(st.booleans()):
            return head
        body = draw(st.sampled_from(["a", "b", " ", ".", "ab", "[^a]", "a|b", "\\s", "ba", "(?:aa|bb)"]))
        return head + "(?<" + draw(st.sampled_from(["=", "!"])) + body + ")$"
    return "|".join(branch() for _ in range(draw(st.integers(1, 2))))


@settings(max_examples=200, deadline=None, database=None)
@given(lookbehind_patterns())
def test_lookbehinds_at_the_end_agree_with_re(p):
    """A lookbehind right before a top-level alternative's ``$``: the same strings as
    Python's ``re.search``, or refused by name."""
    _agrees_with_re_or_is_refused(p, ("lookahead", "anchored alternatives", "lookbehind"))


def test_lookbehind_examples_and_refusals():
    cases = {
        "^[0-9a-z\\.\\-]*(?<!\\.)$": ["abc", "abc.", "a.b", "", "."],
        "^(?! )[a-z ]*(?<! )$": ["ab", "ab ", " ab", "a b", ""],
        "x(?<=[0-9]x)$|^q$": ["1x", "ax", "zz1x", "q", "qq"],
        "a(?<=(?:ba|ca))$": ["ba", "ca", "a", "xba"],
        # one character, folded into the character before (anywhere)
        "a(?<!b)c$": ["ac", "bc", "xac"], "(a(?<!b)$)": ["a", "ba"], "(?:a(?<=a)$)*": ["", "a"],
        "a(?<=a)": ["a", "b"], "[ab](?<=b)c": ["ac", "bc", "abc"],
    }
    _examples_agree_with_re(cases)
    for p in ["a(?<!bc)c$", "(a(?<!ba)$)", "a(?<=^b)$", "(?:a(?<=ba)$)*", "a(?<=ba)"]:
        with pytest.raises(R.PatternError, match="lookbehind"):
            R.parse_pattern(p)


@st.composite
def end_anchor_patterns(draw, depth=3):
    """Patterns with '$' inside quantified groups (and '^' at the front)."""
    leaf = lambda: draw(st.sampled_from(["a", "a", "b", " ", "[^a]", "$"]))   # noqa: E731
    return draw(st.sampled_from(["", "^"])) + _tree(draw, depth, leaf,
                                                    ["*", "+", "?", "{1,2}", "{2}", "{0,1}"])


@settings(max_examples=200, deadline=None, database=None)
@given(end_anchor_patterns())
def test_end_anchors_in_groups_agree_with_re(p):
    import re
    a = R.parse_pattern(p)
    for w in LOOK_WORDS:
        assert R.fullmatch(a, w) == (re.search(p, w) is not None), (p, w)


def test_end_anchor_in_group_examples():
    cases = {
        r"^(\/?((\.{2})|([a-z0-9\-]*))($|\/))*$": ["a/b", "../x/", "/a", "a//b", "A", "", "a/b/"],
        "(?:a$){2}": ["a", "aa", ""],
        "^(?:a$|b){2,3}": ["a", "ba", "bba", "bbba", "bb", "b"],
        "(a$)+": ["a", "aa", "ba", "ab", ""],
        "^(?:x$|y)+z": ["yz", "xz", "x", "yyz", "yx"],
        "^(?:a(?:$|b))*$": ["ab", "a", "aba", "abab", "b", ""],
    }
    _examples_agree_with_re(cases)


@st.composite
def unanchored_patterns(draw):
    """Sequences of a few quantified atoms, each end anchored or not."""
    atoms = draw(st.lists(st.sampled_from(["a", "b", "[ab]", "(?:ab)", "\\s", "\\S", "."]),
                          min_size=1, max_size=3))
    quants = [draw(st.sampled_from(["", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"]))
              for _ in atoms]
    body = "".join(a + q for a, q in zip(atoms, quants))
    return ("^" if draw(st.booleans()) else "") + body + ("$" if draw(st.booleans()) else "")


@settings(max_examples=150, deadline=None)
@given(unanchored_patterns(), st.lists(st.text(alphabet="ab \n", max_size=7), min_size=8, max_size=8))
def test_unanchored_ends_agree_with_re(p, words):
    # an unanchored end makes the outer quantifiers' upper bounds (and nullable end items)
    # moot: the pattern is cut to what must match, the language is re.search's
    import re
    a = R.parse_pattern(p)
    py = p[:-1] + "\\Z" if p.endswith("$") else p      # ECMA's $ is Python's \Z
    for w in words + ["", "ab", "ba ", "aab\nb", " "]:
        assert R.fullmatch(a, w) == (re.search(py, w) is not None), (p, w)


def test_unanchored_ends_shrink_the_pattern():
    any_ = R.parse_pattern(".*")
    assert any_ == R.ANYSTAR and R.parse_pattern("[\\s\\S]{0,1024}") == R.ANYSTAR
    # one \S is where [\S]{1,255} finds its match; a prefix then anything
    assert R.parse_pattern("[\\S]{1,255}") == R.parse_pattern("\\S")
    assert R.parse_pattern("^https://.*") == R.seq(R.lit("https://"), R.ANYSTAR)
    assert R.parse_pattern("^a+$") != R.parse_pattern("^a$")      # anchored: kept


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["^ab[a-c]{1,6}$", "^[a-c]{0,5}b[a-c]{2,4}$", "x[ab]{1,3}", "^(ab){0,3}c?$",
                        "^a{2,9}|b{1,3}c$", "^a(bc){1,4}$", "^[ab]{3}$"]),
       st.integers(0, 4), st.integers(0, 12))
def test_implied_bounds_dropped_keep_the_limited_language(pattern, lo, hi):
    # below the length limit a repetition whose bound the limit implies is the same
    # language without that bound
    x = R.parse_pattern(pattern)
    y = R.drop_implied_bounds(x, hi)
    a, b = R.limit_length(x, lo, hi), R.limit_length(y, lo, hi)
    assert R.is_subset(a, b) and R.is_subset(b, a), (pattern, lo, hi)


def test_implied_bounds_are_dropped_where_the_length_binds_first():
    x = R.parse_pattern("^arn:aws:s3:[0-9]{12}:k/[\\S]{1,2048}$")
    y = R.drop_implied_bounds(x, 2048)
    assert y != x and not R.has_limits(y)
    assert R.length_range(y)[1] is None                  # the 2048 is gone
    assert R.drop_implied_bounds(x, 4096) == x           # 4096 does not imply it
    assert R.drop_implied_bounds(x, None) == x


@pytest.mark.parametrize("pattern", ["([1-9][0-9]{0,4})|([a-zA-Z][a-zA-Z0-9_]{0,47})", "^a{2,9}|b[0-9]{0,3}$",
                                     "(?:ab|c{3,40})$", "^(?:x{2,50}|y)"])
def test_unanchored_ends_distribute_over_alternatives(pattern):
    # Σ*(A|B)Σ* is Σ*AΣ* | Σ*BΣ*, each cut on its own: a digit or a letter somewhere
    # (CloudFormation's BedrockAgentCore qualifier was a terminal over the lexer's limit)
    import random as _random
    import re
    from stackmask.lexer.terminal_dfa import compile_terminal
    x = R.parse_pattern(pattern)
    # (written as one Σ*(A|B)Σ*, the first passed the lexer's 100,000 states)
    assert compile_terminal('"(?:' + R.to_json_string(x) + ')"', band=64).n_states < 2_000
    rng = _random.Random(1)
    for _ in range(2000):
        s = "".join(rng.choice("abcxy1-") for _ in range(rng.randint(0, 14)))
        assert R.fullmatch(x, s) == (re.search(pattern.replace("$", r"\Z"), s) is not None), (pattern, s)


LANGUAGES = ("af|sq|ar|hy|eu|bn|bg|ca|zh|hr|cs|da|nl|en|et|fi|fr|de|el|gu|he|hi|hu|is|id|ga|it|"
             "kn|ky|lv|lt|lb|mk|ml|mr|ne|nb|fa|pl|pt|ro|ru|sa|sr|tn|si|sk|sl|es|sv|tl|ta|tt|te|tr|"
             "uk|ur|yo|lij|xx")


@pytest.mark.parametrize("pattern", [LANGUAGES, r"^x|^y|z$|w$|q|ab{3,20}|^c{2,30}d$"])
def test_alternatives_searched_anywhere_are_one_search(pattern):
    # after each is cut, the alternatives with the same unanchored ends are searched as one:
    # Σ*(A|B)Σ*, not Σ*AΣ*|Σ*BΣ*, whose automaton remembers which ones matched already
    # (CloudFormation's 60 language codes, unanchored: past the lexer's 100,000 states)
    import re
    from stackmask.lexer.terminal_dfa import compile_terminal
    x = R.parse_pattern(pattern)
    assert compile_terminal('"(?:' + R.to_json_string(x) + ')"', band=64).n_states < 2_000
    rng = random.Random(2)
    for _ in range(3000):
        s = "".join(rng.choice(["a", "f", "s", "q", "x", "l", "i", "j", "e", "n", "y", "z", "w", "c",
                                "d", "b", "-"]) for _ in range(rng.randint(0, 8)))
        assert R.fullmatch(x, s) == (re.search(pattern.replace("$", r"\Z"), s) is not None), (pattern, s)


@pytest.mark.parametrize("pattern", [
    r"^x/(([!-~]+/){1,511})?[a-z]{1,64}$",            # ResilienceHub's role path
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9]){0,39}?$",         # a DNS label's groups
    r"^(([a-c/]+/){1,20})?z$", r"^((a|b)+b?){1,30}c$"])
def test_a_long_count_of_a_body_closed_under_concatenation_is_one(pattern):
    # A·A ⊆ A: A{1,n} is A (A{0,n} is A once or not), with no count left to expand or
    # to tell iterations apart
    import re
    x = R.parse_pattern(pattern)
    assert not any(y[0] == "r" and y[1][0] != "c" and y[3] is not None and y[3] > 16
                   for y in nodes(x))
    rng = random.Random(5)
    for _ in range(3000):
        w = "".join(rng.choice(["a", "b", "c", "x", "z", "/", "-", "0", "x/"]) for _ in
                    range(rng.randint(0, 12)))
        assert R.fullmatch(x, w) == (re.search(pattern, w) is not None), (pattern, w)
    # not closed (a·a is not in ab|a, aba not in a+b?): the count stays
    for p, n in ((r"^(ab|a){1,20}$", 20), (r"^(a+b?){1,30}c$", 30)):
        assert any(z[0] == "r" and z[3] == n for z in nodes(R.parse_pattern(p)))
