"""Streaming maximal-munch lexing over the combined byte DFA.

A *lexer configuration* is everything the lexer needs to know about the text
read so far, at one byte boundary:

``(d, shadows)``
    ``d`` is the combined-DFA state after the pending (unfinished) lexeme, or
    ``BOUNDARY`` (-1) when no lexeme is pending. ``shadows`` is a set of DFA
    states of *earlier* lexemes that were emitted although they could still
    grow (flex-style backtracking): such an emission is only valid if the
    longer match never completes, so each shadow keeps running on the
    following bytes and the configuration dies the moment a shadow reaches an
    accepting state. A shadow that can no longer reach any accepting state is
    dropped.

Reading a byte from ``(d, S)``: the pending lexeme and every shadow advance;
if a shadow accepts, or the lexeme dies, the configuration dies. If the
lexeme now matches some terminal, the lexer *forks*: one branch emits the
winning terminal(s) and starts a new lexeme (inhibited by the just-finished
lexeme's state if it could still grow), the other keeps reading (only if the
lexeme can still grow). That is global maximal munch, executed on a stream.

Among terminals matching the same lexeme the highest priority wins; at equal
priority a string literal beats a regex; remaining ties are a lexical
ambiguity and the emission carries every tied terminal (the parser forks).
``%ignore`` terminals are emitted as ``IGNORE`` and dropped before the parser.

Configurations are interned to small ints; ``BOUNDARY_CONFIG`` (0) is the
configuration at the start of the text.

**Lexer modes** (flex start conditions, see
:class:`stackmask.grammar.LexerMode`): the DFA is the disjoint union of
one combined automaton per mode, so a pending lexeme's state says its mode.
A boundary in mode ``m`` is ``d = -1 - m`` (``BOUNDARY`` is mode 0's);
emitting a terminal switches to the mode its lexer mode names for it.

**Gaps** (``Grammar.gaps``: ignored terminals read at most once between two lexemes):
after a gap lexeme in mode ``m`` the boundary is mode ``m``'s *gap boundary*,
``d = -1 - (n_modes + m)``, whose DFA state is ``m``'s start without the gap
terminals' first bytes (:func:`stackmask.lexer.gaps.add_gap_starts`): a gap never
follows a gap, so a bounded gap terminal bounds every run of what it matches.

**Counted repetitions** (:mod:`.counted`): where the DFA has stalls, the pending
lexeme and the shadows are *extended states*: a DFA state, or ``(q, owed)`` with
``owed`` the ``(stall, iterations still owed)`` pairs of the stalls ``q`` is in (none
owed: the plain state). :meth:`Scanner.mask_rep` maps a configuration to the plain one
the mask automaton compiles for it.

**Special tokens** are not bytes: committing one finishes the pending
lexeme as at the end of the text (shadows cannot continue across it), emits
the bound terminal and restarts at a boundary (:meth:`Scanner.special`).
"""

from __future__ import annotations

import threading
from typing import Iterable, Mapping, Sequence

import numpy as np

from .. import native
from ..grammar import TerminalDef
from ..memo import Generations, Memo
from ..wfa.reduction import refine
from .counted import Stalls
from .dfa import DFA, byte_classes

BOUNDARY = -1          # no pending lexeme
IGNORE = -1            # emitted alternative: an ignored terminal
BOUNDARY_CONFIG = 0    # (BOUNDARY, no shadows)

Emission = tuple  # tuple of alternatives: parser terminal ids, or IGNORE


class Scanner:
    """Streaming maximal munch with inhibited terminals over one combined DFA.

    ``terminal_ids`` maps a terminal name to the parser's terminal index;
    ``ignore`` names the terminals dropped before the parser.
    """

    def __init__(self, dfa: DFA, terminals: Sequence[TerminalDef], ignore: Iterable[str],
                 terminal_ids: Mapping[str, int], starts: Sequence[int] = (0,),
                 switch: Mapping | None = None, special_terms: Iterable[int] = (),
                 gap_starts: Sequence[int] = (), gaps: Iterable[str] = ()):
        self.dfa = dfa
        #: parser terminals emitted by special tokens (they affect viability)
        self.special_terms = frozenset(special_terms)
        self.terminals = tuple(terminals)
        ignore = frozenset(ignore)
        self._trans = dfa.rows()                 # one array per state: fast per-byte lookup
        self._live_out = [bool(x) for x in np.asarray(dfa.live_out)]
        starts = tuple(int(x) for x in starts)
        #: the number of lexer modes
        self.n_modes = n_modes = len(starts)
        gap_starts = tuple(int(x) for x in gap_starts)
        if gap_starts and len(gap_starts) != n_modes:
            raise ValueError("one gap start per lexer mode (-1: the mode reads no gap terminal)")
        gap_names = frozenset(gaps)
        #: the DFA start state of every lexer mode (mode 0 first), then, where the grammar
        #: has gaps, of every mode's gap boundary (a mode without gap terminals: its start)
        self.mode_starts = starts + tuple(g if g >= 0 else starts[m] for m, g in enumerate(gap_starts))
        switch = dict(switch or {})
        state_mode = (np.searchsorted(np.asarray(starts), np.arange(dfa.n_states), side="right")
                      - 1).tolist()
        for m, g in enumerate(gap_starts):
            if g >= 0:
                state_mode[g] = m

        def boundary(t: int, named) -> int:
            """The boundary after emitting ``named`` (winners) into mode ``t``: its gap
            boundary after a gap lexeme (where ``t`` reads gap terminals)."""
            if gap_starts and named and gap_starts[t] >= 0 and all(n in gap_names for n, _ in named):
                return -1 - (n_modes + t)
            return -1 - t

        winners: list[Emission] = []
        next_b: list[int] = []      # per DFA state: the boundary after emitting its winners
        #: per DFA state whose winners switch to different modes: ``((emission, boundary),
        #: ...)``, one per mode, in mode order (the lexer forks: the parser keeps the
        #: alternatives it can take, each in its own mode)
        self._split: dict = {}
        for q, acc in enumerate(dfa.accepts):
            em, named = self._resolve(acc, ignore, terminal_ids)
            winners.append(em)
            m = state_mode[q]
            by_mode: dict = {}
            for n, a in named:
                by_mode.setdefault(switch.get((m, n), m), set()).add(a)
            if len(by_mode) > 1:
                self._split[q] = tuple((tuple(sorted(by_mode[t])), boundary(t, named))
                                       for t in sorted(by_mode))
            next_b.append(boundary(next(iter(by_mode)) if len(by_mode) == 1 else m, named))
        self.winners: tuple[Emission, ...] = tuple(winners)
        self._next_boundary = next_b
        self._special_switch = {(m, terminal_ids[n]): t for (m, n), t in switch.items()
                                if n in terminal_ids}
        self._special_memo: dict = Memo()
        #: per DFA state: whether some terminal is emitted when the lexeme ends there
        self.accepting = [bool(w) for w in winners]
        self._configs: list[tuple[int, frozenset[int]]] = [(BOUNDARY, frozenset())]
        self._config_ids: dict[tuple[int, frozenset[int]], int] = {self._configs[0]: 0}
        self._steps = Generations()      # (cid << 8) | byte -> step outcomes
        self._finish = Generations()     # cid -> finishable alternatives
        self.set_memo_bytes(self.DEFAULT_MEMO_BYTES)
        self._forks = None    # per DFA state: a byte leads it where an emission leaves a shadow
        self._lock = threading.Lock()
        b2c, rep = byte_classes(dfa.trans)
        #: per byte, the representative (least byte) of its class: bytes with identical
        #: columns of the DFA, which :meth:`step` reads alike
        self.byte_rep = bytes(rep[b2c].tolist())
        self._byte_classes = sorted(rep.tolist())
        # per DFA state: the alternatives reachable by reading one or more bytes
        self._reach = _reachable_winners(np.asarray(dfa.trans), self._byte_classes, self.winners)
        if dfa.reach_as:                 # pinned states (:mod:`.pinned`)
            reach = list(self._reach)
            for a, b in dfa.reach_as:
                reach[a] = reach[b]
            self._reach = tuple(reach)
        # counted repetitions: per DFA state the stalls it is tagged for
        self.counted = bool(dfa.counters)
        #: whether stalls are kept (see :meth:`set_exact`)
        self.exact = True
        self._rep: dict = {}                 # cid -> its mask representative
        #: where new configurations with owed iterations are registered as aliases of
        #: their mask representative (:meth:`bind_aliases`)
        self._alias_sink: dict | None = None
        self._shadow_rep = None              # shadow_classes(), made on first use
        self._live_memo: dict = {}           # DFA state -> the bytes it reads on (_live_bytes)
        if self.counted:
            self._xstep = Stalls(self._trans, dfa.counters).step

    #: estimated bytes of one step memo entry (int key, a tuple of one or two
    #: (emission, config) pairs, the dict slot) and of one finishable memo entry
    STEP_ENTRY_BYTES = 250
    FINISH_ENTRY_BYTES = 400
    DEFAULT_MEMO_BYTES = 256 << 20

    def set_memo_bytes(self, n: int) -> None:
        """Bound each memo (per-byte steps, finishable sets) to about ``n`` bytes: two
        generations of at most ``n / 2`` each; an entry used again moves to the current
        generation, the older generation is dropped when the current one fills up
        (an approximate LRU whose hits cost one dict lookup)."""
        self._steps.cap = max(1, int(n) // (2 * self.STEP_ENTRY_BYTES))
        self._finish.cap = max(1, int(n) // (2 * self.FINISH_ENTRY_BYTES))

    @property
    def step_memo(self) -> Generations:
        """The memo of :meth:`step` (``(cid << 8) | byte`` -> outcomes; read ``.cur``,
        call :meth:`step` on a miss): compiled twins read it, never write it."""
        return self._steps

    def memo_estimate(self) -> tuple[int, int]:
        """Estimated bytes held by the memos: (steps, finishable sets)."""
        return (len(self._steps) * self.STEP_ENTRY_BYTES,
                len(self._finish) * self.FINISH_ENTRY_BYTES)

    # -- terminals ---------------------------------------------------------
    def _resolve(self, acc: frozenset[int], ignore: frozenset[str],
                 terminal_ids: Mapping[str, int]) -> tuple:
        """Winners among the terminals matching one lexeme (see module doc): the
        emission (their alternatives, sorted) and ``(name, alternative)`` per winner."""
        if not acc:
            return (), ()
        defs = [self.terminals[i] for i in acc]
        top = max(t.priority for t in defs)
        best = [t for t in defs if t.priority == top]
        if any(t.is_literal for t in best):
            best = [t for t in best if t.is_literal]
        named = []
        for t in best:
            if t.name in ignore:
                named.append((t.name, IGNORE))
            elif t.name in terminal_ids:
                named.append((t.name, terminal_ids[t.name]))
            # a terminal neither ignored nor used by the parser cannot occur
            # (the front end keeps only used and ignored terminals)
        return tuple(sorted({a for _, a in named})), tuple(named)

    # -- configurations ----------------------------------------------------
    def config(self, cid: int) -> tuple[int, frozenset[int]]:
        return self._configs[cid]

    def intern(self, d, shadows: frozenset) -> int:
        """The id of configuration ``(d, shadows)`` (DFA state or boundary, shadow set;
        extended states where repetitions are counted), given on first use
        (thread-safe). At a gap boundary the shadows that read no byte a lexeme may start
        with there are dropped first (:meth:`_after_gap`): both spellings get one id."""
        key = (d, shadows)
        cid = self._config_ids.get(key)
        if cid is None:
            if shadows and type(d) is int and d < -self.n_modes:
                kept = self._after_gap(d, shadows)
                if kept is not shadows:
                    cid = self._config_ids[key] = self.intern(d, kept)
                    return cid
            with self._lock:
                cid = self._config_ids.get(key)
                if cid is None:
                    cid = len(self._configs)
                    self._configs.append(key)
                    self._config_ids[key] = cid
                    new = True
                else:
                    new = False
            sink = self._alias_sink
            if new and sink is not None:
                rep = self._alias_rep(cid)
                if rep != cid:
                    sink[cid] = sink.get(rep, rep)
        return cid

    # -- counted repetitions -------------------------------------------------
    def mask_rep(self, cid: int) -> int:
        """The configuration the mask automaton compiles for ``cid``: ``cid`` with every
        extended state replaced by its plain DFA state (the same outcomes for every
        token shorter than the band, :mod:`.counted`). ``cid`` itself when nothing is
        owed."""
        r = self._rep.get(cid)
        if r is None:
            d, shadows = self._configs[cid]
            if type(d) is not int or any(type(x) is not int for x in shadows):
                r = self.intern(d if type(d) is int else d[0],
                                frozenset(x if type(x) is int else x[0] for x in shadows))
            else:
                r = cid
            self._rep[cid] = r
        return r

    def set_exact(self, exact: bool) -> None:
        """Keep the iterations stalls owe (True: the text's exact language, what commit
        needs) or read the automaton's own states (False: the representative, what the
        mask automaton is compiled from; no extended configuration is made, so a
        construction's walks share their configurations whatever the counts). The memos
        of steps and finishable sets are dropped when this changes."""
        exact = bool(exact)
        if exact != self.exact and self.counted:     # without stalls both read alike
            with self._lock:
                self.exact = exact
                self._steps.clear()
                self._finish.clear()

    def bind_aliases(self, alias: dict) -> None:
        """Register every configuration, now and when it is made, as an alias of its mask
        representative in ``alias`` (the mask automaton's) where that is another
        configuration: with owed iterations, its plain one (:meth:`mask_rep`); else, with
        shadows, the one with each shadow its class's least state
        (:meth:`shadow_canonical`). A configuration commit reaches that construction never
        met (its walks went through the representatives) is then read as its
        representative, which construction compiled, not compiled on first use."""
        self._alias_sink = alias
        if not self.counted:
            self.shadow_classes()            # made now, not in a commit
        for cid in range(len(self._configs)):
            rep = self._alias_rep(cid)
            if rep != cid:
                alias[cid] = alias.get(rep, rep)

    def _alias_rep(self, cid: int) -> int:
        return self.mask_rep(cid) if self.counted else self.shadow_canonical(cid)

    def shadow_classes(self) -> np.ndarray | None:
        """Per DFA state, the least state equivalent to it as a shadow: a shadow only kills
        the configuration (its next state accepts), leaves it (no next state) or goes on,
        so two states that, on every byte string, kill at the same byte or leave at the
        same byte or neither, are one as shadows (a Moore refinement with those
        observations, run to the end: the requirement of a configuration reads its
        shadows beyond any token). None where stalls count repetitions (a shadow may be
        an extended state there). Made once (~2-30 ms for 250-2,500 states)."""
        if self.counted:
            return None
        r = self._shadow_rep
        if r is None:
            reps = self._byte_classes
            succ = np.take(np.asarray(self.dfa.trans), reps, axis=1).astype(np.int64)
            n = len(succ)
            acc = np.array(self.accepting + [False], dtype=bool)
            # a kill is a state of its own (n, a block of its own); a run leaves at -1
            succ = np.where(succ < 0, -1, np.where(acc[np.where(succ < 0, n, succ)], n, succ))
            succ = np.concatenate([succ, np.full((1, len(reps)), n, dtype=np.int64)])
            cls0 = np.zeros(n + 1, dtype=np.int64)
            cls0[n] = 1
            cls = refine(cls0, succ, (n + 1,))[0][n + 1]
            least = np.full(int(cls.max()) + 1, n + 1, dtype=np.int64)
            np.minimum.at(least, cls, np.arange(n + 1, dtype=np.int64))
            r = self._shadow_rep = least[cls][:n]
        return r

    def shadow_canonical(self, cid: int) -> int:
        """``cid`` with every shadow replaced by the least state of its class
        (:meth:`shadow_classes`): the same outcomes for every token and the same
        requirement. ``cid`` itself when that changes nothing (or where counted)."""
        d, shadows = self._configs[cid]
        if not shadows or self.counted:
            return cid
        rep = self.shadow_classes()
        canon = frozenset(int(rep[s]) for s in shadows)
        return cid if canon == shadows else self.intern(d, canon)

    @property
    def n_configs(self) -> int:
        return len(self._configs)

    def export_configs(self) -> list:
        """The interned configurations, in id order (compiled artifacts refer to these ids)."""
        with self._lock:
            return list(self._configs)

    def import_configs(self, configs) -> None:
        """Adopt configuration ids from a compiled artifact (before any use of this scanner)."""
        configs = [(_state_of(d), frozenset(_state_of(x) for x in s)) for d, s in configs]
        if not configs or configs[0] != (BOUNDARY, frozenset()):
            raise ValueError("configuration 0 must be the boundary configuration")
        with self._lock:
            self._configs = configs
            self._config_ids = {c: i for i, c in enumerate(configs)}
            self._steps.clear()
            self._finish.clear()
            self._special_memo.clear()
            self._rep.clear()

    @property
    def byte_representatives(self) -> list[int]:
        """One byte per class of bytes that every DFA state treats alike: :meth:`step`
        gives the same outcomes for every byte of a class, in every configuration."""
        return self._byte_classes

    def at_boundary(self, cid: int) -> bool:
        d = self._configs[cid][0]
        return type(d) is int and d < 0

    def after_gap_boundary(self, cid: int) -> bool:
        """Whether ``cid`` is at a gap boundary (a gap lexeme was just emitted)."""
        d = self._configs[cid][0]
        return type(d) is int and d < -self.n_modes

    def mode_boundary(self, d: int) -> int:
        """The boundary of boundary ``d``'s mode: ``d`` itself, or for a gap boundary the
        plain boundary of its mode."""
        return -1 - ((-1 - d) % self.n_modes)

    def _growable(self) -> list:
        """Per DFA state: a complete lexeme that can grow (its emission leaves a shadow)."""
        return [bool(w) and lo for w, lo in zip(self.winners, self._live_out)]

    def single_outcome(self, cid: int) -> bool:
        """Whether every byte gives configuration ``cid`` at most one outcome (:meth:`step`):
        it has no shadows, its lexeme is in a plain DFA state (no iterations owed), and no
        byte leads that state to one whose emission leaves a shadow (a complete lexeme
        that can grow) or whose winners switch to different modes (the only ways one
        byte makes two outcomes)."""
        d, shadows = self._configs[cid]
        if shadows or type(d) is not int:
            return False
        if self._forks is None:
            grows = self._growable()
            for q in self._split:              # a fork by mode: one outcome per mode
                grows[q] = True
            grows = np.array(grows + [False])
            t = np.asarray(self.dfa.trans)[:, self._byte_classes]
            self._forks = grows[t].any(axis=1)          # -1 reads the appended False
        return not self._forks[self.mode_starts[-1 - d] if d < 0 else d]

    # -- one byte ------------------------------------------------------------
    def step(self, cid: int, byte: int) -> tuple:
        """Outcomes of reading ``byte`` in configuration ``cid``: a tuple of
        ``(emission or None, next config)``; empty when every branch dies."""
        key = (cid << 8) | byte
        out = self._steps.cur.get(key)
        if out is None:
            rep = self.byte_rep[byte]
            # every byte of a class has its representative's outcomes: computed once
            out = self._steps.miss(key, self._step if rep == byte else self.step, cid, rep)
        return out

    def _step(self, cid: int, byte: int) -> tuple:
        if self.counted and self.exact:
            return self._step_counted(cid, byte)
        trans = self._trans
        d, shadows = self._configs[cid]
        nd = trans[self.mode_starts[-1 - d] if d < 0 else d][byte]
        if nd < 0:
            return ()
        ns = set()
        for s in shadows:
            t = trans[s][byte]
            if t >= 0:
                if self.accepting[t]:
                    return ()          # a longer match of an emitted lexeme completed
                ns.add(t)
        return self._branches(nd, nd, frozenset(ns))

    def _branches(self, nd, q: int, ns: frozenset) -> tuple:
        """The outcomes of a byte that leads the pending lexeme to ``nd`` (DFA state
        ``q``; an extended state where repetitions are counted) and the shadows to ``ns``:
        emitting its winners (a new lexeme starts), reading on, or both."""
        w = self.winners[q]
        if not w:
            return ((None, self.intern(nd, ns)),)
        split = self._split.get(q) if self._split else None
        if split is not None:            # winners switching to different modes: one each
            if self._live_out[q]:
                sh = ns | {nd}
                return tuple((e, self.intern(b, sh)) for e, b in split) + ((None, self.intern(nd, ns)),)
            return tuple((e, self.intern(b, ns)) for e, b in split)
        nb = self._next_boundary[q]
        if self._live_out[q]:
            return ((w, self.intern(nb, ns | {nd})), (None, self.intern(nd, ns)))
        return ((w, self.intern(nb, ns)),)

    def _after_gap(self, b: int, shadows: frozenset) -> frozenset:
        """``shadows`` at gap boundary ``b`` without those that read no byte a lexeme can
        start with there: the gap lexeme just emitted, which could only grow by blanks no
        lexeme may start with after a gap (such a shadow dies on every byte that does not
        kill the token anyway: the configurations are the same). ``shadows`` itself when
        none is dropped."""
        live = self._live_bytes
        start = live(self.mode_starts[-1 - b])
        kept = frozenset(s for s in shadows if type(s) is not int or live(s) & start)
        return kept if len(kept) != len(shadows) else shadows

    def _live_bytes(self, q: int) -> int:
        """The bytes DFA state ``q`` reads on (a bit per byte; memoized)."""
        r = self._live_memo.get(q)
        if r is None:
            row = np.asarray(self.dfa.trans[q]) >= 0
            r = self._live_memo[q] = int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")
        return r

    def _step_counted(self, cid: int, byte: int) -> tuple:
        """:meth:`_step` over extended states."""
        xstep = self._xstep
        d, shadows = self._configs[cid]
        if type(d) is int and d < 0:
            d = self.mode_starts[-1 - d]
        nd = xstep(d, byte)
        if type(nd) is int and nd < 0:
            return ()
        ns = set()
        for s in shadows:
            t = xstep(s, byte)
            if type(t) is not int:
                if self.accepting[t[0]]:
                    return ()
                ns.add(t)
            elif t >= 0:
                if self.accepting[t]:
                    return ()          # a longer match of an emitted lexeme completed
                ns.add(t)
        return self._branches(nd, nd if type(nd) is int else nd[0], frozenset(ns))

    # -- end of text and lookahead -------------------------------------------
    def final_emission(self, cid: int) -> Emission | None:
        """At end of text: ``()`` if no lexeme is pending, the winners if the
        pending lexeme is complete, ``None`` if it is incomplete (dead)."""
        d, _ = self._configs[cid]
        if type(d) is not int:
            d = d[0]
        elif d < 0:
            return ()
        w = self.winners[d]
        return w if w else None

    def special(self, cid: int, term: int) -> tuple:
        """Committing a special token bound to parser terminal ``term`` in ``cid``: a
        tuple of ``(emission of the pending lexeme (``()``: none), config after the
        terminal)``, empty when the pending lexeme is incomplete. The pending lexeme is
        finished as at the end of the text; its winners give one pair, or one per mode
        after the terminal where they switch to different modes."""
        key = (cid, term)
        r = self._special_memo.get(key)
        if r is None:
            d, _ = self._configs[cid]
            if type(d) is not int:
                d = d[0]
            if d < 0:
                parts = (((), -1 - d),)
            elif self.winners[d]:
                parts = self._split.get(d) or ((self.winners[d], self._next_boundary[d]),)
                parts = tuple((em, -1 - b) for em, b in parts)
            else:
                parts = ()
            by_cfg: dict = {}                 # winners ending in the same mode: one emission
            for em, m in parts:
                m %= self.n_modes             # a gap boundary's mode (a special token is a lexeme)
                m2 = self._special_switch.get((m, term), m)
                by_cfg.setdefault(self.intern(-1 - m2, frozenset()), set()).update(em)
            r = tuple((tuple(sorted(a)), c) for c, a in sorted(by_cfg.items()))
            self._special_memo[key] = r
        return r

    def state_observations(self) -> list:
        """Per DFA state ``q``, everything the scanner reads of a pending lexeme in ``q``
        itself (the rest is where ``q``'s bytes lead): its winners, whether it reads on,
        the boundary after emitting it (its mode's; one per mode where its winners
        switch to different modes), the alternatives it can still
        become, and, for a state whose emission leaves a shadow (a complete lexeme that
        can grow), the state itself (the shadow is that state). Two pending
        configurations without shadows whose states lead, by every byte string of up to
        ``k`` bytes, to states observed alike give every token of up to ``k`` bytes the
        same outcomes (once a shadow is made both runs are in the same state)."""
        grows = self._growable()
        split = self._split
        return [(self.winners[q], self._live_out[q], split.get(q, self._next_boundary[q]),
                 self._reach[q], q if grows[q] else -1) for q in range(self.dfa.n_states)]

    def shadows(self, cid: int) -> frozenset[int]:
        return self._configs[cid][1]

    def finishable(self, cid: int) -> frozenset:
        """Alternatives (terminal ids or IGNORE) that the pending lexeme (or,
        at a boundary, the next lexeme) can still become by reading more
        bytes, without any shadow completing a longer match on the way."""
        out = self._finish.cur.get(cid)
        if out is None:
            out = self._finish.miss(cid, self._finishable, cid)
        return out

    def _finishable(self, cid: int) -> frozenset:
        d, shadows = self._configs[cid]
        if type(d) is not int:
            d = d[0]
        d = self.mode_starts[-1 - d] if d < 0 else d
        reach = self._reach
        if not shadows:
            return reach[d]          # owed iterations change no terminal the lexeme can become
        if self.counted and self.exact:
            return self._finishable_counted(cid)
        # Explore (state, shadows) pairs until the shadows die; from there on
        # the precomputed per-state reachability answers.
        trans = self._trans
        accepting = self.accepting
        live_out = self._live_out
        winners = self.winners
        result: set = set()
        start = (d, shadows)
        seen = {start}
        todo = [start]
        reps = self._byte_classes
        while todo:
            d0, s0 = todo.pop()
            row = trans[d0]
            for b in reps:
                nd = row[b]
                if nd < 0:
                    continue
                ns = set()
                dead = False
                for s in s0:
                    t = trans[s][b]
                    if t >= 0:
                        if accepting[t]:
                            dead = True
                            break
                        ns.add(t)
                if dead:
                    continue
                result.update(winners[nd])
                if not ns:
                    result.update(reach[nd])
                elif live_out[nd]:
                    key = (nd, frozenset(ns))
                    if key not in seen:
                        seen.add(key)
                        todo.append(key)
        return frozenset(result)


    def _finishable_counted(self, cid: int) -> frozenset:
        """:meth:`_finishable` with shadows over extended states: (pending, shadows)
        pairs explored until the shadows die (each pair a configuration, stepped by
        :meth:`step`)."""
        reach = self._reach
        winners = self.winners
        result: set = set()
        seen = {cid}
        todo = [cid]
        reps = self._byte_classes
        while todo:
            c = todo.pop()
            for b in reps:
                for em, c2 in self.step(c, b):
                    if em is not None:
                        result.update(em)     # the lexeme can end here as these
                        continue
                    d, sh = self._configs[c2]
                    q = d if type(d) is int else d[0]
                    result.update(winners[q])
                    if not sh:
                        result.update(reach[q])
                    elif c2 not in seen and self._live_out[q]:
                        seen.add(c2)
                        todo.append(c2)
        return frozenset(result)


TRUE = "T"          # requirement: always viable


def requirement(scanner: Scanner, cfg: int):
    """What a head whose lexer is in ``cfg`` needs from its stack (None: never viable).

    With special-token terminals (``scanner.special_terms``) a head is also viable when a
    special token can come next: its pending lexeme is complete (emission ``em``, ``()`` at
    a boundary) and after ``em`` the stack can shift a special terminal. The requirement
    is then ``(F, can_end, em)``."""
    boundary = scanner.at_boundary(cfg)
    if boundary and not scanner.shadows(cfg):
        return TRUE
    fin = scanner.finishable(cfg)
    if IGNORE in fin:
        return TRUE
    em = scanner.final_emission(cfg) if scanner.special_terms else None
    if not fin and not boundary and em is None:
        return None
    if em is None:
        return (frozenset(fin), boundary)
    return (frozenset(fin), boundary, em)


def _state_of(x):
    """An extended state from plain data: an int, or ``(q, ((stall, owed), ...))``."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    q, owed = x
    return (int(q), tuple((int(s), int(r)) for s, r in owed))


def _successors(trans: np.ndarray, reps: list[int]) -> list[list[int]]:
    """Per DFA state, its distinct successors over the bytes ``reps``, ascending."""
    n = len(trans)
    t = np.sort(np.take(np.asarray(trans), reps, axis=1), axis=1)
    keep = t >= 0
    keep[:, 1:] &= t[:, 1:] != t[:, :-1]
    flat = t[keep].tolist()
    ends = np.cumsum(keep.sum(axis=1)).tolist()
    out, a = [], 0
    for q in range(n):
        out.append(flat[a:ends[q]])
        a = ends[q]
    return out


def _reachable_winners(trans: np.ndarray, reps: list[int], winners: tuple) -> tuple[frozenset, ...]:
    """For every DFA state, the union of the winners of all states reachable
    by reading one or more bytes. Tarjan's SCCs (iterative), so long chains
    and large DFAs cost linear time: in the compiled extension over bitsets of the
    alternatives (``_native.reach_closure``; 60 ms of Python for a lexer of ~20,000
    states), else :func:`_reachable_winners_py`, the reference."""
    mod = native.module()
    if mod is None or not len(trans):
        return _reachable_winners_py(trans, reps, winners)
    alts: dict = {}
    for w in winners:
        for a in w:
            alts.setdefault(a, len(alts))
    n = len(trans)
    words = max(1, (len(alts) + 63) // 64)
    win = np.zeros((n, words), dtype=np.uint64)
    for q, w in enumerate(winners):
        for a in w:
            k = alts[a]
            win[q, k >> 6] |= np.uint64(1 << (k & 63))
    succ = np.ascontiguousarray(np.take(np.asarray(trans), reps, axis=1), dtype=np.int32)
    reach = mod.reach_closure(succ, win)
    rows = np.ascontiguousarray(reach.astype("<u8")).view(np.dtype((np.void, 8 * words)))
    uniq, inv = np.unique(rows.reshape(-1), return_inverse=True)
    elems = list(alts)
    bits = np.unpackbits(np.frombuffer(uniq.tobytes(), dtype=np.uint8).reshape(len(uniq), -1),
                         axis=1, bitorder="little")
    sets = [frozenset(elems[k] for k in np.flatnonzero(row).tolist()) for row in bits]
    return tuple(sets[i] for i in inv.reshape(-1).tolist())


def _reachable_winners_py(trans: np.ndarray, reps: list[int], winners: tuple) -> tuple[frozenset, ...]:
    """:func:`_reachable_winners` in Python (the reference)."""
    n = len(trans)
    succ = _successors(trans, reps)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comp = [-1] * n
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            if i < len(succ[v]):
                work[-1] = (v, i + 1)
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = len(comps)
                    members.append(w)
                    if w == v:
                        break
                comps.append(members)
    # Tarjan emits SCCs in reverse topological order: successors first.
    reach_c: list[frozenset] = []
    for ci, members in enumerate(comps):
        acc: set = set()
        cyclic = len(members) > 1 or members[0] in succ[members[0]]
        for v in members:
            for w in succ[v]:
                if comp[w] != ci:
                    acc.update(winners[w])
                    acc.update(reach_c[comp[w]])
        if cyclic:
            for v in members:
                acc.update(winners[v])
        reach_c.append(frozenset(acc))
    return tuple(reach_c[comp[q]] for q in range(n))
