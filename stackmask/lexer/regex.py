"""Python regex (Unicode ``str`` pattern) -> NFA over UTF-8 bytes.

The pattern is parsed with the standard library's own parser
(``re._parser``), so the syntax accepted, the flag handling and the parser's
rewrites (common-prefix factoring, ``a|b`` -> ``[ab]``) are exactly those of
``re``. The parse tree is then written in the regex IR (:mod:`.ir`) as it stands and
turned into the IR's Thompson NFA, whose edges here are byte ranges.

Single-character constructs (literals, ``.``, classes, categories) are mapped
to *sets of code points* that are exact by construction: unless the set is a
plain union of literals and ranges without IGNORECASE, the construct is
re-emitted as a one-character pattern and its matches are found by scanning a
string holding every code point (``re.finditer('(?:X)+', universe)``) with the
construct's effective flags. Whatever Python's ``re`` does for one character
(Unicode ``\\w``/``\\d``/``\\s``, IGNORECASE folding such as ``(?i)k`` matching
U+212A KELVIN SIGN, ``(?a)``, ``(?s)``) is therefore what the NFA does. Code
point sets are then encoded as UTF-8 byte-range sequences (split by encoding
length, then at continuation-byte boundaries). Surrogates U+D800..U+DFFF are
never part of any set, so only valid UTF-8 is ever accepted.

See :mod:`stackmask.lexer` for the full semantics (shortest-match rule for
reluctant quantifiers, rejected features, size limit).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

try:                                  # Python >= 3.11
    import re._constants as C
    import re._parser as sre_parse
except ImportError:                   # Python 3.10 (as Lark does)
    import sre_constants as C
    import sre_parse

import numpy as np

from ..errors import GrammarError
from ..limits import deep_recursion
from .counted import DEFAULT_BAND, counted_group, flatten, reach_for, split_counted
from ..memo import SizedCache
from .dfa import (DFA, MAX_DFA_STATES, MAX_NFA_STATES, dfa_nbytes, difference, expand_classes,
                  intersection)
from .fsa import Nfa, TooManyStates, determinize, minimize, trim
from .ir import (MAX_CP, SURR_HI, SURR_LO, Intervals, complement_intervals, has_node,
                 length_range, nfa_size, normalize_intervals, thompson)

#: any character (the rest of the lexeme a lookahead does not read)
ANYCHAR = ("c", normalize_intervals([(0, MAX_CP)]))

__all__ = ["regex_to_nfa", "compile_terminal", "counted_parts", "compile_counted_group",
           "lookahead_parts",
           "codepoint_set", "utf8_sequences", "combine_flags", "walk_parse_tree",
           "newer_syntax_hint"]

#: opcodes of atomic groups and possessive quantifiers (Python 3.11+); Python 3.10's
#: parser rejects their syntax, so there they stand for no opcode (None)
ATOMIC_GROUP = getattr(C, "ATOMIC_GROUP", None)
POSSESSIVE_REPEAT = getattr(C, "POSSESSIVE_REPEAT", None)

_I = C.SRE_FLAG_IGNORECASE
_S = C.SRE_FLAG_DOTALL
_A = C.SRE_FLAG_ASCII
_CHAR_FLAGS = _I | _S | _A  # the flags that can change what one character matches


# --------------------------------------------------------------------------
# code point sets
# --------------------------------------------------------------------------

_UNIVERSE: str | None = None


def _universe() -> str:
    """Every code point except surrogates, in order (built once, ~4 MB)."""
    global _UNIVERSE
    if _UNIVERSE is None:
        _UNIVERSE = "".join(map(chr, range(SURR_LO))) + "".join(map(chr, range(SURR_HI + 1, MAX_CP + 1)))
    return _UNIVERSE


def _pos_to_cp(p: int) -> int:
    return p if p < SURR_LO else p + (SURR_HI + 1 - SURR_LO)


@lru_cache(maxsize=None)
def _scan(char_pattern: str, flags: int) -> Intervals:
    """Exact set of code points c with ``re.fullmatch(char_pattern, chr(c), flags)``,
    where ``char_pattern`` matches exactly one character."""
    rx = re.compile(f"(?:{char_pattern})+", flags)
    runs = []
    for m in rx.finditer(_universe()):
        a, b = m.span()
        runs.append((_pos_to_cp(a), _pos_to_cp(b - 1)))
    return normalize_intervals(runs)


_CATEGORY_TEXT = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s", C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}


def _esc(c: int) -> str:
    return "\\U%08x" % c


def _class_text(items) -> str:
    parts = []
    for op, av in items:
        if op is C.NEGATE:
            parts.append("^")
        elif op is C.LITERAL:
            parts.append(_esc(av))
        elif op is C.RANGE:
            parts.append(_esc(av[0]) + "-" + _esc(av[1]))
        elif op is C.CATEGORY:
            if av not in _CATEGORY_TEXT:
                raise ValueError(f"unsupported category {av}")
            parts.append(_CATEGORY_TEXT[av])
        else:
            raise ValueError(f"unsupported class item {op}")
    return "[" + "".join(parts) + "]"


def codepoint_set(op, av, flags: int) -> Intervals:
    """The exact set of code points that the one-character construct
    ``(op, av)`` (from ``re._parser``) matches under ``flags``."""
    flags &= _CHAR_FLAGS
    return _codepoint_set(op, _freeze(av), flags)


def _freeze(av):
    if isinstance(av, list):
        return tuple((op, tuple(a) if isinstance(a, list) else a) for op, a in av)
    return av


@lru_cache(maxsize=None)
def _codepoint_set(op, av, flags: int) -> Intervals:
    icase = bool(flags & _I)
    if op is C.ANY:
        if flags & _S:
            return normalize_intervals([(0, MAX_CP)])
        return complement_intervals(((10, 10),))
    if op is C.LITERAL:
        if not icase:
            return normalize_intervals([(av, av)])
        return _scan(_esc(av), flags)
    if op is C.NOT_LITERAL:
        if not icase:
            return complement_intervals(normalize_intervals([(av, av)]))
        return _scan("[^" + _esc(av) + "]", flags)
    if op is C.CATEGORY:
        return _codepoint_set(C.IN, ((C.CATEGORY, av),), flags)
    if op is C.IN:
        simple = not icase and all(o in (C.LITERAL, C.RANGE, C.NEGATE) for o, _ in av)
        if simple:
            ivs = []
            neg = False
            for o, a in av:
                if o is C.NEGATE:
                    neg = True
                elif o is C.LITERAL:
                    ivs.append((a, a))
                else:
                    ivs.append((a[0], a[1]))
            s = normalize_intervals(ivs)
            return complement_intervals(s) if neg else s
        return _scan(_class_text(av), flags)
    raise ValueError(f"not a one-character construct: {op}")


class ByteNFA(Nfa):
    """The NFA of one terminal, over bytes. ``reluctant`` records that the pattern
    contained a reluctant quantifier (shortest-match semantics apply to the terminal);
    ``name`` and ``label`` name the terminal in errors."""

    __slots__ = ("reluctant", "name", "label")

    def __init__(self, name: str = "", limit: int = MAX_NFA_STATES, label: str | None = None):
        super().__init__(limit)
        self.reluctant = False
        self.name = name
        self.label = label if label is not None else name


# --------------------------------------------------------------------------
# UTF-8 range splitting
# --------------------------------------------------------------------------

def _encode(c: int) -> bytes:
    return chr(c).encode("utf-8", "surrogatepass")


def utf8_sequences(ivs: Intervals) -> list[tuple[tuple[int, int], ...]]:
    """Byte-range sequences whose union encodes exactly the code points in
    ``ivs`` (which must not contain surrogates). Each sequence is a tuple of
    inclusive (lo, hi) byte ranges, one per byte of the encoding."""
    out = []
    stack = list(reversed(ivs))
    while stack:
        lo, hi = stack.pop()
        # split by encoding length
        split = False
        for m in (0x7F, 0x7FF, 0xFFFF):
            if lo <= m < hi:
                stack.append((m + 1, hi))
                stack.append((lo, m))
                split = True
                break
        if split:
            continue
        if hi <= 0x7F:
            out.append(((lo, hi),))
            continue
        # split at continuation-byte boundaries
        for i in (1, 2, 3):
            m = (1 << (6 * i)) - 1
            if (lo & ~m) != (hi & ~m):
                if (lo & m) != 0:
                    stack.append(((lo | m) + 1, hi))
                    stack.append((lo, lo | m))
                    split = True
                    break
                if (hi & m) != m:
                    stack.append((hi & ~m, hi))
                    stack.append((lo, (hi & ~m) - 1))
                    split = True
                    break
        if split:
            continue
        a, b = _encode(lo), _encode(hi)
        assert len(a) == len(b)
        out.append(tuple(zip(a, b)))
    return out


@lru_cache(maxsize=None)
def _charset_template(ivs: Intervals):
    """A minimal deterministic byte automaton for a code point set: local
    state 0 = entry, 1 = exit, further states internal; edges
    ``(src, lo, hi, dst)``. Built once per set (cached)."""
    if not ivs:
        return 2, ()
    if ivs[-1][1] <= 0x7F:
        return 2, tuple((0, lo, hi, 1) for lo, hi in ivs)
    # byte-range sequences with shared suffixes, then determinize + minimize
    nfa = Nfa(1 << 30)
    entry, exit_ = nfa.new(), nfa.new()
    suffix: dict[tuple, int] = {(): exit_}

    def suf(rest: tuple) -> int:
        st = suffix.get(rest)
        if st is None:
            nxt = suf(rest[1:])
            st = nfa.new()
            nfa.edges[st].append((rest[0][0], rest[0][1], nxt))
            suffix[rest] = st
        return st

    for seq in utf8_sequences(ivs):
        nfa.edges[entry].append((seq[0][0], seq[0][1], suf(seq[1:])))
    nfa.start, nfa.final = entry, exit_
    trans, b2c, acc = determinize(nfa, 256, MAX_DFA_STATES)
    trans, old = trim(trans, acc)
    acc = acc[old]
    trans, old2 = minimize(trans, acc.astype("int64"))
    acc = acc[old2]
    full = trans[:, b2c].tolist()
    finals = [i for i, a in enumerate(acc.tolist()) if a]
    assert len(finals) == 1 and finals[0] != 0 and all(t < 0 for t in full[finals[0]])
    fin = finals[0]
    # local numbering: 0 entry, 1 exit
    local = {0: 0, fin: 1}
    for st in range(len(full)):
        if st not in local:
            local[st] = len(local)
    edges = []
    for st, row in enumerate(full):
        b = 0
        while b < 256:
            t = row[b]
            e = b
            while e + 1 < 256 and row[e + 1] == t:
                e += 1
            if t >= 0:
                edges.append((local[st], b, e, local[t]))
            b = e + 1
    return len(full), tuple(edges)


_UNSUPPORTED = {op: what for op, what in (
    (C.GROUPREF, "backreferences (\\1, (?P=name))"),
    (C.GROUPREF_EXISTS, "conditional groups (?(id)yes|no)"),
    (C.AT, "anchors and boundaries (^ $ \\A \\Z \\b \\B)"),
    (ATOMIC_GROUP, "atomic groups (?>...)"),
    (POSSESSIVE_REPEAT, "possessive quantifiers (*+ ++ ?+ {m,n}+)"),
) if op is not None}


def newer_syntax_hint(pattern: str, err: Exception) -> str:
    """On Python 3.10, a note for a ``re`` error that 3.11 syntax caused: atomic groups and
    possessive quantifiers parse there (and are then reported as unsupported), but 3.10
    rejects them as invalid. Empty on 3.11+ and for any other error."""
    if ATOMIC_GROUP is not None or not isinstance(err, re.error) or err.pos is None:
        return ""
    msg, pos = getattr(err, "msg", ""), err.pos
    # possessive: a '+' right after a quantifier that was not made lazy (a*?+ is invalid in
    # 3.11 too); an escaped '?' before it (\??+) goes without the note
    lazy = pattern[pos - 1:pos] == "?" and pattern[pos - 2:pos - 1] in ("*", "+", "?", "}")
    if msg.startswith("unknown extension ?>"):
        what = "atomic groups (?>...)"
    elif (msg == "multiple repeat" and pos > 0 and pattern[pos:pos + 1] == "+"
          and pattern[pos - 1] in "*+?}" and not lazy):
        what = "possessive quantifiers (*+ ++ ?+ {m,n}+)"
    else:
        return ""
    return f" ({what} are Python 3.11 syntax, and unsupported by stackmask in any version)"


def combine_flags(flags: int, add: int, delete: int) -> int:
    """Flags inside a ``(?add-delete:...)`` group (the rule of ``re._compiler._combine_flags``)."""
    if add & sre_parse.TYPE_FLAGS:
        flags &= ~sre_parse.TYPE_FLAGS
    return (flags | add) & ~delete


_ONE_CHAR = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.CATEGORY)


class _Converter:
    """``re``'s parse tree -> the regex IR (:mod:`.ir`), as written: plain tuples, no
    simplification, so the NFA is the one the pattern spells."""

    def __init__(self, nfa: ByteNFA, label: str):
        self.nfa = nfa
        self.label = label
        #: lookaheads parse only outside repetitions, alternations and other lookaheads
        self.top = True

    def fail(self, what: str):
        raise GrammarError(f"terminal {self.label!r} uses an unsupported regex feature: {what}",
                           name=self.nfa.name)

    def seq(self, items, flags: int) -> tuple:
        return ("s", tuple(self.item(op, av, flags) for op, av in items))

    def item(self, op, av, flags: int) -> tuple:
        if op in _ONE_CHAR:
            try:
                return ("c", codepoint_set(op, av, flags))
            except ValueError as e:
                self.fail(str(e))
        if op is C.SUBPATTERN:
            _group, add, delete, sub = av
            return self.seq(sub, combine_flags(flags, add, delete))
        if op is C.BRANCH:
            return self._nested(lambda: ("a", tuple(self.seq(b, flags) for b in av[1])))
        if op is C.MAX_REPEAT or op is C.MIN_REPEAT:
            lo, hi, sub = av
            return self._nested(lambda: ("r", self.seq(sub, flags), lo,
                                         None if hi is C.MAXREPEAT or hi == C.MAXREPEAT else hi))
        if (op is C.ASSERT or op is C.ASSERT_NOT) and av[0] == 1 and self.top:
            # a lookahead at the top level of the terminal: an intersection (a
            # difference) of automata (:func:`_lookahead_dfa` checks where it stands)
            self.top = False
            try:
                return ("la" if op is C.ASSERT else "nla", self.seq(av[1], flags))
            finally:
                self.top = True
        if op is C.ASSERT or op is C.ASSERT_NOT:
            direction = av[0]
            kind = "lookahead" if direction == 1 else "lookbehind"
            neg = "negative " if op is C.ASSERT_NOT else ""
            where = (" (lookaheads are supported at the top level of a terminal, outside "
                     "repetitions, alternations and other lookaheads)" if direction == 1 else "")
            self.fail(f"{neg}{kind} assertions{where}")
        if op in _UNSUPPORTED:
            self.fail(_UNSUPPORTED[op])
        self.fail(f"regex construct {op}")


    def _nested(self, build):
        top, self.top = self.top, False
        try:
            return build()
        finally:
            self.top = top


def _utf8_leaf(nfa: ByteNFA) -> Callable[[Intervals, int], int]:
    """The leaf of :func:`.ir.thompson` for the lexer: a code point set as its UTF-8
    byte automaton (:func:`_charset_template`)."""
    def leaf(ivs: Intervals, cur: int) -> int:
        n_local, edges = _charset_template(ivs)
        end = nfa.new()
        local = [cur, end] + [nfa.new() for _ in range(n_local - 2)]
        for s, lo, hi, t in edges:
            nfa.edges[local[s]].append((lo, hi, local[t]))
        return end
    return leaf


def _utf8_leaf_size(ivs: Intervals) -> int:
    return _charset_template(ivs)[0] - 1


def walk_parse_tree(items):
    """All (op, av) nodes of a parse tree, pre-order (with an explicit stack: a length
    bound spelled as nested groups is hundreds deep, and nested generators cost a step
    per level for every node)."""
    stack = [iter(items)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        op, av = node
        yield op, av
        if op is C.SUBPATTERN:
            stack.append(iter(av[3]))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, POSSESSIVE_REPEAT):
            stack.append(iter(av[2]))
        elif op is C.BRANCH:
            stack.append(iter([n for b in av[1] for n in b]))
        elif op is ATOMIC_GROUP:
            stack.append(iter(av))
        elif op is C.ASSERT or op is C.ASSERT_NOT:
            stack.append(iter(av[1]))
        elif op is C.GROUPREF_EXISTS:
            stack.append(iter(list(av[1]) + (list(av[2]) if av[2] is not None else [])))


def regex_to_nfa(regex: str, name: str = "", limit: int = MAX_NFA_STATES) -> ByteNFA:
    """Build the byte NFA of ``regex`` (a Python ``str`` pattern).

    Raises :class:`GrammarError` (with ``name``) if ``re`` cannot compile the
    pattern, if it uses an unsupported feature, or if the NFA would exceed
    ``limit`` states. Matching the empty string is checked later, on the DFA.
    """
    nfa = ByteNFA(name, limit, name or regex)
    x = _regex_ir(regex, nfa)
    if _has_lookahead(x):
        raise GrammarError(f"terminal {name or regex!r}: a lookahead has no NFA of its own "
                           "(compile_terminal builds its intersection)", name=name)
    return _build_nfa(x, nfa)


def _regex_ir(regex: str, nfa: ByteNFA):
    """The regex IR of ``regex`` (``nfa``: where the terminal's name, label and
    reluctance are kept; nothing is added to it). The IR of a pattern that converts is
    kept (:func:`_parsed_ir`): one terminal's regex is read by several builds (its own
    DFA at two bands, the counted and lookahead splits, the combined lexer), and a
    length beside a pattern spells tens of kilobytes."""
    if isinstance(regex, str):
        got = _parsed_ir(regex)
        if got is not None:
            x, reluctant = got
            if reluctant:
                nfa.reluctant = True
            return x
    return _regex_ir_uncached(regex, nfa)


@lru_cache(maxsize=512)
def _parsed_ir(regex: str):
    """``(IR, reluctant)`` of ``regex``, or None when it does not convert (the caller
    converts it again, to raise with the terminal's name)."""
    nfa = ByteNFA("", MAX_NFA_STATES, regex)
    try:
        x = _regex_ir_uncached(regex, nfa)
    except GrammarError:
        return None
    return x, nfa.reluctant


def _regex_ir_uncached(regex: str, nfa: ByteNFA):
    name, label = nfa.name, nfa.label
    if not isinstance(regex, str):
        raise GrammarError(f"terminal {label!r}: pattern must be a str, not {type(regex).__name__}",
                           name=name)
    try:
        # the parse is the syntax check: compiling with ``re`` as well would only add
        # its lookbehind width errors (lookbehinds are refused below anyway) and, for a
        # length beside a pattern, costs seconds expanding character sets
        parsed = sre_parse.parse(regex, 0)
    except (re.error, ValueError, OverflowError, RecursionError, TypeError) as e:
        raise GrammarError(f"terminal {label!r} has an invalid regex {regex!r}: {e}"
                           f"{newer_syntax_hint(regex, e)}", name=name) from None
    flags = parsed.state.flags
    conv = _Converter(nfa, label)
    # Check the whole tree first, in its order (the conversion meets unsupported
    # features too, but later than a one-character construct it cannot spell).
    for op, av in walk_parse_tree(parsed):
        if op is C.MIN_REPEAT:
            nfa.reluctant = True
        elif op is C.ASSERT or op is C.ASSERT_NOT or op in _UNSUPPORTED:
            conv.item(op, av, flags)  # raises GrammarError naming the feature
    try:
        return conv.seq(parsed, flags)
    except RecursionError:
        raise GrammarError(f"terminal {label!r}: regex nested too deeply", name=name) from None


def _build_nfa(x, nfa: ByteNFA) -> ByteNFA:
    """Add the Thompson NFA of the IR ``x`` to the empty ``nfa`` (its size counted first,
    so that oversized terminals fail fast)."""
    name, label, limit = nfa.name, nfa.label, nfa.limit
    try:
        needed = 1 + nfa_size(x, _utf8_leaf_size)
    except RecursionError:
        raise GrammarError(f"terminal {label!r}: regex nested too deeply", name=name) from None
    if needed > limit:
        raise GrammarError(
            f"terminal {label!r} is too large: its automaton needs {needed} NFA states, more than "
            f"the limit of {limit} (MAX_NFA_STATES; large bounded repetitions such as x{{m,n}} "
            f"are expanded)", name=name)
    nfa.start = nfa.new()
    try:
        nfa.final = thompson(x, nfa, nfa.start, _utf8_leaf(nfa))
        assert nfa.n_states == needed, (nfa.n_states, needed)
    except RecursionError:
        raise GrammarError(f"terminal {label!r}: regex nested too deeply", name=name) from None
    return nfa


# --------------------------------------------------------------------------
# compiling terminals
# --------------------------------------------------------------------------

def _label(name: str, regex: str) -> str:
    return name or regex


#: terminal automata by regex and band, the recently used up to 48 MB (the lexer caches
#: together stay under ~180 MB in a process that builds grammar after grammar)
_TERMINALS = SizedCache(48 << 20, dfa_nbytes)


def _compile_regex(regex: str, band: int) -> DFA:
    """Minimized DFA for ``regex``, cached (errors are raised uncached, with no name)."""
    return _TERMINALS.get_or_make((regex, band), lambda: _build_terminal(regex, "", band))


def _build_terminal(regex: str, name: str, band: int = DEFAULT_BAND) -> DFA:
    label = _label(name, regex)
    nfa = ByteNFA(name, MAX_NFA_STATES, label)
    x = _regex_ir(regex, nfa)
    if _has_lookahead(x):
        return _lookahead_dfa(x, nfa.reluctant, name, label, band)
    return _ir_dfa(x, nfa, name, label, band)


def _has_lookahead(x) -> bool:
    """Whether the IR ``x`` holds a lookahead (``"la"``, ``"nla"``) outside character
    sets."""
    return has_node(x, ("la", "nla"))


def _lookahead_split(x, reluctant: bool, name: str, label: str) -> tuple:
    """``(P, looks, R)`` of a terminal ``P (?=A)(?!N)... R`` (item lists, and per
    lookahead ``(positive, IR)``), after the checks that make its language
    ``P·(R ∩ A·Σ* \\ N·Σ* ...)`` (GrammarError otherwise): the lookaheads stand together
    after a prefix whose words have one length, and read within the lexeme."""
    parts = flatten(x)
    at = [i for i, y in enumerate(parts) if y[0] in ("la", "nla")]
    if at != list(range(at[0], at[-1] + 1)):
        raise GrammarError(f"terminal {label!r} uses an unsupported regex feature: lookaheads "
                           "at more than one place", name=name)
    pre, rest = parts[:at[0]], parts[at[-1] + 1:]
    looks = [(parts[i][0] == "la", parts[i][1]) for i in at]
    lo, hi = length_range(("s", tuple(pre)))
    if lo != hi:
        raise GrammarError(f"terminal {label!r} uses an unsupported regex feature: a lookahead "
                           "after a prefix of varying length", name=name)
    if reluctant:
        raise GrammarError(f"terminal {label!r} uses an unsupported regex feature: a lookahead "
                           "beside a lazy quantifier", name=name)
    for _, look in looks:
        if _has_lookahead(look):
            raise GrammarError(f"terminal {label!r} uses an unsupported regex feature: a "
                               "lookahead inside a lookahead", name=name)
        if not _sees_within(look, ("s", tuple(rest)), name, label):
            raise GrammarError(
                f"terminal {label!r} uses an unsupported regex feature: a lookahead that may "
                "read past the end of the lexeme (supported: one that no word of the rest of "
                "the terminal is a proper prefix of, as in '\"(?=[^\"]{1,9}\")[a-z]+\"')",
                name=name)
    return pre, looks, rest


def _lookahead_dfa(x, reluctant: bool, name: str, label: str, band: int) -> DFA:
    """The DFA of a terminal ``P (?=A)(?!N) R``: lookaheads at its top level, after a
    prefix ``P`` whose words all have one length. A lookahead sees the rest of the
    lexeme, so the language is ``P·(R ∩ A·Σ* \\ N·Σ*)``, which is ``P·R ∩ P·A·Σ* \\
    P·N·Σ*`` (every split of a word of ``P·R`` after ``|P|`` characters is the same).
    The sides are compiled apart (each may count a long repetition, :mod:`.counted`) and
    intersected (:func:`.dfa.intersection`) or subtracted (:func:`.dfa.difference`).
    This is how the JSON Schema front end spells a length beside a pattern,
    ``"(?=(?:CHAR){lo,hi}")PATTERN"``, and the lookaheads of a pattern too large to
    write out as one regex."""
    pre, looks, rest = _lookahead_split(x, reluctant, name, label)
    # each side with a counted chain keeps the counts the others need as positions
    # (:func:`.counted.reach_for`): the sides are met, and a stall's state stands for all
    # of its counts
    sides = [("s", tuple(pre + rest))] + [("s", tuple(pre) + (look, ("r", ANYCHAR, 0, None)))
                                          for _, look in looks]

    def side(i):
        return _ir_dfa(sides[i], ByteNFA(name, MAX_NFA_STATES, label), name, label, band,
                       empty_ok=True, reach=reach_for(sides[:i] + sides[i + 1:]))
    d = side(0)
    try:
        order = sorted(range(len(looks)), key=lambda i: not looks[i][0])   # intersections first
        for i in order:
            if d is None:
                break
            other = side(i + 1)
            d = intersection(d, other) if looks[i][0] else difference(d, other)
    except TooManyStates:
        raise GrammarError(f"terminal {label!r} is too large: the DFA of its lookahead's "
                           f"intersection needs more than {MAX_DFA_STATES} states "
                           "(MAX_DFA_STATES)", name=name) from None
    except ValueError as e:           # two counted repetitions
        raise GrammarError(f"terminal {label!r}: {e}", name=name) from None
    if d is None:
        raise GrammarError(f"terminal {label!r} matches no string at all", name=name)
    if d.accepts[0]:
        raise GrammarError(f"terminal {label!r} matches the empty string", name=name)
    return d


def _sees_within(look, rest, name: str, label: str) -> bool:
    """Whether a lookahead ``look`` never reads past the end of a lexeme whose rest is
    ``rest`` (IRs): no word of ``rest`` is a proper prefix of a word of ``look``. Then
    the lookahead matches within the lexeme or not at all, as a lexer that could see the
    text after the lexeme would find. Checked on the two languages with every repetition
    unbounded (larger languages: a stronger condition, and no counting); where one of
    those automata is too large (unbounded, the nested optional groups of a long written-out
    regex can be), on the languages as written, nothing counted."""
    def dfa(x):
        try:
            return _ir_dfa(_unbounded(x), ByteNFA(name, MAX_NFA_STATES, label), name, label,
                           DEFAULT_BAND, empty_ok=True)
        except GrammarError:
            return _ir_dfa(x, ByteNFA(name, MAX_NFA_STATES, label), name, label, 1 << 40,
                           empty_ok=True)
    d_rest, d_look = dfa(rest), dfa(look)
    # the proper prefixes of the lookahead's words: the states with a way on (trimmed)
    proper = DFA(trans=d_look.trans, n_states=d_look.n_states,
                 accepts=tuple(frozenset((0,)) if x else frozenset()
                               for x in d_look.live_out.tolist()))
    return intersection(d_rest, proper) is None


def _unbounded(x):
    k = x[0]
    if k in ("s", "a"):
        return (k, tuple(_unbounded(y) for y in x[1]))
    if k == "r":
        return ("r", _unbounded(x[1]), 0, None)
    return x


def _ir_dfa(x, nfa: ByteNFA, name: str, label: str, band: int, empty_ok: bool = False,
            reach: tuple[int, int] = (0, 0)) -> DFA:
    """The minimized DFA of the IR ``x`` (``nfa``: the empty automaton its parse made);
    ``empty_ok``: one side of a lookahead's intersection (it may match the empty
    string); ``reach``: for a counted chain, the other sides' (:func:`.counted.reach_for`)."""
    sp = None if nfa.reluctant else split_counted(x, band)
    d = None if sp is None else _counted_dfa([sp], band, label, (reach,))
    if d is not None:
        if d.accepts[0] and not empty_ok:
            raise GrammarError(f"terminal {label!r} matches the empty string", name=name)
        return d
    _build_nfa(x, nfa)
    try:
        trans, b2c, accepting = determinize(nfa, 256, MAX_DFA_STATES)
    except TooManyStates:
        raise GrammarError(f"terminal {label!r} is too large: its DFA needs more than "
                           f"{MAX_DFA_STATES} states (MAX_DFA_STATES)", name=name) from None
    if accepting[0] and not empty_ok:
        raise GrammarError(f"terminal {label!r} matches the empty string", name=name)
    if nfa.reluctant:
        # shortest-match rule: no transition leaves an accepting state
        trans[accepting] = -1
    t, old = trim(trans, accepting)
    if t.shape[0] == 0:
        raise GrammarError(f"terminal {label!r} matches no string at all", name=name)
    acc = accepting[old]
    t, old2 = minimize(t, acc.astype(np.int64))
    acc = acc[old2]
    full = expand_classes(t, b2c)
    accepts = tuple(frozenset((0,)) if a else frozenset() for a in acc.tolist())
    return DFA(trans=full, accepts=accepts, n_states=full.shape[0])


def _counted_dfa(members, band: int, label: str, reach: tuple = ()) -> DFA | None:
    """The DFA of :func:`.counted.counted_group` (``accepts[s]``: positions in
    ``members``; ``reach``: per member), or None when the iterations cannot be counted or
    the automaton passes the size limit."""
    try:
        got = counted_group(members, band, lambda: ByteNFA("", MAX_NFA_STATES, label),
                            _utf8_leaf, MAX_DFA_STATES, reach)
    except TooManyStates:
        return None
    if got is None:
        return None
    t, b2c, accepts, counters, chain = got
    full = expand_classes(t, b2c)
    chains = ()
    if chain is not None:
        pos, xk, group = chain
        none = np.full(len(pos), -1, dtype=np.int32)
        chains = (np.where(pos >= 0, 0, -1).astype(np.int32), pos, xk, none, none, (group,))
    return DFA(trans=full, accepts=accepts, n_states=full.shape[0], counters=counters,
               chains=chains)


@lru_cache(maxsize=4096)
def counted_parts(regex: str, band: int, any_bounds: bool = False):
    """The :func:`.counted.split_counted` parts of ``regex`` (a repetition far beyond
    ``band``, or with ``any_bounds`` of any bounds, between a prefix and a suffix), or
    None (also for patterns that do not compile: :func:`compile_terminal` reports
    those)."""
    nfa = ByteNFA("", MAX_NFA_STATES, regex)
    try:
        x = _regex_ir(regex, nfa)
    except GrammarError:
        return None
    if nfa.reluctant or _has_lookahead(x):
        return None
    return split_counted(x, band, any_bounds)


#: :func:`lookahead_parts` by regex and band (its automata), the recently used up to 16 MB
_LOOKAHEAD_PARTS = SizedCache(16 << 20, lambda v: 64 if v is None else 64 + dfa_nbytes(v[1]))


def lookahead_parts(regex: str, band: int):
    """:func:`_lookahead_parts`, cached."""
    return _LOOKAHEAD_PARTS.get_or_make((regex, band), lambda: _lookahead_parts(regex, band))


def _lookahead_parts(regex: str, band: int):
    """For a terminal ``P (?=A) R`` (:func:`_lookahead_dfa`) whose lookahead side
    ``P·A·Σ*`` is one repetition between a prefix and a suffix: ``(parts, dfa, reach)``,
    the :func:`.counted.split_counted` parts of that side (of any bounds), the DFA of the
    other, ``P·R`` (their intersection is the terminal), and the reach a chain that counts
    the first side needs beside the other (:func:`.counted.reach_for`). The combined
    lexer counts the sides of several such terminals (JSON strings with a length beside a
    pattern) on one chain, as it does for counted terminals sharing a prefix and body;
    apart, the product of their chains would pair every count at which one stalls with
    every count of the others. None otherwise (also for regexes that do not compile)."""
    nfa = ByteNFA("", MAX_NFA_STATES, regex)
    try:
        x = _regex_ir(regex, nfa)
    except GrammarError:
        return None
    if nfa.reluctant or not _has_lookahead(x):
        return None
    try:
        pre, looks, rest = _lookahead_split(x, False, "", regex)
    except GrammarError:
        return None                   # compiled whole, it says why
    if len(looks) != 1 or not looks[0][0]:
        return None                   # several or negative: compiled whole
    side = ("s", tuple(pre) + (looks[0][1], ("r", ANYCHAR, 0, None)))
    sp = split_counted(side, band) or _one_rep(side)
    if sp is None:
        return None
    rest = ("s", tuple(pre + rest))
    try:
        other = _ir_dfa(rest, ByteNFA("", MAX_NFA_STATES, regex), "", regex, band,
                        empty_ok=True, reach=reach_for([side]))
    except GrammarError:
        return None
    return sp, other, reach_for([rest])


def _one_rep(side):
    """:func:`.counted.split_counted` of a lookahead side ``P X{lo,hi} c Σ*``: the
    repetition with bounds (the trailing ``Σ*`` is the suffix's), or None."""
    parts = flatten(side)
    reps = [i for i, y in enumerate(parts) if y[0] == "r" and y[3] is not None]
    if len(reps) != 1 or any(y[0] == "r" for j, y in enumerate(parts[:-1]) if j != reps[0]):
        return None
    i = reps[0]
    _, body, lo, hi = parts[i]
    return ("s", tuple(parts[:i])), body, lo, hi, ("s", tuple(parts[i + 1:]))


#: counted groups by members and band (None: not countable), the recently used up to 48 MB
_GROUPS = SizedCache(48 << 20, dfa_nbytes)


def compile_counted_group(members, band: int, label: str = "", reach: tuple = ()) -> DFA | None:
    """One DFA for terminals whose repetitions share prefix and body (``members``: their
    :func:`counted_parts`, in order): ``accepts[s]`` holds positions in ``members``. None
    when their iterations cannot be counted together, the automaton passes the size
    limit, or a member matches the empty string (compiled alone, it says so). ``reach``:
    per member, :func:`.counted.reach_for` the automata it is met with. Cached by members,
    band and reach (lexer modes of one grammar often read the same group)."""
    def make():
        d = _counted_dfa(members, band, label, reach)
        return None if d is None or d.accepts[0] else d
    return _GROUPS.get_or_make((tuple(members), band, reach), make)


def compile_terminal(regex: str, name: str = "", band: int = DEFAULT_BAND) -> DFA:
    """Minimized DFA over UTF-8 bytes of one terminal; accepting states have
    ``accepts == {0}``. A repetition whose bounds are far beyond ``band`` (longer than
    the longest token) is counted (:mod:`.counted`). Results are cached by regex and
    band. Raises GrammarError (with ``name``) for unsupported or invalid patterns and
    for patterns matching the empty string or nothing at all."""
    with deep_recursion():           # generated regexes nest deeply
        try:
            return _compile_regex(regex, band)
        except GrammarError:
            if not name:
                raise
        # errors are not cached: build again so that the error names the terminal
        return _build_terminal(regex, name, band)


def clear_cache() -> None:
    """Forget the terminal DFAs :func:`compile_terminal` cached, the counted groups
    :func:`compile_counted_group` cached, and the parts :func:`counted_parts` and
    :func:`lookahead_parts` found."""
    _TERMINALS.clear()
    _GROUPS.clear()
    counted_parts.cache_clear()
    _LOOKAHEAD_PARTS.clear()
