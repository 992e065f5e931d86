"""The converter: one JSON Schema document to grammar rules (see the package docs)."""

from __future__ import annotations

import difflib
from collections import deque

from ...errors import GrammarError
from ...progress import Heartbeat
from ...grammar import Rule, TerminalDef
from .. import ecma_regex as R
from ..ecma_regex import ANYSTAR, PatternError, alt, lit
from .arrays import ArraysMixin
from .combinators import CombinatorsMixin
from .complements import ComplementsMixin
from .common import (
    ALL_TYPES, KNOWN_KEYWORDS, Lang, Problem, esc_ptr, is_int_value, json_eq, num, uniq,
    log)
from .emit import EmitMixin
from .merge import MergeMixin
from .numbers import NUMBER, NumbersMixin, number_literal
from .objects import ObjectsMixin
from .refs import RefsMixin
from .strings import StringsMixin
from .unevaluated import UnevaluatedMixin


class Converter(EmitMixin, RefsMixin, CombinatorsMixin, ComplementsMixin, MergeMixin, ObjectsMixin,
                 ArraysMixin, StringsMixin, NumbersMixin, UnevaluatedMixin):
    """Schema -> grammar, one document: the languages of subschemas, keyword checks,
    enum filtering; the concerns live in the mixins."""

    def __init__(self, root, opts):
        self.root = root
        self.opts = opts
        self.strict = opts["strict"]
        self.problems: list[tuple[str, str, str]] = []
        self._problem_keys: set = set()
        self.annotations: list[str] = []
        self.policy_notes: list[str] = []     # policies applied (uniqueItems not enforced)
        self.raw_spelled: set = set()          # string languages spelled raw (beyond ASCII, and `/`)
        self.keywords_checked: set = set()
        self.terms: dict[str, str] = {}          # regex -> name
        self.term_defs: list[TerminalDef] = []
        self.rules: list[Rule] = []
        self.queue: deque = deque()
        self.sym_cache: dict = {}
        self.lang_cache: dict = {}
        self.in_progress: set = set()
        self.alt_cache: dict = {}
        self.obj_cache: dict = {}
        self.arr_cache: dict = {}
        self.lit_cache: dict = {}
        self.counter: dict[str, int] = {}
        self.base_of: dict[int, str] = {}
        self.canon_memo: dict[int, str] = {}
        self.obj_source: dict = {}
        self.key_terms: dict[str, str] = {}      # declared property name -> key terminal
        self.key_names: set[str] = set()          # every key terminal (lexer modes)
        self.pending_extras: list = []
        self.beat = Heartbeat()                   # progress lines of a long conversion
        self.subschemas = 0                       # languages computed (progress lines)
        self.draft = opts["draft"] or self.detect_draft(root)
        self.root_base = ""
        self.index(root, "", True)
        ws = opts["whitespace"]
        n = opts["max_whitespace"]
        #: the whitespace between two lexemes, an ignored terminal read in every lexer mode
        #: (the parser never sees it): ``(regex, gap)``, None for the compact policy. Bounded:
        #: at most one line break, then at most ``max_whitespace`` spaces/tabs, read at most
        #: once between two lexemes (a gap, ``Grammar.gaps``); flexible: any run (RFC 8259)
        self.blank = {"compact": None,
                      "bounded": (r"\r?\n[ \t]{0,%d}|[ \t]{1,%d}" % (n, n) if n > 0 else r"\r?\n", True),
                      "flexible": (r"[ \t\n\r]+", False)}[ws]
        # between a property name and its colon (one key terminal): what the policy allows
        self.ws_pre_colon = {"compact": "", "bounded": " ?", "flexible": r"[ \t\n\r]*"}[ws]
        self.empty_pairs: dict[str, str] = {}     # "{}"/"[]" -> its two brackets' symbol

    # -- bookkeeping ---------------------------------------------------------
    def progress(self, ptr: str) -> None:
        """Log where a long conversion is (INFO on the ``stackmask`` logger, as
        :class:`~stackmask.progress.Heartbeat` times it)."""
        took = self.beat.due()
        if took is not None:
            log.info("stackmask: converting the JSON Schema (%.0f s, %d subschemas so far, "
                     "at %s)", took, self.subschemas, ptr)

    def problem(self, keyword: str, ptr: str, why: str):
        key = (keyword, ptr)
        if key not in self._problem_keys:
            self._problem_keys.add(key)
            self.problems.append((keyword, ptr or "#", why))

    def check_keywords(self, node, ptr: str):
        """Report the unknown keywords of a schema object of the document (once each):
        logged with a close match, an error with ``unknown_keywords="error"``."""
        if id(node) in self.keywords_checked or id(node) not in self.base_of:
            return
        self.keywords_checked.add(id(node))
        mode = self.opts["unknown_keywords"]
        for k in node:
            if not isinstance(k, str) or k in KNOWN_KEYWORDS or k.startswith("x-") or mode == "ignore":
                continue
            close = difflib.get_close_matches(k, KNOWN_KEYWORDS, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = (ptr or "#") + "/" + esc_ptr(k)
            if mode == "error":
                err = GrammarError(f"unknown JSON Schema keyword {k!r} at {where}{hint}; pass "
                                   "unknown_keywords='warn' or 'ignore' to ignore it", name=k)
                err.keyword, err.pointer = k, where
                raise err
            note = f"unknown keyword {k!r} at {where} ignored{hint}"
            self.annotations.append(note)
            log.warning("JSON Schema: %s", note)

    def unique_items_not_enforced(self, ptr: str):
        """``uniqueItems`` over an infinite item domain: not context-free. Not enforced with
        a warning (``unique_items="warn"``, the documented policy), else a keyword that
        cannot be enforced."""
        why = "uniqueness of array items over an infinite (or large) item domain is not a " \
              "context-free constraint"
        if self.opts["unique_items"] == "error":
            self.problem("uniqueItems", ptr, why)
            return
        note = f"uniqueItems at {ptr}: not enforced ({why}; unique_items='error' refuses it)"
        if note not in self.policy_notes:
            self.policy_notes.append(note)
            log.warning("JSON Schema: %s", note)

    # -- languages --------------------------------------------------------------------
    def any_lang(self) -> Lang:
        return Lang(True, True, True, self.string_cap(ANYSTAR), self.number_cap(NUMBER),
                    (self.object_symbol({}, "", "#"),), (self.array_symbol({}, "", "#"),))

    def lang(self, node, base, ptr) -> Lang:
        if node is True or node == {}:
            return self.any_lang()
        if node is False:
            return Lang()
        if not isinstance(node, dict):
            self.problem("schema", ptr, f"a schema must be an object or a boolean, not {type(node).__name__}")
            return self.any_lang()
        self.check_keywords(node, ptr)
        self.subschemas += 1
        self.progress(ptr)
        k = self.key(node, base)
        got = self.lang_cache.get(k)
        if got is not None:
            return got
        if k in self.in_progress:
            # recursion through combinators/references: refer to the nonterminal
            return Lang(others=(self.symbol(node, base, ptr),))
        self.in_progress.add(k)
        try:
            out = self._lang(node, base, ptr)
        finally:
            self.in_progress.discard(k)
        self.lang_cache[k] = out
        return out

    def _lang(self, node, base, ptr) -> Lang:
        try:
            node2, base2, ptr2 = self.deref(node, base, ptr)
        except Problem as e:
            self.problem("$ref", ptr, str(e))
            return self.any_lang()
        if node2 is not node:
            return self.lang(node2, base2, ptr2)
        d = node
        d2 = self.without_unevaluated(d, base, ptr)
        if d2 is not d:
            return self.lang(d2, base, ptr)
        if "if" in d:
            x = self.expand_if(d, base)
            if x is not None:
                return self.lang(x, base, ptr)
        if "allOf" in d:
            merged = self.merge_all(d, base, ptr)
            if merged is None:
                return Lang()
            if isinstance(merged, dict) and "allOf" in merged:
                self.problem("allOf", ptr, "could not merge")
                merged = {a: b for a, b in merged.items() if a != "allOf"}
            return self.lang(merged, base, ptr)
        if "not" in d or "nots__" in d:
            x = self.expand_not(d, base)
            if x is not None:
                return self.lang(x, base, ptr)
        if "anyOf" in d or "oneOf" in d or "__oneOf" in d:
            return self.combinators(d, base, ptr)
        return self.simple_lang(d, base, ptr)

    # -- simple (combinator-free) schemas -------------------------------------------------
    def types_of(self, d, ptr) -> set:
        t = d.get("type")
        if t is None:
            types = set(ALL_TYPES) | {"integer"}
        else:
            lst = t if isinstance(t, list) else [t]
            types = set()
            for x in lst:
                if x in ALL_TYPES or x == "integer":
                    types.add(x)
                elif x == "any":
                    types |= set(ALL_TYPES)
                else:
                    self.problem("type", ptr + "/type", f"unknown type {x!r}")
            if d.get("nullable") is True:
                types.add("null")
        if "number" in types:
            types.discard("integer")
        return types

    def simple_lang(self, d, base, ptr) -> Lang:
        for k in d:
            if k in ("allOf_conflicts__",):
                for kk in d[k]:
                    self.problem(kk, ptr, "conflicting values inside allOf cannot be merged")
        self.check_unsupported(d, ptr)
        types = self.types_of(d, ptr)
        if "enum" in d or "const" in d:
            lang = self.enum_lang(d, base, ptr, types)
        else:
            lang = Lang()
            if "null" in types:
                lang.null = True
            if "boolean" in types:
                lang.true = lang.false = True
            if "string" in types:
                lang.string = self.string_lang(d, ptr)
            if "number" in types or "integer" in types:
                lang.number = self.number_lang(d, ptr, integer="number" not in types)
            if "object" in types:
                lang.objects = self.object_alternatives(d, base, ptr)
            if "array" in types:
                sym = self.array_symbol(d, base, ptr)
                if sym:
                    lang.arrays = (sym,)
        nots = list(d.get("nots__", []))
        if "not" in d:
            nots.append(d["not"])
        if "enum" in d or "const" in d:
            nots = []          # enum_lang kept the values ``not`` allows (instance_ok)
        for n in nots:
            lang = self.apply_not(lang, n, base, ptr + "/not")
        return lang

    def check_unsupported(self, d, ptr):
        for k in ("if", "then", "else",
                  "unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains"):
            if k in d:
                if k in ("then", "else"):
                    continue            # no effect without ``if``; with it, ``if`` is reported
                if k in ("minContains", "maxContains", "contains"):
                    continue            # contains: see _build_contains; min/max without it: no effect
                if k == "unevaluatedProperties" and d[k] is True or k == "unevaluatedItems" and d[k] is True:
                    continue
                self.problem(k, f"{ptr}/{k}", "not supported by the grammar converter")

    def value_type_ok(self, v, types) -> bool:
        if v is None:
            return "null" in types
        if isinstance(v, bool):
            return "boolean" in types
        if isinstance(v, (int, float)):
            return "number" in types or ("integer" in types and is_int_value(v))
        if isinstance(v, str):
            return "string" in types
        if isinstance(v, list):
            return "array" in types
        return "object" in types

    # -- enum / const ----------------------------------------------------------------
    def enum_lang(self, d, base, ptr, types) -> Lang:
        if "enum" in d:
            vals = d["enum"]
            if not isinstance(vals, list):
                self.problem("enum", ptr + "/enum", "must be an array")
                vals = []
        else:
            vals = [d["const"]]
        if "enum" in d and "const" in d:
            vals = [v for v in vals if json_eq(v, d["const"])]
        lang = Lang()
        strs, nums = [], []
        rest = {k: v for k, v in d.items() if k not in ("enum", "const")}
        for v in vals:
            if not self.value_type_ok(v, types):
                continue
            if not self.instance_ok(v, rest, base, ptr):
                continue
            if v is None:
                lang.null = True
            elif v is True:
                lang.true = True
            elif v is False:
                lang.false = True
            elif isinstance(v, str):
                strs.append(lit(v))
            elif isinstance(v, (int, float)):
                nums.append(number_literal(v))
            elif isinstance(v, list):
                lang.arrays += (self.literal_symbol(v),)
            elif isinstance(v, dict):
                lang.objects += (self.literal_symbol(v),)
        lang.string = alt(*strs)
        lang.number = alt(*nums)
        lang.objects = uniq(lang.objects)
        lang.arrays = uniq(lang.arrays)
        return lang

    def instance_ok(self, v, d, base, ptr) -> bool:
        """Does ``v`` satisfy the schema ``d``? Filters ``enum``/``const`` values by
        the rest of their schema: exact for the keywords the converter enforces; a
        keyword it reports (or ignores) is taken as satisfied."""
        return self.value_valid(v, d, base, 0)

    def value_valid(self, v, node, base, depth) -> bool:
        if node is True or node is None:
            return True
        if node is False:
            return False
        if not isinstance(node, dict) or depth > 100:
            return True
        try:
            node2, base2, _ = self.deref(node, base, "#")
        except Problem:
            return True
        if node2 is not node:
            return self.value_valid(v, node2, base2, depth + 1)
        node2 = self.without_unevaluated(node, base, "#", report=False)
        if node2 is not node:
            return self.value_valid(v, node2, base, depth + 1)
        d, dn = node, depth + 1

        def sub(x):
            return self.value_valid(v, x, self.base(x, base), dn) if not isinstance(x, tuple) \
                else self.value_valid(x[0], x[1], self.base(x[1], base), dn)

        for key in ("allOf", "nots__", "__oneOf"):
            if not isinstance(d.get(key, []), list):
                return True
        if not all(sub(x) for x in d.get("allOf", [])):
            return False
        if isinstance(d.get("anyOf"), list) and not any(sub(x) for x in d["anyOf"]):
            return False
        for group in ([d["oneOf"]] if isinstance(d.get("oneOf"), list) else []) + list(d.get("__oneOf", [])):
            if sum(1 for x in group if sub(x)) != 1:
                return False
        if any(sub(x) for x in ([d["not"]] if "not" in d else []) + list(d.get("nots__", []))):
            return False
        if "if" in d and not sub(d.get("then", True) if sub(d["if"]) else d.get("else", True)):
            return False
        if "type" in d and not self.value_type_ok(v, self.types_of(d, "#")):
            return False
        if "enum" in d and isinstance(d["enum"], list) and not any(json_eq(v, x) for x in d["enum"]):
            return False
        if "const" in d and not json_eq(v, d["const"]):
            return False
        if isinstance(v, str):
            if any(k in d for k in ("minLength", "maxLength", "pattern", "format", "patterns__", "formats__")):
                return R.fullmatch(self.string_lang(d, "#", quiet=True), v)
            return True
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            x = num(v)
            lo, lo_x, hi, hi_x = self.bounds(d)
            if lo is not None and (x < lo or (lo_x and x == lo)):
                return False
            if hi is not None and (x > hi or (hi_x and x == hi)):
                return False
            m = num(d.get("multipleOf"))
            if m is not None and m > 0 and (x % m) != 0:
                return False
            return True
        if isinstance(v, dict):
            if any(isinstance(k, str) and k not in v for k in (d.get("required") or [])):
                return False
            if set(v) & set(d.get("forbidden__", ())):
                return False
            for K, V, _ in d.get("extra__", ()):
                if not any(k not in K and sub((x, V)) for k, x in v.items()):
                    return False
            for kw in ("dependencies", "dependentRequired", "dependentSchemas"):
                for key, dep in (d.get(kw) if isinstance(d.get(kw), dict) else {}).items():
                    if key in v and (any(x not in v for x in dep) if isinstance(dep, list) else not sub(dep)):
                        return False
            n = len(v)
            if num(d.get("minProperties")) is not None and n < d["minProperties"]:
                return False
            if num(d.get("maxProperties")) is not None and n > d["maxProperties"]:
                return False
            props = d.get("properties") if isinstance(d.get("properties"), dict) else {}
            pats = d.get("patternProperties") if isinstance(d.get("patternProperties"), dict) else {}
            addl = d.get("additionalProperties", True)
            if self.opts["additional_properties"] is False and "additionalProperties" not in d:
                addl = False
            pnames = d.get("propertyNames", True)
            for k, x in v.items():
                if pnames is not True and not self.value_valid(k, pnames, self.base(pnames, base), dn):
                    return False
                matched = False
                if k in props:
                    matched = True
                    if not sub((x, props[k])):
                        return False
                for p, ps in pats.items():
                    try:
                        hit = R.fullmatch(R.parse_pattern(p), k)
                    except PatternError:
                        continue
                    if hit:
                        matched = True
                        if not sub((x, ps)):
                            return False
                if not matched and not sub((x, addl)):
                    return False
            return True
        if isinstance(v, list):
            if num(d.get("minItems")) is not None and len(v) < d["minItems"]:
                return False
            if num(d.get("maxItems")) is not None and len(v) > d["maxItems"]:
                return False
            prefix, rest = self.array_parts(d)
            for i, x in enumerate(v):
                if not sub((x, prefix[i] if i < len(prefix) else rest)):
                    return False
            if "contains" in d:
                n = sum(1 for x in v if sub((x, d["contains"])))
                lo_c = d.get("minContains", 1) if self.draft >= 2019 else 1
                hi_c = d.get("maxContains") if self.draft >= 2019 else None
                if (num(lo_c) is not None and n < lo_c) or (num(hi_c) is not None and n > hi_c):
                    return False
            if any(not any(sub((x, c)) for x in v) for c in d.get("contains__", ())):
                return False
            if d.get("uniqueItems") is True and any(json_eq(v[i], v[j]) for i in range(len(v))
                                                   for j in range(i)):
                return False
            return True
        return True
