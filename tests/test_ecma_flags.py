"""The compatibility properties ``\\p{Graph}``, ``\\p{Print}``, ... of ``grammars.ecma_regex``,
against the ``regex`` module (the validator of cfn-lint, which reads AWS CloudFormation
resource schemas)."""

from __future__ import annotations

import pytest

from stackmask import Grammar
from stackmask.grammars import ecma_regex as R

MAX_CP = 0x10FFFF


def _all_code_points() -> str:
    """Every code point but the surrogates, in order."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, MAX_CP + 1)))


def _cps(s: str) -> set:
    return set(map(ord, s))


def _iv_set(ivs) -> set:
    return {c for lo, hi in ivs for c in range(lo, hi + 1)}


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
