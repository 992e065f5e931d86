"""Starts of the Parser DWA: where a walk of a lexer configuration (or of two heads) begins.

A configuration's token outcomes become start items (:func:`start_items`: item -> the
tokens waiting in it, and the tokens decided at once). From them :class:`Starts` makes the
configuration's start on the automaton (:class:`~stackmask.compile.parser_dwa.ParserDWA`):
a state of its own, an earlier start restricted to its tokens (``init_restrict``,
:func:`restricted`), or, for a configuration started on a base (``init_base``), only the
part that differs from the base's (:func:`trim_on_base`). :func:`pair_start` makes the
start of two heads walked as one (``pair_init``). This module only computes starts; the
states, edges and their expansion are the automaton's.
"""

from __future__ import annotations

import numpy as np
from pyroaring import BitMap

from ..wfa.weights import EMPTY_ID, UNIVERSE_ID
from .templates import END, NO_LHS, expand_emissions
from ..lexer.scanner import TRUE

#: starts a new start is compared with (:func:`restricted`): the last ones compiled
#: (one at a time), or the widest of its shape (:meth:`Starts.end_batch`)
RESTRICT_CANDIDATES = 8


class Starts:
    """Makes the starts of lexer configurations on ``dwa`` (its ``init``,
    ``init_restrict``, ``init_base``), comparing each with earlier ones while compiling."""

    def __init__(self, dwa):
        self.dwa = dwa
        # while compiling: starts that may serve as restricted ones' (:func:`restricted`),
        # and the starts of a batch not made yet (:meth:`begin_batch`)
        self._templates: list | None = []
        self._universals: dict = {}      # item -> its start for every token (_universal)
        self._pending: list | None = None

    def add(self, cfg: int, pairs: dict, acc: int) -> tuple | None:
        """Start ``cfg`` from its start items (:func:`start_items`); None while a batch
        collects starts (:meth:`begin_batch`). Call under the automaton's lock."""
        if self._pending is not None:       # a batch: started at its end
            self._pending.append((cfg, pairs, acc))
            return None
        return self._start(cfg, pairs, acc, self._templates)

    def _start(self, cfg: int, pairs: dict, acc: int, candidates) -> tuple:
        dwa = self.dwa
        if candidates is self._templates and candidates:
            candidates = candidates[:-RESTRICT_CANDIDATES - 1:-1]
        r = restricted(dwa.weights, pairs, acc, candidates)
        # the items held out of the automaton are this start's own, whichever states
        # serve the others (a restricted start's held items are the earlier one's within
        # its tokens: restricted compared them too)
        kept = dwa.split_routed(cfg, pairs)
        if r is not None:
            entry, dwa.init_restrict[cfg] = r
            dwa.init[cfg] = entry
            return entry
        entry = (dwa.intern_state(kept), acc)
        dwa.init[cfg] = entry
        if self._templates is not None and pairs:
            self._templates.append((frozenset(pairs), pairs, acc, entry))
        dwa.bound_memos()
        return entry

    def begin_batch(self) -> None:
        """Collect the starts :meth:`add` is given until :meth:`end_batch`, which makes
        them all: a start that is another restricted (:func:`restricted`) is found
        whatever the order the configurations came in (the widest start of each shape
        first)."""
        self._pending = []

    def end_batch(self) -> None:
        pending, self._pending = self._pending or [], None
        if self._templates is None:
            for cfg, pairs, acc in pending:
                self._start(cfg, pairs, acc, None)
            return
        dwa = self.dwa
        wt = dwa.weights
        whole = {cfg: (pairs, acc) for cfg, pairs, acc in pending
                 if cfg not in dwa.init_base}
        trimmed = []
        for cfg, pairs, acc in pending:
            if cfg in dwa.init_base:
                r = trim_on_base(dwa, cfg, pairs, acc, whole)
                if r is None:
                    continue
                pairs, acc = r
            trimmed.append((cfg, pairs, acc))
        pending = trimmed
        shapes: dict = {}                 # key set -> its starts, in arrival order
        for n, (cfg, pairs, acc) in enumerate(pending):
            # widest first (the sizes of its token sets: a token in two items counts
            # twice, which only orders the comparisons)
            size = len(wt.get(acc)) + sum(len(wt.get(w)) for w in pairs.values())
            shapes.setdefault(frozenset(pairs), []).append((-size, n))
        by_shape: dict = {}
        for keys, members in shapes.items():
            own = by_shape.setdefault(keys, [])
            if len(keys) == 1:
                own.append(self._universal(next(iter(keys))))
            # the widest starts of this shape first, then those of wider shapes (the
            # widest of each, made before this shape: the same for all its members)
            wider = [ts[0] for k, ts in by_shape.items() if keys < k and ts]
            wider = wider[:RESTRICT_CANDIDATES]
            for _, n in sorted(members):
                cfg, pairs, acc = pending[n]
                cands = own[:RESTRICT_CANDIDATES] + wider
                before = len(self._templates)
                self._start(cfg, pairs, acc, cands)
                if len(self._templates) > before:
                    own.append(self._templates[-1])

    def _universal(self, item) -> tuple:
        """The start holding ``item`` alone for every token, as a candidate for
        :func:`restricted` (memoized per item while starts are restricted).

        A start of one item ``I`` with the tokens ``W`` (none decided at once) is this
        one restricted to ``W``: each token's fate on a stack is ``I``'s, the same for all.
        The configurations that differ from their base only in a few tokens continuing a
        literal name (``"gr`` of ``"groups"`` inside the free key string: the tokens
        ``o``, ``ou``, ``oup`` may still end as that key) have such starts, each with other
        tokens, and each used to get its own states; they now walk one automaton per item,
        and a configuration's mask is that automaton's without the tokens outside ``W``."""
        t = self._universals.get(item)
        if t is None:
            pairs = {item: UNIVERSE_ID}
            kept = self.dwa.split_routed(None, pairs)
            t = self._universals[item] = (frozenset(pairs), pairs, EMPTY_ID,
                                          (self.dwa.intern_state(kept), EMPTY_ID))
        return t

    def end_restricting(self) -> None:
        """Stop comparing new starts with earlier ones (state or token set ids are about
        to change); starts made later are made whole."""
        self._templates = None
        self._universals.clear()


def trim_on_base(dwa, cfg: int, pairs: dict, acc: int, whole: dict):
    """For ``cfg`` started on a base (``init_base``): its own start (``pairs``, ``acc``,
    over the tokens that differ from the base, ``D``) without the tokens whose start
    items are the base's (``whole``: config -> the base's whole ``(pairs, acc)``).
    Walks from a start only unite, intersect and subtract its weights, so a token's
    fate on a stack depends only on the items (and the decided-at-once set) it is in:
    such a token's mask bit is the base's, and it leaves ``D`` (``init_base`` is
    updated). The diff of a configuration on a base is found byte by byte (the tokens
    whose walks meet different lexer states), which is wider: the tokens of a blank
    run or a string near its bound that still fit end in other configurations but
    mostly with the same items; only those that die or end right at the bound remain
    (and those ending at the bound have the base's items once the checks their other
    items imply are dropped, :func:`implied_checks`).
    Returns the start to make, or None when nothing is left (the configuration's mask
    is its base's without ``D``)."""
    if not pairs and acc == EMPTY_ID:
        dwa.init[cfg] = (-1, EMPTY_ID)
        dwa.routed.pop(cfg, None)
        return None
    base, diff = dwa.init_base[cfg]
    b = whole.get(base)
    if b is None:
        return pairs, acc
    wt = dwa.weights
    d = wt.get(diff)
    same = same_as_base(wt, pairs, acc, b[0], b[1], d)
    if not same:
        return pairs, acc
    same_id = wt.intern(same)
    dwa.init_base[cfg] = (base, wt.intern(d - same))
    acc = wt.difference(acc, same_id)
    pairs = {it: w2 for it, w in pairs.items()
             if (w2 := wt.difference(w, same_id)) != EMPTY_ID}
    if not pairs and acc == EMPTY_ID:
        dwa.init[cfg] = (-1, EMPTY_ID)
        dwa.routed.pop(cfg, None)
        return None
    return pairs, acc


#: at most this many live tokens within the diff: :func:`same_as_base` compares them one
#: by one (a configuration one key letter from its base keeps 1-10 tokens of its own,
#: while its base's start holds ~100-150 items: the bitmap form intersects each of those
#: with the diff, ~1.7 µs each, where a token's membership costs ~80 ns per item)
SAME_BY_TOKEN = 24


def same_as_base(wt, pairs: dict, acc: int, b_pairs: dict, b_acc: int, d) -> "BitMap":
    """The tokens of a start on a base (``pairs``, ``acc``: item -> weight id, the weight
    decided at once; ``d``: the tokens that differ from the base, a bitmap) that are in
    the same items (and the decided-at-once set) in the base's whole start (``b_pairs``,
    ``b_acc``): the live tokens of ``d`` whose membership is the same on both sides, an
    item missing on one side counting as holding no token. Few such tokens are compared
    one by one, more with bitmap algebra (:func:`same_as_base_algebra`, the reference;
    the same result)."""
    get = wt.get
    live = BitMap.union(get(acc), *[get(w) for w in pairs.values()])
    cand = live & d           # a live token outside d differs (the base never has it)
    if not cand or len(cand) > SAME_BY_TOKEN:
        return same_as_base_algebra(wt, pairs, acc, b_pairs, b_acc, d) if cand else cand
    mine = [(it, get(w)) for it, w in pairs.items()]
    theirs = [(it, get(w)) for it, w in b_pairs.items()]
    a, b_a = get(acc), get(b_acc)
    same = BitMap()
    for t in cand:
        if (t in a) != (t in b_a):
            continue
        if {it for it, m in mine if t in m} == {it for it, m in theirs if t in m}:
            same.add(t)
    return same


def same_as_base_algebra(wt, pairs: dict, acc: int, b_pairs: dict, b_acc: int, d) -> "BitMap":
    """:func:`same_as_base` with bitmap algebra: the live tokens less those whose
    membership differs in the decided-at-once set or in some item (within ``d``)."""
    get = wt.get
    differ = get(acc) ^ (get(b_acc) & d)
    for it in pairs.keys() | b_pairs.keys():
        mine = get(pairs.get(it, EMPTY_ID))
        theirs = b_pairs.get(it)
        differ |= mine if theirs is None else mine ^ (get(theirs) & d)
    live = BitMap.union(get(acc), *[get(w) for w in pairs.values()])
    return live - differ


def restricted(wt, pairs: dict, acc: int, candidates):
    """``(entry, weight id of the tokens left out)`` when the start ``(pairs, acc)``
    is an earlier start (one of ``candidates``: ``(keys, pairs, acc, entry)``) restricted
    to its own tokens ``W``: every item's weight is the earlier one's within ``W`` (an
    item missing here has none there), and so is the weight decided at once. Walks from
    a start only unite, intersect and subtract its weights, all of which commute with
    keeping ``W``: the earlier start's mask without the other tokens is this one's, on
    every stack, so its states serve. A count of blanks or of characters left in a
    bounded run (bounded JSON whitespace, ``maxLength`` near its end) differs from
    another only in which long tokens fit. ``wt``: the token sets (:class:`WeightTable`)."""
    if not candidates or not pairs:
        return None
    get = wt.get
    keys = frozenset(pairs)
    w_all = None

    def within(tw: int, mine: int) -> bool:
        # (tw within W) == mine, with mine a part of W: no set built, none interned
        x = get(tw)
        if mine == EMPTY_ID:
            return x.isdisjoint(w_all)
        m = get(mine)
        return x.intersection_cardinality(w_all) == len(m) and m <= x
    for t_keys, t_pairs, t_acc, t_entry in candidates:
        if not keys <= t_keys:
            continue
        if w_all is None:
            w_all = BitMap.union(get(acc), *[get(w) for w in pairs.values()])
        if within(t_acc, acc) and all(within(tw, pairs.get(it, EMPTY_ID))
                                      for it, tw in t_pairs.items()):
            return t_entry, wt.difference(UNIVERSE_ID, wt.intern(w_all))
    return None


def start_items(dwa, outcomes, bitmap_of=None) -> tuple:
    """``(start items: item -> weight id, weight decided at once)`` of ``outcomes`` (as
    for :meth:`ParserDWA.add_config`), no state made (a pair of heads one of which is
    started on a base needs that configuration's whole start items). The tokens of every
    start item are gathered first and made one token set (one bitmap per item, not one
    per outcome and a union per pair)."""
    wt = dwa.weights
    by_item: dict = {}
    ACC = None                           # the tokens decided at once (no stack needed)
    tpl = dwa.templates
    n_terms = tpl.n_terminals
    check_memo: dict = {}
    follow_mask = tpl.follow_masks
    special_check = dwa.special_check
    for (ems, req), val in outcomes:
        extra = ()
        if req == TRUE:
            F = None
        else:
            r = check_memo.get(req)
            if r is None:
                checks, can_end = req[0], req[1]
                F = sum(1 << t for t in checks if 0 < t < n_terms) | (1 << END if can_end else 0)
                if len(req) > 2 and special_check:
                    # a special token may come next: finish the pending lexeme, then shift one
                    extra = expand_emissions((req[2],) if req[2] else ())
                r = check_memo[req] = (F, extra)
            F, extra = r
            if not F and not extra:
                continue
        for terms in tpl.sequences(ems, dwa.max_sequences):
            if not terms and F is None:
                by_item.setdefault(ACC, []).append(val)
                continue
            G = F
            if F and terms:
                # only a terminal that can come right after the last one can be shifted
                # next (and END only where the text can end after it): a check outside
                # that set fails on every stack, so it is dropped from the item (items
                # that differ only there are one; those left with nothing die here)
                G = F & follow_mask[terms[-1]]
            if F is None or G:
                by_item.setdefault((0, NO_LHS, terms, G), []).append(val)
            for alt in extra:
                by_item.setdefault((0, NO_LHS, terms + alt, special_check), []).append(val)
    pairs: dict = {}
    for it, vals in by_item.items():
        arrays = [v for v in vals if not isinstance(v, int)]
        w = EMPTY_ID
        if arrays:
            pos = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
            w = wt.intern(bitmap_of(pos))
        for v in vals:
            if isinstance(v, int):
                w = wt.union(w, v)
        pairs[it] = w
    acc = pairs.pop(ACC, EMPTY_ID)
    if acc != EMPTY_ID:
        pairs = {it: wt.difference(w, acc) for it, w in pairs.items()}
    return implied_checks(wt, tpl.follow_masks, pairs), acc


def implied_checks(wt, follow_masks, pairs: dict) -> dict:
    """Start items with the checks other items of the same token imply dropped
    (``wt``: the token sets; ``follow_masks``: terminal -> bitmask of those that may
    follow it, as :attr:`Templates.follow_masks`).

    An item ``(S, F)`` holds on a stack when it shifts ``S`` and then some terminal of
    ``F``; its part for one terminal ``t`` of ``F`` is "the stack shifts ``S t``". A
    token that is also in ``(S t, F')`` with ``F'`` holding every terminal that can
    follow ``t`` (``F'`` None: no check) is allowed whenever that part holds: a stack
    that shifts ``S t`` has shifted only a viable prefix (an LR parser never shifts an
    error), so some terminal of ``follows(t)`` (or the end) comes next. For that token
    ``t`` leaves ``F``. A lexeme that may end now or grow (a run of blanks emitted here,
    or continued) is such a pair; the token that ends a counted run at its bound has
    only the emitted half, and with the check dropped it is the same in every
    configuration of the run (:func:`trim_on_base` then finds it the base's)."""
    fm = follow_masks
    implied: dict = {}             # S -> t -> tokens whose (S t, F') imply "S, then t"
    for it, w in pairs.items():
        terms, F = it[2], it[3]
        if terms and w != EMPTY_ID:
            t = terms[-1]
            if t != END and (F is None or not fm[t] & ~F):
                by_t = implied.setdefault(terms[:-1], {})
                by_t[t] = wt.union(by_t.get(t, EMPTY_ID), w)
    if not implied:
        return pairs
    out: dict = {}
    for it, w in pairs.items():
        terms, F = it[2], it[3]
        by_t = implied.get(terms)
        if not F or by_t is None or w == EMPTY_ID:
            out[it] = wt.union(out.get(it, EMPTY_ID), w)
            continue
        parts = {F: w}               # check set -> the tokens with it
        for t, wt_t in by_t.items():
            if not F >> t & 1:
                continue
            nxt: dict = {}
            for G, g in parts.items():
                inside = wt.intersect(g, wt_t)
                if inside != EMPTY_ID:
                    H = G & ~(1 << t)
                    nxt[H] = wt.union(nxt.get(H, EMPTY_ID), inside)
                    g = wt.difference(g, inside)
                if g != EMPTY_ID:
                    nxt[G] = wt.union(nxt.get(G, EMPTY_ID), g)
            parts = nxt
        for G, g in parts.items():
            if G:                     # nothing left to check: the other item decides
                k = (it[0], it[1], terms, G)
                out[k] = wt.union(out.get(k, EMPTY_ID), g)
    return out


def pair_start(dwa, c_top: int, c_low: int, below: bool, whole_start=None) -> tuple | None:
    """Start state of two heads walked as one: configuration ``c_top`` on a GSS node
    and ``c_low`` on the node right below it (``below``; keyed ``(c_top, c_low, 1)``)
    or on the same node (keyed by the sorted configurations and 0). ``c_low``'s start
    items discard one more stack entry unread when ``below``; the tokens either start
    decides at once are decided for both. The walk's weights then unite to the two
    heads' mask (a state's mask is the union of its heads'), in one walk instead of
    two. Needs both configurations' start items (before ``release_items``); for a
    configuration started on a base, ``whole_start(cfg)`` gives its whole start items
    (:func:`start_items`; without it such a pair is not made). Returns the entry (kept
    in ``dwa.pair_init``), or None."""
    key = pair_key(c_top, c_low, below)
    e = dwa.pair_init.get(key)
    if e is not None:
        return e
    wt = dwa.weights
    acc = EMPTY_ID
    pairs: dict = {}
    for cfg, delay in ((c_top, 0), (c_low, 1 if below else 0)):
        if cfg in dwa.init_base:          # a start on a base has not all items:
            if whole_start is None:       # the whole ones (start_items) are needed
                return None
            start, w = whole_start(cfg)
            acc = wt.union(acc, w)
            items = tuple(start.items())
        else:
            entry = dwa.init.get(cfg)
            if entry is None:
                return None
            q, w = entry
            keep = dwa.init_restrict.get(cfg)
            if keep is not None:          # another's start, within this one's tokens
                keep = wt.difference(UNIVERSE_ID, keep)
                w = wt.intersect(w, keep)
            acc = wt.union(acc, w)
            items = ()
            if q >= 0:
                items = dwa.state_items(q)
                if items is None:         # released after an eager compile
                    return None
            items = tuple(items) + dwa.routed.get(cfg, ())   # and those held out
            if keep is not None:
                items = [(it, wt.intersect(w2, keep)) for it, w2 in items]
        for (skip, lhs, terms, F), w2 in items:
            it = (skip + delay, lhs, terms, F)
            pairs[it] = wt.union(pairs.get(it, EMPTY_ID), w2)
    if acc != EMPTY_ID:
        pairs = {it: wt.difference(w, acc) for it, w in pairs.items()}
    with dwa.lock:
        e = dwa.pair_init[key] = (dwa.intern_state(dwa.split_routed(key, pairs)), acc)
    return e


def pair_key(c_top: int, c_low: int, below: bool) -> tuple:
    """Key of a pair start (:func:`pair_start`): ``(c_top, c_low, 1)`` for heads on
    nodes one above the other, the sorted configurations and 0 for one stack."""
    return (c_top, c_low, 1) if below else (min(c_top, c_low), max(c_top, c_low), 0)
