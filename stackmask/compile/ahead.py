"""Work done ahead at construction, so that no first mask pays for it.

A constraint's first masks would otherwise decode token sets into dense masks,
compute the masks of the walks it meets and fault in fresh memory. Right after the
runtime's :class:`~stackmask.runtime.masker.Masker` is made (after a build, a load,
or an exploration that dropped its own masks), :func:`masks_ahead`

* makes the "count at most v" sets of counted chains (the most read tables first);
* turns token sets into dense masks (:func:`prewarm`: the artifact's hot sets first,
  then by id, within ``PREWARM_BYTES``, half the dense cache and ``PREWARM_S``; sets
  small enough to be written by position are left as they are);
* computes the masks of the walks over compiled states (:func:`prefill`: shortest
  walks first, within ``PREFILL_BYTES``, ``PREFILL_S`` and ``PREFILL_SHARE`` of the
  construction's time).

It works on the masker through its public methods (``keep``, ``union``,
``sparse_of``, ``restricted_key``, the ``memo``) and the automaton's public arrays,
and imports nothing of the runtime. It compiles nothing: where parts of the automaton
are compiled on first use (``compile="lazy"``, a budget-stopped compile) it covers the
compiled part. Every mask it computes is the one ``get_mask`` would compute for that key
(tests compare them with the union of their token sets and with the oracle).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from ..wfa.weights import EMPTY_ID

#: token sets made dense ahead: at most this many bytes of them and this many seconds.
#: A set made dense costs ~13 µs compiled (decoding ~2 µs, the rest faulting in its
#: memory; 20-90 µs before the decoding was compiled), so 0.1 s makes as many as fit.
PREWARM_BYTES = 128 << 20
PREWARM_S = 0.1
#: bounds of the masks computed ahead: at most this many bytes of dense masks (and a
#: quarter of the mask cache), at most ``PREFILL_S`` seconds and at most
#: ``PREFILL_SHARE`` of the time the construction or load took before it (``built_s``).
#: A fixed 0.1 s was ~30% of a median JSON Schema's time to first mask, for no change in
#: its mask tails, while on larger automata (generated schemas, 1-2 s to build) it kept
#: p99.9 and the maximum lower (benchmarks/RESULTS.md, *Masks computed ahead*).
#: ``PREFILL_S = 0``: none.
PREFILL_BYTES = 32 << 20
PREFILL_S = 0.1
PREFILL_SHARE = 0.1


def prefill_seconds(built_s: float | None) -> float:
    """Seconds the masks ahead may take: ``PREFILL_S``, or its share of ``built_s``."""
    if built_s is None:
        return PREFILL_S
    return min(PREFILL_S, PREFILL_SHARE * max(0.0, built_s))


def masks_ahead(masker, built_s: float | None = None, hot=()) -> None:
    """Everything ahead for ``masker`` (see the module's doc), recorded on it:
    ``prefill_s`` (the seconds allowed), ``counts_ahead``, ``prewarmed`` (token sets made
    dense) and ``prefilled`` (masks computed). ``hot``: ids of the token sets to make
    dense first (an artifact's, or those an exploration used)."""
    seconds = masker.prefill_s = prefill_seconds(built_s)
    split = masker.dwa.count_split
    # the count sets of the most read tables, then the others for at most as long as
    # the masks ahead may take (a budget of its own, before theirs)
    masker.counts_ahead = masker.count_sets.make_ahead(
        split, time.perf_counter() + seconds) if split else 0
    masker.prewarmed = prewarm(masker, hot)
    masker.prefilled = prefill(masker, seconds)


def prewarm(masker, hot=()) -> int:
    """Make token sets dense, ``hot`` ids first, then the others by id, within
    ``PREWARM_BYTES``, half the dense cache (less one mask: the next conversion must
    not push them into the old generation) and ``PREWARM_S``. Sets the masker writes by
    position (:meth:`Masker.sparse_of`) are skipped. Returns how many were made."""
    wt = masker.dwa.weights
    n_bits = masker.n_bits
    size = masker.n_words * 4
    room = PREWARM_BYTES
    cap = wt.cache_bytes
    if cap is not None:
        room = min(room, cap // 2 - size)
    n_sets = len(wt)
    n = max(0, min(n_sets, room // size))
    order = itertools.chain(dict.fromkeys(w for w in hot if 0 <= w < n_sets), range(n_sets))
    deadline = time.perf_counter() + PREWARM_S
    done = 0
    for w in order:
        if done >= n or time.perf_counter() > deadline:
            break
        if masker.sparse_of(w):
            continue                     # written by position when used
        if wt.cached_dense(w, n_bits) is None:
            wt.dense(w, n_bits)
            done += 1
    return done


def prefill(masker, seconds: float) -> int:
    """Compute the masks of single-path walks ahead, breadth first from the start
    states over compiled states only (nothing is compiled for it): a walk's weights
    after each edge are a key ``get_mask`` can meet (the stack may end there). Each
    mask is its prefix's mask united with one token set. Stops at ``PREFILL_BYTES`` (at
    most a quarter of the mask cache) or after ``seconds``; nothing where no state is
    compiled yet (``compile="lazy"``). Returns the number of masks computed."""
    dwa = masker.dwa
    wt = dwa.weights
    n_bits, n_words = masker.n_bits, masker.n_words
    cap = min(PREFILL_BYTES, masker.cache_bytes // 4) // (n_words * 4)
    deadline = time.perf_counter() + seconds
    trans, default, complete = dwa.trans, dwa.default, dwa.complete
    edges_of = dwa.state_edges           # a loaded state's edges, made on first use
    if seconds <= 0 or not any(complete):
        return 0
    memo = masker.memo
    compiled = masker.native_loops     # (set whenever sparse_of gives a serialization)
    # configurations on a base first (their masks need both walks), in half the time
    added = _prefill_on_base(masker, cap, time.perf_counter() + seconds / 2)

    def mask_of(key: frozenset, prefix: frozenset, w: int):
        nonlocal added
        m = memo.get(key)
        if m is None:
            if added >= cap or time.perf_counter() > deadline:
                return None
            base = memo.get(prefix)
            sp = masker.sparse_of(w)
            if sp:                       # a small set: written by position
                a = np.zeros(n_words, dtype=np.int32) if base is None else base.obj.copy()
                compiled.roaring_dense_all([sp], a.view(np.uint32))
            else:
                d = wt.dense(w, n_bits)
                a = d.copy() if base is None else np.bitwise_or(base.obj, d)
            m = masker.keep(key, a, computed=False)
            added += 1
        return m

    empty = frozenset()
    seen: set = set()
    level = []
    if mask_of(empty, empty, EMPTY_ID) is None:
        return added
    starts = [e for c, e in dwa.init.items() if c not in dwa.init_base]
    for q, w in starts + list(dwa.pair_init.values()):
        key = frozenset((w,)) if w else empty
        if w and mask_of(key, empty, w) is None:
            return added
        if q >= 0 and (q, key) not in seen:
            seen.add((q, key))
            level.append((q, key))
    while level:
        nxt = []
        for q, key in level:
            if not complete[q]:
                continue
            if time.perf_counter() > deadline:     # (memo hits take no time check)
                return added
            edges = set((trans[q] or edges_of(q)).values())
            if default[q] is not None:
                edges.add(default[q])
            for q2, w in edges:
                key2 = key
                if w and w not in key:
                    key2 = key | {w}
                    if mask_of(key2, key, w) is None:
                        return added
                if q2 >= 0 and (q2, key2) not in seen:
                    seen.add((q2, key2))
                    nxt.append((q2, key2))
        level = nxt
    return added


def _prefill_on_base(masker, cap: int, deadline: float) -> int:
    """:func:`prefill` for the configurations on a base: their own start and their
    base's walked in lock step (both read the same stack; either may stop first),
    the mask of every pair of weight sets met computed (the stack may end there),
    breadth first, over compiled states only, until ``cap`` masks or ``deadline``.
    Returns the number of masks computed."""
    dwa = masker.dwa
    trans, default, complete = dwa.trans, dwa.default, dwa.complete
    edges_of = dwa.state_edges           # a loaded state's edges, made on first use
    memo = masker.memo
    restricted = masker.restricted_key
    added = 0

    def step(q: int, s):
        """The edge of state ``q`` on stack state ``s`` (None: the default edge),
        or None where the walk stops (or would compile)."""
        if q < 0 or not complete[q]:
            return None
        e = None if s is None else (trans[q] or edges_of(q)).get(s)
        return default[q] if e is None else e

    def grow(k: frozenset, w: int) -> frozenset:
        return k | {w} if w and w not in k else k

    def ensure(key: frozenset) -> bool:
        # the mask of ``key``, after those of the walks its terms take a part of
        # (a base's walk, a restricted start's template walk), each counted; False
        # once out of masks or time
        nonlocal added
        if key in memo:
            return True
        for w in key:
            if type(w) is tuple and not ensure(w[1]):
                return False
        if added >= cap or time.perf_counter() > deadline:
            return False
        masker.union(key, computed=False)
        added += 1
        return True

    # breadth first over all of them at once: every configuration's shallow walks
    # (the most frequent stacks) before any one's deep ones
    level = []
    restrict = dwa.init_restrict
    for cfg, (base, wid) in dwa.init_base.items():
        e_own, e_base = dwa.init.get(cfg), dwa.init.get(base)
        if e_own is not None and e_base is not None:
            level.append(((restrict.get(cfg), restrict.get(base)), wid, e_own[0], e_base[0],
                          grow(frozenset(), e_own[1]), grow(frozenset(), e_base[1])))
    seen = set(level)
    while level:
        nxt = []
        for r, wid, q_own, q_base, k_own, k_base in level:
            if time.perf_counter() > deadline:     # (memo hits take no time check)
                return added
            # the key get_mask makes (a restricted start, own or the base's: its
            # template's walk without the tokens left out)
            key = restricted(r[0], k_own) | {(wid, restricted(r[1], k_base))}
            if not ensure(key):
                return added
            syms = {None}
            for q in (q_own, q_base):
                if q >= 0 and complete[q]:
                    syms.update(trans[q] or edges_of(q))
            for s in syms:
                a, b = step(q_own, s), step(q_base, s)
                if a is None and b is None:
                    continue
                item = (r, wid, -1 if a is None else a[0], -1 if b is None else b[0],
                        k_own if a is None else grow(k_own, a[1]),
                        k_base if b is None else grow(k_base, b[1]))
                if item not in seen:
                    seen.add(item)
                    nxt.append(item)
        level = nxt
    return added


__all__ = ["masks_ahead", "prewarm", "prefill", "prefill_seconds", "PREWARM_BYTES", "PREWARM_S",
           "PREFILL_BYTES", "PREFILL_S", "PREFILL_SHARE"]
