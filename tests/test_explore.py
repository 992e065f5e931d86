"""Sentence-guided exploration after a budget-stopped compile (stackmask.compile.explore):
what it compiles is saved and reloaded, it changes no mask, and it can be turned off."""

from __future__ import annotations

import random

import numpy as np
import pytest

from stackmask import Constraint
from stackmask.compile import ahead, explore as explore_mod

from conftest import read_bench_grammar
from test_artifact import JSON, only_file, small_vocab


def explored_texts(c: Constraint, n: int) -> list[bytes]:
    """The first ``n`` sentences :func:`explore` walks for ``c`` (its first shape, same seed)."""
    texts = explore_mod.sentences(c.grammar, explore_mod.SHAPES[0], random.Random(explore_mod.SEED))
    return [next(texts).encode() for _ in range(n)]


def test_a_budget_stopped_compile_explores_and_caches_what_it_compiled(tmp_path):
    """The explored states are in the artifact: a reloaded constraint walks the same
    sentences compiling nothing, with the masks of a complete compile and of the oracle."""
    v = small_vocab()
    part = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0, progress=False,
                      explore_sentences=40, explore_budget_s=60)
    st = part.compile_stats()
    n_shapes = len(explore_mod.SHAPES)
    assert st["budget_exhausted"] and st["explore_sentences"] == 40 * n_shapes   # per shape
    assert st["explore_rejected"] == 0 and st["explore_stopped"] is None
    assert st["explore_states"] > 0 and st["states"] == len(part.compiled.dwa.items)
    assert st["explore_masks"] > 40
    # every state the masks walked part of was completed afterwards
    d = part.compiled.dwa
    assert st["explore_expanded"] > 0
    assert all(d.complete[q] or not d.trans[q] for q in range(len(d.items)))
    live = part.compiled.dwa
    assert only_file(tmp_path).exists()

    again = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0, progress=False,
                       explore_sentences=40, explore_budget_s=60)
    assert again.loaded_from_cache
    st2 = again.compile_stats()
    assert st2["explore_sentences"] == 40 * n_shapes and st2["saved_after_use"] is False
    assert st2["budget_exhausted"]
    dwa = again.compiled.dwa
    n_states, configs = len(dwa.items), set(dwa.init)
    # the artifact was minimized when saved: the live automaton less the states merged then
    merged = st2["states_merged"] - st["states_merged"]
    assert merged > 0 and n_states == len(live.items) - merged and configs == set(live.init)

    full = Constraint(JSON, v, cache_dir=False, compile_budget_s=None, progress=False)
    for text in explored_texts(part, 40):
        s, f = again.start(), full.start()
        for i in range(len(text) + 1):
            m = again.get_mask(s)
            assert np.array_equal(m, full.get_mask(f)), (text, i)
            if i < 6 or i == len(text):
                assert np.array_equal(m, again.reference_mask(s)), (text, i)
            if i < len(text):
                s = again.commit_bytes(s, text[i:i + 1])
                f = full.commit_bytes(f, text[i:i + 1])
    assert len(dwa.items) == n_states and set(dwa.init) == configs      # nothing compiled


def test_exploring_constraint_gives_oracle_masks_on_other_text(tmp_path, monkeypatch):
    monkeypatch.setattr(ahead, "PREFILL_SHARE", 1e9)    # its whole PREFILL_S
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=False, compile_budget_s=0, progress=False,
                   explore_sentences=20, explore_budget_s=60)
    m = c._masker              # the explored masks dropped; the walks' masks computed again
    assert m._memo_old == {} and len(m.memo) == m.prefilled > 0
    s = c.start()
    for b in b'[{"x": false, "ab": [12, 1.5e-1]}, "\\u00e9", {}]':
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))
        s = c.commit_bytes(s, bytes([b]))
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def test_exploration_off_complete_or_out_of_time(tmp_path):
    v = small_vocab()
    off = Constraint(JSON, v, cache_dir=tmp_path / "off", compile_budget_s=0, progress=False,
                     explore_sentences=0)
    assert off.compile_stats()["budget_exhausted"]
    assert not any(k.startswith("explore") for k in off.compile_stats())
    assert only_file(tmp_path / "off").exists()          # the budgeted compile is still cached
    full = Constraint(JSON, v, cache_dir=False, compile_budget_s=None, progress=False)
    assert not any(k.startswith("explore") for k in full.compile_stats())
    for kw in ({"explore_budget_s": 0}, {}):      # by default 3/4 of compile_budget_s (0)
        late = Constraint(JSON, v, cache_dir=tmp_path / "late", compile_budget_s=0,
                          progress=False, **kw)
        st = late.compile_stats()
        assert st["explore_sentences"] == 0 and "time budget of 0 s" in st["explore_stopped"]
        assert only_file(tmp_path / "late").exists()
        only_file(tmp_path / "late").unlink()


def test_exploration_reports_progress(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="stackmask"):
        Constraint(JSON, small_vocab(), cache_dir=False, compile_budget_s=0, explore_sentences=3,
                   explore_budget_s=60)
    err = "\n".join(r.getMessage() for r in caplog.records if r.name == "stackmask")
    assert "exploring up to 3 random sentences of the grammar per shape" in err
    assert f"explored {3 * len(explore_mod.SHAPES)} sentences" in err


@pytest.mark.parametrize("name", ["json-outlines", "calc"])
def test_explored_masks_are_exact_with_the_real_vocabulary(name, qwen_vocab):
    """On benchmark grammars with the 151k vocabulary: exploring from nothing (a lazily
    compiled constraint) rejects no generated sentence, and the masks along an explored
    sentence (memo dropped, so recomputed from the explored automaton) equal the oracle."""
    c = Constraint(read_bench_grammar(name), qwen_vocab, cache_dir=False, compile="lazy",
                   progress=False)
    st = explore_mod.explore(c, 4, 120.0)
    assert st["explore_sentences"] == 4 * len(explore_mod.SHAPES) and st["explore_rejected"] == 0
    assert st["explore_states"] > 0
    c._masker.forget_masks()
    ahead.masks_ahead(c._masker)         # as a load would (the masks below start from them)
    text = explored_texts(c, 1)[0]
    s = c.start()
    steps = sorted(random.Random(name).sample(range(len(text) + 1), min(6, len(text) + 1)))
    for i in range(len(text) + 1):
        if i in steps:
            assert np.array_equal(c.get_mask(s), c.reference_mask(s)), (text, i)
        if i < len(text):
            s = c.commit_bytes(s, text[i:i + 1])


def test_grammars_with_special_token_terminals_are_not_explored():
    """The sentence generator lexes bytes; a special-token terminal has none, so such a
    grammar is not explored (compile_stats says why) and its masks are unchanged."""
    from test_tags import SPECIAL_GRAMMAR, small_vocab as tag_vocab
    v = tag_vocab()
    c = Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": 13}, cache_dir=False,
                   compile_budget_s=0, progress=False, explore_sentences=10,
                   explore_budget_s=60)
    st = c.compile_stats()
    assert st["explore_sentences"] == 0 and "special-token terminal 'X'" in st["explore_stopped"]
    s = c.start()
    for tok in (0, 13, 1, 2, 13, 3, 0):
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))
        s = c.commit(s, tok)
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def test_expand_partial_completes_walked_states_until_its_deadline():
    import time
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=False, compile="lazy", progress=False)
    s = c.start()
    for b in b'{"a": [1, true], "b": {}}':
        c.get_mask(s)
        s = c.commit_bytes(s, bytes([b]))
    d = c.compiled.dwa
    partial = [q for q in range(len(d.items)) if d.trans[q] and not d.complete[q]]
    assert partial
    assert d.expand_partial(time.perf_counter() - 1) == (0, False)
    n, done = d.expand_partial(time.perf_counter() + 60)
    assert done and n == len(partial)
    assert all(d.complete[q] for q in partial)
    c._masker.forget_masks()
    ahead.masks_ahead(c._masker)         # as a load would (the masks below start from them)
    s = c.start()
    for b in b'[{"ab": -1.5e2}, null, "\\n"]':
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))
        s = c.commit_bytes(s, bytes([b]))
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def test_exploration_stops_at_the_automaton_state_limit():
    """max_automaton_states reached while exploring: construction succeeds, the exploration
    stops and says why, and masks stay exact (new states past the limit raise on first use,
    as documented for any first use)."""
    from stackmask import LimitExceeded, Limits
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=False, compile_budget_s=0, progress=False,
                   explore_sentences=50, explore_budget_s=60,
                   limits=Limits(max_automaton_states=12))
    st = c.compile_stats()
    assert "max_automaton_states" in st["explore_stopped"]
    assert len(c.compiled.dwa.items) <= 12
    s = c.start()
    for b in b'[1, {"a": true}]':
        try:
            m = c.get_mask(s)
        except LimitExceeded:
            pass
        else:
            assert np.array_equal(m, c.reference_mask(s))
        s = c.commit_bytes(s, bytes([b]))
