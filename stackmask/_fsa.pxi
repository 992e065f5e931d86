# Included by _native.pyx (after _tables.pxi): the loops of the lexer automaton toolkit
# (``stackmask.wfa.fsa`` and ``stackmask.wfa.reduction``): Hopcroft's refinement, the subset construction, the product
# search, trimming and numbering, Moore rounds, preimages, and the lexer DFA's runs over
# tokens (``compile/terminal.py``). Each numbers states as its Python reference does.


cdef struct _Work:
    long long *a            # the stack of splitters (block * C + class)
    long long n, cap
    unsigned char *bits     # splitter -> on the stack


cdef int _work_push(_Work *w, long long k) except -1:
    """Push splitter ``k`` unless it is on the stack already."""
    cdef long long *grown
    if (w.bits[k >> 3] >> (k & 7)) & 1:
        return 0
    if w.n == w.cap:
        grown = <long long *>realloc(w.a, 2 * w.cap * sizeof(long long))
        if grown == NULL:
            raise MemoryError()
        w.a = grown
        w.cap *= 2
    w.a[w.n] = k
    w.n += 1
    w.bits[k >> 3] |= 1 << (k & 7)
    return 0


def hopcroft_refine(long long n, long long C, const long long[::1] state_off,
                    const long long[::1] ucls, const long long[::1] ustart,
                    const long long[::1] uend, const long long[::1] src,
                    long long[::1] blk):
    """``stackmask.wfa.reduction._hopcroft``'s refinement over arrays, in place on ``blk``
    (state -> block, blocks numbered from 0 without gaps): the coarsest refinement
    compatible with the transitions. The transitions come as their preimages: for state
    ``t``, entries ``state_off[t]..state_off[t+1]`` of ``ucls``/``ustart``/``uend`` give,
    per input class (ascending), the range of ``src`` holding the states that read that
    class into ``t``. Blocks are contiguous runs of one array of states (split in place:
    the states a splitter reaches are swapped to the front of their block); a block is
    split into the part reached and the rest, the smaller becoming the new block and
    a splitter for every class leading into it (Hopcroft's "smaller half"). Block ids
    differ from the Python refinement's; the partition is the same (the coarsest
    one)."""
    cdef long long nb0 = 0, nb, i, j, s, t, b, y, m, size, p, q, e
    cdef long long bs, be, d, k, c
    cdef long long *elems = <long long *>malloc(max(n, 1) * sizeof(long long))
    cdef long long *pos = <long long *>malloc(max(n, 1) * sizeof(long long))
    cdef long long *bstart = <long long *>malloc((max(n, 1) + 1) * sizeof(long long))
    cdef long long *bend = <long long *>malloc((max(n, 1) + 1) * sizeof(long long))
    cdef long long *marked = <long long *>malloc((max(n, 1) + 1) * sizeof(long long))
    cdef long long *touched = <long long *>malloc((max(n, 1) + 1) * sizeof(long long))
    cdef long long *tmp = <long long *>malloc(max(n, 1) * sizeof(long long))
    cdef long long *stamp = <long long *>malloc(max(C, 1) * sizeof(long long))
    cdef _Work work
    cdef long long n_touched, n_tmp
    work.n = 0
    work.cap = 1024
    work.a = <long long *>malloc(work.cap * sizeof(long long))
    work.bits = <unsigned char *>malloc((n * C + 8) // 8 + 1)
    if (elems == NULL or pos == NULL or bstart == NULL or bend == NULL or marked == NULL
            or touched == NULL or tmp == NULL or stamp == NULL or work.bits == NULL
            or work.a == NULL):
        free(elems); free(pos); free(bstart); free(bend); free(marked); free(touched)
        free(tmp); free(stamp); free(work.bits); free(work.a)
        raise MemoryError()
    try:
        memset(work.bits, 0, (n * C + 8) // 8 + 1)
        for s in range(n):
            if blk[s] + 1 > nb0:
                nb0 = blk[s] + 1
        # blocks as contiguous runs (counting sort by block)
        for b in range(nb0 + 1):
            bstart[b] = 0
            marked[b] = 0
        for s in range(n):
            bstart[blk[s] + 1] += 1
        for b in range(nb0):
            bstart[b + 1] += bstart[b]
        for b in range(nb0):
            bend[b] = bstart[b]
        for s in range(n):
            b = blk[s]
            elems[bend[b]] = s
            pos[s] = bend[b]
            bend[b] += 1
        nb = nb0
        for c in range(C):
            stamp[c] = -1
        # every initial block is a splitter, for each class leading into it
        for b in range(nb0):
            for i in range(bstart[b], bend[b]):
                t = elems[i]
                for e in range(state_off[t], state_off[t + 1]):
                    d = ucls[e]
                    if stamp[d] != b:
                        stamp[d] = b
                        _work_push(&work, b * C + d)
        while work.n:
            work.n -= 1
            k = work.a[work.n]
            work.bits[k >> 3] &= ~(1 << (k & 7))
            b = k // C
            c = k % C
            # the splitter's states, copied (marking permutes blocks, this one too)
            n_tmp = 0
            for i in range(bstart[b], bend[b]):
                tmp[n_tmp] = elems[i]
                n_tmp += 1
            n_touched = 0
            for j in range(n_tmp):
                t = tmp[j]
                for e in range(state_off[t], state_off[t + 1]):
                    if ucls[e] < c:
                        continue
                    if ucls[e] == c:
                        for p in range(ustart[e], uend[e]):
                            s = src[p]
                            y = blk[s]
                            if marked[y] == 0:
                                touched[n_touched] = y
                                n_touched += 1
                            q = bstart[y] + marked[y]
                            i = pos[s]
                            if i >= q:          # not marked yet: to the marked front
                                elems[i] = elems[q]
                                pos[elems[q]] = i
                                elems[q] = s
                                pos[s] = q
                                marked[y] += 1
                    break
            for j in range(n_touched):
                y = touched[j]
                m = marked[y]
                marked[y] = 0
                size = bend[y] - bstart[y]
                if m == size:
                    continue
                if 2 * m <= size:               # the marked part leaves
                    bs = bstart[y]
                    be = bs + m
                    bstart[y] = be
                else:                           # the rest leaves
                    bs = bstart[y] + m
                    be = bend[y]
                    bend[y] = bs
                bstart[nb] = bs
                bend[nb] = be
                marked[nb] = 0
                for i in range(bs, be):
                    blk[elems[i]] = nb
                for i in range(bs, be):
                    t = elems[i]
                    for e in range(state_off[t], state_off[t + 1]):
                        _work_push(&work, nb * C + ucls[e])
                nb += 1
    finally:
        free(elems); free(pos); free(bstart); free(bend); free(marked); free(touched)
        free(tmp); free(stamp); free(work.bits); free(work.a)
    return nb


# --------------------------------------------------------------------------
# subset construction and product BFS (``stackmask.wfa.fsa``)
# --------------------------------------------------------------------------

cdef int _reserve_i32(int32_t **a, int64_t *cap, int64_t need) except -1:
    cdef int64_t m
    cdef int32_t *p
    if need <= cap[0]:
        return 0
    m = max(2 * cap[0], need, 256)
    p = <int32_t *>realloc(a[0], m * sizeof(int32_t))
    if p == NULL:
        raise MemoryError()
    a[0] = p
    cap[0] = m
    return 0


cdef object _sets_arrays(_Sets *s):
    """``(pool, offsets)`` of the interned sequences as numpy arrays."""
    pool = np.empty(s.pool_n, dtype=np.int32)
    offs = np.empty(s.n + 1, dtype=np.int64)
    cdef int32_t[::1] pv = pool
    cdef int64_t[::1] ov = offs
    if s.pool_n:
        memcpy(&pv[0], s.pool, s.pool_n * sizeof(int32_t))
    memcpy(&ov[0], s.off, (s.n + 1) * sizeof(int64_t))
    return pool, offs


cdef object _rows_array(const int32_t *rows, int64_t n, int64_t C):
    out = np.empty((n, C), dtype=np.int32)
    cdef int32_t[:, ::1] v = out
    if n * C:
        memcpy(&v[0, 0], rows, n * C * sizeof(int32_t))
    return out


cdef struct _Clo:
    # epsilon closures (important states, sorted), computed on first use
    int64_t *off          # state -> offset in `states` (-1: not computed yet)
    int64_t *len
    int32_t *states
    int64_t n, cap
    int64_t *stamp        # DFS marks, one round per closure
    int32_t *stack
    int64_t tick


cdef int _ensure_closure(_Clo *cl, int64_t t, const int64_t[::1] eps_off,
                         const int32_t[::1] eps_to, const unsigned char[::1] important,
                         int64_t n) except -1:
    cdef int64_t top = 0, y, d, q
    if cl.off[t] >= 0:
        return 0
    cl.tick += 1
    _reserve_i32(&cl.states, &cl.cap, cl.n + n + 1)
    cl.off[t] = cl.n
    cl.stack[top] = <int32_t>t
    top += 1
    cl.stamp[t] = cl.tick
    while top:
        top -= 1
        y = cl.stack[top]
        if important[y]:
            cl.states[cl.n] = <int32_t>y
            cl.n += 1
        for d in range(eps_off[y], eps_off[y + 1]):
            q = eps_to[d]
            if cl.stamp[q] != cl.tick:
                cl.stamp[q] = cl.tick
                cl.stack[top] = <int32_t>q
                top += 1
    cl.len[t] = cl.n - cl.off[t]
    if cl.len[t] > 1:
        qsort(cl.states + cl.off[t], cl.len[t], sizeof(int32_t), _cmp_i32)
    return 0


def determinize_arrays(int64_t n_classes, int64_t start, int64_t max_states,
                       const int64_t[::1] eps_off, const int32_t[::1] eps_to,
                       const int64_t[::1] mv_off, const int32_t[::1] mv_cls,
                       const int32_t[::1] mv_to, const unsigned char[::1] important):
    """``stackmask.wfa.fsa.determinize``'s subset construction over arrays. The NFA
    has ``len(eps_off) - 1`` states: per state ``s`` its epsilon successors
    ``eps_to[eps_off[s]:eps_off[s+1]]`` and its symbol moves ``(mv_cls[k], mv_to[k])``
    for ``k`` in ``mv_off[s]:mv_off[s+1]``, in the reference's order (edge by edge,
    classes ascending). A subset is the sorted important states of an epsilon closure;
    subsets are numbered as the reference numbers them (in the order first met: rows in
    order, a row's classes in the order a move on them is first met over the subset's
    states ascending). Returns ``(trans, pool, offsets)``, subset ``i`` being
    ``pool[offsets[i]:offsets[i+1]]``, or None past ``max_states`` subsets."""
    cdef int64_t n = eps_off.shape[0] - 1
    cdef int64_t C = n_classes
    cdef _Sets sets
    cdef _Clo cl
    cdef int64_t *gstamp = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cdef int32_t *buf = <int32_t *>malloc((n + 1) * sizeof(int32_t))
    cdef int64_t *cls_stamp = <int64_t *>malloc((C + 1) * sizeof(int64_t))
    cdef int64_t *head = <int64_t *>malloc((C + 1) * sizeof(int64_t))
    cdef int64_t *tail = <int64_t *>malloc((C + 1) * sizeof(int64_t))
    cdef int32_t *order = <int32_t *>malloc((C + 1) * sizeof(int32_t))
    cdef int32_t *pair_t = NULL
    cdef int64_t *pair_next = NULL
    cdef int64_t pair_cap = 0, pair_n
    cdef int32_t *rows = NULL
    cdef int64_t rows_cap = 0
    cdef int64_t tick = 0, i, j, k, q, s, t, c, nb, n_order, x, e, d
    cdef int32_t *pt
    cdef int64_t *pn
    cdef bint is_new
    cl.off = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cl.len = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cl.stamp = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cl.stack = <int32_t *>malloc((n + 1) * sizeof(int32_t))
    cl.states = NULL
    cl.n = cl.cap = cl.tick = 0
    _sets_init(&sets)
    try:
        if (gstamp == NULL or buf == NULL or cls_stamp == NULL or head == NULL or tail == NULL
                or order == NULL or cl.off == NULL or cl.len == NULL or cl.stamp == NULL
                or cl.stack == NULL):
            raise MemoryError()
        for s in range(n + 1):
            cl.off[s] = -1
            cl.stamp[s] = -1
            gstamp[s] = -1
        for c in range(C + 1):
            cls_stamp[c] = -1
        _ensure_closure(&cl, start, eps_off, eps_to, important, n)
        _sets_intern(&sets, cl.states + cl.off[start], cl.len[start], &is_new)
        i = 0
        while i < sets.n:
            _reserve_i32(&rows, &rows_cap, (i + 1) * C)
            for c in range(C):
                rows[i * C + c] = -1
            # the subset's moves, by class (classes in the order first met)
            tick += 1
            n_order = 0
            pair_n = 0
            for j in range(sets.off[i], sets.off[i + 1]):
                s = sets.pool[j]
                for k in range(mv_off[s], mv_off[s + 1]):
                    c = mv_cls[k]
                    if pair_n == pair_cap:
                        pair_cap = max(64, 2 * pair_cap)
                        pt = <int32_t *>realloc(pair_t, pair_cap * sizeof(int32_t))
                        if pt == NULL:
                            raise MemoryError()
                        pair_t = pt
                        pn = <int64_t *>realloc(pair_next, pair_cap * sizeof(int64_t))
                        if pn == NULL:
                            raise MemoryError()
                        pair_next = pn
                    pair_t[pair_n] = mv_to[k]
                    pair_next[pair_n] = -1
                    if cls_stamp[c] != tick:
                        cls_stamp[c] = tick
                        order[n_order] = <int32_t>c
                        n_order += 1
                        head[c] = pair_n
                    else:
                        pair_next[tail[c]] = pair_n
                    tail[c] = pair_n
                    pair_n += 1
            # per class: the union of its targets' closures, sorted
            for x in range(n_order):
                c = order[x]
                tick += 1
                nb = 0
                e = head[c]
                while e >= 0:
                    t = pair_t[e]
                    _ensure_closure(&cl, t, eps_off, eps_to, important, n)
                    for d in range(cl.off[t], cl.off[t] + cl.len[t]):
                        q = cl.states[d]
                        if gstamp[q] != tick:
                            gstamp[q] = tick
                            buf[nb] = <int32_t>q
                            nb += 1
                    e = pair_next[e]
                if nb > 1:
                    qsort(buf, nb, sizeof(int32_t), _cmp_i32)
                q = _sets_intern(&sets, buf, nb, &is_new)
                if is_new and sets.n > max_states:
                    return None
                rows[i * C + c] = <int32_t>q
            i += 1
        pool, offs = _sets_arrays(&sets)
        return _rows_array(rows, sets.n, C), pool, offs
    finally:
        _sets_free(&sets)
        free(cl.off); free(cl.len); free(cl.states); free(cl.stamp); free(cl.stack)
        free(gstamp); free(buf); free(cls_stamp); free(head); free(tail); free(order)
        free(pair_t); free(pair_next); free(rows)


def product_arrays(const int32_t[:, ::1] gc, tuple start, int64_t max_states):
    """``stackmask.wfa.fsa._product_tuples`` over arrays: the tuples of live component
    states reachable from ``start`` (sorted), one at a time in breadth-first order,
    classes in order (``gc``: the components' transitions side by side, -1 dead).
    Returns ``(pool, offsets, trans)`` (tuple ``i`` is ``pool[offsets[i]:offsets[i+1]]``),
    or None past ``max_states`` tuples."""
    cdef int64_t C = gc.shape[1]
    cdef int64_t w = len(start), i, j, c, k, q, a, b
    cdef _Sets sets
    cdef int32_t *buf = <int32_t *>malloc((max(w, gc.shape[0]) + 1) * sizeof(int32_t))
    cdef int32_t *rows = NULL
    cdef int64_t rows_cap = 0
    cdef int32_t x
    cdef bint is_new
    if buf == NULL:
        raise MemoryError()
    _sets_init(&sets)
    try:
        for j, v in enumerate(sorted(start)):
            buf[j] = <int32_t>v
        _sets_intern(&sets, buf, w, &is_new)
        i = 0
        while i < sets.n:
            _reserve_i32(&rows, &rows_cap, (i + 1) * C)
            a = sets.off[i]
            b = sets.off[i + 1]
            for c in range(C):
                k = 0
                for j in range(a, b):
                    x = gc[sets.pool[j], c]
                    if x >= 0:
                        buf[k] = x
                        k += 1
                if k == 0:
                    rows[i * C + c] = -1
                    continue
                q = _sets_intern(&sets, buf, k, &is_new)
                if is_new and sets.n > max_states:
                    return None
                rows[i * C + c] = <int32_t>q
            i += 1
        pool, offs = _sets_arrays(&sets)
        return pool, offs, _rows_array(rows, sets.n, C)
    finally:
        _sets_free(&sets)
        free(buf)
        free(rows)


def first_seen_rows(const int32_t[:, ::1] m):
    """Per row of ``m`` the number of its value among the distinct rows, numbered in
    the order first met (``stackmask.wfa.reduction.minimize``'s Moore rounds)."""
    cdef int64_t n = m.shape[0], k = m.shape[1], i
    cdef _Sets sets
    cdef bint is_new
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] ov = out
    _sets_init(&sets)
    try:
        for i in range(n):
            ov[i] = _sets_intern(&sets, &m[i, 0], k, &is_new) if k else 0
    finally:
        _sets_free(&sets)
    return out


def bfs_order(const int32_t[:, ::1] trans):
    """The states reachable from state 0, in breadth-first order (a row's targets in
    column order): ``stackmask.wfa.reduction._renumber_bfs``'s order."""
    cdef int64_t n = trans.shape[0], C = trans.shape[1], i = 0, c, m = 0
    cdef int32_t t
    cdef unsigned char *seen
    cdef int64_t *order
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] ov = out
    seen = <unsigned char *>malloc(n)
    if seen == NULL:
        raise MemoryError()
    memset(seen, 0, n)
    order = &ov[0]
    order[0] = 0
    seen[0] = 1
    m = 1
    while i < m:
        for c in range(C):
            t = trans[order[i], c]
            if t >= 0 and not seen[t]:
                seen[t] = 1
                order[m] = t
                m += 1
        i += 1
    free(seen)
    return out[:m].copy()


def coreachable(const int32_t[:, ::1] trans, const unsigned char[::1] accepting):
    """Per state whether it reaches an accepting state (``stackmask.wfa.reduction.trim``)."""
    cdef int64_t n = trans.shape[0], C = trans.shape[1], s, c, e, top = 0, y
    cdef int32_t t
    cdef int64_t *off = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cdef int64_t *fill = <int64_t *>malloc((n + 1) * sizeof(int64_t))
    cdef int32_t *src = NULL
    cdef int32_t *stack = <int32_t *>malloc((n + 1) * sizeof(int32_t))
    alive = np.zeros(n, dtype=np.uint8)
    cdef unsigned char[::1] av = alive
    try:
        if off == NULL or fill == NULL or stack == NULL:
            raise MemoryError()
        for s in range(n + 1):
            off[s] = 0
        for s in range(n):
            for c in range(C):
                t = trans[s, c]
                if t >= 0:
                    off[t + 1] += 1
        for s in range(n):
            off[s + 1] += off[s]
        src = <int32_t *>malloc((off[n] + 1) * sizeof(int32_t))
        if src == NULL:
            raise MemoryError()
        for s in range(n):
            fill[s] = off[s]
        for s in range(n):
            for c in range(C):
                t = trans[s, c]
                if t >= 0:
                    src[fill[t]] = <int32_t>s
                    fill[t] += 1
        for s in range(n):
            if accepting[s]:
                av[s] = 1
                stack[top] = <int32_t>s
                top += 1
        while top:
            top -= 1
            y = stack[top]
            for e in range(off[y], off[y + 1]):
                s = src[e]
                if not av[s]:
                    av[s] = 1
                    stack[top] = <int32_t>s
                    top += 1
    finally:
        free(off); free(fill); free(src); free(stack)
    return alive.view(np.bool_)


def seq_ids(const int32_t[::1] pool, const int64_t[::1] offs, const int32_t[::1] pool2,
            const int64_t[::1] offs2):
    """Sequences numbered by content: ``(ids, found)``, per sequence of ``pool``/``offs``
    (sequence ``i`` is ``pool[offs[i]:offs[i+1]]``) the number of its content in the
    order first met, and per sequence of ``pool2``/``offs2`` the number of the equal
    sequence of the first, or -1."""
    cdef int64_t n = offs.shape[0] - 1, n2 = offs2.shape[0] - 1, i, j, k
    cdef _Sets sets
    cdef bint is_new
    cdef uint64_t h
    ids = np.empty(n, dtype=np.int64)
    found = np.empty(n2, dtype=np.int64)
    cdef int64_t[::1] iv = ids
    cdef int64_t[::1] fv = found
    cdef int32_t zero = 0
    _sets_init(&sets)
    try:
        for i in range(n):
            k = offs[i + 1] - offs[i]
            iv[i] = _sets_intern(&sets, &pool[offs[i]] if k else &zero, k, &is_new)
        for i in range(n2):
            k = offs2[i + 1] - offs2[i]
            fv[i] = _sets_find(&sets, &pool2[offs2[i]] if k else &zero, k)
    finally:
        _sets_free(&sets)
    return ids, found


def preimages(const int32_t[:, ::1] trans):
    """The transitions of ``trans`` (states x classes, -1 none) by target, for
    ``hopcroft_refine``: ``(state_off, ucls, ustart, uend, src)``: for target ``t`` the
    entries ``state_off[t]..state_off[t+1]`` of ``ucls``/``ustart``/``uend`` give, per
    class (ascending), the range of ``src`` holding the states (ascending) that read
    that class into ``t`` (what ``stackmask.wfa.reduction._hopcroft`` gets with a stable sort
    of ``(target, class)`` keys; here two stable counting sorts)."""
    cdef int64_t n = trans.shape[0], C = trans.shape[1], s, c, e, E = 0, i, t, g, prev, n_g
    for s in range(n):
        for c in range(C):
            if trans[s, c] >= 0:
                E += 1
    cdef int64_t *cnt_c = <int64_t *>calloc(C + 1, sizeof(int64_t))
    cdef int64_t *cnt_t = <int64_t *>calloc(n + 1, sizeof(int64_t))
    cdef int64_t *by_c = <int64_t *>malloc((E + 1) * sizeof(int64_t))     # entry = s * C + c
    cdef int64_t *by_t = <int64_t *>malloc((E + 1) * sizeof(int64_t))
    if cnt_c == NULL or cnt_t == NULL or by_c == NULL or by_t == NULL:
        free(cnt_c); free(cnt_t); free(by_c); free(by_t)
        raise MemoryError()
    try:
        # stable by class (entries come in source order), then stable by target
        for s in range(n):
            for c in range(C):
                if trans[s, c] >= 0:
                    cnt_c[c + 1] += 1
        for c in range(C):
            cnt_c[c + 1] += cnt_c[c]
        for s in range(n):
            for c in range(C):
                if trans[s, c] >= 0:
                    by_c[cnt_c[c]] = s * C + c
                    cnt_c[c] += 1
        for i in range(E):
            cnt_t[trans[by_c[i] // C, by_c[i] % C] + 1] += 1
        for t in range(n):
            cnt_t[t + 1] += cnt_t[t]
        for i in range(E):
            e = by_c[i]
            t = trans[e // C, e % C]
            by_t[cnt_t[t]] = e
            cnt_t[t] += 1
        # groups of (target, class)
        n_g = 0
        prev = -1
        for i in range(E):
            e = by_t[i]
            g = <int64_t>trans[e // C, e % C] * C + e % C
            if g != prev:
                n_g += 1
                prev = g
        state_off = np.zeros(n + 1, dtype=np.int64)
        ucls = np.empty(n_g, dtype=np.int64)
        ustart = np.empty(n_g, dtype=np.int64)
        uend = np.empty(n_g, dtype=np.int64)
        src = np.empty(E, dtype=np.int64)
        _fill_groups(trans, by_t, E, C, n, state_off, ucls, ustart, uend, src)
        return state_off, ucls, ustart, uend, src
    finally:
        free(cnt_c); free(cnt_t); free(by_c); free(by_t)


cdef void _fill_groups(const int32_t[:, ::1] trans, int64_t *by_t, int64_t E, int64_t C,
                      int64_t n, int64_t[::1] state_off, int64_t[::1] ucls,
                      int64_t[::1] ustart, int64_t[::1] uend, int64_t[::1] src) noexcept:
    cdef int64_t i, e, g, prev = -1, k = -1, t, last_t = -1, u
    for i in range(E):
        e = by_t[i]
        src[i] = e // C
        t = trans[e // C, e % C]
        g = t * C + e % C
        if g != prev:
            if k >= 0:
                uend[k] = i
            k += 1
            ucls[k] = e % C
            ustart[k] = i
            prev = g
            # groups of targets last_t+1..t start here
            for u in range(last_t + 1, t + 1):
                state_off[u] = k
            last_t = t
    if k >= 0:
        uend[k] = E
    for u in range(last_t + 1, n + 1):
        state_off[u] = k + 1


def run_tokens(const int32_t[::1] table, int64_t n, int64_t s,
               const unsigned char[::1] blob, const int64_t[::1] offsets,
               const int64_t[::1] pos, int64_t skip=0):
    """Per token position ``p`` of ``pos`` (its bytes: ``blob[offsets[p]:offsets[p+1]]``,
    from byte ``skip`` on) the state a run of the lexer DFA reaches from ``s``, in the run
    table's terms (``table[q * 256 + b]``; ``n`` and ``n + 1`` absorbing: a byte led
    nowhere, a byte entered an accepting state): the run stops there
    (``stackmask.compile.terminal.TerminalCompiler``'s token runs)."""
    cdef int64_t m = pos.shape[0], i, a, e, q
    out = np.empty(m, dtype=np.int32)
    cdef int32_t[::1] ov = out
    with nogil:
        for i in range(m):
            a = offsets[pos[i]] + skip
            e = offsets[pos[i] + 1]
            q = s
            while a < e and q < n:
                q = table[q * 256 + blob[a]]
                a += 1
            ov[i] = <int32_t>q
    return out


def stable_order(const int32_t[::1] values, int64_t n_values):
    """``np.argsort(values, kind="stable")`` for values in ``0..n_values-1``, by counting
    (O(len + n_values)): the token groups of a lexer state's runs, one per end state
    (``stackmask.compile.terminal.TerminalCompiler._branches``). Raises ValueError for a
    value out of range."""
    cdef int64_t m = values.shape[0], i, v, total = 0, c
    if n_values < 0:
        raise ValueError("n_values must be >= 0")
    order = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] ov = order
    cdef int64_t *start = <int64_t *>calloc(n_values + 1, sizeof(int64_t))
    if start == NULL:
        raise MemoryError()
    cdef bint bad = False
    with nogil:
        for i in range(m):
            v = values[i]
            if v < 0 or v >= n_values:
                bad = True
                break
            start[v] += 1
        if not bad:
            for v in range(n_values):
                c = start[v]
                start[v] = total
                total += c
            for i in range(m):
                v = values[i]
                ov[start[v]] = i
                start[v] += 1
    free(start)
    if bad:
        raise ValueError("a value out of range")
    return order


def reach_closure(const int32_t[:, ::1] succ, const uint64_t[:, ::1] win):
    """Per state, the union of the bitsets ``win`` of every state reachable by one or more
    transitions (``succ``: states x symbols, -1 for none): Tarjan's strongly connected
    components (iterative), united in the order Tarjan emits them (successors first); a
    component with a cycle also reaches its own states. ``stackmask.lexer.scanner.
    _reachable_winners``'s Python path is the reference. Returns states x words uint64."""
    cdef int64_t n = succ.shape[0], C = succ.shape[1], W = win.shape[1]
    if win.shape[0] != n:
        raise ValueError("succ and win need one row per state")
    out = np.zeros((n, W), dtype=np.uint64)
    if n == 0:
        return out
    comp_reach_arr = np.zeros((n, W), dtype=np.uint64)   # per component (at most n)
    cdef uint64_t[:, ::1] cr = comp_reach_arr
    cdef uint64_t[:, ::1] ov = out
    cdef int64_t *index = <int64_t *>malloc(n * sizeof(int64_t))
    cdef int64_t *low = <int64_t *>malloc(n * sizeof(int64_t))
    cdef int64_t *comp = <int64_t *>malloc(n * sizeof(int64_t))
    cdef int64_t *stack = <int64_t *>malloc(n * sizeof(int64_t))
    cdef int64_t *work_v = <int64_t *>malloc(n * sizeof(int64_t))
    cdef int64_t *work_i = <int64_t *>malloc(n * sizeof(int64_t))
    cdef unsigned char *on_stack = <unsigned char *>calloc(n, 1)
    cdef int64_t counter = 0, sp = 0, wp, root, v, i, w, u, x, c, n_comps = 0, j, first
    cdef bint cyclic
    if (index == NULL or low == NULL or comp == NULL or stack == NULL or work_v == NULL
            or work_i == NULL or on_stack == NULL):
        free(index); free(low); free(comp); free(stack); free(work_v); free(work_i)
        free(on_stack)
        raise MemoryError()
    try:
        for v in range(n):
            index[v] = -1
        for root in range(n):
            if index[root] >= 0:
                continue
            wp = 0
            work_v[0] = root
            work_i[0] = 0
            wp = 1
            index[root] = counter
            low[root] = counter
            counter += 1
            stack[sp] = root
            sp += 1
            on_stack[root] = 1
            while wp:
                v = work_v[wp - 1]
                i = work_i[wp - 1]
                if i < C:
                    work_i[wp - 1] = i + 1
                    w = succ[v, i]
                    if w < 0:
                        continue
                    if index[w] < 0:
                        index[w] = counter
                        low[w] = counter
                        counter += 1
                        stack[sp] = w
                        sp += 1
                        on_stack[w] = 1
                        work_v[wp] = w
                        work_i[wp] = 0
                        wp += 1
                    elif on_stack[w] and index[w] < low[v]:
                        low[v] = index[w]
                    continue
                wp -= 1
                if wp:
                    u = work_v[wp - 1]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    # pop the component; its members are stack[first:sp]
                    first = sp - 1
                    while stack[first] != v:
                        first -= 1
                    c = n_comps
                    n_comps += 1
                    for x in range(first, sp):
                        comp[stack[x]] = c
                        on_stack[stack[x]] = 0
                    cyclic = sp - first > 1
                    for x in range(first, sp):
                        u = stack[x]
                        for i in range(C):
                            w = succ[u, i]
                            if w < 0:
                                continue
                            if comp[w] == c:     # an edge inside (a self loop: a cycle)
                                cyclic = True
                                continue
                            for j in range(W):
                                cr[c, j] |= win[w, j] | cr[comp[w], j]
                    if cyclic:
                        for x in range(first, sp):
                            u = stack[x]
                            for j in range(W):
                                cr[c, j] |= win[u, j]
                    sp = first
        for v in range(n):
            c = comp[v]
            for j in range(W):
                ov[v, j] = cr[c, j]
    finally:
        free(index); free(low); free(comp); free(stack); free(work_v); free(work_i)
        free(on_stack)
    return out
