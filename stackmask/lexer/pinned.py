"""Pinned copies of counted chains: a deep state for every class of counts.

The masks of a counted chain's states near a bound are those of *deep* states of the
classes their tokens reach (``stackmask.compile.count_split``): states from which no token
reaches another class. A class longer than a token has them (a stall, the loop past the
last bound); a shorter one (``maxLength: 20`` beside a plain string: counts 0..20) has none
in the chain itself. For those this module adds *pinned* states to the lexer automaton,
reached from no other state: per state ``s`` inside an iteration and what the other
terminals read beside the chain ``y``, a copy of a chain state of that class, whose
iterations go back into the pinned copy instead of on to the next count. It reads every
token as a state of the class at a count far from both ends would: where a string ends it
leaves the chain as the class does (every position's exits are checked equal where the
masks rely on it), and what the pending string can still become (``DFA.reach_as``: the
scanner's reach of the pinned state is a chain state's whose count is in the class, with
all later classes ahead) does not depend on the count either.

Commit never reaches a pinned state; the mask automaton compiles them like any other.
"""

from __future__ import annotations

import numpy as np

from .counted import INF, class_of, count_classes
from .dfa import DFA, append_states

__all__ = ["add_pinned", "chain_ranges", "deep_positions", "PINNED"]

#: the position a pinned state of class ``k`` records in ``DFA.chains``: ``PINNED - k``
PINNED = -2


def chain_ranges(positions, classes) -> list:
    """``(first, last)`` count per position (INF: no last); the last bound's own position
    reads as every later count when that bound opens the last class."""
    ranges = [(a, INF if b < 0 else b) for a, b in positions]
    if (ranges[-1][1] == INF and len(ranges) > 1
            and class_of(classes, ranges[-2][0]) == len(classes) - 1):
        ranges[-2] = (ranges[-2][0], INF)
    return ranges


def deep_positions(ranges, classes, longest: int) -> dict:
    """Class -> its positions from whose last count no token of at most ``longest`` bytes
    reaches the next class (stalls, the loop; a stall reads as its last count)."""
    deep: dict = {}
    for p, (a, b) in enumerate(ranges):
        k = class_of(classes, a)
        ck = classes[k]
        if a < b and b <= ck[1] and (ck[1] == INF or b + longest <= ck[1]) and ck[2]:
            deep.setdefault(k, []).append(p)
    return deep


def add_pinned(dfa: DFA, band: int) -> DFA:
    """``dfa`` with pinned states for every live class of a counted chain that has no
    deep position (module doc), for tokens shorter than ``band``; ``dfa`` itself when no
    class needs them."""
    if not dfa.chains:
        return dfa
    grp, pos, xk, ctx, drop, groups = dfa.chains
    trans = dfa.trans
    longest = band - 1
    n = dfa.n_states
    rows: list = []
    meta: list = []                 # (group, class, x state, context) per new state
    accepts: list = []
    reach_as: list = []
    for g, (positions, members, xn, _) in enumerate(groups):
        real = np.flatnonzero((grp == g) & (pos >= 0))
        if not len(real):
            continue
        classes = count_classes(members)
        ranges = chain_ranges(positions, classes)
        deep = deep_positions(ranges, classes, longest)
        reads = xn >= 0
        for k, (ak, bk, live) in enumerate(classes):
            if not live or k in deep:
                continue
            # a template per (x state, others): a chain state of a position inside the
            # class whose iterations stay in the chain; and one whose pending string is
            # as a pending string in this class (its count once the iteration it is in
            # is complete is in the class)
            tmpl: dict = {}
            reach: dict = {}
            for d in real.tolist():
                a, b = ranges[pos[d]]
                s, y = int(xk[d]), int(ctx[d])
                if a == b and ak <= a <= bk:
                    row = trans[d]
                    t = row[reads[s]]
                    if (t >= 0).all() and (grp[t] == g).all() and (pos[t] >= 0).all():
                        tmpl.setdefault((s, y), d)
                if a == b and ak <= a + (s != 0) <= bk:
                    reach.setdefault((s, y), d)
            keys = {key for key in tmpl if key in reach}
            while True:                     # every pinned state's moves stay in the copy
                drop_keys = set()
                for key in keys:
                    row = trans[tmpl[key]]
                    for t in np.unique(row[(row >= 0)]).tolist():
                        if grp[t] == g and (int(xk[t]), int(ctx[t])) not in keys:
                            drop_keys.add(key)
                            break
                if not drop_keys:
                    break
                keys -= drop_keys
            ids = {key: n + len(meta) + i for i, key in enumerate(sorted(keys))}
            for key in sorted(keys):
                d = tmpl[key]
                row = trans[d].copy()
                inside = (row >= 0) & (grp[np.maximum(row, 0)] == g)
                for b in np.flatnonzero(inside).tolist():
                    t = row[b]
                    row[b] = ids[(int(xk[t]), int(ctx[t]))]
                rows.append(row)
                accepts.append(dfa.accepts[d])
                reach_as.append((ids[key], reach[key]))
            meta.extend((g, k, s, y) for s, y in sorted(keys))
    if not rows:
        return dfa
    m = len(rows)
    meta_rows = (np.array([x[0] for x in meta], dtype=np.int32),
                 np.array([PINNED - x[1] for x in meta], dtype=np.int32),
                 np.array([x[2] for x in meta], dtype=np.int32),
                 np.array([x[3] for x in meta], dtype=np.int32),
                 np.full(m, -1, np.int32))
    return append_states(dfa, rows, accepts, meta_rows, reach_as)
