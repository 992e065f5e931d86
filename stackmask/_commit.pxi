# The commit's common path (included by _native.pyx): GSS nodes and states built by slot
# offset, ``GLR.shift1`` inlined (``_shift1``), the lexing paths of a (configuration,
# token) memo miss (``LexPaths``) and ``Constraint._commit_fast``/``_commit_paths``
# (``CommitPath``). The Python methods stay the reference.

cdef extern from "Python.h":
    # a new reference: an instance of a class without __new__ of its own, its slots unset
    # (what object.__new__(cls) gives, without the call)
    object PyType_GenericAlloc(type cls, Py_ssize_t nitems)


cdef inline void _init_slot(object o, Py_ssize_t offset, object value):
    """Set the (unset) slot at ``offset`` of a fresh instance ``o`` to ``value``."""
    Py_INCREF(value)
    (<PyObject**>((<char*><PyObject*>o) + offset))[0] = <PyObject*>value


cdef tuple _layout(type cls, tuple names):
    """``(offsets of names..., ((offset, value), ...) of cls.FIXED_SLOTS)``: how
    :func:`_new_node` and :func:`_new_state` fill an instance's slots."""
    return tuple([_slot_offset(cls, name) for name in names]) + (
        tuple([(_slot_offset(cls, name), value) for name, value in cls.FIXED_SLOTS]),)


cdef inline object _new_node(type cls, tuple layout, object state, object below):
    """``cls(state, [below])`` without calling ``__init__`` (:func:`_new_node_links`)."""
    return _new_node_links(cls, layout, state, [below])


cdef inline object _new_node_links(type cls, tuple layout, object state, list links):
    """``cls(state, links)`` without calling ``__init__``: the slots ``state``,
    ``links``, ``below`` (the only link, or None) and ``Node.FIXED_SLOTS`` set by offset
    (``layout``)."""
    cdef object n = PyType_GenericAlloc(cls, 0)
    _init_slot(n, layout[0], state)
    _init_slot(n, layout[1], links)
    _init_slot(n, layout[2], <object>PyList_GET_ITEM(links, 0) if PyList_GET_SIZE(links) == 1
               else None)
    for off, value in <tuple>PyTuple_GET_ITEM(layout, 3):
        _init_slot(n, off, value)
    return n


cdef inline object _new_state(type cls, tuple layout, tuple heads):
    """``cls(heads)`` without calling ``__init__``: ``heads`` and ``State.FIXED_SLOTS``
    set by offset (``layout``)."""
    cdef object st = PyType_GenericAlloc(cls, 0)
    _init_slot(st, layout[0], heads)
    for off, value in <tuple>PyTuple_GET_ITEM(layout, 1):
        _init_slot(st, off, value)
    return st


cdef object _shift1(object node, object term, tuple reduce, tuple shift, tuple rlen,
                    tuple rlhs, tuple goto, type node_class, tuple node_layout,
                    object ambiguous):
    cdef object n = node
    cdef object st, rs, s2, base, links
    cdef Py_ssize_t r, i, length
    cdef Py_ssize_t o_state = node_layout[0], o_links = node_layout[1]
    cdef PyObject *p
    cdef dict sh
    while True:
        p = _slot(n, o_state) if type(n) is node_class else NULL
        st = <object>p if p is not NULL else n.state
        p = PyDict_GetItem(<object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>st), term)
        sh = <dict>PyTuple_GET_ITEM(shift, <Py_ssize_t>st)
        if p is NULL or not <object>p:
            p = PyDict_GetItem(sh, term)
            if p is NULL:
                return None
            return _new_node(node_class, node_layout, <object>p, n)
        rs = <object>p
        if len(rs) != 1 or PyDict_GetItem(sh, term) is not NULL:
            return ambiguous
        r = rs[0]
        base = n
        length = <object>PyTuple_GET_ITEM(rlen, r)
        for i in range(length):
            p = _slot(base, o_links) if type(base) is node_class else NULL
            links = <object>p if p is not NULL else base.links
            if PyList_GET_SIZE(links) != 1:
                return ambiguous
            base = <object>PyList_GET_ITEM(links, 0)
        p = _slot(base, o_state) if type(base) is node_class else NULL
        s2 = <object>p if p is not NULL else base.state
        n = _new_node(node_class, node_layout,
                      (<object>PyTuple_GET_ITEM(goto, <Py_ssize_t>s2))[
                          <object>PyTuple_GET_ITEM(rlhs, r)], base)


cdef class LexPaths:
    """``Constraint._lex_paths(cfg, data)``: every way the scanner reads ``data`` from
    configuration ``cfg``, as ``((terminals, end config), ...)`` (ignored lexemes
    dropped), ``()`` when every way dies, None past ``max_paths``; the same sets built
    in the same order. ``steps`` is the scanner's step memo (``Generations``: ``cur``
    is read, ``step(cid, byte)`` fills it on a miss)."""

    cdef object steps, step, ignore
    cdef Py_ssize_t max_paths

    def __init__(self, steps, step, ignore, Py_ssize_t max_paths):
        self.steps = steps
        self.step = step
        self.ignore = ignore
        self.max_paths = max_paths

    def __call__(self, cfg, bytes data):
        cdef set cur = {((), cfg)}
        cdef set nxt
        cdef object memo, outs, terms, c, emit, nc, out, t
        cdef PyObject *p
        cdef Py_ssize_t i, n = len(data)
        cdef long b
        cdef const unsigned char *raw = data
        for i in range(n):
            b = raw[i]
            memo = self.steps.cur
            nxt = set()
            for path in cur:
                terms = <object>PyTuple_GET_ITEM(path, 0)
                c = <object>PyTuple_GET_ITEM(path, 1)
                p = PyDict_GetItem(memo, (c << 8) | b)
                outs = <object>p if p is not NULL else self.step(c, b)
                for out in outs:
                    emit = <object>PyTuple_GET_ITEM(out, 0)
                    nc = <object>PyTuple_GET_ITEM(out, 1)
                    if emit is None:
                        nxt.add((terms, nc))
                    else:
                        for t in emit:
                            nxt.add((terms if t == self.ignore else terms + (t,), nc))
            if not nxt:
                return ()
            if len(nxt) > self.max_paths:
                return None
            cur = nxt
        return tuple(cur)


cdef class CommitPath:
    """``Constraint.commit``'s common path: a text token (not EOS, not special, in
    range, given as an int) on an unfinished state with few heads, committed along
    each head's memoized lexing paths with deterministic LR steps
    (``Constraint._commit_fast`` with ``GLR.shift1`` inlined); where the parse branches
    (an LR conflict, a reduction through a node with several links) the token goes to
    GLR along the paths (``Constraint._commit_paths``, with ``glr_step``, the
    ``GLRStep`` of the constraint's ``GLR``). Anything else goes
    to ``checked_commit`` (the constraint's own ``commit``: checks, EOS, special
    tokens, errors) or, where the fast path gives up (a path the memo does not
    hold, too many lexing paths, no viable head),
    to ``general(heads, token_id, data)``, the byte-by-byte GLR loop.

    ``paths_memo`` is the ``Generations`` memo of lexing paths, filled on a miss by
    ``lex_paths(cfg, data)``; ``requirements`` maps configurations to their
    requirement, ``true_req`` meaning "viable at any stack", and ``viable(head)``
    decides the others; ``glr_tables`` is ``GLR.shift1_tables()``."""

    cdef object paths_memo, lex_paths, viable, requirements, true_req
    cdef object ambiguous
    cdef type state_class, node_class
    cdef tuple tokens
    cdef object eos, special_terminals, special_ids, checked_commit, general
    cdef GLRStep glr_step
    cdef tuple reduce, shift, rlen, rlhs, goto, node_layout, state_layout
    cdef Py_ssize_t vsize, fast_heads

    def __init__(self, paths_memo, Py_ssize_t vsize, lex_paths, viable, object requirements,
                 true_req, tuple glr_tables, state_class, Py_ssize_t fast_heads,
                 tuple tokens, eos, special_terminals, special_ids, checked_commit, general,
                 GLRStep glr_step):
        self.paths_memo = paths_memo
        self.vsize = vsize
        self.lex_paths = lex_paths
        self.viable = viable
        self.requirements = requirements
        self.true_req = true_req
        (self.reduce, self.shift, self.rlen, self.rlhs, self.goto, self.node_class,
         self.ambiguous) = glr_tables
        for cls in (self.node_class, state_class):    # built without __init__ or __new__
            if cls.__new__ is not object.__new__ or "__slots__" not in cls.__dict__:
                raise TypeError(f"{cls.__name__}: the compiled commit builds instances of "
                                "slotted classes without __new__ of their own")
        self.node_layout = _layout(self.node_class, ("state", "links", "below"))
        self.state_class = state_class
        self.state_layout = _layout(state_class, ("heads",))
        self.fast_heads = fast_heads
        self.tokens = tokens
        self.eos = eos
        self.special_terminals = special_terminals
        self.special_ids = special_ids
        self.checked_commit = checked_commit
        self.general = general
        self.glr_step = glr_step

    def commit(self, state, token_id):
        """``Constraint.commit(state, token_id)``."""
        if type(token_id) is not int or type(state) is not self.state_class:
            return self.checked_commit(state, token_id)
        cdef Py_ssize_t t
        try:
            t = token_id
        except OverflowError:
            return self.checked_commit(state, token_id)
        if t < 0 or t >= self.vsize or state.finished or token_id in self.eos \
                or token_id in self.special_terminals or token_id in self.special_ids:
            return self.checked_commit(state, token_id)
        cdef tuple tokens = self.tokens
        if t >= PyTuple_GET_SIZE(tokens):
            return self.checked_commit(state, token_id)
        cdef object data = <object>PyTuple_GET_ITEM(tokens, t)
        if type(data) is not bytes or not data:
            return self.checked_commit(state, token_id)
        cdef object heads = state.heads
        cdef object new
        if type(heads) is not tuple:
            return self.checked_commit(state, token_id)
        if PyTuple_GET_SIZE(heads) <= self.fast_heads:
            new = self.commit_fast(heads, t, data)
            if new is not None:
                return new
        return self.general(heads, t, data)

    cdef int _can_shift(self, object node, object term):
        """``GLR.can_shift(node, term)`` where the reductions on ``term`` are deterministic
        (one rule at a time, through nodes with one link): 1 or 0, simulated on a list of
        pushed states without building nodes; -1 where they are not (a conflict, a node
        with several links, the bottom): ``GLR.can_shift`` then decides."""
        cdef tuple shift = self.shift, reduce = self.reduce, rlen = self.rlen
        cdef tuple rlhs = self.rlhs, goto = self.goto
        cdef list pushed = []             # states pushed above ``base`` (the top first popped)
        cdef object base = node
        cdef object cur = node.state
        cdef object rs, links, exposed
        cdef PyObject *p
        cdef Py_ssize_t r, n, k, steps = 0
        while True:
            if PyDict_GetItem(<object>PyTuple_GET_ITEM(shift, <Py_ssize_t>cur), term) is not NULL:
                return 1
            p = PyDict_GetItem(<object>PyTuple_GET_ITEM(reduce, <Py_ssize_t>cur), term)
            if p is NULL or not <object>p:
                return 0
            rs = <object>p
            if len(rs) != 1:
                return -1
            r = rs[0]
            n = <object>PyTuple_GET_ITEM(rlen, r)
            k = PyList_GET_SIZE(pushed)
            if n <= k:
                if n:
                    del pushed[k - n:]
            else:
                n -= k
                del pushed[:]
                while n:
                    links = base.links
                    if PyList_GET_SIZE(links) != 1:
                        return -1
                    base = <object>PyList_GET_ITEM(links, 0)
                    n -= 1
            k = PyList_GET_SIZE(pushed)
            exposed = <object>PyList_GET_ITEM(pushed, k - 1) if k else base.state
            cur = (<object>PyTuple_GET_ITEM(goto, <Py_ssize_t>exposed))[
                <object>PyTuple_GET_ITEM(rlhs, r)]
            pushed.append(cur)
            steps += 1
            if steps > 1000000:               # (the normal form has no reduction cycle)
                return -1

    cdef int _viable_here(self, object node, object cfg) except -2:
        """``Constraint.viable((node, cfg))`` where it needs nothing but the stack: 1 where
        the configuration's requirement is "always" or one of the terminals it may become
        can be shifted after reductions (deterministic ones simulated, :meth:`_can_shift`;
        others by ``GLRStep.can_shift``; both kept in ``node.shift_memo`` as
        ``GLR.can_shift`` keeps it), 0 where none can and the requirement asks nothing
        else, -1 for "ask ``viable``" (the end of the text, special tokens, a
        configuration without a known requirement)."""
        cdef PyObject *p = PyDict_GetItem(self.requirements, cfg)
        if p is NULL:
            return -1
        cdef object req = <object>p
        if req is self.true_req or (type(req) is str and req == self.true_req):
            return 1
        if type(req) is not tuple or PyTuple_GET_SIZE(req) < 2:
            return -1
        cdef object sh = <object>PyTuple_GET_ITEM(self.shift, <Py_ssize_t>node.state)
        cdef object terms = <object>PyTuple_GET_ITEM(req, 0)
        for t in terms:
            if PyDict_GetItem(sh, t) is not NULL:
                return 1
        cdef object memo = node.shift_memo
        cdef int c
        for t in terms:
            if memo is not None:
                p = PyDict_GetItem(memo, t)
                if p is not NULL:
                    if <object>p:
                        return 1
                    continue
            c = self._can_shift(node, t)
            if c < 0:
                if self.glr_step.can_shift(node, t):
                    return 1
                memo = node.shift_memo
                continue
            if memo is None:
                memo = node.shift_memo = {}
            memo[t] = c == 1
            if c:
                return 1
        if PyTuple_GET_SIZE(req) == 2 and not <object>PyTuple_GET_ITEM(req, 1):
            return 0
        return -1

    cdef inline bint _viable(self, object n, object ncfg) except -1:
        """``Constraint.viable((n, ncfg))``."""
        cdef int v = self._viable_here(n, ncfg)
        if v >= 0:
            return v
        return bool(self.viable((n, ncfg)))

    cdef list _merge(self, list heads):
        """``merge_heads(heads)`` (``runtime.constraint._merge_heads``): heads of equal
        (LR state, config) become one new node linking to all their nodes' links (each
        once, in order of appearance); the nodes themselves stay as they are."""
        cdef dict groups = {}
        cdef object head, n, key, st, cfg, m, g
        cdef list nodes, links, out
        cdef PyObject *p
        cdef Py_ssize_t i, j, k, o_state = self.node_layout[0], o_links = self.node_layout[1]
        cdef type nc = self.node_class
        for i in range(PyList_GET_SIZE(heads)):
            head = <object>PyList_GET_ITEM(heads, i)
            n = <object>PyTuple_GET_ITEM(head, 0)
            key = (_nslot(n, nc, o_state, "state"), <object>PyTuple_GET_ITEM(head, 1))
            p = PyDict_GetItem(groups, key)
            if p is NULL:
                groups[key] = [n]
            else:
                (<list>p).append(n)
        if PyDict_Size(groups) == PyList_GET_SIZE(heads):
            return heads
        out = []
        for key, g in groups.items():
            nodes = <list>g
            st = <object>PyTuple_GET_ITEM(key, 0)
            cfg = <object>PyTuple_GET_ITEM(key, 1)
            if PyList_GET_SIZE(nodes) == 1:
                out.append((<object>PyList_GET_ITEM(nodes, 0), cfg))
                continue
            links = []
            for j in range(PyList_GET_SIZE(nodes)):
                g = _nslot(<object>PyList_GET_ITEM(nodes, j), nc, o_links, "links")
                for k in range(PyList_GET_SIZE(g)):
                    m = <object>PyList_GET_ITEM(g, k)
                    if not _has_link(links, m):
                        links.append(m)
            out.append((_new_node_links(nc, self.node_layout, st, links), cfg))
        return out

    cdef object _state_of(self, list out):
        """The state of the new heads ``out`` (merged), None when there are none."""
        if not out:
            return None
        if len(out) > 1:
            out = self._merge(out)
        return _new_state(self.state_class, self.state_layout, tuple(out))

    cdef object _commit_paths(self, tuple heads, list every):
        """``Constraint._commit_paths(heads, every)``: the heads' nodes grouped by the
        lexing paths they take, each group shifted terminal by terminal with GLR."""
        cdef dict groups = {}
        cdef dict g
        cdef list out = [], nodes
        cdef object head, node, paths, path, terms, ncfg, n, t
        cdef PyObject *p
        cdef Py_ssize_t i, j, k
        for i in range(PyTuple_GET_SIZE(heads)):
            node = <object>PyTuple_GET_ITEM(<object>PyTuple_GET_ITEM(heads, i), 0)
            paths = <object>PyList_GET_ITEM(every, i)
            for j in range(PyTuple_GET_SIZE(paths)):
                path = <object>PyTuple_GET_ITEM(paths, j)
                p = PyDict_GetItem(groups, path)
                if p is NULL:
                    g = {}
                    groups[path] = g
                else:
                    g = <dict>p
                g[id(node)] = node
        for path, g in groups.items():
            terms = <object>PyTuple_GET_ITEM(path, 0)
            ncfg = <object>PyTuple_GET_ITEM(path, 1)
            nodes = list(g.values())
            for k in range(PyTuple_GET_SIZE(terms)):
                nodes = self.glr_step.shift(nodes, <object>PyTuple_GET_ITEM(terms, k))
                if not PyList_GET_SIZE(nodes):
                    break
            for k in range(PyList_GET_SIZE(nodes)):
                n = <object>PyList_GET_ITEM(nodes, k)
                if self._viable(n, ncfg):
                    out.append((n, ncfg))
        return self._state_of(out)

    def commit_fast(self, tuple heads, Py_ssize_t token_id, bytes data):
        cdef object memo = self.paths_memo.cur
        cdef object ambiguous = self.ambiguous
        cdef list out = []
        cdef list every = []
        cdef object head, node, cfg, paths, path, terms, ncfg, n, t, key
        cdef PyObject *p
        cdef Py_ssize_t i, j, k
        for i in range(PyTuple_GET_SIZE(heads)):
            head = <object>PyTuple_GET_ITEM(heads, i)
            cfg = <object>PyTuple_GET_ITEM(head, 1)
            key = cfg * self.vsize + token_id
            p = PyDict_GetItem(memo, key)
            if p is NULL:
                paths = self.paths_memo.miss(key, self.lex_paths, cfg, data)
                memo = self.paths_memo.cur       # (a miss may start a new generation)
            else:
                paths = <object>p
            if paths is None:
                return None
            every.append(paths)
        for i in range(PyTuple_GET_SIZE(heads)):
            head = <object>PyTuple_GET_ITEM(heads, i)
            node = <object>PyTuple_GET_ITEM(head, 0)
            paths = <object>PyList_GET_ITEM(every, i)
            for j in range(PyTuple_GET_SIZE(paths)):
                path = <object>PyTuple_GET_ITEM(paths, j)
                terms = <object>PyTuple_GET_ITEM(path, 0)
                ncfg = <object>PyTuple_GET_ITEM(path, 1)
                n = node
                for k in range(PyTuple_GET_SIZE(terms)):
                    t = <object>PyTuple_GET_ITEM(terms, k)
                    n = _shift1(n, t, self.reduce, self.shift, self.rlen, self.rlhs, self.goto,
                                self.node_class, self.node_layout, ambiguous)
                    if n is None:
                        break
                    if n is ambiguous:
                        return self._commit_paths(heads, every)
                if n is not None and self._viable(n, ncfg):
                    out.append((n, ncfg))
        return self._state_of(out)


from libc.stdlib cimport malloc, realloc, free, qsort, calloc
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcmp
