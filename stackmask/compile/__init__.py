"""Compilation: grammar tables + vocabulary -> Parser DWA -> cached artifact.

:func:`compile_constraint` is the entry point the runtime calls: it loads
the artifact for (grammar, ambiguous, vocabulary, format version) from the
cache directory, or builds it (tables, terminal DWA per lexer configuration,
Parser DWA) and stores it. ``__all__`` is what the runtime may import from this
layer (``tests/test_layering.py`` holds it to that): the construction's entry points
(:func:`prepare_grammar`, :func:`resolve_ambiguous`, :func:`compile_constraint`, the
work done ahead and after a budget stop, the cache writes) and the artifact's types
(:class:`Compiled`, the vocabulary index); everything else the runtime reads is a
public attribute or method of the :class:`Compiled` it was given.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from dataclasses import dataclass, field

from ..glr.lalr import Conflict, LRTables, lalr_conflicts
from ..glr.normal_form import NormalForm
from ..grammar import FreeText, Grammar, LexerMode, Rule, TerminalDef
from ..lexer.combined import settle_caches
from ..lexer.counted import MIN_BAND
from ..lexer.dfa import DFA
from ..lexer.scanner import Scanner, requirement
from ..limits import CompileGuard, Limits, release_free_memory
from ..plain import Codec
from ..progress import Heartbeat
from ..wfa.weights import WeightTable
from .. import artifact
from . import build
from .build import add_config, build_parser_dwa
from . import explore as exploring
from .parser_dwa import ParserDWA
from .ahead import masks_ahead, prefill, prewarm
from .special import resolve_grammar, special_bindings, with_trigger
from .tables import GrammarTables, build_tables, coerce_grammar
from .terminal import TerminalCompiler
from .token_index import VocabIndex, vocab_index

log = logging.getLogger("stackmask")


@dataclass(eq=False)
class Compiled:
    tables: GrammarTables
    configs: list                 # the scanner's interned lexer configurations (ids used by dwa)
    dwa: ParserDWA
    stats: dict = field(default_factory=dict)   # sizes and compile time/memory
    #: lexer config id -> what a head in it needs from its stack (``terminal.requirement``),
    #: for every config of ``configs``: the runtime's viability check reads it instead of
    #: exploring the config's shadows on a head's first commit (up to ~0.4 ms per config).
    #: Artifacts written before it existed load without it (computed on first use then).
    requirements: dict = field(default_factory=dict)

    def to_data(self) -> dict:
        """Plain data (:mod:`stackmask.plain`) of everything; see :meth:`from_data`."""
        return {"tables": self.tables, "configs": tuple(self.configs),
                "dwa": self.dwa.to_data(), "stats": dict(self.stats),
                "requirements": dict(self.requirements)}

    @classmethod
    def from_data(cls, data: dict) -> "Compiled":
        """The constraint's compiled parts from :meth:`to_data` (malformed data raises
        ``ValueError``, ``KeyError`` or ``TypeError``)."""
        tables = data["tables"]
        if not isinstance(tables, GrammarTables):
            raise TypeError("the artifact's tables are not grammar tables")
        dwa = ParserDWA.from_data(tables.lr, tables.normal_form.accepts_empty, data["dwa"])
        return cls(tables=tables, configs=list(data["configs"]), dwa=dwa,
                   stats=dict(data["stats"]), requirements=dict(data["requirements"]))

    def special_bindings(self) -> dict[int, list[int]]:
        """Parser terminal id -> the special token ids bound to it."""
        return special_bindings(self.tables)

    def first_use_compiler(self, scanner: Scanner, vocab, cache_bytes: int | None = None):
        """``cfg -> start entry``: the start of a lexer configuration, compiled the first
        time one is asked for that the automaton lacks (:class:`LazyConfigs`; a
        configuration reached only by ``commit_bytes``, or any with ``compile="lazy"``).
        ``cache_bytes`` bounds its token-outcome caches."""
        return LazyConfigs(self.dwa, scanner, vocab, self.special_bindings(),
                           cache_bytes=cache_bytes)


#: the classes an artifact may contain (decoding builds no others)
_CODEC = Codec((GrammarTables, Grammar, TerminalDef, FreeText, LexerMode, Rule, NormalForm,
                LRTables, Conflict, DFA))


def encode_artifact(comp: Compiled) -> bytes:
    """``comp`` as an artifact payload (plain data; no pickle)."""
    return _CODEC.dumps(comp.to_data())


def decode_artifact(payload: bytes) -> Compiled:
    """The :class:`Compiled` of an artifact payload; builds only plain values and the
    grammar's dataclasses (loading runs no code the file chooses)."""
    # decoding allocates millions of small objects and none of them is garbage: the
    # collector's passes meanwhile would only walk them (a third of a Java load)
    with gc_paused():
        data = _CODEC.loads(payload)
        if not isinstance(data, dict):
            raise TypeError("the artifact is not a mapping")
        return Compiled.from_data(data)


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off inside (and on again after, if it was on): for
    work that allocates millions of objects that stay alive and makes next to no
    cycles, which the collector's passes would only walk again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def requirements_of(scanner: Scanner, n_configs: int, known=None) -> dict:
    """``terminal.requirement`` of configs ``0 .. n_configs - 1``, taken from ``known``
    (an artifact's, for the configs it had) where it has them."""
    known = known or {}
    return {cfg: known[cfg] if cfg in known else requirement(scanner, cfg)
            for cfg in range(n_configs)}


def grammar_text(grammar: "Grammar | str") -> str:
    """The text an artifact is keyed by: Lark source as given, or a Grammar's canonical form."""
    if isinstance(grammar, str):
        return "lark\0" + grammar
    if isinstance(grammar, Grammar):
        return "grammar\0" + repr((grammar.terminals, grammar.rules, grammar.start,
                                   sorted(grammar.ignore)) + ((grammar.modes,) if grammar.modes else ())
                                  + ((sorted(grammar.gaps),) if grammar.gaps else ()))
    raise TypeError(f"grammar must be Lark text or stackmask.Grammar, not {type(grammar).__name__}")


def make_scanner(tables: GrammarTables) -> Scanner:
    return Scanner(tables.lexer, tables.lexed, tables.grammar.ignore, tables.terminal_ids,
                   starts=tables.mode_starts, switch=tables.switch,
                   special_terms=special_bindings(tables), gap_starts=tables.gap_starts,
                   gaps=tables.grammar.gaps)


def prepare_grammar(grammar, vocab, special_tokens=None, trigger=None):
    """The grammar a constraint compiles: ``special_tokens`` bound, wrapped for ``trigger``.
    Lark text without either is returned unchanged (its artifact key is the text itself)."""
    if special_tokens is None and trigger is None and not isinstance(grammar, Grammar):
        return grammar
    g = coerce_grammar(grammar) if special_tokens is None or isinstance(grammar, Grammar) \
        else Grammar.from_lark(grammar, special_tokens=special_tokens)
    if special_tokens is not None and isinstance(grammar, Grammar):
        g = g.bind_special_tokens(special_tokens)
    if trigger is not None:
        g = with_trigger(g, trigger, vocab)
    return g


def counting_band(vocab) -> int:
    """The band of a vocabulary's lexer: longer than its longest token, so a count in a
    stall is told apart from its plain state by no token."""
    return max(MIN_BAND, vocab.max_token_bytes + 1)


#: after loading an artifact, its automaton's edges are made into dicts for this long
#: (states in order: the shallow ones first); the others' when a mask first reads them
EDGES_AHEAD_S = 0.1

#: constructions longer than this give the C allocator's free memory back to the system
#: (``limits.release_free_memory``); its cost, 13-18 ms measured, is small next to theirs
TRIM_AFTER_S = 2.0


def compile_constraint(grammar, vocab, ambiguous: bool = False, cache_dir=None,
                       progress: bool = True, mode: str = "eager",
                       budget_s: float | None = None, limits: Limits | None = None,
                       memo_bytes: int | None = None,
                       save_partial: bool = True) -> tuple[Compiled, Scanner, bool]:
    """``(compiled, scanner, loaded_from_cache)`` for ``grammar`` and ``vocab``.

    ``mode="eager"`` compiles every lexer configuration reachable at a token boundary and
    every automaton state reachable from them, and caches the artifact. ``mode="lazy"``
    builds only the grammar tables; configurations and automaton edges are compiled when a
    mask first needs them (same results; the first masks of each new situation are slow).
    A lazy constraint uses a cached eager artifact when there is one and writes none.

    ``limits`` (:class:`stackmask.Limits`) are hard: exceeding one raises
    :class:`stackmask.LimitExceeded` and nothing is cached. ``memo_bytes`` bounds each
    symbolic-run memo of the automaton (estimated bytes) when it is used after the compile.
    ``save_partial=False``: an eager compile stopped by its budget is not written (the
    caller adds to it and saves it with :func:`save_progress`)."""
    if mode not in ("eager", "lazy"):
        raise ValueError(f"compile mode must be 'eager' or 'lazy', not {mode!r}")
    limits = Limits() if limits is None else limits
    guard = CompileGuard(limits)
    path, key = artifact_location(grammar, vocab, ambiguous, cache_dir)
    index_dir = None if path is None else path.parent
    if path is not None:
        t0 = time.perf_counter()
        comp = artifact.load(path, key, decode_artifact)
        if comp is not None:
            scanner = make_scanner(comp.tables)
            scanner.import_configs(comp.configs)
            scanner.bind_aliases(comp.dwa.alias)
            comp.dwa.mark_loaded()
            # the first states' edges made now, the rest when a mask first reads them
            comp.dwa.materialize(time.perf_counter() + EDGES_AHEAD_S)
            comp.stats["load_s"] = time.perf_counter() - t0
            comp.stats["artifact"] = str(path)
            comp.dwa.set_limits(limits.max_automaton_states, memo_bytes, limits.max_token_sequences)
            return comp, scanner, True
    t0 = time.perf_counter()
    beat = Heartbeat(progress)

    def check():                 # between the stages of the tables: limits, progress
        guard.check()
        at = beat.due()
        if at is not None:
            log.info("stackmask: building the lexer and LR tables (%.0f s)", at)
    tables = build_tables(resolve_grammar(coerce_grammar(grammar), vocab), ambiguous=ambiguous,
                          check=check, band=counting_band(vocab),
                          max_lexer_states=limits.max_lexer_states)
    t1 = time.perf_counter()
    if progress and t1 - t0 > Heartbeat.FIRST_S:
        log.info("stackmask: lexer and LR tables built in %.1f s (%d lexer states, %d LR states)",
                 t1 - t0, tables.lexer.n_states, len(tables.lr.shift))
    scanner = make_scanner(tables)
    guard.check()
    weights = WeightTable(vocab.size)
    if mode == "lazy":
        vocab_index(vocab, index_dir)      # loaded now (from disk when cached), not in a mask
        dwa = ParserDWA(tables.lr, tables.normal_form.accepts_empty, weights)
        if build.ROUTE_AFTER_STATES == 0:    # (an automaton built on first use is not rebuilt)
            dwa.route_min = ParserDWA.ROUTE_MIN_TERMINALS
        dwa.index_by_digest()
        dwa.budget_exhausted = True          # nothing is compiled ahead
        scanner.bind_aliases(dwa.alias)
        dwa.set_limits(limits.max_automaton_states, memo_bytes, limits.max_token_sequences)
        comp = Compiled(tables=tables, configs=[], dwa=dwa,
                        stats={"mode": "lazy", "tables_s": t1 - t0, "compile_s": t1 - t0})
        settle_caches()
        return comp, scanner, False
    index = vocab_index(vocab, index_dir)
    # the automaton's states, edges and memos: millions of objects that stay alive (Go's
    # construction spent 17% of its time in the collector's passes; the few cycles it
    # makes are collected after)
    with gc_paused():
        dwa = build_parser_dwa(scanner, tables.lr, tables.normal_form.accepts_empty, index,
                               vocab, weights, progress=progress, budget_s=budget_s,
                               guard=guard, specials=special_bindings(tables))
        scanner.bind_aliases(dwa.alias)
        if progress and time.perf_counter() - t0 > 1.0:     # seconds on Java's 270,000
            log.info("stackmask: minimizing the mask automaton (%d states)", len(dwa.items))
        merged = dwa.minimize()
        stats = dwa.stats()
        stats["states_merged"] = merged
        interned = len(dwa.weights)
        dwa.release_items()          # also drops the token sets only interned on the way
    t2 = time.perf_counter()
    stats.update(mode="eager", tables_s=t1 - t0, automaton_s=t2 - t1, compile_s=t2 - t0,
                 weights=len(dwa.weights), weights_interned=interned)
    dwa.set_limits(limits.max_automaton_states, memo_bytes, limits.max_token_sequences)
    configs = scanner.export_configs()
    comp = Compiled(tables=tables, configs=configs, dwa=dwa, stats=stats,
                    requirements=requirements_of(scanner, len(configs)))
    if path is not None and (save_partial or not dwa.budget_exhausted) \
            and _save(path, key, comp, progress and t2 - t0 > 1.0):
        stats["artifact"] = str(path)
    settle_caches()                  # the lexer's caches down to what later grammars reuse
    if t2 - t0 > TRIM_AFTER_S:
        # a long construction's working memory is freed but kept by the C allocator
        # (a server building schema after schema would stay at its largest peak)
        stats["released_bytes"] = release_free_memory()
    return comp, scanner, False


def _save(path, key: bytes, comp: Compiled, progress: bool) -> bool:
    """Encode and write ``comp`` to the cache (:func:`artifact.try_save`); with ``progress``
    (a construction long enough to have reported progress: its artifact is large too),
    the write is logged before and after."""
    t = time.perf_counter()
    if progress:
        log.info("stackmask: writing the artifact (%d automaton states) to %s",
                 comp.stats.get("states", 0), path)
    ok = artifact.try_save(path, key, encode_artifact(comp))
    if progress:
        log.info("stackmask: artifact written in %.1f s", time.perf_counter() - t)
    return ok


def resolve_ambiguous(grammar, vocab, ambiguous: "bool | None", cache_dir) -> bool:
    """``ambiguous`` as a bool: ``None`` becomes whether the grammar's LALR(1) table has
    conflicts. A cached deterministic artifact of the same inputs answers without
    building the table (it was saved after the conflict check passed)."""
    if ambiguous is not None:
        return bool(ambiguous)
    path, _ = artifact_location(grammar, vocab, False, cache_dir)
    if path is not None and path.exists():
        return False
    return bool(lalr_conflicts(coerce_grammar(grammar)))


def artifact_location(grammar, vocab, ambiguous: bool, cache_dir) -> tuple:
    """``(path or None, key)`` of the artifact of these inputs (None: caching disabled)."""
    directory = artifact.default_cache_dir(cache_dir)
    key = artifact.artifact_key(grammar_text(grammar), ambiguous, vocab.fingerprint)
    return (artifact.artifact_path(directory, key) if directory is not None else None), key


def save_progress(comp: Compiled, scanner: Scanner, path, key: bytes,
                  after_use: bool = True, hot_weights=(), progress: bool = False) -> bool:
    """Write ``comp`` as it is now (states and lexer configurations compiled on first use
    included) as the artifact ``path``: a snapshot is taken under the automaton's lock,
    its token sets compacted (:meth:`ParserDWA.compact_weights`; the live automaton keeps
    its numbering, which its mask memos use) and saved. Returns whether it was written
    (an unwritable cache warns). ``after_use=False``: the construction's own exploration
    (not a user's masks) compiled the additions. ``hot_weights``: ids of the token sets
    whose dense masks a loading runtime should make first (those used so far).
    ``progress``: log the write (:func:`_save`)."""
    dwa = comp.dwa
    configs = scanner.export_configs()
    reqs = requirements_of(scanner, len(configs), comp.requirements)
    with dwa.lock:
        data = Compiled(comp.tables, configs, dwa, dict(comp.stats), reqs).to_data()
    loaded = dwa.loaded_from_artifact
    snap = Compiled.from_data(data)
    sd = snap.dwa
    sd.hot_weights = tuple(hot_weights)
    if loaded:                          # keeps the artifact's token sets and states as stored
        sd.mark_loaded(dwa.loaded_counts)
    else:                               # an artifact's automaton was minimized when written
        snap.stats["states_merged"] = snap.stats.get("states_merged", 0) + sd.minimize()
    sd.compact_weights()
    complete = bool(sd.complete) and all(sd.complete)
    sd.budget_exhausted = dwa.budget_exhausted or not complete
    if sd.budget_exhausted and not sd.budget_used_up:
        sd.budget_used_up = "saved after use" if after_use else "explored"
    st = sd.stats()
    for k in ("configs", "states", "complete_states", "edges", "defaults", "weights",
              "acyclic", "max_depth", "head_pairs", "budget_exhausted", "budget_used_up"):
        snap.stats[k] = st[k]
    snap.stats["mode"] = "eager"
    snap.stats["saved_after_use"] = after_use
    for k in ("load_s", "artifact"):
        snap.stats.pop(k, None)
    return _save(path, key, snap, progress)


def explore_and_save(constraint, masker, location: tuple, sentences: int, budget_s: float,
                     progress: bool) -> None:
    """After an eager compile its budget stopped: compile what random sentences of the
    grammar need (:func:`.explore.explore`, driving ``constraint`` through its public
    operations), start ``masker`` (the constraint's) over as a load would, with the token
    sets those masks used made dense first and the masks ahead computed again
    (:mod:`.ahead`), and save the artifact to ``location`` (``(path or None, key)``).
    Figures go to ``constraint.compiled.stats`` (``explore_*``)."""
    if progress:
        log.info("stackmask: exploring up to %d random sentences of the grammar per shape "
                 "(typical, then deeply nested) (at most %g s)", sentences, budget_s)
    comp = constraint.compiled
    stats = comp.stats
    stats.update(exploring.explore(constraint, sentences, budget_s))
    hot = masker.hot_weights()      # the token sets the explored masks needed
    masker.forget_masks()           # its memory is for the user's masks
    masker.prewarmed = prewarm(masker, hot)
    masker.prefilled = prefill(masker, masker.prefill_s)
    st = comp.dwa.stats()
    for k in ("configs", "states", "complete_states", "edges", "defaults", "max_depth"):
        stats[k] = st[k]
    if progress:
        log.info("stackmask: explored %d sentences (%d masks, %d states completed, "
                 "%d automaton states added) in %.1f s", stats["explore_sentences"],
                 stats["explore_masks"], stats["explore_expanded"], stats["explore_states"],
                 stats["explore_s"])
    if stats["explore_rejected"]:
        import warnings
        warnings.warn(f"stackmask: {stats['explore_rejected']} generated sentences were "
                      f"rejected part-way while exploring (the sentence generator and the "
                      f"parser disagree; masks are unaffected)", RuntimeWarning, stacklevel=3)
    path, key = location
    if path is not None:
        t = time.perf_counter()
        if save_progress(comp, constraint.scanner, path, key, after_use=False,
                         hot_weights=hot, progress=progress):
            stats["artifact"] = str(path)
        stats["explore_save_s"] = time.perf_counter() - t


class LazyConfigs:
    """Compiles the start of a lexer configuration not compiled yet (one reached only by
    ``commit_bytes``, or any configuration with lazy compilation)."""

    def __init__(self, dwa: ParserDWA, scanner: Scanner, vocab, specials=None,
                 cache_bytes: int | None = None):
        self.dwa = dwa
        self.scanner = scanner
        self.vocab = vocab
        self.specials = specials
        self.cache_bytes = cache_bytes
        self._terms = None

    def cache_estimate(self) -> int:
        """Bytes held by the token-outcome caches of configurations compiled on first use."""
        return 0 if self._terms is None else self._terms.cache_estimate()

    def __call__(self, cfg: int) -> tuple:
        dwa = self.dwa
        with dwa.lock:
            cfg = dwa.alias.get(cfg, cfg)   # an alias's start is its representative's
            e = dwa.init.get(cfg)
            if e is None:
                if self._terms is None:
                    self._terms = TerminalCompiler(self.scanner, vocab_index(self.vocab),
                                                   cache_bytes=self.cache_bytes)
                if dwa.eos_weight is None:
                    dwa.eos_weight = dwa.weights.intern(sorted(self.vocab.eos_token_ids))
                if dwa.special_weights is None:
                    dwa.bind_specials(self.specials)
                e, _ = add_config(dwa, self._terms, cfg, dwa.eos_weight)
            return e


#: what the runtime may import from this layer (tests/test_layering.py)
__all__ = ["Compiled", "compile_constraint", "prepare_grammar", "resolve_ambiguous",
           "artifact_location", "save_progress", "explore_and_save", "masks_ahead",
           "vocab_index", "VocabIndex"]
