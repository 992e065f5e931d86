"""The reference oracle: the definition of the mask, executed literally.

For every token, commit its bytes on the state and check viability. Tokens
are visited in byte order so that all tokens sharing a prefix share the work
of committing that prefix (exactly the same ``advance`` calls a separate
``commit`` would make), and a dead prefix skips every token below it. Cost is
O(|V|) per step in the worst case: this exists to define and test masks, not
to serve them.

:meth:`ReferenceOracle.allowed` commits the same bytes in another order: one byte
column at a time for every token that shares the same heads, as long as a byte moves no
head to a new GSS node (inside a string or a name, most bytes of most tokens), so that
each distinct heads and byte of a column is committed once; tokens split off where a byte
makes new nodes and go on from the heads it gives. The token-by-token walk above is
:meth:`ReferenceOracle.allowed_literal`; the two give the same set
(``tests/test_oracle.py``, ``tests/test_runtime_small.py``).
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..compile import vocab_index
from ..vocab import successor
from .state import ids_to_mask


class ReferenceOracle:
    def __init__(self, constraint):
        self.c = constraint
        vocab = constraint.vocab
        index = vocab_index(vocab)          # tokens in byte order; duplicates share a verdict
        self.index = index
        self.toks = index.toks
        self.eos = np.array(sorted(vocab.eos_token_ids), dtype=np.int64)

    def allowed(self, state) -> list[int]:
        """Ids of the tokens (specials included, EOS not) that keep ``state`` viable."""
        if state.finished:
            return []
        return self._with_specials(state, self._columns(state.heads))

    def allowed_literal(self, state) -> list[int]:
        """:meth:`allowed` walking the tokens one by one, byte by byte (the definition as
        written; what :meth:`allowed` is tested against)."""
        if state.finished:
            return []
        pos = self._walk(state.heads, self.toks, self.index.common_prefixes())
        return self._with_specials(state, pos)

    #: sets of fewer tokens than this are walked token by token (:meth:`_walk`), not by
    #: byte columns (whose array operations cost more than they share there)
    MIN_COLUMNS = 1024

    def _columns(self, heads0) -> np.ndarray:
        """Byte-order positions of the tokens allowed from ``heads0``.

        Tokens are committed by byte columns: a *task* is a set of tokens that share
        their first ``j`` bytes, all at the same heads after them. A byte that moves no
        head to a new GSS node (no lexeme completes, or only ignored ones) leaves the
        heads' nodes as they are: the heads after it depend only on the heads'
        configurations, so such bytes are taken one column at a time for all the task's
        tokens (each distinct heads and byte of a column committed once, by ``advance``).
        A token leaves the task at the first byte that makes new nodes; the tokens that
        share their bytes up to and with that one go on as a new task from the heads that
        byte gave (the same heads and byte give the same heads: one ``advance`` for all).
        A task of few tokens is walked token by token (:meth:`_walk`)."""
        c = self.c
        advance, viable = c.advance, c.viable
        toks = self.toks
        blob, offsets = self.index.flat_bytes()
        lcp_all = self._lcp()
        out: list = []

        def lcps(ps: np.ndarray, j: int) -> np.ndarray:
            """Common prefixes of consecutive positions ``ps`` (sorted) less ``j``."""
            lcp = np.zeros(len(ps), dtype=np.int64)
            if len(ps) > 1:
                lcp[1:] = np.minimum.reduceat(lcp_all, ps + 1)[:-1] - j
            return lcp

        unknown, dead, leaves = -2, -1, -3
        tasks = [(heads0, np.arange(len(toks), dtype=np.int64), 0)]
        while tasks:
            heads, ps, j = tasks.pop()
            if len(ps) < self.MIN_COLUMNS:
                lcp = lcps(ps, j)
                got = self._walk(heads, [toks[p][j:] for p in ps.tolist()], lcp.tolist())
                out.append(ps[got])
                continue
            nodes = {id(nd) for nd, _ in heads}
            table = [heads]               # heads id -> heads (over the task's nodes)
            ids = {tuple([(id(nd), g) for nd, g in heads]): 0}
            trans = np.full(256 * 4, unknown, dtype=np.int64)   # id * 256 + byte -> id
            after: dict = {}              # keys of bytes that make new nodes -> heads
            at = ps
            lens = offsets[at + 1] - offsets[at]
            hs = np.zeros(len(at), dtype=np.int64)
            ended_at, ended_hs = [], []
            while len(at):
                fin = lens == j
                if fin.any():
                    ended_at.append(at[fin])
                    ended_hs.append(hs[fin])
                    on = ~fin
                    at, hs, lens = at[on], hs[on], lens[on]
                    if not len(at):
                        break
                keys = (hs << 8) | blob[offsets[at] + j]
                nv = trans[keys]
                new = keys[nv == unknown]
                if len(new):
                    if 4 * len(new) > len(trans):
                        seen = np.zeros(len(trans), dtype=bool)
                        seen[new] = True
                        new = np.flatnonzero(seen)
                    else:
                        new = np.unique(new)
                    for key in new.tolist():
                        nh = advance(table[key >> 8], key & 0xFF)
                        if not nh:
                            trans[key] = dead
                            continue
                        if any(id(nd) not in nodes for nd, _ in nh):
                            trans[key] = leaves
                            after[key] = nh
                            continue
                        hk = tuple([(id(nd), g) for nd, g in nh])
                        h = ids.get(hk)
                        if h is None:
                            h = ids[hk] = len(table)
                            table.append(nh)
                            if 256 * len(table) > len(trans):
                                trans = np.concatenate([trans, np.full(len(trans), unknown,
                                                                       dtype=np.int64)])
                        trans[key] = h
                    nv = trans[keys]
                gone = nv == leaves
                if gone.any():
                    # the leavers sharing their first j + 1 bytes go on together as a
                    # task, from the heads their last byte gave
                    es, ekeys, elens = at[gone], keys[gone], lens[gone]
                    cuts = [0] + (np.flatnonzero(lcps(es, j + 1)[1:] < 0) + 1).tolist()
                    cuts.append(len(es))
                    for a, b in zip(cuts, cuts[1:]):
                        nh = after[int(ekeys[a])]
                        run, rl = es[a:b], elens[a:b]
                        done = rl == j + 1
                        if done.any() and any(viable(hd) for hd in nh):
                            out.append(run[done])
                        if not done.all():
                            tasks.append((nh, run[~done], j + 1))
                keep = nv >= 0
                at, hs, lens = at[keep], nv[keep], lens[keep]
                j += 1
            if ended_at:
                at, hs = np.concatenate(ended_at), np.concatenate(ended_hs)
                for h in np.unique(hs).tolist():
                    if any(viable(hd) for hd in table[h]):
                        out.append(at[hs == h])
        return np.sort(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)

    def _lcp(self) -> np.ndarray:
        """The index's common prefixes of consecutive tokens, as an array (kept)."""
        arr = getattr(self, "_lcp_arr", None)
        if arr is None:
            # one more 0 after the last: reduceat's bounds may be one past the last token
            arr = self._lcp_arr = np.asarray(self.index.common_prefixes() + [0], dtype=np.int64)
        return arr

    def _walk(self, heads0, toks, lcp) -> list[int]:
        """Indices into ``toks`` (sorted byte strings; ``lcp[i]``: the common prefix of
        ``toks[i - 1]`` and ``toks[i]``) of the tokens allowed from ``heads0``, each
        committed byte by byte with the prefixes it shares with the one before it
        committed once."""
        c = self.c
        advance, viable = c.advance, c.viable
        step = c.scanner.step
        memo = c.scanner.step_memo      # step's own memo, read first (as step does)
        n = len(toks)
        allowed: list[int] = []    # indices into toks
        verdicts: dict = {}        # (node id, config) -> (node, viable), single-head states
        stack = [heads0]           # stack[k]: heads after the first k bytes of the path
        push = stack.append
        i = 0
        k = 0                      # bytes of toks[i] already on the stack
        while i < n:
            tb = toks[i]
            del stack[k + 1:]
            heads = stack[k]
            size = len(tb)
            j = k
            dead = -1
            while j < size:
                if len(heads) == 1:
                    # the common case, inlined: one head, bytes that emit no terminal
                    # (exactly the outcomes ``advance`` computes from ``step``)
                    node, cfg = heads[0]
                    cur = memo.cur
                    while j < size:
                        outs = cur.get((cfg << 8) | tb[j])
                        if outs is None:
                            outs = step(cfg, tb[j])
                            cur = memo.cur
                        if len(outs) != 1 or outs[0][0] is not None:
                            break
                        cfg = outs[0][1]
                        heads = ((node, cfg),)
                        push(heads)
                        j += 1
                    else:
                        break
                heads = advance(heads, tb[j])
                if not heads:
                    dead = j
                    break
                push(heads)
                j += 1
            if dead >= 0:
                # every token starting with tb[:dead+1] dies the same way
                succ = successor(tb[:dead + 1])
                i = n if succ is None else bisect_left(toks, succ, i + 1)
                if i < n:
                    # the next token shares at most ``dead`` bytes with this path
                    nb = toks[i]
                    m = min(dead, len(nb))
                    k = 0
                    while k < m and nb[k] == tb[k]:
                        k += 1
                continue
            if len(heads) == 1:
                # keyed by node identity; the entry holds the node so the id
                # cannot be reused by another node while the entry exists
                key = (id(heads[0][0]), heads[0][1])
                hit = verdicts.get(key)
                if hit is None:
                    hit = verdicts[key] = (heads[0][0], viable(heads[0]))
                ok = hit[1]
            else:
                ok = any(viable(h) for h in heads)
            if ok:
                allowed.append(i)
            i += 1
            if i < n:
                k = lcp[i]
        return allowed

    def _with_specials(self, state, positions: list[int]) -> list[int]:
        """The ids of the byte-order ``positions`` and of the special tokens bound to
        terminals that ``state`` can take (committed like any token: no bytes)."""
        c = self.c
        out = self.index.ids_of(positions).tolist()
        for tid, ids in c.special_terms_by_terminal().items():
            if c.advance_special(state.heads, tid):
                out.extend(ids)
        return out

    def mask(self, state, out=None) -> np.ndarray:
        ids = self.allowed(state)
        if state.finished or self.c.is_accepting(state):
            ids.extend(int(e) for e in self.eos)
        return ids_to_mask(ids, self.c.vocab.size, out=out)
