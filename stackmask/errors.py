"""Exceptions raised by stackmask. Every documented failure is one of these."""

from __future__ import annotations


class StackmaskError(Exception):
    """Base class of all stackmask errors."""


class GrammarError(StackmaskError):
    """The grammar cannot be used: syntax error, unsupported regex feature,
    LALR(1) conflict with ``ambiguous=False``, reduction cycle, ...

    ``name`` is the rule or terminal concerned (if any); ``line``/``column``
    locate the problem in the grammar text when Lark reports a position.
    """

    def __init__(self, message: str, *, name: str | None = None,
                 line: int | None = None, column: int | None = None):
        where = ""
        if line is not None:
            where = f" (line {line}" + (f", column {column}" if column is not None else "") + ")"
        super().__init__(message + where)
        self.name = name
        self.line = line
        self.column = column


class TokenRejected(StackmaskError):
    """A committed token cannot continue the text. The state passed to
    ``commit`` is unchanged and still usable.

    ``offset`` is the byte offset inside the token's bytes at which every
    parse died (0-based; ``len(token_bytes)`` when the bytes were all read but
    the result was not viable).
    """

    def __init__(self, token_id: int, token_bytes: bytes, offset: int, reason: str = ""):
        msg = f"token {token_id} ({token_bytes!r}) rejected at byte {offset}"
        if reason:
            msg += f": {reason}"
        super().__init__(msg)
        self.token_id = token_id
        self.token_bytes = token_bytes
        self.offset = offset


class LimitExceeded(StackmaskError):
    """A resource limit of :class:`stackmask.Limits` was reached.

    ``limit`` is the field name (e.g. ``"max_compile_memory_bytes"``), ``value``
    what was reached (at least ``maximum``) and ``maximum`` the configured
    bound. Raised by ``Constraint(...)`` (nothing is cached and no constraint
    is returned), by ``commit`` (the state passed in stays valid) or, for
    automaton states compiled on first use, by ``get_mask`` (the constraint
    stays usable for other states). Raise the limit with
    ``Constraint(..., limits=stackmask.Limits(<limit>=...))``; ``None`` removes it.
    """

    def __init__(self, limit: str, value, maximum, what: str, hint: str = ""):
        msg = (f"{what}: {limit}={maximum!r} exceeded (reached {value!r}); raise it with "
               f"Constraint(..., limits=stackmask.Limits({limit}=...)) or None for no limit")
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)
        self.limit = limit
        self.value = value
        self.maximum = maximum


class LexerTooLarge(GrammarError, LimitExceeded):
    """The lexer automaton, all lexer modes together, needs more states than
    ``Limits.max_lexer_states``: a :class:`GrammarError` (the grammar cannot be compiled
    under that limit; the message names the largest terminal automata) that is also a
    :class:`LimitExceeded` naming the limit (``limit == "max_lexer_states"``,
    ``maximum``; ``value`` is None: the build stops at the limit without counting on).
    """

    def __init__(self, message: str, maximum: int, name: str | None = None):
        StackmaskError.__init__(self, message)
        self.name, self.line, self.column = name, None, None
        self.limit, self.value, self.maximum = "max_lexer_states", None, maximum

    def __reduce__(self):           # pickled whole (a worker process reports it to its parent)
        return (type(self), (str(self), self.maximum, self.name))
