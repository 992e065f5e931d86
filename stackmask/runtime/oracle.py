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

from ..compile import successor as _successor, vocab_index
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
        toks = self.toks
        n = len(toks)
        allowed: list[int] = []    # byte-order positions
        verdicts: dict = {}        # (node id, config) -> (node, viable), single-head states
        stack = [state.heads]      # stack[k]: heads after the first k bytes of ``prev``
        prev = b""
        i = 0
        while i < n:
            tb = toks[i]
            k = 0
            lim = min(len(prev), len(tb), len(stack) - 1)
            while k < lim and prev[k] == tb[k]:
                k += 1
            del stack[k + 1:]
            dead = -1
            heads = stack[k]
            for j in range(k, len(tb)):
                if len(heads) == 1:
                    # the common case, inlined: one head, no terminal emitted
                    node, cfg = heads[0]
                    outs = step(cfg, tb[j])
                    if len(outs) == 1 and outs[0][0] is None:
                        heads = ((node, outs[0][1]),)
                    else:
                        heads = advance(heads, tb[j])
                else:
                    heads = advance(heads, tb[j])
                if not heads:
                    dead = j
                    break
                stack.append(heads)
            if dead >= 0:
                # every token starting with tb[:dead+1] dies the same way
                succ = _successor(tb[:dead + 1])
                i = n if succ is None else bisect_left(toks, succ, i + 1)
                prev = tb[:dead]
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
            prev = tb
            i += 1
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
