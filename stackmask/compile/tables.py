"""Grammar -> the tables the runtime executes: normal form, LR tables, lexer DFA.

This is the first stage of compilation and everything ``commit`` needs. The
``ambiguous=False`` promise is checked here, on the user's own grammar.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import GrammarError
from ..grammar import Grammar
from ..glr.lalr import LRTables, build_lalr, check_deterministic
from ..glr.normal_form import NormalForm, normalize
from ..lexer.combined import compile_modal_lexer
from ..lexer.counted import DEFAULT_BAND
from ..lexer.dfa import DFA


@dataclass(frozen=True, eq=False)
class GrammarTables:
    grammar: Grammar              # the user's grammar
    normal_form: NormalForm
    lr: LRTables                  # tables of the normal form (commit and masks share them)
    lexer: DFA                    # combined DFA of all terminals of ``grammar``
    terminal_ids: dict            # terminal name -> parser terminal index (ids past the LR
                                  # table's terminals are lexable but never shiftable)
    ambiguous: bool
    lexed: tuple = ()             # the terminals read from bytes (lexer accept indices refer to these)
    mode_starts: tuple = (0,)     # lexer DFA start state of every lexer mode
    switch: dict = None           # (mode, terminal name) -> mode after emitting it there


def coerce_grammar(grammar: "Grammar | str") -> Grammar:
    """The grammar model of ``grammar`` (Lark text, or a grammar of any Grammar class: the
    tables hold the model class itself, which artifacts store)."""
    if isinstance(grammar, Grammar):
        return Grammar.of(grammar)
    if isinstance(grammar, str):
        return Grammar.from_lark(grammar)
    raise TypeError(f"grammar must be Lark text or stackmask.Grammar, not {type(grammar).__name__}")


def build_tables(grammar: "Grammar | str", ambiguous: bool = False, check=None,
                 band: int = DEFAULT_BAND) -> GrammarTables:
    """``check`` (optional) is called between stages (compile-time limits). A grammar
    too deeply nested for Python's recursion limit raises :class:`GrammarError`.
    ``band``: longer than the longest token the masks will see (repetitions far beyond
    it are counted, :mod:`stackmask.lexer.counted`)."""
    try:
        return _build_tables(grammar, ambiguous, check or (lambda: None), band)
    except RecursionError:
        raise GrammarError("the grammar is nested too deeply to compile "
                           "(Python's recursion limit)") from None


def _build_tables(grammar, ambiguous: bool, check, band: int) -> GrammarTables:
    g = coerce_grammar(grammar)
    check()
    if not ambiguous:
        check_deterministic(g)
        check()
    nf = normalize(g)
    check()
    lr = build_lalr(nf.grammar)
    check()
    if any(n == 0 for n in lr.rule_len):
        raise GrammarError("internal error: normal form still has an empty rule")
    lexed = g.lexed_terminals
    pos = {t.name: i for i, t in enumerate(lexed)}
    switch: dict = {}
    if g.modes:
        mode_index = {m.name: k for k, m in enumerate(g.modes)}
        modes = [[pos[n] for n in dict.fromkeys(m.terminals) if n in pos] for m in g.modes]
        for k, m in enumerate(g.modes):
            for n, target in m.switch:
                switch[(k, n)] = mode_index[target]
    else:
        modes = [list(range(len(lexed)))]
    dfa, starts = compile_modal_lexer(lexed, modes, band)
    ids = dict(lr.terminal_index)
    extra = len(lr.terminals)
    for t in g.terminals:
        if t.name not in ids:
            ids[t.name] = extra
            extra += 1
    return GrammarTables(grammar=g, normal_form=nf, lr=lr, lexer=dfa, terminal_ids=ids,
                         ambiguous=ambiguous, lexed=lexed, mode_starts=starts, switch=switch)
