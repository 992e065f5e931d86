"""Terminals compiled: a Python regex -> its minimized DFA over UTF-8 bytes, cached.

:func:`compile_terminal` reads the pattern's regex IR (:mod:`.regex`) and builds the
terminal's automaton from it: determinized, trimmed and minimized, with the
shortest-match rule for reluctant terminals; a repetition far beyond the band counted
(:mod:`.counted`); lookaheads at the top level as an intersection (a difference) of the
automata of their sides (:func:`_lookahead_dfa`). :func:`counted_parts`,
:func:`lookahead_parts` and :func:`compile_counted_group` give the combined lexer
(:mod:`.combined`) what it needs to count the repetitions of several terminals on one
chain. Results are cached by regex and band (:func:`clear_cache`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import GrammarError
from ..limits import deep_recursion
from .counted import DEFAULT_BAND, counted_group, flatten, reach_for, split_counted
from ..memo import SizedCache
from .dfa import (DFA, MAX_DFA_STATES, MAX_NFA_STATES, dfa_nbytes, difference, expand_classes,
                  intersection)
from ..wfa.fsa import TooManyStates, determinize
from ..wfa.reduction import minimize, trim
from .ir import MAX_CP, length_range, normalize_intervals
from .regex import ByteNFA, build_nfa, has_lookahead, regex_ir, utf8_leaf

#: any character (the rest of the lexeme a lookahead does not read)
ANYCHAR = ("c", normalize_intervals([(0, MAX_CP)]))

__all__ = ["compile_terminal", "counted_parts", "compile_counted_group", "lookahead_parts",
           "clear_cache"]


def _label(name: str, regex: str) -> str:
    return name or regex


#: terminal automata by regex and band, the recently used up to 48 MB (the lexer caches
#: together stay under ~180 MB in a process that builds grammar after grammar); after a
#: construction (:func:`settle_caches`) 16 MB, none over 4 MB: a grammar reuses its own
#: large automata (its conversion's in its construction), later grammars the small ones
_TERMINALS = SizedCache(48 << 20, dfa_nbytes, rest_bytes=16 << 20)


def _compile_regex(regex: str, band: int) -> DFA:
    """Minimized DFA for ``regex``, cached (errors are raised uncached, with no name)."""
    return _TERMINALS.get_or_make((regex, band), lambda: _build_terminal(regex, "", band))


def _build_terminal(regex: str, name: str, band: int = DEFAULT_BAND) -> DFA:
    label = _label(name, regex)
    nfa = ByteNFA(name, MAX_NFA_STATES, label)
    x = regex_ir(regex, nfa)
    if has_lookahead(x):
        return _lookahead_dfa(x, nfa.reluctant, name, label, band)
    return _ir_dfa(x, nfa, name, label, band)


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
        if has_lookahead(look):
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


#: the most states :func:`_sees_within` lets the unbounded languages' automata reach before
#: it tries the languages as written: an unbounded language is usually the smaller, but a
#: long written-out regex can blow up unbounded (100,000 states and 3 s, where written as
#: it is it has 4,000 states and takes 0.1 s)
SEES_UNBOUNDED_FIRST = 4096


def _sees_within(look, rest, name: str, label: str) -> bool:
    """Whether a lookahead ``look`` never reads past the end of a lexeme whose rest is
    ``rest`` (IRs): no word of ``rest`` is a proper prefix of a word of ``look``. Then
    the lookahead matches within the lexeme or not at all, as a lexer that could see the
    text after the lexeme would find. Checked on the two languages with their long
    repetitions unbounded (:func:`_unbounded`: larger languages, a stronger condition, and
    no counting) while their automata are small (``SEES_UNBOUNDED_FIRST`` states);
    otherwise on the languages as written, nothing counted; where those automata are too
    large, unbounded again, up to the lexer's limit. A language with no long repetition is
    tried once, as written, up to the limit."""
    def dfa(x):
        def ir(y, band, limit=MAX_DFA_STATES):
            return _ir_dfa(y, ByteNFA(name, MAX_NFA_STATES, label), name, label, band,
                           empty_ok=True, max_states=limit)
        wide = _unbounded(x)
        if wide == x:                  # nothing to unbound: one try, up to the limit
            return ir(x, DEFAULT_BAND)
        try:
            return ir(wide, DEFAULT_BAND, SEES_UNBOUNDED_FIRST)
        except GrammarError:
            pass
        try:
            return ir(x, 1 << 40)
        except GrammarError:
            return ir(_unbounded(x), DEFAULT_BAND)
    d_rest, d_look = dfa(rest), dfa(look)
    # the proper prefixes of the lookahead's words: the states with a way on (trimmed)
    proper = DFA(trans=d_look.trans, n_states=d_look.n_states,
                 accepts=tuple(frozenset((0,)) if x else frozenset()
                               for x in d_look.live_out.tolist()))
    return intersection(d_rest, proper) is None


#: :func:`_unbounded` keeps a repetition whose bound is at most this as written
UNBOUNDED_FROM = 16


def _unbounded(x):
    """``x`` with its long repetitions (a bound over ``UNBOUNDED_FROM``) unbounded: a
    larger language, without their counting. Short ones stay as written: unbounded,
    ``[0-9a-f]{4}`` inside a large alternation (a JSON escape of a Unicode class) makes
    the alternation's branches overlap, and its automaton blow up."""
    k = x[0]
    if k in ("s", "a"):
        return (k, tuple(_unbounded(y) for y in x[1]))
    if k == "r":
        _, y, lo, hi = x
        if hi is not None and hi <= UNBOUNDED_FROM:
            return ("r", _unbounded(y), lo, hi)
        return ("r", _unbounded(y), 0, None)
    return x


def _ir_dfa(x, nfa: ByteNFA, name: str, label: str, band: int, empty_ok: bool = False,
            reach: tuple[int, int] = (0, 0), max_states: int = MAX_DFA_STATES) -> DFA:
    """The minimized DFA of the IR ``x`` (``nfa``: the empty automaton its parse made);
    ``empty_ok``: one side of a lookahead's intersection (it may match the empty
    string); ``reach``: for a counted chain, the other sides' (:func:`.counted.reach_for`);
    ``max_states``: the subset construction's limit (GrammarError past it)."""
    sp = None if nfa.reluctant else split_counted(x, band)
    d = None if sp is None else _counted_dfa([sp], band, label, (reach,))
    if d is not None:
        if d.accepts[0] and not empty_ok:
            raise GrammarError(f"terminal {label!r} matches the empty string", name=name)
        return d
    build_nfa(x, nfa)
    try:
        trans, b2c, accepting = determinize(nfa, 256, max_states)
    except TooManyStates:
        raise GrammarError(f"terminal {label!r} is too large: its DFA needs more than "
                           f"{max_states} states (MAX_DFA_STATES)", name=name) from None
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
                            utf8_leaf, MAX_DFA_STATES, reach)
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
        x = regex_ir(regex, nfa)
    except GrammarError:
        return None
    if nfa.reluctant or has_lookahead(x):
        return None
    return split_counted(x, band, any_bounds)


#: :func:`lookahead_parts` by regex and band (its automata), the recently used up to 16 MB
#: (4 MB after a construction)
_LOOKAHEAD_PARTS = SizedCache(16 << 20, lambda v: 64 if v is None else 64 + dfa_nbytes(v[1]),
                              rest_bytes=4 << 20)


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
        x = regex_ir(regex, nfa)
    except GrammarError:
        return None
    if nfa.reluctant or not has_lookahead(x):
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
#: (16 MB after a construction)
_GROUPS = SizedCache(48 << 20, dfa_nbytes, rest_bytes=16 << 20)


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


def settle_caches() -> None:
    """Bring the caches of terminal automata, counted groups and lookahead parts down to
    what later grammars reuse (:meth:`~stackmask.memo.SizedCache.settle`)."""
    for cache in (_TERMINALS, _GROUPS, _LOOKAHEAD_PARTS):
        cache.settle()
