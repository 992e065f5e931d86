"""Lexer configurations no token can tell apart, and those few tokens can.

A token reads at most ``L`` bytes (the vocabulary's longest token). Two pending lexer
configurations ``(p, ∅)`` and ``(q, ∅)`` whose DFA states are equivalent up to depth
``k`` -- every byte string of at most ``k`` bytes leads both to states the scanner
observes alike (:meth:`Scanner.state_observations`) -- give every token of at most
``k`` bytes the same outcomes. (A state whose emission leaves a shadow is observed as
itself: where one run makes a shadow, the other is in the same state, and from there
on they are one run.) So:

* at depth ``L`` they are interchangeable: one is compiled, the other is an *alias*
  of it (``ParserDWA.alias``). Inside a string of at most 300 characters, the states
  with more than 128 characters left are all one;
* at a small depth ``h`` (the *base horizon*: beyond it only a small share of the
  vocabulary is longer) they differ only on the tokens longer than ``h``: a
  configuration is started on its class's representative and compiles those long
  tokens only (``ParserDWA.add_config_on_base``) -- or only the tokens longer than the
  deepest of a few depths between ``h`` and ``L`` at which it still agrees with the
  representative (:meth:`ConfigClasses.depth`: inside a counted string with 100
  characters left, the tokens longer than 96 bytes).

Where a lexeme is complete and can still grow (a run of counted blanks, a number), the
state is observed as itself (its emission leaves it as a shadow), so no class holds two such
states. Many of them still differ on few tokens: the blanks after ``,`` counted 3 and 7 differ on
the tokens with a long run of blanks only. Their *weak* classes (observations without that
identity, refined to :data:`WEAK_DEPTH`) propose a base, the class's least state
(:meth:`ConfigClasses.weak_base`); the build checks the proposal exactly (a joint walk of
the token trie, :meth:`TerminalCompiler.diff_outcomes`) and starts the configuration on it
when few tokens differ.

The equivalences are a Moore refinement stopped after ``L`` rounds (or when it stops
changing). Only the DFA's states are looked at, never the tokens: it costs the lexer DFA's size
times the rounds. A counted repetition ``x{0,N}`` with ``N`` far beyond ``L`` thus
compiles about ``L`` states per state of ``x``, not ``N``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .terminal import group_rows

log = logging.getLogger("stackmask")


#: rounds of refinement of the weak classes (observations without the identity of
#: growable states): a proposal must agree on every byte string of this many bytes
WEAK_DEPTH = 2


def base_horizon(lengths: np.ndarray, share: float) -> int:
    """The smallest ``h`` such that at most ``share`` of the tokens (``lengths``: their
    byte lengths) are longer than ``h``."""
    if not len(lengths):
        return 0
    srt = np.sort(lengths)
    return int(srt[max(0, int(np.ceil(len(srt) * (1 - share))) - 1)])


class ConfigClasses:
    """Representatives of the DFA states at two depths (see the module doc).

    ``alias_rep[q]`` / ``base_rep[q]``: the least state of ``q``'s class at depth ``L`` /
    ``h``, for a state in a class of two or more; -1 otherwise. ``seeds``: when some
    class has two or more, every state that some byte string reaches from a mode start
    (their configurations without shadows are compiled, aliased or started on a base:
    the short tokens of a configuration that is not walked itself lead to such states,
    so a walk's ends would miss some)."""

    def __init__(self, scanner, max_len: int, horizon: int):
        t0 = time.perf_counter()
        self.scanner = scanner
        self.max_len = int(max_len)
        self.horizon = min(int(horizon), self.max_len)
        dfa = scanner.dfa
        n = dfa.n_states
        self.alias_rep = np.full(n, -1, dtype=np.int64)
        self.base_rep = np.full(n, -1, dtype=np.int64)
        self.weak_rep = np.full(n, -1, dtype=np.int64)
        self.seeds: list[int] = []
        self.rounds = 0
        self.depths: tuple = ()
        self._parts: list = []
        if n >= 2:
            obs = scanner.state_observations()
            ids: dict = {}
            cls = np.fromiter((ids.setdefault(o, len(ids)) for o in obs), dtype=np.int64, count=n)
            reps = scanner.byte_representatives
            succ = np.asarray(dfa.trans)[:, reps].astype(np.int64)   # states x classes of bytes
            succ[succ < 0] = n                  # dead: a class of its own
            # the depths between the horizon and L at which a configuration on a root
            # may agree with it, each about a third deeper (15, 20, 26, 34, ...)
            ds, d = [], self.horizon
            while d < self.max_len:
                ds.append(d)
                d = max(d + 1, d + d // 3)
            self.depths = tuple(ds)
            parts, self.rounds = refine(cls, succ, self.depths + (self.max_len,))
            base, cls = parts[self.horizon], parts[self.max_len]
            self._parts = [parts[d] for d in self.depths]
            self._reps(cls, self.alias_rep)
            self._reps(base, self.base_rep)
            if (self.base_rep >= 0).any():
                self.seeds = _reachable(np.asarray(dfa.trans), scanner.mode_starts)
            self._weak(obs, succ)
        self.seconds = time.perf_counter() - t0
        log.debug("stackmask: configuration classes: %d of %d DFA states alias another, %d "
                  "start on a base (depth %d and %d, %d rounds, %.3f s)",
                  int(np.count_nonzero((self.alias_rep >= 0) & (self.alias_rep != np.arange(n)))),
                  n, int(np.count_nonzero((self.base_rep >= 0) & (self.base_rep != np.arange(n)))),
                  self.max_len, self.horizon, self.rounds, self.seconds)

    def _weak(self, obs: list, succ: np.ndarray) -> None:
        """``weak_rep``: per growable complete state (observed as itself; ``obs``: the
        scanner's state observations) that is neither an alias nor started on a class
        base, the least such state of its weak class, for classes of two or more such
        states; -1 otherwise. (Other states are in a class with the states they agree
        with already.)"""
        n = len(succ)
        ids: dict = {}
        cls = np.fromiter((ids.setdefault(o[:4], len(ids)) for o in obs), dtype=np.int64, count=n)
        grows = np.fromiter((o[4] >= 0 for o in obs), dtype=bool, count=n)
        if not grows.any():
            return
        weak = refine(cls, succ, (WEAK_DEPTH,))[0][WEAK_DEPTH]
        own = np.arange(n)
        whole = grows & ((self.alias_rep < 0) | (self.alias_rep == own)) & \
            ((self.base_rep < 0) | (self.base_rep == own))
        sub = np.flatnonzero(whole)
        rep = np.full(len(sub), -1, dtype=np.int64)        # indices into ``sub``
        self._reps(weak[sub], rep)
        got = rep >= 0
        self.weak_rep[sub[got]] = sub[rep[got]]

    @staticmethod
    def _reps(cls: np.ndarray, out: np.ndarray) -> None:
        """``out[q]``: the least state of ``q``'s class (block ids ``cls``), for the states
        of classes of two or more."""
        order = np.argsort(cls, kind="stable")   # by class, then state
        c = cls[order]
        start = np.flatnonzero(np.concatenate([[True], c[1:] != c[:-1]]))
        size = np.diff(np.append(start, len(c)))
        rep = np.repeat(order[start], size)
        multi = np.repeat(size >= 2, size)
        out[order[multi]] = rep[multi]

    def _of(self, table: np.ndarray, cfg: int) -> int | None:
        d, shadows = self.scanner.config(cfg)
        if d < 0 or shadows:
            return None
        r = int(table[d])
        if r < 0 or r == d:
            return None
        return self.scanner.intern(r, frozenset())

    def alias(self, cfg: int) -> int | None:
        """The configuration ``cfg`` is an alias of (another), or None."""
        return self._of(self.alias_rep, cfg)

    def base(self, cfg: int) -> int | None:
        """The configuration ``cfg`` is started on (its class's at the base horizon; the
        tokens longer than the horizon are its own), or None."""
        return self._of(self.base_rep, cfg)

    def weak_base(self, cfg: int) -> int | None:
        """A configuration to try starting ``cfg`` on (:meth:`TerminalCompiler.diff_outcomes`
        decides): the least state of its weak class, or None (``cfg`` is that state, or
        is in no weak class of two or more)."""
        return self._of(self.weak_rep, cfg)

    def depth(self, cfg: int, base: int) -> int:
        """The deepest of :attr:`depths` at which ``cfg`` and its base (:meth:`base`) are
        in one class: every token of at most that many bytes has the same outcomes in
        both (the horizon at least)."""
        d, _ = self.scanner.config(cfg)
        b, _ = self.scanner.config(base)
        best = self.horizon
        for k, part in zip(self.depths, self._parts):
            if part[d] != part[b]:
                break
            best = k
        return best

    def is_root(self, cfg: int) -> bool:
        """Whether ``cfg`` is the base of its class or of its weak class (it must not
        start on another)."""
        d, shadows = self.scanner.config(cfg)
        return d >= 0 and not shadows and (int(self.base_rep[d]) == d or int(self.weak_rep[d]) == d)

    def root_of(self, cfg: int) -> int:
        """``cfg``, or the root its class maps it to (a base must be a root)."""
        a = self.alias(cfg)
        if a is not None:
            cfg = a
        b = self.base(cfg)
        return cfg if b is None else b


def refine(cls0: np.ndarray, succ: np.ndarray, depths) -> tuple[dict, int]:
    """Moore refinement of the partition ``cls0`` (block ids per state) by the successors
    ``succ`` (states x symbols; ``len(succ)`` stands for "no successor", a block of its
    own): after round ``r`` two states share a block iff every string of up to ``r``
    symbols leads both to states of one block of ``cls0``. Returns ``({depth: block ids
    after that many rounds}, rounds run)``; it stops early once a round changes nothing.

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
    live = dst < m
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
            _, keep = np.unique(old, return_index=True)
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
                else:
                    keep_key = next(iter(by_key))
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


def _reachable(trans: np.ndarray, starts) -> list[int]:
    """The states that some byte string leads to from one of ``starts``."""
    n = len(trans)
    seen = np.zeros(n, dtype=bool)
    frontier = np.zeros(n, dtype=bool)
    frontier[list(starts)] = True
    while frontier.any():
        seen |= frontier
        nxt = trans[frontier].ravel()
        frontier = np.zeros(n, dtype=bool)
        frontier[nxt[nxt >= 0]] = True
        frontier &= ~seen
    return np.flatnonzero(seen).tolist()


__all__ = ["ConfigClasses", "base_horizon", "refine"]
