"""Grammar -> the tables the runtime executes: normal form, LR tables, lexer DFA.

This is the first stage of compilation and everything ``commit`` needs. The
``ambiguous=False`` promise is checked here, on the user's own grammar.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..errors import GrammarError, LexerTooLarge
from ..grammar import Grammar, LexerMode
from ..glr.lalr import LRTables, build_lalr, check_deterministic
from ..glr.normal_form import NormalForm, normalize
from ..lexer.combined import compile_modal_lexer, widest_chain
from ..lexer.counted import DEFAULT_BAND
from ..lexer.dfa import DFA
from ..lexer.gaps import add_gap_starts
from ..lexer.pinned import add_pinned
from ..limits import Limits

log = logging.getLogger("stackmask")

#: the lexer automaton's states, all modes together (the default of ``Limits.max_lexer_states``)
MAX_LEXER_STATES = Limits.max_lexer_states


@dataclass(frozen=True, eq=False)
class GrammarTables:
    grammar: Grammar              # the user's grammar
    normal_form: NormalForm
    lr: LRTables                  # tables of the normal form (commit and masks share them)
    lexer: DFA                    # combined DFA of all terminals of ``grammar``
    terminal_ids: dict            # terminal name -> parser terminal index (ids past the LR
                                  # table's terminals are lexable but never shiftable)
    ambiguous: bool
    lexed: tuple = ()             # the terminals read from bytes (lexer accept indices refer to these)
    mode_starts: tuple = (0,)     # lexer DFA start state of every lexer mode
    switch: dict = None           # (mode, terminal name) -> mode after emitting it there
    gap_starts: tuple = ()        # per mode, the lexer state after a gap (-1: none; () no gaps)


def coerce_grammar(grammar: "Grammar | str") -> Grammar:
    """The grammar model of ``grammar`` (Lark text, or a grammar of any Grammar class: the
    tables hold the model class itself, which artifacts store)."""
    if isinstance(grammar, Grammar):
        return Grammar.of(grammar)
    if isinstance(grammar, str):
        return Grammar.from_lark(grammar)
    raise TypeError(f"grammar must be Lark text or stackmask.Grammar, not {type(grammar).__name__}")


def build_tables(grammar: "Grammar | str", ambiguous: bool = False, check=None,
                 band: int = DEFAULT_BAND,
                 max_lexer_states: int | None = MAX_LEXER_STATES) -> GrammarTables:
    """``check`` (optional) is called between stages (compile-time limits). A grammar
    too deeply nested for Python's recursion limit raises :class:`GrammarError`.
    ``band``: longer than the longest token the masks will see (repetitions far beyond
    it are counted, :mod:`stackmask.lexer.counted`). ``max_lexer_states``: the lexer
    automaton's states, all modes together (``Limits.max_lexer_states``; None: no limit
    but each terminal's own, ``MAX_DFA_STATES``); a GrammarError past it."""
    cap = (1 << 62) if max_lexer_states is None else int(max_lexer_states)
    try:
        return _build_tables(grammar, ambiguous, check or (lambda: None), band, cap)
    except RecursionError:
        raise GrammarError("the grammar is nested too deeply to compile "
                           "(Python's recursion limit)") from None


#: a lexer of optional modes merged is kept without trying the modes when it has at most
#: this many states (the modes repeat what they share; below this they rarely pay)
MERGED_SMALL = 2_000

#: merged optional modes whose counted chain would read this many terminals together (JSON
#: strings of several lengths) are kept apart unless the modes do not fit
WIDE_CHAIN = 3


def merge_optional_modes(g: Grammar) -> Grammar:
    """``g`` with every optional mode (``LexerMode.merge_into``) merged into its target:
    its terminals read there, switches to it and from it dropped. The same language."""
    into = {m.name: m.merge_into for m in g.modes if m.merge_into}
    if not into:
        return g
    kept = [m for m in g.modes if not m.merge_into]
    extra: dict = {m.name: [] for m in kept}
    for m in g.modes:
        if m.merge_into:
            extra[m.merge_into].extend(m.terminals)
    modes = []
    for m in kept:
        terms = tuple(dict.fromkeys(m.terminals + tuple(extra[m.name])))
        switch = tuple((n, t) for n, t in m.switch if t not in into)
        modes.append(LexerMode(m.name, terms, switch))
    if len(modes) == 1 and not modes[0].switch and set(modes[0].terminals) == set(g.terminal_names):
        modes = []
    return type(g)(terminals=g.terminals, rules=g.rules, start=g.start, ignore=g.ignore,
                   modes=tuple(modes), gaps=g.gaps)


def _mode_lists(g: Grammar, lexed) -> list:
    pos = {t.name: i for i, t in enumerate(lexed)}
    if not g.modes:
        return [list(range(len(lexed)))]
    return [[pos[n] for n in dict.fromkeys(m.terminals) if n in pos] for m in g.modes]


def _joined(merged: GrammarError, kept: GrammarError) -> GrammarError:
    """The error of a lexer that fits neither merged nor with its optional modes kept
    apart: both messages; a :class:`LexerTooLarge` when both are."""
    msg = f"{merged}; with its optional lexer modes kept apart: {kept}"
    if isinstance(merged, LexerTooLarge) and isinstance(kept, LexerTooLarge):
        return LexerTooLarge(msg, merged.maximum)
    return GrammarError(msg)


def _with_sources(e: GrammarError, lexed) -> GrammarError:
    """``e`` with where the terminals it names come from (``TerminalDef.source``: the
    JSON Schema front end's pointers) where it does not say so yet."""
    src = {t.name: t.source for t in lexed if getattr(t, "source", "")}
    msg = str(e)
    named = [n for n in dict.fromkeys(re.findall(r"terminal '([^']+)'", msg))
             if n in src and f"{n} ({src[n]})" not in msg]
    if not named:
        return e
    where = ", ".join(f"{n}: the strings of {src[n]}" for n in named)
    if isinstance(e, LexerTooLarge):
        return LexerTooLarge(f"{msg} ({where})", e.maximum)
    return GrammarError(f"{msg} ({where})", name=e.name)


def _lexer(g: Grammar, lexed, band: int, cap: int = MAX_LEXER_STATES) -> tuple:
    """``(grammar, lexer DFA, mode starts)``: optional modes (``LexerMode.merge_into``)
    kept or merged. Merged, several length-bounded strings would share one counted chain
    (``WIDE_CHAIN`` terminals or more): then the modes are kept (merged only when they do
    not fit the limit) whatever the sizes, because the mask automaton over the merged lexer
    costs more to build even where that lexer is the smaller (every configuration of the
    chain reads every string's terminal and the keys beside it; benchmarks/RESULTS.md,
    *Which lexer modes*). Otherwise whichever makes the smaller automaton: the merged
    one first; the modes are tried, with no more states than it has, only when it is
    large, over the limit, or reads a counted chain beside other terminals (a
    ``maxLength`` string beside a tool's keys: every key's progress times every count).
    ``cap``: the states of all modes together."""
    merged = merge_optional_modes(g)
    if merged is g:
        return (g,) + compile_modal_lexer(lexed, _mode_lists(g, lexed), band, cap)
    m_modes, s_modes = _mode_lists(merged, lexed), _mode_lists(g, lexed)
    width = widest_chain(lexed, m_modes, band)
    if width >= WIDE_CHAIN:
        got = _modes_first(g, merged, lexed, m_modes, s_modes, band, cap)
        if got[0] is g:
            log.info("lexer modes kept: %d states (merged, a counted chain would read %d "
                     "strings together)", got[1].n_states, width)
        return got
    if width:
        return _smaller_with_chain(g, merged, lexed, m_modes, s_modes, band, cap)
    try:
        one = compile_modal_lexer(lexed, m_modes, band, cap)
    except GrammarError as e:
        one, merged_error = None, e
    if one is not None and one[0].n_states <= MERGED_SMALL and not (width and one[0].chains):
        return (merged,) + one
    most = cap if one is None else one[0].n_states
    try:
        split = compile_modal_lexer(lexed, s_modes, band, max_states=most)
    except GrammarError as e:
        if one is None:      # neither fits: the error of the one automaton, modes noted
            raise _joined(merged_error, e) from None
        return (merged,) + one
    if one is None or split[0].n_states < one[0].n_states:
        log.info("lexer modes kept: %d states, merged %s", split[0].n_states,
                 "over the limit" if one is None else f"{one[0].n_states} states")
        return (g,) + split
    return (merged,) + one


def _modes_first(g, merged, lexed, m_modes, s_modes, band: int, cap: int) -> tuple:
    """``(g, lexer, starts)`` of the modes, or where they do not fit, ``(merged, lexer,
    starts)`` of the merged modes (a GrammarError naming both where neither fits)."""
    try:
        return (g,) + compile_modal_lexer(lexed, s_modes, band, cap)
    except GrammarError as split_error:
        try:
            return (merged,) + compile_modal_lexer(lexed, m_modes, band, cap)
        except GrammarError as e:
            raise _joined(e, split_error) from None


def _smaller_with_chain(g, merged, lexed, m_modes, s_modes, band: int, cap: int) -> tuple:
    """:func:`_lexer`'s choice where the merged modes would read a counted chain beside
    other terminals (``widest_chain`` below ``WIDE_CHAIN``): the same choice (the merged
    lexer when it is small and has no chain, else the smaller, the merged one on a tie),
    but the modes are built first and the merged lexer then with at most their states.
    Merged first, a large merged lexer was built whole only to lose (23 of 298 MaskBench
    schemas build both; their losing lexers were 1.6 s of the 11 s of lexers): the
    modes' lexer is the smaller one more often, and a product given up at a bound costs
    about as much as the states it made."""
    got = _modes_first(g, merged, lexed, m_modes, s_modes, band, cap)
    if got[0] is not g:
        return got                   # the modes do not fit: merged
    split = got[1:]
    try:
        one = compile_modal_lexer(lexed, m_modes, band,
                                  max_states=max(split[0].n_states, MERGED_SMALL))
    except GrammarError:
        one = None
    if one is not None and (one[0].n_states <= split[0].n_states or
                            (one[0].n_states <= MERGED_SMALL and not one[0].chains)):
        return (merged,) + one
    log.info("lexer modes kept: %d states, merged %s", split[0].n_states,
             "larger" if one is None else f"{one[0].n_states} states")
    return (g,) + split


def _build_tables(grammar, ambiguous: bool, check, band: int, cap: int) -> GrammarTables:
    g = coerce_grammar(grammar)
    check()
    if not ambiguous:
        check_deterministic(g)
        check()
    nf = normalize(g)
    check()
    lr = build_lalr(nf.grammar)
    check()
    if any(n == 0 for n in lr.rule_len):
        raise GrammarError("internal error: normal form still has an empty rule")
    lexed = g.lexed_terminals
    try:
        read, dfa, starts = _lexer(g, lexed, band, cap)  # the modes read: optional ones merged or not
        dfa = add_pinned(dfa, band)                      # deep states for short count classes
        # where a lexeme starts after a gap
        dfa, gap_starts = add_gap_starts(dfa, starts, lexed, _mode_lists(read, lexed), g.gaps, band)
    except GrammarError as e:
        raise _with_sources(e, lexed) from None
    switch: dict = {}
    mode_index = {m.name: k for k, m in enumerate(read.modes)}
    for k, m in enumerate(read.modes):
        for n, target in m.switch:
            switch[(k, n)] = mode_index[target]
    ids = dict(lr.terminal_index)
    extra = len(lr.terminals)
    for t in g.terminals:
        if t.name not in ids:
            ids[t.name] = extra
            extra += 1
    return GrammarTables(grammar=g, normal_form=nf, lr=lr, lexer=dfa, terminal_ids=ids,
                         ambiguous=ambiguous, lexed=lexed, mode_starts=starts, switch=switch,
                         gap_starts=gap_starts)
