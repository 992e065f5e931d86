"""Front ends: grammars from JSON Schema, regexes and tags; the grammars shipped with stackmask.

:class:`Grammar` here is ``stackmask.Grammar``: the grammar model
(:class:`stackmask.grammar.Grammar`) plus the front ends' constructors. It is a
subclass so that the model, at the bottom of the package, never imports the front ends
above it; both compare equal field by field, and every API that takes a grammar accepts
either. The front-end functions (:func:`stackmask.grammars.json_schema.schema_to_grammar`,
:func:`stackmask.grammars.regex.regex_to_grammar`, :mod:`stackmask.grammars.tags`) return
the model class; the constructors below return ``Grammar``.
"""

from __future__ import annotations

from importlib import resources

from .. import grammar as _model

__all__ = ["Grammar", "grammar_from_json_schema", "grammar_from_regex", "BUNDLED", "load"]

BUNDLED = ("json",)


class Grammar(_model.Grammar):
    """A context-free grammar over regex terminals (see :class:`stackmask.grammar.Grammar`),
    with the constructors of every front end: :meth:`from_lark`, :meth:`from_json_schema`,
    :meth:`from_regex`."""

    @classmethod
    def from_json_schema(cls, schema, **options) -> "Grammar":
        """Grammar of the JSON documents valid under ``schema`` (a dict or
        JSON text). See :mod:`stackmask.grammars.json_schema` for options."""
        from .json_schema import schema_to_grammar
        return cls.of(schema_to_grammar(schema, **options))

    @classmethod
    def from_regex(cls, pattern: str, **options) -> "Grammar":
        """Grammar whose sentences are the full matches of ``pattern``
        (Python ``re`` syntax). See :mod:`stackmask.grammars.regex`."""
        from .regex import regex_to_grammar
        return cls.of(regex_to_grammar(pattern, **options))


def grammar_from_json_schema(schema, **options) -> Grammar:
    """:meth:`Grammar.from_json_schema` as a function."""
    return Grammar.from_json_schema(schema, **options)


def grammar_from_regex(pattern: str, **options) -> Grammar:
    """:meth:`Grammar.from_regex` as a function."""
    return Grammar.from_regex(pattern, **options)


def load(name: str) -> str:
    """Lark text of a bundled grammar (``json``)."""
    if name not in BUNDLED:
        raise KeyError(f"no bundled grammar {name!r}; bundled: {', '.join(BUNDLED)}")
    return resources.files(__package__).joinpath(f"{name}.lark").read_text(encoding="utf-8")
