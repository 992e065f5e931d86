# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twins of stackmask's hottest loops (see ``stackmask.native``).

Each function here does exactly what a pure-Python reference does, over the same
objects (GSS nodes, the automaton's lists and dicts, the masker's memo), without
the interpreter's dispatch: ``MaskPath.mask`` is ``runtime.masker.Masker.mask``'s
common path (one head, or a state asked again), ``commit_fast`` is
``Constraint._commit_fast`` with ``GLR.shift1`` inlined, and ``MaskPath.fill`` is
``fill_masks`` with its copies made with the GIL released. Anything off the common path
is handed back to the Python code, which stays the reference: a test compares
both paths mask for mask and state for state.

This module imports nothing from stackmask: the classes and tables it needs are
passed in, so it sits at the bottom of the layering.
"""

from cpython.ref cimport PyObject, Py_INCREF
from cpython.dict cimport PyDict_GetItem, PyDict_Size
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.buffer cimport PyBuffer_IsContiguous
from libc.string cimport memcpy, memset
from cpython cimport array
import array
from libc.stdint cimport int32_t, intptr_t

cdef extern from "Python.h":
    Py_buffer *PyMemoryView_GET_BUFFER(object mview)
    bint PyMemoryView_Check(object obj)


cdef inline bint _view_ok(object view, Py_ssize_t nbytes):
    """Whether ``view`` is a memoryview of ``nbytes`` C-contiguous bytes."""
    cdef Py_buffer *b
    if not PyMemoryView_Check(view):
        return False
    b = PyMemoryView_GET_BUFFER(view)
    return b.len == nbytes and PyBuffer_IsContiguous(b, b'C')


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset

cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member

import types as _types


cdef Py_ssize_t _slot_offset(type cls, str name) except -1:
    """Where slot ``name`` of ``cls``'s instances lives (its member descriptor's offset)."""
    d = cls.__dict__.get(name)
    if type(d) is not _types.MemberDescriptorType:
        raise TypeError(f"{cls.__name__}.{name} is not a slot")
    return (<PyMemberDescrObject*><PyObject*>d).d_member.offset


cdef inline PyObject *_slot(object o, Py_ssize_t offset):
    """The value of the slot at ``offset`` of ``o`` (borrowed; NULL when unset): what
    ``o.name`` reads, without the attribute lookup. ``o``'s type must be the class the
    offset was taken from."""
    return (<PyObject**>((<char*><PyObject*>o) + offset))[0]


cdef class MaskPath:
    """``Masker.mask`` for the common cases, falling back to the masker itself.

    The weights of a state's mask are found as the masker finds them (heads,
    aliases, pairs, configurations on a base, memos on the GSS nodes), walking
    single paths here and calling the masker's branching walk below a node with
    several links; the mask comes from the memo (or the masker's ``lookup_old``
    computes it), or is the state's pinned mask, and is copied into the buffer the
    masker keeps bound (``memcpy``). EOS, a new buffer or no buffer go to
    ``masker.mask(state, out)`` (which binds a new buffer, except for a pinned mask).
    """

    cdef object masker
    cdef object dwa
    cdef object fallback
    cdef Py_ssize_t nbytes
    cdef type node_class, state_class
    cdef Py_ssize_t o_state, o_below, o_mask_memo, o_mask_key, o_mask_src, o_heads
    cdef Py_ssize_t o_links, o_walk_memo, o_link_groups

    def __init__(self, masker, type node_class=None, type state_class=None):
        self.masker = masker
        self.dwa = masker.dwa
        self.fallback = masker.mask
        self.nbytes = masker.n_words * 4
        # the GSS nodes' slots read on every step of a walk, by offset (the attribute
        # lookup of a slot costs more than the rest of the step); nodes of another
        # class are read by name
        self.node_class = node_class
        if node_class is not None:
            self.o_state = _slot_offset(node_class, "state")
            self.o_below = _slot_offset(node_class, "below")
            self.o_mask_memo = _slot_offset(node_class, "mask_memo")
            self.o_links = _slot_offset(node_class, "links")
            self.o_walk_memo = _slot_offset(node_class, "walk_memo")
            self.o_link_groups = _slot_offset(node_class, "link_groups")
        self.state_class = state_class
        if state_class is not None:
            self.o_mask_key = _slot_offset(state_class, "mask_key")
            self.o_mask_src = _slot_offset(state_class, "mask_src")
            self.o_heads = _slot_offset(state_class, "heads")

    cdef object _walk(self, object node, object cfg):
        """``Masker.walk``: the weights met walking the GSS from ``node`` down, from
        the start of configuration ``cfg`` (or of a pair of heads: ``cfg`` a pair
        key). The masker walks where this does not: a configuration not compiled yet,
        an automaton state added during the walk."""
        cdef object dwa = self.dwa
        cdef PyObject *p = PyDict_GetItem(dwa.init, cfg)
        if p is NULL:
            if type(cfg) is not tuple:
                return self.masker.walk(node, cfg)
            p = PyDict_GetItem(dwa.pair_init, cfg)
            if p is NULL:
                return self.masker.walk(node, cfg)
        cdef object start = node
        cdef object e = <object>p
        cdef Py_ssize_t q = e[0]
        cdef object w = e[1]
        cdef set outs = set()
        if w:
            outs.add(w)
        cdef object tr = dwa.trans
        if type(tr) is not list:
            return self.masker.walk(start, cfg)
        cdef list trans = <list>tr
        cdef object default = None
        cdef object complete = None
        cdef object below
        cdef object s, t
        cdef type nc = self.node_class
        while q >= 0:
            if q >= PyList_GET_SIZE(trans):
                return self.masker.walk(start, cfg)
            if type(node) is nc:
                p = _slot(node, self.o_state)
                s = <object>p if p is not NULL else node.state
            else:
                s = node.state
            t = <object>PyList_GET_ITEM(trans, q)
            if t is None:            # a loaded state's edges, made on first use
                t = dwa.state_edges(q)
            p = PyDict_GetItem(t, s)
            if p is NULL:
                if complete is None:
                    complete = dwa.complete
                    default = dwa.default
                if complete[q]:
                    e = default[q]
                else:
                    e = dwa.edge(q, s)
                if e is None:
                    break
            else:
                e = <object>p
            q = e[0]
            w = e[1]
            if w:
                outs.add(w)
            if type(node) is nc:
                p = _slot(node, self.o_below)
                below = <object>p if p is not NULL else node.below
            else:
                below = node.below
            if below is None:        # the root, or several links
                if node.links and q >= 0:
                    outs |= self.branches(q, node)
                break
            node = below
        return frozenset(outs)

    cpdef object branches(self, object q, object node):
        """``Masker.branches(q, node)`` compiled (the walk below a branching node)."""
        if self.node_class is None:
            return self.masker.branches(q, node)
        return _branch_walk(self, q, node)

    cdef object _rwalk(self, object node, object cfg):
        """``Masker.restricted_walk``: a start that is another's restricted
        (``init_restrict``) gives that start's weights as one term, the tokens left out
        removed."""
        cdef object k = self._walk(node, cfg)    # first: it may compile ``cfg``
        cdef PyObject *p
        cdef object routed = self.dwa.routed
        if routed:                   # start items held out of the automaton
            p = PyDict_GetItem(routed, cfg)
            if p is not NULL:
                k = k | self.masker.routed_weights(node, <object>p)
        p = PyDict_GetItem(self.dwa.init_restrict, cfg)
        if p is not NULL and k:
            return frozenset(((<object>p, k),))
        return k

    cdef object _src(self, object state):
        """The mask of ``state`` as the masker keeps it (a read-only memoryview: the
        pinned one, or the memo's), found as ``Masker.mask`` finds it; None for EOS
        (the masker answers it)."""
        cdef object key, heads, head, top, cfg, k, alias, b, bm, src
        cdef PyObject *p
        cdef Py_ssize_t i, n
        cdef object dwa = self.dwa
        cdef bint slotted = type(state) is self.state_class
        if slotted:
            p = _slot(state, self.o_mask_key)
            key = <object>p if p is not NULL else state.mask_key
        else:
            key = state.mask_key
        if key is None:
            if slotted:
                p = _slot(state, self.o_mask_src)
                src = <object>p if p is not NULL else state.mask_src
            else:
                src = state.mask_src
            if src is not None:          # pinned (the start state's)
                return src
            if state.finished:
                return None
            if slotted:
                p = _slot(state, self.o_heads)
                heads = <object>p if p is not NULL else state.heads
            else:
                heads = state.heads
            n = PyTuple_GET_SIZE(heads)
            alias = dwa.alias
            if alias:                # configurations no token tells apart share one start
                heads = tuple([(h[0], alias.get(h[1], h[1])) for h in heads])
            if n == 2 and dwa.pair_init:
                heads = self.masker.paired(heads)
                n = PyTuple_GET_SIZE(heads)
            for i in range(n):
                head = <object>PyTuple_GET_ITEM(heads, i)
                top = <object>PyTuple_GET_ITEM(head, 0)
                cfg = <object>PyTuple_GET_ITEM(head, 1)
                if type(top) is self.node_class:
                    p = _slot(top, self.o_mask_memo)
                    k = <object>p if p is not NULL else top.mask_memo
                else:
                    k = top.mask_memo
                if k[0] == cfg:
                    k = k[1]
                elif dwa.count_split and PyDict_GetItem(dwa.count_split, cfg) is not NULL:
                    # a counted chain's state near a bound: the deep states' walks
                    k = self.masker.head_key(top, cfg)
                    top.mask_memo = (cfg, k)
                else:
                    k = self._rwalk(top, cfg)
                    p = PyDict_GetItem(dwa.init_base, cfg)
                    if p is not NULL:
                        # the base's mask on this stack without the tokens that differ
                        b = <object>p
                        bm = getattr(top, "base_memo", None)
                        if bm is None or bm[0] != b[0]:
                            bm = top.base_memo = (b[0], self._rwalk(top, b[0]))
                        k = k | {(b[1], bm[1])}
                    top.mask_memo = (cfg, k)
                key = k if key is None else key | k
            state.mask_key = key
            p = PyDict_GetItem(self.masker.memo, key)
            if p is NULL:
                return self.masker.lookup_old(key, heads)
            return <object>p
        p = PyDict_GetItem(self.masker.memo, key)
        if p is NULL:
            return self.masker.lookup_old(key)
        return <object>p

    def mask(self, state, out=None):
        """The mask of ``state`` (see ``Constraint.get_mask``)."""
        cdef object src = self._src(state)
        if src is None or out is None:
            return self.fallback(state, out)
        cdef object bound = self.masker.bound_out
        if <object>PyTuple_GET_ITEM(bound, 0) is not out:
            return self.fallback(state, out)
        cdef object view = <object>PyTuple_GET_ITEM(bound, 1)
        cdef Py_ssize_t n = self.nbytes
        if _view_ok(view, n) and _view_ok(src, n):
            memcpy(PyMemoryView_GET_BUFFER(view).buf, PyMemoryView_GET_BUFFER(src).buf, n)
        else:
            view[:] = src
        return out

    def fill(self, list states, object rows, object arr, object flat, Py_ssize_t words,
             object state_class, int threads):
        """``fill_masks`` over a C-contiguous int32 ``(batch, width)`` array ``arr``
        (``flat``: a flat int32 memoryview of it): the mask of ``states[k]`` into row
        ``rows[k]`` (``rows`` None: row k; the caller checked their counts), all bits of
        the row for a None state, words past ``words`` zeroed. The masks are found with
        the GIL held (a walk reads Python objects; rows the masker must compute are
        written by it at once) and copied without it: by this thread once every mask is
        found, and with ``threads`` > 1 also by ``threads - 1`` native workers that copy
        each row as soon as its mask is found (``_fill.pxi``). A row named twice gets
        the later state's mask, as in the sequential loop."""
        cdef int32_t[:, ::1] a = arr
        cdef Py_ssize_t n = len(states), n_rows = a.shape[0], width = a.shape[1]
        cdef Py_ssize_t k, r, nb = self.nbytes
        if words * 4 != nb:
            raise ValueError(f"{words} words per mask, the constraint's masks have {nb // 4}")
        cdef array.array idx = array.array('q', [0]) * n       # row of entry k
        cdef array.array last = array.array('q', [-1]) * n_rows if n_rows else array.array('q')
        cdef array.array srcp = array.array('q', [0]) * n      # source address (0: none)
        cdef long long[::1] row_of = idx, last_of = last, src_of = srcp
        for k in range(n):
            if rows is None:
                r = k
            else:
                v = rows[k]
                if not isinstance(v, int):
                    v = int(v)
                r = v
                if not -n_rows <= r < n_rows:
                    raise IndexError(f"row {r} is out of range for {n_rows} rows")
                if r < 0:
                    r += n_rows
            row_of[k] = r
            last_of[r] = k
        cdef int32_t *base = &a[0, 0] if n_rows and width else NULL
        cdef long long workers = _claim_workers(threads - 1) if threads > 1 and n > 1 else 0
        if workers:
            _open_task(base, width, words, &row_of[0], &src_of[0], &last_of[0], n, workers)
        cdef list keep = []
        cdef object st, src
        try:
            for k in range(n):
                if workers:
                    sm_store(&_task.avail, k)         # entries before k are final
                r = row_of[k]
                if last_of[r] != k:
                    continue                      # a later entry writes this row
                st = states[k]
                if st is None:
                    src_of[k] = -1
                    continue
                if type(st) is not state_class and not isinstance(st, state_class):
                    raise TypeError(f"states must be stackmask.State or None, not {type(st).__name__}")
                src = self._src(st)
                if src is None or not _view_ok(src, nb):
                    self.fallback(st, flat[r * width:r * width + words])
                    if width > words:
                        a[r, words:] = 0
                    continue
                keep.append(src)
                src_of[k] = <long long><intptr_t>PyMemoryView_GET_BUFFER(src).buf
        except BaseException:
            if workers:
                with nogil:
                    _close_task(True)
            raise
        if not workers:
            if n:
                with nogil:
                    _copy_entries(base, width, words, &row_of[0], &src_of[0], &last_of[0], n)
            return arr
        # the sources stay alive in ``keep`` until the task is closed
        with nogil:
            sm_store(&_task.avail, n)
            _run_task(&_task)
            _close_task(False)
        return arr


include "_fill.pxi"


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

import numpy as np


# the shared tables (int64 maps, interned int32 sequences), then the compiled
# twins by job: the lexer automaton toolkit, the symbolic LR runs, the state
# expansion, the trie walks, loading, minimization
include "_tables.pxi"
include "_fsa.pxi"
include "_templates.pxi"
include "_held.pxi"
include "_glr.pxi"
include "_walk.pxi"
include "_expand.pxi"
include "_branches.pxi"
include "_load.pxi"
include "_minimize.pxi"
