"""The lexer's byte DFAs: the public :class:`DFA` (a full ``(n_states, 256)`` table
with the terminals each state accepts) and the product of terminal DFAs into the
combined lexer automaton.

Determinization, trimming and minimization are :mod:`.fsa`'s, over the 256 byte values
(grouped into classes no transition distinguishes). This module knows no regex syntax
and no grammar: :mod:`.regex` builds terminal DFAs, :mod:`.text` free-text DFAs,
:mod:`.combined` the lexer automaton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import GrammarError
from .fsa import TooManyStates, column_classes, minimize, product_bfs

#: Maximum number of DFA states of one terminal (during subset construction)
#: and of the combined lexer automaton (during the product construction).
MAX_DFA_STATES = 100_000

#: Maximum number of NFA states one terminal may need (after expanding bounded
#: repetition ``{m,n}``). Larger terminals are rejected with GrammarError.
MAX_NFA_STATES = 100_000

__all__ = ["DFA", "MAX_DFA_STATES", "MAX_NFA_STATES", "expand_classes", "product"]


# --------------------------------------------------------------------------
# the public DFA
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DFA:
    """A trimmed deterministic automaton over bytes.

    ``trans[s, b]`` is the state after reading byte ``b`` in state ``s``
    (``-1`` = dead); state 0 is the start state. ``accepts[s]`` holds the
    indices of the terminals whose language contains the bytes read so far.
    Every state can reach a state with non-empty ``accepts`` (the one
    exception: the single start state of an automaton with an empty language,
    e.g. ``compile_lexer([])``). ``live_out[s]`` is true when ``s`` has at least
    one outgoing transition. The arrays are read-only.
    """

    trans: np.ndarray
    accepts: tuple[frozenset[int], ...]
    n_states: int
    live_out: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        trans = np.ascontiguousarray(self.trans, dtype=np.int32)
        if trans.ndim != 2 or trans.shape[1] != 256 or trans.shape[0] != self.n_states:
            raise ValueError(f"trans must have shape ({self.n_states}, 256), got {trans.shape}")
        if len(self.accepts) != self.n_states:
            raise ValueError("accepts must have one entry per state")
        trans.setflags(write=False)
        live = (trans >= 0).any(axis=1)
        live.setflags(write=False)
        object.__setattr__(self, "trans", trans)
        object.__setattr__(self, "live_out", live)

    def rows(self) -> list[list[int]]:
        """``trans`` as nested Python lists (built on first use; fast scalar access)."""
        rows = self.__dict__.get("_rows")
        if rows is None:
            rows = self.trans.tolist()
            object.__setattr__(self, "_rows", rows)
        return rows

    def __repr__(self) -> str:
        n_acc = sum(1 for a in self.accepts if a)
        return f"DFA(n_states={self.n_states}, accepting={n_acc})"

    def step(self, state: int, byte: int) -> int:
        """One transition; ``-1`` stays ``-1``."""
        if state < 0:
            return -1
        return self.rows()[state][byte]

    def run(self, data: bytes, state: int = 0) -> int:
        """The state after reading ``data`` from ``state``; -1 if dead."""
        if state < 0:
            return -1
        rows = self.rows()
        for b in data:
            state = rows[state][b]
            if state < 0:
                return -1
        return state

    def fullmatch(self, data: bytes) -> frozenset[int]:
        """Indices of the terminals whose language contains exactly ``data``."""
        s = self.run(data)
        return self.accepts[s] if s >= 0 else frozenset()

    def has_successors(self, state: int) -> bool:
        """Whether some byte leads from ``state`` to a live state."""
        return bool(state >= 0 and self.live_out[state])

    def is_accepting(self, state: int) -> bool:
        return bool(state >= 0 and self.accepts[state])


def expand_classes(trans_cls: np.ndarray, b2c: np.ndarray) -> np.ndarray:
    """A ``(n_states, n_classes)`` table as the full ``(n_states, 256)`` one."""
    return np.ascontiguousarray(trans_cls[:, b2c], dtype=np.int32)


def product(dfas: Sequence[DFA]) -> DFA:
    """Product automaton of trimmed DFAs (BFS over tuples of live component
    states): ``accepts[s]`` = the indices ``i`` such that ``dfas[i]`` is in an
    accepting state after the bytes read; minimized with respect to the
    accepts sets."""
    k = len(dfas)
    if k == 0:
        return DFA(trans=np.full((1, 256), -1, dtype=np.int32), accepts=(frozenset(),), n_states=1)
    sizes = [d.n_states for d in dfas]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    total = int(offsets[-1])
    g = np.empty((total, 256), dtype=np.int32)
    acc_term = np.full(total, -1, dtype=np.int64)
    for i, d in enumerate(dfas):
        o = int(offsets[i])
        t = d.trans
        g[o:o + d.n_states] = np.where(t >= 0, t + o, -1)
        acc = np.fromiter((bool(a) for a in d.accepts), dtype=bool, count=d.n_states)
        acc_term[o:o + d.n_states][acc] = i
    # global byte classes: columns identical in every automaton
    b2c = column_classes(g)
    n_classes = int(b2c.max()) + 1
    rep = np.zeros(n_classes, dtype=np.int64)
    rep[b2c[::-1]] = np.arange(255, -1, -1)
    gc = np.ascontiguousarray(g[:, rep])  # (total, n_classes)
    acc_l = acc_term.tolist()

    try:
        states, trans = product_bfs(gc, tuple(int(o) for o in offsets[:-1]), MAX_DFA_STATES)
    except TooManyStates:
        raise GrammarError(f"the combined lexer automaton needs more than "
                           f"{MAX_DFA_STATES} states (MAX_DFA_STATES)") from None
    acc_sets = [frozenset(acc_l[x] for x in st if acc_l[x] >= 0) for st in states]
    label_ids: dict[frozenset, int] = {}
    labels = np.array([label_ids.setdefault(a, len(label_ids)) for a in acc_sets], dtype=np.int64)
    t, old = minimize(trans, labels)
    full = expand_classes(t, b2c)
    accepts = tuple(acc_sets[o] for o in old.tolist())
    return DFA(trans=full, accepts=accepts, n_states=full.shape[0])
