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
