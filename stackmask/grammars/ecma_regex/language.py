"""ECMA-262 patterns (JSON Schema ``pattern``) -> the regex IR (:mod:`stackmask.lexer.ir`).

A pattern's parse tree (:mod:`.parser`) is turned into the IR over sets of Unicode code
points (the *decoded* string the JSON Schema validator sees) and anchored as JSON Schema
says: a pattern matches anywhere in the string unless it uses ``^``/``$``. Its assertions
become Boolean operations on languages (:mod:`.algebra`).

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
it (``(?!-)[a-z0-9-]{1,63}(?<!-)``: :func:`.parser._edge_in`). Not
supported (raise :class:`.parser.PatternError` naming the feature): other lookbehinds,
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
``\\p{Punct}`` as the ``regex`` module defines them (UTS #18 Annex C;
:func:`.charsets.unicode_property`).

Case-insensitive matching: ``(?i:...)`` (ES2025 pattern modifiers; ``(?-i:...)`` turns it
off inside), and a bare ``(?i)``, which holds to the end of its group (later alternatives
too) or of the pattern, as in PCRE and the ``regex`` module. A set then also matches every
case variant of its members (:func:`.charsets.case_closure`: the equivalence of Python's
``re``, which differs from the ``regex`` module's on the four letters I, i, U+0130, U+0131),
and a negated one (``[^k]``, ``\\W``, ``\\P{Lu}``) matches only what has no variant in the
set it negates.
Python's ``re`` before 3.11 reads a bare ``(?i)`` anywhere for the whole pattern (and 3.11 on
refuses one not at the start); where the two readings differ the pattern is read as PCRE reads
it, and the difference is logged (:meth:`.parser._Parser._flag_reach`):
``^(?!(?i)aws)[A-Za-z0-9]+`` (outside the lookahead, ``[A-Za-z0-9]`` would match U+212A
KELVIN SIGN case-insensitively); ``^(?!(?i)(stop|help)$)[ \\S]+`` and ``(?i)^abc$`` read
the same either way.
"""

from __future__ import annotations

from functools import lru_cache

from ...lexer.ir import (ANY, ANYSTAR, EPS, MAX_CP, NONE, alt, ch, iv_intersect, length_range,
                         nullable, rep, seq)
from ...lexer.ir import complement_intervals as iv_complement
from ...lexer.ir import normalize_intervals as iv_norm
from .algebra import (NWB_MARK, WB_MARK, TooComplex, difference, intersect, is_subset, looking,
                      resolve_word_boundaries, union, write_out)
from .charsets import WORD
from .parser import PatternError, edge_chars, has_anchor, parse_tree, tree_has

__all__ = ["parse_pattern", "parse_regex_full"]


def _has_look(t) -> bool:
    return tree_has(t, ("look",))


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
    return k == "rep" and has_anchor(t[1])


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
        if t[3] is not None and t[3] <= MAX_UNROLL and tree_has(t[1], ("bol", "look")):
            # a few iterations, written out: their assertions stand in a sequence
            return _rest(_unrolled(t), k, empty)
        if has_anchor(t[1]):
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
        ivs, empty = edge_chars(x, last)
        edge = side[1] if empty else False
        if tree_has(x, ("bol",) if last else ("eol",)):
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
                before = (iv_norm(list(before[0]) + list(edge_chars(body, True)[0])), before[1])
                after = (iv_norm(list(after[0]) + list(edge_chars(body, False)[0])), after[1])
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
        if look[0] == "look" and not look[1] and c[0] == "chars" and not tree_has(look[2], ("bol",)):
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
            if has_anchor(child) or nullable(_plain(child)):
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
    if not has_anchor(t):
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
    tree, marks = parse_tree(pattern)
    if marks:
        tree = _decide_marks(tree)
    at = _mark_at(tree) if marks else None
    if at is None:
        return _strings_matching(tree)
    # \b/\B marks, decided on the whole string; other assertions read the marks as
    # characters (a lookahead's text, what "^" and "$" need empty): refused beside them
    where = f"(at offset {at} of {pattern!r})"
    tree = _marks_as_chars(tree)
    if tree_has(tree, ("look", "behind")) or _anchor_beside_mark(tree):
        raise PatternError("word boundary assertions (\\b, \\B) are supported where the "
                           "characters on both sides decide them, or in a pattern without "
                           f"other assertions beside them {where}")
    try:
        return resolve_word_boundaries(_strings_matching(tree), WORD)
    except TooComplex:
        raise PatternError(f"word boundary assertions (\\b, \\B) too complex to enforce "
                           f"exactly {where}") from None


def _strings_matching(tree) -> tuple:
    if tree_has(tree, ("behind",)):
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
