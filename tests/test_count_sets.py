"""The dense count sets of counted chains (``stackmask.runtime.count_sets``): the sets made
ahead, table by table in one pass, equal the ones made on first use, and ``bounds`` gives
the tokens whose count is in ``lo..hi``."""

from __future__ import annotations

import time

import numpy as np
import pytest

from stackmask.runtime.count_sets import CountSets


def _tables(seed: int, n_ids: int = 1000):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, int(rng.integers(1, 70)), n_ids).astype(np.int16)
            for _ in range(int(rng.integers(1, 6)))]


def _split(tables, rng):
    """A count_split reading every table (lexer config -> terms), some more than others."""
    return {cfg: tuple((0, int(rng.integers(0, len(tables))), 0, 3) for _ in range(3))
            for cfg in range(20)}


@pytest.mark.parametrize("seed", range(20))
def test_sets_made_ahead_equal_those_made_on_first_use(seed):
    tables = _tables(seed)
    n_words = (1000 + 31) // 32 + 1               # the mask is wider than the vocabulary
    ahead, lazy = CountSets(tables, n_words), CountSets(tables, n_words)
    made = ahead.make_ahead(_split(tables, np.random.default_rng(seed)))
    read = {t for terms in _split(tables, np.random.default_rng(seed)).values() for _, t, _, _ in terms}
    assert made == sum(int(tables[t].max()) + 1 for t in read)
    for t in read:
        for v in range(int(tables[t].max()) + 1):
            assert (t, v) in ahead._le
            got = ahead.at_most(t, v)
            assert np.array_equal(got, lazy.at_most(t, v)), (t, v)
            bits = np.unpackbits(got.view(np.uint8), bitorder="little")[:1000].astype(bool)
            assert np.array_equal(bits, tables[t] <= v)     # (past the vocabulary: count 0)
    for t in read:
        for lo, hi in ((2, 5), (0, 3), (4, 4)):
            keep, drop = ahead.bounds(t, lo, hi)
            assert (drop is None) == (lo == 0)
            dense = keep if drop is None else keep & ~drop
            bits = np.unpackbits(dense.view(np.uint8), bitorder="little")[:1000]
            assert np.array_equal(bits.astype(bool), (tables[t] >= lo) & (tables[t] <= hi))


def test_only_the_most_read_tables_when_time_is_up():
    tables = _tables(3)
    while len(tables) < 4:
        tables = tables + _tables(len(tables) + 10)
    split = {0: ((0, 0, 0, 3), (0, 0, 0, 3), (0, 1, 0, 3), (0, 1, 0, 3), (0, 2, 0, 3), (0, 3, 0, 3))}
    cs = CountSets(tables, 40)
    cs.make_ahead(split, deadline=time.perf_counter() - 1)      # already past
    assert {t for t, _ in cs._le} == {0, 1}                        # AHEAD_TABLES (2)
    cs.make_ahead(split)
    assert {t for t, _ in cs._le} == {0, 1, 2, 3}


def test_no_more_than_max_sets(monkeypatch):
    monkeypatch.setattr(CountSets, "MAX_SETS", 7)
    tables = [np.arange(50, dtype=np.int16) % 20]
    cs = CountSets(tables, 2)
    assert cs.make_ahead({0: ((0, 0, 0, 3),)}) == 7 and len(cs._le) == 7
