"""Compaction of the Parser DWA's token sets: keep only those it refers to, renumbered.

A compile interns every intermediate union and difference; :func:`compact_weights` keeps
the token sets the automaton (:class:`~stackmask.compile.parser_dwa.ParserDWA`) still refers
to and renumbers every reference to them. The automaton calls it under its lock
(``ParserDWA.compact_weights``, ``release_items``).
"""

from __future__ import annotations

import numpy as np

from ..wfa.weights import EMPTY_ID
from .dwa_data import state_digest


def compact_weights(dwa, ids_before: dict, digest_ids: bool, kept: tuple) -> tuple:
    """Keep only the token sets ``dwa`` refers to (edges, start entries, the item sets of
    states not compiled yet, EOS and special tokens), renumbered
    (:meth:`WeightTable.subset`); ``dwa``'s token sets and every reference to them are
    replaced. ``kept``: ``(token sets, states)`` of the artifact it was loaded from, kept
    at their ids (``(0, 0)``: none). ``ids_before``: its state index (keyed by digests
    when ``digest_ids``, else by item sets). Returns ``(number of sets dropped, the state
    index of the states not compiled yet, rebuilt: its keys contain weight ids)``."""
    kept_w, kept_q = kept
    used = set(range(kept_w))
    used.add(EMPTY_ID)
    for t in dwa.trans:
        if t:
            used.update(w for _, w in t.values())
    used.update(d[1] for d in dwa.default if d is not None)
    used.update(w for _, w in dwa.init.values())
    used.update(w for _, w in dwa.pair_init.values())
    used.update(w for _, w in dwa.init_base.values())
    used.update(dwa.init_restrict.values())
    used.update(w for held in dwa.routed.values() for _, w in held)
    if dwa.eos_weight is not None:
        used.add(dwa.eos_weight)
    used.update(w for _, w in dwa.special_weights or ())
    items = dwa.items
    for q in range(kept_q, len(items)):
        if items[q] is None:
            continue
        its = items[q] = dwa.state_items(q)      # as pairs: the weight ids change
        used.update(w for _, w in its)
    before = len(dwa.weights)
    dwa.weights, new = dwa.weights.subset(used)
    if not np.array_equal(new[:kept_w], np.arange(kept_w)):
        raise AssertionError("an artifact's token sets were renumbered")
    m = new.tolist()

    def entry(e):
        return e if e is None else (e[0], m[e[1]])

    # edges share their (state, weight) pairs (a million for Java's 5.9 million edges):
    # each distinct pair renumbered once, and shared again
    pairs: dict = {}
    dwa.trans = [t if not t else {s: pairs.get(e) or pairs.setdefault(e, (e[0], m[e[1]]))
                                  for s, e in t.items()}
                 for t in dwa.trans]
    dwa.default = [entry(d) for d in dwa.default]
    dwa.init = {c: entry(e) for c, e in dwa.init.items()}
    dwa.pair_init = {k: entry(e) for k, e in dwa.pair_init.items()}
    dwa.init_base = {c: entry(e) for c, e in dwa.init_base.items()}
    dwa.init_restrict = {c: m[w] for c, w in dwa.init_restrict.items()}
    dwa.set_routed({k: tuple((it, m[w]) for it, w in held) for k, held in dwa.routed.items()})
    if dwa.eos_weight is not None:
        dwa.eos_weight = m[dwa.eos_weight]
    if dwa.special_weights is not None:
        dwa.special_weights = tuple((t, m[w]) for t, w in dwa.special_weights)
    dwa.hot_weights = tuple(m[w] for w in dwa.hot_weights if m[w] >= 0)
    ids = {}
    if kept_q:          # the artifact's states: same items, same keys
        for key, q in ids_before.items():
            if q < kept_q and items[q] is not None:
                ids[key] = q
    for q in range(kept_q, len(items)):
        its = items[q]
        if its is not None:
            its = items[q] = tuple((it, m[w]) for it, w in its)
            ids[state_digest(its) if digest_ids else dwa.state_key(its)] = q
    return before - len(dwa.weights), ids
