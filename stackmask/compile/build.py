"""Building the Parser DWA for a grammar and a vocabulary (an eager compile).

Every lexer configuration reachable at a token boundary gets its start state
from its token outcomes (:class:`~stackmask.compile.terminal.TerminalCompiler`),
every state reachable from them is expanded breadth first, then start states for
pairs of heads that masks meet are added. A budget may stop it; what is left is
compiled on first use (:meth:`ParserDWA.edge`).
"""

from __future__ import annotations

import gc
import logging
import time

import numpy as np
from pyroaring import BitMap

from ..glr.lalr import LRTables
from ..lexer.counted import IN
from ..lexer.scanner import BOUNDARY_CONFIG, IGNORE, TRUE
from ..progress import Heartbeat
from ..wfa.weights import EMPTY_ID, WeightTable
from . import count_split
from .config_classes import ConfigClasses
from .dwa_starts import pair_key
from .parser_dwa import ParserDWA
from .terminal import TerminalCompiler, final_outcomes

log = logging.getLogger("stackmask")


#: an automaton that passes this many states before it is complete is built again with
#: the start items of ``ParserDWA.ROUTE_MIN_TERMINALS`` or more terminals held out, checked
#: by masks over the GSS (``ParserDWA.routed``; 0: held out from the start, in lazy
#: compiles too; None: never). Held-out items cost masks more (SQL on unseen programs:
#: p50 15 µs, p99.9 0.4 ms; Java with them held out: p50 15 µs against 3.4, p99.9 0.53 ms
#: against 0.1), so only an automaton that would not otherwise complete pays: Java's, the
#: largest of the benchmark grammars that completes, has 270,000 states before
#: minimization; SQL's passed 500,000 without completing, and completes with 57,000 once
#: they are held out (benchmarks/RESULTS.md, *Construction*).
ROUTE_AFTER_STATES: int | None = 350_000


class _Reroute(Exception):
    """The automaton passed ``ROUTE_AFTER_STATES`` (raised by the build's stop check)."""


def build_parser_dwa(scanner, lr: LRTables, accepts_empty: bool, index, vocab, weights: WeightTable,
                     configs=None, progress: bool = False, budget_s: float | None = None,
                     guard=None, specials=None) -> ParserDWA:
    """:func:`_build_parser_dwa`, reading the representative of counted repetitions
    (``Scanner.set_exact(False)``): the walks make no configuration per owed count, which
    masks never need (``Scanner.mask_rep``); the scanner is as exact as before after it.
    An automaton that passes ``ROUTE_AFTER_STATES`` states is built again, with fresh
    token sets (``weights`` is then not the automaton's), holding out the start items of
    several terminals; the budget counts from the first start."""
    exact = scanner.exact
    scanner.set_exact(False)
    deadline = None if budget_s is None else (time.monotonic() + budget_s, budget_s)
    after = ROUTE_AFTER_STATES
    try:
        if after is None or after > 0:
            try:
                return _build_parser_dwa(scanner, lr, accepts_empty, index, vocab, weights,
                                         configs, progress, deadline, guard, specials,
                                         None, after)
            except _Reroute:
                pass
            log.info("stackmask: the mask automaton passed %d states: building it again "
                     "with the tokens of %d or more terminals checked by masks",
                     after, ParserDWA.ROUTE_MIN_TERMINALS)
            gc.collect()             # the abandoned automaton (the build pauses the collector)
            weights = WeightTable(weights.n_tokens)
        return _build_parser_dwa(scanner, lr, accepts_empty, index, vocab, weights, configs,
                                 progress, deadline, guard, specials,
                                 ParserDWA.ROUTE_MIN_TERMINALS, None)
    finally:
        scanner.set_exact(exact)


def _build_parser_dwa(scanner, lr: LRTables, accepts_empty: bool, index, vocab,
                      weights: WeightTable, configs, progress: bool, deadline: tuple | None,
                      guard, specials, route_min: int | None,
                      reroute_after: int | None) -> ParserDWA:
    """Compile the Parser DWA for every lexer configuration reachable at token boundaries
    (or for ``configs``), expanding every reachable state breadth first, start items of
    ``route_min`` or more terminals held out (``ParserDWA.routed``); past
    ``reroute_after`` states it raises :class:`_Reroute`. At ``deadline``
    (``(time.monotonic() at the end, budget seconds)``) compilation stops; what is left
    (configurations, states) is
    compiled on first use, with the same results; the same happens, with a budget, when
    the compile's memory growth passes half of the guard's ``max_compile_memory_bytes``
    (instead of failing at the hard limit). ``guard`` (a
    :class:`stackmask.limits.CompileGuard`) enforces the hard limits between steps."""
    dwa = ParserDWA(lr, accepts_empty, weights)
    dwa.route_min = route_min
    if guard is not None:
        dwa.max_states = guard.limits.max_automaton_states
        dwa.max_sequences = guard.limits.max_token_sequences
    terms = TerminalCompiler(scanner, index, cache_bytes=TERMINAL_CACHE_BYTES)
    eos_w = dwa.eos_weight = weights.intern(BitMap(sorted(vocab.eos_token_ids)))
    dwa.bind_specials(specials)
    on_base = bases_allowed(dwa, index)
    classes = config_classes(scanner, index)
    todo = [BOUNDARY_CONFIG] if configs is None else list(configs)
    if configs is None:
        todo.extend(scanner.intern(d, frozenset()) for d in reversed(classes.seeds))
    # counted chains' states near a bound get the masks of deep ones (count_split)
    split = None if configs is not None else count_split.plan(scanner, classes.max_len)
    if configs is None:
        more = []
        if split is not None:
            dwa.count_split.update(split.specs)
            more += split.rest + split.deep
        if scanner.counted:
            # a stall's states: the construction reads a stall as one count, so one that
            # other terminals are still read beside (keys at a string's first counts) is
            # met only while decoding, as an extended configuration whose masks are its
            # plain one's
            tags = scanner.dfa.counters[3]
            more += [scanner.intern(int(q), frozenset())
                     for q in np.flatnonzero((tags == IN).any(axis=1))]
        have = set(todo)
        todo.extend(c for c in dict.fromkeys(more) if c not in have)
    skipped: set = set()          # counted configurations met (not compiled)
    deep = set(split.deep) if split is not None else set()
    seen = set(todo)
    long_diff: dict = {}          # depth -> weight id of the longer tokens (and EOS, specials)
    shadow_diff: dict = {}        # the same for the tokens shadows read on (_start_on_base)
    bases: set = set()            # the configurations others started on by their diff
    beat = Heartbeat(progress)
    t0 = beat.started
    used_up: list = []        # why the soft budget stopped the compile

    def stop() -> bool:
        if reroute_after is not None and len(dwa.items) > reroute_after:
            raise _Reroute
        if used_up:
            return True
        if deadline is None:
            return False
        if time.monotonic() > deadline[0]:
            used_up.append(f"time: {deadline[1]:g} s")
            return True
        if guard is not None and guard.soft_memory_used_up():
            used_up.append(f"memory: half of max_compile_memory_bytes, "
                           f"{guard.max_rss / 2 ** 30 / 2:.1f} GiB grown")
            return True
        if dwa.max_states is not None and len(dwa.items) > dwa.max_states // 2:
            # the other half is left to the states masks compile on first use (past
            # max_automaton_states they would raise)
            used_up.append(f"automaton states: half of max_automaton_states, "
                           f"{dwa.max_states // 2:,} states")
            return True
        return False

    def report(msg):
        took = beat.due()
        if took is not None:
            log.info("stackmask: compiling the mask automaton (%.0f s): %s", took, msg)

    dwa.begin_batch()         # the starts are made together (restricted ones found)
    while todo:
        if guard is not None:
            guard.check()
        if stop():
            break
        cfg = todo.pop()
        if cfg in dwa.count_split:
            skipped.add(cfg)
            continue
        a = classes.alias(cfg)
        if a is not None and a in dwa.count_split:
            a = None              # (its masks may be this one's: compiled itself)
        if a is not None:
            dwa.alias[cfg] = a
            ends = (a,)
        else:
            r = None
            if on_base:
                b = classes.base(cfg)
                if b is not None:
                    r = add_config_on_class_base(dwa, terms, cfg, b, classes.depth(cfg, b),
                                                 eos_w, long_diff)
                elif cfg not in bases:
                    # a base never has a base of its own: a configuration some other
                    # one started on is compiled whole
                    r = add_config_on_shadow_base(dwa, terms, cfg, eos_w, classes,
                                                  dwa.init_base, shadow_diff)
                    g = terms.gap_base(cfg) if r is None else None
                    if g is not None:
                        # after a gap: its mode's boundary less the gap-led tokens (a
                        # diff of whole subtrees, however many tokens they hold)
                        r = add_config_on_base(dwa, terms, cfg, eos_w, base=g, max_share=1.0,
                                               avoid=dwa.init_base)
                # (a counted chain's deep state: no diff walk against a guessed base, which
                # costs more there than its own walk)
                if r is None and b is None and not classes.is_root(cfg) and cfg not in bases \
                        and cfg not in deep:
                    w = classes.weak_base(cfg)
                    if w is not None:
                        r = add_config_on_base(dwa, terms, cfg, eos_w, base=w,
                                               max_share=WEAK_MAX_SHARE)
                    if r is None:
                        r = add_config_on_base(dwa, terms, cfg, eos_w, classes.root_of,
                                               avoid=dwa.init_base)
                if r is not None:
                    b0 = dwa.init_base[cfg][0]
                    bases.add(b0)
                    if dwa.count_split.pop(b0, None) is not None and b0 in skipped:
                        todo.append(b0)      # a base is compiled whole
            if r is None:
                _, ends = add_config(dwa, terms, cfg, eos_w)
            else:
                _, ends = r
        report(f"{len(seen)} lexer configurations, {len(dwa.items)} automaton states")
        if configs is None:
            for c in ends:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
    dwa.end_batch()
    if split is not None and dwa.count_split:
        dwa.count_tables = count_tables(split, scanner, index, classes.max_len, weights.n_tokens)
    complete = dwa.expand_all(lambda q, n: report(f"automaton state {q} of {n}"), stop, guard)
    if complete and not todo and configs is None:
        whole: dict = {}

        def whole_start(cfg: int) -> tuple:
            # a configuration on a base in a pair: its start items for every token
            e = whole.get(cfg)
            if e is None:
                groups, ends = terms.outcomes(cfg)
                e = whole[cfg] = dwa.start_items(
                    start_outcomes(dwa, scanner, cfg, groups, ends, eos_w), terms.index.bitmap_of)
            return e

        # at most an eighth of the compile so far (PAIR_MIN_SECONDS at least) on them
        add_pairs(dwa, scanner, stop, guard, whole_start=whole_start,
                  seconds=max(PAIR_MIN_SECONDS, (time.monotonic() - t0) / 8))
    dwa.budget_exhausted = bool(todo) or not complete
    dwa.budget_used_up = used_up[0] if used_up else None
    if progress and dwa.budget_exhausted:
        why = f" ({used_up[0]})" if used_up else ""
        log.warning("stackmask: compile budget used up%s: %d lexer configurations and %d of %d "
                    "automaton states compiled; the rest is compiled when a mask first needs it",
                    why, len(dwa.init), sum(dwa.complete), len(dwa.items))
    return dwa


def count_tables(split, scanner, index, longest: int, n_ids: int) -> list:
    """The iteration counts per token id of the tables ``split`` names (:func:`.count_split.
    iteration_counts`), computed per counted group for all its starts at once."""
    groups = scanner.dfa.chains[-1]
    out: list = [None] * len(split.tables)
    by_group: dict = {}
    for t, (g, s) in enumerate(split.tables):
        by_group.setdefault(g, []).append((t, s))
    for g, ts in by_group.items():
        _, _, xn, xd = groups[g]
        counts = count_split.counts_for(index, xn, xd, [s for _, s in ts], n_ids, longest)
        for row, (t, _) in zip(counts, ts):
            out[t] = row
    return out


def head_pairs(scanner, configs, allowed=None) -> set:
    """The two-head situations a byte creates from ``configs``: a byte whose lexing both
    emits a terminal (the new head's node is then usually right above the other's) or
    an ignored terminal (the same node) and keeps a lexeme pending. Returns
    ``(config of the emitting branch, config of the pending one, below)`` triples (bytes
    that every lexer state treats alike give the same: one of each class is read), both
    in ``allowed`` when it is given. Not where the emission is a gap (``Grammar.gaps``):
    the next byte leaves one of the two heads (a blank the pending gap, any other the
    head after it), so a start for both would only add a pair per count of the gap."""
    out = set()
    reps = scanner.byte_representatives
    for cfg in configs:
        if scanner.single_outcome(cfg):
            continue                          # no byte makes two heads
        for b in reps:
            outs = scanner.step(cfg, b)
            if len(outs) < 2:
                continue
            pending = [c for em, c in outs if em is None]
            for em, c in outs:
                if em is None or scanner.after_gap_boundary(c):
                    continue
                below = em != (IGNORE,)
                if below and len(em) != 1:
                    continue                  # several terminals: the nodes are further apart
                for c2 in pending:
                    if c2 != c and (allowed is None or (c in allowed and c2 in allowed)):
                        out.add((c, c2, below))
    return out


#: states one pair start may add to a complete automaton (and this share of its size):
#: the union of two heads' walks can multiply states (C: 17.6k -> 234k with every pair).
#: Measured 2026-11-26: every pair kept on the bundled grammars added at most 44 states
#: (json 1/26/25, calc 0/44/30/9, c 0), every pair dropped passed 150 (schemas: 152-334);
#: a dropped pair costs the expansions up to this limit, a sixth of a small schema's build
PAIR_MIN_STATES = 64
PAIR_SHARE = 1 / 200
#: the pairs' time budget is an eighth of the compile so far, at least this
PAIR_MIN_SECONDS = 0.3
#: the first this many pairs are never cut by the time budget, so a grammar with few pairs
#: (JSON, calc: 4 each; schemas: 33-47, C: 165) compiles to the same automaton on a loaded
#: machine as on a quiet one (measured 2026-11-26: all of a grammar's pairs took <= 0.12 s
#: CPU on the bundled grammars and 5 MaskBench schemas; the state limit and PAIR_GIVE_UP
#: bound the rest)
PAIR_SURE = 64
#: pairs dropped in a row after which no more are tried (a grammar whose pairs multiply
#: states does so for most of them: each try costs its state limit in expansions).
#: Measured 2026-11-30 (pairs tried in order, k kept, D dropped): C, SQL, Java kDD, Go DD,
#: JSON and calc all kept, and the first 40 MaskBench schemas DD each (bounded whitespace:
#: every pair is a blank run that may end or go on), 12 ms of a median schema's
#: construction; no grammar kept a pair after a drop, so one drop ends the tries
PAIR_GIVE_UP = 1


def add_pairs(dwa: ParserDWA, scanner, stop=None, guard=None, seconds: float | None = None,
              whole_start=None) -> int:
    """Start states for the two-head situations of a completely compiled automaton
    (:func:`head_pairs`, :meth:`ParserDWA.add_pair`; ``whole_start``: the whole start of a
    configuration started on a base, or None to leave those unpaired), each compiled
    completely at once;
    a pair whose walks would add more than ``max(PAIR_MIN_STATES, PAIR_SHARE x states)``
    states, or that is cut by ``seconds`` (all pairs together), is dropped with the
    states it added (its heads are walked one by one, as without it); after
    ``PAIR_GIVE_UP`` drops in a row no more are tried. The first ``PAIR_SURE`` pairs are
    not cut by ``seconds``, so that small grammars do not depend on the machine's load.
    Returns how many were kept."""
    limit = max(PAIR_MIN_STATES, int(len(dwa.items) * PAIR_SHARE))
    deadline = None if seconds is None else time.monotonic() + seconds
    kept = dropped = 0
    spent = [0.0]         # in whole starts: the walks a base saved, not the pairs' budget

    def timed_start(cfg):
        t = time.monotonic()
        try:
            return whole_start(cfg)
        finally:
            spent[0] += time.monotonic() - t

    tried = [0]

    def late() -> bool:
        return (deadline is not None and tried[0] > PAIR_SURE
                and time.monotonic() > deadline + spent[0])
    # a configuration on a base has no start of its own for every token: paired only
    # with ``whole_start``
    cfgs = [c for c in dwa.init if whole_start is not None or c not in dwa.init_base]
    for c_top, c_low, below in sorted(head_pairs(scanner, cfgs, set(cfgs))):
        if dropped >= PAIR_GIVE_UP:
            log.debug("stackmask: %d head pairs dropped in a row: no more tried", dropped)
            break
        mark = len(dwa.items)
        tried[0] += 1
        if dwa.add_pair(c_top, c_low, below, None if whole_start is None else timed_start) is None:
            continue

        def cut(mark=mark) -> bool:
            return len(dwa.items) - mark > limit or (stop is not None and stop()) or late()

        if dwa.expand_all(stop=cut, guard=guard, start=mark):
            kept += 1
            dropped = 0
        else:
            dwa.drop_pair(pair_key(c_top, c_low, below), mark)
            dropped += 1
        if late():
            break
    return kept


def add_config(dwa: ParserDWA, terms, cfg: int, eos_w: int) -> tuple:
    """Add lexer configuration ``cfg``: its token outcomes (and EOS) become start items.
    Returns ``(start entry, configurations its tokens end in)``."""
    groups, ends = terms.outcomes(cfg)
    outcomes = start_outcomes(dwa, terms.scanner, cfg, groups, ends, eos_w)
    return dwa.add_config(cfg, outcomes, terms.index.bitmap_of), ends


def start_outcomes(dwa: ParserDWA, scanner, cfg: int, groups: dict, ends: set, eos_w: int) -> list:
    """The start outcomes of ``cfg``: outcome -> positions (vocabulary tokens, ``groups``)
    and outcome -> weight ids (EOS, special tokens); the configurations special tokens end
    in are added to ``ends``."""
    outcomes = list(groups.items())
    if eos_w != EMPTY_ID:
        outcomes.extend((key, eos_w) for key in final_outcomes(scanner, cfg))
    for key, ncfg, wid in special_outcomes(scanner, cfg, dwa.special_weights or ()):
        outcomes.append((key, wid))
        ends.add(ncfg)
    return outcomes


#: the terminal compiler's caches (DFA runs over the vocabulary, walks) in a construction:
#: past this they are dropped and remade on demand. The bundled grammars use at most 19 MB
#: and a median JSON Schema a few; unbounded, a schema with 26,000 configurations
#: (`Github_hard---o1052`, fifteen length-bounded strings) kept 211 MB of them, which was
#: most of its peak (665 -> 528 MB at this bound, in no more time)
TERMINAL_CACHE_BYTES = 64 << 20

#: a configuration is started on its base when at most this share of the vocabulary's
#: tokens behave differently in it (beyond that, its own start is cheaper to walk)
BASE_MAX_SHARE = 1 / 8

#: the same for a base its weak class proposes (:meth:`ConfigClasses.weak_base`): a
#: proposal is a guess, and a failed one costs the walk up to this many differing tokens
WEAK_MAX_SHARE = 1 / 32


def bases_allowed(dwa: ParserDWA, index) -> bool:
    """Whether configurations may start on a base (:meth:`ParserDWA.add_config_on_base`):
    not when an EOS or special token id is also a text token (the tokens that differ
    from the base are text tokens; those ids would need both parts)."""
    wt = dwa.weights
    ids = wt.get(dwa.eos_weight) if dwa.eos_weight is not None else BitMap()
    for _, w in dwa.special_weights or ():
        ids = ids | wt.get(w)
    return not len(ids) or not ids.intersect(index.text_ids())


#: configurations equivalent up to a depth beyond which at most this share of the
#: vocabulary's tokens are longer start on one base (:mod:`.config_classes`)
LONG_SHARE = 1 / 64


def config_classes(scanner, index) -> ConfigClasses:
    """The configuration classes of ``scanner``'s lexer for the vocabulary of ``index``
    (its longest token and horizon are made once per vocabulary)."""
    return ConfigClasses(scanner, index.max_length(), index.horizon(LONG_SHARE))


def add_config_on_class_base(dwa: ParserDWA, terms, cfg: int, base: int, horizon: int,
                             eos_w: int, long_diff: dict):
    """Add lexer configuration ``cfg`` on ``base``, equivalent to it up to ``horizon``
    bytes (:class:`ConfigClasses`): every token of at most ``horizon`` bytes has the
    same outcomes in both; the longer ones (and EOS and the special tokens) get ``cfg``'s
    own start. ``long_diff`` keeps the weight ids of those token sets across calls. Returns
    ``(start entry, configurations to compile)``."""
    diff, groups, ends = terms.long_outcomes(cfg, horizon)
    outcomes = start_outcomes(dwa, terms.scanner, cfg, groups, ends, eos_w)
    wid = long_diff.get(horizon)
    if wid is None:
        wid = long_diff[horizon] = _diff_weight(dwa, terms.index.bitmap_of(diff), eos_w)
    entry = dwa.add_config_on_base(cfg, base, wid, outcomes, terms.index.bitmap_of)
    ends.add(base)
    return entry, ends


def _diff_weight(dwa: ParserDWA, diff_ids: BitMap, eos_w: int) -> int:
    """The weight id of ``diff_ids`` and every EOS and special token (a configuration on
    a base has all of those in its own start)."""
    wt = dwa.weights
    for wid in [eos_w] + [w for _, w in dwa.special_weights or ()]:
        if wid != EMPTY_ID:
            diff_ids |= wt.get(wid)
    return wt.intern(diff_ids)


def add_config_on_base(dwa: ParserDWA, terms, cfg: int, eos_w: int, root_of=None,
                       base: int | None = None, max_share: float = None, avoid=()):
    """Add lexer configuration ``cfg`` on ``base`` (by default its chain's base,
    :meth:`TerminalCompiler.base_config`; ``root_of`` maps that to the root it must be;
    a base in ``avoid`` is refused) when few tokens behave differently in it (at most
    ``max_share`` of the vocabulary, :data:`BASE_MAX_SHARE` by default): those tokens,
    EOS and the special tokens get ``cfg``'s own start, the others are its base's.
    Returns ``(start entry, configurations to compile: the base and where the differing
    tokens end)``, or None (no base, or too many tokens differ)."""
    if base is None:
        base = terms.base_config(cfg)
        if base is None:
            return None
        if root_of is not None:
            base = root_of(base)
    if base == cfg or base in avoid:
        return None
    index = terms.index
    share = BASE_MAX_SHARE if max_share is None else max_share
    r = terms.diff_outcomes(cfg, base, max_tokens=int(len(index.toks) * share))
    return None if r is None else _start_on_base(dwa, terms, cfg, base, r, eos_w)


def _start_on_base(dwa: ParserDWA, terms, cfg: int, base: int, diff_outcomes, eos_w: int,
                   diff_weights: dict | None = None):
    """Start ``cfg`` on ``base`` from ``(diff, groups, ends)`` (the differing tokens'
    positions, their outcomes in ``cfg`` and where they end); returns ``(start entry,
    configurations to compile: the base and those ends)``. ``diff_weights`` memoizes the
    weight of a ``diff`` array the terminal compiler hands out again."""
    diff, groups, ends = diff_outcomes
    index = terms.index
    outcomes = start_outcomes(dwa, terms.scanner, cfg, groups, ends, eos_w)
    if diff_weights is None:
        wid = _diff_weight(dwa, index.bitmap_of(diff), eos_w)
    else:
        # keyed by the array's identity, the array held in the entry (so no other object
        # can take its id): the terminal compiler hands out one array per token set
        # (TerminalCompiler.shadow_outcomes)
        hit = diff_weights.get(id(diff))
        if hit is None:
            hit = diff_weights[id(diff)] = (diff, _diff_weight(dwa, index.bitmap_of(diff), eos_w))
        wid = hit[1]
    entry = dwa.add_config_on_base(cfg, base, wid, outcomes, index.bitmap_of)
    ends.add(base)
    return entry, ends


def add_config_on_shadow_base(dwa: ParserDWA, terms, cfg: int, eos_w: int, classes,
                              avoid=(), diff_weights: dict | None = None):
    """Add a configuration with shadows, ``(d, S)``, on ``(d, ∅)``: only the tokens some
    shadow's run does not leave at once differ (:meth:`TerminalCompiler.shadow_outcomes`).
    The base must be compiled whole: not when it is an alias, has a class base or is
    already on a base (``avoid``). Returns as :func:`add_config_on_base`, or None."""
    sc = terms.scanner
    d, shadows = sc.config(cfg)
    if not shadows:
        return None
    base = sc.intern(d, frozenset())
    if base in avoid or classes.alias(base) is not None or classes.base(base) is not None:
        return None
    # no share limit: finding the tokens is one array pass per shadow, not a walk, and
    # most of them die (a blank after a blank run ended kills the run's emission)
    return _start_on_base(dwa, terms, cfg, base, terms.shadow_outcomes(cfg), eos_w,
                          diff_weights)


def special_outcomes(scanner, cfg: int, specials) -> list:
    """``(outcome, end configuration, weight id)`` of committing each bound special token in
    ``cfg``: the pending lexeme's emission (finished as at the end of the text), then the
    special terminal; the result is a clean boundary (requirement TRUE)."""
    out = []
    for tid, wid in specials:
        for em, ncfg in scanner.special(cfg, tid):
            ems = ((em,) if em and em != (IGNORE,) else ()) + ((tid,),)
            out.append(((ems, TRUE), ncfg, wid))
    return out
