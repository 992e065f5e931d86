"""Special tokens inside grammars: binding special-token terminals to a
vocabulary, the literal/special-token collision check, and trigger mode.

Everything here runs when a :class:`~stackmask.Constraint` is compiled, the
one place where grammar and vocabulary meet; the result is a plain grammar
whose special-token terminals carry token ids (``token == ("ids", ids)``).
"""

from __future__ import annotations

import re

from ..errors import GrammarError
from ..grammar import FreeText, Grammar, LexerMode, Rule, TerminalDef

__all__ = ["resolve_grammar", "with_trigger", "special_bindings"]


def _special_texts(vocab) -> dict[bytes, list[int]]:
    out: dict[bytes, list[int]] = {}
    toks = vocab.tokens
    for i in sorted(vocab.special_token_ids | vocab.eos_token_ids):
        b = toks[i] if i < len(toks) else None
        if b:
            out.setdefault(b, []).append(i)
    return out


def resolve_grammar(grammar: Grammar, vocab) -> Grammar:
    """``grammar`` with every special-token terminal bound to token ids of
    ``vocab`` (a text naming no special token becomes a string literal when
    the binding allows it, else a terminal no token emits). Raises
    :class:`GrammarError` for an id that is not a special, non-EOS token, a
    text that only names an EOS token, an id bound to two terminals, and a
    string literal whose text is that of a special token no terminal is
    bound to (the model's single special token would be refused while the
    grammar asks for the text spelled out)."""
    by_text = _special_texts(vocab)
    eos = vocab.eos_token_ids
    special = vocab.special_token_ids
    terms = []
    owner: dict[int, str] = {}
    for t in grammar.terminals:
        if t.token is None or t.token[0] == "ids":
            terms.append(t)
            if t.token is not None:
                for i in t.token[1]:
                    owner[i] = t.name
            continue
        spec, fallback = t.token
        if isinstance(spec, int):
            if spec >= vocab.size or spec not in special:
                raise GrammarError(f"terminal {t.name}: token id {spec} is not a special token of the "
                                   f"vocabulary (name ordinary text by a string literal)", name=t.name)
            if spec in eos:
                raise GrammarError(f"terminal {t.name}: token id {spec} is an EOS token; EOS ends the "
                                   f"text and is allowed exactly when the grammar's sentence is "
                                   f"complete, it cannot be a terminal", name=t.name)
            ids = (spec,)
        else:
            found = by_text.get(spec.encode("utf-8"), [])
            ids = tuple(i for i in found if i not in eos)
            if not ids and found and fallback:
                raise GrammarError(f"terminal {t.name}: {spec!r} is an EOS token; EOS ends the text "
                                   f"and is allowed exactly when the grammar's sentence is complete, "
                                   f"it cannot be a terminal", name=t.name)
            if not ids and not found and fallback:
                terms.append(TerminalDef(name=t.name, regex=re.escape(spec), priority=t.priority,
                                         is_literal=True))
                continue
        for i in ids:
            if i in owner:
                raise GrammarError(f"special token {i} is bound to two terminals, {owner[i]} and "
                                   f"{t.name}", name=t.name)
            owner[i] = t.name
        terms.append(TerminalDef(name=t.name, regex="", priority=t.priority, token=("ids", ids)))
    out = Grammar(terminals=tuple(terms), rules=grammar.rules, start=grammar.start,
                  ignore=grammar.ignore, modes=grammar.modes, gaps=grammar.gaps)
    _check_collisions(out, by_text, owner)
    return out


def _check_collisions(g: Grammar, by_text: dict, owner: dict) -> None:
    unbound = {b: ids for b, ids in by_text.items() if not any(i in owner for i in ids)}
    if not unbound:
        return
    from ..lexer.terminal_dfa import compile_terminal
    for t in g.terminals:
        if not t.is_literal or t.text is not None or t.token is not None:
            continue
        d = compile_terminal(t.regex, t.name)
        for b, ids in unbound.items():
            if d.fullmatch(b):
                raise GrammarError(
                    f"string literal {t.name} ({b.decode('utf-8', 'replace')!r}) has the text of special "
                    f"token {ids[0]}, which is never lexed as text: a model emitting that token would "
                    f"be refused. Bind a %declare'd terminal to it (special_tokens={{NAME: "
                    f"{b.decode('utf-8', 'replace')!r}}}) instead", name=t.name)


def special_bindings(tables) -> dict[int, list[int]]:
    """Parser terminal id -> bound token ids, for the tables of a resolved grammar."""
    out: dict[int, list[int]] = {}
    for t in tables.grammar.terminals:
        if t.token is not None and t.token[0] == "ids" and t.token[1] and t.name in tables.lr.terminal_index:
            out[tables.lr.terminal_index[t.name]] = sorted(t.token[1])
    return out


def fresh(used: set, base: str) -> str:
    name = base
    k = 0
    while name in used:
        k += 1
        name = f"{base}{k}"
    used.add(name)
    return name


def with_trigger(g: Grammar, trigger, vocab) -> Grammar:
    """Trigger mode: any text until ``trigger`` (a special token's text or
    id, or a plain string), then ``g``. The trigger is accepted as its special
    token when the vocabulary has one and always also spelled out as text
    (when it has a text form); the free text before it never contains the
    trigger's text."""
    if isinstance(trigger, bool) or not isinstance(trigger, (int, str)):
        raise TypeError(f"trigger must be a token text (str) or id (int), not {trigger!r}")
    if isinstance(trigger, int):
        if not 0 <= trigger < vocab.size or trigger not in vocab.special_token_ids \
                or trigger in vocab.eos_token_ids:
            raise GrammarError(f"trigger token id {trigger} is not a special, non-EOS token of the "
                               f"vocabulary (give ordinary text as a string)")
        b = vocab.tokens[trigger] if trigger < len(vocab.tokens) else None
        try:
            text = b.decode("utf-8") if b else None
        except UnicodeDecodeError:
            text = None
        spec = trigger
    else:
        if not trigger:
            raise GrammarError("empty trigger")
        text = spec = trigger
    used = set(g.terminal_names) | set(g.nonterminals) | {m.name for m in g.modes}
    start = fresh(used, "_trigger_start")
    trig = fresh(used, "TRIGGER")
    free = fresh(used, "REASONING")
    mode = fresh(used, "reasoning")
    terms = list(g.terminals)
    terms.append(TerminalDef(name=trig, regex="", token=(spec, False)))
    terms.append(TerminalDef(name=free, regex="", text=FreeText((text,) if text else ())))
    rules = [Rule(start, (free, trig, g.start), source="trigger"),
             Rule(start, (trig, g.start), source="trigger")]
    mode_terms = [free, trig]
    inner = list(g.modes) or [LexerMode(fresh(used, "grammar"),
                                        tuple(t.name for t in g.terminals))]
    switch = [(trig, inner[0].name)]
    if text:
        until = fresh(used, "REASONING_UNTIL_TRIGGER")
        terms.append(TerminalDef(name=until, regex="", text=FreeText((text,), until=text)))
        rules.append(Rule(start, (until, g.start), source="trigger"))
        mode_terms.append(until)
        switch.append((until, inner[0].name))
    modes = [LexerMode(mode, tuple(mode_terms), tuple(switch))] + inner
    return Grammar(terminals=tuple(terms), rules=tuple(rules) + g.rules, start=start,
                   ignore=g.ignore, modes=tuple(modes), gaps=g.gaps)
