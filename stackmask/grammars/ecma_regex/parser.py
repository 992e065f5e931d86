"""ECMA-262 regexes (JSON Schema ``pattern``) as exact regular languages.

Used by :mod:`stackmask.grammars.json_schema`. A pattern is parsed into a
small AST over sets of Unicode code points (the *decoded* string the JSON
Schema validator sees), anchored as JSON Schema says (a pattern matches
anywhere in the string unless it uses ``^``/``$``), and then emitted as a
Python regex over the *JSON text* of the string: every character may be
written raw (where JSON allows it), as a short escape (``\\n``, ``\\"``,
``\\/``...) or as ``\\uXXXX`` (any hex case; characters beyond U+FFFF as a
surrogate pair). The emitted regex therefore matches exactly the JSON
spellings of the strings the pattern accepts.

AST (hashable tuples)::

    ("c", intervals)          one character from a set of code points
    ("s", (x, y, ...))        concatenation; ("s", ()) is the empty string
    ("a", (x, y, ...))        alternation;   ("a", ()) matches nothing
    ("r", x, lo, hi)          repetition x{lo,hi}; hi None = unbounded

``intervals`` is a sorted tuple of disjoint inclusive ``(lo, hi)`` code point
ranges; surrogates (U+D800..U+DFFF) are never members.

Also here: a small DFA over code-point intervals for the Boolean operations
the schema converter needs (intersection, difference, complement, emptiness)
and DFA -> AST by state elimination (with a size guard, since the result can
grow exponentially).

ECMA semantics implemented: ``\\d`` = [0-9], ``\\w`` = [A-Za-z0-9_], ``\\s`` =
ECMA WhiteSpace + LineTerminator, ``.`` = anything but ``\\n \\r U+2028
U+2029``, classes and negated classes, escapes ``\\t \\n \\v \\f \\r \\0 \\cX
\\xHH \\uHHHH \\u{H...}`` and identity escapes, groups (capturing, named
``(?<n>...)``/``(?P<n>...)``, non-capturing), alternation, greedy and lazy
quantifiers (laziness does not change which strings match), Annex-B literal
``{ } ]``, and ``^``/``$`` anywhere outside quantified groups (a mid-pattern
``^`` requires everything before it to match empty). Not supported (raise
:class:`PatternError` naming the feature): lookahead/lookbehind, word
boundaries ``\\b \\B``, backreferences, ``\\p{...}`` properties other than general
categories (scripts, binary properties but ``Any``/``ASCII``/``Assigned``), inline
flags, anchors inside quantified groups. ``\\p{L}``, ``\\p{Lu}``, ``\\P{Nd}``,
``\\p{gc=Letter}``: the categories of Python's ``unicodedata``.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

__all__ = [
    "PatternError", "TooComplex", "parse_pattern", "ch", "lit", "seq", "alt", "rep", "EPS", "NONE",
    "ANY", "ANYSTAR", "length_range", "nullable", "to_python", "to_json_string", "ast_size",
    "intersect", "difference", "union", "complement", "is_empty", "is_subset", "Dfa", "not_in",
    "limit_length", "fullmatch", "cap_repeats", "atom_partition",
]

from ..lexer.regex import MAX_CP, SURR_HI, SURR_LO  # noqa: F401  (re-exported)
from ..lexer.regex import complement_intervals as iv_complement
from ..lexer.regex import normalize_intervals as iv_norm


class PatternError(ValueError):
    """The pattern is invalid or uses a feature that cannot be enforced."""


class TooComplex(ValueError):
    """A Boolean operation's result is too large to express as a regex."""


# --------------------------------------------------------------------------
# code point sets
# --------------------------------------------------------------------------

UNIVERSE = iv_norm([(0, MAX_CP)])


def iv_intersect(a, b) -> tuple:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def iv_union(a, b) -> tuple:
    return iv_norm(list(a) + list(b))


def iv_contains(ivs, c: int) -> bool:
    i = bisect.bisect_right(ivs, (c, MAX_CP + 1)) - 1
    return i >= 0 and ivs[i][0] <= c <= ivs[i][1]


# --------------------------------------------------------------------------
# AST constructors (with light simplification)
# --------------------------------------------------------------------------

EPS = ("s", ())
NONE = ("a", ())


def ch(ivs) -> tuple:
    ivs = iv_norm(ivs)
    return ("c", ivs) if ivs else NONE


def lit(text: str) -> tuple:
    return seq(*[("c", ((ord(c), ord(c)),)) for c in text]) if text else EPS


ANY = ("c", UNIVERSE)


def seq(*xs) -> tuple:
    items = []
    for x in xs:
        if x == NONE:
            return NONE
        if x[0] == "s":
            items.extend(x[1])
        else:
            items.append(x)
    if len(items) == 1:
        return items[0]
    return ("s", tuple(items))


def alt(*xs) -> tuple:
    items: list = []
    chars = None
    has_eps = False
    for x in xs:
        stack = [x]
        while stack:
            y = stack.pop()
            if y[0] == "a":
                stack.extend(reversed(y[1]))
            elif y[0] == "c":
                chars = y[1] if chars is None else iv_union(chars, y[1])
            elif y == EPS:
                has_eps = True
            elif y not in items:
                items.append(y)
    if chars is not None:
        items.insert(0, ("c", chars))
    if has_eps:
        if not items:
            return EPS
        if any(nullable(y) for y in items):
            pass
        elif len(items) == 1:
            return rep(items[0], 0, 1)
        else:
            return rep(("a", tuple(items)), 0, 1)
    if not items:
        return NONE
    if len(items) == 1:
        return items[0]
    return ("a", tuple(items))


def rep(x, lo: int, hi) -> tuple:
    if hi is not None and hi < lo:
        return NONE
    if x == NONE:
        return EPS if lo == 0 else NONE
    if x == EPS or hi == 0:
        return EPS
    if lo == 1 and hi == 1:
        return x
    if x[0] == "r":
        _, y, a, b = x
        # (y{a,b}){lo,hi} with simple cases
        if a == 0 and b is None:
            return x
        if lo == 0 and hi is None and a <= 1:
            return ("r", y, 0, None)
        if a == 0 and b == 1 and lo == 0 and hi == 1:
            return x
    return ("r", x, lo, hi)


ANYSTAR = ("r", ANY, 0, None)


def nullable(x) -> bool:
    k = x[0]
    if k == "c":
        return False
    if k == "s":
        return all(nullable(y) for y in x[1])
    if k == "a":
        return any(nullable(y) for y in x[1])
    return x[2] == 0 or nullable(x[1])


def length_range(x) -> tuple:
    """(min, max) number of characters; max None = unbounded. NONE -> (inf, -1)."""
    k = x[0]
    if k == "c":
        return (1, 1)
    if k == "s":
        lo, hi = 0, 0
        for y in x[1]:
            a, b = length_range(y)
            if b == -1:
                return (float("inf"), -1)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return (lo, hi)
    if k == "a":
        if not x[1]:
            return (float("inf"), -1)
        rs = [length_range(y) for y in x[1]]
        rs = [r for r in rs if r[1] != -1]
        if not rs:
            return (float("inf"), -1)
        lo = min(r[0] for r in rs)
        hi = None if any(r[1] is None for r in rs) else max(r[1] for r in rs)
        return (lo, hi)
    _, y, a, b = x
    ylo, yhi = length_range(y)
    if yhi == -1:
        return (0, 0) if a == 0 else (float("inf"), -1)
    hi = None if (b is None and yhi != 0) or yhi is None else yhi * (b if b is not None else 0)
    return (ylo * a, hi)


def ast_size(x) -> int:
    k = x[0]
    if k == "c":
        return 1
    if k in ("s", "a"):
        return 1 + sum(ast_size(y) for y in x[1])
    return 1 + ast_size(x[1])


def cap_repeats(x, n: int) -> tuple:
    """Every unbounded repetition ``y{lo,}`` becomes ``y{lo,max(lo,n)}``."""
    k = x[0]
    if k == "c":
        return x
    if k == "s":
        return seq(*[cap_repeats(y, n) for y in x[1]])
    if k == "a":
        return alt(*[cap_repeats(y, n) for y in x[1]])
    _, y, a, b = x
    y = cap_repeats(y, n)
    return rep(y, a, max(a, n) if b is None else b)


# --------------------------------------------------------------------------
# ECMA-262 pattern parser
# --------------------------------------------------------------------------

DIGIT = ((0x30, 0x39),)
WORD = iv_norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE = iv_norm([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                 (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                 (0xFEFF, 0xFEFF)])
DOT = iv_complement(iv_norm([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]))
_CLASS_ESC = {"d": DIGIT, "D": iv_complement(DIGIT), "w": WORD, "W": iv_complement(WORD),
              "s": SPACE, "S": iv_complement(SPACE)}
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


@lru_cache(maxsize=None)
def unicode_property(body: str):
    """The code points of ``\\p{body}``, as intervals (surrogates never members), or None
    when the property is not one this module knows: a general category by its short or
    long name, alone or as ``General_Category=``/``gc=``, and ``Any``, ``ASCII``,
    ``Assigned``. Categories are those of the running Python's Unicode database
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


class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.i = 0
        self.groups = 0

    def fail(self, msg: str):
        raise PatternError(f"{msg} (at offset {self.i} of {self.src!r})")

    def peek(self, k: int = 0):
        j = self.i + k
        return self.src[j] if j < len(self.src) else None

    def parse(self):
        t = self.disjunction()
        if self.i < len(self.src):
            self.fail(f"unexpected {self.src[self.i]!r}")
        return t

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
        return ("seq", items)

    def term(self):
        c = self.peek()
        if c == "^":
            self.i += 1
            return self._no_quant(("bol",), "^")
        if c == "$":
            self.i += 1
            return self._no_quant(("eol",), "$")
        if c == "\\" and self.peek(1) in ("b", "B"):
            self.fail("word boundary assertions (\\b, \\B) are not supported")
        if c == "\\" and self.peek(1) == "A":
            self.i += 2
            return self._no_quant(("bol",), "\\A")
        if c == "\\" and self.peek(1) in ("Z", "z"):
            self.i += 2
            return self._no_quant(("eol",), "\\Z")
        if c == "(" and self.peek(1) == "?" and self.peek(2) in ("=", "!"):
            self.fail("lookahead assertions (?= ...) / (?! ...) are not supported")
        if c == "(" and self.peek(1) == "?" and self.peek(2) == "<" and self.peek(3) in ("=", "!"):
            self.fail("lookbehind assertions (?<= ...) / (?<! ...) are not supported")
        atom = self.atom()
        return self.quantifier(atom)

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
        if c == ".":
            self.i += 1
            return ("chars", DOT)
        if c == "(":
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
            t = self.disjunction()
            if self.peek() != ")":
                self.fail("missing )")
            self.i += 1
            return t
        if c == ")":
            self.fail("unbalanced )")
        if c == "[":
            return ("chars", self.char_class())
        if c == "\\":
            return ("chars", self.atom_escape())
        if c in ("*", "+", "?"):
            self.fail(f"nothing to repeat before {c!r}")
        if c == "{" and self._brace_quant(peek_only=True):
            self.fail("nothing to repeat before '{'")
        self.i += 1
        return ("chars", ((ord(c), ord(c)),))

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
        if SURR_LO <= v <= SURR_HI:
            self.fail("lone surrogate escapes are not supported")
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
        if c.isalnum() or c == "_":
            self.fail(f"unknown escape \\{c}")
        return ord(c)

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
                      f"Any, ASCII and Assigned are; scripts and other properties are not)")
        return iv_complement(ivs) if negated else ivs

    def atom_escape(self):
        self.i += 1
        v = self._escape_char(False)
        return v if isinstance(v, tuple) else ((v, v),)

    def char_class(self):
        self.i += 1
        neg = False
        if self.peek() == "^":
            neg = True
            self.i += 1
        ivs: list = []
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
                        ivs.extend(x if isinstance(x, tuple) else [(x, x)])
                    continue
                if b < a:
                    self.fail("range out of order in character class")
                ivs.append((a, b))
            else:
                ivs.extend(a if isinstance(a, tuple) else [(a, a)])
        s = iv_norm(ivs)
        return iv_complement(s) if neg else s

    def _class_atom(self):
        c = self.peek()
        if c == "\\":
            self.i += 1
            return self._escape_char(True)
        self.i += 1
        return ord(c)


def _has_anchor(t) -> bool:
    k = t[0]
    if k in ("bol", "eol"):
        return True
    if k in ("seq", "alt"):
        return any(_has_anchor(x) for x in t[1])
    if k == "rep":
        return _has_anchor(t[1])
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
    return rep(_plain(t[1]), t[2], t[3])


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
            raise PatternError("pattern has too many anchored alternatives")
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
    out = []
    for sa, body, ea in _branches(tree):
        out.append(seq(EPS if sa else ANYSTAR, body, EPS if ea else ANYSTAR))
    return alt(*out)


def parse_regex_full(pattern: str) -> tuple:
    """AST of the strings that the ECMA-262 ``pattern`` matches *entirely*
    (used for the formats, which are written anchored)."""
    return parse_pattern("^(?:" + pattern + ")$")


# --------------------------------------------------------------------------
# emission
# --------------------------------------------------------------------------

def _cp_text(c: int) -> str:
    if c < 0x80 and (chr(c).isalnum()):
        return chr(c)
    if c < 0x100:
        return "\\x%02x" % c
    if c < 0x10000:
        return "\\u%04x" % c
    return "\\U%08x" % c


def _class_text(ivs) -> str:
    if len(ivs) == 1 and ivs[0][0] == ivs[0][1]:
        return _cp_text(ivs[0][0])
    parts = []
    for lo, hi in ivs:
        if lo == hi:
            parts.append(_cp_text(lo))
        elif hi == lo + 1:
            parts.append(_cp_text(lo) + _cp_text(hi))
        else:
            parts.append(_cp_text(lo) + "-" + _cp_text(hi))
    return "[" + "".join(parts) + "]"


def _emit(x, leaf) -> str:
    k = x[0]
    if k == "c":
        return leaf(x[1])
    if k == "s":
        if not x[1]:
            return "(?:)"
        return "".join(_group(y, leaf, in_seq=True) for y in x[1])
    if k == "a":
        if not x[1]:
            return "[^\\x00-\\U0010ffff]"     # matches nothing
        return "|".join(_emit(y, leaf) for y in x[1])
    _, y, lo, hi = x
    inner = _group(y, leaf, in_seq=False, atom=True)
    if lo == 0 and hi is None:
        q = "*"
    elif lo == 1 and hi is None:
        q = "+"
    elif lo == 0 and hi == 1:
        q = "?"
    elif hi is None:
        q = "{%d,}" % lo
    elif lo == hi:
        q = "{%d}" % lo
    else:
        q = "{%d,%d}" % (lo, hi)
    return inner + q


def _group(y, leaf, in_seq: bool, atom: bool = False) -> str:
    s = _emit(y, leaf)
    k = y[0]
    if k == "a" or (atom and (k in ("s", "r") or (k == "c" and not _is_atomic_leaf(s)))):
        return "(?:" + s + ")"
    return s


def _is_atomic_leaf(s: str) -> bool:
    return (s.startswith("[") and s.endswith("]") and s.count("[") == 1) or \
        len(s) == 1 or re.fullmatch(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})", s) is not None


def to_python(x) -> str:
    """Python ``re`` pattern (over decoded text) for the AST."""
    return _emit(x, _class_text)


def fullmatch(x, s: str) -> bool:
    return _compiled(x).fullmatch(s) is not None


@lru_cache(maxsize=1024)
def _compiled(x):
    return re.compile(to_python(x), re.S)


# -- JSON string spelling -------------------------------------------------------

_SHORT = {0x22: '"', 0x5C: "\\\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
RAW_OK = iv_norm([(0x20, 0x21), (0x23, 0x5B), (0x5D, MAX_CP)])
_BMP = iv_norm([(0, 0xFFFF)])
_ASTRAL = ((0x10000, MAX_CP),)
_HEX = "0123456789abcdef"


def _hex_digit_class(a: int, b: int) -> str:
    chars = set()
    for v in range(a, b + 1):
        chars.add(_HEX[v])
        chars.add(_HEX[v].upper())
    if len(chars) == 1:
        return next(iter(chars))
    cs = sorted(chars)
    parts, i = [], 0
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and ord(cs[j + 1]) == ord(cs[j]) + 1:
            j += 1
        parts.append(cs[i] if i == j else (cs[i] + cs[j] if j == i + 1 else cs[i] + "-" + cs[j]))
        i = j + 1
    return "[" + "".join(parts) + "]"


def _hex_range(lo: int, hi: int, width: int) -> list[str]:
    """Alternatives (regex texts) for the ``width``-digit hex spellings of lo..hi."""
    if width == 0:
        return [""]
    base = 16 ** (width - 1)
    dlo, rlo = divmod(lo, base)
    dhi, rhi = divmod(hi, base)
    full_rest = "" if width == 1 else ("[0-9a-fA-F]" + ("{%d}" % (width - 1) if width > 2 else ""))
    if dlo == dhi:
        return [_hex_digit_class(dlo, dlo) + r for r in _hex_range(rlo, rhi, width - 1)]
    out = []
    first, last = dlo, dhi
    if rlo != 0:
        out += [_hex_digit_class(dlo, dlo) + r for r in _hex_range(rlo, base - 1, width - 1)]
        first = dlo + 1
    tail = []
    if rhi != base - 1:
        tail = [_hex_digit_class(dhi, dhi) + r for r in _hex_range(0, rhi, width - 1)]
        last = dhi - 1
    if first <= last:
        out.append(_hex_digit_class(first, last) + full_rest)
    return out + tail


def _hex_set(ivs) -> str:
    alts = []
    for lo, hi in ivs:
        alts.extend(_hex_range(lo, hi, 4))
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _pair_alts(astral) -> list[str]:
    """Surrogate-pair spellings (after the first ``\\u``) of astral code points."""
    out = []
    for lo, hi in astral:
        hlo, llo = 0xD800 + ((lo - 0x10000) >> 10), 0xDC00 + ((lo - 0x10000) & 0x3FF)
        hhi, lhi = 0xD800 + ((hi - 0x10000) >> 10), 0xDC00 + ((hi - 0x10000) & 0x3FF)
        if hlo == hhi:
            out.append(_hex_set(((hlo, hlo),)) + "\\\\u" + _hex_set(((llo, lhi),)))
            continue
        first, last = hlo, hhi
        if llo != 0xDC00:
            out.append(_hex_set(((hlo, hlo),)) + "\\\\u" + _hex_set(((llo, 0xDFFF),)))
            first = hlo + 1
        tail = None
        if lhi != 0xDFFF:
            tail = _hex_set(((hhi, hhi),)) + "\\\\u" + _hex_set(((0xDC00, lhi),))
            last = hhi - 1
        if first <= last:
            out.append(_hex_set(((first, last),)) + "\\\\u" + _hex_set(((0xDC00, 0xDFFF),)))
        if tail:
            out.append(tail)
    return out


#: the characters a string may write escaped: all but the printable ASCII ones that JSON
#: lets be written raw (``"``, ``\\`` and ``/`` stay escapable). JSON writers escape
#: nothing else (``json.dumps`` with or without ``ensure_ascii`` included): a ``\\u0061``
#: for ``a`` is refused (policy). Each spelling of a character is a lexer state of its own,
#: so this keeps every key and string terminal small, and alike (keys and values share
#: their escape states).
ESCAPABLE = iv_norm([(0, 0x1F), (0x22, 0x22), (0x2F, 0x2F), (0x5C, 0x5C), (0x7F, MAX_CP)])


@lru_cache(maxsize=8192)
def json_char_class(ivs: tuple) -> str:
    """Regex (over JSON text) for one character from ``ivs``, spelled as JSON
    writers spell it: raw (not ``"``, ``\\`` or a control character), or, for
    the characters of :data:`ESCAPABLE`, a short escape, ``\\uXXXX`` in any hex
    case, or a surrogate pair of escapes."""
    raw = iv_intersect(ivs, RAW_OK)
    ivs = iv_intersect(ivs, ESCAPABLE)
    esc = []
    shorts = [s for c, s in sorted(_SHORT.items()) if iv_contains(ivs, c)]
    if shorts:
        esc.append(shorts[0] if len(shorts) == 1 else "[" + "".join(shorts) + "]")
    u = []
    bmp = iv_intersect(ivs, _BMP)
    if bmp:
        u.append(_hex_set(bmp))
    astral = iv_intersect(ivs, _ASTRAL)
    if astral:
        u.extend(_pair_alts(astral))
    if u:
        esc.append("u" + (u[0] if len(u) == 1 else "(?:" + "|".join(u) + ")"))
    alts = []
    if raw:
        alts.append(_class_text(raw))
    if esc:
        alts.append("\\\\" + (esc[0] if len(esc) == 1 else "(?:" + "|".join(esc) + ")"))
    if len(alts) == 1:
        return alts[0] if raw else "(?:" + alts[0] + ")"
    return "(?:" + "|".join(alts) + ")"


def to_json_string(x) -> str:
    """Python regex over the JSON text *between the quotes* of the strings in
    the AST's language (every spelling :func:`json_char_class` allows)."""
    return _emit(x, json_char_class)


# --------------------------------------------------------------------------
# finite exclusion: any string except a given finite set
# --------------------------------------------------------------------------

def not_in(words, universe=UNIVERSE) -> tuple:
    """AST of all strings over ``universe`` except ``words`` (built on the trie)."""
    trie: dict = {}
    END = object()
    for w in words:
        node = trie
        for c in w:
            node = node.setdefault(ord(c), {})
        node[END] = True

    anystar = ("r", ("c", universe), 0, None)

    def build(node) -> tuple:
        kids = sorted(k for k in node if k is not END)
        other = iv_intersect(universe, iv_complement(iv_norm([(k, k) for k in kids])))
        alts = []
        if END not in node:
            alts.append(EPS)
        if other:
            alts.append(seq(("c", other), anystar))
        for k in kids:
            if iv_contains(universe, k):
                alts.append(seq(("c", ((k, k),)), build(node[k])))
        return alt(*alts)

    return build(trie)


# --------------------------------------------------------------------------
# DFA over code-point intervals
# --------------------------------------------------------------------------

MAX_NFA = 20_000
MAX_STATES = 4_000      # DFA states in Boolean operations (pure Python: keep them small)
MAX_ELIM = 300         # states for DFA -> regex by state elimination


def _collect_sets(x, out: set):
    k = x[0]
    if k == "c":
        out.add(x[1])
    elif k in ("s", "a"):
        for y in x[1]:
            _collect_sets(y, out)
    else:
        _collect_sets(x[1], out)


def atom_partition(*asts) -> list:
    """Partition of the universe into intervals no AST character set splits."""
    sets: set = {UNIVERSE}
    for a in asts:
        _collect_sets(a, sets)
    cuts = set()
    for s in sets:
        for lo, hi in s:
            cuts.add(lo)
            cuts.add(hi + 1)
    pts = sorted(c for c in cuts if 0 <= c <= MAX_CP + 1)
    atoms = []
    for a, b in zip(pts, pts[1:]):
        iv = iv_norm([(a, b - 1)])
        if iv:
            atoms.append((a, b - 1))
    return atoms


class Dfa:
    """Complete DFA over an atom partition: ``trans[s][i]`` (dead state
    included), ``final[s]``; start state 0."""

    def __init__(self, atoms, trans, final):
        self.atoms = atoms
        self.trans = trans
        self.final = final

    # -- construction -------------------------------------------------------
    @classmethod
    def from_ast(cls, x, atoms) -> "Dfa":
        starts = [a for a, _ in atoms]
        n_atoms = len(atoms)

        def mask_of(ivs) -> int:
            m = 0
            for lo, hi in ivs:
                i = bisect.bisect_right(starts, lo) - 1
                while i < n_atoms and atoms[i][0] <= hi:
                    m |= 1 << i
                    i += 1
            return m

        eps: list[list[int]] = []
        edges: list[list[tuple[int, int]]] = []

        def new() -> int:
            if len(eps) >= MAX_NFA:
                raise TooComplex("regex too large for the Boolean operations")
            eps.append([])
            edges.append([])
            return len(eps) - 1

        masks: dict = {}

        def build(y, cur: int) -> int:
            k = y[0]
            if k == "c":
                m = masks.get(y[1])
                if m is None:
                    m = masks[y[1]] = mask_of(y[1])
                nxt = new()
                edges[cur].append((m, nxt))
                return nxt
            if k == "s":
                for z in y[1]:
                    cur = build(z, cur)
                return cur
            if k == "a":
                end = new()
                for z in y[1]:
                    e = build(z, cur)
                    eps[e].append(end)
                return end
            _, z, lo, hi = y
            for _ in range(lo):
                cur = build(z, cur)
            if hi is None:
                loop = new()
                eps[cur].append(loop)
                e = build(z, loop)
                eps[e].append(loop)
                out = new()
                eps[loop].append(out)
                return out
            join = new()
            for _ in range(hi - lo):
                eps[cur].append(join)
                cur = build(z, cur)
            eps[cur].append(join)
            return join

        s0 = new()
        fin = build(x, s0)

        def closure(states) -> frozenset:
            seen = set(states)
            stack = list(states)
            while stack:
                s = stack.pop()
                for t in eps[s]:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
            return frozenset(seen)

        start = closure([s0])
        ids = {start: 0}
        order = [start]
        trans: list[list[int]] = []
        final = []
        i = 0
        while i < len(order):
            cur = order[i]
            i += 1
            final.append(fin in cur)
            per_atom: dict[int, set] = {}
            for s in cur:
                for m, t in edges[s]:
                    while m:
                        low = m & -m
                        per_atom.setdefault(low.bit_length() - 1, set()).add(t)
                        m ^= low
            row = [-1] * n_atoms
            cache: dict = {}
            for a, ts in per_atom.items():
                key = frozenset(ts)
                d = cache.get(key)
                if d is None:
                    cl = closure(ts)
                    d = ids.get(cl)
                    if d is None:
                        d = len(order)
                        ids[cl] = d
                        order.append(cl)
                        if d > MAX_STATES:
                            raise TooComplex("automaton too large for the Boolean operations")
                    cache[key] = d
                row[a] = d
            trans.append(row)
        # complete it with a dead state
        dead = len(trans)
        trans = [[d if d >= 0 else dead for d in row] for row in trans]
        trans.append([dead] * n_atoms)
        final.append(False)
        return cls(atoms, trans, final).minimize()

    def minimize(self) -> "Dfa":
        n = len(self.trans)
        block = [1 if f else 0 for f in self.final]
        nb = len(set(block))
        while True:
            sigs: dict = {}
            new = []
            for s in range(n):
                key = (block[s], tuple(block[t] for t in self.trans[s]))
                new.append(sigs.setdefault(key, len(sigs)))
            if len(sigs) == nb:
                block = new
                break
            block, nb = new, len(sigs)
        # renumber so the start block is 0
        remap = {block[0]: 0}
        for b in block:
            remap.setdefault(b, len(remap))
        trans = [None] * len(remap)
        final = [False] * len(remap)
        for s in range(n):
            b = remap[block[s]]
            if trans[b] is None:
                trans[b] = [remap[block[t]] for t in self.trans[s]]
                final[b] = self.final[s]
        return Dfa(self.atoms, trans, final)

    # -- operations -----------------------------------------------------------
    def product(self, other: "Dfa", op) -> "Dfa":
        assert self.atoms == other.atoms
        if len(self.trans) * len(other.trans) > 50 * MAX_STATES:
            raise TooComplex("automaton product too large")
        ids = {(0, 0): 0}
        order = [(0, 0)]
        trans, final = [], []
        i = 0
        while i < len(order):
            a, b = order[i]
            i += 1
            final.append(op(self.final[a], other.final[b]))
            row = []
            for x, y in zip(self.trans[a], other.trans[b]):
                d = ids.get((x, y))
                if d is None:
                    d = len(order)
                    ids[(x, y)] = d
                    order.append((x, y))
                    if d > MAX_STATES:
                        raise TooComplex("automaton too large for the Boolean operations")
                row.append(d)
            trans.append(row)
        return Dfa(self.atoms, trans, final).minimize()

    def complement(self) -> "Dfa":
        return Dfa(self.atoms, self.trans, [not f for f in self.final])

    def is_empty(self) -> bool:
        seen = {0}
        stack = [0]
        while stack:
            s = stack.pop()
            if self.final[s]:
                return False
            for t in self.trans[s]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return True

    def to_ast(self, limit: int = 4000) -> tuple:
        """Regex AST by state elimination; raises TooComplex past ``limit`` nodes."""
        n = len(self.trans)
        # keep only useful states (reachable and co-reachable)
        reach = {0}
        stack = [0]
        while stack:
            s = stack.pop()
            for t in self.trans[s]:
                if t not in reach:
                    reach.add(t)
                    stack.append(t)
        rev: dict[int, set] = {}
        for s in range(n):
            for t in self.trans[s]:
                rev.setdefault(t, set()).add(s)
        co = {s for s in range(n) if self.final[s]}
        stack = list(co)
        while stack:
            s = stack.pop()
            for p in rev.get(s, ()):
                if p not in co:
                    co.add(p)
                    stack.append(p)
        useful = reach & co
        if 0 not in useful:
            return NONE
        if len(useful) > MAX_ELIM:
            raise TooComplex("automaton too large to turn back into a regex")
        S, F = -1, -2
        out: dict[int, dict[int, tuple]] = {S: {0: EPS}}
        inn: dict[int, dict[int, tuple]] = {0: {S: EPS}}
        for s in useful:
            by_t: dict[int, list] = {}
            for i, t in enumerate(self.trans[s]):
                if t in useful:
                    by_t.setdefault(t, []).append(self.atoms[i])
            for t, ivs in by_t.items():
                lab = ("c", iv_norm(ivs))
                out.setdefault(s, {})[t] = lab
                inn.setdefault(t, {})[s] = lab
            if self.final[s]:
                out.setdefault(s, {})[F] = EPS
                inn.setdefault(F, {})[s] = EPS
        remaining = set(useful)
        while remaining:
            q = min(remaining, key=lambda s: (len(inn.get(s, {})) * len(out.get(s, {})),
                                               sum(ast_size(v) for v in inn.get(s, {}).values())))
            remaining.discard(q)
            loop = out.get(q, {}).pop(q, None)
            inn.get(q, {}).pop(q, None)
            star = rep(loop, 0, None) if loop is not None else EPS
            ins = inn.pop(q, {})
            outs = out.pop(q, {})
            for p, a in ins.items():
                out[p].pop(q, None)
                for r, b in outs.items():
                    inn[r].pop(q, None)
                    lab = seq(a, star, b)
                    old = out[p].get(r)
                    lab = lab if old is None else alt(old, lab)
                    if ast_size(lab) > limit:
                        raise TooComplex("the resulting regex is too large")
                    out[p][r] = lab
                    inn.setdefault(r, {})[p] = lab
            for r in outs:
                inn.get(r, {}).pop(q, None)
        return out.get(S, {}).get(F, NONE)


def _dfas(*asts):
    atoms = atom_partition(*asts)
    return [Dfa.from_ast(a, atoms) for a in asts]


def intersect(*asts, limit: int = 4000) -> tuple:
    """AST of the intersection (raises TooComplex when too large)."""
    asts = [a for a in asts]
    if any(a == NONE for a in asts):
        return NONE
    asts = [a for a in asts if a != ANYSTAR]
    if not asts:
        return ANYSTAR
    if len(asts) == 1:
        return asts[0]
    ds = _dfas(*asts)
    d = ds[0]
    for e in ds[1:]:
        d = d.product(e, lambda x, y: x and y)
    return d.to_ast(limit)


def difference(a, b, limit: int = 4000) -> tuple:
    if b == NONE:
        return a
    da, db = _dfas(a, b)
    return da.product(db, lambda x, y: x and not y).to_ast(limit)


def union(*asts) -> tuple:
    return alt(*asts)


def complement(a, limit: int = 4000) -> tuple:
    (d,) = _dfas(a)
    return d.complement().to_ast(limit)


def is_empty(a) -> bool:
    if a == NONE:
        return True
    (d,) = _dfas(a)
    return d.is_empty()


def is_disjoint(a, b) -> bool:
    if a == NONE or b == NONE:
        return True
    da, db = _dfas(a, b)
    return da.product(db, lambda x, y: x and y).is_empty()


def is_subset(a, b) -> bool:
    if a == NONE:
        return True
    da, db = _dfas(a, b)
    return da.product(db, lambda x, y: x and not y).is_empty()


def limit_length(x, lo: int, hi, limit: int = 4000) -> tuple:
    """AST of the strings of ``x`` with ``lo <= len <= hi`` (hi None = no
    upper bound). Tries structural rewrites first (exact), then a DFA product;
    raises TooComplex when neither gives a small regex."""
    a, b = length_range(x)
    if b == -1:
        return NONE
    if a >= lo and (hi is None or (b is not None and b <= hi)):
        return x
    r = _rewrite_len(x, lo, hi)
    if r is not None:
        return r
    return intersect(x, rep(ANY, lo, hi), limit=limit)


def _fixed_len(x):
    a, b = length_range(x)
    return a if a == b else None


def _rewrite_len(x, lo: int, hi):
    """Structural length restriction: alternation distributes; a
    concatenation with exactly one variable-length part passes the remaining
    budget to it; a repetition of a fixed-length body gets new counts."""
    k = x[0]
    if k == "a":
        parts = []
        for y in x[1]:
            r = _rewrite_len(y, lo, hi)
            if r is None:
                return None
            parts.append(r)
        return alt(*parts)
    if k == "c":
        return x if lo <= 1 and (hi is None or hi >= 1) else NONE
    if k == "s":
        fixed = 0
        var = None
        for i, y in enumerate(x[1]):
            f = _fixed_len(y)
            if f is None:
                if var is not None:
                    return None
                var = i
            else:
                fixed += f
        if var is None:
            return x if fixed >= lo and (hi is None or fixed <= hi) else NONE
        r = _rewrite_len(x[1][var], max(0, lo - fixed), None if hi is None else hi - fixed)
        if r is None:
            return None
        items = list(x[1])
        items[var] = r
        return seq(*items)
    _, y, a, b = x
    f = _fixed_len(y)
    if f is None:
        return None
    if f == 0:
        return x if lo == 0 else NONE
    na = max(a, -(-lo // f))
    nb = b
    if hi is not None:
        nb = hi // f if b is None else min(b, hi // f)
    return rep(y, na, nb)
