"""Bounded whitespace of JSON Schema grammars (``max_whitespace`` 20): masks equal the
reference oracle at every byte of pretty-printed documents whose blank runs have every
length from 0 to the bound (the slow run; the default run samples seven lengths, both
ends included), with and without a line break before them, after ``{ [ , :``
and before ``} ] ,``. Committed byte by byte, so every count of a run is met both pending
and emitted with its shadow (the configurations the mask automaton shares among counts:
``compile.config_classes``, shadows equivalent as shadows)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stackmask import Constraint, Grammar

BOUND = 20


def _run(k: int, newline: str) -> str:
    """A run of ``k`` blanks, spaces and tabs mixed, after ``newline`` ('' for none)."""
    return newline + "".join(" \t"[(i * 7) % 3 == 1] for i in range(k))


def _document(k: int, flip: bool) -> str:
    """An object with an array and a nested object whose gaps have lengths ``k`` and
    ``BOUND - k`` in turn, a line break before every other one (``flip``: the others)."""
    lengths = [k, BOUND - k]
    parts = ["{", "", '"a":', "", "[", "", "1", "", ",", "", "2", "", "]", "", ",", "",
             '"b" :', "", "{", "", '"c":', "", "null", "", "}", "", "}"]
    gap = 0
    out = []
    for p in parts:
        if p:
            out.append(p)
            continue
        nl = ("\n", "\r\n", "")[gap % 3] if (gap % 2 == 0) != flip else ""
        out.append(_run(lengths[gap % 2], nl))
        gap += 1
    return "".join(out)


def _check_every_byte(c: Constraint, text: str) -> int:
    s = c.start()
    checked = 0
    for b in text.encode():
        s = c.commit_bytes(s, bytes([b]))
        assert np.array_equal(c.get_mask(s), c.reference_mask(s)), (text, b)
        checked += 1
    assert c.is_accepting(s)
    return checked


SCHEMAS = [
    {},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}},
                                      "b": {"type": "object"}}},
]
#: the default run's documents: gaps of 0, 1, 9, 10, 11, 19 and 20 blanks (each document
#: has gaps of k and BOUND - k), every line break kind; the slow run takes every k
SAMPLED = (0, 1, 9, 10)


@pytest.mark.parametrize("ks", [pytest.param(SAMPLED, id="sampled"),
                                pytest.param(tuple(range(BOUND + 1)), id="every",
                                             marks=pytest.mark.slow)])
@pytest.mark.parametrize("schema", SCHEMAS)
def test_blank_runs_of_every_length_equal_the_oracle(qwen_vocab, schema, ks):
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=False, progress=False)
    checked = 0
    for k in ks:
        doc = _document(k, flip=k % 2 == 1)
        json.loads(doc)
        checked += _check_every_byte(c, doc)
    assert checked > 50 * len(ks)


def test_a_run_past_the_bound_is_refused(qwen_vocab):
    c = Constraint(Grammar.from_json_schema({}), qwen_vocab, cache_dir=False, progress=False)
    blanks = [i for i in range(qwen_vocab.size) if qwen_vocab.token_bytes(i) in (b" ", b"\t")]
    assert len(blanks) == 2
    for gap in ("[" + _run(BOUND, "\n"), "[1" + _run(BOUND, ""), "[1," + _run(BOUND, "\r\n")):
        s = c.commit_bytes(c.start(), gap.encode())
        m = c.get_mask(s)
        assert np.array_equal(m, c.reference_mask(s))
        for tid in blanks:
            assert not (m[tid >> 5] >> (tid & 31)) & 1


# a bounded run whose emission leaves a shadow: 'a' and 'aa' emitted kill on one more
# 'a' (their shadows are one as shadows), 'aaa' does not (the run is at its bound)
SHADOWS = r"""
start: x+
x: A | B | C
A: /a{1,3}/
B: /a?b/
C: /ca/
"""


def test_shadows_equivalent_as_shadows_equal_the_oracle():
    from stackmask import Vocab
    toks = [b"a", b"aa", b"aaa", b"aaaa", b"b", b"ab", b"aab", b"aaab", b"ba", b"c", b"ca",
            b"cab", b"ac", b"bb"]
    vocab = Vocab(toks + [b"<eos>"], eos_token_ids=[len(toks)])
    c = Constraint(SHADOWS, vocab, cache_dir=False, progress=False)
    assert c.compile_stats()["configs_aliased"] > 0
    front = [c.start()]
    for _ in range(4):
        nxt = []
        for s in front:
            ref = c.reference_mask(s)
            assert np.array_equal(c.get_mask(s), ref)
            for t in range(len(toks)):
                if (ref[t >> 5] >> (t & 31)) & 1:
                    nxt.append(c.commit(s, t))
        front = nxt


def test_configurations_commit_reaches_first_are_read_as_their_shadow_class(qwen_vocab):
    """Construction walks the representatives of shadow classes, so commit can reach a
    configuration it never met (SQL's unseen programs did): interned, it is an alias of
    the one with each shadow its class's least state, which was compiled, so its mask
    compiles nothing and equals the oracle's (a mask is defined for any head: the
    variants here are put on the stacks of real texts). The whitespace is made an ignored
    terminal that may follow itself (no gap, ``Grammar.gaps``), so that a blank run emitted
    below its bound leaves a shadow."""
    g = Grammar.from_json_schema({})
    g = Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, modes=g.modes)
    c = Constraint(g, qwen_vocab, cache_dir=False, progress=False)
    sc, dwa = c.scanner, c.compiled.dwa
    rep = sc.shadow_classes()
    n_states, starts = len(dwa.items), set(dwa.init)
    known = set(sc.export_configs())
    nodes = [c.commit_bytes(c.start(), t.encode()).heads[0][0]
             for t in ("[", '{"a":' + _run(3, "\n") + "[1,", "[[")]
    tried = 0
    for canon in sorted(starts):
        d, shadows = sc.config(canon)
        if not shadows or sc.shadow_canonical(canon) != canon:
            continue
        for x in sorted(shadows):
            for y in np.flatnonzero(rep == rep[x]).tolist():
                other = frozenset(shadows - {x} | {y})
                if y == x or (d, other) in known:
                    continue
                new = sc.intern(d, other)            # never met by construction
                known.add((d, other))
                assert dwa.alias.get(new) == canon
                for node in nodes:
                    mask = c.get_mask(type(c.start())(((node, new),)))
                    assert np.array_equal(mask, c.reference_mask(type(c.start())(((node, new),))))
                    assert np.array_equal(mask, c.get_mask(type(c.start())(((node, canon),))))
                tried += 1
    assert tried >= 3
    assert len(dwa.items) == n_states and set(dwa.init) == starts      # nothing compiled
