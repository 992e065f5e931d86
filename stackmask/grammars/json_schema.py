"""JSON Schema -> stackmask grammar.

    g = stackmask.Grammar.from_json_schema(schema)              # dict or JSON text
    c = stackmask.Constraint(g, vocab)                          # GLR where the grammar needs it
    c = schema_constraint(schema, vocab)                        # the same in one call

The grammar accepts exactly the JSON texts that are valid under the schema,
within the documented policies below (docs/json-schema.md has the keyword
table); keywords it cannot enforce exactly are
never dropped silently: they raise :class:`stackmask.GrammarError` naming the
keyword and its JSON pointer, or (``strict=False``) are ignored with a
warning listing each one (also in :attr:`SchemaGrammar.warnings`).

Policies (what "exact" means here)
----------------------------------
* **Key order.** Declared ``properties`` appear in the schema's document
  order (then ``required`` names that are not in ``properties``, in
  ``required`` order). With ``allOf``/``anyOf``/``oneOf`` next to
  ``properties``, the properties of whichever keyword is written first come
  first (``{"allOf": [A], "properties": P}``: A's, then P's). Any property
  may be absent unless required. Additional / pattern properties (where the
  schema allows them) may appear anywhere between the declared ones. A
  document with declared keys in another order is rejected; duplicate keys
  are rejected. (glrmask, llguidance and xgrammar also require schema
  order.)
* **Strings.** Every JSON spelling of an accepted string is accepted: raw
  characters, the short escapes and ``\\uXXXX`` (any hex case, surrogate pairs
  for characters beyond U+FFFF), also inside property names and ``enum`` /
  ``const`` strings; raw control characters never. Lone surrogate escapes are
  rejected. ``minLength``/``maxLength`` count code points, as JSON Schema
  says.
* **Numbers.** Integers are plain integer literals (``-?(0|[1-9][0-9]*)``,
  ``-0`` included; no fraction or exponent); bounds are exact digit-range
  languages. Numbers with bounds other than 0, numbers with ``multipleOf``
  (any decimal, exact divisibility) and numbers under a ``not`` that removes
  number values are accepted in plain decimal notation (no exponent:
  ``x >= 0.5`` is not a regular property of exponent notation); bounds at 0
  and unbounded numbers allow exponents. ``enum``/``const`` numbers are
  accepted in their canonical spelling (``1`` also as ``1.0`` when the schema
  wrote ``1.0``).
* **enum / const** objects and arrays are accepted with their members in the
  order written.
* **Whitespace** (``whitespace=``): ``"bounded"`` (default) allows, next to
  each ``{ } [ ] ,`` and after each ``:``, at most one line break followed by
  at most ``max_whitespace`` (default 20) spaces/tabs, and at most one space
  before a ``:``, so a model cannot loop on whitespace but pretty-printed and
  ``json.dumps`` output parse; no whitespace before or after the document.
  (The whitespace after ``{ [ , :`` is a ``WS`` terminal of the grammar, so
  the counted blanks are not repeated inside every key terminal of the
  lexer.) ``"compact"`` allows none, ``"flexible"`` any amount (RFC 8259,
  also around the document).
* **Formats**: date (real calendar dates, leap years included), time and
  date-time (RFC 3339; leap seconds rejected, as the ``jsonschema`` package
  does), duration, email (dot-atom local part @ host name; label lengths not
  limited), hostname (labels of 1-63; the 253-character total is not
  checked), ipv4, ipv6 (RFC 4291 text forms incl. ``::`` and embedded IPv4),
  uuid, uri, uri-reference, iri, iri-reference (RFC 3986/3987 grammars),
  json-pointer, relative-json-pointer are asserted. Formats it cannot check
  (unknown ones, and regex, uri-template, idn-email, idn-hostname) are
  annotations, as 2020-12 says: logged (INFO) and listed in
  :attr:`SchemaGrammar.annotations`; ``unknown_formats="error"`` makes them
  a :class:`GrammarError` naming the format and its pointer.
* **Unknown keywords** (not in :data:`KNOWN_KEYWORDS`: the 2020-12
  vocabularies, drafts 4 to 2019-09, OpenAPI's ``nullable``; ``x-*`` never)
  are ignored, as validators do, with a warning on the ``stackmask`` logger
  suggesting a close match (``maxLenght``: did you mean ``maxLength``?),
  also listed in :attr:`SchemaGrammar.annotations`. ``unknown_keywords=``
  ``"warn"`` (default), ``"ignore"`` (silent) or ``"error"`` (a
  :class:`GrammarError` naming the keyword and its JSON pointer).
* ``$ref`` (``#/...`` pointers, ``$id``/``id`` URIs inside the document,
  ``$anchor``, ``$recursiveRef``/``$dynamicRef`` to the root) becomes a
  grammar nonterminal, so recursive schemas are recursive grammars. In
  drafts 4-7 keywords next to ``$ref`` are ignored (as the spec says).
* ``if``/``then``/``else`` is ``anyOf [if+then, not-if+else]`` where the
  complement of ``if`` can be written (type/enum/const; properties/required
  objects); ``contains`` counts items split by it and its complement.
  Dependencies (``dependentRequired``/``dependentSchemas``/``dependencies``,
  the last in every draft) give one object alternative per choice of present
  trigger keys; ``min/maxProperties`` count members in the object rules.
* ``allOf`` is merged (``items`` per position, beyond the ``prefixItems`` of
  its own schema object; ``multipleOf`` by lcm); ``anyOf`` is a union; ``oneOf`` is exact for
  scalars (string and number languages are made exclusive by regex
  difference) and for object/array branches that are provably disjoint
  (constant/required discriminators, item counts) or identical (then no
  such value is valid); other overlapping object/array branches are
  non-enforceable (``strict=False``: treated as ``anyOf``).
* ``patternProperties``: up to 3 overlapping patterns (all Boolean
  combinations are built, so a key matching two patterns must satisfy both
  schemas) or any number of pairwise-disjoint ones; property names that are
  declared anywhere in the schema are lexed as their own key terminals, so
  every object still sees them with the right (additional/pattern) schema.
* ``strict=False`` never shrinks the language: an ignored keyword makes the
  grammar accept more (e.g. an unsupported ``patternProperties`` regex lets
  any key through with any of the pattern schemas).
* Lexer size: every string terminal is one lexeme of the global lexer, whose
  automaton is the product of all terminals; a ``maxLength``/pattern whose
  terminal exceeds the lexer's limits is reported (non-enforceable) and
  dropped, and schemas combining long ``maxLength`` counters with unanchored
  patterns can make the combined lexer slow to build or too large.
  Overlapping ``anyOf`` object/array branches give an ambiguous grammar
  (LALR(1) conflicts, :attr:`SchemaGrammar.ambiguous`); ``Constraint``'s
  default ``ambiguous=None`` parses it with GLR.

Options: ``strict=True``, ``whitespace="bounded"``, ``max_whitespace=20``,
``max_string_length=None`` (cap on every string), ``max_number_digits=None``
(cap on every digit run of a number), ``additional_properties=None`` (None:
follow the schema, default true; False: treat a missing
``additionalProperties`` as false), ``draft=None`` (4, 6, 7, 2019, 2020;
default from ``$schema``, else 2020), ``unknown_keywords="warn"``,
``unknown_formats="ignore"``.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import warnings as _warnings
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from urllib.parse import unquote, urldefrag, urljoin

from ..errors import GrammarError
from ..glr.grammar import Grammar, Rule, TerminalDef
from . import ecma_regex as R
from .ecma_regex import ANY, ANYSTAR, EPS, NONE, PatternError, TooComplex, alt, ch, lit, rep, seq

log = logging.getLogger(__name__)

__all__ = ["schema_to_grammar", "convert_schema", "schema_constraint", "SchemaGrammar",
           "SchemaWarning", "FORMATS", "SUPPORTED_KEYWORDS",
           "KNOWN_KEYWORDS"]


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
    "complement)", "uniqueItems (when maxItems <= 1)", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "anyOf",
    "oneOf (disjoint branches)", "allOf", "not (type, enum/const, required)",
    "if/then/else (writable complement)", "$ref", "$defs", "definitions", "$recursiveRef",
    "$dynamicRef", "nullable (OpenAPI)",
)

_ALL_TYPES = ("null", "boolean", "object", "array", "string", "number")

# --------------------------------------------------------------------------
# character-level building blocks
# --------------------------------------------------------------------------

D = ch([(0x30, 0x39)])
D19 = ch([(0x31, 0x39)])
DSTAR = rep(D, 0, None)
DPLUS = rep(D, 1, None)


def _dig(a: int, b: int):
    return ch([(0x30 + a, 0x30 + b)])


UINT = alt(lit("0"), seq(D19, DSTAR))
FRAC = seq(lit("."), DPLUS)
EXP = seq(ch([(0x45, 0x45), (0x65, 0x65)]), rep(ch([(0x2B, 0x2B), (0x2D, 0x2D)]), 0, 1), DPLUS)
MINUS = lit("-")
NUMBER = seq(rep(MINUS, 0, 1), UINT, rep(FRAC, 0, 1), rep(EXP, 0, 1))
DEC = seq(UINT, rep(FRAC, 0, 1))                  # unsigned plain decimal
UNS_EXP = seq(UINT, rep(FRAC, 0, 1), rep(EXP, 0, 1))
ZERO_EXP = seq(lit("0"), rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1), rep(EXP, 0, 1))
POS_EXP = seq(alt(seq(lit("0."), DSTAR, D19, DSTAR), seq(D19, DSTAR, rep(FRAC, 0, 1))), rep(EXP, 0, 1))


def _fixed_width(a: str, b: str):
    """Digit strings of len(a) between a and b (same length)."""
    if a == b:
        return lit(a)
    if len(a) == 1:
        return _dig(int(a), int(b))
    if a[0] == b[0]:
        return seq(lit(a[0]), _fixed_width(a[1:], b[1:]))
    k = len(a) - 1
    parts = []
    lo_d, hi_d = int(a[0]), int(b[0])
    if a[1:] != "0" * k:
        parts.append(seq(lit(a[0]), _fixed_width(a[1:], "9" * k)))
        lo_d += 1
    tail = None
    if b[1:] != "9" * k:
        tail = seq(lit(b[0]), _fixed_width("0" * k, b[1:]))
        hi_d -= 1
    if lo_d <= hi_d:
        parts.append(seq(_dig(lo_d, hi_d), rep(D, k, k)))
    if tail is not None:
        parts.append(tail)
    return alt(*parts)


def nat_range(lo: int, hi):
    """Canonical decimal spellings of the naturals in [lo, hi] (hi None = inf)."""
    lo = max(lo, 0)
    if hi is not None and hi < lo:
        return NONE
    alts = []
    if lo == 0:
        alts.append(lit("0"))
        lo = 1
        if hi is not None and hi < 1:
            return alt(*alts)
    dlo = len(str(lo))
    dhi = len(str(hi)) if hi is not None else dlo
    for d in range(dlo, dhi + 1):
        a = max(lo, 10 ** (d - 1))
        b = 10 ** d - 1 if hi is None else min(hi, 10 ** d - 1)
        if a <= b:
            alts.append(_fixed_width(str(a), str(b)))
    if hi is None:
        alts.append(seq(D19, rep(D, dlo, None)))
    return alt(*alts)


def int_range(lo, hi):
    """Integer literals (``-0`` included) with value in [lo, hi] (None = unbounded)."""
    alts = []
    if hi is None or hi >= 0:
        alts.append(nat_range(max(lo, 0) if lo is not None else 0, hi))
    if lo is None or lo < 0:
        top = None if lo is None else -lo          # |x| <= top
        bottom = 1 if hi is None or hi >= 0 else -hi
        alts.append(seq(MINUS, nat_range(bottom, top)))
    if (lo is None or lo <= 0) and (hi is None or hi >= 0):
        alts.append(lit("-0"))
    return alt(*alts)


def _f_ge(F: str):
    if not F:
        return DSTAR
    d = int(F[0])
    a = [seq(_dig(d + 1, 9), DSTAR)] if d < 9 else []
    return alt(*a, seq(lit(F[0]), _f_ge(F[1:])))


def _f_gt(F: str):
    if not F:
        return seq(DSTAR, D19, DSTAR)
    d = int(F[0])
    a = [seq(_dig(d + 1, 9), DSTAR)] if d < 9 else []
    return alt(*a, seq(lit(F[0]), _f_gt(F[1:])))


def _f_le(F: str):
    if not F:
        return rep(lit("0"), 0, None)
    d = int(F[0])
    a = [seq(_dig(0, d - 1), DSTAR)] if d > 0 else []
    return alt(*a, seq(lit(F[0]), _f_le(F[1:])))


def _f_lt(F: str):
    if not F:
        return NONE
    d = int(F[0])
    a = [seq(_dig(0, d - 1), DSTAR)] if d > 0 else []
    return alt(*a, seq(lit(F[0]), _f_lt(F[1:])))


def _split_dec(a: Decimal) -> tuple[int, str]:
    s = format(a, "f")
    if "." in s:
        i, f = s.split(".")
    else:
        i, f = s, ""
    return int(i), f.rstrip("0")


def pos_cmp(a: Decimal, op: str):
    """Unsigned plain decimals x with ``x op a`` (a >= 0)."""
    I, F = _split_dec(a)
    fracopt = rep(FRAC, 0, 1)
    dot = lit(".")
    if op in (">=", ">"):
        if op == ">=":
            suffix = fracopt if not F else seq(dot, _f_ge(F))
        else:
            suffix = seq(dot, _f_gt(F))
        return alt(seq(nat_range(I + 1, None), fracopt), seq(lit(str(I)), suffix))
    zeros = seq(dot, rep(lit("0"), 1, None))
    if op == "<=":
        suffix = alt(EPS, zeros) if not F else alt(EPS, seq(dot, _f_le(F)))
    else:
        suffix = NONE if not F else alt(EPS, seq(dot, _f_lt(F)))
    low = seq(nat_range(0, I - 1), fracopt) if I >= 1 else NONE
    return alt(low, seq(lit(str(I)), suffix))


def dec_cmp(a: Decimal, op: str):
    """Signed plain decimals x with ``x op a``."""
    neg = lambda x: seq(MINUS, x)  # noqa: E731
    if op == ">=":
        return pos_cmp(a, ">=") if a > 0 else alt(DEC, neg(pos_cmp(-a, "<=")))
    if op == ">":
        return pos_cmp(a, ">") if a >= 0 else alt(DEC, neg(pos_cmp(-a, "<")))
    if op == "<=":
        return alt(pos_cmp(a, "<="), neg(DEC)) if a >= 0 else neg(pos_cmp(-a, ">="))
    return alt(pos_cmp(a, "<"), neg(DEC)) if a > 0 else neg(pos_cmp(-a, ">"))


def zero_cmp(op: str):
    """Numbers (exponents allowed) compared with 0."""
    return {">=": alt(UNS_EXP, seq(MINUS, ZERO_EXP)), ">": POS_EXP,
            "<=": alt(ZERO_EXP, seq(MINUS, UNS_EXP)), "<": seq(MINUS, POS_EXP)}[op]


# --------------------------------------------------------------------------
# formats (ECMA syntax, matched entirely)
# --------------------------------------------------------------------------

_DATE = (r"(?:\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
         r"|02-(?:0[1-9]|1\d|2[0-8]))"
         r"|(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)")
_TIME = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_OCT = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"{_OCT}\.{_OCT}\.{_OCT}\.{_OCT}"
_H = r"[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H}:{_H}|{_IPV4})"
_IPV6 = "(?:" + "|".join([
    rf"(?:{_H}:){{6}}{_LS32}",
    rf"::(?:{_H}:){{5}}{_LS32}",
    rf"(?:{_H})?::(?:{_H}:){{4}}{_LS32}",
    rf"(?:(?:{_H}:){{0,1}}{_H})?::(?:{_H}:){{3}}{_LS32}",
    rf"(?:(?:{_H}:){{0,2}}{_H})?::(?:{_H}:){{2}}{_LS32}",
    rf"(?:(?:{_H}:){{0,3}}{_H})?::{_H}:{_LS32}",
    rf"(?:(?:{_H}:){{0,4}}{_H})?::{_LS32}",
    rf"(?:(?:{_H}:){{0,5}}{_H})?::{_H}",
    rf"(?:(?:{_H}:){{0,6}}{_H})?::",
]) + ")"
_HOST_UNBOUNDED = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
# (label lengths are not limited here: a 63-character counter would multiply the lexer's size)
_EMAIL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@" + _HOST_UNBOUNDED


def _uri_parts(iri: bool) -> dict:
    ucs = (r"\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF\u{10000}-\u{1FFFD}\u{20000}-\u{2FFFD}"
           r"\u{30000}-\u{3FFFD}\u{40000}-\u{4FFFD}\u{50000}-\u{5FFFD}\u{60000}-\u{6FFFD}"
           r"\u{70000}-\u{7FFFD}\u{80000}-\u{8FFFD}\u{90000}-\u{9FFFD}\u{A0000}-\u{AFFFD}"
           r"\u{B0000}-\u{BFFFD}\u{C0000}-\u{CFFFD}\u{D0000}-\u{DFFFD}\u{E1000}-\u{EFFFD}") if iri else ""
    unres = rf"[A-Za-z0-9._~{ucs}-]"
    pct = r"%[0-9A-Fa-f]{2}"
    sub = r"[!$&'()*+,;=]"
    pchar = rf"(?:{unres}|{pct}|{sub}|[:@])"
    seg_nz_nc = rf"(?:{unres}|{pct}|{sub}|@)+"
    userinfo = rf"(?:{unres}|{pct}|{sub}|:)*"
    ipfuture = r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+"
    host = rf"(?:\[(?:{_IPV6}|{ipfuture})\]|{_IPV4}|(?:{unres}|{pct}|{sub})*)"
    authority = rf"(?:{userinfo}@)?{host}(?::\d*)?"
    abempty = rf"(?:/{pchar}*)*"
    absolute = rf"/(?:{pchar}+(?:/{pchar}*)*)?"
    rootless = rf"{pchar}+(?:/{pchar}*)*"
    noscheme = rf"{seg_nz_nc}(?:/{pchar}*)*"
    qf_extra = r"\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}" if iri else ""
    query = rf"(?:{pchar}|[/?{qf_extra}])*" if iri else rf"(?:{pchar}|[/?])*"
    frag = rf"(?:{pchar}|[/?])*"
    tail = rf"(?:\?{query})?(?:#{frag})?"
    absolute_uri = rf"[A-Za-z][A-Za-z0-9+.-]*:(?://{authority}{abempty}|{absolute}|{rootless}|){tail}"
    relative = rf"(?://{authority}{abempty}|{absolute}|{noscheme}|){tail}"
    return {"uri": absolute_uri, "ref": rf"(?:{absolute_uri}|{relative})"}


_URI = _uri_parts(False)
_IRI = _uri_parts(True)

#: format name -> ECMA regex (matched entirely)
FORMATS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "duration": (r"P(?:(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?"
                 r"|\d+M(?:\d+S)?|\d+S))?|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)|\d+W)"),
    "email": _EMAIL,
    "hostname": _HOST,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "uri": _URI["uri"],
    "uri-reference": _URI["ref"],
    "iri": _IRI["uri"],
    "iri-reference": _IRI["ref"],
    "json-pointer": r"(?:/(?:[^~/]|~[01])*)*",
    "relative-json-pointer": r"(?:0|[1-9]\d*)(?:#|(?:/(?:[^~/]|~[01])*)*)",
}
#: standard formats the converter does not check (not regular, or not implemented): like
#: unknown formats they are annotations (``unknown_formats=``)
UNSUPPORTED_FORMATS = frozenset({"regex", "uri-template", "idn-email", "idn-hostname"})


def format_ast(name: str):
    return R.parse_regex_full(FORMATS[name])


# --------------------------------------------------------------------------
# value languages
# --------------------------------------------------------------------------

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
                    alt(self.string, o.string), alt(self.number, o.number),
                    _uniq(self.objects + o.objects), _uniq(self.arrays + o.arrays),
                    _uniq(self.others + o.others))

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


#: array keywords merged together by ``allOf`` (see :meth:`_Converter.array_parts`)
_ARRAY_KEYS = frozenset({"items", "prefixItems", "additionalItems", "prefix__", "rest__"})


def _conj(x, y):
    """Schema of the values valid under both ``x`` and ``y``."""
    if x is True or x == {}:
        return y
    if y is True or y == {} or _canon(x) == _canon(y):
        return x
    if x is False or y is False:
        return False
    return {"allOf": [x, y]}


def _decimal_parts(m: Decimal) -> tuple[int, int]:
    """``(a, k)`` with ``m == a / 10**k``, ``a`` a positive integer, ``k >= 0`` minimal."""
    m = m.normalize()
    k = max(0, -m.as_tuple().exponent)
    return int(m.scaleb(k)), k


def _lcm_multiple(x, y):
    """The least common multiple of two positive multipleOf values (a number is a
    multiple of both iff it is a multiple of it), or None if either is not positive."""
    a, b = _num(x), _num(y)
    if a is None or b is None or a <= 0 or b <= 0:
        return None
    (p, k1), (q, k2) = _decimal_parts(a), _decimal_parts(b)
    k = max(k1, k2)
    p, q = p * 10 ** (k - k1), q * 10 ** (k - k2)
    v = Decimal(p * q // math.gcd(p, q)).scaleb(-k).normalize()
    return int(v) if v == v.to_integral_value() else float(str(v))


def _uniq(t: tuple) -> tuple:
    return tuple(dict.fromkeys(t))


@dataclass
class SchemaGrammar:
    """Result of :func:`convert_schema`."""
    grammar: Grammar
    warnings: tuple = ()          # "keyword at pointer: why" for every ignored keyword
    annotations: tuple = ()       # unknown formats etc. (no effect on validity)
    options: dict = field(default_factory=dict)

    @cached_property
    def conflicts(self) -> tuple:
        from ..glr.lalr import lalr_conflicts
        return tuple(lalr_conflicts(self.grammar))

    @property
    def ambiguous(self) -> bool:
        """Whether the grammar has LALR(1) conflicts (``Constraint``'s default
        ``ambiguous=None`` then parses it with GLR)."""
        return bool(self.conflicts)

    def constraint(self, vocab, **constraint_options):
        """``Constraint(grammar, vocab, **constraint_options)``."""
        from ..runtime.constraint import Constraint
        return Constraint(self.grammar, vocab, **constraint_options)


def schema_to_grammar(schema, **options) -> Grammar:
    """Grammar of the JSON texts valid under ``schema`` (dict, bool or JSON
    text). See the module documentation for the options and policies."""
    return convert_schema(schema, **options).grammar


def schema_constraint(schema, vocab, **options):
    """``Constraint(Grammar.from_json_schema(schema, ...), vocab, ...)``
    (``ambiguous`` as the grammar needs, by default). Options of :func:`convert_schema` (``strict``,
    ``whitespace``, ...) go to the conversion, the others to ``Constraint``
    (``cache_dir``, ``compile``, ``limits``, ...)."""
    conversion = {k: options.pop(k) for k in list(options) if k in convert_schema.__kwdefaults__}
    return convert_schema(schema, **conversion).constraint(vocab, **options)


def convert_schema(schema, *, strict: bool = True, whitespace: str = "bounded",
                   max_whitespace: int = 20, max_string_length: int | None = None,
                   max_number_digits: int | None = None, additional_properties: bool | None = None,
                   draft: int | None = None, unknown_keywords: str = "warn",
                   unknown_formats: str = "ignore") -> SchemaGrammar:
    """Convert and return :class:`SchemaGrammar` (grammar, warnings, ambiguity)."""
    if unknown_keywords not in ("warn", "error", "ignore"):
        raise ValueError("unknown_keywords must be 'warn', 'error' or 'ignore'")
    if unknown_formats not in ("ignore", "error"):
        raise ValueError("unknown_formats must be 'ignore' or 'error'")
    try:
        return _convert_schema(schema, strict=strict, whitespace=whitespace,
                               max_whitespace=max_whitespace, max_string_length=max_string_length,
                               max_number_digits=max_number_digits,
                               additional_properties=additional_properties, draft=draft,
                               unknown_keywords=unknown_keywords, unknown_formats=unknown_formats)
    except RecursionError:
        raise GrammarError("JSON Schema nested too deeply (Python's recursion limit)") from None


def _convert_schema(schema, *, strict, whitespace, max_whitespace, max_string_length,
                    max_number_digits, additional_properties, draft, unknown_keywords,
                    unknown_formats) -> SchemaGrammar:
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except ValueError as e:
            raise GrammarError(f"JSON Schema is not valid JSON: {e}") from None
    if not isinstance(schema, (dict, bool)):
        raise GrammarError(f"a JSON Schema must be an object or a boolean, not {type(schema).__name__}")
    if whitespace not in ("bounded", "compact", "flexible"):
        raise ValueError("whitespace must be 'bounded', 'compact' or 'flexible'")
    opts = dict(strict=strict, whitespace=whitespace, max_whitespace=int(max_whitespace),
                max_string_length=max_string_length, max_number_digits=max_number_digits,
                additional_properties=additional_properties, draft=draft,
                unknown_keywords=unknown_keywords, unknown_formats=unknown_formats)
    conv = _Converter(schema, opts)
    g = conv.run()
    problems = conv.problems
    if problems:
        lines = [f"{kw} at {ptr}: {why}" for kw, ptr, why in problems]
        if strict:
            err = GrammarError(
                "JSON Schema keyword(s) that cannot be enforced exactly (pass strict=False to ignore "
                "them with a warning):\n  " + "\n  ".join(lines), name=problems[0][0])
            err.keyword, err.pointer = problems[0][0], problems[0][1]
            err.problems = list(problems)
            raise err
        _warnings.warn("JSON Schema keywords ignored (cannot be enforced exactly):\n  "
                       + "\n  ".join(lines), SchemaWarning, stacklevel=2)
        warn = tuple(lines)
    else:
        warn = ()
    return SchemaGrammar(grammar=g, warnings=warn, annotations=tuple(conv.annotations), options=opts)


# --------------------------------------------------------------------------
# the converter
# --------------------------------------------------------------------------

def _esc_ptr(s: str) -> str:
    return s.replace("~", "~0").replace("/", "~1")


def _canon(node) -> str:
    return json.dumps(node, sort_keys=True, ensure_ascii=False, default=str)


def _json_eq(a, b) -> bool:
    """JSON Schema equality (1 == 1.0, true != 1, objects unordered)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_eq(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    try:
        return Decimal(v) if isinstance(v, int) else Decimal(repr(v))
    except InvalidOperation:
        return None


def _is_int_value(v) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))


#: plain decimal numbers (no exponent) and every plain spelling of an integer value
PLAIN = seq(rep(MINUS, 0, 1), DEC)
INT_SPELLINGS = seq(rep(MINUS, 0, 1), UINT, rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1))


def _value_spellings(v):
    """Every plain decimal spelling of the number ``v`` (``1``, ``1.0``, ``1.00``; ``0``,
    ``-0``, ``-0.0``...), to remove a value from a number language exactly."""
    x = _num(v)
    zeros = rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1)
    if x == 0:
        return seq(rep(MINUS, 0, 1), lit("0"), zeros)
    text = format(abs(x).normalize(), "f")
    sign = rep(MINUS, 1, 1) if x < 0 else EPS
    if "." in text:
        return seq(sign, lit(text), rep(lit("0"), 0, None))
    return seq(sign, lit(text), zeros)


def _number_literal(v):
    """Spellings accepted for an enum/const number."""
    if isinstance(v, int):
        return lit(str(v))
    s = json.dumps(v)
    if v.is_integer():
        return alt(lit(s), lit(str(int(v))))
    return lit(s)


class _Problem(Exception):
    pass


class _Converter:
    def __init__(self, root, opts):
        self.root = root
        self.opts = opts
        self.strict = opts["strict"]
        self.problems: list[tuple[str, str, str]] = []
        self._problem_keys: set = set()
        self.annotations: list[str] = []
        self.keywords_checked: set = set()
        self.terms: dict[str, str] = {}          # regex -> name
        self.term_defs: list[TerminalDef] = []
        self.rules: list[Rule] = []
        self.queue: deque = deque()
        self.sym_cache: dict = {}
        self.lang_cache: dict = {}
        self.in_progress: set = set()
        self.alt_cache: dict = {}
        self.obj_cache: dict = {}
        self.arr_cache: dict = {}
        self.lit_cache: dict = {}
        self.counter: dict[str, int] = {}
        self.base_of: dict[int, str] = {}
        self.ids: dict[str, object] = {}
        self.anchors: dict[tuple[str, str], object] = {}
        self.canon_memo: dict[int, str] = {}
        self.obj_source: dict = {}
        self.key_terms: dict[str, str] = {}      # declared property name -> key terminal
        self.pending_extras: list = []
        self.draft = opts["draft"] or self._detect_draft(root)
        self.root_base = ""
        self._index(root, "", True)
        ws = opts["whitespace"]
        n = opts["max_whitespace"]
        self.ws = {"compact": "", "bounded": r"(?:\r?\n)?[ \t]{0,%d}" % n,
                   "flexible": r"[ \t\n\r]*"}[ws]
        # bounded: whitespace *after* { [ , : is a WS terminal of the grammar (one run per
        # gap), not part of those terminals (see punct); before : at most one space
        self.ws_after = ws == "bounded"
        self.ws_pre_colon = {"compact": "", "bounded": " ?", "flexible": self.ws}[ws]
        self.ws_wrapped: dict[str, str] = {}

    # -- bookkeeping ---------------------------------------------------------
    def problem(self, keyword: str, ptr: str, why: str):
        key = (keyword, ptr)
        if key not in self._problem_keys:
            self._problem_keys.add(key)
            self.problems.append((keyword, ptr or "#", why))

    def unchecked_format(self, f: str, ptr: str):
        """A format the converter cannot check: an annotation (logged), or an error
        with ``unknown_formats="error"``."""
        why = "not a regular language" if f in UNSUPPORTED_FORMATS else "unknown format"
        if self.opts["unknown_formats"] == "error":
            err = GrammarError(f"format {f!r} at {ptr} cannot be checked ({why}); "
                               "pass unknown_formats='ignore' to treat it as an annotation", name="format")
            err.keyword, err.pointer = "format", ptr
            raise err
        note = f"format {f!r} at {ptr} is not checked ({why}): an annotation"
        if note not in self.annotations:
            self.annotations.append(note)
            log.info("JSON Schema: %s", note)

    def check_keywords(self, node, ptr: str):
        """Report the unknown keywords of a schema object of the document (once each):
        logged with a close match, an error with ``unknown_keywords="error"``."""
        if id(node) in self.keywords_checked or id(node) not in self.base_of:
            return
        self.keywords_checked.add(id(node))
        mode = self.opts["unknown_keywords"]
        for k in node:
            if not isinstance(k, str) or k in KNOWN_KEYWORDS or k.startswith("x-") or mode == "ignore":
                continue
            close = difflib.get_close_matches(k, KNOWN_KEYWORDS, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = (ptr or "#") + "/" + _esc_ptr(k)
            if mode == "error":
                err = GrammarError(f"unknown JSON Schema keyword {k!r} at {where}{hint}; pass "
                                   "unknown_keywords='warn' or 'ignore' to ignore it", name=k)
                err.keyword, err.pointer = k, where
                raise err
            note = f"unknown keyword {k!r} at {where} ignored{hint}"
            self.annotations.append(note)
            log.warning("JSON Schema: %s", note)

    def name(self, base: str) -> str:
        i = self.counter.get(base, 0)
        self.counter[base] = i + 1
        return f"{base}_{i}"

    def term(self, regex: str, base: str) -> str:
        t = self.terms.get(regex)
        if t is None:
            t = self.name(base)
            self.terms[regex] = t
            self.term_defs.append(TerminalDef(name=t, regex=regex))
        return t

    def rule(self, origin: str, expansion, source: str = ""):
        self.rules.append(Rule(origin=origin, expansion=tuple(expansion), source=source or origin))

    def _detect_draft(self, root) -> int:
        s = root.get("$schema", "") if isinstance(root, dict) else ""
        if not isinstance(s, str):
            return 2020
        for tag, d in (("draft-04", 4), ("draft-03", 4), ("draft-06", 6), ("draft-07", 7),
                       ("2019-09", 2019), ("2020-12", 2020)):
            if tag in s:
                return d
        return 2020

    def _index(self, node, base: str, is_schema: bool):
        stack = [(node, base)]
        first = True
        while stack:
            node, base = stack.pop()
            if isinstance(node, dict):
                idv = node.get("$id")
                if not isinstance(idv, str) and self.draft <= 4:
                    idv = node.get("id")
                if isinstance(idv, str):
                    if idv.startswith("#") and self.draft <= 7 and len(idv) > 1:
                        self.anchors[(urldefrag(base)[0], idv[1:])] = node
                    else:
                        base = urljoin(base, idv)
                        self.ids[urldefrag(base)[0]] = node
                        if first:
                            self.root_base = urldefrag(base)[0]
                anc = node.get("$anchor")
                if isinstance(anc, str):
                    self.anchors[(urldefrag(base)[0], anc)] = node
                self.base_of[id(node)] = base
                for k, v in node.items():
                    if k in ("enum", "const", "default", "examples", "example"):
                        continue
                    if isinstance(v, (dict, list)):
                        stack.append((v, base))
            elif isinstance(node, list):
                for v in node:
                    if isinstance(v, (dict, list)):
                        stack.append((v, base))
            first = False

    def canon(self, node) -> str:
        c = self.canon_memo.get(id(node))
        if c is None:
            c = _canon(node)
            if id(node) in self.base_of:
                self.canon_memo[id(node)] = c
        return c

    def key(self, node, base):
        if isinstance(node, bool):
            return ("bool", node)
        return (self.canon(node), base)

    def base(self, node, default: str) -> str:
        return self.base_of.get(id(node), default)

    # -- $ref -------------------------------------------------------------------
    def resolve(self, ref, base: str, ptr: str):
        """(target node, its base, its pointer) or raise _Problem."""
        if not isinstance(ref, str):
            raise _Problem("$ref must be a string")
        full = urljoin(base, ref) if base else ref
        url, frag = urldefrag(full)
        if url in ("", self.root_base) or (not base and not url):
            doc, doc_base = self.root, self.root_base
        elif url in self.ids:
            doc = self.ids[url]
            doc_base = url
        else:
            raise _Problem(f"cannot resolve remote reference {ref!r}")
        if not frag:
            return doc, self.base(doc, doc_base), "#"
        if frag.startswith("/"):
            node = doc
            for part in frag[1:].split("/"):
                part = unquote(part).replace("~1", "/").replace("~0", "~")
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                else:
                    raise _Problem(f"unresolvable reference {ref!r}")
            return node, self.base(node, doc_base), "#" + frag
        node = self.anchors.get((url or self.root_base, frag))
        if node is None:
            raise _Problem(f"unknown anchor in reference {ref!r}")
        return node, self.base(node, doc_base), "#" + frag

    def _ref_of(self, d):
        for k in ("$ref", "$recursiveRef", "$dynamicRef"):
            if k in d:
                return k, d[k]
        return None, None

    def deref(self, node, base, ptr, depth=0):
        """Follow a top-level $ref (drafts <= 7: siblings ignored; later: merged)."""
        if not isinstance(node, dict):
            return node, base, ptr
        k, ref = self._ref_of(node)
        if k is None:
            return node, base, ptr
        if depth > 64:
            raise _Problem("reference chain too long")
        if k == "$recursiveRef" or k == "$dynamicRef":
            if ref not in ("#",) and not (isinstance(ref, str) and ref.startswith("#")):
                raise _Problem(f"{k} {ref!r} is not supported")
            tgt, tbase, tptr = (self.root, self.root_base, "#") if ref == "#" else self.resolve(ref, base, ptr)
        else:
            tgt, tbase, tptr = self.resolve(ref, base, ptr)
        siblings = {a: b for a, b in node.items() if a != k and a not in ANNOTATIONS}
        if self.draft <= 7 or not siblings:
            return self.deref(tgt, tbase, tptr, depth + 1)
        # 2019+: $ref is an applicator next to the other keywords
        return {"allOf": [tgt, siblings]}, base, ptr

    # -- driver ---------------------------------------------------------------------
    def run(self) -> Grammar:
        top = self.symbol(self.root, self.root_base, "#")
        start = "start"
        if self.opts["whitespace"] == "flexible":
            wt = self.term(r"[ \t\n\r]+", "WS")
            self.rule(start, [top])
            self.rule(start, [wt, top])
            self.rule(start, [top, wt])
            self.rule(start, [wt, top, wt])
        else:
            self.rule(start, [top])
        state = None
        extra_rules: list = []
        while True:
            while self.queue:
                job = self.queue.popleft()
                job[0](*job[1:])
            now = (len(self.key_terms), len(self.pending_extras))
            if now == state:
                break
            state = now
            extra_rules = self._finish_extras()     # regenerated until the name list is complete
        self.rules.extend(extra_rules)
        productive = self._productive()
        if start not in productive:
            err = GrammarError("the JSON Schema accepts no JSON value (false, not: {}, contradictory "
                               "keywords...): there is no text to generate", name="schema")
            err.keyword, err.pointer = "schema", "#"
            raise err
        term_names = {t.name for t in self.term_defs}
        rules = [r for r in self.rules if r.origin in productive
                 and all(s in productive or s in term_names for s in r.expansion)]
        used_terms = {s for r in rules for s in r.expansion}
        terms = [t for t in self.term_defs if t.name in used_terms]
        return Grammar.build(terms, rules, start)

    def _productive(self) -> set:
        """Nonterminals deriving some terminal string (the others, e.g. a
        required property whose schema is false, are removed with the rules
        using them)."""
        term_names = {t.name for t in self.term_defs}
        productive: set = set()
        changed = True
        while changed:
            changed = False
            for r in self.rules:
                if r.origin not in productive and all(s in term_names or s in productive for s in r.expansion):
                    productive.add(r.origin)
                    changed = True
        return productive

    # -- symbols ------------------------------------------------------------------
    def symbol(self, node, base, ptr) -> str:
        """Nonterminal deriving the JSON texts valid under ``node``."""
        k = self.key(node, base)
        s = self.sym_cache.get(k)
        if s is None:
            s = self.name("v")
            self.sym_cache[k] = s
            self.queue.append((self._build_symbol, s, node, base, ptr))
        return s

    def _build_symbol(self, nt, node, base, ptr):
        lang = self.lang(node, base, ptr)
        alts = self.lang_alternatives(lang, ptr)
        if not alts:
            return      # no rule: removed later as empty
        for a in alts:
            self.rule(nt, [a], ptr)

    def lang_alternatives(self, lang: Lang, ptr) -> list:
        alts = []
        if lang.null:
            alts.append(self.term("null", "NULL"))
        if lang.true:
            alts.append(self.term("true", "TRUE"))
        if lang.false:
            alts.append(self.term("false", "FALSE"))
        if lang.string != NONE:
            alts.append(self.string_term(lang.string))
        if lang.number != NONE:
            alts.append(self.number_term(lang.number))
        alts.extend(lang.objects)
        alts.extend(lang.arrays)
        alts.extend(lang.others)
        return _uniq(tuple(alts))

    def string_regex(self, ast) -> str:
        return '"(?:' + R.to_json_string(ast) + ')"'

    def string_term(self, ast) -> str:
        return self.term(self.string_regex(ast), "STR")

    def number_term(self, ast) -> str:
        return self.term("(?:" + R.to_python(ast) + ")", "NUM")

    def key_term(self, ast) -> str:
        """Key symbol of a key language: the key, the colon and the whitespace after it."""
        return self.space_after(self.term('"(?:' + R.to_json_string(ast) + ')"' + self._colon(), "KEY"))

    def _colon(self) -> str:
        return self.ws_pre_colon + ":" + ("" if self.ws_after else self.ws)

    def punct(self, which: str) -> str:
        """Symbol of a punctuation with its whitespace. Whitespace before ``} ] ,`` is part of
        their terminals. Whitespace after ``{ [ , :``: part of the terminal too, except in the
        bounded policy, where it is the grammar's ``WS`` terminal (:meth:`space_after`): folded
        into the terminals, every key terminal would repeat the counted blanks (the lexer
        automaton, and with it the mask automaton's start states, multiplied per key)."""
        ws = self.ws
        after = "" if self.ws_after else ws
        if which in ("{}", "[]") and self.ws_after:    # { then } with its leading whitespace
            nt = self.ws_wrapped.get(which)
            if nt is None:
                opening, closing = which
                nt = self.ws_wrapped[which] = self.name("empty_obj" if opening == "{" else "empty_arr")
                self.rule(nt, [self.punct_term(opening, "\\" + opening), self.punct(closing)], "whitespace")
            return nt
        rx = {"{": r"\{" + after, "}": ws + r"\}", "[": r"\[" + after, "]": ws + r"\]",
              ",": ws + "," + after, "{}": r"\{" + ws + r"\}", "[]": r"\[" + ws + r"\]"}[which]
        t = self.punct_term(which, rx)
        return self.space_after(t) if which in ("{", "[", ",") else t

    def punct_term(self, which: str, rx: str) -> str:
        return self.term(rx, {"{": "LBRACE", "}": "RBRACE", "[": "LBRACK", "]": "RBRACK", ",": "COMMA",
                              "{}": "EMPTY_OBJ", "[]": "EMPTY_ARR"}[which])

    def space_after(self, t: str) -> str:
        """``t`` followed by at most one whitespace run (bounded policy: ``t | t WS``, the
        run a ``WS`` terminal); ``t`` itself under the other policies."""
        if not self.ws_after:
            return t
        nt = self.ws_wrapped.get(t)
        if nt is None:
            n = self.opts["max_whitespace"]
            ws = self.term(r"\r?\n[ \t]{0,%d}|[ \t]{1,%d}" % (n, n) if n > 0 else r"\r?\n", "WS")
            nt = self.ws_wrapped[t] = self.name("space_after")
            self.rule(nt, [t], "whitespace")
            self.rule(nt, [t, ws], "whitespace")
        return nt

    # -- languages --------------------------------------------------------------------
    def any_lang(self) -> Lang:
        return Lang(True, True, True, self.string_cap(ANYSTAR), self.number_cap(NUMBER),
                    (self.object_symbol({}, "", "#"),), (self.array_symbol({}, "", "#"),))

    def string_cap(self, ast):
        cap = self.opts["max_string_length"]
        if cap is None:
            return ast
        try:
            return R.limit_length(ast, 0, cap)
        except TooComplex:
            self.problem("max_string_length", "#", "cannot combine the string cap with this pattern")
            return ast

    def number_cap(self, ast):
        """``max_number_digits``: at most N digits in the integer part, the
        fraction and the exponent of an unbounded number (for other number
        languages every unbounded digit run is capped at N)."""
        cap = self.opts["max_number_digits"]
        if cap is None:
            return ast
        if ast == NUMBER:
            n = max(1, int(cap))
            uint = alt(lit("0"), seq(D19, rep(D, 0, n - 1)))
            return seq(rep(MINUS, 0, 1), uint, rep(seq(lit("."), rep(D, 1, n)), 0, 1),
                       rep(seq(ch([(0x45, 0x45), (0x65, 0x65)]), rep(ch([(0x2B, 0x2B), (0x2D, 0x2D)]), 0, 1),
                               rep(D, 1, n)), 0, 1))
        return R.cap_repeats(ast, cap)

    def lang(self, node, base, ptr) -> Lang:
        if node is True or node == {}:
            return self.any_lang()
        if node is False:
            return Lang()
        if not isinstance(node, dict):
            self.problem("schema", ptr, f"a schema must be an object or a boolean, not {type(node).__name__}")
            return self.any_lang()
        self.check_keywords(node, ptr)
        k = self.key(node, base)
        got = self.lang_cache.get(k)
        if got is not None:
            return got
        if k in self.in_progress:
            # recursion through combinators/references: refer to the nonterminal
            return Lang(others=(self.symbol(node, base, ptr),))
        self.in_progress.add(k)
        try:
            out = self._lang(node, base, ptr)
        finally:
            self.in_progress.discard(k)
        self.lang_cache[k] = out
        return out

    def _lang(self, node, base, ptr) -> Lang:
        try:
            node2, base2, ptr2 = self.deref(node, base, ptr)
        except _Problem as e:
            self.problem("$ref", ptr, str(e))
            return self.any_lang()
        if node2 is not node:
            return self.lang(node2, base2, ptr2)
        d = node
        if "if" in d:
            x = self.expand_if(d, base)
            if x is not None:
                return self.lang(x, base, ptr)
        if "allOf" in d:
            merged = self.merge_all(d, base, ptr)
            if merged is None:
                return Lang()
            if isinstance(merged, dict) and "allOf" in merged:
                self.problem("allOf", ptr, "could not merge")
                merged = {a: b for a, b in merged.items() if a != "allOf"}
            return self.lang(merged, base, ptr)
        if "anyOf" in d or "oneOf" in d or "__oneOf" in d:
            return self.combinators(d, base, ptr)
        return self.simple_lang(d, base, ptr)

    # -- if / then / else ------------------------------------------------------------
    def expand_if(self, d, base):
        """``d`` with ``if``/``then``/``else`` as ``allOf: [rest, anyOf: [if ∧ then,
        ¬if ∧ else]]`` (exact: the branches are complementary), or None when the
        complement of ``if`` cannot be written (see :meth:`complement`)."""
        cond = d["if"]
        neg = self.complement(cond, base)
        if neg is None:
            return None
        rest = {k: v for k, v in d.items() if k not in ("if", "then", "else")}
        then, other = d.get("then", True), d.get("else", True)
        return {"allOf": [rest, {"anyOf": [{"allOf": [cond, then]}, {"allOf": [neg, other]}]}]}

    def complement(self, s, base, depth: int = 0):
        """A schema accepting exactly the values ``s`` rejects, for the forms ``if``
        usually takes: ``type``/``enum``/``const``, and object schemas of ``properties``
        (whose subschemas have complements), ``required`` and ``type: object``; else None."""
        if s is True or s == {}:
            return False
        if s is False:
            return True
        if depth > 8:
            return None
        s = self._flat(s, base)
        if s is None:
            return None
        keys = {k for k in s if k not in ANNOTATIONS and not k.startswith("x-")}
        if keys <= {"type", "enum", "const"}:
            vals = list(s.get("enum", [])) if isinstance(s.get("enum"), list) else []
            vals += [s["const"]] if "const" in s else []
            if any(isinstance(v, (dict, list)) for v in vals):
                return None          # not of structured constants is not supported
            return {"not": s}
        if not keys <= {"type", "properties", "required"} or s.get("type", "object") != "object":
            return None
        props = s.get("properties", {})
        req = s.get("required", [])
        if not isinstance(props, dict) or not isinstance(req, list):
            return None
        alts = [{"not": {"type": "object"}}] if "type" in s else []
        alts += [{"type": "object", "not": {"required": [r]}} for r in req if isinstance(r, str)]
        for p, ps in props.items():
            c = self.complement(ps, self.base(ps, base), depth + 1)
            if c is None:
                return None
            if c is not False:
                alts.append({"type": "object", "required": [p], "properties": {p: c}})
        return {"anyOf": alts} if alts else False

    # -- combinators ---------------------------------------------------------------
    def _local(self, d) -> dict:
        return {k: v for k, v in d.items() if k not in ("anyOf", "oneOf", "__oneOf")}

    def _has_constraints(self, d) -> bool:
        return any(k not in ANNOTATIONS and not k.startswith("x-") for k in d)

    def combinators(self, d, base, ptr) -> Lang:
        local = self._local(d)
        groups = []
        if "anyOf" in d:
            groups.append(("anyOf", d["anyOf"], ptr + "/anyOf"))
        if "oneOf" in d:
            groups.append(("oneOf", d["oneOf"], ptr + "/oneOf"))
        for g in d.get("__oneOf", ()):
            groups.append(("oneOf", g, ptr + "/oneOf"))
        for kw, branches, _p in groups:
            if not isinstance(branches, list) or not branches:
                self.problem(kw, _p, "must be a non-empty array")
                return self.any_lang()
        # one group at a time: the first is expanded, the others stay in every branch
        kw, branches, gptr = groups[0]
        carry = dict(local)
        if "anyOf" in d and kw != "anyOf":
            carry["anyOf"] = d["anyOf"]
        more_one = [g[1] for g in groups[1:] if g[0] == "oneOf"]
        if more_one:
            carry["__oneOf"] = more_one
        # property order: the properties written before the combinator come
        # first, then the branch's, then the rest (document order)
        props = carry.get("properties") if isinstance(carry.get("properties"), dict) else {}
        if "before__" in d:
            before = [k for k in d["before__"] if k in props]
        else:
            order = list(d)
            first_comb = min(order.index(k) for k in ("anyOf", "oneOf", "__oneOf") if k in d)
            before = list(props) if "properties" in d and order.index("properties") < first_comb else []
        carry.pop("before__", None)
        langs = []
        for i, b in enumerate(branches):
            bptr = f"{gptr}/{i}"
            if self._has_constraints(carry):
                m = self.merge_all({"allOf": [carry, b] if before else [b, carry]}, base, bptr)
                if m is not None and before and isinstance(m.get("properties"), dict):
                    mp = m["properties"]
                    new = [k for k in mp if k not in props]
                    order = before + new + [k for k in mp if k in props and k not in before]
                    m = dict(m, properties={k: mp[k] for k in order})
                lg = Lang() if m is None else self.lang(m, base, bptr)
            else:
                lg = self.lang(b, self.base(b, base), bptr)
            langs.append(lg)
        if kw == "oneOf":
            langs = self.one_of(langs, branches, base, gptr)
        out = Lang()
        for lg in langs:
            out = out.union(lg)
        return out

    def one_of(self, langs, branches, base, ptr) -> list:
        """Exactly one branch: exact when the branches are disjoint; string and
        number parts are made disjoint exactly (symmetric difference)."""
        n = len(langs)
        if n == 1:
            return langs
        # scalar parts: exact exclusive union
        out = [Lang(objects=lg.objects, arrays=lg.arrays, others=lg.others) for lg in langs]
        for attr in ("null", "true", "false"):
            cnt = sum(1 for lg in langs if getattr(lg, attr))
            if cnt == 1:
                for o, lg in zip(out, langs):
                    setattr(o, attr, getattr(lg, attr))
        for attr in ("string", "number"):
            parts = [getattr(lg, attr) for lg in langs]
            nonempty = [i for i, p in enumerate(parts) if p != NONE]
            if len(nonempty) <= 1:
                for i in nonempty:
                    setattr(out[i], attr, parts[i])
                continue
            try:
                for i in nonempty:
                    others = alt(*[parts[j] for j in nonempty if j != i])
                    if R.is_disjoint(parts[i], others):
                        setattr(out[i], attr, parts[i])
                    else:
                        setattr(out[i], attr, R.difference(parts[i], others))
            except TooComplex:
                self.problem("oneOf", ptr, f"overlapping {attr} branches")
                for i in nonempty:
                    setattr(out[i], attr, parts[i])
        # structured parts: identical in every branch that has them -> in no
        # branch exactly once (when >= 2 branches); otherwise must be provably disjoint
        for attr in ("objects", "arrays"):
            have = [i for i, lg in enumerate(langs) if getattr(lg, attr)]
            if len(have) >= 2 and len({getattr(langs[i], attr) for i in have}) == 1:
                for i in have:
                    setattr(out[i], attr, ())
                    langs[i] = Lang(**{**langs[i].__dict__, attr: ()})
        structured = [i for i, lg in enumerate(langs) if lg.objects or lg.arrays or lg.others]
        for a_i in range(len(structured)):
            for b_i in range(a_i + 1, len(structured)):
                i, j = structured[a_i], structured[b_i]
                li, lj = langs[i], langs[j]
                if li.others or lj.others:
                    self.problem("oneOf", ptr, "recursive branches cannot be checked for disjointness")
                    continue
                if li.objects and lj.objects and not self.objects_disjoint(branches[i], branches[j], base):
                    self.problem("oneOf", ptr, f"object branches {i} and {j} may overlap")
                if li.arrays and lj.arrays and not self.arrays_disjoint(branches[i], branches[j], base):
                    self.problem("oneOf", ptr, f"array branches {i} and {j} may overlap")
        return out

    def _flat(self, node, base):
        """Branch schema with refs followed and allOf merged (for disjointness tests)."""
        try:
            node, base, _ = self.deref(node, base, "#")
        except _Problem:
            return None
        if isinstance(node, dict) and "allOf" in node:
            node = self.merge_all(node, base, "#", report=False)
        return node if isinstance(node, dict) else None

    def objects_disjoint(self, a, b, base) -> bool:
        a, b = self._flat(a, base), self._flat(b, base)
        if a is None or b is None:
            return False
        if "anyOf" in a or "anyOf" in b or "oneOf" in a or "oneOf" in b:
            return False
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        ra, rb = set(a.get("required") or ()), set(b.get("required") or ())
        # a required key the other side forbids
        for req, other, oprops in ((ra, b, pb), (rb, a, pa)):
            for k in req:
                if oprops.get(k) is False:
                    return True
                if k not in oprops and other.get("additionalProperties") is False and \
                        not other.get("patternProperties"):
                    return True
        # a property required on both sides with disjoint scalar languages
        for k in ra & rb:
            if k in pa and k in pb:
                la = self.lang(pa[k], self.base(pa[k], base), "#")
                lb = self.lang(pb[k], self.base(pb[k], base), "#")
                if self.langs_disjoint(la, lb):
                    return True
        return False

    def arrays_disjoint(self, a, b, base) -> bool:
        a, b = self._flat(a, base), self._flat(b, base)
        if a is None or b is None:
            return False
        lo_a, hi_a = a.get("minItems", 0), a.get("maxItems")
        lo_b, hi_b = b.get("minItems", 0), b.get("maxItems")
        if (hi_a is not None and hi_a < lo_b) or (hi_b is not None and hi_b < lo_a):
            return True
        (pa, ra), (pb, rb) = self.array_parts(a), self.array_parts(b)
        ia, ib = (pa[0] if pa else ra), (pb[0] if pb else rb)      # the first item's schemas
        if isinstance(ia, dict) and isinstance(ib, dict) and lo_a >= 1 and lo_b >= 1:
            la = self.lang(ia, self.base(ia, base), "#")
            lb = self.lang(ib, self.base(ib, base), "#")
            if self.langs_disjoint(la, lb):
                return True
        return False

    def langs_disjoint(self, a: Lang, b: Lang) -> bool:
        if (a.null and b.null) or (a.true and b.true) or (a.false and b.false):
            return False
        if a.objects and b.objects or a.arrays and b.arrays or a.others or b.others:
            return False
        try:
            return R.is_disjoint(a.string, b.string) and R.is_disjoint(a.number, b.number)
        except TooComplex:
            return False

    # -- allOf merging -------------------------------------------------------------------
    def merge_all(self, d, base, ptr, report: bool = True):
        """Merge ``d`` (with ``allOf``) into one schema dict; None = unsatisfiable."""
        parts = [{k: v for k, v in d.items() if k != "allOf"}]
        if not isinstance(d.get("allOf"), list):
            if report:
                self.problem("allOf", ptr, "must be an array")
            return parts[0]
        out: dict = {}
        members = [(x, self.base(x, base), f"{ptr}/allOf/{i}") for i, x in enumerate(d["allOf"])]
        keys = list(d)
        if "properties" in d and keys.index("properties") > keys.index("allOf"):
            todo = members + [(parts[0], base, ptr)]        # document order: allOf's properties first
        else:
            todo = [(parts[0], base, ptr)] + members
        seen_refs = 0
        while todo:
            node, nbase, nptr = todo.pop(0)
            if node is True:
                continue
            if node is False:
                return None
            if not isinstance(node, dict):
                if report:
                    self.problem("allOf", ptr, "member is not a schema")
                continue
            if report:
                self.check_keywords(node, nptr)
            try:
                node2, nbase2, nptr2 = self.deref(node, nbase, nptr)
            except _Problem as e:
                if report:
                    self.problem("$ref", ptr, str(e))
                continue
            if "if" in node2 and node2 is node:
                x = self.expand_if(node, nbase)
                if x is not None:
                    todo.insert(0, (x, nbase, nptr))
                    continue
            if node2 is not node:
                seen_refs += 1
                if seen_refs > 200:
                    if report:
                        self.problem("allOf", ptr, "references nest too deeply")
                    break
                todo.insert(0, (node2, nbase2, nptr2))        # in place: keeps the document order
                continue
            if "allOf" in node:
                rest = {k: v for k, v in node.items() if k != "allOf"}
                subs = [(x, self.base(x, nbase), f"{nptr}/allOf/{i}")
                        for i, x in enumerate(node["allOf"] if isinstance(node["allOf"], list) else [])]
                nk = list(node)
                if "properties" in node and nk.index("properties") > nk.index("allOf"):
                    todo[0:0] = subs + [(rest, nbase, nptr)]
                else:
                    todo[0:0] = [(rest, nbase, nptr)] + subs
                continue
            out = self.merge2(out, node, ptr, report)
            if out is None:
                return None
        return out

    def merge2(self, a: dict, b: dict, ptr, report=True):
        out = {k: v for k, v in a.items() if k not in _ARRAY_KEYS}
        for k, v in b.items():
            if k in _ARRAY_KEYS:
                continue            # merged below, as (prefix, rest) of each side
            if k in ANNOTATIONS or k.startswith("x-"):
                out.setdefault(k, v)
                continue
            if k not in out:
                if k in ("anyOf", "oneOf") and "before__" not in out and "anyOf" not in out and "oneOf" not in out:
                    out["before__"] = list(out.get("properties") or {})
                out[k] = v
                continue
            w = out[k]
            if k.endswith("__"):
                out[k] = list(w) + list(v)
                continue
            if _canon(w) == _canon(v):
                continue
            if k == "type":
                ta = set(w) if isinstance(w, list) else {w}
                tb = set(v) if isinstance(v, list) else {v}
                t = ta & tb
                if "integer" in ta and "number" in tb or "number" in ta and "integer" in tb:
                    t.add("integer")
                out[k] = sorted(t)
                if not t:
                    return None
            elif k == "required":
                out[k] = list(dict.fromkeys(list(w) + list(v)))
            elif k in ("properties", "patternProperties"):
                m = dict(w)
                for pk, pv in v.items():
                    m[pk] = {"allOf": [m[pk], pv]} if pk in m else pv
                out[k] = m
            elif k in ("enum",):
                out[k] = [x for x in w if any(_json_eq(x, y) for y in v)]
            elif k == "const":
                if not _json_eq(w, v):
                    return None
            elif k in ("minimum", "minLength", "minItems", "minProperties"):
                out[k] = max(w, v) if _num(w) is not None and _num(v) is not None else w
            elif k in ("maximum", "maxLength", "maxItems", "maxProperties"):
                out[k] = min(w, v) if _num(w) is not None and _num(v) is not None else w
            elif k in ("exclusiveMinimum", "exclusiveMaximum") and _num(w) is not None and _num(v) is not None:
                out[k] = max(w, v) if k == "exclusiveMinimum" else min(w, v)
            elif k in ("pattern", "format"):
                lst = k + "s__"
                out.setdefault(lst, [])
                out[lst] = out[lst] + [v]
            elif k in ("additionalProperties", "propertyNames"):
                if w is False or v is False:
                    out[k] = False
                elif w is True:
                    out[k] = v
                elif v is True:
                    out[k] = w
                else:
                    out[k] = {"allOf": [w, v]}
            elif k == "anyOf":
                prod = [{"allOf": [x, y]} for x in w for y in v]
                if len(prod) > 256:
                    if report:
                        self.problem("anyOf", ptr, "too many combinations inside allOf")
                    prod = prod[:256]
                out[k] = prod
            elif k == "oneOf":
                out["__oneOf"] = list(out.get("__oneOf", [])) + [v]
            elif k == "not":
                out["nots__"] = list(out.get("nots__", [])) + [v]
            elif k == "uniqueItems":
                out[k] = bool(w) or bool(v)
            elif k in ("dependencies", "dependentRequired", "dependentSchemas") and \
                    isinstance(w, dict) and isinstance(v, dict):
                m = dict(w)
                for dk, dv in v.items():
                    if dk not in m:
                        m[dk] = dv
                    elif isinstance(m[dk], list) and isinstance(dv, list):
                        m[dk] = list(dict.fromkeys(m[dk] + dv))
                    else:      # schemas, or an array (= required) and a schema: both apply
                        m[dk] = {"allOf": [{"required": x} if isinstance(x, list) else x for x in (m[dk], dv)]}
                out[k] = m
            elif k == "multipleOf" and _lcm_multiple(w, v) is not None:
                out[k] = _lcm_multiple(w, v)
            else:
                out.setdefault("allOf_conflicts__", []).append(k)
        if any(k in a for k in _ARRAY_KEYS) or any(k in b for k in _ARRAY_KEYS):
            # ``items`` applies beyond the ``prefixItems`` of its own schema object only: item
            # i must satisfy each side's schema for position i
            pa, ra = self.array_parts(a)
            pb, rb = self.array_parts(b)
            prefix = [_conj(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb)
                      for i in range(max(len(pa), len(pb)))]
            rest = _conj(ra, rb)
            if prefix:
                out["prefix__"] = prefix
            if rest is not True:
                out["rest__"] = rest
        # additionalProperties interplay: a key declared on one side only must
        # satisfy the other side's additional/pattern schema
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        if isinstance(pa, dict) and isinstance(pb, dict) and ("additionalProperties" in a or "additionalProperties" in b
                                                               or a.get("patternProperties") or b.get("patternProperties")):
            props = dict(out.get("properties") or {})
            for side, other, oprops in ((pa, b, pb), (pb, a, pa)):
                for key in side:
                    if key in oprops:
                        continue
                    extra = self._schema_for_extra_key(other, key, ptr, report)
                    if extra is not True:
                        props[key] = {"allOf": [props[key], extra]}
            out["properties"] = props
            if (a.get("patternProperties") and "additionalProperties" in b and b["additionalProperties"] is not True) or \
                    (b.get("patternProperties") and "additionalProperties" in a and a["additionalProperties"] is not True):
                if report:
                    self.problem("allOf", ptr, "patternProperties on one side and additionalProperties on the other")
        return out

    def array_parts(self, d) -> tuple:
        """``(prefix, rest)`` of one schema object's array keywords: the schemas of the
        first items and the schema of every later item (``prefixItems`` + ``items``;
        ``items`` as an array + ``additionalItems``; merged: ``prefix__`` + ``rest__``)."""
        if "prefix__" in d or "rest__" in d:
            return list(d.get("prefix__", ())), d.get("rest__", True)
        items = d.get("items", True)
        if isinstance(items, list):
            return list(items), d.get("additionalItems", True)
        if isinstance(d.get("prefixItems"), list):
            return list(d["prefixItems"]), items
        return [], items

    def _schema_for_extra_key(self, d, key, ptr, report):
        pats = d.get("patternProperties") or {}
        matched = []
        for p, s in pats.items():
            try:
                if R.fullmatch(R.parse_pattern(p), key):
                    matched.append(s)
            except PatternError:
                pass
        if matched:
            return matched[0] if len(matched) == 1 else {"allOf": matched}
        ap = d.get("additionalProperties", True)
        return ap

    # -- simple (combinator-free) schemas -------------------------------------------------
    def types_of(self, d, ptr) -> set:
        t = d.get("type")
        if t is None:
            types = set(_ALL_TYPES) | {"integer"}
        else:
            lst = t if isinstance(t, list) else [t]
            types = set()
            for x in lst:
                if x in _ALL_TYPES or x == "integer":
                    types.add(x)
                elif x == "any":
                    types |= set(_ALL_TYPES)
                else:
                    self.problem("type", ptr + "/type", f"unknown type {x!r}")
            if d.get("nullable") is True:
                types.add("null")
        if "number" in types:
            types.discard("integer")
        return types

    def simple_lang(self, d, base, ptr) -> Lang:
        for k in d:
            if k in ("allOf_conflicts__",):
                for kk in d[k]:
                    self.problem(kk, ptr, "conflicting values inside allOf cannot be merged")
        self.check_unsupported(d, ptr)
        types = self.types_of(d, ptr)
        if "enum" in d or "const" in d:
            lang = self.enum_lang(d, base, ptr, types)
        else:
            lang = Lang()
            if "null" in types:
                lang.null = True
            if "boolean" in types:
                lang.true = lang.false = True
            if "string" in types:
                lang.string = self.string_lang(d, ptr)
            if "number" in types or "integer" in types:
                lang.number = self.number_lang(d, ptr, integer="number" not in types)
            if "object" in types:
                lang.objects = self.object_alternatives(d, base, ptr)
            if "array" in types:
                sym = self.array_symbol(d, base, ptr)
                if sym:
                    lang.arrays = (sym,)
        nots = list(d.get("nots__", []))
        if "not" in d:
            nots.append(d["not"])
        if "enum" in d or "const" in d:
            nots = []          # enum_lang kept the values ``not`` allows (instance_ok)
        for n in nots:
            lang = self.apply_not(lang, n, base, ptr + "/not")
        return lang

    def dependencies(self, d, ptr) -> tuple[dict, dict]:
        """``(required, schemas)``: for each trigger key, the keys it requires
        (``dependentRequired``, array entries of ``dependencies``) and the schemas the
        object must satisfy when the key is present (``dependentSchemas``, schema entries
        of ``dependencies``; enforced in every draft)."""
        req: dict = {}
        schemas: dict = {}
        for kw in ("dependencies", "dependentRequired", "dependentSchemas"):
            v = d.get(kw)
            if v is None:
                continue
            if not isinstance(v, dict):
                self.problem(kw, f"{ptr}/{kw}", "must be an object")
                continue
            for key, dep in v.items():
                if isinstance(dep, list) and kw != "dependentSchemas":
                    req[key] = list(dict.fromkeys(req.get(key, []) + [x for x in dep if isinstance(x, str)]))
                elif isinstance(dep, (dict, bool)) and kw != "dependentRequired":
                    schemas.setdefault(key, []).append(dep)
                else:
                    self.problem(kw, f"{ptr}/{kw}/{_esc_ptr(key)}", "malformed dependency")
        return req, schemas

    def object_alternatives(self, d, base, ptr) -> tuple:
        """Object symbols of ``d``: one, or with dependencies one per choice of which
        trigger keys are present (absent: the key is forbidden; present: its dependent
        keys are required and its dependent schemas merged in); the choices are disjoint."""
        req, schemas = self.dependencies(d, ptr)
        triggers = [k for k in dict.fromkeys(list(req) + list(schemas))
                    if req.get(k) or any(x is not True and x != {} for x in schemas.get(k, ()))]
        plain = {k: v for k, v in d.items() if k not in ("dependencies", "dependentRequired", "dependentSchemas")}
        if not triggers:
            sym = self.object_symbol(plain, base, ptr)
            return (sym,) if sym else ()
        if len(triggers) > 5:
            self.problem("dependentRequired", ptr, "more than 5 dependencies (their combinations are not built)")
            sym = self.object_symbol(plain, base, ptr)
            return (sym,) if sym else ()
        out = []
        for mask in range(1 << len(triggers)):
            dd = dict(plain)
            required = list(dd.get("required") or [])
            forbidden = list(dd.get("forbidden__", []))
            extra = []
            for i, k in enumerate(triggers):
                if mask >> i & 1:
                    required += [k] + req.get(k, [])
                    extra += schemas.get(k, [])
                else:
                    forbidden.append(k)
            dd["required"] = list(dict.fromkeys(required))
            if forbidden:
                dd["forbidden__"] = forbidden
            if not extra:
                sym = self.object_symbol(dd, base, ptr)
                if sym:
                    out.append(sym)
                continue
            m = self.merge_all({"allOf": [dd, {"type": "object"}] + extra}, base, ptr)
            if m is not None:
                out.extend(self.lang(m, base, ptr).objects)
        return _uniq(tuple(out))

    def check_unsupported(self, d, ptr):
        for k in ("if", "then", "else",
                  "unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains"):
            if k in d:
                if k in ("then", "else"):
                    continue            # no effect without ``if``; with it, ``if`` is reported
                if k in ("minContains", "maxContains", "contains"):
                    continue            # contains: see _build_contains; min/max without it: no effect
                if k == "unevaluatedProperties" and d[k] is True or k == "unevaluatedItems" and d[k] is True:
                    continue
                self.problem(k, f"{ptr}/{k}", "not supported by the grammar converter")

    def apply_not(self, lang: Lang, n, base, ptr) -> Lang:
        if n is True:
            return Lang()
        if n is False:
            return lang
        try:
            n, nbase, _ = self.deref(n, base, ptr)
        except _Problem as e:
            self.problem("not", ptr, str(e))
            return lang
        if not isinstance(n, dict):
            self.problem("not", ptr, "not a schema")
            return lang
        keys = {k for k in n if k not in ANNOTATIONS and not k.startswith("x-")}
        if keys <= {"type"}:
            t = self.types_of(n, ptr)
            out = Lang(**lang.__dict__)
            if "null" in t:
                out.null = False
            if "boolean" in t:
                out.true = out.false = False
            if "string" in t:
                out.string = NONE
            if "number" in t:
                out.number = NONE
            elif "integer" in t and out.number != NONE:
                try:        # every spelling of an integer value: plain decimals left (policy)
                    out.number = R.difference(R.intersect(out.number, PLAIN), INT_SPELLINGS)
                except TooComplex:
                    self.problem("not", ptr, "too complex")
            if "object" in t:
                out.objects = ()
            if "array" in t:
                out.arrays = ()
            return out
        if keys <= {"enum", "const", "type"}:
            vals = list(n.get("enum", [])) if isinstance(n.get("enum"), list) else []
            if "const" in n:
                vals = [v for v in vals if _json_eq(v, n["const"])] if "enum" in n else [n["const"]]
            if "type" in n:
                t = self.types_of(n, ptr)
                vals = [v for v in vals if self._value_type_ok(v, t)]
            out = Lang(**lang.__dict__)
            strs = [v for v in vals if isinstance(v, str)]
            nums = [v for v in vals if _num(v) is not None]
            try:
                if strs and out.string != NONE:
                    out.string = R.difference(out.string, alt(*[lit(s) for s in strs]))
                if nums and out.number != NONE:     # every spelling of the values (plain decimals left)
                    out.number = R.difference(R.intersect(out.number, PLAIN),
                                              alt(*[_value_spellings(v) for v in nums]))
            except TooComplex:
                self.problem("not", ptr, "too complex")
            if any(v is None for v in vals):
                out.null = False
            if any(v is True for v in vals):
                out.true = False
            if any(v is False for v in vals):
                out.false = False
            if any(isinstance(v, (dict, list)) for v in vals):
                self.problem("not", ptr, "excluding object/array constants is not supported")
            return out
        if keys <= {"required"} and isinstance(n.get("required"), list):
            # objects that lack at least one of the keys: one alternative per key
            out = Lang(**{k: v for k, v in lang.__dict__.items()})
            objs = []
            for sym in lang.objects:
                d = self.obj_source.get(sym)
                if d is None:
                    self.problem("not", ptr, "cannot apply to this object schema")
                    objs.append(sym)
                    continue
                obj_d, obase, optr = d
                for key in n["required"]:
                    forb = list(obj_d.get("forbidden__", [])) + [key]
                    nd = dict(obj_d)
                    nd["forbidden__"] = forb
                    s = self.object_symbol(nd, obase, optr)
                    if s:
                        objs.append(s)
            out.objects = _uniq(tuple(objs))
            return out
        self.problem("not", ptr, "only 'not' of type, enum/const and required is supported")
        return lang

    def _value_type_ok(self, v, types) -> bool:
        if v is None:
            return "null" in types
        if isinstance(v, bool):
            return "boolean" in types
        if isinstance(v, (int, float)):
            return "number" in types or ("integer" in types and _is_int_value(v))
        if isinstance(v, str):
            return "string" in types
        if isinstance(v, list):
            return "array" in types
        return "object" in types

    # -- enum / const ----------------------------------------------------------------
    def enum_lang(self, d, base, ptr, types) -> Lang:
        if "enum" in d:
            vals = d["enum"]
            if not isinstance(vals, list):
                self.problem("enum", ptr + "/enum", "must be an array")
                vals = []
        else:
            vals = [d["const"]]
        if "enum" in d and "const" in d:
            vals = [v for v in vals if _json_eq(v, d["const"])]
        lang = Lang()
        strs, nums = [], []
        rest = {k: v for k, v in d.items() if k not in ("enum", "const")}
        for v in vals:
            if not self._value_type_ok(v, types):
                continue
            if not self.instance_ok(v, rest, base, ptr):
                continue
            if v is None:
                lang.null = True
            elif v is True:
                lang.true = True
            elif v is False:
                lang.false = True
            elif isinstance(v, str):
                strs.append(lit(v))
            elif isinstance(v, (int, float)):
                nums.append(_number_literal(v))
            elif isinstance(v, list):
                lang.arrays += (self.literal_symbol(v),)
            elif isinstance(v, dict):
                lang.objects += (self.literal_symbol(v),)
        lang.string = alt(*strs)
        lang.number = alt(*nums)
        lang.objects = _uniq(lang.objects)
        lang.arrays = _uniq(lang.arrays)
        return lang

    def instance_ok(self, v, d, base, ptr) -> bool:
        """Does ``v`` satisfy the schema ``d``? Filters ``enum``/``const`` values by
        the rest of their schema: exact for the keywords the converter enforces; a
        keyword it reports (or ignores) is taken as satisfied."""
        return self.value_valid(v, d, base, 0)

    def value_valid(self, v, node, base, depth) -> bool:
        if node is True or node is None:
            return True
        if node is False:
            return False
        if not isinstance(node, dict) or depth > 100:
            return True
        try:
            node2, base2, _ = self.deref(node, base, "#")
        except _Problem:
            return True
        if node2 is not node:
            return self.value_valid(v, node2, base2, depth + 1)
        d, dn = node, depth + 1

        def sub(x):
            return self.value_valid(v, x, self.base(x, base), dn) if not isinstance(x, tuple) \
                else self.value_valid(x[0], x[1], self.base(x[1], base), dn)

        for key in ("allOf", "nots__", "__oneOf"):
            if not isinstance(d.get(key, []), list):
                return True
        if not all(sub(x) for x in d.get("allOf", [])):
            return False
        if isinstance(d.get("anyOf"), list) and not any(sub(x) for x in d["anyOf"]):
            return False
        for group in ([d["oneOf"]] if isinstance(d.get("oneOf"), list) else []) + list(d.get("__oneOf", [])):
            if sum(1 for x in group if sub(x)) != 1:
                return False
        if any(sub(x) for x in ([d["not"]] if "not" in d else []) + list(d.get("nots__", []))):
            return False
        if "if" in d and not sub(d.get("then", True) if sub(d["if"]) else d.get("else", True)):
            return False
        if "type" in d and not self._value_type_ok(v, self.types_of(d, "#")):
            return False
        if "enum" in d and isinstance(d["enum"], list) and not any(_json_eq(v, x) for x in d["enum"]):
            return False
        if "const" in d and not _json_eq(v, d["const"]):
            return False
        if isinstance(v, str):
            if any(k in d for k in ("minLength", "maxLength", "pattern", "format", "patterns__", "formats__")):
                return R.fullmatch(self.string_lang(d, "#", quiet=True), v)
            return True
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            x = _num(v)
            lo, lo_x, hi, hi_x = self.bounds(d)
            if lo is not None and (x < lo or (lo_x and x == lo)):
                return False
            if hi is not None and (x > hi or (hi_x and x == hi)):
                return False
            m = _num(d.get("multipleOf"))
            if m is not None and m > 0 and (x % m) != 0:
                return False
            return True
        if isinstance(v, dict):
            if any(isinstance(k, str) and k not in v for k in (d.get("required") or [])):
                return False
            if set(v) & set(d.get("forbidden__", ())):
                return False
            for kw in ("dependencies", "dependentRequired", "dependentSchemas"):
                for key, dep in (d.get(kw) if isinstance(d.get(kw), dict) else {}).items():
                    if key in v and (any(x not in v for x in dep) if isinstance(dep, list) else not sub(dep)):
                        return False
            n = len(v)
            if _num(d.get("minProperties")) is not None and n < d["minProperties"]:
                return False
            if _num(d.get("maxProperties")) is not None and n > d["maxProperties"]:
                return False
            props = d.get("properties") if isinstance(d.get("properties"), dict) else {}
            pats = d.get("patternProperties") if isinstance(d.get("patternProperties"), dict) else {}
            addl = d.get("additionalProperties", True)
            if self.opts["additional_properties"] is False and "additionalProperties" not in d:
                addl = False
            pnames = d.get("propertyNames", True)
            for k, x in v.items():
                if pnames is not True and not self.value_valid(k, pnames, self.base(pnames, base), dn):
                    return False
                matched = False
                if k in props:
                    matched = True
                    if not sub((x, props[k])):
                        return False
                for p, ps in pats.items():
                    try:
                        hit = R.fullmatch(R.parse_pattern(p), k)
                    except PatternError:
                        continue
                    if hit:
                        matched = True
                        if not sub((x, ps)):
                            return False
                if not matched and not sub((x, addl)):
                    return False
            return True
        if isinstance(v, list):
            if _num(d.get("minItems")) is not None and len(v) < d["minItems"]:
                return False
            if _num(d.get("maxItems")) is not None and len(v) > d["maxItems"]:
                return False
            prefix, rest = self.array_parts(d)
            for i, x in enumerate(v):
                if not sub((x, prefix[i] if i < len(prefix) else rest)):
                    return False
            if "contains" in d:
                n = sum(1 for x in v if sub((x, d["contains"])))
                lo_c = d.get("minContains", 1) if self.draft >= 2019 else 1
                hi_c = d.get("maxContains") if self.draft >= 2019 else None
                if (_num(lo_c) is not None and n < lo_c) or (_num(hi_c) is not None and n > hi_c):
                    return False
            if d.get("uniqueItems") is True and any(_json_eq(v[i], v[j]) for i in range(len(v))
                                                   for j in range(i)):
                return False
            return True
        return True

    def literal_symbol(self, v) -> str:
        key = _canon(v)
        s = self.lit_cache.get(key)
        if s is not None:
            return s
        s = self.name("lit")
        self.lit_cache[key] = s
        self.queue.append((self._build_literal, s, v))
        return s

    def _literal_value_symbol(self, v) -> str:
        if v is None:
            return self.term("null", "NULL")
        if v is True:
            return self.term("true", "TRUE")
        if v is False:
            return self.term("false", "FALSE")
        if isinstance(v, str):
            return self.string_term(lit(v))
        if isinstance(v, (int, float)):
            return self.number_term(_number_literal(v))
        return self.literal_symbol(v)

    def _build_literal(self, nt, v):
        if not v:
            self.rule(nt, [self.punct("[]" if isinstance(v, list) else "{}")], "const")
            return
        if isinstance(v, list):
            exp = [self.punct("[")]
            for i, x in enumerate(v):
                if i:
                    exp.append(self.punct(","))
                exp.append(self._literal_value_symbol(x))
            exp.append(self.punct("]"))
        else:
            exp = [self.punct("{")]
            for i, (k, x) in enumerate(v.items()):
                if i:
                    exp.append(self.punct(","))
                exp.append(self.key_term(lit(k)))
                exp.append(self._literal_value_symbol(x))
            exp.append(self.punct("}"))
        self.rule(nt, exp, "const")

    # -- strings ------------------------------------------------------------------------
    def string_lang(self, d, ptr, quiet: bool = False):
        report = (lambda *a: None) if quiet else self.problem
        parts = []
        pats = list(d.get("patterns__", []))
        if "pattern" in d:
            pats.insert(0, d["pattern"])
        for p in pats:
            try:
                parts.append(R.parse_pattern(p))
            except PatternError as e:
                report("pattern", ptr + "/pattern", f"unsupported regex: {e}")
        fmts = list(d.get("formats__", []))
        if "format" in d:
            fmts.insert(0, d["format"])
        for f in fmts:
            if not isinstance(f, str):
                continue
            if f in FORMATS:
                parts.append(format_ast(f))
            elif not quiet:
                self.unchecked_format(f, ptr + "/format")
        lo = d.get("minLength", 0)
        hi = d.get("maxLength")
        cap = self.opts["max_string_length"]
        if cap is not None:
            hi = cap if hi is None else min(hi, cap)
        if not isinstance(lo, int) or isinstance(lo, bool):
            lo = math.ceil(lo) if _num(lo) is not None else 0
        if hi is not None and (not isinstance(hi, int) or isinstance(hi, bool)):
            hi = math.floor(hi) if _num(hi) is not None else None
        if not parts:
            ast = rep(ANY, lo, hi)
            return ast if quiet or (lo == 0 and hi is None) else self.lexable(ast, ANYSTAR, lo, hi, ptr)
        try:
            ast = R.intersect(*parts) if len(parts) > 1 else parts[0]
        except TooComplex:
            report("pattern" if pats else "format", ptr, "several patterns/formats whose intersection is too complex")
            ast = parts[0]
        unlimited = ast
        if lo > 0 or hi is not None:
            try:
                ast = R.limit_length(ast, lo, hi)
            except TooComplex:
                kw = "maxLength" if hi is not None else "minLength"
                report(kw, f"{ptr}/{kw}", "cannot be combined exactly with the pattern/format "
                       "(the length-limited regex is too large)")
        if not quiet:
            ast = self.lexable(ast, unlimited, lo, hi, ptr)
        return ast

    def lexable(self, ast, unlimited, lo, hi, ptr):
        """Make sure the string terminal fits the lexer's size limits
        (MAX_NFA_STATES, MAX_DFA_STATES); else report and drop the length
        limits (then the pattern)."""
        from ..lexer.dfa import compile_terminal
        if ast == NONE:
            return NONE
        try:
            compile_terminal(self.string_regex(ast))      # cached: the lexer reuses it
            return ast
        except GrammarError:
            pass
        try:
            if R.is_empty(ast):
                return NONE           # no string: this part of the schema is impossible
        except TooComplex:
            pass
        if ast is not unlimited:
            kw = "maxLength" if hi is not None else "minLength"
            self.problem(kw, f"{ptr}/{kw}", f"the string terminal with length {lo}..{hi} exceeds the "
                         "lexer's automaton size limit")
            try:
                compile_terminal(self.string_regex(unlimited))
                return unlimited
            except GrammarError:
                pass
        self.problem("pattern", ptr, "the string terminal exceeds the lexer's automaton size limit")
        return ANYSTAR

    # -- numbers --------------------------------------------------------------------------
    def bounds(self, d):
        lo = hi = None
        lo_x = hi_x = False
        if _num(d.get("minimum")) is not None:
            lo = _num(d["minimum"])
            if d.get("exclusiveMinimum") is True:
                lo_x = True
        if _num(d.get("maximum")) is not None:
            hi = _num(d["maximum"])
            if d.get("exclusiveMaximum") is True:
                hi_x = True
        em = _num(d.get("exclusiveMinimum"))
        if em is not None and (lo is None or em >= lo):
            lo, lo_x = em, True
        eM = _num(d.get("exclusiveMaximum"))
        if eM is not None and (hi is None or eM <= hi):
            hi, hi_x = eM, True
        return lo, lo_x, hi, hi_x

    def number_lang(self, d, ptr, integer: bool):
        lo, lo_x, hi, hi_x = self.bounds(d)
        mult = d.get("multipleOf")
        m = _num(mult)
        if mult is not None and (m is None or m <= 0):
            self.problem("multipleOf", ptr + "/multipleOf", "must be a positive number")
            m = None
        if integer or (m is not None and m == m.to_integral_value() and m >= 1):
            ilo = None if lo is None else (int(math.floor(lo)) + 1 if lo_x and lo == lo.to_integral_value()
                                           else int(math.ceil(lo)))
            ihi = None if hi is None else (int(math.ceil(hi)) - 1 if hi_x and hi == hi.to_integral_value()
                                           else int(math.floor(hi)))
            ast = int_range(ilo, ihi)
            if m is not None:
                a, k = _decimal_parts(m)
                step = a // math.gcd(a, 10 ** k)     # the integers that are multiples of a/10^k
                if step > 1:
                    ast = self.multiple_of(ast, step, 0, ptr)
            if not integer:
                # integral numbers may carry a zero fraction
                ast = seq(ast, rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1))
            return self.number_cap(ast)
        if lo is None and hi is None and m is None:
            return self.number_cap(NUMBER)
        try:
            if m is None and (lo is None or lo == 0) and (hi is None or hi == 0):
                parts = []
                if lo is not None:
                    parts.append(zero_cmp(">" if lo_x else ">="))
                if hi is not None:
                    parts.append(zero_cmp("<" if hi_x else "<="))
                ast = R.intersect(*parts, limit=20000)
            else:
                parts = []
                if lo is not None:
                    parts.append(dec_cmp(lo, ">" if lo_x else ">="))
                if hi is not None:
                    parts.append(dec_cmp(hi, "<" if hi_x else "<="))
                if not parts:
                    parts.append(seq(rep(MINUS, 0, 1), DEC))
                ast = R.intersect(*parts, limit=20000) if len(parts) > 1 else parts[0]
        except TooComplex:
            self.problem("minimum", ptr, "number bounds too complex")
            return self.number_cap(NUMBER)
        if m is not None:
            ast = self.multiple_of(ast, *_decimal_parts(m), ptr)
        return self.number_cap(ast)

    def multiple_of(self, ast, a: int, k: int, ptr):
        """Intersect an AST of plain number literals (``-?int(.digits)?``, no exponent)
        with the multiples of ``a / 10**k``: ``x`` is one iff ``x * 10**k`` is an integer
        divisible by ``a``, a regular property of the digits (a residue automaton)."""
        if a == 1 and k == 0:
            return ast
        dead = 2 + a * (k + 2)
        if dead > 20000:
            self.problem("multipleOf", ptr + "/multipleOf", "divisor too large")
            return ast
        digits = [lit(str(i)) for i in range(10)]
        atoms = R._atoms(ast, *digits, MINUS, lit("."))
        idx = {}
        for i, (x, y) in enumerate(atoms):
            if x == y and 0x30 <= x <= 0x39:
                idx[i] = ("d", x - 0x30)
            elif x == y == 0x2D:
                idx[i] = ("-", 0)
            elif x == y == 0x2E:
                idx[i] = (".", 0)
        pw = [pow(10, e, a) for e in range(k + 1)]
        # states: 0 start, 1 after '-', 2 + r: integer part = r (mod a),
        # 2 + a + j*a + r: j fraction digits read, x * 10**k = r (mod a) so far; dead
        trans, final = [], []
        for s in range(dead + 1):
            row = [dead] * len(atoms)
            for i, (kind, v) in idx.items():
                if s == 0 and kind == "-":
                    row[i] = 1
                elif kind == "d" and s in (0, 1):
                    row[i] = 2 + v % a
                elif 2 <= s < 2 + a:
                    r = s - 2
                    if kind == "d":
                        row[i] = 2 + (r * 10 + v) % a
                    elif kind == ".":
                        row[i] = 2 + a + r * pw[k] % a
                elif 2 + a <= s < dead and kind == "d":
                    j, r = divmod(s - 2 - a, a)
                    if j < k:
                        row[i] = 2 + a + (j + 1) * a + (r + v * pw[k - j - 1]) % a
                    elif v == 0:
                        row[i] = s          # digits past 10**-k must be 0
            trans.append(row)
            final.append((2 <= s < 2 + a and (s - 2) * pw[k] % a == 0)
                         or (2 + a <= s < dead and (s - 2 - a) % a == 0))
        div = R.Dfa(atoms, trans, final).minimize()
        base = R.Dfa.from_ast(ast, atoms)
        try:
            return base.product(div, lambda x, y: x and y).to_ast(20000)
        except TooComplex:
            self.problem("multipleOf", ptr + "/multipleOf", "divisibility regex too large")
            return ast

    # -- objects ----------------------------------------------------------------------------
    def object_symbol(self, d, base, ptr):
        keys = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
                "maxProperties", "propertyNames", "forbidden__")
        od = {k: d[k] for k in keys if k in d}
        if self.opts["additional_properties"] is False and "additionalProperties" not in od:
            od["additionalProperties"] = False
        key = (_canon(od), base)
        s = self.obj_cache.get(key)
        if s is None:
            s = self.name("obj")
            self.obj_cache[key] = s
            self.obj_source[s] = (od, base, ptr)
            self.queue.append((self._build_object, s, od, base, ptr))
        return s

    def _build_object(self, nt, d, base, ptr):
        props = d.get("properties") or {}
        if not isinstance(props, dict):
            self.problem("properties", ptr + "/properties", "must be an object")
            props = {}
        required = [r for r in (d.get("required") or []) if isinstance(r, str)]
        required = list(dict.fromkeys(required))
        pats = d.get("patternProperties") or {}
        if not isinstance(pats, dict):
            self.problem("patternProperties", ptr + "/patternProperties", "must be an object")
            pats = {}
        addl = d.get("additionalProperties", True)
        forbidden = set(d.get("forbidden__", ()))
        pnames = d.get("propertyNames")
        name_lang = None
        if pnames is not None and pnames is not True:
            nl = self.lang(pnames, self.base(pnames, base), ptr + "/propertyNames")
            if nl.others:
                self.problem("propertyNames", ptr + "/propertyNames", "recursive propertyNames schema")
            name_lang = nl.string          # property names are strings: only that part applies
        pat_asts = []
        wild = False
        for p, s in pats.items():
            try:
                pat_asts.append((R.parse_pattern(p), s, p))
            except PatternError as e:
                self.problem("patternProperties", f"{ptr}/patternProperties/{_esc_ptr(p)}",
                             f"unsupported regex: {e}")
                wild = True
        self._disjoint_pats = False
        if len(pat_asts) > 3:
            try:
                self._disjoint_pats = all(R.is_disjoint(pat_asts[i][0], pat_asts[j][0])
                                          for i in range(len(pat_asts)) for j in range(i))
            except TooComplex:
                pass
            if not self._disjoint_pats:
                self.problem("patternProperties", ptr + "/patternProperties",
                             "more than 3 overlapping patterns (their Boolean combinations are not built)")
                wild = True
        if wild:
            # ignored (strict=False): any key, with any of the pattern schemas or the additional one
            alts = list(pats.values()) + ([addl] if addl is not False else [])
            addl = {"anyOf": alts} if alts else False
            pat_asts = []
        # declared entries (schema order), then required-but-undeclared
        entries = []      # (name, [schemas], required)
        for name, sub in props.items():
            schemas = [sub] + [s for a, s, _ in pat_asts if R.fullmatch(a, name)]
            entries.append((name, schemas, name in required))
        for name in required:
            if name not in props:
                matched = [s for a, s, _ in pat_asts if R.fullmatch(a, name)]
                entries.append((name, matched if matched else [addl], True))
        ok_entries = []
        for name, schemas, req in entries:
            dead = name in forbidden or any(s is False for s in schemas) or \
                (name_lang is not None and not R.fullmatch(name_lang, name))
            if dead:
                if req:
                    return      # unsatisfiable: no rules -> removed
                continue
            ok_entries.append((name, schemas, req))
        own = {n for n, _, _ in entries} | forbidden
        for x in own:
            self.declared_key(x)
        # extra members: a nonterminal E (pattern atoms, additional keys; names
        # declared elsewhere in the grammar are added by _finish_extras)
        has_extras = addl is not False or bool(pat_asts)
        E = None
        if has_extras:
            E = f"{nt}_e"
            if not self.extra_members(E, pat_asts, addl, name_lang, base, ptr):
                pat_asts, addl, name_lang = [], True, None      # superset fallback (reported)
            self.pending_extras.append((E, own, pat_asts, addl, name_lang, base, ptr))
        n = len(ok_entries)
        n_req = sum(1 for e in ok_entries if e[2])
        min_p, max_p = d.get("minProperties", 0), d.get("maxProperties")
        lo_p = math.ceil(min_p) if _num(min_p) is not None else 0
        hi_p = math.floor(max_p) if _num(max_p) is not None else None
        if hi_p is not None and hi_p < max(n_req, lo_p):
            return          # no object fits: no rules
        # count the members when the bounds are not implied by the declared/required ones
        # (minProperties <= 1 only forbids {})
        count = lo_p > max(n_req, 1) or (hi_p is not None and (has_extras or n > hi_p))
        cap = hi_p if hi_p is not None else lo_p
        if count and (n + 1) * (cap + 1) > 20000:
            kw = "maxProperties" if hi_p is not None else "minProperties"
            self.problem(kw, f"{ptr}/{kw}", "too many properties to count")
            count, lo_p, hi_p = False, min(lo_p, 1), None
        if not count:
            lo_p, hi_p = min(lo_p, 1), None
        LB, RB, CM = self.punct("{"), self.punct("}"), self.punct(",")
        keys = [self.declared_key(name) for name, _, _ in ok_entries]
        vals = []
        for name, schemas, _ in ok_entries:
            sub = schemas[0] if len(schemas) == 1 else {"allOf": schemas}
            vals.append(self.symbol(sub, self.base(schemas[0], base), f"{ptr}/properties/{_esc_ptr(name)}"))
        opt_from = [True] * (n + 1)
        for j in range(n - 1, -1, -1):
            opt_from[j] = opt_from[j + 1] and not ok_entries[j][2]
        src = ptr
        has_S = [j < n or has_extras for j in range(n + 1)]
        # S(j, c): the next member, c emitted so far, declared candidates from j on;
        # H(j, c): the next member is declared, entry j or later; R(j, c): after a member.
        # Without counting c is always 0 (one nonterminal per j).
        made: dict = {}
        todo: list = []

        def need(kind: str, j: int, c: int) -> str:
            got = made.get((kind, j, c))
            if got is None:
                got = made[(kind, j, c)] = f"{nt}_{kind}{j}" + (f"c{c}" if count else "")
                todo.append((kind, j, c))
            return got

        def inc(c: int) -> int:
            return 0 if not count else (c + 1 if hi_p is not None else min(c + 1, cap))

        if n_req == 0 and lo_p <= 0:
            self.rule(nt, [self.punct("{}")], src)
        if has_S[0] and (hi_p is None or hi_p >= 1):
            self.rule(nt, [LB, need("s", 0, 0), RB], src)
        while todo:
            kind, j, c = todo.pop()
            name = made[(kind, j, c)]
            if kind == "r":
                if opt_from[j] and (not count or c >= lo_p):
                    self.rule(name, [], src)
                if has_S[j] and (hi_p is None or c + 1 <= hi_p):
                    self.rule(name, [CM, need("s", j, c)], src)
            elif kind == "s":
                if j < n:
                    self.rule(name, [need("h", j, c)], src)
                if E:
                    self.rule(name, [E, need("r", j, inc(c))], src)
            else:
                self.rule(name, [keys[j], vals[j], need("r", j + 1, inc(c))], src)
                if not ok_entries[j][2] and j + 1 < n:
                    self.rule(name, [need("h", j + 1, c)], src)

    def declared_key(self, name: str) -> str:
        """Key terminal of a property name declared somewhere in the schema
        (priority 1: it beats the pattern/additional key terminals, which all
        have priority 0, on the same lexeme)."""
        t = self.key_terms.get(name)
        if t is None:
            regex = '"' + R.to_json_string(lit(name)) + '"' + self._colon()
            t = self.name("KEY")
            self.terms[regex + "\x00prio1"] = t
            self.term_defs.append(TerminalDef(name=t, regex=regex, priority=1))
            t = self.key_terms[name] = self.space_after(t)
        return t

    def extra_members(self, E, pat_asts, addl, name_lang, base, ptr):
        """E -> KEY value for the object's own pattern atoms and the
        additional-property keys (names declared anywhere are lexed as their
        own terminals and handled in :meth:`_finish_extras`)."""
        try:
            universe = self.string_cap(ANYSTAR) if name_lang is None else name_lang
            n = len(pat_asts)
            masks = [1 << i for i in range(n)] if n > 3 else range(1, 1 << n)   # > 3: pairwise disjoint
            for mask in masks:
                inside = [pat_asts[i] for i in range(n) if mask >> i & 1]
                outside = [pat_asts[i] for i in range(n) if not mask >> i & 1]
                schemas = [s for _, s, _ in inside]
                if any(s is False for s in schemas):
                    continue
                kast = R.intersect(universe, *[a for a, _, _ in inside])
                for a, _, _ in (outside if n <= 3 else ()):
                    if kast == NONE:
                        break
                    kast = R.difference(kast, a)
                if kast == NONE or R.is_empty(kast):
                    continue
                sub = schemas[0] if len(schemas) == 1 else {"allOf": schemas}
                self.rule(E, [self.key_term(kast), self.symbol(sub, self.base(sub, base),
                                                                ptr + "/patternProperties")], ptr)
            if addl is not False:
                kast = universe
                if n > 3:
                    kast = R.difference(kast, alt(*[a for a, _, _ in pat_asts]))
                for a, _, _ in (pat_asts if n <= 3 else ()):
                    if kast == NONE:
                        break
                    kast = R.difference(kast, a)
                if kast != NONE and not R.is_empty(kast):
                    self.rule(E, [self.key_term(kast), self.symbol(addl, self.base(addl, base),
                                                                    ptr + "/additionalProperties")], ptr)
        except (TooComplex, PatternError) as e:
            self.problem("patternProperties" if pat_asts else "propertyNames", ptr,
                         f"property-name languages too complex: {e}")
            self.rule(E, [self.key_term(ANYSTAR), self.symbol(True, "", ptr)], ptr)
            return False
        return True

    def _finish_extras(self):
        """Names declared anywhere in the grammar are lexed as their own key
        terminals, so every object that accepts extra members gets them
        explicitly: individually where the object's patternProperties decide
        the schema, else as ranges of a shared segment tree over all names."""
        names = sorted(self.key_terms)
        M = len(names)
        saved, self.rules = self.rules, []
        made: dict = {}

        def seg(a, b):
            got = made.get((a, b))
            if got is not None:
                return got
            if b - a == 1:
                sym = self.key_terms[names[a]]
            else:
                sym = f"keys_{a}_{b}"
                m = (a + b) // 2
                self.rule(sym, [seg(a, m)], "keys")
                self.rule(sym, [seg(m, b)], "keys")
            made[(a, b)] = sym
            return sym

        def cover(a, b, lo=0, hi=M):
            if a >= hi or b <= lo:
                return
            if a <= lo and hi <= b:
                yield seg(lo, hi)
                return
            m = (lo + hi) // 2
            yield from cover(a, b, lo, m)
            yield from cover(a, b, m, hi)

        for E, own, pat_asts, addl, name_lang, base, ptr in self.pending_extras:
            excluded = [False] * M
            add_sym = None if addl is False else self.symbol(addl, self.base(addl, base),
                                                              ptr + "/additionalProperties")
            for i, x in enumerate(names):
                if x in own:
                    excluded[i] = True
                    continue
                if name_lang is not None and not R.fullmatch(name_lang, x):
                    excluded[i] = True
                    continue
                matched = [s for a, s, _ in pat_asts if R.fullmatch(a, x)]
                if matched:
                    excluded[i] = True
                    if any(s is False for s in matched):
                        continue
                    sub = matched[0] if len(matched) == 1 else {"allOf": matched}
                    self.rule(E, [self.key_terms[x], self.symbol(sub, self.base(matched[0], base),
                                                                 ptr + "/patternProperties")], ptr)
            if add_sym is None:
                continue
            i = 0
            while i < M:
                if excluded[i]:
                    i += 1
                    continue
                j = i
                while j < M and not excluded[j]:
                    j += 1
                for node in cover(i, j):
                    self.rule(E, [node, add_sym], ptr)
                i = j
        out, self.rules = self.rules, saved
        return out

    # -- arrays -------------------------------------------------------------------------------
    def array_symbol(self, d, base, ptr):
        keys = ("minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains")
        ad = {k: d[k] for k in keys if k in d}
        prefix, rest = self.array_parts(d)
        if prefix:
            ad["prefix__"] = prefix
        if rest is not True:
            ad["rest__"] = rest
        key = (_canon(ad), base)
        s = self.arr_cache.get(key)
        if s is None:
            s = self.name("arr")
            self.arr_cache[key] = s
            self.queue.append((self._build_array, s, ad, base, ptr))
        return s

    def finite_domain(self, s, base, size: int = 8):
        """The values valid under ``s`` when they are at most ``size`` scalars
        (``enum``/``const``, ``boolean``/``null`` types, small integer ranges), else None."""
        if s is False:
            return []
        flat = self._flat(s, base) if s is not True else None
        if flat is None or "anyOf" in flat or "oneOf" in flat or "__oneOf" in flat:
            return None
        types = self.types_of(flat, "#")
        if "enum" in flat or "const" in flat:
            cands = list(flat["enum"]) if isinstance(flat.get("enum"), list) else []
            cands += [flat["const"]] if "const" in flat else []
        elif types <= {"boolean", "null"}:
            cands = ([True, False] if "boolean" in types else []) + ([None] if "null" in types else [])
        elif types <= {"integer", "boolean", "null"} and "integer" in types:
            lo, lo_x, hi, hi_x = self.bounds(flat)
            if lo is None or hi is None or hi - lo > 4 * size:
                return None
            a = int(math.floor(lo)) + 1 if lo_x and lo == lo.to_integral_value() else int(math.ceil(lo))
            b = int(math.ceil(hi)) - 1 if hi_x and hi == hi.to_integral_value() else int(math.floor(hi))
            cands = list(range(a, b + 1)) + ([True, False] if "boolean" in types else []) + \
                ([None] if "null" in types else [])
        else:
            return None
        vals = []
        for v in cands:
            if isinstance(v, (dict, list)):
                return None
            if self.value_valid(v, flat, base, 0) and not any(_json_eq(v, w) for w in vals):
                vals.append(v)
            if len(vals) > size:
                return None
        return vals

    def _build_unique(self, nt, domains, lo, hi, ptr) -> bool:
        """``uniqueItems`` over finite item domains: the rules remember the set of
        values used so far (at most 2^8 sets). False when there are too many."""
        k = len(domains) - 1          # the prefix's length; domains[k] is every later item's
        values = []
        for dom in domains:
            for v in dom:
                if not any(_json_eq(v, w) for w in values):
                    values.append(v)
        if len(values) > 8:
            return False
        index = [[next(j for j, w in enumerate(values) if _json_eq(v, w)) for v in dom] for dom in domains]
        syms = [self._literal_value_symbol(v) for v in values]
        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        made: dict = {}
        todo: list = []

        # U(i, used): after i items (i counted up to k), the values in the bit set used
        def U(i, used):
            got = made.get((i, used))
            if got is None:
                got = made[(i, used)] = f"{nt}_u{i}s{used}"
                todo.append((i, used))
            return got

        if lo == 0:
            self.rule(nt, [self.punct("[]")], ptr)
        if hi is None or hi >= 1:
            for j in index[0]:
                self.rule(nt, [LB, syms[j], U(min(1, k), 1 << j), RB], ptr)
        while todo:
            i, used = todo.pop()
            n = bin(used).count("1")
            name = made[(i, used)]
            if n >= lo:
                self.rule(name, [], ptr)
            if hi is None or n < hi:
                for j in index[min(i, k)]:
                    if not used >> j & 1:
                        self.rule(name, [CM, syms[j], U(min(i + 1, k), used | 1 << j)], ptr)
        return True

    def _build_contains(self, nt, d, base, ptr, prefix, rest, lo, hi, limit):
        """Array rules counting the items valid under ``contains`` (each item is
        split into its schema and ``contains``, or its schema and the complement of
        ``contains``): at least ``minContains`` (default 1), at most ``maxContains``."""
        cont = d["contains"]
        lo_c = d.get("minContains", 1) if self.draft >= 2019 else 1
        hi_c = d.get("maxContains") if self.draft >= 2019 else None
        lo_c = math.ceil(lo_c) if _num(lo_c) is not None else 1
        hi_c = math.floor(hi_c) if _num(hi_c) is not None else None
        neg = self.complement(cont, self.base(cont, base))
        if neg is None:
            self.problem("contains", ptr + "/contains", "its complement cannot be written (only "
                         "type/enum/const and properties/required object schemas)")
            neg, lo_c, hi_c = True, 0, None
        if hi_c is not None and hi_c < lo_c or hi is not None and hi < lo_c:
            return
        cap = hi_c if hi_c is not None else lo_c
        if (limit + 2) * (cap + 1) > 20000:
            self.problem("minContains" if hi_c is None else "maxContains", ptr, "too many items to count")
            return
        k = len(prefix)

        def elem(i, m):
            s = prefix[i] if i < k else rest
            where = f"{ptr}/prefixItems/{i}" if i < k else f"{ptr}/items"
            sub = _conj(s, cont if m else neg)
            return self.symbol(sub, self.base(s, base), where) if sub is not False else None

        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        src = ptr
        made: dict = {}
        todo: list = []

        # T(i, c): after i items (saturating at limit when unbounded), c of them valid
        # under contains (saturating at cap when maxContains is absent)
        def T(i, c):
            got = made.get((i, c))
            if got is None:
                got = made[(i, c)] = f"{nt}_t{i}c{c}"
                todo.append((i, c))
            return got

        def step(i, c, m):
            c2 = c + m if hi_c is not None else min(c + m, cap)
            i2 = i + 1 if hi is not None or i + 1 < limit else limit
            return None if hi_c is not None and c2 > hi_c else (i2, c2)

        if lo == 0 and lo_c <= 0:
            self.rule(nt, [self.punct("[]")], src)
        if hi is None or hi >= 1:
            for m in (0, 1):
                e, nxt = elem(0, m), step(0, 0, m)
                if e is not None and nxt is not None:
                    self.rule(nt, [LB, e, T(*nxt), RB], src)
        while todo:
            i, c = todo.pop()
            name = made[(i, c)]
            if i >= lo and c >= lo_c:
                self.rule(name, [], src)
            if hi is None or i < hi:
                for m in (0, 1):
                    e, nxt = elem(i, m), step(i, c, m)
                    if e is not None and nxt is not None:
                        self.rule(name, [CM, e, T(*nxt)], src)

    def _build_array(self, nt, d, base, ptr):
        prefix, rest = self.array_parts(d)
        lo = d.get("minItems", 0) or 0
        hi = d.get("maxItems")
        if not isinstance(lo, int) or isinstance(lo, bool):
            lo = int(math.ceil(lo)) if _num(lo) is not None else 0
        if hi is not None and (not isinstance(hi, int) or isinstance(hi, bool)):
            hi = int(math.floor(hi)) if _num(hi) is not None else None
        k = len(prefix)
        if rest is False:
            hi = k if hi is None else min(hi, k)
        for i, p in enumerate(prefix):
            if p is False:
                hi = i if hi is None else min(hi, i)
                break
        if hi is not None and hi < lo:
            return
        if d.get("uniqueItems") is True and (hi is None or hi > 1):
            domains = [self.finite_domain(x, base) for x in prefix + [rest]]
            if "contains" not in d and all(x is not None for x in domains) and \
                    self._build_unique(nt, domains, lo, hi, ptr):
                return
            self.problem("uniqueItems", ptr + "/uniqueItems", "uniqueness of array items over an "
                         "infinite (or large) item domain is not a context-free constraint")
        limit = max(lo, k)
        if hi is not None and hi - limit > 2000 or limit > 2000:
            self.problem("maxItems", ptr, "item counts above 2000 are not expanded")
            hi = None if hi is not None and hi > 2000 else hi
            lo = min(lo, 2000)
            limit = max(lo, k)
        if "contains" in d:
            self._build_contains(nt, d, base, ptr, prefix, rest, lo, hi, limit)
            return

        def elem(i):
            s = prefix[i] if i < k else rest
            where = f"{ptr}/prefixItems/{i}" if i < k else f"{ptr}/items"
            return self.symbol(s, self.base(s, base), where)

        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        src = ptr
        star = f"{nt}_t"

        def T(i):
            if hi is None and i >= limit:
                return star
            return f"{nt}_t{i}"

        made = set()

        def build_T(i):
            name = T(i)
            if name in made:
                return name
            made.add(name)
            if name == star:
                self.rule(star, [], src)
                self.rule(star, [star, CM, elem(limit)], src)
                return name
            if i >= lo:
                self.rule(name, [], src)
            if hi is None or i < hi:
                self.rule(name, [CM, elem(i), T(i + 1)], src)
            return name

        if lo == 0:
            self.rule(nt, [self.punct("[]")], src)
        if hi is None or hi >= 1:
            self.rule(nt, [LB, elem(0), T(1), RB], src)
            i = 1
            while True:
                build_T(i)
                if T(i) == star or (hi is not None and i >= hi):
                    break
                i += 1
