"""Plain-data grammar: terminals (as Python regexes), rules and the ignore set.

This is the single representation every later stage reads: the lexer compiles
``TerminalDef.regex`` to a byte DFA, the normal form and the LR analysis read
``rules``. Lark is only used here, as the front end: it expands EBNF
(``?``, ``*``, ``+``, ``[...]``), ``%import`` and ``%ignore``, inlines terminal
references into regexes and drops rules unreachable from the start symbol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..errors import GrammarError

END = "$END"


@dataclass(frozen=True)
class TerminalDef:
    """One lexer terminal.

    ``regex`` is Python ``re`` syntax over Unicode text (flags embedded as
    ``(?i:...)``); it is compiled to a DFA over UTF-8 bytes. ``is_literal`` is
    true for terminals written as string literals (``"if"``, ``"select"i``):
    at equal length and priority a literal beats a regex.
    """

    name: str
    regex: str
    priority: int = 0
    is_literal: bool = False


@dataclass(frozen=True)
class Rule:
    """``origin -> expansion``; symbols are names, terminals are those in
    ``Grammar.terminals``. ``source`` names the user's rule this one derives
    from (for error messages); ``priority`` is Lark's rule priority."""

    origin: str
    expansion: tuple[str, ...]
    source: str = ""
    priority: int = 0

    def __str__(self) -> str:
        return f"{self.origin} -> {' '.join(self.expansion) or '<empty>'}"


@dataclass(frozen=True)
class Grammar:
    """A context-free grammar over regex terminals.

    Build one with :meth:`from_lark`; :class:`stackmask.Constraint` also
    accepts Lark text directly.
    """

    terminals: tuple[TerminalDef, ...]
    rules: tuple[Rule, ...]
    start: str
    ignore: frozenset[str] = frozenset()
    _terminal_names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        names = frozenset(t.name for t in self.terminals)
        if len(names) != len(self.terminals):
            raise GrammarError("duplicate terminal names")
        object.__setattr__(self, "_terminal_names", names)
        for r in self.rules:
            for s in r.expansion:
                if s not in names and not any(q.origin == s for q in self.rules):
                    raise GrammarError(f"rule {r.source or r.origin!r} uses undefined symbol {s!r}",
                                       name=r.source or r.origin)
        if not any(r.origin == self.start for r in self.rules):
            raise GrammarError(f"start symbol {self.start!r} has no rules", name=self.start)
        for n in self.ignore:
            if n not in names:
                raise GrammarError(f"ignored terminal {n!r} is not defined", name=n)

    # -- queries -----------------------------------------------------------
    def is_terminal(self, symbol: str) -> bool:
        return symbol in self._terminal_names

    @property
    def terminal_names(self) -> frozenset[str]:
        return self._terminal_names

    @property
    def nonterminals(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for r in self.rules:
            seen.setdefault(r.origin, None)
        return tuple(seen)

    def rules_for(self, nonterminal: str) -> list[Rule]:
        return [r for r in self.rules if r.origin == nonterminal]

    def terminal(self, name: str) -> TerminalDef:
        for t in self.terminals:
            if t.name == name:
                return t
        raise KeyError(name)

    # -- construction ------------------------------------------------------
    @classmethod
    def from_lark(cls, text: str, start: str = "start",
                  import_paths: Sequence[str] = ()) -> "Grammar":
        """Load Lark grammar text. Errors become :class:`GrammarError` with
        the offending rule/terminal name and, where Lark reports one, the
        line and column."""
        from lark.exceptions import GrammarError as LarkGrammarError, LarkError, UnexpectedInput
        from lark.lexer import PatternStr
        from lark.load_grammar import load_grammar

        try:
            lg, _ = load_grammar(text, "<grammar>", list(import_paths), False)
            terms, rules, ignore = lg.compile([start], ())
        except UnexpectedInput as e:
            raise GrammarError(f"grammar syntax error: {_first_line(e)}",
                               line=getattr(e, "line", None), column=getattr(e, "column", None)) from None
        except LarkGrammarError as e:
            line, col = _lark_position(str(e))
            raise GrammarError(f"grammar error: {_first_line(e)}", name=_quoted_name(str(e)),
                               line=line, column=col) from None
        except LarkError as e:
            raise GrammarError(f"grammar error: {_first_line(e)}") from None
        except KeyError as e:  # lark raises KeyError for some undefined names
            raise GrammarError(f"grammar error: undefined symbol {e}", name=str(e).strip("'")) from None
        except RecursionError:
            raise GrammarError("grammar error: the grammar text is nested too deeply "
                               "(Python's recursion limit)") from None

        tdefs = []
        for t in terms:
            if t.pattern is None:
                raise GrammarError(f"terminal {t.name} is declared but has no pattern", name=t.name)
            tdefs.append(TerminalDef(name=t.name, regex=t.pattern.to_regexp(),
                                     priority=int(t.priority or 0),
                                     is_literal=isinstance(t.pattern, PatternStr)))
        rdefs = []
        for r in rules:
            src = r.origin.name
            src = str(src)
            rdefs.append(Rule(origin=str(r.origin.name), expansion=tuple(str(s.name) for s in r.expansion),
                              source=_user_rule_name(src), priority=int(r.options.priority or 0)))
        return cls(terminals=tuple(tdefs), rules=tuple(rdefs), start=start,
                   ignore=frozenset(str(i) for i in ignore))

    @classmethod
    def from_json_schema(cls, schema, **options) -> "Grammar":
        """Grammar of the JSON documents valid under ``schema`` (a dict or
        JSON text). See :mod:`stackmask.grammars.json_schema` for options."""
        from ..grammars.json_schema import schema_to_grammar
        return schema_to_grammar(schema, **options)

    @classmethod
    def from_regex(cls, pattern: str, **options) -> "Grammar":
        """Grammar whose sentences are the full matches of ``pattern``
        (Python ``re`` syntax). See :mod:`stackmask.grammars.regex`."""
        from ..grammars.regex import regex_to_grammar
        return regex_to_grammar(pattern, **options)

    @classmethod
    def build(cls, terminals: Iterable[TerminalDef], rules: Iterable[Rule], start: str,
              ignore: Iterable[str] = ()) -> "Grammar":
        return cls(terminals=tuple(terminals), rules=tuple(rules), start=start, ignore=frozenset(ignore))


def _first_line(e: Exception) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


def _lark_position(msg: str) -> tuple[int | None, int | None]:
    import re
    m = re.search(r"line (\d+) column (\d+)", msg)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"line (\d+)", msg)
    return (int(m.group(1)), None) if m else (None, None)


def _quoted_name(msg: str) -> str | None:
    import re
    m = re.search(r"'([A-Za-z_][A-Za-z_0-9]*)'", msg)
    return m.group(1) if m else None


def _user_rule_name(name: str) -> str:
    """Lark names EBNF helper rules ``__<rule>_star_<n>``; map back to ``<rule>``."""
    if name.startswith("__"):
        body = name[2:]
        for marker in ("_star_", "_plus_", "_inline_", "_anon_"):
            i = body.rfind(marker)
            if i > 0:
                return body[:i]
    return name
