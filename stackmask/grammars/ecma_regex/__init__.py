"""ECMA-262 regexes (JSON Schema ``pattern``) as exact regular languages.

Used by :mod:`stackmask.grammars.json_schema`. The package is split by job:

* :mod:`.parser`: the syntax of an ECMA-262 pattern -> a parse tree;
* :mod:`.charsets`: the character sets a pattern names (class escapes, Unicode
  properties) and their case variants (``(?i)``);
* :mod:`.language`: the parse tree -> the regex IR (:mod:`stackmask.lexer.ir`: hashable
  tuples over code point sets), anchored as JSON Schema says;
* :mod:`.algebra`: intersection, difference, complement, emptiness, inclusion, length
  limits and finite exclusion, on minimal DFAs over code point atoms built with the
  package's automaton toolkit (:mod:`stackmask.wfa.fsa`, :mod:`stackmask.wfa.reduction`),
  back to the IR by state elimination (with size guards: the result can grow
  exponentially);
* :mod:`.emit`: the IR as a Python regex, over the decoded text or over the JSON
  spellings of a string;
* :mod:`.match`: whether a string is in an IR's language, read off the IR.

The IR's constructors and code point set helpers (``ch``, ``lit``, ``seq``, ``alt``,
``rep``, ``EPS``, ``NONE``, ``ANY``, ``ANYSTAR``, ``length_range``, ...) are re-exported
here for the schema converter.
"""

from ...lexer.ir import (ANY, ANYSTAR, EPS, MAX_CP, NONE, SURR_HI, SURR_LO, UNIVERSE, alt,
                         ast_size, cap_repeats, ch, has_node, iv_contains, iv_intersect,
                         iv_union, length_range, lit, nullable, rep, seq)
from .algebra import (Dfa, TooComplex, atom_partition, complement, difference,
                      drop_implied_bounds, exclude, has_limits, intersect, is_disjoint, is_empty,
                      is_subset, limit_length, limited, looking, map_limits, meet, not_in,
                      resolve_limits, unimplied_bounds, union, write_out)
from .emit import (ESCAPABLE, RAW_OK, fullmatch, json_char_class, re_fullmatch, to_json_string,
                   to_python)
from .charsets import unicode_property
from .language import parse_pattern, parse_regex_full
from .parser import PatternError

__all__ = [
    "PatternError", "TooComplex", "parse_pattern", "parse_regex_full", "unicode_property", "ch",
    "lit", "seq", "alt", "rep", "EPS", "NONE", "ANY", "ANYSTAR", "UNIVERSE", "MAX_CP", "SURR_LO",
    "SURR_HI", "length_range", "nullable", "has_node", "ast_size", "cap_repeats", "iv_intersect",
    "iv_union",
    "iv_contains", "to_python", "to_json_string", "json_char_class", "fullmatch", "re_fullmatch",
    "ESCAPABLE",
    "RAW_OK", "intersect", "difference", "union", "complement", "is_empty", "is_disjoint",
    "is_subset", "Dfa", "not_in", "limit_length", "limited", "has_limits", "resolve_limits", "map_limits",
    "write_out", "looking", "meet", "exclude", "unimplied_bounds",
    "atom_partition", "drop_implied_bounds",
]
