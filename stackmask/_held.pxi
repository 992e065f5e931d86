# Included by _native.pyx (after _templates.pxi): the mask-time check of the start items
# held out of the automaton (``ParserDWA.routed``; the reference is ``runtime.held.HeldOut.holds`` over
# ``Templates.step``). An item reads a GSS node's state (``TemplateRuns.step``), then the
# items it waits for read each link below; the answer is memoized on the node by item id
# (``route_memo``: the node's stack is fixed once its commit has finished).

cdef class _HeldMemo:
    """A GSS node's memo of held-out items: item id -> whether it holds there."""

    cdef _Map m

    def __cinit__(self):
        _map_init(&self.m, 16)

    def __dealloc__(self):
        _map_free(&self.m)

    def __len__(self):
        return self.m.n


cdef class HeldChecks:
    """``HeldOut.weights`` (``runtime/held.py``) over int-coded items (``runs``: a :class:`TemplateRuns`
    of the automaton's LR tables, used by nothing else). Not thread-safe: the masker
    calls it under the automaton's lock. A node's memo keys are this object's item ids,
    so one object serves a constraint for its lifetime."""

    cdef TemplateRuns runs
    cdef dict starts          # id(held) -> (held, item ids)
    cdef readonly int64_t steps    # items read on a node (for memo bounds and tests)
    cdef _Map unskip          # item id -> the id of the item without its skip
    cdef type node_class      # GSS nodes of this class are read by slot offset
    cdef Py_ssize_t o_state, o_links, o_below, o_memo

    def __cinit__(self):
        _map_init(&self.unskip, 1024)

    def __dealloc__(self):
        _map_free(&self.unskip)

    def __init__(self, TemplateRuns runs, type node_class=None):
        self.runs = runs
        self.starts = {}
        self.steps = 0
        self.node_class = node_class
        if node_class is not None:
            self.o_state = _slot_offset(node_class, "state")
            self.o_links = _slot_offset(node_class, "links")
            self.o_below = _slot_offset(node_class, "below")
            self.o_memo = _slot_offset(node_class, "route_memo")

    cdef inline _HeldMemo _memo_of(self, object node):
        """The node's memo (made on first use)."""
        cdef PyObject *p
        if type(node) is self.node_class:
            p = _slot(node, self.o_memo)
            if p is not NULL and <object>p is not None:
                return <_HeldMemo?>p
        else:
            m = getattr(node, "route_memo", None)
            if m is not None:
                return <_HeldMemo?>m
        memo = _HeldMemo()
        node.route_memo = memo
        return memo

    cdef inline object _links(self, object node):
        cdef PyObject *p
        if type(node) is self.node_class:
            p = _slot(node, self.o_links)
            if p is not NULL:
                return <object>p
        return node.links

    cdef inline object _state(self, object node):
        cdef PyObject *p
        if type(node) is self.node_class:
            p = _slot(node, self.o_state)
            if p is not NULL:
                return <object>p
        return node.state

    cdef inline int64_t _with_skip(self, int64_t iid, int64_t skip) except -1:
        """The id of item ``iid`` discarding ``skip`` entries instead of its own."""
        cdef TemplateRuns runs = self.runs
        return runs._item(skip, runs._field(iid, 1), runs._field(iid, 2), runs._field(iid, 3))

    def memo_entries(self):
        return self.runs.memo_entries()

    def clear_memos(self):
        """Drop the runs' memos (item ids stay: the nodes' memos remain valid)."""
        self.runs.clear_memos()

    def weights(self, object node, tuple held):
        """The weights of ``held`` (``((item, weight id), ...)``) whose items hold on the
        stack from ``node`` down, as a frozenset. The items' first step (on the node's
        own state) is kept per ``(held, state)``: the weights that succeed there, and each
        item waiting for the entry below with the weights that need it (most held items
        die on the top state, and several wait for the same item), so only the waiting
        items are read on the links below."""
        cdef tuple first = self._first_at(held, self._state(node))
        cdef set out = set(<frozenset>first[0])
        cdef tuple waits = <tuple>first[1]
        cdef tuple wt, ws
        cdef list links = self._links(node)
        cdef Py_ssize_t k, m, nl = PyList_GET_SIZE(links)
        cdef object w
        cdef bint need
        for k in range(PyTuple_GET_SIZE(waits)):
            wt = <tuple>PyTuple_GET_ITEM(waits, k)
            ws = <tuple>wt[1]
            need = False
            for w in ws:
                if w not in out:
                    need = True
                    break
            if not need:
                continue
            for m in range(nl):
                if self._holds(wt[0], <object>PyList_GET_ITEM(links, m)):
                    out.update(ws)
                    break
        return frozenset(out)

    cdef object _start(self, tuple held):
        """``(held, its item ids, its first steps by state)``, kept per tuple."""
        cdef PyObject *p = PyDict_GetItem(self.starts, id(held))
        if p is not NULL and (<tuple>(<object>p))[0] is held:
            return <object>p
        e = (held, array.array('q', [self.runs.iid(it) for it, _ in held]), {})
        if len(self.starts) > 4096:
            self.starts.clear()
        self.starts[id(held)] = e
        return e

    cdef tuple _first_at(self, tuple held, object s):
        """``_first`` of ``held`` on state ``s``, kept per ``(held, s)``."""
        cdef object e = self._start(held)
        cdef dict firsts = <dict>(<tuple>e)[2]
        cdef PyObject *p = PyDict_GetItem(firsts, s)
        if p is not NULL:
            return <tuple>p
        first = self._first(held, <array.array>(<tuple>e)[1], s)
        firsts[s] = first
        return first

    cdef tuple _first(self, tuple held, array.array ids_arr, object s):
        """``(weights that succeed on state s, ((waiting item id, its weights), ...))``
        for the items of ``held``."""
        cdef long long[::1] ids = ids_arr
        cdef TemplateRuns runs = self.runs
        cdef set acc = set()
        cdef dict waiting = {}
        cdef Py_ssize_t k
        cdef int64_t r, j
        cdef object w, i2
        for k in range(PyTuple_GET_SIZE(held)):
            w = (<tuple>PyTuple_GET_ITEM(held, k))[1]
            r = runs.step(ids[k], s)
            self.steps += 1
            if r == _SUCCESS_ID:
                acc.add(w)
                continue
            for j in range(runs.results.off[r], runs.results.off[r + 1]):
                i2 = runs.results.pool[j]
                ws = waiting.get(i2)
                if ws is None:
                    waiting[i2] = [w]
                elif w not in ws:
                    ws.append(w)
        acc_f = frozenset(acc)
        return (acc_f, tuple([(i2, tuple([w for w in ws if w not in acc_f]))
                              for i2, ws in waiting.items()]))

    cdef int _holds(self, int64_t iid, object node) except -1:
        cdef _HeldMemo memo = self._memo_of(node)
        cdef int64_t v = _map_get(&memo.m, iid)
        if v != _ABSENT:
            return <int>v
        cdef TemplateRuns runs = self.runs
        cdef int64_t skip = runs._field(iid, 0)
        cdef int found = 0
        cdef int64_t base
        if skip > 0:
            # discards ``skip`` entries unread: the same item without them, read on each
            # node that many links below (memoized there under one id, whatever the
            # distance from the top: the next masks, a node higher, find it)
            base = _map_get(&self.unskip, iid)
            if base == _ABSENT:
                base = self._with_skip(iid, 0)
                _map_set(&self.unskip, iid, base)
            found = self._holds_below(base, node, skip)
            _map_set(&memo.m, iid, found)
            return found
        self.steps += 1
        cdef int64_t r = runs.step(iid, self._state(node))
        cdef int64_t j, a, b, i2
        cdef list links
        cdef Py_ssize_t m, nl
        if r == _SUCCESS_ID:
            found = 1
        else:
            a = runs.results.off[r]
            b = runs.results.off[r + 1]
            if b > a:
                links = self._links(node)
                nl = PyList_GET_SIZE(links)
                j = a
                while j < b and not found:
                    # (pool is read again each time: a step below may grow it)
                    i2 = runs.results.pool[j]
                    for m in range(nl):
                        if self._holds(i2, <object>PyList_GET_ITEM(links, m)):
                            found = 1
                            break
                    j += 1
        _map_set(&memo.m, iid, found)
        return found

    cdef int _holds_below(self, int64_t iid, object node, int64_t depth) except -1:
        """Whether item ``iid`` (a skip-0 item) holds on some node ``depth`` links below
        ``node``: single links are followed at once; at a node with several links the
        item that still discards the rest is read on each link (memoized there, so a
        dense GSS is walked once per node, not once per path)."""
        cdef PyObject *p
        cdef object n = node, below
        cdef int64_t d = 0, rest
        cdef list links
        cdef Py_ssize_t m
        while d < depth:
            if type(n) is self.node_class:
                p = _slot(n, self.o_below)
                below = <object>p if p is not NULL else None
            else:
                below = n.below
            if below is None:
                break
            n = below
            d += 1
        if d == depth:
            return self._holds(iid, n)
        links = self._links(n)
        rest = depth - d - 1          # entries still to discard below n's links
        if rest > 0:
            iid = self._with_skip(iid, rest)
        for m in range(PyList_GET_SIZE(links)):
            if self._holds(iid, <object>PyList_GET_ITEM(links, m)):
                return 1
        return 0

    def warm(self, helds, relevant, double deadline, clock):
        """Step every item the held-out starts ``helds`` (their ``((item, weight id),
        ...)``) can come to on every stack state it may read (``relevant(item)``: the
        states, or a set holding -1 for all; items that discard entries are read as
        the item without them), then make each start's first steps on every state its
        items may read, until ``clock()`` passes ``deadline``, so that masks find them
        memoized. Returns ``(items, steps, whether all were)``."""
        cdef TemplateRuns runs = self.runs
        cdef dict seen = {}
        cdef list todo = []
        cdef int64_t i, j, r, k, n_steps = 0
        cdef object it, s
        cdef dict tops = {}            # held starts -> the states their items may read
        for held in helds:
            states = tops.setdefault(id(held), (held, set()))[1]
            for it, _ in held:
                states.update(relevant(it))
                i = runs.iid(it)
                if i not in seen:
                    seen[i] = True
                    todo.append(i)
        while todo:
            if clock() > deadline:
                return len(seen), n_steps, False
            i = todo.pop()
            if runs._field(i, 0) > 0:
                j = self._with_skip(i, 0)
                if j not in seen:
                    seen[j] = True
                    todo.append(j)
                continue
            for s in relevant(runs.item(i)):
                if s < 0:
                    continue
                r = runs.step(i, s)
                n_steps += 1
                if r == _SUCCESS_ID:
                    continue
                for k in range(runs.results.off[r], runs.results.off[r + 1]):
                    j = runs.results.pool[k]
                    if j not in seen:
                        seen[j] = True
                        todo.append(j)
        cdef Py_ssize_t before = self.steps
        for held, states in tops.values():
            for s in states:
                if s >= 0:
                    if clock() > deadline:
                        return len(seen), n_steps + self.steps - before, False
                    self._first_at(held, s)
        return len(seen), n_steps + self.steps - before, True
