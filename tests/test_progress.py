"""The timing of progress lines: the first after a second, then one every 5 s."""

from __future__ import annotations

import types

import pytest

from stackmask import progress


def test_heartbeat_first_after_a_second_then_every_five(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    beat = progress.Heartbeat()
    off = progress.Heartbeat(enabled=False)
    due = []
    for t in (100.5, 101.0, 101.2, 104.0, 106.1, 106.3, 111.2, 111.4):
        now[0] = t
        due.append(beat.due())
        assert off.due() is None
    # at 101.0 a second has not passed; 106.1 is 4.9 s after the line at 101.2
    assert due == [None, None, pytest.approx(1.2), None, None, pytest.approx(6.3), None,
                   pytest.approx(11.4)]
    assert beat.elapsed() == pytest.approx(11.4) and off.elapsed() == pytest.approx(11.4)


def test_slow_tables_say_what_they_are_doing(monkeypatch, caplog):
    """A construction whose tables take over a second logs while they are built (at the
    stages' checks) and when they are done."""
    import logging
    from stackmask import Constraint, Vocab
    from stackmask.compile import tables as tables_mod
    build = tables_mod._build_tables

    def slow(grammar, ambiguous, check, band, cap):
        def slow_check():
            now[0] += 0.7              # each stage "takes" 0.7 s
            check()
        return build(grammar, ambiguous, slow_check, band, cap)
    now = [0.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(tables_mod, "_build_tables", slow)
    import stackmask.compile as comp
    real = comp.time.perf_counter
    monkeypatch.setattr(comp, "time", types.SimpleNamespace(perf_counter=lambda: real() + now[0]))
    vocab = Vocab([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
    with caplog.at_level(logging.INFO, logger="stackmask"):
        Constraint('start: "a"+\n', vocab, cache_dir=False)
    msgs = [r.getMessage() for r in caplog.records]
    assert any("building the lexer and LR tables" in m for m in msgs), msgs
    assert any("lexer and LR tables built in" in m for m in msgs), msgs
    with caplog.at_level(logging.INFO, logger="stackmask"):
        caplog.clear()
        now[0] = 0.0
        Constraint('start: "a"+\n', vocab, cache_dir=False, progress=False)
    assert not any("tables" in r.getMessage() for r in caplog.records)
