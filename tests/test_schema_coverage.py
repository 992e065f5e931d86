"""benchmarks/schema_coverage.py: instances counted on two small schemas, a refusal recorded."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import schema_coverage  # noqa: E402


def test_coverage_counts_accepted_instances():
    rows = [{"name": "a", "schema": {"type": "object", "properties": {"x": {"type": "integer"}},
                                     "required": ["x"]},
             "valid": ['{"x":1}', '{"x": -20}'], "invalid": ['{"x":"1"}', '{}']},
            {"name": "b", "schema": {"type": "string", "maxLength": 2},
             "valid": ['"ab"'], "invalid": ['"abc"', '3']}]
    recs = schema_coverage.coverage(rows, timeout=60)
    assert [r["ok"] for r in recs] == [True, True]
    assert recs[0]["valid"] == [True, True] and recs[0]["invalid"] == [False, False]
    assert recs[1]["valid"] == [True] and recs[1]["invalid"] == [False, False]
    line = schema_coverage.summary(recs).splitlines()[0]
    assert "refused 0" in line and "valid accepted 3/3" in line and "invalid accepted 0/4" in line


def test_a_refusal_is_recorded_with_its_message():
    rows = [{"name": "bad", "schema": {"type": "string", "pattern": "(a)\\1"}, "valid": [],
             "invalid": []}]
    rec = schema_coverage.coverage(rows, timeout=60)[0]
    assert not rec["ok"] and rec["err"]
    assert "refused 1" in schema_coverage.summary([rec])


def test_key_order_search_finds_the_policy_order_and_keeps_spellings():
    s = {"type": "object", "properties": {"a": {"type": "integer"},
                                          "b": {"type": "object", "properties": {"x": {}, "y": {"type": "number"}}}},
         "required": ["a"]}
    rows = [{"name": "k", "schema": s,
             "valid": ['{"a":1,"b":{"x":0,"y":1e5}}', '{"b":{"y":1e5,"x":[1]},"a":1}', '{"b":{},"a":2}'],
             "invalid": []}]
    rec = schema_coverage.coverage(rows, timeout=60)[0]
    assert rec["valid"] == [True, False, False]
    assert rec["key_order"] == [None, True, True]
    # only the order changes: a number spelled otherwise is not accepted by re-spelling it
    c = schema_coverage_constraint(s)
    assert schema_coverage.some_key_order(c, '{"b":{"y":1e5},"a":1}') is True
    assert schema_coverage.some_key_order(c, '{"b":{"y":"s"},"a":1}') is False
    assert schema_coverage.some_key_order(c, '{"b":{"y":1},"a":1}', budget=2) is None
    line = schema_coverage.summary([rec]).splitlines()[0]
    assert "valid accepted 1/3 as written, 3/3 with the key-order policy (2 in another key order" in line


def schema_coverage_constraint(schema):
    from stackmask import Constraint, Vocab
    from stackmask.grammars.json_schema import convert_schema
    vocab = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])
    return Constraint(convert_schema(schema).grammar, vocab, compile="lazy", cache_dir=False, progress=False)


def test_acceptances_by_the_unique_items_policy_are_told_apart():
    rows = [{"name": "u", "schema": {"type": "array", "items": {"type": "string"}, "uniqueItems": True,
                                     "maxItems": 2},
             "valid": ['["a", "b"]'], "invalid": ['["a", "a"]', '["a", "b", "c"]', '[1]']}]
    rec = schema_coverage.coverage(rows, timeout=60)[0]
    assert rec["ok"] and rec["policies"]
    assert rec["invalid"] == [True, False, False]          # duplicates: the policy
    assert rec["unique_policy"] == [True, False, False]
    line = schema_coverage.summary([rec]).splitlines()[0]
    assert "invalid accepted 1/3 (1 by the uniqueItems policy, 0 otherwise)" in line
