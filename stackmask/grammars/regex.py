"""Regex constraints: ``Grammar.from_regex(pattern)``.

The grammar's sentences are the texts ``s`` with ``re.fullmatch(pattern, s)``
(Python ``re`` syntax, ``str`` patterns; text is judged as UTF-8 bytes, so
invalid UTF-8 never matches). The grammar is one terminal::

    start: REGEX          # the pattern's non-empty matches
         |                # only when the pattern also matches "" (below)

Semantics, and how the lexer's rules are handled
------------------------------------------------
* **Full-match semantics, reluctant quantifiers included.** A lexer terminal
  with a reluctant quantifier (``*? +? ?? {m,n}?``) has *shortest-match*
  semantics in stackmask (see :mod:`stackmask.lexer`), but for a regex
  constraint ``re.fullmatch`` is the natural reading, and there reluctance
  does not change which texts match. So reluctant quantifiers are read as
  greedy ones: ``from_regex('".*?"')`` accepts ``"a"b"`` exactly like
  ``re.fullmatch``. ``shortest_match=True`` keeps the lexer's rule instead
  (the language becomes the matches none of whose proper prefixes match).
* **The empty text.** Lexer terminals may not match the empty string. When
  the pattern matches ``""`` the terminal is the pattern's *non-empty*
  matches (the parse tree is rewritten: ``x*`` -> ``x+``, ``xy`` with ``x``
  nullable -> ``x'y | y'``, ...) and ``start`` gets an empty alternative, so
  the language is exactly the full matches: EOS is allowed at the start. A
  pattern matching *only* ``""`` (``(?:)``, ``a{0}``) is a ``GrammarError``
  (stackmask needs a non-empty sentence); so is a nullable pattern under
  ``shortest_match=True`` (its only sentence would be ``""``).
* **Anchors at the edges** (``^``/``\\A`` at the start, ``$``/``\\Z`` at the
  end of the pattern or of its top-level alternatives) are no-ops under
  full-match semantics and are dropped. Anchors elsewhere, lookarounds,
  backreferences and the other constructs the lexer rejects raise
  ``GrammarError``.
* ``flags`` (``re.IGNORECASE``, ``re.DOTALL``, ``re.VERBOSE`` ...) apply as
  with ``re.compile(pattern, flags)``.

When a rewrite is needed (flags, edge anchors, reluctant quantifiers, a
nullable pattern) the terminal's regex is re-emitted from ``re``'s own parse
tree, with every one-character construct spelled out as the exact code-point
set the lexer computes for it (so no flag has to survive the rewrite);
otherwise the pattern text is used as given.
"""

from __future__ import annotations

import re

try:                                  # Python >= 3.11
    import re._constants as C
    import re._parser as sre_parse
except ImportError:                   # Python 3.10 (as Lark does)
    import sre_constants as C
    import sre_parse

from ..errors import GrammarError
from ..grammar import Grammar, Rule, TerminalDef
from ..lexer.regex import (ATOMIC_GROUP, POSSESSIVE_REPEAT, codepoint_set, combine_flags,
                           newer_syntax_hint, walk_parse_tree)

__all__ = ["regex_to_grammar"]

_CHAR_OPS = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.CATEGORY)
_BEGIN = (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
_END = (C.AT_END, C.AT_END_STRING)

# AST nodes (tuples): ("none",) empty language; ("set", intervals); ("seq", [nodes]);
# ("alt", [nodes]); ("rep", lo, hi or None, node, reluctant)
NONE = ("none",)
EPS = ("seq", [])


def regex_to_grammar(pattern: str, *, flags: int = 0, name: str = "REGEX",
                     shortest_match: bool = False) -> Grammar:
    """Grammar whose sentences are the full matches of ``pattern`` (see the
    module documentation for the exact rules)."""
    if not isinstance(pattern, str):
        raise GrammarError(f"regex pattern must be a str, not {type(pattern).__name__}", name=name)
    flags = int(flags)
    try:
        rx = re.compile(pattern, flags)
        parsed = sre_parse.parse(pattern, flags)
    except (re.error, ValueError, OverflowError, RecursionError, TypeError) as e:
        raise GrammarError(f"invalid regex {pattern!r}: {e}{newer_syntax_hint(pattern, e)}",
                           name=name) from None
    items = list(parsed)
    stripped = _strip_edges(items)
    has_reluctant = any(op is C.MIN_REPEAT for op, _ in walk_parse_tree(items))
    nullable = rx.fullmatch("") is not None
    if shortest_match and nullable:
        raise GrammarError(f"regex {pattern!r} matches the empty string: under shortest-match "
                           f"semantics the empty text would be its only sentence", name=name)
    rewrite = (flags != 0 or stripped is not items or nullable
               or (has_reluctant and not shortest_match))
    if not rewrite:
        regex = pattern
    else:
        ast = _to_ast(stripped, parsed.state.flags, name, keep_reluctant=shortest_match)
        if nullable:
            ast = _nonempty(ast)
            if ast == NONE:
                raise GrammarError(f"regex {pattern!r} matches only the empty string; stackmask "
                                   f"needs a language with a non-empty sentence", name=name)
        if ast == NONE:
            raise GrammarError(f"regex {pattern!r} matches no string at all", name=name)
        regex = _emit(ast)
    rules = [Rule("start", (name,), source="start")]
    if nullable:
        rules.append(Rule("start", (), source="start"))
    return Grammar.build([TerminalDef(name=name, regex=regex)], rules, "start")


# ---------------------------------------------------------------------------
# parse tree -> AST
# ---------------------------------------------------------------------------

def _strip_edges(items: list) -> list:
    """Drop anchors that are no-ops under full-match semantics: leading ^/\\A
    and trailing $/\\Z of the pattern, of its top-level alternatives and of a
    top-level group. Returns ``items`` itself when nothing changed."""
    out, changed = _strip(list(items))
    return out if changed else items


def _strip(out: list) -> tuple[list, bool]:
    changed = False
    while out and out[0][0] is C.AT and out[0][1] in _BEGIN:
        out.pop(0)
        changed = True
    while out and out[-1][0] is C.AT and out[-1][1] in _END:
        out.pop()
        changed = True
    if len(out) == 1:
        op, av = out[0]
        if op is C.BRANCH:
            res = [_strip(list(b)) for b in av[1]]
            if any(ch for _, ch in res):
                out = [(C.BRANCH, (av[0], [alt for alt, _ in res]))]
                changed = True
        elif op is C.SUBPATTERN:
            group, add, delete, sub = av
            inner, ch = _strip(list(sub))
            if ch:
                out = [(C.SUBPATTERN, (group, add, delete, inner))]
                changed = True
    return out, changed


_UNSUPPORTED = {op: what for op, what in (
    (C.AT, "anchors and word boundaries (other than ^/$ at the pattern's edges)"),
    (C.ASSERT, "lookahead/lookbehind assertions"),
    (C.ASSERT_NOT, "lookahead/lookbehind assertions"),
    (C.GROUPREF, "backreferences"),
    (C.GROUPREF_EXISTS, "conditional groups"),
    (ATOMIC_GROUP, "atomic groups"),
    (POSSESSIVE_REPEAT, "possessive quantifiers"),
) if op is not None}


def _to_ast(items, flags: int, name: str, keep_reluctant: bool):
    seq = []
    for op, av in items:
        if op in _CHAR_OPS:
            try:
                ivs = codepoint_set(op, av, flags)
            except ValueError as e:
                raise GrammarError(f"regex {name}: {e}", name=name) from None
            seq.append(("set", ivs) if ivs else NONE)
        elif op is C.SUBPATTERN:
            _group, add, delete, sub = av
            seq.append(_to_ast(sub, combine_flags(flags, add, delete), name, keep_reluctant))
        elif op is C.BRANCH:
            seq.append(_alt([_to_ast(b, flags, name, keep_reluctant) for b in av[1]]))
        elif op is C.MAX_REPEAT or op is C.MIN_REPEAT:
            lo, hi, sub = av
            hi = None if (hi is C.MAXREPEAT or hi == C.MAXREPEAT) else int(hi)
            seq.append(_rep(int(lo), hi, _to_ast(sub, flags, name, keep_reluctant),
                            keep_reluctant and op is C.MIN_REPEAT))
        else:
            what = _UNSUPPORTED.get(op, f"regex construct {op}")
            raise GrammarError(f"regex {name} uses an unsupported feature: {what}", name=name)
    return _seq(seq)


def _seq(items):
    flat = []
    for x in items:
        if x == NONE:
            return NONE
        if x[0] == "seq":
            flat.extend(x[1])
        else:
            flat.append(x)
    return flat[0] if len(flat) == 1 else ("seq", flat)


def _alt(items):
    alts = [x for x in items if x != NONE]
    if not alts:
        return NONE
    return alts[0] if len(alts) == 1 else ("alt", alts)


def _rep(lo: int, hi, x, reluctant: bool = False):
    if hi == 0 or x == EPS:
        return EPS
    if x == NONE:
        return EPS if lo == 0 else NONE
    if lo == 1 and hi == 1:
        return x
    return ("rep", lo, hi, x, reluctant)


def _nullable(x) -> bool:
    k = x[0]
    if k == "none" or k == "set":
        return False
    if k == "seq":
        return all(_nullable(y) for y in x[1])
    if k == "alt":
        return any(_nullable(y) for y in x[1])
    return x[1] == 0 or _nullable(x[3])


def _nonempty(x):
    """AST of L(x) minus the empty string."""
    k = x[0]
    if k == "none" or k == "set":
        return x
    if k == "alt":
        return _alt([_nonempty(y) for y in x[1]])
    if k == "seq":
        items = x[1]
        if not items:
            return NONE
        first, rest = items[0], _seq(items[1:])
        if not _nullable(first):
            return x
        return _alt([_seq([_nonempty(first), rest]), _nonempty(rest)])
    _, lo, hi, sub, reluctant = x
    if not _nullable(sub):
        return x if lo >= 1 else _rep(1, hi, sub, reluctant)
    head = _nonempty(sub)
    if head == NONE:
        return NONE
    return _seq([head, _rep(0, None if hi is None else hi - 1, sub, reluctant)])


# ---------------------------------------------------------------------------
# AST -> flag-free regex text
# ---------------------------------------------------------------------------

def _cp(c: int) -> str:
    return "\\U%08x" % c


def _emit(x) -> str:
    k = x[0]
    if k == "set":
        ivs = x[1]
        if len(ivs) == 1 and ivs[0][0] == ivs[0][1]:
            return _cp(ivs[0][0])
        return "[" + "".join(_cp(a) if a == b else f"{_cp(a)}-{_cp(b)}" for a, b in ivs) + "]"
    if k == "seq":
        return "".join(_emit(y) if y[0] in ("set", "rep") else f"(?:{_emit(y)})" for y in x[1])
    if k == "alt":
        return "|".join(_emit(y) for y in x[1])
    if k == "rep":
        _, lo, hi, sub, reluctant = x
        q = f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}"
        body = _emit(sub) if sub[0] == "set" else f"(?:{_emit(sub)})"
        return f"{body}{q}{'?' if reluctant else ''}"
    raise AssertionError(f"cannot emit {k}")  # NONE is handled by the callers
