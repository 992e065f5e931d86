# Included by _native.pyx (one extension, after _tables.pxi): the symbolic LR runs of
# compile/templates.py (``Templates.step`` and what it calls: ``run``, ``closure``,
# ``check``, ``split``, ``run_above``, ``run_start``, ``pop_waits``) over int-coded
# items, known stack parts, terminal sequences and check sets. ``Templates`` stays the
# reference: a test compares every step result.
#
# An item ``(skip, lhs, terms, F)`` is the sequence ``(skip, lhs, terms id, F id)``
# interned (its id is the sequence's id; ``F id`` -1 for None); terminal sequences,
# stacks (tuples of LR states) and check sets (bitsets over the terminals) are interned
# too. A step result is ``_SUCCESS_ID`` or the id of a sequence of item ids (waiting
# items, without duplicates, in the reference's order). Runs recurse in C: a run's depth
# is its terminal count (at most a token's length) and ``run_above`` nests at most
# ``MAX_NESTING`` levels, as in the reference.

cdef class TemplateRuns:
    """The symbolic runs over one grammar's LR tables (``lr``: :class:`LRTables`;
    ``accepts_empty``: the grammar accepts the empty input), with int-coded items (see
    the comment at the top of ``_templates.pxi``). The item table only grows (state keys
    hold item ids); :meth:`clear_memos` drops the run memos."""

    cdef readonly int64_t n_items
    cdef dict item_id, terms_id, f_id
    cdef list item_of, terms_of, f_of
    cdef _Sets items, terms, stacks, results, triples, clos, splits, rules
    cdef _Map tail_map, shift_map, reduce_map, goto_map
    cdef _Map run_memo, closure_memo, split_memo
    cdef _Rows step_memo            # item id -> stack state -> step result
    cdef int64_t *red_off        # per LR state: its reduction terminals, in order,
    cdef int32_t *red_pool       # red_pool[red_off[q]:red_off[q + 1]]
    cdef int32_t *rlen
    cdef int32_t *rlhs
    cdef uint64_t *shiftable
    cdef uint64_t *f_words
    cdef int64_t W, n_f, f_cap, n_lr, n_terms
    cdef int64_t tid_empty, no_wait
    cdef int nesting
    cdef int64_t *mstamp
    cdef int64_t mstamp_cap, mcur
    cdef int32_t *sbuf              # scratch of _stack
    cdef int64_t sbuf_cap

    def __cinit__(self):
        _sets_init(&self.items)
        _sets_init(&self.terms)
        _sets_init(&self.stacks)
        _sets_init(&self.results)
        _sets_init(&self.triples)
        _sets_init(&self.clos)
        _sets_init(&self.splits)
        _sets_init(&self.rules)
        _map_init(&self.tail_map, 1024)
        _map_init(&self.shift_map, 1024)
        _map_init(&self.reduce_map, 1024)
        _map_init(&self.goto_map, 1024)
        _rows_init(&self.step_memo)
        _map_init(&self.run_memo, 1024)
        _map_init(&self.closure_memo, 1024)
        _map_init(&self.split_memo, 1024)
        self.rlen = self.rlhs = NULL
        self.red_off = NULL
        self.red_pool = NULL
        self.shiftable = self.f_words = NULL
        self.mstamp = NULL
        self.sbuf = NULL
        self.sbuf_cap = 0

    def __dealloc__(self):
        _sets_free(&self.items)
        _sets_free(&self.terms)
        _sets_free(&self.stacks)
        _sets_free(&self.results)
        _sets_free(&self.triples)
        _sets_free(&self.clos)
        _sets_free(&self.splits)
        _sets_free(&self.rules)
        free(self.red_off)
        free(self.red_pool)
        _map_free(&self.tail_map)
        _map_free(&self.shift_map)
        _map_free(&self.reduce_map)
        _map_free(&self.goto_map)
        _rows_free(&self.step_memo)
        _map_free(&self.run_memo)
        _map_free(&self.closure_memo)
        _map_free(&self.split_memo)
        free(self.rlen)
        free(self.rlhs)
        free(self.shiftable)
        free(self.f_words)
        free(self.mstamp)
        free(self.sbuf)

    def __init__(self, lr, bint accepts_empty):
        cdef int64_t q, t, n_rules, j, r, k
        cdef bint is_new
        cdef int32_t dummy = 0
        self.item_id = {}
        self.item_of = []
        self.terms_id = {}
        self.terms_of = []
        self.f_id = {}
        self.f_of = []
        self.n_items = 0
        self.n_f = 0
        self.f_cap = 0
        self.nesting = 0
        self.mstamp_cap = 0
        self.mcur = 0
        self.n_lr = lr.n_states
        self.n_terms = len(lr.terminals)
        self.W = (self.n_terms + 63) // 64
        self.tid_empty = self._tid(())
        self.no_wait = _sets_intern(&self.results, &dummy, 0, &is_new)
        n_rules = len(lr.rule_len)
        self.rlen = <int32_t *>malloc(max(n_rules, 1) * sizeof(int32_t))
        self.rlhs = <int32_t *>malloc(max(n_rules, 1) * sizeof(int32_t))
        self.shiftable = <uint64_t *>calloc(max(self.n_lr, 1) * self.W, sizeof(uint64_t))
        n_red = sum(len(row) for row in lr.reduce)
        self.red_off = <int64_t *>malloc((self.n_lr + 1) * sizeof(int64_t))
        self.red_pool = <int32_t *>malloc(max(n_red, 1) * sizeof(int32_t))
        if (self.rlen == NULL or self.rlhs == NULL or self.shiftable == NULL
                or self.red_off == NULL or self.red_pool == NULL):
            raise MemoryError()
        self.red_off[0] = 0
        k = 0
        for j in range(n_rules):
            self.rlen[j] = lr.rule_len[j]
            self.rlhs[j] = lr.rule_lhs[j]
        for q in range(self.n_lr):
            for t, q2 in lr.shift[q].items():
                _map_set(&self.shift_map, (q << 32) | t, q2)
                self.shiftable[q * self.W + (t >> 6)] |= (<uint64_t>1) << (t & 63)
            if q == lr.accept_state or (q == lr.start_state and accepts_empty):
                self.shiftable[q * self.W] |= 1          # END is terminal 0
            for t, rules in lr.reduce[q].items():
                self.red_pool[k] = <int32_t>t
                k += 1
                r = self._intern_list(&self.rules, rules)
                _map_set(&self.reduce_map, (q << 32) | t, r)
            self.red_off[q + 1] = k
            for lhs, g in lr.goto[q].items():
                _map_set(&self.goto_map, (q << 32) | lhs, g)

    cdef int64_t _intern_list(self, _Sets *s, object values) except -1:
        cdef int64_t k = len(values), j = 0
        cdef int32_t *a = <int32_t *>malloc(max(k, 1) * sizeof(int32_t))
        cdef bint is_new
        if a == NULL:
            raise MemoryError()
        try:
            for v in values:
                a[j] = <int32_t>v
                j += 1
            return _sets_intern(s, a, k, &is_new)
        finally:
            free(a)

    # -- interning -------------------------------------------------------------------
    cdef int64_t _tid(self, tuple terms) except -1:
        cdef PyObject *p = PyDict_GetItem(self.terms_id, terms)
        cdef int64_t r
        if p != NULL:
            return <int64_t><object>p
        r = self._intern_list(&self.terms, terms)
        self.terms_id[terms] = r
        while len(self.terms_of) <= r:
            self.terms_of.append(None)
        self.terms_of[r] = terms
        return r

    cdef object _terms_tuple(self, int64_t tid):
        cdef object t
        while len(self.terms_of) <= tid:
            self.terms_of.append(None)
        t = self.terms_of[tid]
        if t is None:
            t = tuple([self.terms.pool[j] for j in range(self.terms.off[tid],
                                                          self.terms.off[tid + 1])])
            self.terms_of[tid] = t
            self.terms_id[t] = tid
        return t

    cdef inline int64_t _tlen(self, int64_t tid) noexcept:
        return self.terms.off[tid + 1] - self.terms.off[tid]

    cdef int64_t _tail(self, int64_t tid) except -1:
        cdef int64_t r = _map_get(&self.tail_map, tid), k
        cdef bint is_new
        cdef int32_t *a
        if r != _ABSENT:
            return r
        k = self._tlen(tid)
        # a copy: interning may move the pool the terms are read from
        a = <int32_t *>malloc(max(k, 1) * sizeof(int32_t))
        if a == NULL:
            raise MemoryError()
        try:
            memcpy(a, self.terms.pool + self.terms.off[tid] + 1, (k - 1) * sizeof(int32_t))
            r = _sets_intern(&self.terms, a, k - 1, &is_new)
        finally:
            free(a)
        _map_set(&self.tail_map, tid, r)
        return r

    cdef int64_t _fid(self, object F) except -2:
        """Id of check set ``F`` (an int bitmask of terminals; None: -1)."""
        cdef PyObject *p
        cdef int64_t r, j, cap
        cdef uint64_t *w
        if F is None:
            return -1
        p = PyDict_GetItem(self.f_id, F)
        if p != NULL:
            return <int64_t><object>p
        r = self.n_f
        if r == self.f_cap:
            cap = max(64, 2 * self.f_cap)
            w = <uint64_t *>realloc(self.f_words, cap * self.W * sizeof(uint64_t))
            if w == NULL:
                raise MemoryError()
            self.f_words = w
            self.f_cap = cap
        if F < 0 or F >> (64 * self.W):
            raise ValueError("a check set outside the grammar's terminals")
        for j in range(self.W):
            self.f_words[r * self.W + j] = <uint64_t>((F >> (64 * j)) & 0xffffffffffffffff)
        self.f_id[F] = r
        self.f_of.append(F)
        self.n_f = r + 1
        return r

    cdef int64_t _fid_words(self, const uint64_t *w) except -1:
        F = 0
        for j in range(self.W - 1, -1, -1):
            F = (F << 64) | w[j]
        return self._fid(F)

    cdef int64_t _item(self, int64_t skip, int64_t lhs, int64_t tid, int64_t fid) except -1:
        cdef int32_t a[4]
        cdef bint is_new
        cdef int64_t r
        a[0] = <int32_t>skip
        a[1] = <int32_t>lhs
        a[2] = <int32_t>tid
        a[3] = <int32_t>fid
        r = _sets_intern(&self.items, a, 4, &is_new)
        if is_new:
            self.n_items = r + 1
        return r

    cdef inline int32_t _field(self, int64_t iid, int k) noexcept:
        return self.items.pool[self.items.off[iid] + k]

    cpdef int64_t iid(self, object item) except -1:
        """The id of item ``(skip, lhs, terms, F)``."""
        cdef PyObject *p = PyDict_GetItem(self.item_id, item)
        cdef int64_t r
        if p != NULL:
            return <int64_t><object>p
        r = self._item(item[0], item[1], self._tid(item[2]), self._fid(item[3]))
        self.item_id[item] = r
        return r

    cpdef object item(self, int64_t iid):
        """Item ``iid`` as the tuple ``(skip, lhs, terms, F)``."""
        cdef list of = self.item_of
        cdef int64_t fid
        while len(of) <= iid:
            of.append(None)
        it = of[iid]
        if it is None:
            fid = self._field(iid, 3)
            it = (self._field(iid, 0), self._field(iid, 1),
                  self._terms_tuple(self._field(iid, 2)), None if fid < 0 else self.f_of[fid])
            of[iid] = it
            self.item_id[it] = iid
        return it

    cdef int64_t _aid(self, const int32_t *a, int64_t k) except -1:
        cdef bint is_new
        return _sets_intern(&self.stacks, a, k, &is_new)

    cdef int64_t _stack(self, int64_t below, int64_t aid, int64_t lo, int64_t hi,
                        int64_t above) except -1:
        """The id of the stack ``(below,) + A[lo:hi] + (above,)`` for stack ``A`` = ``aid``
        (``below`` / ``above`` -1: none), built in a scratch buffer (interning may move
        the pool ``A`` is read from)."""
        cdef int64_t k = (below >= 0) + (hi - lo) + (above >= 0), m = 0
        if k > self.sbuf_cap:
            self.sbuf_cap = max(2 * k, 64)
            self.sbuf = <int32_t *>realloc(self.sbuf, self.sbuf_cap * sizeof(int32_t))
            if self.sbuf == NULL:
                raise MemoryError()
        if below >= 0:
            self.sbuf[0] = <int32_t>below
            m = 1
        if hi > lo:
            memcpy(self.sbuf + m, self.stacks.pool + self.stacks.off[aid] + lo,
                   (hi - lo) * sizeof(int32_t))
        if above >= 0:
            self.sbuf[k - 1] = <int32_t>above
        return self._aid(self.sbuf, k)

    def clear_memos(self):
        """Drop the run memos (the item table stays: state keys hold item ids)."""
        cdef int32_t dummy = 0
        cdef bint is_new
        _rows_free(&self.step_memo)
        _map_clear(&self.run_memo, 1024)
        _map_clear(&self.closure_memo, 1024)
        _map_clear(&self.split_memo, 1024)
        _sets_free(&self.results)
        _sets_init(&self.results)
        self.no_wait = _sets_intern(&self.results, &dummy, 0, &is_new)
        _sets_free(&self.stacks)
        _sets_init(&self.stacks)
        _sets_free(&self.triples)
        _sets_init(&self.triples)
        _sets_free(&self.clos)
        _sets_init(&self.clos)
        _sets_free(&self.splits)
        _sets_init(&self.splits)

    def memo_entries(self):
        return (self.step_memo.total + self.run_memo.n + self.closure_memo.n
                + self.split_memo.n)

    # -- results ---------------------------------------------------------------------
    cdef int64_t _merge_range(self, const int64_t *parts, int64_t n_parts) except -1:
        """The waiting items of the results ``parts[:n_parts]`` together, in order,
        without duplicates (``no_wait`` for none; a part itself when it is the only
        one)."""
        cdef int64_t k, j, r, i
        cdef _Buf out
        if n_parts == 0:
            return self.no_wait
        if n_parts == 1:
            return parts[0]
        if self.mstamp_cap < self.n_items:
            self.mstamp = <int64_t *>realloc(self.mstamp, 2 * self.n_items * sizeof(int64_t))
            if self.mstamp == NULL:
                raise MemoryError()
            memset(self.mstamp + self.mstamp_cap, 0,
                   (2 * self.n_items - self.mstamp_cap) * sizeof(int64_t))
            self.mstamp_cap = 2 * self.n_items
        self.mcur += 1
        out.a = NULL
        out.n = out.cap = 0
        try:
            for k in range(n_parts):
                r = parts[k]
                for j in range(self.results.off[r], self.results.off[r + 1]):
                    i = self.results.pool[j]
                    if self.mstamp[i] != self.mcur:
                        self.mstamp[i] = self.mcur
                        _buf_push(&out, i)
            return _intern_buf(&self.results, &out)
        finally:
            free(out.a)

    # -- the runs --------------------------------------------------------------------
    cdef int64_t _closure(self, int64_t aid, int64_t t) except -1:
        """``Templates.closure``: a sequence in ``clos``: the number of shifted stacks,
        their ids, then ``(entries to discard, lhs)`` per reduction popping below."""
        cdef int64_t key = (aid << 20) | t, r, k1, q, q2, rl, j, n, lhs, g, a1, a2, x, rule
        cdef _Buf work, shifted, pops, seen, out
        cdef bint dup
        if t >= (1 << 20):
            raise OverflowError("more than 2**20 terminals")
        r = _map_get(&self.closure_memo, key)
        if r != _ABSENT:
            return r
        work.a = shifted.a = pops.a = seen.a = out.a = NULL
        work.n = work.cap = shifted.n = shifted.cap = pops.n = pops.cap = 0
        seen.n = seen.cap = out.n = out.cap = 0
        try:
            _buf_push(&work, aid)
            _buf_push(&seen, aid)
            while work.n:
                work.n -= 1
                a1 = work.a[work.n]
                k1 = self.stacks.off[a1 + 1] - self.stacks.off[a1]
                q = self.stacks.pool[self.stacks.off[a1] + k1 - 1]
                q2 = _map_get(&self.shift_map, (q << 32) | t)
                if q2 != _ABSENT:
                    a2 = self._stack(-1, a1, 0, k1, q2)
                    dup = False
                    for x in range(shifted.n):
                        if shifted.a[x] == a2:
                            dup = True
                            break
                    if not dup:
                        _buf_push(&shifted, a2)
                rl = _map_get(&self.reduce_map, (q << 32) | t)
                if rl == _ABSENT:
                    continue
                for j in range(self.rules.off[rl], self.rules.off[rl + 1]):
                    rule = self.rules.pool[j]
                    n = self.rlen[rule]
                    lhs = self.rlhs[rule]
                    if k1 > n:
                        q = self.stacks.pool[self.stacks.off[a1] + k1 - n - 1]
                        g = _map_get(&self.goto_map, (q << 32) | lhs)
                        if g != _ABSENT:
                            a2 = self._stack(-1, a1, 0, k1 - n, g)
                            dup = False
                            for x in range(seen.n):
                                if seen.a[x] == a2:
                                    dup = True
                                    break
                            if not dup:
                                _buf_push(&seen, a2)
                                _buf_push(&work, a2)
                    else:
                        dup = False
                        for x in range(0, pops.n, 2):
                            if pops.a[x] == n - k1 and pops.a[x + 1] == lhs:
                                dup = True
                                break
                        if not dup:
                            _buf_push(&pops, n - k1)
                            _buf_push(&pops, lhs)
            _buf_push(&out, shifted.n)
            for x in range(shifted.n):
                _buf_push(&out, shifted.a[x])
            for x in range(pops.n):
                _buf_push(&out, pops.a[x])
            r = _intern_buf(&self.clos, &out)
        finally:
            free(work.a)
            free(shifted.a)
            free(pops.a)
            free(seen.a)
            free(out.a)
        _map_set(&self.closure_memo, key, r)
        return r

    cdef int64_t _split(self, int64_t q, int64_t fid) except -1:
        """``Templates.split``: a sequence in ``splits`` of ``(rule, id of the terminals
        of F it is done for)``, rules in order of first appearance."""
        cdef int64_t key = (q << 32) | fid, r, j, m, t, rl, rule, x, W = self.W
        cdef _Buf rules
        cdef uint64_t *acc = NULL
        cdef int64_t acc_cap = 0
        cdef const uint64_t *F
        cdef _Buf out
        r = _map_get(&self.split_memo, key)
        if r != _ABSENT:
            return r
        rules.a = out.a = NULL
        rules.n = rules.cap = out.n = out.cap = 0
        try:
            for j in range(self.red_off[q], self.red_off[q + 1]):
                t = self.red_pool[j]
                F = self.f_words + fid * W
                if not (F[t >> 6] >> (t & 63)) & 1:
                    continue
                rl = _map_get(&self.reduce_map, (q << 32) | t)
                for m in range(self.rules.off[rl], self.rules.off[rl + 1]):
                    rule = self.rules.pool[m]
                    for x in range(rules.n):
                        if rules.a[x] == rule:
                            break
                    else:
                        x = rules.n
                        _buf_push(&rules, rule)
                        if acc_cap < rules.n * W:
                            acc_cap = 2 * rules.n * W
                            acc = <uint64_t *>realloc(acc, acc_cap * sizeof(uint64_t))
                            if acc == NULL:
                                raise MemoryError()
                        memset(acc + x * W, 0, W * sizeof(uint64_t))
                    acc[x * W + (t >> 6)] |= (<uint64_t>1) << (t & 63)
            for x in range(rules.n):
                _buf_push(&out, rules.a[x])
                _buf_push(&out, self._fid_words(acc + x * W))
            r = _intern_buf(&self.splits, &out)
        finally:
            free(rules.a)
            free(out.a)
            free(acc)
        _map_set(&self.split_memo, key, r)
        return r

    cdef int64_t _check(self, int64_t aid, int64_t fid) except -3:
        """``Templates.check``: ``_SUCCESS_ID`` when some terminal of ``F`` can be
        shifted on the stack after reductions, else the waiting items (a result)."""
        cdef _Buf work, seen, waiting
        cdef int64_t a1, f1, k1, q, sp, j, j2, rule, n, lhs, g, a2, fs, x, w, W = self.W
        cdef bint dup, ok
        if fid < 0:
            raise ValueError("a check without a check set")
        work.a = seen.a = waiting.a = NULL
        work.n = work.cap = seen.n = seen.cap = waiting.n = waiting.cap = 0
        try:
            _buf_push(&work, aid)
            _buf_push(&work, fid)
            _buf_push(&seen, aid)
            _buf_push(&seen, fid)
            while work.n:
                work.n -= 2
                a1 = work.a[work.n]
                f1 = work.a[work.n + 1]
                k1 = self.stacks.off[a1 + 1] - self.stacks.off[a1]
                q = self.stacks.pool[self.stacks.off[a1] + k1 - 1]
                ok = False
                for w in range(W):
                    if self.f_words[f1 * W + w] & self.shiftable[q * W + w]:
                        ok = True
                        break
                if ok:
                    return _SUCCESS_ID
                sp = self._split(q, f1)
                for j in range(self.splits.off[sp], self.splits.off[sp + 1], 2):
                    rule = self.splits.pool[j]
                    fs = self.splits.pool[j + 1]
                    n = self.rlen[rule]
                    lhs = self.rlhs[rule]
                    if k1 > n:
                        q = self.stacks.pool[self.stacks.off[a1] + k1 - n - 1]
                        g = _map_get(&self.goto_map, (q << 32) | lhs)
                        if g != _ABSENT:
                            a2 = self._stack(-1, a1, 0, k1 - n, g)
                            dup = False
                            for x in range(0, seen.n, 2):
                                if seen.a[x] == a2 and seen.a[x + 1] == fs:
                                    dup = True
                                    break
                            if not dup:
                                _buf_push(&seen, a2)
                                _buf_push(&seen, fs)
                                _buf_push(&work, a2)
                                _buf_push(&work, fs)
                    else:
                        x = self._item(n - k1, lhs, self.tid_empty, fs)
                        dup = False
                        for j2 in range(waiting.n):
                            if waiting.a[j2] == x:
                                dup = True
                                break
                        if not dup:
                            _buf_push(&waiting, x)
            return _intern_buf(&self.results, &waiting)
        finally:
            free(work.a)
            free(seen.a)
            free(waiting.a)

    cdef int64_t _pop_waits(self, int64_t cl, int64_t tid, int64_t fid) except -1:
        """``Templates.pop_waits``: the items ``(skip, lhs, terms, F)`` of the pops of
        closure ``cl``."""
        cdef _Buf out
        cdef int64_t start = self.clos.off[cl], ns = self.clos.pool[start], j
        out.a = NULL
        out.n = out.cap = 0
        try:
            for j in range(start + 1 + ns, self.clos.off[cl + 1], 2):
                _buf_push(&out, self._item(self.clos.pool[j], self.clos.pool[j + 1], tid, fid))
            return _intern_buf(&self.results, &out)
        finally:
            free(out.a)

    cdef int64_t _triple(self, int64_t aid, int64_t tid, int64_t fid) except -1:
        cdef int32_t key3[3]
        cdef bint is_new
        key3[0] = <int32_t>aid
        key3[1] = <int32_t>tid
        key3[2] = <int32_t>fid
        return _sets_intern(&self.triples, key3, 3, &is_new)

    cdef int64_t _run(self, int64_t aid, int64_t tid, int64_t fid) except -3:
        """``Templates.run``: shift terms ``tid`` on the known stack ``aid``, then check
        ``fid`` (-1: no check). ``_SUCCESS_ID`` or the waiting items. Depth first over
        the shifted stacks with an explicit stack of frames, as the reference (a token
        can emit thousands of terminals): per frame ``(run key, closure, next shifted
        stack, rest of terms, check set, start of its parts)``; the parts (results to
        merge) of the frames on the stack lie one after the other in ``parts``."""
        cdef int64_t tk = self._triple(aid, tid, fid), r, cl, ns, a2, ck, r2, done, top
        cdef int64_t NONE = _ABSENT
        cdef int64_t result = NONE
        cdef int64_t c_aid, c_tid, c_tk
        cdef bint pending = True
        cdef _Buf frames, parts
        r = _map_get(&self.run_memo, tk)
        if r != _ABSENT:
            return r
        frames.a = parts.a = NULL
        frames.n = frames.cap = parts.n = parts.cap = 0
        c_aid = aid
        c_tid = tid
        c_tk = tk
        try:
            while True:
                if pending:
                    pending = False
                    if self._tlen(c_tid) == 0:
                        result = self._check(c_aid, fid)
                        _map_set(&self.run_memo, c_tk, result)
                    else:
                        cl = self._closure(c_aid, self.terms.pool[self.terms.off[c_tid]])
                        _buf_push(&frames, c_tk)
                        _buf_push(&frames, cl)
                        _buf_push(&frames, 0)
                        _buf_push(&frames, self._tail(c_tid))
                        _buf_push(&frames, parts.n)
                        ns = self.clos.pool[self.clos.off[cl]]
                        if self.clos.off[cl + 1] - self.clos.off[cl] > 1 + ns:
                            _buf_push(&parts, self._pop_waits(cl, c_tid, fid))
                        result = NONE
                if frames.n == 0:
                    return result
                top = frames.n - 5
                done = NONE
                if result != NONE:
                    if result == _SUCCESS_ID:
                        done = _SUCCESS_ID
                    elif self.results.off[result + 1] > self.results.off[result]:
                        _buf_push(&parts, result)
                    result = NONE
                cl = frames.a[top + 1]
                ns = self.clos.pool[self.clos.off[cl]]
                while done == NONE and frames.a[top + 2] < ns:
                    a2 = self.clos.pool[self.clos.off[cl] + 1 + frames.a[top + 2]]
                    frames.a[top + 2] += 1
                    if self._tlen(frames.a[top + 3]) == 0 and fid < 0:
                        done = _SUCCESS_ID
                        break
                    ck = self._triple(a2, frames.a[top + 3], fid)
                    r2 = _map_get(&self.run_memo, ck)
                    if r2 == _ABSENT:
                        c_aid = a2
                        c_tid = frames.a[top + 3]
                        c_tk = ck
                        pending = True
                        break
                    if r2 == _SUCCESS_ID:
                        done = _SUCCESS_ID
                    elif self.results.off[r2 + 1] > self.results.off[r2]:
                        _buf_push(&parts, r2)
                if pending:
                    continue
                if done == NONE:
                    done = self._merge_range(parts.a + frames.a[top + 4],
                                             parts.n - frames.a[top + 4])
                _map_set(&self.run_memo, frames.a[top], done)
                parts.n = frames.a[top + 4]
                frames.n = top
                result = done
        finally:
            free(frames.a)
            free(parts.a)

    cdef int64_t _run_above(self, int64_t s, int64_t bid, int64_t tid, int64_t fid) except -3:
        """``Templates.run_above``: the run on ``(s,) + B`` as the run on ``B`` whose
        waiting items then read ``s``."""
        cdef int64_t waits, j, r
        cdef _Buf parts
        if self.nesting >= 32:                    # Templates.MAX_NESTING
            return self._run(self._stack(s, bid, 0, self.stacks.off[bid + 1]
                                         - self.stacks.off[bid], -1), tid, fid)
        waits = self._run(bid, tid, fid)
        if waits == _SUCCESS_ID:
            return _SUCCESS_ID
        if self.results.off[waits + 1] == self.results.off[waits]:
            return self.no_wait
        parts.a = NULL
        parts.n = parts.cap = 0
        self.nesting += 1
        try:
            for j in range(self.results.off[waits + 1] - self.results.off[waits]):
                r = self.step(self.results.pool[self.results.off[waits] + j], s)
                if r == _SUCCESS_ID:
                    return _SUCCESS_ID
                if self.results.off[r + 1] > self.results.off[r]:
                    _buf_push(&parts, r)
            return self._merge_range(parts.a, parts.n)
        finally:
            self.nesting -= 1
            free(parts.a)

    cdef int64_t _run_start(self, int64_t s, int64_t tid, int64_t fid) except -3:
        """``Templates.run_start``: ``run((s,), terms, F)`` for non-empty terms."""
        cdef int32_t one = <int32_t>s
        cdef int64_t cl, rest, ns, j, a2, r
        cdef _Buf parts
        cl = self._closure(self._aid(&one, 1), self.terms.pool[self.terms.off[tid]])
        rest = self._tail(tid)
        parts.a = NULL
        parts.n = parts.cap = 0
        try:
            ns = self.clos.pool[self.clos.off[cl]]
            if self.clos.off[cl + 1] - self.clos.off[cl] > 1 + ns:
                _buf_push(&parts, self._pop_waits(cl, tid, fid))
            for j in range(ns):
                if self._tlen(rest) == 0 and fid < 0:
                    return _SUCCESS_ID
                a2 = self.clos.pool[self.clos.off[cl] + 1 + j]
                r = self._run_above(s, self._stack(-1, a2, 1, self.stacks.off[a2 + 1]
                                                   - self.stacks.off[a2], -1), rest, fid)
                if r == _SUCCESS_ID:
                    return _SUCCESS_ID
                if self.results.off[r + 1] > self.results.off[r]:
                    _buf_push(&parts, r)
            return self._merge_range(parts.a, parts.n)
        finally:
            free(parts.a)

    cpdef int64_t step(self, int64_t iid, int64_t s) except -3:
        """``Templates.step``: item ``iid`` reading stack state ``s``: ``-2`` (success)
        or the id of its waiting items (:meth:`waits`)."""
        cdef int64_t r, skip, lhs, tid, fid, g, x
        cdef int32_t one
        cdef _Buf b
        r = _rows_get(&self.step_memo, iid, <int32_t>s)
        if r != _ABSENT:
            return r
        skip = self._field(iid, 0)
        lhs = self._field(iid, 1)
        tid = self._field(iid, 2)
        fid = self._field(iid, 3)
        if skip:
            b.a = NULL
            b.n = b.cap = 0
            try:
                _buf_push(&b, self._item(skip - 1, lhs, tid, fid))
                r = _intern_buf(&self.results, &b)
            finally:
                free(b.a)
        elif lhs == -1:
            if self._tlen(tid) == 0:
                one = <int32_t>s
                r = self._run(self._aid(&one, 1), tid, fid)
            else:
                r = self._run_start(s, tid, fid)
        else:
            g = _map_get(&self.goto_map, (s << 32) | lhs)
            if g == _ABSENT:
                r = self.no_wait
            else:
                one = <int32_t>g
                r = self._run_above(s, self._aid(&one, 1), tid, fid)
        _rows_set(&self.step_memo, iid, <int32_t>s, r)
        return r

    def waits(self, int64_t r):
        """The item ids of step result ``r`` (not ``-2``)."""
        return [self.results.pool[j] for j in range(self.results.off[r], self.results.off[r + 1])]

    def step_items(self, item, int64_t s):
        """``Templates.step(item, s)`` as the reference returns it: True, or the waiting
        items as tuples (in a list, in order)."""
        r = self.step(self.iid(item), s)
        if r == _SUCCESS_ID:
            return True
        return [self.item(i) for i in self.waits(r)]
