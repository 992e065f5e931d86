# Included by _native.pyx (one extension): int64 hash tables and growable arrays shared by
# the compiled construction (_templates.pxi, _expand.pxi, _branches.pxi).

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
