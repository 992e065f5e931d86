# Included by _native.pyx (one extension): the Parser DWA's state expansion over
# int-coded items, the twin of ``ParserDWA._index`` / ``_edge`` / ``expand``
# (stackmask/compile/parser_dwa.py), which stay the reference.
#
# Items ``(skip, lhs, terms, F)`` have the ids of ``TemplateRuns`` (_templates.pxi), which
# also makes their steps (the symbolic runs of ``Templates.step``); a state is the
# sorted array of its ``(iid << 32) | weight id`` pairs, and its bytes are the state's
# key. The token-set unions and differences are kept in open-addressing tables of int64
# keys (the LR gotos are ``TemplateRuns``'); the token-set operations themselves (and
# ``Templates.relevant``, once per item) are called in Python.

from cpython.bytes cimport PyBytes_AsString


cdef class ExpandCore:
    """Int-coded items and the compiled expansion of Parser DWA states (see the
    comment at the top of ``_expand.pxi``). ``runs``: the :class:`TemplateRuns` of the
    automaton's LR tables (items, their steps, the gotos); ``relevant``:
    ``Templates.relevant`` (the stack states an item reads); ``owner``: the token-set
    table (:class:`~stackmask.wfa.weights.WeightTable`), whose memoized ``union``,
    ``difference`` and ``union_all`` on ids are called on a miss of this core's own memos
    (:meth:`set_weights` replaces the table, and drops those memos); ``empty`` and
    ``universe``: the ids of the empty and the full token set."""

    cdef TemplateRuns runs
    cdef object relevant_fn, union_fn, diff_fn, union_all_fn
    cdef readonly object weights_owner
    cdef dict rel_id
    cdef int64_t n_items, items_cap, words
    cdef int32_t *rel_of          # -2: not computed yet
    cdef int32_t *dec_of          # the item with one skip less (-2: not computed)
    cdef int32_t *base_of         # (0, NO_LHS, terms, F) of an lhs item (-2: not computed)
    cdef int32_t *slot_w          # per item: its weight in the successor being built
    cdef int64_t *slot_stamp      # per item: the successor it was last set for
    cdef int64_t *slot_more       # per item: more weights for it (a chain in aux), or -1
    cdef _Buf aux                 # chains of (weight, next) united when a successor is done
    cdef _Buf tmp                 # the weights of one union
    cdef int64_t stamp
    cdef _Sets rels               # relevance sets (sorted LR states), by id
    cdef uint64_t *rel_bits       # per relevance set, a bitset over LR states
    cdef _Map union_memo, diff_memo
    cdef int64_t empty, universe
    cdef int64_t *lr_stamp
    cdef int64_t lr_mark

    def __cinit__(self):
        self.rel_of = self.dec_of = self.base_of = NULL
        self.slot_w = NULL
        self.slot_stamp = NULL
        self.slot_more = NULL
        self.aux.a = self.tmp.a = NULL
        self.aux.n = self.aux.cap = self.tmp.n = self.tmp.cap = 0
        self.rel_bits = NULL
        self.lr_stamp = NULL
        _sets_init(&self.rels)
        _map_init(&self.union_memo, 1024)
        _map_init(&self.diff_memo, 1024)

    def __dealloc__(self):
        free(self.rel_of)
        free(self.dec_of)
        free(self.base_of)
        free(self.slot_w)
        free(self.slot_stamp)
        free(self.slot_more)
        free(self.aux.a)
        free(self.tmp.a)
        free(self.rel_bits)
        free(self.lr_stamp)
        _sets_free(&self.rels)
        _map_free(&self.union_memo)
        _map_free(&self.diff_memo)

    def __init__(self, TemplateRuns runs, relevant, owner, Py_ssize_t empty,
                 Py_ssize_t universe):
        self.runs = runs
        self.relevant_fn = relevant
        self.rel_id = {}
        self.n_items = 0
        self.items_cap = 0
        self.words = (runs.n_lr + 63) // 64
        self.stamp = 0
        self.empty = empty
        self.universe = universe
        self.lr_stamp = <int64_t *>calloc(max(runs.n_lr, 1), sizeof(int64_t))
        if self.lr_stamp == NULL:
            raise MemoryError()
        self.lr_mark = 0
        self.set_weights(owner)

    def set_weights(self, owner):
        """Use the token-set table ``owner`` (its ``union``, ``difference`` and
        ``union_all``) from now on; the memos of the previous table's ids are dropped."""
        self.weights_owner = owner
        self.union_fn = owner.union
        self.diff_fn = owner.difference
        self.union_all_fn = owner.union_all
        _map_clear(&self.union_memo, 1024)
        _map_clear(&self.diff_memo, 1024)

    def clear_memos(self):
        """Drop the run and token-set memos (caches, recomputed on use)."""
        self.runs.clear_memos()
        _map_clear(&self.union_memo, 1024)
        _map_clear(&self.diff_memo, 1024)

    def memo_entries(self):
        """Entries of the run and token-set memos."""
        return self.runs.memo_entries() + self.union_memo.n + self.diff_memo.n

    # -- items -----------------------------------------------------------------------
    cdef int _sync(self) except -1:
        """Extend the per-item arrays to the items ``runs`` has made."""
        cdef int64_t n = self.runs.n_items, cap, i
        if n <= self.n_items:
            return 0
        if n > self.items_cap:
            cap = max(1024, 2 * n)
            self.rel_of = <int32_t *>realloc(self.rel_of, cap * sizeof(int32_t))
            self.dec_of = <int32_t *>realloc(self.dec_of, cap * sizeof(int32_t))
            self.base_of = <int32_t *>realloc(self.base_of, cap * sizeof(int32_t))
            self.slot_w = <int32_t *>realloc(self.slot_w, cap * sizeof(int32_t))
            self.slot_stamp = <int64_t *>realloc(self.slot_stamp, cap * sizeof(int64_t))
            self.slot_more = <int64_t *>realloc(self.slot_more, cap * sizeof(int64_t))
            if (self.rel_of == NULL or self.dec_of == NULL or self.base_of == NULL or self.slot_w == NULL
                    or self.slot_stamp == NULL or self.slot_more == NULL):
                raise MemoryError()
            self.items_cap = cap
        for i in range(self.n_items, n):
            self.rel_of[i] = -2
            self.dec_of[i] = -2
            self.base_of[i] = -2
            self.slot_stamp[i] = 0
        self.n_items = n
        return 0

    cdef int64_t _iid(self, object item) except -1:
        cdef int64_t i = self.runs.iid(item)
        self._sync()
        return i

    cdef int64_t _rel(self, int64_t i) except -2:
        cdef int64_t r = self.rel_of[i]
        cdef object fs
        cdef PyObject *p
        if r != -2:
            return r
        fs = self.relevant_fn(self.runs.item(i))
        p = PyDict_GetItem(self.rel_id, fs)
        if p != NULL:
            r = <int64_t><object>p
        else:
            r = self._intern_rel(fs)
            self.rel_id[fs] = r
        self.rel_of[i] = <int32_t>r
        return r

    cdef int64_t _intern_rel(self, object fs) except -1:
        cdef int64_t k = len(fs), j, r, s
        cdef int32_t *a = <int32_t *>malloc(max(k, 1) * sizeof(int32_t))
        cdef bint is_new
        cdef uint64_t *bits
        if a == NULL:
            raise MemoryError()
        try:
            j = 0
            for s in fs:
                if not 0 <= s < self.runs.n_lr:      # the ALL marker: skip items only
                    raise ValueError("a relevance set outside the LR states")
                a[j] = <int32_t>s
                j += 1
            qsort(a, k, sizeof(int32_t), _cmp_i32)
            r = _sets_intern(&self.rels, a, k, &is_new)
        finally:
            free(a)
        if is_new:
            bits = <uint64_t *>realloc(self.rel_bits,
                                       (r + 1) * self.words * sizeof(uint64_t))
            if bits == NULL:
                raise MemoryError()
            self.rel_bits = bits
            memset(bits + r * self.words, 0, self.words * sizeof(uint64_t))
            for j in range(self.rels.off[r], self.rels.off[r + 1]):
                s = self.rels.pool[j]
                bits[r * self.words + (s >> 6)] |= (<uint64_t>1) << (s & 63)
        return r

    cdef int64_t _dec(self, int64_t i) except -2:
        cdef int64_t d = self.dec_of[i]
        if d == -2:
            d = self.runs._item(self.runs._field(i, 0) - 1, self.runs._field(i, 1),
                                self.runs._field(i, 2), self.runs._field(i, 3))
            self._sync()
            self.dec_of[i] = <int32_t>d
        return d

    cdef int64_t _base(self, int64_t i) except -2:
        cdef int64_t d = self.base_of[i]
        if d == -2:
            d = self.runs._item(0, -1, self.runs._field(i, 2), self.runs._field(i, 3))
            self._sync()
            self.base_of[i] = <int32_t>d
        return d

    # -- memoized operations ---------------------------------------------------------
    cdef inline int64_t _step(self, int64_t i, int64_t s) except -3:
        """Step result of item ``i`` on stack state ``s`` (``TemplateRuns.step``):
        ``_SUCCESS_ID`` or the id of a sequence of item ids in ``runs.results``."""
        cdef int64_t r = self.runs.step(i, s)
        if self.runs.n_items > self.n_items:
            self._sync()
        return r

    cdef inline int64_t _union(self, int64_t a, int64_t b) except -1:
        cdef int64_t key, r
        if a == b or b == self.empty:
            return a
        if a == self.empty:
            return b
        if a == self.universe or b == self.universe:
            return self.universe
        key = (a << 32) | b if a < b else (b << 32) | a
        r = _map_get(&self.union_memo, key)
        if r == _ABSENT:
            r = self.union_fn(a, b)
            _map_set(&self.union_memo, key, r)
        return r

    cdef inline int64_t _difference(self, int64_t a, int64_t b) except -1:
        cdef int64_t key, r
        if b == self.empty or a == self.empty:
            return a
        if a == b or b == self.universe:
            return self.empty
        key = (a << 32) | b
        r = _map_get(&self.diff_memo, key)
        if r == _ABSENT:
            r = self.diff_fn(a, b)
            _map_set(&self.diff_memo, key, r)
        return r

    # -- keys ------------------------------------------------------------------------
    def key_of(self, pairs):
        """The key of a state with ``(item, weight id)`` pairs (empty weights dropped):
        the sorted ``(item id << 32) | weight id`` values as bytes (``b""``: no item)."""
        cdef _Buf b
        b.a = NULL
        b.n = b.cap = 0
        try:
            for it, w in pairs:
                if w != self.empty:
                    _buf_push(&b, (self._iid(it) << 32) | <int64_t>w)
            return self._key_bytes(&b, 0)
        finally:
            free(b.a)

    cdef bytes _key_bytes(self, _Buf *b, int64_t start):
        cdef int64_t k = b.n - start, j, m
        if k <= 0:
            return b""
        qsort(b.a + start, k, sizeof(int64_t), _cmp_i64)
        m = 1                                   # pairs are distinct: no duplicate to drop
        for j in range(1, k):
            if b.a[start + j] != b.a[start + m - 1]:
                b.a[start + m] = b.a[start + j]
                m += 1
        return (<char *>(b.a + start))[:m * sizeof(int64_t)]

    def items_of_key(self, object key):
        """The state's ``((item, weight id), ...)`` of a key of :meth:`key_of`."""
        cdef const int64_t *a = <const int64_t *>PyBytes_AsString(key)
        cdef Py_ssize_t k = len(key) // 8, j
        out = []
        for j in range(k):
            out.append((self.runs.item(a[j] >> 32), a[j] & 0xffffffff))
        return tuple(out)

    # -- expansion -------------------------------------------------------------------
    def expand(self, object key):
        """Every edge of the state with key ``key`` (its pairs sorted by item id):
        ``(default key or None, [(stack state, successor key, weight id), ...])``, the
        edges in ascending stack state. The default is the state of the items that
        discard the entry unread (None: there are none); an edge is listed for each stack
        state some item reads (``ParserDWA._edge`` returns an edge for it), successor
        key ``b""`` for no item left. Equal to ``ParserDWA._index`` and ``_edge``."""
        cdef const int64_t *pairs = <const int64_t *>PyBytes_AsString(key)   # (a subclass too)
        cdef int64_t n = len(key) // 8
        cdef int64_t i, j, k, it, w, r, s, lhs, g, acc, e, cur, start, stage_at
        cdef int64_t n_groups = 0, n_lhs = 0, n_lhs_groups = 0, d_n
        cdef int64_t *order = NULL           # (group key << 32) | pair index, sorted
        cdef int64_t *gstart = NULL          # group boundaries in order
        cdef int64_t *grel = NULL            # per group: relevance id (plain) or lhs
        cdef bint *gis_lhs = NULL
        cdef _Buf dnext, out, syms, stage_buf, stage_vals, acc_ids
        cdef _Map stage_memo
        cdef const int32_t *res
        cdef int64_t res_n
        cdef bint any_
        cdef uint64_t *bits
        dnext.a = out.a = syms.a = stage_buf.a = stage_vals.a = acc_ids.a = NULL
        acc_ids.n = acc_ids.cap = 0
        dnext.n = dnext.cap = out.n = out.cap = syms.n = syms.cap = 0
        stage_buf.n = stage_buf.cap = stage_vals.n = stage_vals.cap = 0
        _map_init(&stage_memo, 16)
        order = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        gstart = <int64_t *>malloc((max(n, 1) + 1) * sizeof(int64_t))
        grel = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        gis_lhs = <bint *>malloc(max(n, 1) * sizeof(bint))
        try:
            if order == NULL or gstart == NULL or grel == NULL or gis_lhs == NULL:
                raise MemoryError()
            # classify: skipping items make the default; the others are grouped by
            # relevance set (plain) or by lhs (waiting for a goto), lhs groups first
            self.stamp += 1
            cur = self.stamp
            self.aux.n = 0
            k = 0
            for j in range(n):
                it = pairs[j] >> 32
                w = pairs[j] & 0xffffffff
                if self.runs._field(it, 0):
                    self._add(self._dec(it), w, cur, &dnext)
                elif self.runs._field(it, 1) != -1:
                    order[k] = (<int64_t>self.runs._field(it, 1) << 32) | j
                    k += 1
            n_lhs = k
            for j in range(n):
                it = pairs[j] >> 32
                if not self.runs._field(it, 0) and self.runs._field(it, 1) == -1:
                    order[k] = (self._rel(it) << 32) | j
                    k += 1
            qsort(order, n_lhs, sizeof(int64_t), _cmp_i64)
            qsort(order + n_lhs, k - n_lhs, sizeof(int64_t), _cmp_i64)
            for j in range(k):
                if j == 0 or j == n_lhs or (order[j] >> 32) != (order[j - 1] >> 32):
                    gstart[n_groups] = j
                    grel[n_groups] = order[j] >> 32
                    gis_lhs[n_groups] = j < n_lhs
                    if j < n_lhs:
                        n_lhs_groups += 1
                    n_groups += 1
            gstart[n_groups] = k
            # the default's items, as (item, weight) pairs (weights never empty here)
            d_n = dnext.n
            for j in range(d_n):
                i = dnext.a[j]
                dnext.a[j] = (i << 32) | self._resolve(i)
            dkey = self._key_bytes(&dnext, 0) if d_n else None
            # the stack states some item reads
            self.lr_mark += 1
            for e in range(n_groups):
                if gis_lhs[e]:
                    r = self._rel(pairs[order[gstart[e]] & 0xffffffff] >> 32)
                else:
                    r = grel[e]
                for j in range(self.rels.off[r], self.rels.off[r + 1]):
                    s = self.rels.pool[j]
                    if self.lr_stamp[s] != self.lr_mark:
                        self.lr_stamp[s] = self.lr_mark
                        _buf_push(&syms, s)
            qsort(syms.a, syms.n, sizeof(int64_t), _cmp_i64)
            # the items waiting for a goto, run once per (lhs, goto target) first
            for k in range(syms.n):
                s = syms.a[k]
                for e in range(n_lhs_groups):
                    lhs = grel[e]
                    g = _map_get(&self.runs.goto_map, (s << 32) | lhs)
                    if g != _ABSENT and _map_get(&stage_memo, (lhs << 32) | g) == _ABSENT:
                        _map_set(&stage_memo, (lhs << 32) | g, stage_vals.n)
                        self._stage(pairs, order, gstart[e], gstart[e + 1], g,
                                    &stage_buf, &stage_vals)
            edges = []
            bits = self.rel_bits
            for k in range(syms.n):
                s = syms.a[k]
                self.stamp += 1
                cur = self.stamp
                out.n = 0
                self.aux.n = 0
                acc_ids.n = 0
                for j in range(d_n):
                    i = dnext.a[j] >> 32
                    self.slot_stamp[i] = cur
                    self.slot_w[i] = <int32_t>(dnext.a[j] & 0xffffffff)
                    self.slot_more[i] = -1
                    _buf_push(&out, i)
                any_ = False
                for e in range(n_groups):
                    if gis_lhs[e]:
                        lhs = grel[e]
                        g = _map_get(&self.runs.goto_map, (s << 32) | lhs)
                        if g == _ABSENT:
                            continue
                        any_ = True
                        stage_at = _map_get(&stage_memo, (lhs << 32) | g)
                        if stage_vals.a[stage_at] != self.empty:
                            _buf_push(&acc_ids, stage_vals.a[stage_at])
                        for j in range(stage_vals.a[stage_at + 1], stage_vals.a[stage_at + 2]):
                            self._step_pair(stage_buf.a[j] >> 32, stage_buf.a[j] & 0xffffffff,
                                            s, cur, &out, &acc_ids)
                    else:
                        r = grel[e]
                        if not (bits[r * self.words + (s >> 6)] >> (s & 63)) & 1:
                            continue
                        any_ = True
                        for j in range(gstart[e], gstart[e + 1]):
                            i = pairs[order[j] & 0xffffffff]
                            self._step_pair(i >> 32, i & 0xffffffff, s, cur, &out, &acc_ids)
                if not any_:
                    continue
                acc = self._union_all(&acc_ids)
                start = out.n
                for j in range(start):
                    i = out.a[j]
                    w = self._resolve(i)
                    if acc != self.empty:
                        w = self._difference(w, acc)
                    if w != self.empty:
                        _buf_push(&out, (i << 32) | w)
                edges.append((s, self._key_bytes(&out, start), acc))
            return dkey, edges
        finally:
            free(order)
            free(gstart)
            free(grel)
            free(gis_lhs)
            free(dnext.a)
            free(out.a)
            free(syms.a)
            free(stage_buf.a)
            free(stage_vals.a)
            free(acc_ids.a)
            _map_free(&stage_memo)

    cdef inline int _add(self, int64_t i, int64_t w, int64_t cur, _Buf *out) except -1:
        """Add weight ``w`` to item ``i`` of the successor being built (stamp ``cur``;
        ``out``: its items in order): its first weight, or one more in its chain in
        ``aux`` (united once, by :meth:`_resolve`: a union per pair would intern every
        partial union as a token set of its own)."""
        if self.slot_stamp[i] != cur:
            self.slot_stamp[i] = cur
            self.slot_w[i] = <int32_t>w
            self.slot_more[i] = -1
            _buf_push(out, i)
        elif self.slot_w[i] != w:
            _buf_push(&self.aux, w)
            _buf_push(&self.aux, self.slot_more[i])
            self.slot_more[i] = self.aux.n - 2
        return 0

    cdef int64_t _resolve(self, int64_t i) except -1:
        """The weight of item ``i`` in the successor being built: the union of its
        weights."""
        cdef int64_t j = self.slot_more[i]
        if j < 0:
            return self.slot_w[i]
        self.tmp.n = 0
        _buf_push(&self.tmp, self.slot_w[i])
        while j >= 0:
            _buf_push(&self.tmp, self.aux.a[j])
            j = self.aux.a[j + 1]
        return self._union_all(&self.tmp)

    cdef int64_t _union_all(self, _Buf *ids) except -1:
        """The union of the token sets ``ids`` (reordered), interned once
        (``WeightTable.union_all`` for three or more)."""
        cdef int64_t j, m = 0, x
        if ids.n == 0:
            return self.empty
        if ids.n == 1:
            return ids.a[0]
        qsort(ids.a, ids.n, sizeof(int64_t), _cmp_i64)
        for j in range(ids.n):
            x = ids.a[j]
            if x == self.universe:
                return self.universe
            if x != self.empty and (m == 0 or ids.a[m - 1] != x):
                ids.a[m] = x
                m += 1
        if m == 0:
            return self.empty
        if m == 1:
            return ids.a[0]
        if m == 2:
            return self._union(ids.a[0], ids.a[1])
        return self.union_all_fn(tuple([ids.a[j] for j in range(m)]))

    cdef inline int _step_pair(self, int64_t it, int64_t w, int64_t s, int64_t cur, _Buf *out,
                               _Buf *acc) except -1:
        """``ParserDWA._step_pairs`` for one pair: its weight into ``acc`` (the weights of
        the items that succeed, united at the end) or to its waiting items in the
        successor being built."""
        cdef int64_t r = self._step(it, s), j
        if r == _SUCCESS_ID:
            _buf_push(acc, w)
            return 0
        for j in range(self.runs.results.off[r], self.runs.results.off[r + 1]):
            self._add(self.runs.results.pool[j], w, cur, out)
        return 0

    cdef int _stage(self, const int64_t *pairs, const int64_t *order, int64_t lo, int64_t hi,
                    int64_t g, _Buf *buf, _Buf *vals) except -1:
        """``ParserDWA._stage``: the items ``order[lo:hi]`` (waiting for a goto on one
        lhs) run from the known stack ``(g,)``; appends ``(weight of those that
        succeed, start, end)`` of their waiting ``(item << 32) | weight`` in ``buf``."""
        cdef int64_t acc, j, p, it, w, r, m, i2, start = buf.n
        cdef int64_t cur
        cdef _Buf tmp, accs
        self.stamp += 1
        cur = self.stamp
        self.aux.n = 0
        tmp.a = accs.a = NULL
        tmp.n = tmp.cap = accs.n = accs.cap = 0
        try:
            for j in range(lo, hi):
                p = pairs[order[j] & 0xffffffff]
                it = p >> 32
                w = p & 0xffffffff
                r = self._step(self._base(it), g)
                if r == _SUCCESS_ID:
                    _buf_push(&accs, w)
                    continue
                for m in range(self.runs.results.off[r], self.runs.results.off[r + 1]):
                    self._add(self.runs.results.pool[m], w, cur, &tmp)
            for j in range(tmp.n):
                i2 = tmp.a[j]
                _buf_push(buf, (i2 << 32) | self._resolve(i2))
            acc = self._union_all(&accs)
        finally:
            free(tmp.a)
            free(accs.a)
        _buf_push(vals, acc)
        _buf_push(vals, start)
        _buf_push(vals, buf.n)
        return 0
