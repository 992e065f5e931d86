"""Lexer configurations started on a base configuration.

A configuration that most tokens treat as they treat another one (inside a literal
property name that is also a free string: every byte but the name's next one leads
where the free string's body leads) compiles only the tokens that differ
(``TerminalCompiler.diff_outcomes``); its masks are the base's masks without those
tokens, united with its own (``ParserDWA.add_config_on_base``, ``Masker``).

* the diff: every token outside it has the same outcomes in both configurations, and
  the outcomes given for the tokens inside it are the configuration's own;
* masks equal the oracle at every step of instances and random walks through names
  that share prefixes with the declared ones, with the real Qwen2.5 vocabulary, also
  after the artifact is reloaded.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from stackmask import Constraint, Grammar
from stackmask.compile import make_scanner
from stackmask.compile.tables import build_tables
from stackmask.compile.terminal import TerminalCompiler
from stackmask.compile.token_index import VocabIndex

from conftest import read_bench_grammar
from test_compile import sample_vocab
from test_compiled_property import assert_replay_exact, assert_walk_exact

# additional properties allowed (no "additionalProperties": false): a key is a declared
# name or any string, so the lexer is inside both at once while a name is being written.
# (A counted string, e.g. "maxLength": 8, anywhere in the schema makes every string state
# up to the count its own state, a chain with no base: see TerminalCompiler.base_config.)
SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string"},
    "names": {"type": "array", "items": {"type": "string"}},
    "nickname": {"type": "string", "pattern": "^[a-z]+$"},
    "age": {"type": "integer"},
    "address": {"type": "object", "properties": {"street": {"type": "string"},
                                                 "city": {"type": "string"}}}},
    "required": ["name"]}


def _outcome_sets(groups: dict) -> dict:
    """byte-order position -> set of outcomes, from ``outcome -> positions``."""
    out: dict = {}
    for k, pos in groups.items():
        for p in pos.tolist():
            out.setdefault(p, set()).add(k)
    return out


def _check_diff(tc, cfg, base, groups, ends, diff_outcomes):
    """``diff_outcomes`` (:meth:`TerminalCompiler.diff_outcomes` of ``cfg`` on ``base``)
    against both configurations' own outcomes (``groups``, ``ends``: ``cfg``'s): the tokens
    outside the diff have the same outcomes in both, those inside it ``cfg``'s, and every
    configuration a token can end in is compiled (the diff's tokens end where it says, the
    others where the base's tokens end). Returns the diff."""
    diff, dgroups, dends = diff_outcomes
    assert np.all(np.diff(diff) > 0)
    bgroups, bends = tc.outcomes(base)
    mine, theirs, inside = _outcome_sets(groups), _outcome_sets(bgroups), _outcome_sets(dgroups)
    in_diff = set(diff.tolist())
    toks = tc.index.toks
    for p in range(len(toks)):
        if p in in_diff:
            assert inside.get(p) == mine.get(p), (tc.scanner.config(cfg), toks[p])
        else:
            assert mine.get(p) == theirs.get(p), (tc.scanner.config(cfg), toks[p])
    assert dends <= ends <= dends | bends
    return diff


def _schema_tables():
    from stackmask.grammars.json_schema import convert_schema
    conv = convert_schema(SCHEMA)
    return build_tables(conv.grammar, ambiguous=conv.ambiguous)


@pytest.mark.parametrize("name", ["schema", "c"])
def test_diff_outcomes_are_the_configurations_own(name, qwen_vocab):
    vocab = sample_vocab(qwen_vocab, 3000, seed=17)
    vocab = type(vocab)(list(vocab.tokens) + [b'"n', b'"na', b'"nam', b'"name', b'"names"',
                                              b'ame', b'ames', b'ick', b'"nick', b'whi',
                                              b'while', b'whil', b'ile', b'_x', b'while_'])
    tables = _schema_tables() if name == "schema" else build_tables(read_bench_grammar("c"),
                                                                    ambiguous=True)
    sc = make_scanner(tables)
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    todo, seen = [0], {0}
    on_base = 0
    while todo and len(seen) < 400:
        cfg = todo.pop(0)
        groups, ends = tc.outcomes(cfg)
        base = tc.base_config(cfg)
        if base is not None:
            assert tc.base_config(base) is None                   # bases are roots
            diff = _check_diff(tc, cfg, base, groups, ends, tc.diff_outcomes(cfg, base))
            assert len(diff) < len(index.toks) // 4
            on_base += 1
        for c in sorted(ends):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert on_base >= 3, "no configuration had a base"


def _check_walk(c: Constraint, rng: random.Random, steps: int, label: str) -> None:
    # into names: prefer tokens continuing a quoted name
    assert_walk_exact(c, rng, steps, label,
                      lambda ids: [i for i in ids if c.vocab.token_bytes(i)[:1].isalpha()], 0.7)


def test_masks_on_a_base_equal_the_oracle(qwen_vocab, qwen_encoding, tmp_path, monkeypatch):
    # the prefill's time bound off (its memory bound stays): on a loaded machine the masks
    # of configurations on a base, made in the first half of it, could be cut short
    from stackmask.compile import ahead
    monkeypatch.setattr(ahead, "PREFILL_S", 30.0)
    monkeypatch.setattr(ahead, "PREFILL_SHARE", 1e9)
    texts = ['{"name": "x", "nam": 1, "names": ["a"], "nickname": "nick", "namesake": {}}',
             '{"name": "\\u00e9\\n\\/", "nicknames": [], "age": 3, "address": {"street": "s", "cit": 1}}',
             '{"name":"a","age":-1,"address":{"street":"x","citi":"c","city":"c"}}']
    g = Grammar.from_json_schema(SCHEMA)
    for attempt in range(2):                      # compiled, then loaded from the artifact
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert c.compile_stats()["configs_on_base"] >= 5
        # masks of configurations on a base were computed ahead (then met below: a wrong
        # one would differ from the oracle)
        assert any(type(x) is tuple for key in c._masker.memo for x in key)
        for t in texts:
            json.loads(t)
            assert_replay_exact(c, qwen_encoding, t, 1 if attempt == 0 else 3)
        _check_walk(c, random.Random(attempt), 15 if attempt == 0 else 6, f"walk {attempt}")


# whitespace runs: the blanks after "{", "[", "," and ":" are counted (at most 20 after one
# line break), and a run that is a complete lexeme and can still grow is observed as
# itself, so no configuration class holds two counts; their weak classes propose a base
WHITESPACE_TOKENS = [b" " * k for k in range(1, 31)] + [b"\t" * k for k in range(1, 6)] + \
    [b"\n" + b" " * k for k in range(0, 26, 2)] + [b"  \n", b"\n\n", b" \t ", b' "', b'  "',
                                                   b'",', b'", "', b" {", b"}\n", b"\n}"]


def test_weak_bases_diff_and_ends(qwen_vocab):
    from stackmask.compile.build import config_classes
    vocab = sample_vocab(qwen_vocab, 3000, seed=23)
    vocab = type(vocab)(list(vocab.tokens) + WHITESPACE_TOKENS)
    sc = make_scanner(_schema_tables())
    index = VocabIndex(vocab)
    tc = TerminalCompiler(sc, index)
    classes = config_classes(sc, index)
    todo, seen = [0], {0}
    tried = on_base = 0
    while todo:
        cfg = todo.pop(0)
        groups, ends = tc.outcomes(cfg)
        base = classes.weak_base(cfg)
        if base is not None:
            tried += 1
            assert classes.is_root(base) and classes.weak_base(base) is None
            r = tc.diff_outcomes(cfg, base, max_tokens=len(index.toks) // 8)
            if r is not None:
                _check_diff(tc, cfg, base, groups, ends, r)
                on_base += 1
        for c in sorted(ends):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    assert on_base >= 10 and tried >= on_base, (tried, on_base)


def test_masks_on_weak_bases_equal_the_oracle(qwen_vocab, qwen_encoding, tmp_path):
    doc = {"name": "x y", "names": ["a", "b"], "age": 3,
           "address": {"street": "s", "city": "c", "zip": [1, {"k": None}]}, "extra": True}
    texts = [json.dumps(doc, indent=2), json.dumps(doc, indent="\t"),
             json.dumps(doc, indent=4).replace("\n", "\r\n"), json.dumps(doc)]
    g = Grammar.from_json_schema(SCHEMA)
    for attempt in range(2):                      # compiled, then loaded from the artifact
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.compile_stats()["configs_on_base"] >= 20
        for t in texts[:3] if attempt == 0 else texts[2:]:
            assert_replay_exact(c, qwen_encoding, t, 2)
        assert_walk_exact(c, random.Random(7 + attempt), 12, f"blank walk {attempt}",
                          lambda ids: [i for i in ids if not c.vocab.token_bytes(i).strip()], 0.8)
