"""``fill_masks``' native copy workers (``stackmask/_fill.pxi``) write exactly what the
pure-Python loop writes.

The workers copy each row as soon as the caller has found its mask, while the caller
goes on finding the next ones (walks, masks computed by the masker) and then copies
what is left. Checked here against the pure-Python path: random batches (repeated
states, ``None`` rows, rows named twice, negative rows, wide rows, fresh states whose
masks are found during the call) with 1 to 17 threads; a call that raises half-way
through and the calls after it; two Python threads filling at once (one owns the
workers, the other copies alone); workers asleep at every call (no spinning); a forked
child (the workers do not survive a fork and start again).
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stackmask import Constraint, native
from stackmask.runtime import mask_to_ids

from conftest import run_in_threads

pytestmark = pytest.mark.usefixtures("needs_native")


@pytest.fixture(scope="module")
def json_pair(qwen_vocab):
    """(compiled, pure) JSON constraints and the tokens of a walk sampled from masks."""
    from stackmask.grammars import load
    fast = Constraint(load("json"), qwen_vocab)
    prev = os.environ.get(native.ENV)
    os.environ[native.ENV] = "1"
    try:
        pure = Constraint(load("json"), qwen_vocab)
    finally:
        if prev is None:
            del os.environ[native.ENV]
        else:
            os.environ[native.ENV] = prev
    if not fast.native:
        pytest.skip("the compiled extension is not built")
    rng = random.Random("fill-workers")
    s = pure.start()
    ids = []
    for _ in range(60):
        allowed = [i for i in mask_to_ids(pure.get_mask(s), pure.vocab.size).tolist()
                   if i not in pure.vocab.eos_token_ids]
        if not allowed:
            break
        ids.append(rng.choice(allowed))
        s = pure.commit(s, ids[-1])
    return fast, pure, ids


def states_of(c, ids) -> list:
    """The state before each token of ``ids`` (fresh objects: nothing memoized on them)."""
    out = [c.start()]
    for t in ids[:-1]:
        out.append(c.commit(out[-1], t))
    return out


def reference(pure, ids, pick, rows, n_rows, width, fill=777):
    """What the pure-Python ``fill_masks`` writes."""
    sp = states_of(pure, ids)
    out = np.full((n_rows, width), fill, dtype=np.int32)
    pure.fill_masks([None if i is None else sp[i] for i in pick], out, rows)
    return out


_KEPT: dict = {}


@st.composite
def batches(draw):
    n = draw(st.integers(1, 300))
    pick = draw(st.lists(st.one_of(st.none(), st.integers(0, 58)), min_size=n, max_size=n))
    spare = draw(st.integers(0, 3))
    n_rows = n + spare
    if draw(st.booleans()):
        rows = None
    else:
        rows = draw(st.lists(st.integers(-n_rows, n_rows - 1), min_size=n, max_size=n))
    wide = draw(st.integers(0, 9))
    threads = draw(st.sampled_from([1, 2, 3, 17, None]))
    fresh = draw(st.booleans())
    return pick, rows, n_rows, wide, threads, fresh


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(batches())
def test_random_batches_equal_the_pure_path(json_pair, batch):
    fast, pure, ids = json_pair
    pick, rows, n_rows, wide, threads, fresh = batch
    pick = [None if i is None else i % len(ids) for i in pick]
    width = fast.mask_words + wide
    # fresh states: masks found (walked) during the call, while workers copy; kept ones:
    # masks memoized on them by earlier examples
    sf = states_of(fast, ids) if fresh else _KEPT.setdefault(id(fast), states_of(fast, ids))
    out = np.full((n_rows, width), 777, dtype=np.int32)
    fast.fill_masks([None if i is None else sf[i] for i in pick], out, rows, threads=threads)
    assert np.array_equal(out, reference(pure, ids, pick, rows, n_rows, width))


def test_a_call_that_raises_leaves_the_workers_usable(json_pair):
    from stackmask import _native
    fast, pure, ids = json_pair
    sf = states_of(fast, ids)
    n = 200
    out = np.zeros((n + 1, fast.mask_words), dtype=np.int32)
    bad = [sf[i % len(sf)] for i in range(n)] + ["not a state"]
    for _ in range(3):
        with pytest.raises(TypeError):
            fast.fill_masks(bad, out, threads=2)
    pick = [i % len(ids) for i in range(n)]
    sf = states_of(fast, ids)
    out = np.zeros((n, fast.mask_words), dtype=np.int32)
    fast.fill_masks([sf[i] for i in pick], out, threads=2)
    assert np.array_equal(out, reference(pure, ids, pick, None, n, fast.mask_words, 0))
    started, possible, _ = _native.fill_workers()
    assert possible == 15 and started >= 1


def test_workers_copy_rows_of_fresh_states(json_pair):
    """Fresh states: every row's mask is walked during the call, so the workers copy
    rows while the caller is still finding later ones."""
    from stackmask import _native
    fast, pure, ids = json_pair
    n = 1024
    pick = [(i * 11) % len(ids) for i in range(n)]
    ref = reference(pure, ids, pick, None, n, fast.mask_words, 0)
    before = _native.fill_workers()[2]
    for rep in range(5):
        sf = states_of(fast, ids)
        out = np.zeros((n, fast.mask_words), dtype=np.int32)
        fast.fill_masks([sf[i] for i in pick], out, threads=2)
        assert np.array_equal(out, ref), rep
    assert _native.fill_workers()[2] > before


def test_two_threads_filling_at_once(json_pair):
    fast, pure, ids = json_pair
    n = 256
    picks = [[(i * 7 + k) % len(ids) for i in range(n)] for k in range(2)]
    refs = [reference(pure, ids, p, None, n, fast.mask_words, 0) for p in picks]
    kept = [states_of(fast, ids), states_of(fast, ids)]

    def run(k, barrier):
        barrier.wait()
        bad = []
        for rep in range(30):
            sf = states_of(fast, ids) if rep % 3 == 0 else kept[k]
            out = np.zeros((n, fast.mask_words), dtype=np.int32)
            fast.fill_masks([sf[i] for i in picks[k]], out, threads=2)
            if not np.array_equal(out, refs[k]):
                bad.append(rep)
        return bad

    assert run_in_threads(run, [0, 1], 1e-5) == {0: [], 1: []}


def test_workers_asleep_at_every_call(json_pair):
    from stackmask import _native
    fast, pure, ids = json_pair
    n = 150
    pick = [(i * 5) % len(ids) for i in range(n)]
    ref = reference(pure, ids, pick, None, n, fast.mask_words, 0)
    old = _native.set_fill_spin(0)
    try:
        for rep in range(20):
            time.sleep(0.002)
            sf = states_of(fast, ids)
            out = np.zeros((n, fast.mask_words), dtype=np.int32)
            fast.fill_masks([sf[i] for i in pick], out, threads=2)
            assert np.array_equal(out, ref), rep
    finally:
        assert _native.set_fill_spin(old) == 0
    with pytest.raises(ValueError):
        _native.set_fill_spin(-1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_starts_its_own_workers(json_pair):
    fast, pure, ids = json_pair
    n = 200
    pick = [(i * 3) % len(ids) for i in range(n)]
    ref = reference(pure, ids, pick, None, n, fast.mask_words, 0)
    sf = states_of(fast, ids)
    out = np.zeros((n, fast.mask_words), dtype=np.int32)
    fast.fill_masks([sf[i] for i in pick], out, threads=2)      # workers started here
    assert np.array_equal(out, ref)
    pid = os.fork()
    if pid == 0:                                                 # the child
        code = 1
        try:
            from stackmask import _native
            if _native.fill_workers()[0] == 0:          # none survived the fork
                sf2 = states_of(fast, ids)
                out2 = np.zeros((n, fast.mask_words), dtype=np.int32)
                fast.fill_masks([sf2[i] for i in pick], out2, threads=2)
                if np.array_equal(out2, ref) and _native.fill_workers()[0] >= 1:
                    code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
