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
from cpython.dict cimport PyDict_GetItem
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
                    outs |= self.masker.branches(q, node)
                break
            node = below
        return frozenset(outs)

    cdef object _rwalk(self, object node, object cfg):
        """``Masker.restricted_walk``: a start that is another's restricted
        (``init_restrict``) gives that start's weights as one term, the tokens left out
        removed."""
        cdef object k = self._walk(node, cfg)    # first: it may compile ``cfg``
        cdef PyObject *p = PyDict_GetItem(self.dwa.init_restrict, cfg)
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
             object state_class, int threads, object executor=None):
        """``fill_masks`` over a C-contiguous int32 ``(batch, width)`` array ``arr``
        (``flat``: a flat int32 memoryview of it): the mask of ``states[k]`` into row
        ``rows[k]`` (``rows`` None: row k; the caller checked their counts), all bits of the row for a None state, words
        past ``words`` zeroed. The masks are found with the GIL held (a walk reads
        Python objects; rows the masker must compute are written by it at once), then
        copied with the GIL released: by this thread, or in ``threads`` chunks, all but
        one by ``executor`` (a ``concurrent.futures`` executor). A row named twice gets
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
        cdef list keep = []
        cdef object st, src
        for k in range(n):
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
        if threads <= 1 or executor is None or n < 2:
            _copy_rows(a, row_of, src_of, last_of, words, 0, n)
            return arr
        # the copies in ``threads`` contiguous chunks, all but the first in the executor's
        # threads (each copies without the GIL, so they run at once); the sources stay
        # alive in ``keep`` until every chunk is done
        cdef Py_ssize_t step = (n + threads - 1) // threads
        futures = [executor.submit(_copy_rows, a, row_of, src_of, last_of, words, lo,
                                   min(n, lo + step)) for lo in range(step, n, step)]
        _copy_rows(a, row_of, src_of, last_of, words, 0, min(n, step))
        for f in futures:
            f.result()
        return arr


def _copy_rows(int32_t[:, ::1] a, long long[::1] row_of, long long[::1] src_of,
               long long[::1] last_of, Py_ssize_t words, Py_ssize_t lo, Py_ssize_t hi):
    """Entries ``lo..hi`` of a ``fill`` plan into ``a``, without the GIL."""
    cdef Py_ssize_t k, width = a.shape[1]
    cdef int32_t *base = &a[0, 0] if a.shape[0] and width else NULL
    with nogil:
        for k in range(lo, hi):
            _copy_row(base, width, words, row_of[k], src_of[k], last_of[row_of[k]] == k)


cdef inline void _copy_row(int32_t *base, Py_ssize_t width, Py_ssize_t words, Py_ssize_t r,
                           long long src, bint mine) noexcept nogil:
    """Row ``r`` of ``base``: the mask at address ``src`` (its tail past ``words``
    zeroed), all ones for ``src == -1``, untouched for 0 or when not ``mine``."""
    cdef int32_t *row
    if not mine or src == 0:
        return
    row = base + r * width
    if src == -1:
        memset(row, 0xFF, width * 4)
        return
    memcpy(row, <int32_t *><intptr_t>src, words * 4)
    if width > words:
        memset(row + words, 0, (width - words) * 4)


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
    """``cls(state, [below])`` without calling ``__init__``: the slots ``state``,
    ``links``, ``below`` and ``Node.FIXED_SLOTS`` set by offset (``layout``)."""
    cdef object n = PyType_GenericAlloc(cls, 0)
    _init_slot(n, layout[0], state)
    _init_slot(n, layout[1], [below])
    _init_slot(n, layout[2], below)
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
    (``Constraint._commit_fast`` with ``GLR.shift1`` inlined). Anything else goes
    to ``checked_commit`` (the constraint's own ``commit``: checks, EOS, special
    tokens, errors) or, where the fast path gives up (a path the memo does not
    hold, an LR conflict, a reduction through a branching node, no viable head),
    to ``general(heads, token_id, data)``, the byte-by-byte GLR loop.

    ``paths_memo`` is the ``Generations`` memo of lexing paths, filled on a miss by
    ``lex_paths(cfg, data)``; ``requirements`` maps configurations to their
    requirement, ``true_req`` meaning "viable at any stack", and ``viable(head)``
    decides the others; ``glr_tables`` is ``GLR.shift1_tables()``."""

    cdef object paths_memo, lex_paths, viable, requirements, true_req
    cdef object merge_heads, ambiguous
    cdef type state_class, node_class
    cdef tuple tokens
    cdef object eos, special_terminals, special_ids, checked_commit, general
    cdef tuple reduce, shift, rlen, rlhs, goto, node_layout, state_layout
    cdef Py_ssize_t vsize, fast_heads

    def __init__(self, paths_memo, Py_ssize_t vsize, lex_paths, viable, object requirements,
                 true_req, tuple glr_tables, merge_heads, state_class, Py_ssize_t fast_heads,
                 tuple tokens, eos, special_terminals, special_ids, checked_commit, general):
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
        self.merge_heads = merge_heads
        self.state_class = state_class
        self.state_layout = _layout(state_class, ("heads",))
        self.fast_heads = fast_heads
        self.tokens = tokens
        self.eos = eos
        self.special_terminals = special_terminals
        self.special_ids = special_ids
        self.checked_commit = checked_commit
        self.general = general

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

    cdef bint _viable_here(self, object node, object cfg):
        """The common half of ``Constraint.viable((node, cfg))``: True where the
        configuration's requirement is "always", or where one of the terminals it may
        become is shifted by ``node``'s state as it is or after deterministic reductions
        (:meth:`_can_shift`, kept in ``node.shift_memo`` as ``GLR.can_shift`` keeps
        it); False means "ask ``viable``" (which also knows the end of the text and
        special tokens)."""
        cdef PyObject *p = PyDict_GetItem(self.requirements, cfg)
        if p is NULL:
            return False
        cdef object req = <object>p
        if req is self.true_req or (type(req) is str and req == self.true_req):
            return True
        if type(req) is not tuple or PyTuple_GET_SIZE(req) < 1:
            return False
        cdef object sh = <object>PyTuple_GET_ITEM(self.shift, <Py_ssize_t>node.state)
        cdef object terms = <object>PyTuple_GET_ITEM(req, 0)
        for t in terms:
            if PyDict_GetItem(sh, t) is not NULL:
                return True
        cdef object memo = node.shift_memo
        cdef int c
        for t in terms:
            if memo is not None:
                p = PyDict_GetItem(memo, t)
                if p is not NULL:
                    if <object>p:
                        return True
                    continue
            c = self._can_shift(node, t)
            if c < 0:
                return False
            if memo is None:
                memo = node.shift_memo = {}
            memo[t] = c == 1
            if c:
                return True
        return False

    def commit_fast(self, tuple heads, Py_ssize_t token_id, bytes data):
        cdef object memo = self.paths_memo.cur
        cdef object ambiguous = self.ambiguous
        cdef list out = []
        cdef object head, node, cfg, paths, path, terms, ncfg, n, t, key
        cdef PyObject *p
        cdef Py_ssize_t i, j, k
        for i in range(PyTuple_GET_SIZE(heads)):
            head = <object>PyTuple_GET_ITEM(heads, i)
            node = <object>PyTuple_GET_ITEM(head, 0)
            cfg = <object>PyTuple_GET_ITEM(head, 1)
            key = cfg * self.vsize + token_id
            p = PyDict_GetItem(memo, key)
            if p is NULL:
                paths = self.paths_memo.miss(key, self.lex_paths, cfg, data)
            else:
                paths = <object>p
            if paths is None:
                return None
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
                        return None
                if n is None:
                    continue
                head = (n, ncfg)
                if self._viable_here(n, ncfg) or self.viable(head):
                    out.append(head)
        if not out:
            return None
        if len(out) > 1:
            out = self.merge_heads(out)
        return _new_state(self.state_class, self.state_layout, tuple(out))


from libc.stdlib cimport malloc, realloc, free


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
    """``stackmask.lexer.fsa._hopcroft``'s refinement over arrays, in place on ``blk``
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
# subset construction and product BFS (``stackmask.lexer.fsa``)
# --------------------------------------------------------------------------

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort, calloc
from libc.string cimport memcmp

import numpy as np


cdef int _cmp_i32(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const int32_t *>a)[0]
    cdef int32_t y = (<const int32_t *>b)[0]
    return (x > y) - (x < y)


cdef struct _Sets:
    # interned int32 sequences: pool[off[i]:off[i + 1]] is sequence i; an open-addressing
    # table of sequence ids by content
    int32_t *pool
    int64_t pool_n, pool_cap
    int64_t *off
    int64_t n, off_cap
    int64_t *table
    int64_t table_cap


cdef inline uint64_t _hash_seq(const int32_t *a, int64_t k) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t>k
    cdef int64_t i
    for i in range(k):
        h ^= <uint64_t><uint32_t>a[i]
        h *= 1099511628211ULL
        h ^= h >> 29
    return h


cdef int _sets_init(_Sets *s) except -1:
    s.pool_cap = 1024
    s.pool_n = 0
    s.pool = <int32_t *>malloc(s.pool_cap * sizeof(int32_t))
    s.off_cap = 256
    s.off = <int64_t *>malloc(s.off_cap * sizeof(int64_t))
    s.n = 0
    s.table_cap = 512
    s.table = <int64_t *>malloc(s.table_cap * sizeof(int64_t))
    if s.pool == NULL or s.off == NULL or s.table == NULL:
        raise MemoryError()
    s.off[0] = 0
    memset(s.table, 0xff, s.table_cap * sizeof(int64_t))
    return 0


cdef void _sets_free(_Sets *s) noexcept:
    free(s.pool)
    free(s.off)
    free(s.table)


cdef int _sets_grow_table(_Sets *s) except -1:
    cdef int64_t cap = s.table_cap * 2, i, j
    cdef int64_t *t = <int64_t *>malloc(cap * sizeof(int64_t))
    cdef uint64_t h
    if t == NULL:
        raise MemoryError()
    memset(t, 0xff, cap * sizeof(int64_t))
    for i in range(s.n):
        h = _hash_seq(s.pool + s.off[i], s.off[i + 1] - s.off[i])
        j = <int64_t>(h & <uint64_t>(cap - 1))
        while t[j] >= 0:
            j = (j + 1) & (cap - 1)
        t[j] = i
    free(s.table)
    s.table = t
    s.table_cap = cap
    return 0


cdef int64_t _sets_intern(_Sets *s, const int32_t *a, int64_t k, bint *is_new) except -2:
    """The id of the sequence ``a[:k]``, interned if new (then ``is_new``)."""
    cdef uint64_t h = _hash_seq(a, k)
    cdef int64_t j = <int64_t>(h & <uint64_t>(s.table_cap - 1)), i, m
    cdef int32_t *p
    cdef int64_t *o
    while True:
        i = s.table[j]
        if i < 0:
            break
        if (s.off[i + 1] - s.off[i] == k
                and memcmp(s.pool + s.off[i], a, k * sizeof(int32_t)) == 0):
            is_new[0] = False
            return i
        j = (j + 1) & (s.table_cap - 1)
    if s.pool_n + k > s.pool_cap:
        m = max(2 * s.pool_cap, s.pool_n + k)
        p = <int32_t *>realloc(s.pool, m * sizeof(int32_t))
        if p == NULL:
            raise MemoryError()
        s.pool = p
        s.pool_cap = m
    if s.n + 2 > s.off_cap:
        o = <int64_t *>realloc(s.off, 2 * s.off_cap * sizeof(int64_t))
        if o == NULL:
            raise MemoryError()
        s.off = o
        s.off_cap *= 2
    if k:
        memcpy(s.pool + s.pool_n, a, k * sizeof(int32_t))
    s.pool_n += k
    i = s.n
    s.n += 1
    s.off[s.n] = s.pool_n
    s.table[j] = i
    is_new[0] = True
    if 2 * s.n > s.table_cap:
        _sets_grow_table(s)
    return i


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
    """``stackmask.lexer.fsa.determinize``'s subset construction over arrays. The NFA
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
    """``stackmask.lexer.fsa._product_tuples`` over arrays: the tuples of live component
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
    the order first met (``stackmask.lexer.fsa.minimize``'s Moore rounds)."""
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
    column order): ``stackmask.lexer.fsa._renumber_bfs``'s order."""
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
    """Per state whether it reaches an accepting state (``stackmask.lexer.fsa.trim``)."""
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


cdef int64_t _sets_find(_Sets *s, const int32_t *a, int64_t k) noexcept:
    """The id of the sequence ``a[:k]``, or -1."""
    cdef uint64_t h = _hash_seq(a, k)
    cdef int64_t j = <int64_t>(h & <uint64_t>(s.table_cap - 1)), i
    while True:
        i = s.table[j]
        if i < 0:
            return -1
        if (s.off[i + 1] - s.off[i] == k
                and memcmp(s.pool + s.off[i], a, k * sizeof(int32_t)) == 0):
            return i
        j = (j + 1) & (s.table_cap - 1)


def preimages(const int32_t[:, ::1] trans):
    """The transitions of ``trans`` (states x classes, -1 none) by target, for
    ``hopcroft_refine``: ``(state_off, ucls, ustart, uend, src)``: for target ``t`` the
    entries ``state_off[t]..state_off[t+1]`` of ``ucls``/``ustart``/``uend`` give, per
    class (ascending), the range of ``src`` holding the states (ascending) that read
    that class into ``t`` (what ``stackmask.lexer.fsa._hopcroft`` gets with a stable sort
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
include "_tables.pxi"
include "_templates.pxi"
include "_expand.pxi"
include "_branches.pxi"
include "_load.pxi"
include "_minimize.pxi"
