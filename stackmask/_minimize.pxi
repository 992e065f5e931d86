# Included by _native.pyx: minimization of the Parser DWA. Python reference:
# compile.dwa_minimize.minimize (the same classes, numbering and edges).

from cpython.dict cimport PyDict_Next, PyDict_Size


cdef struct _Edge:
    int32_t sym, cls, wid


cdef int _cmp_edge(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const _Edge *>a).sym
    cdef int32_t y = (<const _Edge *>b).sym
    return (x > y) - (x < y)


cdef object _shared_pair(_Map *pairs, list shared, int32_t d, int32_t w):
    """The pair ``(d, w)`` (untracked, :func:`_int_pair`), one tuple per distinct pair
    (``pairs``: key -> index in ``shared``): Java's 5.9 million edges hold 0.7 million."""
    cdef int64_t key, i
    if d < -1 or w < 0:
        return _int_pair(d, w)
    key = (<int64_t>(d + 1) << 32) | w
    i = _map_get(pairs, key)
    if i == _ABSENT:
        e = _int_pair(d, w)
        _map_set(pairs, key, len(shared))
        shared.append(e)
        return e
    return <object>PyList_GET_ITEM(shared, i)


def minimize_edges(list trans, list default, list complete, bint consume=False):
    """:func:`stackmask.compile.dwa_minimize.minimize`'s classes and edges (its
    reference), over the automaton's lists (every ``trans`` entry a dict): states
    bottom up over a topological order, each complete one classed by its signature
    (its default edge and the explicit edges that differ from it, targets replaced by
    their classes); a state that can give nothing is dead (-1); a state not complete
    is a class of its own. Classes are numbered in the order of their lowest state.
    Returns ``(new, reps, trans2, default2)``: ``new`` each old state's new one (-1:
    dead), ``reps`` each new state's lowest old state, its edges and default edge
    (equal pairs share a tuple); or None for a cyclic automaton. ``consume``: once the
    automaton is known to be acyclic, ``trans``'s entries are set to None (the caller
    replaces them), so that the old edges are freed before the new ones are made."""
    cdef Py_ssize_t n = len(trans), q, pos, i, j, k, m, top, total = 0
    if len(default) != n or len(complete) != n:
        raise ValueError("automaton lists of different lengths")
    for q in range(n):
        if type(trans[q]) is not dict:
            raise TypeError("every state's edges must be a dict (see ParserDWA.materialize)")
        total += PyDict_Size(trans[q])
    cdef int64_t[::1] off = np.zeros(n + 1, dtype=np.int64)
    cdef int32_t[::1] sym = np.empty(total, dtype=np.int32)
    cdef int32_t[::1] dst = np.empty(total, dtype=np.int32)
    cdef int32_t[::1] wid = np.empty(total, dtype=np.int32)
    cdef int32_t[::1] ddst = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] dwid = np.zeros(n, dtype=np.int32)
    cdef unsigned char[::1] has_def = np.zeros(n, dtype=np.uint8)
    cdef unsigned char[::1] done = np.zeros(n, dtype=np.uint8)
    cdef PyObject *pk
    cdef PyObject *pv
    cdef object t, e
    k = 0
    for q in range(n):
        t = trans[q]
        pos = 0
        while PyDict_Next(t, &pos, &pk, &pv):
            sym[k] = <object>pk
            dst[k] = <object>PyTuple_GET_ITEM(<object>pv, 0)
            wid[k] = <object>PyTuple_GET_ITEM(<object>pv, 1)
            k += 1
        off[q + 1] = k
        e = default[q]
        if e is not None:
            has_def[q] = 1
            ddst[q] = e[0]
            dwid[q] = e[1]
        done[q] = bool(complete[q])

    # a topological order (DFS post-order: a state after every state it leads to)
    cdef unsigned char[::1] color = np.zeros(n, dtype=np.uint8)     # 0 new, 1 open, 2 done
    cdef int64_t[::1] cursor = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] stack = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] post = np.empty(n, dtype=np.int64)
    cdef Py_ssize_t n_post = 0, node, nxt
    for q in range(n):
        if color[q]:
            continue
        color[q] = 1
        stack[0] = q
        cursor[q] = off[q]
        top = 1
        while top:
            node = stack[top - 1]
            nxt = -1
            while cursor[node] <= off[node + 1]:
                i = cursor[node]
                cursor[node] += 1
                if i < off[node + 1]:
                    m = dst[i]
                elif has_def[node]:
                    m = ddst[node]
                else:
                    m = -1
                if m < 0:
                    continue
                if m >= n:
                    raise ValueError("an edge to a state that does not exist")
                if color[m] == 1:
                    return None                     # a cycle
                if color[m] == 0:
                    nxt = m
                    break
            if nxt >= 0:
                color[nxt] = 1
                cursor[nxt] = off[nxt]
                stack[top] = nxt
                top += 1
            else:
                color[node] = 2
                post[n_post] = node
                n_post += 1
                top -= 1

    if consume:
        for q in range(n):
            trans[q] = None

    # classes, bottom up
    cdef int32_t[::1] cls = np.full(n, -1, dtype=np.int32)
    cdef _Sets sigs
    cdef _Buf cls_sig, cls_min, sig_cls       # class -> signature id (-1: a state not
    cdef _Edge *ed = NULL                     # complete) / lowest state; signature -> class
    cdef int32_t *buf = NULL
    cdef int64_t n_ed, dc, dw, ec, ew, sid, c, n_cls, r
    cdef bint hd, is_new
    cdef int64_t max_deg = 0
    cdef int64_t[::1] rep_of, new_of, nv
    cdef list reps, trans2, default2
    cdef _Map pairs
    cdef list shared = []
    for q in range(n):
        max_deg = max(max_deg, off[q + 1] - off[q])
    _sets_init(&sigs)
    _map_init(&pairs, 1024)
    cls_sig.a = cls_min.a = sig_cls.a = NULL
    cls_sig.n = cls_min.n = sig_cls.n = cls_sig.cap = cls_min.cap = sig_cls.cap = 0
    try:
        ed = <_Edge *>malloc(max(max_deg, 1) * sizeof(_Edge))
        buf = <int32_t *>malloc((3 + 3 * max(max_deg, 1)) * sizeof(int32_t))
        if ed == NULL or buf == NULL:
            raise MemoryError()
        for i in range(n_post):
            q = post[i]
            if not done[q]:
                cls[q] = cls_sig.n
                _buf_push(&cls_sig, -1)
                _buf_push(&cls_min, q)
                continue
            hd = has_def[q]
            dc = dw = 0
            if hd:
                dc = cls[ddst[q]] if ddst[q] >= 0 else -1
                dw = dwid[q]
                if dc == -1 and dw == 0:        # the default edge stops with nothing
                    hd = False
            n_ed = 0
            for k in range(off[q], off[q + 1]):
                ec = cls[dst[k]] if dst[k] >= 0 else -1
                ew = wid[k]
                if hd and ec == dc and ew == dw:
                    continue                    # what the default edge does
                if not hd and ec == -1 and ew == 0:
                    continue                    # stops with nothing: as no edge
                ed[n_ed].sym = sym[k]
                ed[n_ed].cls = <int32_t>ec
                ed[n_ed].wid = <int32_t>ew
                n_ed += 1
            if not hd and n_ed == 0:
                continue                        # dead: stays -1
            qsort(ed, n_ed, sizeof(_Edge), _cmp_edge)
            buf[0] = hd
            buf[1] = <int32_t>(dc if hd else 0)
            buf[2] = <int32_t>(dw if hd else 0)
            for j in range(n_ed):
                buf[3 + 3 * j] = ed[j].sym
                buf[4 + 3 * j] = ed[j].cls
                buf[5 + 3 * j] = ed[j].wid
            sid = _sets_intern(&sigs, buf, 3 + 3 * n_ed, &is_new)
            if is_new:
                _buf_push(&sig_cls, cls_sig.n)
                _buf_push(&cls_sig, sid)
                _buf_push(&cls_min, q)
            c = sig_cls.a[sid]
            cls[q] = <int32_t>c
            if q < cls_min.a[c]:
                cls_min.a[c] = q

        # classes numbered in the order of their lowest state
        n_cls = cls_sig.n
        rep_of = np.full(n, -1, dtype=np.int64)
        new_of = np.empty(max(n_cls, 1), dtype=np.int64)
        new_arr = np.full(n, -1, dtype=np.int64)
        nv = new_arr
        for c in range(n_cls):
            rep_of[cls_min.a[c]] = c
        reps = []
        r = 0
        for q in range(n):
            c = rep_of[q]
            if c >= 0:
                new_of[c] = r
                reps.append(q)
                r += 1
        for q in range(n):
            if cls[q] >= 0:
                nv[q] = new_of[cls[q]]
        trans2 = []
        default2 = []
        for q in reps:
            c = cls[q]
            sid = cls_sig.a[c]
            if sid < 0:                          # not complete: its edges as they are
                if has_def[q]:
                    m = ddst[q]
                    default2.append(_shared_pair(&pairs, shared,
                                                 <int32_t>(nv[m] if m >= 0 else m), dwid[q]))
                else:
                    default2.append(None)
                t = {}
                for k in range(off[q], off[q + 1]):
                    m = dst[k]
                    t[sym[k]] = _shared_pair(&pairs, shared,
                                             <int32_t>(nv[m] if m >= 0 else m), wid[k])
            else:                                # the signature: the normalized edges
                j = sigs.off[sid]
                if sigs.pool[j]:
                    m = sigs.pool[j + 1]
                    default2.append(_shared_pair(&pairs, shared,
                                                 <int32_t>(new_of[m] if m >= 0 else -1),
                                                 sigs.pool[j + 2]))
                else:
                    default2.append(None)
                t = {}
                for k in range(j + 3, sigs.off[sid + 1], 3):
                    m = sigs.pool[k + 1]
                    t[sigs.pool[k]] = _shared_pair(&pairs, shared,
                                                   <int32_t>(new_of[m] if m >= 0 else -1),
                                                   sigs.pool[k + 2])
            trans2.append(t)
        return new_arr.tolist(), reps, trans2, default2
    finally:
        free(ed)
        free(buf)
        free(cls_sig.a)
        free(cls_min.a)
        free(sig_cls.a)
        _sets_free(&sigs)
        _map_free(&pairs)
