"""The byte automaton toolkit of the lexer: NFA, DFA, determinization, trimming,
minimization, product.

Internally automata are handled over *byte equivalence classes*: the 256
byte values are partitioned into classes that no transition distinguishes, so
subset construction and minimization work on ``(n_states, n_classes)`` tables;
the public :class:`DFA` always has a full ``(n_states, 256)`` table. This module
knows no regex syntax and no grammar: :mod:`.regex` builds NFAs and terminal DFAs
with it, :mod:`.text` free-text DFAs, :mod:`.combined` the lexer automaton.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import GrammarError

#: Maximum number of DFA states of one terminal (during subset construction)
#: and of the combined lexer automaton (during the product construction).
MAX_DFA_STATES = 100_000

#: Maximum number of NFA states one terminal may need (after expanding bounded
#: repetition ``{m,n}``). Larger terminals are rejected with GrammarError.
MAX_NFA_STATES = 100_000


class TooManyStates(Exception):
    """Raised by :func:`determinize` past its ``max_states`` subsets."""


__all__ = ["ByteNFA", "DFA", "column_classes", "TooManyStates", "MAX_DFA_STATES", "MAX_NFA_STATES", "determinize",
           "minimize", "trim", "expand_classes", "product"]


# --------------------------------------------------------------------------
# NFA
# --------------------------------------------------------------------------

class ByteNFA:
    """An NFA over bytes with epsilon moves and a single final state.

    ``eps[s]`` lists epsilon successors, ``edges[s]`` lists ``(lo, hi, t)``
    byte-range moves. ``reluctant`` records that the pattern contained a
    reluctant quantifier (shortest-match semantics apply to the terminal)."""

    __slots__ = ("eps", "edges", "start", "final", "reluctant", "name", "label", "limit")

    def __init__(self, name: str = "", limit: int = MAX_NFA_STATES, label: str | None = None):
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.start = 0
        self.final = 0
        self.reluctant = False
        self.name = name
        self.label = label if label is not None else name
        self.limit = limit

    @property
    def n_states(self) -> int:
        return len(self.eps)

    def new(self) -> int:
        n = len(self.eps)
        if n >= self.limit:
            raise GrammarError(
                f"terminal {self.label!r} is too large: its automaton needs more than "
                f"{self.limit} NFA states (MAX_NFA_STATES; large bounded repetitions such as "
                f"x{{m,n}} are expanded)", name=self.name)
        self.eps.append([])
        self.edges.append([])
        return n


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


# --------------------------------------------------------------------------
# determinization
# --------------------------------------------------------------------------

def _byte_classes(boundaries: set[int]) -> np.ndarray:
    """byte -> class id, for classes delimited by ``boundaries`` (values in 1..255
    at which a new class starts)."""
    starts = np.zeros(256, dtype=np.int32)
    for b in boundaries:
        if 0 < b < 256:
            starts[b] = 1
    return np.cumsum(starts, dtype=np.int32)


def determinize(nfa: ByteNFA, max_states: int = MAX_DFA_STATES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Subset construction over byte classes (raises ``TooManyStates`` past
    ``max_states`` subsets).

    Returns ``(trans, byte_class, accepting)``: ``trans`` int32
    ``(n_states, n_classes)`` with -1 for no move (not yet trimmed), ``byte_class``
    int32 ``(256,)`` mapping bytes to classes, ``accepting`` bool ``(n_states,)``.
    State 0 is the start state.
    """
    n = nfa.n_states
    bounds: set[int] = set()
    for es in nfa.edges:
        for lo, hi, _ in es:
            bounds.add(lo)
            bounds.add(hi + 1)
    b2c = _byte_classes(bounds)
    b2c_l = b2c.tolist()
    n_classes = int(b2c[-1]) + 1

    # Only "important" states identify a subset: those with byte moves, and the final state.
    final = nfa.final
    edges = nfa.edges
    important = [bool(edges[s]) or s == final for s in range(n)]
    eps = nfa.eps
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
                for c in range(b2c_l[lo], b2c_l[hi] + 1):
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
    return trans, b2c, accepting


# --------------------------------------------------------------------------
# trimming and minimization
# --------------------------------------------------------------------------

def trim(trans: np.ndarray, accepting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the states reachable from state 0 that can reach an accepting
    state; renumber them in BFS order from 0. Returns ``(trans, old_index)``
    (``old_index[new] = old``). If state 0 cannot reach acceptance the result
    has no states."""
    n = trans.shape[0]
    if n == 0:
        return trans, np.zeros(0, dtype=np.int64)
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
    """Renumber states in BFS order from state 0, dropping unreachable ones."""
    n = trans.shape[0]
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


_MOORE_ROUNDS = 12


def _hopcroft(trans: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Coarsest refinement of the partition ``block`` that is compatible with
    the (partial) transition table ``trans``: Hopcroft's algorithm with
    splitters (block, class). Dead transitions (-1) form an implicit block that
    is never used as a splitter, so every initial block is a splitter."""
    n, C = trans.shape
    src, cls = np.nonzero(trans >= 0)
    dst = trans[src, cls].astype(np.int64)
    key = dst * C + cls
    order = np.argsort(key, kind="stable")
    key_s = key[order]
    src_list = src[order].tolist()
    ukeys, starts = np.unique(key_s, return_index=True)
    ends = np.append(starts[1:], len(key_s))
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
    # renumber blocks densely
    _, dense = np.unique(np.array(block_of, dtype=np.int64), return_inverse=True)
    return dense.reshape(-1).astype(np.int64)


def minimize(trans: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimize a trimmed DFA. ``trans`` ``(n, k)`` int with -1 for dead;
    ``labels`` ``(n,)`` ints giving the initial partition (states with different
    labels are never merged). Returns ``(trans, old_index)`` for the minimal
    automaton, numbered in BFS order from the block of state 0; ``old_index[new]``
    is one original state of each block.

    A few rounds of Moore refinement (vectorized) settle most automata; if the
    partition is still changing, Hopcroft's algorithm finishes from there (Moore
    alone is quadratic on long chains such as ``a{30000}``)."""
    n = trans.shape[0]
    if n == 0:
        return trans, np.zeros(0, dtype=np.int64)
    trans = np.asarray(trans)
    _, block = np.unique(labels, return_inverse=True)
    block = block.astype(np.int64).reshape(-1)
    n_blocks = int(block.max()) + 1
    k = trans.shape[1] + 1
    converged = False
    for _round in range(_MOORE_ROUNDS):
        ext = np.append(block, -1).astype(np.int32)
        sig = np.empty((n, k), dtype=np.int32)
        sig[:, 0] = block
        sig[:, 1:] = ext[trans]
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


def column_classes(table: np.ndarray) -> np.ndarray:
    """byte -> class id for a ``(n, 256)`` table: bytes whose columns are equal share a
    class; classes are numbered in the order of their first byte.

    Each column is hashed twice (a random combination of its entries, one matrix
    product), columns are grouped by their hashes, and each group is checked to be equal
    columns; a group that is not (a collision) is split exactly. Sorting the 256 columns
    as byte strings instead costs seconds for a lexer of tens of thousands of states."""
    t = np.asarray(table)
    weights = np.random.default_rng(0x5eed).random((2, len(t)))
    keys = (weights @ t.astype(np.float64)).T                   # 256 x 2
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.reshape(-1)
    cls = np.full(256, -1, dtype=np.int64)
    n_cls = 0
    for b in range(256):
        if cls[b] >= 0:
            continue
        same = np.flatnonzero((group == group[b]) & (cls < 0))
        if len(same) > 1:
            same = same[(t[:, same] == t[:, [b]]).all(axis=0)]
        cls[same] = n_cls
        n_cls += 1
    return cls.astype(np.int32)


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

    states, trans = _product_bfs(gc, tuple(int(o) for o in offsets[:-1]))
    acc_sets = [frozenset(acc_l[x] for x in st if acc_l[x] >= 0) for st in states]
    label_ids: dict[frozenset, int] = {}
    labels = np.array([label_ids.setdefault(a, len(label_ids)) for a in acc_sets], dtype=np.int64)
    t, old = minimize(trans, labels)
    full = expand_classes(t, b2c)
    accepts = tuple(acc_sets[o] for o in old.tolist())
    return DFA(trans=full, accepts=accepts, n_states=full.shape[0])


def _product_bfs(gc: np.ndarray, start: tuple) -> tuple[list, np.ndarray]:
    """The reachable tuples of live component states from ``start`` (``gc``: the
    components' transitions side by side, states x byte classes, -1 dead), breadth first
    a level at a time: a level's successors for every class are gathered at once, made
    canonical (a tuple is its live states in ascending order: component order, since
    each component's states are a range of their own) and deduplicated with one sort;
    only the new tuples of the level are looked up one by one. Returns ``(tuples in id
    order, transitions)``; raises past ``MAX_DFA_STATES``."""
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
                    if len(states) > MAX_DFA_STATES:
                        raise GrammarError(f"the combined lexer automaton needs more than "
                                           f"{MAX_DFA_STATES} states (MAX_DFA_STATES)")
                uid[u] = q
            out[sel] = uid[inv]
            frontier = np.array(new_rows, dtype=np.int64).reshape(-1, w2) if new_rows else \
                np.zeros((0, w2), dtype=np.int64)
        else:
            frontier = np.zeros((0, 1), dtype=np.int64)
        rows.append(out.reshape(f, n_classes))
    trans = np.concatenate(rows).astype(np.int32) if rows else np.zeros((0, n_classes), np.int32)
    return states, trans
