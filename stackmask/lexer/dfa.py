"""The lexer's byte DFAs: the public :class:`DFA` (a full ``(n_states, 256)`` table
with the terminals each state accepts) and the product of terminal DFAs into the
combined lexer automaton.

Determinization is :mod:`.fsa`'s, trimming and minimization :mod:`.reduction`'s, over
the 256 byte values (grouped into classes no transition distinguishes). This module knows no regex syntax
and no grammar: :mod:`.terminal_dfa` builds terminal DFAs, :mod:`.text` free-text DFAs,
:mod:`.combined` the lexer automaton.
"""

from __future__ import annotations

import array
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import LexerTooLarge
from .counted import LEFT, Stalls
from ..wfa.fsa import TooManyStates, product_arrays, seq_ids
from ..wfa.reduction import column_classes, minimize, row_labels, trim

#: Maximum number of DFA states of one terminal (during subset construction)
#: and of the combined lexer automaton (during the product construction).
MAX_DFA_STATES = 100_000

#: Maximum number of NFA states one terminal may need (after expanding bounded
#: repetition ``{m,n}``). Larger terminals are rejected with GrammarError.
MAX_NFA_STATES = 100_000

__all__ = ["DFA", "MAX_DFA_STATES", "MAX_NFA_STATES", "append_states", "expand_classes", "intersection",
           "difference", "product", "restrict_accepts"]


# --------------------------------------------------------------------------
# the public DFA
# --------------------------------------------------------------------------

def row_arrays(trans: np.ndarray) -> list:
    """The rows of a transition table as ``array.array`` objects, for scalar access from
    Python (``rows[q][b]``). Not nested lists: ``tolist()`` makes an int object per entry
    (~40 ms for 3,400 states), and the garbage collector walks every entry of a list of
    lists on each full pass (~17 ms for such a table: a pause in whatever commit or mask
    it falls on); arrays are made in ~1 ms and are not tracked."""
    t = np.ascontiguousarray(trans, dtype=np.int32)
    return [array.array("i", row.tobytes()) for row in t]


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

    ``counters`` (empty when no repetition is counted): ``(band, owed, rewind, tags)``
    of the stalls of counted repetitions (:mod:`.counted`): per stall the iterations
    cut out, per state and stall the rewind target (-1: none) and its tag (``IN``,
    ``LEFT``, 0).

    ``chains`` (empty when no chain is known): ``(group, position, x_state, context,
    drop, groups)``, per state the counted group whose chain it is in (-1: none), its
    position in that chain, its state inside the current iteration
    (:func:`.counted._chain`), what the other terminals read beside the chain (an id,
    -1: nothing) and the state they are in alone (-1: nothing, -2: never alone; where
    the lexer goes when the chain dies), and per group ``(positions, members, x_next, x_done)``:
    what ``stackmask.compile.count_split`` reads to give a chain state the masks of the
    positions that stand for the others.

    ``reach_as``: ``(state, other)`` pairs, a state whose pending lexeme can become what
    ``other``'s can (pinned states, :mod:`.pinned`: no byte leads from them to all of it).
    """

    trans: np.ndarray
    accepts: tuple[frozenset[int], ...]
    n_states: int
    counters: tuple = ()
    chains: tuple = ()
    reach_as: tuple = ()
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
        if self.counters:
            band, owed, rewind, tags = self.counters
            rewind = np.ascontiguousarray(rewind, dtype=np.int32).reshape(self.n_states, len(owed))
            tags = np.ascontiguousarray(tags, dtype=np.int8).reshape(self.n_states, len(owed))
            rewind.setflags(write=False)
            tags.setflags(write=False)
            object.__setattr__(self, "counters", (int(band), tuple(int(d) for d in owed),
                                                  rewind, tags))
        if self.chains:
            grp, pos, xk, ctx, drop, groups = self.chains
            arrs = []
            for a in (grp, pos, xk, ctx, drop):
                a = np.ascontiguousarray(a, dtype=np.int32).reshape(self.n_states)
                a.setflags(write=False)
                arrs.append(a)
            groups = tuple((tuple((int(a), int(b)) for a, b in g[0]),
                            tuple((int(lo), int(hi)) for lo, hi in g[1]),
                            np.ascontiguousarray(g[2], dtype=np.int32),
                            np.ascontiguousarray(g[3], dtype=bool)) for g in groups)
            object.__setattr__(self, "chains", (*arrs, groups))
        if self.reach_as:
            pairs = tuple((int(a), int(b)) for a, b in self.reach_as)
            if any(not (0 <= a < self.n_states and 0 <= b < self.n_states) for a, b in pairs):
                raise ValueError("reach_as names a state the automaton does not have")
            object.__setattr__(self, "reach_as", pairs)

    def rows(self) -> list:
        """``trans`` as one ``array.array`` per state (:func:`row_arrays`; built on first
        use; ``rows()[q][b]`` is a fast scalar access)."""
        rows = self.__dict__.get("_rows")
        if rows is None:
            rows = row_arrays(self.trans)
            object.__setattr__(self, "_rows", rows)
        return rows

    def __repr__(self) -> str:
        n_acc = sum(1 for a in self.accepts if a)
        return f"DFA(n_states={self.n_states}, accepting={n_acc})"

    def step(self, state: int, byte: int) -> int:
        """One transition of the automaton's table (a stall's owed iterations are not
        kept: :meth:`run` and the scanner keep them); ``-1`` stays ``-1``."""
        if state < 0:
            return -1
        return self.rows()[state][byte]

    def run(self, data: bytes, state: int = 0) -> int:
        """The state after reading ``data`` from ``state`` (no iterations owed in a
        stall of a counted repetition); -1 if dead."""
        if state < 0:
            return -1
        rows = self.rows()
        if self.counters:
            return self._run_counted(rows, data, state)
        for b in data:
            state = rows[state][b]
            if state < 0:
                return -1
        return state

    def _run_counted(self, rows, data: bytes, q: int) -> int:
        """:meth:`run` keeping the iterations owed in stalls (:mod:`.counted`)."""
        stalls = self.__dict__.get("_stalls")
        if stalls is None:
            stalls = Stalls(rows, self.counters)
            object.__setattr__(self, "_stalls", stalls)
        e = q
        for b in data:
            e = stalls.step(e, b)
            if type(e) is int and e < 0:
                return -1
        return e if type(e) is int else e[0]

    def fullmatch(self, data: bytes) -> frozenset[int]:
        """Indices of the terminals whose language contains exactly ``data``."""
        s = self.run(data)
        return self.accepts[s] if s >= 0 else frozenset()

    def has_successors(self, state: int) -> bool:
        """Whether some byte leads from ``state`` to a live state."""
        return bool(state >= 0 and self.live_out[state])

    def is_accepting(self, state: int) -> bool:
        return bool(state >= 0 and self.accepts[state])


def append_states(dfa: DFA, rows, accepts: Sequence, chains: Sequence | None = None,
                  reach_as: Sequence = ()) -> DFA:
    """``dfa`` with the states ``rows`` (transition rows, numbered after its own) appended:
    ``accepts`` theirs, in no stall of a counted repetition; ``chains`` their ``(group,
    position, x_state, context, drop)`` arrays where ``dfa`` has chains (None: in no chain,
    every entry -1); ``reach_as`` more pairs of :attr:`DFA.reach_as`."""
    m = len(rows)
    if not m:
        return dfa
    counters = dfa.counters
    if counters:
        band, owed, rewind, tags = counters
        counters = (band, owed, np.concatenate([rewind, np.full((m, rewind.shape[1]), -1, np.int32)]),
                    np.concatenate([tags, np.zeros((m, tags.shape[1]), np.int8)]))
    more = dfa.chains
    if more:
        *arrs, groups = more
        add = chains if chains is not None else [np.full(m, -1, np.int32)] * len(arrs)
        more = tuple(np.concatenate([a, np.asarray(b, dtype=np.int32)]) for a, b in zip(arrs, add)) \
            + (groups,)
    return DFA(trans=np.concatenate([dfa.trans, np.asarray(rows, dtype=np.int32).reshape(m, 256)]),
               accepts=tuple(dfa.accepts) + tuple(accepts), n_states=dfa.n_states + m,
               counters=counters, chains=more,
               reach_as=tuple(dfa.reach_as) + tuple((int(a), int(r)) for a, r in reach_as))


def expand_classes(trans_cls: np.ndarray, b2c: np.ndarray) -> np.ndarray:
    """A ``(n_states, n_classes)`` table as the full ``(n_states, 256)`` one (``take``
    along the columns: ``trans_cls[:, b2c]`` makes a strided result that then needs a
    copy, 10-30x slower on a 60,000-state table)."""
    return np.take(np.asarray(trans_cls, dtype=np.int32), b2c, axis=1)


def byte_classes(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(byte -> class, class -> its least byte)`` of a ``(n, 256)`` table: bytes whose
    columns are equal share a class."""
    b2c = column_classes(table)
    rep = np.zeros(int(b2c.max()) + 1, dtype=np.int64)
    rep[b2c[::-1]] = np.arange(255, -1, -1)
    return b2c, rep


def product(dfas: Sequence[DFA], owners: Sequence[tuple] | None = None,
            raw: bool = False, max_states: int = MAX_DFA_STATES, minimized: bool = True) -> DFA:
    """Product automaton of trimmed DFAs (BFS over tuples of live component
    states): ``accepts[s]`` = the indices ``i`` such that ``dfas[i]`` is in an
    accepting state after the bytes read; minimized with respect to the
    accepts sets. With ``owners``, a component accepting ``{p, ...}`` accepts the
    indices ``owners[i][p]`` instead (one automaton for several terminals). Stalls
    of counted repetitions (``counters``) carry over: a rewind moves its own
    component and leaves the others where they are. ``raw``: raise
    :class:`~.fsa.TooManyStates` past the size limit (else a GrammarError about the
    combined lexer); ``max_states``: that limit, on the states the search meets.
    ``minimized=False``: the reachable tuples as they are (a caller that changes the
    accepts and minimizes then, :func:`intersection`, saves a minimization)."""
    k = len(dfas)
    if k == 0:
        return DFA(trans=np.full((1, 256), -1, dtype=np.int32), accepts=(frozenset(),), n_states=1)
    sizes = [d.n_states for d in dfas]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    total = int(offsets[-1])
    g = np.empty((total, 256), dtype=np.int32)
    acc_l: list = [frozenset()] * total
    n_stalls = sum(len(d.counters[1]) for d in dfas if d.counters)
    pseudo = np.repeat(np.arange(total, dtype=np.int32)[:, None], n_stalls, axis=1)
    tags = np.zeros((total, n_stalls), dtype=np.int8)
    owed: list[int] = []
    bands = set()
    for i, d in enumerate(dfas):
        o = int(offsets[i])
        t = d.trans
        g[o:o + d.n_states] = np.where(t >= 0, t + o, -1)
        own = owners[i] if owners is not None else (i,)
        for q, a in enumerate(d.accepts):
            if a:
                acc_l[o + q] = frozenset(own[p] for p in a)
        if d.counters:
            band, ow, rw, tg = d.counters
            bands.add(band)
            s0 = len(owed)
            owed.extend(ow)
            blk = pseudo[o:o + d.n_states, s0:s0 + len(ow)]
            pseudo[o:o + d.n_states, s0:s0 + len(ow)] = np.where(rw >= 0, rw + o, blk)
            tags[o:o + d.n_states, s0:s0 + len(ow)] = tg
    if len(bands) > 1:
        raise ValueError(f"terminals counted with different bands: {sorted(bands)}")
    # global byte classes: columns identical in every automaton
    b2c, rep = byte_classes(g)
    n_classes = len(rep)
    gc = np.concatenate([np.take(g, rep, axis=1), pseudo], axis=1)

    try:
        pool, offs, trans = product_arrays(gc, tuple(int(o) for o in offsets[:-1]), max_states)
    except TooManyStates:
        if raw:
            raise
        raise LexerTooLarge(f"the combined lexer automaton needs more than "
                            f"{max_states} states (Limits.max_lexer_states)", max_states) from None
    n = len(offs) - 1
    acc_sets, acc_ids = _tuple_accepts(acc_l, pool, offs)
    chains = _product_chains(dfas, offsets, pool, offs)
    if n_stalls:
        tag_rows = np.bitwise_or.reduceat(tags[pool], offs[:-1], axis=0).astype(np.int8)
    if minimized:
        labels = (row_labels(np.concatenate([acc_ids[:, None], tag_rows.astype(np.int64)], axis=1))
                  if n_stalls else acc_ids)
        t, old = minimize(trans, labels)
    else:
        t, old = trans, np.arange(n)
    full = expand_classes(np.ascontiguousarray(t[:, :n_classes]), b2c)
    accepts = tuple(acc_sets[o] for o in old.tolist())
    counters = ()
    if n_stalls:
        trows = tag_rows[old].reshape(-1, n_stalls)
        rw = t[:, n_classes:]
        rw = np.where(trows == LEFT, rw, -1)
        counters = (bands.pop(), tuple(owed), rw, trows)
    if chains:
        grp, pos, xk, ctx, drop, groups = chains
        if minimized:
            new_of = _blocks(trans, t)
            drop = np.where(drop >= 0, new_of[np.maximum(drop, 0)], drop)
        chains = (grp[old], pos[old], xk[old], ctx[old], drop[old], groups)
    return DFA(trans=full, accepts=accepts, n_states=full.shape[0], counters=counters,
               chains=chains)


def _tuple_accepts(acc_l: list, pool: np.ndarray, offs: np.ndarray) -> tuple[list, np.ndarray]:
    """Per product state (tuple ``i``: ``pool[offs[i]:offs[i+1]]``) the union of its
    component states' accepts sets (``acc_l``, per component state), and a number per
    distinct union (0: the empty set)."""
    n = len(offs) - 1
    empty = frozenset()
    hit = np.array([bool(a) for a in acc_l], dtype=bool)[pool]
    seen = np.concatenate([[0], np.cumsum(hit)])
    sets = [empty] * n
    ids = np.zeros(n, dtype=np.int64)
    number: dict = {empty: 0}
    pl, ol = pool.tolist(), offs.tolist()
    for i in np.flatnonzero(seen[offs[1:]] > seen[offs[:-1]]).tolist():
        u = frozenset().union(*[acc_l[x] for x in pl[ol[i]:ol[i + 1]]])
        sets[i] = u
        ids[i] = number.setdefault(u, len(number))
    return sets, ids


def _product_chains(dfas, offsets, pool: np.ndarray, offs: np.ndarray) -> tuple:
    """The ``chains`` of a product (:class:`DFA`) before minimization (its states: tuple
    ``i`` is ``pool[offs[i]:offs[i+1]]``): a state whose tuple holds one component's
    chain state is in that chain, its *context* the number of the rest of the tuple
    (first met first) and its *drop* the state of the rest (-1: none; -2: the rest is
    never read alone; what the others read on when the chain dies); groups numbered in
    the order of the components."""
    if not any(d.chains for d in dfas):
        return ()
    n_tot = int(offsets[-1])
    g_all = np.full(n_tot, -1, dtype=np.int32)
    p_all = np.full(n_tot, -1, dtype=np.int32)
    x_all = np.full(n_tot, -1, dtype=np.int32)
    groups: list = []
    for i, d in enumerate(dfas):
        if d.chains:
            grp, pos, xk, cx, _, gs = d.chains
            o = int(offsets[i])
            base = len(groups)
            groups.extend(gs)
            if (cx >= 0).any():
                continue     # a product itself (others read beside its chain): not read
            g_all[o:o + d.n_states] = np.where(grp >= 0, grp + base, -1)
            p_all[o:o + d.n_states] = pos
            x_all[o:o + d.n_states] = xk
    n = len(offs) - 1
    lens = np.diff(offs)
    grp = np.full(n, -1, dtype=np.int32)
    pos = np.full(n, -1, dtype=np.int32)
    xk = np.full(n, -1, dtype=np.int32)
    ctx = np.full(n, -1, dtype=np.int32)
    drop = np.full(n, -1, dtype=np.int64)
    inside = g_all[pool] >= 0
    count = np.concatenate([[0], np.cumsum(inside)])
    one = (count[offs[1:]] - count[offs[:-1]]) == 1
    if not one.any():
        return grp, pos, xk, ctx, drop, tuple(groups)
    owner = np.repeat(np.arange(n), lens)
    mine = inside & one[owner]
    c = pool[mine]                       # the chain state of each such tuple, in order
    rows = np.flatnonzero(one)
    grp[rows], pos[rows], xk[rows] = g_all[c], p_all[c], x_all[c]
    with_rest = one & (lens > 1)
    if with_rest.any():
        keep = with_rest[owner] & ~inside
        rest_pool = pool[keep]
        rest_offs = np.zeros(int(with_rest.sum()) + 1, dtype=np.int64)
        rest_offs[1:] = np.cumsum(lens[with_rest] - 1)
        rows = np.flatnonzero(with_rest)
        ids, _ = seq_ids(rest_pool, rest_offs, rest_pool[:0], rest_offs[:1])
        _, found = seq_ids(pool, offs, rest_pool, rest_offs)
        ctx[rows] = ids
        drop[rows] = np.where(found >= 0, found, -2)
    return grp, pos, xk, ctx, drop, tuple(groups)


def _blocks(old_trans: np.ndarray, new_trans: np.ndarray) -> np.ndarray:
    """The state of a minimized automaton (``new_trans``) each state of the automaton it
    was minimized from (``old_trans``, every state reachable from 0) is in: both walked
    together from their starts."""
    n = old_trans.shape[0]
    k = new_trans.shape[1]
    out = np.full(n, -1, dtype=np.int64)
    out[0] = 0
    front = np.array([0], dtype=np.int64)
    while len(front):
        o = old_trans[front, :k]
        m = new_trans[out[front]]
        live = o >= 0
        src, dst = o[live], m[live]
        fresh = out[src] < 0
        out[src[fresh]] = dst[fresh]
        front = np.unique(src[fresh])
    return out


def intersection(a: DFA, b: DFA) -> DFA | None:
    """The automaton of the words both ``a`` and ``b`` accept (``accepts``: ``{0}`` where
    it accepts), trimmed and minimized; None when there are none. Stalls of counted
    repetitions in either carry over (a rewind moves its own side). Raises
    :class:`~.fsa.TooManyStates` past :data:`MAX_DFA_STATES`."""
    p = product([a, b], raw=True, minimized=False)
    both = frozenset((0, 1))
    return restrict_accepts(p, [frozenset((0,)) if x == both else frozenset() for x in p.accepts])


def difference(a: DFA, b: DFA) -> DFA | None:
    """The automaton of the words ``a`` accepts and ``b`` does not (``accepts``: ``{0}``
    where it accepts), trimmed and minimized; None when there are none. The product runs
    on where ``b`` dies (its tuples hold the live components only); stalls carry over as
    in :func:`intersection`. Raises :class:`~.fsa.TooManyStates` past
    :data:`MAX_DFA_STATES`."""
    p = product([a, b], raw=True, minimized=False)
    return restrict_accepts(p, [frozenset((0,)) if 0 in x and 1 not in x else frozenset()
                                for x in p.accepts])


def restrict_accepts(p: DFA, accepts) -> DFA | None:
    """``p`` with new ``accepts`` sets (each a subset of the old: fewer words accepted),
    trimmed and minimized, stalls kept; None when nothing is accepted any more."""
    acc_sets = list(accepts)
    acc = np.array([bool(x) for x in acc_sets], dtype=bool)
    b2c, rep = byte_classes(p.trans)
    n_classes = len(rep)
    cols = np.take(p.trans, rep, axis=1)
    if p.counters:
        band, owed, rw, tags = p.counters
        # a rewind is a move of the automaton: states only it reaches are kept
        cols = np.concatenate([cols, rw], axis=1)
    t, old = trim(cols, acc)
    if t.shape[0] == 0:
        return None
    ids: dict = {}
    acc_col = np.array([ids.setdefault(acc_sets[o], len(ids)) for o in old.tolist()], dtype=np.int64)
    if p.counters:
        tags = tags[old]
        labels = row_labels(np.concatenate([acc_col[:, None], tags.astype(np.int64)], axis=1))
    else:
        labels = acc_col
    t2, old2 = minimize(t, labels)
    accepts2 = tuple(acc_sets[old[o]] for o in old2.tolist())
    counters = ()
    if p.counters:
        tags2 = tags[old2]
        counters = (band, owed, np.where(tags2 == LEFT, t2[:, n_classes:], -1), tags2)
    full = expand_classes(np.ascontiguousarray(t2[:, :n_classes]), b2c)
    return DFA(trans=full, accepts=accepts2, n_states=full.shape[0], counters=counters)


def dfa_nbytes(d) -> int:
    """About the memory an automaton holds (its transition table and ~64 bytes a state
    for the accepts sets and per-state data), for the lexer's byte-bounded caches; 0 for
    None."""
    if d is None:
        return 0
    return int(np.asarray(d.trans).nbytes) + 64 * int(d.n_states)
