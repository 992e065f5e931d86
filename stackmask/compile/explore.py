"""Sentence-guided exploration of a budgeted compile.

When the up-front compile of a large grammar stops at its budget, the automaton
states it did not reach are compiled the first time a mask needs them, and
those first masks are slow (milliseconds). Breadth-first order spends the
budget evenly over everything reachable; a program only visits a thin slice of
it. :func:`explore` fills that slice: it draws random sentences of the grammar
(:class:`stackmask.generate.SentenceGenerator`; typical ones, then deeply nested
ones with the time left, see ``SHAPES``) and asks the mask at *every byte* of
each, so the masks of every tokenization of those texts (whatever the tokenizer)
are compiled, not only one tokenizer's. Those masks compute only the
edges they walk; afterwards every state they walked part of gets all its edges
(the same situation over other stack contents: measured on the benchmark
traces after a cache load, this took the slowest masks from milliseconds to
under 0.5 ms, e.g. Go's p99.9 5.2 ms -> 0.4 ms, for 7-30 s). The constraint then
saves the automaton (see :class:`stackmask.Constraint`, ``explore_sentences``).

It drives the constraint it is given through its public operations (``start``,
``commit_bytes``, ``get_mask``) and its compiled automaton; it imports nothing of the
runtime. It changes no mask: the states it compiles are the ones a later mask would
compile on first use, and they are checked like those by the exactness tests.
The sentences come from the grammar alone (no corpus, no tokenizer), with a
fixed seed, so the same inputs give the same artifact.
"""

from __future__ import annotations

import random
import time

import numpy as np

from ..errors import GrammarError, LimitExceeded, TokenRejected
from ..generate import SentenceGenerator

#: seed of the exploration's sentences (benchmarks generate their traces with others)
SEED = "stackmask:explore"
#: sentence shapes, explored one after the other: (derivation depth, fewest, most
#: terminals). The first is like typical documents; the second nests deeper and runs
#: longer (measured on Java: texts of depth 16 after exploring only the first shape had
#: cold p99.9 82 ms after a load; with 4000 deep sentences explored too, 0.45 ms). A later
#: shape only gets the time the earlier ones left.
SHAPES = ((12, 20, 200), (16, 60, 300))


def sentences(grammar, shape, rng):
    """Endless random sentences (texts) of ``grammar`` (a :class:`stackmask.Grammar`) of
    one ``shape`` (see ``SHAPES``), drawn with ``rng``. Raises ``ValueError`` or
    :class:`stackmask.GrammarError` when the grammar has no sentence generator (e.g.
    special-token terminals, which have no bytes)."""
    depth, lo, hi = shape
    gen = SentenceGenerator(grammar, max_depth=depth, min_terminals=lo, max_terminals=hi)

    def it():
        while True:
            yield gen.sentence(rng)[0]
    return it()


def explore(constraint, n_sentences: int, budget_s: float, seed=SEED,
            shapes=SHAPES) -> dict:
    """For each shape of ``shapes`` in turn: ask ``constraint`` for the mask at every byte
    of up to ``n_sentences`` random sentences of its grammar of that shape
    (:func:`sentences`; one ``random.Random(seed)`` for all), then compute every edge of
    the automaton states those masks walked only part of. Stops once ``budget_s``
    seconds have passed in all (checked between sentences and between states); the
    sentences of a later shape get at most half of the time left when they start.
    Returns the figures for ``compile_stats()``: ``explore_sentences`` (done, all shapes),
    ``explore_masks``, ``explore_expanded`` (states completed: every state the masks
    walked part of gets all its edges), ``explore_states`` (automaton states added),
    ``explore_s``, ``explore_rejected`` (sentences the parser rejected part-way: the
    generator and the parser disagree, a bug; the rest of such a sentence is skipped)
    and ``explore_stopped`` (why it stopped before the end, or None)."""
    t0 = time.perf_counter()
    dwa = constraint.compiled.dwa
    states0 = len(dwa.items)
    out = {"explore_sentences": 0, "explore_masks": 0, "explore_expanded": 0, "explore_states": 0,
           "explore_s": 0.0, "explore_rejected": 0, "explore_stopped": None}
    rng = random.Random(seed)
    try:
        texts = [sentences(constraint.grammar, shape, rng) for shape in shapes]
    except (ValueError, GrammarError) as e:      # e.g. special-token terminals (no bytes)
        out["explore_stopped"] = f"no sentence generator for this grammar: {e}"
        return out
    buf = np.zeros(constraint.mask_words, dtype=np.int32)
    get_mask, commit_bytes, start = constraint.get_mask, constraint.commit_bytes, constraint.start
    deadline = t0 + budget_s
    for k, shape_texts in enumerate(texts):
        now = time.perf_counter()
        if now >= deadline:
            out["explore_stopped"] = f"time budget of {budget_s:g} s"
            break
        until = deadline if k == 0 else now + (deadline - now) / 2
        for _ in range(n_sentences):
            if time.perf_counter() >= until:
                break
            try:
                text = next(shape_texts)
            except ValueError as e:
                out["explore_stopped"] = f"sentence generator: {e}"
                break
            data = text.encode("utf-8")
            s = start()
            get_mask(s, out=buf)
            out["explore_masks"] += 1
            try:
                for i in range(len(data)):
                    s = commit_bytes(s, data[i:i + 1])
                    get_mask(s, out=buf)
                    out["explore_masks"] += 1
            except TokenRejected:
                out["explore_rejected"] += 1
            except LimitExceeded as e:     # max_automaton_states: keep what fits, stop
                out["explore_stopped"] = str(e)
                break
            out["explore_sentences"] += 1
        if out["explore_stopped"] is not None:
            break
        # the masks computed the edges they walked; the other edges of those states
        # (other stack states below the same situation) are what similar texts need next
        complete0 = sum(dwa.complete)
        try:
            n, done = dwa.expand_partial(deadline)
        except LimitExceeded as e:
            n, done = sum(dwa.complete) - complete0, True
            out["explore_stopped"] = str(e)
        out["explore_expanded"] += n
        if not done:
            out["explore_stopped"] = (f"time budget of {budget_s:g} s (while completing the "
                                      f"states the sentences reached)")
        if out["explore_stopped"] is not None:
            break
    out["explore_states"] = len(dwa.items) - states0
    out["explore_s"] = time.perf_counter() - t0
    return out
