# Included by _native.pyx: token sets made dense, and the automaton's edges built from
# an artifact's arrays. Python references: wfa.weights.mask_from_bitmap (dense masks)
# and compile.dwa_data.EdgeArrays (edges).

from libc.stdint cimport uint16_t, uint32_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void *op)
    object _PyDict_NewPresized(Py_ssize_t minused)


cdef inline object _int_pair(int32_t a, int32_t b):
    """``(a, b)``, not tracked by the garbage collector: it holds two ints, so it can
    be in no cycle, and a dict holding only ints and such pairs stays untracked too
    (CPython tracks a dict again when a tracked object is put in it). An automaton
    of millions of edges then adds nothing to the collector's full passes."""
    cdef object e = (a, b)
    PyObject_GC_UnTrack(<void *>e)
    return e


cdef inline uint32_t _u16(const unsigned char *p):
    return p[0] | (<uint32_t>p[1] << 8)


cdef inline uint32_t _u32(const unsigned char *p):
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline void _set_range(uint32_t *out, uint64_t lo, uint64_t hi):
    """Set bits ``lo`` .. ``hi - 1`` of ``out``."""
    cdef uint64_t w
    if lo >= hi:
        return
    cdef uint64_t wl = lo >> 5, wh = (hi - 1) >> 5
    cdef uint32_t ml = 0xFFFFFFFFu << (lo & 31)
    cdef uint32_t mh = 0xFFFFFFFFu >> (31 - ((hi - 1) & 31))
    if wl == wh:
        out[wl] |= ml & mh
        return
    out[wl] |= ml
    for w in range(wl + 1, wh):
        out[w] = 0xFFFFFFFFu
    out[wh] |= mh


def roaring_dense(const unsigned char[::1] data, uint32_t[::1] out):
    """OR the token set of ``data`` (a roaring bitmap's portable serialization, as
    ``BitMap.serialize()`` writes it) into ``out`` (bit ``i % 32`` of word ``i // 32``),
    container by container: bitmap containers copied, array and run containers
    scattered. Raises ``ValueError`` for malformed data or an id past ``out``'s
    ``32 * len(out)`` bits (``out`` may then be partly written). The reference is
    :func:`stackmask.wfa.weights.mask_from_bitmap`."""
    _roaring_or(&data[0] if data.shape[0] else NULL, data.shape[0],
                &out[0] if out.shape[0] else NULL, out.shape[0])


def and_into(int32_t[::1] out, const int32_t[::1] a, const int32_t[::1] b,
             const int32_t[::1] c=None, bint accumulate=False):
    """``out = a & b & ~c`` (``a & b`` when ``c`` is None), or ``out |= ...`` with
    ``accumulate``: one pass, no temporary array (a fresh one costs page faults of new
    memory, ~10 µs and up to hundreds in the tail). All four the same length. The
    reference: numpy's ``bitwise_and``/``bitwise_or`` (``Masker``'s pure path)."""
    cdef Py_ssize_t i, n = out.shape[0]
    if a.shape[0] != n or b.shape[0] != n or (c is not None and c.shape[0] != n):
        raise ValueError("and_into: arrays of different lengths")
    if n == 0:
        return
    cdef int32_t *o = &out[0]
    cdef const int32_t *pa = &a[0]
    cdef const int32_t *pb = &b[0]
    cdef const int32_t *pc
    with nogil:
        if c is None:
            if accumulate:
                for i in range(n):
                    o[i] |= pa[i] & pb[i]
            else:
                for i in range(n):
                    o[i] = pa[i] & pb[i]
        else:
            pc = &c[0]
            if accumulate:
                for i in range(n):
                    o[i] |= pa[i] & pb[i] & ~pc[i]
            else:
                for i in range(n):
                    o[i] = pa[i] & pb[i] & ~pc[i]


def roaring_dense_all(list datas, uint32_t[::1] out):
    """:func:`roaring_dense` of each serialization (``bytes``) in ``datas`` into ``out``:
    their union ORed into it."""
    cdef object b
    cdef uint32_t *o = &out[0] if out.shape[0] else NULL
    for b in datas:
        if type(b) is not bytes:
            raise TypeError("roaring_dense_all: serializations are bytes")
        _roaring_or(<const unsigned char *>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), o,
                    out.shape[0])


cdef int _roaring_or(const unsigned char *d, Py_ssize_t n, uint32_t *o,
                     Py_ssize_t nw) except -1:
    """The body of :func:`roaring_dense` over raw pointers (``n`` bytes at ``d``,
    ``nw`` words at ``o``)."""
    cdef Py_ssize_t pos, size, i, j, hpos
    cdef uint64_t nbits = <uint64_t>nw * 32, base, v, ln, card, n_runs
    cdef uint32_t cookie, key, word
    cdef bint runs, has_offsets
    cdef const unsigned char *flags = NULL
    if n < 4:
        raise ValueError("not a roaring portable serialization")
    cookie = _u32(d)
    if (cookie & 0xFFFF) == 12347:
        runs = True
        size = (cookie >> 16) + 1
        flags = d + 4
        pos = 4 + (size + 7) // 8
        has_offsets = size >= 4
    elif cookie == 12346:
        runs = False
        if n < 8:
            raise ValueError("truncated roaring serialization")
        size = _u32(d + 4)
        pos = 8
        has_offsets = True
    else:
        raise ValueError("not a roaring portable serialization")
    if size > 65536 or pos + 4 * size > n:
        raise ValueError("truncated roaring serialization")
    hpos = pos
    pos += 4 * size
    if has_offsets:
        pos += 4 * size
    if pos > n:
        raise ValueError("truncated roaring serialization")
    for i in range(size):
        key = _u16(d + hpos + 4 * i)
        card = <uint64_t>_u16(d + hpos + 4 * i + 2) + 1
        base = <uint64_t>key << 16
        if runs and (flags[i >> 3] >> (i & 7)) & 1:
            if pos + 2 > n:
                raise ValueError("truncated roaring serialization")
            n_runs = _u16(d + pos)
            pos += 2
            if pos + 4 * <Py_ssize_t>n_runs > n:
                raise ValueError("truncated roaring serialization")
            for j in range(<Py_ssize_t>n_runs):
                v = base + _u16(d + pos + 4 * j)
                ln = <uint64_t>_u16(d + pos + 4 * j + 2) + 1
                if v + ln > nbits:
                    raise ValueError(f"token id {v + ln - 1} does not fit a mask of {nbits} bits")
                _set_range(o, v, v + ln)
            pos += 4 * n_runs
        elif card > 4096:
            if pos + 8192 > n:
                raise ValueError("truncated roaring serialization")
            if base + 65536 <= nbits:
                for j in range(2048):
                    o[(base >> 5) + j] |= _u32(d + pos + 4 * j)
            else:                       # the last chunk, cut at the mask's width
                for j in range(2048):
                    word = _u32(d + pos + 4 * j)
                    if word == 0:
                        continue
                    if (base >> 5) + j >= <uint64_t>nw:
                        raise ValueError(f"a token id does not fit a mask of {nbits} bits")
                    o[(base >> 5) + j] |= word
            pos += 8192
        else:
            if pos + 2 * <Py_ssize_t>card > n:
                raise ValueError("truncated roaring serialization")
            for j in range(<Py_ssize_t>card):
                v = base + _u16(d + pos + 2 * j)
                if v >= nbits:
                    raise ValueError(f"token id {v} does not fit a mask of {nbits} bits")
                o[v >> 5] |= (<uint32_t>1) << (v & 31)
            pos += 2 * card
    return 0


cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


def roaring_of_positions(const int64_t[::1] pos, const int64_t[::1] first_id,
                         Py_ssize_t n_bits):
    """The set ``{first_id[p] for p in pos}`` as a roaring bitmap's portable serialization
    (no run containers; ``BitMap.deserialize`` reads it): the ids are marked in a bitset
    of ``n_bits`` bits, then each 65,536-id chunk is written as a bitmap container (more
    than 4,096 ids) or a sorted array. ``pos`` may be in any order and repeat. Raises
    ``IndexError`` for a position outside ``first_id`` and ``ValueError`` for an id
    outside ``0 .. n_bits - 1``. The reference is
    :meth:`stackmask.compile.token_index.VocabIndex.bitmap_of`'s Python path
    (``bitmap_from_array``), which pyroaring builds id by id."""
    cdef Py_ssize_t n = pos.shape[0], m = first_id.shape[0], i, c, w, k
    cdef Py_ssize_t n_words = (n_bits + 63) // 64, n_chunks = (n_bits + 65535) // 65536
    cdef int64_t p, v
    cdef uint64_t word
    cdef uint64_t *bits = <uint64_t *>calloc(max(n_chunks, 1) * 1024, sizeof(uint64_t))
    cdef int64_t *card = <int64_t *>calloc(max(n_chunks, 1), sizeof(int64_t))
    cdef Py_ssize_t size = 0, total, at, body
    cdef unsigned char *o
    if bits == NULL or card == NULL:
        free(bits)
        free(card)
        raise MemoryError()
    try:
        for i in range(n):
            p = pos[i]
            if p < 0 or p >= m:
                raise IndexError(f"token position {p} outside the vocabulary index")
            v = first_id[p]
            if v < 0 or v >= n_bits:
                raise ValueError(f"token id {v} outside 0..{n_bits - 1}")
            bits[v >> 6] |= (<uint64_t>1) << (v & 63)
        body = 0
        for c in range(n_chunks):
            k = 0
            for w in range(c * 1024, min((c + 1) * 1024, n_words)):
                k += __builtin_popcountll(bits[w])
            card[c] = k
            if k:
                size += 1
                body += 8192 if k > 4096 else 2 * k
        total = 8 + 8 * size + body
        out = bytearray(total)
        o = out
        _put32(o, 12346)
        _put32(o + 4, <uint32_t>size)
        at = 8 + 8 * size
        k = 0
        for c in range(n_chunks):
            if not card[c]:
                continue
            _put16(o + 8 + 4 * k, <uint32_t>c)
            _put16(o + 8 + 4 * k + 2, <uint32_t>(card[c] - 1))
            _put32(o + 8 + 4 * size + 4 * k, <uint32_t>at)
            k += 1
            if card[c] > 4096:
                for w in range(1024):
                    word = bits[c * 1024 + w]
                    _put32(o + at + 8 * w, <uint32_t>(word & 0xFFFFFFFFu))
                    _put32(o + at + 8 * w + 4, <uint32_t>(word >> 32))
                at += 8192
            else:
                for w in range(c * 1024, min((c + 1) * 1024, n_words)):
                    word = bits[w]
                    while word:
                        _put16(o + at, <uint32_t>(((w - c * 1024) << 6) + __builtin_ctzll(word)))
                        at += 2
                        word &= word - 1
        return bytes(out)
    finally:
        free(bits)
        free(card)


cdef inline void _put16(unsigned char *p, uint32_t v):
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF


cdef inline void _put32(unsigned char *p, uint32_t v):
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = (v >> 24) & 0xFF


cdef class EdgeArrays:
    """An automaton's edges as an artifact stores them (CSR arrays: state ``q``'s edges
    are ``sym[k] -> (dst[k], wid[k])`` for ``k`` in ``offsets[q] .. offsets[q + 1]``),
    read one state at a time. Twin of :class:`stackmask.compile.dwa_data.EdgeArrays`
    (the reference). The arrays must have been checked
    (:func:`stackmask.compile.dwa_data.check_edge_arrays`)."""

    cdef const int64_t[::1] offsets
    cdef const int32_t[::1] sym, dst, wid
    cdef list ints               # v -> the int object v, shared by the dicts and pairs made
    cdef list last               # state -> the last pair made into it (shared if equal)
    cdef int32_t[::1] last_wid   # state -> that pair's token set id (-1: none yet)
    cdef readonly Py_ssize_t n_states

    def __init__(self, offsets, sym, dst, wid):
        self.offsets = offsets
        self.sym = sym
        self.dst = dst
        self.wid = wid
        self.n_states = self.offsets.shape[0] - 1
        self.ints = []
        self.last = [None] * self.n_states
        self.last_wid = np.full(self.n_states, -1, dtype=np.int32)

    cdef inline object _int(self, int32_t v):
        cdef list ints = self.ints
        if v < 0 or v >= 1 << 22:
            return v
        while PyList_GET_SIZE(ints) <= v:
            ints.append(PyList_GET_SIZE(ints))
        return <object>PyList_GET_ITEM(ints, v)

    def state(self, Py_ssize_t q):
        """State ``q``'s edges ``{sym: (dst, wid)}``, a new dict; equal pairs into a
        state made one after the other share a tuple; the pairs and the dict are not
        tracked by the garbage collector (:func:`_int_pair`)."""
        if not 0 <= q < self.n_states:
            raise IndexError(q)
        cdef int64_t a = self.offsets[q], b = self.offsets[q + 1], k
        cdef int32_t d, w
        cdef object t = _PyDict_NewPresized(b - a)
        cdef object e
        cdef list last = self.last
        for k in range(a, b):
            d = self.dst[k]
            w = self.wid[k]
            e = None
            if 0 <= d < self.n_states and self.last_wid[d] == w:
                e = <object>PyList_GET_ITEM(last, d)
            if e is None:
                e = (self._int(d), self._int(w))
                PyObject_GC_UnTrack(<void *>e)
                if 0 <= d < self.n_states:
                    last[d] = e
                    self.last_wid[d] = w
            t[self._int(self.sym[k])] = e
        return t
