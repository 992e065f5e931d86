# Included by _native.pyx (one extension): the Parser DWA's state expansion over
# int-coded items, the twin of ``ParserDWA._index`` / ``_edge`` / ``expand``
# (stackmask/compile/parser_dwa.py), which stay the reference.
#
# Items ``(skip, lhs, terms, F)`` get ids (``iid``) the first time they are seen; a
# state is the sorted array of its ``(iid << 32) | weight id`` pairs, and its bytes are
# the state's key. The per-(item, stack state) step results, the token-set unions and
# differences, and the LR gotos are kept in open-addressing tables of int64 keys; the
# symbolic runs (``Templates.step``) and the token-set operations themselves are
# called in Python on a miss only.

from libc.stdint cimport INT64_MIN

cdef int64_t _ABSENT = INT64_MIN
cdef int64_t _SUCCESS_ID = -2      # a step result: the run succeeded


cdef struct _Map:
    # int64 key (>= 0) -> int64 value; key -1 marks a free slot
    int64_t *keys
    int64_t *vals
    int64_t cap, n


cdef inline uint64_t _mix64(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x


cdef int _map_init(_Map *m, int64_t cap) except -1:
    m.cap = cap
    m.n = 0
    m.keys = <int64_t *>malloc(cap * sizeof(int64_t))
    m.vals = <int64_t *>malloc(cap * sizeof(int64_t))
    if m.keys == NULL or m.vals == NULL:
        raise MemoryError()
    memset(m.keys, 0xff, cap * sizeof(int64_t))
    return 0


cdef void _map_free(_Map *m) noexcept:
    free(m.keys)
    free(m.vals)
    m.keys = NULL
    m.vals = NULL


cdef inline int64_t _map_get(_Map *m, int64_t key) noexcept nogil:
    cdef int64_t j = <int64_t>(_mix64(<uint64_t>key) & <uint64_t>(m.cap - 1)), k
    while True:
        k = m.keys[j]
        if k == key:
            return m.vals[j]
        if k == -1:
            return _ABSENT
        j = (j + 1) & (m.cap - 1)


cdef int _map_grow(_Map *m) except -1:
    cdef int64_t old_cap = m.cap, i, j, k
    cdef int64_t *ok = m.keys
    cdef int64_t *ov = m.vals
    _map_init(m, old_cap * 2)
    for i in range(old_cap):
        k = ok[i]
        if k != -1:
            j = <int64_t>(_mix64(<uint64_t>k) & <uint64_t>(m.cap - 1))
            while m.keys[j] != -1:
                j = (j + 1) & (m.cap - 1)
            m.keys[j] = k
            m.vals[j] = ov[i]
            m.n += 1
    free(ok)
    free(ov)
    return 0


cdef int _map_set(_Map *m, int64_t key, int64_t val) except -1:
    cdef int64_t j, k
    if 2 * (m.n + 1) > m.cap:
        _map_grow(m)
    j = <int64_t>(_mix64(<uint64_t>key) & <uint64_t>(m.cap - 1))
    while True:
        k = m.keys[j]
        if k == key:
            m.vals[j] = val
            return 0
        if k == -1:
            m.keys[j] = key
            m.vals[j] = val
            m.n += 1
            return 0
        j = (j + 1) & (m.cap - 1)


cdef int _map_clear(_Map *m, int64_t cap) except -1:
    _map_free(m)
    return _map_init(m, cap)


cdef struct _Buf:
    # a growable int64 array
    int64_t *a
    int64_t n, cap


cdef int _buf_push(_Buf *b, int64_t x) except -1:
    cdef int64_t *p
    if b.n == b.cap:
        p = <int64_t *>realloc(b.a, max(16, 2 * b.cap) * sizeof(int64_t))
        if p == NULL:
            raise MemoryError()
        b.a = p
        b.cap = max(16, 2 * b.cap)
    b.a[b.n] = x
    b.n += 1
    return 0


cdef int _cmp_i64(const void *a, const void *b) noexcept nogil:
    cdef int64_t x = (<const int64_t *>a)[0]
    cdef int64_t y = (<const int64_t *>b)[0]
    return (x > y) - (x < y)


cdef class ExpandCore:
    """Int-coded items and the compiled expansion of Parser DWA states (see the
    comment at the top of ``_expand.pxi``). ``templates``: the automaton's
    :class:`~stackmask.compile.templates.Templates` (``step``, ``relevant``, ``goto``,
    ``goto_states``); ``union`` / ``difference``: the token-set table's memoized
    operations on ids, called on a miss of this core's own memos (:meth:`set_weights`
    replaces them, and drops those memos, when the table is replaced); ``empty`` and
    ``universe``: the ids of the empty and the full token set."""

    cdef object templates, step_fn, relevant_fn, union_fn, diff_fn
    cdef readonly object weights_owner
    cdef dict item_id, rel_id
    cdef list item_of
    cdef int64_t n_items, items_cap, n_lr, words
    cdef int32_t *skip_of
    cdef int32_t *lhs_of
    cdef int32_t *rel_of          # -2: not computed yet
    cdef int32_t *dec_of          # the item with one skip less (-2: not computed)
    cdef int32_t *base_of         # (0, NO_LHS, terms, F) of an lhs item (-2: not computed)
    cdef int32_t *slot_w          # per item: its weight in the successor being built
    cdef int64_t *slot_stamp      # per item: the successor it was last set for
    cdef int64_t stamp
    cdef _Sets rels               # relevance sets (sorted LR states), by id
    cdef uint64_t *rel_bits       # per relevance set, a bitset over LR states
    cdef int64_t rel_bits_rows
    cdef _Sets results            # step results: sequences of item ids
    cdef _Map step_memo, union_memo, diff_memo, goto_map
    cdef int64_t empty, universe
    cdef int64_t *lr_stamp
    cdef int64_t lr_mark

    def __cinit__(self):
        self.skip_of = self.lhs_of = self.rel_of = self.dec_of = self.base_of = NULL
        self.slot_w = NULL
        self.slot_stamp = NULL
        self.rel_bits = NULL
        self.lr_stamp = NULL
        _sets_init(&self.rels)
        _sets_init(&self.results)
        _map_init(&self.step_memo, 1024)
        _map_init(&self.union_memo, 1024)
        _map_init(&self.diff_memo, 1024)
        _map_init(&self.goto_map, 1024)

    def __dealloc__(self):
        free(self.skip_of)
        free(self.lhs_of)
        free(self.rel_of)
        free(self.dec_of)
        free(self.base_of)
        free(self.slot_w)
        free(self.slot_stamp)
        free(self.rel_bits)
        free(self.lr_stamp)
        _sets_free(&self.rels)
        _sets_free(&self.results)
        _map_free(&self.step_memo)
        _map_free(&self.union_memo)
        _map_free(&self.diff_memo)
        _map_free(&self.goto_map)

    def __init__(self, templates, Py_ssize_t n_lr, owner, union, difference,
                 Py_ssize_t empty, Py_ssize_t universe):
        cdef Py_ssize_t s
        self.templates = templates
        self.step_fn = templates.step
        self.relevant_fn = templates.relevant
        self.item_id = {}
        self.item_of = []
        self.rel_id = {}
        self.n_items = 0
        self.items_cap = 0
        self.n_lr = n_lr
        self.words = (n_lr + 63) // 64
        self.rel_bits_rows = 0
        self.stamp = 0
        self.empty = empty
        self.universe = universe
        self.lr_stamp = <int64_t *>calloc(max(n_lr, 1), sizeof(int64_t))
        if self.lr_stamp == NULL:
            raise MemoryError()
        self.lr_mark = 0
        for s, row in enumerate(templates.goto):
            for lhs, g in row.items():
                _map_set(&self.goto_map, (<int64_t>s << 32) | <int64_t>lhs, g)
        self.set_weights(owner, union, difference)

    def set_weights(self, owner, union, difference):
        """Use the token-set operations ``union`` / ``difference`` of table ``owner``
        from now on; the memos of the previous table's ids are dropped."""
        self.weights_owner = owner
        self.union_fn = union
        self.diff_fn = difference
        _map_clear(&self.union_memo, 1024)
        _map_clear(&self.diff_memo, 1024)

    def clear_memos(self):
        """Drop the step results and the token-set memos (caches, recomputed on use)."""
        _map_clear(&self.step_memo, 1024)
        _map_clear(&self.union_memo, 1024)
        _map_clear(&self.diff_memo, 1024)
        _sets_free(&self.results)
        _sets_init(&self.results)

    def memo_entries(self):
        """Entries of the step and token-set memos."""
        return self.step_memo.n + self.union_memo.n + self.diff_memo.n

    # -- items -----------------------------------------------------------------------
    cdef int _grow_items(self) except -1:
        cdef int64_t cap = max(1024, 2 * self.items_cap)
        self.skip_of = <int32_t *>realloc(self.skip_of, cap * sizeof(int32_t))
        self.lhs_of = <int32_t *>realloc(self.lhs_of, cap * sizeof(int32_t))
        self.rel_of = <int32_t *>realloc(self.rel_of, cap * sizeof(int32_t))
        self.dec_of = <int32_t *>realloc(self.dec_of, cap * sizeof(int32_t))
        self.base_of = <int32_t *>realloc(self.base_of, cap * sizeof(int32_t))
        self.slot_w = <int32_t *>realloc(self.slot_w, cap * sizeof(int32_t))
        self.slot_stamp = <int64_t *>realloc(self.slot_stamp, cap * sizeof(int64_t))
        if (self.skip_of == NULL or self.lhs_of == NULL or self.rel_of == NULL
                or self.dec_of == NULL or self.base_of == NULL or self.slot_w == NULL
                or self.slot_stamp == NULL):
            raise MemoryError()
        self.items_cap = cap
        return 0

    cdef int64_t _iid(self, object item) except -1:
        cdef PyObject *p = PyDict_GetItem(self.item_id, item)
        cdef int64_t i
        if p != NULL:
            return <int64_t><object>p
        i = self.n_items
        if i >= 0x7fffffff:
            raise OverflowError("more than 2**31 automaton items")
        if i == self.items_cap:
            self._grow_items()
        self.item_id[item] = i
        self.item_of.append(item)
        self.skip_of[i] = item[0]
        self.lhs_of[i] = item[1]
        self.rel_of[i] = -2
        self.dec_of[i] = -2
        self.base_of[i] = -2
        self.slot_stamp[i] = 0
        self.n_items = i + 1
        return i

    cdef int64_t _rel(self, int64_t i) except -2:
        cdef int64_t r = self.rel_of[i]
        cdef object fs
        cdef PyObject *p
        if r != -2:
            return r
        fs = self.relevant_fn(self.item_of[i])
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
                if not 0 <= s < self.n_lr:      # the ALL marker: skip items only
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
            self.rel_bits_rows = r + 1
        return r

    cdef int64_t _dec(self, int64_t i) except -2:
        cdef int64_t d = self.dec_of[i]
        if d == -2:
            it = self.item_of[i]
            d = self._iid((it[0] - 1, it[1], it[2], it[3]))
            self.dec_of[i] = <int32_t>d
        return d

    cdef int64_t _base(self, int64_t i) except -2:
        cdef int64_t d = self.base_of[i]
        if d == -2:
            it = self.item_of[i]
            d = self._iid((0, -1, it[2], it[3]))
            self.base_of[i] = <int32_t>d
        return d

    # -- memoized operations ---------------------------------------------------------
    cdef int64_t _step(self, int64_t i, int64_t s) except -3:
        """Step result of item ``i`` on stack state ``s``: ``_SUCCESS_ID`` or the id of
        a sequence of item ids in ``results``."""
        cdef int64_t key = (i << 32) | s, r, k, j
        cdef bint is_new
        cdef int32_t *a
        r = _map_get(&self.step_memo, key)
        if r != _ABSENT:
            return r
        res = self.step_fn(self.item_of[i], s)
        if res is True:
            r = _SUCCESS_ID
        else:
            k = len(res)
            a = <int32_t *>malloc(max(k, 1) * sizeof(int32_t))
            if a == NULL:
                raise MemoryError()
            try:
                j = 0
                for it in res:
                    a[j] = <int32_t>self._iid(it)
                    j += 1
                r = _sets_intern(&self.results, a, k, &is_new)
            finally:
                free(a)
        _map_set(&self.step_memo, key, r)
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

    def items_of_key(self, bytes key):
        """The state's ``((item, weight id), ...)`` of a key of :meth:`key_of`."""
        cdef const int64_t *a = <const int64_t *><const char *>key
        cdef Py_ssize_t k = len(key) // 8, j
        cdef list items = self.item_of
        out = []
        for j in range(k):
            out.append((items[a[j] >> 32], a[j] & 0xffffffff))
        return tuple(out)

    # -- expansion -------------------------------------------------------------------
    def expand(self, bytes key):
        """Every edge of the state with key ``key`` (its pairs sorted by item id):
        ``(default key or None, [(stack state, successor key, weight id), ...])``, the
        edges in ascending stack state. The default is the state of the items that
        discard the entry unread (None: there are none); an edge is listed for each stack
        state some item reads (``ParserDWA._edge`` returns an edge for it), successor
        key ``b""`` for no item left. Equal to ``ParserDWA._index`` and ``_edge``."""
        cdef const int64_t *pairs = <const int64_t *><const char *>key
        cdef int64_t n = len(key) // 8
        cdef int64_t i, j, k, it, w, r, s, lhs, g, acc, e, cur, start, stage_at
        cdef int64_t n_groups = 0, n_lhs = 0, n_lhs_groups = 0, d_n
        cdef int64_t *order = NULL           # (group key << 32) | pair index, sorted
        cdef int64_t *gstart = NULL          # group boundaries in order
        cdef int64_t *grel = NULL            # per group: relevance id (plain) or lhs
        cdef bint *gis_lhs = NULL
        cdef _Buf dnext, out, syms, stage_buf, stage_vals
        cdef _Map stage_memo
        cdef const int32_t *res
        cdef int64_t res_n
        cdef bint any_
        cdef uint64_t *bits
        dnext.a = out.a = syms.a = stage_buf.a = stage_vals.a = NULL
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
            k = 0
            for j in range(n):
                it = pairs[j] >> 32
                w = pairs[j] & 0xffffffff
                if self.skip_of[it]:
                    i = self._dec(it)
                    if self.slot_stamp[i] != cur:
                        self.slot_stamp[i] = cur
                        self.slot_w[i] = <int32_t>w
                        _buf_push(&dnext, i)
                    elif self.slot_w[i] != w:
                        self.slot_w[i] = <int32_t>self._union(self.slot_w[i], w)
                elif self.lhs_of[it] != -1:
                    order[k] = (<int64_t>self.lhs_of[it] << 32) | j
                    k += 1
            n_lhs = k
            for j in range(n):
                it = pairs[j] >> 32
                if not self.skip_of[it] and self.lhs_of[it] == -1:
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
                dnext.a[j] = (i << 32) | self.slot_w[i]
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
                    g = _map_get(&self.goto_map, (s << 32) | lhs)
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
                for j in range(d_n):
                    i = dnext.a[j] >> 32
                    self.slot_stamp[i] = cur
                    self.slot_w[i] = <int32_t>(dnext.a[j] & 0xffffffff)
                    _buf_push(&out, i)
                acc = self.empty
                any_ = False
                for e in range(n_groups):
                    if gis_lhs[e]:
                        lhs = grel[e]
                        g = _map_get(&self.goto_map, (s << 32) | lhs)
                        if g == _ABSENT:
                            continue
                        any_ = True
                        stage_at = _map_get(&stage_memo, (lhs << 32) | g)
                        acc = self._union(acc, stage_vals.a[stage_at])
                        for j in range(stage_vals.a[stage_at + 1], stage_vals.a[stage_at + 2]):
                            acc = self._step_pair(stage_buf.a[j] >> 32,
                                                  stage_buf.a[j] & 0xffffffff, s, acc, cur, &out)
                    else:
                        r = grel[e]
                        if not (bits[r * self.words + (s >> 6)] >> (s & 63)) & 1:
                            continue
                        any_ = True
                        for j in range(gstart[e], gstart[e + 1]):
                            i = pairs[order[j] & 0xffffffff]
                            acc = self._step_pair(i >> 32, i & 0xffffffff, s, acc, cur, &out)
                if not any_:
                    continue
                start = out.n
                for j in range(start):
                    i = out.a[j]
                    w = self.slot_w[i]
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
            _map_free(&stage_memo)

    cdef inline int64_t _step_pair(self, int64_t it, int64_t w, int64_t s, int64_t acc,
                                   int64_t cur, _Buf *out) except -1:
        """``ParserDWA._step_pairs`` for one pair: the accumulated weight of items that
        succeed (returned), waiting items' weights into the successor being built."""
        cdef int64_t r = self._step(it, s), j, i2
        if r == _SUCCESS_ID:
            return self._union(acc, w)
        for j in range(self.results.off[r], self.results.off[r + 1]):
            i2 = self.results.pool[j]
            if self.slot_stamp[i2] != cur:
                self.slot_stamp[i2] = cur
                self.slot_w[i2] = <int32_t>w
                _buf_push(out, i2)
            elif self.slot_w[i2] != w:
                self.slot_w[i2] = <int32_t>self._union(self.slot_w[i2], w)
        return acc

    cdef int _stage(self, const int64_t *pairs, const int64_t *order, int64_t lo, int64_t hi,
                    int64_t g, _Buf *buf, _Buf *vals) except -1:
        """``ParserDWA._stage``: the items ``order[lo:hi]`` (waiting for a goto on one
        lhs) run from the known stack ``(g,)``; appends ``(weight of those that
        succeed, start, end)`` of their waiting ``(item << 32) | weight`` in ``buf``."""
        cdef int64_t acc = self.empty, j, p, it, w, r, m, i2, start = buf.n
        cdef int64_t cur
        cdef _Buf tmp
        self.stamp += 1
        cur = self.stamp
        tmp.a = NULL
        tmp.n = tmp.cap = 0
        try:
            for j in range(lo, hi):
                p = pairs[order[j] & 0xffffffff]
                it = p >> 32
                w = p & 0xffffffff
                r = self._step(self._base(it), g)
                if r == _SUCCESS_ID:
                    acc = self._union(acc, w)
                    continue
                for m in range(self.results.off[r], self.results.off[r + 1]):
                    i2 = self.results.pool[m]
                    if self.slot_stamp[i2] != cur:
                        self.slot_stamp[i2] = cur
                        self.slot_w[i2] = <int32_t>w
                        _buf_push(&tmp, i2)
                    else:
                        self.slot_w[i2] = <int32_t>self._union(self.slot_w[i2], w)
            for j in range(tmp.n):
                i2 = tmp.a[j]
                _buf_push(buf, (i2 << 32) | self.slot_w[i2])
        finally:
            free(tmp.a)
        _buf_push(vals, acc)
        _buf_push(vals, start)
        _buf_push(vals, buf.n)
        return 0
