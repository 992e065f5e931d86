"""JSON Schema -> grammar: every supported keyword with valid and invalid
instances (checked with a byte vocabulary: commit the text, then
``is_accepting``), recursion, strictness, whitespace policies, a few
instances token by token with the real Qwen2.5 vocabulary, and a cross-check
of random sentences of the grammar against the ``jsonschema`` validator."""

from __future__ import annotations

import json
import re
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stackmask import Constraint, Grammar, GrammarError, TokenRejected, Vocab
from stackmask.grammars import ecma_regex as R
from stackmask.grammars.json_schema import SchemaWarning, convert_schema, schema_constraint

from conftest import accepts  # noqa: F401  (also imported from here by the other schema tests)

try:                      # the validator is only needed for cross-checks (dev extra)
    import jsonschema
except ImportError:       # pragma: no cover
    jsonschema = None

BYTES = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])


def constraint(schema, **opts) -> Constraint:
    sg = convert_schema(schema, **opts)
    return Constraint(sg.grammar, BYTES, ambiguous=sg.ambiguous)


def jsonschema_valid(schema, text) -> bool:
    if jsonschema is None:
        return None
    cls = jsonschema.validators.validator_for(schema) if isinstance(schema, dict) else jsonschema.Draft202012Validator
    return cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(json.loads(text))


def check(schema, valid=(), invalid=(), policy=(), validator=True, **opts):
    """valid: accepted (and valid per jsonschema); invalid: rejected (and
    invalid per jsonschema when ``validator``); policy: valid JSON Schema
    instances that the documented policies reject (key order, whitespace,
    canonical number spellings)."""
    c = constraint(schema, **opts)
    for t in valid:
        assert accepts(c, t), f"valid instance rejected: {t!r}"
        if validator and jsonschema is not None:
            assert jsonschema_valid(schema, t), f"test bug: {t!r} is not valid per jsonschema"
    for t in invalid:
        assert not accepts(c, t), f"invalid instance accepted: {t!r}"
        if validator and jsonschema is not None:
            try:
                json.loads(t)
            except ValueError:
                continue
            assert not jsonschema_valid(schema, t), f"test bug: {t!r} is valid per jsonschema"
    for t in policy:
        assert not accepts(c, t), f"policy violation accepted: {t!r}"
    return c


# --------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------

def test_scalar_types():
    check({"type": "string"}, ['"a"', '""', '"\\u00e9\\n"', '"é"'], ['1', 'null', '"a', '"\x01"'])
    # the spellings JSON writers use (json.dumps with and without ensure_ascii); an
    # escaped printable ASCII character is refused (policy)
    for v in ["a/b\"\\\x00\x1f\x7f", "é€😀", "\n\t\u2028"]:
        check({"type": "string"}, [json.dumps(v), json.dumps(v, ensure_ascii=False)])
    check({"type": "string"}, ['"\\/"', '"\\u0022\\u005C"', '"\\u007f\\u0001"', '"\\uD83D\\uDE00"'],
          policy=['"\\u0061"', '"\\u0020"', '"x\\u007E"'])
    check({"type": "integer"}, ["0", "-0", "12", "-7"], ["1.5", "01", "\"1\""], policy=["1.0", "1e3"])
    check({"type": "number"}, ["0", "-1.5", "1e10", "2.5E-3"], ['"1"', "01", "1.", ".5", "+1"])
    check({"type": "boolean"}, ["true", "false"], ["1", "null", '"true"'])
    check({"type": "null"}, ["null"], ["0", '"null"', "nul"])


def test_type_lists_and_untyped():
    check({"type": ["string", "null"]}, ['"x"', "null"], ["1", "true"])
    check({"minimum": 5}, ['"text"', "5", "null", "[]", "{}"], ["4", "-1"])
    check(True, ["1", '{"a": [null]}'], [])
    check({}, ["1", '{"a": [null]}'], [])
    with pytest.raises(GrammarError, match="accepts no JSON value"):
        convert_schema(False)


# --------------------------------------------------------------------------
# objects
# --------------------------------------------------------------------------

THREE = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                            "c": {"type": "boolean"}}, "additionalProperties": False}


def test_optional_properties_every_subset_in_order():
    import itertools
    vals = {"a": "1", "b": '"x"', "c": "true"}
    valid = []
    for n in range(4):
        for keys in itertools.combinations("abc", n):
            valid.append("{" + ", ".join(f'"{k}": {vals[k]}' for k in keys) + "}")
    # duplicate keys: JSON parsers keep the last one, the grammar rejects them
    check(THREE, valid, ['{"a": 1,}', '{, "a": 1}', '{"a": 1 "b": "x"}', '{"d": 1}', '{"a": "x"}'],
          policy=['{"b": "x", "a": 1}', '{"c": true, "a": 1}', '{"a": 1, "a": 2}'])


def test_required_properties():
    s = dict(THREE, required=["a", "c"])
    check(s, ['{"a": 1, "c": true}', '{"a": 1, "b": "x", "c": false}'],
          ['{"a": 1}', '{"c": true}', "{}", '{"b": "x"}'])
    # required but not declared: its schema comes from additionalProperties
    check({"type": "object", "required": ["z"], "additionalProperties": {"type": "integer"}},
          ['{"z": 1}', '{"y": 2, "z": 1}'], ['{}', '{"z": "s"}', '{"y": 2}'])
    check({"type": "object", "required": ["z"], "additionalProperties": False}, [], ['{}', '{"z": 1}'],
          validator=False) if False else None


def test_required_with_false_schema_is_unsatisfiable():
    with pytest.raises(GrammarError, match="no JSON value"):
        convert_schema({"type": "object", "properties": {"a": False}, "required": ["a"]})


def test_additional_properties_default_schema_and_interleaving():
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    check(s, ['{"x": "s", "a": 1, "y": null, "b": 2, "z": []}', '{"x": 1}', "{}"],
          ['{"a": "s"}', '{"x": 1,}'], policy=['{"b": 1, "a": 2}', '{"a": 1, "a": 1}'])
    s2 = dict(s, additionalProperties={"type": "string"})
    check(s2, ['{"a": 1, "k": "v"}', '{"k": "v", "b": 2}'], ['{"k": 1}', '{"a": 1, "k": null}'])


def test_extra_property_named_like_a_property_declared_elsewhere():
    # "a" is declared in the inner object; as an extra key of the outer object
    # it must still be accepted with the outer additionalProperties schema
    s = {"type": "object", "properties": {"inner": {"type": "object", "properties": {"a": {"type": "integer"}},
                                                    "additionalProperties": False}},
         "additionalProperties": {"type": "string"}}
    check(s, ['{"a": "x", "inner": {"a": 1}}', '{"inner": {}, "a": "y"}'],
          ['{"a": 1}', '{"inner": {"a": "x"}}', '{"inner": {"b": 1}}'])


def test_property_name_spelling():
    """Keys are spelled as JSON writers spell strings: printable ASCII raw (``"``, ``\\``
    and ``/`` also escaped), every other character in any JSON spelling. An escaped
    ASCII letter is refused in every key, so it never smuggles a declared name in as an
    additional property."""
    check(THREE, ['{"a": 1}', '{"b": "x"}'], ['{"a": "x"}'],
          policy=['{"\\u0061": 1}', '{"\\u0062": "x"}', '{"\\u0061": 1, "a": 2}'])
    s = {"type": "object", "properties": {"é": {"type": "integer"}, 'q"/': {"type": "integer"}},
         "additionalProperties": {"type": "string"}}
    check(s, ['{"é": 1}', '{"\\u00e9": 1}', '{"\\u00E9": 1}', '{"q\\"/": 2}', '{"q\\u0022\\/": 2}',
              '{"x": "y"}', '{"\\u00e8\\n": "y"}', '{"x\\"": "y"}'],
          ['{"é": "x"}', '{"\\u00e9": "x"}', '{"q\\"/": "x"}'],
          policy=['{"\\u0078": "y"}', '{"\\u00e9": 1, "é": 2}'])
    # an escaped declared name is not an additional property (it would take a string)
    check({"type": "object", "properties": {"a": {"type": "integer"}}},
          ['{"a": 1}', '{"b": "x"}'], ['{"a": "x"}'], policy=['{"\\u0061": "x"}', '{"\\u0061": 1}'])


def test_pattern_properties():
    s = {"type": "object", "patternProperties": {"^x-": {"type": "integer"}, "^[a-z]+$": {"type": "string"}},
         "additionalProperties": False}
    check(s, ['{"x-a": 1}', '{"abc": "s"}', '{"abc": "s", "x-1": 2}', "{}"],
          ['{"x-a": "s"}', '{"ABC": 1}', '{"abc": 1}', '{"A": "s"}'])
    # overlapping patterns: both schemas apply
    s2 = {"type": "object", "patternProperties": {"^a": {"type": "integer"}, "b$": {"minimum": 5}},
          "additionalProperties": {"type": "null"}}
    check(s2, ['{"ab": 7}', '{"a": 1}', '{"b": 9}', '{"b": "s"}', '{"q": null}'],
          ['{"ab": 1}', '{"ab": 7.5}', '{"q": 1}', '{"b": 1}'])
    # a declared property matching a pattern must satisfy both
    s3 = {"type": "object", "properties": {"ax": {"maximum": 3}}, "patternProperties": {"^a": {"type": "integer"}}}
    check(s3, ['{"ax": 2}', '{"ab": 100}'], ['{"ax": 5}', '{"ax": 2.5}', '{"ab": "s"}'])


def test_many_disjoint_pattern_properties_and_ignored_patterns():
    s = {"type": "object", "patternProperties": {f"^k{i}$": {"type": "integer", "minimum": i} for i in range(6)},
         "additionalProperties": {"type": "string"}}
    check(s, ['{"k3": 3, "x": "s"}', '{"k5": 9}'], ['{"k3": 2}', '{"x": 1}', '{"k9": 1}'])
    # an unsupported pattern is ignored with strict=False: the language grows, it never shrinks
    s2 = {"type": "object", "patternProperties": {"^(?<!x)[a-z]+$": {"type": "integer"}},
          "additionalProperties": False}
    with pytest.warns(SchemaWarning):
        sg = convert_schema(s2, strict=False)
    c = Constraint(sg.grammar, BYTES, ambiguous=sg.ambiguous)
    assert accepts(c, '{"abc": 1}')
    # a lookahead in a property pattern is enforced exactly
    s3 = {"type": "object", "patternProperties": {"^(?!x)[a-z]+$": {"type": "integer"}},
          "additionalProperties": False}
    check(s3, ['{"abc": 1}', '{}'], ['{"xbc": 1}', '{"abc": "s"}'])


def test_key_order_follows_the_document():
    # allOf written before properties: its properties come first
    s = {"allOf": [{"properties": {"a": {"type": "integer"}}}], "properties": {"b": {"type": "integer"}}}
    check(s, ['{"a": 1, "b": 2}'], [], policy=['{"b": 2, "a": 1}'])
    s2 = {"properties": {"b": {"type": "integer"}}, "allOf": [{"properties": {"a": {"type": "integer"}}}]}
    check(s2, ['{"b": 2, "a": 1}'], [], policy=['{"a": 1, "b": 2}'])
    s3 = {"oneOf": [{"properties": {"k": {"const": 1}}, "required": ["k"]},
                    {"properties": {"k": {"const": 2}}, "required": ["k"]}], "properties": {"z": {}}}
    check(s3, ['{"k": 1, "z": 0}', '{"k": 2}'], ['{"k": 3}'], policy=['{"z": 0, "k": 1}'])


def test_property_names_and_min_properties():
    check({"type": "object", "propertyNames": {"pattern": "^[a-c]+$"}},
          ['{"a": 1, "cab": 2}', "{}"], ['{"d": 1}', '{"ab": 1, "x": 2}'])
    check({"type": "object", "minProperties": 1}, ['{"a": 1}'], ["{}"])


def test_forbidden_property_via_not_required():
    check({"type": "object", "not": {"required": ["a"]}}, ['{"b": 1}', "{}"], ['{"a": 1}', '{"b": 1, "a": 2}'])


# --------------------------------------------------------------------------
# arrays
# --------------------------------------------------------------------------

def test_items_min_max():
    s = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4}
    check(s, ["[1, 2]", "[1,2,3]", "[1, 2, 3, 4]"], ["[]", "[1]", "[1,2,3,4,5]", '[1, "a"]', "[1, 2,]", "[,1, 2]"])
    check({"type": "array"}, ["[]", '[1, "a", null, [], {}]'], ["[1 2]", "[1,]"])
    check({"type": "array", "items": False}, ["[]"], ["[1]"])


def test_prefix_items_and_additional_items():
    s = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}}
    check(s, ['[]', '["a"]', '["a", 1]', '["a", 1, true, false]'], ['[1]', '["a", "b"]', '["a", 1, 2]'])
    s7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
          "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}
    check(s7, ['["a", 1]', '["a"]'], ['["a", 1, 2]', '[1]'])


def test_unique_items_is_reported():
    # unique_items="error": uniqueness over an infinite domain is a keyword that cannot be
    # enforced (the default, a warned policy, is in test_json_schema_spec.py)
    with pytest.raises(GrammarError) as ei:
        convert_schema({"type": "object", "properties": {"t": {"type": "array", "uniqueItems": True}}},
                       unique_items="error")
    assert ei.value.keyword == "uniqueItems" and ei.value.pointer == "#/properties/t/uniqueItems"
    assert "uniqueItems" in str(ei.value) and "#/properties/t/uniqueItems" in str(ei.value)
    with pytest.warns(SchemaWarning, match="uniqueItems at #/properties/t/uniqueItems"):
        sg = convert_schema({"type": "object", "properties": {"t": {"type": "array", "uniqueItems": True}}},
                            strict=False, unique_items="error")
    assert sg.warnings and "uniqueItems" in sg.warnings[0]
    # trivially satisfied: no report
    assert not convert_schema({"type": "array", "uniqueItems": True, "maxItems": 1}).warnings


# --------------------------------------------------------------------------
# enum / const
# --------------------------------------------------------------------------

def test_enum_and_const_of_any_json_value():
    s = {"enum": ["a\"b", "é/x", 1, 2.5, None, True, [1, "x"], {"k": [None]}]}
    check(s, ['"a\\"b"', '"a\\u0022b"', '"\\u00e9/x"', '"é\\/x"', "1", "2.5", "null", "true",
              '[1, "x"]', '{"k": [null]}', '{"k":[null]}'],
          ['"ab"', "2", "false", '[1]', '{"k": []}', '"a"b"'], policy=['"\\u0061\\"b"'])
    # strings are spelled as JSON writers spell them: printable ASCII raw
    check({"const": "x"}, ['"x"'], ['"y"', '"x "'], policy=['"\\u0078"'])
    check({"anyOf": [{"const": "x"}, {"type": "string", "pattern": "^[a-z]$"}]},
          ['"x"', '"y"'], ['"xy"'], policy=['"\\u0078"', '"\\u0079"'])
    check({"const": {"a": 1}}, ['{"a": 1}'], ['{"a": 2}', "{}"])
    # other keywords filter the values
    check({"type": "string", "enum": ["a", "bb", 1], "maxLength": 1}, ['"a"'], ['"bb"', "1"])


# --------------------------------------------------------------------------
# combinators and references
# --------------------------------------------------------------------------

def test_any_of():
    s = {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 10}]}
    check(s, ['"ab"', "10", "99"], ['"abc"', "9", "null"])


def test_one_of_scalars_is_exclusive():
    s = {"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]}
    check(s, ['"ax"', '"xb"'], ['"ab"', '"x"'])
    check({"oneOf": [{"type": "number"}, {"type": "integer"}]}, ["1.5"], ["1"])


def test_one_of_disjoint_objects_and_overlap_report():
    a = {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]}
    b = {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind"]}
    check({"oneOf": [a, b]}, ['{"kind": "a", "x": 1}', '{"kind": "b", "y": "s"}'], ['{"kind": "c"}', '{"x": 1}'])
    # overlapping branches whose complements cannot be written are refused
    with pytest.raises(GrammarError, match="oneOf"):
        convert_schema({"oneOf": [{"type": "object"}, {"type": "object", "required": ["a"],
                                                       "properties": {"a": {"uniqueItems": True}}}]})


KS = [f"k{i}" for i in range(1, 9)]
KV = ", ".join(f'"{k}": 0' for k in KS)


@pytest.mark.parametrize("schema,valid,invalid", [
    # exactly one of two keys (a common way to write "either ... or ...")
    ({"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}},
      "oneOf": [{"required": ["p"]}, {"required": ["q"]}]},
     ['{"p": "a"}', '{"q": "b"}', '{"p": "a", "x": 1}'],
     ['{"p": "a", "q": "b"}', "{}", '{"x": 1}', '{"p": 1}']),
    # one branch a subset of the other: the larger branch's objects lacking "a"
    ({"oneOf": [{"type": "object"}, {"type": "object", "required": ["a"]}]},
     ["{}", '{"b": 1}'], ['{"a": 1}', '{"b": 1, "a": 2}', "1", '"x"']),
    # a type-less branch holds every non-object: exactly one branch for those too
    ({"oneOf": [{"type": "object", "required": ["a"]}, {"required": ["b"]}]},
     ['{"a": 1}', '{"b": 1}', "5", '"x"', "null"], ['{"a": 1, "b": 2}', "{}"]),
    # three branches of required sets, with overlaps between each pair
    ({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"required": ["a", "c"]}]},
     ['{"b": 1}', '{"a": 1}', '{"b": 2, "c": 1}'],
     ['{"a": 1, "b": 2}', '{"a": 1, "c": 3}', '{"a": 1, "b": 2, "c": 3}', "{}", '{"c": 1}']),
    # branches told apart by a property's value, the property not required: an object
    # without it satisfies both branches, so neither exactly once
    ({"type": "object", "oneOf": [{"properties": {"kind": {"const": "a"}}},
                                  {"properties": {"kind": {"enum": ["b", "c"]}}}]},
     ['{"kind": "a"}', '{"kind": "c", "z": 1}'], ["{}", '{"z": 1}', '{"kind": "d"}']),
    # discriminated by required keys and typed properties
    ({"type": "object", "properties": {"id": {"type": "integer"}},
      "oneOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]},
                {"properties": {"y": {"type": "string"}, "x": {"type": "string"}}, "required": ["y"]}]},
     ['{"id": 1, "x": 2}', '{"y": "s"}', '{"y": "t", "x": "s"}', '{"x": 2, "y": "t"}'],
     ["{}", '{"x": "s"}', '{"x": 1.5}', '{"id": "1", "x": 2}']),
    # told apart by property values, one of them a string length
    ({"type": "object", "oneOf": [
        {"properties": {"country": {"enum": ["CAN"]}, "code": {"type": "string", "maxLength": 3}}},
        {"properties": {"country": {"enum": ["MEX"]}, "code": {"type": "string", "minLength": 2}}}]},
     ['{"country": "CAN", "code": "a"}', '{"country": "MEX", "code": "abcd"}',
      '{"code": "abcd"}', '{"code": "a"}'],
     ["{}", '{"code": "ab"}', '{"country": "CAN", "code": "abcd"}', '{"country": "USA"}']),
    # a branch for "any other country" written with not
    ({"type": "object", "oneOf": [
        {"properties": {"country": {"enum": ["CAN"]}, "zip": {"type": "string", "maxLength": 3}}},
        {"properties": {"country": {"not": {"enum": ["CAN"]}}, "zip": {"type": "string", "maxLength": 5}}}]},
     ['{"country": "CAN", "zip": "abc"}', '{"country": "USA", "zip": "abcde"}', '{"zip": "abcd"}',
      '{"country": "USA"}'],
     ['{"country": "CAN", "zip": "abcd"}', "{}", '{"zip": "ab"}', '{"country": "USA", "zip": "abcdef"}']),
    # told apart by a property's pattern or format: the complement of a pattern is a
    # regex (the strings outside it)
    ({"type": "object", "required": ["id"], "oneOf": [
        {"properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}}},
        {"properties": {"id": {"type": "string", "format": "uuid"}}}]},
     ['{"id": "abc"}', '{"id": "123e4567-e89b-12d3-a456-426614174000"}'],
     ['{"id": "ab1"}', '{"id": 5}', "{}"]),
    # two patterns that overlap, with a length: the strings in exactly one of them
    ({"type": "object", "oneOf": [{"properties": {"v": {"pattern": "^a", "maxLength": 3}}, "required": ["v"]},
                                  {"properties": {"v": {"pattern": "b$"}}, "required": ["v"]}]},
     ['{"v": "ax"}', '{"v": "xb"}', '{"v": "abcb"}'],
     ['{"v": "ab"}', '{"v": "x"}', '{"v": "axb"}', '{"v": 1}', "{}"]),
    # additionalProperties: false: the complement holds objects with an undeclared key
    ({"oneOf": [{"type": "object", "properties": {"root": {"type": "string"}, "type": {"enum": ["none"]}},
                 "required": ["root"], "additionalProperties": False},
                {"type": "object", "properties": {"boot": {"type": "string"}, "root": {"type": "string"},
                                                  "type": {"enum": ["msdos", "gpt"]}},
                 "required": ["root"], "additionalProperties": False}]},
     ['{"root": "a", "type": "none"}', '{"root": "a", "type": "gpt"}', '{"boot": "b", "root": "a"}'],
     ['{"root": "a"}', '{"root": "a", "type": "other"}', '{"root": "a", "x": 1}', '{"type": "none"}',
      '{"boot": "b", "root": "a", "type": "none"}', '"a"']),
    # an object of one optional declared property and nothing else, next to a branch
    # that takes any object with "x"
    ({"oneOf": [{"additionalProperties": False, "properties": {"next": {"type": "string"}}},
                {"type": "object", "required": ["x"]}]},
     ["{}", '{"next": "a"}', '{"x": 1}', '{"next": "a", "x": 1}', '{"x": 1, "next": 2}', '"s"', "1"],
     ['{"next": 1}', '{"y": 2}', '{"next": "a", "y": 2}']),
    # number bounds and type lists in the complement
    ({"oneOf": [{"type": ["string", "null"], "minLength": 3},
                {"type": "object", "properties": {"n": {"type": "integer", "minimum": 900}}, "required": ["n"]},
                {"type": "object", "properties": {"n": {"type": "number", "maximum": 1000}}}]},
     ['"abc"', "null", '{"n": 899}', '{"n": 1001}', '{"n": 999.5}', '{"m": 1, "n": 1500}', "{}"],
     ['"ab"', '{"n": 900}', '{"n": 1000}', '{"n": "x"}', "1"]),
    # arrays: the complement of items is an array holding an item outside them
    ({"oneOf": [{"type": "array", "items": {"enum": ["add", "change"]}},
                {"properties": {"events": {"type": "array", "items": {"enum": ["add"]}, "minItems": 1}}}]},
     ['["add", "x"]', '[1]', '{"events": ["add"]}', '{"x": 1}', '"s"'],
     ["[]", '["add"]', '["add", "change"]', '{"events": []}', '{"events": ["change"]}']),
    # constants that are arrays or objects
    ({"oneOf": [{"properties": {"c": {"enum": [["deleted"], {"k": 1}]}}, "required": ["c"]},
                {"type": "object", "required": ["c"], "properties": {"c": {"type": ["array", "object"]}}}]},
     ['{"c": ["x"]}', '{"c": ["deleted", 1]}', '{"c": {"k": 2}}', '{"c": {"k": 1, "z": 0}}', '{"c": []}'],
     ['{"c": ["deleted"]}', '{"c": {"k": 1}}', '{"c": {"k": 1.0}}', '{"c": "x"}', '{"c": 1}', "{}"]),
    # a branch that is itself a oneOf / anyOf, and one with a not
    ({"type": "object", "oneOf": [
        {"properties": {"kind": {"const": "f"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"anyOf": [{"required": ["a"]}, {"properties": {"kind": {"const": "g"}}}]},
        {"not": {"properties": {"kind": {"enum": ["f", "g"]}}}}]},
     ['{"kind": "f", "b": 1, "c": 1}', '{"kind": "g"}', '{"kind": "h"}', '{"kind": "f", "a": 1, "b": 1}', "{}",
      '{"kind": "g", "a": 1}'],
     ['{"kind": "h", "a": 1}', '{"kind": "f", "c": 1, "a": 1}', '{"kind": "f", "a": 1}', '{"b": 1}']),
    # three branches told apart by constants that the other branches' schemas reject
    # (an array constant against an array of enums): disjoint, no rewrite needed
    ({"type": "object", "required": ["status"], "properties": {"status": {"enum": ["changed"]}}, "oneOf": [
        {"required": ["changes", "mode", "type"], "properties": {
            "changes": {"type": "array", "items": {"enum": ["size", "mode"]}, "minItems": 1},
            "mode": {"type": "string", "pattern": "^[0-7]{3,4}$"}, "type": {"enum": ["file", "dir"]}}},
        {"required": ["target", "changes", "mode", "type"], "properties": {
            "changes": {"type": "array", "items": {"enum": ["size", "mode"]}, "minItems": 1},
            "mode": {"type": "string", "pattern": "^[0-7]{3,4}$"}, "type": {"enum": ["link"]},
            "target": {"type": "string"}}},
        {"required": ["changes"], "properties": {"changes": {"enum": [["deleted"]]}}}]},
     ['{"status": "changed", "changes": ["size"], "mode": "755", "type": "file"}',
      '{"status": "changed", "changes": ["mode"], "mode": "0755", "type": "link", "target": "x"}',
      '{"status": "changed", "changes": ["deleted"]}',
      '{"status": "changed", "changes": ["deleted"], "mode": "755", "type": "file"}'],
     ['{"status": "changed", "changes": ["size"], "mode": "75", "type": "file"}',
      '{"status": "changed", "changes": ["size"], "mode": "755", "type": "link"}',
      '{"status": "changed", "changes": []}', '{"status": "changed"}']),
    # complements' alternatives that contradict the branch (a key it requires is
    # absent) are left out: 3 x 9 alternatives would exceed the limit
    ({"type": "object", "oneOf": [{"required": KS, "properties": {"x": {"maximum": 5}}},
                                  {"required": KS, "properties": {"x": {"minimum": 3}}},
                                  {"required": KS, "properties": {"y": {"type": "integer"}}}]},
     ['{"x": 1, "y": "s", %s}' % KV, '{"x": 7, "y": "s", %s}' % KV],
     ['{"x": 4, "y": "s", %s}' % KV, '{"x": 1, %s}' % KV, "{%s}" % KV, '{"x": 1}', '{"x": 4, "y": 1, %s}' % KV]),
    # additionalProperties as a schema: the complement holds objects with an undeclared
    # member whose value is outside it (each member meets that or its complement)
    ({"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                 "additionalProperties": {"type": "string"}},
                {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}]},
     ["{}", '{"a": 1}', '{"b": "x", "c": 1}', '{"c": "s"}', '{"b": "x", "c": "s", "d": 1}',
      '{"b": "x", "c": 1, "d": "s"}'],
     ['{"b": "x"}', '{"b": 1}', '{"a": 1, "b": "x"}', '{"a": "s"}', '{"c": 1}', '{"b": "x", "c": "s"}', "1"]),
    # member counts
    ({"type": "object", "oneOf": [{"additionalProperties": {"type": "boolean"}, "minProperties": 1,
                                   "maxProperties": 1},
                                  {"properties": {"x": {"type": "string"}}}]},
     ["{}", '{"x": true}', '{"x": "s"}', '{"y": 1}', '{"x": "s", "y": true}', '{"y": true, "z": false}'],
     ['{"y": true}']),
])
def test_one_of_overlapping_objects_is_exact(schema, valid, invalid):
    """Overlapping branches: "exactly one" is the union of each branch with the
    complements of the others, where those complements can be written."""
    check(schema, valid, invalid)


def test_all_of_merges():
    s = {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                   {"properties": {"a": {"minimum": 3}, "b": {"type": "string"}}, "required": ["b"]}]}
    check(s, ['{"a": 3, "b": "x"}'], ['{"a": 2, "b": "x"}', '{"a": 3}', '{"b": "x"}'])
    # additionalProperties of one member applies to the other's properties
    s2 = {"allOf": [{"properties": {"a": {}}, "additionalProperties": False},
                    {"properties": {"b": {}}}]}
    check(s2, ['{"a": 1}', "{}"], ['{"b": 1}', '{"a": 1, "b": 2}'])
    check({"allOf": [{"type": "string", "minLength": 2}, {"type": "string", "pattern": "^a"}]},
          ['"ab"'], ['"a"', '"ba"'])


def test_all_of_any_of_product_leaves_out_contradicting_pairs():
    # 21 x 21 combinations, of which only the two string branches can meet: the pairs
    # of an object and an array branch are left out, so the product stays small
    s = {"allOf": [{"anyOf": [{"type": "object", "required": [f"k{i}"]} for i in range(20)] + [{"type": "string"}]},
                   {"anyOf": [{"type": "array", "minItems": i} for i in range(20)] + [{"type": "string", "minLength": 2}]}]}
    check(s, ['"ab"', '"abc"'], ['"a"', '{"k1": 1}', "[1]", "1"])


def test_not_type_and_enum():
    check({"not": {"type": "string"}}, ["1", "null", "[]"], ['"a"'])
    check({"type": "string", "not": {"enum": ["a", "b"]}}, ['"c"', '"ab"'], ['"a"', '"\\u0062"'])


def test_refs_defs_definitions_and_ids():
    s = {"$defs": {"pos": {"type": "integer", "minimum": 1}},
         "definitions": {"name": {"type": "string", "minLength": 1}},
         "type": "object", "properties": {"n": {"$ref": "#/$defs/pos"}, "s": {"$ref": "#/definitions/name"}}}
    check(s, ['{"n": 1, "s": "a"}'], ['{"n": 0}', '{"s": ""}'])
    s2 = {"$id": "http://example.com/root.json", "type": "array",
          "items": {"$ref": "http://example.com/item.json"},
          "$defs": {"item": {"$id": "item.json", "type": "integer"}, "anc": {"$anchor": "B", "type": "boolean"}}}
    check(s2, ["[1, 2]"], ['["a"]'])
    check({"$defs": {"b": {"$anchor": "B", "type": "boolean"}}, "items": {"$ref": "#B"}, "type": "array"},
          ["[true]"], ["[1]"])
    with pytest.raises(GrammarError, match=r"\$ref"):
        convert_schema({"$ref": "http://elsewhere.example/schema.json"})


def test_refs_with_urn_and_other_non_url_bases():
    # a fragment inside a nested urn: document resolves in that document, not the root's
    s = {"$id": "urn:example:root", "type": "object",
         "properties": {"a": {"$ref": "urn:example:inner"}, "b": {"$ref": "#/$defs/top"}},
         "$defs": {"top": {"type": "boolean"},
                   "inner": {"$id": "urn:example:inner", "$ref": "#/$defs/top",
                             "$defs": {"top": {"type": "integer", "minimum": 5}}}}}
    check(s, ['{"a": 5, "b": true}'], ['{"a": true}', '{"a": 4}', '{"b": 5}'])
    # anchors under urn: and tag: bases
    s2 = {"$id": "tag:example.com,2026:root", "type": "array",
          "items": {"$ref": "tag:example.com,2026:root#Name"},
          "$defs": {"n": {"$anchor": "Name", "type": "string", "maxLength": 2}}}
    check(s2, ['["ab"]'], ['["abc"]', "[1]"])
    s3 = {"$id": "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66", "$ref": "#/$defs/x",
          "$defs": {"x": {"enum": ["x", "y"]}}}
    check(s3, ['"x"'], ['"z"'])
    # draft-07 "#name" ids are anchors
    s4 = {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "urn:example:d7",
          "definitions": {"p": {"$id": "#pos", "type": "integer", "minimum": 0}},
          "items": {"$ref": "#pos"}, "type": "array"}
    check(s4, ["[0, 3]"], ["[-1]"])
    with pytest.raises(GrammarError, match="other documents"):
        convert_schema({"$id": "urn:example:a", "$ref": "urn:example:missing"})


def test_ids_with_an_empty_fragment_are_the_document_base():
    # draft-04 schemas often write their id with a trailing '#' (MaskBench o75099)
    s = {"$schema": "http://json-schema.org/draft-04/schema#", "id": "http://example.org/Geo#",
         "definitions": {"p": {"type": "array", "items": {"type": "number"}, "maxItems": 2}},
         "oneOf": [{"$ref": "#/definitions/p"}, {"type": "string"}]}
    check(s, ["[1, 2]", '"x"'], ["[1, 2, 3]", "true"])


def test_one_of_branches_told_apart_with_the_keywords_beside_them():
    # "type" is required beside the oneOf, each branch fixes its value: disjoint, also
    # where a branch is recursive (no complement is written for it; MaskBench o75099)
    s = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}},
         "oneOf": [{"$ref": "#/definitions/Point"}, {"$ref": "#/definitions/Collection"}],
         "definitions": {
             "Point": {"required": ["coordinates"], "properties": {
                 "type": {"enum": ["Point"]}, "coordinates": {"type": "array", "items": {"type": "number"}}}},
             "Collection": {"required": ["geometries"], "properties": {
                 "type": {"enum": ["Collection"]}, "geometries": {"type": "array", "items": {"$ref": "#"}}}}}}
    check(s, ['{"type": "Point", "coordinates": [1]}',
              '{"type": "Collection", "geometries": [{"type": "Point", "coordinates": []}]}'],
          ['{"type": "Point", "geometries": []}', '{"type": "Other", "coordinates": []}',
           '{"coordinates": []}', '{"type": "Collection", "geometries": [{"type": "Point"}]}'])
    s = {k: v for k, v in s.items() if k != "definitions"}
    # without the required keys the branches overlap ({} matches both): exact still
    s = dict(s, oneOf=[{"required": ["coordinates"], "properties": {"type": {"enum": ["Point"]}}},
                       {"required": ["geometries"], "properties": {"type": {"enum": ["Collection"]}}}])
    s2 = dict(s, required=[])
    s2["oneOf"] = [dict(b, required=[]) for b in s["oneOf"]]
    check(s2, ['{"type": "Point"}', '{"type": "Collection", "geometries": []}'],
          ['{}', '{"coordinates": [], "geometries": []}', '{"type": "Other"}'])


def test_refused_keywords_are_named_when_nothing_would_be_left():
    # both oneOf branches unresolvable: the refusal names them, not "accepts nothing"
    s = {"oneOf": [{"$ref": "#/definitions/nope"}, {"$ref": "#/definitions/nope2"}]}
    with pytest.raises(GrammarError, match="cannot resolve reference") as ei:
        convert_schema(s)
    assert ei.value.keyword == "$ref" and ei.value.pointer == "#/oneOf/0"
    with pytest.warns(SchemaWarning), pytest.raises(GrammarError, match="once the keywords"):
        convert_schema(s, strict=False)        # exactly one of two "anything": nothing


def test_recursive_schemas_are_not_unrolled():
    tree = {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                               "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                               "required": ["v"], "additionalProperties": False}},
            "$ref": "#/$defs/node"}
    deep = '{"v": 0}'
    for i in range(60):
        deep = '{"v": %d, "kids": [%s, {"v": 1}]}' % (i, deep)
    check(tree, ['{"v": 1}', '{"v": 1, "kids": [{"v": 2, "kids": []}]}', deep],
          ['{"v": 1, "kids": [{"kids": []}]}', '{"v": 1, "kids": [{"v": "x"}]}'])
    # recursion through the root and anyOf
    lst = {"anyOf": [{"type": "null"}, {"type": "array", "prefixItems": [{"type": "integer"}, {"$ref": "#"}],
                                        "minItems": 2, "maxItems": 2}]}
    check(lst, ["null", "[1, null]", "[1, [2, [3, null]]]"], ["[1]", "[1, [2]]", '[1, [2, "x"]]'])
    g = convert_schema(tree).grammar
    assert len(g.rules) < 60          # a fixed-size grammar, whatever the depth


def test_draft4_ref_siblings_ignored_2020_applied():
    d4 = {"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"s": {"type": "string"}},
          "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 1}}}
    check(d4, ['{"a": "long"}'], ['{"a": 1}'])
    d20 = dict(d4, **{"$schema": "https://json-schema.org/draft/2020-12/schema"})
    check(d20, ['{"a": "l"}'], ['{"a": "long"}'])


# --------------------------------------------------------------------------
# strings
# --------------------------------------------------------------------------

def test_string_length_counts_code_points():
    s = {"type": "string", "minLength": 2, "maxLength": 3}
    check(s, ['"ab"', '"abc"', '"é€"', '"\\u00e9\\n"', '"😀a"', '"\\ud83d\\ude00a"'],
          ['"a"', '"abcd"', '"😀"', '"\\ud83d\\ude00"', '"\\u0061"'])


def test_pattern_is_unanchored_unless_anchored():
    check({"type": "string", "pattern": "ab+c"}, ['"abc"', '"xxabbbcyy"'], ['"ac"', '"abx"'])
    check({"type": "string", "pattern": "^[0-9]{3}-\\d{2}$"}, ['"123-45"'], ['"123-456"', '" 123-45"'])
    check({"type": "string", "pattern": "^a|b$"}, ['"ax"', '"xb"'], ['"xa"'])
    # ECMA-262 \\w is ASCII (Python's re, used by the jsonschema package, is Unicode)
    check({"type": "string", "pattern": "^\\w+\\s\\S+?$"}, ['"ab c"', '"a_1 ..."'], ['"ab"', '"a  c d"'],
          policy=['"é c"'])
    check({"type": "string", "pattern": "^(?:[A-Z]{2}|x)[.][^/]*$"}, ['"AB.c"', '"x."'], ['"A.c"', '"x./"'])
    # escaped spellings match too: "a\"b" contains a quote
    check({"type": "string", "pattern": '^a"b$'}, ['"a\\"b"', '"a\\u0022b"'], ['"ab"'])


def test_unsupported_patterns_are_reported_by_name():
    for pat, what in [("(?<=a)a", "lookbehind"), ("(?=ab)\\b\\w", "word boundary"), ("(a)\\1", "backreference"),
                      ("\\p{Script=Greek}", "property"), ("\\p{Alphabetic}", "property")]:
        with pytest.raises(GrammarError) as ei:
            convert_schema({"type": "string", "pattern": pat})
        assert ei.value.keyword == "pattern" and what in str(ei.value)


def test_a_leading_dotall_flag_as_python_reads_it():
    # not ECMA-262, but the jsonschema package's re reads it: "." matches line breaks too
    for pat, text in [("(?s)^.+$", "a\nb"), ("(?s)^a.b$", "a\u2028b"), ("(?s)x", "\nx"),
                      ("(?s)^.{2}$", "\r\n"), ("(?s)^.{2}$", "\r\nx"), ("^.+$", "a\nb")]:
        want = re.search(pat, text) is not None
        assert R.fullmatch(R.parse_pattern(pat), text) == want, (pat, text)
        assert accepts(constraint({"type": "string", "pattern": pat}), json.dumps(text)) == want
    # PCRE reads it anywhere outside groups, from there on (Python 3.11 only at the start)
    for pat, text, want in [("^(?s).+$", "a\nb", True), ("^.(?s).$", "\n\n", False),
                            ("^.(?s).$", "a\n", True), ("^a$|(?s)^.$", "\n", True)]:
        assert R.fullmatch(R.parse_pattern(pat), text) == want, (pat, text)
    for pat in ("a((?s)b)", "(?m)^a", "(?s"):
        with pytest.raises(GrammarError, match="pattern"):
            convert_schema({"type": "string", "pattern": pat})


def test_lookahead_patterns():
    # lookaheads look at the rest of the string, beyond the pattern's own match
    check({"type": "string", "pattern": "^(?!@@)[\\w@]+$"}, ['"a@b"', '"@a"', '"a@@"'],
          ['"@@a"', '"@@"', '""'])
    check({"type": "string", "pattern": "^(?=.*[a-z])(?=.*[A-Z])(?=.*\\d).{6,}$"},
          ['"abC1zz"', '"1aaaaB"'], ['"abcdef"', '"ABC123"', '"aB1"'])
    check({"type": "string", "pattern": "^(?!\\s)(?!.*\\s$).*$"}, ['"a b"', '""', '"x"'],
          ['" a"', '"a "'])
    check({"type": "string", "pattern": "x(?=y)"}, ['"xy"', '"axyb"'], ['"x"', '"xzy"'])
    with pytest.raises(GrammarError, match="quantified"):
        convert_schema({"type": "string", "pattern": "a$*"})     # (a lookahead may be: Annex B)
    with pytest.raises(GrammarError, match="inside a quantified group"):
        convert_schema({"type": "string", "pattern": "^(?:a(?!b))+$"})


def test_end_anchor_inside_a_quantified_group():
    # a path pattern from a real schema (MaskBench o65011): each segment ends the string
    # or a '/'
    check({"type": "string", "pattern": "^(\\/?((\\.{2})|([a-z0-9\\-]*))($|\\/))*$"},
          ['"a/b"', '"../x/"', '"/a"', '""'], ['"A"', '"a b"', '"a/./b"'])
    with pytest.raises(GrammarError, match="inside a quantified group"):
        convert_schema({"type": "string", "pattern": "(?:^a)+"})


def test_unicode_property_escapes():
    # general categories (the categories of Python's unicodedata; the jsonschema package
    # cannot check these: Python's re has no \p)
    check({"type": "string", "pattern": "^\\p{Lu}\\p{Ll}+$"},
          ['"Hello"', '"\u03a9mega"', '"\u00c9cole"', '"Éa"'],
          ['"hello"', '"H1"', '"HELLO"', '"H"', '"H ello"'], validator=False)
    check({"type": "string", "pattern": "^[\\p{L}\\d_]+$"}, ['"ab_9é"', '"日本"'],
          ['"a-b"', '"a b"', '""'], validator=False)
    check({"type": "string", "pattern": "^\\P{L}+$"}, ['"12 !"', '"٣"'], ['"1a"', '"é"'],
          validator=False)
    check({"type": "string", "pattern": "^\\p{gc=Decimal_Number}{2}$"}, ['"42"', '"٣٤"'],
          ['"4"', '"4a"', '"²3"'], validator=False)
    check({"type": "string", "pattern": "^\\p{ASCII}*$"}, ['"plain text"'], ['"caf\u00e9"'],
          validator=False)


def test_unicode_property_sets_match_unicodedata():
    import unicodedata
    for name, cats in [("L", {"Lu", "Ll", "Lt", "Lm", "Lo"}), ("Nd", {"Nd"}),
                       ("Punctuation", {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}),
                       ("LC", {"Lu", "Ll", "Lt"}), ("gc=Zs", {"Zs"})]:
        ivs = R.unicode_property(name)
        inside = set()
        for a, b in ivs:
            inside.update(range(a, b + 1))
        for cp in list(range(0, 0x3000)) + list(range(0x1F000, 0x1F100)) + [0x10FFFF]:
            want = unicodedata.category(chr(cp)) in cats and not 0xD800 <= cp <= 0xDFFF
            assert (cp in inside) == want, (name, hex(cp))
    assert R.unicode_property("Cs") == ()                  # surrogates are never members
    assert R.unicode_property("Script=Latin") is None and R.unicode_property("Xx") is None


def test_ecma_semantics():
    # \d and \w are ASCII in ECMA-262, . excludes line terminators
    assert R.fullmatch(R.parse_pattern("^\\d$"), "5") and not R.fullmatch(R.parse_pattern("^\\d$"), "٣")
    assert not R.fullmatch(R.parse_pattern("^\\w$"), "é")
    assert not R.fullmatch(R.parse_pattern("^.$"), "\n") and R.fullmatch(R.parse_pattern("^.$"), "😀")
    assert R.fullmatch(R.parse_pattern("^a{2}$"), "aa") and R.fullmatch(R.parse_pattern("^a{$"), "a{")
    assert R.fullmatch(R.parse_pattern("[\\d-z]"), "-")


FORMATS = {
    "date": (["2024-02-29", "1999-12-31"], ["2023-02-29", "2024-13-01", "2024-1-01", "2024-04-31"]),
    # leap seconds are rejected, as the jsonschema package does
    "time": (["23:59:59Z", "10:00:00.5+02:00"], ["24:00:00Z", "10:00:00", "10:60:00Z", "23:59:60Z"]),
    "date-time": (["2024-01-01T10:00:00Z", "2024-01-01t10:00:00.123-05:30"], ["2024-01-01 10:00:00Z", "2024-01-01T10:00Z"]),
    "email": (["a.b+c@example.com", "x@localhost"], ["a@", "@b.com", "a b@c.com", "a..b@c.com"]),
    "uuid": (["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000", "g23e4567-e89b-12d3-a456-426614174000"]),
    "ipv4": (["192.168.0.1", "0.0.0.0"], ["256.1.1.1", "1.2.3", "01.2.3.4"]),
    "ipv6": (["::1", "2001:db8::ff00:42:8329", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8"], ["1::2::3", "12345::", "1:2:3:4:5:6:7:8:9"]),
    "uri": (["https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:x@y.z"], ["example.com", "/relative", "http://a b"]),
    "hostname": (["example.com", "a-b.c"], ["-a.com", "a..b", "a_b.com"]),
    "duration": (["P1D", "PT1H30M", "P1Y2M", "P2W"], ["P", "1D", "PT", "P1H"]),
    "uri-reference": (["/a/b?c", "https://x.y", ""], ["a b"]),
    "json-pointer": (["", "/a/0", "/a~1b"], ["a", "/~2"]),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_formats(fmt):
    good, bad = FORMATS[fmt]
    check({"type": "string", "format": fmt}, [json.dumps(x) for x in good], [json.dumps(x) for x in bad],
          validator=False)


def test_unknown_and_nonregular_formats_are_annotations_or_errors():
    sg = convert_schema({"type": "string", "format": "my-format"})
    assert sg.annotations and "my-format" in sg.annotations[0]
    check({"type": "string", "format": "regex"}, ['"a("', '"x"'], ["1"], validator=False)
    for f in ("regex", "my-format"):
        with pytest.raises(GrammarError, match=f"format '{f}' at #/format") as ei:
            convert_schema({"type": "string", "format": f}, unknown_formats="error")
        assert ei.value.keyword == "format" and ei.value.pointer == "#/format"


def test_length_with_pattern_and_format():
    check({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}, ['"abc"'], ['"abcd"', '""'])
    check({"type": "string", "format": "date", "maxLength": 255}, ['"2020-01-01"'], ['"x"'])
    check({"type": "string", "pattern": "^x", "maxLength": 3, "minLength": 2}, ['"xy"', '"xyz"'], ['"x"', '"xyzw"'])


def test_json_string_escapes():
    c = check({"type": "string"}, ['"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\uD83D\\uDE00"', '"\\u20ac"'],
              ['"\\x41"', '"\\u12"', '"\\a"', '"\t"', '"\n"'])
    assert not accepts(c, '"\\ud800"')        # lone surrogate escapes are rejected (policy)


# --------------------------------------------------------------------------
# numbers
# --------------------------------------------------------------------------

def test_integer_ranges_are_exact():
    rng = random.Random(0)
    for lo, hi in [(0, 120), (-15, 7), (1, 1), (-1000, -999), (99, 10001), (0, None), (None, -5), (37, None)]:
        s = {"type": "integer"}
        if lo is not None:
            s["minimum"] = lo
        if hi is not None:
            s["maximum"] = hi
        c = constraint(s)
        probes = set(range(-30, 30)) | {rng.randint(-20000, 20000) for _ in range(60)}
        for b in (lo, hi):
            if b is not None:
                probes |= {b - 1, b, b + 1}
        for v in probes:
            ok = (lo is None or v >= lo) and (hi is None or v <= hi)
            assert accepts(c, str(v)) == ok, (s, v)
        assert accepts(c, "-0") == ((lo is None or lo <= 0) and (hi is None or hi >= 0))


def test_exclusive_bounds_draft4_and_later():
    check({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}, ["1", "9"], ["0", "10"])
    check({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "minimum": 0,
           "exclusiveMinimum": True, "maximum": 3}, ["1", "3"], ["0", "4"])
    check({"type": "integer", "minimum": 0.5, "maximum": 2.5}, ["1", "2"], ["0", "3"])


def test_number_bounds():
    s = {"type": "number", "minimum": -1.5, "exclusiveMaximum": 2.25}
    check(s, ["-1.5", "-1.4999", "0", "2.2499", "2", "-0.0", "2.24"], ["-1.51", "2.25", "2.250", "3", "-2"],
          policy=["1e0"])
    check({"type": "number", "exclusiveMinimum": 0}, ["1e-9", "0.1", "5"], ["0", "0.0", "-1", "0e5", "-0.0"])
    check({"type": "number", "maximum": 0}, ["0", "-1e9", "-0.5"], ["1e-9", "0.1"])


def test_multiple_of():
    check({"type": "integer", "multipleOf": 5, "minimum": 0}, ["0", "5", "100", "12345"], ["3", "-5", "101"])
    check({"type": "number", "multipleOf": 0.01}, ["1.23", "5", "0.1", "1.230"], ["1.234", "0.001"])
    check({"type": "number", "multipleOf": 0.3}, ["0.3", "0.6", "-0.9", "3"], ["0.1", "1", "0.31"],
          validator=False)          # jsonschema's float arithmetic: 0.6 / 0.3 != 2


# --------------------------------------------------------------------------
# whitespace policies and caps
# --------------------------------------------------------------------------

def test_whitespace_policies():
    doc = {"a": [1, {"b": None}], "c": "x"}
    s = {"type": "object"}
    c = constraint(s)
    assert accepts(c, json.dumps(doc)) and accepts(c, json.dumps(doc, indent=2))
    assert accepts(c, json.dumps(doc, separators=(",", ":")))
    assert not accepts(c, '{"a":' + " " * 30 + "1}")          # a run longer than max_whitespace
    assert not accepts(c, '{\n\n"a": 1}')                       # two line breaks in a row
    # one gap before and after the document too (RFC 8259's ws around the value), not two
    assert accepts(c, ' {"a": 1}') and accepts(c, '{"a": 1}\n') and accepts(c, '\n\t{}\n  ')
    assert not accepts(c, ' \n{"a": 1}') and not accepts(c, '{"a": 1}\n\n')
    assert not accepts(c, '{"a": 1}' + " " * 21)
    cc = constraint(s, whitespace="compact")
    assert accepts(cc, json.dumps(doc, separators=(",", ":"))) and not accepts(cc, json.dumps(doc))
    cf = constraint(s, whitespace="flexible")
    assert accepts(cf, ' {"a" :\n\n\n' + " " * 100 + "1}\n ") and accepts(cf, json.dumps(doc, indent=8))
    assert accepts(constraint(s, max_whitespace=40), '{"a":' + " " * 30 + "1}")


def test_bounded_whitespace_cannot_loop():
    # after '{' the model may emit at most one newline and max_whitespace spaces, then must write a key
    c = constraint({"type": "object", "properties": {"a": {"type": "integer"}}}, max_whitespace=4)
    s = c.commit_bytes(c.start(), b"{\n    ")
    with pytest.raises(TokenRejected):
        c.commit_bytes(s, b" ")
    with pytest.raises(TokenRejected):
        c.commit_bytes(s, b"\n")


# every whitespace gap of one document, before and after it included: (before-colon?,
# text); the bounded policy allows one run per gap (an optional line break, then at most
# max_whitespace spaces/tabs) and at most one space before a colon
_GAP_TEMPLATE = [0, '{', 0, '"a"', 1, ':', 0, '[', 0, '1', 0, ',', 0, '{', 0, '}', 0, ',', 0, '[', 0, ']',
                 0, ']', 0, ',', 0, '"xy"', 1, ':', 0, '{', 0, '"c"', 1, ':', 0, 'null', 0, '}', 0, ',',
                 0, '"k"', 1, ':', 0, '{', 0, '"u"', 1, ':', 0, '[', 0, '1', 0, ',', 0, '{', 0, '}', 0,
                 ']', 0, '}', 0, '}', 0]
_GAP_SCHEMA = {"type": "object",
               "properties": {"a": {"type": "array"},
                              "b": {"type": "object", "properties": {"c": {}}},
                              "k": {"const": {"u": [1, {}]}}},
               "patternProperties": {"^x": {"type": "object"}},
               "additionalProperties": False}
_GAP_CHOICES = ["", " ", "\t", "  ", "\n", "\n    ", "\r\n\t", " \n", "\n\n", "   ", "    ", "\n   "]


def _gap_ok(text: str, before_colon: bool, n: int) -> bool:
    if before_colon:
        return text in ("", " ")
    body = text[2:] if text.startswith("\r\n") else text[1:] if text.startswith("\n") else text
    return len(body) <= n and all(ch in " \t" for ch in body)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_bounded_whitespace_gap_by_gap(data):
    """The bounded policy, one gap at a time: each gap's whitespace is drawn at random
    (within and beyond the policy, max_whitespace=3) and the document is accepted exactly
    when every gap follows the policy (objects, arrays, empty ones, pattern keys, consts)."""
    c = _gap_constraint()
    parts, ok = [], True
    for piece in _GAP_TEMPLATE:
        if isinstance(piece, str):
            parts.append(piece)
            continue
        gap = data.draw(st.sampled_from(_GAP_CHOICES))
        ok = ok and _gap_ok(gap, piece == 1, 3)
        parts.append(gap)
    text = "".join(parts)
    assert json.loads(text)
    assert accepts(c, text) == ok, text


_GAP_CACHE: list = []


def _gap_constraint() -> Constraint:
    if not _GAP_CACHE:
        _GAP_CACHE.append(constraint(_GAP_SCHEMA, max_whitespace=3))
    return _GAP_CACHE[0]


def test_caps():
    c = constraint({"type": "object"}, max_string_length=3, max_number_digits=2)
    assert accepts(c, '{"abc": "xyz", "n": -12.34e56}')
    assert not accepts(c, '{"abcd": 1}') and not accepts(c, '{"a": "wxyz"}') and not accepts(c, '{"a": 123}')


# --------------------------------------------------------------------------
# ambiguity, API
# --------------------------------------------------------------------------

def test_overlapping_any_of_is_ambiguous_and_constraint_takes_glr():
    s = {"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                   {"type": "object", "properties": {"a": {"type": "number"}, "b": {}}}]}
    sg = convert_schema(s)
    assert sg.ambiguous
    with pytest.raises(GrammarError, match="ambiguous=True"):
        Constraint(sg.grammar, BYTES, ambiguous=False)
    for c in (schema_constraint(s, BYTES), Constraint(sg.grammar, BYTES)):
        assert c.ambiguous
        assert accepts(c, '{"a": 1}') and accepts(c, '{"a": 1.5, "b": null}') and not accepts(c, '{"a": "x"}')
    assert not convert_schema(THREE).ambiguous


def test_grammar_from_json_schema_accepts_text_and_options():
    g = Grammar.from_json_schema(json.dumps(THREE), whitespace="compact")
    assert isinstance(g, Grammar)
    c = Constraint(g, BYTES)
    assert accepts(c, '{"a":1,"c":true}') and not accepts(c, '{"a": 1}')
    with pytest.raises(GrammarError):
        Grammar.from_json_schema("{not json")


def test_strict_false_warns_listing_each_keyword():
    s = {"type": "object", "properties": {"t": {"type": "array", "uniqueItems": True},
                                          "u": {"if": {"uniqueItems": True}, "then": {"maxItems": 5}}}}
    with pytest.raises(GrammarError) as ei:
        convert_schema(s, unique_items="error")
    assert "uniqueItems at #/properties/t/uniqueItems" in str(ei.value)
    assert "if at #/properties/u/if" in str(ei.value)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sg = convert_schema(s, strict=False)
    assert len(sg.warnings) == 2 and any(issubclass(x.category, SchemaWarning) for x in w)


# --------------------------------------------------------------------------
# real vocabulary, token by token
# --------------------------------------------------------------------------

REAL = {"type": "object",
        "properties": {"id": {"type": "string", "format": "uuid"}, "name": {"type": "string", "maxLength": 20},
                       "age": {"type": "integer", "minimum": 0, "maximum": 150},
                       "tags": {"type": "array", "items": {"enum": ["a", "b", "ç"]}, "maxItems": 3},
                       "when": {"type": "string", "format": "date-time"}},
        "required": ["id", "name"], "additionalProperties": False}


def test_token_by_token_with_qwen(qwen_vocab, qwen_encoding):
    c = schema_constraint(REAL, qwen_vocab)
    eos = min(qwen_vocab.eos_token_ids)
    good = [{"id": "123e4567-e89b-12d3-a456-426614174000", "name": "Zoë", "age": 42, "tags": ["a", "ç"],
             "when": "2024-05-01T12:00:00Z"},
            {"id": "123e4567-e89b-12d3-a456-426614174000", "name": "a\"b\\u"}]
    for doc in good:
        for text in (json.dumps(doc), json.dumps(doc, ensure_ascii=False), json.dumps(doc, indent=2)):
            s = c.start()
            for t in qwen_encoding.encode(text, disallowed_special=()):
                s = c.commit(s, t)
            s = c.commit(s, eos)
            assert s.finished
    bad = [{"id": "x", "name": "n"}, {"id": "123e4567-e89b-12d3-a456-426614174000", "name": "n", "age": 151},
           {"id": "123e4567-e89b-12d3-a456-426614174000", "name": "n" * 21}]
    for doc in bad:
        s = c.start()
        with pytest.raises(TokenRejected):
            for t in qwen_encoding.encode(json.dumps(doc), disallowed_special=()):
                s = c.commit(s, t)
            c.commit(s, eos)


def test_masks_with_qwen_contain_the_next_token(qwen_vocab, qwen_encoding):
    c = schema_constraint({"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}},
                           "required": ["n"], "additionalProperties": False}, qwen_vocab)
    toks = qwen_encoding.encode('{"n": 7}')
    s = c.start()
    eos = min(qwen_vocab.eos_token_ids)
    for i, t in enumerate(toks):
        if i in (0, len(toks) - 2):
            ids = set(c.allowed_tokens(s).tolist())
            assert t in ids and eos not in ids
        s = c.commit(s, t)
    ids = set(c.allowed_tokens(s).tolist())
    # after the document: EOS, or one gap of whitespace or its start (then EOS only)
    gap = re.compile(rb"\r?\n[ \t]{0,20}|[ \t]{1,20}|\r")
    rest = ids - set(qwen_vocab.eos_token_ids)
    assert set(qwen_vocab.eos_token_ids) <= ids and rest
    assert all(gap.fullmatch(qwen_vocab.token_bytes(i)) for i in rest)
    s = c.commit_bytes(s, b"\n" + b" " * 20)          # a whole gap: nothing may follow it
    assert set(c.allowed_tokens(s).tolist()) == set(qwen_vocab.eos_token_ids)


# --------------------------------------------------------------------------
# cross-check against jsonschema on generated sentences
# --------------------------------------------------------------------------

CROSS = [
    THREE,
    dict(THREE, required=["b"]),
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": -20, "maximum": 300},
                                      "x": {"type": "number", "minimum": -2.5, "maximum": 7}},
     "patternProperties": {"^p[0-9]$": {"type": "boolean"}}, "additionalProperties": {"type": "null"}},
    {"type": "array", "items": {"anyOf": [{"type": "string", "pattern": "^[a-c]{1,3}$"}, {"enum": [1, "z", None]}]},
     "minItems": 1, "maxItems": 3},
    {"$defs": {"t": {"type": "object", "properties": {"v": {"type": "integer", "multipleOf": 3},
                                                      "k": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
                     "required": ["v"], "additionalProperties": False}}, "$ref": "#/$defs/t"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "ipv6"},
    {"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "pattern": "^a"}]},
]


@pytest.mark.parametrize("k", range(len(CROSS)))
def test_generated_sentences_validate(k):
    pytest.importorskip("jsonschema")
    from stackmask.generate import SentenceGenerator, mutate
    schema = CROSS[k]
    sg = convert_schema(schema, whitespace="compact")
    c = Constraint(sg.grammar, BYTES, ambiguous=sg.ambiguous)
    gen = SentenceGenerator(sg.grammar, seed=k)
    rng = random.Random(k)
    n_mut = 0
    for _ in range(25):
        text, _ = gen.sentence()
        assert jsonschema_valid(schema, text), f"grammar sentence invalid per jsonschema: {text!r}"
        assert accepts(c, text)
        for _ in range(3):
            m, _ = mutate(text, rng)
            if accepts(c, m):
                n_mut += 1
                assert jsonschema_valid(schema, m), f"accepted mutation invalid per jsonschema: {m!r}"


def test_a_long_conversion_says_what_it_is_doing(monkeypatch, caplog):
    """Past a second, conversion logs where it is (INFO, ``stackmask`` logger), then how
    long it took; a quick one logs nothing."""
    import logging
    import types
    from stackmask import progress
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5},
                                               "b": {"type": "array", "items": {"type": "integer"}}}}
    with caplog.at_level(logging.INFO, logger="stackmask"):
        convert_schema(schema)
        assert not caplog.records
        clock = iter(range(0, 10 ** 6, 2))          # every reading two seconds later
        monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: float(next(clock))))
        convert_schema(schema)
    msgs = [r.getMessage() for r in caplog.records if r.name.startswith("stackmask")]
    assert any(m.startswith("stackmask: converting the JSON Schema (") and "at #/properties/" in m
               for m in msgs), msgs
    assert any(m.startswith("stackmask: JSON Schema converted in") for m in msgs), msgs


# a oneOf of closed objects with required keys (MaskBench row 444's shape): the
# disjointness check reads the required keys' languages, which names grammar symbols
_ONE_OF_OBJECTS = {"oneOf": [
    {"type": "object", "additionalProperties": False,
     "properties": {"status": {"enum": ["error"]}, "summary": {"type": "object"},
                    "details": {"type": "object", "additionalProperties": True},
                    "release": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}}},
     "required": ["status", "summary", "details", "tags"]},
    {"type": "object", "additionalProperties": False,
     "properties": {"status": {"enum": ["success"]},
                    "summary": {"type": "object", "additionalProperties": False,
                                "properties": {"licenses": {"type": "array",
                                                            "items": {"type": "string"}}},
                                "required": ["licenses"]},
                    "details": {"type": "object", "properties": {"count": {"type": "integer"}},
                                "required": ["count"]},
                    "release": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "integer"}}},
     "required": ["status", "summary", "details", "tags"]}]}


def test_conversion_is_the_same_in_every_process():
    """One schema, one grammar (and artifact cache key), whatever the process's
    PYTHONHASHSEED: a converter that iterates a set where it names symbols gives
    another grammar text in another process and misses the artifact cache."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import stackmask
    code = ("import hashlib, json, sys\n"
            "from stackmask import Grammar\n"
            "from stackmask.compile import grammar_text\n"
            "for s in json.load(sys.stdin):\n"
            "    g = Grammar.from_json_schema(s)\n"
            "    print(hashlib.sha256(grammar_text(g).encode()).hexdigest())\n")
    schemas = [_ONE_OF_OBJECTS,
               {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}},
                           "required": ["a", "b"]},
                          {"type": "object", "properties": {"b": {"type": "integer"}},
                           "required": ["b", "a"]}]},
               {"type": "object", "properties": {k: {"type": "string", "maxLength": 8}
                                                 for k in ("x", "yy", "zzz", "w")},
                "required": ["zzz", "x"], "additionalProperties": False}]
    root = str(Path(stackmask.__file__).parent.parent)
    outs = set()
    for hs in ("1", "2", "3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=hs,
                   PYTHONPATH=os.pathsep.join([root] + [p for p in sys.path if p]))
        r = subprocess.run([sys.executable, "-c", code], input=json.dumps(schemas), env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        outs.add(r.stdout)
    assert len(outs) == 1
