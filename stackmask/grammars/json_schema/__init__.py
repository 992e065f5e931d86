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
* **Strings** are accepted as JSON writers spell them: every character raw
  where JSON allows it; ``"`` and ``\\`` escaped, ``/`` either way; control
  characters as short escapes or ``\\uXXXX``; characters beyond ASCII raw or as
  ``\\uXXXX`` (any hex case, surrogate pairs beyond U+FFFF). ``json.dumps``
  output with or without ``ensure_ascii`` parses; ``"\\u0061"`` for ``"a"`` is
  rejected (the same in keys and values, so an escaped declared name never
  passes as an additional property). Lone surrogate escapes are rejected.
  ``minLength``/``maxLength`` count code points, as JSON Schema says.
* **Numbers.** Integers are plain integer literals (``-?(0|[1-9][0-9]*)``,
  ``-0`` included; no fraction or exponent); bounds are exact digit-range
  languages. Numbers with bounds other than 0, numbers with ``multipleOf``
  (any decimal, exact divisibility), numbers in a ``oneOf`` next to an ``integer``
  branch (whose values are excluded in every spelling: ``1.0``) and numbers under a ``not`` that removes
  number values are accepted in plain decimal notation (no exponent:
  ``x >= 0.5`` is not a regular property of exponent notation); bounds at 0
  and unbounded numbers allow exponents. ``enum``/``const`` numbers are
  accepted in their canonical spelling (``1`` also as ``1.0`` when the schema
  wrote ``1.0``).
* **enum / const** objects and arrays are accepted with their members in the
  order written.
* **Whitespace** (``whitespace=``): ``"bounded"`` (default) allows, in each gap
  between two tokens of the JSON text (next to each ``{ } [ ] , :``) and before and
  after the document, at most one line break followed by at most ``max_whitespace``
  (default 20) spaces/tabs, and at most one space between a property name and its
  ``:``, so a model cannot loop on whitespace but pretty-printed and ``json.dumps``
  output parse. (The gap is an ignored terminal read at most once between two lexemes,
  ``Grammar.gaps``: the parser never sees it, so a token carrying blanks reaches the
  mask automaton as the same token without them would.) ``"compact"`` allows none,
  ``"flexible"`` any amount (RFC 8259, also around the document).
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
* **uniqueItems** is exact over finite item domains (enums, booleans, small integer
  ranges, tuples of those: the grammar lists the orders of distinct items). Over an
  infinite domain no context-free grammar can enforce it: by default
  (``unique_items="warn"``) it is not enforced there (arrays with repeated items are
  accepted; nothing else changes), with a warning on the ``stackmask`` logger naming its
  pointer, also listed in :attr:`SchemaGrammar.warnings`. ``unique_items="error"`` makes
  it a keyword that cannot be enforced (``strict=True``: a :class:`GrammarError`).
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
  automaton is the product of all terminals. Lengths far beyond the longest
  token are counted, not expanded (``maxLength: 65535`` costs what 258 does;
  strings read together share one count: :mod:`stackmask.lexer.counted`); a
  length combined with a pattern or format whose length-limited regex is too
  large, or a terminal still over the lexer's limits, is reported
  (non-enforceable), unless spelling its characters beyond ASCII raw only (no
  ``\\uXXXX``; a policy note in :attr:`SchemaGrammar.warnings`) makes it fit. Several strings with different bounds make the mask
  automaton's construction slow (a window of positions below each bound).
  Overlapping ``anyOf`` object/array branches give an ambiguous grammar
  (LALR(1) conflicts, :attr:`SchemaGrammar.ambiguous`); ``Constraint``'s
  default ``ambiguous=None`` parses it with GLR.

Options: ``strict=True``, ``whitespace="bounded"``, ``max_whitespace=20``,
``max_string_length=None`` (cap on every string), ``max_number_digits=None``
(cap on every digit run of a number), ``additional_properties=None`` (None:
follow the schema, default true; False: treat a missing
``additionalProperties`` as false), ``draft=None`` (4, 6, 7, 2019, 2020;
default from ``$schema``, else 2020), ``unknown_keywords="warn"``,
``unknown_formats="ignore"``, ``unique_items="warn"``.
"""

from __future__ import annotations

import json
import warnings as _warnings
from dataclasses import dataclass, field
from functools import cached_property

from ...errors import GrammarError
from ...grammar import Grammar
from ...limits import deep_recursion
from .common import SchemaWarning
from .converter import Converter

# the former module's other public names, re-exported
from .common import log, ANNOTATIONS, KNOWN_KEYWORDS, SUPPORTED_KEYWORDS, Lang  # noqa: F401
from .numbers import (D, D19, DSTAR, DPLUS, UINT, FRAC, EXP, MINUS, NUMBER, DEC, UNS_EXP,  # noqa: F401
                      ZERO_EXP, POS_EXP, nat_range, int_range, pos_cmp, dec_cmp, zero_cmp, PLAIN,
                      INT_SPELLINGS)
from .formats import FORMATS, UNSUPPORTED_FORMATS, format_ast  # noqa: F401

__all__ = ["schema_to_grammar", "convert_schema", "schema_constraint", "SchemaGrammar",
           "SchemaWarning", "FORMATS", "SUPPORTED_KEYWORDS", "KNOWN_KEYWORDS"]


@dataclass
class SchemaGrammar:
    """Result of :func:`convert_schema`."""
    grammar: Grammar
    warnings: tuple = ()          # "keyword at pointer: why": ignored keywords, policies applied
    annotations: tuple = ()       # unknown formats etc. (no effect on validity)
    options: dict = field(default_factory=dict)

    @cached_property
    def conflicts(self) -> tuple:
        from ...glr.lalr import lalr_conflicts
        return tuple(lalr_conflicts(self.grammar))

    @property
    def ambiguous(self) -> bool:
        """Whether the grammar has LALR(1) conflicts (``Constraint``'s default
        ``ambiguous=None`` then parses it with GLR)."""
        return bool(self.conflicts)

    def constraint(self, vocab, **constraint_options):
        """``Constraint(grammar, vocab, **constraint_options)``."""
        from ...runtime.constraint import Constraint
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
                   unknown_formats: str = "ignore", unique_items: str = "warn",
                   lexer_modes: bool = True) -> SchemaGrammar:
    """Convert and return :class:`SchemaGrammar` (grammar, warnings, ambiguity)."""
    if unknown_keywords not in ("warn", "error", "ignore"):
        raise ValueError("unknown_keywords must be 'warn', 'error' or 'ignore'")
    if unknown_formats not in ("ignore", "error"):
        raise ValueError("unknown_formats must be 'ignore' or 'error'")
    if unique_items not in ("warn", "error"):
        raise ValueError("unique_items must be 'warn' or 'error'")
    try:
        with deep_recursion():
            return _convert_schema(schema, strict=strict, whitespace=whitespace,
                                   max_whitespace=max_whitespace, max_string_length=max_string_length,
                                   max_number_digits=max_number_digits,
                                   additional_properties=additional_properties, draft=draft,
                                   unknown_keywords=unknown_keywords, unknown_formats=unknown_formats,
                                   unique_items=unique_items, lexer_modes=bool(lexer_modes))
    except RecursionError:
        raise GrammarError("JSON Schema nested too deeply (Python's recursion limit)") from None


def _convert_schema(schema, *, strict, whitespace, max_whitespace, max_string_length,
                    max_number_digits, additional_properties, draft, unknown_keywords,
                    unknown_formats, unique_items, lexer_modes) -> SchemaGrammar:
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
                unknown_keywords=unknown_keywords, unknown_formats=unknown_formats,
                unique_items=unique_items, lexer_modes=lexer_modes)
    conv = Converter(schema, opts)
    g = conv.run()
    took = conv.beat.elapsed()
    if took > conv.beat.FIRST_S:
        log.info("stackmask: JSON Schema converted in %.1f s (%d subschemas)", took, conv.subschemas)
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
    if g is None:         # nothing left once the keywords above are ignored
        err = GrammarError("the JSON Schema accepts no JSON value once the keywords that cannot "
                           "be enforced are ignored: there is no text to generate", name="schema")
        err.keyword, err.pointer = "schema", "#"
        raise err
    return SchemaGrammar(grammar=g, warnings=warn + tuple(conv.policy_notes),
                         annotations=tuple(conv.annotations), options=opts)

