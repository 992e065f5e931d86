"""Weighted automata over the semiring of token sets.

Semiring: weights are sets of token ids; ``⊗ = ∩`` along a path, ``⊕ = ∪`` where paths merge,
``0 = ∅``, ``1 = {0, …, n_tokens-1}`` (the universe).  Input symbols are non-negative ints (in
stackmask: a lexer configuration, then LR stack state ids read top-down).

Semantics ("accept here" finals, early stopping)
-------------------------------------------------
A word is read left to right, **not necessarily to its end**.  A final weight is the set of
tokens accepted *at that point of the word*: after reading ``word[:i]`` (``0 <= i <= len``) a run
in state ``q`` contributes ``(running weight) ∩ final(q)`` and may stop there.  So

    WFA.weight(word) = ⋃_{i=0..len(word)} ⋃_{paths π reading word[:i]}
                          initial(src π) ∩ (∩ of π's edge weights) ∩ final(dst π)

    DWA.run(word)    = ⋃_{i : the run is alive after word[:i]}
                          (∩ of the first i edge weights) ∩ final(state_i)

This is how ``get_mask`` reads only the top of a stack: tokens are decided by the first few
stack entries, and the walk ends when the running weight is ∅ or there is no edge.  The whole
word need not be consumed; a word longer than any path is fine.

Wildcards
---------
* In a :class:`WFA`, an edge on :data:`ANY` matches *every* symbol (in addition to explicit edges
  on that symbol) — the natural nondeterministic wildcard.
* In a :class:`DWA`, the :data:`DEFAULT` edge is taken for any symbol *without its own edge*
  ("else").  An explicit edge may be *dead* — ``(DEAD, EMPTY_ID)`` — to stop the run on that
  symbol although a DEFAULT edge exists.

:func:`determinize` turns ANY edges into DEFAULT edges correctly.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator, Sequence

import numpy as np
from pyroaring import BitMap

from .weights import EMPTY_ID, UNIVERSE_ID, WeightLike, WeightTable

__all__ = [
    "ANY",
    "DEFAULT",
    "DEAD",
    "WFA",
    "DWA",
    "DeterminizationLimitError",
    "CyclicAutomatonError",
    "determinize",
    "minimize",
    "prune_accepted",
    "is_acyclic",
    "max_depth",
    "topological_order",
]

ANY = -1        # WFA wildcard symbol: matches every symbol
DEFAULT = -1    # DWA "else" edge key: taken for symbols without their own edge
DEAD = -1       # destination of a dead edge (weight EMPTY_ID): the run stops

_ONE = object()  # sentinel: "the universe" as a default weight argument


class DeterminizationLimitError(RuntimeError):
    """Raised when determinization would exceed its state limit (never truncates silently)."""


class CyclicAutomatonError(ValueError):
    """Raised by operations that require an acyclic automaton."""


def _wid(table: WeightTable, w) -> int:
    if w is _ONE or w is None:
        return UNIVERSE_ID
    if isinstance(w, int) and not isinstance(w, bool):
        raise TypeError("pass a token set (BitMap/iterable), not an int; use add_*_id for weight ids")
    return table.intern(w)


# ==========================================================================================
# Nondeterministic weighted automaton
# ==========================================================================================
class WFA:
    """Nondeterministic weighted automaton with token-set weights.

    Weights are interned in ``self.weights`` (a :class:`WeightTable`); the ``*_id`` methods
    take weight ids directly.  A weight argument of ``None`` means the universe (semiring 1).
    """

    def __init__(self, n_tokens: int, weights: WeightTable | None = None) -> None:
        if weights is None:
            weights = WeightTable(n_tokens)
        elif weights.n_tokens != n_tokens:
            raise ValueError("weight table universe differs from n_tokens")
        self.n_tokens = int(n_tokens)
        self.weights = weights
        self.initial: dict[int, int] = {}
        self.final: dict[int, int] = {}
        # per state: symbol (or ANY) -> list of (dst, weight id)
        self.trans: list[dict[int, list[tuple[int, int]]]] = []

    # -- construction ---------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return len(self.trans)

    def add_state(self, initial=False, final=False) -> int:
        """Add a state; ``initial``/``final`` may be False (none), True/None (universe) or a set."""
        q = len(self.trans)
        self.trans.append({})
        if initial is not False:
            self.set_initial(q, None if initial is True else initial)
        if final is not False:
            self.set_final(q, None if final is True else final)
        return q

    def add_states(self, n: int) -> list[int]:
        return [self.add_state() for _ in range(n)]

    def _check_state(self, q: int) -> None:
        if not 0 <= q < len(self.trans):
            raise IndexError(f"no state {q} (automaton has {len(self.trans)})")

    def set_initial(self, q: int, weight: WeightLike | None = None) -> None:
        """Make ``q`` initial with ``weight`` (∪ with an existing initial weight)."""
        self.set_initial_id(q, _wid(self.weights, weight))

    def set_initial_id(self, q: int, wid: int) -> None:
        self._check_state(q)
        self.initial[q] = self.weights.union(self.initial.get(q, EMPTY_ID), wid)

    def set_final(self, q: int, weight: WeightLike | None = None) -> None:
        """Accept ``weight`` at ``q`` (∪ with an existing final weight)."""
        self.set_final_id(q, _wid(self.weights, weight))

    def set_final_id(self, q: int, wid: int) -> None:
        self._check_state(q)
        self.final[q] = self.weights.union(self.final.get(q, EMPTY_ID), wid)

    def add_transition(self, src: int, symbol: int, dst: int, weight: WeightLike | None = None) -> None:
        """Add ``src --symbol/weight--> dst``; ``symbol`` may be :data:`ANY`."""
        self.add_transition_id(src, symbol, dst, _wid(self.weights, weight))

    def add_transition_id(self, src: int, symbol: int, dst: int, wid: int) -> None:
        self._check_state(src)
        self._check_state(dst)
        symbol = int(symbol)
        if symbol < 0 and symbol != ANY:
            raise ValueError(f"symbols are non-negative ints (or ANY), got {symbol}")
        if wid == EMPTY_ID:
            return  # an ∅ edge contributes nothing
        self.trans[src].setdefault(symbol, []).append((dst, wid))

    def transitions(self) -> Iterator[tuple[int, int, int, int]]:
        """All transitions as (src, symbol, dst, weight id)."""
        for q, d in enumerate(self.trans):
            for sym, lst in d.items():
                for dst, w in lst:
                    yield q, sym, dst, w

    @property
    def n_transitions(self) -> int:
        return sum(len(lst) for d in self.trans for lst in d.values())

    # -- semantics --------------------------------------------------------------------------
    def weight(self, word: Sequence[int]) -> BitMap:
        """⋃ over i and over paths reading ``word[:i]`` of initial ∩ edges ∩ final (see module doc)."""
        W = self.weights
        cur: dict[int, int] = {q: w for q, w in self.initial.items() if w != EMPTY_ID}
        acc = EMPTY_ID
        for i in range(len(word) + 1):
            for q, t in cur.items():
                f = self.final.get(q, EMPTY_ID)
                if f != EMPTY_ID:
                    acc = W.union(acc, W.intersect(t, f))
            if i == len(word) or not cur:
                break
            sym = word[i]
            nxt: dict[int, int] = {}
            for q, t in cur.items():
                d = self.trans[q]
                for key in (sym, ANY):
                    for dst, w in d.get(key, ()):
                        v = W.intersect(t, w)
                        if v != EMPTY_ID:
                            nxt[dst] = W.union(nxt.get(dst, EMPTY_ID), v)
            cur = nxt
        return BitMap(W.get(acc))

    def is_acyclic(self) -> bool:
        succ = [{dst for lst in d.values() for dst, _ in lst} for d in self.trans]
        return topological_order(range(len(self.trans)), succ) is not None

    def stats(self) -> dict:
        return {
            "n_states": self.n_states,
            "n_transitions": self.n_transitions,
            "n_initial": len(self.initial),
            "n_final": sum(1 for w in self.final.values() if w != EMPTY_ID),
            "n_weights": len(self.weights),
        }

    def __repr__(self) -> str:
        return f"<WFA {self.n_states} states, {self.n_transitions} transitions>"


# ==========================================================================================
# Deterministic weighted automaton
# ==========================================================================================
class DWA:
    """Deterministic weighted automaton: per state a dict ``symbol -> (dst, weight id)``.

    The key :data:`DEFAULT` holds the optional else-edge.  ``final[state]`` is the weight id
    accepted at that state.  Start state: ``self.start``.  Weights are interned in
    ``self.weights``.
    """

    __slots__ = ("weights", "edges", "final", "start", "history", "__weakref__")

    def __init__(self, weights: WeightTable) -> None:
        self.weights = weights
        self.edges: list[dict[int, tuple[int, int]]] = []
        self.final: list[int] = []
        self.start = 0
        self.history: list[dict] = []

    @property
    def n_tokens(self) -> int:
        return self.weights.n_tokens

    # -- construction ---------------------------------------------------------------------
    def add_state(self, final: int = EMPTY_ID) -> int:
        """Add a state with final weight id ``final``."""
        self.edges.append({})
        self.final.append(int(final))
        return len(self.edges) - 1

    def set_final(self, state: int, wid: int) -> None:
        self.final[state] = int(wid)

    def set_edge(self, src: int, symbol: int, dst: int, wid: int) -> None:
        """Set the edge on ``symbol`` (or :data:`DEFAULT`); ``(DEAD, EMPTY_ID)`` is a dead edge."""
        symbol = int(symbol)
        if symbol < 0 and symbol != DEFAULT:
            raise ValueError(f"symbols are non-negative ints (or DEFAULT), got {symbol}")
        if dst != DEAD and not 0 <= dst < len(self.edges):
            raise IndexError(f"no state {dst}")
        self.edges[src][symbol] = (int(dst), int(wid))

    def set_default(self, src: int, dst: int, wid: int) -> None:
        self.set_edge(src, DEFAULT, dst, wid)

    # -- reading -------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return len(self.edges)

    @property
    def n_edges(self) -> int:
        return sum(len(d) for d in self.edges)

    def step(self, state: int, symbol: int) -> tuple[int, int] | None:
        """``(dst, weight id)`` taken from ``state`` on ``symbol`` or None (no edge).

        A returned edge with weight ``EMPTY_ID`` (e.g. a dead edge) stops the run too.
        """
        d = self.edges[state]
        e = d.get(symbol)
        if e is None:
            e = d.get(DEFAULT)
        return e

    def walk(self, word: Sequence[int]) -> list[tuple[int, int]]:
        """The run as a list ``[(state_0, UNIVERSE_ID), (state_1, w_1), …]`` while alive.

        The state sequence determines :meth:`run`'s result: a key for memoizing masks.
        """
        s = self.start
        out = [(s, UNIVERSE_ID)]
        for sym in word:
            e = self.step(s, sym)
            if e is None:
                break
            dst, w = e
            if w == EMPTY_ID or dst == DEAD:
                break
            s = dst
            out.append((s, w))
        return out

    def run_id(self, word: Sequence[int]) -> int:
        """:meth:`run` computed on interned ids (memoized set algebra); returns a weight id."""
        W = self.weights
        s = self.start
        running = UNIVERSE_ID
        acc = W.intersect(running, self.final[s])
        for sym in word:
            e = self.step(s, sym)
            if e is None:
                break
            s, w = e
            running = W.intersect(running, w)
            if running == EMPTY_ID or s == DEAD:
                break
            f = self.final[s]
            if f != EMPTY_ID:
                acc = W.union(acc, W.intersect(running, f))
        return acc

    def run(self, word: Sequence[int]) -> BitMap:
        """Tokens accepted reading ``word`` (see the module docstring for the semantics)."""
        W = self.weights
        s = self.start
        running = BitMap(W.universe)
        acc = BitMap(W.get(self.final[s]))
        for sym in word:
            e = self.step(s, sym)
            if e is None:
                break
            s, w = e
            if w == EMPTY_ID or s == DEAD:
                break
            if w != UNIVERSE_ID:
                running &= W.get(w)
                if not running:
                    break
            f = self.final[s]
            if f != EMPTY_ID:
                acc |= running & W.get(f)
        return acc

    def run_dense(self, word: Sequence[int], n_bits: int | None = None) -> np.ndarray:
        """:meth:`run` as a packed int32 mask (bit ``i % 32`` of word ``i // 32``).

        Uses the per-weight dense cache; stops as soon as the running weight is ∅.
        Returns a fresh array the caller may modify.
        """
        W = self.weights
        nb = W.n_tokens if n_bits is None else int(n_bits)
        s = self.start
        running = W.dense(UNIVERSE_ID, nb)      # read-only cached; replaced on the first ∩
        owned = False
        acc = W.dense(self.final[s], nb).copy()
        tmp = None
        for sym in word:
            e = self.step(s, sym)
            if e is None:
                break
            s, w = e
            if w == EMPTY_ID or s == DEAD:
                break
            if w != UNIVERSE_ID:
                if owned:
                    np.bitwise_and(running, W.dense(w, nb), out=running)
                else:
                    running = np.bitwise_and(running, W.dense(w, nb))
                    owned = True
                if not running.any():
                    break
            f = self.final[s]
            if f != EMPTY_ID:
                if f == UNIVERSE_ID:
                    np.bitwise_or(acc, running, out=acc)
                else:
                    if tmp is None:
                        tmp = np.empty_like(acc)
                    np.bitwise_and(running, W.dense(f, nb), out=tmp)
                    np.bitwise_or(acc, tmp, out=acc)
        return acc

    # -- structure --------------------------------------------------------------------------
    def successors(self, state: int) -> set[int]:
        return {dst for dst, w in self.edges[state].values() if dst != DEAD and w != EMPTY_ID}

    def reachable(self) -> list[int]:
        """States reachable from the start, in BFS order (start first)."""
        seen = {self.start}
        order = [self.start]
        dq = deque(order)
        while dq:
            s = dq.popleft()
            for dst in self.successors(s):
                if dst not in seen:
                    seen.add(dst)
                    order.append(dst)
                    dq.append(dst)
        return order

    def topo_order(self) -> list[int] | None:
        """Reachable states in topological order (start first), or None if there is a cycle."""
        states = self.reachable()
        return topological_order(states, {s: self.successors(s) for s in states})

    def is_acyclic(self) -> bool:
        return self.topo_order() is not None

    def max_depth(self) -> int:
        """Longest path from the start (the most symbols a run can read); cyclic: raises."""
        order = self.topo_order()
        if order is None:
            raise CyclicAutomatonError("max_depth: the DWA has a cycle (unbounded depth)")
        depth: dict[int, int] = {}
        for s in reversed(order):
            depth[s] = max((1 + depth[d] for d in self.successors(s)), default=0)
        return depth[self.start]

    def stats(self) -> dict:
        order = self.topo_order()
        n_default = sum(1 for d in self.edges if DEFAULT in d)
        n_dead = sum(1 for d in self.edges for dst, w in d.values() if dst == DEAD or w == EMPTY_ID)
        st = {
            "n_states": self.n_states,
            "n_reachable": len(self.reachable()),
            "n_edges": self.n_edges,
            "n_default_edges": n_default,
            "n_dead_edges": n_dead,
            "n_final": sum(1 for f in self.final if f != EMPTY_ID),
            "n_weights": len(self.weights),
            "acyclic": order is not None,
            "max_depth": self.max_depth() if order is not None else None,
        }
        if self.history:
            st["history"] = list(self.history)
        return st

    def copy(self) -> "DWA":
        d = DWA(self.weights)
        d.edges = [dict(e) for e in self.edges]
        d.final = list(self.final)
        d.start = self.start
        d.history = list(self.history)
        return d

    def __repr__(self) -> str:
        return f"<DWA {self.n_states} states, {self.n_edges} edges>"


def topological_order(states: Iterable[int], succ) -> list[int] | None:
    """Topological order of ``states`` (DFS post-order reversed) or None on a cycle."""
    WHITE, GREY, BLACK = 0, 1, 2
    color: dict[int, int] = {}
    post: list[int] = []
    for root in states:
        if color.get(root, WHITE) != WHITE:
            continue
        color[root] = GREY
        stack = [(root, iter(succ[root]))]
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt in it:
                c = color.get(nxt, WHITE)
                if c == GREY:
                    return None
                if c == WHITE:
                    color[nxt] = GREY
                    stack.append((nxt, iter(succ[nxt])))
                    advanced = True
                    break
            if not advanced:
                color[node] = BLACK
                post.append(node)
                stack.pop()
    post.reverse()
    return post


def is_acyclic(a: "DWA | WFA") -> bool:
    return a.is_acyclic()


def max_depth(dwa: DWA) -> int:
    return dwa.max_depth()


# ==========================================================================================
# Determinization
# ==========================================================================================
def determinize(wfa: WFA, max_states: int = 1_000_000, prune: bool = False) -> DWA:
    """Weighted subset construction for the (∪, ∩) lattice semiring.

    A DWA state is a map ``nfa_state -> token set`` (the tokens for which some path reaches
    that NFA state), interned by its value.  On symbol ``a`` the successor map is
    ``q' -> ⋃_q map[q] ∩ w(q, a, q')`` (explicit ``a`` edges and ANY edges); the DWA edge weight
    is the ∪ of the successor's values; the final weight is ``⋃_q map[q] ∩ final[q]``.  Symbols
    on which no member state has an explicit edge follow the DEFAULT edge, built from the ANY
    edges alone.

    With ``prune=True`` the tokens accepted at a state are not carried further (the successor
    is computed from ``map[q] \\ final(map)``); :meth:`DWA.run` is the same (see
    :func:`prune_accepted`).  Runs die earlier, but the pruned maps collide less, so this often
    gives *more* states: on a random 125-state layered WFA over 151k tokens, 6.8k states after
    minimization vs 4.5k for ``minimize(prune_accepted(determinize(w)))`` — prefer the latter.

    Terminates on every input (the weights live in the finite Boolean algebra generated by the
    WFA's weights), but may blow up: more than ``max_states`` DWA states raises
    :class:`DeterminizationLimitError`.  The shared weight table is ``wfa.weights``.
    """
    W = wfa.weights
    trans = wfa.trans
    finals = wfa.final
    dwa = DWA(W)
    index: dict[tuple[tuple[int, int], ...], int] = {}
    maps: list[tuple[tuple[int, int], ...]] = []

    def intern_state(m: dict[int, int]) -> int:
        key = tuple(sorted(m.items()))
        sid = index.get(key)
        if sid is None:
            sid = len(maps)
            if sid >= max_states:
                raise DeterminizationLimitError(
                    f"determinize: more than {max_states} DWA states (limit max_states={max_states}); "
                    f"{len(maps)} states built so far, "
                    f"from a WFA with {wfa.n_states} states and {wfa.n_transitions} transitions"
                )
            index[key] = sid
            maps.append(key)
            fin = EMPTY_ID
            for q, t in key:
                f = finals.get(q, EMPTY_ID)
                if f != EMPTY_ID:
                    fin = W.union(fin, W.intersect(t, f))
            dwa.add_state(fin)
        return sid

    start = {q: w for q, w in wfa.initial.items() if w != EMPTY_ID}
    dwa.start = intern_state(start)

    def successor(items, sym_keys) -> dict[int, int]:
        nxt: dict[int, int] = {}
        for q, t in items:
            d = trans[q]
            for key in sym_keys:
                for dst, w in d.get(key, ()):
                    v = W.intersect(t, w)
                    if v != EMPTY_ID:
                        nxt[dst] = W.union(nxt.get(dst, EMPTY_ID), v)
        return nxt

    def edge_to(nxt: dict[int, int]) -> tuple[int, int]:
        wt = EMPTY_ID
        for v in nxt.values():
            wt = W.union(wt, v)
        return intern_state(nxt), wt

    sid = 0
    while sid < len(maps):
        key = maps[sid]
        if prune:
            fin = dwa.final[sid]
            items = [(q, W.difference(t, fin)) for q, t in key]
            items = [(q, t) for q, t in items if t != EMPTY_ID]
        else:
            items = list(key)
        edges = dwa.edges[sid]
        symbols: set[int] = set()
        for q, _ in items:
            symbols.update(trans[q].keys())
        symbols.discard(ANY)
        dflt_map = successor(items, (ANY,))
        dflt = edge_to(dflt_map) if dflt_map else None
        if dflt is not None:
            edges[DEFAULT] = dflt
        for sym in sorted(symbols):
            nxt = successor(items, (sym, ANY))
            if not nxt:
                continue          # ⊇ the DEFAULT successor, so there is no DEFAULT edge either
            e = edge_to(nxt)
            if e != dflt:
                edges[sym] = e
        sid += 1
    dwa.history.append({"op": "determinize", "wfa_states": wfa.n_states, "states": dwa.n_states,
                        "edges": dwa.n_edges, "prune": prune})
    return dwa


# ==========================================================================================
# Minimization and pruning
# ==========================================================================================
def _normalize_edges(edges: dict[int, tuple[int, int]], cls) -> tuple:
    """Canonical edge signature of a state given ``cls(dst) -> class id or None (useless)``.

    Empty-weight edges and edges into useless states become dead; a dead DEFAULT is dropped;
    a dead explicit edge is kept only when a live DEFAULT exists; explicit edges equal to the
    DEFAULT edge are dropped.
    """
    dflt = None
    e = edges.get(DEFAULT)
    if e is not None:
        dst, w = e
        c = cls(dst) if (dst != DEAD and w != EMPTY_ID) else None
        if c is not None:
            dflt = (c, w)
    out = []
    for sym, (dst, w) in edges.items():
        if sym == DEFAULT:
            continue
        c = cls(dst) if (dst != DEAD and w != EMPTY_ID) else None
        if c is None:
            if dflt is not None:
                out.append((sym, (DEAD, EMPTY_ID)))
            continue
        if (c, w) == dflt:
            continue
        out.append((sym, (c, w)))
    out.sort()
    return dflt, tuple(out)


def minimize(dwa: DWA) -> DWA:
    """Minimize an acyclic DWA (bottom-up merging of structurally equal states).

    Works on the states reachable from the start, in reverse topological order: states that
    can never accept anything are removed (edges into them become dead / disappear); then two
    states merge when they have the same final weight id and the same normalized outgoing edges
    ``symbol -> (weight id, merged dst)`` including DEFAULT (explicit edges equal to DEFAULT
    are dropped).  Preserves :meth:`DWA.run`.  The result shares ``dwa.weights``; its start is
    state 0 and its states are numbered in BFS order.  Sizes before/after are appended to
    ``result.history``.  Raises :class:`CyclicAutomatonError` on a cyclic DWA.
    """
    order = dwa.topo_order()
    if order is None:
        raise CyclicAutomatonError("minimize: the DWA is cyclic; only acyclic DWAs are supported")
    cls: dict[int, int] = {}          # old state -> class (absent: useless)
    sigs: dict[tuple, int] = {}
    class_sig: list[tuple] = []
    for s in reversed(order):
        dflt, explicit = _normalize_edges(dwa.edges[s], cls.get)
        fin = dwa.final[s]
        if fin == EMPTY_ID and dflt is None and not any(dst != DEAD for _, (dst, _) in explicit):
            continue                   # useless: accepts nothing on any word
        sig = (fin, dflt, explicit)
        c = sigs.get(sig)
        if c is None:
            c = sigs[sig] = len(class_sig)
            class_sig.append(sig)
        cls[s] = c

    out = DWA(dwa.weights)
    out.history = list(dwa.history)
    start_c = cls.get(dwa.start)
    if start_c is None:
        out.add_state(EMPTY_ID)
    else:
        # renumber classes in BFS order from the start class
        new_id = {start_c: 0}
        bfs = [start_c]
        i = 0
        while i < len(bfs):
            fin, dflt, explicit = class_sig[bfs[i]]
            targets = ([dflt[0]] if dflt else []) + [c for _, (c, _) in explicit if c != DEAD]
            for c in targets:
                if c not in new_id:
                    new_id[c] = len(bfs)
                    bfs.append(c)
            i += 1
        for c in bfs:
            fin, dflt, explicit = class_sig[c]
            s = out.add_state(fin)
            d = out.edges[s]
            if dflt is not None:
                d[DEFAULT] = (new_id[dflt[0]], dflt[1])
            for sym, (dc, w) in explicit:
                d[sym] = (DEAD, EMPTY_ID) if dc == DEAD else (new_id[dc], w)
    out.start = 0
    out.history.append({"op": "minimize", "states_before": dwa.n_states, "states_after": out.n_states,
                        "edges_before": dwa.n_edges, "edges_after": out.n_edges})
    return out


def prune_accepted(dwa: DWA) -> DWA:
    """Subtract each state's final weight from its outgoing edge weights.

    Tokens already accepted at a state need not be carried further: the result has the same
    :meth:`DWA.run` for every word (a token accepted later along the path was accepted at the
    first point it was accepted) and its runs die earlier.  Edges that become ∅ are removed,
    or made dead when a live DEFAULT edge would otherwise take their symbol.  Returns a new DWA
    sharing ``dwa.weights``.
    """
    W = dwa.weights
    out = dwa.copy()
    for s, edges in enumerate(out.edges):
        f = out.final[s]
        if f == EMPTY_ID or not edges:
            continue
        new: dict[int, tuple[int, int]] = {}
        e = edges.get(DEFAULT)
        has_dflt = False
        if e is not None:
            dst, w = e
            w2 = W.difference(w, f)
            if w2 != EMPTY_ID and dst != DEAD:
                new[DEFAULT] = (dst, w2)
                has_dflt = True
        for sym, (dst, w) in edges.items():
            if sym == DEFAULT:
                continue
            w2 = W.difference(w, f) if dst != DEAD else EMPTY_ID
            if w2 == EMPTY_ID:
                if has_dflt:
                    new[sym] = (DEAD, EMPTY_ID)
            else:
                new[sym] = (dst, w2)
        out.edges[s] = new
    out.history.append({"op": "prune_accepted", "states": out.n_states, "edges_before": dwa.n_edges,
                        "edges_after": out.n_edges})
    return out
