# Included by _native.pyx (one extension, after _expand.pxi, whose tables it uses): the
# scanner's branch sets as ints and the token-trie walks of compile/trie_walks.py over
# them (the twins of ``_diff_walk`` and ``_walk_positions``, which stay the reference).
#
# A branch set ``((emissions, config), ...)`` (what ``trie_walks._advance`` makes) gets
# an id: emissions (tuples of terminal alternatives) and emission sequences are interned,
# a branch set is the sequence of its ``(emission sequence id, config)`` pairs. The
# scanner's step per (config, byte) and the advance per (branch set, byte) are kept in
# open-addressing tables, so a walk calls Python only for a scanner step it has not
# seen (``Scanner.step``, itself memoized) and to hand its results back as tuples.


cdef class BranchWalks:
    """Branch sets by id and the trie walks over them, for one scanner (see the comment
    at the top of ``_branches.pxi``). ``step``: ``Scanner.step``; ``ignore``: the
    emission of an ignored lexeme (``(IGNORE,)``: no emission, as ``None``); ``exact``:
    the scanner's ``exact`` flag when made (its steps differ with it: a caller makes
    another when it changes); ``byte_rep``: per byte, the representative of its class
    (``Scanner.byte_rep``: every byte of a class has the same steps), which keys the
    tables."""

    cdef object step_fn, ignore, okey_fn
    cdef readonly object exact
    cdef dict em_id, okey_memo
    cdef list em_of, ems_cache, bset_cache
    cdef _Sets ems, outs, bsets
    cdef _Map ems_append, step_map, adv_map
    cdef int64_t ems_empty, bset_empty
    cdef unsigned char rep[256]             # per byte, its class's representative

    def __cinit__(self):
        _sets_init(&self.ems)
        _sets_init(&self.outs)
        _sets_init(&self.bsets)
        _map_init(&self.ems_append, 1024)
        _map_init(&self.step_map, 1024)
        _map_init(&self.adv_map, 1024)

    def __dealloc__(self):
        _sets_free(&self.ems)
        _sets_free(&self.outs)
        _sets_free(&self.bsets)
        _map_free(&self.ems_append)
        _map_free(&self.step_map)
        _map_free(&self.adv_map)

    def __init__(self, step, ignore, exact, bytes byte_rep):
        cdef bint is_new
        cdef int32_t dummy = 0
        cdef int i
        if len(byte_rep) != 256:
            raise ValueError("byte_rep must have 256 bytes")
        for i in range(256):
            self.rep[i] = byte_rep[i]
        self.step_fn = step
        self.ignore = ignore
        self.exact = exact
        self.em_id = {}
        self.okey_fn = None
        self.okey_memo = {}
        self.em_of = []
        self.ems_cache = []
        self.bset_cache = []
        self.ems_empty = _sets_intern(&self.ems, &dummy, 0, &is_new)
        self.bset_empty = _sets_intern(&self.bsets, &dummy, 0, &is_new)

    def entries(self):
        """Entries of the step and advance tables (for memory accounting)."""
        return self.step_map.n + self.adv_map.n

    # -- interning -------------------------------------------------------------------
    cdef int64_t _em(self, object em) except -2:
        """Id of emission ``em`` (-1: none, or an ignored lexeme)."""
        cdef PyObject *p
        cdef int64_t i
        if em is None or em == self.ignore:
            return -1
        p = PyDict_GetItem(self.em_id, em)
        if p != NULL:
            return <int64_t><object>p
        i = len(self.em_of)
        self.em_id[em] = i
        self.em_of.append(em)
        return i

    cdef int64_t _append(self, int64_t e, int64_t em) except -1:
        """The emission sequence ``e`` followed by ``em``."""
        cdef int64_t key = (e << 32) | em, r, k
        cdef int32_t *a
        cdef bint is_new
        r = _map_get(&self.ems_append, key)
        if r != _ABSENT:
            return r
        k = self.ems.off[e + 1] - self.ems.off[e]
        a = <int32_t *>malloc((k + 1) * sizeof(int32_t))
        if a == NULL:
            raise MemoryError()
        try:
            if k:
                memcpy(a, self.ems.pool + self.ems.off[e], k * sizeof(int32_t))
            a[k] = <int32_t>em
            r = _sets_intern(&self.ems, a, k + 1, &is_new)
        finally:
            free(a)
        _map_set(&self.ems_append, key, r)
        return r

    cdef int64_t _step(self, int64_t c, int64_t b) except -1:
        """The scanner's outcomes of byte ``b`` in configuration ``c``, as a sequence of
        ``(emission id or -1, next config)`` in ``outs``."""
        cdef int64_t key, r, j
        cdef int32_t *a
        cdef bint is_new
        b = self.rep[b]
        key = (c << 8) | b
        r = _map_get(&self.step_map, key)
        if r != _ABSENT:
            return r
        res = self.step_fn(c, b)
        a = <int32_t *>malloc(max(2 * len(res), 1) * sizeof(int32_t))
        if a == NULL:
            raise MemoryError()
        try:
            j = 0
            for em, nc in res:
                a[j] = <int32_t>self._em(em)
                a[j + 1] = <int32_t>nc
                j += 2
            r = _sets_intern(&self.outs, a, j, &is_new)
        finally:
            free(a)
        _map_set(&self.step_map, key, r)
        return r

    cdef int64_t _advance(self, int64_t bid, int64_t b) except -1:
        """``trie_walks._advance``: the branch set after byte ``b`` (in order, without
        duplicates; ``bset_empty`` when every branch dies)."""
        cdef int64_t key, r, j, m, o, e, c, em, e2, nc, q
        cdef bint dup
        cdef _Buf out
        b = self.rep[b]
        key = (bid << 8) | b
        r = _map_get(&self.adv_map, key)
        if r != _ABSENT:
            return r
        out.a = NULL
        out.n = out.cap = 0
        try:
            for j in range(self.bsets.off[bid], self.bsets.off[bid + 1], 2):
                e = self.bsets.pool[j]
                c = self.bsets.pool[j + 1]
                o = self._step(c, b)
                for m in range(self.outs.off[o], self.outs.off[o + 1], 2):
                    em = self.outs.pool[m]
                    nc = self.outs.pool[m + 1]
                    e2 = e if em < 0 else self._append(e, em)
                    dup = False
                    for q in range(0, out.n, 2):
                        if out.a[q] == e2 and out.a[q + 1] == nc:
                            dup = True
                            break
                    if not dup:
                        _buf_push(&out, e2)
                        _buf_push(&out, nc)
            r = _intern_buf(&self.bsets, &out)
        finally:
            free(out.a)
        _map_set(&self.adv_map, key, r)
        return r

    cdef object _ems_tuple(self, int64_t e):
        cdef list cache = self.ems_cache
        cdef int64_t j
        while len(cache) <= e:
            cache.append(None)
        t = cache[e]
        if t is None:
            t = cache[e] = tuple([self.em_of[self.ems.pool[j]]
                                  for j in range(self.ems.off[e], self.ems.off[e + 1])])
        return t

    cdef object _branches(self, int64_t bid):
        """The branch set ``bid`` as ``trie_walks._advance`` gives it."""
        cdef list cache = self.bset_cache
        cdef int64_t j, lo = self.bsets.off[bid], hi = self.bsets.off[bid + 1]
        while len(cache) <= bid:
            cache.append(None)
        t = cache[bid]
        if t is None:
            t = cache[bid] = tuple([(self._ems_tuple(self.bsets.pool[j]),
                                     <long>self.bsets.pool[j + 1]) for j in range(lo, hi, 2)])
        return t

    cdef int64_t _bid(self, object branches) except -1:
        """The id of a branch set given as tuples."""
        cdef _Buf out
        cdef int64_t e, j, r
        out.a = NULL
        out.n = out.cap = 0
        try:
            for ems, c in branches:
                e = self.ems_empty
                for em in ems:
                    e = self._append(e, self._em(em))
                _buf_push(&out, e)
                _buf_push(&out, c)
            r = _intern_buf(&self.bsets, &out)
        finally:
            free(out.a)
        return r

    def advance(self, branches, long b):
        """``trie_walks._advance(step, branches, b)``."""
        return self._branches(self._advance(self._bid(branches), b))

    cdef object _okey(self, object outcome_key, int64_t bid):
        """``outcome_key(branches of bid)``, memoized per branch set (for one function:
        another drops the memo)."""
        cdef PyObject *p
        if outcome_key != self.okey_fn:
            self.okey_fn = outcome_key
            self.okey_memo = {}
        p = PyDict_GetItem(self.okey_memo, bid)
        if p != NULL:
            return <object>p
        r = self.okey_memo[bid] = outcome_key(self._branches(bid))
        return r

    # -- walks -----------------------------------------------------------------------
    def diff_walk(self, const unsigned char[::1] blob, const long long[::1] offsets, long c,
                  long b, object max_tokens, object outcome_key):
        """``trie_walks._diff_walk`` over the vocabulary's flat bytes
        (``VocabIndex.flat_bytes()``): the same depth-first walk of the token trie from
        configurations ``c`` and ``b`` at once, the same results (``(diff, groups,
        ends)`` or None past ``max_tokens``). A prefix's children are found by binary
        search on the byte at the prefix's depth. ``outcome_key`` must depend on the
        branches only: its results are kept per branch set."""
        cdef Py_ssize_t n = offsets.shape[0] - 1
        cdef int64_t lo, hi, depth, i, j, a, z, mid, tlen, bc, bb, nc, nb, k
        cdef long x
        cdef long long n_diff = 0
        cdef long long limit = -1 if max_tokens is None else max_tokens
        cdef list diff = []
        cdef dict groups = {}
        cdef set ends = set()
        cdef _Buf stack, kids
        cdef int64_t E = self.bset_empty
        stack.a = kids.a = NULL
        stack.n = stack.cap = kids.n = kids.cap = 0
        try:
            for v in (0, n, 0, self._bid((((), c),)), self._bid((((), b),))):
                _buf_push(&stack, v)
            while stack.n:
                stack.n -= 5
                lo = stack.a[stack.n]
                hi = stack.a[stack.n + 1]
                depth = stack.a[stack.n + 2]
                bc = stack.a[stack.n + 3]
                bb = stack.a[stack.n + 4]
                if depth < 0:                      # c is dead on all of them: taken whole
                    diff.append((lo, hi))
                    n_diff += hi - lo
                    if limit >= 0 and n_diff > limit:
                        return None
                    continue
                tlen = offsets[lo + 1] - offsets[lo]
                if tlen == depth and bc != bb:    # the prefix itself is a token, and differs
                    n_diff += 1
                    kc = self._okey(outcome_key, bc) if outcome_key is not None and bc != E \
                        else None
                    if kc is not None and kc[0] == self._okey(outcome_key, bb)[0]:
                        ends.update(kc[1])
                    else:
                        diff.append(lo)
                        if bc != E:
                            g = groups.get(bc)
                            if g is None:
                                groups[bc] = [lo]
                            else:
                                g.append(lo)
                if tlen == depth:
                    lo += 1
                kids.n = 0
                i = lo
                while i < hi:
                    x = blob[offsets[i] + depth]
                    if x == 255:
                        j = hi
                    else:                           # the first token whose byte there is > x
                        a = i + 1
                        z = hi
                        while a < z:
                            mid = (a + z) >> 1
                            if blob[offsets[mid] + depth] <= x:
                                a = mid + 1
                            else:
                                z = mid
                        j = a
                    nc = self._advance(bc, x) if bc != E else E
                    nb = self._advance(bb, x) if bb != E else E
                    if nc != nb:
                        _buf_push(&kids, i)
                        _buf_push(&kids, j)
                        _buf_push(&kids, nc)
                        _buf_push(&kids, nb)
                    i = j
                k = kids.n - 4
                while k >= 0:
                    _buf_push(&stack, kids.a[k])
                    _buf_push(&stack, kids.a[k + 1])
                    if kids.a[k + 2] == E:
                        _buf_push(&stack, -1)
                        _buf_push(&stack, E)
                        _buf_push(&stack, E)
                    else:
                        _buf_push(&stack, depth + 1)
                        _buf_push(&stack, kids.a[k + 2])
                        _buf_push(&stack, kids.a[k + 3])
                    k -= 4
                if limit >= 0 and n_diff > limit:
                    return None
        finally:
            free(stack.a)
            free(kids.a)
        return diff, {self._branches(k2): v for k2, v in groups.items()}, ends

    def walk_positions(self, const unsigned char[::1] blob, const long long[::1] offsets,
                       const long long[::1] positions, tuple first):
        """``trie_walks._walk_positions`` over the vocabulary's flat bytes: branch set ->
        list of the ``positions`` (ascending, all starting with one byte) whose tokens
        have it, from the branches ``first`` after that byte. Tokens sharing a prefix
        with the previous one resume from its branches; a dead prefix skips every token
        below it."""
        cdef Py_ssize_t n = positions.shape[0]
        cdef Py_ssize_t j = 0, k, lim, x, dead, tlen, plen, i, jj, m
        cdef long long ti, pi = positions[0] if n else 0
        cdef const unsigned char *tb
        cdef const unsigned char *pb = &blob[offsets[pi]] if n else NULL
        cdef int64_t br, nxt, E = self.bset_empty
        cdef dict groups = {}
        cdef _Buf stack                          # stack.a[k]: the branch set after k bytes
        stack.a = NULL
        stack.n = stack.cap = 0
        plen = 1
        try:
            _buf_push(&stack, E)
            _buf_push(&stack, self._bid(first))
            while j < n:
                ti = positions[j]
                tb = &blob[offsets[ti]]
                tlen = offsets[ti + 1] - offsets[ti]
                k = 1
                lim = plen
                if tlen < lim:
                    lim = tlen
                if stack.n - 1 < lim:
                    lim = stack.n - 1
                while k < lim and pb[k] == tb[k]:
                    k += 1
                stack.n = k + 1
                br = stack.a[k]
                dead = -1
                for x in range(k, tlen):
                    nxt = self._advance(br, tb[x])
                    if nxt == E:
                        dead = x
                        break
                    br = nxt
                    _buf_push(&stack, br)
                if dead >= 0:
                    # skip every token with this dead prefix (contiguous in byte order)
                    jj = j + 1
                    while jj < n:
                        i = positions[jj]
                        if offsets[i + 1] - offsets[i] <= dead:
                            break
                        m = 0
                        while m <= dead and blob[offsets[i] + m] == tb[m]:
                            m += 1
                        if m <= dead:
                            break
                        jj += 1
                    j = jj
                    pb = tb
                    plen = dead
                    continue
                g = groups.get(br)
                if g is None:
                    groups[br] = [ti]
                else:
                    g.append(ti)
                pb = tb
                plen = tlen
                j += 1
        finally:
            free(stack.a)
        return {self._branches(k2): v for k2, v in groups.items()}
