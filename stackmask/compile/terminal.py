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
of that prefix, and a dead prefix skips its whole subtree.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..lexer.scanner import IGNORE, Scanner
from .token_index import VocabIndex

TRUE = "T"          # requirement: always viable


def requirement(scanner: Scanner, cfg: int):
    """What a head whose lexer is in ``cfg`` needs from its stack (None: never viable).

    With special-token terminals (``scanner.special_terms``) a head is also viable when a
    special token can come next: its pending lexeme is complete (emission ``em``, ``()`` at
    a boundary) and after ``em`` the stack can shift a special terminal. The requirement
    is then ``(F, can_end, em)``."""
    boundary = scanner.at_boundary(cfg)
    if boundary and not scanner.shadows(cfg):
        return TRUE
    fin = scanner.finishable(cfg)
    if IGNORE in fin:
        return TRUE
    em = scanner.final_emission(cfg) if scanner.special_terms else None
    if not fin and not boundary and em is None:
        return None
    if em is None:
        return (frozenset(fin), boundary)
    return (frozenset(fin), boundary, em)


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

    def __init__(self, scanner: Scanner, index: VocabIndex, cache_bytes: int | None = None):
        self.scanner = scanner
        self.index = index
        self.cache_bytes = cache_bytes      # None: unbounded (an eager compile, which is
        self._cache_used = 0                # bounded by Limits.max_compile_memory_bytes)
        self._walks: dict = {}
        self._subtrees: dict = {}        # trie_walk memo: (first byte, branches) -> subtree result
        self._runs: dict = {}
        self._req: dict = {}
        # the lexer DFA for whole-vocabulary runs, flattened (state * 256 + byte), with two
        # absorbing states: n (dead: no lexeme) and n + 1 (entered an accepting state)
        trans = np.asarray(scanner.dfa.trans, dtype=np.int64)
        n = len(trans)
        acc = np.array(scanner.accepting, dtype=bool)
        run = np.where(trans < 0, n, np.where(acc[np.maximum(trans, 0)], n + 1, trans))
        run = np.concatenate([run, np.full((1, 256), n), np.full((1, 256), n + 1)])
        self._run_table = run.astype(np.int32).ravel()
        self._n_dfa = n
        # a run's last state as _dfa_run reports it: the two absorbing states renamed
        self._final = np.concatenate([np.arange(n), [GONE, KILLED]]).astype(np.int32)

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
            self._subtrees.clear()
            self._runs.clear()
            self._req.clear()
            self._cache_used = 0
        self._cache_used += n

    def outcomes(self, cfg: int):
        """``(groups, end_configs)``: outcome ``(emissions, requirement)`` -> int64 array of
        byte-order token positions, and the viable configurations tokens end in."""
        sc = self.scanner
        d, shadows = sc.config(cfg)
        base = self._walk(d)
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
        else:
            runs = np.stack([self._dfa_run(s) for s in sorted(shadows)], axis=1)
            keys = list(base)
            pos = np.concatenate([base[k] for k in keys])
            gid = np.repeat(np.arange(len(keys)), [len(base[k]) for k in keys])
            sub = runs[pos]
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
        ``(final state, ∅)``: those come from one whole-vocabulary DFA run (numpy). Only
        the tokens that complete a lexeme (an emission, maybe a fork) are walked by the
        scanner over the token trie. Inside a string most tokens are of the first kind."""
        w = self._walks.get(d)
        if w is None:
            sc = self.scanner
            run = self._dfa_run(d if d >= 0 else sc.mode_starts[-1 - d])
            acc: dict = {}
            plain = np.flatnonzero(run >= 0)
            if len(plain):
                ends = run[plain]
                if ends.min() == ends.max():
                    parts = [plain]
                else:               # a stable sort keeps each group's positions ascending
                    if self._n_dfa < 1 << 16:
                        ends = ends.astype(np.uint16)    # sorted by radix: ~2-4x faster
                    order = np.argsort(ends, kind="stable")
                    cut = np.flatnonzero(np.diff(ends[order])) + 1
                    parts = np.split(plain[order], cut)
                for sel in parts:
                    acc[(((), sc.intern(int(run[sel[0]]), frozenset())),)] = [sel]
            cfg = sc.intern(d, frozenset())
            lexed = np.flatnonzero(run == KILLED)
            for k, v in trie_walk(sc, cfg, self.index, self._subtrees, lexed).items():
                acc.setdefault(k, []).extend(v)
            w = {k: (v[0] if len(v) == 1 else np.sort(np.concatenate(v))) for k, v in acc.items()}
            # the walk's arrays, and about as much again for the subtree memo's
            self._account(2 * sum(a.nbytes + self.ENTRY_BYTES for a in w.values()))
            self._walks[d] = w
        return w

    def _dfa_run(self, s: int) -> np.ndarray:
        """Per token (byte order), the lexer DFA run from state ``s`` over its bytes: the
        state after the token, GONE when a byte leads nowhere, KILLED when a byte enters
        an accepting state (for a shadow: a longer match completed; for a pending lexeme:
        it completes a terminal inside the token). One gather per byte column, over the
        tokens long enough for it; once a column has stopped more than a quarter of
        them (GONE and KILLED are absorbing), only the tokens still running are read
        (most lexer states stop most tokens within a byte or two: 2-3x less work)."""
        r = self._runs.get(s)
        if r is not None:
            return r
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
        self._account(out.nbytes + self.ENTRY_BYTES)
        self._runs[s] = out
        return out


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


def trie_walk(scanner: Scanner, cfg: int, index: VocabIndex, memo: dict, positions: np.ndarray) -> dict:
    """The tokens at ``positions`` (ascending byte-order positions) from configuration
    ``cfg``: branch set (tuple of ``(emissions, end config)``) -> list of position arrays,
    by running the scanner itself over the token trie (tokens sharing a prefix share its
    work; a dead prefix skips its subtree).

    ``positions`` must be the tokens whose DFA run from ``cfg``'s state completes a lexeme
    (``TerminalCompiler._walk``): then the ones starting with byte ``b`` are a function of
    the branches ``cfg`` has after ``b``, and ``memo`` (shared by the walks of one scanner)
    keeps that subtree's result by ``(b, branches)``, so configurations that converge after
    one byte walk the shared subtrees once. Lists are ascending across the list."""
    step = scanner.step
    toks = index.toks
    bounds = index.first_byte_bounds()
    cut = np.searchsorted(positions, bounds).tolist()
    groups: dict = {}
    for b in range(256):
        plo, phi = cut[b], cut[b + 1]
        if plo == phi:
            continue
        first = _advance(step, (((), cfg),), b)
        if not first:
            continue
        key = (b, first)
        sub = memo.get(key)
        if sub is None:
            sub = memo[key] = _walk_positions(step, toks, positions[plo:phi].tolist(), first)
        for br, pos in sub.items():
            g = groups.get(br)
            if g is None:
                groups[br] = [pos]
            else:
                g.append(pos)
    return groups


def _advance(step, branches: tuple, b: int) -> tuple:
    """The branches ``((emissions, config), ...)`` after byte ``b`` (ignored lexemes add
    no emission), in order, without duplicates."""
    nb = {}
    for ems, c in branches:
        for em, nc in step(c, b):
            if em is None or em == (IGNORE,):
                nb[(ems, nc)] = None
            else:
                nb[(ems + (em,), nc)] = None
    return tuple(nb)


def _walk_positions(step, toks, positions: list, first: tuple) -> dict:
    """Branch set -> int64 positions for the tokens ``toks[p]``, ``p`` in ``positions``
    (ascending, all starting with the same byte), from the branches ``first`` after that
    byte."""
    groups: dict = {}
    memo: dict = {}       # (branches, byte) -> branches: several branches recur (free text forks
                          # at every character: emit the lexeme, or keep reading)
    stack: list = [None, first]
    prev = toks[positions[0]][:1]
    n = len(positions)
    j = 0
    while j < n:
        i = positions[j]
        tb = toks[i]
        k = 1
        lim = min(len(prev), len(tb), len(stack) - 1)
        while k < lim and prev[k] == tb[k]:
            k += 1
        del stack[k + 1:]
        branches = stack[k]
        dead = -1
        for x in range(k, len(tb)):
            b = tb[x]
            if len(branches) == 1:
                ems, c = branches[0]
                outs = step(c, b)
                if len(outs) == 1 and outs[0][0] is None:
                    branches = ((ems, outs[0][1]),)
                    stack.append(branches)
                    continue
            key = (branches, b)
            nxt = memo.get(key)
            if nxt is None:
                nxt = memo[key] = _advance(step, branches, b)
            if not nxt:
                dead = x
                break
            branches = nxt
            stack.append(branches)
        if dead >= 0:
            # skip every token with this dead prefix
            succ = successor(tb[:dead + 1])
            j = n if succ is None else bisect_left(positions, bisect_left(toks, succ, i + 1), j + 1)
            prev = tb[:dead]
            continue
        g = groups.get(branches)
        if g is None:
            groups[branches] = [i]
        else:
            g.append(i)
        prev = tb
        j += 1
    return {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}


def successor(prefix: bytes) -> bytes | None:
    """Smallest byte string greater than every string starting with ``prefix``."""
    p = prefix.rstrip(b"\xff")
    if not p:
        return None
    return p[:-1] + bytes([p[-1] + 1])
