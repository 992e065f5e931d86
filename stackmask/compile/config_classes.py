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

A configuration with shadows ``(d, S)`` is an alias of ``(d, S')`` when each shadow of
``S`` is equivalent to one of ``S'`` and back (:meth:`ConfigClasses.alias`): a shadow only
kills a run (its next state accepts), leaves it (no next state) or goes on, so two shadow
states that do the same on every byte string (a Moore refinement with "kills" and "leaves"
as the observations, run to the end: the end configurations' requirements read the
shadows beyond any token) give every token the same outcomes and every end the same
requirement. After a run of ``n`` counted blanks is emitted, its shadow kills on a blank or
a closer at every count below the bound: those ``n`` configurations are one.

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

from ..wfa.reduction import refine
from .token_index import base_horizon    # (a figure of the vocabulary: VocabIndex.horizon)

log = logging.getLogger("stackmask")


#: rounds of refinement of the weak classes (observations without the identity of
#: growable states): a proposal must agree on every byte string of this many bytes
WEAK_DEPTH = 2


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
        """The configuration ``cfg`` is an alias of (another), or None. With shadows: the
        configuration with the same lexeme and every shadow replaced by the least state
        its shadows are equivalent to (module doc)."""
        if not self.scanner.config(cfg)[1]:
            return self._of(self.alias_rep, cfg)
        r = self.scanner.shadow_canonical(cfg)       # (Scanner.shadow_classes)
        return None if r == cfg else r

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
