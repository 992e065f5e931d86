"""Item counts counted in binary (``arrays._counted_items``): ``minItems``/``maxItems``
bounds far apart compile to O(log n) rules that an LR(1) parser counts on its stack.
The language is checked against the ``jsonschema`` validator at and around every bound
(with the binary form forced on small counts), large counts compile and decode, and masks
inside a counted array equal the reference oracle with the real Qwen2.5 vocabulary."""

from __future__ import annotations

import random

import pytest

from stackmask import Constraint, Grammar
from stackmask.grammars.json_schema import arrays, convert_schema
from test_counted import _walk
from test_json_schema import accepts, constraint, jsonschema_valid

PREFIXES = ([], [{"type": "string"}], [{"type": "string"}, {"type": "boolean"}])


def _array(n: int, prefix, last: str | None = None) -> str:
    items = []
    for i in range(n):
        if i < len(prefix):
            items.append('"x"' if prefix[i]["type"] == "string" else "true")
        else:
            items.append(str(i))
    if last is not None and items:
        items[-1] = last
    return "[" + ", ".join(items) + "]"


@pytest.mark.parametrize("prefix", PREFIXES, ids=["no-prefix", "prefix1", "prefix2"])
@pytest.mark.parametrize("lo,hi", [(0, None), (0, 1), (0, 7), (0, 8), (0, 9), (1, 12), (3, 3),
                                   (5, 16), (8, 21), (13, None), (2, 31), (0, 0)])
def test_binary_counts_accept_exactly_the_valid_lengths(monkeypatch, prefix, lo, hi):
    monkeypatch.setattr(arrays, "LINEAR_ITEMS", 0)      # the binary form on every count
    s = {"type": "array", "items": {"type": "integer"}, "minItems": lo}
    if prefix:
        s["prefixItems"] = prefix
    if hi is not None:
        s["maxItems"] = hi
    c = constraint(s)
    assert not convert_schema(s).ambiguous               # LR(1): no GLR needed to count
    for n in range((hi if hi is not None else lo) + 4):
        text = _array(n, prefix)
        assert accepts(c, text) == jsonschema_valid(s, text), (s, n)
        if n > len(prefix):                              # a counted item of the wrong type
            bad = _array(n, prefix, last="[]")
            assert not accepts(c, bad) and not jsonschema_valid(s, bad), (s, n)


def test_large_counts_compile_to_few_rules():
    s = {"type": "array", "items": {"const": 0}, "minItems": 3000, "maxItems": 40000}
    sg = convert_schema(s)
    assert not sg.warnings
    assert len(sg.grammar.rules) < 100                  # 40,000 counts, O(log) rules
    c = constraint(s)
    for n, ok in ((2999, False), (3000, True), (40000, True), (40001, False)):
        assert accepts(c, "[" + ",".join(["0"] * n) + "]") == ok, n
    # no upper bound, a large lower one
    c = constraint({"type": "array", "minItems": 5000})
    assert accepts(c, "[" + ",".join(["1"] * 5000) + "]")
    assert not accepts(c, "[" + ",".join(["1"] * 4999) + "]")


def test_counts_beside_contains_past_2000_are_still_reported():
    s = {"type": "array", "contains": {"const": 1}, "maxItems": 5000}
    with pytest.raises(Exception, match="maxItems"):
        convert_schema(s, strict=True)


def test_counted_array_masks_equal_the_oracle(qwen_vocab, tmp_path):
    s = {"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 99},
               "minItems": 40, "maxItems": 300},
        "tags": {"type": "array", "items": {"enum": ["a", "bc"]}, "maxItems": 65535}},
        "required": ["xs", "tags"]}
    rng = random.Random(5)
    texts = ['{"xs": [' + ",".join(str(rng.randint(0, 99)) for _ in range(n)) + '], "tags": ['
             + ", ".join(rng.choice(['"a"', '"bc"']) for _ in range(m)) + "]}"
             for n, m in ((40, 0), (300, 70), (171, 3))]
    g = Grammar.from_json_schema(s)
    for attempt in range(2):
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert not c.compiled.dwa.budget_exhausted
        assert _walk(c, texts, rng, 23) >= 40
