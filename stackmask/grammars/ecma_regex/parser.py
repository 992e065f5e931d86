"""ECMA-262 patterns (JSON Schema ``pattern``) -> the regex IR (:mod:`stackmask.lexer.ir`).

A pattern is parsed into the IR over sets of Unicode code points (the *decoded* string
the JSON Schema validator sees) and anchored as JSON Schema says: a pattern matches
anywhere in the string unless it uses ``^``/``$``.

ECMA semantics implemented: ``\\d`` = [0-9], ``\\w`` = [A-Za-z0-9_], ``\\s`` =
ECMA WhiteSpace + LineTerminator, ``.`` = anything but ``\\n \\r U+2028
U+2029``, classes and negated classes, escapes ``\\t \\n \\v \\f \\r \\0 \\cX
\\xHH \\uHHHH \\u{H...}`` and identity escapes (Annex B: ``\\_`` is ``_``; a lone surrogate
escape matches nothing: no JSON string the library accepts holds one), groups (capturing, named
``(?<n>...)``/``(?P<n>...)``, non-capturing), alternation, greedy and lazy
quantifiers (laziness does not change which strings match), Annex-B literal
``{ } ]``, ``^`` anywhere outside quantified groups (a mid-pattern ``^`` requires
everything before it to match empty), ``$`` anywhere (in a quantified group: the
iteration through it ends the input, :func:`_split_end`), and lookaheads ``(?=R)``/``(?!R)``
outside quantified groups: the rest of the input from that point must (not) begin with a
match of ``R``, computed right to left as an intersection with (a difference from) the
language of what follows (:func:`_rest`), or, where that is too large to write out as a
regex, kept as a lookahead at the top of the language (``("X", body, looks)``,
:func:`.algebra.looking`; a fixed-length prefix goes inside, :func:`_prepend`), which the
lexer reads as automata met or subtracted; lookbehinds ``(?<=R)``/``(?<!R)`` right before the
``$`` that ends the pattern or a top-level alternative (the string must (not) end with a match
of ``R``; too large to write out, a lookahead over the whole string), and anywhere a
lookbehind or lookahead of one character next to what reads that character, which limits
it (``(?!-)[a-z0-9-]{1,63}(?<!-)``: :func:`_edge_in`). Not
supported (raise :class:`PatternError` naming the feature): other lookbehinds,
other lookaheads inside quantified groups, ``^`` in a lookahead but as a start-of-input test
(``(?!^[0-9]+$)`` is supported), word boundaries ``\\b \\B`` that the characters on
each side do not decide (:func:`_decide_marks`, across groups; then decided on the whole string,
:func:`.algebra.resolve_word_boundaries`) beside other assertions, backreferences, ``\\p{...}`` properties other than those below
(scripts, ``Alphabetic``/``Alpha``/``Alnum``, ...), inline flags but ``i``, ``s`` as below
and ``m`` turned off (``(?-m:...)``, a no-op), ``^`` inside quantified groups. ``(?s)``
outside groups (not ECMA-262: PCRE's "dot matches all", which Python's ``re`` also reads at
the start of a pattern) makes every later ``.`` match every character; ``(?s:...)`` and
``(?-s:...)`` inside their group. ``\\p{L}``, ``\\p{Lu}``, ``\\P{Nd}``,
``\\p{gc=Letter}``: the categories of Python's ``unicodedata``; ``\\p{White_Space}``,
``\\p{Hex_Digit}``, ``\\p{ASCII_Hex_Digit}`` (ECMA-262's binary properties), and
``\\p{Graph}``, ``\\p{Print}``, ``\\p{Blank}``, ``\\p{Cntrl}``, ``\\p{XDigit}``,
``\\p{Punct}`` as the ``regex`` module defines them (UTS #18 Annex C; :func:`unicode_property`).

Case-insensitive matching: ``(?i:...)`` (ES2025 pattern modifiers; ``(?-i:...)`` turns it
off inside), and a bare ``(?i)``, which holds to the end of its group (later alternatives
too) or of the pattern, as in PCRE and the ``regex`` module. A set then also matches every
case variant of its members (:func:`case_closure`: the equivalence of Python's ``re``, which
differs from the ``regex`` module's on the four letters I, i, U+0130, U+0131), and a negated
one (``[^k]``, ``\\W``, ``\\P{Lu}``) matches only what has no variant in the set it negates.
Python's ``re`` before 3.11 reads a bare ``(?i)`` anywhere for the whole pattern (and 3.11 on
refuses one not at the start); where the two readings differ the pattern is read as PCRE reads
it, and the difference is logged (:meth:`_Parser._flag_reach`): ``^(?!(?i)aws)[A-Za-z0-9]+``
(outside the lookahead, ``[A-Za-z0-9]`` would match U+212A KELVIN SIGN case-insensitively);
``^(?!(?i)(stop|help)$)[ \\S]+`` and ``(?i)^abc$`` read the same either way.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_left, bisect_right
from functools import lru_cache

from ...lexer.ir import (ANY, ANYSTAR, EPS, MAX_CP, NONE, SURR_HI, SURR_LO, alt, ch, iv_intersect,
                         length_range, nullable, rep, seq)
from ...lexer.ir import complement_intervals as iv_complement
from ...lexer.ir import normalize_intervals as iv_norm
from .algebra import (NWB_MARK, WB_MARK, TooComplex, difference, intersect, is_subset, looking,
                      resolve_word_boundaries, union, write_out)

__all__ = ["PatternError", "parse_pattern", "parse_regex_full", "unicode_property", "case_closure"]


log = logging.getLogger("stackmask")


class PatternError(ValueError):
    """The pattern is invalid or uses a feature that cannot be enforced."""


DIGIT = ((0x30, 0x39),)
WORD = iv_norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE = iv_norm([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                 (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                 (0xFEFF, 0xFEFF)])
DOT = iv_complement(iv_norm([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]))
ANY_CP = iv_norm([(0, MAX_CP)])


class _NegSet(tuple):
    """The intervals of a set written as the complement of another (``\\D \\W \\S``,
    ``\\P{..}``). Case-insensitive, such a set is the complement of the other's case closure:
    ``\\W`` does not match U+212A KELVIN SIGN, a case variant of the word character ``k``
    (as in ECMA-262 with the ``u`` flag, Python's ``re`` for its ``\\W``, and the ``regex``
    module for ``\\P{Lu}``)."""
    __slots__ = ()


_CLASS_ESC = {"d": DIGIT, "D": _NegSet(iv_complement(DIGIT)), "w": WORD,
              "W": _NegSet(iv_complement(WORD)), "s": SPACE, "S": _NegSet(iv_complement(SPACE))}
_CTRL_ESC = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13}

# intermediate tree: ("bol",), ("eol",), ("chars", ivs), ("seq", [..]), ("alt", [..]), ("rep", t, lo, hi)


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


def _case_interior(ivs: tuple) -> tuple:
    """The members of ``ivs`` all of whose case variants are members too: what the
    complement of a set's complement matches case-insensitively (``\\W``, ``\\P{..}``)."""
    return iv_complement(case_closure(iv_complement(ivs)))


#: an inline flag group: ``(?i)``, ``(?i:``, ``(?-i:``, ``(?s-i:`` ... (``(?:`` too: no flags)
_FLAGS = re.compile(r"\(\?([A-Za-z]*)(?:(-)([A-Za-z]*))?([:)])")


class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.i = 0
        self.dot = DOT            # ANY_CP after a top-level (?s), in (?s:...)
        self.groups = 0
        self.depth = 0            # groups and lookarounds open at self.i
        self.icase = False        # case-insensitive here: (?i) earlier in the group, (?i:...)
        self.scoped = None        # the i of the innermost (?i:...)/(?-i:...) around here
        self.bare_i = None        # offset of the first bare (?i)
        #: where a bare (?i) reads differently in Python's re before 3.11 (:meth:`_flag_reach`)
        self.flag_note: str | None = None
        # (start, end, sets, negated sets, negated, intervals) of each character atom that
        # a bare (?i) anywhere would make read otherwise if it held for the whole pattern:
        # one read case-sensitively outside (?-i:...), or case-insensitively by a bare (?i)
        # inside (?-i:...) (which wins over a whole-pattern flag)
        self.unscoped: list = []
        #: whether the tree holds \b/\B marks
        self.marks = False

    def fail(self, msg: str):
        raise PatternError(f"{msg} (at offset {self.i} of {self.src!r})")

    def peek(self, k: int = 0):
        j = self.i + k
        return self.src[j] if j < len(self.src) else None

    def parse(self):
        t = self.disjunction()
        if self.i < len(self.src):
            self.fail(f"unexpected {self.src[self.i]!r}")
        if self.bare_i is not None:
            self.flag_note = self._flag_reach()
        return t

    def _flag_reach(self) -> str | None:
        """A bare ``(?i)`` makes the rest of its group case-insensitive in Perl, PCRE and the
        ``regex`` module (the reading taken), but the whole pattern in Python's ``re``
        before 3.11 (which refuses it from 3.11 on, but at the start of the pattern): None
        where the two readings agree, i.e. every character atom they read differently
        (:attr:`unscoped`) matches the same characters either way; else a note naming the
        first atom and a character read differently."""
        for start, end, pos, negs, neg, cs in self.unscoped:
            ci = _fold(pos, negs, neg)
            if ci != cs:
                diff = iv_norm(list(_iv_minus(ci, cs)) + list(_iv_minus(cs, ci)))
                w = diff[0][0]
                return (f"inline flag (?i) at offset {self.bare_i} of {self.src!r} read as PCRE "
                        f"and the regex module read it, to the end of its group; Python's re "
                        f"before 3.11 reads it for the whole pattern, where {self.src[start:end]!r} "
                        f"at offset {start} also matches {chr(w)!r} (U+{w:04X}); write (?i:...) "
                        f"to say which")
        return None

    def _chars(self, start: int, pos: list, negs: list = (), neg: bool = False):
        """The node of a character atom read from ``start``: the union of the intervals
        ``pos`` (sets, ranges, characters) and ``negs`` (:class:`_NegSet`), complemented
        when ``neg``; case-insensitive when the flag is on here."""
        cs = iv_norm([iv for x in list(pos) + list(negs) for iv in x])
        if neg:
            cs = iv_complement(cs)
        # read otherwise if a bare (?i) held for the whole pattern: case-sensitive outside
        # (?i:...)/(?-i:...), or case-insensitive (by a bare (?i)) inside a (?-i:...)
        if (not self.icase and self.scoped is None) or (self.icase and self.scoped is False):
            self.unscoped.append((start, self.i, tuple(pos), tuple(negs), neg, cs))
        return ("chars", _fold(pos, negs, neg) if self.icase else cs)

    def disjunction(self):
        alts = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def alternative(self):
        items = []
        while self.i < len(self.src) and self.peek() not in ("|", ")"):
            items.append(self.term())
        if any(t[0] == "look" for t in items):
            items = _one_char_looks(items)
        if any(t[0] == "behind1" for t in items):
            items = self._one_char_behinds(items)
        return ("seq", items)

    def _one_char_behinds(self, items: list) -> list:
        """A lookbehind of one character, ``(?<!-)``, after items of the same sequence
        that end in a character they read (not an empty match): that last character is
        limited to the allowed ones, ``[a-z0-9-]{1,63}(?<!-)`` is
        ``[a-z0-9-]{0,62}[a-z0-9]`` (:func:`_edge_in`). Elsewhere (the character
        before is outside the sequence) refused."""
        out: list = []
        for t in items:
            if t[0] != "behind1":
                out.append(t)
                continue
            got = _edge_in(("seq", out), t[1], last=True) if out else None
            if got is None:
                self.i = t[2]
                self.fail(_BEHIND_PLACES + ", or of one character right after what ends in a "
                                           "character it reads")
            out = [got]
        return out

    def term(self):
        c = self.peek()
        if c == "^":
            self.i += 1
            return self._no_quant(("bol",), "^")
        if c == "$":
            self.i += 1
            return self._no_quant(("eol",), "$")
        if c == "\\" and self.peek(1) in ("b", "B"):
            at = self.i
            self.i += 2
            # decided once the whole pattern is read (:func:`_decide_marks`)
            self.marks = True
            return self._no_quant(("mark", self.src[at + 1] == "B", at), "\\b")
        if c == "(" and self.peek(1) == "?":
            m = _FLAGS.match(self.src, self.i)
            if m and m.group(4) == ")":
                return self._bare_flags(m)
        if c == "\\" and self.peek(1) == "A":
            self.i += 2
            return self._no_quant(("bol",), "\\A")
        if c == "\\" and self.peek(1) in ("Z", "z"):
            self.i += 2
            return self._no_quant(("eol",), "\\Z")
        if c == "(" and self.peek(1) == "?" and self.peek(2) in ("=", "!"):
            positive = self.peek(2) == "="
            body = self._group_body(3)
            return self._quantified_look(("look", positive, body))
        if c == "(" and self.peek(1) == "?" and self.peek(2) == "<" and self.peek(3) in ("=", "!"):
            # a lookbehind right before the '$' that ends a top-level alternative looks at the
            # end of the whole string: (?<!\.)$ "does not end with a dot"
            at = self.i
            positive = self.peek(3) == "="
            body = self._group_body(4)
            if self.depth or self.peek() != "$" or self.peek(1) not in (None, "|") or _has_anchor(body):
                one = _one_char(body)
                if one is not None:
                    # one character: a condition on the last character of what comes
                    # before (alternative() folds it in)
                    return ("behind1", one if positive else iv_complement(one), at)
                self.i = at
                self.fail(_BEHIND_PLACES)
            return ("behind", positive, body)
        atom = self.atom()
        return self.quantifier(atom)

    def _bare_flags(self, m):
        """A flag group without a body, ``(?i)``, ``(?s)``: it holds from here to the end
        of the enclosing group (or of the pattern)."""
        on, off = self._flag_letters(m)
        if off:
            self.fail(f"turning a flag off without a group ((?-{off})) is not supported; "
                      f"write (?-{off}:...)")
        if "s" in on:
            if self.depth:
                self.fail("(?s) inside a group is not supported (it is at the top level "
                          "and as (?s:...))")
            # PCRE's dot-all flag at the top level: "." matches every character from here
            # on (later alternatives too); Python reads it so at the start
            self.dot = ANY_CP
        if "i" in on:
            # from here to the end of the group (later alternatives too), as PCRE reads it;
            # parse() notes where Python's re before 3.11 (the whole pattern) reads it otherwise
            self.icase = True
            if self.bare_i is None:
                self.bare_i = self.i
        self.i = m.end()
        return self._no_quant(("seq", []), m.group(0))

    def _flag_letters(self, m) -> tuple:
        """The flags an inline flag group turns on and off: ``i``; ``s`` (dot-all); ``m``
        only off (it is never on: ``^``/``$`` at line breaks are not supported)."""
        on, off = m.group(1), m.group(3) or ""
        for f in on + off:
            if f not in "ism":
                self.fail(f"inline flag {f!r} is not supported (i and s are, and m turned off)")
        if not on and not off:
            self.fail("inline flag group without flags")
        if len(set(on)) < len(on) or len(set(off)) < len(off) or set(on) & set(off):
            self.fail("inline flag repeated or turned both on and off")
        if "m" in on:
            self.fail("the multiline flag (?m) is not supported ('^' and '$' at line breaks)")
        return on, off

    def _group_body(self, opener: int, on: str = "", off: str = ""):
        """The disjunction inside a group or ``(?=``/``(?!``/``(?<=``/``(?<!`` (past
        ``opener`` more characters of its opening), up to and past its ``)``; with the
        flags ``on``/``off`` of a ``(?i:...)``-like group. Flags set inside end with it."""
        self.i += opener
        self.depth += 1
        saved = self.icase, self.dot, self.scoped
        if "i" in on:
            self.icase = self.scoped = True
        if "i" in off:
            self.icase = self.scoped = False
        if "s" in on:
            self.dot = ANY_CP
        if "s" in off:
            self.dot = DOT
        body = self.disjunction()
        self.icase, self.dot, self.scoped = saved
        self.depth -= 1
        if self.peek() != ")":
            self.fail("missing )")
        self.i += 1
        return body

    def _quantified_look(self, node):
        """A lookahead, with its quantifier if it has one (ECMA-262 Annex B,
        QuantifiableAssertion): one that may repeat zero times tests nothing (the match may
        always take zero iterations), one that must repeat tests once (a further iteration
        reads nothing, and an empty iteration ends the repetition)."""
        q = self.quantifier(("seq", []))     # reads the quantifier (and a lazy '?'), if any
        if q[0] != "rep":
            return node
        return node if q[2] >= 1 else ("seq", [])

    def _no_quant(self, node, what):
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self._brace_quant(peek_only=True)):
            self.fail(f"quantified assertion {what}")
        return node

    def _brace_quant(self, peek_only=False):
        m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.src, self.i)
        if not m:
            return None
        if peek_only:
            return m
        lo = int(m.group(1))
        if m.group(2) is None:
            hi = lo
        elif m.group(3) == "":
            hi = None
        else:
            hi = int(m.group(3))
        if hi is not None and hi < lo:
            self.fail("numbers out of order in {} quantifier")
        self.i = m.end()
        return lo, hi

    def quantifier(self, atom):
        c = self.peek()
        if c == "*":
            self.i += 1
            lo, hi = 0, None
        elif c == "+":
            self.i += 1
            lo, hi = 1, None
        elif c == "?":
            self.i += 1
            lo, hi = 0, 1
        elif c == "{" and self._brace_quant(peek_only=True):
            lo, hi = self._brace_quant()
        else:
            return atom
        if self.peek() == "?":       # lazy: same set of matching strings
            self.i += 1
        if self.peek() == "+":
            self.fail("possessive quantifiers are not ECMA-262")
        if atom[0] in ("bol", "eol"):
            self.fail("quantified assertion")
        return ("rep", atom, lo, hi)

    def atom(self):
        c = self.peek()
        start = self.i
        if c == ".":
            self.i += 1
            return ("chars", self.dot)      # (its case variants are all in it)
        if c == "(":
            m = _FLAGS.match(self.src, self.i)
            if m and (m.group(1) or m.group(2)):
                # (?i:...), (?-i:...), (?s:...): the flags hold inside the group
                on, off = self._flag_letters(m)
                self.groups += 1
                return self._group_body(m.end() - self.i, on, off)
            self.i += 1
            if self.peek() == "?":
                if self.peek(1) == ":":
                    self.i += 2
                elif self.peek(1) == "<":
                    j = self.src.find(">", self.i)
                    if j < 0:
                        self.fail("unterminated group name")
                    self.i = j + 1
                elif self.peek(1) == "P" and self.peek(2) == "<":
                    j = self.src.find(">", self.i)
                    if j < 0:
                        self.fail("unterminated group name")
                    self.i = j + 1
                else:
                    self.fail("inline flags and other (?...) groups are not ECMA-262 / not supported")
            self.groups += 1
            return self._group_body(0)
        if c == ")":
            self.fail("unbalanced )")
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.atom_escape()
        if c in ("*", "+", "?"):
            self.fail(f"nothing to repeat before {c!r}")
        if c == "{" and self._brace_quant(peek_only=True):
            self.fail("nothing to repeat before '{'")
        self.i += 1
        return self._chars(start, [((ord(c), ord(c)),)])

    def _hex(self, n: int) -> int | None:
        s = self.src[self.i:self.i + n]
        if len(s) == n and all(ch in "0123456789abcdefABCDEF" for ch in s):
            self.i += n
            return int(s, 16)
        return None

    def _unicode_escape(self) -> int:
        # after "\u"
        if self.peek() == "{":
            j = self.src.find("}", self.i)
            body = self.src[self.i + 1:j] if j > 0 else ""
            if not body or not all(c in "0123456789abcdefABCDEF" for c in body) or int(body, 16) > MAX_CP:
                self.fail("invalid \\u{...} escape")
            self.i = j + 1
            return int(body, 16)
        v = self._hex(4)
        if v is None:
            return ord("u")           # Annex B identity escape
        if SURR_LO <= v <= 0xDBFF and self.src[self.i:self.i + 2] == "\\u":
            save = self.i
            self.i += 2
            w = self._hex(4)
            if w is not None and 0xDC00 <= w <= SURR_HI:
                return 0x10000 + ((v - SURR_LO) << 10) + (w - 0xDC00)
            self.i = save
        # a lone surrogate (no JSON string this library accepts holds one: docs/json-schema.md,
        # Strings) matches nothing: normalizing the intervals drops it, in a class and out
        return v

    def _escape_char(self, in_class: bool):
        """After the backslash: a code point (int) or a set (tuple)."""
        c = self.peek()
        if c is None:
            self.fail("pattern ends with a backslash")
        self.i += 1
        if c in _CLASS_ESC:
            return _CLASS_ESC[c]
        if c in _CTRL_ESC:
            return _CTRL_ESC[c]
        if c == "b" and in_class:
            return 8
        if c == "0" and not (self.peek() or "").isdigit():
            return 0
        if c.isdigit():
            if in_class:
                self.fail("octal escapes are not supported")
            self.fail("backreferences are not supported")
        if c == "x":
            v = self._hex(2)
            return ord("x") if v is None else v
        if c == "u":
            return self._unicode_escape()
        if c == "c":
            n = self.peek()
            if n is not None and n.isascii() and n.isalpha():
                self.i += 1
                return ord(n) % 32
            self.i -= 1
            return ord("\\")          # Annex B: "\c" is a literal backslash then c
        if c in ("p", "P"):
            return self._property(c == "P")
        if c == "k":
            self.fail("named backreferences are not supported")
        if c.isalnum():
            self.fail(f"unknown escape \\{c}")
        return ord(c)                 # identity escape (Annex B: \_, \:, \= ... are themselves)

    def _property(self, negated: bool) -> tuple:
        """After ``\\p``/``\\P``: ``{Name}`` or ``{Name=Value}``, a general category
        (``L``, ``Lu``, ``Letter``, ``gc=Nd``, ...) or ``Any``/``ASCII``/``Assigned``, as
        code point intervals (complemented for ``\\P``)."""
        j = self.src.find("}", self.i)
        if self.peek() != "{" or j < 0:
            self.fail("\\p must be followed by {Name}")
        body = self.src[self.i + 1:j]
        self.i = j + 1
        ivs = unicode_property(body)
        if ivs is None:
            self.fail(f"Unicode property \\p{{{body}}} is not supported (general categories, "
                      f"Any, ASCII, Assigned, White_Space, Hex_Digit, Graph, Print, Blank, "
                      f"Cntrl, XDigit, Punct are; scripts and other properties are not)")
        return _NegSet(iv_complement(ivs)) if negated else ivs

    def atom_escape(self):
        start = self.i
        self.i += 1
        v = self._escape_char(False)
        if isinstance(v, _NegSet):
            return self._chars(start, [], [v])
        return self._chars(start, [v if isinstance(v, tuple) else ((v, v),)])

    def char_class(self):
        start = self.i
        self.i += 1
        neg = False
        if self.peek() == "^":
            neg = True
            self.i += 1
        ivs: list = []
        negs: list = []                 # \D \W \S \P{..} in the class
        while True:
            c = self.peek()
            if c is None:
                self.fail("unterminated character class")
            if c == "]":
                self.i += 1
                break
            a = self._class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", None):
                self.i += 1
                b = self._class_atom()
                if isinstance(a, tuple) or isinstance(b, tuple):
                    # Annex B: [\d-z] is \d, '-', 'z'
                    for x in (a, ord("-"), b):
                        if isinstance(x, _NegSet):
                            negs.append(x)
                        else:
                            ivs.extend(x if isinstance(x, tuple) else [(x, x)])
                    continue
                if b < a:
                    self.fail("range out of order in character class")
                ivs.append((a, b))
            elif isinstance(a, _NegSet):
                negs.append(a)
            else:
                ivs.extend(a if isinstance(a, tuple) else [(a, a)])
        return self._chars(start, [iv_norm(ivs)], negs, neg)

    def _class_atom(self):
        c = self.peek()
        if c == "\\":
            self.i += 1
            return self._escape_char(True)
        self.i += 1
        return ord(c)


def _fold(pos, negs, neg: bool) -> tuple:
    """A character atom read case-insensitively: the case closure of the sets ``pos``,
    with each of ``negs`` (:class:`_NegSet`) less the code points with a variant outside
    it, complemented when ``neg`` (``[^a-z]`` matches neither ``a`` nor ``A`` nor U+212A
    KELVIN SIGN, a variant of ``k``), as Python's ``re`` reads ``(?i:...)``."""
    ivs = list(case_closure(iv_norm([iv for x in pos for iv in x])))
    for x in negs:
        ivs.extend(_case_interior(tuple(x)))
    s = iv_norm(ivs)
    return iv_complement(s) if neg else s


def _iv_minus(a: tuple, b: tuple) -> tuple:
    """The intervals of ``a`` less those of ``b``."""
    return iv_intersect(a, iv_complement(b))


def _has_anchor(t) -> bool:
    return _has(t, ("bol", "eol", "look"))


def _has_look(t) -> bool:
    return _has(t, ("look",))


def _has(t, kinds) -> bool:
    """Does the parse tree ``t`` hold a node of one of ``kinds``?"""
    k = t[0]
    if k in kinds:
        return True
    if k in ("seq", "alt"):
        return any(_has(x, kinds) for x in t[1])
    if k == "rep":
        return _has(t[1], kinds)
    return False


def _split_end(t) -> tuple:
    """``(plain, end)`` of a tree without ``^`` or lookaheads: the matches that read no
    ``$``, and the text read by the matches that reach a ``$`` (nothing may follow them:
    what the match reads after the ``$`` is empty)."""
    kind = t[0]
    if kind == "chars":
        return ch(t[1]), NONE
    if kind == "eol":
        return NONE, EPS
    if kind in ("bol", "look"):
        raise PatternError("'^' and lookaheads inside a quantified group are not supported")
    if kind == "alt":
        parts = [_split_end(x) for x in t[1]]
        return alt(*[p for p, _ in parts]), alt(*[e for _, e in parts])
    if kind == "seq":
        plain, end = EPS, NONE
        for x in t[1]:
            xp, xe = _split_end(x)
            # a '$' already passed: x must read nothing (plain or through its own '$')
            after = EPS if nullable(xp) or nullable(xe) else NONE
            end = alt(seq(end, after), seq(plain, xe))
            plain = seq(plain, xp)
        return plain, end
    # rep: iterations without '$', then one through it; those after it read nothing
    yp, ye = _split_end(t[1])
    lo, hi = t[2], t[3]
    if hi == 0:
        return EPS, NONE
    before_hi = None if hi is None else hi - 1
    before_lo = 0 if nullable(yp) or nullable(ye) else max(lo - 1, 0)
    return rep(yp, lo, hi), seq(rep(yp, before_lo, before_hi), ye)


def _anchor_in_rep(t) -> bool:
    """Does a quantified group of ``t`` hold an anchor or a lookahead?"""
    k = t[0]
    if k in ("seq", "alt"):
        return any(_anchor_in_rep(x) for x in t[1])
    return k == "rep" and _has_anchor(t[1])


#: where a match of a parse tree may begin (the tags of :func:`_rest`): anywhere, only at the
#: start of the input (it holds a ``^`` that only empty text precedes), or only after it (a
#: negative lookahead holding a ``^`` that holds at the start: ``(?!^[0-9]+$)``)
ANYWHERE, AT_START, AFTER_START = 0, 1, 2


def _rest(t, k, empty: bool = False) -> list:
    """Lookahead semantics by continuation: ``(where, L)`` alternatives, where ``L`` is
    the set of input suffixes that begin where ``t`` begins its match, for a match of ``t``
    followed by a suffix in ``k`` (the rest of the input after ``t``), every assertion
    inside ``t`` holding at its own position; ``where`` (:data:`ANYWHERE`, :data:`AT_START`,
    :data:`AFTER_START`): where in the input such a match may begin. ``empty``: only
    matches of ``t`` that read nothing."""
    kind = t[0]
    if kind == "chars":
        return [] if empty else [(ANYWHERE, _prepend(ch(t[1]), k))]
    if kind == "bol":
        return [(AT_START, k)]
    if kind == "eol":                        # the rest of the input must be empty
        return [(ANYWHERE, EPS if nullable(k) else NONE)]
    if kind == "look":
        inner = _rest(t[2], ANYSTAR)
        if any(w == AFTER_START for w, _ in inner):
            raise PatternError("a lookahead inside a negative lookahead holding '^' "
                               "is not supported")
        # the body's matches that may begin here: at the start of the input, all; later,
        # those that need not begin at the start
        at_start = alt(*[x for _, x in inner])
        later = alt(*[x for w, x in inner if w == ANYWHERE])
        def holds(look):
            try:
                return intersect(k, look) if t[1] else difference(k, look)
            except TooComplex:
                # kept as a lookahead: the lexer intersects (subtracts) the automata
                return looking(k, ((bool(t[1]), _written(look)),))
        if at_start == later:
            return [(ANYWHERE, holds(at_start))]
        return [(AT_START, holds(at_start)), (AFTER_START, holds(later))]
    if kind == "alt":
        return [r for x in t[1] for r in _rest(x, k, empty)]
    if kind == "rep":
        tempered = _tempered(t[1]) if k == EPS else None
        if tempered is not None:
            return _tempered_rest(t, tempered, empty)
        if t[3] is not None and t[3] <= MAX_UNROLL and _has(t[1], ("bol", "look")):
            # a few iterations, written out: their assertions stand in a sequence
            return _rest(_unrolled(t), k, empty)
        if _has_anchor(t[1]):
            # '$' inside the group: an iteration through it ends the input
            plain, end = _split_end(t)
            if empty:
                ok = nullable(plain) or nullable(end)
                return [(ANYWHERE, k)] if ok else []
            return [(ANYWHERE, alt(_prepend(plain, k), end if nullable(k) else NONE))]
        if empty:
            return [(ANYWHERE, k)] if nullable(_plain(t[1])) or t[2] == 0 else []
        return [(ANYWHERE, _prepend(_plain(t), k))]
    # seq, right to left: what follows a child is the rest of the sequence and then k
    acc = [(ANYWHERE, k)]
    for child in reversed(t[1]):
        new = []
        for w, rest in acc:
            # a '^' further right: this child (and all before it) must match empty
            for w2, x in _rest(child, rest, empty or w == AT_START):
                if x != NONE:
                    new.extend(_where_before(child, w, w2, x, empty))
        acc = new
        if len(acc) > 256:
            raise PatternError("pattern has too many alternatives around its anchors and lookaheads "
                               "(more than 256)")
    return acc


def _edge_chars(t, last: bool):
    """``(intervals, may be empty)`` of the characters that can end (``last``) or begin a
    match of the parse tree ``t``; assertions read nothing."""
    k = t[0]
    if k == "chars":
        return t[1], False
    if k in ("seq", "alt"):
        parts = t[1] if k == "alt" or not last else list(reversed(t[1]))
        got, empty = [], k == "seq"
        for x in parts:
            ivs, e = _edge_chars(x, last)
            got.extend(ivs)
            if k == "alt":
                empty = empty or e
            elif not e:
                empty = False
                break
        return iv_norm(got), empty if k == "seq" or parts else True
    if k == "rep":
        ivs, e = _edge_chars(t[1], last)
        return ivs, e or t[2] == 0
    return (), True                          # bol, eol, look, behind, mark: zero width


_BEHIND_PLACES = ("lookbehind assertions (?<= ...) / (?<! ...) are supported only right "
                  "before the '$' that ends the pattern (or a top-level alternative), "
                  "without anchors inside")


def _one_char(body):
    """The characters of a lookahead/lookbehind body that is one character (a set, or an
    alternation of sets), else None."""
    if body[0] == "seq" and len(body[1]) == 1:
        body = body[1][0]
    if body[0] == "chars":
        return body[1]
    if body[0] == "alt" and body[1]:
        got = [_one_char(x) for x in body[1]]
        if all(g is not None for g in got):
            return iv_norm([iv for g in got for iv in g])
    return None


def _edge_in(t, keep, last: bool):
    """The parse tree ``t`` limited to matches whose last (``last``) or first character is
    in ``keep``; None where ``t`` may match the empty string or that character is not an
    item of its own (then the character next to it is outside ``t``). An edge item that
    may be empty: its non-empty matches limited so, or the items beside it limited so."""
    k = t[0]
    if k == "chars":
        return ("chars", iv_intersect(t[1], keep))
    if k == "rep":
        _, body, lo, hi = t
        if lo < 1 or _edge_chars(body, last)[1]:
            return None
        edge = _edge_in(body, keep, last)
        if edge is None:
            return None
        rest = ("rep", body, lo - 1, None if hi is None else hi - 1)
        return ("seq", [rest, edge] if last else [edge, rest])
    if k == "seq":
        if not t[1]:
            return None
        item = t[1][-1] if last else t[1][0]
        others = list(t[1][:-1]) if last else list(t[1][1:])

        def joined(x):
            return ("seq", others + [x] if last else [x] + others)
        if not _edge_chars(item, last)[1]:
            got = _edge_in(item, keep, last)
            return None if got is None else joined(got)
        full, beside = _nonempty(item), _edge_in(("seq", others), keep, last)
        got = None if full is None else _edge_in(full, keep, last)
        if got is None or beside is None:
            return None
        return ("alt", [joined(got), beside])
    if k == "alt":
        got = [_edge_in(x, keep, last) for x in t[1]]
        return ("alt", got) if got and all(g is not None for g in got) else None
    return None


def _nonempty(t):
    """The non-empty matches of a repetition that may be empty (``x{0,n}``, ``x*``,
    ``x?``) whose body may not, else None."""
    if t[0] == "rep" and t[2] == 0 and t[3] != 0 and not _edge_chars(t[1], True)[1]:
        return ("rep", t[1], 1, t[3])
    return None


def _one_char_looks(items: list) -> list:
    """A lookahead of one character right before an item that begins with a character it
    reads is a condition on that character: ``(?!-)[a-z0-9-]{1,63}`` is
    ``[a-z0-9][a-z0-9-]{0,62}`` (then no assertion is left inside a quantified group
    for this common label idiom). Where that item may read nothing, the character is the
    first the rest of the sequence reads: ``(?!-)[a-z0-9-]{0,62}[a-z0-9]`` is
    ``[a-z0-9][a-z0-9-]{0,61}[a-z0-9]|[a-z0-9]``. Other lookaheads are kept."""
    out: list = []
    i = 0
    while i < len(items):
        t = items[i]
        if t[0] == "look" and i + 1 < len(items):
            one = _one_char(t[2])
            if one is not None:
                keep = one if t[1] else iv_complement(one)
                got = _edge_in(items[i + 1], keep, last=False)
                if got is not None:
                    out.append(got)
                    i += 2
                    continue
                # the next item may be empty (``(?!-)[a-z0-9-]{0,62}[a-z0-9]``): the
                # character is the first the rest of the sequence reads (its own
                # lookaheads of one character folded first; a rest with other lookarounds
                # is left as it is: folded in, they would sit where later passes do not
                # look)
                rest = _one_char_looks(items[i + 1:])
                got = None if any(_has(x, ("look", "behind", "behind1")) for x in rest) else \
                    _edge_in(("seq", rest), keep, last=False)
                if got is not None:
                    out.append(got)
                    break
        out.append(t)
        i += 1
    return out


def _is_mark(t) -> bool:
    return t[0] == "chars" and t[1] in ((WB_MARK,), (NWB_MARK,))


def _decide_marks(tree):
    """The tree with each ``\\b``/``\\B`` mark that the characters able to stand before and
    after it decide (every one a word character or none; the start and end of the input
    count as none) replaced by what it always does (match the empty string, or nothing):
    the characters around it are looked for across groups, alternatives and iterations,
    as far as the ends of the pattern (any character there, or the start/end of the input;
    after ``^``, the start only). ``arn:\\b(aws|aws-cn)\\b:`` and
    ``cron\\((\\b[0-5]?[0-9]\\b) `` always hold. The others stay marks, resolved on the
    whole string (:func:`parse_pattern`)."""
    every = iv_norm([(0, MAX_CP)])

    def join(side, x, last: bool):
        # what stands on this side of the next item: x's edge characters, and what stood
        # on this side of x where x may be empty (an anchor in x: the input's end too)
        ivs, empty = _edge_chars(x, last)
        edge = side[1] if empty else False
        if _has(x, ("bol",) if last else ("eol",)):
            edge = True
        return (iv_norm(list(ivs) + list(side[0])) if empty else ivs, edge)

    def walk(t, before, after):
        k = t[0]
        if k == "mark":
            prev, nxt = _word_class(before), _word_class(after)
            if prev is None or nxt is None:
                return t
            return ("seq", []) if (prev != nxt) == (not t[1]) else ("alt", [])
        if k == "seq":
            items = t[1]
            befores, cur = [], before
            for x in items:
                befores.append(cur)
                cur = ((), True) if x[0] == "bol" else join(cur, x, True)
            afters, cur = [], after
            for x in reversed(items):
                afters.append(cur)
                cur = ((), True) if x[0] == "eol" else join(cur, x, False)
            afters.reverse()
            return ("seq", [walk(x, b, a) for x, b, a in zip(items, befores, afters)])
        if k == "alt":
            return ("alt", [walk(x, before, after) for x in t[1]])
        if k == "rep":
            body, lo, hi = t[1], t[2], t[3]
            if hi is None or hi > 1:           # an iteration after another
                before = (iv_norm(list(before[0]) + list(_edge_chars(body, True)[0])), before[1])
                after = (iv_norm(list(after[0]) + list(_edge_chars(body, False)[0])), after[1])
            return ("rep", walk(body, before, after), lo, hi)
        if k == "look":                        # its match goes on into the rest
            return ("look", t[1], walk(t[2], before, (every, True)))
        if k == "behind":                      # its match ends here
            return ("behind", t[1], walk(t[2], (every, True), after))
        return t
    return walk(tree, (every, True), (every, True))


def _mark_at(t) -> int | None:
    """The pattern offset of the first ``\\b``/``\\B`` mark in the tree, lookaround bodies
    included; None without one."""
    k = t[0]
    if k == "mark":
        return t[2]
    kids = t[1] if k in ("seq", "alt") else (t[1],) if k == "rep" else \
        (t[2],) if k in ("look", "behind") else ()
    for x in kids:
        at = _mark_at(x)
        if at is not None:
            return at
    return None


def _word_class(side):
    """Whether every character on a side (``(intervals, the input's end too)``) is a word
    character (True), none is (False; the input's end is none), or some are (None)."""
    ivs, edge = side
    inside = iv_intersect(ivs, WORD)
    if not inside:
        return False
    if inside == ivs and not edge:
        return True
    return None


def _marks_as_chars(t):
    """The tree with each mark a character of its own (:data:`.algebra.WB_MARK`,
    :data:`.algebra.NWB_MARK`)."""
    k = t[0]
    if k == "mark":
        return ("chars", (NWB_MARK if t[1] else WB_MARK,))
    if k in ("seq", "alt"):
        return (k, [_marks_as_chars(x) for x in t[1]])
    if k == "rep":
        return ("rep", _marks_as_chars(t[1]), t[2], t[3])
    if k in ("look", "behind"):
        return (k, t[1], _marks_as_chars(t[2]))
    return t


def _anchor_beside_mark(t) -> bool:
    """Whether a sequence in the tree has a ``^`` after a word-boundary mark or a ``$``
    before one (the anchors' rewriting reads a mark as a character)."""
    k = t[0]
    if k == "seq":
        seen_mark = False
        seen_eol = False
        for x in t[1]:
            if _is_mark(x):
                if seen_eol:
                    return True
                seen_mark = True
            elif x[0] == "bol" and seen_mark:
                return True
            elif x[0] == "eol":
                seen_eol = True
            elif _anchor_beside_mark(x):
                return True
        return False
    if k == "alt":
        return any(_anchor_beside_mark(x) for x in t[1])
    if k == "rep":
        return _anchor_beside_mark(t[1])
    return False


def _tempered(body):
    """``(N, chars)`` of a tempered token's body ``(?!N)c`` (a negative lookahead, then one
    character), else None."""
    if body[0] == "seq" and len(body[1]) == 2:
        look, c = body[1]
        if look[0] == "look" and not look[1] and c[0] == "chars" and not _has(look[2], ("bol",)):
            return look[2], c[1]
    return None


def _tempered_rest(t, tempered, empty: bool) -> list:
    """:func:`_rest` of a tempered token ``(?:(?!N)c){lo,hi}`` that ends the input: the
    lookahead is tried at every iteration, that is at every position of the text it reads,
    and sees the rest of the input, so the text is ``c{lo,hi}`` holding no match of ``N``
    (``^(?:(?!\\$\\{[a-z]+:).)+$``); where ``N`` matches the empty string no iteration
    passes."""
    n, c = tempered                       # (:func:`_tempered`)
    lo, hi = t[2], t[3]
    if empty or nullable(_written(alt(*[x for _, x in _rest(n, EPS)]))):
        return [(ANYWHERE, EPS)] if lo == 0 else []
    body = rep(ch(c), lo, hi)
    bad = seq(ANYSTAR, _written(alt(*[x for _, x in _rest(n, ANYSTAR)])))
    try:
        return [(ANYWHERE, difference(body, bad))]
    except TooComplex:
        return [(ANYWHERE, looking(body, ((False, bad),)))]


#: a quantified group with ``^`` or a lookahead inside is written out as its iterations
#: where it has at most this many (``((?!-)[a-z]+:){4}``)
MAX_UNROLL = 16


def _unrolled(t) -> tuple:
    """The parse tree ``("rep", body, lo, hi)`` (``hi`` not None) as a sequence of ``lo``
    copies of its body, then ``hi - lo`` nested optional ones."""
    _, body, lo, hi = t
    tail = ("seq", [])
    for _ in range(hi - lo):
        tail = ("alt", [("seq", []), ("seq", [body, tail])])
    return ("seq", [body] * lo + [tail])


def _prepend(p, k) -> tuple:
    """``p`` then ``k``. Where ``k`` has lookaheads (``("X", y, looks)``) and every word
    of ``p`` has one length, ``p`` goes in front of ``y`` and of each lookahead
    (``P·(Y ∩ A) = P·Y ∩ P·A`` and ``P·(Y \\ A) = P·Y \\ P·A``: every word of the
    left sides splits after ``|P|`` characters), so the lookaheads stay at the top;
    else the node stands below the top, and :func:`_strings_matching` writes it out."""
    if k[0] != "X":
        return seq(p, k)
    lo, hi = length_range(p)
    if lo != hi:
        return seq(p, k)
    return ("X", seq(p, k[1]), tuple((pos, seq(p, y)) for pos, y in k[2]))


def _written(x) -> tuple:
    """``x`` with every node with lookaheads written out as a regex (PatternError where
    that is too large)."""
    try:
        return write_out(x)
    except TooComplex:
        raise PatternError("lookahead too complex to enforce exactly") from None


def _where_before(child, w: int, w2: int, x, empty: bool) -> list:
    """Where a match of ``child`` (tagged ``w2``) may begin, when what follows it must
    begin as ``w`` says: the ``(where, x)`` alternatives of the two together."""
    if w == ANYWHERE or w2 == w:
        return [(w2 if w == ANYWHERE else w, x)]
    if w == AT_START:                        # the child read nothing, from the start
        return [] if w2 == AFTER_START else [(AT_START, x)]
    # w == AFTER_START: the child ends after the start: it begins after it, or reads text
    out = [] if w2 == AT_START else [(AFTER_START, x)]
    if not empty and w2 != AFTER_START:
        if not _reads_nothing(child):
            if _has_anchor(child) or nullable(_plain(child)):
                raise PatternError("'^' inside a negative lookahead after a part that may "
                                   "read nothing is not supported")
            out.append((AT_START, x))        # it reads text, so it ends after the start
    return out


def _reads_nothing(t) -> bool:
    """Does every match of the parse tree ``t`` read nothing (only assertions)?"""
    k = t[0]
    if k in ("bol", "eol", "look"):
        return True
    if k in ("seq", "alt"):
        return all(_reads_nothing(x) for x in t[1])
    return False


def _plain(t) -> tuple:
    """AST of an anchor-free parse tree."""
    k = t[0]
    if k == "chars":
        return ch(t[1])
    if k == "seq":
        return seq(*[_plain(x) for x in t[1]])
    if k == "alt":
        return alt(*[_plain(x) for x in t[1]])
    return _closed_rep(_plain(t[1]), t[2], t[3])


def _closed_rep(body, lo: int, hi) -> tuple:
    """``body{lo,hi}``; where ``hi`` is past :data:`MAX_UNROLL` and ``body`` reads its own
    concatenations (``A·A ⊆ A``, so ``A^k ⊆ A``: ``([\x21-\x7E]+/){1,511}`` is
    ``[\x21-\x7E]+/``, as ``/`` is one of the characters its ``+`` reads) the count
    changes nothing but ``lo = 0``: ``body`` once (or not). Such a count could not be
    counted (its iterations are not told apart) nor written out."""
    if hi is not None and hi > MAX_UNROLL and lo <= 1 and body[0] != "c" and not nullable(body):
        try:
            if is_subset(seq(body, body), body):
                return rep(body, lo, 1)
        except TooComplex:
            pass
    return rep(body, lo, hi)


def _branches(t) -> list:
    """(start_anchored, body AST, end_anchored) alternatives of a parse tree."""
    if not _has_anchor(t):
        return [(False, _plain(t), False)]
    k = t[0]
    if k == "chars":
        return [(False, ch(t[1]), False)]
    if k == "bol":
        return [(True, EPS, False)]
    if k == "eol":
        return [(False, EPS, True)]
    if k == "alt":
        out = []
        for x in t[1]:
            out.extend(_branches(x))
        return out
    if k == "rep":
        body = _branches(t[1])
        if any(sa or ea for sa, _, ea in body):
            raise PatternError("anchors (^, $) inside a quantified group are not supported")
        return [(False, rep(alt(*[b for _, b, _ in body]), t[2], t[3]), False)]
    # seq
    acc = [(False, EPS, False)]
    for child in t[1]:
        cb = _branches(child)
        new = []
        for sa, b, ea in acc:
            for sa2, b2, ea2 in cb:
                # "$" then more text: the rest must match empty; "^" after text: the text must be empty
                if ea and b2 != EPS:
                    if not nullable(b2):
                        continue
                    b2 = EPS
                if sa2 and b != EPS:
                    if not nullable(b):
                        continue
                    b = EPS
                new.append((sa or sa2, seq(b, b2), ea or ea2))
        acc = new
        if len(acc) > 256:
            raise PatternError("pattern has too many alternatives around its anchors (more than 256)")
    return acc


@lru_cache(maxsize=4096)
def parse_pattern(pattern: str) -> tuple:
    """AST of the strings in which the ECMA-262 ``pattern`` finds a match
    (JSON Schema semantics: unanchored unless ``^``/``$`` say otherwise)."""
    if not isinstance(pattern, str):
        raise PatternError(f"pattern must be a string, not {type(pattern).__name__}")
    p = _Parser(pattern)
    try:
        tree = p.parse()
    except RecursionError:
        raise PatternError(f"pattern nested too deeply: {pattern!r}") from None
    if p.flag_note:
        log.info("pattern: %s", p.flag_note)
    if p.marks:
        tree = _decide_marks(tree)
    at = _mark_at(tree) if p.marks else None
    if at is None:
        return _strings_matching(tree)
    # \b/\B marks, decided on the whole string; other assertions read the marks as
    # characters (a lookahead's text, what "^" and "$" need empty): refused beside them
    where = f"(at offset {at} of {pattern!r})"
    tree = _marks_as_chars(tree)
    if _has(tree, ("look", "behind")) or _anchor_beside_mark(tree):
        raise PatternError("word boundary assertions (\\b, \\B) are supported where the "
                           "characters on both sides decide them, or in a pattern without "
                           f"other assertions beside them {where}")
    try:
        return resolve_word_boundaries(_strings_matching(tree), WORD)
    except TooComplex:
        raise PatternError(f"word boundary assertions (\\b, \\B) too complex to enforce "
                           f"exactly {where}") from None


def _strings_matching(tree) -> tuple:
    if _has(tree, ("behind",)):
        return _with_lookbehind(tree)
    if _has_look(tree) or _anchor_in_rep(tree):
        # assertions that look at the rest of the input: each is an intersection with (or a
        # difference from) the suffixes its body begins
        # (a lookahead kept as one, ``("X", ...)``, stays where it is at the top)
        out = [x if w == AT_START else seq(ANY, ANYSTAR, x) if w == AFTER_START
               else seq(ANYSTAR, x) for w, x in _rest(tree, ANYSTAR)]
        out = [x for x in out if x != NONE]
        if any(x[0] == "X" for x in out):
            # alternatives with the same lookaheads kept, beside plain ones: one node
            x = union(*out)
            if x[0] == "X":
                return ("X", _written(x[1]), tuple((pos, _written(y)) for pos, y in x[2]))
        return _written(alt(*out))
    by_ends: dict = {}
    for sa, whole, ea in _branches(tree):
        # an unanchored end distributes over the body's alternatives (Σ*(A|B) = Σ*A|Σ*B),
        # each then cut on its own: ([1-9][0-9]{0,4})|([a-z]\w{0,47}) is a digit or a letter
        # somewhere
        for body in (whole[1] if whole[0] == "a" and not (sa and ea) else (whole,)):
            body = _unanchored_ends(body, sa, ea)
            if not sa and not ea and nullable(body):
                return ANYSTAR                   # every string holds an empty match
            by_ends.setdefault((sa, ea), []).append(body)
    # and is factored back out of the cut bodies: Σ*(A|B)Σ*, not Σ*AΣ*|Σ*BΣ*, whose
    # automaton would remember which of them already matched (60 language codes searched
    # anywhere: past the lexer's limit)
    return alt(*[seq(EPS if sa else ANYSTAR, alt(*bodies), EPS if ea else ANYSTAR)
                 for (sa, ea), bodies in by_ends.items()])


def _unanchored_ends(body, sa: bool, ea: bool) -> tuple:
    """``body`` with what an unanchored end makes moot cut off: before ``Σ*`` (no ``$``)
    a nullable last item goes and a last ``X{a,b}`` is ``X{a}`` (``P·X{a,b}·Σ* =
    P·X{a}·Σ*``), and after ``Σ*`` (no ``^``) the same for the first item. The same
    language, with a smaller automaton: ``[\\S]{1,255}`` finds its match where one
    ``\\S`` does, ``^https://.*`` is ``https://`` then anything (which a length limits
    as one counted repetition)."""
    items = list(body[1]) if body[0] == "s" else [body]
    if not ea:
        items = _cut(items)
    if not sa:
        items = _latest_start(_cut(items[::-1])[::-1])
    return seq(*items)


def _latest_start(items: list) -> list:
    """After ``Σ*`` (no ``^``), a first character ``c`` then ``B{0,n}`` with ``c ⊆ B``
    (character sets) is ``c`` then ``(B \\ c){0,n}``: of the matches, the one that starts
    at the last ``c`` reads only characters of ``B`` that are not in ``c`` after it, and
    no more of them. The same language, without the subsets of starts that make
    ``Σ*[a-z0-9][a-z0-9-]{0,62}`` exponential to determinize."""
    if len(items) >= 2 and items[0][0] == "c" and items[1][0] == "r" and items[1][2] == 0 \
            and items[1][1][0] == "c":
        c, b = items[0][1], items[1][1][1]
        if iv_intersect(c, b) == c:
            rest = iv_intersect(b, iv_complement(c))
            items = [items[0], rep(ch(rest), 0, items[1][3]) if rest else EPS] + items[2:]
    return items


def _cut(items: list) -> list:
    while items and nullable(items[-1]):
        items.pop()
    if items and items[-1][0] == "r" and items[-1][2] >= 1:
        _, x, a, _ = items[-1]
        items[-1] = rep(x, a, a)
    return items


def _with_lookbehind(tree) -> tuple:
    """A lookbehind sits right before the ``$`` that ends a top-level alternative (the
    parser allows no other place), so it looks at the end of the whole string: the strings
    matching that alternative without it, intersected with (positive) or less (negative) the
    strings that end with a match of its body. Each top-level alternative on its own: a
    string matches the pattern when it matches one of them."""
    out = []
    for branch in (tree[1] if tree[0] == "alt" else [tree]):
        items = branch[1] if branch[0] == "seq" else [branch]
        behind = [x for x in items if x[0] == "behind"]
        if not behind:
            out.append(_strings_matching(branch))
            continue
        lang = _strings_matching(("seq", [x for x in items if x[0] != "behind"]))
        for _, positive, body in behind:
            ends = seq(ANYSTAR, alt(*[b for _, b, _ in _branches(body)]))
            try:
                lang = intersect(lang, ends) if positive else difference(lang, ends)
            except TooComplex:
                # kept as a lookahead over the whole string: the lexer meets the automata
                lang = looking(lang, ((positive, ends),))
        out.append(lang)
    if len(out) == 1 and out[0][0] == "X":
        return out[0]
    try:
        return write_out(alt(*out))
    except TooComplex:
        raise PatternError("lookbehind too complex to enforce exactly") from None


def parse_regex_full(pattern: str) -> tuple:
    """AST of the strings that the ECMA-262 ``pattern`` matches *entirely*
    (used for the formats, which are written anchored)."""
    return parse_pattern("^(?:" + pattern + ")$")

