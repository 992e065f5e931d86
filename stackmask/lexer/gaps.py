"""Gap boundaries: where the next lexeme starts after a gap lexeme.

A gap terminal (``Grammar.gaps``) is an ignored terminal read at most once between two
lexemes. After one, the lexer starts the next lexeme in the mode's *gap start*: the
mode's start state without the gap terminals' first bytes, so a second gap cannot begin
there. A gap terminal shares no first byte with another terminal of its mode (checked
here): from the gap start every other terminal starts as from the mode's start, and
after the first byte the two starts lead to the same states. The scanner reads the gap
starts as boundaries of their own (:mod:`.scanner`, *Gaps*).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import GrammarError
from .combined import terminal_dfas
from .counted import DEFAULT_BAND
from .dfa import DFA, append_states

__all__ = ["add_gap_starts", "first_bytes"]


def first_bytes(d: DFA) -> np.ndarray:
    """The bytes leaving a DFA's start state (boolean per byte)."""
    return np.asarray(d.trans)[0] >= 0


def _live_from(trans: np.ndarray, accepts, q: int) -> frozenset:
    """The terminals (accept positions) of the states reachable from state ``q`` of a
    lexer automaton (``q`` -1: none)."""
    if q < 0:
        return frozenset()
    seen = np.zeros(trans.shape[0], dtype=bool)
    seen[q] = True
    front = np.array([q])
    out: set = set(accepts[q])
    while len(front):
        nxt = trans[front].ravel()
        nxt = np.unique(nxt[nxt >= 0])
        front = nxt[~seen[nxt]]
        seen[front] = True
        for s in front.tolist():
            out.update(accepts[s])
    return frozenset(out)


def add_gap_starts(dfa: DFA, starts: Sequence[int], lexed: Sequence, mode_lists: Sequence,
                   gaps, band: int = DEFAULT_BAND) -> tuple[DFA, tuple]:
    """``(dfa with one more state per mode that reads a gap terminal, gap starts)``: per
    mode (``mode_lists``: positions in ``lexed`` of its terminals, as the lexer was built
    from them) the state a lexeme starts in after a gap lexeme, or -1 (the mode reads no
    gap terminal). ``gaps``: the gap terminals' names. A ``GrammarError`` names a gap
    terminal that shares a first byte with another terminal of a mode."""
    gaps = frozenset(gaps)
    if not gaps:
        return dfa, ()
    firsts: dict = {}

    def first(i: int) -> np.ndarray:
        """A gap terminal's first bytes, read off its own DFA (cached per regex)."""
        f = firsts.get(i)
        if f is None:
            f = firsts[i] = first_bytes(terminal_dfas([lexed[i]], band)[0])
        return f

    rows, accepts, out = [], [], []
    trans = np.asarray(dfa.trans)
    n = dfa.n_states
    for m, idx in enumerate(mode_lists):
        gap_pos = [i for i in idx if lexed[i].name in gaps]
        if not gap_pos:
            out.append(-1)
            continue
        gap_first = np.zeros(256, dtype=bool)
        for i in gap_pos:
            gap_first |= first(i)
        # the terminals a lexeme starting with each gap byte can still become, read off the
        # mode's automaton (exact: the product's state after a byte can complete a terminal
        # iff some word of it starts with that byte), not off each terminal's own DFA (a
        # length-bounded string is a copy of its character per count, a pattern beside a
        # length an intersection: seconds to build for this alone)
        live = {b: _live_from(trans, dfa.accepts, int(trans[starts[m], b]))
                for b in np.flatnonzero(gap_first).tolist()}
        for i in idx:
            if i in gap_pos:
                continue
            both = [b for b, terms in live.items() if i in terms]
            if both:
                g = next(lexed[j].name for j in gap_pos if first(j)[both[0]])
                raise GrammarError(f"gap terminal {g!r} and terminal {lexed[i].name!r} both start "
                                   f"with byte {int(both[0])!r} (a gap terminal shares no first "
                                   f"byte with the terminals read beside it)", name=g)
        row = trans[starts[m]].copy()
        row[gap_first] = -1
        rows.append(row)
        accepts.append(frozenset(a for a in dfa.accepts[starts[m]] if a not in gap_pos))
        out.append(n + len(rows) - 1)
    return append_states(dfa, rows, accepts), tuple(out)

