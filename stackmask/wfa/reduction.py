"""Reducing finite automata over an integer alphabet: trimming, partition refinement,
minimization, and grouping of equal rows and columns.

Tables are as in :mod:`.fsa` (which builds them: subset construction, product):
``trans`` of shape ``(n_states, n_classes)``, ``-1`` for "no move", state 0 the start.
Each function renumbers states canonically (breadth first, or in the order first met)
so that its compiled twin in ``_fsa.pxi`` numbers them alike. This module knows no
regex syntax, no bytes and no code points.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import native

__all__ = ["trim", "refine", "minimize", "group_rows", "row_labels", "column_classes"]


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
_HASH_ROWS = 512


def column_classes(table: np.ndarray) -> np.ndarray:
    """symbol -> class id for a ``(n, n_symbols)`` table: symbols whose columns are equal
    share a class; classes are numbered in the order of their first symbol.

    Each column is hashed (a random combination of its entries, in 64-bit integers that
    wrap), columns are grouped by their hashes, and each group is checked to be equal
    columns; a group that is not (a collision) is split exactly, so the classes do not
    depend on the hash. Sorting the columns as byte strings instead costs seconds for a
    lexer of tens of thousands of states. Not a matrix product: the BLAS's threads made
    that one 60-100 ms for a 3,400-state table when another process held the other core
    (7 ms single-threaded)."""
    t = np.asarray(table)
    weights = np.random.default_rng(0x5eed).integers(1, 2 ** 62, len(t), dtype=np.int64)
    n_sym = t.shape[1]
    # by blocks of rows, through one buffer: a 64-bit copy of the whole table (or a fresh
    # one per block) is new memory whose first touch costs more than the arithmetic
    buf = np.empty((min(_HASH_ROWS, len(t)), n_sym), dtype=np.int64)
    keys = np.zeros(n_sym, dtype=np.int64)
    for a in range(0, len(t), _HASH_ROWS):
        blk = t[a:a + _HASH_ROWS]
        prod = buf[:len(blk)]
        np.multiply(blk, weights[a:a + _HASH_ROWS, None], out=prod)   # wraps
        keys += prod.sum(axis=0)
    _, group = np.unique(keys, return_inverse=True)
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
