"""Templates: the LR parser run symbolically on a stack whose lower part is unknown.

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

:class:`Templates` holds the LR tables in the forms the runs read and the
runs' memos; the Parser DWA (:mod:`stackmask.compile.parser_dwa`) steps its
states' items with :meth:`Templates.step`. Items do not depend on tokens.
"""

from __future__ import annotations

from ..errors import LimitExceeded
from ..glr.lalr import LRTables
from ..lexer.scanner import IGNORE
from ..memo import Memo

END = 0          # LR terminal index of end of input
NO_LHS = -1
ALL = frozenset([-1])   # relevance marker: the item reads every stack state the same way
_NONE: frozenset = frozenset()
SUCCESS = True           # a run's result: success, or the dict of its waiting items
NO_WAIT: dict = {}       # shared empty waiting items (results are never modified)

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
        return NO_WAIT
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    for p in parts[1:]:
        out.update(p)
    return out


class Templates:
    """Symbolic LR runs over one grammar's tables, memoized (the memos are caches:
    :meth:`clear_memos` drops them, :meth:`memo_entries` counts them)."""

    #: how deep run_above may nest through waiting items read on the same state
    MAX_NESTING = 32

    def __init__(self, lr: LRTables, accepts_empty: bool):
        self._shift = lr.shift
        self._reduce = lr.reduce
        self.goto = lr.goto
        self._rlen = lr.rule_len
        self._rlhs = lr.rule_lhs
        self.accept_state = lr.accept_state
        self.start_state = lr.start_state
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
        #: nonterminal -> the LR states with a goto on it
        self.goto_states = {a: frozenset(s) for a, s in gs.items()}
        # per LR state, the terminals it can shift (END where it accepts) as a bitmask:
        # check sets are bitmasks too, so items and memo keys are tuples of ints, which
        # the garbage collector stops tracking (its full passes then do not grow with
        # the automaton)
        self.shiftable = tuple(
            sum(1 << t for t in lr.shift[q])
            | (1 << END if q == lr.accept_state or (q == lr.start_state and accepts_empty) else 0)
            for q in range(n))
        self.n_terminals = len(lr.terminals)
        self.follows = terminal_follows(lr.shift, lr.reduce, self.n_terminals)
        #: the same as bitmasks (END is bit 0), as check sets are
        self.follow_masks = tuple(sum(1 << t for t in f) for f in self.follows)
        self.step_memo: dict = Memo()    # (item, state) -> step result (read by hot loops)
        self._run_memo: dict = Memo()
        self._closure_memo: dict = Memo()
        self._split_memo: dict = Memo()
        self._check_rel: dict = Memo()
        self._expand_memo: dict = Memo()     # emissions -> terminal sequences (start items)
        self._pop_memo: dict = Memo()        # (pops, terms, F) -> waiting items of a run frame
        self._nesting = 0                # current depth of run_above

    def memos(self) -> dict:
        """The memos by name (caches of the runs; never saved)."""
        return {"step": self.step_memo, "run": self._run_memo, "closure": self._closure_memo,
                "split": self._split_memo, "check_rel": self._check_rel,
                "expand": self._expand_memo, "pop": self._pop_memo}

    def memo_entries(self) -> int:
        """Entries held by the memos."""
        return sum(len(m) for m in self.memos().values())

    def clear_memos(self, keep_checks: bool = False) -> None:
        """Drop the memos (``keep_checks``: keep the split and relevance memos, small and
        needed by every state still to be compiled)."""
        for m in self.memos().values():
            if not (keep_checks and (m is self._split_memo or m is self._check_rel)):
                m.clear()

    def sequences(self, ems: tuple, limit: int | None = None) -> tuple:
        """The terminal sequences of emission sequence ``ems`` (:func:`expand_emissions`,
        pruned by :attr:`follows`; memoized)."""
        seqs = self._expand_memo.get(ems)
        if seqs is None:
            seqs = self._expand_memo[ems] = tuple(expand_emissions(ems, limit, self.follows))
        return seqs

    def run(self, A: tuple, terms: tuple, F):
        """Run the LR parser on known stack part ``A`` (top last): shift ``terms``, then
        (``F`` not None) check that some terminal of ``F`` can be shifted.

        Returns ``SUCCESS`` (True), or the waiting items: a dict (keys; values None, never
        to be modified; no tuple around it, so memo entries hold no object the garbage
        collector must keep tracking once it has seen the dict): merging a run's
        waiting items into its caller's reuses their stored hashes (GLR branches can wait
        with thousands of items, merged at every level).
        Memoized on ``(A, terms, F)``; the reductions for one lookahead are memoized on
        ``(A, terminal)`` (:meth:`closure`), so items sharing a prefix or a suffix share
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
                    result = memo[cur] = self.check(A1, F)
                else:
                    shifted, pops = self.closure(A1, terms1[0])
                    # dicts of waiting items, merged once when the frame ends
                    parts = [self.pop_waits(pops, terms1, F)] if pops else []
                    frames.append([cur, parts, shifted, 0, terms1[1:]])
                    result = None
                cur = None
            if not frames:
                return result
            fr = frames[-1]
            fkey, parts, shifted, i, rest = fr
            done = None
            if result is not None:
                if result is SUCCESS:
                    done = SUCCESS
                elif result:
                    parts.append(result)
                result = None
            while done is None and i < len(shifted):
                A2 = shifted[i]
                i += 1
                if not rest and F is None:
                    done = SUCCESS
                    break
                ck = (A2, rest, F)
                r2 = memo.get(ck)
                if r2 is None:
                    fr[3] = i
                    cur = ck
                    break
                if r2 is SUCCESS:
                    done = SUCCESS
                elif r2:
                    parts.append(r2)
            if cur is not None:
                continue
            if done is None:
                done = _merge(parts)
            memo[fkey] = done
            frames.pop()
            result = done

    def pop_waits(self, pops: tuple, terms: tuple, F) -> dict:
        """The waiting items of reductions ``pops`` (``(entries to discard, lhs)``, from
        :meth:`closure`) taken before shifting ``terms``; memoized (many stacks pop
        alike, and building each item rehashes ``terms``). Never to be modified."""
        key = (pops, terms, F)
        w = self._pop_memo.get(key)
        if w is None:
            w = self._pop_memo[key] = {(skip, lhs, terms, F): None for skip, lhs in pops}
        return w

    def closure(self, A: tuple, t: int):
        """Reductions on lookahead ``t`` from ``A``, then the shift of ``t``: the known
        stacks after the shift, and the reductions that pop below ``A`` as
        ``(entries to discard, lhs)``."""
        key = (A, t)
        r = self._closure_memo.get(key)
        if r is not None:
            return r
        shift, reduce, goto = self._shift, self._reduce, self.goto
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

    def check(self, A: tuple, F: int):
        """Whether some terminal of ``F`` can be shifted on ``A`` after reductions (on that
        terminal); else the waiting items for reductions popping below ``A``."""
        shift_ok = self.shiftable
        reduce_split = self.split
        goto, rlen, rlhs = self.goto, self._rlen, self._rlhs
        waiting: dict = {}
        work = [(A, F)]
        seen = {(A, F)}
        while work:
            A1, F1 = work.pop()
            q = A1[-1]
            if F1 & shift_ok[q]:
                return SUCCESS
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

    def split(self, q: int, F: int) -> tuple:
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

    def step(self, item: Item, s: int):
        """``item`` reading stack state ``s``: ``SUCCESS`` or the waiting items (memoized)."""
        key = (item, s)
        r = self.step_memo.get(key)
        if r is None:
            skip, lhs, terms, F = item
            if skip:
                r = {(skip - 1, lhs, terms, F): None}
            elif lhs == NO_LHS:
                r = self.run((s,), terms, F) if not terms else self.run_start(s, terms, F)
            else:
                g = self.goto[s].get(lhs)
                r = NO_WAIT if g is None else self.run_above(s, (g,), terms, F)
            self.step_memo[key] = r
        return r

    def run_above(self, s: int, B: tuple, terms: tuple, F):
        """``run((s,) + B, terms, F)``, computed as the run on ``B`` alone (``s`` unknown),
        whose waiting items then read ``s``: the same result (a reduction popping ``B``
        reads ``s`` exactly as the waiting item does), but the run's memo entry is shared
        by every ``s`` below the same ``B`` (LR shifts and gotos from many states share
        few targets)."""
        if self._nesting >= self.MAX_NESTING:
            # each waiting item read on s may come back here (a long token whose every
            # terminal is reduced down to s): past a few levels, the iterative run
            return self.run((s,) + B, terms, F)
        waits = self.run(B, terms, F)
        if waits is SUCCESS:
            return SUCCESS
        if not waits:
            return NO_WAIT
        parts = []
        step = self.step
        self._nesting += 1
        try:
            for w in waits:
                r = step(w, s)
                if r is SUCCESS:
                    return SUCCESS
                if r:
                    parts.append(r)
        finally:
            self._nesting -= 1
        return _merge(parts)

    def run_start(self, s: int, terms: tuple, F):
        """``run((s,), terms, F)`` for non-empty ``terms``: the first terminal's closure
        on ``(s,)``, then each shifted stack ``(s,) + B`` through :meth:`run_above`."""
        shifted, pops = self.closure((s,), terms[0])
        rest = terms[1:]
        parts = [self.pop_waits(pops, terms, F)] if pops else []
        for A2 in shifted:
            if not rest and F is None:
                return SUCCESS
            r = self.run_above(s, A2[1:], rest, F)
            if r is SUCCESS:
                return SUCCESS
            if r:
                parts.append(r)
        return _merge(parts)

    def relevant(self, item: Item) -> frozenset:
        """Stack states on which ``item`` does more than die (``ALL``: every state)."""
        skip, lhs, terms, F = item
        if skip:
            return ALL
        if lhs != NO_LHS:
            return self.goto_states.get(lhs, _NONE)
        if terms:
            return self._act.get(terms[0], _NONE)
        r = self._check_rel.get(F)
        if r is None:
            acc: set = set()
            for t in _bits(F):
                acc.update(self._act.get(t, ()))
            r = self._check_rel[F] = frozenset(acc)
        return r


def expand_emissions(ems: tuple, limit: int | None = None, follows=None) -> list:
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
