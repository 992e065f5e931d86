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
  tokens only (``ParserDWA.add_config_on_base``).

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
        self.seeds: list[int] = []
        self.rounds = 0
        idx = np.arange(n)
        m = len(idx)
        if m >= 2:
            obs = scanner.state_observations()
            ids: dict = {}
            cls = np.fromiter((ids.setdefault(obs[q], len(ids)) for q in idx.tolist()),
                              dtype=np.int64, count=m)
            reps = scanner.byte_representatives
            succ = np.asarray(dfa.trans)[:, reps].astype(np.int64)   # states x classes of bytes
            succ[succ < 0] = m                  # dead: a class of its own
            base = cls if self.horizon == 0 else None
            n_cls = len(ids)
            for r in range(1, self.max_len + 1):
                ext = np.append(cls, -1)
                order, bounds = group_rows(np.column_stack([cls, ext[succ]]))
                new = np.empty(m, dtype=np.int64)
                new[order] = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
                self.rounds = r
                stable = len(bounds) - 1 == n_cls
                cls, n_cls = new, len(bounds) - 1
                if r == self.horizon:
                    base = cls
                if stable:
                    break
            if base is None:            # stable before the horizon
                base = cls
            self._reps(idx, cls, self.alias_rep)
            self._reps(idx, base, self.base_rep)
            if (self.base_rep >= 0).any():
                self.seeds = _reachable(np.asarray(dfa.trans), scanner.mode_starts)
        self.seconds = time.perf_counter() - t0
        log.debug("stackmask: configuration classes: %d of %d DFA states alias another, %d "
                  "start on a base (depth %d and %d, %d rounds, %.3f s)",
                  int(np.count_nonzero((self.alias_rep >= 0) & (self.alias_rep != np.arange(n)))),
                  n, int(np.count_nonzero((self.base_rep >= 0) & (self.base_rep != np.arange(n)))),
                  self.max_len, self.horizon, self.rounds, self.seconds)

    @staticmethod
    def _reps(idx: np.ndarray, cls: np.ndarray, out: np.ndarray) -> None:
        order = np.lexsort((idx, cls))           # by class, then state
        c = cls[order]
        first = np.concatenate([[True], c[1:] != c[:-1]])
        start = np.flatnonzero(first)
        size = np.diff(np.append(start, len(c)))
        rep = np.repeat(idx[order][start], size)
        multi = np.repeat(size >= 2, size)
        out[idx[order][multi]] = rep[multi]

    @property
    def active(self) -> bool:
        return bool(self.seeds)

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

    def is_root(self, cfg: int) -> bool:
        """Whether ``cfg`` is the base of its class (it must not start on another)."""
        d, shadows = self.scanner.config(cfg)
        return d >= 0 and not shadows and int(self.base_rep[d]) == d

    def root_of(self, cfg: int) -> int:
        """``cfg``, or the root its class maps it to (a base must be a root)."""
        a = self.alias(cfg)
        if a is not None:
            cfg = a
        b = self.base(cfg)
        return cfg if b is None else b


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


__all__ = ["ConfigClasses", "base_horizon"]
