"""The syntax of ECMA-262 patterns (JSON Schema ``pattern``): a pattern -> a parse tree.

:class:`_Parser` reads groups (capturing, named, non-capturing, with inline flags),
alternation, quantifiers, classes and escapes (their sets from :mod:`.charsets`,
case-insensitive where ``(?i)`` holds), anchors, lookarounds and ``\\b``/``\\B`` marks into
the intermediate tree below, and refuses what cannot be enforced (:class:`PatternError`).
While it reads, it folds lookarounds of one character into the character they limit
(:func:`_one_char_looks`, :func:`_edge_in`). What the tree matches, anchored as JSON Schema
says, is :mod:`.language`'s job; the patterns supported are listed there.
"""

from __future__ import annotations

import logging
import re

from ...lexer.ir import MAX_CP, SURR_HI, SURR_LO, iv_intersect
from ...lexer.ir import complement_intervals as iv_complement
from ...lexer.ir import normalize_intervals as iv_norm
from .charsets import (ANY_CP, DIGIT, DOT, SPACE, WORD, case_closure, case_interior,
                       unicode_property)

__all__ = ["PatternError", "parse_tree", "tree_has", "has_anchor", "edge_chars"]


log = logging.getLogger("stackmask")


class PatternError(ValueError):
    """The pattern is invalid or uses a feature that cannot be enforced."""


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
            # decided once the whole pattern is read (:func:`.language._decide_marks`)
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
            if self.depth or self.peek() != "$" or self.peek(1) not in (None, "|") or has_anchor(body):
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


def parse_tree(pattern: str) -> tuple:
    """``(tree, marks)``: the parse tree of ``pattern`` and whether it holds ``\\b``/``\\B``
    marks. Logs where a bare ``(?i)`` reads otherwise in Python's ``re`` before 3.11
    (:meth:`_Parser._flag_reach`)."""
    p = _Parser(pattern)
    try:
        tree = p.parse()
    except RecursionError:
        raise PatternError(f"pattern nested too deeply: {pattern!r}") from None
    if p.flag_note:
        log.info("pattern: %s", p.flag_note)
    return tree, p.marks


def _fold(pos, negs, neg: bool) -> tuple:
    """A character atom read case-insensitively: the case closure of the sets ``pos``,
    with each of ``negs`` (:class:`_NegSet`) less the code points with a variant outside
    it, complemented when ``neg`` (``[^a-z]`` matches neither ``a`` nor ``A`` nor U+212A
    KELVIN SIGN, a variant of ``k``), as Python's ``re`` reads ``(?i:...)``."""
    ivs = list(case_closure(iv_norm([iv for x in pos for iv in x])))
    for x in negs:
        ivs.extend(case_interior(tuple(x)))
    s = iv_norm(ivs)
    return iv_complement(s) if neg else s


def _iv_minus(a: tuple, b: tuple) -> tuple:
    """The intervals of ``a`` less those of ``b``."""
    return iv_intersect(a, iv_complement(b))


def has_anchor(t) -> bool:
    return tree_has(t, ("bol", "eol", "look"))


def tree_has(t, kinds) -> bool:
    """Does the parse tree ``t`` hold a node of one of ``kinds``?"""
    k = t[0]
    if k in kinds:
        return True
    if k in ("seq", "alt"):
        return any(tree_has(x, kinds) for x in t[1])
    if k == "rep":
        return tree_has(t[1], kinds)
    return False


def edge_chars(t, last: bool):
    """``(intervals, may be empty)`` of the characters that can end (``last``) or begin a
    match of the parse tree ``t``; assertions read nothing."""
    k = t[0]
    if k == "chars":
        return t[1], False
    if k in ("seq", "alt"):
        parts = t[1] if k == "alt" or not last else list(reversed(t[1]))
        got, empty = [], k == "seq"
        for x in parts:
            ivs, e = edge_chars(x, last)
            got.extend(ivs)
            if k == "alt":
                empty = empty or e
            elif not e:
                empty = False
                break
        return iv_norm(got), empty if k == "seq" or parts else True
    if k == "rep":
        ivs, e = edge_chars(t[1], last)
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
        if lo < 1 or edge_chars(body, last)[1]:
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
        if not edge_chars(item, last)[1]:
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
    if t[0] == "rep" and t[2] == 0 and t[3] != 0 and not edge_chars(t[1], True)[1]:
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
                got = None if any(tree_has(x, ("look", "behind", "behind1")) for x in rest) else \
                    _edge_in(("seq", rest), keep, last=False)
                if got is not None:
                    out.append(got)
                    break
        out.append(t)
        i += 1
    return out
