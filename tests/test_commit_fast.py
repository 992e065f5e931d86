"""commit's fast path (memoized lexing paths per (config, token) + deterministic LR
steps + GSS merge of the new heads) against the general byte-by-byte GLR loop.

The two give states with the same stacks; what a user can observe is the mask,
acceptance and the rejection of a token (with its offset), so those are compared
at every step of the benchmark traces, of random walks, and of ambiguous grammars."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from stackmask import Constraint, TokenRejected
from stackmask.glr.gss import AMBIGUOUS, Node
from stackmask.runtime.constraint import _merge_heads

from conftest import bench_constraint
from test_compiled_exact import AMBIGUOUS_GRAMMARS, _AMBIGUOUS_FIXED

TRACES = Path(__file__).resolve().parents[1] / "benchmarks" / "traces"


def slow_commit(c, state, tok):
    c.FAST_HEADS = 0            # instance attribute: this constraint only
    try:
        return c.commit(state, tok)
    finally:
        del c.FAST_HEADS


def outcome(c, commit, state, tok):
    try:
        return commit(c, state, tok), None
    except TokenRejected as e:
        return None, (e.offset, str(e))


def fast(c, state, tok):
    return c.commit(state, tok)


def compare_step(c, s_fast, s_slow, tok, where, check_mask=True):
    a, ea = outcome(c, fast, s_fast, tok)
    b, eb = outcome(c, slow_commit, s_slow, tok)
    assert ea == eb, f"{where}: token {tok}: fast {ea} vs general {eb}"
    if a is None:
        return None, None
    if check_mask:
        assert np.array_equal(c.get_mask(a), c.get_mask(b)), f"{where}: masks differ after token {tok}"
    assert c.is_accepting(a) == c.is_accepting(b), f"{where}: acceptance differs after token {tok}"
    return a, b


def walk(c, tokens, rng, where, n_random=2, mask_every=1):
    """Teacher-force ``tokens``; at every step also try ``n_random`` random tokens
    (mostly rejected ones: their offsets must agree) from both states. Masks are
    compared every ``mask_every`` steps (acceptance and verdicts at every step)."""
    sf = ss = c.start()
    for i, tok in enumerate(tokens):
        for _ in range(n_random):
            t = rng.randrange(c.vocab.size)
            compare_step(c, sf, ss, t, f"{where} step {i} (random)", check_mask=False)
        sf, ss = compare_step(c, sf, ss, tok, f"{where} step {i}", check_mask=i % mask_every == 0)
        if sf is None:
            return


def trace_tokens(name):
    with (TRACES / f"{name}.jsonl").open() as f:
        return [json.loads(line)["tokens"] for line in f if line.strip()]


@pytest.mark.parametrize("name", ["json-outlines", "calc", "c", "sql", "java", "go"])
def test_fast_commit_equals_general_on_bench_traces(name, qwen_vocab):
    c = bench_constraint(name, qwen_vocab)
    rng = random.Random(f"fast-{name}")
    big = name in ("sql", "java", "go")        # lazily compiled here: masks cost compile time
    traces = trace_tokens(name)[:2 if big else 5]
    for k, toks in enumerate(traces):
        walk(c, toks, rng, f"{name} trace {k}", n_random=2, mask_every=5 if big else 1)
    assert c._token_paths, "the fast path was never taken"


@pytest.mark.parametrize("name", sorted(AMBIGUOUS_GRAMMARS))
def test_fast_commit_equals_general_on_ambiguous_grammars(name, qwen_vocab):
    c = Constraint(AMBIGUOUS_GRAMMARS[name], qwen_vocab, ambiguous=True, compile="lazy")
    rng = random.Random(f"fast-amb-{name}")
    for text in _AMBIGUOUS_FIXED[name]:
        # single-byte tokens, so every GSS branching point is a step
        ids = [qwen_vocab.tokens.index(bytes([b])) for b in text.encode()]
        walk(c, ids, rng, f"{name} {text!r}", n_random=3)


def test_fast_commit_random_walks_json_outlines(qwen_vocab):
    """Walks that sample the next token from the mask (multi-byte tokens crossing
    lexeme boundaries, whitespace, string escapes)."""
    c = bench_constraint("json-outlines", qwen_vocab)
    rng = random.Random("fast-walk")
    for w in range(6):
        sf = ss = c.start()
        for i in range(40):
            ids = np.flatnonzero(np.unpackbits(c.get_mask(sf).view(np.uint8), bitorder="little"))
            ids = [t for t in ids if t not in qwen_vocab.eos_token_ids]
            if not ids:
                break
            tok = int(rng.choice(ids))
            sf, ss = compare_step(c, sf, ss, tok, f"walk {w} step {i}")


def test_shift1_reports_branching(qwen_vocab):
    c = Constraint(AMBIGUOUS_GRAMMARS["ss"], qwen_vocab, ambiguous=True, compile="lazy")
    s = c.commit_bytes(c.start(), b"ab")
    results = set()
    for node, _cfg in s.heads:
        for t in range(len(c.tables.lr.terminals)):
            r = c.glr.shift1(node, t)
            results.add("ambiguous" if r is AMBIGUOUS else "dead" if r is None else "node")
    assert "ambiguous" in results       # s: s s | "a": shift/reduce conflict on "a"/"b"


def test_merge_heads_joins_links_without_touching_nodes():
    root = Node(0, [])
    a, b = Node(1, [root]), Node(2, [root])
    x, y, z = Node(5, [a]), Node(5, [b]), Node(6, [a])
    merged = _merge_heads([(x, 3), (y, 3), (z, 3), (x, 4)])
    by_key = {(n.state, cfg): n for n, cfg in merged}
    assert len(merged) == 3
    assert set(map(id, by_key[(5, 3)].links)) == {id(a), id(b)}
    assert by_key[(6, 3)] is z and by_key[(5, 4)] is x
    assert x.links == [a] and y.links == [b]
