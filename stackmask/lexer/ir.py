"""The regex IR: regular expressions over sets of Unicode code points, as hashable tuples,
and the one Thompson construction that turns them into an :class:`~.fsa.Nfa`.

::

    ("c", intervals)          one character from a set of code points
    ("s", (x, y, ...))        concatenation; ("s", ()) is the empty string
    ("a", (x, y, ...))        alternation;   ("a", ()) matches nothing
    ("r", x, lo, hi)          repetition x{lo,hi}; hi None = unbounded
    ("L", x, lo, hi)          the words of x with lo..hi characters (hi None: no bound),
                              where spelling them out would be too large (the JSON
                              Schema front end's ``maxLength`` beside a ``pattern``)
    ("X", x, ((pos, y), ...)) the words of x that are (``pos``) or are not words of each y
                              (lookaheads too large to write out as a regex)

``intervals`` is a sorted tuple of disjoint, non-adjacent inclusive ``(lo, hi)`` code
point ranges; surrogates (U+D800..U+DFFF) are never members. ``"L"`` and ``"X"`` have no
Thompson automaton and stand only at the top of a string's IR: the ECMA front end resolves
them on its DFAs, the lexer reads them as lookaheads (positive and negative)
(:func:`stackmask.grammars.ecma_regex.to_json_string`). The constructors
(:func:`ch`, :func:`seq`, :func:`alt`, :func:`rep`) simplify lightly; plain tuples are
as valid (the lexer builds them so, to keep the NFA of a pattern as the pattern is
written). :func:`thompson` emits a character set through a callback: UTF-8 byte
sequences for the lexer (:mod:`.regex`), code point atoms for the ECMA front end's
Boolean operations (:mod:`stackmask.grammars.ecma_regex`).
"""

from __future__ import annotations

import bisect
from typing import Callable

from ..wfa.fsa import Nfa

__all__ = ["MAX_CP", "SURR_LO", "SURR_HI", "Intervals", "normalize_intervals",
           "complement_intervals", "iv_intersect", "iv_union", "iv_contains", "UNIVERSE",
           "EPS", "NONE", "ANY", "ANYSTAR", "ch", "lit", "seq", "alt", "rep", "nullable",
           "length_range", "completion_bounds", "nodes", "has_node", "ast_size", "cap_repeats",
           "thompson", "nfa_size"]

MAX_CP = 0x10FFFF
SURR_LO, SURR_HI = 0xD800, 0xDFFF

Intervals = tuple[tuple[int, int], ...]  # sorted, disjoint, non-adjacent, inclusive, no surrogates


# --------------------------------------------------------------------------
# code point sets
# --------------------------------------------------------------------------

def normalize_intervals(ivs) -> Intervals:
    """Sort, merge, and remove surrogates from inclusive intervals."""
    out: list[list[int]] = []
    for lo, hi in sorted(ivs):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1][1] = hi
        else:
            out.append([lo, hi])
    res: list[tuple[int, int]] = []
    for lo, hi in out:
        if hi < SURR_LO or lo > SURR_HI:
            res.append((lo, hi))
        else:
            if lo < SURR_LO:
                res.append((lo, SURR_LO - 1))
            if hi > SURR_HI:
                res.append((SURR_HI + 1, hi))
    return tuple(res)


def complement_intervals(ivs: Intervals) -> Intervals:
    out = []
    nxt = 0
    for lo, hi in ivs:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return normalize_intervals(out)


def iv_intersect(a, b) -> tuple:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def iv_union(a, b) -> tuple:
    return normalize_intervals(list(a) + list(b))


def iv_contains(ivs, c: int) -> bool:
    i = bisect.bisect_right(ivs, (c, MAX_CP + 1)) - 1
    return i >= 0 and ivs[i][0] <= c <= ivs[i][1]


UNIVERSE = normalize_intervals([(0, MAX_CP)])


# --------------------------------------------------------------------------
# constructors (with light simplification)
# --------------------------------------------------------------------------

EPS = ("s", ())
NONE = ("a", ())


def ch(ivs) -> tuple:
    ivs = normalize_intervals(ivs)
    return ("c", ivs) if ivs else NONE


def lit(text: str) -> tuple:
    return seq(*[("c", ((ord(c), ord(c)),)) for c in text]) if text else EPS


ANY = ("c", UNIVERSE)


def seq(*xs) -> tuple:
    items = []
    for x in xs:
        if x == NONE:
            return NONE
        if x[0] == "s":
            items.extend(x[1])
        else:
            items.append(x)
    if len(items) == 1:
        return items[0]
    return ("s", tuple(items))


def alt(*xs) -> tuple:
    items: list = []
    chars = None
    has_eps = False
    for x in xs:
        stack = [x]
        while stack:
            y = stack.pop()
            if y[0] == "a":
                stack.extend(reversed(y[1]))
            elif y[0] == "c":
                chars = y[1] if chars is None else iv_union(chars, y[1])
            elif y == EPS:
                has_eps = True
            elif y not in items:
                items.append(y)
    if chars is not None:
        items.insert(0, ("c", chars))
    if has_eps:
        if not items:
            return EPS
        if any(nullable(y) for y in items):
            pass
        elif len(items) == 1:
            return rep(items[0], 0, 1)
        else:
            return rep(("a", tuple(items)), 0, 1)
    if not items:
        return NONE
    if len(items) == 1:
        return items[0]
    return ("a", tuple(items))


def rep(x, lo: int, hi) -> tuple:
    if hi is not None and hi < lo:
        return NONE
    if x == NONE:
        return EPS if lo == 0 else NONE
    if x == EPS or hi == 0:
        return EPS
    if lo == 1 and hi == 1:
        return x
    if x[0] == "r":
        _, y, a, b = x
        # (y{a,b}){lo,hi} with simple cases
        if a == 0 and b is None:
            return x
        if lo == 0 and hi is None and a <= 1:
            return ("r", y, 0, None)
        if a == 0 and b == 1 and lo == 0 and hi == 1:
            return x
    return ("r", x, lo, hi)


ANYSTAR = ("r", ANY, 0, None)


# --------------------------------------------------------------------------
# properties and rewrites
# --------------------------------------------------------------------------

def nullable(x) -> bool:
    k = x[0]
    if k == "c":
        return False
    if k == "s":
        return all(nullable(y) for y in x[1])
    if k == "a":
        return any(nullable(y) for y in x[1])
    if k == "L":
        return x[2] == 0 and nullable(x[1])
    if k == "X":
        return nullable(x[1]) and all(nullable(y) == pos for pos, y in x[2])
    return x[2] == 0 or nullable(x[1])


def length_range(x, memo: dict | None = None) -> tuple:
    """(min, max) number of characters; max None = unbounded. NONE -> (inf, -1).
    ``memo``: the ranges of the nodes already asked (by node identity, the node held), for
    a caller that asks for every subtree's range."""
    if memo is None:
        return _length_range(x, None)
    got = memo.get(id(x))
    if got is None:
        got = memo[id(x)] = (x, _length_range(x, memo))
    return got[1]


def _length_range(x, memo) -> tuple:
    k = x[0]
    if k == "c":
        return (1, 1)
    if k == "s":
        lo, hi = 0, 0
        for y in x[1]:
            a, b = length_range(y, memo)
            if b == -1:
                return (float("inf"), -1)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return (lo, hi)
    if k == "a":
        if not x[1]:
            return (float("inf"), -1)
        rs = [length_range(y, memo) for y in x[1]]
        rs = [r for r in rs if r[1] != -1]
        if not rs:
            return (float("inf"), -1)
        lo = min(r[0] for r in rs)
        hi = None if any(r[1] is None for r in rs) else max(r[1] for r in rs)
        return (lo, hi)
    if k == "X":                 # the body's and the positive lookaheads' ranges met
        lo, hi = length_range(x[1], memo)
        for pos, y in x[2]:
            if pos and hi != -1:
                a, b = length_range(y, memo)
                if b == -1:
                    return (float("inf"), -1)
                lo, hi = max(lo, a), (b if hi is None else hi if b is None else min(hi, b))
        return (float("inf"), -1) if hi is not None and hi != -1 and hi < lo else (lo, hi)
    _, y, a, b = x
    ylo, yhi = length_range(y, memo)
    if k == "L":
        lo = max(ylo, a)
        hi = b if yhi is None else (yhi if b is None else min(yhi, b))
        return (float("inf"), -1) if yhi == -1 or (hi is not None and hi < lo) else (lo, hi)
    if yhi == -1:
        return (0, 0) if a == 0 else (float("inf"), -1)
    hi = None if (b is None and yhi != 0) or yhi is None else yhi * (b if b is not None else 0)
    return (ylo * a, hi)


def completion_bounds(x) -> tuple[int, int]:
    """``(need, fin)`` over the positions inside ``x``'s words (IR of ``c s a r`` nodes):
    ``need`` bounds the fewest characters that complete a word from any position, ``fin``
    the most from any position whose completions are all bounded (0 when there is none).
    Upper bounds (an alternation takes the larger side's). A counted chain intersected with
    ``x`` keeps counts this near its bounds as positions of their own (:mod:`.counted`)."""
    # every level asks for its items' length ranges: one memo for the call (without it,
    # each subtree was walked once per level above it, seconds on a written-out regex)
    return _completion(x, {})


def _completion(x, memo: dict | None) -> tuple[int, int]:
    """:func:`completion_bounds` with the length ranges kept in ``memo`` (None: asked
    afresh at every level, the definition the memo is tested against)."""
    k = x[0]
    if k == "c":
        return 1, 1
    if k == "s":
        need = fin = 0
        lo_s, hi_s = 0, 0                       # the length range of the items after
        for y in reversed(x[1]):
            n, f = _completion(y, memo)
            need = max(need, n + lo_s)
            if hi_s is not None:
                fin = max(fin, f + hi_s)
            a, b = length_range(y, memo)
            if b == -1:
                return need, fin
            lo_s += a
            hi_s = None if hi_s is None or b is None else hi_s + b
        return need, fin
    if k == "a":
        got = [_completion(y, memo) for y in x[1]]
        return max((n for n, _ in got), default=0), max((f for _, f in got), default=0)
    if k == "r":
        _, y, lo, hi = x
        n, f = _completion(y, memo)
        a, b = length_range(y, memo)
        if b == -1:
            return 0, 0
        need = n + max(lo - 1, 0) * a
        if hi is None:
            return need, 0                      # every position can go on for ever
        return need, (f if b is None else hi * b)
    raise ValueError(f"regex IR node {k!r} has no completion bounds")


def nodes(x):
    """Every node of the IR ``x`` (character sets are leaves), in no set order. A walk with
    a stack: generated and written-out regexes nest hundreds deep."""
    todo = [x]
    while todo:
        y = todo.pop()
        yield y
        k = y[0]
        if k in ("s", "a"):
            todo.extend(y[1])
        elif k in ("r", "L"):
            todo.append(y[1])
        elif k == "X":
            todo.append(y[1])
            todo.extend(z for _, z in y[2])


def has_node(x, kinds) -> bool:
    """Whether the IR ``x`` holds a node whose kind is in ``kinds`` (outside character
    sets)."""
    return any(y[0] in kinds for y in nodes(x))


def ast_size(x) -> int:
    k = x[0]
    if k == "c":
        return 1
    if k in ("s", "a"):
        return 1 + sum(ast_size(y) for y in x[1])
    if k == "X":
        return 1 + ast_size(x[1]) + sum(ast_size(y) for _, y in x[2])
    return 1 + ast_size(x[1])


def cap_repeats(x, n: int) -> tuple:
    """Every unbounded repetition ``y{lo,}`` becomes ``y{lo,max(lo,n)}``."""
    k = x[0]
    if k == "c":
        return x
    if k == "s":
        return seq(*[cap_repeats(y, n) for y in x[1]])
    if k == "a":
        return alt(*[cap_repeats(y, n) for y in x[1]])
    if k == "L":
        return ("L", cap_repeats(x[1], n), x[2], x[3])
    if k == "X":                 # (a negative lookahead capped would accept more)
        raise ValueError("cap_repeats of a node with lookaheads")
    _, y, a, b = x
    y = cap_repeats(y, n)
    return rep(y, a, max(a, n) if b is None else b)


# --------------------------------------------------------------------------
# Thompson construction
# --------------------------------------------------------------------------

def thompson(x, nfa: Nfa, cur: int, leaf: Callable[[Intervals, int], int]) -> int:
    """Add the NFA of ``x`` to ``nfa`` from state ``cur``; returns its end state.
    ``leaf(intervals, cur)`` adds one character's moves from ``cur`` and returns the
    state they lead to. ``x{0,r}`` is built as ``(x(x(x)?)?)?``: every intermediate end
    may exit (the flat ``x?x?x?`` would put all r copies into one subset)."""
    k = x[0]
    if k == "c":
        return leaf(x[1], cur)
    if k == "s":
        for y in x[1]:
            cur = thompson(y, nfa, cur, leaf)
        return cur
    eps = nfa.eps
    if k == "a":
        join = nfa.new()
        for y in x[1]:
            end = thompson(y, nfa, cur, leaf)
            eps[end].append(join)
        return join
    if k != "r":
        raise ValueError(f"regex IR node {k!r} has no Thompson automaton")
    _, y, lo, hi = x
    for _ in range(lo):
        cur = thompson(y, nfa, cur, leaf)
    if hi is None:
        loop = nfa.new()
        eps[cur].append(loop)
        end = thompson(y, nfa, loop, leaf)
        eps[end].append(loop)
        out = nfa.new()
        eps[loop].append(out)
        return out
    if hi == lo:
        return cur
    join = nfa.new()
    for _ in range(hi - lo):
        eps[cur].append(join)
        cur = thompson(y, nfa, cur, leaf)
    eps[cur].append(join)
    return join


def nfa_size(x, leaf_size: Callable[[Intervals], int]) -> int:
    """The number of states :func:`thompson` adds for ``x`` (``leaf_size``: the states a
    leaf adds), without building anything."""
    k = x[0]
    if k == "c":
        return leaf_size(x[1])
    if k == "s":
        return sum(nfa_size(y, leaf_size) for y in x[1])
    if k == "a":
        return 1 + sum(nfa_size(y, leaf_size) for y in x[1])
    if k != "r":
        raise ValueError(f"regex IR node {k!r} has no Thompson automaton")
    _, y, lo, hi = x
    one = nfa_size(y, leaf_size)
    total = lo * one
    if hi is None:
        total += 2 + one
    elif hi > lo:
        total += 1 + (hi - lo) * one
    return total
