"""Bad input gets a clear stackmask error and loses nothing."""

from __future__ import annotations

import pytest

from stackmask import Constraint, Grammar, GrammarError, TokenRejected, Vocab
from stackmask.grammars import load

V = Vocab([bytes([i]) for i in range(256)] + [b"</s>"], eos_token_ids=[256], special_token_ids=[256])


def test_syntax_error_has_line_and_column():
    with pytest.raises(GrammarError) as ei:
        Grammar.from_lark('start: "a"\nfoo: "b" (\n')
    e = ei.value
    assert e.line == 2 and e.column is not None
    assert "line 2" in str(e)


def test_undefined_rule_is_named():
    with pytest.raises(GrammarError) as ei:
        Constraint('start: "a" missing_rule\n', V)
    assert "missing_rule" in str(ei.value)


def test_missing_start_rule():
    with pytest.raises(GrammarError):
        Grammar.from_lark('other: "a"\n')


@pytest.mark.parametrize("regex, feature", [
    (r"/(a)\1/", "backreference"),
    (r"/a(?=b)/", "look"),
    (r"/(?<=a)b/", "look"),
    (r"/^ab/", "anchor"),
    (r"/ab\b/", "boundar"),
])
def test_unsupported_regex_names_the_terminal(regex, feature):
    g = f"start: BAD\nBAD: {regex}\n"
    with pytest.raises(GrammarError) as ei:
        Constraint(g, V, ambiguous=False)
    msg = str(ei.value)
    assert "BAD" in msg
    assert ei.value.name == "BAD"


def test_empty_matching_terminal_is_rejected():
    with pytest.raises(GrammarError) as ei:
        Constraint('start: A "x"\nA: /a*/\n', V)
    assert "A" in str(ei.value)


def test_conflict_lists_rules_and_suggests_ambiguous():
    g = """
start: stmt
stmt: "if" "c" stmt | "if" "c" stmt "else" stmt | "x"
"""
    with pytest.raises(GrammarError) as ei:
        Constraint(g, V, ambiguous=False)
    msg = str(ei.value)
    assert "stmt" in msg and "ambiguous=True" in msg
    c = Constraint(g, V, ambiguous=True)
    s = c.commit_bytes(c.start(), b"ifcifcxelsex")
    assert c.is_accepting(s)


@pytest.mark.parametrize("name", ["json-outlines", "calc", "c"])
def test_benchmark_grammars_without_conflicts_need_no_flag(name, bench_grammar):
    Constraint(bench_grammar(name), V)


@pytest.mark.parametrize("name", ["sql", "java", "go"])
def test_benchmark_grammars_with_conflicts_raise_without_flag(name, bench_grammar):
    with pytest.raises(GrammarError):
        Constraint(bench_grammar(name), V, ambiguous=False)


def test_bundled_json_grammar_is_deterministic():
    c = Constraint(load("json"), V)
    s = c.commit_bytes(c.start(), b'{"a": [1, 2.5e3, "x\\u00e9", true, null], "b": {}}')
    assert c.is_accepting(s)
    with pytest.raises(TokenRejected):
        c.commit_bytes(c.start(), b'{"a": 01}')


def test_rejected_token_leaves_state_decodable():
    c = Constraint(load("json"), V)
    s = c.commit_bytes(c.start(), b'{"a": ')
    with pytest.raises(TokenRejected) as ei:
        c.commit(s, ord("}"))
    assert ei.value.offset == 0
    s = c.commit_bytes(s, b"1}")
    assert c.is_accepting(s)


def test_wrong_argument_types():
    with pytest.raises(TypeError):
        Constraint(123, V)
    with pytest.raises(TypeError):
        Constraint('start: "a"\n', [b"a"])


def test_a_terminal_too_large_names_where_it_comes_from():
    # the JSON Schema front end records each terminal's subschema (TerminalDef.source):
    # a lexer error naming the terminal says where it comes from
    from stackmask.compile.tables import build_tables
    from stackmask.grammar import Grammar as G, Rule, TerminalDef
    for source, expect in (("#/properties/big", "(BIG: the strings of #/properties/big)"), ("", None)):
        g = G.build([TerminalDef("BIG", r"[ab]*a[ab]{25}", source=source)], [Rule("start", ("BIG",))], "start")
        with pytest.raises(GrammarError, match="terminal 'BIG' is too large") as e:
            build_tables(g, band=129)
        assert (expect in str(e.value)) if expect else "strings of" not in str(e.value)
        assert e.value.name == "BIG"
