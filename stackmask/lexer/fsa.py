"""Finite automata over an integer alphabet: the package's one subset construction,
trimming, partition refinement, minimization and product.

The alphabet is ``range(n_symbols)``: the 256 byte values for the lexer
(:mod:`.dfa`), code point atoms for the ECMA regex front end
(:mod:`stackmask.grammars.ecma_regex`). A DFA is a table ``trans`` of shape
``(n_states, n_symbols)``, ``-1`` for "no move", state 0 the start; internally
symbols no transition tells apart are grouped into classes, so the work is on
``(n_states, n_classes)`` tables. This module knows no regex syntax, no bytes and no
code points.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import native

__all__ = ["Nfa", "TooManyStates", "determinize", "trim", "refine", "minimize",
           "group_rows", "row_labels", "column_classes", "product_bfs", "product_arrays",
           "seq_ids"]


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
# trimming
# --------------------------------------------------------------------------

def trim(trans: np.ndarray, accepting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the states reachable from state 0 that can reach an accepting
    state; renumber them in BFS order from 0. Returns ``(trans, old_index)``
    (``old_index[new] = old``). If state 0 cannot reach acceptance the result
    has no states (the language is empty)."""
    n = trans.shape[0]
    if n == 0:
        return trans, np.zeros(0, dtype=np.int64)
    mod = native.module()
    if mod is not None and hasattr(mod, "coreachable"):
        alive_a = mod.coreachable(np.ascontiguousarray(trans, dtype=np.int32),
                                  np.ascontiguousarray(accepting, dtype=np.uint8))
        if not alive_a[0]:
            return np.zeros((0, trans.shape[1]), dtype=np.int32), np.zeros(0, dtype=np.int64)
        t = np.where(alive_a[np.maximum(trans, 0)] & (trans >= 0), trans, -1)
        return _renumber_bfs(t)
    src, _cls = np.nonzero(trans >= 0)
    dst = trans[src, _cls]
    order = np.argsort(dst, kind="stable")
    src_sorted = src[order].tolist()
    dst_sorted = dst[order]
    starts = np.searchsorted(dst_sorted, np.arange(n + 1)).tolist()
    alive = accepting.astype(bool).tolist()
    queue = deque(i for i in range(n) if alive[i])
    while queue:
        x = queue.popleft()
        for k in range(starts[x], starts[x + 1]):
            y = src_sorted[k]
            if not alive[y]:
                alive[y] = True
                queue.append(y)
    if not alive[0]:
        return np.zeros((0, trans.shape[1]), dtype=np.int32), np.zeros(0, dtype=np.int64)
    alive_a = np.array(alive, dtype=bool)
    t = np.where(alive_a[np.maximum(trans, 0)] & (trans >= 0), trans, -1)
    return _renumber_bfs(t)


def _renumber_bfs(trans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber states in BFS order from state 0 (symbols in order), dropping unreachable
    ones. Returns ``(trans, old_index)``."""
    n = trans.shape[0]
    mod = native.module()
    if mod is not None and hasattr(mod, "bfs_order") and n:
        old = mod.bfs_order(np.ascontiguousarray(trans, dtype=np.int32))
        mp = np.full(n + 1, -1, dtype=np.int32)
        mp[old] = np.arange(len(old), dtype=np.int32)
        return mp[trans[old]].astype(np.int32), old
    rows = trans.tolist()
    new_id = [-1] * n
    new_id[0] = 0
    order = [0]
    i = 0
    while i < len(order):
        for t in rows[order[i]]:
            if t >= 0 and new_id[t] < 0:
                new_id[t] = len(order)
                order.append(t)
        i += 1
    old = np.array(order, dtype=np.int64)
    mp = np.array(new_id + [-1], dtype=np.int32)
    out = mp[trans[old]]  # -1 indexes the appended -1
    return out.astype(np.int32), old


# --------------------------------------------------------------------------
# partition refinement and minimization
# --------------------------------------------------------------------------

def group_rows(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group the equal rows of the integer matrix ``m``: ``(order, bounds)`` with the rows
    ``order[bounds[u]:bounds[u + 1]]`` forming group ``u`` (ascending within a group).

    Each row is folded into one int64 code column by column (renumbering the codes densely
    when the next column would overflow), then the codes are sorted once: much cheaper than
    ``np.unique(axis=0)``, which sorts the rows as opaque byte strings."""
    n = len(m)
    code = np.zeros(n, dtype=np.int64)
    top = 1                                    # codes are < top
    for col in m.T:
        c = col.astype(np.int64)
        c -= c.min(initial=0)
        r = int(c.max(initial=0)) + 1
        if top * r >= 1 << 62:
            _, code = np.unique(code, return_inverse=True)
            code = code.reshape(-1).astype(np.int64)
            top = int(code.max(initial=0)) + 1
        code = code * r + c
        top *= r
    order = np.argsort(code, kind="stable")
    sc = code[order]
    starts = np.flatnonzero(np.concatenate([[True], sc[1:] != sc[:-1]])) if n else np.zeros(0, np.int64)
    return order, np.concatenate([starts, [n]]).astype(np.int64)



def row_labels(m: np.ndarray) -> np.ndarray:
    """Per row of the integer matrix ``m``, the id of its group of equal rows
    (:func:`group_rows`): an initial partition for :func:`minimize`."""
    order, bounds = group_rows(m)
    labels = np.empty(len(m), dtype=np.int64)
    for u in range(len(bounds) - 1):
        labels[order[bounds[u]:bounds[u + 1]]] = u
    return labels

def refine(cls0: np.ndarray, succ: np.ndarray, depths) -> tuple[dict, int]:
    """Moore refinement of the partition ``cls0`` (block ids per state) by the successors
    ``succ`` (states x symbols; ``-1`` or ``len(succ)`` stands for "no successor", a block
    of its own): after round ``r`` two states share a block iff every string of up to ``r``
    symbols leads both to states of one block of ``cls0``. Returns ``({depth: block ids
    after that many rounds}, rounds run)``; it stops early once a round changes nothing
    (then ``rounds run`` is below the deepest depth).

    Incremental (the idea of Hopcroft's algorithm, in rounds): only a state that changed
    block in the last round, or one of whose successors did, can change block in this
    one; every other state keeps its signature of the last round (its own block, its
    successors' blocks: ids that did not change), which its block stores. So a round
    costs the states near the last round's splits -- inside a counted string, a few per
    round -- not the automaton. A round with many such states is done whole."""
    m, k = succ.shape
    depths = sorted(set(int(d) for d in depths))
    out: dict = {}
    cls = np.asarray(cls0, dtype=np.int64).copy()
    if depths and depths[0] <= 0:
        for d in depths:
            if d <= 0:
                out[d] = cls.copy()
    if not m or depths[-1] <= 0:
        for d in depths:
            out.setdefault(d, cls.copy())
        return out, 0
    # predecessors of every state (CSR)
    src = np.repeat(np.arange(m), k)
    dst = succ.ravel()
    live = (dst >= 0) & (dst < m)
    src, dst = src[live], dst[live]
    order = np.argsort(dst, kind="stable")
    pred = src[order]
    ptr = np.searchsorted(dst[order], np.arange(m + 1))
    size: dict = {}
    sig: dict = {}              # block -> its members' signature in the last round (bytes)
    next_id = int(cls.max(initial=-1)) + 1
    moved = None                # states that changed block in the last round
    r = 0
    while r < depths[-1]:
        r += 1
        ext = np.append(cls, -1)
        if moved is not None:
            if not len(moved):
                r -= 1
                break                                   # stable: no later round changes
            starts, ends = ptr[moved], ptr[moved + 1]
            lens = ends - starts
            idx = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + \
                np.arange(int(lens.sum()))
            cand = np.union1d(moved, pred[idx])
        if moved is None or 4 * len(cand) > m:
            # a whole round: group every state by (block, successors' blocks); the first
            # group of each block keeps its id
            rows = np.column_stack([cls, ext[succ]])
            order, bounds = group_rows(rows)
            firsts = order[bounds[:-1]]
            old = cls[firsts]
            newid = np.full(len(firsts), -1, dtype=np.int64)
            # the largest group of each block keeps its id (as in Hopcroft's algorithm):
            # the states that move, and so the next round's candidates, are the smaller
            # parts (inside a counted string, a few per round instead of the whole chain)
            big = np.lexsort((-np.diff(bounds), old))
            keep = big[np.concatenate([[True], old[big][1:] != old[big][:-1]])]
            newid[keep] = old[keep]
            rest = np.flatnonzero(newid < 0)
            newid[rest] = next_id + np.arange(len(rest))
            next_id += len(rest)
            new = np.empty(m, dtype=np.int64)
            new[order] = np.repeat(newid, np.diff(bounds))
            moved = np.flatnonzero(new != cls)
            cls = new
            counts = np.diff(bounds).tolist()
            size = dict(zip(newid.tolist(), counts))
            sig = {b: rows[f].tobytes() for b, f in zip(newid.tolist(), firsts.tolist())}
        else:
            rows = np.column_stack([cls[cand], ext[succ[cand]]])
            groups: dict = {}
            buf = rows.tobytes()
            w = rows.itemsize * (k + 1)
            for q, b, j in zip(cand.tolist(), rows[:, 0].tolist(), range(0, len(buf), w)):
                groups.setdefault(b, {}).setdefault(buf[j:j + w], []).append(q)
            new = cls.copy()
            for b, by_key in groups.items():
                n_cand = sum(len(v) for v in by_key.values())
                if size[b] > n_cand:
                    keep_key = sig[b]          # the states not looked at stay, as they were
                else:                          # every member looked at: the largest group stays
                    keep_key = max(by_key, key=lambda key: len(by_key[key]))
                    sig[b] = keep_key
                for key, members in by_key.items():
                    if key == keep_key:
                        continue
                    new[members] = next_id
                    size[next_id] = len(members)
                    sig[next_id] = key
                    size[b] -= len(members)
                    next_id += 1
            moved = np.flatnonzero(new[cand] != cls[cand])
            moved = cand[moved]
            cls = new
        if r in depths:
            out[r] = cls.copy()
    for d in depths:
        out.setdefault(d, cls.copy())
    return out, r


_MOORE_ROUNDS = 12

#: states from which :func:`minimize` skips its Moore rounds (with the compiled extension)
_HOPCROFT_FIRST = 4096


def _preimages(trans: np.ndarray, mod=None) -> tuple:
    """The transitions of ``trans`` by target, as ``_native.hopcroft_refine`` reads them:
    ``(state_off, classes, starts, ends, sources)``; for target ``t`` the groups
    ``state_off[t]..state_off[t+1]``, one per class (ascending) reading into ``t``, each
    the range ``starts[g]..ends[g]`` of ``sources`` (ascending). In the compiled
    extension when ``mod`` has it (``_native.preimages``: counting sorts), else by one
    stable sort."""
    n, C = trans.shape
    if mod is not None and hasattr(mod, "preimages"):
        return mod.preimages(np.ascontiguousarray(trans, dtype=np.int32))
    src, cls = np.nonzero(trans >= 0)
    dst = trans[src, cls].astype(np.int64)
    key = dst * C + cls
    order = np.argsort(key, kind="stable")
    key_s = key[order]
    ukeys, starts = np.unique(key_s, return_index=True)
    ends = np.append(starts[1:], len(key_s)) if len(starts) else starts
    state_off = np.searchsorted(ukeys // C, np.arange(n + 1)).astype(np.int64)
    return (state_off, np.ascontiguousarray(ukeys % C), np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(ends, dtype=np.int64),
            np.ascontiguousarray(src[order], dtype=np.int64))


def _hopcroft(trans: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Coarsest refinement of the partition ``block`` that is compatible with
    the (partial) transition table ``trans``: Hopcroft's algorithm with
    splitters (block, class). Dead transitions (-1) form an implicit block that
    is never used as a splitter, so every initial block is a splitter.

    With the compiled extension the refinement runs there
    (``_native.hopcroft_refine``, over the same preimage arrays; blocks renumbered
    alike at the end, so both return the same array); this is the reference."""
    n, C = trans.shape
    mod = native.module()
    if mod is not None and hasattr(mod, "hopcroft_refine"):
        state_off, ucls, starts, ends, src_s = _preimages(trans, mod)
        blk = np.unique(np.asarray(block, dtype=np.int64), return_inverse=True)[1]
        blk = np.ascontiguousarray(blk.reshape(-1), dtype=np.int64)
        mod.hopcroft_refine(n, C, state_off, ucls, starts, ends, src_s, blk)
        return _first_seen_numbering(blk)
    state_off, ucls, starts, ends, src_s = _preimages(trans)
    ukeys = np.repeat(np.arange(n, dtype=np.int64), np.diff(state_off)) * C + ucls
    src_list = src_s.tolist()
    inv = dict(zip(ukeys.tolist(), zip(starts.tolist(), ends.tolist())))
    in_classes: list[list[int]] = [[] for _ in range(n)]
    for kk in ukeys.tolist():
        t, c = divmod(kk, C)
        in_classes[t].append(c)

    block_of = block.tolist()
    nb0 = int(block.max()) + 1
    members: list[set[int]] = [set() for _ in range(nb0)]
    for s_, b in enumerate(block_of):
        members[b].add(s_)
    work: list[int] = []
    in_work: set[int] = set()
    for b in range(nb0):
        ds: set[int] = set()
        for s_ in members[b]:
            ds.update(in_classes[s_])
        for d in ds:
            x = b * C + d
            work.append(x)
            in_work.add(x)
    while work:
        x = work.pop()
        in_work.discard(x)
        bsplit, c = divmod(x, C)
        pre: list[int] = []
        for t in members[bsplit]:
            r = inv.get(t * C + c)
            if r is not None:
                pre.extend(src_list[r[0]:r[1]])
        if not pre:
            continue
        touched: dict[int, list[int]] = {}
        for s_ in pre:
            lst = touched.get(block_of[s_])
            if lst is None:
                touched[block_of[s_]] = [s_]
            else:
                lst.append(s_)
        for y, ys in touched.items():
            my = members[y]
            if len(ys) == len(my):
                continue
            if 2 * len(ys) <= len(my):
                moved = ys
                my.difference_update(ys)
            else:
                yset = set(ys)
                moved = [s_ for s_ in my if s_ not in yset]
                members[y] = yset
            nb = len(members)
            members.append(set(moved))
            ds = set()
            for s_ in moved:
                block_of[s_] = nb
                ds.update(in_classes[s_])
            for d in ds:
                xx = nb * C + d
                if xx not in in_work:
                    work.append(xx)
                    in_work.add(xx)
    return _first_seen_numbering(np.array(block_of, dtype=np.int64))


def _first_seen_numbering(block: np.ndarray) -> np.ndarray:
    """``block`` renumbered densely in the order of each block's first state (a
    canonical name for the partition, whatever order the blocks were made in)."""
    _, first, inv = np.unique(block, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)]


def minimize(trans: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimize a trimmed DFA. ``trans`` ``(n, k)`` int with -1 for dead;
    ``labels`` ``(n,)`` ints giving the initial partition (states with different
    labels are never merged). Returns ``(trans, old_index)`` for the minimal
    automaton, numbered in BFS order from the block of state 0; ``old_index[new]``
    is one original state of each block.

    A few rounds of Moore refinement (vectorized) settle most automata; if the
    partition is still changing, Hopcroft's algorithm finishes from there (Moore
    alone is quadratic on long chains such as ``a{30000}``). These whole rounds are
    :func:`refine`'s without its bookkeeping (depth snapshots, incremental rounds),
    which costs several times more on the small automata of terminals."""
    n = trans.shape[0]
    if n == 0:
        return trans, np.zeros(0, dtype=np.int64)
    trans = np.asarray(trans)
    _, block = np.unique(labels, return_inverse=True)
    block = block.astype(np.int64).reshape(-1)
    n_blocks = int(block.max()) + 1
    k = trans.shape[1] + 1
    mod = native.module()
    if mod is not None and not hasattr(mod, "first_seen_rows"):
        mod = None
    converged = False
    # a large automaton goes straight to the compiled Hopcroft refinement: its whole
    # Moore rounds cost more than the refinement itself (a product lexer of 80,000
    # states, already minimal: 1.26 s with the rounds, 0.27 s without)
    rounds = 0 if (n >= _HOPCROFT_FIRST and mod is not None and hasattr(mod, "hopcroft_refine")) \
        else _MOORE_ROUNDS
    for _round in range(rounds):
        ext = np.append(block, -1).astype(np.int32)
        sig = np.empty((n, k), dtype=np.int32)
        sig[:, 0] = block
        sig[:, 1:] = ext[trans]
        if mod is not None:
            block = mod.first_seen_rows(sig)
            nb = int(block.max()) + 1
        else:
            keys = sig.view(np.dtype((np.void, 4 * k))).ravel().tolist()
            intern: dict[bytes, int] = {}
            block = np.array([intern.setdefault(x, len(intern)) for x in keys], dtype=np.int64)
            nb = len(intern)
        if nb == n_blocks:
            converged = True
            break
        n_blocks = nb
    if not converged:
        block = _hopcroft(trans, block)
        n_blocks = int(block.max()) + 1
    # quotient automaton
    rep = np.zeros(n_blocks, dtype=np.int64)
    rep[block[::-1]] = np.arange(n - 1, -1, -1)  # first state of each block
    ext = np.append(block, -1)
    q = ext[trans[rep]].astype(np.int32)
    # put the start block first, then BFS-renumber
    start = int(block[0])
    perm = np.arange(n_blocks)
    perm[0], perm[start] = start, 0
    inv = np.empty(n_blocks, dtype=np.int64)
    inv[perm] = np.arange(n_blocks)
    q = np.append(inv, -1)[q[perm]].astype(np.int32)
    rep = rep[perm]
    q2, old = _renumber_bfs(q)
    return q2, rep[old]


#: rows of a table hashed at a time by :func:`column_classes`
_HASH_ROWS = 2048


def column_classes(table: np.ndarray) -> np.ndarray:
    """symbol -> class id for a ``(n, n_symbols)`` table: symbols whose columns are equal
    share a class; classes are numbered in the order of their first symbol.

    Each column is hashed twice (a random combination of its entries, one matrix
    product), columns are grouped by their hashes, and each group is checked to be equal
    columns; a group that is not (a collision) is split exactly. Sorting the columns as
    byte strings instead costs seconds for a lexer of tens of thousands of states."""
    t = np.asarray(table)
    weights = np.random.default_rng(0x5eed).random((2, len(t)))
    n_sym = t.shape[1]
    # by blocks of rows: a float copy of the whole table is a fresh allocation of tens of
    # megabytes per call, whose first touch costs more than the product (page faults)
    keys = np.zeros((2, n_sym))
    for a in range(0, len(t), _HASH_ROWS):
        keys += weights[:, a:a + _HASH_ROWS] @ t[a:a + _HASH_ROWS].astype(np.float64)
    keys = keys.T                                               # n_symbols x 2
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.reshape(-1)
    cls = np.full(n_sym, -1, dtype=np.int64)
    cols = None                 # the table by columns, made once a group needs checking
    n_cls = 0
    for b in range(n_sym):
        if cls[b] >= 0:
            continue
        same = np.flatnonzero((group == group[b]) & (cls < 0))
        if len(same) > 1:
            if cols is None:    # (gathering a column of the row-major table is strided)
                cols = np.ascontiguousarray(t.T)
            same = same[(cols[same] == cols[b]).all(axis=1)]
        cls[same] = n_cls
        n_cls += 1
    return cls.astype(np.int32)


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
