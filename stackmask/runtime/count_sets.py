"""Dense "iteration count in ``lo..hi``" token sets for the masks of counted chains.

A counted chain's state near a bound has no start of its own
(``ParserDWA.count_split``, :mod:`stackmask.compile.count_split`): its mask is, per
term, a deep state's mask restricted to the tokens whose iteration count
(``ParserDWA.count_tables[table]``, per token id) falls in ``lo..hi``. The masker
intersects with these sets; this keeps them dense, one per ``(table, v)`` for "count
at most ``v``" (a range is two of them), bounded in number, and makes those of the most
used tables ahead so that no mask near a bound pays for one.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

__all__ = ["CountSets"]


class CountSets:
    """The dense count sets of one automaton's ``count_tables`` (``tables``: per table an
    integer array indexed by token id), as masks of ``n_words`` 32-bit words."""

    #: dense "iteration count at most v" sets kept (19 KB each with a 151k vocabulary; a
    #: string's near counts need at most a table's longest token + 1 of them per state
    #: inside an iteration; past this many they are started over)
    MAX_SETS = 1024
    #: the tables whose sets are made ahead for every v: those most terms read (between
    #: two characters: nearly every token's count starts there)
    AHEAD_TABLES = 2

    def __init__(self, tables: list, n_words: int):
        self.tables = tables
        self.n_words = n_words
        self._le: dict = {}         # (table, v) -> dense tokens counting <= v
        self._padded: dict = {}     # table -> its counts padded to the mask's bits

    def bounds(self, table: int, lo: int, hi: int) -> tuple:
        """``(keep, drop)``: the tokens whose iteration count in ``tables[table]`` is in
        ``lo..hi`` are those of ``keep`` not in ``drop`` (dense; ``drop`` None when
        ``lo`` is 0). The masker intersects with them in one pass, no set of the range
        is made."""
        return self.at_most(table, hi), (self.at_most(table, lo - 1) if lo > 0 else None)

    def at_most(self, table: int, v: int) -> np.ndarray:
        """The dense (read-only) set of tokens whose count in ``tables[table]`` is at
        most ``v``."""
        le = self._le
        d = le.get((table, v))
        if d is None:
            d = np.packbits(self._counts(table) <= v, bitorder="little").view(np.int32)
            d.flags.writeable = False
            if len(le) >= self.MAX_SETS:
                le.clear()
            le[(table, v)] = d
        return d

    def _counts(self, table: int) -> np.ndarray:
        """``tables[table]`` padded to the mask's bits (0 past the vocabulary)."""
        c = self._padded.get(table)
        if c is None:
            t = self.tables[table]
            c = np.zeros(self.n_words * 32, dtype=t.dtype)
            c[:len(t)] = t
            self._padded[table] = c
        return c

    def make_ahead(self, count_split: dict, deadline: float | None = None) -> int:
        """Make every "count at most v" set of the tables the terms of ``count_split``
        (lexer config -> ``((deep config, table, lo, hi), ...)``) read, most read first:
        those of the ``AHEAD_TABLES`` first always, the others until
        ``time.perf_counter()`` passes ``deadline`` (None: all) or ``MAX_SETS`` are kept.
        A table's sets are made in one pass over its counts (:meth:`_all_at_most`), a
        few µs each; one made on first use costs a comparison and packing of the whole
        vocabulary (~100 µs: a first mask near a bound of a string whose table was not
        made ahead). Returns how many were made."""
        uses: Counter = Counter(t for terms in count_split.values()
                                for _, t, _, _ in terms if t >= 0)
        n = 0
        for k, (table, _) in enumerate(uses.most_common()):
            if k >= self.AHEAD_TABLES and deadline is not None and time.perf_counter() > deadline:
                break
            n += self._all_at_most(table)
        return n

    def _all_at_most(self, table: int) -> int:
        """Every "count at most v" set of ``table`` not kept yet (within ``MAX_SETS``),
        made incrementally: the tokens counting exactly v are added to the set of v - 1.
        Returns how many were made."""
        le = self._le
        c = self._counts(table)
        top = int(c.max(initial=0))
        order = np.argsort(c, kind="stable")
        bounds = np.searchsorted(c[order], np.arange(top + 2), side="left")
        acc = np.zeros(len(c), dtype=bool)
        n = 0
        for v in range(top + 1):
            acc[order[bounds[v]:bounds[v + 1]]] = True
            if (table, v) in le:
                continue
            if len(le) >= self.MAX_SETS:
                break
            d = np.packbits(acc, bitorder="little").view(np.int32)
            d.flags.writeable = False
            le[(table, v)] = d
            n += 1
        return n
