"""The character sets of ECMA-262 patterns: the sets of the class escapes and of ``.``,
Unicode properties (``\\p{..}``: general categories, ECMA-262's binary properties, the
compatibility properties of UTS #18 Annex C) and case-insensitive matching (the case
variants of a set's members, as Python's ``re`` reads ``(?i)``), as code point intervals.

Used by the pattern parser (:mod:`.parser`) and, for ``\\w``, by the word boundaries
(:mod:`.language`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache

from ...lexer.ir import MAX_CP, iv_intersect
from ...lexer.ir import complement_intervals as iv_complement
from ...lexer.ir import normalize_intervals as iv_norm

__all__ = ["DIGIT", "WORD", "SPACE", "DOT", "ANY_CP", "unicode_property", "case_closure",
           "case_interior"]


DIGIT = ((0x30, 0x39),)
WORD = iv_norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE = iv_norm([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                 (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                 (0xFEFF, 0xFEFF)])
DOT = iv_complement(iv_norm([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]))
ANY_CP = iv_norm([(0, MAX_CP)])


_GC_LONG = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
    "Combining_Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
    "Number": "N", "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl",
    "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf", "Other_Punctuation": "Po",
    "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk",
    "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf",
    "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
}


@lru_cache(maxsize=None)
def _general_categories() -> dict:
    """Two-letter general category -> code point intervals (Python's ``unicodedata``)."""
    import unicodedata
    out: dict = {}
    cat = unicodedata.category
    prev, start = None, 0
    for cp in range(MAX_CP + 2):
        c = cat(chr(cp)) if cp <= MAX_CP else None
        if c != prev:
            if prev is not None:
                out.setdefault(prev, []).append((start, cp - 1))
            prev, start = c, cp
    return {k: iv_norm(v) for k, v in out.items()}


#: PropList.txt's White_Space (unchanged since Unicode 6.3; not in ``unicodedata``)
_WHITE_SPACE = iv_norm([(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
                        (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
                        (0x3000, 0x3000)])
#: PropList.txt's Hex_Digit (unchanged since Unicode 3.1): ASCII and fullwidth 0-9 A-F a-f
_HEX_DIGIT = iv_norm([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66), (0xFF10, 0xFF19),
                      (0xFF21, 0xFF26), (0xFF41, 0xFF46)])
_ASCII_HEX_DIGIT = iv_norm([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)])

#: the compatibility properties of UTS #18 Annex C as the ``regex`` module defines them (its
#: spellings), and ECMA-262's binary properties White_Space, Hex_Digit, ASCII_Hex_Digit (with
#: their aliases): name -> how to build the set from the general categories
_COMPAT = {
    # graph: all but White_Space, gc=Cc, gc=Cs, gc=Cn
    "Graph": "graph", "graph": "graph",
    # print: (graph + blank) - cntrl
    "Print": "print", "print": "print",
    # blank: gc=Space_Separator + TAB
    "Blank": "blank", "blank": "blank",
    "Cntrl": "cntrl",                     # gc=Cc ("cntrl" is already its category alias)
    # xdigit: gc=Decimal_Number + Hex_Digit
    "XDigit": "xdigit", "xdigit": "xdigit",
    "Punct": "punct",                     # gc=Punctuation ("punct" is its category alias)
    "White_Space": "space", "space": "space", "WSpace": "space",
    "Hex_Digit": "hex", "Hex": "hex", "ASCII_Hex_Digit": "ahex", "AHex": "ahex",
}


def _compat_property(kind: str) -> tuple:
    cats = _general_categories()

    def gc(*names):
        return iv_norm([iv for k in names for iv in cats.get(k, ())])
    if kind == "space":
        return _WHITE_SPACE
    if kind == "hex":
        return _HEX_DIGIT
    if kind == "ahex":
        return _ASCII_HEX_DIGIT
    if kind == "cntrl":
        return gc("Cc")
    if kind == "punct":
        return gc("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")
    if kind == "xdigit":
        return iv_norm(list(gc("Nd")) + list(_HEX_DIGIT))
    blank = iv_norm([(0x09, 0x09)] + list(gc("Zs")))
    graph = iv_complement(iv_norm(list(_WHITE_SPACE) + list(gc("Cc", "Cs", "Cn"))))
    if kind == "blank":
        return blank
    if kind == "graph":
        return graph
    assert kind == "print"
    return iv_intersect(iv_norm(list(graph) + list(blank)), iv_complement(gc("Cc")))


@lru_cache(maxsize=None)
def unicode_property(body: str):
    """The code points of ``\\p{body}``, as intervals (surrogates never members), or None
    when the property is not one this module knows: a general category by its short or
    long name, alone or as ``General_Category=``/``gc=``; ``Any``, ``ASCII``, ``Assigned``;
    ECMA-262's binary properties ``White_Space`` (``space``), ``Hex_Digit`` (``Hex``),
    ``ASCII_Hex_Digit`` (``AHex``); and the compatibility properties of UTS #18 Annex C
    as the ``regex`` module defines them: ``Graph`` (all but White_Space and the
    categories Cc, Cs, Cn), ``Print`` (Graph and Blank, less Cc), ``Blank`` (Zs and TAB),
    ``Cntrl`` (Cc), ``XDigit`` (Nd and Hex_Digit), ``Punct`` (P). Not ``Alpha``/``Alnum``:
    they need the Other_Alphabetic property, which ``unicodedata`` does not give.
    Categories are those of the running Python's Unicode database
    (``unicodedata.unidata_version``)."""
    name = body
    if "=" in body:
        key, name = body.split("=", 1)
        if key not in ("General_Category", "gc"):
            return None
    elif body == "Any":
        return iv_complement(())
    elif body == "ASCII":
        return ((0, 0x7F),)
    elif body == "Assigned":
        return iv_complement(_general_categories().get("Cn", ()))
    elif body in _COMPAT:
        return _compat_property(_COMPAT[body])
    gc = _GC_LONG.get(name, name)
    cats = _general_categories()
    if gc == "LC":
        parts = ["Lu", "Ll", "Lt"]
    elif len(gc) == 1 and gc in "LMNPSZC":
        parts = [k for k in cats if k[0] == gc]
    elif gc in cats:                       # a two-letter category
        parts = [gc]
    else:
        return None
    # (normalizing drops surrogates: a JSON string holds no lone surrogate)
    return iv_norm([iv for k in parts for iv in cats.get(k, ())])


#: the one code point whose full lowercase (SpecialCasing.txt, what ``str.lower`` gives) is
#: longer than one character, and its simple lowercase (UnicodeData.txt), which ``re`` uses
_SIMPLE_LOWER = {"\u0130": "i"}


@lru_cache(maxsize=None)
def _case_table() -> tuple:
    """``(cps, classes)``: the code points that have a case variant, sorted, and for each
    the sorted tuple of its case class (itself included). Two code points are case variants
    when they are linked by a chain of simple lowercase and single-character uppercase
    mappings and equal ``str.casefold()`` strings: the case-insensitive equivalence of
    Python's ``re`` for ``str`` patterns (``tests/test_ecma_flags.py`` checks it on every
    code point). Built once, from the few blocks of 256 code points that case mapping
    changes."""
    parent: dict = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        parent[find(a)] = find(b)

    by_fold: dict = {}
    for base in range(0, MAX_CP + 1, 256):
        block = "".join(map(chr, range(base, base + 256)))
        if block.lower() == block and block.upper() == block and block.casefold() == block:
            continue
        for c in block:
            low, up, fold = c.lower(), c.upper(), c.casefold()
            if len(low) != 1:
                low = _SIMPLE_LOWER.get(c, c)
            if low != c:
                union(c, low)
            if len(up) == 1 and up != c:
                union(c, up)
            if len(fold) == 1:
                if fold != c:
                    union(c, fold)
            else:
                by_fold.setdefault(fold, []).append(c)
    for same in by_fold.values():
        for c in same[1:]:
            union(c, same[0])
    groups: dict = {}
    for c in parent:
        groups.setdefault(find(c), []).append(ord(c))
    table = {}
    for members in groups.values():
        if len(members) > 1:
            cls = tuple(sorted(members))
            for m in cls:
                table[m] = cls
    cps = sorted(table)
    return cps, [table[c] for c in cps]


@lru_cache(maxsize=1024)
def case_closure(ivs: tuple) -> tuple:
    """The intervals ``ivs`` and every case variant of their members (:func:`_case_table`):
    what a set matches case-insensitively. Looks up only the few thousand code points that
    have variants (bisecting each interval), so ``\\S`` (most of Unicode) is fast too."""
    cps, classes = _case_table()
    extra: list = []
    for lo, hi in ivs:
        for k in range(bisect_left(cps, lo), bisect_right(cps, hi)):
            extra.extend((c, c) for c in classes[k])
    return iv_norm(list(ivs) + extra) if extra else tuple(ivs)


def case_interior(ivs: tuple) -> tuple:
    """The members of ``ivs`` all of whose case variants are members too: what the
    complement of a set's complement matches case-insensitively (``\\W``, ``\\P{..}``)."""
    return iv_complement(case_closure(iv_complement(ivs)))
