"""Resource limits: hard bounds that raise :class:`stackmask.LimitExceeded`.

``Constraint(grammar, vocab, limits=stackmask.Limits(...))``. Every field may
be ``None`` (no limit). These are *hard* limits: exceeding one raises, unlike
``compile_budget_s``, the *soft* compile budget after which the rest of the
automaton is compiled on first use.

Memory is measured without extra dependencies: the process's resident set
(``/proc/self/statm``; elsewhere the peak from ``resource.getrusage``),
counted from the start of the compile, sampled at most every 50 ms between
compile steps. Time and memory are checked between compile steps (one lexer
configuration, one automaton state, one stage of the grammar tables), so a
single step can overshoot them a little; none is interrupted midway.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import LimitExceeded

__all__ = ["Limits", "CompileGuard", "rss_bytes", "release_free_memory", "deep_recursion",
           "RECURSION_DEPTH"]

#: Python's recursion limit while regexes and schemas are converted (:func:`deep_recursion`):
#: their converters recurse over the nesting of the input, and generated regexes nest
#: deeply (a lookahead's difference written back as a regex nests once per length:
#: ``^(?!aws:).{0,256}$``). Deep enough for those, shallow enough for the C stack.
RECURSION_DEPTH = 12_000

_depth_lock = threading.Lock()
_depth_users = 0
_depth_saved = 0


@contextmanager
def deep_recursion():
    """Raise Python's recursion limit to :data:`RECURSION_DEPTH` (never lower it) for the
    block; the previous limit comes back when the last block using it ends (the limit is
    per interpreter, so nested and concurrent blocks share one raise)."""
    global _depth_users, _depth_saved
    with _depth_lock:
        if _depth_users == 0:
            _depth_saved = sys.getrecursionlimit()
            if _depth_saved < RECURSION_DEPTH:
                sys.setrecursionlimit(RECURSION_DEPTH)
        _depth_users += 1
    try:
        yield
    finally:
        with _depth_lock:
            _depth_users -= 1
            if _depth_users == 0 and sys.getrecursionlimit() == max(_depth_saved, RECURSION_DEPTH):
                sys.setrecursionlimit(_depth_saved)


@dataclass(frozen=True)
class Limits:
    """Hard resource limits (``None``: unlimited). See the README, "Limits and errors"."""

    #: wall-clock seconds ``Constraint(...)`` may spend compiling (tables + automaton).
    max_compile_seconds: float | None = None
    #: growth of the process's resident memory during the compile, in bytes (8 GiB).
    max_compile_memory_bytes: int | None = 8 << 30
    #: states of the mask automaton, compiled up front or on first use.
    max_automaton_states: int | None = 1_000_000
    #: states of the lexer automaton, all lexer modes together (one terminal's own
    #: automaton is limited to ``stackmask.lexer.MAX_DFA_STATES``, 100,000). Every lexer
    #: state a token can end in is configurations the mask automaton compiles: a lexer of
    #: 100,000-200,000 states (JSON Schema strings with lengths beside wide Unicode
    #: classes) takes 15-65 s and 1-5 GB to compile on a 2-core machine
    #: (benchmarks/RESULTS.md). Past it ``Constraint`` raises ``LexerTooLarge`` (a
    #: ``GrammarError`` and a ``LimitExceeded``) naming the largest terminal automata.
    max_lexer_states: int | None = 200_000
    #: work of one GLR reduction pass in ``commit`` (GSS links followed and added while
    #: reducing for one terminal at one position); highly ambiguous grammars grow it
    #: quadratically with the text.
    max_gss_work: int | None = 2_000_000
    #: terminal sequences one token may lex into from one lexer configuration (each
    #: lexically ambiguous lexeme inside the token doubles them; the compile follows each).
    max_token_sequences: int | None = 4096

    def __post_init__(self):
        for name in ("max_compile_seconds", "max_compile_memory_bytes", "max_automaton_states",
                     "max_lexer_states", "max_gss_work", "max_token_sequences"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise ValueError(f"Limits.{name} must be a non-negative number or None, not {v!r}")


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident memory of this process in bytes (peak resident memory where
    ``/proc`` is not available)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        import resource
        import sys
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r if sys.platform == "darwin" else r * 1024


_LIBC = None


def release_free_memory() -> int:
    """Hand the C allocator's free memory back to the system (glibc's ``malloc_trim``; a
    no-op where it is missing): after a large construction the process would otherwise
    keep the resident memory of its peak. Returns the resident bytes released (0 where
    not available)."""
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes
            import ctypes.util
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC = lib if hasattr(lib, "malloc_trim") else False
        except (OSError, AttributeError):
            _LIBC = False
    if not _LIBC:
        return 0
    before = rss_bytes()
    _LIBC.malloc_trim(0)
    return max(0, before - rss_bytes())


class CompileGuard:
    """Checks the compile-time limits; ``check()`` is cheap (a clock read; memory
    is sampled at most every ``interval`` seconds)."""

    __slots__ = ("limits", "t0", "deadline", "rss0", "max_rss", "interval", "_next_mem", "grown")

    INTERVAL = 0.05     # seconds between memory samples

    def __init__(self, limits: Limits, interval: float | None = None):
        self.limits = limits
        self.t0 = time.monotonic()
        s = limits.max_compile_seconds
        self.deadline = None if s is None else self.t0 + s
        m = limits.max_compile_memory_bytes
        self.rss0 = rss_bytes() if m is not None else 0
        self.max_rss = m
        self.interval = self.INTERVAL if interval is None else interval
        self._next_mem = self.t0
        self.grown = 0          # resident memory grown at the last sample

    def check(self) -> None:
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise LimitExceeded("max_compile_seconds", round(now - self.t0, 3),
                                self.limits.max_compile_seconds, "compile took too long",
                                "compile_budget_s is the soft alternative: it compiles the rest "
                                "on first use instead of failing")
        if self.max_rss is not None and now >= self._next_mem:
            self._next_mem = now + self.interval
            grown = self.grown = rss_bytes() - self.rss0
            if grown > self.max_rss:
                raise LimitExceeded("max_compile_memory_bytes", grown, self.max_rss,
                                    "compile used too much memory",
                                    "resident memory grown since the compile started")

    def soft_memory_used_up(self) -> bool:
        """The memory grown at the last sample of :meth:`check` is over half of
        ``max_compile_memory_bytes``: a compile with a soft budget stops there."""
        return self.max_rss is not None and self.grown > self.max_rss // 2
