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
