"""Minimization of the Parser DWA, and the depth its walks can read.

The automaton (:class:`~stackmask.compile.parser_dwa.ParserDWA`) calls these from
its methods of the same names; they read its lists and return new ones.
"""

from __future__ import annotations

from ..wfa.automaton import topological_order
from ..wfa.weights import EMPTY_ID

STOP = (-1, EMPTY_ID)   # an edge that ends the walk (stored where the default edge must not apply)


def successors(dwa, q: int) -> set:
    """The states ``q``'s edges (default included) lead to."""
    return _succ(dwa.state_edges(q), dwa.default[q])


def _succ(edges: dict, default) -> set:
    out = {d for d, _ in edges.values() if d >= 0}
    if default is not None and default[0] >= 0:
        out.add(default[0])
    return out


def minimize(items: list, trans: list, default: list, complete: list, compiled=None,
             consume: bool = False):
    """Merge the states that give every stack the same tokens.

    A walk unites the weights of the edges it takes and ends where there is no
    edge, at a next state of -1, or at the bottom of the stack; determinization
    decides each token on the first edge that settles it, so an edge's weight is
    what the walk's result gains there, and two complete states are equivalent
    exactly when, for every stack state, they take edges of equal weight into
    equivalent states. Bottom up over a topological order, each complete state gets
    the class of its signature: its default edge and the explicit edges that differ
    from it, targets replaced by their classes (an edge that stops with nothing is
    the same as no edge where there is no default edge). A state that can give no
    token on any stack becomes -1, so walks end there. A state not compiled yet is
    a class of its own (its missing edges are unknown), and so are the states
    leading to different ones. The classes are numbered in the order of their lowest
    states (which give their items): the result does not depend on the order the
    states were visited in. The state index maps the item sets of merged states to the
    state they merged into (the same masks on every stack). A cyclic automaton is left
    as it is.

    The automaton's lists in, its minimized lists out: ``(new, items, trans, default,
    complete)`` with ``new`` mapping each old state to its new one (-1: gives nothing),
    or None for a cyclic automaton. ``compiled``: the compiled module
    (``_native.minimize_edges``, the twin of what follows), or None for this one.
    ``consume``: the caller replaces ``trans`` with the result, so the compiled path
    may empty it on the way (freeing the old edges before it makes the new ones)."""
    if compiled is not None:
        r = compiled.minimize_edges(trans, default, complete, consume)
        if r is None:
            return None
        new, reps, trans2, default2 = r
        return new, [items[q] for q in reps], trans2, default2, [complete[q] for q in reps]
    n = len(trans)
    order = topological_order(range(n), [_succ(trans[q], default[q]) for q in range(n)])
    if order is None:
        return None
    cls = [-1] * n               # state -> class (-1: gives nothing)
    sigs: dict = {}
    reps: list = []              # class -> (its lowest state, its signature or None)

    def edge(e):
        d, w = e
        return (cls[d] if d >= 0 else -1, w)

    for q in reversed(order):
        if not complete[q]:
            sig = None
        else:
            dflt = default[q]
            if dflt is not None:
                dflt = edge(dflt)
                if dflt == STOP:
                    dflt = None
            explicit = []
            for s, e in trans[q].items():
                e = edge(e)
                if e != dflt and (dflt is not None or e != STOP):
                    explicit.append((s, e))
            if dflt is None and not explicit:
                continue                  # dead: stays -1
            explicit.sort()
            sig = (dflt, tuple(explicit))
            c = sigs.get(sig)
            if c is not None:
                cls[q] = c
                if q < reps[c][0]:
                    reps[c] = (q, sig)
                continue
            sigs[sig] = len(reps)
        cls[q] = len(reps)
        reps.append((q, sig))
    classes = sorted(range(len(reps)), key=lambda c: reps[c][0])
    new_of = [0] * len(reps)
    for i, c in enumerate(classes):
        new_of[c] = i
    new = [new_of[c] if c >= 0 else -1 for c in cls]

    def remap(e):
        return e if e is None or e[0] < 0 else (new[e[0]], e[1])

    def of_class(e):             # a signature's edge: target class -> new state
        return e if e[0] < 0 else (new_of[e[0]], e[1])

    items2, trans2, default2, complete2 = [], [], [], []
    for c in classes:
        q, sig = reps[c]
        if sig is None:          # not compiled yet: its edges as they are
            d = remap(default[q])
            t = {s: remap(e) for s, e in trans[q].items()}
        else:                    # the signature is the normalized edges
            dflt, explicit = sig
            d = None if dflt is None else of_class(dflt)
            t = {s: of_class(e) for s, e in explicit}
        items2.append(items[q])
        trans2.append(t)
        default2.append(d)
        complete2.append(complete[q])
    return new, items2, trans2, default2, complete2


def depth(dwa) -> tuple:
    """(max number of stack entries a walk can read, acyclic?) over expanded states."""
    n = len(dwa.trans)
    succ = [successors(dwa, q) for q in range(n)]
    order = topological_order(range(n), succ)
    if order is None:
        return None, False
    depth = [0] * n               # states on the longest path from q (edges read)
    for q in reversed(order):
        depth[q] = 1 + max((depth[d] for d in succ[q]), default=0)
    starts = [q for q, _ in list(dwa.init.values()) + list(dwa.pair_init.values()) if q >= 0]
    return max((depth[q] for q in starts), default=0), True
