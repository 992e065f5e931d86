"""Grammar terminals (Python regexes over Unicode text) compiled to DFAs over
UTF-8 bytes.

Semantics (the rule every other component relies on)
----------------------------------------------------
* A terminal's regex is a Python ``re`` pattern for ``str`` (Unicode). It
  matches a byte string ``b`` iff ``b`` is valid UTF-8 and
  ``re.fullmatch(pattern, b.decode("utf-8"))`` succeeds — except for
  reluctant terminals, below. Invalid UTF-8 (overlong forms, encoded
  surrogates, bytes F5..FF, truncated sequences) never matches; a byte string
  ending inside a multi-byte character is only ever a *prefix*.
* The pattern is parsed by the standard library's parser (``re._parser``;
  ``sre_parse`` on Python 3.10, where atomic groups and possessive quantifiers
  are invalid syntax rather than unsupported: both are rejected), so
  syntax, flags (global ``(?i)``, local ``(?i:...)``/``(?-i:...)``, ``(?s)``,
  ``(?a)``, ``(?x)``) and the parser's own rewrites are those of ``re``. Every
  one-character construct (literal, ``.``, class, ``\\d \\w \\s \\D \\W \\S``,
  negated class, IGNORECASE folding — e.g. ``(?i)k`` also matches U+212A
  KELVIN SIGN) matches exactly the characters Python's ``re`` matches: the set
  of code points is computed by letting ``re`` itself scan every code point.
  The universe is U+0000..U+10FFFF minus the surrogates.
* Supported structure: concatenation, alternation, groups (capturing, named,
  non-capturing, with local flags), greedy ``? * + {m} {m,n} {m,}``. Bounded
  repetition is expanded; a terminal whose NFA would exceed
  :data:`MAX_NFA_STATES` (100,000) states, or whose DFA would exceed
  :data:`MAX_DFA_STATES` (100,000) states, is rejected (as is a combined lexer
  automaton beyond ``Limits.max_lexer_states``, 200,000 by default, all modes
  together).
* **Reluctant quantifiers** (``*? +? ?? {m,n}?``): a terminal containing any
  reluctant quantifier gets *shortest-match* semantics: its language is
  ``L' = { w in L : no proper prefix of w is in L }``, where ``L`` is the
  language with every quantifier read as greedy. (Implemented by removing all
  outgoing transitions of accepting states of the terminal's DFA.) This is what
  ``re.match`` does for the usual comment/string terminals such as
  ``".*?"``, ``/\\*(.|\\n)*?\\*/`` or ``"(?:[^"\\\\]|\\\\.)*?"``, and it is the
  rule here for every pattern, including ones where ``re`` would behave
  differently.
* Rejected with :class:`stackmask.errors.GrammarError` naming the terminal
  (``.name``) and the feature: backreferences, lookahead/lookbehind
  assertions, anchors and boundaries (``^ $ \\A \\Z \\b \\B``), conditional
  groups, atomic groups, possessive quantifiers; patterns ``re`` cannot
  compile; patterns that match the empty string; patterns that match nothing;
  patterns exceeding the size limit.

API
---
:class:`DFA` (``trans`` int32 ``(n_states, 256)``, -1 = dead, start state 0;
``accepts`` per state; trimmed), :func:`compile_terminal`,
:func:`compile_lexer` (combined automaton, ``accepts[s]`` = indices of the
terminals accepting there, minimized w.r.t. the accepts sets) and
:func:`terminal_dfas` (per-terminal DFAs, cached).
"""

from .combined import compile_lexer, compile_modal_lexer, terminal_dfas
from .dfa import DFA, MAX_DFA_STATES, MAX_NFA_STATES
from .terminal_dfa import compile_terminal

__all__ = ["DFA", "compile_terminal", "compile_lexer", "compile_modal_lexer", "terminal_dfas",
           "MAX_NFA_STATES", "MAX_DFA_STATES"]
