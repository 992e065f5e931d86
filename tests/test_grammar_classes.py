"""The grammar model (stackmask.grammar.Grammar) and the user-facing stackmask.Grammar.

stackmask.Grammar is the model plus the front ends' constructors (a subclass, so the
model at the bottom of the package never imports the front ends). Grammars of either
class are equal when their fields are, constructors return the class they are called
on, and everything that takes a grammar accepts both.
"""

from __future__ import annotations

import pytest

import stackmask
from stackmask import grammar as model
from stackmask.grammars.json_schema import schema_to_grammar
from stackmask.grammars.regex import regex_to_grammar

LARK = 'start: "a" B\nB: /[0-9]+/\n'


def test_user_class_is_the_model_plus_front_end_constructors():
    assert issubclass(stackmask.Grammar, model.Grammar)
    assert not hasattr(model.Grammar, "from_json_schema")
    assert not hasattr(model.Grammar, "from_regex")
    assert stackmask.grammars.Grammar is stackmask.Grammar


@pytest.mark.parametrize("make", [
    lambda G: G.from_lark(LARK),
    lambda G: G.from_lark(LARK).bind_special_tokens({}),
    lambda G: G.build(model.Grammar.from_lark(LARK).terminals, model.Grammar.from_lark(LARK).rules,
                      "start"),
])
def test_constructors_return_the_class_they_are_called_on(make):
    u, m = make(stackmask.Grammar), make(model.Grammar)
    assert type(u) is stackmask.Grammar and type(m) is model.Grammar
    assert u == m and m == u and hash(u) == hash(m)


def test_front_end_constructors_and_functions():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    g = stackmask.Grammar.from_json_schema(schema)
    assert type(g) is stackmask.Grammar
    assert g == schema_to_grammar(schema) == stackmask.grammar_from_json_schema(schema)
    assert type(stackmask.grammar_from_json_schema(schema)) is stackmask.Grammar
    r = stackmask.Grammar.from_regex(r"[ab]+c", name="W")
    assert type(r) is stackmask.Grammar and type(stackmask.grammar_from_regex("x")) is stackmask.Grammar
    assert r == regex_to_grammar(r"[ab]+c", name="W") == stackmask.grammar_from_regex(r"[ab]+c", name="W")
    assert stackmask.Grammar.of(regex_to_grammar("x")) == regex_to_grammar("x")
    with pytest.raises(TypeError):
        stackmask.Grammar.of("start: x")


def test_grammars_differ_by_fields():
    a = stackmask.Grammar.from_lark(LARK)
    b = model.Grammar.from_lark(LARK.replace("[0-9]", "[0-8]"))
    assert a != b and a != "start" and len({a, b, model.Grammar.of(a)}) == 2


def test_both_classes_are_accepted():
    vocab = stackmask.Vocab([b"a", b"1", b"2", b"a1"], eos_token_ids=[], vocab_size=5)
    for g in (stackmask.Grammar.from_lark(LARK), model.Grammar.from_lark(LARK),
              regex_to_grammar("a[12]+")):
        assert stackmask.validate(g).ok
        c = stackmask.Constraint(g, vocab, cache_dir=False, progress=False)
        s = c.commit(c.commit(c.start(), 0), 1)
        assert c.is_accepting(s)
