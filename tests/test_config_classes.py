"""Lexer configurations no token (or no short token) can tell apart.

``ConfigClasses`` puts two pending configurations in one class when their DFA states are
equivalent up to a depth: the vocabulary's longest token (an *alias*: one start for
both) or the base horizon (the configuration starts on its class's root and compiles
only the longer tokens, ``TerminalCompiler.long_outcomes``).

* classes are exact: a configuration has the same outcome for every token as its alias,
  the same for every short token as its base, and ``long_outcomes`` are its own;
* masks equal the oracle at every step of instances that write strings up to and
  around their ``maxLength`` (where the classes change), and of random walks that
  prefer long tokens, with the real Qwen2.5 vocabulary, also after a reload.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from stackmask import Constraint, Grammar
from stackmask.compile import make_scanner
from stackmask.compile.config_classes import ConfigClasses, base_horizon
from stackmask.compile.tables import build_tables
from stackmask.compile.terminal import TerminalCompiler
from stackmask.compile.token_index import VocabIndex

from test_compile import sample_vocab
from test_compiled_property import assert_replay_exact, assert_walk_exact
from test_config_bases import _outcome_sets

SCHEMA = {"type": "object", "properties": {
    "title": {"type": "string", "maxLength": 300},
    "code": {"type": "string", "minLength": 40, "maxLength": 60},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}},
    "note": {"type": "string"}},
    "required": ["title", "code"]}


def test_base_horizon():
    lengths = np.array([1, 2, 2, 3, 3, 3, 10, 20])
    assert base_horizon(lengths, 1 / 8) == 10        # one token (20) is longer
    assert base_horizon(lengths, 1 / 4) == 3         # two are longer
    assert base_horizon(lengths, 0) == 20
    assert base_horizon(np.zeros(0, dtype=np.int64), 0.5) == 0


# identifiers and numbers make shadows (a complete lexeme that can grow); the counted
# string and comment make classes
LARK = r"""
start: item+
item: ID | KW | STR | NUM | COMMENT | "(" item* ")"
KW: "while" | "if"
ID: /[a-z_][a-z0-9_]*/
STR: /'[^'\n]{0,100}'/
COMMENT: /#[^\n]{0,90}\n/
NUM: /[0-9]+(\.[0-9]+)?/
%ignore " "
"""


def _tables(name: str):
    if name == "lark":
        return build_tables(LARK, ambiguous=True)
    from stackmask.grammars.json_schema import convert_schema
    conv = convert_schema(SCHEMA if name == "schema" else {"type": "string", "maxLength": 150})
    return build_tables(conv.grammar, ambiguous=conv.ambiguous)


@pytest.mark.parametrize("name", ["schema", "string", "lark"])
def test_classes_are_exact(name, qwen_vocab):
    vocab = sample_vocab(qwen_vocab, 2500, seed=len(name))
    vocab = type(vocab)(list(vocab.tokens) + [b"x" * k for k in (5, 9, 17, 23, 31, 40)]
                        + [b" " * 24, b'abc"', b'"' + b"y" * 12, b"# " + b"z" * 20, b"ab'", b"9.5 w"])
    sc = make_scanner(_tables(name))
    index = VocabIndex(vocab)
    lengths = np.diff(index.flat_bytes()[1])
    cls = ConfigClasses(sc, int(lengths.max()), base_horizon(lengths, 1 / 16))
    assert cls.horizon < cls.max_len
    tc = TerminalCompiler(sc, index)
    n = len(index.toks)
    aliased = on_base = deeper = 0
    for d in cls.seeds:
        cfg = sc.intern(d, frozenset())
        mine = _outcome_sets(tc.outcomes(cfg)[0])
        a = cls.alias(cfg)
        if a is not None:
            assert cls.alias(a) is None                    # a representative is its own
            theirs = _outcome_sets(tc.outcomes(a)[0])
            assert all(mine.get(p) == theirs.get(p) for p in range(n)), sc.config(cfg)
            aliased += 1
            continue
        b = cls.base(cfg)
        if b is None:
            continue
        assert cls.is_root(b) and cls.base(b) is None and cls.alias(b) is None
        theirs = _outcome_sets(tc.outcomes(b)[0])
        depth = cls.depth(cfg, b)
        assert depth >= cls.horizon
        deeper += depth > cls.horizon
        short = lengths <= depth
        for p in np.flatnonzero(short).tolist():
            assert mine.get(p) == theirs.get(p), (sc.config(cfg), index.toks[p])
        diff, groups, ends = tc.long_outcomes(cfg, depth)
        assert np.array_equal(diff, np.flatnonzero(~short))
        inside = _outcome_sets(groups)
        for p in diff.tolist():
            assert inside.get(p) == mine.get(p), (sc.config(cfg), index.toks[p])
        on_base += 1
    assert on_base >= 5 and aliased >= 5 and deeper >= 3


# the title is written up to its limit of 300 characters in steps of long tokens (runs of
# spaces, long words), across the points where the classes change (128 and the base
# horizon characters left); the code between its bounds; escapes and multi-byte
# characters count one character each
def _texts() -> list[str]:
    rng = random.Random(5)
    out = []
    for n_title in (300, 299, 172, 171, 170, 17, 0):
        parts = []
        k = 0
        while k < n_title:
            piece = rng.choice([" " * 64, " " * 31, "-" * 16, "international", "é", "\\n",
                                "\\u00e9", "x"])
            chars = len(json.loads('"' + piece + '"'))
            if k + chars > n_title:
                piece, chars = "y", 1
            parts.append(piece)
            k += chars
        title = "".join(parts)
        code = "c" * rng.choice([40, 41, 59, 60])
        tags = json.dumps(["t" * rng.choice([0, 16, 19, 20])] * 2)
        out.append('{"title": "%s", "code": "%s", "tags": %s}' % (title, code, tags))
    return out


def _longest(c: Constraint):
    return lambda ids: sorted(ids, key=lambda i: -len(c.vocab.token_bytes(i)))[:40]


def _check(qwen_vocab, qwen_encoding, tmp_path, texts, walks: int, steps: int) -> None:
    g = Grammar.from_json_schema(SCHEMA)
    for attempt in range(2):                      # compiled, then loaded from the artifact
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        st = c.compile_stats()
        # (the strings' counts near their bounds get the masks of deep or pinned states
        # instead, stackmask.compile.count_split: no aliases are left here;
        # test_classes_are_exact checks those on the lexer itself)
        assert st["configs_on_base"] >= 100, st
        assert st["configs_counted"] >= 1000, st
        for t in texts if attempt == 0 else texts[:1]:
            json.loads(t)
            assert_replay_exact(c, qwen_encoding, t, 1 if attempt == 0 else 8)
        for w in range(walks if attempt == 0 else 1):
            assert_walk_exact(c, random.Random(10 * attempt + w), steps, f"walk {attempt}.{w}",
                              _longest(c), 0.8)


def test_masks_with_classes_equal_the_oracle(qwen_vocab, qwen_encoding, tmp_path):
    # the title written to its limit: across both class boundaries, up to the end
    _check(qwen_vocab, qwen_encoding, tmp_path, _texts()[:1], 1, 15)


@pytest.mark.slow
def test_masks_with_classes_equal_the_oracle_all(qwen_vocab, qwen_encoding, tmp_path):
    _check(qwen_vocab, qwen_encoding, tmp_path, _texts(), 3, 60)


def test_an_alias_whose_representative_is_missing(qwen_vocab):
    """A budget can stop a compile after an alias was noted and before its representative
    was compiled: the artifact leaves that alias out (it loads), and a mask that needs the
    configuration compiles the representative, never the alias itself."""
    from stackmask.compile import LazyConfigs
    from stackmask.compile.parser_dwa import ParserDWA

    vocab = sample_vocab(qwen_vocab, 2000, seed=3)
    # (a repetition that is no prefix code: not counted, so its classes alias)
    c = Constraint(Grammar.from_json_schema({"type": "string", "pattern": "^(a|ab){0,150}$"}),
                   vocab, cache_dir=False, progress=False)
    dwa = c.compiled.dwa
    assert dwa.alias
    cfg, rep = next(iter(sorted(dwa.alias.items())))
    dwa.init.pop(rep)
    dwa.init_base.pop(rep, None)
    dwa.init_restrict.pop(rep, None)
    lr, accepts_empty = c.compiled.tables.lr, c.compiled.tables.normal_form.accepts_empty
    back = ParserDWA.from_data(lr, accepts_empty, dwa.to_data())
    assert cfg not in back.alias and len(back.alias) == len(dwa.alias) - sum(
        1 for a in dwa.alias.values() if a == rep)
    lazy = LazyConfigs(dwa, c.scanner, vocab)
    again = lazy(cfg)
    assert rep in dwa.init and cfg not in dwa.init and again == dwa.init[rep]
    assert_walk_exact(c, random.Random(1), 25, "after the lazy compile", _longest(c), 0.9)
