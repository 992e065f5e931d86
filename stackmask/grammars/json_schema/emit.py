"""Grammar emission: terminals, rules, punctuation, the whitespace terminal, literal values, the
driver that builds every queued symbol and drops unproductive ones."""

from __future__ import annotations

import dataclasses

from ...errors import GrammarError
from ...grammar import Grammar, Rule, TerminalDef
from .. import ecma_regex as R
from ..ecma_regex import NONE, lit
from .common import Lang, canon, uniq
from .modes import split_keys, value_modes
from .numbers import number_literal


#: the most terminals a union of string languages is split into (:func:`_disjoint_tops`)
MAX_STRING_PARTS = 8


def _disjoint_tops(ast):
    """The members of the union ``ast`` as languages a terminal can read (those with a
    length or lookaheads at their top kept apart, the rest joined in one regex), where
    there are at most :data:`MAX_STRING_PARTS` and no two share a string; else None."""
    if ast[0] != "a":
        return None
    tops, plain = [], []
    for y in ast[1]:
        (tops if y[0] in ("L", "X") else plain).append(y)
    try:
        parts = [R.resolve_limits(y) for y in tops]
        if plain:
            parts.append(R.resolve_limits(R.alt(*plain)))
        if len(parts) > MAX_STRING_PARTS:
            return None
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                if not (_excluded(parts[i], parts[j]) or _excluded(parts[j], parts[i])
                        or R.is_disjoint(parts[i], parts[j])):
                    return None
    except R.TooComplex:
        return None
    return parts


def _excluded(p, q) -> bool:
    """Whether ``p`` shares no string with ``q`` by its form: a negative lookahead of ``p``
    is ``q``, or the body of ``q`` (which holds ``q``), or a union with one of those among
    its members (``oneOf``'s branches excluding each other, :meth:`one_of`)."""
    if p[0] != "X":
        return False
    within = {q} | ({q[1]} if q[0] in ("L", "X") else set())
    for pos, n in p[2]:
        if not pos and (n in within or (n[0] == "a" and any(m in within for m in n[1]))):
            return True
    return False


class EmitMixin:
    """Methods of the converter (:class:`..converter.Converter`) for emit."""

    def name(self, base: str) -> str:
        i = self.counter.get(base, 0)
        self.counter[base] = i + 1
        return f"{base}_{i}"

    def term(self, regex: str, base: str, source: str = "") -> str:
        t = self.terms.get(regex)
        if t is None:
            t = self.name(base)
            self.terms[regex] = t
            self.term_defs.append(TerminalDef(name=t, regex=regex, source=source))
        return t

    def rule(self, origin: str, expansion, source: str = ""):
        self.rules.append(Rule(origin=origin, expansion=tuple(expansion), source=source or origin))

    # -- driver ---------------------------------------------------------------------
    def run(self) -> Grammar:
        top = self.symbol(self.root, self.root_base, "#")
        start = "start"
        self.rule(start, [top])
        state = None
        extra_rules: list = []
        while True:
            while self.queue:
                job = self.queue.popleft()
                job[0](*job[1:])
            now = (len(self.key_terms), len(self.pending_extras))
            if now == state:
                break
            state = now
            extra_rules = self.finish_extras()     # regenerated until the name list is complete
        self.rules.extend(extra_rules)
        productive = self._productive()
        if start not in productive:
            if self.problems:
                return None      # reported as the keywords refused (they may be why)
            err = GrammarError("the JSON Schema accepts no JSON value (false, not: {}, contradictory "
                               "keywords...): there is no text to generate", name="schema")
            err.keyword, err.pointer = "schema", "#"
            raise err
        term_names = {t.name for t in self.term_defs}
        rules = [r for r in self.rules if r.origin in productive
                 and all(s in productive or s in term_names for s in r.expansion)]
        used_terms = {s for r in rules for s in r.expansion}
        terms = [t for t in self.term_defs if t.name in used_terms]
        modes = ()
        if self.opts["lexer_modes"]:
            terms2, rules2, keys2 = split_keys(terms, rules, start, self.key_names)
            modes = value_modes(terms2, rules2, start, keys2)
            if modes:
                terms, rules = terms2, rules2
        if self.blank is None:
            return Grammar.build(terms, rules, start, modes=modes)
        # the whitespace: an ignored terminal read in every mode (bounded: a gap)
        ws = self.name("WS")
        regex, gap = self.blank
        terms = list(terms) + [TerminalDef(name=ws, regex=regex, source="whitespace")]
        modes = tuple(dataclasses.replace(m, terminals=m.terminals + (ws,)) for m in modes)
        return Grammar.build(terms, rules, start, ignore=(ws,), modes=modes, gaps=(ws,) if gap else ())

    def _productive(self) -> set:
        """Nonterminals deriving some terminal string (the others, e.g. a
        required property whose schema is false, are removed with the rules
        using them)."""
        term_names = {t.name for t in self.term_defs}
        productive: set = set()
        changed = True
        while changed:
            changed = False
            for r in self.rules:
                if r.origin not in productive and all(s in term_names or s in productive for s in r.expansion):
                    productive.add(r.origin)
                    changed = True
        return productive

    # -- symbols ------------------------------------------------------------------
    def symbol(self, node, base, ptr) -> str:
        """Nonterminal deriving the JSON texts valid under ``node``."""
        k = self.key(node, base)
        s = self.sym_cache.get(k)
        if s is None:
            s = self.name("v")
            self.sym_cache[k] = s
            self.queue.append((self._build_symbol, s, node, base, ptr))
        return s

    def _build_symbol(self, nt, node, base, ptr):
        lang = self.lang(node, base, ptr)
        alts = self.lang_alternatives(lang, ptr, _string_source(node, ptr))
        if not alts:
            return      # no rule: removed later as empty
        for a in alts:
            self.rule(nt, [a], ptr)

    def lang_alternatives(self, lang: Lang, ptr, source: str | None = None) -> list:
        """The grammar symbols of a language's parts; ``source`` names the string
        terminals' origin (the pointer and the string keywords there: what a lexer-size
        refusal names)."""
        alts = []
        if lang.null:
            alts.append(self.term("null", "NULL"))
        if lang.true:
            alts.append(self.term("true", "TRUE"))
        if lang.false:
            alts.append(self.term("false", "FALSE"))
        if lang.string != NONE:
            alts.extend(self.string_term(x, source or ptr)
                        for x in self.spelled_strings(lang.string, ptr))
        if lang.number != NONE:
            alts.append(self.number_term(lang.number))
        alts.extend(lang.objects)
        alts.extend(lang.arrays)
        alts.extend(lang.others)
        return uniq(tuple(alts))

    def spelled_strings(self, ast, ptr) -> list:
        """String languages the lexer can read, one terminal each, whose union is ``ast``: a
        length beside a pattern (``R.limited``) and the lookaheads of a pattern
        (``R.looking``) stay lookaheads only at the top of a terminal; below it (a union of
        string languages) they are written out as a regex; too large for that, the union's
        members are terminals of their own where no two of them share a string (then no
        text is read two ways); else they are dropped with a reported problem."""
        try:
            return [R.resolve_limits(ast)]
        except R.TooComplex:
            pass
        parts = _disjoint_tops(ast)
        if parts is not None:
            return parts
        if R.has_node(ast, ("L",)):
            self.problem("maxLength", ptr, "a length beside a pattern in a union of string "
                         "languages cannot be enforced exactly (the regex is too large)")
        if R.has_node(ast, ("X",)):
            self.problem("pattern", ptr, "a pattern's lookaheads in a union of string "
                         "languages cannot be enforced exactly (the regex is too large)")
        # the patterns alone, without their lengths and lookaheads
        return [R.map_limits(ast, lambda y, lo, hi: y, lambda y, looks: y)]

    def string_regex(self, ast, escape_beyond_ascii: bool | None = None) -> str:
        """The terminal regex of a string language: its JSON spellings between quotes
        (characters beyond ASCII and ``/`` raw only for the languages in ``raw_spelled``:
        :meth:`lexable`)."""
        if escape_beyond_ascii is None:
            escape_beyond_ascii = ast not in self.raw_spelled
        return '"(?:' + R.to_json_string(ast, escape_beyond_ascii) + ')"'

    def string_term(self, ast, ptr: str = "") -> str:
        return self.term(self.string_regex(ast), "STR", ptr)

    def number_term(self, ast) -> str:
        return self.term("(?:" + R.to_python(ast) + ")", "NUM")

    def key_term(self, ast) -> str:
        """Key symbol of a key language: the key and the colon, with the whitespace the
        policy allows between them (the whitespace after the colon is the grammar's
        ignored whitespace terminal, as everywhere else)."""
        t = self.term('"(?:' + R.to_json_string(ast) + ')"' + self.colon(), "KEY")
        self.key_names.add(t)
        return t

    def colon(self) -> str:
        return self.ws_pre_colon + ":"

    def punct(self, which: str) -> str:
        """Symbol of a punctuation. Whitespace is never part of one: every run between two
        lexemes is the grammar's ignored whitespace terminal (bounded policy: a gap,
        ``Grammar.gaps``, read once per gap), which the parser never reads, so a token with
        blanks and one without reach the mask automaton alike; an empty object or array
        is then its two brackets (whitespace may come between them)."""
        if which in ("{}", "[]") and self.blank is not None:
            nt = self.empty_pairs.get(which)
            if nt is None:
                opening, closing = which
                nt = self.empty_pairs[which] = self.name("empty_obj" if opening == "{" else "empty_arr")
                self.rule(nt, [self.punct(opening), self.punct(closing)], "whitespace")
            return nt
        rx = {"{": r"\{", "}": r"\}", "[": r"\[", "]": r"\]", ",": ",", "{}": r"\{\}",
              "[]": r"\[\]"}[which]
        return self.punct_term(which, rx)

    def punct_term(self, which: str, rx: str) -> str:
        return self.term(rx, {"{": "LBRACE", "}": "RBRACE", "[": "LBRACK", "]": "RBRACK", ",": "COMMA",
                              "{}": "EMPTY_OBJ", "[]": "EMPTY_ARR"}[which])

    def literal_symbol(self, v) -> str:
        key = canon(v)
        s = self.lit_cache.get(key)
        if s is not None:
            return s
        s = self.name("lit")
        self.lit_cache[key] = s
        self.queue.append((self._build_literal, s, v))
        return s

    def literal_value_symbol(self, v) -> str:
        if v is None:
            return self.term("null", "NULL")
        if v is True:
            return self.term("true", "TRUE")
        if v is False:
            return self.term("false", "FALSE")
        if isinstance(v, str):
            return self.string_term(lit(v))
        if isinstance(v, (int, float)):
            return self.number_term(number_literal(v))
        return self.literal_symbol(v)

    def _build_literal(self, nt, v):
        if not v:
            self.rule(nt, [self.punct("[]" if isinstance(v, list) else "{}")], "const")
            return
        if isinstance(v, list):
            exp = [self.punct("[")]
            for i, x in enumerate(v):
                if i:
                    exp.append(self.punct(","))
                exp.append(self.literal_value_symbol(x))
            exp.append(self.punct("]"))
        else:
            exp = [self.punct("{")]
            for i, (k, x) in enumerate(v.items()):
                if i:
                    exp.append(self.punct(","))
                exp.append(self.declared_key(k))     # the same terminal as the key declared elsewhere
                exp.append(self.literal_value_symbol(x))
            exp.append(self.punct("}"))
        self.rule(nt, exp, "const")


#: the keywords that shape a string terminal, named where the lexer's size limit refuses it
STRING_KEYWORDS = ("pattern", "format", "minLength", "maxLength", "enum", "const")


def _string_source(node, ptr: str) -> str:
    """``ptr`` and the string keywords of the schema ``node`` there: ``"#/properties/a
    (pattern, maxLength)"``."""
    if not isinstance(node, dict):
        return ptr
    kws = [k for k in STRING_KEYWORDS if k in node]
    return f"{ptr} ({', '.join(kws)})" if kws else ptr
