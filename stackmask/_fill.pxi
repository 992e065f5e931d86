# ``fill_masks``' copies: rows copied without the GIL, by the calling thread and by
# native worker threads that copy rows as soon as their masks are found.
#
# A batch's rows are found one after the other with the GIL (a walk reads Python
# objects); the copies (19 KB a row with a 151k vocabulary) need none. The workers are
# threads of the C runtime (``PyThread_start_new_thread``), never holding the GIL: one
# *task* at a time is open to them; each claims the next entry with an atomic counter and
# copies it once the caller has published that entry's source (``avail``), so copying
# overlaps the finding of later rows; the caller claims what is left once it has found
# every row. An idle worker spins for ``_spin_ns`` (a batch right after another finds it
# awake; not while it shares the caller's CPU) and then sleeps on a lock that the next
# task releases. The scheduler may wake it on the caller's CPU, where the two would only
# take turns: it then moves itself to its other allowed CPUs (``sched_setaffinity`` on
# its own thread), or leaves the task to the caller where it has none.
#
# Protocol (all atomics sequentially consistent):
# * ``gen`` odd: a task is open; the caller writes the task's fields while it is even,
#   then increments it (open), and at the end increments it again (closed) and waits until
#   ``inside`` is 0: a worker increments ``inside`` and only then re-reads ``gen``, so
#   either the caller sees it inside (and waits for it) or it sees the task closed (and
#   leaves): no worker reads a task's fields after the caller returned;
# * sleeping: a worker sets ``sleeping`` then re-reads ``gen``; the caller, after opening,
#   swaps ``sleeping`` 1 -> 0 and releases the worker's lock only when its swap succeeded,
#   so every release meets exactly one acquire;
# * ``in_use``: one caller owns the workers at a time; another thread's concurrent call
#   copies its rows alone;
# * after ``fork`` the child has no workers: the state is reset and they start anew.
#
# Without GCC/Clang atomics (``SM_ATOMICS`` 0) there are no workers: every call copies
# alone.

cdef extern from "pythread.h":
    ctypedef void *PyThread_type_lock
    PyThread_type_lock PyThread_allocate_lock()
    int PyThread_acquire_lock(PyThread_type_lock lock, int waitflag) nogil
    void PyThread_release_lock(PyThread_type_lock lock) nogil
    unsigned long PyThread_start_new_thread(void (*func)(void *) noexcept nogil, void *arg)
    int WAIT_LOCK

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SM_ATOMICS 1
    #include <time.h>
    static inline long long sm_load(long long *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline void sm_store(long long *p, long long v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    static inline long long sm_add(long long *p, long long v) {
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
    static inline int sm_cas(long long *p, long long e, long long v) {
        return __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
    #if defined(__linux__) && !defined(_GNU_SOURCE)
    #define _GNU_SOURCE
    #endif
    #include <sched.h>
    static inline void sm_yield(void) { sched_yield(); }
    #if defined(__linux__)
    static inline long long sm_cpu(void) { return sched_getcpu(); }
    static cpu_set_t sm_allowed[16];        /* each worker's CPUs when it started */
    static inline void sm_save_cpus(long long i) {
        if (sched_getaffinity(0, sizeof(cpu_set_t), &sm_allowed[i])) CPU_ZERO(&sm_allowed[i]); }
    /* move worker i off ``cpu`` (to its other allowed CPUs); 0 when it cannot */
    static inline int sm_avoid_cpu(long long i, long long cpu) {
        cpu_set_t s = sm_allowed[i];
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &s)) return 0;
        CPU_CLR(cpu, &s);
        if (CPU_COUNT(&s) == 0) return 0;
        return sched_setaffinity(0, sizeof(cpu_set_t), &s) == 0; }
    #else
    static inline long long sm_cpu(void) { return -1; }
    static inline void sm_save_cpus(long long i) { }
    static inline int sm_avoid_cpu(long long i, long long cpu) { return 0; }
    #endif
    static inline long long sm_now_ns(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec; }
    #if defined(__x86_64__) || defined(__i386__)
    #define sm_relax() __builtin_ia32_pause()
    #elif defined(__aarch64__)
    #define sm_relax() __asm__ __volatile__("yield" ::: "memory")
    #else
    #define sm_relax() ((void)0)
    #endif
    #else
    #define SM_ATOMICS 0
    static long long sm_load(long long *p) { return *p; }
    static void sm_store(long long *p, long long v) { *p = v; }
    static long long sm_add(long long *p, long long v) { long long o = *p; *p += v; return o; }
    static int sm_cas(long long *p, long long e, long long v) {
        if (*p != e) return 0; *p = v; return 1; }
    static long long sm_now_ns(void) { return 0; }
    static void sm_yield(void) { }
    static long long sm_cpu(void) { return -1; }
    static void sm_save_cpus(long long i) { }
    static int sm_avoid_cpu(long long i, long long cpu) { return 0; }
    #define sm_relax() ((void)0)
    #endif
    """
    int SM_ATOMICS
    long long sm_load(long long *p) noexcept nogil
    void sm_store(long long *p, long long v) noexcept nogil
    long long sm_add(long long *p, long long v) noexcept nogil
    bint sm_cas(long long *p, long long e, long long v) noexcept nogil
    long long sm_now_ns() noexcept nogil
    void sm_yield() noexcept nogil
    long long sm_cpu() noexcept nogil
    void sm_save_cpus(long long i) noexcept nogil
    bint sm_avoid_cpu(long long i, long long cpu) noexcept nogil
    void sm_relax() noexcept nogil


cdef struct _FillTask:
    int32_t *base
    Py_ssize_t width
    Py_ssize_t words
    long long *row_of
    long long *src_of
    long long *last_of
    long long n
    long long avail        # entries whose source is final
    long long next         # the next entry to claim
    long long abort        # the caller raised: stop claiming
    long long workers      # workers 0..workers-1 may join
    long long gen          # odd: a task open
    long long inside       # workers reading the task
    long long in_use       # a caller owns the workers
    long long cpu          # the CPU the caller ran on (-1: not known)
    long long by_workers   # entries workers have copied, in all (for tests)


cdef struct _Worker:
    long long index
    long long sleeping
    PyThread_type_lock wake


cdef enum:
    #: the most worker threads a call can use (``threads`` up to this + 1)
    MAX_FILL_WORKERS = 15

cdef _FillTask _task
cdef _Worker _workers[MAX_FILL_WORKERS]
cdef long long _n_workers = 0
#: how long an idle worker spins before it sleeps (ns)
cdef long long _spin_ns = 100000


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


cdef void _copy_entries(int32_t *base, Py_ssize_t width, Py_ssize_t words,
                        long long *row_of, long long *src_of, long long *last_of,
                        long long n) noexcept nogil:
    """Every entry of a ``fill`` plan, by the calling thread alone."""
    cdef long long k
    for k in range(n):
        _copy_row(base, width, words, row_of[k], src_of[k], last_of[row_of[k]] == k)


cdef long long _run_task(_FillTask *t) noexcept nogil:
    """Claim entries of the open task and copy them, each once its source is final: how
    many it claimed."""
    cdef long long k, r, spins, done = 0
    while True:
        k = sm_add(&t.next, 1)
        if k >= t.n:
            return done
        done += 1
        spins = 0
        while sm_load(&t.avail) <= k:
            if sm_load(&t.abort):
                return done
            spins += 1
            if spins < 256:
                sm_relax()
            else:            # the caller is slow (a walk), or shares this core: let it run
                sm_yield()
        r = t.row_of[k]
        _copy_row(t.base, t.width, t.words, r, t.src_of[k], t.last_of[r] == k)


cdef void _worker_main(void *arg) noexcept nogil:
    """A worker's life: wait for a task it may join (spinning, then asleep), copy, again."""
    cdef _Worker *w = <_Worker *>arg
    cdef long long seen = sm_load(&_task.gen), g, until, cpu
    cdef int j
    sm_save_cpus(w.index)
    while True:
        until = sm_now_ns() + _spin_ns
        while True:
            g = sm_load(&_task.gen)
            if g & 1 and g != seen:
                break
            cpu = sm_cpu()            # spinning on the caller's CPU would only slow it
            if sm_now_ns() < until and (cpu < 0 or cpu != sm_load(&_task.cpu)):
                for j in range(64):
                    sm_relax()
                continue
            sm_store(&w.sleeping, 1)
            g = sm_load(&_task.gen)
            if g & 1 and g != seen:
                if not sm_cas(&w.sleeping, 1, 0):
                    PyThread_acquire_lock(w.wake, WAIT_LOCK)     # the caller's release
                break
            PyThread_acquire_lock(w.wake, WAIT_LOCK)
            until = sm_now_ns() + _spin_ns
        seen = g
        sm_add(&_task.inside, 1)
        if sm_load(&_task.gen) == g and w.index < _task.workers:
            # woken on the caller's CPU (the scheduler's choice), a worker would only
            # take turns with it: it moves to its other CPUs, or leaves the task
            cpu = sm_cpu()
            if cpu < 0 or cpu != sm_load(&_task.cpu) or sm_avoid_cpu(w.index, cpu):
                sm_add(&_task.by_workers, _run_task(&_task))
        sm_add(&_task.inside, -1)


cdef long long _claim_workers(long long wanted):
    """Own the workers for one call and start them up to ``wanted`` (with the GIL): how
    many may join (0: copy alone, when another call owns them or none can start)."""
    global _n_workers
    cdef _Worker *w
    if not SM_ATOMICS or wanted <= 0:
        return 0
    if wanted > MAX_FILL_WORKERS:
        wanted = MAX_FILL_WORKERS
    if not sm_cas(&_task.in_use, 0, 1):
        return 0
    while _n_workers < wanted:
        w = &_workers[_n_workers]
        w.index = _n_workers
        w.sleeping = 0
        w.wake = PyThread_allocate_lock()
        if w.wake == NULL:
            break
        PyThread_acquire_lock(w.wake, WAIT_LOCK)      # held: the worker's acquire waits
        if PyThread_start_new_thread(_worker_main, w) == <unsigned long>-1:
            break
        _n_workers += 1
    if _n_workers == 0:
        sm_store(&_task.in_use, 0)
        return 0
    return min(wanted, _n_workers)


cdef void _open_task(int32_t *base, Py_ssize_t width, Py_ssize_t words, long long *row_of,
                     long long *src_of, long long *last_of, long long n,
                     long long workers) noexcept nogil:
    """Write the task (gen even: no worker reads it), open it and wake the workers."""
    cdef long long i
    _task.base = base
    _task.width = width
    _task.words = words
    _task.row_of = row_of
    _task.src_of = src_of
    _task.last_of = last_of
    _task.n = n
    _task.workers = workers
    sm_store(&_task.cpu, sm_cpu())
    sm_store(&_task.avail, 0)
    sm_store(&_task.next, 0)
    sm_store(&_task.abort, 0)
    sm_add(&_task.gen, 1)
    for i in range(workers):
        if sm_cas(&_workers[i].sleeping, 1, 0):
            PyThread_release_lock(_workers[i].wake)


cdef void _close_task(bint abort) noexcept nogil:
    """Close the open task (stopping the workers' claims when ``abort``), wait until no
    worker reads it, and give the workers back."""
    cdef long long spins = 0
    if abort:
        sm_store(&_task.abort, 1)
    sm_add(&_task.gen, 1)
    while sm_load(&_task.inside):
        spins += 1
        if spins < 256:
            sm_relax()
        else:            # a worker descheduled inside (maybe on this core): let it run
            sm_yield()
    sm_store(&_task.in_use, 0)


def _fill_after_fork():
    """In a forked child: the workers did not survive the fork; forget them."""
    global _n_workers
    _n_workers = 0
    _task.gen = 0
    _task.inside = 0
    _task.in_use = 0


def fill_workers():
    """``(workers started, workers possible in one call, entries the workers claimed in
    all)``: the native threads that copy ``fill_masks``' rows (0 possible without
    compiler atomics)."""
    return (int(_n_workers), (MAX_FILL_WORKERS if SM_ATOMICS else 0),
            int(sm_load(&_task.by_workers)))


def set_fill_spin(long long ns):
    """How long an idle worker spins before it sleeps (ns; 0: sleep at once). Returns
    the previous value."""
    global _spin_ns
    cdef long long old = _spin_ns
    if ns < 0:
        raise ValueError("the spin time must be >= 0")
    _spin_ns = ns
    return old


import os as _os
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_fill_after_fork)
