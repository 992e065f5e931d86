"""Building finite automata over an integer alphabet: the package's one NFA and subset
construction, the product of DFAs, and the numbering of state sequences by content.
Trimming and minimizing what they build is :mod:`.reduction`'s job.

The alphabet is ``range(n_symbols)``: the 256 byte values for the lexer
(:mod:`.dfa`), code point atoms for the ECMA regex front end
(:mod:`stackmask.grammars.ecma_regex`). A DFA is a table ``trans`` of shape
``(n_states, n_symbols)``, ``-1`` for "no move", state 0 the start; internally
symbols no transition tells apart are grouped into classes, so the work is on
``(n_states, n_classes)`` tables. This module knows no regex syntax, no bytes and no
code points.
"""

from __future__ import annotations

import numpy as np

from .. import native

__all__ = ["Nfa", "TooManyStates", "determinize", "product_bfs", "product_arrays", "seq_ids"]


class TooManyStates(Exception):
    """An automaton grew past the number of states its caller allowed."""


class Nfa:
    """An NFA with epsilon moves and a single final state.

    ``eps[s]`` lists epsilon successors, ``edges[s]`` lists ``(lo, hi, t)`` moves on the
    symbols ``lo..hi``. :meth:`new` raises :class:`TooManyStates` past ``limit`` states."""

    __slots__ = ("eps", "edges", "start", "final", "limit")

    def __init__(self, limit: int):
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.start = 0
        self.final = 0
        self.limit = limit

    @property
    def n_states(self) -> int:
        return len(self.eps)

    def new(self) -> int:
        n = len(self.eps)
        if n >= self.limit:
            raise TooManyStates(n)
        self.eps.append([])
        self.edges.append([])
        return n


# --------------------------------------------------------------------------
# determinization
# --------------------------------------------------------------------------

def _symbol_classes(boundaries: set[int], n_symbols: int) -> np.ndarray:
    """symbol -> class id, for classes delimited by ``boundaries`` (the symbols at
    which a new class starts)."""
    starts = np.zeros(n_symbols, dtype=np.int32)
    for b in boundaries:
        if 0 < b < n_symbols:
            starts[b] = 1
    return np.cumsum(starts, dtype=np.int32)


def determinize(nfa: Nfa, n_symbols: int, max_states: int, keep=(),
                subsets_out: list | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Subset construction over symbol classes (raises :class:`TooManyStates` past
    ``max_states`` subsets). A subset holds the NFA states with symbol moves, the final
    state and the states in ``keep`` (states a caller needs to see in the subsets, which
    it gets in ``subsets_out``: the subset of each DFA state, in order).

    Returns ``(trans, symbol_class, accepting)``: ``trans`` int32
    ``(n_states, n_classes)`` with -1 for no move (not yet trimmed), ``symbol_class``
    int32 ``(n_symbols,)`` mapping symbols to classes, ``accepting`` bool ``(n_states,)``.
    State 0 is the start state; states are numbered breadth first, classes in order.
    """
    n = nfa.n_states
    bounds: set[int] = set()
    for es in nfa.edges:
        for lo, hi, _ in es:
            bounds.add(lo)
            bounds.add(hi + 1)
    s2c = _symbol_classes(bounds, n_symbols)
    s2c_l = s2c.tolist()
    n_classes = int(s2c[-1]) + 1 if n_symbols else 0

    # Only "important" states identify a subset: those with symbol moves, and the final state.
    final = nfa.final
    edges = nfa.edges
    important = [bool(edges[s]) or s == final for s in range(n)]
    for s in keep:
        important[s] = True
    eps = nfa.eps
    mod = native.module()
    if mod is not None and hasattr(mod, "determinize_arrays"):
        return _determinize_native(mod, nfa, s2c, n_classes, important, max_states,
                                   subsets_out)
    closure_memo: dict[int, tuple[int, ...]] = {}

    def closure(s: int) -> tuple[int, ...]:
        c = closure_memo.get(s)
        if c is not None:
            return c
        seen = {s}
        stack = [s]
        while stack:
            x = stack.pop()
            for y in eps[x]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        c = tuple(sorted(x for x in seen if important[x]))
        closure_memo[s] = c
        return c

    # per NFA state: [(class, targets)], built on first use
    moves_memo: dict[int, list[tuple[int, tuple[int, ...]]]] = {}

    def moves(s: int) -> list[tuple[int, tuple[int, ...]]]:
        m = moves_memo.get(s)
        if m is None:
            by_c: dict[int, list[int]] = {}
            for lo, hi, t in edges[s]:
                for c in range(s2c_l[lo], s2c_l[hi] + 1):
                    lst = by_c.get(c)
                    if lst is None:
                        by_c[c] = [t]
                    elif t not in lst:
                        lst.append(t)
            m = [(c, tuple(sorted(ts))) for c, ts in by_c.items()]
            moves_memo[s] = m
        return m

    start = closure(nfa.start)
    ids: dict[tuple[int, ...], int] = {start: 0}
    subsets = [start]
    target_memo: dict[tuple[int, ...], int] = {}  # raw NFA targets -> DFA state

    def dstate(targets: tuple[int, ...]) -> int:
        d = target_memo.get(targets)
        if d is None:
            if len(targets) == 1:
                key = closure(targets[0])
            else:
                acc: set[int] = set()
                for t in targets:
                    acc.update(closure(t))
                key = tuple(sorted(acc))
            d = ids.get(key)
            if d is None:
                d = len(subsets)
                if d >= max_states:
                    raise TooManyStates(d)
                ids[key] = d
                subsets.append(key)
            target_memo[targets] = d
        return d

    rows: list[list[int]] = []
    i = 0
    while i < len(subsets):
        cur = subsets[i]
        i += 1
        row = [-1] * n_classes
        if len(cur) == 1:
            for c, ts in moves(cur[0]):
                row[c] = dstate(ts)
        else:
            buckets: dict[int, set[int]] = {}
            for s in cur:
                for c, ts in moves(s):
                    bk = buckets.get(c)
                    if bk is None:
                        buckets[c] = set(ts)
                    else:
                        bk.update(ts)
            for c, targets in buckets.items():
                row[c] = dstate(tuple(sorted(targets)))
        rows.append(row)
    trans = np.array(rows, dtype=np.int32).reshape(len(rows), n_classes)
    accepting = np.array([final in sub for sub in subsets], dtype=bool)
    if subsets_out is not None:
        subsets_out.extend(subsets)
    return trans, s2c, accepting


def _determinize_native(mod, nfa: Nfa, s2c, n_classes: int, important: list,
                        max_states: int, subsets_out):
    """:func:`determinize` in the compiled extension (``_native.determinize_arrays``):
    the NFA handed over as arrays, moves listed in the order the reference meets them;
    the same DFA, numbered alike."""
    n = nfa.n_states
    eps_off = np.zeros(n + 1, dtype=np.int64)
    eps_off[1:] = np.cumsum([len(e) for e in nfa.eps])
    eps_to = np.fromiter((t for e in nfa.eps for t in e), dtype=np.int32, count=int(eps_off[-1]))
    # each edge's classes in order, edge by edge: the order the reference meets them
    # (repeated targets are harmless: the union drops them)
    flat = [(s, lo, hi, t) for s, es in enumerate(nfa.edges) for lo, hi, t in es]
    e = np.array(flat, dtype=np.int64).reshape(-1, 4)
    c_lo = s2c[e[:, 1]].astype(np.int64)
    width = s2c[e[:, 2]].astype(np.int64) - c_lo + 1
    starts = np.cumsum(width) - width
    total = int(width.sum())
    which = np.repeat(np.arange(len(e)), width)
    mv_cls = (c_lo[which] + np.arange(total) - starts[which]).astype(np.int32)
    mv_to = e[which, 3].astype(np.int32)
    mv_off = np.zeros(n + 1, dtype=np.int64)
    mv_off[1:] = np.cumsum(np.bincount(e[which, 0], minlength=n)) if total else 0
    got = mod.determinize_arrays(n_classes, nfa.start, max_states, eps_off, eps_to, mv_off,
                                 mv_cls, mv_to, np.array(important, dtype=np.uint8))
    if got is None:
        raise TooManyStates(max_states)
    trans, pool, offs = got
    is_final = np.zeros(n + 1, dtype=bool)
    is_final[nfa.final] = True
    seen = np.concatenate([[0], np.cumsum(is_final[pool])])
    accepting = seen[offs[1:]] > seen[offs[:-1]]
    if subsets_out is not None:
        pl = pool.tolist()
        ol = offs.tolist()
        subsets_out.extend(tuple(pl[ol[i]:ol[i + 1]]) for i in range(len(ol) - 1))
    return trans, s2c, accepting


# --------------------------------------------------------------------------
# product
# --------------------------------------------------------------------------

#: below this many table entries (component states x classes), :func:`product_bfs` goes one
#: tuple at a time: numpy's cost per level outweighs the work on small automata
_SMALL_PRODUCT = 65536


def product_bfs(gc: np.ndarray, start: tuple, max_states: int) -> tuple[list, np.ndarray]:
    """The reachable tuples of live component states from ``start`` (``gc``: the
    components' transitions side by side, states x symbol classes, -1 dead), breadth
    first. A tuple is its live states in ascending order (component order, since each
    component's states are a range of their own). Returns ``(tuples in id order,
    transitions)``; raises :class:`TooManyStates` past ``max_states`` tuples.

    Large products go a level at a time: a level's successors for every class are
    gathered at once, made canonical and deduplicated with one sort; only the new tuples
    of the level are looked up one by one. Small ones go one tuple at a time. Complete
    components (no -1) give the product of Boolean operations: every tuple holds one
    state of each. With the compiled extension the search runs there
    (``_native.product_arrays``, one tuple at a time, numbered as
    :func:`_product_tuples` numbers them); these are the references."""
    mod = native.module()
    if mod is not None and hasattr(mod, "product_arrays"):
        pool, offs, trans = product_arrays(gc, start, max_states)
        pl = pool.tolist()
        ol = offs.tolist()
        return [tuple(pl[ol[i]:ol[i + 1]]) for i in range(len(ol) - 1)], trans
    if gc.size <= _SMALL_PRODUCT:
        return _product_tuples(gc, start, max_states)
    return _product_levels(gc, start, max_states)


def product_arrays(gc: np.ndarray, start: tuple, max_states: int):
    """:func:`product_bfs` as arrays: ``(pool, offsets, trans)``, tuple ``i`` being
    ``pool[offsets[i]:offsets[i+1]]`` (int32, int64)."""
    mod = native.module()
    if mod is not None and hasattr(mod, "product_arrays"):
        got = mod.product_arrays(np.ascontiguousarray(gc, dtype=np.int32), tuple(start),
                                 max_states)
        if got is None:
            raise TooManyStates(max_states)
        return got
    states, trans = product_bfs(gc, start, max_states)
    offs = np.zeros(len(states) + 1, dtype=np.int64)
    offs[1:] = np.cumsum([len(st) for st in states])
    pool = np.fromiter((x for st in states for x in st), dtype=np.int32, count=int(offs[-1]))
    return pool, offs, trans


def _product_tuples(gc: np.ndarray, start: tuple, max_states: int) -> tuple[list, np.ndarray]:
    """:func:`product_bfs` one tuple at a time (states numbered breadth first)."""
    rows_g = gc.tolist()
    first = tuple(sorted(start))
    ids = {first: 0}
    states = [first]
    rows = []
    i = 0
    while i < len(states):
        row = []
        for col in zip(*[rows_g[x] for x in states[i]]):
            key = tuple(x for x in col if x >= 0)
            if not key:
                row.append(-1)
                continue
            q = ids.get(key)
            if q is None:
                q = ids[key] = len(states)
                states.append(key)
                if len(states) > max_states:
                    raise TooManyStates(len(states))
            row.append(q)
        rows.append(row)
        i += 1
    return states, np.array(rows, dtype=np.int32).reshape(len(rows), gc.shape[1])


def _product_levels(gc: np.ndarray, start: tuple, max_states: int) -> tuple[list, np.ndarray]:
    """:func:`product_bfs` a level at a time."""
    n_classes = gc.shape[1]
    dead = len(gc)
    g = np.vstack([gc, np.full((1, n_classes), -1, dtype=gc.dtype)])   # row `dead`: all -1
    ids: dict[bytes, int] = {}
    states: list[tuple] = []
    rows: list[np.ndarray] = []
    first = np.array(sorted(start), dtype=np.int64)
    ids[first.tobytes()] = 0
    states.append(tuple(first.tolist()))
    frontier = first[None, :]                       # level x width, padded with `dead`
    while len(frontier):
        f, w = frontier.shape
        nxt = g[frontier]                           # f x w x classes
        nxt = np.where(nxt < 0, dead, nxt).astype(np.int64)
        nxt = np.sort(nxt, axis=1)                  # live states first, ascending; dead last
        live = (nxt < dead).sum(axis=1)             # f x classes
        w2 = int(live.max(initial=0))
        out = np.full(f * n_classes, -1, dtype=np.int64)
        if w2:
            cand = nxt[:, :w2, :].transpose(0, 2, 1).reshape(-1, w2)   # (f*classes) x w2
            sel = np.flatnonzero(live.reshape(-1) > 0)
            uniq, inv = np.unique(cand[sel], axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            uid = np.empty(len(uniq), dtype=np.int64)
            new_rows = []
            n_live = (uniq < dead).sum(axis=1).tolist()
            for u in range(len(uniq)):
                row = uniq[u]
                k = row[:n_live[u]].tobytes()         # the live states: any level's width
                q = ids.get(k)
                if q is None:
                    q = ids[k] = len(states)
                    states.append(tuple(row[:n_live[u]].tolist()))
                    new_rows.append(row)
                    if len(states) > max_states:
                        raise TooManyStates(len(states))
                uid[u] = q
            out[sel] = uid[inv]
            frontier = np.array(new_rows, dtype=np.int64).reshape(-1, w2) if new_rows else \
                np.zeros((0, w2), dtype=np.int64)
        else:
            frontier = np.zeros((0, 1), dtype=np.int64)
        rows.append(out.reshape(f, n_classes))
    trans = np.concatenate(rows).astype(np.int32) if rows else np.zeros((0, n_classes), np.int32)
    return states, trans



def seq_ids(pool: np.ndarray, offs: np.ndarray, pool2: np.ndarray, offs2: np.ndarray):
    """Sequences numbered by content: ``(ids, found)``: per sequence ``i`` of ``pool``
    (``pool[offs[i]:offs[i+1]]``) the number of its content in the order first met; per
    sequence of ``pool2``/``offs2`` the number of the equal one among the first, or -1."""
    mod = native.module()
    if mod is not None and hasattr(mod, "seq_ids"):
        return mod.seq_ids(np.ascontiguousarray(pool, dtype=np.int32),
                           np.ascontiguousarray(offs, dtype=np.int64),
                           np.ascontiguousarray(pool2, dtype=np.int32),
                           np.ascontiguousarray(offs2, dtype=np.int64))
    pl, ol = pool.tolist(), offs.tolist()
    seen: dict = {}
    ids = np.array([seen.setdefault(tuple(pl[ol[i]:ol[i + 1]]), len(seen))
                    for i in range(len(ol) - 1)], dtype=np.int64)
    pl2, ol2 = pool2.tolist(), offs2.tolist()
    found = np.array([seen.get(tuple(pl2[ol2[i]:ol2[i + 1]]), -1) for i in range(len(ol2) - 1)],
                     dtype=np.int64)
    return ids, found
