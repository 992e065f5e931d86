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

from ..errors import GrammarError
from .dfa import MAX_DFA_STATES, MAX_NFA_STATES
from ..wfa.fsa import Nfa, determinize
from ..wfa.reduction import minimize, trim
from .ir import (MAX_CP, SURR_HI, SURR_LO, Intervals, complement_intervals, has_node,
                 normalize_intervals, nfa_size, thompson)

__all__ = ["regex_to_nfa", "regex_ir", "build_nfa", "has_lookahead", "ByteNFA", "utf8_leaf",
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
            # difference) of automata (:func:`.terminal_dfa._lookahead_dfa` checks where it stands)
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


def utf8_leaf(nfa: ByteNFA) -> Callable[[Intervals, int], int]:
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


def has_lookahead(x) -> bool:
    """Whether the IR ``x`` holds a lookahead (``"la"``, ``"nla"``) outside character
    sets."""
    return has_node(x, ("la", "nla"))


def regex_to_nfa(regex: str, name: str = "", limit: int = MAX_NFA_STATES) -> ByteNFA:
    """Build the byte NFA of ``regex`` (a Python ``str`` pattern).

    Raises :class:`GrammarError` (with ``name``) if ``re`` cannot compile the
    pattern, if it uses an unsupported feature, or if the NFA would exceed
    ``limit`` states. Matching the empty string is checked later, on the DFA.
    """
    nfa = ByteNFA(name, limit, name or regex)
    x = regex_ir(regex, nfa)
    if has_lookahead(x):
        raise GrammarError(f"terminal {name or regex!r}: a lookahead has no NFA of its own "
                           "(compile_terminal builds its intersection)", name=name)
    return build_nfa(x, nfa)


def regex_ir(regex: str, nfa: ByteNFA):
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


def build_nfa(x, nfa: ByteNFA) -> ByteNFA:
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
        nfa.final = thompson(x, nfa, nfa.start, utf8_leaf(nfa))
        assert nfa.n_states == needed, (nfa.n_states, needed)
    except RecursionError:
        raise GrammarError(f"terminal {label!r}: regex nested too deeply", name=name) from None
    return nfa
