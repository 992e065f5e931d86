# The masker's walk below a branching GSS node (included by _native.pyx):
# ``Masker.branches`` of stackmask.runtime.masker, compiled. The Python method stays
# the reference (a test compares the weights both find, node for node).


cdef inline object _nslot(object n, type nc, Py_ssize_t off, str name):
    """Slot ``name`` of node ``n`` (at ``off`` for the node class ``nc``), None when unset."""
    cdef PyObject *p
    if type(n) is nc:
        p = _slot(n, off)
        return <object>p if p is not NULL else None
    return getattr(n, name, None)


cdef tuple _link_groups_of(list links, type nc, Py_ssize_t o_state):
    """``masker._link_groups(links)``: ``((state, (node, ...)), ...)`` in the order of
    first appearance."""
    cdef dict by_state = {}
    cdef object n, s, g
    cdef PyObject *p
    cdef Py_ssize_t i
    for i in range(PyList_GET_SIZE(links)):
        n = <object>PyList_GET_ITEM(links, i)
        s = _nslot(n, nc, o_state, "state")
        p = PyDict_GetItem(by_state, s)
        if p is NULL:
            by_state[s] = [n]
        else:
            (<list>p).append(n)
    return tuple([(s, tuple(g)) for s, g in by_state.items()])


cdef inline object _edges_at(object dwa, list trans, Py_ssize_t q):
    """``dwa.trans[q] or dwa.state_edges(q)``."""
    cdef object t
    if q >= PyList_GET_SIZE(trans):
        trans = dwa.trans            # states added by a compile during the walk
    t = trans[q]
    if not t:
        t = dwa.state_edges(q)
    return t


cdef object _branch_walk(MaskPath mp, object q0, object node):
    """``Masker.branches(q0, node)``: the weights met walking every link of the
    branching node ``node`` from automaton state ``q0``, bottom up with an explicit
    stack, each branching node's part memoized on it by state (``walk_memo``, at most
    ``Masker.WALK_MEMO_ENTRIES`` entries, then started over), links grouped by state
    (``link_groups``)."""
    cdef type nc = mp.node_class
    cdef object memo = _nslot(node, nc, mp.o_walk_memo, "walk_memo")
    cdef PyObject *p
    if memo is not None:
        p = PyDict_GetItem(memo, q0)
        if p is not NULL:
            return <object>p
    cdef object dwa = mp.dwa
    cdef object tr = dwa.trans
    if type(tr) is not list:
        return mp.masker.branches(q0, node)
    cdef list trans = <list>tr
    cdef object default = dwa.default, complete = dwa.complete
    cdef Py_ssize_t limit = mp.masker.WALK_MEMO_ENTRIES
    cdef dict done = {}, waiting = {}
    cdef list todo = [(q0, node)]
    cdef list kids
    cdef set outs
    cdef object key, w8, n1, groups, grp, nodes, s, e, w, nd, below, m, r, t1, t3, k, links
    cdef Py_ssize_t q1, q2, q3, i, j
    while PyList_GET_SIZE(todo):
        key = todo.pop()
        p = PyDict_GetItem(waiting, key)
        if p is not NULL:                    # second visit: its parts below are done
            w8 = <object>p
            del waiting[key]
            outs = <set>PyTuple_GET_ITEM(w8, 0)
            kids = <list>PyTuple_GET_ITEM(w8, 1)
            for i in range(PyList_GET_SIZE(kids)):
                outs |= <object>PyDict_GetItem(done, <object>PyList_GET_ITEM(kids, i))
        else:
            if PyDict_GetItem(done, key) is not NULL:
                continue
            q1 = <object>PyTuple_GET_ITEM(key, 0)
            n1 = <object>PyTuple_GET_ITEM(key, 1)
            outs = set()
            kids = []
            groups = _nslot(n1, nc, mp.o_link_groups, "link_groups")
            if groups is None:
                links = _nslot(n1, nc, mp.o_links, "links")
                groups = _link_groups_of(links, nc, mp.o_state)
                n1.link_groups = groups
            for i in range(PyTuple_GET_SIZE(groups)):
                grp = <object>PyTuple_GET_ITEM(groups, i)
                s = <object>PyTuple_GET_ITEM(grp, 0)
                nodes = <object>PyTuple_GET_ITEM(grp, 1)
                t1 = _edges_at(dwa, trans, q1)
                p = PyDict_GetItem(t1, s)
                if p is NULL:
                    e = default[q1] if complete[q1] else dwa.edge(q1, s)
                    if e is None:
                        continue
                else:
                    e = <object>p
                q2 = <object>PyTuple_GET_ITEM(e, 0)
                w = <object>PyTuple_GET_ITEM(e, 1)
                if w:
                    outs.add(w)
                if q2 < 0:
                    continue
                for j in range(PyTuple_GET_SIZE(nodes)):  # one path per link, to the next branching node
                    nd = <object>PyTuple_GET_ITEM(nodes, j)
                    q3 = q2
                    while True:
                        below = _nslot(nd, nc, mp.o_below, "below")
                        if below is None:        # the root, or several links
                            if _nslot(nd, nc, mp.o_links, "links"):
                                m = _nslot(nd, nc, mp.o_walk_memo, "walk_memo")
                                p = NULL if m is None else PyDict_GetItem(m, q3)
                                if p is not NULL:
                                    outs |= <object>p
                                else:
                                    kids.append((q3, nd))
                            break
                        nd = below
                        s = _nslot(nd, nc, mp.o_state, "state")
                        t3 = _edges_at(dwa, trans, q3)
                        p = PyDict_GetItem(t3, s)
                        if p is NULL:
                            e = default[q3] if complete[q3] else dwa.edge(q3, s)
                            if e is None:
                                break
                        else:
                            e = <object>p
                        q3 = <object>PyTuple_GET_ITEM(e, 0)
                        w = <object>PyTuple_GET_ITEM(e, 1)
                        if w:
                            outs.add(w)
                        if q3 < 0:
                            break
            if PyList_GET_SIZE(kids):
                waiting[key] = (outs, kids)
                todo.append(key)
                for i in range(PyList_GET_SIZE(kids)):
                    k = <object>PyList_GET_ITEM(kids, i)
                    if PyDict_GetItem(done, k) is NULL:
                        todo.append(k)
                continue
        r = frozenset(outs)
        done[key] = r
        n1 = <object>PyTuple_GET_ITEM(key, 1)
        m = _nslot(n1, nc, mp.o_walk_memo, "walk_memo")
        if m is None or len(m) >= limit:
            m = {}
            n1.walk_memo = m
        m[<object>PyTuple_GET_ITEM(key, 0)] = r
    return done[(q0, node)]
