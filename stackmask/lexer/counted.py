"""Counted repetitions far longer than any token: a representative automaton with stalls.

A terminal ``P x{lo,hi} S`` with ``lo`` or ``hi - lo`` in the thousands (a JSON string
with ``maxLength: 65535``, ``/a{1,20000}/``) would need one copy of ``x``'s states per
count. No token can tell most counts apart: a token of at most ``L`` bytes completes at
most ``L`` iterations of ``x`` (``x`` reads at least one byte), so a count farther than
``L`` from both bounds behaves, for every token, like any other such count. With the
*band* ``K > L``:

* the DFA is built for the *representative* ``P x{lo',hi'} S`` with ``lo' = min(lo, 2K)``
  and ``hi' - lo' = min(hi - lo, 2K)`` (copies of ``x`` numbered by the iterations done);
* a *stall* sits where a run of counts was cut out: at copy ``m = K`` when ``lo > 2K``
  (``lo - 2K`` iterations cut) and at copy ``m = lo' + K`` when ``hi - lo > 2K``. The
  lexer keeps, next to the DFA state, how many iterations the current stall still owes
  (``r``). Completing an iteration of copy ``m`` while ``r > 0`` *rewinds* to the start
  of copy ``m`` (a pseudo-transition of the DFA) and decrements ``r``; arriving at copy
  ``m`` from copy ``m - 1`` sets ``r`` to the iterations cut.

So the scanner is exact for every count, while the automaton has at most ``4K`` copies.
For the masks the owed iterations do not matter: a configuration in a stall behaves,
for every token of at most ``L < K`` bytes, like the plain DFA state (the representative
from copy ``m`` is at least ``K`` iterations from both of its bounds), which is what
construction compiles (:meth:`stackmask.lexer.scanner.Scanner.mask_rep`).

The construction needs iteration boundaries the DFA can see: ``x`` must be a prefix code
(no word of ``x`` is a proper prefix of another, e.g. JSON string characters and escapes,
UTF-8 code points) that does not match the empty string, and no DFA state may mix two
copies (``P`` or ``S`` overlapping ``x``). Otherwise :func:`counted_dfa` returns None and
the repetition is expanded as written (within the lexer's size limits).

A DFA with stalls carries ``counters = (band, owed, rewind, tags)``: per stall the
iterations cut (``owed``), per state and stall the rewind target (``-1``: none) and a tag
(``IN``: in the stall's copy, ``LEFT``: just completed an iteration of it).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .fsa import Nfa, TooManyStates, determinize, group_rows, minimize, trim
from .ir import nullable, thompson

__all__ = ["DEFAULT_BAND", "IN", "LEFT", "split_counted", "counted_dfa"]

#: the band when no vocabulary is known (longer than the longest token of common
#: vocabularies: Qwen2.5's is 128 bytes); a constraint uses its vocabulary's longest
#: token + 1
DEFAULT_BAND = 256

IN, LEFT = 1, 2


def _flatten(x) -> list:
    if x[0] == "s":
        out = []
        for y in x[1]:
            out.extend(_flatten(y))
        return out
    return [x]


def split_counted(x, band: int):
    """``(P, x, lo, hi, S)`` when the regex IR ``x`` is a sequence with exactly one
    repetition whose bounds need a stall (``lo > 2K`` or ``hi - lo > 2K``) at its top
    level, else None."""
    parts = _flatten(x)
    big = [i for i, y in enumerate(parts) if y[0] == "r" and
           (y[2] > 2 * band or (y[3] is not None and y[3] - y[2] > 2 * band))]
    if len(big) != 1:
        return None
    i = big[0]
    _, body, lo, hi = parts[i]
    return ("s", tuple(parts[:i])), body, lo, hi, ("s", tuple(parts[i + 1:]))


def _prefix_code(body, new_nfa: Callable[[], Nfa], leaf_of) -> bool:
    """Whether ``body`` reads at least one byte and none of its words is a proper
    prefix of another (iteration boundaries are then visible in the DFA)."""
    if nullable(body):
        return False
    nfa = new_nfa()
    nfa.start = nfa.new()
    nfa.final = thompson(body, nfa, nfa.start, leaf_of(nfa))
    trans, _, acc = determinize(nfa, 256, 10_000)
    t, old = trim(trans, acc)
    acc = acc[old]
    return not bool(((t >= 0).any(axis=1) & acc).any())


def counted_dfa(x, band: int, new_nfa: Callable[[], Nfa], leaf_of, max_states: int):
    """The DFA of the regex IR ``x`` with stalls (module doc) as
    ``(trans over byte classes, byte -> class, accepting, counters)``, or None when ``x``
    has no repetition that needs one or its iterations cannot be counted. ``new_nfa()``
    makes an empty NFA, ``leaf_of(nfa)`` its leaf for :func:`.ir.thompson`. Raises
    :class:`TooManyStates` past ``max_states``."""
    sp = split_counted(x, band)
    if sp is None:
        return None
    pre, body, lo, hi, post = sp
    try:
        if not _prefix_code(body, new_nfa, leaf_of):
            return None
    except TooManyStates:
        return None
    k = band
    stalls = []                                  # (copy m, iterations cut)
    if lo > 2 * k:
        lo2 = 2 * k
        stalls.append((k, lo - 2 * k))
    else:
        lo2 = lo
    if hi is None:
        hi2 = None
    elif hi - lo > 2 * k:
        hi2 = lo2 + 2 * k
        stalls.append((lo2 + k, hi - lo - 2 * k))
    else:
        hi2 = lo2 + hi - lo
    nfa = new_nfa()
    leaf = leaf_of(nfa)
    nfa.start = nfa.new()
    cur = thompson(pre, nfa, nfa.start, leaf)
    heads = [cur]
    copy_of: dict[int, int] = {}
    stride = None
    for j in range(lo2 if hi2 is None else hi2):
        n0 = nfa.n_states
        cur = thompson(body, nfa, cur, leaf)
        width = nfa.n_states - n0
        if stride is None:
            stride = width
        elif width != stride or not n0 <= cur < nfa.n_states:
            return None
        for s in range(n0, nfa.n_states):
            copy_of[s] = j
        copy_of[cur] = j + 1
        heads.append(cur)
    join = nfa.new()
    if hi2 is None:
        n0 = nfa.n_states
        end = thompson(("r", body, 0, None), nfa, cur, leaf)
        for s in range(n0, nfa.n_states):
            copy_of[s] = lo2
        nfa.eps[end].append(join)
    else:
        for j in range(lo2, hi2 + 1):
            nfa.eps[heads[j]].append(join)
    nfa.final = thompson(post, nfa, join, leaf)
    subsets: list = []
    trans, b2c, acc = determinize(nfa, 256, max_states, keep=heads, subsets_out=subsets)
    n = len(subsets)
    ns = len(stalls)
    tags = np.zeros((n, ns), dtype=np.int8)
    rewind = np.full((n, ns), -1, dtype=np.int32)
    copy = np.full(n, -1, dtype=np.int64)        # the copy a state is in (-1: P or S)
    ids = {sub: i for i, sub in enumerate(subsets)}
    for i, sub in enumerate(subsets):
        copies = {copy_of[s] for s in sub if s in copy_of}
        if len(copies) > 1:
            return None                          # a state in two copies: no count
        if not copies:
            continue
        (c,) = copies
        copy[i] = c
        for si, (m, _) in enumerate(stalls):
            if c == m:
                tags[i, si] = IN
            elif c == m + 1 and heads[m + 1] in sub:
                tags[i, si] = LEFT
                back = tuple(sorted(s - stride if copy_of.get(s) == m + 1 else s for s in sub))
                r = ids.get(back)
                if r is None:
                    return None
                rewind[i, si] = r
    full = np.concatenate([trans, rewind], axis=1)
    t, old = trim(full, acc)
    if t.shape[0] == 0:
        return None
    acc, tags, copy = acc[old], tags[old], copy[old]
    # states of two copies are never equivalent (x a prefix code: the iterations a word
    # makes are fixed, and from two copies they must reach a bound in different numbers;
    # every copy past lo' of an unbounded one is the same copy): as a label, the copy
    # lets a few rounds of refinement settle the chain of copies
    order, bounds = group_rows(np.concatenate([acc[:, None].astype(np.int64),
                                               tags.astype(np.int64), copy[:, None]], axis=1))
    labels = np.empty(len(acc), dtype=np.int64)
    for u in range(len(bounds) - 1):
        labels[order[bounds[u]:bounds[u + 1]]] = u
    t2, old2 = minimize(t, labels)
    nc = trans.shape[1]
    counters = (band, tuple(d for _, d in stalls), np.ascontiguousarray(t2[:, nc:]),
                np.ascontiguousarray(tags[old2]))
    return np.ascontiguousarray(t2[:, :nc]), b2c, acc[old2], counters
