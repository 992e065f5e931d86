"""Teacher-forced decoding with the real Qwen2.5 vocabulary and tokenizer.

For generated programs of every benchmark grammar: every next token commits,
is allowed by ``get_mask`` (checked on a sample of steps by default, at every
step in the slow run), and EOS is allowed at the end. Mutated programs are
rejected no earlier than their first invalid byte."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from stackmask import Constraint, TokenRejected
from stackmask.generate import SentenceGenerator, mutate

from conftest import BENCH_GRAMMARS, bench_constraint, read_bench_grammar

def constraint_for(name, vocab, eager=None) -> Constraint:
    return bench_constraint(name, vocab, eager)


def bit(mask: np.ndarray, i: int) -> bool:
    return bool((int(mask[i >> 5]) >> (i & 31)) & 1)


def teacher_force(c: Constraint, ids: list[int], check_steps: set[int]) -> None:
    s = c.start()
    for k, tok in enumerate(ids):
        if k in check_steps:
            assert bit(c.get_mask(s), tok), f"step {k}: token {tok} {c.vocab.tokens[tok]!r} not in mask"
        s = c.commit(s, tok)
    assert c.is_accepting(s)
    m = c.get_mask(s)
    for e in c.vocab.eos_token_ids:
        assert bit(m, e)


def programs(name, n, seed, max_terminals):
    from stackmask.grammar import Grammar
    gen = SentenceGenerator(Grammar.from_lark(read_bench_grammar(name)), max_depth=10, seed=seed,
                            max_terminals=max_terminals)
    rng = random.Random(seed)
    return [gen.sentence(rng)[0] for _ in range(n)]


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_teacher_forced_generated_programs(name, qwen_vocab, qwen_encoding):
    c = constraint_for(name, qwen_vocab)
    rng = random.Random(3)
    for text in programs(name, 4, seed=5, max_terminals=60):
        ids = qwen_encoding.encode(text, disallowed_special=())
        steps = set(rng.sample(range(len(ids)), min(2, len(ids))))
        teacher_force(c, ids, steps)


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_mutations_rejected_no_earlier_than_first_invalid_byte(name, qwen_vocab, qwen_encoding):
    c = constraint_for(name, qwen_vocab)
    from stackmask.grammar import Grammar
    gen = SentenceGenerator(Grammar.from_lark(read_bench_grammar(name)), max_depth=10, seed=9,
                            max_terminals=60)
    rng = random.Random(17)
    rejected = 0
    for _ in range(12):
        text, _ = gen.sentence(rng)
        bad, pos = mutate(text, rng, gen)
        first_bad_byte = len(bad[:pos].encode())
        ids = qwen_encoding.encode(bad, disallowed_special=())
        s = c.start()
        done = 0
        try:
            for tok in ids:
                s = c.commit(s, tok)
                done += len(c.vocab.tokens[tok])
        except TokenRejected as e:
            rejected += 1
            assert done + e.offset >= first_bad_byte, (
                f"{name}: rejected at byte {done + e.offset} before the mutation at byte {first_bad_byte}: {bad!r}")
            continue
        # not rejected while committing: then the mutation must be at/after the end or
        # the text must still be a valid prefix; either way nothing earlier was refused
    assert rejected > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_teacher_forced_every_step_full_mask(name, qwen_vocab, qwen_encoding):
    c = constraint_for(name, qwen_vocab, eager=True)
    for text in programs(name, 3, seed=21, max_terminals=80):
        ids = qwen_encoding.encode(text, disallowed_special=())
        teacher_force(c, ids, set(range(len(ids))))


HANDWRITTEN = Path(__file__).resolve().parents[1] / "benchmarks" / "handwritten"


@pytest.mark.parametrize("name", ["sql", "go", "java"])
def test_handwritten_programs_commit_and_are_complete(name, qwen_vocab, qwen_encoding):
    """The programs written by hand for the benchmarks (``benchmarks/handwritten``) are
    sentences of their grammar: every token commits, each program is complete, and the
    start state rejects a lone closing bracket (the check can fail)."""
    c = Constraint(read_bench_grammar(name), qwen_vocab, ambiguous=True, compile="lazy",
                   cache_dir=False)
    rows = [json.loads(line) for line in (HANDWRITTEN / f"{name}.jsonl").read_text().splitlines()
            if line.strip()]
    assert len(rows) == 3
    for row in rows:
        s = c.start()
        for tok in qwen_encoding.encode(row["text"], disallowed_special=()):
            s = c.commit(s, tok)
        assert c.is_accepting(s), row["text"][-80:]
    with pytest.raises(TokenRejected):
        c.commit(c.start(), qwen_vocab.tokens.index(b")"))
