"""JSON Schema keywords checked against the 2020-12 specification: valid and
invalid instances per keyword (each also checked with the ``jsonschema``
validator), the ``allOf`` merge of array keywords, unknown keywords and
formats, subschemas that accept nothing, and ``Constraint``'s
``ambiguous=None`` default on schema grammars."""

from __future__ import annotations

import pytest

from test_json_schema import accepts, check, constraint, jsonschema_valid


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


# --------------------------------------------------------------------------
# Constraint(Grammar.from_json_schema(s), vocab) with ambiguous=None
# --------------------------------------------------------------------------

OVERLAP = {"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                     {"type": "object", "properties": {"b": {"type": "string"}}}]}


def test_constraint_default_takes_glr_when_the_schema_grammar_needs_it():
    from stackmask import Constraint, Grammar, GrammarError
    from test_json_schema import BYTES
    g = Grammar.from_json_schema(OVERLAP)
    c = Constraint(g, BYTES, compile="lazy", cache_dir=False)
    assert c.ambiguous is True
    assert accepts(c, '{"a": 1}') and accepts(c, '{"b": "x"}') and accepts(c, "{}")
    assert not accepts(c, '{"a": "x", "b": 1}')
    with pytest.raises(GrammarError, match="not LALR"):
        Constraint(g, BYTES, ambiguous=False, compile="lazy", cache_dir=False)
    c = Constraint(Grammar.from_json_schema({"type": "integer"}), BYTES, compile="lazy", cache_dir=False)
    assert c.ambiguous is False and accepts(c, "12")


def test_constraint_default_on_lark_text_and_the_artifact_key(tmp_path):
    from stackmask import Constraint
    from test_json_schema import BYTES
    conflicted = 'start: e\ne: e "+" e | "x"\n'
    c = Constraint(conflicted, BYTES, cache_dir=tmp_path, progress=False)
    assert c.ambiguous is True and accepts(c, "x+x+x") and not accepts(c, "x+")
    clean = 'start: "x" ("+" "x")*\n'
    c = Constraint(clean, BYTES, cache_dir=tmp_path, progress=False)
    assert c.ambiguous is False and not c.loaded_from_cache
    # the deterministic artifact is found again under the resolved key
    c2 = Constraint(clean, BYTES, cache_dir=tmp_path, progress=False)
    assert c2.ambiguous is False and c2.loaded_from_cache
    assert Constraint(clean, BYTES, ambiguous=False, cache_dir=tmp_path, progress=False).loaded_from_cache


# --------------------------------------------------------------------------
# unknown keywords and formats
# --------------------------------------------------------------------------

def test_unknown_keyword_is_logged_with_a_close_match(caplog):
    import logging
    from stackmask.grammars.json_schema import convert_schema
    s = {"type": "string", "maxLenght": 3, "allOf": [{"minimun": 2}], "x-vendor": 1, "title": "t"}
    with caplog.at_level(logging.WARNING, logger="stackmask"):
        sg = convert_schema(s)
    text = caplog.text
    assert "'maxLenght' at #/maxLenght" in text and "did you mean 'maxLength'" in text
    assert "'minimun' at #/allOf/0/minimun" in text and "did you mean 'minimum'" in text
    assert "x-vendor" not in text and "title" not in text
    assert any("maxLenght" in a for a in sg.annotations)
    # ignored: a 10-character string is accepted (the keyword does nothing), as jsonschema does
    check(s, ['"abcdefghij"'], ["1"])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="stackmask"):
        convert_schema(s, unknown_keywords="ignore")
    assert "maxLenght" not in caplog.text


def test_unknown_keyword_error_names_keyword_and_pointer():
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    s = {"type": "object", "properties": {"a/b": {"type": "string", "maxLenght": 3}}}
    with pytest.raises(GrammarError, match=r"'maxLenght' at #/properties/a~1b/maxLenght") as ei:
        convert_schema(s, unknown_keywords="error")
    assert ei.value.keyword == "maxLenght" and ei.value.pointer == "#/properties/a~1b/maxLenght"
    assert "did you mean 'maxLength'" in str(ei.value)
    # every keyword of the drafts the converter reads is known
    convert_schema({"$schema": "http://json-schema.org/draft-04/schema#", "id": "http://x/y",
                    "definitions": {}, "type": "array", "items": [{}], "additionalItems": False,
                    "dependencies": {}, "nullable": True}, unknown_keywords="error")
    with pytest.raises(ValueError):
        convert_schema({}, unknown_keywords="loud")


# --------------------------------------------------------------------------
# subschemas that accept nothing
# --------------------------------------------------------------------------

@pytest.mark.parametrize("schema,valid,invalid", [
    ({"type": "object", "properties": {"x": False}}, ['{}', '{"y": 1}'], ['{"x": 1}']),
    ({"anyOf": [{"type": "string", "not": {}}, {"type": "integer"}]}, ['1'], ['"a"']),
    ({"oneOf": [{"not": {}}, {"type": "integer"}]}, ['1'], ['"a"', "null"]),
    ({"type": "array", "items": False}, ['[]'], ['[1]']),
    ({"type": "array", "prefixItems": [{"not": {}}]}, ['[]'], ['[1]']),
    ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"type": "integer"}]}}},
     ['{}'], ['{"a": 1}', '{"a": "x"}']),
    ({"type": "object", "properties": {"a": {"enum": [1], "const": 2}}}, ['{}'], ['{"a": 1}', '{"a": 2}']),
    ({"type": "object", "additionalProperties": {"not": {}}}, ['{}'], ['{"a": 1}']),
    ({"type": "object", "patternProperties": {"^a": False}}, ['{}', '{"b": 1}'], ['{"a": 1}']),
    ({"type": "object", "properties": {"a": {"type": "object", "required": ["x"], "properties": {"x": False}}}},
     ['{}'], ['{"a": {}}', '{"a": {"x": 1}}']),
    ({"anyOf": [{"minimum": 5, "maximum": 3, "type": "integer"}, {"type": "string"}]}, ['"s"'], ['4', '5']),
    ({"anyOf": [{"type": "string", "minLength": 3, "maxLength": 2}, {"type": "null"}]}, ['null'],
     ['"abc"', '"ab"']),
    ({"anyOf": [{"type": "string", "pattern": "^a$", "format": "date"}, {"type": "null"}]}, ['null'],
     ['"a"', '"2020-01-01"']),
    ({"type": "array", "items": {"type": "integer", "minimum": 3, "maximum": 1}}, ['[]'], ['[2]']),
])
def test_impossible_subschemas_are_impossible_branches(schema, valid, invalid):
    check(schema, valid, invalid)


@pytest.mark.parametrize("schema", [
    False, {"not": {}}, {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object", "required": ["a"], "properties": {"a": False}},
    {"oneOf": [{"type": "integer"}, {"type": "integer"}], "type": "integer"},
    {"type": "string", "minLength": 2, "maxLength": 1},
])
def test_a_schema_that_accepts_nothing_raises_a_clear_error(schema):
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="accepts no JSON value") as ei:
        convert_schema(schema)
    assert ei.value.keyword == "schema" and ei.value.pointer == "#"


# --------------------------------------------------------------------------
# multipleOf on decimals, merged by least common multiple
# --------------------------------------------------------------------------

def test_multiple_of_a_quarter():
    check({"type": "number", "multipleOf": 0.25},
          ["0", "-0", "0.25", "0.5", "0.75", "1", "1.0", "1.25", "-0.75", "2.5000", "100"],
          ["0.3", "0.1", "1.2", "0.125", '"0.25"'], policy=["2.5e1"])
    check({"type": "number", "multipleOf": 1.5, "minimum": 0, "maximum": 6},
          ["0", "1.5", "3", "3.0", "4.50", "6"], ["-1.5", "7.5", "1", "2.25"])


def test_multiple_of_decimals_jsonschema_gets_wrong_with_floats():
    # 0.07 / 0.01 is 7.000000000000001 in binary floating point, so the validator
    # cannot be the reference here; the specification's arithmetic is exact
    check({"type": "number", "multipleOf": 0.01, "minimum": -1, "maximum": 2},
          ["0.07", "-0.99", "1.1", "2", "0.10", "1.230"], ["0.001", "2.01", "-1.01", "0.015"],
          validator=False)
    check({"type": "integer", "multipleOf": 0.3}, ["0", "3", "-6", "30"], ["1", "2", "10"], validator=False)


def test_multiple_of_merged_by_lcm():
    # multiples of 0.25 and of 0.1: multiples of 0.5
    check({"allOf": [{"multipleOf": 0.25}, {"multipleOf": 0.1}], "type": "number"},
          ["0", "0.5", "1", "-1.5", "2.50"], ["0.25", "0.1", "0.75", "0.2"], validator=False)
    check({"allOf": [{"multipleOf": 4}, {"multipleOf": 6}], "type": "integer"},
          ["0", "12", "-24", "36"], ["4", "6", "18", "8"])


# --------------------------------------------------------------------------
# minProperties / maxProperties: members counted in the grammar
# --------------------------------------------------------------------------

def test_min_and_max_properties_with_additional_members():
    check({"type": "object", "minProperties": 2}, ['{"a": 1, "b": 2}', '{"a": 1, "b": 2, "c": 3}'],
          ['{}', '{"a": 1}'])
    check({"type": "object", "maxProperties": 2}, ['{}', '{"a": 1}', '{"a": 1, "b": 2}'],
          ['{"a": 1, "b": 2, "c": 3}'])
    check({"type": "object", "properties": {"a": {}}, "required": ["a"], "minProperties": 3},
          ['{"a": 1, "b": 2, "c": 3}', '{"x": 1, "a": 1, "c": 3}'],
          ['{"a": 1}', '{"a": 1, "b": 2}', '{"b": 1, "c": 2, "d": 3}'])
    check({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False,
           "minProperties": 1, "maxProperties": 2},
          ['{"x1": 1}', '{"x1": 1, "x2": 2}'], ['{}', '{"x1": 1, "x2": 2, "x3": 3}', '{"y": 1}'])


def test_min_and_max_properties_over_declared_properties():
    s = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "additionalProperties": False,
         "minProperties": 2, "maxProperties": 2}
    check(s, ['{"a": 1, "b": 2}', '{"a": 1, "c": 2}', '{"b": 1, "c": 2}'],
          ['{}', '{"a": 1}', '{"a": 1, "b": 2, "c": 3}', '{"x": 1, "a": 2}'])
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="accepts no JSON value"):
        convert_schema(dict(s, type="object", required=["a", "b"], maxProperties=1))


# --------------------------------------------------------------------------
# dependentRequired, dependentSchemas, draft-7 dependencies
# --------------------------------------------------------------------------

def test_dependent_required():
    s = {"type": "object", "properties": {"name": {}, "card": {}, "billing": {}},
         "dependentRequired": {"card": ["billing"]}}
    check(s, ['{}', '{"name": 1}', '{"billing": 1}', '{"card": 1, "billing": 2}',
              '{"name": 0, "card": 1, "billing": 2}'],
          ['{"card": 1}', '{"name": 0, "card": 1}'])
    # the dependent key comes before the trigger in property order, and an undeclared trigger
    s = {"type": "object", "properties": {"b": {}, "a": {}},
         "dependentRequired": {"a": ["b"], "z": ["a", "b"]}}
    check(s, ['{"b": 1, "a": 2}', '{"b": 1}', '{"b": 1, "a": 2, "z": 3}'],
          ['{"a": 2}', '{"z": 3}', '{"b": 1, "z": 3}'],
          policy=['{"z": 0, "b": 1, "a": 2}'])     # a required undeclared key comes last
    # mutual dependencies
    s = {"type": "object", "dependentRequired": {"a": ["b"], "b": ["a"]}}
    check(s, ['{}', '{"x": 1}', '{"a": 1, "b": 2}'], ['{"a": 1}', '{"b": 1}', '{"x": 1, "b": 2}'])


def test_dependent_schemas():
    s = {"type": "object", "properties": {"a": {}, "b": {"type": "integer"}},
         "dependentSchemas": {"a": {"required": ["b"], "properties": {"b": {"minimum": 5}}}}}
    check(s, ['{}', '{"b": 1}', '{"a": 0, "b": 5}'], ['{"a": 0}', '{"a": 0, "b": 4}', '{"b": "x"}'])
    check({"type": "object", "dependentSchemas": {"a": False}}, ['{}', '{"b": 1}'], ['{"a": 1}'])


def test_draft7_dependencies_array_and_schema_forms():
    s = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
         "dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}, "required": ["d"]}}}
    check(s, ['{}', '{"a": 1, "b": 2}', '{"d": "x", "c": 1}', '{"b": 1}'],
          ['{"a": 1}', '{"c": 1}', '{"d": 2, "c": 1}'],
          policy=['{"c": 1, "d": "x"}'])   # the dependent schema's properties, then required keys
    # merged by allOf: both members' dependencies apply
    s = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
         "allOf": [{"dependencies": {"a": ["b"]}}, {"dependencies": {"a": ["c"]}}]}
    check(s, ['{"a": 1, "b": 2, "c": 3}', '{}'], ['{"a": 1, "b": 2}', '{"a": 1, "c": 3}'])


# --------------------------------------------------------------------------
# if / then / else
# --------------------------------------------------------------------------

def test_if_then_else_on_a_property_const():
    s = {"type": "object",
         "properties": {"country": {"enum": ["US", "NL"]}, "code": {"type": "string"}},
         "if": {"properties": {"country": {"const": "US"}}},
         "then": {"properties": {"code": {"pattern": "^[0-9]{5}$"}}},
         "else": {"properties": {"code": {"pattern": "^[0-9]{4} ?[A-Z]{2}$"}}}}
    check(s, ['{"country": "US", "code": "12345"}', '{"country": "NL", "code": "1234 AB"}',
              '{"code": "12345"}', '{"country": "US"}', "{}"],
          ['{"country": "US", "code": "1234 AB"}', '{"country": "NL", "code": "12345"}',
           '{"code": "1234AB"}', '{"country": "FR"}'])


def test_if_then_else_on_required_and_type():
    s = {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"maxProperties": 0}}
    check(s, ['{"a": 1, "b": 2}', "{}", "1", '"x"'], ['{"a": 1}', '{"b": 1}'])
    s = {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}
    check(s, ['"ab"', "3"], ['"a"', "1.5", "null", "[]"])
    s = {"type": "object", "if": {"type": "object", "required": ["k"], "properties": {"k": {"enum": [1, 2]}}},
         "then": {"required": ["v"]}}
    check(s, ['{"k": 1, "v": 0}', '{"k": 3}', "{}", '{"v": 0}'], ['{"k": 1}', '{"k": 2}'])
    # then/else without if have no effect
    check({"type": "integer", "then": False, "else": False}, ["1"], ['"a"'])


def test_if_with_a_complement_it_cannot_write_is_reported():
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="if at #/if"):
        convert_schema({"if": {"uniqueItems": True}, "then": {"maxItems": 5}})


def test_if_and_contains_on_string_lengths():
    """A string-length condition has a complement (the other lengths, and non-strings
    when the condition says ``type: string``)."""
    check({"if": {"minLength": 3}, "then": {"maxLength": 5}, "else": {"type": "string"}},
          ['"abc"', '"abcde"', '"ab"', '""', "1", "null"], ['"abcdef"'])
    check({"if": {"type": "string", "maxLength": 2}, "then": {"const": "ok"}, "else": {"type": "integer"}},
          ['"ok"', "3"], ['"no"', '"abc"', "1.5", "null"])
    check({"type": "array", "contains": {"type": "string", "minLength": 2}, "maxContains": 1},
          ['["ab"]', '["a", "bc", 1]'], ["[]", '["a"]', '["ab", "cd"]'])


# --------------------------------------------------------------------------
# contains / minContains / maxContains
# --------------------------------------------------------------------------

def test_contains():
    s = {"type": "array", "contains": {"type": "integer"}}
    check(s, ["[1]", '["a", 1]', '[1, "a", 2]'], ["[]", '["a"]', '["a", null]'])
    s = {"type": "array", "items": {"type": "integer"}, "contains": {"const": 5}, "maxItems": 3}
    check(s, ["[5]", "[1, 5]", "[5, 5, 5]"], ["[]", "[1, 2]", "[1, 2, 3, 5]", '["5"]'])


def test_min_and_max_contains():
    s = {"type": "array", "contains": {"enum": ["x", "y"]}, "minContains": 2, "maxContains": 3}
    check(s, ['["x", "y"]', '["x", 1, "x"]', '["x", "x", "y", 0]'],
          ["[]", '["x"]', '["x", 1]', '["x", "y", "x", "y"]'])
    check({"type": "array", "contains": {"type": "string"}, "minContains": 0, "maxContains": 1},
          ["[]", "[1, 2]", '[1, "a"]'], ['["a", "b"]'])
    check({"type": "array", "prefixItems": [{"type": "string"}], "contains": {"type": "string"}, "maxContains": 1},
          ['["a"]', '["a", 1, 2]'], ['["a", "b"]', "[1]"])
    # draft 7 has contains, not minContains / maxContains
    check({"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"const": 1}, "maxContains": 1},
          ["[1, 1]", "[1]"], ["[2]", "[]"])


def test_several_contains_merged_by_all_of():
    # each contains needs an item of its own or a shared one: a bit per contains in
    # the array rules, every item in each contains or in its complement
    check({"type": "array", "allOf": [{"contains": {"type": "string"}},
                                      {"contains": {"type": "integer", "minimum": 3}}]},
          ['["a", 3]', '[4, "b"]', '["a", 1, 5]', '[null, "x", null, 7]'], ["[]", '["a"]', "[3]", '[1, "a"]'])
    check({"type": "array", "contains": {"const": 1}, "maxContains": 1,
           "allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "null"}}]},
          ['[1, "a", null]', '[null, "a", 1, 2]'], ['[1, 1, "a", null]', '["a", null]', '[1, "a"]'])
    check({"allOf": [{"contains": {"minimum": 2}}, {"contains": {"maximum": 4}}]},
          ["[3]", "[1, 5]", '"x"'], ["[]", "[5]", "[1]"])


def test_contains_with_a_complement_it_cannot_write_is_reported():
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="contains at #/contains"):
        convert_schema({"type": "array", "contains": {"type": "array", "uniqueItems": True}})


# --------------------------------------------------------------------------
# not: every spelling of an excluded number is excluded
# --------------------------------------------------------------------------

def test_not_integer_and_not_const_exclude_every_spelling():
    # 1.0 and 1e0 are the integer 1: not integer must reject them; numbers under a
    # not on numbers are plain decimals (policy: exponents cannot be excluded exactly)
    check({"type": "number", "not": {"type": "integer"}}, ["1.5", "-0.25"],
          ["1", "1.0", "-2.00", "0", "-0.0"], policy=["1.5e1", "1e0"])
    check({"type": "number", "not": {"const": 1}}, ["2", "1.5", "0.1", "-1"], ["1", "1.0", "1.000"],
          policy=["1e0", "10e-1"])
    check({"type": "number", "not": {"enum": [0, 2.5]}}, ["1", "-2.5", "2.55"],
          ["0", "-0", "0.00", "2.5", "2.50"])
    check({"not": {"enum": [1, 2], "const": 2}}, ["1", '"x"'], ["2", "2.0"])


def test_not_of_string_keywords_removes_their_strings():
    # pattern / format / lengths: the strings outside them (a regex difference); a
    # non-string satisfies the string keywords, so not rejects it
    check({"not": {"pattern": "^a"}}, ['"b"', '""', '"ba"'], ['"a"', '"ab"', "1", "null", "{}"])
    check({"type": "string", "not": {"pattern": "^[0-9]+$", "maxLength": 3}},
          ['"1234"', '"a1"', '""'], ['"1"', '"123"', "5"])
    check({"type": "string", "not": {"format": "date"}}, ['"2020-02-30"', '"x"'], ['"2020-02-29"'])
    # with a type list: the other types are removed too
    check({"not": {"type": ["string", "null"], "minLength": 2}}, ['"a"', "1", "[]"], ['"ab"', "null"])
    check({"if": {"pattern": "^a"}, "then": {"maxLength": 2}, "else": {"minLength": 3}},
          ['"ab"', '"bcd"', "1"], ['"abc"', '"b"'])
    check({"type": "array", "contains": {"type": "string", "pattern": "^a"}, "maxContains": 1},
          ['["ab", "b"]', '["a", 1]'], ['["b"]', '["a", "ab"]', "[]"])


def test_not_of_number_keywords_removes_every_spelling_of_their_values():
    # numbers under such a not are plain decimals (policy)
    check({"type": "number", "not": {"minimum": 3}}, ["2.5", "-1", "2.999"], ["3", "3.0", "4", '"x"'],
          policy=["2e0"])
    check({"type": "number", "not": {"exclusiveMinimum": 0, "maximum": 1.5}}, ["0", "-0.5", "1.51"],
          ["0.5", "1.5", "1.50", "1"])
    check({"type": "integer", "not": {"multipleOf": 2}}, ["1", "-3"], ["0", "2", "-4"])
    # an integer value satisfies "type: integer" in any spelling (3.0 is 3)
    check({"not": {"type": "integer", "maximum": 0}}, ["1", "0.5", '"x"', "null"], ["0", "-3", "-3.0", "-0"])
    check({"oneOf": [{"type": "integer", "minimum": 10}, {"type": "number", "maximum": 20}]},
          ["5", "25", "9.5"], ["10", "15", "20", "12.0", "20.5"])


def test_not_of_object_and_array_schemas_is_their_complement():
    check({"not": {"allOf": [{"required": ["cmd"]}, {"required": ["args"]}]}},
          ['{"cmd": 1}', "{}"], ['{"cmd": 1, "args": 2}', "1", '"x"'])
    check({"not": {"properties": {"a": {"const": None}}}}, ['{"a": 1}', '{"a": "x", "b": null}'],
          ["{}", '{"a": null}', '{"b": 1}', "1"])
    check({"type": "object", "not": {"properties": {"a": {"type": "integer"}}, "additionalProperties": False}},
          ['{"a": "x"}', '{"b": 1}', '{"a": 1, "b": 2}'], ["{}", '{"a": 1}'])
    check({"not": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}},
          ['["x"]', "[1, 2, 3]", '[1, "x"]', "1", "{}"], ["[]", "[1, 2]"])
    check({"not": {"const": {"k": [1, 2]}}}, ['{"k": [1]}', '{"k": [1, 2], "j": 0}', "{}", "[1, 2]"],
          ['{"k": [1, 2]}', '{"k": [1.0, 2]}'])


def test_complements_too_large_to_write_are_refused():
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    # the strings outside this pattern need a DFA with 2^13 states
    with pytest.raises(GrammarError, match="not at #/not: the values outside"):
        convert_schema({"not": {"pattern": "^[ab]*a[ab]{12}$"}})
    with pytest.raises(GrammarError, match="oneOf"):
        convert_schema({"oneOf": [{"type": "string", "pattern": "^[ab]*a[ab]{12}$"},
                                  {"type": "string", "maxLength": 3}]})


# --------------------------------------------------------------------------
# uniqueItems over finite item domains
# --------------------------------------------------------------------------

def test_unique_items_over_an_enum():
    s = {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True}
    check(s, ["[]", '["a"]', '["c", "a"]', '["b", "c", "a"]'],
          ['["a", "a"]', '["a", "b", "a"]', '["a", "\\u0061"]', '["d"]'], policy=['["\\u0061", "b"]'])
    s = {"type": "array", "items": {"enum": [1, 1.0, 2, "1"]}, "uniqueItems": True, "minItems": 2}
    check(s, ["[1, 2]", '[2, "1"]', '[1, "1", 2]'], ["[1]", "[1, 1]", "[2, 2]", "[1, 1.0]", "[1, 2, 1]"])


def test_unique_items_over_booleans_small_ranges_and_tuples():
    check({"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
          ["[]", "[true]", "[false, true]"], ["[true, true]", "[true, false, true]"])
    check({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 3}, "uniqueItems": True},
          ["[3, 1]", "[1, 2, 3]"], ["[1, 1]", "[4]", "[1, 2, 3, 1]"])
    check({"type": "array", "prefixItems": [{"const": "x"}], "items": {"enum": ["x", "y"]},
           "uniqueItems": True}, ['["x"]', '["x", "y"]'], ['["y"]', '["x", "x"]', '["x", "y", "y"]'])


def test_unique_items_over_an_infinite_domain_is_a_warned_policy(caplog):
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    s = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"},
                                                   "uniqueItems": True, "maxItems": 3}}}
    with caplog.at_level("WARNING", logger="stackmask"):
        sg = convert_schema(s)
    assert any("uniqueItems at #/properties/tags/uniqueItems: not enforced" in w for w in sg.warnings)
    assert "#/properties/tags/uniqueItems" in caplog.text
    # everything else still holds: only arrays with repeated items are added
    check(s, ['{"tags": ["a", "b"]}', '{}'], ['{"tags": ["a", 1]}', '{"tags": ["a", "b", "c", "d"]}'])
    c = constraint(s)
    assert accepts(c, '{"tags": ["a", "a"]}')            # the policy: not enforced
    # unique_items="error": a keyword that cannot be enforced (named, with its pointer)
    with pytest.raises(GrammarError, match="uniqueItems at #/properties/tags/uniqueItems"):
        convert_schema(s, unique_items="error")
    sg = convert_schema(s, unique_items="error", strict=False)
    assert any(w.startswith("uniqueItems at #/properties/tags/uniqueItems") for w in sg.warnings)
    with pytest.raises(ValueError):
        convert_schema(s, unique_items="ignore")
    # finite domains stay exact whatever the option
    f = {"type": "array", "items": {"enum": ["x", "y"]}, "uniqueItems": True}
    for opt in ("warn", "error"):
        assert not convert_schema(f, unique_items=opt).warnings
    check(f, ['["x", "y"]', '[]'], ['["x", "x"]'])


# --------------------------------------------------------------------------
# literal objects share the key terminals of declared names
# --------------------------------------------------------------------------

def test_a_literal_object_keys_lex_like_declared_keys():
    # found by the property test: the enum's key "a" was its own terminal, which lost to the
    # declared key "a" (priority 1) of the object built for the dependency, on the same lexeme
    check({"dependentSchemas": {"a": {"enum": [{"a": {}, "b": 1}]}}},
          ['{"a": {}, "b": 1}', '{"b": 1}', "{}", "3"], ['{"a": {}}', '{"a": {}, "b": 2}'])
    check({"anyOf": [{"enum": [{"a": 1}]}, {"type": "object", "additionalProperties": {"type": "string"}}]},
          ['{"a": 1}', '{"a": "x"}', '{"b": "y"}'], ['{"a": 2}', '{"b": 1}'])
    check({"anyOf": [{"allOf": [{"required": ["a"]}, {"type": "object"}, {"enum": [{"a": 1}]}]},
                     {"not": {"required": ["a"]}}]},
          ['{"a": 1}', '{"b": 2}'], ['{"a": 2}', "3"])


def test_not_required_leaves_only_objects_lacking_a_key():
    # required holds vacuously for non-objects, so ``not: {required: ...}`` excludes them
    check({"not": {"required": ["a"]}}, ['{"b": 1}', "{}"], ['{"a": 1}', "3", '"x"', "null", "[]"])
    check({"not": {"required": ["a", "b"]}}, ['{"a": 1}', '{"b": 1}', "{}"],
          ['{"a": 1, "b": 2}', "true"])


# --------------------------------------------------------------------------
# oneOf with an integer branch: a value, not a spelling, is in one branch
# --------------------------------------------------------------------------

@pytest.mark.parametrize("schema,valid,invalid", [
    # 1.0 is the integer 1: in both branches, so in neither exactly once
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]},
     ['1.5', '-0.25', '2.50'], ['1', '1.0', '1.00', '-0', '-0.0', '0.0', '1e0', '15', '"a"']),
    ({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "number", "maximum": 10}]},
     ['-3', '-2.0', '12', '11', '3.5', '0.5'], ['3', '3.0', '10', '10.00', '0', '0.0', '10.5']),
    ({"oneOf": [{"type": "number"}, {"type": "integer", "multipleOf": 2}]},
     ['3', '3.0', '1.5', '-1'], ['2', '2.0', '4.00', '0']),
])
def test_one_of_with_an_integer_branch_excludes_every_spelling_of_its_values(schema, valid, invalid):
    check(schema, valid, invalid)


def test_the_grammar_text_does_not_depend_on_the_hash_seed():
    """The artifact key is the grammar's text: a schema must give the same text in every
    process (key terminals were numbered in a set's order, so a cache never hit across
    processes)."""
    import os
    import subprocess
    import sys
    code = ("import json, sys; from stackmask.grammars.json_schema import convert_schema; "
            "from stackmask.compile import grammar_text; "
            "print(grammar_text(convert_schema(json.loads(sys.argv[1])).grammar))")
    schema = {"type": "object", "required": ["b"], "properties": {
        "alpha": {"type": "string"}, "b": {"type": "integer"}, "gamma": {"type": "boolean"},
        "delta": {"type": "object", "properties": {"x": {}, "y": {}, "zeta": {}}}}}
    import json
    texts = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code, json.dumps(schema)], env=env,
                             capture_output=True, text=True, check=True)
        texts.add(out.stdout)
    assert len(texts) == 1


# --------------------------------------------------------------------------
# unevaluatedProperties / unevaluatedItems (decided statically)
# --------------------------------------------------------------------------

def test_unevaluated_properties_over_all_of_and_ref():
    check({"type": "object", "properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}],
           "unevaluatedProperties": False},
          ['{"a": 1}', '{"a": 1, "b": 2}', "{}", '{"b": 2}'], ['{"c": 1}', '{"a": 1, "c": 2}'])
    # a $ref next to the keyword: what the target evaluates counts
    check({"$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
           "$ref": "#/$defs/base", "properties": {"name": {"type": "string"}}, "unevaluatedProperties": False},
          ['{"id": 1}', '{"id": 1, "name": "x"}'], ['{"id": 1, "x": 2}', '{"name": "x"}', '{"id": "1"}'])
    # patternProperties evaluate what they match; additionalProperties evaluates everything
    check({"type": "object", "patternProperties": {"^x-": {}}, "properties": {"a": {}},
           "unevaluatedProperties": False}, ['{"a": 1, "x-y": 2}', '{"x-": 1}'], ['{"b": 1}', '{"a": 1, "y": 2}'])
    check({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"},
           "unevaluatedProperties": False}, ['{"a": 1, "b": "s"}'], ['{"b": 1}'])


def test_unevaluated_properties_schema_valued():
    check({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": {"type": "integer"}},
          ['{"a": "s"}', '{"b": 1}', '{"a": "x", "b": 2}'], ['{"b": "s"}', '{"a": 1, "c": null}'])
    check({"type": "object", "patternProperties": {"^p": {"type": "string"}},
           "allOf": [{"properties": {"q": {}}}], "unevaluatedProperties": {"type": "null"}},
          ['{"p1": "s", "q": 1, "r": null}'], ['{"p1": 1}', '{"r": 1}'])


def test_unevaluated_properties_chosen_by_the_branch_that_holds():
    kinds = {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"],
             "oneOf": [{"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}},
                       {"properties": {"kind": {"const": "b"}, "y": {"type": "string"}}}],
             "unevaluatedProperties": False}
    check(kinds, ['{"kind": "a"}', '{"kind": "a", "x": 1}', '{"kind": "b", "y": "s"}'],
          ['{"kind": "a", "y": "s"}', '{"kind": "b", "x": 1}', '{"kind": "a", "z": 1}'])
    # if's members count only when it holds; else's when it does not
    check({"type": "object", "if": {"properties": {"t": {"const": 1}}, "required": ["t"]},
           "then": {"properties": {"p": {}}}, "else": {"properties": {"q": {}}},
           "unevaluatedProperties": False},
          ['{"t": 1, "p": 2}', '{"q": 2}', '{"t": 1}', "{}"], ['{"t": 1, "q": 2}', '{"p": 1}', '{"t": 2}',
                                                             '{"t": 2, "q": 1}'])
    # a dependent schema evaluates its members when its key is present
    check({"type": "object", "properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {}}}},
           "unevaluatedProperties": False}, ['{"a": 1, "b": 2}', '{"a": 1}', "{}"], ['{"b": 2}', '{"c": 1}'])


def test_unevaluated_properties_sees_only_its_own_scope():
    # the allOf member's keyword does not see the outer "b": {"a":1,"b":2} fails it
    check({"allOf": [{"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}],
           "properties": {"b": {}}}, ['{"a": 1}', "{}"], ['{"a": 1, "b": 2}', '{"b": 1}'])
    # a nested keyword evaluates every member it saw, for the outer one
    check({"type": "object", "allOf": [{"properties": {"a": {}}, "unevaluatedProperties": {"type": "integer"}}],
           "unevaluatedProperties": False}, ['{"a": "s", "b": 1}'], ['{"b": "s"}'])
    check({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}},
                                                  "unevaluatedProperties": False}}},
          ['{"a": {"b": 1}}', '{"a": {}, "c": 1}'], ['{"a": {"c": 1}}'])


def test_unevaluated_properties_keeps_the_key_order_policy():
    s = {"type": "object", "allOf": [{"properties": {"z": {}, "y": {}}}], "properties": {"x": {}},
         "unevaluatedProperties": False}
    # allOf written before properties: its members first, in document order
    check(s, ['{"z": 1, "y": 2, "x": 3}', '{"y": 2}'], ['{"w": 1}'], policy=['{"x": 3, "z": 1}'])


def test_unevaluated_items():
    check({"type": "array", "prefixItems": [{"type": "integer"}],
           "allOf": [{"prefixItems": [{}, {"type": "string"}]}], "unevaluatedItems": False},
          ["[]", "[1]", '[1, "a"]'], ['[1, "a", 3]', '["a"]'])
    check({"type": "array", "prefixItems": [{"type": "integer"}], "unevaluatedItems": {"type": "string"}},
          ["[1]", '[1, "a", "b"]'], ["[1, 2]"])
    check({"type": "array", "items": {"type": "integer"}, "unevaluatedItems": False}, ["[1, 2]", "[]"], ['["a"]'])
    check({"type": "array", "oneOf": [{"prefixItems": [{"const": 1}, {}]}, {"prefixItems": [{"const": 2}]}],
           "unevaluatedItems": False}, ["[1]", "[1, 5]", "[2]"], ["[2, 5]", "[1, 5, 6]", "[3]"])


def test_unevaluated_that_cannot_be_decided_is_refused_by_name():
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    overlapping = {"type": "object", "anyOf": [{"properties": {"a": {}}, "required": ["a"]},
                                               {"properties": {"b": {}}, "required": ["b"]}],
                   "unevaluatedProperties": False}
    with pytest.raises(GrammarError, match="unevaluatedProperties at #/unevaluatedProperties") as ei:
        convert_schema(overlapping)
    assert "anyOf branches that may hold together" in str(ei.value)
    with pytest.raises(GrammarError, match="contains evaluates"):
        convert_schema({"type": "array", "contains": {"type": "integer"}, "unevaluatedItems": False})
    # strict=False: the keyword is left out (a warning), so the grammar accepts more
    with pytest.warns(UserWarning):
        c = constraint(overlapping, strict=False)
    assert accepts(c, '{"a": 1, "b": 2}') and accepts(c, '{"a": 1, "c": 2}')


def test_all_of_reference_to_a_boolean_schema():
    check({"allOf": [{"$ref": "#/$defs/d"}], "$defs": {"d": True}, "type": "integer"}, ["1"], ['"a"'])
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="accepts no JSON value"):
        convert_schema({"allOf": [{"$ref": "#/$defs/d"}], "$defs": {"d": False}})


# --------------------------------------------------------------------------
# deep nesting: generated regexes nest once per length unit
# --------------------------------------------------------------------------

def test_a_lookahead_beside_a_length_nests_deeply_and_converts():
    import sys
    from stackmask.grammars.json_schema import convert_schema
    # the lookahead's difference, written back as a regex, nests once per length (~200)
    s = {"type": "string", "pattern": "^(?!aws:).{0,200}$"}
    before = sys.getrecursionlimit()
    sg = convert_schema(s)
    assert sys.getrecursionlimit() == before            # the raised limit is put back
    c = constraint(s)
    assert accepts(c, '"' + "x" * 200 + '"') and accepts(c, '"aw"')
    assert not accepts(c, '"' + "x" * 201 + '"') and not accepts(c, '"aws:x"')
    assert not sg.warnings


# --------------------------------------------------------------------------
# pattern: Annex B identity escapes and lone surrogates (real-world patterns)
# --------------------------------------------------------------------------

def test_pattern_identity_escapes_of_punctuation():
    # CloudFormation tag keys: \_ \: \= \@ are the characters themselves (Annex B; Python's re)
    s = {"type": "string", "pattern": r"^(?!aws:.*)[a-zA-Z0-9\s\_\.\/\=\+\-\@\:]+$"}
    check(s, ['"my_key:v=1"', '"a@b"', '"x y"'], ['"aws:x"', '""', '"a#"'])
    from stackmask.grammars.json_schema import convert_schema
    from stackmask import GrammarError
    with pytest.raises(GrammarError, match="unknown escape"):
        convert_schema({"type": "string", "pattern": r"^\q$"})     # letters stay refused


def test_pattern_lone_surrogates_match_nothing():
    # the XML-character idiom written with lone surrogates: those code units never occur in
    # a JSON string the library accepts (lone surrogate escapes are rejected), so they add
    # nothing to the class and match nothing outside one
    s = {"type": "string",
         "pattern": r"^[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDBFF-\uDC00\uDFFF\t\r\n]*$"}
    check(s, ['"plain text"', '"tab\\there"', '"\u00e9\u4e2d"', '""'],
          ['"\\u0001"', '"\\uffff"'])
    c = constraint(s)
    assert not accepts(c, '"\\ud800"') and not accepts(c, '"\\udbff"')
    from stackmask import GrammarError
    from stackmask.grammars.json_schema import convert_schema
    with pytest.raises(GrammarError, match="accepts no JSON value"):
        convert_schema({"type": "string", "pattern": r"^a\uD800b$"})
    check({"anyOf": [{"type": "string", "pattern": r"^a\uD800b$"}, {"type": "integer"}]},
          ["1"], ['"ab"', '"a"'], validator=False)
    # a surrogate pair is one code point beyond U+FFFF (UTF-16 semantics, as ECMA-262; Python's
    # re, which the validator uses, reads the two halves as two characters)
    check({"type": "string", "pattern": r"^\ud83d\ude00$"}, ['"\U0001F600"'], ['"a"'], validator=False)


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"type": "array", "items": {"type": "string"}, "uniqueItems": True}, {"type": "string"}]},
    {"anyOf": [{"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
               {"type": "array", "maxItems": 1}]},
    {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
     "uniqueItems": True},
    {"allOf": [{"type": "array", "uniqueItems": True}, {"items": {"enum": [1, 2]}}]},
    {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"},
                                            "uniqueItems": True, "minItems": 2}}, "required": ["t"]},
])
def test_the_unique_items_policy_only_adds_arrays_with_repeated_items(schema):
    # every disagreement with the validator is an instance it accepts once uniqueItems is
    # dropped; where uniqueItems sits under a complement (not, oneOf overlap, if) the schema
    # is refused instead (test_json_schema.py / above)
    def drop(x):
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if k != "uniqueItems"}
        return [drop(v) for v in x] if isinstance(x, list) else x
    c = constraint(schema)
    texts = ['[]', '["a"]', '["a", "a"]', '["a", "b"]', '"s"', '[1, 1]', '[1, 2]', '[[1, 1]]',
             '[[1, 2], [1, 2]]', '[1, 2, 1]', '{"t": ["x", "x"]}', '{"t": ["x", "y"]}', '{"t": ["x"]}']
    for t in texts:
        a, v = accepts(c, t), jsonschema_valid(schema, t)
        if a != v:
            assert a and jsonschema_valid(drop(schema), t), (schema, t)


def test_pattern_caret_inside_a_lookahead_tests_the_start():
    # CloudFormation names: "not all digits" as a lookahead at the start of an unanchored
    # pattern; the '^' inside it holds only where the match begins at the string's start, so
    # a match from the second character on passes ("123" does; "1" has none)
    s = {"type": "string", "pattern": r"(?!^[0-9]+$)([a-zA-Z0-9\-_' ']+)"}
    check(s, ['"abc"', '"12a"', '"1 2"', '"#1"', '"1#"', '"a"', '"123"'],
          ['"1"', '"9"', '""', '"#"', '"#$"'])
    s = {"type": "string", "pattern": r"^(?!^[0-9]+$)[a-z0-9]+$"}
    check(s, ['"a1"', '"1a"'], ['"12"', '"1"', '""'])
