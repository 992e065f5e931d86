"""The GLR parser (over the normal form's LR tables) agrees with Lark on the
user's grammar, at the level of terminal sequences: generated sentences and
random mutations of them. Lark's LALR parser is the reference for the
conflict-free grammars, its Earley parser for the ambiguous ones.

The lexer is tested separately (against Python ``re``); feeding terminal
sequences keeps Lark's different lexing rules out of this comparison."""

from __future__ import annotations

import random

import lark
import pytest
from lark.lexer import Lexer, Token

from stackmask.compile.tables import build_tables
from stackmask.generate import SentenceGenerator
from stackmask.grammar import Grammar
from stackmask.glr.gss import GLR

from conftest import AMBIGUOUS_BENCH, BENCH_GRAMMARS, read_bench_grammar

OWN_AMBIGUOUS = {
    # expression grammar without precedence
    "expr": 'start: e\ne: e "+" e | e "*" e | "(" e ")" | "-" e | NUMBER\n'
            '%import common.NUMBER\n%import common.WS\n%ignore WS\n',
    # epsilon rules, hidden left recursion (a: b a "x" with b nullable), right recursion
    "eps_hidden": 'start: a\na: b a "x" | "y" | b c\nb: "z"? d?\nc: "w" c | "w"\nd: "q" | \n',
    # highly ambiguous
    "ss": 'start: s\ns: s s | "a" | "(" s ")" | \n',
}


class _Seq(Lexer):
    def __init__(self, conf):
        pass

    def lex(self, data):
        for name in data:
            yield Token(name, name)


def lark_accepts(parser: lark.Lark, seq: list[str]) -> bool:
    try:
        parser.parse(seq)
        return True
    except lark.exceptions.LarkError:
        return False


def glr_accepts(tables, seq: list[str]) -> bool:
    glr = GLR(tables.lr)
    if not seq:
        return tables.normal_form.accepts_empty
    nodes = [glr.root]
    for name in seq:
        t = tables.terminal_ids[name]
        nodes = glr.shift(nodes, t)
        if not nodes:
            return False
    return any(glr.accepts(n) for n in nodes)


def mutate_terminals(seq: list[str], names: list[str], rng: random.Random) -> list[str]:
    s = list(seq)
    op = rng.randrange(5)
    i = rng.randrange(len(s) + 1)
    if op == 0 and s:
        del s[min(i, len(s) - 1)]
    elif op == 1:
        s.insert(i, rng.choice(names))
    elif op == 2 and s:
        s[min(i, len(s) - 1)] = rng.choice(names)
    elif op == 3 and len(s) > 1:
        j = min(i, len(s) - 2)
        s[j], s[j + 1] = s[j + 1], s[j]
    else:
        s = s[:i]
    return s


def _cases():
    for name in BENCH_GRAMMARS:
        yield name
    for name in OWN_AMBIGUOUS:
        yield name


# Lark's Earley parser is the reference for the GLR grammars and is slow on SQL, Java and
# Go sentences: the default run checks 10 sentences of those (25 of the others), the slow
# run 25 of every grammar.
_FEWER = {"sql", "java", "go"}
_GLR_CASES = ([pytest.param(n, 10 if n in _FEWER else 25, id=n) for n in _cases()]
              + [pytest.param(n, 25, id=f"{n}-25", marks=pytest.mark.slow)
                 for n in _cases() if n in _FEWER])


@pytest.mark.parametrize("name, n_sentences", _GLR_CASES)
def test_glr_agrees_with_lark(name, n_sentences):
    text = OWN_AMBIGUOUS.get(name) or read_bench_grammar(name)
    ambiguous = name in OWN_AMBIGUOUS or name in AMBIGUOUS_BENCH
    tables = build_tables(text, ambiguous=ambiguous)
    g: Grammar = tables.grammar
    parser = lark.Lark(text, parser="earley" if ambiguous else "lalr", lexer=_Seq)
    gen = SentenceGenerator(g, max_depth=10, seed=7)
    rng = random.Random(11)
    names = sorted(t.name for t in g.terminals if t.name not in g.ignore)
    n_pos = n_neg = 0
    for _ in range(n_sentences):
        seq = gen.terminal_sequence(rng)
        assert glr_accepts(tables, seq), f"{name}: generated sentence rejected: {seq}"
        assert lark_accepts(parser, seq)
        n_pos += 1
        for _ in range(3):
            m = mutate_terminals(seq, names, rng)
            ours, theirs = glr_accepts(tables, m), lark_accepts(parser, m)
            assert ours == theirs, f"{name}: disagree on {m}: stackmask {ours}, lark {theirs}"
            n_neg += not theirs
    assert n_pos == n_sentences and n_neg > 0
