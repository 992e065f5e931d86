# The GLR step over the GSS (included by _native.pyx): ``GLR.reduce_all``,
# ``GLR.shift`` and ``GLR.can_shift`` of stackmask.glr.gss, compiled. The Python
# methods stay the reference.


cdef inline bint _has_link(list links, object node):
    """``any(x is node for x in links)``."""
    cdef Py_ssize_t i
    for i in range(PyList_GET_SIZE(links)):
        if PyList_GET_ITEM(links, i) == <PyObject*>node:
            return True
    return False


cdef class GLRStep:
    """``GLR.reduce_all(starts, term)``, ``GLR.shift(starts, term)`` and
    ``GLR.can_shift(node, term)`` over the same tables, building the same nodes in the
    same order (a test compares the graphs they build on random texts); ``max_work`` and the work counted are the reference's, and
    ``too_much(spent, nodes)`` raises its ``LimitExceeded``. ``tables`` is
    ``GLR.shift1_tables()``."""

    cdef tuple reduce, shift_t, rlen, rlhs, goto, node_layout
    cdef type node_class
    cdef Py_ssize_t limit, o_state, o_links, o_shift_memo
    cdef bint limited
    cdef object too_much

    def __init__(self, tuple tables, max_work, too_much):
        (self.reduce, self.shift_t, self.rlen, self.rlhs, self.goto, self.node_class,
         _) = tables
        if self.node_class.__new__ is not object.__new__ or "__slots__" not in self.node_class.__dict__:
            raise TypeError(f"{self.node_class.__name__}: the compiled GLR step builds "
                            "instances of a slotted class without __new__ of its own")
        self.node_layout = _layout(self.node_class, ("state", "links", "below"))
        self.o_state = self.node_layout[0]
        self.o_links = self.node_layout[1]
        self.o_shift_memo = _slot_offset(self.node_class, "shift_memo")
        self.limited = max_work is not None
        self.limit = max_work if max_work is not None else 0
        self.too_much = too_much

    cdef inline object _state(self, object n):
        cdef PyObject *p = _slot(n, self.o_state) if type(n) is self.node_class else NULL
        return <object>p if p is not NULL else n.state

    cdef inline list _links(self, object n):
        cdef PyObject *p = _slot(n, self.o_links) if type(n) is self.node_class else NULL
        return <list>p if p is not NULL else n.links

    cpdef list reduce_all(self, starts, object term):
        """Every node reachable from ``starts`` by reductions on lookahead ``term``
        (the starts included): ``GLR.reduce_all``."""
        cdef tuple reduce = self.reduce, goto = self.goto, rlen = self.rlen, rlhs = self.rlhs
        cdef list nodes = list(starts)
        cdef dict created = {}
        cdef list work = []
        cdef list level, nxt, links
        cdef set seen
        cdef object n, via, base, g, m, lhs, p_node, red, ro
        cdef intptr_t key
        cdef PyObject *p
        cdef Py_ssize_t i, j, k, r, length, spent = 0, cost
        for i in range(PyList_GET_SIZE(nodes)):
            n = <object>PyList_GET_ITEM(nodes, i)
            if PyDict_GetItem(<object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>self._state(n)), term) is not NULL:
                work.append((n, None))
        while PyList_GET_SIZE(work):
            n, via = work.pop()
            red = <object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>self._state(n))
            p = PyDict_GetItem(red, term)
            if p is NULL:
                continue
            for ro in <object>p:
                r = ro
                lhs = <object>PyTuple_GET_ITEM(rlhs, r)
                length = <object>PyTuple_GET_ITEM(rlen, r)
                # _bases: the distinct nodes ``length`` links down (the first link ``via``)
                level = [via] if via is not None else self._links(n)
                cost = PyList_GET_SIZE(level)
                for k in range(length - 1):
                    nxt = []
                    seen = None
                    for i in range(PyList_GET_SIZE(level)):
                        links = self._links(<object>PyList_GET_ITEM(level, i))
                        cost += PyList_GET_SIZE(links)
                        for j in range(PyList_GET_SIZE(links)):
                            p_node = <object>PyList_GET_ITEM(links, j)
                            if seen is None:
                                if not _has_link(nxt, p_node):
                                    nxt.append(p_node)
                                    if PyList_GET_SIZE(nxt) > 32:    # large levels: a set
                                        seen = {<intptr_t><PyObject*>x for x in nxt}
                            else:
                                key = <intptr_t><PyObject*>p_node
                                if key not in seen:
                                    seen.add(key)
                                    nxt.append(p_node)
                    level = nxt
                spent += cost
                i = 0
                while i < PyList_GET_SIZE(level):       # (the list may grow: as Python's loop)
                    base = <object>PyList_GET_ITEM(level, i)
                    i += 1
                    g = (<object>PyTuple_GET_ITEM(goto, <Py_ssize_t>self._state(base)))[lhs]
                    p = PyDict_GetItem(created, g)
                    if p is NULL:
                        m = _new_node(self.node_class, self.node_layout, g, base)
                        created[g] = m
                        nodes.append(m)
                        if PyDict_GetItem(<object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>g), term) is not NULL:
                            work.append((m, None))
                    else:
                        m = <object>p
                        links = self._links(m)
                        spent += PyList_GET_SIZE(links)
                        if not _has_link(links, base):
                            links.append(base)
                            m.below = None
                            if PyDict_GetItem(<object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>g), term) is not NULL:
                                work.append((m, base))
            if self.limited and spent > self.limit:
                self.too_much(spent, len(nodes))
        return nodes

    cpdef list shift(self, starts, object term):
        """Reduce on lookahead ``term`` then shift it: the new top nodes, one per LR
        state (``GLR.shift``)."""
        cdef tuple shift_t = self.shift_t
        cdef dict out = {}
        cdef list reduced = self.reduce_all(starts, term)
        cdef list links
        cdef object n, s2, m
        cdef PyObject *p
        cdef Py_ssize_t i
        for i in range(PyList_GET_SIZE(reduced)):
            n = <object>PyList_GET_ITEM(reduced, i)
            p = PyDict_GetItem(<object>PyTuple_GET_ITEM(shift_t, <Py_ssize_t>self._state(n)), term)
            if p is NULL:
                continue
            s2 = <object>p
            p = PyDict_GetItem(out, s2)
            if p is NULL:
                out[s2] = _new_node(self.node_class, self.node_layout, s2, n)
            else:
                m = <object>p
                links = self._links(m)
                if not _has_link(links, n):
                    links.append(n)
                    m.below = None
        return list(out.values())

    cpdef bint can_shift(self, object node, object term) except -1:
        """Whether ``term`` can be shifted after reductions (``GLR.can_shift``: memoized in
        the node's ``shift_memo``)."""
        cdef PyObject *p
        if PyDict_GetItem(<object>PyTuple_GET_ITEM(self.shift_t, <Py_ssize_t>self._state(node)),
                          term) is not NULL:
            return True
        cdef object memo
        if type(node) is self.node_class:
            p = _slot(node, self.o_shift_memo)
            memo = <object>p if p is not NULL else None
        else:
            memo = node.shift_memo
        if memo is None:
            memo = {}
            node.shift_memo = memo
        p = PyDict_GetItem(memo, term)
        if p is not NULL:
            return <object>p is True
        cdef bint v = False
        cdef list nodes = self.reduce_all((node,), term)
        cdef Py_ssize_t i
        for i in range(PyList_GET_SIZE(nodes)):
            if PyDict_GetItem(<object>PyTuple_GET_ITEM(self.shift_t, <Py_ssize_t>self._state(
                    <object>PyList_GET_ITEM(nodes, i))), term) is not NULL:
                v = True
                break
        memo[term] = v
        return v
