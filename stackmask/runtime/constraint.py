"""The public runtime: ``Constraint``, its immutable ``State`` and ``commit``.

A state is a tuple of *heads*; a head is a GSS node (the top of one or more
parse stacks) paired with a lexer configuration (see
:mod:`stackmask.lexer.scanner`). ``commit`` feeds the token's bytes to every
head in lock step: the scanner says, per byte, which terminals are emitted
and with which follow-up configuration; emitted terminals are grouped by
(terminal, configuration) and shifted by the GLR step, so heads that reach
the same LR state with the same lexer configuration merge into one node.
"""

from __future__ import annotations

import logging
import time
import numpy as np

from ..compile import (Compiled, artifact_location, compile_constraint, explore_and_save,
                       masks_ahead, prepare_grammar, resolve_ambiguous,
                       save_progress)
from ..errors import TokenRejected
from ..grammar import Grammar
from ..limits import Limits
from ..memo import Generations
from .. import native
from ..glr.gss import AMBIGUOUS, GLR, Node
from ..lexer.scanner import BOUNDARY_CONFIG, IGNORE, TRUE, requirement
from ..vocab import Vocab
from .masker import Masker
from .state import State, ids_to_mask, mask_to_ids

__all__ = ["Constraint", "State", "ids_to_mask", "mask_to_ids"]

log = logging.getLogger("stackmask")

Head = tuple  # (Node, config id)


class Constraint:
    """Exact token masks for one grammar and one vocabulary.

    ``grammar`` is Lark text or a :class:`stackmask.Grammar`. ``ambiguous``:
    ``None`` (default) takes the grammar as it needs: deterministic when its
    LALR(1) table is free of conflicts, GLR (as ``True``) when it has some;
    ``False`` promises a conflict-free table (else
    :class:`stackmask.GrammarError` lists the conflicts); ``True`` keeps
    conflicts and parses them by GLR. Either way the runtime is the same GLR
    engine over the grammar's normal form; :attr:`ambiguous` holds the value
    used (``None`` resolved), which is also part of the artifact's key.

    Construction compiles the mask automaton (or loads it from the artifact
    cache: ``cache_dir``, default ``$STACKMASK_CACHE_DIR`` or the user cache
    directory; ``False`` disables it; see :mod:`stackmask.artifact`).
    Compiles longer than a second log progress as INFO records of the ``stackmask``
    logger (configure :mod:`logging` to see them; ``progress=False`` silences them).
    ``compile="lazy"`` skips the up-front compilation: parts
    of the automaton are compiled the first time a mask needs them (same masks;
    the first mask in each new situation is slow; nothing is written to the
    cache). ``compile_budget_s`` (default 120) bounds the up-front compile:
    what is not compiled by then is compiled when a mask first needs it (same
    masks; a ``stackmask`` WARNING says so); with a budget the up-front compile also
    stops when its memory growth passes half of ``limits.max_compile_memory_bytes``;
    ``None`` compiles everything.
    When the budget stops the compile, construction then explores: it asks the mask at
    every byte of up to ``explore_sentences`` random sentences of the grammar and
    completes the automaton states those masks reached; then the same with deeply nested
    sentences in the time left (at most ``explore_budget_s``
    seconds in all, by default three quarters of ``compile_budget_s``: 90 s;
    :mod:`stackmask.compile.explore`), so the states programs actually visit are
    compiled too, and caches the result. ``explore_sentences=0`` turns this off.
    ``compile_stats()`` reports it (``explore_*``).
    ``mask_cache_bytes`` bounds the memo of dense masks (two generations); ``memo_cache_bytes``
    bounds each other runtime memo (lexer steps, viability requirements, automaton
    parts compiled on first use, dense token sets) in estimated bytes.

    ``limits`` (:class:`stackmask.Limits`) are hard resource limits: compile time and
    memory, automaton size, GLR work per commit. Exceeding one raises
    :class:`stackmask.LimitExceeded` naming the limit, the value reached and how to
    raise it; a construction that fails leaves nothing in the cache.

    ``special_tokens`` binds ``%declare``d terminals to special tokens
    (``{"TOOL_OPEN": "<tool_call>"}``: a token's text or id; see
    :meth:`stackmask.Grammar.bind_special_tokens`). ``trigger`` (a special
    token's text or id, or a plain string) turns on trigger mode: any text is
    allowed until the trigger, then the grammar applies (reasoning models:
    ``trigger="</think>"``).
    """

    #: estimated bytes of one requirement memo entry (a frozenset of terminals)
    REQ_ENTRY_BYTES = 400

    def __init__(self, grammar: "Grammar | str", vocab: Vocab, ambiguous: bool | None = None, *,
                 cache_dir=None, progress: bool = True, compile: str = "eager",
                 compile_budget_s: float | None = 120.0, mask_cache_bytes: int = 256 << 20,
                 memo_cache_bytes: int = 256 << 20, limits: Limits | None = None,
                 special_tokens=None, trigger=None, explore_sentences: int = 2000,
                 explore_budget_s: float | None = None):
        t0 = time.perf_counter()
        if not isinstance(vocab, Vocab):
            raise TypeError(f"vocab must be a stackmask.Vocab, not {type(vocab).__name__}")
        if limits is None:
            limits = Limits()
        elif not isinstance(limits, Limits):
            raise TypeError(f"limits must be a stackmask.Limits, not {type(limits).__name__}")
        self.vocab = vocab
        self.limits = limits
        grammar = prepare_grammar(grammar, vocab, special_tokens=special_tokens, trigger=trigger)
        ambiguous = resolve_ambiguous(grammar, vocab, ambiguous, cache_dir)
        compiled, scanner, self.loaded_from_cache = compile_constraint(
            grammar, vocab, ambiguous=ambiguous, cache_dir=cache_dir, progress=progress,
            mode=compile, budget_s=compile_budget_s, limits=limits,
            memo_bytes=memo_cache_bytes, save_partial=explore_sentences <= 0)
        self.compiled: Compiled = compiled
        self._artifact = artifact_location(grammar, vocab, ambiguous, cache_dir)
        self.tables = compiled.tables
        self.grammar = self.tables.grammar
        self.ambiguous = ambiguous
        self.scanner = scanner
        scanner.set_memo_bytes(memo_cache_bytes)
        dwa = compiled.dwa
        specials = self._special_bindings = compiled.special_bindings()
        #: special token id -> the parser terminal committing it emits
        self.special_terminals = {i: t for t, ids in specials.items() for i in ids}
        built_s = time.perf_counter() - t0          # the construction or load so far
        self._masker = Masker(dwa, vocab.size, vocab.eos_token_ids,
                              compiled.first_use_compiler(scanner, vocab, memo_cache_bytes),
                              cache_bytes=mask_cache_bytes)
        # token sets made dense and masks computed ahead (stackmask.compile.ahead), for a
        # share of the time construction took before the masker
        masks_ahead(self._masker, built_s, dwa.hot_weights)
        # the compiled inner loops (stackmask.native), or the pure-Python reference
        compiled_loops = native.module()
        self.glr = GLR(self.tables.lr, max_work=limits.max_gss_work, compiled=compiled_loops)
        #: which path this constraint's masks and commits take (see stackmask.native)
        self.native = compiled_loops is not None
        #: the compiled twin of the masker's common path (None on the pure-Python path)
        self.mask_path = None if compiled_loops is None else compiled_loops.MaskPath(self._masker, Node, State)
        # the method below, minus one call per mask
        self.get_mask = self._masker.mask if self.mask_path is None else self.mask_path.mask
        self._accepts_empty = self.tables.normal_form.accepts_empty
        # lexer config -> what its head needs (see viable): the compiled configs' from the
        # artifact (kept whole), others' memoized in two generations bounded in bytes
        self._requirements_known: dict = compiled.requirements
        self._requirements = Generations(int(memo_cache_bytes) // (2 * self.REQ_ENTRY_BYTES))
        # (config, token) -> the token's lexing paths from that config: a tuple of
        # (terminals emitted, end config); None when there are too many to memoize.
        # Bounded in estimated bytes: two generations of at most half the bound each.
        self._token_paths = Generations(int(memo_cache_bytes) // (2 * self.PATHS_ENTRY_BYTES))
        self._vsize = vocab.size
        if compiled_loops is not None:     # commit's common path compiled (stackmask.native)
            self.commit = compiled_loops.CommitPath(
                self._token_paths, vocab.size,
                compiled_loops.LexPaths(self.scanner.step_memo, self.scanner.step, IGNORE,
                                        self.MAX_PATHS), self.viable,
                self._requirements_known, TRUE, self.glr.shift1_tables(), State,
                self.FAST_HEADS, vocab.tokens, vocab.eos_token_ids, self.special_terminals,
                vocab.special_token_ids, type(self).commit.__get__(self),
                self._commit_general, self.glr.step).commit
        self._start = State(((self.glr.root, BOUNDARY_CONFIG),))
        if any(dwa.complete):               # compiled ahead (not lazy): every text's first mask
            self._masker.pin(self._start)
        self._eos = vocab.eos_token_ids
        self._oracle = None
        self._progress = progress
        self.mask_words = (vocab.size + 31) // 32
        if explore_budget_s is None:
            explore_budget_s = 0.75 * (compile_budget_s or 0.0)
        if (not self.loaded_from_cache and compile == "eager" and explore_sentences > 0
                and dwa.budget_exhausted):
            # compile what random sentences need, then save (stackmask.compile.explore)
            explore_and_save(self, self._masker, self._artifact, explore_sentences,
                             explore_budget_s, progress)

    # -- public API ---------------------------------------------------------
    def start(self) -> State:
        """The state before any text."""
        return self._start

    def commit(self, state: State, token_id: int) -> State:
        """The state after ``token_id``; raises :class:`TokenRejected` (and
        leaves ``state`` usable) if the token cannot continue the text."""
        token_id = self.check_token_id(token_id)
        if token_id in self._eos:
            if self.is_accepting(state):
                self._masker.release_out()
                return State((), finished=True)
            raise TokenRejected(token_id, self.vocab.token_bytes(token_id) or b"", 0,
                                "end of sequence before the text is a complete sentence")
        data = self.vocab.token_bytes(token_id)
        if state.finished:
            raise TokenRejected(token_id, data or b"", 0, "the sequence has already ended")
        term = self.special_terminals.get(token_id)
        if term is not None:
            heads = self.advance_special(state.heads, term)
            if not heads:
                raise TokenRejected(token_id, data or b"", 0,
                                    "the grammar does not allow this special token here")
            return State(heads)
        if not data or token_id in self.vocab.special_token_ids:
            raise TokenRejected(token_id, data or b"", 0,
                                "special token" if data else "token has no text bytes")
        heads = state.heads
        if len(heads) <= self.FAST_HEADS:
            new = self._commit_fast(heads, token_id, data)
            if new is not None:
                return new
        return self._commit_general(heads, token_id, data)

    def _commit_general(self, heads: tuple, token_id: int, data: bytes) -> State:
        """``commit``'s general loop: the token's bytes through the scanner and GLR one
        at a time (any number of heads, conflicts, rejections and their offsets)."""
        advance = self.advance
        for i, b in enumerate(data):
            heads = advance(heads, b)
            if not heads:
                raise TokenRejected(token_id, data, i, "no parse can continue")
        heads = tuple(h for h in heads if self.viable(h))
        if not heads:
            raise TokenRejected(token_id, data, len(data), "no continuation can complete the pending lexeme")
        return State(heads)

    PATHS_ENTRY_BYTES = 300       # estimate: dict slot, int key, tuple of (tuple, int) pairs
    MAX_PATHS = 8
    FAST_HEADS = 8

    def _commit_fast(self, heads: tuple, token_id: int, data: bytes) -> "State | None":
        """Deterministic LR steps along each of the token's lexing paths from
        each head (paths memoized per (config, token)): the new state, with new
        heads of equal (LR state, config) merged into one GSS node as GLR does.
        Where the parse branches (an LR conflict, a reduction through a node with
        several links), the whole token goes through :meth:`_commit_paths` instead.
        ``None`` sends ``commit`` to the general byte-by-byte GLR loop (also for
        rejections, so their error offsets come from one place)."""
        memo = self._token_paths.cur
        shift1 = self.glr.shift1
        viable = self.viable
        out = []
        every = []
        for node, cfg in heads:
            key = cfg * self._vsize + token_id
            paths = memo.get(key, 0)
            if paths == 0:
                paths = self._token_paths.miss(key, self._lex_paths, cfg, data)
            if paths is None:
                return None
            every.append(paths)
        for (node, cfg), paths in zip(heads, every):
            for terms, ncfg in paths:
                n = node
                for t in terms:
                    n = shift1(n, t)
                    if n is None:
                        break
                    if n is AMBIGUOUS:
                        return self._commit_paths(heads, every)
                if n is not None and viable((n, ncfg)):
                    out.append((n, ncfg))
        return _state_of(out)

    def _commit_paths(self, heads: tuple, every: list) -> "State | None":
        """GLR along lexing paths: the heads' nodes grouped by (terminals, end config)
        of their paths (``every[i]``: the paths of ``heads[i]``), each group's nodes
        shifted together terminal by terminal with ``GLR.shift`` (so the nodes its
        reductions create are shared, as in the byte-by-byte loop); ``None`` when no
        head is viable."""
        groups: dict = {}
        for (node, cfg), paths in zip(heads, every):
            for path in paths:
                groups.setdefault(path, {})[id(node)] = node
        shift = self.glr.shift
        viable = self.viable
        out = []
        for (terms, ncfg), nodes in groups.items():
            nodes = list(nodes.values())
            for t in terms:
                nodes = shift(nodes, t)
                if not nodes:
                    break
            out.extend((m, ncfg) for m in nodes if viable((m, ncfg)))
        return _state_of(out)

    def _lex_paths(self, cfg: int, data: bytes):
        """Every way the scanner reads ``data`` from ``cfg``: (terminals, end config)
        pairs (ignored lexemes dropped); ``None`` if more than ``MAX_PATHS``."""
        step = self.scanner.step
        cur = {((), cfg)}
        for b in data:
            nxt = set()
            for terms, c in cur:
                for emit, nc in step(c, b):
                    if emit is None:
                        nxt.add((terms, nc))
                    else:
                        for t in emit:
                            nxt.add((terms if t == IGNORE else terms + (t,), nc))
            if not nxt:
                return ()
            if len(nxt) > self.MAX_PATHS:
                return None
            cur = nxt
        return tuple(cur)

    def commit_bytes(self, state: State, data: bytes) -> State:
        """Commit raw bytes (not a token): for prompts and tests. Raises
        ``TokenRejected`` with token id -1."""
        heads = state.heads
        if state.finished and data:
            raise TokenRejected(-1, data, 0, "the sequence has already ended")
        for i, b in enumerate(data):
            heads = self.advance(heads, b)
            if not heads:
                raise TokenRejected(-1, data, i, "no parse can continue")
        heads = tuple(h for h in heads if self.viable(h))
        if not heads and not state.finished:
            raise TokenRejected(-1, data, len(data), "no continuation can complete the pending lexeme")
        return State(heads, finished=state.finished)

    def is_accepting(self, state: State) -> bool:
        """Whether the text so far is a complete sentence."""
        if state.finished:
            return True
        glr = self.glr
        for node, cfg in state.heads:
            em = self.scanner.final_emission(cfg)
            if em is None:
                continue
            if not em or IGNORE in em:
                if self._node_accepts(node):
                    return True
            for t in em:
                if t != IGNORE and any(self._node_accepts(m) for m in glr.shift((node,), t)):
                    return True
        return False

    def get_mask(self, state: State, out: np.ndarray | None = None) -> np.ndarray:
        """Packed allowed-token bitmask: int32 words, bit ``id % 32`` of word
        ``id // 32``; EOS ids are set exactly when the text is a sentence.
        Fills ``out`` (a writeable int32 numpy array of ``ceil(vocab_size/32)``
        words, strided or not, or a writeable memoryview of that many int32 words;
        ``ValueError`` otherwise) when given and returns it.
        The masker keeps a view of the last buffer it filled, so the next masks
        into it are one copy, until a text ends (EOS committed): the buffer is then
        no longer kept alive by the constraint. The start state's mask is kept
        with it (every text's first mask: one copy, no walk); a state asked again
        reuses the token sets its first walk met."""
        return self._masker.mask(state, out=out)

    def save_cache(self):
        """Write the mask automaton as compiled so far to the artifact cache, including
        the lexer configurations and automaton states compiled on first use since
        construction (budgeted or ``compile="lazy"`` constraints), replacing the
        artifact of these inputs: the next ``Constraint`` with the same grammar,
        vocabulary and options loads them instead of compiling them again in its first
        masks. Returns the artifact's path, or None when the cache is disabled
        (``cache_dir=False``) or cannot be written (a warning says why).

        It copies the whole automaton as plain data under its lock (masks from other threads wait;
        seconds for a large partial automaton) and writes a compacted copy; this
        constraint is unchanged. Like any partial artifact, the saved one is what later
        constructions load whatever their ``compile_budget_s``."""
        path, key = self._artifact
        if path is None:
            return None
        return path if save_progress(self.compiled, self.scanner, path, key,
                                     hot_weights=self._masker.hot_weights(),
                                     progress=self._progress) else None

    def compile_stats(self) -> dict:
        """Sizes of the compiled mask automaton (states, edges, weights, acyclic,
        max_depth: the most stack entries a mask walk reads), compile/load times, and
        ``masks_ahead``: the masks computed at construction (see :class:`Masker`)."""
        return dict(self.compiled.stats, masks_ahead=self._masker.prefilled)

    def memo_stats(self) -> dict:
        """Estimated bytes held by each runtime memo (each is bounded; see ``memo_cache_bytes``)."""
        dwa = self.compiled.dwa
        dense, ops = dwa.weights.cache_estimate()
        m = self._masker
        steps, finish = self.scanner.memo_estimate()
        return {"masks": m.memo_bytes, "lexer_steps": steps, "lexer_finishable": finish,
                "requirements": len(self._requirements) * self.REQ_ENTRY_BYTES,
                "token_paths": len(self._token_paths) * self.PATHS_ENTRY_BYTES,
                "automaton_runs": dwa.memo_estimate(), "token_set_ops": ops, "dense_token_sets": dense,
                "sparse_token_sets": m.sparse_bytes,
                "terminal_outcomes": m.config_cache_estimate()}

    def reference_mask(self, state: State, out: np.ndarray | None = None) -> np.ndarray:
        """The reference oracle: every token committed on the state and its
        viability checked (sharing work along the token trie). O(|V|)."""
        from .oracle import ReferenceOracle
        if self._oracle is None:
            self._oracle = ReferenceOracle(self)
        return self._oracle.mask(state, out=out)

    def allowed_tokens(self, state: State) -> np.ndarray:
        """Sorted ids allowed by ``get_mask`` (convenience for tests/debugging)."""
        return mask_to_ids(self.get_mask(state), self.vocab.size)

    # -- machinery ------------------------------------------------------------
    def check_token_id(self, token_id) -> int:
        """``token_id`` as an int: ``TypeError`` unless it is an int or a numpy integer
        (``bool`` and floats such as ``3.0`` included), ``ValueError`` outside the vocabulary."""
        if isinstance(token_id, (bool, np.bool_)) or not isinstance(token_id, (int, np.integer)):
            raise TypeError(f"token id must be an int, not {type(token_id).__name__}")
        token_id = int(token_id)
        if not 0 <= token_id < self.vocab.size:
            raise ValueError(f"token id {token_id} outside the vocabulary [0, {self.vocab.size})")
        return token_id

    def _node_accepts(self, node: Node) -> bool:
        if not node.links:          # the root: nothing but ignored text so far
            return self._accepts_empty
        return self.glr.accepts(node)

    def advance(self, heads: tuple, byte: int) -> tuple:
        """Heads after one more byte (empty when every parse died)."""
        step = self.scanner.step
        if len(heads) == 1:
            node, cfg = heads[0]
            outs = step(cfg, byte)
            if len(outs) == 1 and outs[0][0] is None:
                return ((node, outs[0][1]),)
        out: dict = {}
        groups: dict = {}
        for node, cfg in heads:
            for emit, ncfg in step(cfg, byte):
                if emit is None:
                    out[(id(node), ncfg)] = (node, ncfg)
                    continue
                for t in emit:
                    if t == IGNORE:
                        out[(id(node), ncfg)] = (node, ncfg)
                    else:
                        groups.setdefault((t, ncfg), {})[id(node)] = node
        shift = self.glr.shift
        for (t, ncfg), nodes in groups.items():
            for m in shift(nodes.values(), t):
                out[(id(m), ncfg)] = (m, ncfg)
        return tuple(out.values())

    def special_terms_by_terminal(self) -> dict:
        """Parser terminal -> the special token ids bound to it (sorted; do not modify)."""
        return self._special_bindings

    def advance_special(self, heads: tuple, term: int) -> tuple:
        """Heads after a special token bound to parser terminal ``term``: each head's
        pending lexeme is finished as at the end of the text, then ``term`` is shifted
        (empty when no parse can take it). The heads end at a clean lexeme boundary."""
        special = self.scanner.special
        shift = self.glr.shift
        groups: dict = {}
        for node, cfg in heads:
            for em, ncfg in special(cfg, term):
                g = groups.setdefault(ncfg, {})
                for m in self._after_emission(node, em):
                    g[id(m)] = m
        out = []
        for ncfg, nodes in groups.items():
            for m in shift(nodes.values(), term):
                out.append((m, ncfg))
        return tuple(out)

    def _after_emission(self, node, em: tuple) -> list:
        """The nodes after the pending lexeme's emission ``em`` is shifted on ``node``
        (``()``: no lexeme pending; an IGNORE alternative leaves ``node`` as it is)."""
        if not em:
            return [node]
        out = []
        for t in em:
            out.extend((node,) if t == IGNORE else self.glr.shift((node,), t))
        return out

    def viable(self, head: Head) -> bool:
        """One-terminal lookahead viability (the definition of the mask).

        A head at a lexeme boundary with no inhibition is viable (its stack
        is a viable prefix). Otherwise it is viable iff the pending lexeme (or,
        at an inhibited boundary, the next one) can still become, without a
        shadow completing a longer match, a terminal that is ignored or that
        its stack can shift after reductions; an inhibited boundary is also
        viable when the text can end right there.
        """
        node, cfg = head
        req = self._requirements_known.get(cfg, 0)
        if req == 0:     # a config the artifact does not list
            req = self._requirements.cur.get(cfg, 0)
            if req == 0:
                req = self._requirements.miss(cfg, requirement, self.scanner, cfg)
        if req is None:
            return False
        if req == TRUE:
            return True
        terminals, can_end = req[0], req[1]
        can_shift = self.glr.can_shift
        if any(can_shift(node, t) for t in terminals):
            return True
        if can_end and self._node_accepts(node):
            return True
        if len(req) > 2:
            # a special token may come next: the pending lexeme ends (emission req[2]),
            # then some special-token terminal is shifted
            specials = self.scanner.special_terms
            return any(can_shift(n, t) for n in self._after_emission(node, req[2]) for t in specials)
        return False

    # -- decoding helpers: see stackmask.runtime.decoding ---------------------
    def validate_tokens(self, state: State, tokens) -> int:
        """How many leading draft ``tokens`` commit from ``state`` (nothing changes)."""
        from .decoding import validate_tokens
        return validate_tokens(self, state, tokens)

    def fill_masks(self, states, out, rows=None, threads=None):
        """Masks of ``states`` into rows (``rows`` or 0..n-1) of an int32 ``(batch, words)``
        array (see :func:`stackmask.runtime.decoding.fill_masks`)."""
        from .decoding import fill_masks
        return fill_masks(self, states, out, rows, threads)

    def forced_bytes(self, state: State, max_bytes: int = 256) -> bytes:
        """The longest byte string every continuation of the text starts with."""
        from .decoding import forced_bytes
        return forced_bytes(self, state, max_bytes)

    def forced_tokens(self, state: State, tokenizer=None, **options) -> list:
        """Tokens that are the only possible continuation (see decoding.forced_tokens)."""
        from .decoding import forced_tokens
        return forced_tokens(self, state, tokenizer, **options)


def _state_of(heads: list) -> "State | None":
    """The state of the new ``heads`` (merged), None when there are none."""
    if not heads:
        return None
    return State(tuple(_merge_heads(heads) if len(heads) > 1 else heads))


def _merge_heads(heads: list) -> list:
    """Heads with the same (LR state, config) become one node linking to all
    of their predecessors (the GSS merge; the nodes themselves stay untouched)."""
    groups: dict = {}
    for n, cfg in heads:
        groups.setdefault((n.state, cfg), []).append(n)
    if len(groups) == len(heads):
        return heads
    out = []
    for (st, cfg), nodes in groups.items():
        if len(nodes) == 1:
            out.append((nodes[0], cfg))
            continue
        links: dict = {}
        for n in nodes:
            for m in n.links:
                links[id(m)] = m
        out.append((Node(st, list(links.values())), cfg))
    return out
