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


include "_commit.pxi"

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
