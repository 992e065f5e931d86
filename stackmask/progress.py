"""When a long task says what it is doing: one rule for every progress line.

A task that can take over a second logs (INFO, ``stackmask`` logger) a first line after a
second, then one every 5 s; :class:`Heartbeat` decides when, the task words the line.
"""

from __future__ import annotations

import time


class Heartbeat:
    """The clock of one task's progress lines. :meth:`due` says whether a line is due now
    (and counts it as written); ``enabled=False`` never makes one due."""

    FIRST_S = 1.0       # the first line, this long after the start
    EVERY_S = 5.0       # then one at most this often

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.started = self._last = time.monotonic()

    def elapsed(self) -> float:
        """Seconds since the task started."""
        return time.monotonic() - self.started

    def due(self) -> float | None:
        """The seconds since the start when a line is due now, else None."""
        if not self.enabled:
            return None
        now = time.monotonic()
        if now - self._last > (self.FIRST_S if self._last == self.started else self.EVERY_S):
            self._last = now
            return now - self.started
        return None
