"""Terminal DWA: what every token does from one lexer configuration.

For a lexer configuration ``c`` reachable at a token boundary, every token's
bytes are run through the streaming scanner (:mod:`stackmask.lexer.scanner`).
Each surviving branch ends with

* the sequence of *emissions* the token completed (each emission a tuple of
  alternative terminal ids: a lexical ambiguity; ``IGNORE`` among them means
  "nothing for the parser"; emissions that are only ``IGNORE`` are dropped),
* the configuration it ends in, summarized by its **requirement**: what the
  parse stack must allow after the emissions for the head to be viable
  (the one-terminal lookahead of ``Constraint.viable``):

  - ``TRUE``: always viable (a clean lexeme boundary, or the pending lexeme
    can still become an ignored terminal);
  - ``(F, acc)``: viable iff the stack can shift some terminal of ``F`` after
    reductions, or (``acc``) the text can end here (an inhibited boundary);
  - ``(F, acc, em)`` (grammars with special-token terminals): also viable iff
    after the pending lexeme's emission ``em`` the stack can shift some
    special-token terminal (a special token may come next).

A token's *outcome* is ``(emissions, requirement)``. Tokens are grouped by
outcome (a token with several branches is in several groups); the groups are
the weights the parser side intersects with stack conditions.

Tokens are visited in byte order (``VocabIndex``, built once per vocabulary
and shared by all grammars) so tokens sharing a prefix share the scanner work
of that prefix, and a dead prefix skips its whole subtree (the walks are
:mod:`stackmask.compile.trie_walks`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import native
from ..wfa.reduction import group_rows
from ..lexer.scanner import IGNORE, Scanner, requirement
from .token_index import VocabIndex
from .trie_walks import diff_walk, trie_walk

def final_outcomes(scanner: Scanner, cfg: int) -> list:
    """Outcomes of ending the text in ``cfg`` (EOS): the pending lexeme's emission, then the
    stack must accept (requirement ``(∅, True)``)."""
    em = scanner.final_emission(cfg)
    if em is None:
        return []
    end = (frozenset(), True)
    if not em or em == (IGNORE,):
        return [((), end)]
    return [((em,), end)]


KILLED = -2        # shadow run: a longer match completed inside the token
GONE = -1          # shadow run: the shadow can no longer match


class NarrowRun(NamedTuple):
    """A DFA run from a state with few live first bytes, kept sparse (a whole-vocabulary
    array per such state was most of a generated schema's construction memory: shadows
    of counted blank runs read on the ~54,000 space-led tokens and kill nearly all)."""

    pos: np.ndarray         # int32, ascending: the tokens the run ends in a state on
    fin: np.ndarray         # int32: that state
    #: the tokens it KILLED: their positions (int32, ascending) where fewer than one per
    #: 32 tokens (most runs: then no pass over the vocabulary reads them), else packed
    #: bits over the vocabulary (``uint8``)
    killed: np.ndarray

    @staticmethod
    def killed_of(positions: np.ndarray, n: int) -> np.ndarray:
        """``killed`` for the ascending ``positions`` of a vocabulary of ``n`` tokens."""
        if 32 * len(positions) <= n:
            return positions.astype(np.int32)
        mask = np.zeros(n, dtype=bool)
        mask[positions] = True
        return np.packbits(mask)

    def killed_positions(self, n: int) -> np.ndarray:
        """The positions of the tokens it KILLED, ascending (int64)."""
        if self.killed.dtype != np.uint8:
            return self.killed.astype(np.int64)
        return np.flatnonzero(np.unpackbits(self.killed, count=n))

    def killed_at(self, pos: np.ndarray) -> np.ndarray:
        """Whether the run KILLED each token at ``pos`` (positions searched, or bits read in
        place)."""
        k = self.killed
        if k.dtype != np.uint8:
            if not len(k):
                return np.zeros(len(pos), dtype=bool)
            i = np.minimum(np.searchsorted(k, pos), len(k) - 1)
            return k[i] == pos
        return (k[pos >> 3] >> (7 - (pos & 7)).astype(np.uint8)) & 1 == 1


class TerminalCompiler:
    """Token outcomes per lexer configuration, factored to share work.

    A configuration ``(d, S)`` behaves like ``(d, ∅)`` except that its shadows
    ``S`` run on the token's bytes independently of the branches: a shadow that
    completes a match kills the token, the survivors join every branch's end
    configuration. So tokens are run once per pending DFA state ``d``, and each
    shadow state once, over the whole vocabulary (numpy, one gather per byte
    column); only the tokens that complete a lexeme from ``d`` are walked by the
    scanner itself (Python, over the token trie).
    """

    #: estimated bytes of a cache entry besides its numpy arrays
    ENTRY_BYTES = 300
    #: a walk's arrays are kept for the next configuration of its state up to this size:
    #: the large ones (a string body's counted states: ~1 MB each, hundreds per generated
    #: schema) were never read again, the small ones are most of the reuse
    KEEP_WALK_BYTES = 256 << 10

    def __init__(self, scanner: Scanner, index: VocabIndex, cache_bytes: int | None = None):
        self.scanner = scanner
        self.index = index
        self.cache_bytes = cache_bytes      # None: unbounded (an eager compile, which is
        self._cache_used = 0                # bounded by Limits.max_compile_memory_bytes)
        self._walks: dict = {}
        self._shadow_diffs: dict = {}    # live tokens (packed bits) -> their positions
        self._subtrees: dict = {}        # trie_walk memo: (first byte, branches) -> subtree result
        self._runs: dict = {}
        self._req: dict = {}
        self._advance_memo: dict = {}    # diff_walk: (branches, byte) -> branches
        mod = native.module()             # the compiled walks, or None (pure Python)
        self._native_walks = mod is not None
        self._walks_core = None          # their _native.BranchWalks (see walks_twin)
        self._run_twin = getattr(mod, "run_tokens", None) if mod is not None else None
        self._stable_order = getattr(mod, "stable_order", None) if mod is not None else None
        self._rows = None                # (DFA rows as lists, accepting): _narrow_sparse
        self._bases: dict = {}           # pending DFA state -> its base state or None
        self._long: dict = {}            # horizon -> the tokens longer (long_outcomes)
        self._req_ids = None             # DFA state -> requirement id (_state_requirements)
        self._req_index: dict = {}
        self._req_values: list = []
        # the lexer DFA for whole-vocabulary runs, flattened (state * 256 + byte), with two
        # absorbing states: n (dead: no lexeme) and n + 1 (entered an accepting state)
        trans = np.asarray(scanner.dfa.trans)
        n = len(trans)
        # one gather: a target's entry (n + 1 where it accepts), and -1 (the last entry) n
        lut = np.arange(n + 1, dtype=np.int32)
        lut[:n][np.array(scanner.accepting, dtype=bool)] = n + 1
        lut[n] = n
        run = np.empty((n + 2, 256), dtype=np.int32)
        np.take(lut, trans, out=run[:n], mode="wrap")
        run[n] = n
        run[n + 1] = n + 1
        self._run_table = run.ravel()
        self._n_dfa = n
        # a run's last state as _dfa_run reports it: the two absorbing states renamed
        self._final = np.concatenate([np.arange(n), [GONE, KILLED]]).astype(np.int32)

    def walks_twin(self):
        """The compiled trie walks (``_native.BranchWalks`` over this scanner: branch sets
        as ints, the scanner's steps and their advances in tables), or None: the pure
        walks of :mod:`.trie_walks`. Made on first use, and again when the scanner's
        ``exact`` flag changed (its steps differ) or the caches were dropped."""
        if not self._native_walks:
            return None
        core = self._walks_core
        sc = self.scanner
        if core is None or core.exact != sc.exact:
            core = self._walks_core = native.module().BranchWalks(sc.step, (IGNORE,), sc.exact,
                                                                      sc.byte_rep)
        return core

    def requirement(self, cfg: int):
        r = self._req.get(cfg, 0)
        if r == 0:
            self._account(self.ENTRY_BYTES)
            r = self._req[cfg] = requirement(self.scanner, cfg)
        return r

    def cache_estimate(self) -> int:
        return self._cache_used

    def _account(self, n: int) -> None:
        """Count ``n`` bytes about to be cached; past ``cache_bytes`` every cache is
        dropped first (they are recomputed on demand)."""
        if self.cache_bytes is not None and self._cache_used + n > self.cache_bytes:
            self._walks.clear()
            self._shadow_diffs.clear()
            self._subtrees.clear()
            self._runs.clear()
            self._req.clear()
            self._advance_memo.clear()
            self._walks_core = None
            self._cache_used = 0
        self._cache_used += n

    def outcomes(self, cfg: int):
        """``(groups, end_configs)``: outcome ``(emissions, requirement)`` -> int64 array of
        byte-order token positions, and the viable configurations tokens end in."""
        d, _ = self.scanner.config(cfg)
        return self._group(cfg, self._walk(d))

    #: a pending DFA state has a base (:meth:`base_config`) when it reads at least this many
    #: bytes, and agrees with the base on this share of the bytes either reads
    BASE_MIN_BYTES = 32
    BASE_AGREE = 7 / 8

    def base_config(self, cfg: int) -> int | None:
        """A configuration that most tokens treat as they treat ``cfg`` (same shadows, a
        pending DFA state ``cfg``'s bytes lead to that agrees with it on most bytes, or
        the end of the chain of such states: a base has no base of its own), or None.
        Inside a literal property name that is also a free string (``"na`` of ``"name"``
        where any key may come), every byte but the name's next one leads where the free
        string's body leads: the tokens that differ are the few continuing the name
        (:meth:`diff_outcomes`)."""
        d, shadows = self.scanner.config(cfg)
        if d < 0:
            return None
        # a base has no base of its own: follow the chain (a counted string inside
        # another: each count's state leads to the next) to its end
        seen = {d}
        g = self._base_state(d)
        while g is not None:
            if g in seen:                  # a cycle of bases: none is a root
                return None
            seen.add(g)
            h = self._base_state(g)
            if h is None:
                return self.scanner.intern(g, shadows)
            g = h
        return None

    def gap_base(self, cfg: int) -> int | None:
        """For a gap boundary without shadows (where a lexeme starts after a gap,
        ``Grammar.gaps``), its mode's boundary: they differ only on the tokens that start
        with a gap terminal's first byte, dead after a gap (a diff of a few subtrees taken
        whole). None for any other configuration."""
        sc = self.scanner
        d, shadows = sc.config(cfg)
        if shadows or type(d) is not int or d >= -sc.n_modes:
            return None
        return sc.intern(sc.mode_boundary(d), frozenset())

    def _base_state(self, d: int) -> int | None:
        """A state ``d``'s bytes lead to that agrees with ``d`` on most bytes (where either
        leads somewhere), when ``d`` reads enough bytes (memoized), else None."""
        r = self._bases.get(d, -1)
        if r != -1:
            return r
        r = None
        trans = self.scanner.dfa.trans
        row = np.asarray(trans[d])
        live = row[row >= 0]
        if len(live) >= self.BASE_MIN_BYTES:
            # of the states d's bytes lead to, the one whose bytes agree most with d's
            # (inside a name that is also a free string, the free string's state after a
            # byte that leaves the name)
            cands = np.unique(live)
            cands = cands[cands != d][:64]
            if len(cands):
                rows = np.asarray(trans)[cands]
                agree = np.count_nonzero((rows == row) & (row >= 0), axis=1)
                either = np.count_nonzero((rows >= 0) | (row >= 0), axis=1)
                k = int(np.argmax(agree - self.BASE_AGREE * either))
                if agree[k] >= self.BASE_AGREE * either[k]:
                    r = int(cands[k])
        self._bases[d] = r
        return r

    def diff_outcomes(self, cfg: int, base_cfg: int, max_tokens: int | None = None):
        """The tokens that may behave differently in ``cfg`` than in ``base_cfg`` (same
        shadows, another pending DFA state): ``(diff, groups, end_configs)`` with ``diff``
        the ascending byte-order positions of those tokens and ``groups``/``end_configs``
        as :meth:`outcomes` gives them for ``cfg``, restricted to ``diff``. Every token
        not in ``diff`` has the same outcomes in both configurations.

        Found by walking the token trie from both pending states at once
        (:func:`diff_walk`): a prefix after which both have the same branches (emissions
        so far and configurations) has the same outcomes for every token below it, and
        its subtree is skipped, so the walk costs the part of the trie where the two
        differ. Returns None when ``diff`` would pass ``max_tokens``."""
        sc = self.scanner
        d, shadows = sc.config(cfg)
        db, shadows_b = sc.config(base_cfg)
        if shadows != shadows_b or (d < 0) != (db < 0):
            raise ValueError("a diff needs two pending configurations, or two boundaries, with "
                             "the same shadows")
        # without shadows a token's outcome is its emissions and what its end configuration
        # requires: tokens whose branches differ only in end configurations that require
        # alike (a run of blanks ending at another count) are not in ``diff``, but their
        # end configurations must be compiled too
        same = None if shadows else self._outcome_key
        r = diff_walk(sc.step, self.index, sc.intern(d, frozenset()), sc.intern(db, frozenset()),
                      self._advance_memo, max_tokens, same, self.walks_twin())
        if r is None:
            return None
        diff, base, more = r
        groups, ends = self._group(cfg, base)
        ends.update(more)
        return diff, groups, ends

    def shadow_outcomes(self, cfg: int):
        """For ``cfg = (d, S)`` with shadows: the tokens that may behave differently in
        it than in ``(d, ∅)`` and their outcomes, as :meth:`diff_outcomes` gives them.

        A shadow (a longer match still possible) only kills a token (the longer match
        completes inside it) or follows it to its end (the end configuration carries it);
        a token on which every shadow's run dies has the outcomes it has without them.
        After a blank run ended by a value's first byte, the run's shadow dies on the
        first byte of nearly every token: only runs of blanks differ. Returns None when
        ``cfg`` has no shadows."""
        d, shadows = self.scanner.config(cfg)
        if not shadows:
            return None
        n_tok = len(self.index.toks)
        live = np.zeros(n_tok, dtype=bool)
        killed = np.zeros(n_tok, dtype=bool)
        for s in sorted(shadows):
            run = self._kept_run(s)
            if type(run) is NarrowRun:
                live[run.pos] = True
                k = run.killed_positions(n_tok)
                live[k] = True
                killed[k] = True
            else:
                run = self._dfa_run(s)
                live |= run != GONE
                killed |= run == KILLED
        # configurations whose shadows read on the same tokens share one array of them
        # (the build then makes its token set once): the counts of a bounded blank run
        # all read on the blank-led tokens
        key = np.packbits(live).tobytes()
        diff = self._shadow_diffs.get(key)
        if diff is None:
            diff = np.flatnonzero(live).astype(np.int64)
            self._account(diff.nbytes + len(key) + self.ENTRY_BYTES)
            self._shadow_diffs[key] = diff
        if not (live & ~killed).any():
            # a shadow kills every token it reads on (a blank after a blank run completes
            # a longer run): none of them has an outcome here, the others are the base's
            return diff, {}, set()
        groups, ends = self.shadow_group(cfg, live)
        return diff, groups, ends

    def shadow_group(self, cfg: int, live: np.ndarray) -> tuple:
        """``(groups, end_configs)`` of the tokens ``live`` (a boolean per token) in
        ``cfg = (d, S)``: their branches from ``(d, ∅)`` with the shadows run on them
        (:meth:`_group`); :meth:`shadow_outcomes` without its shortcut."""
        d, _ = self.scanner.config(cfg)
        base = {}
        for k, pos in self._walk(d).items():
            p = pos[live[pos]]
            if len(p):
                base[k] = p
        return self._group(cfg, base)

    def _outcome_key(self, branches: tuple) -> tuple:
        """``(outcome key set, end configurations)`` of a token's branches from a
        configuration without shadows: the mask automaton reads ``(emissions,
        requirement of the end)`` of each (:meth:`_group`), never the end itself."""
        keys = set()
        ends = []
        for ems, ec in branches:
            r = self.requirement(ec)
            if r is not None:
                keys.add((ems, r))
                ends.append(ec)
        return frozenset(keys), ends

    def _group(self, cfg: int, base: dict):
        """Outcomes of ``cfg = (d, S)`` from the branches of tokens from ``(d, ∅)``
        (``base``: branch tuple -> ascending positions): the shadows ``S`` run on each
        token, kill it or join its end configurations; then tokens are grouped by outcome.
        Returns ``(groups, end_configs)`` as :meth:`outcomes`."""
        sc = self.scanner
        _, shadows = sc.config(cfg)
        acc: dict = {}
        ends: set = set()
        intern = sc.intern
        config = sc.config

        def add(branches, pos, extra):
            seen = set()
            for ems, ec in branches:
                if extra:
                    de, sb = config(ec)
                    ec = intern(de, sb | extra)
                r = self.requirement(ec)
                if r is None:
                    continue
                ends.add(ec)
                key = (ems, r)
                if key in seen:
                    continue
                seen.add(key)
                lst = acc.get(key)
                if lst is None:
                    acc[key] = [pos]
                else:
                    lst.append(pos)

        if not shadows:
            for branches, pos in base.items():
                add(branches, pos, None)
        elif base:
            keys = list(base)
            pos = np.concatenate([base[k] for k in keys])
            gid = np.repeat(np.arange(len(keys)), [len(base[k]) for k in keys])
            sub = np.stack([self._run_at(s, pos) for s in sorted(shadows)], axis=1)
            alive = ~(sub == KILLED).any(axis=1)
            pos, gid, sub = pos[alive], gid[alive], sub[alive]
            if len(pos):
                combo = np.concatenate([gid[:, None], sub], axis=1)
                order, bounds = group_rows(combo)
                for u in range(len(bounds) - 1):
                    row = combo[order[bounds[u]]]
                    extra = frozenset(int(x) for x in row[1:] if x >= 0)
                    add(keys[int(row[0])], pos[order[bounds[u]:bounds[u + 1]]], extra)
        groups = {k: (v[0] if len(v) == 1 else np.concatenate(v)) for k, v in acc.items()}
        return groups, ends

    def _walk(self, d: int) -> dict:
        """Every token from ``(d, ∅)``: branch set -> positions of the tokens having it.

        A token that keeps the lexeme pending to its end (every byte leads to a live
        state that completes no terminal) has one branch, no emissions, ending in
        ``(final state, ∅)``: those come from one DFA run (numpy; :meth:`_sparse_run`). Only
        the tokens that complete a lexeme (an emission, maybe a fork) are walked by the
        scanner over the token trie. Inside a string most tokens are of the first kind."""
        w = self._walks.get(d)
        if w is None:
            sc = self.scanner
            s = d if d >= 0 else sc.mode_starts[-1 - d]
            if s in self._runs or self._narrow(s):
                pos, fin = self._sparse_run(s)
            else:
                # a whole-vocabulary run made for this walk only is not kept beside it
                # (a string body's ~300 counted states: 600 KB each)
                run = self._full_run(s)
                pos = np.flatnonzero(run != GONE)
                fin = run[pos]
            w = self._branches(d, pos, fin, self._subtrees)
            nbytes = sum(a.nbytes + self.ENTRY_BYTES for a in w.values())
            if nbytes <= self.KEEP_WALK_BYTES:
                # the walk's arrays, and about as much again for the subtree memo's
                self._account(2 * nbytes)
                self._walks[d] = w
        return w

    def _branches(self, d: int, pos: np.ndarray, fin: np.ndarray, memo: dict) -> dict:
        """Branch set -> ascending positions, for the tokens at ``pos`` (ascending) whose
        DFA run from ``d`` ended in ``fin`` (a state, or KILLED: walked by the scanner;
        GONE: dropped). ``memo``: the subtree memo of :func:`trie_walk` for this set of
        tokens."""
        sc = self.scanner
        acc: dict = {}
        pending = fin >= 0
        plain = pos[pending]
        if len(plain):
            ends = fin[pending]
            if ends.min() == ends.max():
                parts, last = [plain], [int(ends[0])]
            else:               # a stable sort keeps each group's positions ascending
                if self._stable_order is not None:   # by counting, in compiled code
                    order = self._stable_order(np.ascontiguousarray(ends, dtype=np.int32),
                                               self._n_dfa)
                else:
                    if self._n_dfa < 1 << 16:
                        ends = ends.astype(np.uint16)    # sorted by radix: ~2-4x faster
                    order = np.argsort(ends, kind="stable")
                ends = ends[order]
                cut = np.flatnonzero(np.diff(ends)) + 1
                last = ends[np.concatenate([[0], cut])].tolist()
                srt = plain[order]
                bounds = [0] + cut.tolist() + [len(srt)]
                # slices, not np.split (its Python loop cost ~8 µs a part; a string's
                # state ends its tokens at ~75 counts)
                parts = [srt[a:b] for a, b in zip(bounds, bounds[1:])]
            for sel, e in zip(parts, last):
                acc[(((), sc.intern(int(e), frozenset())),)] = [sel]
        cfg = sc.intern(d, frozenset())
        lexed = pos[fin == KILLED]
        for k, v in trie_walk(sc, cfg, self.index, memo, lexed, self.walks_twin()).items():
            acc.setdefault(k, []).extend(v)
        return {k: (v[0] if len(v) == 1 else np.sort(np.concatenate(v))) for k, v in acc.items()}

    def long_outcomes(self, cfg: int, horizon: int):
        """``(positions, groups, end_configs)``: the tokens longer than ``horizon`` bytes
        (ascending byte-order positions) and, as :meth:`outcomes` gives them, their
        outcomes from ``cfg`` (a pending configuration without shadows). Their DFA runs
        are one gather per byte column over those tokens only, longest first; only the
        tokens that complete a lexeme are walked by the scanner. ``end_configs`` are
        those of the tokens that complete a lexeme: one that keeps it pending ends in a
        pending configuration without shadows whose state some byte string reaches
        (:attr:`ConfigClasses.seeds` has them all)."""
        d, shadows = self.scanner.config(cfg)
        if d < 0 or shadows:
            raise ValueError("long_outcomes needs a pending configuration without shadows")
        lt = self._long.get(horizon)
        if lt is None:
            lt = self._long[horizon] = self._long_tokens(horizon)
        D, perm, M, cnt, memo = lt
        n = self._n_dfa
        if self._run_twin is not None:
            fin = self._twin_run(d, D)
        elif len(D) <= self.ROW_BY_ROW:
            # a few tokens (a deep horizon): one by one, a numpy pass per byte costs more
            fin = self._final[np.fromiter((self._run_one(d, self.index.toks[p]) for p in D.tolist()),
                                          dtype=np.int32, count=len(D))]
        else:
            table = self._run_table
            s = np.full(len(perm), d, dtype=np.int32)
            for c, a in enumerate(cnt):
                head = s[:a]
                head *= 256
                head += M[:a, c]
                np.take(table, head, out=head)
                if c % 8 == 7 and int(head.min(initial=n)) >= n:
                    break                      # every run still going has stopped
            fin = np.empty_like(s)
            fin[perm] = self._final[s]
        killed = fin == KILLED
        groups, ends = self._group(cfg, self._branches(d, D[killed], fin[killed], memo))
        pend = fin >= 0
        if pend.any():
            # a token that keeps the lexeme pending: outcome ((), requirement of its end
            # state), grouped by requirement, not by end state (inside a counted string
            # every count is a state of its own, with one requirement)
            ppos = D[pend]
            rid = self._state_requirements(fin[pend])
            order = np.argsort(rid, kind="stable")
            rid = rid[order]
            cut = np.flatnonzero(np.diff(rid)) + 1
            for part, r in zip(np.split(ppos[order], cut), rid[np.concatenate([[0], cut])].tolist()):
                if r < 0:
                    continue                      # never viable
                key = ((), self._req_values[r])
                g = groups.get(key)
                groups[key] = part if g is None else np.sort(np.concatenate([g, part]))
        return D, groups, ends

    def _run_one(self, q: int, data) -> int:
        """The lexer DFA run of the bytes ``data`` from state ``q``, in the run table's
        terms (``n``: a byte led nowhere; ``n + 1``: it entered an accepting state):
        a few rows are cheaper one by one than as numpy passes."""
        if self._rows is None:
            self._rows = (self.scanner.dfa.rows(), list(self.scanner.accepting))
        trans, accepting = self._rows
        for b in data:
            q = trans[q][b]
            if q < 0:
                return self._n_dfa
            if accepting[q]:
                return self._n_dfa + 1
        return q

    def _state_requirements(self, states: np.ndarray) -> np.ndarray:
        """Per DFA state of ``states``, an id of the requirement of the pending
        configuration ``(state, ∅)`` (-1: never viable); ``_req_values[id]`` is it."""
        tab = self._req_ids
        if tab is None:
            tab = self._req_ids = np.full(self._n_dfa, -2, dtype=np.int64)
        u = np.unique(states)
        for q in u[tab[u] == -2].tolist():
            r = self.requirement(self.scanner.intern(q, frozenset()))
            if r is None:
                tab[q] = -1
            else:
                i = self._req_index.get(r)
                if i is None:
                    i = self._req_index[r] = len(self._req_values)
                    self._req_values.append(r)
                tab[q] = i
        return tab[states]

    def _long_tokens(self, horizon: int) -> tuple:
        """For :meth:`long_outcomes`: the positions of the tokens longer than ``horizon``
        (ascending), their order by length (longest first), their bytes in that order as
        a padded matrix, per byte column the number of them that reach it, and their own
        subtree memo for :func:`trie_walk`."""
        blob, offsets = self.index.flat_bytes()
        lengths = np.diff(offsets)
        D = np.flatnonzero(lengths > horizon).astype(np.int64)
        ln = lengths[D]
        perm = np.argsort(-ln, kind="stable")
        width = int(ln.max(initial=0))
        M = np.zeros((len(D), width), dtype=np.int32)
        starts = offsets[D][perm]
        cnt = [int(np.count_nonzero(ln > c)) for c in range(width)]
        for c, a in enumerate(cnt):
            M[:a, c] = blob[starts[:a] + c]
        return D, perm, M, cnt, {}

    #: a state whose bytes lead anywhere for fewer first bytes than this runs only the
    #: tokens starting with those bytes (most lexer states: inside a keyword, a literal
    #: key, after a digit); the others run the whole vocabulary column by column
    NARROW_BYTES = 96
    #: a narrow run finishes the rows still running one by one once this few are left
    ROW_BY_ROW = 48

    def _dfa_run(self, s: int) -> np.ndarray:
        """Per token (byte order), the lexer DFA run from state ``s`` over its bytes: the
        state after the token, GONE when a byte leads nowhere, KILLED when a byte enters
        an accepting state (for a shadow: a longer match completed; for a pending lexeme:
        it completes a terminal inside the token). A state with few live first bytes runs
        only the tokens starting with them (:meth:`_narrow_sparse`); otherwise one gather
        per byte column, over the tokens long enough for it; once a column has stopped
        more than a quarter of them (GONE and KILLED are absorbing), only the tokens
        still running are read (most lexer states stop most tokens within a byte or two:
        2-3x less work)."""
        r = self._kept_run(s)
        if r is None:
            r = self._full_run(s)
            self._account(r.nbytes + self.ENTRY_BYTES)
            self._runs[s] = r
        if type(r) is NarrowRun:
            n_tok = len(self.index.toks)
            out = np.full(n_tok, GONE, dtype=np.int32)
            out[r.killed_positions(n_tok)] = KILLED
            out[r.pos] = r.fin
            return out
        return r

    def _kept_run(self, s: int):
        """The run from ``s`` as kept (a whole-vocabulary array, or a :class:`NarrowRun`),
        a narrow state's made and kept now; None for a state whose whole-vocabulary run
        is not made yet."""
        run = self._runs.get(s)
        if run is None and self._narrow(s):
            run = self._narrow_entry(s)
        return run

    def _narrow(self, s: int) -> bool:
        """Whether DFA state ``s`` has fewer live first bytes than ``NARROW_BYTES``: its
        run is made from the tokens starting with them and kept as a :class:`NarrowRun`."""
        return len(self._first_bytes(s)) < self.NARROW_BYTES

    def _first_bytes(self, s: int) -> np.ndarray:
        """The bytes that do not stop a run from DFA state ``s`` at once."""
        return np.flatnonzero(self._run_table[s * 256:(s + 1) * 256] != self._n_dfa)

    def _narrow_sparse(self, s: int, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The run from ``s`` of only the tokens starting with a byte of ``first``:
        ``(positions, last states)`` (ascending positions; GONE among the states for
        tokens stopped later). Byte by byte, dropping the rows that stopped or ended;
        every other token is GONE at its first byte."""
        bounds = self.index.first_byte_bounds()
        parts = [np.arange(bounds[b], bounds[b + 1], dtype=np.int64) for b in first.tolist()
                 if bounds[b + 1] > bounds[b]]
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        pos = np.concatenate(parts)
        if self._run_twin is not None:
            return pos, self._twin_run(s, pos)
        blob, offsets = self.index.flat_bytes()
        start = offsets[pos]
        length = offsets[pos + 1] - start
        table = self._run_table
        n = self._n_dfa
        state = np.full(len(pos), s, dtype=np.int32)
        alive = np.arange(len(pos))
        j = 0
        while len(alive) > self.ROW_BY_ROW:
            alive = alive[length[alive] > j]
            cur = table[state[alive] * 256 + blob[start[alive] + j]]
            state[alive] = cur
            alive = alive[cur < n]
            j += 1
        # the last few rows (long tokens that keep running: digits, spaces, long words)
        # one by one: a numpy pass per byte would cost more than the bytes themselves
        for r in alive.tolist():
            a = int(start[r])
            state[r] = self._run_one(int(state[r]), blob[a + j:a + int(length[r])].tolist())
        return pos, self._final[state]

    def _sparse_run(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_dfa_run` from ``s`` without its GONE tokens: ``(positions, last
        states)``, positions ascending. A narrow state's run is never made whole-vocabulary
        (its cost is then the tokens starting with its live bytes, not the vocabulary)."""
        run = self._kept_run(s)
        if run is None:
            run = self._dfa_run(s)
        if type(run) is NarrowRun:
            kpos = run.killed_positions(len(self.index.toks))
            if not len(kpos):
                return run.pos.astype(np.int64), run.fin
            pos = np.concatenate([run.pos, kpos])
            fin = np.concatenate([run.fin, np.full(len(kpos), KILLED, dtype=np.int32)])
            order = np.argsort(pos, kind="stable")
            return pos[order], fin[order]
        pos = np.flatnonzero(run != GONE)
        return pos, run[pos]

    def _narrow_entry(self, s: int) -> "NarrowRun":
        """The run from narrow state ``s`` (:meth:`_narrow_sparse`), kept sparse."""
        pos, fin = self._narrow_sparse(s, self._first_bytes(s))
        keep = fin >= 0
        run = self._runs[s] = NarrowRun(pos[keep].astype(np.int32), fin[keep].astype(np.int32),
                                        NarrowRun.killed_of(pos[fin == KILLED],
                                                            len(self.index.toks)))
        self._account(run.pos.nbytes + run.fin.nbytes + run.killed.nbytes + self.ENTRY_BYTES)
        return run

    def _run_at(self, s: int, pos: np.ndarray) -> np.ndarray:
        """:meth:`_dfa_run` from ``s`` at the positions ``pos`` only (a narrow state's
        run is read from its sparse form, never made whole-vocabulary)."""
        run = self._kept_run(s)
        if type(run) is not NarrowRun:
            return self._dfa_run(s)[pos]
        spos, sfin = run.pos, run.fin
        out = np.full(len(pos), GONE, dtype=np.int32)
        out[run.killed_at(pos)] = KILLED
        if len(spos):
            i = np.searchsorted(spos, pos)
            np.minimum(i, len(spos) - 1, out=i)
            hit = spos[i] == pos
            out[hit] = sfin[i[hit]]
        return out

    def _twin_run(self, s: int, pos: np.ndarray) -> np.ndarray:
        """The runs from ``s`` of the tokens at positions ``pos``, as :meth:`_dfa_run`
        reports their last states, in the compiled extension (``_native.run_tokens``)."""
        blob, offsets = self.index.flat_bytes()
        return self._final[self._run_twin(self._run_table, self._n_dfa, s, blob, offsets,
                                          np.ascontiguousarray(pos, dtype=np.int64))]

    def _full_run(self, s: int) -> np.ndarray:
        """:meth:`_dfa_run` from ``s`` over the whole vocabulary, column by column (in
        the compiled extension: token by token, ``_native.run_tokens``)."""
        if self._run_twin is not None:
            return self._twin_run(s, np.arange(len(self.index.toks), dtype=np.int64))
        order, cols = self.index.byte_columns()
        table = self._run_table
        n = self._n_dfa
        state = np.full(len(order), s, dtype=np.int32)
        alive = None             # rows still running, ascending; None: every row so far
        for col in cols:
            m = len(col)
            if alive is None:
                head = state[:m]
                head *= 256
                head += col
                np.take(table, head, out=head)
                stopped = head >= n
                if 4 * int(np.count_nonzero(stopped)) > m:
                    alive = np.flatnonzero(~stopped)
            else:
                if len(alive) and alive[-1] >= m:      # the shorter tokens have ended
                    alive = alive[:np.searchsorted(alive, m)]
                if not len(alive):
                    break
                cur = state[alive]
                cur *= 256
                cur += col[alive]
                np.take(table, cur, out=cur)
                state[alive] = cur
                running = cur < n
                if not running.all():
                    alive = alive[running]
        out = np.empty_like(state)
        out[order] = self._final[state]
        return out
