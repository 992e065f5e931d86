"""Inline flags ``(?i)``, ``(?i:...)``, ``(?-i:...)``, ``(?s:...)`` and the compatibility
properties ``\\p{Graph}``, ``\\p{Print}``, ... of ``grammars.ecma_regex``, against Python's
``re`` (case-insensitive matching) and the ``regex`` module (the properties; the validator
of cfn-lint, which reads AWS CloudFormation resource schemas)."""

from __future__ import annotations

import logging
import re
from itertools import product as cartesian

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask import Grammar
from stackmask.grammars import ecma_regex as R
from stackmask.grammars.ecma_regex.charsets import _case_table, case_closure
from stackmask.grammars.ecma_regex.parser import _Parser

MAX_CP = 0x10FFFF


def _all_code_points() -> str:
    """Every code point but the surrogates, in order."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, MAX_CP + 1)))


def _cps(s: str) -> set:
    return set(map(ord, s))


def _iv_set(ivs) -> set:
    return {c for lo, hi in ivs for c in range(lo, hi + 1)}


def _re_class(ivs, neg: bool = False) -> str:
    """A Python character class of the intervals ``ivs``."""
    def esc(c):
        return "\\U%08x" % c
    return "[" + ("^" if neg else "") + "".join(
        esc(lo) if lo == hi else esc(lo) + "-" + esc(hi) for lo, hi in ivs) + "]"


# -- case classes -------------------------------------------------------------------------------

def _one_char_set(pattern: str) -> tuple:
    """The code points of a pattern that matches one character (``^X$``)."""
    x = R.parse_pattern(pattern)
    assert x[0] == "c", x
    return x[1]


def test_case_classes_are_those_of_re():
    """Each code point with a case variant has, as its class, exactly the code points that
    ``re``'s IGNORECASE matches for it; no other code point has a variant."""
    cps, classes = _case_table()
    table = dict(zip(cps, classes))
    # the code points some case mapping changes, and their one-character images: re's
    # IGNORECASE compares simple lowercases (and its table of lowercase letters with the
    # same uppercase), so a code point outside these is only itself
    mapped = set(cps)
    for ch in _all_code_points():
        for m in (ch.lower(), ch.upper(), ch.casefold()):
            if m != ch:
                mapped.add(ord(ch))
                if len(m) == 1:
                    mapped.add(ord(m))
    text = "".join(map(chr, sorted(mapped)))
    for c in sorted(mapped):
        found = re.compile("(?i)" + re.escape(chr(c))).findall(text)
        assert sorted(_cps("".join(found))) == list(table.get(c, (c,))), hex(c)
    ivs = tuple((c, c) for c in sorted(mapped))
    assert _cps("".join(re.findall("(?i)" + _re_class(ivs), _all_code_points()))) == mapped


@pytest.mark.parametrize("body", ["Lu", "Ll", "Lt", "Nl", "So", "Mn"])
def test_case_closure_of_a_set_is_what_re_matches(body):
    ivs = R.unicode_property(body)
    universe = _all_code_points()
    want = _cps("".join(re.findall("(?i)" + _re_class(ivs), universe)))
    assert _iv_set(case_closure(ivs)) == want
    # the complement of a set's complement (\P{..}): what re's negated class matches
    got = _one_char_set("^(?i:\\P{%s})$" % body)
    want_neg = _cps("".join(re.findall("(?i)" + _re_class(ivs, neg=True), universe)))
    assert _iv_set(got) == want_neg


def test_case_closure_of_huge_sets():
    space = _one_char_set("^\\s$")
    non_space = _one_char_set("^\\S$")
    assert case_closure(non_space) == non_space          # spaces have no case variants
    assert case_closure(space) == space
    word = case_closure(((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)))
    assert _iv_set(word) - _iv_set(((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))) == {
        0x130, 0x131, 0x17F, 0x212A}                     # İ ı ſ K (KELVIN SIGN)


# -- (?i) against re, at random -----------------------------------------------------------------

ALPHABET = "aAkK\u212a1 \n"
WORDS = ["".join(w) for n in range(4) for w in cartesian(ALPHABET, repeat=n)]

_LU = R.unicode_property("Lu")
# (library spelling, Python re spelling): re's \w \W are Unicode, the library's ECMA's ASCII
LEAVES = [("a", "a"), ("A", "A"), ("k", "k"), ("K", "K"), ("\\u212a", "\\u212a"), ("1", "1"),
          (" ", " "), (".", "."), ("\\s", "\\s"), ("\\S", "\\S"), ("[aA]", "[aA]"),
          ("[a-k]", "[a-k]"), ("[^k]", "[^k]"), ("[^a-z]", "[^a-z]"),
          ("\\w", "[A-Za-z0-9_]"), ("\\W", "[^A-Za-z0-9_]"), ("[^\\W]", "[A-Za-z0-9_]"),
          ("[1\\W]", "(?:1|[^A-Za-z0-9_])"), ("\\p{Lu}", _re_class(_LU)),
          ("\\P{Lu}", _re_class(_LU, neg=True))]


@st.composite
def flag_patterns(draw, depth=3):
    """A small pattern as a tree: groups ``("group", flags, alternatives, quantifier)``
    (plain, ``(?i:``, ``(?-i:``, ``(?s:``), lookaheads ``("look", "=" or "!", group)``,
    leaves ``("leaf", (library text, re text))``, and bare ``(?i)`` flags ``("bare",)``
    anywhere in an alternative (a list of items). Written three ways (:func:`_write`)."""
    def item(d):
        kind = draw(st.sampled_from(["leaf"] * 5 + ["bare", "group", "group", "look"] if d
                                    else ["leaf"] * 4 + ["bare"]))
        if kind == "leaf":
            return ("leaf", draw(st.sampled_from(LEAVES)))
        if kind == "bare":
            return ("bare",)
        if kind == "look":
            return ("look", draw(st.sampled_from(["=", "!"])), group(d - 1, ""))
        return group(d - 1, draw(st.sampled_from(["", "*", "?", "{1,2}"])))

    def group(d, quant):
        flags = draw(st.sampled_from(["", "", "i", "i", "-i", "s", "s-i"]))
        alts = [[item(d) for _ in range(draw(st.integers(1, 3)))]
                for _ in range(draw(st.integers(1, 2)))]
        return ("group", flags, alts, quant)
    top = group(depth, "")
    if draw(st.booleans()):         # (?i) at the start: for the whole pattern
        top[2][0].insert(0, ("bare",))
    return top


def _write(t, how: str) -> str:
    """The pattern ``t`` written for the library (``lib``: bare flags as ``(?i)``), for
    Python's ``re`` with each bare flag holding to the end of its group, later alternatives
    too (``group``: the rest wrapped in ``(?i:...)``, PCRE's and the regex module's reading),
    or with every bare flag holding for the whole pattern (``whole``: Python's re before
    3.11, where a ``(?-i:...)`` still wins)."""
    def alternatives(alts) -> str:
        out, on = [], False
        for alt in alts:
            texts = []
            for x in alt:
                if x[0] != "bare":
                    texts.append(write(x))
                elif how == "lib":
                    texts.append("(?i)")
                elif how == "group" and not on:
                    on = True
                    texts.append("(?i:")
            text = "".join(texts)
            if how == "group" and on:
                text = text + ")" if "(?i:" in texts else "(?i:" + text + ")"
            out.append(text)
        return "|".join(out)

    def write(x) -> str:
        if x[0] == "leaf":
            return x[1][0] if how == "lib" else x[1][1]
        if x[0] == "look":
            return "(?" + x[1] + alternatives(x[2][2]) + ")"
        _, flags, alts, quant = x
        return "(?" + flags + ":" + alternatives(alts) + ")" + quant
    top = alternatives(t[2])
    return "(?i:" + top + ")" if how == "whole" and _has_bare(t) else top


def _bare_count(t) -> int:
    if t[0] == "bare":
        return 1
    if t[0] == "look":
        return _bare_count(t[2])
    if t[0] == "group":
        return sum(_bare_count(x) for alt in t[2] for x in alt)
    return 0


def _has_bare(t) -> bool:
    return _bare_count(t) > 0


@settings(max_examples=500, deadline=None, database=None)
@given(flag_patterns())
def test_flags_agree_with_re(t):
    """A pattern with inline flags finds a match in exactly the strings where ``re.search``
    does with each bare ``(?i)`` written as ``(?i:...)`` to the end of its group (PCRE's
    reading); where no difference is noted (:meth:`_Parser._flag_reach`), also exactly where
    it holds for the whole pattern (Python's re before 3.11: the readings agree)."""
    lib, group = _write(t, "lib"), _write(t, "group")
    try:
        a = R.parse_pattern(lib)
    except R.PatternError as e:
        assert "lookahead" in str(e), (lib, e)
        return
    p = _Parser(lib)
    p.parse()
    # a (?i) that starts the pattern, and no other, holds for all of it in either reading
    leading_only = t[2][0][:1] == [("bare",)] and _bare_count(t) == 1
    assert p.flag_note is None or not leading_only, lib
    g, w = re.compile(group), re.compile(_write(t, "whole"))
    for s in WORDS:
        got = R.fullmatch(a, s)
        assert got == (g.search(s) is not None), (lib, group, s)
        if p.flag_note is None:
            assert got == (w.search(s) is not None), (lib, _write(t, "whole"), s)


def test_bare_flag_reaches_the_end_of_its_group():
    regex = pytest.importorskip("regex")            # PCRE's reading, as the regex module's
    cases = {
        "(?i)abc": ["ABC", "abc", "aBc", "ab"],
        "^(?i)k$": ["k", "K", "\u212a", "x"],
        "(?i)(?-i:a)b": ["aB", "AB", "ab"],
        "(?i:a)b": ["AB", "Ab", "ab"],
        "1(?i)a": ["1A", "1a", "2a"],               # '1' reads the same either way
        "(?:1(?i)a|b)2": ["1A2", "B2", "b2", "1a2"],     # later alternatives too
        "(?:(?i)k)\\s": ["K ", "\u212a ", "k\n"],
        "(?i)[^k]": ["k", "K", "\u212a", "x"],
        "(?i)\\W": ["k", "\u212a", " ", "_"],
        "(?i)\\P{Lu}": ["a", "A", "1"],
        "(?i)x(?-i:a)": ["XA", "Xa", "xa"],
        "(?s:a.b)": ["a\nb", "a\rb"],
        "(?s-i:a.)b": ["a\nb", "A\nb", "a\nB"],
    }
    for p, words in cases.items():
        a = R.parse_pattern(p)
        for s in words:
            assert R.fullmatch(a, s) == (regex.search(p, s) is not None), (p, s)


# -- CloudFormation patterns ----------------------------------------------------------------------

CFN_STOP = "^(?!(?i)(stop|help)$)[ \\S]+"
CFN_AWS = "^(?!(?i)aws)[A-Za-z0-9]{2,64}::[A-Za-z0-9]{2,64}::[A-Za-z0-9]{2,64}$"


def test_cloudformation_flag_patterns():
    regex = pytest.importorskip("regex")
    a = R.parse_pattern(CFN_STOP)
    for s in ["STOP", "stop", "Stop", "\u017ftop", "stop ", "help me", "HeLp", "x", "", " ",
              "stopx", "\nstop"]:
        want = regex.search(CFN_STOP, s) is not None
        assert R.fullmatch(a, s) == want, s
        assert want == (re.search("^(?!(?i:(stop|help)$))[ \\S]+", s) is not None), s
    Grammar.from_json_schema({"type": "string", "pattern": CFN_STOP})
    # the flag inside a group, written scoped: what the schema means
    scoped = CFN_AWS.replace("(?i)aws", "(?i:aws)")
    b = R.parse_pattern(scoped)
    for s in ["AWS::ab::cd", "aws::ab::cd", "Aws::ab::cd", "ab::cd::ef", "a::bb::cc",
              "awx::ab::cd", "ab::c\u212a::ef"]:
        assert R.fullmatch(b, s) == (regex.search(CFN_AWS, s) is not None), s
    Grammar.from_json_schema({"type": "string", "pattern": scoped})


def test_a_flag_read_differently_by_old_pythons_is_read_as_pcre_and_noted(caplog):
    """Bare ``(?i)`` with something outside its group that case-insensitivity changes: PCRE
    and the regex module (cfn-lint's validator) read it to the end of its group, Python's re
    before 3.11 for the whole pattern. The pattern is read as PCRE reads it and the
    difference is logged. CloudFormation's AWS-prefix pattern is one: ``[A-Za-z0-9]``
    outside the lookahead would match U+0130, U+0131, U+017F, U+212A case-insensitively."""
    regex = pytest.importorskip("regex")
    whole = "(?i:" + CFN_AWS.replace("(?i)", "") + ")"
    assert re.search(whole, "a\u212a::bb::cc") and not regex.search(CFN_AWS, "a\u212a::bb::cc")
    for p, atom, offset in [(CFN_AWS, "[A-Za-z0-9]", 12), ("a(?i)b", "a", 0),
                            ("x|(?i)a", "x", 0), ("(?:(?i)a)b", "b", 9),
                            ("(?-i:a(?i)b)", "b", 10), ("(?i)[^k](?-i:1(?i)\\W)", "\\W", 18)]:
        parser = _Parser(p)
        parser.parse()
        assert f"{atom!r} at offset {offset}" in parser.flag_note, (p, parser.flag_note)
        assert "Python's re before 3.11" in parser.flag_note
        a = R.parse_pattern(p)
        for s in ["a\u212a::bb::cc", "AWS::ab::cd", "aws::ab::cd", "ab::cd::ef", "aB", "AB", "X",
                  "xA", "Ab", "aB1", "kk1_", "K1 ", "k\u212a1 "]:
            assert R.fullmatch(a, s) == (regex.search(p, s) is not None), (p, s)
    R.parse_pattern.cache_clear()
    with caplog.at_level(logging.INFO, logger="stackmask"):
        Grammar.from_json_schema({"type": "string", "pattern": CFN_AWS})
    assert "read as PCRE" in caplog.text
    # nothing outside the flag's group that case changes: the readings agree
    for p in ["(?i)a", "^(?i)a$", "1(?i)a", "(?:(?i)a)[ \\S]", "(?i)x(?-i:a)", "1(?-i:(?i)1)", ".(?i)a"]:
        parser = _Parser(p)
        parser.parse()
        assert parser.flag_note is None, p


@pytest.mark.parametrize("pattern, what", [
    ("(?m)^a$", "multiline"), ("(?x)a", "inline flag 'x'"), ("(?-i)a", "without a group"),
    ("(?u:a)", "inline flag 'u'"), ("(?ii)a", "repeated"), ("(?i-i:a)", "both on and off"),
    ("()(?)", "without flags"), ("(?-:a)", "without flags"), ("a((?s)b)", "(?s) inside a group"),
    ("(?i)*", "quantified")])
def test_unsupported_flags_are_refused_by_name(pattern, what):
    with pytest.raises(R.PatternError) as ei:
        R.parse_pattern(pattern)
    assert what in str(ei.value), str(ei.value)


def test_turning_off_multiline_is_a_no_op():
    assert R.parse_pattern("(?-m:^a$)") == R.parse_pattern("^a$")


# -- compatibility properties ----------------------------------------------------------------------

COMPAT = ["Graph", "graph", "Print", "print", "Blank", "blank", "Cntrl", "XDigit", "xdigit",
          "Punct", "White_Space", "space", "WSpace", "Hex_Digit", "Hex", "ASCII_Hex_Digit",
          "AHex"]


def test_compat_properties_agree_with_the_regex_module():
    """For every code point, ``\\p{NAME}`` holds it exactly when the regex module's does.
    Only the code points assigned in both Unicode databases count: Python's ``unicodedata``
    and the regex module's tables may be different Unicode versions, and a code point
    assigned in one only is in Graph/Print/XDigit/Punct (and out of Cn) in that one."""
    regex = pytest.importorskip("regex")
    universe = _all_code_points()
    assigned = _cps("".join(regex.findall("\\P{Cn}", universe))) & _iv_set(R.unicode_property("Assigned"))
    for name in COMPAT:
        theirs = _cps("".join(regex.findall("\\p{%s}" % name, universe))) & assigned
        ours = _iv_set(R.unicode_property(name)) & assigned
        assert ours == theirs, (name, sorted(hex(c) for c in ours ^ theirs)[:10])


def test_compat_properties_in_patterns():
    a = R.parse_pattern("^[\\p{Graph}\\x20]*$")
    for s, want in [("abc DEF", True), ("a\tb", False), ("a\u00a0b", False), ("\u4e00!", True),
                    ("a\nb", False), ("\u0378", False), ("", True)]:
        assert R.fullmatch(a, s) == want, s
    b = R.parse_pattern("^\\P{Print}$")
    # TAB is Blank but Cntrl, so not Print
    assert R.fullmatch(b, "\x07") and R.fullmatch(b, "\t") and not R.fullmatch(b, " ")
    Grammar.from_json_schema({"type": "string", "pattern": "^[\\p{Graph}\\x20]*$"})
    for name in ("Alpha", "Alnum", "Alphabetic", "Word"):
        with pytest.raises(R.PatternError, match="not supported"):
            R.parse_pattern("\\p{%s}" % name)
