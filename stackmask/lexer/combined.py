"""A grammar's lexer automaton: every lexed terminal's DFA (regex or free text), combined.

:func:`compile_lexer` is the product of the terminals' DFAs (``accepts[s]`` = the
positions of the terminals accepting there), :func:`compile_modal_lexer` the disjoint
union of one such product per lexer mode.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import GrammarError, LexerTooLarge
from .counted import DEFAULT_BAND, needs_stall, worth_chain
from ..memo import SizedCache
from .dfa import DFA, MAX_DFA_STATES, dfa_nbytes, product, restrict_accepts
from .terminal_dfa import (clear_cache as _clear_terminals, compile_counted_group, compile_terminal,
                           counted_parts, lookahead_parts, settle_caches as _settle_terminals)
from .text import free_text_dfa

__all__ = ["terminal_dfas", "compile_lexer", "compile_modal_lexer", "widest_chain", "clear_caches",
           "settle_caches"]


def _regex_of(t) -> tuple[str, str]:
    if isinstance(t, str):
        return t, ""
    return t.regex, getattr(t, "name", "")


def _terminal_dfa(t, band: int) -> DFA:
    text = getattr(t, "text", None)
    if text is not None:
        return free_text_dfa(text, getattr(t, "name", ""))
    if getattr(t, "token", None) is not None:
        raise GrammarError(f"special-token terminal {t.name!r} is not lexed from bytes", name=t.name)
    return compile_terminal(*_regex_of(t), band=band)


def terminal_dfas(terminals: Sequence, band: int = DEFAULT_BAND) -> list[DFA]:
    """Per-terminal minimized DFAs, in the order of ``terminals`` (TerminalDef
    objects, or plain regex strings). Cached per regex (per FreeText spec for
    free-text terminals). ``band``: see :mod:`.counted`."""
    return [_terminal_dfa(t, band) for t in terminals]


#: combined lexers by regexes and band, the recently used up to 64 MB (a process that builds
#: many grammars keeps the recent ones, not all: a server building a schema per request
#: would otherwise hold hundreds of MB of lexers it may never see again)
_LEXER_CACHE = SizedCache(64 << 20, dfa_nbytes, rest_bytes=16 << 20)


def compile_lexer(terminals: Sequence, band: int = DEFAULT_BAND,
                  max_states: int = MAX_DFA_STATES) -> DFA:
    """Combined DFA of all terminals: ``accepts[s]`` = the positions ``i`` in
    ``terminals`` whose own DFA accepts the bytes read; minimized with respect
    to the accepts sets. Repetitions far beyond ``band`` (longer than the longest
    token) are counted (:mod:`.counted`). Cached by the tuple of regexes and the band.
    ``max_states``: the product's size limit (:func:`.dfa.product`; a GrammarError past it)."""
    key = (band,) + tuple((_regex_of(t)[0], getattr(t, "text", None)) for t in terminals)
    d = _LEXER_CACHE.get(key)
    if d is None:
        d = _combined(terminals, band, max_states)
        _LEXER_CACHE.put(key, d)
    elif d.n_states > max_states:      # built before under a larger limit
        raise LexerTooLarge(f"the combined lexer automaton needs more than {max_states} "
                            f"states (Limits.max_lexer_states)", max_states)
    return d


def _combined(terminals: Sequence, band: int, max_states: int = MAX_DFA_STATES) -> DFA:
    """The product of the terminals' DFAs; a counted repetition and the terminals that
    share its prefix and repeated body (JSON strings with and without a ``maxLength``)
    are one automaton with one count (:func:`.terminal_dfa.compile_counted_group`): apart, the
    product would pair every count at which one stalls with every count of the
    others. A terminal with a lookahead on its length (:func:`.terminal_dfa.lookahead_parts`: a
    JSON string with a length beside a pattern) joins the group with its lookahead side
    and enters the product with its other side too: it is accepted where both are."""
    k = len(terminals)
    groups, parts_of, sides, reaches = _groups(terminals, band)
    dfas: list[DFA] = []
    owners: list[tuple] = []
    grouped: set[int] = set()
    for idx in groups.values():
        members = [parts_of[i] for i in idx]
        if not _on_chain(members, band):
            continue
        stalled = any(needs_stall(m[2], m[3], band) for m in members)
        if len(idx) < 2 and stalled:
            continue                   # counted alone: its own DFA is this chain
        # a lookahead side is met with its terminal's other side: the chain keeps the
        # counts near its bounds that side needs as positions (:func:`.counted.reach_for`)
        reach = tuple(reaches.get(i, (0, 0)) for i in idx)
        d = compile_counted_group(members, band, _regex_of(terminals[idx[0]])[0], reach)
        if d is not None:
            dfas.append(d)
            # a lookahead side accepts its terminal's index shifted by k: the terminal
            # is accepted where that and its other side's index are (below)
            owners.append(tuple(i + k if i in sides else i for i in idx))
            grouped.update(idx)
    split = [i for i in sorted(grouped) if i in sides]
    for i in split:
        dfas.append(sides[i])
        owners.append((i,))
    for i, t in enumerate(terminals):
        if i not in grouped:
            dfas.append(_terminal_dfa(t, band))
            owners.append((i,))
    try:
        d = product(dfas, owners, max_states=max_states)
    except LexerTooLarge as e:
        raise LexerTooLarge(f"{e}; {_largest(dfas, owners, terminals)}", e.maximum) from None
    if not split:
        return d
    both = frozenset(split)
    accepts = [frozenset(j for j in a if j < k and (j not in both or j + k in a)) for a in d.accepts]
    out = restrict_accepts(d, accepts)
    if out is None:                # no terminal matches anything: the product's start
        return DFA(trans=np.full((1, 256), -1, dtype=np.int32), accepts=(frozenset(),), n_states=1)
    return out


def _groups(terminals: Sequence, band: int) -> tuple:
    """The terminals :func:`_combined` may count on one chain: ``(groups, parts,
    sides, reaches)``: ``(prefix, body) -> [terminal positions]``, per position its
    :func:`.terminal_dfa.counted_parts` (or its lookahead side's), and per terminal with a
    lookahead on its length the DFA of its other side and the reach a chain needs
    beside it."""
    groups: dict = {}
    parts_of: dict = {}
    sides: dict = {}               # terminal -> the DFA of its side without the lookahead
    reaches: dict = {}
    for i, t in enumerate(terminals):
        if getattr(t, "text", None) is None and getattr(t, "token", None) is None:
            regex = _regex_of(t)[0]
            parts = counted_parts(regex, band, any_bounds=True)
            if parts is None:
                la = lookahead_parts(regex, band)
                if la is not None:
                    parts, sides[i], reaches[i] = la
            if parts is not None:
                parts_of[i] = parts
                groups.setdefault((parts[0], parts[1]), []).append(i)
    return groups, parts_of, sides, reaches


def widest_chain(terminals: Sequence, modes: Sequence[Sequence[int]] = (),
                 band: int = DEFAULT_BAND) -> int:
    """The most terminals one counted chain of :func:`compile_modal_lexer` reads together
    (strings of several lengths after one ``"``), over the modes (all terminals in one
    mode when none); 0 without chains. Found without building any automaton."""
    widest = 0
    for idx in (modes or [range(len(terminals))]):
        groups, parts_of, _, _ = _groups([terminals[i] for i in idx], band)
        for idx2 in groups.values():
            if _on_chain([parts_of[i] for i in idx2], band):
                widest = max(widest, len(idx2))
    return widest


def _on_chain(members, band: int) -> bool:
    """Whether a group's repetitions (:func:`.terminal_dfa.counted_parts` tuples) are counted on a
    chain of positions: some bound needs a stall or is long enough for a chain."""
    return any(needs_stall(m[2], m[3], band) or worth_chain(m[2], m[3]) for m in members)


def _largest(dfas, owners, terminals, top_n: int = 3) -> str:
    """The ``top_n`` largest terminal automata of a product that did not fit, named with
    where they come from (``TerminalDef.source``)."""
    def label(i):
        t = terminals[i]
        name = getattr(t, "name", "") or _regex_of(t)[0][:40]
        src = getattr(t, "source", "")
        return f"{name} ({src})" if src else name
    top = sorted(range(len(dfas)), key=lambda j: -dfas[j].n_states)[:top_n]
    k = len(terminals)          # a lookahead side's owner is its terminal's index + k
    parts = [f"{'/'.join(label(i % k) for i in owners[j])}: {dfas[j].n_states:,} states" for j in top]
    return ("the product pairs the states of terminals read at the same place; the largest "
            "terminal automata: " + ", ".join(parts))


def compile_modal_lexer(terminals: Sequence, modes: Sequence[Sequence[int]],
                        band: int = DEFAULT_BAND,
                        max_states: int = MAX_DFA_STATES) -> tuple[DFA, tuple[int, ...]]:
    """Lexer automaton with modes: ``modes[m]`` lists the positions in
    ``terminals`` lexed in mode ``m``. The result is the disjoint union of
    each mode's combined DFA (``accepts`` holds positions in ``terminals``)
    and the start state of every mode (mode 0 starts at state 0). ``max_states``: the
    limit on all modes' states together (a GrammarError past it)."""
    if not modes:
        return compile_lexer(terminals, band, max_states), (0,)
    parts = []
    used = 0
    for k, idx in enumerate(modes):
        try:
            sub = compile_lexer([terminals[i] for i in idx], band, max(1, max_states - used))
        except LexerTooLarge as e:
            if not used:
                raise
            raise LexerTooLarge(f"the lexer modes need more than {max_states} states together "
                               f"(Limits.max_lexer_states): {used} for the first {k} of {len(modes)}, "
                               f"then mode {k}: {e}", max_states) from None
        used += sub.n_states
        parts.append((sub, list(idx)))
    if len(parts) == 1 and parts[0][1] == list(range(len(terminals))):
        return parts[0][0], (0,)
    rows = []
    accepts: list = []
    starts = []
    off = 0
    for sub, idx in parts:
        starts.append(off)
        t = sub.trans
        rows.append(np.where(t >= 0, t + off, -1))
        accepts.extend(frozenset(idx[i] for i in a) for a in sub.accepts)
        off += sub.n_states
    if off > max_states:
        raise LexerTooLarge(f"the combined lexer automaton needs more than {max_states} "
                            f"states (Limits.max_lexer_states), in {len(parts)} lexer modes", max_states)
    trans = np.concatenate(rows).astype(np.int32)
    counters = ()
    n_stalls = sum(len(sub.counters[1]) for sub, _ in parts if sub.counters)
    if n_stalls:
        # each mode's stalls apart: no state of one mode is in another's stall
        rewind = np.full((off, n_stalls), -1, dtype=np.int32)
        tags = np.zeros((off, n_stalls), dtype=np.int8)
        owed: list[int] = []
        for (sub, _), o in zip(parts, starts):
            if sub.counters:
                band_, ow, rw, tg = sub.counters
                s0 = len(owed)
                owed.extend(ow)
                rewind[o:o + sub.n_states, s0:s0 + len(ow)] = np.where(rw >= 0, rw + o, -1)
                tags[o:o + sub.n_states, s0:s0 + len(ow)] = tg
        counters = (band, tuple(owed), rewind, tags)
    chains = ()
    if any(sub.chains for sub, _ in parts):
        grp = np.full(off, -1, dtype=np.int32)
        pos = np.full(off, -1, dtype=np.int32)
        xk = np.full(off, -1, dtype=np.int32)
        ctx = np.full(off, -1, dtype=np.int32)
        drop = np.full(off, -1, dtype=np.int32)
        groups: list = []
        n_ctx = 0
        for (sub, _), o in zip(parts, starts):
            if sub.chains:
                g, p, x, cx, dr, gs = sub.chains
                grp[o:o + sub.n_states] = np.where(g >= 0, g + len(groups), -1)
                pos[o:o + sub.n_states] = p
                xk[o:o + sub.n_states] = x
                ctx[o:o + sub.n_states] = np.where(cx >= 0, cx + n_ctx, -1)
                drop[o:o + sub.n_states] = np.where(dr >= 0, dr + o, dr)
                groups.extend(gs)
                n_ctx += int(cx.max(initial=-1)) + 1
        chains = (grp, pos, xk, ctx, drop, tuple(groups))
    return (DFA(trans=trans, accepts=tuple(accepts), n_states=off, counters=counters,
                chains=chains), tuple(starts))


def settle_caches() -> None:
    """After a construction: the caches of lexer automata down to what later grammars
    reuse, small automata such as JSON's strings and numbers (16 MB at most each; a
    process building schema after schema would otherwise hold ~180 MB of them)."""
    _LEXER_CACHE.settle()
    _settle_terminals()


def clear_caches() -> None:
    """Forget every compiled terminal and lexer automaton (benchmarks measuring cold builds)."""
    _LEXER_CACHE.clear()
    _clear_terminals()
    free_text_dfa.cache_clear()
