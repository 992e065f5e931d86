"""Property test: for random schemas from a small keyword algebra and random
instances, the schema grammar accepts an instance exactly when the
``jsonschema`` package's ``Draft202012Validator`` does, under the documented
policies: objects' keys in the schema's property order (checked here as "some
order of the keys is accepted", every order rejected for an invalid
instance), integers spelled as integer literals (no float with a zero
fraction is generated), ``json.dumps`` whitespace.

Schemas the converter refuses (a keyword it cannot enforce exactly, a schema
that accepts nothing; ``uniqueItems`` over an infinite item domain, converted with
``unique_items="error"`` rather than the default policy) are skipped; the slow variant reports how many were."""

from __future__ import annotations

import itertools
import json
import logging

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from stackmask import Constraint, GrammarError, Vocab
from stackmask.grammars.json_schema import convert_schema
from test_json_schema import accepts

jsonschema = pytest.importorskip("jsonschema")

BYTES = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])
KEYS = ("a", "b", "c")

# -- instances --------------------------------------------------------------------------
numbers = st.one_of(st.integers(-3, 7), st.sampled_from([-1.5, 0.5, 2.5, 3.25, 4.75]))
strings = st.sampled_from(["", "a", "b", "ab", "ba", "aab", "é", "aé", "abc d", "xyzzy"])
scalars = st.one_of(st.none(), st.booleans(), numbers, strings)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=6)

# -- schemas ----------------------------------------------------------------------------
TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
small = st.integers(-2, 5)
PATTERNS = ("^a", "b$", "^[ab]*$", "a", "^.{2}$")


#: ``if`` schemas of the forms whose complement the converter writes
conditions = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
    st.builds(lambda v: {"const": v}, scalars),
    st.builds(lambda vs: {"enum": vs}, st.lists(scalars, min_size=1, max_size=3)),
    st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique=True)),
    st.builds(lambda k, v, t: dict({"properties": {k: {"const": v}}}, **({"type": "object"} if t else {})),
              st.sampled_from(KEYS), scalars, st.booleans()),
    # string and number keywords, closed objects, arrays, structured constants
    st.builds(lambda p, t: dict({"pattern": p}, **({"type": "string"} if t else {})),
              st.sampled_from(PATTERNS), st.booleans()),
    st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "exclusiveMaximum"]), small),
    st.builds(lambda k, n: {"type": "integer", k: n}, st.sampled_from(["minimum", "maximum"]), small),
    st.builds(lambda ks, r: {"type": "object", "properties": {k: {"type": "integer"} for k in ks},
                             "required": ks[:r], "additionalProperties": False},
              st.lists(st.sampled_from(KEYS), max_size=2, unique=True), st.integers(0, 1)),
    st.builds(lambda t, n: {"items": {"type": t}, "maxItems": n}, st.sampled_from(TYPES), st.integers(0, 2)),
    st.builds(lambda k, t: {"properties": {k: {}}, "additionalProperties": {"type": t}},
              st.sampled_from(KEYS), st.sampled_from(TYPES)),
    st.builds(lambda k, n: {k: n}, st.sampled_from(["minProperties", "maxProperties"]), st.integers(0, 2)),
    st.builds(lambda v: {"const": v}, values),
)


def keyword_schemas(sub):
    """One keyword (with its value) at a time; ``sub`` builds subschemas."""
    kw = st.one_of(
        st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
        st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(TYPES), min_size=1, max_size=3,
                                                     unique=True)),
        st.builds(lambda vs: {"enum": vs}, st.lists(values, min_size=1, max_size=4)),
        st.builds(lambda v: {"const": v}, values),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                                         "exclusiveMaximum"]),
                  st.one_of(small, st.sampled_from([0.5, 2.5]))),
        st.builds(lambda n: {"multipleOf": n}, st.sampled_from([2, 3, 0.5, 0.25])),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minLength", "maxLength"]), st.integers(0, 3)),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(PATTERNS)),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minItems", "maxItems"]), st.integers(0, 3)),
        st.builds(lambda k, n: {k: n}, st.sampled_from(["minProperties", "maxProperties"]),
                  st.integers(0, 3)),
        st.builds(lambda s: {"items": s}, sub),
        st.builds(lambda vs: {"items": {"enum": vs}, "uniqueItems": True}, st.lists(scalars, min_size=1,
                                                                                     max_size=4)),
        st.builds(lambda ps: {"prefixItems": ps}, st.lists(sub, min_size=1, max_size=2)),
        st.builds(lambda ps: {"properties": ps}, st.dictionaries(st.sampled_from(KEYS), sub, min_size=1,
                                                                 max_size=3)),
        st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(KEYS), min_size=1, max_size=2,
                                                      unique=True)),
        st.builds(lambda s: {"additionalProperties": s}, sub),
        st.builds(lambda d: {"dependentRequired": d},
                  st.dictionaries(st.sampled_from(KEYS), st.lists(st.sampled_from(KEYS), max_size=2,
                                                                   unique=True), min_size=1, max_size=2)),
        st.builds(lambda d: {"dependentSchemas": d}, st.dictionaries(st.sampled_from(KEYS), sub, min_size=1,
                                                                      max_size=2)),
        st.builds(lambda k, bs: {k: bs}, st.sampled_from(["allOf", "anyOf", "oneOf"]),
                  st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda c, t, e: {"if": c, "then": t, "else": e}, conditions, sub, sub),
        st.builds(lambda t: {"not": {"type": t}}, st.sampled_from(TYPES)),
        st.builds(lambda v: {"not": {"const": v}}, scalars),
        st.builds(lambda c: {"not": c}, conditions),
        st.builds(lambda c: {"contains": c}, conditions),
        st.builds(lambda s: {"unevaluatedProperties": s}, sub),
        st.builds(lambda s: {"unevaluatedItems": s}, sub),
    )
    return st.builds(_merge_keywords, st.lists(kw, min_size=1, max_size=3))


def _merge_keywords(parts):
    out = {}
    for p in parts:
        for k, v in p.items():
            out.setdefault(k, v)          # a keyword once, with its first value
    return out


schemas = st.recursive(st.one_of(st.booleans(), keyword_schemas(st.just({}))), keyword_schemas,
                       max_leaves=4)


# -- the check ----------------------------------------------------------------------------
def _spellings(v):
    """Every serialization of ``v`` with its objects' keys in some order."""
    if isinstance(v, dict):
        items = list(v.items())
        subs = [list(_spellings(x)) for _, x in items]
        for perm in itertools.permutations(range(len(items))):
            for choice in itertools.product(*[subs[i] for i in perm]):
                yield "{" + ", ".join(json.dumps(items[i][0]) + ": " + c
                                      for i, c in zip(perm, choice)) + "}"
    elif isinstance(v, list):
        for choice in itertools.product(*[list(_spellings(x)) for x in v]):
            yield "[" + ", ".join(choice) + "]"
    else:
        yield json.dumps(v)


STATS = {"schemas": 0, "refused": 0, "valid": 0, "invalid": 0}


def _run(schema, instances):
    STATS["schemas"] += 1
    try:
        # uniqueItems over an infinite item domain is a policy (not enforced, a warning):
        # refused here, so the grammar must agree with the validator exactly
        g = convert_schema(schema, unique_items="error").grammar
    except GrammarError:
        STATS["refused"] += 1
        assume(False)
    c = Constraint(g, BYTES, compile="lazy", cache_dir=False, progress=False)
    validator = jsonschema.Draft202012Validator(schema)
    for v in instances:
        valid = validator.is_valid(v)
        STATS["valid" if valid else "invalid"] += 1
        got = any(accepts(c, t) for t in _spellings(v))
        assert got == valid, (f"schema {json.dumps(schema)}: instance {json.dumps(v)} is "
                              f"{'valid' if valid else 'invalid'} but the grammar "
                              f"{'rejects every key order of' if valid else 'accepts'} it")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas, st.lists(values, min_size=1, max_size=8))
def test_grammar_agrees_with_jsonschema(schema, instances):
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    _run(schema, instances)


#: a schema with ``unevaluatedProperties``/``unevaluatedItems`` at its top and keywords
#: whose subschemas evaluate members or items (in place: ``$ref``, ``allOf``, branches,
#: ``if``/``then``/``else``, ``dependentSchemas``), so their interplay is what is drawn
_in_place = st.one_of(
    st.builds(lambda ps: {"properties": ps}, st.dictionaries(st.sampled_from(KEYS), schemas, min_size=1,
                                                             max_size=2)),
    st.builds(lambda ps: {"prefixItems": ps}, st.lists(schemas, min_size=1, max_size=2)),
    st.builds(lambda s: {"items": s}, schemas),
    st.builds(lambda p: {"patternProperties": {p: {}}}, st.sampled_from(["^a", "c$"])),
    st.builds(lambda s: {"additionalProperties": s}, schemas),
    st.just({"$ref": "#/$defs/d"}),
)
unevaluated_schemas = st.builds(
    lambda d, kw, u, own, subs, comb: dict(_merge_keywords(own), **{kw: u}, **comb(subs), **{"$defs": {"d": d}}),
    st.one_of(keyword_schemas(st.just({})), _in_place.filter(lambda x: "$ref" not in x)),
    st.sampled_from(["unevaluatedProperties", "unevaluatedItems"]),
    st.one_of(st.just(False), st.just(True), schemas),
    st.lists(_in_place, max_size=2),
    st.lists(st.builds(_merge_keywords, st.lists(_in_place, min_size=1, max_size=2)), min_size=1, max_size=3),
    st.sampled_from([lambda bs: {"allOf": bs}, lambda bs: {"anyOf": bs}, lambda bs: {"oneOf": bs},
                     lambda bs: {"if": {"required": ["a"]}, "then": bs[0], "else": bs[-1]},
                     lambda bs: {"if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
                                 "then": bs[0]},
                     lambda bs: {"dependentSchemas": {"b": bs[0]}}]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(unevaluated_schemas, st.lists(values, min_size=1, max_size=8))
def test_unevaluated_agrees_with_jsonschema(schema, instances):
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    _run(schema, instances)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas, st.lists(values, min_size=1, max_size=12))
def test_grammar_agrees_with_jsonschema_many(schema, instances):
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    _run(schema, instances)


def teardown_module(module):
    logging.getLogger("stackmask").info("property test: %s", STATS)
    print("\njson schema property test:", STATS)
