"""Walks of the streaming scanner over the vocabulary's token trie.

Tokens are visited in byte order (:class:`~stackmask.compile.token_index.VocabIndex`), so
tokens sharing a prefix share the scanner work of that prefix and a dead prefix skips its
whole subtree. :func:`trie_walk` groups tokens by the scanner branches they end with from
one lexer configuration; :func:`diff_walk` finds the tokens whose branches from one
configuration may differ from those from another. Both have compiled twins in
``stackmask._native`` (``BranchWalks``, over branch sets as ints);
:mod:`stackmask.compile.terminal` turns their results into outcomes.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..lexer.scanner import IGNORE, Scanner
from ..vocab import successor
from .token_index import VocabIndex


def trie_walk(scanner: Scanner, cfg: int, index: VocabIndex, memo: dict, positions: np.ndarray,
              twin=None) -> dict:
    """The tokens at ``positions`` (ascending byte-order positions) from configuration
    ``cfg``: branch set (tuple of ``(emissions, end config)``) -> list of position arrays,
    by running the scanner itself over the token trie (tokens sharing a prefix share its
    work; a dead prefix skips its subtree).

    ``positions`` must be the tokens whose DFA run from ``cfg``'s state completes a lexeme
    (``TerminalCompiler._walk``): then the ones starting with byte ``b`` are a function of
    the branches ``cfg`` has after ``b``, and ``memo`` (shared by the walks of one scanner)
    keeps that subtree's result by ``(b, branches)``, so configurations that converge after
    one byte walk the shared subtrees once. Lists are ascending across the list.
    ``twin``: the compiled walks (``stackmask._native.BranchWalks`` over this scanner: its
    ``walk_positions`` gives :func:`_walk_positions`' results), or None."""
    step = scanner.step
    toks = index.toks
    cut = index.first_byte_cuts(positions)
    groups: dict = {}
    if twin is not None:
        blob, offsets = index.flat_bytes()
        pos64 = np.ascontiguousarray(positions, dtype=np.int64)
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
            if twin is not None:
                g = twin.walk_positions(blob, offsets, pos64[plo:phi], first)
                sub = memo[key] = {k: np.asarray(v, dtype=np.int64) for k, v in g.items()}
            else:
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


def diff_walk(step, index: VocabIndex, c: int, b: int, memo: dict,
              max_tokens: int | None = None, outcome_key=None, twin=None):
    """The tokens (byte-order positions) whose scanner branches from configuration ``c``
    may differ from those from ``b``, and the branches from ``c`` of those that survive:
    ``(diff, {branches: positions}, ends)`` (positions ascending), or None when ``diff``
    passes ``max_tokens``.

    ``outcome_key(branches) -> (key, end configurations)``: a token whose branches differ
    but whose keys are equal is not in ``diff``; the end configurations it has from ``c``
    are collected in ``ends`` (otherwise empty). Such tokens count for ``max_tokens``
    like those of ``diff`` (the walk takes them one by one).

    The trie is walked depth first from both configurations at once. Below a prefix after
    which both have the same branches (the same emissions so far, the same configurations)
    every token has the same branches from both: the subtree is skipped. Where ``c`` is
    dead the whole subtree is in ``diff`` (whatever ``b`` does with it: a superset is
    harmless, those tokens get ``c``'s outcomes, i.e. none); where both are dead it is
    skipped. ``memo`` caches ``(branches, byte) -> branches`` (reusable across calls on the
    same scanner). ``twin``: the compiled walks (``stackmask._native.BranchWalks`` over
    the scanner of ``step``: its ``diff_walk``, the same results, with its own tables
    instead of ``memo``), or None for this one."""
    if twin is not None:
        blob, offsets = index.flat_bytes()
        r = twin.diff_walk(blob, offsets, c, b, max_tokens, outcome_key)
    else:
        r = _diff_walk(step, index, c, b, memo, max_tokens, outcome_key)
    if r is None:
        return None
    diff, groups, ends = r
    parts = [np.arange(e[0], e[1], dtype=np.int64) if type(e) is tuple
             else np.array([e], dtype=np.int64) for e in diff]
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return out, {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}, ends


def _diff_walk(step, index: VocabIndex, c: int, b: int, memo: dict, max_tokens, outcome_key):
    """:func:`diff_walk`'s walk in Python: ``(diff as positions and (lo, hi) ranges in
    order, branches -> list of positions, ends)``, or None past ``max_tokens``."""
    toks = index.toks
    n = len(toks)
    diff: list = []            # ascending positions, or (lo, hi) ranges in order
    n_diff = 0
    groups: dict = {}
    ends: set = set()

    def advance(branches, x):
        key = (branches, x)
        r = memo.get(key)
        if r is None:
            r = memo[key] = _advance(step, branches, x)
        return r

    # frames: (lo, hi, depth, branches from c, branches from b); tokens[lo:hi] share the
    # prefix toks[lo][:depth]; pushed in reverse so positions come out ascending
    stack = [(0, n, 0, (((), c),), (((), b),))]
    while stack:
        lo, hi, depth, bc, bb = stack.pop()
        if depth < 0:                          # c is dead on all of them: taken whole
            diff.append((lo, hi))
            n_diff += hi - lo
            if max_tokens is not None and n_diff > max_tokens:
                return None
            continue
        t = toks[lo]
        if len(t) == depth and bc != bb:       # the prefix itself is a token, and differs
            n_diff += 1
            kc = outcome_key(bc) if outcome_key is not None and bc else None
            if kc is not None and kc[0] == outcome_key(bb)[0]:
                # read alike: not in the diff, but its ends are compiled, and it counts
                # for ``max_tokens`` (inside a counted string every token differs so)
                ends.update(kc[1])
            else:
                diff.append(lo)
                if bc:
                    g = groups.get(bc)
                    if g is None:
                        groups[bc] = [lo]
                    else:
                        g.append(lo)
        if len(t) == depth:
            lo += 1
        children = []
        i = lo
        while i < hi:
            x = toks[i][depth]
            succ = successor(toks[i][:depth + 1])       # the tokens after this subtree
            j = hi if succ is None else bisect_left(toks, succ, i + 1, hi)
            nc = advance(bc, x) if bc else ()
            nb = advance(bb, x) if bb else ()
            if nc != nb:
                if not nc:
                    children.append((i, j, None))
                else:
                    children.append((i, j, (nc, nb)))
            i = j
        for i, j, br in reversed(children):
            if br is None:
                stack.append((i, j, -1, None, None))
            else:
                stack.append((i, j, depth + 1, br[0], br[1]))
        if max_tokens is not None and n_diff > max_tokens:
            return None
    return diff, groups, ends
