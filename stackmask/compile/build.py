"""Building the Parser DWA for a grammar and a vocabulary (an eager compile).

Every lexer configuration reachable at a token boundary gets its start state
from its token outcomes (:class:`~stackmask.compile.terminal.TerminalCompiler`),
every state reachable from them is expanded breadth first, then start states for
pairs of heads that masks meet are added. A budget may stop it; what is left is
compiled on first use (:meth:`ParserDWA.edge`).
"""

from __future__ import annotations

import logging
import time

from pyroaring import BitMap

from ..glr.lalr import LRTables
from ..lexer.scanner import BOUNDARY_CONFIG, IGNORE
from ..wfa.weights import EMPTY_ID, WeightTable
from .parser_dwa import ParserDWA, pair_key
from .terminal import TRUE, TerminalCompiler, final_outcomes

log = logging.getLogger("stackmask")


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


def add_config(dwa: ParserDWA, terms, cfg: int, eos_w: int) -> tuple:
    """Add lexer configuration ``cfg``: its token outcomes (and EOS) become start items.
    Returns ``(start entry, configurations its tokens end in)``."""
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
