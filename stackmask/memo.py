"""The dict type of stackmask's memos, kept where the garbage collector leaves it.

CPython stops tracking an exact ``dict`` whose keys and values are all untracked
(ints, bytes, tuples of them once a collection has seen them): most memos here
hold such data. Inserting one new tuple (tracked when created) tracks the dict
again, into the *youngest* generation, so the next young collection, which
should cost microseconds, traverses every entry of the memo: a 72,000-entry
lexer-step memo made one ``commit`` take 1.3 ms on Go (measured with
``gc.callbacks``). Instances of a dict subclass are never untracked: a memo
created as a :class:`Memo` ages into the oldest generation once and stays there,
and only full collections visit it. Lookups (``get``, ``in``) cost the same.
"""

from __future__ import annotations

import threading
from collections import OrderedDict


class Memo(dict):
    """A ``dict`` for large memos (see the module docstring); no other behaviour."""

    __slots__ = ()


_ABSENT = object()


class Generations:
    """A memo bounded by entries in two generations: ``cur`` (read first, on the hot
    path: ``g.cur.get(key)``) and ``old``. An entry missing from ``cur`` is moved up from
    ``old`` or computed (:meth:`miss`); a full ``cur`` (``cap`` entries) becomes ``old``
    and the previous ``old`` is dropped: an approximate LRU whose hits cost one dict
    lookup and whose eviction costs O(1) inside the call that fills it."""

    __slots__ = ("cur", "old", "cap")

    def __init__(self, cap: int = 1):
        self.cur: dict = Memo()
        self.old: dict = Memo()
        self.cap = max(1, int(cap))

    def miss(self, key, compute, *args):
        """The value of ``key``, which ``cur`` lacks: from ``old``, else ``compute(*args)``;
        put in ``cur``."""
        v = self.old.get(key, _ABSENT)
        if v is _ABSENT:
            v = compute(*args)
        cur = self.cur
        if len(cur) >= self.cap:
            self.old = cur
            cur = self.cur = Memo()
        cur[key] = v
        return v

    def clear(self) -> None:
        self.cur = Memo()
        self.old = Memo()

    def __len__(self) -> int:
        return len(self.cur) + len(self.old)


class SizedCache:
    """A least-recently-used cache bounded by bytes: ``size_of(value)`` per entry, the
    oldest entries dropped while the total passes ``max_bytes`` (the newest is always
    kept). For the lexer's automata, of 1 KB per state: a process that builds many
    grammars keeps the recent ones, not every one it ever built (thread-safe).
    :meth:`settle` brings it down to ``rest_bytes`` between two pieces of work (a
    grammar's construction reuses its own large automata; the next grammar mostly the
    small ones)."""

    __slots__ = ("max_bytes", "rest_bytes", "size_of", "_d", "_total", "_lock")

    def __init__(self, max_bytes: int, size_of, rest_bytes: int | None = None):
        self.max_bytes = int(max_bytes)
        self.rest_bytes = self.max_bytes if rest_bytes is None else int(rest_bytes)
        self.size_of = size_of
        self._d: OrderedDict = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            e = self._d.get(key, _ABSENT)
            if e is _ABSENT:
                return default
            self._d.move_to_end(key)
            return e[0]

    def get_or_make(self, key, make):
        """The value cached for ``key``, else ``make()``, cached (made outside the lock:
        two threads may both make it; the later one's is kept)."""
        with self._lock:
            e = self._d.get(key, _ABSENT)
            if e is not _ABSENT:
                self._d.move_to_end(key)
                return e[0]
        v = make()
        self.put(key, v)
        return v

    def __contains__(self, key) -> bool:
        return key in self._d

    def __len__(self) -> int:
        return len(self._d)

    @property
    def nbytes(self) -> int:
        return self._total

    def put(self, key, value) -> None:
        n = int(self.size_of(value))
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._d[key] = (value, n)
            self._total += n
            while self._total > self.max_bytes and len(self._d) > 1:
                _, (_, m) = self._d.popitem(last=False)
                self._total -= m

    def settle(self) -> None:
        """Drop the entries of more than a quarter of ``rest_bytes``, then the oldest
        while the total passes ``rest_bytes``."""
        cap = self.rest_bytes // 4
        with self._lock:
            for k in [k for k, (_, n) in self._d.items() if n > cap]:
                self._total -= self._d.pop(k)[1]
            while self._total > self.rest_bytes and self._d:
                _, (_, m) = self._d.popitem(last=False)
                self._total -= m

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._total = 0
