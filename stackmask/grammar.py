"""The grammar model: terminals (as Python regexes), rules, lexer modes, the ignore set.

Plain data every later stage reads: the lexer compiles ``TerminalDef.regex`` to a byte
DFA, the normal form and the LR analysis read ``rules``. Lark is the one front end built
in (:meth:`Grammar.from_lark`): it expands EBNF (``?``, ``*``, ``+``, ``[...]``),
``%import`` and ``%ignore``, inlines terminal references into regexes and drops rules
unreachable from the start symbol. This module is the bottom layer: it imports nothing
of stackmask but :mod:`stackmask.errors`.

The other front ends (JSON Schema, regex, tags) sit above the compiler and build this
model; ``stackmask.Grammar`` (:mod:`stackmask.grammars`) is a subclass of
:class:`Grammar` that only adds their constructors, so the model never imports them.
Everything below the front ends checks ``isinstance`` against this class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .errors import GrammarError

END = "$END"


@dataclass(frozen=True)
class FreeText:
    """A constructed terminal language (no regex can express it): free text.

    ``until=None``: the non-empty valid UTF-8 strings in which no string of
    ``exclude`` occurs. ``until=s`` (``s`` in ``exclude``): the strings in
    which the first occurrence of any string of ``exclude`` ends at the very
    end and is ``s`` (the longest of those ending there) -- free text
    followed by the tag ``s`` as *one* lexeme, which is what global maximal
    munch needs to split ``abc<tag>`` at the tag. Built as a byte DFA
    (Aho-Corasick x UTF-8) by :mod:`stackmask.lexer.text`.
    """

    exclude: tuple[str, ...] = ()
    until: str | None = None

    def __post_init__(self) -> None:
        ex = tuple(dict.fromkeys(self.exclude))
        if any(not isinstance(x, str) or not x for x in ex):
            raise GrammarError("FreeText: excluded strings must be non-empty str")
        if self.until is not None and self.until not in ex:
            ex = ex + (self.until,)
        object.__setattr__(self, "exclude", ex)


@dataclass(frozen=True)
class TerminalDef:
    """One grammar terminal.

    ``regex`` is Python ``re`` syntax over Unicode text (flags embedded as
    ``(?i:...)``); it is compiled to a DFA over UTF-8 bytes. ``is_literal`` is
    true for terminals written as string literals (``"if"``, ``"select"i``):
    at equal length and priority a literal beats a regex.

    Two other kinds (``regex`` is then ignored, by convention ``""``):

    * ``text`` (a :class:`FreeText`): a lexed terminal whose language is
      built directly as a byte DFA (free text up to tags).
    * ``token``: a *special-token terminal*, never lexed from bytes: it is
      emitted when one of the bound special token ids is committed. Before
      binding (vocabulary-independent) it is ``(spec, fallback)``: ``spec``
      is a token id or a token's text; ``fallback`` says what happens when a
      text names no special token of the vocabulary (``True``: the terminal
      becomes the string literal of that text; ``False``: no token emits it).
      After binding against a vocabulary it is ``("ids", (id, ...))``.
    """

    name: str
    regex: str
    priority: int = 0
    is_literal: bool = False
    text: FreeText | None = None
    token: tuple | None = None
    #: where the terminal comes from, for error messages (the JSON Schema front end: the
    #: pointer of the subschema that made it, and for a string the keywords that shape it:
    #: ``"#/properties/a (pattern, maxLength)"``); no effect on its language
    source: str = ""

    @property
    def is_special(self) -> bool:
        """Emitted by special token ids, never lexed from bytes."""
        return self.token is not None

    @property
    def is_lexed(self) -> bool:
        return self.token is None


@dataclass(frozen=True)
class LexerMode:
    """A lexer mode (flex start condition): the terminals lexed in it, and
    where emitting a terminal in it switches to (``switch``: terminal name ->
    mode name; terminals not named keep the mode). Special-token terminals
    may be named in both (their switch applies when their token is
    committed in this mode). Mode 0 of ``Grammar.modes`` is the initial one.

    ``merge_into`` (optional mode): the name of a mode this one may be merged into
    without changing the language (its terminals read there, switches to it and from it
    dropped); the compiler merges such modes where one automaton is smaller than the
    modes' (``stackmask.compile.tables``). A JSON Schema's value modes are optional."""

    name: str
    terminals: tuple[str, ...]
    switch: tuple[tuple[str, str], ...] = ()
    merge_into: str = ""


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


@dataclass(frozen=True, eq=False)
class Grammar:
    """A context-free grammar over regex terminals.

    Build one with :meth:`from_lark` (or ``stackmask.Grammar.from_json_schema`` /
    ``from_regex``); :class:`stackmask.Constraint` also accepts Lark text directly.
    Two grammars are equal when their fields are, whatever their class (this one or
    ``stackmask.Grammar``); the constructors return instances of the class they are
    called on.

    ``gaps``: ignored terminals read at most once between two lexemes (a *gap*): a gap
    lexeme never follows another directly, so a bounded gap terminal bounds every run of
    what it matches (the JSON Schema front end's whitespace). A gap terminal must share
    no first byte with another terminal of a lexer mode it is read in (after a gap, every
    other terminal can still start).
    """

    terminals: tuple[TerminalDef, ...]
    rules: tuple[Rule, ...]
    start: str
    ignore: frozenset[str] = frozenset()
    modes: tuple[LexerMode, ...] = ()
    gaps: frozenset[str] = frozenset()
    _terminal_names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        names = frozenset(t.name for t in self.terminals)
        if len(names) != len(self.terminals):
            raise GrammarError("duplicate terminal names")
        object.__setattr__(self, "_terminal_names", names)
        origins = {r.origin for r in self.rules}
        for r in self.rules:
            for s in r.expansion:
                if s not in names and s not in origins:
                    raise GrammarError(f"rule {r.source or r.origin!r} uses undefined symbol {s!r}",
                                       name=r.source or r.origin)
        if self.start not in origins:
            raise GrammarError(f"start symbol {self.start!r} has no rules", name=self.start)
        for n in self.ignore:
            if n not in names:
                raise GrammarError(f"ignored terminal {n!r} is not defined", name=n)
            if self.terminal(n).is_special:
                raise GrammarError(f"special-token terminal {n!r} cannot be ignored", name=n)
        for n in self.gaps:
            if n not in self.ignore:
                raise GrammarError(f"gap terminal {n!r} is not an ignored terminal", name=n)
        mode_names = [m.name for m in self.modes]
        if len(set(mode_names)) != len(mode_names):
            raise GrammarError("duplicate lexer mode names")
        for m in self.modes:
            for n in m.terminals:
                if n not in names:
                    raise GrammarError(f"lexer mode {m.name!r} names undefined terminal {n!r}", name=n)
            for n, target in m.switch:
                if n not in names:
                    raise GrammarError(f"lexer mode {m.name!r} switches on undefined terminal {n!r}",
                                       name=n)
                if target not in mode_names:
                    raise GrammarError(f"lexer mode {m.name!r} switches to undefined mode {target!r}",
                                       name=target)
            if m.merge_into:
                into = next((x for x in self.modes if x.name == m.merge_into), None)
                if into is None or into.merge_into or into is m:
                    raise GrammarError(f"lexer mode {m.name!r} merges into {m.merge_into!r}, which "
                                       f"is not a mode that stays", name=m.name)

    def _fields(self) -> tuple:
        return (self.terminals, self.rules, self.start, self.ignore, self.modes, self.gaps)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Grammar):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

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

    @property
    def lexed_terminals(self) -> tuple[TerminalDef, ...]:
        """The terminals read from bytes (all but special-token terminals), in order."""
        return tuple(t for t in self.terminals if t.is_lexed)

    @property
    def special_terminals(self) -> tuple[TerminalDef, ...]:
        return tuple(t for t in self.terminals if t.is_special)

    def terminal(self, name: str) -> TerminalDef:
        for t in self.terminals:
            if t.name == name:
                return t
        raise KeyError(name)

    # -- construction ------------------------------------------------------
    @classmethod
    def from_lark(cls, text: str, start: str = "start",
                  import_paths: Sequence[str] = (),
                  special_tokens: Mapping[str, "str | int"] | None = None) -> "Grammar":
        """Load Lark grammar text. Errors become :class:`GrammarError` with
        the offending rule/terminal name and, where Lark reports one, the
        line and column.

        ``special_tokens`` binds ``%declare``d terminals to special tokens:
        ``{"TOOL_OPEN": "<tool_call>", "THINK_END": 151668}`` (a token's text
        or id). Committing that token emits the terminal (see
        :meth:`bind_special_tokens`)."""
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

        specials = dict(special_tokens or {})
        tdefs = []
        for t in terms:
            if t.pattern is None:
                if t.name in specials:
                    tdefs.append(TerminalDef(name=t.name, regex="",
                                             token=_token_spec(t.name, specials[t.name], True)))
                    continue
                raise GrammarError(f"terminal {t.name} is declared but has no pattern (bind it "
                                   f"to a special token with special_tokens=)", name=t.name)
            tdefs.append(TerminalDef(name=t.name, regex=t.pattern.to_regexp(),
                                     priority=int(t.priority or 0),
                                     is_literal=isinstance(t.pattern, PatternStr)))
        rdefs = []
        for r in rules:
            src = r.origin.name
            src = str(src)
            rdefs.append(Rule(origin=str(r.origin.name), expansion=tuple(str(s.name) for s in r.expansion),
                              source=_user_rule_name(src), priority=int(r.options.priority or 0)))
        known = {t.name for t in tdefs}
        for r in rules:
            for sym in r.expansion:
                name = str(sym.name)
                if getattr(sym, "is_term", False) and name not in known:
                    known.add(name)
                    if name not in specials:
                        raise GrammarError(f"terminal {name} is declared but has no pattern (bind "
                                           f"it to a special token with special_tokens=)", name=name)
                    tdefs.append(TerminalDef(name=name, regex="",
                                             token=_token_spec(name, specials[name], True)))
        for name in specials:
            if not any(t.name == name for t in tdefs):
                raise GrammarError(f"special_tokens names {name!r}, which is not a %declare'd "
                                   f"terminal used by the grammar", name=name)
        return cls(terminals=tuple(tdefs), rules=tuple(rdefs), start=start,
                   ignore=frozenset(str(i) for i in ignore))

    def bind_special_tokens(self, special_tokens: Mapping[str, "str | int"]) -> "Grammar":
        """This grammar with the named terminals turned into special-token
        terminals. A value is a token id (it must be a special, non-EOS token
        of the vocabulary) or a token's text: the special token of the
        vocabulary with exactly that text, or, if the vocabulary has none,
        the text itself as a string literal (so one grammar works with a
        vocabulary where ``<tool_call>`` is special and with one where it is
        ordinary text). Resolved when a :class:`~stackmask.Constraint` is
        built."""
        names = {t.name for t in self.terminals}
        for n in special_tokens:
            if n not in names:
                raise GrammarError(f"special_tokens names undefined terminal {n!r}", name=n)
        terms = tuple(TerminalDef(name=t.name, regex="", token=_token_spec(t.name, special_tokens[t.name], True))
                      if t.name in special_tokens else t for t in self.terminals)
        return type(self)(terminals=terms, rules=self.rules, start=self.start, ignore=self.ignore,
                          modes=self.modes, gaps=self.gaps)

    @classmethod
    def of(cls, grammar: "Grammar") -> "Grammar":
        """``grammar`` as an instance of ``cls`` (itself when it is one already)."""
        if type(grammar) is cls:
            return grammar
        if not isinstance(grammar, Grammar):
            raise TypeError(f"expected a stackmask.Grammar, not {type(grammar).__name__}")
        return cls(terminals=grammar.terminals, rules=grammar.rules, start=grammar.start,
                   ignore=grammar.ignore, modes=grammar.modes, gaps=grammar.gaps)

    @classmethod
    def build(cls, terminals: Iterable[TerminalDef], rules: Iterable[Rule], start: str,
              ignore: Iterable[str] = (), modes: Iterable[LexerMode] = (),
              gaps: Iterable[str] = ()) -> "Grammar":
        return cls(terminals=tuple(terminals), rules=tuple(rules), start=start, ignore=frozenset(ignore),
                   modes=tuple(modes), gaps=frozenset(gaps))


def _token_spec(name: str, spec, fallback: bool) -> tuple:
    """Validate a special-token binding (``id`` or text) -> ``(spec, fallback)``."""
    if isinstance(spec, bool) or not isinstance(spec, (int, str)):
        try:
            import operator
            spec = operator.index(spec)
        except TypeError:
            raise GrammarError(f"terminal {name}: a special token is named by its text (str) or "
                               f"id (int), not {spec!r}", name=name) from None
    if isinstance(spec, str) and not spec:
        raise GrammarError(f"terminal {name}: empty special token text", name=name)
    if isinstance(spec, int) and spec < 0:
        raise GrammarError(f"terminal {name}: negative token id {spec}", name=name)
    return (spec, bool(fallback))


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
