"""``stackmask.validate(grammar)``: report what stops a grammar from compiling, cheaply.

Runs the front end (Lark syntax, undefined symbols), compiles each terminal's own
DFA (unsupported regex features: lookaround, backreferences, anchors and word
boundaries, atomic groups, possessive quantifiers; terminals matching the empty
string or nothing; oversized terminals), the normal form (derivation cycles, an
empty language) and, unless ``ambiguous``, the LALR(1) conflict check. It does
not build the combined lexer automaton, the LR tables of the normal form or any
mask automaton, and needs no vocabulary; so a grammar it passes can still fail
later on the combined lexer's size (``MAX_DFA_STATES``) or a resource limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import GrammarError

__all__ = ["validate", "Problem", "ValidationReport"]


@dataclass(frozen=True)
class Problem:
    """One reason the grammar cannot be compiled.

    ``kind``: ``"syntax"`` (Lark front end), ``"unsupported_regex"``,
    ``"empty_match"``, ``"matches_nothing"``, ``"invalid_regex"``, ``"too_large"``
    (a terminal), ``"cycle"``, ``"empty_language"``, ``"conflict"`` (LALR(1), with
    ``ambiguous=False``), ``"grammar"`` (anything else). ``name`` is the rule or
    terminal concerned; ``line``/``column`` where Lark reports them.
    """

    kind: str
    message: str
    name: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class ValidationReport:
    """The problems found (empty: nothing known stops the grammar). True when ok."""

    def __init__(self, problems):
        self.problems = tuple(problems)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok

    def __iter__(self):
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def __repr__(self) -> str:
        if self.ok:
            return "<ValidationReport ok>"
        return "<ValidationReport " + "; ".join(str(p) for p in self.problems) + ">"

    def raise_for_problems(self) -> None:
        """Raise :class:`GrammarError` listing every problem (nothing when ok)."""
        if self.problems:
            first = self.problems[0]
            raise GrammarError("; ".join(str(p) for p in self.problems), name=first.name)


def _terminal_kind(msg: str) -> str:
    if "unsupported regex feature" in msg:
        return "unsupported_regex"
    if "matches the empty string" in msg:
        return "empty_match"
    if "matches no string" in msg:
        return "matches_nothing"
    if "too large" in msg or "nested too deeply" in msg:
        return "too_large"
    return "invalid_regex"


def _problem(kind: str, e: GrammarError) -> Problem:
    return Problem(kind, str(e), getattr(e, "name", None), getattr(e, "line", None),
                   getattr(e, "column", None))


def validate(grammar, ambiguous: bool = False) -> ValidationReport:
    """Check ``grammar`` (Lark text or :class:`stackmask.Grammar`) without compiling it.

    Returns a :class:`ValidationReport` (``report.ok``, ``report.problems``,
    ``report.raise_for_problems()``); never raises for a bad grammar (a ``grammar`` of
    another type is a ``TypeError``)."""
    from .grammar import Grammar
    from .glr.lalr import check_deterministic
    from .glr.normal_form import normalize
    from .lexer.terminal_dfa import compile_terminal

    if isinstance(grammar, str):
        try:
            g = Grammar.from_lark(grammar)
        except GrammarError as e:
            return ValidationReport([_problem("syntax", e)])
        except RecursionError:
            return ValidationReport([Problem("syntax", "grammar text nested too deeply")])
    elif isinstance(grammar, Grammar):
        g = grammar
    else:
        raise TypeError(f"grammar must be Lark text or stackmask.Grammar, not {type(grammar).__name__}")

    problems: list[Problem] = []
    for t in g.terminals:
        try:
            compile_terminal(t.regex, t.name)
        except GrammarError as e:
            problems.append(_problem(_terminal_kind(str(e)), e))
    try:
        normalize(g)
    except GrammarError as e:
        msg = str(e)
        kind = ("cycle" if "cycle" in msg else
                "empty_language" if "derives no sentence" in msg or "only derives the empty" in msg
                else "grammar")
        problems.append(_problem(kind, e))
    except RecursionError:
        problems.append(Problem("grammar", "grammar nested too deeply to normalize"))
    if not ambiguous:
        try:
            check_deterministic(g)
        except GrammarError as e:
            problems.append(_problem("conflict", e))
    return ValidationReport(problems)
