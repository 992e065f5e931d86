"""get_mask: walk the Parser DWA down the graph-structured stack.

For each head ``(node, lexer configuration)`` the walk starts at the
configuration's start state and reads the LR states of the GSS top down,
following every link (GLR stacks share tails, so the frontier is a set of
``(DWA state, GSS node)`` pairs: paths that meet in the same pair are walked
once). Edge weights are token sets decided on that edge; the mask is their
union. A walk stops where the DWA state has nothing left to decide (-1) or the
stack ends (the root has no links).

The dense mask is memoized by the set of edge weights met, so a repeated
configuration costs the walk (a few dict lookups), one frozenset and one copy;
the walk's result is memoized on the GSS node (for the last configuration
asked), so asking again for the same node costs two lookups and the copy. The
dense-mask memo is bounded in bytes (two generations of at most half the bound
each). Masks are kept as views of read-only arrays, and the last ``out`` buffer
is kept checked with a view of it: the copy into it is one buffer assignment.
A state with several heads unions its heads' sets of weights.
"""

from __future__ import annotations

import threading

import numpy as np
from pyroaring import BitMap

from ..wfa.weights import EMPTY_ID, mask_from_bitmap


_INT32 = np.dtype(np.int32)


class Masker:
    # Token sets are turned into dense masks the first time a mask needs them (the
    # cold get_mask tail). When all of an automaton's sets fit in PREWARM_BYTES as
    # dense masks, and in the dense cache, that is done once at construction instead.
    PREWARM_BYTES = 32 << 20

    def __init__(self, dwa, n_bits: int, eos_ids, ensure_config, cache_bytes: int = 256 << 20):
        self.dwa = dwa
        self.n_bits = n_bits
        self.n_words = (n_bits + 31) // 32
        self._ensure_config = ensure_config      # cfg -> start entry (compiles a new config)
        # dense masks by the set of weights met: two generations (a hit costs one dict
        # lookup; a mask found in the old generation moves to the current one)
        self._memo: dict = {}
        self._memo_old: dict = {}
        self._memo_cur_bytes = 0
        self._memo_old_bytes = 0
        self.cache_bytes = int(cache_bytes)
        self._lock = threading.Lock()
        eos = mask_from_bitmap(BitMap(sorted(eos_ids)), n_bits)    # no interning: that
        eos.flags.writeable = False                # would index every set of an artifact
        self._eos_mask = eos.data
        self.misses = 0       # masks computed
        self._out = (None, None)   # the last caller's buffer (checked) and a view of it
        self.prewarmed = self._prewarm()

    def _prewarm(self) -> bool:
        wt = self.dwa.weights
        n = len(wt)
        need = n * self.n_words * 4
        cap = getattr(wt, "_cache_bytes", None)
        if need > self.PREWARM_BYTES or (cap is not None and need > cap // 2):
            return False
        for w in range(n):
            wt.dense(w, self.n_bits)
        return True

    def _walk_branching(self, q0: int, links, outs: set) -> None:
        """Walk every link of a branching GSS node from DWA state ``q0``, adding the
        weights met to ``outs``; a (DWA state, node) pair reached by several paths is
        walked once (nodes seen are kept per DWA state: a node's link list is checked
        against them in one pass, nodes hash by identity)."""
        dwa = self.dwa
        trans = dwa.trans
        default = dwa.default
        complete = dwa.complete
        seen = {q0: set(links)}
        todo = [(q0, n) for n in links]
        while todo:
            q, node = todo.pop()
            e = trans[q].get(node.state)
            if e is None:
                e = default[q] if complete[q] else dwa.edge(q, node.state)
                if e is None:
                    continue
            q2, w = e
            if w:
                outs.add(w)
            if q2 < 0:
                continue
            below = node.links
            s = seen.get(q2)
            if s is None:
                seen[q2] = set(below)
            else:
                below = [m for m in below if m not in s]
                s.update(below)
            todo.extend([(q2, m) for m in below])

    def mask(self, state, out=None) -> np.ndarray:
        if state.finished:
            src = self._eos_mask
        else:
            dwa = self.dwa
            key = None
            for top, cfg in state.heads:
                # the walk of a head depends only on (GSS node, config): memoized on the
                # node as (config, weights met), for the last config asked (one attribute,
                # so threads sharing nodes read a consistent pair)
                k = top._mask_memo
                if k[0] == cfg:
                    k = k[1]
                else:
                    node = top
                    e = dwa.init.get(cfg)
                    if e is None:
                        e = self._ensure_config(cfg)
                    q, w = e
                    outs = {w} if w else set()
                    add = outs.add
                    trans = dwa.trans
                    while q >= 0:            # one path: one link per node
                        e = trans[q].get(node.state)
                        if e is None:
                            e = dwa.default[q] if dwa.complete[q] else dwa.edge(q, node.state)
                            if e is None:
                                break
                        q, w = e
                        if w:
                            add(w)
                        below = node.below
                        if below is None:    # the root, or several links
                            if node.links and q >= 0:
                                self._walk_branching(q, node.links, outs)
                            break
                        node = below
                    k = frozenset(outs)
                    top._mask_memo = (cfg, k)
                key = k if key is None else key | k
            src = self._memo.get(key)
            if src is None:
                src = self._lookup_old(key)
        if out is None:
            return src.obj.copy()
        bound = self._out
        if bound[0] is not out:
            bound = self._bind_out(out, src)
        bound[1][:] = src
        return out

    def _bind_out(self, out, src) -> tuple:
        """Check a caller's buffer; keep it with a view of it (the next masks into the
        same buffer copy without the checks)."""
        if out.shape != src.shape or (out.dtype is not _INT32 and out.dtype != _INT32) \
                or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out must be a writeable contiguous int32 array of shape {src.shape}, "
                             f"not {out.dtype} {out.shape}")
        bound = self._out = (out, out.data)
        return bound

    def _lookup_old(self, key: frozenset) -> memoryview:
        """A mask that is not in the current generation: moved up from the old one,
        or computed."""
        with self._lock:
            m = self._memo_old.pop(key, None)
            if m is not None:
                self._memo_old_bytes -= m.nbytes
                self._insert(key, m)
                return m
        return self._union(key)

    def _insert(self, key: frozenset, m: memoryview) -> None:
        """Add to the current generation (lock held). Each generation holds at most
        half of ``cache_bytes`` (at least one mask); a full current generation
        becomes the old one and the old one is dropped."""
        if key in self._memo:
            return
        if self._memo and self._memo_cur_bytes + m.nbytes > self.cache_bytes // 2:
            self._memo_old = self._memo
            self._memo_old_bytes = self._memo_cur_bytes
            self._memo = {}
            self._memo_cur_bytes = 0
        self._memo[key] = m
        self._memo_cur_bytes += m.nbytes

    @property
    def _memo_bytes(self) -> int:
        return self._memo_cur_bytes + self._memo_old_bytes

    def _union(self, key: frozenset) -> memoryview:
        """The mask of ``key`` (memoized): the union of its weights' dense masks where
        they are cached; the others are united as token sets first, so a mask costs at
        most one conversion of a token set to a dense mask."""
        wt = self.dwa.weights
        n_bits = self.n_bits
        dense, sets = [], []
        for w in key:
            if w != EMPTY_ID:
                d = wt.cached_dense(w, n_bits)
                if d is None:
                    sets.append(w)
                else:
                    dense.append(d)
        if len(sets) == 1:
            dense.append(wt.dense(sets[0], n_bits))        # one set: cached for next time
        elif sets:
            dense.append(mask_from_bitmap(BitMap.union(*[wt.get(w) for w in sets]), n_bits))
        if not dense:
            m = np.zeros(self.n_words, dtype=np.int32)
        else:
            m = dense[0].copy()
            for d in dense[1:]:
                np.bitwise_or(m, d, out=m)
        m.flags.writeable = False
        m = m.data               # masks are kept as views of read-only arrays: the view
        with self._lock:         # is what a copy into a caller's buffer reads
            self.misses += 1
            self._insert(key, m)
        return m
