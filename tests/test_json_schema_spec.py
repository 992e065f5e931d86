"""JSON Schema keywords checked against the 2020-12 specification: valid and
invalid instances per keyword (each also checked with the ``jsonschema``
validator), the ``allOf`` merge of array keywords, unknown keywords and
formats, subschemas that accept nothing, and ``Constraint``'s
``ambiguous=None`` default on schema grammars."""

from __future__ import annotations

import pytest

from test_json_schema import accepts, check, constraint


# --------------------------------------------------------------------------
# allOf merge: items applies beyond the prefixItems of its own schema object
# --------------------------------------------------------------------------

def test_all_of_prefix_items_do_not_shield_sibling_items():
    # items (minimum 5) applies from position 0 of the outer object: 3 fails it
    check({"allOf": [{"prefixItems": [{"minimum": 3}]}], "items": {"minimum": 5}},
          ["[]", "[5]", "[5, 6]"], ["[3, 5]", "[3]", "[4]", "[5, 4]"])
    check({"prefixItems": [{}], "allOf": [{"items": {"type": "integer"}}]},
          ["[1]", "[1, 2]", "[]"], ['["x"]', '[1, "x"]'])


def test_all_of_tuples_of_different_lengths_are_exact():
    s = {"allOf": [{"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
                   {"prefixItems": [{"minimum": 0}, {"maxLength": 2}, {"const": "abc"}]}]}
    check(s, ["[]", "[1]", '[1, "ab"]', '[1, "ab", "abc"]', '[1, "ab", "abc", "zzzz"]'],
          ['["x"]', "[-1]", '[1, "abc"]', '[1, "ab", "abd"]', "[1, 2]", '[1, "ab", "abc", 3]'])


def test_all_of_draft7_items_array_and_additional_items():
    s = {"$schema": "http://json-schema.org/draft-07/schema#",
         "allOf": [{"items": [{"type": "integer"}], "additionalItems": False}],
         "items": {"minimum": 2}}
    check(s, ["[]", "[2]", "[7]"], ["[1]", "[2, 3]", '["a"]'])
