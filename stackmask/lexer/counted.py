"""Counted repetitions far longer than any token: a chain of copies with stalls.

A terminal ``P x{lo,hi} S`` with bounds in the thousands (a JSON string with
``maxLength: 65535``, ``/a{1,20000}/``) would need one copy of ``x``'s states per count.
No token can tell most counts apart: a token of at most ``L`` bytes completes at most
``L`` iterations of ``x`` (``x`` reads at least one byte), so a count farther than ``L``
below every bound behaves, for every token, like any other such count. With the *band*
``K > L`` (:func:`split_counted` takes repetitions with ``lo > 2K`` or ``hi - lo > 2K``):

* the automaton is a chain of *positions*, one copy of ``x`` each: count 0 and every
  count at most ``K`` below a bound (``lo``, ``hi``) has a position of its own; each run
  of counts between those is a single position, a *stall*. Only the bounds ahead matter
  (a count only grows), so counts just past the start need no positions of their own:
  count 0 has one so that a stall is always entered from the copy before it (with an
  empty ``P`` the lexeme's start state is in copy 0), which is where it notes its owed
  iterations;
* arriving at a stall, the lexer notes the iterations the run still owes (its length - 1);
  completing an iteration there while some are owed follows a *rewind* (a
  pseudo-transition of the DFA) back to the stall's start and owes one less. So the
  scanner is exact for every count, while the automaton has at most ``K + 1`` positions
  per bound, whatever the bounds;
* terminals read together that share ``P`` and ``x`` (several JSON strings with different
  ``maxLength``) are one chain with one count (:func:`counted_group`), each exiting into
  its own ``S`` at its own counts: apart, the product of their automata would pair every
  count at which one stalls with every count of the other.

For the masks the owed iterations do not matter: from a stall every bound is more than
``K > L`` iterations ahead, in the chain as in the text, so a configuration in a stall
behaves for every token like the plain DFA state, which is what construction compiles
(:meth:`stackmask.lexer.scanner.Scanner.mask_rep`).

A chain intersected with another automaton (a length beside a pattern: the lexer meets a
lookahead's automaton with the rest of the terminal's, :mod:`.terminal_dfa`) pairs each count
with a state of the other side, and whether a pair can still finish depends on the room
the count leaves for what the other side needs. From a stall, the plain state stands for
every count of the stall: a token read from it ends in the positions below the next
bound, with less room than the text has. Such a chain keeps as positions the counts
within ``K + need`` below an upper bound (``need``: the most characters the other side
may still need to finish) and ``K + fin`` below a lower one (``fin``: the most it can
still read where that is bounded; :func:`reach_for`): a token read from a stall then
ends with room for whatever the other side needs, and where the other side cannot reach
a lower bound from a stall it cannot from the stall's exit either.

Counting needs iteration boundaries the DFA can see: ``x`` must be a prefix code (no word
of ``x`` is a proper prefix of another: JSON string characters and escapes, UTF-8 code
points) that does not match the empty string, and no DFA state may be in two copies (``P``
or ``S`` reading ``x``'s bytes). Otherwise the repetition is expanded as written (within
the lexer's size limits).

A DFA with stalls carries ``counters = (band, owed, rewind, tags)``: per stall the
iterations owed on arrival, per state and stall the rewind target (``-1``: none) and a tag
(``IN``: in the stall's copy, ``LEFT``: just completed an iteration of it).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..wfa.fsa import Nfa, TooManyStates, determinize
from ..wfa.reduction import minimize, row_labels, trim
from .ir import completion_bounds, nullable, thompson

__all__ = ["DEFAULT_BAND", "IN", "INF", "LEFT", "MIN_BAND", "Stalls", "class_of", "count_classes",
           "flatten", "needs_stall", "reach_for", "split_counted", "counted_group", "worth_chain",
           "MIN_CHAIN"]

#: the band when no vocabulary is known (longer than the longest token of common
#: vocabularies: Qwen2.5's is 128 bytes); a constraint uses its vocabulary's longest
#: token + 1
DEFAULT_BAND = 256

#: the least band a vocabulary gets (``stackmask.compile.counting_band``): repetitions up
#: to twice this stay expanded as written, whatever the vocabulary
MIN_BAND = 64

IN, LEFT = 1, 2

#: a count past every bound
INF = 1 << 62


class Stalls:
    """The lexer's step over *extended states* of a DFA with stalls: a DFA state, or
    ``(q, ((stall, owed), ...))`` for the stalls ``q`` is in that still owe iterations
    (none owed: the plain state). ``rows``: the DFA's transitions as lists;
    ``counters``: its :attr:`~.dfa.DFA.counters`."""

    __slots__ = ("rows", "owed", "rewind", "tags", "touch")

    def __init__(self, rows, counters):
        _, owed, rewind, tags = counters
        self.rows = rows
        self.owed = owed
        self.rewind = rewind.T.tolist()
        self.tags = tags.T.tolist()
        # per DFA state: the stalls it is tagged for
        self.touch = [tuple(np.flatnonzero(row).tolist()) if row.any() else ()
                      for row in tags != 0]

    def step(self, e, byte: int):
        """One byte from the extended state ``e``: the next extended state, or -1.
        Completing an iteration of a stall's copy while it owes some rewinds to the
        copy's start (one owed less); arriving at the copy from the one before notes
        what the stall owes."""
        if type(e) is int:
            q, owed = e, ()
        else:
            q, owed = e
        nq = self.rows[q][byte]
        if nq < 0:
            return -1
        touch = self.touch[nq]
        if not touch:
            return nq
        tags = self.tags
        out = []
        for s in touch:
            t = tags[s][nq]
            if t == LEFT:                 # an iteration of the stall's copy done
                r = 0
                for s2, r2 in owed:
                    if s2 == s:
                        r = r2
                if r > 0:
                    nq = self.rewind[s][nq]
                    if r > 1:
                        out.append((s, r - 1))
            elif tags[s][q] == IN:        # IN, and was in the copy: still owing as much
                for s2, r2 in owed:
                    if s2 == s:
                        out.append((s, r2))
            else:                         # IN, arrived from the copy before
                out.append((s, self.owed[s]))
        return (nq, tuple(out)) if out else nq


def flatten(x) -> list:
    """The items of the IR ``x`` read one after another: nested sequences spliced in."""
    if x[0] == "s":
        out = []
        for y in x[1]:
            out.extend(flatten(y))
        return out
    return [x]


def needs_stall(lo: int, hi, band: int) -> bool:
    """Whether a repetition ``{lo,hi}`` (hi None: unbounded) is counted with stalls."""
    return lo > 2 * band or (hi is not None and hi - lo > 2 * band)


#: a repetition with a bound at least this far from 0 is read as a chain even when every
#: count has a position of its own (no stall): its near states then get the masks of
#: deep or pinned ones instead of starts of their own (``stackmask.compile.count_split``)
MIN_CHAIN = 16


def worth_chain(lo: int, hi) -> bool:
    """Whether a repetition ``{lo,hi}`` is read as a chain of positions, stalled or not."""
    return lo >= MIN_CHAIN or (hi is not None and hi >= MIN_CHAIN)


def split_counted(x, band: int, any_bounds: bool = False):
    """``(P, x, lo, hi, S)`` when the regex IR ``x`` is a sequence with exactly one
    repetition whose bounds need a stall (``lo > 2K`` or ``hi - lo > 2K``) at its top
    level, else None. ``any_bounds``: exactly one repetition at the top level, of any
    bounds (a terminal that can join a counted one's chain)."""
    parts = flatten(x)
    big = [i for i, y in enumerate(parts)
           if y[0] == "r" and (any_bounds or needs_stall(y[2], y[3], band))]
    if len(big) != 1:
        return None
    i = big[0]
    _, body, lo, hi = parts[i]
    return ("s", tuple(parts[:i])), body, lo, hi, ("s", tuple(parts[i + 1:]))


def reach_for(others) -> tuple[int, int]:
    """The ``reach`` of a chain intersected with automata of the IRs ``others`` (module
    doc): the most characters any of them can still read where that is bounded, and the
    most any may still need (:func:`~.ir.completion_bounds`, in characters of the text,
    at least as many as the chain counts)."""
    fin = need = 0
    for x in others:
        n, f = completion_bounds(x)
        need, fin = max(need, n), max(fin, f)
    return fin, need


def _positions(members, k: int, reach: tuple = ()):
    """The chain of a group's counts: ``(first count, last count)`` per position, count 0
    and every count near a member's bound (``K`` below it; with the member's ``reach``
    ``(fin, need)``, ``K + fin`` below its lower bound and ``K + need`` below its upper
    one) a position of its own, each run of counts between them one position (a stall);
    and whether the chain ends in a loop (a member without upper bound)."""
    near: set[int] = {0}
    unbounded = False
    for i, (_, _, lo, hi, _) in enumerate(members):
        fin, need = reach[i] if i < len(reach) else (0, 0)
        near.update(range(max(0, lo - k - fin), lo + 1))
        if hi is None:
            unbounded = True
        else:
            near.update(range(max(0, hi - k - need), hi + 1))
    out = []
    prev = -1
    for c in sorted(near):          # a stall for each run between counts near a bound
        if c > prev + 1:            # (walked by the near counts: a bound may be 2**31 - 1)
            out.append((prev + 1, c - 1))
        out.append((c, c))
        prev = c
    return out, unbounded


def counted_group(members, band: int, new_nfa: Callable[[], Nfa], leaf_of, max_states: int,
                  reach: tuple = ()):
    """One DFA for terminals ``P x{lo_i,hi_i} S_i`` that share ``P`` and ``x``
    (``members``: :func:`split_counted` tuples): one chain of copies of ``x`` for all of
    them, with a position per count near any member's bound and a stall for each run of
    counts between (module doc). Terminals read together share their count, so their
    stalls never need to be combined with each other. ``reach``: per member (the first
    ones; none for the others) more positions below its lower and upper bounds, for a
    member that will be intersected with an automaton that needs characters of its own
    (:func:`reach_for`). Returns ``(trans over byte classes, byte -> class, accepts: per
    state the frozenset of member positions, counters, chain)`` (``chain``:
    :func:`_chain`, or None) or None when the iterations cannot be counted."""
    pre, body = members[0][0], members[0][1]
    if any(m[0] != pre or m[1] != body for m in members):
        raise ValueError("a counted group shares its prefix and repeated body")
    steps = _x_steps(body, new_nfa, leaf_of)
    if steps is None:
        return None
    positions, unbounded = _positions(members, band, reach)
    nfa = new_nfa()
    leaf = leaf_of(nfa)
    nfa.start = nfa.new()
    cur = thompson(pre, nfa, nfa.start, leaf)
    heads = [cur]
    copy_of: dict[int, int] = {}
    template = _copy_template(steps)
    stride = 0
    for j in range(len(positions) - 1):
        n0 = nfa.n_states
        cur = _copy(nfa, template, cur)
        stride = nfa.n_states - n0       # the same for every copy (x's automaton, numbered alike)
        for q in range(n0, nfa.n_states):
            copy_of[q] = j
        copy_of[cur] = j + 1
        heads.append(cur)
    last = len(positions) - 1
    loop_end = None
    if unbounded:
        n0 = nfa.n_states
        loop_end = thompson(("r", body, 0, None), nfa, cur, leaf)
        for q in range(n0, nfa.n_states):
            copy_of[q] = last
    finals = []
    for _, _, lo, hi, post in members:
        join = nfa.new()
        for j, (a, b) in enumerate(positions):
            if a >= lo and (hi is None or b <= hi):
                nfa.eps[heads[j]].append(join)
        if hi is None:
            nfa.eps[loop_end].append(join)
        finals.append(thompson(post, nfa, join, leaf))
    nfa.final = finals[0]
    stalls = [(j, b - a) for j, (a, b) in enumerate(positions) if b > a]
    subsets: list = []
    trans, b2c, _ = determinize(nfa, 256, max_states, keep=heads + finals, subsets_out=subsets)
    n = len(subsets)
    ns = len(stalls)
    tags = np.zeros((n, ns), dtype=np.int8)
    rewind = np.full((n, ns), -1, dtype=np.int32)
    copy = np.full(n, -1, dtype=np.int64)        # the copy a state is in (-1: P or S)
    ids = {sub: i for i, sub in enumerate(subsets)}
    final_of = {f: i for i, f in enumerate(finals)}
    accepts = [frozenset(final_of[q] for q in sub if q in final_of) for sub in subsets]
    for i, sub in enumerate(subsets):
        copies = {copy_of[q] for q in sub if q in copy_of}
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
                back = tuple(sorted(q - stride if copy_of.get(q) == m + 1 else q for q in sub))
                r = ids.get(back)
                if r is None:
                    return None
                rewind[i, si] = r
    acc_any = np.array([bool(a) for a in accepts], dtype=bool)
    full = np.concatenate([trans, rewind], axis=1)
    t, old = trim(full, acc_any)
    if t.shape[0] == 0:
        return None
    # for the masks (:func:`_chain`): the chain's copy of each state, the state right after
    # ``P`` (``x``'s first moves leave it, so it holds no state of copy 0) in copy 0; and
    # whether it is the head of its copy (between two iterations)
    ccopy = np.array([0 if c < 0 and heads[0] in subsets[o] else c
                      for o, c in zip(old.tolist(), copy[old].tolist())], dtype=np.int64)
    head = np.array([c >= 0 and heads[c] in subsets[o] for o, c in zip(old.tolist(), ccopy.tolist())],
                    dtype=bool)
    tags, copy = tags[old], copy[old]
    accepts = [accepts[o] for o in old.tolist()]
    acc_ids: dict = {}
    acc_col = np.array([acc_ids.setdefault(a, len(acc_ids)) for a in accepts], dtype=np.int64)
    # states of two copies are never equivalent (x a prefix code: the iterations a word
    # makes are fixed, and from two copies they must reach a bound in different numbers;
    # every copy past the last bound of an unbounded chain is the same copy): as a label,
    # the copy lets a few rounds of refinement settle the chain
    labels = row_labels(np.concatenate([acc_col[:, None], tags.astype(np.int64), copy[:, None]],
                                       axis=1))
    t2, old2 = minimize(t, labels)
    nc = trans.shape[1]
    counters = (band, tuple(d for _, d in stalls), np.ascontiguousarray(t2[:, nc:]),
                np.ascontiguousarray(tags[old2])) if stalls else ()
    accepts2 = tuple(accepts[o] for o in old2.tolist())
    chain = _chain(members, positions, unbounded, np.ascontiguousarray(t2[:, :nc]), b2c,
                   ccopy[old2], head[old2], accepts2, steps)
    return np.ascontiguousarray(t2[:, :nc]), b2c, accepts2, counters, chain


def _copy_template(steps) -> list:
    """The moves of one copy of ``x`` from its minimized automaton (:func:`_x_steps`), per
    state (0: the copy's head, where it is entered) as ``(lo, hi, target)`` byte ranges,
    targets numbered from the copy's first fresh state: its inner states, then its end
    (the next copy's head). A chain's copies are this automaton, not ``x``'s Thompson
    automaton: the same language in fewer states and no epsilon moves (a JSON string
    character: 25 states and 79 ranges instead of 65 states, 126 ranges and 16 epsilon
    moves), which the subset construction reads per count."""
    nxt, done = steps
    k = nxt.shape[0]
    out = []
    for q in range(k):
        # targets: inner state i (1..k-1) -> i - 1, a completed iteration -> k - 1 (the end)
        row = np.where(done[q], k, nxt[q]).astype(np.int64)
        cut = np.flatnonzero(np.diff(row)) + 1
        los = np.concatenate([[0], cut])
        his = np.concatenate([cut, [256]]) - 1
        out.append([(int(a), int(b), int(row[a]) - 1) for a, b in zip(los.tolist(), his.tolist())
                    if row[a] >= 0])
    return out


def _copy(nfa: Nfa, template: list, cur: int) -> int:
    """One copy of ``x`` (:func:`_copy_template`) entered from ``cur``; returns its end."""
    base = nfa.n_states
    width = len(template)
    if base + width > nfa.limit:
        raise TooManyStates(base + width)
    nfa.edges[cur].extend((lo, hi, base + t) for lo, hi, t in template[0])
    nfa.eps.extend([] for _ in range(width))
    nfa.edges.extend([(lo, hi, base + t) for lo, hi, t in moves] for moves in template[1:])
    nfa.edges.append([])
    return base + width - 1


def _x_steps(body, new_nfa: Callable[[], Nfa], leaf_of):
    """The iterations of ``body`` as a byte automaton: ``(next, done)``, per state (0:
    between iterations) and byte the next state (-1: none; 0 after a byte that completes
    an iteration) and whether the byte completes one. None unless ``body`` reads at least
    one byte and none of its words is a proper prefix of another (iteration boundaries
    are then visible in the DFA: the repetition can be counted), or past 10,000 states."""
    if nullable(body):
        return None
    nfa = new_nfa()
    nfa.start = nfa.new()
    nfa.final = thompson(body, nfa, nfa.start, leaf_of(nfa))
    try:
        trans, b2c, acc = determinize(nfa, 256, 10_000)
    except TooManyStates:
        return None
    t, old = trim(trans, acc)
    acc = acc[old]
    if ((t >= 0).any(axis=1) & acc).any():
        return None                                 # a word that goes on: no prefix code
    t, old2 = minimize(t, acc.astype(np.int64))
    acc = acc[old2]
    full = np.take(t, b2c, axis=1)
    ids = np.cumsum(~acc) - 1                       # the states inside an iteration, renumbered
    inner = np.flatnonzero(~acc)
    rows = full[inner]
    done = (rows >= 0) & acc[np.maximum(rows, 0)]
    nxt = np.where(rows < 0, -1, np.where(done, 0, ids[np.maximum(rows, 0)])).astype(np.int32)
    return nxt, done


def _chain(members, positions, unbounded, t, b2c, copy, head, accepts, steps):
    """What the masks of a counted group read beside its DFA (``stackmask.compile.
    count_split``): per state its position in the chain (-1: not in the chain, or not
    known) and its state inside the current iteration of ``x`` (:func:`_x_steps`' states, 0
    between iterations); with an unbounded member, the copy after the last position is
    position ``len(positions)`` (every count past the last bound). None when the chain's
    states do not read as iterations of ``x`` (a state inside the chain that accepts, an
    iteration state not met from a head, a byte ``x`` reads leaving the chain, or a
    state inside an iteration with a move ``x`` does not have). ``steps``: :func:`_x_steps`
    of ``x``."""
    xn, xd = steps
    n = t.shape[0]
    inside = copy >= 0
    if any(accepts[i] for i in np.flatnonzero(inside).tolist()):
        return None
    full = t[:, b2c]                                  # (n, 256)
    xk = np.full(n, -1, dtype=np.int64)
    front = np.flatnonzero(inside & head)
    xk[front] = 0
    while len(front):
        nd = full[front]                              # (f, 256)
        nx = xn[xk[front]]
        reads = nx >= 0
        moved = reads & (nd >= 0)
        if (~inside[np.maximum(nd, 0)] & moved).any():
            return None                               # x reads a byte that leaves the chain
        to = nd[moved]
        tx = nx[moved]
        new = xk[to] < 0
        xk[to[new]] = tx[new]
        if (xk[to] != tx).any():       # met before, or twice in this round: must agree
            return None
        front = np.unique(to[new])
    if (inside & (xk < 0)).any():
        return None
    mid = np.flatnonzero(xk > 0)
    if len(mid) and ((full[mid] >= 0) & (xn[xk[mid]] < 0)).any():
        return None                                   # a move inside an iteration x lacks
    last = len(positions) - 1
    pos = np.where(inside, copy, -1).astype(np.int32)
    out_pos = list(positions)
    if unbounded:
        # the last position's own head is its count; the loop after it reads every
        # count past the last bound
        pos[(copy == last) & ~head] = last + 1
        out_pos.append((positions[-1][1] + 1, -1))
    group = (tuple((int(a), int(b)) for a, b in out_pos),
             tuple((int(lo), -1 if hi is None else int(hi)) for _, _, lo, hi, _ in members),
             xn, xd)
    return pos, xk.astype(np.int32), group


def count_classes(members) -> list:
    """The classes of a chain's counts: ``(first, last, live)`` in order (``last`` INF for
    the class past the last bound of a member without one), ``live`` False for the
    counts past every member's upper bound (nothing can be read there). ``members``:
    ``(lo, hi)`` pairs, hi -1 for none."""
    cuts = {0}
    for lo, hi in members:
        cuts.add(lo)
        if hi >= 0:
            cuts.add(hi + 1)
    cuts = sorted(cuts)
    out = []
    for i, a in enumerate(cuts):
        b = cuts[i + 1] - 1 if i + 1 < len(cuts) else INF
        live = any(hi < 0 or hi >= a for _, hi in members)
        out.append((a, b, live))
    return out


def class_of(classes, c: int) -> int:
    """The index of the class (:func:`count_classes`) holding count ``c``."""
    for k, (a, b, _) in enumerate(classes):
        if a <= c <= b:
            return k
    raise ValueError(f"count {c} in no class")
