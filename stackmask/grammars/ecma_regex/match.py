"""Whether a string is in the language of a regex IR, read off the IR itself.

The schema converter asks this of short strings (property names against ``pattern``s and
``propertyNames``, ``const`` and ``enum`` values against string languages). Compiling the
IR with Python's ``re`` first costs up to a second for the large IRs that complements and
length limits make (24,776 characters of classes and alternatives for one CloudFormation
``propertyNames``), where reading the string through the IR takes microseconds.

:func:`fullmatch` follows the set of positions the string can be at after each node (a
Thompson simulation over the tree: a node maps a set of start positions to the set of end
positions), memoized per (node, starts) within one call. A repetition iterates its body
on exact position sets: a body that cannot match the empty string moves every position
forward, so the set empties within ``len(s) + 1`` rounds; one that can keeps every
position, so the sets only grow and reach a fixed point as fast. ``("L", y, lo, hi)``
keeps the ends of ``y`` that are ``lo..hi`` characters from their start; ``("X", y, looks)``
the ends of ``y`` that are (are not) ends of each lookahead from the same start. Equal to
``re.fullmatch(to_python(x), s, re.S)`` (tests/test_ecma_algebra.py compares them).
"""

from __future__ import annotations

from ...lexer.ir import iv_contains

__all__ = ["fullmatch"]


def fullmatch(x, s: str) -> bool:
    """Whether the IR ``x`` matches the whole of ``s`` (code point by code point)."""
    cps = [ord(c) for c in s]
    return len(cps) in _Run(cps).ends(x, frozenset((0,)))


class _Run:
    __slots__ = ("cps", "memo")

    def __init__(self, cps: list):
        self.cps = cps
        self.memo: dict = {}

    def ends(self, x, starts: frozenset) -> frozenset:
        if not starts:
            return starts
        key = (id(x), starts)
        got = self.memo.get(key)
        if got is not None:
            return got
        k = x[0]
        if k == "c":
            ivs, cps = x[1], self.cps
            got = frozenset(i + 1 for i in starts if i < len(cps) and iv_contains(ivs, cps[i]))
        elif k == "s":
            got = starts
            for y in x[1]:
                got = self.ends(y, got)
                if not got:
                    break
        elif k == "a":
            out = set()
            for y in x[1]:
                out |= self.ends(y, starts)
            got = frozenset(out)
        elif k == "r":
            got = self._repeat(x[1], x[2], x[3], starts)
        elif k == "L":
            _, y, lo, hi = x
            out = set()
            for i in starts:
                for e in self.ends(y, frozenset((i,))):
                    if lo <= e - i and (hi is None or e - i <= hi):
                        out.add(e)
            got = frozenset(out)
        elif k == "X":
            out = set()
            for i in starts:
                one = frozenset((i,))
                ends = set(self.ends(x[1], one))
                for pos, y in x[2]:
                    if not ends:
                        break
                    got_y = self.ends(y, one)
                    ends = ends & got_y if pos else ends - got_y
                out |= ends
            got = frozenset(out)
        else:
            raise ValueError(f"not a regex IR node: {k!r}")
        self.memo[key] = got          # (ids are stable: the caller holds the whole IR)
        return got

    def _repeat(self, body, lo: int, hi, starts: frozenset) -> frozenset:
        out = set()
        cur = starts
        k = 0
        while True:
            if k >= lo:
                out |= cur
            if (hi is not None and k >= hi) or not cur:
                break
            nxt = self.ends(body, cur)
            if nxt == cur:               # a fixed point: every later count reads the same
                out |= cur
                break
            cur = nxt
            k += 1
        return frozenset(out)
