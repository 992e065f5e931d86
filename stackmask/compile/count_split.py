"""Masks of counted chains near a bound, without configurations of their own.

A counted repetition ``P x{lo,hi} S`` is a chain of positions in the lexer automaton
(:mod:`stackmask.lexer.counted`): each count near a bound has a position of its own, and
construction would compile every state of each (``maxLength: 300``: 130 positions of the
9 states inside a JSON string character). They need not be compiled. The counts of a
chain fall into *classes*, the runs of counts between two bounds of its members: within a
class, the members a string may end as (``lo_i <= count <= hi_i``) and those it can
still become (``count <= hi_i``) are the same. A token read from a chain state at count
``c`` completes ``u`` iterations of ``x`` before it leaves the chain (or ends: one more
when it ends inside an iteration); what it does then depends only on the class of its
*reach* ``c + u`` (where it ends as a string, or which strings the rest can still make).
A state of the chain in a *deep* position of that class (a stall or the loop past the
last bound, where no token can reach another class) with the same state inside the
iteration does the same for that token. So the mask of a near position's state is the
union, over the classes its tokens reach, of the deep state's mask restricted to the
tokens whose reach is in that class: reaches past every bound are dead.

:func:`plan` finds, for every chain state at a near position whose classes all have a
deep state, those terms: ``(deep configuration, table, lo, hi)``, the tokens whose ``u``
(the table: :func:`iteration_counts`) lies in ``lo..hi``. Deep states are those of a
stall or of the loop past the last bound, or, for a class shorter than a token, the
lexer's pinned states (:mod:`stackmask.lexer.pinned`). It checks what the terms assume on
the lexer automaton itself: the chain's states read as iterations of ``x``
(:func:`stackmask.lexer.counted._chain`), no chain state accepts, and where a string ends
every position's exits are its class's deep state's. The others are compiled as before.
"""

from __future__ import annotations

import numpy as np

from ..lexer import pinned
from ..lexer.counted import class_of, count_classes

__all__ = ["CountPlan", "plan", "iteration_counts", "counts_for"]

#: iteration counts kept across constraints (one vocabulary's JSON strings share them):
#: ``(vocabulary fingerprint, automaton, start, longest) -> counts``, at most this many
COUNTS_KEPT = 64
_COUNTS: dict = {}


class CountPlan:
    """What :func:`plan` found for a scanner: ``specs`` (configuration -> terms
    ``((deep configuration, table id, lo, hi), ...)``, table id -1 for every token),
    ``deep`` (the configurations the terms read: deep and pinned states, and what the
    other terminals read alone past every bound; compiled whole), ``rest`` (the chains'
    other plain configurations: compiled, met or not), ``tables`` (table id ->
    ``(group, x state)``)."""

    __slots__ = ("specs", "deep", "rest", "tables")

    def __init__(self):
        self.specs: dict = {}
        self.deep: list = []
        self.rest: list = []
        self.tables: list = []


def plan(scanner, longest: int) -> CountPlan | None:
    """The terms of every chain state at a near position whose masks the deep
    positions give (module doc), for tokens of at most ``longest`` bytes; None when
    the lexer has no chain."""
    dfa = scanner.dfa
    if not dfa.chains:
        return None
    grp, pos, xk, ctx, drop, groups = dfa.chains
    trans = dfa.trans
    accepting = [bool(a) for a in dfa.accepts]
    out = CountPlan()
    table_ids: dict = {}
    deep_states: set = set()
    L = int(longest)

    x_keys = [xn.tobytes() + xd.tobytes() for _, _, xn, xd in groups]

    def table(g, s):
        # one table per iteration automaton and state inside it (groups of several
        # lexer modes, or strings apart, often share the automaton)
        key = (x_keys[g], s)
        t = table_ids.get(key)
        if t is None:
            t = table_ids[key] = len(out.tables)
            out.tables.append((g, s))
        return t

    for g, (positions, members, xn, xd) in enumerate(groups):
        states = np.flatnonzero((grp == g) & (pos >= 0))
        if not len(states):
            continue
        classes = count_classes(members)
        ranges = pinned.chain_ranges(positions, classes)
        cls_of = [class_of(classes, a) for a, _ in ranges]
        deep = pinned.deep_positions(ranges, classes, L)
        by: dict = {}          # (position, state inside the iteration, others) -> state
        for d in states.tolist():
            by.setdefault((int(pos[d]), int(xk[d]), int(ctx[d])), d)
        # a class's deep states by (state inside the iteration, others): those of its
        # deep positions and what they read inside an iteration (minimization may have
        # merged those with a position's next to the class, which reads alike), or its
        # pinned states (lexer.pinned)
        reps: dict = {}
        for k, ps in deep.items():
            rk = reps[k] = {}
            front = [d for (p, s, y), d in by.items() if p in ps]
            for d in front:
                rk.setdefault((int(xk[d]), int(ctx[d])), d)
            while front:
                nxt = []
                for d in front:
                    x = int(xk[d])
                    inner = (xn[x] >= 0) & ~xd[x]
                    for t in np.unique(trans[d][inner]).tolist():
                        if t >= 0 and grp[t] == g and (int(xk[t]), int(ctx[t])) not in rk:
                            rk[(int(xk[t]), int(ctx[t]))] = t
                            nxt.append(t)
                front = nxt
        for d in np.flatnonzero((grp == g) & (pos <= pinned.PINNED)).tolist():
            k = pinned.PINNED - int(pos[d])
            reps.setdefault(k, {})[(int(xk[d]), int(ctx[d]))] = d
        rep_states = {d for rk in reps.values() for d in rk.values()}
        # where a string may end (between iterations), a position must leave the chain
        # on each byte as its class's deep states do, whatever the others read beside
        # it; and no state of it accepts (the others read nothing that ends)
        exits = xn[0] < 0
        ok = np.array([cls_of[p] in reps for p in range(len(ranges))], dtype=bool)
        for (p, s, y), d in by.items():
            if accepting[d]:
                ok[p] = False
            if s != 0 or not ok[p]:
                continue
            rd = reps[cls_of[p]].get((0, y))
            if rd is None or not np.array_equal(trans[d][exits], trans[rd][exits]):
                ok[p] = False
        starts = np.array([a for a, _ in ranges], dtype=np.int64)
        ends = np.array([b for _, b in ranges], dtype=np.int64)

        def all_ok(lo, hi):          # every position with a count in lo..hi
            return bool(ok[(ends >= lo) & (starts <= hi)].all())

        # the positions a deep state's tokens reach (a stall reads as its last count;
        # a pinned state reads no other)
        deep_ok = {k: all(all_ok(ranges[r][1], ranges[r][1] + L) for r in deep[k])
                   if k in deep else True for k in reps}
        for (p, s, y), d in by.items():
            c, b = ranges[p]
            if c != b or d in rep_states or not all_ok(c, c + L):
                continue
            terms = []
            for k, (ak, bk, live) in enumerate(classes):
                if bk < c or ak > c + L:
                    continue
                lo, hi = max(0, ak - c), min(L, bk - c)
                if not live:
                    # past every bound the chain dies and the others read on alone
                    alone = int(drop[d])
                    if alone == -2:
                        terms = None
                        break
                    if alone >= 0:
                        terms.append((scanner.intern(alone, frozenset()), table(g, s), lo, hi))
                        deep_states.add(alone)
                    continue
                rd = reps[k].get((s, y)) if deep_ok.get(k) else None
                if rd is None:
                    terms = None
                    break
                deep_states.add(rd)
                t = -1 if lo == 0 and hi == L else table(g, s)   # -1: every token
                terms.append((scanner.intern(rd, frozenset()), t, lo, hi))
            if terms is not None:
                out.specs[scanner.intern(d, frozenset())] = tuple(terms)
        # the chain's other states are compiled whole, met or not: a near state without a
        # start reports no configuration its tokens end in
        for d in states.tolist():
            cfg = scanner.intern(d, frozenset())
            if cfg not in out.specs:
                out.rest.append(cfg)
    out.deep = [scanner.intern(d, frozenset()) for d in sorted(deep_states)]
    return out


def iteration_counts(index, x_next: np.ndarray, x_done: np.ndarray, starts, n_ids: int,
                     longest: int) -> np.ndarray:
    """Per start state ``s`` of ``x``'s iteration automaton (``x_next``, ``x_done``:
    :func:`stackmask.lexer.counted._x_steps`) and token id: the iterations the token
    completes from ``s`` before ``x`` cannot read its next byte, one more when it ends
    inside an iteration (``(len(starts), n_ids)``; ids of no text token, and tokens
    ``x`` cannot read a byte of from ``s``: 0). One whole-vocabulary run per start, over
    the tokens it can read a byte of (from inside an iteration: few)."""
    order, cols = index.byte_columns()
    n = len(order)
    if not cols:
        return np.zeros((len(starts), n_ids), dtype=np.uint8)
    longer = np.array([len(c) for c in cols], dtype=np.int64)      # tokens longer than j
    dtype = np.uint8 if longest < 255 else np.uint16
    out = np.zeros((len(starts), n_ids), dtype=dtype)
    ids = index.first_id[order]
    for row, s in enumerate(starts):
        sel = np.flatnonzero(x_next[s, cols[0]] >= 0)                 # ascending: longest first
        if not len(sel):
            continue
        m_of = np.searchsorted(sel, longer, side="left")               # sel[:m] longer than j
        x = np.full(len(sel), s, dtype=np.int32)
        u = np.zeros(len(sel), dtype=np.int32)
        alive = np.ones(len(sel), dtype=bool)
        for j, col in enumerate(cols):
            m = int(m_of[j])
            if not m:
                break
            xs = x[:m]
            b = col[sel[:m]]
            nx = x_next[xs, b]
            live = alive[:m] & (nx >= 0)
            u[:m] += live & x_done[xs, b]
            x[:m] = np.where(live, nx, xs)
            alive[:m] = live
        u += (x != 0) & alive
        out[row, ids[sel]] = np.minimum(u, longest).astype(dtype)
    if index.dups:
        first = index.first_id
        for p, extra in index.dups.items():
            out[:, extra] = out[:, [int(first[p])]]
    return out


def counts_for(index, x_next: np.ndarray, x_done: np.ndarray, starts, n_ids: int,
               longest: int) -> list:
    """:func:`iteration_counts` per start, each kept for the next constraint of the same
    vocabulary and iteration automaton (read-only arrays)."""
    xk = x_next.tobytes() + x_done.tobytes()
    keys = [(index.fingerprint, xk, int(s), int(longest), int(n_ids)) for s in starts]
    missing = [s for s, k in zip(starts, keys) if k not in _COUNTS]
    if missing:
        rows = iteration_counts(index, x_next, x_done, missing, n_ids, longest)
        if len(_COUNTS) + len(missing) > COUNTS_KEPT:
            _COUNTS.clear()
        for s, row in zip(missing, rows):
            row = np.ascontiguousarray(row)
            row.setflags(write=False)
            _COUNTS[(index.fingerprint, xk, int(s), int(longest), int(n_ids))] = row
    out = []
    for s, k in zip(starts, keys):
        row = _COUNTS.get(k)
        if row is None:                 # (cleared meanwhile by a larger batch)
            row = iteration_counts(index, x_next, x_done, [s], n_ids, longest)[0]
        out.append(row)
    return out
