"""The reference oracle: the definition of the mask, executed literally.

For every token, commit its bytes on the state and check viability. Tokens
are visited in byte order so that all tokens sharing a prefix share the work
of committing that prefix (exactly the same ``advance`` calls a separate
``commit`` would make), and a dead prefix skips every token below it. Cost is
O(|V|) per step in the worst case: this exists to define and test masks, not
to serve them.
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
        if state.finished:
            return []
        c = self.c
        advance, viable = c.advance, c.viable
        step = c.scanner.step
        memo = c.scanner.step_memo      # step's own memo, read first (as step does)
        toks = self.toks
        lcp = self.index.common_prefixes()
        n = len(toks)
        allowed: list[int] = []    # byte-order positions
        verdicts: dict = {}        # (node id, config) -> (node, viable), single-head states
        stack = [state.heads]      # stack[k]: heads after the first k bytes of the path
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
        out = self.index.ids_of(allowed).tolist()
        # special tokens bound to terminals: committed like any token (no bytes)
        for tid, ids in c.special_terms_by_terminal().items():
            if c.advance_special(state.heads, tid):
                out.extend(ids)
        return out

    def mask(self, state, out=None) -> np.ndarray:
        ids = self.allowed(state)
        if state.finished or self.c.is_accepting(state):
            ids.extend(int(e) for e in self.eos)
        return ids_to_mask(ids, self.c.vocab.size, out=out)
