"""Parser DWA: token outcomes (terminal DWA) composed with the LR templates.

Input of the automaton: the LR state ids of one parse stack, **top first**.
Output: the set of tokens whose outcome the stack allows (see
:mod:`stackmask.compile.terminal`). One automaton start per lexer
configuration; the edges carry the tokens decided *on that edge*
("accepted here", so a walk unions edge weights and stops when the state has
nothing left to decide).

A Parser DWA state is a set of waiting items (:mod:`stackmask.compile.templates`),
each with the tokens still undecided for it (weights are interned token sets,
:class:`WeightTable`). Reading a stack state steps every item (memoized per
(item, state): the symbolic run does not depend on tokens); tokens of items that
succeeded are the edge's weight and are removed from every item still waiting
(they are decided). This is weighted determinization in the (∪, ∩) semiring of
token sets, with "subtract final weights from outgoing edges" built in.

Symbols with no specific behaviour go through the ``DEFAULT`` edge (only
items that discard the entry unread survive it). The normal form's bounded
reduction chains make the automaton acyclic in practice; where it is not, the
runtime walk still terminates because it reads a finite stack (cycles only
mean the walk may read the whole stack). ``stats()`` reports both. Building
it for a grammar and a vocabulary is :mod:`stackmask.compile.build`.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
from pyroaring import BitMap

from ..errors import LimitExceeded
from ..glr.lalr import LRTables
from ..wfa.weights import EMPTY_ID, UNIVERSE_ID, WeightTable
from .templates import END, NO_LHS, SUCCESS, Templates, expand_emissions
from . import dwa_data, dwa_minimize
from .dwa_data import digest_index as _digest_index
from .dwa_data import unpack_items
from .dwa_data import state_digest as _state_digest
from .dwa_minimize import STOP
from .terminal import TRUE

log = logging.getLogger("stackmask")



class ParserDWA:
    """The determinized token-set automaton over stack states, built lazily or eagerly.

    ``trans[q]`` maps a stack state id to ``(next state or -1, weight id)``; ``default[q]``
    is the else-edge (or None). ``-1`` as next state means "nothing left to decide".
    ``trans[q] is None`` for a state not expanded yet (:meth:`expand`).
    """

    def __init__(self, lr: LRTables, accepts_empty: bool, weights: WeightTable):
        self.weights = weights
        self._accepts_empty = accepts_empty
        self.templates = Templates(lr, accepts_empty)    # the symbolic runs and their memos
        # the automaton
        self.items: list = []            # state -> tuple of (item, weight id); None once released
        self.trans: list = []            # state -> dict symbol -> (dst, wid)
        self.default: list = []          # state -> (dst, wid) or None
        self.complete: list = []         # state -> all edges computed (else: computed on use)
        self._groups: list = []          # state -> item index for computing edges
        self._ids: dict = {}             # state key -> state (frozenset of pairs, or digests)
        self._digest_ids = False         # keys are digests (:func:`_state_digest`)
        self.init: dict = {}             # lexer config -> (state or -1, weight id)
        #: lexer config -> (base config, weight id of the tokens that differ): the config's
        #: mask is its base's mask (walked from the same stack) without those tokens, united
        #: with what ``init`` starts for those tokens only (see :meth:`add_config_on_base`)
        self.init_base: dict = {}
        #: lexer config -> weight id of the tokens its start leaves out: its start is
        #: another's restricted to the rest (``init`` holds that other start), so its mask
        #: on a stack is that start's mask without these tokens (:meth:`add_config`)
        self.init_restrict: dict = {}
        # while compiling: starts that may serve as restricted ones' (:meth:`_restricted`),
        # and the starts of a batch not made yet (:meth:`begin_batch`)
        self._templates: list | None = []
        self._universals: dict = {}      # item -> its start for every token (_universal)
        self._pending: list | None = None
        #: lexer config -> the config it is an alias of: no token tells them apart
        #: (:mod:`stackmask.compile.config_classes`); masks walk the other's start
        self.alias: dict = {}
        self.pair_init: dict = {}        # (config, config, below) -> start of two heads (add_pair)
        self.eos_weight: int | None = None   # weight id of the EOS ids, once interned
        # weight ids whose dense masks the runtime makes first (those masks needed when
        # the artifact was saved: see Masker.hot_weights)
        self.hot_weights: tuple = ()
        self.special_weights: tuple | None = None   # ((parser terminal, weight id of its token ids), ...)
        self.special_check: int = 0      # bitmask of the special-token terminals (viability check)
        self.lock = threading.RLock()    # held while the automaton changes (edges on use)
        self.max_states: int | None = None       # Limits.max_automaton_states
        self.max_sequences: int | None = None    # Limits.max_token_sequences
        self.memo_bytes: int = self.COMPILE_MEMO_BYTES
        self.budget_exhausted = False    # an eager compile stopped by its budget (or saved partial)
        self.budget_used_up: str | None = None    # why the budget stopped it
        self._loaded: tuple | None = None    # (token sets, states) as loaded (mark_loaded)

    def set_limits(self, max_states: int | None, memo_bytes: int | None = None,
                   max_sequences: int | None = None) -> None:
        """Bound the automaton's size (states created past ``max_states`` raise
        :class:`LimitExceeded`) and its memos: the symbolic-run memos together, the token-set
        operation memos and the dense token-set cache each to ``memo_bytes`` (estimated)."""
        self.max_states = max_states
        self.max_sequences = max_sequences
        if memo_bytes is not None:
            self.memo_bytes = int(memo_bytes)
            self.weights.set_cache_bytes(int(memo_bytes))
            # the bounds apply now, not at the next miss: an eager compile leaves memos
            # sized for compiling, which the garbage collector's full passes would walk
            self._bound_memos()
            self.weights.bound_memos()

    def bind_specials(self, specials) -> None:
        """Intern the token sets of the special tokens bound to parser terminals
        (``specials``: terminal -> token ids) and note those terminals for viability."""
        self.special_weights = special_weights(self.weights, specials)
        self.special_check = sum(1 << t for t, _ in self.special_weights)

    # -- automaton construction ----------------------------------------------------------
    def _state(self, pairs: dict) -> int:
        """Intern a state from ``item -> weight id`` (empty weights dropped); -1 if empty."""
        if self._digest_ids:
            # the digest is order-independent: no set of the pairs is needed
            items = tuple((it, w) for it, w in pairs.items() if w != EMPTY_ID)
            if not items:
                return -1
            key = _state_digest(items)
        else:
            if EMPTY_ID in pairs.values():       # (a C-level scan: most states have none)
                pairs = {it: w for it, w in pairs.items() if w != EMPTY_ID}
            if not pairs:
                return -1
            key = items = frozenset(pairs.items())
        q = self._ids.get(key)
        if q is None:
            q = len(self.items)
            if self.max_states is not None and q >= self.max_states:
                raise LimitExceeded("max_automaton_states", q + 1, self.max_states,
                                    "the mask automaton grew too large",
                                    "the grammar's LR states times lexer configurations; "
                                    "compile_budget_s or compile='lazy' compile only what masks use")
            self._ids[key] = q
            self.items.append(tuple(items))
            self.trans.append({})
            self.default.append(None)
            self.complete.append(False)
            self._groups.append(None)
        return q

    def add_config(self, cfg: int, outcomes, bitmap_of=None) -> tuple:
        """Start state of lexer configuration ``cfg`` from ``(outcome, tokens)`` pairs (an
        outcome may repeat): tokens as a weight id, or an int64 array of positions that
        ``bitmap_of`` turns into a token-id bitmap. The tokens of
        every start item are gathered first and made one token set (one bitmap per item, not
        one per outcome and a union per pair)."""
        pairs, acc = self.start_items(outcomes, bitmap_of)
        with self.lock:
            if self._pending is not None:       # a batch: started at its end
                self._pending.append((cfg, pairs, acc))
                return None
            return self._start(cfg, pairs, acc, self._templates)

    def _trim_on_base(self, cfg: int, pairs: dict, acc: int, whole: dict):
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
        items imply are dropped, :meth:`_implied_checks`).
        Returns the start to make, or None when nothing is left (the configuration's mask
        is its base's without ``D``)."""
        if not pairs and acc == EMPTY_ID:
            self.init[cfg] = (-1, EMPTY_ID)
            return None
        base, diff = self.init_base[cfg]
        b = whole.get(base)
        if b is None:
            return pairs, acc
        b_pairs, b_acc = b
        wt = self.weights
        get = wt.get
        d = get(diff)
        differ = get(acc) ^ (get(b_acc) & d)
        for it in pairs.keys() | b_pairs.keys():
            mine = get(pairs.get(it, EMPTY_ID))
            theirs = b_pairs.get(it)
            differ |= mine if theirs is None else mine ^ (get(theirs) & d)
        live = BitMap.union(get(acc), *[get(w) for w in pairs.values()])
        same = live - differ
        if not same:
            return pairs, acc
        same_id = wt.intern(same)
        self.init_base[cfg] = (base, wt.intern(d - same))
        acc = wt.difference(acc, same_id)
        pairs = {it: w2 for it, w in pairs.items()
                 if (w2 := wt.difference(w, same_id)) != EMPTY_ID}
        if not pairs and acc == EMPTY_ID:
            self.init[cfg] = (-1, EMPTY_ID)
            return None
        return pairs, acc

    def _start(self, cfg: int, pairs: dict, acc: int, candidates) -> tuple:
        r = self._restricted(pairs, acc, candidates)
        if r is not None:
            entry, self.init_restrict[cfg] = r
            self.init[cfg] = entry
            return entry
        entry = (self._state(pairs), acc)
        self.init[cfg] = entry
        if self._templates is not None and pairs:
            self._templates.append((frozenset(pairs), pairs, acc, entry))
        self._bound_memos()
        return entry

    def begin_batch(self) -> None:
        """Collect the starts :meth:`add_config` is given until :meth:`end_batch`, which
        makes them all: a start that is another restricted (:meth:`_restricted`) is found
        whatever the order the configurations came in (the widest start of each shape
        first)."""
        with self.lock:
            self._pending = []

    def end_batch(self) -> None:
        with self.lock:
            pending, self._pending = self._pending or [], None
            if self._templates is None:
                for cfg, pairs, acc in pending:
                    self._start(cfg, pairs, acc, None)
                return
            wt = self.weights
            whole = {cfg: (pairs, acc) for cfg, pairs, acc in pending
                     if cfg not in self.init_base}
            trimmed = []
            for cfg, pairs, acc in pending:
                if cfg in self.init_base:
                    r = self._trim_on_base(cfg, pairs, acc, whole)
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
                wider = wider[:self.RESTRICT_CANDIDATES]
                for _, n in sorted(members):
                    cfg, pairs, acc = pending[n]
                    cands = own[:self.RESTRICT_CANDIDATES] + wider
                    before = len(self._templates)
                    self._start(cfg, pairs, acc, cands)
                    if len(self._templates) > before:
                        own.append(self._templates[-1])

    def _universal(self, item) -> tuple:
        """The start holding ``item`` alone for every token, as a candidate for
        :meth:`_restricted` (memoized per item while starts are restricted).

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
            t = self._universals[item] = (frozenset(pairs), pairs, EMPTY_ID,
                                          (self._state(pairs), EMPTY_ID))
        return t

    #: starts a new start is compared with (:meth:`_restricted`): the last ones compiled
    #: (one at a time), or the widest of its shape (:meth:`end_batch`)
    RESTRICT_CANDIDATES = 8

    def _restricted(self, pairs: dict, acc: int, candidates):
        """``(entry, weight id of the tokens left out)`` when the start ``(pairs, acc)``
        is an earlier start restricted to its own tokens ``W``: every item's weight is the
        earlier one's within ``W`` (an item missing here has none there), and so is the
        weight decided at once. Walks from a start only unite, intersect and subtract its
        weights, all of which commute with keeping ``W``: the earlier start's mask without
        the other tokens is this one's, on every stack, so its states serve. A count of
        blanks or of characters left in a bounded run (bounded JSON whitespace,
        ``maxLength`` near its end) differs from another only in which long tokens fit."""
        if not candidates or not pairs:
            return None
        if candidates is self._templates:
            candidates = candidates[:-self.RESTRICT_CANDIDATES - 1:-1]
        wt = self.weights
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

    def end_restricting(self) -> None:
        """Stop comparing new starts with earlier ones: state ids or token set ids are
        about to change (minimization, compaction), which the kept starts would not
        follow; starts compiled later are compiled whole."""
        self._templates = None
        self._universals.clear()

    def start_items(self, outcomes, bitmap_of=None) -> tuple:
        """``(start items: item -> weight id, weight decided at once)`` of ``outcomes`` (as
        for :meth:`add_config`), no state made (a pair of heads one of which is started on
        a base needs that configuration's whole start items)."""
        wt = self.weights
        by_item: dict = {}
        ACC = None                           # the tokens decided at once (no stack needed)
        tpl = self.templates
        n_terms = tpl.n_terminals
        check_memo: dict = {}
        follow_mask = tpl.follow_masks
        for (ems, req), val in outcomes:
            extra = ()
            if req == TRUE:
                F = None
            else:
                r = check_memo.get(req)
                if r is None:
                    checks, can_end = req[0], req[1]
                    F = sum(1 << t for t in checks if 0 < t < n_terms) | (1 << END if can_end else 0)
                    if len(req) > 2 and self.special_check:
                        # a special token may come next: finish the pending lexeme, then shift one
                        extra = expand_emissions((req[2],) if req[2] else ())
                    r = check_memo[req] = (F, extra)
                F, extra = r
                if not F and not extra:
                    continue
            for terms in tpl.sequences(ems, self.max_sequences):
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
                    by_item.setdefault((0, NO_LHS, terms + alt, self.special_check), []).append(val)
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
        return self._implied_checks(pairs), acc

    def _implied_checks(self, pairs: dict) -> dict:
        """Start items with the checks other items of the same token imply dropped.

        An item ``(S, F)`` holds on a stack when it shifts ``S`` and then some terminal of
        ``F``; its part for one terminal ``t`` of ``F`` is "the stack shifts ``S t``". A
        token that is also in ``(S t, F')`` with ``F'`` holding every terminal that can
        follow ``t`` (``F'`` None: no check) is allowed whenever that part holds: a stack
        that shifts ``S t`` has shifted only a viable prefix (an LR parser never shifts an
        error), so some terminal of ``follows(t)`` (or the end) comes next. For that token
        ``t`` leaves ``F``. A lexeme that may end now or grow (a run of blanks emitted here,
        or continued) is such a pair; the token that ends a counted run at its bound has
        only the emitted half, and with the check dropped it is the same in every
        configuration of the run (:meth:`_trim_on_base` then finds it the base's)."""
        fm = self.templates.follow_masks
        wt = self.weights
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

    def add_config_on_base(self, cfg: int, base: int, diff_wid: int, outcomes,
                           bitmap_of=None) -> tuple:
        """Start configuration ``cfg`` on configuration ``base``: every token outside the
        token set ``diff_wid`` has the same outcomes in both (the base is started on its
        own, with :meth:`add_config`), ``outcomes`` are ``cfg``'s for the tokens of
        ``diff_wid`` (as for :meth:`add_config`). A mask of ``cfg`` on a stack is then the
        base's mask on it without ``diff_wid``, united with the mask of ``cfg``'s own start
        (the runtime walks both). Configurations that differ from a free-text
        configuration on a few tokens (a literal key inside the free key string) compile
        those few tokens only, and share the base's states."""
        entry = self.add_config(cfg, outcomes, bitmap_of)
        with self.lock:
            self.init_base[cfg] = (base, diff_wid)
        return entry

    def add_pair(self, c_top: int, c_low: int, below: bool, whole_start=None) -> tuple | None:
        """Start state of two heads walked as one: configuration ``c_top`` on a GSS node
        and ``c_low`` on the node right below it (``below``; keyed ``(c_top, c_low, 1)``)
        or on the same node (keyed by the sorted configurations and 0). ``c_low``'s start
        items discard one more stack entry unread when ``below``; the tokens either start
        decides at once are decided for both. The walk's weights then unite to the two
        heads' mask (a state's mask is the union of its heads'), in one walk instead of
        two. Needs both configurations' start items (before :meth:`release_items`);
        for a configuration started on a base, ``whole_start(cfg)`` gives its whole start
        items (:meth:`start_items`; without it such a pair is not made). Returns the
        entry, or None."""
        key = pair_key(c_top, c_low, below)
        e = self.pair_init.get(key)
        if e is not None:
            return e
        wt = self.weights
        acc = EMPTY_ID
        pairs: dict = {}
        for cfg, delay in ((c_top, 0), (c_low, 1 if below else 0)):
            if cfg in self.init_base:         # a start on a base has not all items:
                if whole_start is None:       # the whole ones (start_items) are needed
                    return None
                start, w = whole_start(cfg)
                acc = wt.union(acc, w)
                items = tuple(start.items())
            else:
                entry = self.init.get(cfg)
                if entry is None:
                    return None
                q, w = entry
                keep = self.init_restrict.get(cfg)
                if keep is not None:          # another's start, within this one's tokens
                    keep = wt.difference(UNIVERSE_ID, keep)
                    w = wt.intersect(w, keep)
                acc = wt.union(acc, w)
                if q < 0:
                    continue
                items = self.items[q]
                if items is None:             # released after an eager compile
                    return None
                if isinstance(items, bytes):
                    items = unpack_items(items)
                if keep is not None:
                    items = [(it, wt.intersect(w2, keep)) for it, w2 in items]
            for (skip, lhs, terms, F), w2 in items:
                it = (skip + delay, lhs, terms, F)
                pairs[it] = wt.union(pairs.get(it, EMPTY_ID), w2)
        if acc != EMPTY_ID:
            pairs = {it: wt.difference(w, acc) for it, w in pairs.items()}
        with self.lock:
            e = self.pair_init[key] = (self._state(pairs), acc)
        return e

    def drop_pair(self, key: tuple, mark: int) -> None:
        """Forget the pair start ``key`` (:func:`pair_key`) and the states from ``mark``
        on (all added after the automaton was complete, so no older state leads to them)."""
        with self.lock:
            self.pair_init.pop(key, None)
            for lst in (self.items, self.trans, self.default, self.complete, self._groups):
                del lst[mark:]
            self._ids = {k: q for k, q in self._ids.items() if q < mark}

    def _index(self, q: int):
        """Group the items of state ``q`` for computing edges; compute its default edge.

        Returns ``(groups, by_lhs, d_next, stages)``: ``groups`` maps a relevance set to the
        items reading the stack state directly; ``by_lhs`` maps a nonterminal to the items
        waiting to push its goto (``(0, lhs, terms, F)``); ``d_next`` is what discards the
        entry unread (the default edge); ``stages`` memoizes :meth:`_stage`."""
        g = self._groups[q]
        if g is not None:
            return g
        wt = self.weights
        groups: dict = {}
        by_lhs: dict = {}
        d_next: dict = {}
        items = self.items[q]
        if isinstance(items, bytes):          # from an artifact: decoded on first use
            items = self.items[q] = unpack_items(items)
        union = wt.union
        relevant = self.templates.relevant
        for pair in items:
            it, w = pair
            skip, lhs = it[0], it[1]
            if skip:
                # discards the entry unread: the same on every symbol (what step gives,
                # built here: a state has tens of these, and their memo entries are
                # never read again)
                it2 = (skip - 1, lhs, it[2], it[3])
                prev = d_next.get(it2)
                d_next[it2] = w if prev is None else union(prev, w)
            elif lhs != NO_LHS:
                by_lhs.setdefault(lhs, []).append(pair)
            else:
                groups.setdefault(relevant(it), []).append(pair)
        dd = self._state(d_next)
        self.default[q] = (dd, EMPTY_ID) if dd >= 0 else None
        g = self._groups[q] = (tuple(groups.items()), tuple(by_lhs.items()), d_next, {})
        return g

    def _stage(self, stages: dict, lhs: int, g: int, pairs) -> tuple:
        """Items ``(0, lhs, terms, F)`` of one state on any stack state ``s`` whose goto on
        ``lhs`` is ``g``, up to reading ``s`` itself: each runs from the known stack ``(g,)``
        (as a start item reading ``g``). Returns ``(weight of the items that succeed there,
        ((item waiting for s, weight), ...))``; the same for every such ``s`` (LR gotos on
        one nonterminal from many states mostly share a few targets), so computed once per
        ``(lhs, g)``. Equal to running each item from ``(s, g)``: reductions that pop ``g``
        read ``s`` through the waiting items exactly as they would have."""
        key = (lhs, g)
        r = stages.get(key)
        if r is not None:
            return r
        wt = self.weights
        acc = EMPTY_ID
        waits: dict = {}
        for (_, _, terms, F), w in pairs:
            ws = self.templates.step((0, NO_LHS, terms, F), g)
            if ws is SUCCESS:
                acc = wt.union(acc, w)
            else:
                for it2 in ws:
                    waits[it2] = wt.union(waits.get(it2, EMPTY_ID), w)
        r = stages[key] = (acc, tuple(waits.items()))
        return r

    def edge(self, q: int, s: int):
        """The edge of state ``q`` on stack state ``s`` (computed on first use; thread-safe).
        Returns ``(dst or -1, weight id)`` or None (the walk stops)."""
        with self.lock:
            t = self.trans[q]
            e = t.get(s)
            if e is not None or (self.complete[q] and s in t):
                return e
            e = self._edge(q, s, self._index(q))
            if e is None:
                e = self.default[q]
            if not self.complete[q]:
                t[s] = e if e is not None else STOP
            self._bound_memos()
            return e

    def _step_pairs(self, pairs, s: int, acc: int, nxt: dict) -> int:
        """Step each ``(item, weight)`` on stack state ``s``: the weights of items that
        succeed are added to ``acc`` (returned), those of waiting items to ``nxt``."""
        union = self.weights.union
        step = self.templates.step
        memo = self.templates.step_memo
        get = nxt.get
        for it, w in pairs:
            waits = memo.get((it, s))          # _step's memo, without the call on a hit
            if waits is None:
                waits = step(it, s)
            if waits is SUCCESS:
                acc = union(acc, w)
            else:
                for it2 in waits:
                    prev = get(it2)
                    nxt[it2] = w if prev is None or prev == w else union(prev, w)
        return acc

    def _edge(self, q: int, s: int, index):
        groups, by_lhs, d_next, stages = index
        wt = self.weights
        acc = EMPTY_ID
        nxt = None
        for rel, pairs in groups:
            if s not in rel:
                continue
            if nxt is None:
                nxt = dict(d_next)
            acc = self._step_pairs(pairs, s, acc, nxt)
        if by_lhs:
            gotos = self.templates.goto[s]
            for lhs, pairs in by_lhs:
                g = gotos.get(lhs)
                if g is None:
                    continue
                if nxt is None:
                    nxt = dict(d_next)
                acc_g, waiting = self._stage(stages, lhs, g, pairs)
                if acc_g != EMPTY_ID:
                    acc = wt.union(acc, acc_g)
                acc = self._step_pairs(waiting, s, acc, nxt)
        if nxt is None:
            return None              # like every other symbol: the default edge
        if acc != EMPTY_ID:
            nxt = {it: wt.difference(w, acc) for it, w in nxt.items()}
        dst = self._state(nxt)
        return (dst, acc)

    def expand(self, q: int) -> None:
        """Compute every edge of state ``q`` (idempotent; thread-safe)."""
        with self.lock:
            if self.complete[q]:
                return
            index = self._index(q)
            syms: set = set()
            for rel, _ in index[0]:
                syms.update(rel)
            for lhs, _ in index[1]:
                syms.update(self.templates.goto_states.get(lhs, ()))
            edges: dict = {}
            for s in syms:
                e = self._edge(q, s, index)
                # None: the default edge applies; STOP only arises without a default edge
                # (the default's items are part of every symbol's successor)
                if e is not None and e != STOP:
                    edges[s] = e
            self.trans[q] = edges
            self.complete[q] = True
            self._groups[q] = None

    def expand_all(self, progress=None, stop=None, guard=None, start: int = 0) -> bool:
        """Expand every state reachable from the configurations added so far (from state
        ``start`` on: earlier ones are complete), breadth first; stop when ``stop()``
        says so (the soft budget). Returns whether all are complete. ``guard.check()``
        (hard limits) runs before each state."""
        q = start
        while q < len(self.items):
            if stop is not None and stop():
                return all(self.complete)
            if not self.complete[q]:
                if guard is not None:
                    guard.check()
                self.expand(q)
                self._bound_memos()
            q += 1
            if progress is not None and q % 2000 == 0:
                progress(q, len(self.items))
        return True

    def expand_partial(self, deadline: float) -> tuple[int, bool]:
        """Expand every state some of whose edges were computed on first use (masks
        walked it on some stack states, not others yet), in id order, until
        ``time.perf_counter()`` passes ``deadline`` (checked between states).
        Returns ``(states expanded, whether none is left)``."""
        with self.lock:
            todo = [q for q, t in enumerate(self.trans) if t and not self.complete[q]]
        n = 0
        for q in todo:
            if time.perf_counter() >= deadline:
                return n, False
            self.expand(q)
            self._bound_memos()
            n += 1
        return n, True

    #: estimated bytes of one symbolic-run memo entry (key and value tuples of a few
    #: items each, the dict slot); measured ~250-450 B on the benchmark grammars
    MEMO_ENTRY_BYTES = 400
    #: memo bound during an eager compile (1.5M entries)
    COMPILE_MEMO_BYTES = 1_500_000 * MEMO_ENTRY_BYTES

    def memo_estimate(self) -> int:
        """Estimated bytes held by the symbolic-run memos (entries x MEMO_ENTRY_BYTES)."""
        return self.templates.memo_entries() * self.MEMO_ENTRY_BYTES

    def _bound_memos(self) -> None:
        """The symbolic-run memos are caches: past ``memo_bytes`` (estimated) they are
        dropped together (recomputed on demand). O(1); bounds compile memory on large
        grammars and runtime memory when states are compiled on first use."""
        if self.memo_estimate() > self.memo_bytes:
            self.templates.clear_memos()

    def index_by_digest(self) -> None:
        """Key the state index by digests of the item sets (:func:`_state_digest`) from
        now on: 16 bytes per state instead of a frozenset of its items, which the
        garbage collector would walk on every full pass (~0.15 s for a large partial
        compile). Interning a state then costs tens of µs more: done after an eager
        compile, and from the start when states are only built on first use."""
        if not self._digest_ids:
            self._ids = _digest_index(self._ids)
            self._digest_ids = True

    def release_items(self) -> int:
        """After an eager compile: drop the item sets of complete states (only incomplete
        states need them) and the token sets nothing refers to any more
        (:meth:`compact_weights`, which also rebuilds the state index, by digests, for the
        incomplete states: each digested once), and clear the symbolic-run memos.
        Returns the number of token sets dropped."""
        for q, done in enumerate(self.complete):
            if done:
                self.items[q] = None
        self._digest_ids = True
        dropped = self.compact_weights()
        self.templates.clear_memos(keep_checks=True)
        return dropped

    def compact_weights(self) -> int:
        """Keep only the token sets the automaton refers to (edges, start entries, the
        item sets of states not compiled yet, EOS and special tokens), renumbered
        (:meth:`WeightTable.subset`): a compile interns every intermediate union and
        difference, and an artifact stored them all (Java's budgeted compile: 7k of
        317k sets referenced; the others were 303 of the 325 MB token-set blob, most of
        the artifact's load time).
        The state index of the states not compiled yet is rebuilt (its keys contain
        weight ids); ``hot_weights`` keeps the kept ones, renumbered. Returns the number
        of sets dropped.

        An automaton loaded from an artifact (:meth:`mark_loaded`) keeps the artifact's
        sets, all referenced when it was written, at their ids: the item sets of its
        states are then neither decoded nor rewritten (those of states added since
        are), so saving after use costs what was added, not the whole automaton."""
        with self.lock:
            self.end_restricting()
            kept_w, kept_q = self._loaded or (0, 0)
            used = set(range(kept_w))
            used.add(EMPTY_ID)
            for t in self.trans:
                if t:
                    used.update(w for _, w in t.values())
            used.update(d[1] for d in self.default if d is not None)
            used.update(w for _, w in self.init.values())
            used.update(w for _, w in self.pair_init.values())
            used.update(w for _, w in self.init_base.values())
            used.update(self.init_restrict.values())
            if self.eos_weight is not None:
                used.add(self.eos_weight)
            used.update(w for _, w in self.special_weights or ())
            items = self.items
            for q in range(kept_q, len(items)):
                its = items[q]
                if its is None:
                    continue
                if isinstance(its, bytes):
                    its = items[q] = unpack_items(its)
                used.update(w for _, w in its)
            before = len(self.weights)
            self.weights, new = self.weights.subset(used)
            if not np.array_equal(new[:kept_w], np.arange(kept_w)):
                raise AssertionError("an artifact's token sets were renumbered")
            m = new.tolist()

            def entry(e):
                return e if e is None else (e[0], m[e[1]])

            self.trans = [t if not t else {s: (d, m[w]) for s, (d, w) in t.items()}
                          for t in self.trans]
            self.default = [entry(d) for d in self.default]
            self.init = {c: entry(e) for c, e in self.init.items()}
            self.pair_init = {k: entry(e) for k, e in self.pair_init.items()}
            self.init_base = {c: entry(e) for c, e in self.init_base.items()}
            self.init_restrict = {c: m[w] for c, w in self.init_restrict.items()}
            if self.eos_weight is not None:
                self.eos_weight = m[self.eos_weight]
            if self.special_weights is not None:
                self.special_weights = tuple((t, m[w]) for t, w in self.special_weights)
            self.hot_weights = tuple(m[w] for w in self.hot_weights if m[w] >= 0)
            ids = {}
            if kept_q:          # the artifact's states: same items, same keys
                for key, q in self._ids.items():
                    if q < kept_q and items[q] is not None:
                        ids[key] = q
            for q in range(kept_q, len(items)):
                its = items[q]
                if its is not None:
                    its = items[q] = tuple((it, m[w]) for it, w in its)
                    ids[_state_digest(its) if self._digest_ids else frozenset(its)] = q
            self._ids = ids
            self._groups = [None] * len(items)     # hold weight ids
            return before - len(self.weights)

    def mark_loaded(self, counts: tuple | None = None) -> None:
        """Note that this automaton was just loaded from an artifact (compacted when
        written): its token sets and states so far (or the first ``counts`` = (token
        sets, states): those of the artifact a snapshot's original was loaded from) are
        kept as they are by :meth:`compact_weights`. Needs the state index keyed by
        digests (as loaded)."""
        if self._digest_ids:
            self._loaded = tuple(counts) if counts is not None else (len(self.weights),
                                                                     len(self.items))

    @property
    def loaded_from_artifact(self) -> bool:
        """Whether :meth:`mark_loaded` was called (it is not minimized again)."""
        return self._loaded is not None

    @property
    def loaded_counts(self) -> tuple | None:
        """(token sets, states) of the artifact it was loaded from, or None."""
        return self._loaded

    # -- minimization (:mod:`.dwa_minimize`) -----------------------------------------------
    def successors(self, q: int) -> set:
        """The states ``q``'s edges (default included) lead to."""
        return dwa_minimize.successors(self, q)

    def minimize(self) -> int:
        """Merge the states that give every stack the same tokens; returns how many
        states were removed (:func:`.dwa_minimize.minimize`). State ids change: for an
        automaton no runtime walks yet."""
        with self.lock:
            self.end_restricting()
            r = dwa_minimize.minimize(self.items, self.trans, self.default, self.complete)
            if r is None:
                return 0
            n = len(self.items)
            new, self.items, self.trans, self.default, self.complete = r
            self._groups = [None] * len(self.items)
            self._ids = {k: new[q] for k, q in self._ids.items()}

            def remap(e):
                return e if e is None or e[0] < 0 else (new[e[0]], e[1])

            self.init = {k: remap(e) for k, e in self.init.items()}
            self.pair_init = {k: remap(e) for k, e in self.pair_init.items()}
            return n - len(self.items)

    # -- plain data (artifacts; :mod:`.dwa_data`) -------------------------------------
    def to_data(self) -> dict:
        """The automaton as plain data (:func:`.dwa_data.to_data`). Take it under the
        lock when other threads may use the automaton."""
        ids = self._ids if self._digest_ids else _digest_index(self._ids)
        return dwa_data.to_data(self, ids)

    @classmethod
    def from_data(cls, lr: LRTables, accepts_empty: bool, data: dict) -> "ParserDWA":
        """The automaton of :meth:`to_data` over the same LR tables (a malformed ``data``
        raises ``ValueError``, ``KeyError`` or ``TypeError``)."""
        dwa = cls(lr, accepts_empty, WeightTable.from_data(data["weights"]))
        dwa._ids = dwa_data.load_data(dwa, data)
        dwa._digest_ids = True
        dwa._groups = [None] * len(dwa.items)
        return dwa

    # -- reports -----------------------------------------------------------------------
    def stats(self) -> dict:
        n = len(self.trans)
        edges = sum(len(t) for t in self.trans if t is not None)
        depth, acyclic = dwa_minimize.depth(self)
        return {"configs": len(self.init), "states": n, "complete_states": sum(self.complete),
                "budget_exhausted": self.budget_exhausted,
                "budget_used_up": self.budget_used_up, "edges": edges,
                "defaults": sum(1 for d in self.default if d is not None),
                "weights": len(self.weights), "acyclic": acyclic, "max_depth": depth,
                "head_pairs": len(self.pair_init), "configs_on_base": len(self.init_base),
                "configs_restricted": len(self.init_restrict),
                "configs_aliased": len(self.alias)}


def special_weights(weights: WeightTable, specials) -> tuple:
    """``((parser terminal, weight id of the token ids bound to it), ...)``."""
    return tuple((int(t), weights.intern(BitMap(sorted(ids)))) for t, ids in sorted((specials or {}).items()))


def pair_key(c_top: int, c_low: int, below: bool) -> tuple:
    """Key of a pair start (:meth:`ParserDWA.add_pair`): ``(c_top, c_low, 1)`` for heads
    on nodes one above the other, the sorted configurations and 0 for one stack."""
    return (c_top, c_low, 1) if below else (min(c_top, c_low), max(c_top, c_low), 0)
