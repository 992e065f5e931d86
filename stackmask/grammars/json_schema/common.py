"""Shared model of the JSON Schema front end: keyword sets, the value-language record
``Lang``, JSON equality and small schema helpers."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .. import ecma_regex as R
from ..ecma_regex import NONE, alt


log = logging.getLogger("stackmask.grammars.json_schema")


class SchemaWarning(UserWarning):
    """Keywords ignored because they cannot be enforced (``strict=False``)."""


#: keywords with no effect on validity (never reported)
ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "readOnly", "writeOnly",
    "deprecated", "$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
    "definitions", "$defs", "contentMediaType", "contentEncoding", "contentSchema", "$vocabulary",
    "discriminator", "nullable_comment",
})


#: every keyword of the 2020-12 vocabularies, of drafts 4 to 2019-09 and the OpenAPI
#: extras the converter reads; another keyword is unknown (``unknown_keywords=``)
KNOWN_KEYWORDS = ANNOTATIONS | frozenset({
    # 2020-12: core, applicator, unevaluated, validation, format, content
    "$ref", "$dynamicRef", "$defs", "prefixItems", "items", "contains", "additionalProperties",
    "properties", "patternProperties", "dependentSchemas", "propertyNames", "if", "then", "else",
    "allOf", "anyOf", "oneOf", "not", "unevaluatedItems", "unevaluatedProperties", "type", "const",
    "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired", "format",
    # drafts 4-7 and 2019-09
    "dependencies", "additionalItems", "$recursiveRef",
    # OpenAPI
    "nullable",
})


SUPPORTED_KEYWORDS = (
    "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
    "propertyNames (string schemas)", "minProperties", "maxProperties",
    "dependentRequired", "dependentSchemas", "dependencies", "items", "prefixItems",
    "additionalItems", "minItems", "maxItems", "contains, minContains, maxContains (writable "
    "complement)", "uniqueItems (finite item domains; elsewhere a warned policy)", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "anyOf",
    "oneOf (disjoint branches or writable complements)", "allOf", "not (writable complement)",
    "if/then/else (writable complement)", "$ref", "$defs", "definitions", "$recursiveRef",
    "$dynamicRef", "nullable (OpenAPI)",
    "unevaluatedProperties, unevaluatedItems (where one branch at most decides them)",
)


ALL_TYPES = ("null", "boolean", "object", "array", "string", "number")


class StateSymbols:
    """Nonterminals named after the states of a counting construction (items so far,
    values used, members emitted, ...), made on first use: ``sym(*state)`` gives the
    state's name; ``pop()`` the next ``(state, name)`` whose rules are not written yet."""

    def __init__(self, name_of):
        self._name_of = name_of
        self._made: dict = {}
        self._todo: list = []

    def __call__(self, *state) -> str:
        got = self._made.get(state)
        if got is None:
            got = self._made[state] = self._name_of(*state)
            self._todo.append(state)
        return got

    def __bool__(self) -> bool:
        return bool(self._todo)

    def pop(self) -> tuple:
        state = self._todo.pop()
        return state, self._made[state]


@dataclass
class Lang:
    """The JSON values of one schema, split by type. ``string`` is the
    decoded-string language, ``number`` the language of number texts; the
    tuples hold grammar symbols (object/array nonterminals, literal
    objects/arrays, opaque recursive references)."""
    null: bool = False
    true: bool = False
    false: bool = False
    string: tuple = NONE
    number: tuple = NONE
    objects: tuple = ()
    arrays: tuple = ()
    others: tuple = ()

    def union(self, o: "Lang") -> "Lang":
        return Lang(self.null or o.null, self.true or o.true, self.false or o.false,
                    R.union(self.string, o.string), alt(self.number, o.number),
                    uniq(self.objects + o.objects), uniq(self.arrays + o.arrays),
                    uniq(self.others + o.others))

    def is_empty(self) -> bool:
        return not (self.null or self.true or self.false or self.objects or self.arrays or self.others
                    or self.string != NONE or self.number != NONE)

    def kinds(self) -> set:
        k = set()
        if self.null:
            k.add("null")
        if self.true or self.false:
            k.add("boolean")
        if self.string != NONE:
            k.add("string")
        if self.number != NONE:
            k.add("number")
        if self.objects:
            k.add("object")
        if self.arrays:
            k.add("array")
        if self.others:
            k.add("other")
        return k


#: array keywords merged together by ``allOf`` (see :meth:`Converter.array_parts`)
ITEM_KEYS = frozenset({"items", "prefixItems", "additionalItems", "prefix__", "rest__"})


def conj(x, y):
    """Schema of the values valid under both ``x`` and ``y``."""
    if x is True or x == {}:
        return y
    if y is True or y == {} or canon(x) == canon(y):
        return x
    if x is False or y is False:
        return False
    return {"allOf": [x, y]}


def uniq(t: tuple) -> tuple:
    return tuple(dict.fromkeys(t))


def esc_ptr(s: str) -> str:
    return s.replace("~", "~0").replace("/", "~1")


def canon(node) -> str:
    return json.dumps(node, sort_keys=True, ensure_ascii=False, default=str)


def json_eq(a, b) -> bool:
    """JSON Schema equality (1 == 1.0, true != 1, objects unordered)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_eq(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    try:
        return Decimal(v) if isinstance(v, int) else Decimal(repr(v))
    except InvalidOperation:
        return None


def is_int_value(v) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))


class Problem(Exception):
    pass
