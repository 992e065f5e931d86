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
mean the walk may read the whole stack). ``stats()`` reports both. The starts
(per lexer configuration, per pair of heads) are made by
:mod:`stackmask.compile.dwa_starts`; building the automaton for a grammar and a
vocabulary is :mod:`stackmask.compile.build`.
"""

from __future__ import annotations

import logging
import threading
import time

from pyroaring import BitMap

from .. import native
from ..errors import LimitExceeded
from ..glr.lalr import LRTables
from ..wfa.weights import EMPTY_ID, WeightTable
from .templates import NO_LHS, SUCCESS, Templates
from . import dwa_compact, dwa_data, dwa_minimize, dwa_starts
from .dwa_data import digest_index as _digest_index
from .dwa_data import unpack_items
from .dwa_data import state_digest as _state_digest
from .dwa_minimize import STOP

log = logging.getLogger("stackmask")


class CoreItems(bytes):
    """A state's items as the compiled core's key (its ``(item id << 32) | weight id``
    values, sorted, as bytes): what a state made by the core holds instead of a tuple of
    ``(item, weight)`` pairs while the core is in use (the same object is its key in the
    state index). :meth:`ParserDWA.state_items` gives the pairs."""

    __slots__ = ()



class ParserDWA:
    """The determinized token-set automaton over stack states, built lazily or eagerly.

    ``trans[q]`` maps a stack state id to ``(next state or -1, weight id)``; ``default[q]``
    is the else-edge (or None). ``-1`` as next state means "nothing left to decide".
    ``trans[q] is None`` for a complete state of a loaded automaton whose edges are
    still in the artifact's arrays: read them with :meth:`state_edges`.
    """

    #: the key of a pair start in :attr:`pair_init` (:func:`.dwa_starts.pair_key`): part of
    #: the artifact's public names, so the runtime forms it without importing the builder
    pair_key = staticmethod(dwa_starts.pair_key)

    #: the shortest terminal sequence held out of the automaton when it is (:attr:`route_min`,
    #: set by the builder: :data:`.build.ROUTE_AFTER_STATES`)
    ROUTE_MIN_TERMINALS = 3

    def __init__(self, lr: LRTables, accepts_empty: bool, weights: WeightTable):
        self.weights = weights
        self._accepts_empty = accepts_empty
        self.templates = Templates(lr, accepts_empty)    # the symbolic runs and their memos
        # the automaton
        self.items: list = []            # state -> tuple of (item, weight id); None once released
        self.trans: list = []            # state -> dict symbol -> (dst, wid), or None
        #: a loaded automaton's edges as the artifact stores them (``dwa_data.EdgeArrays``):
        #: the states whose ``trans`` entry is None read theirs from here
        self.edge_arrays = None
        #: edges made by the compiled core, each distinct ``(next state, weight id)`` pair
        #: once (Java's unminimized automaton: 7.8 million edges, 1 million pairs);
        #: emptied when the automaton is minimized or released
        self._edge_pairs: dict = {}
        self.default: list = []          # state -> (dst, wid) or None
        self.complete: list = []         # state -> all edges computed (else: computed on use)
        self._groups: list = []          # state -> item index for computing edges
        self._ids: dict = {}             # state key -> state (see :meth:`state_key`, or digests)
        self._digest_ids = False         # keys are digests (:func:`_state_digest`)
        # the compiled expansion (``_native.ExpandCore``, made on first use), or None: the
        # pure-Python path (the extension is not built, or STACKMASK_PURE_PYTHON is set)
        self._native = native.module()
        self._core = None
        self._lr = lr
        self.init: dict = {}             # lexer config -> (state or -1, weight id)
        #: lexer config -> (base config, weight id of the tokens that differ): the config's
        #: mask is its base's mask (walked from the same stack) without those tokens, united
        #: with what ``init`` starts for those tokens only (see :meth:`add_config_on_base`)
        self.init_base: dict = {}
        #: lexer config -> weight id of the tokens its start leaves out: its start is
        #: another's restricted to the rest (``init`` holds that other start), so its mask
        #: on a stack is that start's mask without these tokens (:meth:`add_config`)
        self.init_restrict: dict = {}
        self.starts = dwa_starts.Starts(self)    # makes the starts (:mod:`.dwa_starts`)
        #: lexer config -> the config it is an alias of: no token tells them apart
        #: (:mod:`stackmask.compile.config_classes`); masks walk the other's start
        self.alias: dict = {}
        #: lexer config -> ((deep config, table, lo, hi), ...): a counted chain's state near
        #: a bound, whose mask is the union of the deep configs' masks, each without the
        #: tokens whose iteration count (``count_tables[table]``, per token id) is outside
        #: ``lo..hi`` (table -1: none left out); it has no start (:mod:`.count_split`)
        self.count_split: dict = {}
        self.count_tables: list = []
        self.pair_init: dict = {}        # (config, config, below) -> start of two heads (add_pair)
        #: start items whose terminal sequence has at least this many terminals are not
        #: states of the automaton but checked by masks over the GSS (DESIGN, *Routing*;
        #: None: none; set before the first start is made)
        self.route_min: int | None = None
        #: start key (a configuration, or a pair key) -> ``((item, weight id), ...)``: its
        #: start items held out of the automaton (``route_min``); a mask unites the
        #: weights of those that hold on the head's stack with its walk's
        self.routed: dict = {}
        self._held_tuples: dict = {}     # each distinct value of routed once
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
        self._routed_misses = 0          # routed_step's memo misses (bounds the memos)

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
            self.bound_memos()
            self.weights.bound_memos()

    def bind_specials(self, specials) -> None:
        """Intern the token sets of the special tokens bound to parser terminals
        (``specials``: terminal -> token ids) and note those terminals for viability."""
        self.special_weights = special_weights(self.weights, specials)
        self.special_check = sum(1 << t for t, _ in self.special_weights)

    # -- automaton construction ----------------------------------------------------------
    def split_routed(self, key, pairs: dict) -> dict:
        """Hold ``pairs``' items of ``route_min`` or more terminals out of the automaton
        as ``routed[key]`` (start ``key``: a configuration or a pair key; None: not
        kept); returns the others, the start's items in the automaton."""
        k = self.route_min
        if k is None:
            return pairs
        out = {it: w for it, w in pairs.items() if len(it[2]) < k}
        if key is None:
            return out
        held = tuple((it, w) for it, w in pairs.items() if len(it[2]) >= k and w != EMPTY_ID)
        if held:
            self.routed[key] = self._held_tuples.setdefault(held, held)
        else:
            self.routed.pop(key, None)
        return out

    def held_checks(self, node_class=None):
        """The compiled check of held-out items (``_native.HeldChecks``, over LR runs of
        its own; GSS nodes of ``node_class`` read by slot), or None on the pure-Python
        path (:meth:`routed_step` then)."""
        if self._native is None:
            return None
        return self._native.HeldChecks(self._native.TemplateRuns(self._lr, self._accepts_empty),
                                       node_class)

    def set_routed(self, routed: dict) -> None:
        """Replace :attr:`routed` (loaded, or its token sets renumbered); equal item
        tuples become one object (the masks' check keeps its first steps per tuple)."""
        self._held_tuples = {}
        self.routed = {k: self._held_tuples.setdefault(h, h) for k, h in routed.items()}

    def routed_step(self, item: tuple, s: int):
        """A held-out item (:attr:`routed`, or one it waits for) reading stack state
        ``s``: ``True`` (it succeeds) or a dict whose keys are the items waiting for the
        entry below (:meth:`Templates.step`: memoized; a miss runs under the lock)."""
        r = self.templates.step_memo.get((item, s))
        if r is None:
            with self.lock:
                r = self.templates.step(item, s)
                self._routed_misses += 1
                if not self._routed_misses & 63:
                    self.bound_memos()
        return r

    def intern_state(self, pairs: dict) -> int:
        """Intern a state from ``item -> weight id`` (empty weights dropped); -1 if empty."""
        if self._digest_ids:
            # the digest is order-independent: no set of the pairs is needed
            items = tuple((it, w) for it, w in pairs.items() if w != EMPTY_ID)
            if not items:
                return -1
            key = _state_digest(items)
        else:
            core = self._expander()
            if core is not None:
                return self._intern_key(core.key_of(pairs.items()))
            if EMPTY_ID in pairs.values():       # (a C-level scan: most states have none)
                pairs = {it: w for it, w in pairs.items() if w != EMPTY_ID}
            if not pairs:
                return -1
            key = items = frozenset(pairs.items())
        q = self._ids.get(key)
        return q if q is not None else self._new_state(key, tuple(items))

    def _new_state(self, key, items: tuple) -> int:
        """Add the state ``items`` under index key ``key``."""
        q = len(self.items)
        if self.max_states is not None and q >= self.max_states:
            raise LimitExceeded("max_automaton_states", q + 1, self.max_states,
                                "the mask automaton grew too large",
                                "the grammar's LR states times lexer configurations; "
                                "compile_budget_s or compile='lazy' compile only what masks use")
        self._ids[key] = q
        self.items.append(items)
        self.trans.append({})
        self.default.append(None)
        self.complete.append(False)
        self._groups.append(None)
        return q

    def _intern_key(self, key: bytes) -> int:
        """The state of a key of the compiled core (``b""``: -1, no state); a new state
        holds its key as its items (:class:`CoreItems`)."""
        if not key:
            return -1
        q = self._ids.get(key)
        if q is None:
            key = CoreItems(key)
            q = self._new_state(key, key)
        return q

    def _expander(self):
        """The compiled expansion core (made on first use), or None: the pure-Python
        path, or the state index is keyed by digests (a loaded or released automaton,
        whose states are added one at a time on use). While it is in use the state index
        is keyed by its keys (:meth:`state_key`)."""
        if self._native is None or self._digest_ids:
            return None
        core = self._core
        wt = self.weights
        if core is None:
            runs = self._native.TemplateRuns(self._lr, self._accepts_empty)
            core = self._core = self._native.ExpandCore(runs, self.templates.relevant, wt,
                                                        EMPTY_ID, wt.universe_id)
        elif core.weights_owner is not wt:      # the token sets were renumbered
            core.set_weights(wt)
        return core

    def state_key(self, items) -> object:
        """The state index's key of a state with ``(item, weight id)`` pairs ``items``
        (empty weights dropped): their digest where the index is keyed by digests, else
        the compiled core's key (sorted item and weight ids as bytes), else their
        frozenset."""
        if self._digest_ids:
            return _state_digest([p for p in items if p[1] != EMPTY_ID])
        core = self._expander()
        if core is not None:
            return core.key_of(items)
        return frozenset(p for p in items if p[1] != EMPTY_ID)

    def _digest_keys(self) -> dict:
        """The state index keyed by digests (:func:`_state_digest`) of the item sets."""
        if self._digest_ids:
            return self._ids
        if self._core is None:
            return _digest_index(self._ids)
        return {_state_digest(self.state_items(q)): q for q in self._ids.values()}

    def state_items(self, q: int):
        """State ``q``'s ``((item, weight id), ...)`` (None once released): decoded from an
        artifact's packed form (kept decoded) or from the compiled core's key."""
        items = self.items[q]
        if type(items) is CoreItems:
            return self._core.items_of_key(items)
        if isinstance(items, bytes):          # from an artifact: decoded on first use
            items = self.items[q] = unpack_items(items)
        return items

    def state_edges(self, q: int) -> dict:
        """State ``q``'s edges ``{stack state: (next state or -1, weight id)}`` (the
        default edge apart). A loaded automaton makes a complete state's dict from the
        artifact's arrays when first asked (two threads asking at once make equal ones;
        the arrays are read before the entry: :meth:`materialize` drops them only once
        every entry is made)."""
        arrays = self.edge_arrays
        t = self.trans[q]
        if t is None:
            t = self.trans[q] = arrays.state(q)
        return t

    def materialize(self, deadline: float | None = None) -> bool:
        """Every state's edges as a dict, in state order (breadth first from the
        starts, as states were made), until ``time.perf_counter()`` passes ``deadline``
        (None: all, before an operation on the whole automaton: minimization,
        compaction, writing it). Returns whether all are."""
        if self.edge_arrays is None:
            return True
        trans, state = self.trans, self.edge_arrays.state
        made = 0
        for q, t in enumerate(trans):
            if t is None:
                if deadline is not None and not made & 63 and time.perf_counter() > deadline:
                    return False
                trans[q] = state(q)
                made += 1
        self.edge_arrays = None
        return True

    def _drop_core(self) -> None:
        """Stop using the compiled core: the states it made get their items as pairs."""
        core = self._core
        if core is not None:
            items = self.items
            for q, its in enumerate(items):
                if type(its) is CoreItems:
                    items[q] = core.items_of_key(its)
            self._core = None


    def add_config(self, cfg: int, outcomes, bitmap_of=None) -> tuple:
        """Start state of lexer configuration ``cfg`` from ``(outcome, tokens)`` pairs (an
        outcome may repeat): tokens as a weight id, or an int64 array of positions that
        ``bitmap_of`` turns into a token-id bitmap (:func:`.dwa_starts.start_items`). The
        start may be another's restricted to its tokens (``init_restrict``); None while a
        batch collects starts (:meth:`begin_batch`)."""
        pairs, acc = self.start_items(outcomes, bitmap_of)
        with self.lock:
            return self.starts.add(cfg, pairs, acc)

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

    def begin_batch(self) -> None:
        """Collect the starts :meth:`add_config` is given until :meth:`end_batch`, which
        makes them all (:meth:`.dwa_starts.Starts.end_batch`)."""
        with self.lock:
            self.starts.begin_batch()

    def end_batch(self) -> None:
        with self.lock:
            self.starts.end_batch()

    def end_restricting(self) -> None:
        """Stop comparing new starts with earlier ones: state ids or token set ids are
        about to change (minimization, compaction), which the kept starts would not
        follow; starts compiled later are compiled whole."""
        self.starts.end_restricting()

    def start_items(self, outcomes, bitmap_of=None) -> tuple:
        """``(start items: item -> weight id, weight decided at once)`` of ``outcomes``
        (:func:`.dwa_starts.start_items`), no state made."""
        return dwa_starts.start_items(self, outcomes, bitmap_of)

    def add_pair(self, c_top: int, c_low: int, below: bool, whole_start=None) -> tuple | None:
        """Start state of two heads walked as one (:func:`.dwa_starts.pair_start`; kept
        in ``pair_init``), or None."""
        return dwa_starts.pair_start(self, c_top, c_low, below, whole_start)

    def drop_pair(self, key: tuple, mark: int) -> None:
        """Forget the pair start ``key`` (:func:`.dwa_starts.pair_key`) and the states from ``mark``
        on (all added after the automaton was complete, so no older state leads to them)."""
        with self.lock:
            self.pair_init.pop(key, None)
            self.routed.pop(key, None)
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
        items = self.state_items(q)
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
        dd = self.intern_state(d_next)
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
            t = self.state_edges(q)
            e = t.get(s)
            if e is not None or (self.complete[q] and s in t):
                return e
            e = self._edge(q, s, self._index(q))
            if e is None:
                e = self.default[q]
            if not self.complete[q]:
                t[s] = e if e is not None else STOP
            self.bound_memos()
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
        dst = self.intern_state(nxt)
        return (dst, acc)

    def expand(self, q: int) -> None:
        """Compute every edge of state ``q`` (idempotent; thread-safe)."""
        with self.lock:
            if self.complete[q]:
                return
            core = self._expander()
            if core is not None:
                self._expand_compiled(core, q)
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

    def _expand_compiled(self, core, q: int) -> None:
        """:meth:`expand` by the compiled core (``_native.ExpandCore.expand``, the twin of
        :meth:`_index` and :meth:`_edge`): the same edges, default and successors."""
        key = self.items[q]
        if type(key) is not CoreItems:       # made by the Python path, or loaded
            key = core.key_of(self.state_items(q))
        dkey, found = core.expand(key)
        dd = -1 if dkey is None else self._intern_key(dkey)
        self.default[q] = (dd, EMPTY_ID) if dd >= 0 else None
        edges: dict = {}
        shared = self._edge_pairs
        ids = self._ids
        for s, key, acc in found:       # _intern_key inlined: most keys are known states
            if key:
                dst = ids.get(key)
                if dst is None:
                    dst = self._intern_key(key)
            else:
                dst = -1
            if dst >= 0 or acc != EMPTY_ID:
                e = (dst, acc)
                edges[s] = shared.setdefault(e, e)
        self.trans[q] = edges
        self.complete[q] = True
        self._groups[q] = None

    def expand_all(self, progress=None, stop=None, guard=None, start: int = 0) -> bool:
        """Expand every state reachable from the configurations added so far (from state
        ``start`` on: earlier ones are complete), breadth first; stop when ``stop()``
        says so (the soft budget). Returns whether all are complete. ``guard.check()``
        (hard limits) runs before each state."""
        q = start
        n = 0
        while q < len(self.items):
            if stop is not None and stop():
                return all(self.complete)
            if not self.complete[q]:
                if guard is not None:
                    guard.check()
                self.expand(q)
                n += 1
                if n % self.BOUND_EVERY == 0:
                    self.bound_memos()
            q += 1
            if progress is not None and q % 2000 == 0:
                progress(q, len(self.items))
        return True

    #: :meth:`expand_all` checks the memos' bound every this many states (a state adds
    #: tens of entries; summing the memos' sizes after each one was 4% of construction)
    BOUND_EVERY = 64

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
            self.bound_memos()
            n += 1
        return n, True

    #: estimated bytes of one symbolic-run memo entry (key and value tuples of a few
    #: items each, the dict slot); measured ~250-450 B on the benchmark grammars
    MEMO_ENTRY_BYTES = 400
    #: estimated bytes of one entry of the compiled core's memos (a table slot of two
    #: int64s at most half full, and the items of a step result)
    CORE_ENTRY_BYTES = 64
    #: memo bound during an eager compile (1.5M entries)
    COMPILE_MEMO_BYTES = 1_500_000 * MEMO_ENTRY_BYTES

    def memo_estimate(self) -> int:
        """Estimated bytes held by the symbolic-run memos (entries x MEMO_ENTRY_BYTES)."""
        return self.templates.memo_entries() * self.MEMO_ENTRY_BYTES

    def bound_memos(self) -> None:
        """The symbolic-run memos are caches: past ``memo_bytes`` (estimated) they are
        dropped together (recomputed on demand). O(1); bounds compile memory on large
        grammars and runtime memory when states are compiled on first use."""
        if self.memo_estimate() > self.memo_bytes:
            self.templates.clear_memos()
        core = self._core
        if core is not None and core.memo_entries() * self.CORE_ENTRY_BYTES > self.memo_bytes:
            core.clear_memos()

    def index_by_digest(self) -> None:
        """Key the state index by digests of the item sets (:func:`_state_digest`) from
        now on: 16 bytes per state instead of a frozenset of its items, which the
        garbage collector would walk on every full pass (~0.15 s for a large partial
        compile). Interning a state then costs tens of µs more: done after an eager
        compile, and from the start when states are only built on first use."""
        if not self._digest_ids:
            self._ids = self._digest_keys()
            self._drop_core()
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
        self._edge_pairs = {}
        self._drop_core()
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
        of sets dropped (:func:`.dwa_compact.compact_weights`).

        An automaton loaded from an artifact (:meth:`mark_loaded`) keeps the artifact's
        sets, all referenced when it was written, at their ids: the item sets of its
        states are then neither decoded nor rewritten (those of states added since
        are), so saving after use costs what was added, not the whole automaton."""
        with self.lock:
            self.end_restricting()
            self.materialize()
            dropped, self._ids = dwa_compact.compact_weights(
                self, self._ids, self._digest_ids, self._loaded or (0, 0))
            self._groups = [None] * len(self.items)     # hold weight ids
            return dropped

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
            self.materialize()
            r = dwa_minimize.minimize(self.items, self.trans, self.default, self.complete,
                                      self._native, consume=True)
            if r is None:
                return 0
            n = len(self.items)
            new, self.items, self.trans, self.default, self.complete = r
            self._edge_pairs = {}
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
        self.materialize()
        return dwa_data.to_data(self, self._digest_keys())

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
        self.materialize()
        edges = sum(len(t) for t in self.trans)
        depth, acyclic = dwa_minimize.depth(self)
        return {"configs": len(self.init), "states": n, "complete_states": sum(self.complete),
                "budget_exhausted": self.budget_exhausted,
                "budget_used_up": self.budget_used_up, "edges": edges,
                "defaults": sum(1 for d in self.default if d is not None),
                "weights": len(self.weights), "acyclic": acyclic, "max_depth": depth,
                "head_pairs": len(self.pair_init), "configs_on_base": len(self.init_base),
                "configs_restricted": len(self.init_restrict),
                "configs_aliased": len(self.alias), "configs_counted": len(self.count_split),
                "routed_starts": len(self.routed),
                "routed_items": sum(len(r) for r in self.routed.values())}


def special_weights(weights: WeightTable, specials) -> tuple:
    """``((parser terminal, weight id of the token ids bound to it), ...)``."""
    return tuple((int(t), weights.intern(BitMap(sorted(ids)))) for t, ids in sorted((specials or {}).items()))

