"""String languages: ``pattern``, ``format``, ``minLength``/``maxLength`` and the lexer's
size limit on a string terminal."""

from __future__ import annotations

import math

from ...errors import GrammarError
from .. import ecma_regex as R
from ..ecma_regex import ANY, ANYSTAR, NONE, PatternError, TooComplex, rep
from ...lexer.counted import DEFAULT_BAND, MIN_BAND
from ...lexer.dfa import MAX_DFA_STATES
from ...lexer.terminal_dfa import compile_terminal
from .common import log, num
from .formats import FORMATS, UNSUPPORTED_FORMATS, format_ast


class StringsMixin:
    """Methods of the converter (:class:`..converter.Converter`) for strings."""

    def unchecked_format(self, f: str, ptr: str):
        """A format the converter cannot check: an annotation (logged), or an error
        with ``unknown_formats="error"``."""
        why = "not a regular language" if f in UNSUPPORTED_FORMATS else "unknown format"
        if self.opts["unknown_formats"] == "error":
            err = GrammarError(f"format {f!r} at {ptr} cannot be checked ({why}); "
                               "pass unknown_formats='ignore' to treat it as an annotation", name="format")
            err.keyword, err.pointer = "format", ptr
            raise err
        note = f"format {f!r} at {ptr} is not checked ({why}): an annotation"
        if note not in self.annotations:
            self.annotations.append(note)
            log.info("JSON Schema: %s", note)

    def string_cap(self, ast):
        cap = self.opts["max_string_length"]
        if cap is None:
            return ast
        try:
            return R.limit_length(ast, 0, cap)
        except TooComplex:
            self.problem("max_string_length", "#", "cannot combine the string cap with this pattern")
            return ast

    # -- strings ------------------------------------------------------------------------
    def string_lang(self, d, ptr, quiet: bool = False):
        report = (lambda *a: None) if quiet else self.problem
        parts = []
        pats = list(d.get("patterns__", []))
        if "pattern" in d:
            pats.insert(0, d["pattern"])
        for p in pats:
            try:
                parts.append(R.parse_pattern(p))
            except PatternError as e:
                report("pattern", ptr + "/pattern", f"unsupported regex: {e}")
        fmts = list(d.get("formats__", []))
        if "format" in d:
            fmts.insert(0, d["format"])
        for f in fmts:
            if not isinstance(f, str):
                continue
            if f in FORMATS:
                parts.append(format_ast(f))
            elif not quiet:
                self.unchecked_format(f, ptr + "/format")
        lo = d.get("minLength", 0)
        hi = d.get("maxLength")
        cap = self.opts["max_string_length"]
        if cap is not None:
            hi = cap if hi is None else min(hi, cap)
        if not isinstance(lo, int) or isinstance(lo, bool):
            lo = math.ceil(lo) if num(lo) is not None else 0
        if hi is not None and (not isinstance(hi, int) or isinstance(hi, bool)):
            hi = math.floor(hi) if num(hi) is not None else None
        if not parts:
            # a length alone always fits the lexer (its chain has at most ~130 positions
            # at the least band, ~25 states each: tests/test_json_schema_lengths.py), so
            # no automaton is built to check it (a third of a `maxLength: 300` schema's
            # conversion)
            return rep(ANY, lo, hi)
        # several: their intersection, or where that is too large as a regex, the first with
        # the others as lookaheads (the lexer meets the automata)
        ast = R.meet(*parts) if len(parts) > 1 else parts[0]
        unlimited = ast
        if lo > 0 or hi is not None:
            # a regex where it is small, else the pattern with a lookahead on the length
            # (the lexer intersects the two automata; R.limited)
            ast = R.limited(ast, lo, hi)
            if ast[0] == "L":
                # a repetition whose bound the length implies counts no more: one count
                # fewer for the lexer to pair with the length's
                dropped = R.drop_implied_bounds(unlimited, hi)
                if dropped != unlimited:
                    ast = R.limited(dropped, lo, hi)
        if not quiet:
            ast = self.lexable(ast, unlimited, lo, hi, ptr)
        return ast

    def lexable(self, ast, unlimited, lo, hi, ptr):
        """Make sure the string terminal fits the lexer's size limits
        (MAX_NFA_STATES, MAX_DFA_STATES); else spell its characters beyond ASCII raw
        only (a policy, when that fits: :meth:`spell_raw`); else report and drop the
        length limits (then the pattern)."""
        if ast == NONE:
            return NONE
        self.progress(ptr)             # compiling a large string terminal can take seconds
        # the least band (no vocabulary's is less): a repetition counted with a
        # vocabulary's band is counted here too, with fewer copies
        dfa = _fits(self.string_regex(ast), MIN_BAND)
        if dfa is not None:
            # counted at the least band: a vocabulary with longer tokens counts more
            # positions (at most about 4 times as many states at the default band, 256);
            # where the escape spellings then pass the limit and the raw ones do not, the
            # raw ones are taken
            if dfa.counters and 4 * dfa.n_states > MAX_DFA_STATES \
                    and _fits(self.string_regex(ast), DEFAULT_BAND) is None:
                self.spell_raw(ast, ptr, DEFAULT_BAND)      # else as it fits at the least band
            return ast
        try:
            if R.is_empty(ast):
                return NONE           # no string: this part of the schema is impossible
        except TooComplex:
            pass
        if self.spell_raw(ast, ptr, DEFAULT_BAND) or self.spell_raw(ast, ptr, MIN_BAND):
            return ast
        if ast is not unlimited and ast[0] != "L" and unlimited[0] != "X":
            # the length written into the pattern's regex can make a repetition the lexer
            # cannot count (``.{1,2017}/\.well-known/openid-configuration``: the suffix reads
            # what the repetition reads); kept apart, the length is a count of its own
            blo, bhi = R.unimplied_bounds(unlimited, lo, hi)
            return self.lexable(("L", R.drop_implied_bounds(unlimited, hi), blo, bhi), unlimited,
                                lo, hi, ptr)
        if ast is not unlimited:
            kw = "maxLength" if hi is not None else "minLength"
            self.problem(kw, f"{ptr}/{kw}", f"the string terminal with length {lo}..{hi} exceeds the "
                         "lexer's automaton size limit")
            if _fits(self.string_regex(unlimited), MIN_BAND) is not None:
                return unlimited
        self.problem("pattern", ptr, "the string terminal exceeds the lexer's automaton size limit")
        return ANYSTAR

    def spell_raw(self, ast, ptr: str, band: int) -> bool:
        """Whether the string language fits the lexer at ``band`` with its characters
        beyond ASCII and ``/`` spelled raw only (as ``json.dumps(..., ensure_ascii=False)``
        writes them), where its escape spellings do not fit (a wide Unicode class such as
        ``[\\p{L}\\p{N}]`` beside a ``maxLength`` of 128: each character is hundreds of
        lexer states in its ``\\uXXXX`` spellings; an ARN pattern whose counted segments
        read ``/`` beside a ``maxLength`` of 2048: ``\\/`` and ``\\u002f`` are five more
        states at each count of both). Then it is spelled so (:meth:`string_regex`), with a
        policy note. The values a model can write are unchanged; only the JSON text of
        such a value with those characters escaped is rejected."""
        if ast in self.raw_spelled:
            return True
        raw = self.string_regex(ast, escape_beyond_ascii=False)
        if raw == self.string_regex(ast, escape_beyond_ascii=True):
            return False              # nothing the policy would spell otherwise
        if _fits(raw, band) is None:
            return False
        self.raw_spelled.add(ast)
        note = (f"string at {ptr or '#'}: characters beyond ASCII and '/' are accepted raw only, "
                "not escaped (their escape spellings exceed the lexer's automaton size limit)")
        if note not in self.policy_notes:
            self.policy_notes.append(note)
            log.info("JSON Schema: %s", note)
        return True


def _fits(regex: str, band: int):
    """The terminal's DFA at ``band`` (:func:`~stackmask.lexer.terminal_dfa.compile_terminal`),
    or None where it passes the lexer's size limits."""
    try:
        return compile_terminal(regex, band=band)
    except GrammarError:
        return None
