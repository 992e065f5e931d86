"""The reference oracle's byte columns against its token-by-token walk, on the real
Qwen2.5 vocabulary: ``ReferenceOracle.allowed`` (tokens committed one byte column at a
time, tasks split where a byte makes new GSS nodes) gives the same set as
``ReferenceOracle.allowed_literal`` (every token committed byte by byte along the trie)
at every step of texts that reach one head and several, inside strings and names, near
a counted string's bounds, and between lexemes. (``test_runtime_small.py`` checks both
against committing every token separately, on small vocabularies.)"""

from __future__ import annotations

import json


from stackmask import Constraint, Grammar
from stackmask.runtime.oracle import ReferenceOracle

from conftest import bench_constraint
from test_compiled_exact import AMBIGUOUS_GRAMMARS


def _every_step(c, text: str, enc, limit: int | None = None, forked: int = 0) -> int:
    """Compare the two walks at every step of ``text`` (its first ``limit`` tokens; with
    ``forked``, the first ``forked`` steps with several heads only); return the most heads
    a compared state had."""
    o = ReferenceOracle(c)
    ids = enc.encode(text, disallowed_special=())[:limit]
    s = c.start()
    most = 0
    left = forked
    for k in range(len(ids) + 1):
        if forked:
            if len(s.heads) == 1 or left <= 0:
                s = c.commit(s, ids[k]) if k < len(ids) else s
                continue
            left -= 1
        most = max(most, len(s.heads))
        got, want = sorted(o.allowed(s)), sorted(o.allowed_literal(s))
        assert got == want, (text, k, len(got), len(want),
                             sorted(set(got) ^ set(want))[:10])
        if k < len(ids):
            s = c.commit(s, ids[k])
    return most


def test_columns_equal_the_walk_on_a_json_schema(qwen_vocab, qwen_encoding):
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 24},
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}}},
        "required": ["name", "n"]}
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=False,
                   progress=False)
    text = json.dumps({"name": "héllo \\\"x\\\" \u4e2d", "n": -12, "tags": ["ab"]},
                      ensure_ascii=False)
    _every_step(c, text, qwen_encoding)


def test_columns_equal_the_walk_with_several_heads(qwen_vocab, qwen_encoding):
    # keywords and names under ignored blanks, a dangling else: up to 3 heads
    c = Constraint(AMBIGUOUS_GRAMMARS["kw"], qwen_vocab, ambiguous=True, progress=False)
    assert _every_step(c, "if a then if b then{}else{}", qwen_encoding, forked=3) > 1


def test_columns_equal_the_walk_on_c(qwen_vocab, qwen_encoding):
    c = bench_constraint("c", qwen_vocab)
    _every_step(c, "int f(int x){ /* a b */ while (x >= 10) { x = g(x, 2)*3; } }",
                qwen_encoding, limit=4)
