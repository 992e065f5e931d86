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
is kept, checked, with a view of it until the text ends (EOS committed): the copy
into it is one buffer assignment. The start state's mask is kept on the state.
A state with several heads unions its heads' sets of weights; its mask, when
not memoized, is the union of its heads' masks where they are memoized and of the
other heads' token sets.

Memory for the masks computed later is written at construction (``POOL_BYTES``):
the first write of fresh memory costs page faults that would otherwise fall on those
get_mask calls. The rest of what is done ahead at construction (token sets made dense,
masks of the walks over compiled states) is :mod:`stackmask.compile.ahead`'s, through
this class's public methods (:meth:`Masker.keep`, :meth:`Masker.union`,
:meth:`Masker.sparse_of`, :meth:`Masker.restricted_key`).
"""

from __future__ import annotations

import itertools
import mmap
import threading
from collections import Counter

import numpy as np
from pyroaring import BitMap

from .. import native
from ..memo import Memo
from ..wfa.weights import EMPTY_ID, mask_from_bitmap
from .count_sets import CountSets
from .held import HeldOut


def _same_stack(a, b, depth: int = 4) -> bool:
    """Whether nodes ``a`` and ``b`` (of equal states) hold the same stack: equal states
    over single links down to a node they share, within ``depth`` links. Walks from
    them read the same states, so their masks are equal."""
    for _ in range(depth):
        a, b = a.below, b.below
        if a is None or b is None:
            return False
        if a is b:
            return True
        if a.state != b.state:
            return False
    return False


def _link_groups(links: list) -> tuple:
    """A branching node's links grouped by their LR state: ``((state, (node, ...)), ...)``
    in the order of first appearance. A walk reads one edge per group."""
    by_state: dict = {}
    for n in links:
        g = by_state.get(n.state)
        if g is None:
            by_state[n.state] = [n]
        else:
            g.append(n)
    return tuple((s, tuple(g)) for s, g in by_state.items())


def _restricted(r, k: frozenset) -> frozenset:
    """The weights ``k`` of a walk from a start restricted by ``r`` (the token set it
    leaves out, or None): one term, ``k``'s mask without ``r``."""
    return frozenset(((r, k),)) if r is not None and k else k


def _fill(out, src: memoryview) -> memoryview:
    """Copy the mask ``src`` into the caller's ``out`` through a view of it, and return
    the view. The copy between memoryviews checks what checks of the array's attributes
    would (same item format, same shape, writeable; strided rows are filled element by
    element) at a fraction of their cost in a cold call (numpy's attribute getters then
    cost tens of µs; the first mask into a fresh buffer often is one). ``out`` may also
    be a memoryview of int32 words itself (``fill_masks``' rows: slices of one view)."""
    try:
        if type(out) is memoryview:
            mv = out
        elif isinstance(out, np.ndarray):
            mv = out.data
        else:
            raise TypeError
        mv[:] = src
    except (TypeError, ValueError, NotImplementedError):
        what = (f"memoryview of format {out.format!r}" if type(out) is memoryview
                else getattr(out, "dtype", type(out).__name__))
        ro = " (read-only)" if getattr(out, "readonly", False) or not getattr(
            getattr(out, "flags", None), "writeable", True) else ""
        raise ValueError(f"out must be a writeable int32 array of shape {src.shape}, not "
                         f"{what} {getattr(out, 'shape', '')}{ro}") from None
    return mv


class Masker:
    #: dense-mask memory allocated and written at construction, for the masks computed
    #: after it: the first write of fresh memory costs page faults (~5 per mask), which
    #: would otherwise fall on those get_mask calls. One mask per compiled automaton
    #: state at most (a process holding many small constraints, like one per JSON
    #: Schema, pays a few masks each; one compiled on first use, none), at most this
    #: many bytes and a quarter of the mask cache
    POOL_BYTES = 16 << 20
    #: token sets of at most this many tokens are written into a new mask by position
    #: (``_native.roaring_dense`` of their serialization: a few ns a token) instead of
    #: OR-ing their dense form (a pass over the whole mask, 19 KB with a 151k vocabulary),
    #: and are not made dense ahead
    SPARSE_MAX = 1024
    #: estimated bytes of an entry of that memo besides the serialization (dict slot,
    #: int key, bytes header); the memo holds at most an eighth of ``cache_bytes``
    SPARSE_ENTRY_BYTES = 100
    #: walks below a branching GSS node memoized on it, by DWA state: at most this many
    #: (then started over)
    WALK_MEMO_ENTRIES = 64

    def __init__(self, dwa, n_bits: int, eos_ids, ensure_config, cache_bytes: int = 256 << 20):
        self.dwa = dwa
        # what was done ahead (set by stackmask.compile.ahead.masks_ahead): the seconds
        # the masks ahead could take, count sets, token sets made dense, masks computed
        self.prefill_s = 0.0
        self.counts_ahead = self.prewarmed = self.prefilled = 0
        self.n_bits = n_bits
        self.n_words = (n_bits + 31) // 32
        self._ensure_config = ensure_config      # cfg -> start entry (compiles a new config)
        # the check of the start items held out of the automaton (None: there are none)
        self.held = HeldOut(dwa) if dwa.routed or dwa.route_min is not None else None
        # dense masks by the set of weights met: two generations (a hit costs one dict
        # lookup; a mask found in the old generation moves to the current one)
        self.memo: dict = {}
        self._memo_old: dict = {}
        self._memo_cur_bytes = 0
        self._memo_old_bytes = 0
        self.cache_bytes = int(cache_bytes)
        self._lock = threading.Lock()
        eos = mask_from_bitmap(BitMap(sorted(eos_ids)), n_bits)    # no interning: that
        eos.flags.writeable = False                # would index every set of an artifact
        self._eos_mask = eos.data
        self.misses = 0       # masks computed
        # token set id -> how many masks computed since construction united it (no lock:
        # concurrent misses may lose a count; it only orders hot_weights)
        self._uses: Counter = Counter()
        # the compiled inner loops (stackmask.native), or None; with them small token sets
        # are written by position (sparse_of, union, compile.ahead.prefill)
        self.native_loops = native.module()
        # token set id -> its portable serialization when it has at most SPARSE_MAX
        # tokens (b"" when more): written into a mask by position (compiled path only)
        self._sparse: dict = Memo()
        self.sparse_bytes = 0          # estimated bytes of _sparse (cleared past its bound)
        # diff token set of a configuration started on a base (or the tokens a restricted
        # start leaves out) -> its complement, dense
        self._not_dense: dict = {}
        # this thread's scratch rows (the pure path's temporaries: see _and_into)
        self._scratch = threading.local()
        # dense "iteration count in lo..hi" sets of counted chains' near states
        self.count_sets = CountSets(dwa.count_tables, self.n_words)
        self.bound_out = (None, None)   # the last caller's buffer (checked) and a view of it
        self._new_pool()
        # one per configuration on a base, and for the first EAGER_RESTRICT token sets of
        # restricted starts (there can be thousands: the rest on first use, ~20-40 µs
        # then), made ahead so that no first mask pays for them
        restrict = list(dict.fromkeys(dwa.init_restrict.values()))[:self.EAGER_RESTRICT]
        for wid in [w for _, w in dwa.init_base.values()] + restrict:
            if wid not in self._not_dense:
                self._complement(wid)
        self.held_warmed = self.held.warm() if self.held is not None else 0

    def _new_pool(self) -> None:
        """Allocate and write the rows new masks are stored in (see ``POOL_BYTES``)."""
        n_slots = min(self.POOL_BYTES, self.cache_bytes // 4) // (self.n_words * 4)
        n_slots = min(n_slots, sum(self.dwa.complete))
        pool = np.empty((n_slots, self.n_words), dtype=np.int32)
        pool.fill(0)                             # the page faults happen here
        # (rows, next free row): one attribute, read at once by _new_mask (next() is atomic)
        self._pool = (pool, itertools.count())

    def hot_weights(self) -> list:
        """Ids of the token sets the masks computed so far united, the most often first,
        then the loaded artifact's hot sets: what an artifact saved now should make dense
        first when loaded."""
        used = [w for w, _ in self._uses.most_common()]
        return list(dict.fromkeys(used + list(self.dwa.hot_weights)))

    def forget_masks(self) -> None:
        """Start over as a constraint loading this automaton would (e.g. after
        construction explored many states, whatever they needed): drop the memoized
        masks and dense token sets, in a new pool (the caller then computes ahead again:
        :func:`stackmask.compile.ahead.masks_ahead`)."""
        with self._lock:
            self.memo = {}
            self._memo_old = {}
            self._memo_cur_bytes = self._memo_old_bytes = 0
        self.dwa.weights.clear_dense()
        self._new_pool()
        self.prewarmed = self.prefilled = 0

    def sparse_of(self, wid: int) -> bytes:
        """Token set ``wid``'s serialization if masks write it by position (at most
        ``SPARSE_MAX`` tokens, compiled path), else ``b""`` (memoized)."""
        sp = self._sparse.get(wid)
        if sp is None:
            sp = b""
            if self.native_loops is not None:
                bm = self.dwa.weights.get(wid)
                if len(bm) <= self.SPARSE_MAX:
                    sp = bm.serialize()
            size = len(sp) + self.SPARSE_ENTRY_BYTES
            if self.sparse_bytes + size > self.cache_bytes // 8:     # bounded: start over
                self._sparse = Memo()
                self.sparse_bytes = 0
            self._sparse[wid] = sp
            self.sparse_bytes += size
        return sp

    def _new_mask(self) -> np.ndarray:
        """Memory for one more dense mask: a row of the pool while it lasts, then of a
        chunk mapped for the rows after it (:meth:`_new_chunk`)."""
        pool, slots = self._pool
        i = next(slots)
        if i < len(pool):
            return pool[i]
        return self._new_chunk()

    #: rows past the pool come from chunks of this many bytes, each its own anonymous
    #: mapping (not written ahead: each row's pages fault in when the mask is written)
    CHUNK_BYTES = 1 << 20

    def _new_chunk(self) -> np.ndarray:
        """A row of a new chunk (which becomes the pool the next rows come from). Not
        ``np.empty`` per mask: a mask-sized ``malloc`` makes glibc first merge every small
        block freed since the last one (token set operations free many), which took
        0.1-0.5 ms inside masks of generated JSON Schemas; a mapping never does. A chunk
        is unmapped when no mask of it is left."""
        with self._lock:
            pool, slots = self._pool
            i = next(slots)
            if i < len(pool):          # another thread made one meanwhile
                return pool[i]
            row = self.n_words * 4
            n = max(1, self.CHUNK_BYTES // row)
            chunk = np.frombuffer(mmap.mmap(-1, n * row), dtype=np.int32).reshape(n, self.n_words)
            self._pool = (chunk, itertools.count(1))
            return chunk[0]

    def branches(self, q: int, node) -> frozenset:
        """The weights met walking every link of the branching GSS node ``node`` from DWA
        state ``q``, memoized on the node by ``q``. The branching nodes below that the
        walk reaches memoize their own parts the same way, so the walk is done bottom
        up: a GLR stack keeps its lower nodes from token to token (an ambiguity that
        stays open for a while leaves a ladder of branching nodes), and the next masks
        walk only the nodes new above the ones they find memoized. The order is a
        depth-first post-order with an explicit stack (a ladder can be deeper than
        Python's recursion limit); the GSS is acyclic (links go back in the input), so
        a part is complete when its frame is popped the second time."""
        memo = node.walk_memo
        if memo is not None:
            r = memo.get(q)
            if r is not None:
                return r
        dwa = self.dwa
        trans, default, complete = dwa.trans, dwa.default, dwa.complete
        edges_of = dwa.state_edges           # a loaded state's edges, made on first use
        limit = self.WALK_MEMO_ENTRIES
        done: dict = {}          # (q, node) -> weights met, for the parts of this call
        waiting: dict = {}       # (q, node) -> (weights met above its parts below, parts)
        todo = [(q, node)]
        while todo:
            key = todo.pop()
            w8 = waiting.pop(key, None)
            if w8 is not None:               # second visit: its parts below are done
                outs, kids = w8
                for k in kids:
                    outs |= done[k]
            else:
                if key in done:
                    continue
                q1, n1 = key
                outs = set()
                kids = []
                groups = getattr(n1, "link_groups", None)    # unset until first read
                if groups is None:
                    groups = n1.link_groups = _link_groups(n1.links)
                # the links read alike while their states are equal (a dense GSS: ~50
                # links, ~2 states)
                for s, nodes in groups:
                    e = (trans[q1] or edges_of(q1)).get(s)
                    if e is None:
                        e = default[q1] if complete[q1] else dwa.edge(q1, s)
                        if e is None:
                            continue
                    q2, w = e
                    if w:
                        outs.add(w)
                    if q2 < 0:
                        continue
                    for nd in nodes:         # one path per link, to the next branching node
                        q3 = q2
                        while True:
                            below = nd.below
                            if below is None:    # the root, or several links
                                if nd.links:
                                    m = nd.walk_memo
                                    r = None if m is None else m.get(q3)
                                    if r is not None:
                                        outs |= r
                                    else:
                                        kids.append((q3, nd))
                                break
                            nd = below
                            e = (trans[q3] or edges_of(q3)).get(nd.state)
                            if e is None:
                                e = default[q3] if complete[q3] else dwa.edge(q3, nd.state)
                                if e is None:
                                    break
                            q3, w = e
                            if w:
                                outs.add(w)
                            if q3 < 0:
                                break
                if kids:
                    waiting[key] = (outs, kids)
                    todo.append(key)
                    todo.extend(k for k in kids if k not in done)
                    continue
            r = done[key] = frozenset(outs)
            n1 = key[1]
            m = n1.walk_memo
            if m is None or len(m) >= limit:
                m = n1.walk_memo = {}
            m[key[0]] = r
        return done[(q, node)]

    def mask(self, state, out=None) -> np.ndarray:
        src = state.mask_src
        if src is not None:
            # a pinned mask (the start state's): written through a view made for this
            # call, not kept (keeping it is left to the text's second mask: the first is
            # often a cold call, into a new buffer or the first after idle)
            if out is None:
                return src.obj.copy()
            _fill(out, src)
            return out
        if state.finished:
            src = self._eos_mask
        elif state.mask_key is not None:
            # asked before (a state whose mask is asked again): no walk
            key = state.mask_key
            src = self.memo.get(key)
            if src is None:
                src = self.lookup_old(key)
        else:
            dwa = self.dwa
            heads = state.heads
            alias = dwa.alias
            if alias:           # configurations no token tells apart share one start
                heads = tuple([(top, alias.get(cfg, cfg)) for top, cfg in heads])
            if len(heads) == 2 and dwa.pair_init:
                heads = self.paired(heads)
            key = None
            for top, cfg in heads:
                # the walk of a head depends only on (GSS node, config): memoized on the
                # node as (config, weights met), for the last config asked (one attribute,
                # so threads sharing nodes read a consistent pair)
                k = top.mask_memo
                if k[0] == cfg:
                    k = k[1]
                else:
                    k = self.head_key(top, cfg)
                    top.mask_memo = (cfg, k)
                key = k if key is None else key | k
            state.mask_key = key
            src = self.memo.get(key)
            if src is None:
                src = self.lookup_old(key, heads)
        if out is None:
            return src.obj.copy()
        bound = self.bound_out
        if bound[0] is out:
            bound[1][:] = src
        else:               # another buffer, or the first since the last text ended: kept
            self.bound_out = (out, _fill(out, src))
        return out

    #: the mask key of a walk from a start restricted by ``r`` (see :func:`_restricted`)
    restricted_key = staticmethod(_restricted)

    def head_key(self, top, cfg) -> frozenset:
        """The weights of a head in configuration ``cfg`` on node ``top`` (not memoized on
        the node: :meth:`mask` does that)."""
        dwa = self.dwa
        terms = dwa.count_split.get(cfg)
        if terms is not None:
            return self.count_key(top, terms)
        k = self.restricted_walk(top, cfg)
        b = dwa.init_base.get(cfg)
        if b is not None:
            # the base's mask on this stack without the tokens that differ, and this
            # configuration's own walk for those; the base's walk is memoized on the node
            # apart (the configurations met while a name is written share the base and
            # the node)
            bm = getattr(top, "base_memo", None)
            if bm is None or bm[0] != b[0]:
                bm = top.base_memo = (b[0], self.restricted_walk(top, b[0]))
            k = k | {(b[1], bm[1])}
        return k

    def count_key(self, top, terms) -> frozenset:
        """The weights of a head in a counted chain's state near a bound
        (``ParserDWA.count_split``): per term, the deep configuration's weights as one
        term ``((table, lo, hi), weights)``, its mask without the tokens whose iteration
        count is outside ``lo..hi`` (:class:`.count_sets.CountSets`); all of them for table -1."""
        alias = self.dwa.alias
        out: set = set()
        for rep, table, lo, hi in terms:
            k = self.head_key(top, alias.get(rep, rep))
            if not k:
                continue
            if table < 0:
                out |= k
            else:
                out.add(((table, lo, hi), k))
        return frozenset(out)

    def restricted_walk(self, node, cfg) -> frozenset:
        """:meth:`walk`, for a configuration whose start is another's restricted
        (``init_restrict``): that start's weights as one term, the tokens left out
        removed."""
        k = self.walk(node, cfg)     # first: it may compile ``cfg``, restricted or not
        held = self.dwa.routed.get(cfg)
        if held is not None:
            k = k | self.routed_weights(node, held)
        return _restricted(self.dwa.init_restrict.get(cfg), k)

    def routed_weights(self, node, held: tuple) -> frozenset:
        """The weights of the start items ``held`` out of the automaton
        (``ParserDWA.routed``) that hold on the stack from ``node`` down
        (:class:`.held.HeldOut`: made at construction wherever items are or may be held
        out, ``route_min`` set, the only way ``routed`` grows)."""
        return self.held.weights(node, held)

    def walk(self, node, cfg) -> frozenset:
        """The weights met walking the GSS from ``node`` down, from the start of lexer
        configuration ``cfg`` (or of a pair of heads: ``cfg`` a pair key)."""
        dwa = self.dwa
        e = dwa.init.get(cfg)
        if e is None:
            e = dwa.pair_init[cfg] if type(cfg) is tuple else self._ensure_config(cfg)
        q, w = e
        outs = {w} if w else set()
        add = outs.add
        trans, edges_of = dwa.trans, dwa.state_edges
        while q >= 0:            # one path: one link per node
            e = (trans[q] or edges_of(q)).get(node.state)
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
                    outs |= self.branches(q, node)
                break
            node = below
        return frozenset(outs)

    def release_out(self) -> None:
        """Drop the view of the last buffer filled (a text ended): the caller's buffer is
        not kept alive after the caller drops it (a new buffer can then reuse its
        memory, still in the CPU caches, instead of memory no cache holds)."""
        self.bound_out = (None, None)

    def pin(self, state) -> None:
        """Keep ``state``'s mask on it, outside the memo (never evicted; one mask's
        memory): for the start state, whose mask is every text's first, and usually a
        cold call (the first after a request arrives, with nothing of this constraint
        in the CPU caches), the mask is then one attribute read and one copy."""
        a = self.mask(state)
        a.flags.writeable = False
        state.mask_src = a.data

    def paired(self, heads: tuple) -> tuple:
        """Two heads on GSS nodes one right above the other, or on one node (or on
        twin nodes: the same states down to a shared node, single links), with a start
        state compiled for their configurations (:meth:`ParserDWA.add_pair`): one head
        walked from the upper node, its "configuration" the pair's key; else ``heads``."""
        (na, ca), (nb, cb) = heads
        if na.below is nb:
            top, key = na, (ca, cb, 1)
        elif nb.below is na:
            top, key = nb, (cb, ca, 1)
        elif na is nb or (na.state == nb.state and _same_stack(na, nb)):
            # one node, or two nodes for the same stack (each lexer branch shifted the
            # same terminals onto the same node)
            top, key = na, self.dwa.pair_key(ca, cb, False)
        else:
            return heads
        return ((top, key),) if key in self.dwa.pair_init else heads

    def lookup_old(self, key: frozenset, heads=()) -> memoryview:
        """A mask that is not in the current generation: moved up from the old one,
        or computed (for several heads: from their own masks)."""
        with self._lock:
            m = self._memo_old.pop(key, None)
            if m is not None:
                self._memo_old_bytes -= m.nbytes
                self._insert(key, m)
                return m
        if len(heads) > 1:
            parts = []
            for top, cfg in heads:
                k = top.mask_memo            # just set by mask() (unless another thread
                if k[0] != cfg:               # asked the node for another config since)
                    return self.union(key)
                parts.append(k[1])
            return self._combine(key, parts)
        return self.union(key)

    def _combine(self, key: frozenset, parts: list) -> memoryview:
        """The mask of ``key``, the union of the weight sets ``parts`` (one per head):
        the union of the memoized masks of parts (either generation) with the dense
        masks of the other parts' weights, each weight once (a part not memoized is not
        computed on its own: uniting its weights into this mask reads less memory)."""
        memo, old = self.memo, self._memo_old
        bases, rest = [], set()
        for p in parts:
            m = memo.get(p)
            if m is None:
                m = old.get(p)
            if m is None:
                rest.update(p)
            else:
                bases.append(m.obj)
        return self.union(key, bases, rest)

    def keep(self, key: frozenset, a: np.ndarray, computed: bool = True) -> memoryview:
        """Memoize the new mask ``a`` of ``key``: made read-only and kept as a view
        (what a copy into a caller's buffer reads); ``computed`` counts it as a miss."""
        a.flags.writeable = False
        m = a.data
        with self._lock:
            if computed:
                self.misses += 1
            self._insert(key, m)
        return m

    def _insert(self, key: frozenset, m: memoryview) -> None:
        """Add to the current generation (lock held). Each generation holds at most
        half of ``cache_bytes`` (at least one mask); a full current generation
        becomes the old one and the old one is dropped."""
        if key in self.memo:
            return
        if self.memo and self._memo_cur_bytes + m.nbytes > self.cache_bytes // 2:
            self._memo_old = self.memo
            self._memo_old_bytes = self._memo_cur_bytes
            self.memo = {}
            self._memo_cur_bytes = 0
        self.memo[key] = m
        self._memo_cur_bytes += m.nbytes

    def _term_into(self, term: tuple, out: np.ndarray, accumulate: bool = False) -> None:
        """Write the mask of a term ``(diff token set, base weights)`` of a configuration
        started on a base into ``out`` (ORed into it with ``accumulate``): the base's mask
        (memoized under its weights like any mask) without the tokens of the set. For a
        counted chain's term (``((table, lo, hi), weights)``) the tokens kept are those
        counting ``lo..hi``."""
        wid, base = term
        m = self.memo.get(base)
        if m is None:
            m = self.lookup_old(base)
        drop = None
        if type(wid) is tuple:
            keep, drop = self.count_sets.bounds(*wid)
        else:
            keep = self._not_dense.get(wid)
            if keep is None:
                keep = self._complement(wid)
        self._and_into(out, m.obj, keep, drop, accumulate)

    def _and_into(self, out, a, b, c=None, accumulate: bool = False) -> None:
        """``out = a & b & ~c`` (``c`` None: ``a & b``), ORed into ``out`` with
        ``accumulate``, without a fresh array: compiled in one pass, else through a
        scratch row of this thread's (a fresh array of a mask's size costs page faults,
        ~10 µs and up to hundreds in the tail, where a temporary lands on new memory)."""
        nat = self.native_loops
        if nat is not None:
            nat.and_into(out, a, b, c, accumulate)
            return
        scratch = self._scratch
        tmp = getattr(scratch, "row", None)
        if tmp is None:
            tmp = scratch.row = np.zeros(self.n_words, dtype=np.int32)
        dst = tmp if accumulate else out
        np.bitwise_and(a, b, out=dst)
        if c is not None:
            if accumulate:
                tmp2 = getattr(scratch, "row2", None)
                if tmp2 is None:
                    tmp2 = scratch.row2 = np.zeros(self.n_words, dtype=np.int32)
            else:
                tmp2 = tmp
            np.bitwise_and(dst, c, out=tmp2)
            np.bitwise_xor(dst, tmp2, out=dst)       # dst & ~c
        if accumulate:
            np.bitwise_or(out, tmp, out=out)

    #: restricted starts' token sets made dense ahead (19 KB each with a 151k vocabulary)
    EAGER_RESTRICT = 512

    def _complement(self, wid: int) -> np.ndarray:
        """The dense complement of token set ``wid`` (kept: one per configuration on a
        base or restricted start; bits past the vocabulary may be set, they are 0 in the
        masks it meets). A set of most tokens (what a restricted start leaves out) is
        complemented as a token set first: its few members are scattered, not its many."""
        wt = self.dwa.weights
        bm = wt.get(wid)
        if 2 * len(bm) > wt.n_tokens:
            keep = mask_from_bitmap(wt.universe - bm, self.n_bits)
        else:
            keep = np.invert(mask_from_bitmap(bm, self.n_bits))
        keep.flags.writeable = False
        self._not_dense[wid] = keep
        return keep

    def config_cache_estimate(self) -> int:
        """Bytes held by what compiling lexer configurations on first use cached."""
        return self._ensure_config.cache_estimate()

    @property
    def memo_bytes(self) -> int:
        """Bytes held by the memo of dense masks (both generations)."""
        return self._memo_cur_bytes + self._memo_old_bytes

    def union(self, key: frozenset, bases=(), weights=None, computed: bool = True) -> memoryview:
        """The mask of ``key`` (memoized): the union of ``bases`` (masks), the token sets
        of ``weights`` (default: ``key``'s) of at most ``SPARSE_MAX`` tokens written by
        position, and the dense masks of the others where they are cached; the rest are
        united as token sets first, so a mask costs at most one conversion of a token set
        to a dense mask."""
        wt = self.dwa.weights
        n_bits = self.n_bits
        dense, sets = list(bases), []
        if weights is None:
            weights = key
        terms = [w for w in weights if type(w) is tuple]
        m = None
        if terms:
            # (token set, weights): a base's mask without the set, written into the new
            # mask (a restricted start's walk: one term alone, the whole mask); the
            # bases' masks are found first (they may be computed: their own rows)
            m = self._new_mask()
            for i, t in enumerate(terms):
                self._term_into(t, m, i > 0)
            if len(terms) == len(weights) and not dense:
                return self.keep(key, m, computed)
            weights = [w for w in weights if type(w) is not tuple]
        self._uses.update(weights)
        sparse = self._sparse
        small = []                   # serializations of small sets: written by position
        for w in weights:
            if w != EMPTY_ID:
                sp = sparse.get(w)
                if sp is None:
                    sp = self.sparse_of(w)
                if sp:
                    small.append(sp)
                    continue
                d = wt.cached_dense(w, n_bits)
                if d is None:
                    sets.append(w)
                else:
                    dense.append(d)
        if len(sets) == 1:
            dense.append(wt.dense(sets[0], n_bits))        # one set: cached for next time
        elif sets:
            dense.append(mask_from_bitmap(BitMap.union(*[wt.get(w) for w in sets]), n_bits))
        if m is not None:            # the terms are in it
            for d in dense:
                np.bitwise_or(m, d, out=m)
        else:
            m = self._new_mask()
            if not dense:
                m.fill(0)
            elif len(dense) == 1:
                np.copyto(m, dense[0])
            else:
                np.bitwise_or(dense[0], dense[1], out=m)
                for d in dense[2:]:
                    np.bitwise_or(m, d, out=m)
        if small:
            self.native_loops.roaring_dense_all(small, m.view(np.uint32))
        return self.keep(key, m, computed)
