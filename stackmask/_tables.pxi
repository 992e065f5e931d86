# Included by _native.pyx (one extension): int64 hash tables, growable arrays, interned
# int32 sequences (_Sets) and per-row tables (_Rows) shared by the compiled construction
# (_fsa.pxi, _templates.pxi, _expand.pxi, _branches.pxi, _minimize.pxi).

from libc.stdint cimport INT64_MIN, INT32_MIN, INT32_MAX

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


cdef struct _Rows:
    # per row (an int id >= 0): a small open-addressing table int32 key (>= 0) -> int32
    # value, its pairs side by side (a row's lookups stay in a cache line or two, where
    # one table keyed by (row, key) pairs puts every lookup on a line of its own)
    int32_t **kv        # per row: 2 * cap int32 (key, value); key -1 free; NULL: empty
    int32_t *cap        # per row: its capacity (a power of two, or 0)
    int32_t *cnt        # per row: its entries
    int64_t n_rows      # rows allocated
    int64_t total       # entries in all rows


cdef int _rows_init(_Rows *r) except -1:
    r.kv = NULL
    r.cap = r.cnt = NULL
    r.n_rows = r.total = 0
    return 0


cdef void _rows_free(_Rows *r) noexcept:
    cdef int64_t i
    for i in range(r.n_rows):
        free(r.kv[i])
    free(r.kv)
    free(r.cap)
    free(r.cnt)
    r.kv = NULL
    r.cap = r.cnt = NULL
    r.n_rows = r.total = 0


cdef inline int64_t _rows_get(_Rows *r, int64_t row, int32_t key) noexcept nogil:
    """The value of ``key`` in row ``row``, or ``_ABSENT``."""
    cdef uint32_t m, j
    cdef int32_t *kv
    cdef int32_t k
    if row >= r.n_rows or r.cap[row] == 0:
        return _ABSENT
    kv = r.kv[row]
    m = <uint32_t>r.cap[row] - 1
    j = (<uint32_t>key * 2654435761u) & m
    while True:
        k = kv[2 * j]
        if k == key:
            return kv[2 * j + 1]
        if k == -1:
            return _ABSENT
        j = (j + 1) & m


cdef int _rows_set(_Rows *r, int64_t row, int32_t key, int64_t val) except -1:
    """Set ``key`` to ``val`` (an int32) in row ``row`` (rows grow as needed)."""
    cdef int64_t n, i, c, old_c
    cdef uint32_t m, j
    cdef int32_t *kv
    cdef int32_t *old
    if val < INT32_MIN or val > INT32_MAX:
        raise OverflowError("a memo value does not fit 32 bits")
    if row >= r.n_rows:
        n = max(row + 1, 2 * r.n_rows, 1024)
        r.kv = <int32_t **>_grow(r.kv, r.n_rows, n, sizeof(int32_t *))
        r.cap = <int32_t *>_grow(r.cap, r.n_rows, n, sizeof(int32_t))
        r.cnt = <int32_t *>_grow(r.cnt, r.n_rows, n, sizeof(int32_t))
        r.n_rows = n
    if 2 * (r.cnt[row] + 1) > r.cap[row]:
        old_c = r.cap[row]
        old = r.kv[row]
        c = max(4, 2 * old_c)
        kv = <int32_t *>malloc(2 * c * sizeof(int32_t))
        if kv == NULL:
            raise MemoryError()
        memset(kv, 0xff, 2 * c * sizeof(int32_t))
        m = <uint32_t>c - 1
        for i in range(old_c):
            if old[2 * i] != -1:
                j = (<uint32_t>old[2 * i] * 2654435761u) & m
                while kv[2 * j] != -1:
                    j = (j + 1) & m
                kv[2 * j] = old[2 * i]
                kv[2 * j + 1] = old[2 * i + 1]
        free(old)
        r.kv[row] = kv
        r.cap[row] = <int32_t>c
    kv = r.kv[row]
    m = <uint32_t>r.cap[row] - 1
    j = (<uint32_t>key * 2654435761u) & m
    while kv[2 * j] != -1 and kv[2 * j] != key:
        j = (j + 1) & m
    if kv[2 * j] == -1:
        r.cnt[row] += 1
        r.total += 1
    kv[2 * j] = key
    kv[2 * j + 1] = <int32_t>val
    return 0


cdef void *_grow(void *p, int64_t n, int64_t n2, size_t size) except NULL:
    """``p`` (``n`` elements of ``size`` bytes) reallocated to ``n2``, the new ones zero."""
    cdef char *q = <char *>realloc(p, max(n2, 1) * size)
    if q == NULL:
        raise MemoryError()
    memset(q + n * size, 0, (n2 - n) * size)
    return q


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


cdef int _cmp_i32(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const int32_t *>a)[0]
    cdef int32_t y = (<const int32_t *>b)[0]
    return (x > y) - (x < y)


cdef struct _Sets:
    # interned int32 sequences: pool[off[i]:off[i + 1]] is sequence i; an open-addressing
    # table of sequence ids by content
    int32_t *pool
    int64_t pool_n, pool_cap
    int64_t *off
    int64_t n, off_cap
    int64_t *table
    int64_t table_cap


cdef inline uint64_t _hash_seq(const int32_t *a, int64_t k) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t>k
    cdef int64_t i
    for i in range(k):
        h ^= <uint64_t><uint32_t>a[i]
        h *= 1099511628211ULL
        h ^= h >> 29
    return h


cdef int _sets_init(_Sets *s) except -1:
    s.pool_cap = 1024
    s.pool_n = 0
    s.pool = <int32_t *>malloc(s.pool_cap * sizeof(int32_t))
    s.off_cap = 256
    s.off = <int64_t *>malloc(s.off_cap * sizeof(int64_t))
    s.n = 0
    s.table_cap = 512
    s.table = <int64_t *>malloc(s.table_cap * sizeof(int64_t))
    if s.pool == NULL or s.off == NULL or s.table == NULL:
        raise MemoryError()
    s.off[0] = 0
    memset(s.table, 0xff, s.table_cap * sizeof(int64_t))
    return 0


cdef void _sets_free(_Sets *s) noexcept:
    free(s.pool)
    free(s.off)
    free(s.table)


cdef int _sets_grow_table(_Sets *s) except -1:
    cdef int64_t cap = s.table_cap * 2, i, j
    cdef int64_t *t = <int64_t *>malloc(cap * sizeof(int64_t))
    cdef uint64_t h
    if t == NULL:
        raise MemoryError()
    memset(t, 0xff, cap * sizeof(int64_t))
    for i in range(s.n):
        h = _hash_seq(s.pool + s.off[i], s.off[i + 1] - s.off[i])
        j = <int64_t>(h & <uint64_t>(cap - 1))
        while t[j] >= 0:
            j = (j + 1) & (cap - 1)
        t[j] = i
    free(s.table)
    s.table = t
    s.table_cap = cap
    return 0


cdef int64_t _sets_intern(_Sets *s, const int32_t *a, int64_t k, bint *is_new) except -2:
    """The id of the sequence ``a[:k]``, interned if new (then ``is_new``)."""
    cdef uint64_t h = _hash_seq(a, k)
    cdef int64_t j = <int64_t>(h & <uint64_t>(s.table_cap - 1)), i, m
    cdef int32_t *p
    cdef int64_t *o
    while True:
        i = s.table[j]
        if i < 0:
            break
        if (s.off[i + 1] - s.off[i] == k
                and memcmp(s.pool + s.off[i], a, k * sizeof(int32_t)) == 0):
            is_new[0] = False
            return i
        j = (j + 1) & (s.table_cap - 1)
    if s.pool_n + k > s.pool_cap:
        m = max(2 * s.pool_cap, s.pool_n + k)
        p = <int32_t *>realloc(s.pool, m * sizeof(int32_t))
        if p == NULL:
            raise MemoryError()
        s.pool = p
        s.pool_cap = m
    if s.n + 2 > s.off_cap:
        o = <int64_t *>realloc(s.off, 2 * s.off_cap * sizeof(int64_t))
        if o == NULL:
            raise MemoryError()
        s.off = o
        s.off_cap *= 2
    if k:
        memcpy(s.pool + s.pool_n, a, k * sizeof(int32_t))
    s.pool_n += k
    i = s.n
    s.n += 1
    s.off[s.n] = s.pool_n
    s.table[j] = i
    is_new[0] = True
    if 2 * s.n > s.table_cap:
        _sets_grow_table(s)
    return i



cdef int64_t _sets_find(_Sets *s, const int32_t *a, int64_t k) noexcept:
    """The id of the sequence ``a[:k]``, or -1."""
    cdef uint64_t h = _hash_seq(a, k)
    cdef int64_t j = <int64_t>(h & <uint64_t>(s.table_cap - 1)), i
    while True:
        i = s.table[j]
        if i < 0:
            return -1
        if (s.off[i + 1] - s.off[i] == k
                and memcmp(s.pool + s.off[i], a, k * sizeof(int32_t)) == 0):
            return i
        j = (j + 1) & (s.table_cap - 1)


cdef int64_t _intern_buf(_Sets *s, const _Buf *vals, int64_t start=0) except -1:
    """The id in ``s`` of the sequence ``vals.a[start:vals.n]`` (int32 values)."""
    cdef int64_t k = vals.n - start, j
    cdef int32_t *a = <int32_t *>malloc(max(k, 1) * sizeof(int32_t))
    cdef bint is_new
    if a == NULL:
        raise MemoryError()
    try:
        for j in range(k):
            a[j] = <int32_t>vals.a[start + j]
        return _sets_intern(s, a, k, &is_new)
    finally:
        free(a)
