"""Parser DWA: token outcomes (terminal DWA) composed with the LR templates.

Input of the automaton: the LR state ids of one parse stack, **top first**.
Output: the set of tokens whose outcome the stack allows (see
:mod:`stackmask.compile.terminal`). One automaton start per lexer
configuration; the edges carry the tokens decided *on that edge*
("accepted here", so a walk unions edge weights and stops when the state has
nothing left to decide).

Templates as symbolic LR runs
-----------------------------
The template of a terminal sequence ``t1 … tk`` (then possibly a lookahead
check ``t``) is the LR parser run on a stack whose lower part is unknown.
A *waiting item* ``(skip, lhs, terms, F)`` is such a run suspended until
it reads the next stack entry: it first discards ``skip`` entries (popped by a
reduction without being looked at — in a valid LR stack their identity is
implied), then reads the exposed state ``p`` and continues with
``goto[p][lhs]`` pushed on it (``lhs`` = -1 at the very start: the read state
is the top). Between reads the run works on the known part ``A`` of the stack
(pushed states and read states not yet popped): the stack effect
``pop(read…)·push(A…)`` of the polycyclic monoid, cancelled as it goes. GLR
conflicts branch the run; a run succeeds when it shifts its last terminal (or
its lookahead check can be shifted, or for the END check: the stack accepts).

A Parser DWA state is a set of waiting items, each with the tokens still
undecided for it (weights are interned token sets, :class:`WeightTable`).
Reading a stack state steps every item (memoized per (item, state): the
symbolic run does not depend on tokens); tokens of items that succeeded are
the edge's weight and are removed from every item still waiting (they are
decided). This is weighted determinization in the (∪, ∩) semiring of token
sets, with "subtract final weights from outgoing edges" built in.

Symbols with no specific behaviour go through the ``DEFAULT`` edge (only
items that discard the entry unread survive it). The normal form's bounded
reduction chains make the automaton acyclic in practice; where it is not, the
runtime walk still terminates because it reads a finite stack (cycles only
mean the walk may read the whole stack). ``stats()`` reports both.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import threading
import time

import numpy as np
from pyroaring import BitMap

from ..errors import LimitExceeded
from ..glr.lalr import LRTables
from ..lexer.scanner import IGNORE
from ..memo import Memo
from ..plain import Codec
from ..wfa.automaton import topological_order
from ..wfa.weights import EMPTY_ID, WeightTable
from .terminal import TRUE

log = logging.getLogger("stackmask")

END = 0          # LR terminal index of end of input
NO_LHS = -1
ALL = frozenset([-1])   # relevance marker: the item reads every stack state the same way
_NONE: frozenset = frozenset()
_SUCCESS = True          # a run's result: success, or the dict of its waiting items
_NO_WAIT: dict = {}      # shared empty waiting items (results are never modified)
STOP = (-1, EMPTY_ID)   # an edge that ends the walk (stored where the default edge must not apply)

Item = tuple     # (skip, lhs, terms, F): F = check set as a bitmask of terminals (None: no check)


def _bits(mask: int):
    """The set bits of ``mask`` (terminal indexes), lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _merge(parts: list) -> dict:
    """One dict of the waiting items of ``parts`` (a part itself when there is one)."""
    if not parts:
        return _NO_WAIT
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    for p in parts[1:]:
        out.update(p)
    return out


class ParserDWA:
    """The determinized token-set automaton over stack states, built lazily or eagerly.

    ``trans[q]`` maps a stack state id to ``(next state or -1, weight id)``; ``default[q]``
    is the else-edge (or None). ``-1`` as next state means "nothing left to decide".
    ``trans[q] is None`` for a state not expanded yet (:meth:`expand`).
    """

    #: the symbolic-run memos (:class:`~stackmask.memo.Memo`; not saved in artifacts)
    _MEMOS = ("_step_memo", "_run_memo", "_closure_memo", "_split_memo", "_check_rel",
              "_expand_memo", "_pop_memo")

    def __init__(self, lr: LRTables, accepts_empty: bool, weights: WeightTable):
        self.weights = weights
        self.lr = lr                     # the tables it reads (from_data needs them again)
        self._shift = lr.shift
        self._reduce = lr.reduce
        self._goto = lr.goto
        self._rlen = lr.rule_len
        self._rlhs = lr.rule_lhs
        self._accept_state = lr.accept_state
        self._start_state = lr.start_state
        self._accepts_empty = accepts_empty
        n = lr.n_states
        act: dict[int, set] = {}
        for q in range(n):
            for t in lr.shift[q]:
                act.setdefault(t, set()).add(q)
            for t in lr.reduce[q]:
                act.setdefault(t, set()).add(q)
        end = act.setdefault(END, set())
        end.add(lr.accept_state)
        if accepts_empty:
            end.add(lr.start_state)
        self._act = {t: frozenset(s) for t, s in act.items()}
        gs: dict[int, list] = {}
        for q in range(n):
            for a in lr.goto[q]:
                gs.setdefault(a, []).append(q)
        self._goto_states = {a: frozenset(s) for a, s in gs.items()}
        # per LR state, the terminals it can shift (END where it accepts) as a bitmask:
        # check sets are bitmasks too, so items and memo keys are tuples of ints, which
        # the garbage collector stops tracking (its full passes then do not grow with
        # the automaton)
        self._shiftable = tuple(
            sum(1 << t for t in lr.shift[q])
            | (1 << END if q == lr.accept_state or (q == lr.start_state and accepts_empty) else 0)
            for q in range(n))
        self._n_terminals = len(lr.terminals)
        self.follows = terminal_follows(lr.shift, lr.reduce, self._n_terminals)   # for _expand
        self._step_memo: dict = Memo()
        self._run_memo: dict = Memo()
        self._closure_memo: dict = Memo()
        self._split_memo: dict = Memo()
        self._check_rel: dict = Memo()
        self._expand_memo: dict = Memo()     # emissions -> terminal sequences (start items)
        self._pop_memo: dict = Memo()        # (pops, terms, F) -> waiting items of a run frame
        self._nesting = 0                # current depth of _run_above
        # the automaton
        self.items: list = []            # state -> tuple of (item, weight id); None once released
        self.trans: list = []            # state -> dict symbol -> (dst, wid)
        self.default: list = []          # state -> (dst, wid) or None
        self.complete: list = []         # state -> all edges computed (else: computed on use)
        self._groups: list = []          # state -> item index for computing edges
        self._ids: dict = {}             # state key -> state (frozenset of pairs, or digests)
        self._digest_ids = False         # keys are digests (:func:`_state_digest`)
        self.init: dict = {}             # lexer config -> (state or -1, weight id)
        self.pair_init: dict = {}        # (config, config, below) -> start of two heads (add_pair)
        self.eos_weight: int | None = None   # weight id of the EOS ids, once interned
        # weight ids whose dense masks the runtime makes first (those masks needed when
        # the artifact was saved: see Masker.hot_weights)
        self.hot_weights: tuple = ()
        self.special_weights: tuple | None = None   # ((parser terminal, weight id of its token ids), ...)
        self.special_check: int = 0      # bitmask of the special-token terminals (viability check)
        self._lock = threading.RLock()
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

    # -- templates: symbolic LR runs --------------------------------------------------------
    def _run(self, A: tuple, terms: tuple, F):
        """Run the LR parser on known stack part ``A`` (top last): shift ``terms``, then
        (``F`` not None) check that some terminal of ``F`` can be shifted.

        Returns ``_SUCCESS`` (True), or the waiting items: a dict (keys; values None, never
        to be modified; no tuple around it, so memo entries hold no object the garbage
        collector must keep tracking once it has seen the dict): merging a run's
        waiting items into its caller's reuses their stored hashes (GLR branches can wait
        with thousands of items, merged at every level).
        Memoized on ``(A, terms, F)``; the reductions for one lookahead are memoized on
        ``(A, terminal)`` (:meth:`_closure`), so items sharing a prefix or a suffix share
        that work."""
        memo = self._run_memo
        key = (A, terms, F)
        r = memo.get(key)
        if r is not None:
            return r
        # Depth first over the shifted stacks, with an explicit stack of frames
        # [key, waiting items, shifted stacks, next index, rest of terms]: a token can
        # emit thousands of terminals (one recursion level each would overflow).
        frames: list = []
        cur = key
        result = None          # the result of the frame that just finished
        while True:
            if cur is not None:
                A1, terms1, _ = cur
                if not terms1:
                    result = memo[cur] = self._check(A1, F)
                else:
                    shifted, pops = self._closure(A1, terms1[0])
                    # dicts of waiting items, merged once when the frame ends
                    parts = [self._pop_waits(pops, terms1, F)] if pops else []
                    frames.append([cur, parts, shifted, 0, terms1[1:]])
                    result = None
                cur = None
            if not frames:
                return result
            fr = frames[-1]
            fkey, parts, shifted, i, rest = fr
            done = None
            if result is not None:
                if result is _SUCCESS:
                    done = _SUCCESS
                elif result:
                    parts.append(result)
                result = None
            while done is None and i < len(shifted):
                A2 = shifted[i]
                i += 1
                if not rest and F is None:
                    done = _SUCCESS
                    break
                ck = (A2, rest, F)
                r2 = memo.get(ck)
                if r2 is None:
                    fr[3] = i
                    cur = ck
                    break
                if r2 is _SUCCESS:
                    done = _SUCCESS
                elif r2:
                    parts.append(r2)
            if cur is not None:
                continue
            if done is None:
                done = _merge(parts)
            memo[fkey] = done
            frames.pop()
            result = done

    def _pop_waits(self, pops: tuple, terms: tuple, F) -> dict:
        """The waiting items of reductions ``pops`` (``(entries to discard, lhs)``, from
        :meth:`_closure`) taken before shifting ``terms``; memoized (many stacks pop
        alike, and building each item rehashes ``terms``). Never to be modified."""
        key = (pops, terms, F)
        w = self._pop_memo.get(key)
        if w is None:
            w = self._pop_memo[key] = {(skip, lhs, terms, F): None for skip, lhs in pops}
        return w

    def _closure(self, A: tuple, t: int):
        """Reductions on lookahead ``t`` from ``A``, then the shift of ``t``: the known
        stacks after the shift, and the reductions that pop below ``A`` as
        ``(entries to discard, lhs)``."""
        key = (A, t)
        r = self._closure_memo.get(key)
        if r is not None:
            return r
        shift, reduce, goto = self._shift, self._reduce, self._goto
        rlen, rlhs = self._rlen, self._rlhs
        shifted: dict = {}
        pops: dict = {}
        work = [A]
        seen = {A}
        while work:
            A1 = work.pop()
            q = A1[-1]
            q2 = shift[q].get(t)
            if q2 is not None:
                shifted[A1 + (q2,)] = None
            for rule in reduce[q].get(t, ()):
                n = rlen[rule]
                if len(A1) > n:
                    A2 = A1[:-n]
                    g = goto[A2[-1]].get(rlhs[rule])
                    if g is not None:
                        A2 = A2 + (g,)
                        if A2 not in seen:
                            seen.add(A2)
                            work.append(A2)
                else:
                    pops[(n - len(A1), rlhs[rule])] = None
        r = self._closure_memo[key] = (tuple(shifted), tuple(pops))
        return r

    def _check(self, A: tuple, F: int):
        """Whether some terminal of ``F`` can be shifted on ``A`` after reductions (on that
        terminal); else the waiting items for reductions popping below ``A``."""
        shift_ok = self._shiftable
        reduce_split = self._split
        goto, rlen, rlhs = self._goto, self._rlen, self._rlhs
        waiting: dict = {}
        work = [(A, F)]
        seen = {(A, F)}
        while work:
            A1, F1 = work.pop()
            q = A1[-1]
            if F1 & shift_ok[q]:
                return _SUCCESS
            for rule, Fs in reduce_split(q, F1):
                n = rlen[rule]
                if len(A1) > n:
                    A2 = A1[:-n]
                    g = goto[A2[-1]].get(rlhs[rule])
                    if g is not None:
                        nxt = (A2 + (g,), Fs)
                        if nxt not in seen:
                            seen.add(nxt)
                            work.append(nxt)
                else:
                    waiting[(n - len(A1), rlhs[rule], (), Fs)] = None
        return waiting

    def _split(self, q: int, F: int) -> tuple:
        """The reductions at state ``q`` for check set ``F``: ``(rule, terminals of F
        it is done for)`` (memoized; terminal sets as bitmasks)."""
        key = (q, F)
        r = self._split_memo.get(key)
        if r is None:
            by_rule: dict = {}
            for t, rules in self._reduce[q].items():
                if F >> t & 1:
                    for rule in rules:
                        by_rule[rule] = by_rule.get(rule, 0) | 1 << t
            r = self._split_memo[key] = tuple(by_rule.items())
        return r

    def _step(self, item: Item, s: int):
        """``item`` reading stack state ``s``: ``_SUCCESS`` or the waiting items (memoized)."""
        key = (item, s)
        r = self._step_memo.get(key)
        if r is None:
            skip, lhs, terms, F = item
            if skip:
                r = {(skip - 1, lhs, terms, F): None}
            elif lhs == NO_LHS:
                r = self._run((s,), terms, F) if not terms else self._run_start(s, terms, F)
            else:
                g = self._goto[s].get(lhs)
                r = _NO_WAIT if g is None else self._run_above(s, (g,), terms, F)
            self._step_memo[key] = r
        return r

    #: how deep _run_above may nest through waiting items read on the same state
    MAX_NESTING = 32

    def _run_above(self, s: int, B: tuple, terms: tuple, F):
        """``_run((s,) + B, terms, F)``, computed as the run on ``B`` alone (``s`` unknown),
        whose waiting items then read ``s``: the same result (a reduction popping ``B``
        reads ``s`` exactly as the waiting item does), but the run's memo entry is shared
        by every ``s`` below the same ``B`` (LR shifts and gotos from many states share
        few targets)."""
        if self._nesting >= self.MAX_NESTING:
            # each waiting item read on s may come back here (a long token whose every
            # terminal is reduced down to s): past a few levels, the iterative run
            return self._run((s,) + B, terms, F)
        waits = self._run(B, terms, F)
        if waits is _SUCCESS:
            return _SUCCESS
        if not waits:
            return _NO_WAIT
        parts = []
        step = self._step
        self._nesting += 1
        try:
            for w in waits:
                r = step(w, s)
                if r is _SUCCESS:
                    return _SUCCESS
                if r:
                    parts.append(r)
        finally:
            self._nesting -= 1
        return _merge(parts)

    def _run_start(self, s: int, terms: tuple, F):
        """``_run((s,), terms, F)`` for non-empty ``terms``: the first terminal's closure
        on ``(s,)``, then each shifted stack ``(s,) + B`` through :meth:`_run_above`."""
        shifted, pops = self._closure((s,), terms[0])
        rest = terms[1:]
        parts = [self._pop_waits(pops, terms, F)] if pops else []
        for A2 in shifted:
            if not rest and F is None:
                return _SUCCESS
            r = self._run_above(s, A2[1:], rest, F)
            if r is _SUCCESS:
                return _SUCCESS
            if r:
                parts.append(r)
        return _merge(parts)

    def _relevant(self, item: Item) -> frozenset:
        """Stack states on which ``item`` does more than die (``ALL``: every state)."""
        skip, lhs, terms, F = item
        if skip:
            return ALL
        if lhs != NO_LHS:
            return self._goto_states.get(lhs, _NONE)
        if terms:
            return self._act.get(terms[0], _NONE)
        r = self._check_rel.get(F)
        if r is None:
            acc: set = set()
            for t in _bits(F):
                acc.update(self._act.get(t, ()))
            r = self._check_rel[F] = frozenset(acc)
        return r

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
            key = items = frozenset((it, w) for it, w in pairs.items() if w != EMPTY_ID)
            if not key:
                return -1
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
        wt = self.weights
        by_item: dict = {}
        ACC = None                           # the tokens decided at once (no stack needed)
        n_terms = self._n_terminals
        check_memo: dict = {}
        expand = self._expand_memo
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
                        extra = _expand((req[2],) if req[2] else ())
                    r = check_memo[req] = (F, extra)
                F, extra = r
                if not F and not extra:
                    continue
            seqs = expand.get(ems)
            if seqs is None:
                seqs = expand[ems] = tuple(_expand(ems, self.max_sequences, self.follows))
            for terms in seqs:
                if not terms and F is None:
                    by_item.setdefault(ACC, []).append(val)
                    continue
                if F is None or F:
                    by_item.setdefault((0, NO_LHS, terms, F), []).append(val)
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
        with self._lock:
            entry = (self._state(pairs), acc)
            self.init[cfg] = entry
            self._bound_memos()
        return entry

    def add_pair(self, c_top: int, c_low: int, below: bool) -> tuple | None:
        """Start state of two heads walked as one: configuration ``c_top`` on a GSS node
        and ``c_low`` on the node right below it (``below``; keyed ``(c_top, c_low, 1)``)
        or on the same node (keyed by the sorted configurations and 0). ``c_low``'s start
        items discard one more stack entry unread when ``below``; the tokens either start
        decides at once are decided for both. The walk's weights then unite to the two
        heads' mask (a state's mask is the union of its heads'), in one walk instead of
        two. Needs both configurations' start items (before :meth:`release_items`);
        returns the entry, or None."""
        key = pair_key(c_top, c_low, below)
        e = self.pair_init.get(key)
        if e is not None:
            return e
        wt = self.weights
        acc = EMPTY_ID
        pairs: dict = {}
        for cfg, delay in ((c_top, 0), (c_low, 1 if below else 0)):
            entry = self.init.get(cfg)
            if entry is None:
                return None
            q, w = entry
            acc = wt.union(acc, w)
            if q < 0:
                continue
            items = self.items[q]
            if items is None:                 # released after an eager compile
                return None
            if isinstance(items, bytes):
                items = unpack_items(items)
            for (skip, lhs, terms, F), w2 in items:
                it = (skip + delay, lhs, terms, F)
                pairs[it] = wt.union(pairs.get(it, EMPTY_ID), w2)
        if acc != EMPTY_ID:
            pairs = {it: wt.difference(w, acc) for it, w in pairs.items()}
        with self._lock:
            e = self.pair_init[key] = (self._state(pairs), acc)
        return e

    def drop_pair(self, key: tuple, mark: int) -> None:
        """Forget the pair start ``key`` (:func:`pair_key`) and the states from ``mark``
        on (all added after the automaton was complete, so no older state leads to them)."""
        with self._lock:
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
        for pair in items:
            it, w = pair
            skip, lhs = it[0], it[1]
            if skip:
                # discards the entry unread: the same on every symbol (what _step gives,
                # built here: a state has tens of these, and their memo entries are
                # never read again)
                it2 = (skip - 1, lhs, it[2], it[3])
                prev = d_next.get(it2)
                d_next[it2] = w if prev is None else union(prev, w)
            elif lhs != NO_LHS:
                by_lhs.setdefault(lhs, []).append(pair)
            else:
                groups.setdefault(self._relevant(it), []).append(pair)
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
            ws = self._step((0, NO_LHS, terms, F), g)
            if ws is _SUCCESS:
                acc = wt.union(acc, w)
            else:
                for it2 in ws:
                    waits[it2] = wt.union(waits.get(it2, EMPTY_ID), w)
        r = stages[key] = (acc, tuple(waits.items()))
        return r

    def edge(self, q: int, s: int):
        """The edge of state ``q`` on stack state ``s`` (computed on first use; thread-safe).
        Returns ``(dst or -1, weight id)`` or None (the walk stops)."""
        with self._lock:
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
        step = self._step
        memo = self._step_memo
        get = nxt.get
        for it, w in pairs:
            waits = memo.get((it, s))          # _step's memo, without the call on a hit
            if waits is None:
                waits = step(it, s)
            if waits is _SUCCESS:
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
            gotos = self._goto[s]
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
        with self._lock:
            if self.complete[q]:
                return
            index = self._index(q)
            syms: set = set()
            for rel, _ in index[0]:
                syms.update(rel)
            for lhs, _ in index[1]:
                syms.update(self._goto_states.get(lhs, _NONE))
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
        with self._lock:
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
        return (len(self._step_memo) + len(self._run_memo) + len(self._closure_memo)
                + len(self._split_memo) + len(self._check_rel)
                + len(self._expand_memo) + len(self._pop_memo)) * self.MEMO_ENTRY_BYTES

    def _bound_memos(self) -> None:
        """The symbolic-run memos are caches: past ``memo_bytes`` (estimated) they are
        dropped together (recomputed on demand). O(1); bounds compile memory on large
        grammars and runtime memory when states are compiled on first use."""
        if self.memo_estimate() > self.memo_bytes:
            self._step_memo.clear()
            self._run_memo.clear()
            self._closure_memo.clear()
            self._split_memo.clear()
            self._check_rel.clear()
            self._expand_memo.clear()
            self._pop_memo.clear()

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
        self._step_memo.clear()
        self._run_memo.clear()
        self._closure_memo.clear()
        self._expand_memo.clear()
        self._pop_memo.clear()
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
        with self._lock:
            kept_w, kept_q = self._loaded or (0, 0)
            used = set(range(kept_w))
            used.add(EMPTY_ID)
            for t in self.trans:
                if t:
                    used.update(w for _, w in t.values())
            used.update(d[1] for d in self.default if d is not None)
            used.update(w for _, w in self.init.values())
            used.update(w for _, w in self.pair_init.values())
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

    # -- minimization ------------------------------------------------------------------
    def successors(self, q: int) -> set:
        """The states ``q``'s edges (default included) lead to."""
        out = {d for d, _ in self.trans[q].values() if d >= 0}
        d = self.default[q]
        if d is not None and d[0] >= 0:
            out.add(d[0])
        return out

    def minimize(self) -> int:
        """Merge the states that give every stack the same tokens; returns how many states
        were removed.

        A walk unites the weights of the edges it takes and ends where there is no
        edge, at a next state of -1, or at the bottom of the stack; determinization
        decides each token on the first edge that settles it, so an edge's weight is
        what the walk's result gains there, and two complete states are equivalent
        exactly when, for every stack state, they take edges of equal weight into
        equivalent states. Bottom up over a topological order, each complete state gets
        the class of its signature: its default edge and the explicit edges that differ
        from it, targets replaced by their classes (an edge that stops with nothing is
        the same as no edge where there is no default edge). A state that can give no
        token on any stack becomes -1, so walks end there. A state not compiled yet is
        a class of its own (its missing edges are unknown), and so are the states
        leading to different ones. The states are renumbered in their old order; the
        state index maps the item sets of merged states to the state they merged into
        (the same masks on every stack). A cyclic automaton is left as it is (returns 0).

        State ids change: for an automaton no runtime walks yet (after its compile, or a
        snapshot about to be saved)."""
        with self._lock:
            n = len(self.trans)
            order = topological_order(range(n), [self.successors(q) for q in range(n)])
            if order is None:
                return 0
            complete, trans, default = self.complete, self.trans, self.default
            cls = [-1] * n               # state -> class (-1: gives nothing)
            sigs: dict = {}
            reps: list = []              # class -> (its first state, its signature or None)

            def edge(e):
                d, w = e
                return (cls[d] if d >= 0 else -1, w)

            for q in reversed(order):
                if not complete[q]:
                    sig = None
                else:
                    dflt = default[q]
                    if dflt is not None:
                        dflt = edge(dflt)
                        if dflt == STOP:
                            dflt = None
                    explicit = []
                    for s, e in trans[q].items():
                        e = edge(e)
                        if e != dflt and (dflt is not None or e != STOP):
                            explicit.append((s, e))
                    if dflt is None and not explicit:
                        continue                  # dead: stays -1
                    explicit.sort()
                    sig = (dflt, tuple(explicit))
                    c = sigs.get(sig)
                    if c is not None:
                        cls[q] = c
                        continue
                    sigs[sig] = len(reps)
                cls[q] = len(reps)
                reps.append((q, sig))
            classes = sorted(range(len(reps)), key=lambda c: reps[c][0])
            new_of = [0] * len(reps)
            for i, c in enumerate(classes):
                new_of[c] = i
            new = [new_of[c] if c >= 0 else -1 for c in cls]

            def remap(e):
                return e if e is None or e[0] < 0 else (new[e[0]], e[1])

            def of_class(e):             # a signature's edge: target class -> new state
                return e if e[0] < 0 else (new_of[e[0]], e[1])

            items, trans2, default2, complete2 = [], [], [], []
            for c in classes:
                q, sig = reps[c]
                if sig is None:          # not compiled yet: its edges as they are
                    d = remap(default[q])
                    t = {s: remap(e) for s, e in trans[q].items()}
                else:                    # the signature is the normalized edges
                    dflt, explicit = sig
                    d = None if dflt is None else of_class(dflt)
                    t = {s: of_class(e) for s, e in explicit}
                items.append(self.items[q])
                trans2.append(t)
                default2.append(d)
                complete2.append(complete[q])
            self.items, self.trans, self.default, self.complete = items, trans2, default2, complete2
            self._groups = [None] * len(items)
            self._ids = {k: new[q] for k, q in self._ids.items()}
            self.init = {k: remap(e) for k, e in self.init.items()}
            self.pair_init = {k: remap(e) for k, e in self.pair_init.items()}
            return n - len(items)

    # -- plain data (artifacts) -------------------------------------------------------
    def to_data(self) -> dict:
        """The automaton as plain data (:mod:`stackmask.plain`: arrays, bytes, ints):
        edges as CSR arrays, the state index as 16-byte digests, the item sets of states
        not compiled yet each packed apart (decoded when a mask first needs one), the
        token sets as one blob (:meth:`WeightTable.to_data`). Memos are not kept.
        Take it under the lock when other threads may use the automaton."""
        n = len(self.items)
        lens = np.fromiter((len(t) if t else 0 for t in self.trans), dtype=np.int64, count=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        sym = np.empty(int(offsets[-1]), dtype=np.int32)
        dst = np.empty_like(sym)
        wid = np.empty_like(sym)
        k = 0
        for t in self.trans:
            for s, (d, w) in (t or {}).items():
                sym[k], dst[k], wid[k] = s, d, w
                k += 1
        has_default = np.fromiter((d is not None for d in self.default), dtype=bool, count=n)
        ddst = np.array([d[0] if d is not None else 0 for d in self.default], dtype=np.int32)
        dwid = np.array([d[1] if d is not None else 0 for d in self.default], dtype=np.int32)
        ids = self._ids if self._digest_ids else _digest_index(self._ids)
        items = tuple(it if it is None or isinstance(it, bytes) else pack_items(it)
                      for it in self.items)
        init_keys = sorted(self.init)
        pair_keys = sorted(self.pair_init)
        return {
            "n_states": n, "offsets": offsets, "sym": sym, "dst": dst, "wid": wid,
            "has_default": has_default, "default_dst": ddst, "default_wid": dwid,
            "complete": np.array(self.complete, dtype=bool), "items": items,
            "digests": b"".join(ids), "digest_states": np.fromiter(ids.values(), dtype=np.int32,
                                                                    count=len(ids)),
            "init": np.array([(c, *self.init[c]) for c in init_keys], dtype=np.int64).reshape(-1, 3),
            "pair_init": np.array([(*key, *self.pair_init[key]) for key in pair_keys],
                                  dtype=np.int64).reshape(-1, 5),
            "eos_weight": self.eos_weight, "hot_weights": tuple(self.hot_weights),
            "special_weights": self.special_weights, "special_check": self.special_check,
            "budget_exhausted": bool(self.budget_exhausted),
            "budget_used_up": self.budget_used_up,
            "weights": self.weights.to_data(),
        }

    def copy(self) -> "ParserDWA":
        """An independent copy, through :meth:`to_data` encoded as plain data (what an
        artifact stores, and how a snapshot is taken)."""
        with self._lock:
            data = _ITEMS.dumps(self.to_data())
        return ParserDWA.from_data(self.lr, self._accepts_empty, _ITEMS.loads(data))

    @classmethod
    def from_data(cls, lr: LRTables, accepts_empty: bool, data: dict) -> "ParserDWA":
        """The automaton of :meth:`to_data` over the same LR tables (a malformed ``data``
        raises ``ValueError``, ``KeyError`` or ``TypeError``)."""
        dwa = cls(lr, accepts_empty, WeightTable.from_data(data["weights"]))
        n = int(data["n_states"])
        offsets = data["offsets"].tolist()
        if len(offsets) != n + 1 or offsets[0] != 0:
            raise ValueError("bad automaton edge offsets")
        sym, dst, wid = (data[k].tolist() for k in ("sym", "dst", "wid"))
        edges = list(zip(dst, wid))
        dwa.trans = [dict(zip(sym[a:b], edges[a:b])) for a, b in zip(offsets, offsets[1:])]
        dd, dw = data["default_dst"].tolist(), data["default_wid"].tolist()
        dwa.default = [(d, w) if h else None
                       for h, d, w in zip(data["has_default"].tolist(), dd, dw)]
        dwa.complete = data["complete"].tolist()
        dwa.items = list(data["items"])
        if not (len(dwa.default) == len(dwa.complete) == len(dwa.items) == n):
            raise ValueError("automaton arrays of different lengths")
        dwa._groups = [None] * n
        digests = data["digests"]
        dwa._ids = dict(zip([digests[i:i + 16] for i in range(0, len(digests), 16)],
                            data["digest_states"].tolist()))
        dwa._digest_ids = True
        dwa.init = {c: (q, w) for c, q, w in data["init"].tolist()}
        dwa.pair_init = {(a, b, c): (q, w) for a, b, c, q, w in data["pair_init"].tolist()}
        dwa.eos_weight = data["eos_weight"]
        dwa.hot_weights = tuple(data["hot_weights"])
        sw = data["special_weights"]
        dwa.special_weights = None if sw is None else tuple((int(t), int(w)) for t, w in sw)
        dwa.special_check = int(data["special_check"])
        dwa.budget_exhausted = bool(data["budget_exhausted"])
        dwa.budget_used_up = data["budget_used_up"]
        return dwa

    # -- reports -----------------------------------------------------------------------
    def stats(self) -> dict:
        n = len(self.trans)
        edges = sum(len(t) for t in self.trans if t is not None)
        depth, acyclic = _depth(self)
        return {"configs": len(self.init), "states": n, "complete_states": sum(self.complete),
                "budget_exhausted": self.budget_exhausted,
                "budget_used_up": self.budget_used_up, "edges": edges,
                "defaults": sum(1 for d in self.default if d is not None),
                "weights": len(self.weights), "acyclic": acyclic, "max_depth": depth,
                "head_pairs": len(self.pair_init)}


_ITEMS = Codec()


def pack_items(items: tuple) -> bytes:
    """A state's ``((item, weight id), ...)`` as plain data (:func:`unpack_items`)."""
    return _ITEMS.dumps(items)


def unpack_items(data: bytes) -> tuple:
    """The items :func:`pack_items` packed (tuples of ints, ``F`` None or an int)."""
    return _ITEMS.loads(data)


def _state_digest(key) -> bytes:
    """128-bit digest (SHA-256's first half, as token sets') of a state's distinct
    ``(item, weight)`` pairs (any iterable of them), independent of their order: each pair
    in marshal format 2 (no shared references, so equal pairs give equal bytes;
    self-delimiting, so the sorted concatenation identifies the set)."""
    return hashlib.sha256(b"".join(sorted([marshal.dumps(p, 2) for p in key]))).digest()[:16]


def _digest_index(ids: dict) -> dict:
    """A state index keyed by item sets, keyed by their digests instead."""
    return {_state_digest(k): q for k, q in ids.items()}


def _expand(ems: tuple, limit: int | None = None, follows=None) -> list:
    """Concrete terminal sequences of an emission sequence (alternatives multiply,
    an IGNORE alternative contributes nothing); more than ``limit`` raise LimitExceeded.

    The sequences are built lexeme by lexeme. With ``follows`` (terminal -> the terminals
    that can come right after it, see :func:`terminal_follows`) a sequence with two
    adjacent terminals that no stack can shift one after the other is dropped as soon as
    it appears, so lexically ambiguous lexemes multiply only the sequences some parse
    could still take."""
    if all(len(em) == 1 for em in ems):         # no ambiguity: one sequence
        seq = tuple(em[0] for em in ems if em[0] != IGNORE)
        if follows is not None and any(b not in follows[a] for a, b in zip(seq, seq[1:])):
            return []
        return [seq]
    seqs: dict = {(): None}
    for k, em in enumerate(ems):
        nxt: dict = {}
        for seq in seqs:
            for t in em:
                if t == IGNORE:
                    nxt[seq] = None
                elif follows is None or not seq or t in follows[seq[-1]]:
                    nxt[seq + (t,)] = None
        if limit is not None and len(nxt) > limit:
            raise LimitExceeded("max_token_sequences", len(nxt), limit,
                                "one token lexes into too many terminal sequences",
                                f"at least {len(nxt)} after {k + 1} of {len(ems)} lexemes, "
                                f"{sum(len(o) > 1 for o in ems)} of them lexically ambiguous: "
                                "each such lexeme inside one token can double the sequences the "
                                "automaton must follow")
        seqs = nxt
        if not seqs:
            break
    return list(seqs)


def terminal_follows(shift: list, reduce: list, n_terminals: int) -> tuple:
    """Per terminal, the terminals that can be next in the input right after it: those
    with an action (shift or reduce) in a state that shifting it leads to (``shift`` and
    ``reduce``: the LR tables' per-state dicts). Every parse consults that state on the
    next terminal, so a pair outside this relation never occurs in any sentence (a
    superset: LALR lookaheads may allow more)."""
    follows = [set() for _ in range(n_terminals)]
    for row in shift:
        for a, q2 in row.items():
            follows[a].update(shift[q2])
            follows[a].update(reduce[q2])
    return tuple(frozenset(f) for f in follows)


def _depth(dwa: ParserDWA) -> tuple:
    """(max number of stack entries a walk can read, acyclic?) over expanded states."""
    n = len(dwa.trans)
    succ = [dwa.successors(q) for q in range(n)]
    order = topological_order(range(n), succ)
    if order is None:
        return None, False
    depth = [0] * n               # states on the longest path from q (edges read)
    for q in reversed(order):
        depth[q] = 1 + max((depth[d] for d in succ[q]), default=0)
    starts = [q for q, _ in list(dwa.init.values()) + list(dwa.pair_init.values()) if q >= 0]
    return max((depth[q] for q in starts), default=0), True


def special_weights(weights: WeightTable, specials) -> tuple:
    """``((parser terminal, weight id of the token ids bound to it), ...)``."""
    return tuple((int(t), weights.intern(BitMap(sorted(ids)))) for t, ids in sorted((specials or {}).items()))


def build_parser_dwa(scanner, lr: LRTables, accepts_empty: bool, index, vocab, weights: WeightTable,
                     configs=None, progress: bool = False, budget_s: float | None = None,
                     guard=None, specials=None) -> ParserDWA:
    """Compile the Parser DWA for every lexer configuration reachable at token boundaries
    (or for ``configs``), expanding every reachable state breadth first. With ``budget_s``
    compilation stops after that many seconds; what is left (configurations, states) is
    compiled on first use, with the same results; the same happens, with a budget, when
    the compile's memory growth passes half of the guard's ``max_compile_memory_bytes``
    (instead of failing at the hard limit). ``guard`` (a
    :class:`stackmask.limits.CompileGuard`) enforces the hard limits between steps."""
    from ..lexer.scanner import BOUNDARY_CONFIG
    from .terminal import TerminalCompiler
    dwa = ParserDWA(lr, accepts_empty, weights)
    if guard is not None:
        dwa.max_states = guard.limits.max_automaton_states
        dwa.max_sequences = guard.limits.max_token_sequences
    terms = TerminalCompiler(scanner, index)
    eos_w = dwa.eos_weight = weights.intern(BitMap(sorted(vocab.eos_token_ids)))
    dwa.bind_specials(specials)
    todo = [BOUNDARY_CONFIG] if configs is None else list(configs)
    seen = set(todo)
    t0 = time.monotonic()
    last = [t0]
    deadline = None if budget_s is None else t0 + budget_s
    used_up: list = []        # why the soft budget stopped the compile

    def stop() -> bool:
        if used_up:
            return True
        if deadline is None:
            return False
        if time.monotonic() > deadline:
            used_up.append(f"time: {budget_s:g} s")
            return True
        if guard is not None and guard.soft_memory_used_up():
            used_up.append(f"memory: half of max_compile_memory_bytes, "
                           f"{guard.max_rss / 2 ** 30 / 2:.1f} GiB grown")
            return True
        return False

    def report(msg):
        # the first line after a second, then one every 5 s
        now = time.monotonic()
        if progress and now - last[0] > (1 if last[0] == t0 else 5):
            last[0] = now
            log.info("stackmask: compiling the mask automaton (%.0f s): %s", now - t0, msg)

    while todo:
        if guard is not None:
            guard.check()
        if stop():
            break
        cfg = todo.pop()
        _, ends = add_config(dwa, terms, cfg, eos_w)
        report(f"{len(seen)} lexer configurations, {len(dwa.items)} automaton states")
        if configs is None:
            for c in ends:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
    complete = dwa.expand_all(lambda q, n: report(f"automaton state {q} of {n}"), stop, guard)
    if complete and not todo and configs is None:
        # at most a quarter of the compile so far (0.5 s at least) on them
        add_pairs(dwa, scanner, stop, guard, seconds=max(0.5, (time.monotonic() - t0) / 4))
    dwa.budget_exhausted = bool(todo) or not complete
    dwa.budget_used_up = used_up[0] if used_up else None
    if progress and dwa.budget_exhausted:
        why = f" ({used_up[0]})" if used_up else ""
        log.warning("stackmask: compile budget used up%s: %d lexer configurations and %d of %d "
                    "automaton states compiled; the rest is compiled when a mask first needs it",
                    why, len(dwa.init), sum(dwa.complete), len(dwa.items))
    return dwa


def head_pairs(scanner, configs) -> set:
    """The two-head situations a byte creates from ``configs``: a byte whose lexing both
    emits a terminal (the new head's node is then usually right above the other's) or
    an ignored terminal (the same node) and keeps a lexeme pending. Returns
    ``(config of the emitting branch, config of the pending one, below)`` triples."""
    out = set()
    for cfg in configs:
        for b in range(256):
            outs = scanner.step(cfg, b)
            if len(outs) < 2:
                continue
            pending = [c for em, c in outs if em is None]
            for em, c in outs:
                if em is None:
                    continue
                below = em != (IGNORE,)
                if below and len(em) != 1:
                    continue                  # several terminals: the nodes are further apart
                for c2 in pending:
                    if c2 != c:
                        out.add((c, c2, below))
    return out


#: states one pair start may add to a complete automaton (and this share of its size):
#: the union of two heads' walks can multiply states (C: 17.6k -> 234k with every pair)
PAIR_MIN_STATES = 300
PAIR_SHARE = 1 / 50


def add_pairs(dwa: ParserDWA, scanner, stop=None, guard=None, seconds: float | None = None) -> int:
    """Start states for the two-head situations of a completely compiled automaton
    (:func:`head_pairs`, :meth:`ParserDWA.add_pair`), each compiled completely at once;
    a pair whose walks would add more than ``max(PAIR_MIN_STATES, PAIR_SHARE x states)``
    states, or that is cut by ``seconds`` (all pairs together), is dropped with the
    states it added (its heads are walked one by one, as without it). Returns how many
    were kept."""
    limit = max(PAIR_MIN_STATES, int(len(dwa.items) * PAIR_SHARE))
    deadline = None if seconds is None else time.monotonic() + seconds
    kept = 0
    for c_top, c_low, below in sorted(head_pairs(scanner, list(dwa.init))):
        mark = len(dwa.items)
        if dwa.add_pair(c_top, c_low, below) is None:
            continue

        def cut(mark=mark) -> bool:
            return len(dwa.items) - mark > limit or (stop is not None and stop()) or (
                deadline is not None and time.monotonic() > deadline)

        if dwa.expand_all(stop=cut, guard=guard, start=mark):
            kept += 1
        else:
            dwa.drop_pair(pair_key(c_top, c_low, below), mark)
        if deadline is not None and time.monotonic() > deadline:
            break
    return kept


def pair_key(c_top: int, c_low: int, below: bool) -> tuple:
    """Key of a pair start (:meth:`ParserDWA.add_pair`): ``(c_top, c_low, 1)`` for heads
    on nodes one above the other, the sorted configurations and 0 for one stack."""
    return (c_top, c_low, 1) if below else (min(c_top, c_low), max(c_top, c_low), 0)


def add_config(dwa: ParserDWA, terms, cfg: int, eos_w: int) -> tuple:
    """Add lexer configuration ``cfg``: its token outcomes (and EOS) become start items.
    Returns ``(start entry, configurations its tokens end in)``."""
    from .terminal import final_outcomes
    groups, ends = terms.outcomes(cfg)
    # outcome -> positions (vocabulary tokens) and outcome -> weight ids (EOS, special tokens)
    outcomes = list(groups.items())
    if eos_w != EMPTY_ID:
        outcomes.extend((key, eos_w) for key in final_outcomes(terms.scanner, cfg))
    for key, ncfg, wid in special_outcomes(terms.scanner, cfg, dwa.special_weights or ()):
        outcomes.append((key, wid))
        ends.add(ncfg)
    return dwa.add_config(cfg, outcomes, terms.index.bitmap_of), ends


def special_outcomes(scanner, cfg: int, specials) -> list:
    """``(outcome, end configuration, weight id)`` of committing each bound special token in
    ``cfg``: the pending lexeme's emission (finished as at the end of the text), then the
    special terminal; the result is a clean boundary (requirement TRUE)."""
    out = []
    for tid, wid in specials:
        r = scanner.special(cfg, tid)
        if r is None:
            continue
        em, ncfg = r
        ems = ((em,) if em and em != (IGNORE,) else ()) + ((tid,),)
        out.append(((ems, TRUE), ncfg, wid))
    return out
