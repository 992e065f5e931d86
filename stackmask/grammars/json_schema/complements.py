"""``not`` and ``if``/``then``/``else``: the complement of a schema written as a schema
(the union of its keywords' complements), and ``not`` applied to a value language."""

from __future__ import annotations

from .. import ecma_regex as R
from ..ecma_regex import NONE, TooComplex, alt, lit, seq
from .common import ANNOTATIONS, KNOWN_KEYWORDS, Lang, Problem, json_eq, num, uniq
from .numbers import INT_LITERALS, INT_ZEROS, PLAIN, value_spellings


#: keywords of strings and of numbers: ``not`` of them is applied exactly (:meth:`apply_not`)
STRING_KEYS = frozenset({"pattern", "format", "minLength", "maxLength", "patterns__", "formats__"})
NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
SCALAR_KEYS = STRING_KEYS | NUMBER_KEYS | {"type", "nullable"}
#: object, array and combinator keywords whose complement :meth:`complement` writes
OBJECT_KEYS = frozenset({"properties", "required", "additionalProperties", "minProperties", "maxProperties",
                         "forbidden__", "extra__"})
ARRAY_KEYS = frozenset({"items", "prefixItems", "additionalItems", "prefix__", "rest__", "minItems", "maxItems"})
COMBINATOR_KEYS = frozenset({"not", "nots__", "anyOf", "oneOf", "__oneOf"})


def _count(n) -> bool:
    """A count keyword's value the complements can use: a non-negative integer."""
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


class ComplementsMixin:
    """Methods of the converter (:class:`..converter.Converter`) for complements,
    ``not`` and ``if``/``then``/``else``."""

    # -- if / then / else ------------------------------------------------------------
    def expand_if(self, d, base, depth: int = 0):
        """``d`` with ``if``/``then``/``else`` as ``allOf: [rest, anyOf: [if ∧ then,
        ¬if ∧ else]]`` (exact: the branches are complementary), or None when the
        complement of ``if`` cannot be written (see :meth:`complement`)."""
        cond = d["if"]
        neg = self.complement(cond, base, depth)
        if neg is None:
            return None
        rest = {k: v for k, v in d.items() if k not in ("if", "then", "else")}
        then, other = d.get("then", True), d.get("else", True)
        return {"allOf": [rest, {"anyOf": [{"allOf": [cond, then]}, {"allOf": [neg, other]}]}]}

    def complement(self, s, base, depth: int = 0):
        """A schema accepting exactly the values ``s`` rejects, or None where it cannot
        be written. ``s`` (references followed, ``allOf`` merged, ``if`` expanded) is
        the conjunction of its keywords, so its complement is the union of theirs:
        the other types (``not: {type}``); the strings that violate its string
        keywords and the numbers that violate its number keywords (``not`` of those,
        see :meth:`apply_not`); the values outside ``enum``/``const`` (scalars); the
        objects that lack a required key or have a property in that property's
        complement; the arrays with too few or too many items or an item in its
        schema's complement (``contains`` of the ``not``); the ``not`` schemas
        themselves; for ``anyOf`` the values in every branch's complement, for
        ``oneOf`` those and the values in two branches. None for other keywords
        (``additionalProperties`` other than ``true``, ``patternProperties``,
        ``propertyNames``, ``uniqueItems``, ``contains``, ...)."""
        if s is True or s == {}:
            return False
        if s is False:
            return True
        if depth > 8:
            return None
        s = self.flat(s, base)
        if s is not None and "if" in s:
            x = self.expand_if(s, base, depth + 1)
            s = None if x is None else self.flat(x, base)
        if s is None or "if" in s:
            return None
        keys = self._effective_keys(s)
        if not keys:
            return False
        if keys <= {"type", "enum", "const"} and keys & {"enum", "const"} and self._scalar_values(s):
            return {"not": {k: s[k] for k in keys}}
        if keys <= SCALAR_KEYS:
            # one ``not`` for every scalar keyword (apply_not removes exactly those values)
            return {"not": {k: s[k] for k in keys}}
        if not keys <= SCALAR_KEYS | {"enum", "const"} | OBJECT_KEYS | ARRAY_KEYS | COMBINATOR_KEYS:
            return None
        parts: list = []
        if "type" in keys:
            parts.append({"not": {k: s[k] for k in ("type", "nullable") if k in s}})
        for group in (STRING_KEYS, NUMBER_KEYS):
            if keys & group:
                parts.append({"not": {k: s[k] for k in keys & group}})
        if keys & {"enum", "const"}:
            parts.append(self._complement_values(s, base, depth))
        for group, build in ((OBJECT_KEYS, self._complement_object), (ARRAY_KEYS, self._complement_array)):
            if keys & group:
                got = build(s, base, depth)
                if got is None:
                    return None
                parts += got
        parts += ([s["not"]] if "not" in s else []) + list(s.get("nots__", []))
        if "anyOf" in s:
            parts.append(self._complement_all(s["anyOf"], base, depth))
        for group in ([s["oneOf"]] if "oneOf" in s else []) + list(s.get("__oneOf", [])):
            # none of the branches, or two of them
            if not isinstance(group, list) or not group:
                return None
            parts.append(self._complement_all(group, base, depth))
            parts += [{"allOf": [group[i], group[j]]} for i in range(len(group)) for j in range(i)]
        if any(p is None for p in parts):
            return None
        flat: list = []
        for p in parts:
            if p is True or p == {}:
                return True
            if p is False:
                continue
            if isinstance(p, dict) and set(p) == {"anyOf"} and isinstance(p["anyOf"], list):
                flat += p["anyOf"]
            else:
                flat.append(p)
        return {"anyOf": flat} if len(flat) > 1 else (flat[0] if flat else False)

    @staticmethod
    def _effective_keys(s) -> set:
        """The keywords of ``s`` that constrain values: not annotations, ``x-*`` or
        unknown keywords (those have no effect; they are reported where the schema is
        compiled), nor the converter's note of the property order."""
        return {k for k in s if k not in ANNOTATIONS and not k.startswith("x-") and
                (k in KNOWN_KEYWORDS or k.endswith("__") or k.startswith("__"))} - {"before__"}

    @staticmethod
    def _scalar_values(s) -> bool:
        """``enum``/``const`` of scalars only (``not`` of a structured constant is not
        written)."""
        vals = list(s.get("enum", [])) if isinstance(s.get("enum"), list) else []
        vals += [s["const"]] if "const" in s else []
        return isinstance(s.get("enum", []), list) and not any(isinstance(v, (dict, list)) for v in vals)

    def _complement_values(self, s, base, depth):
        """The values other than those of ``enum``/``const``: ``not`` of the scalars, and
        the complement of each array or object value written as a schema (its length and
        items; its keys, with ``additionalProperties: false``, and their values)."""
        vals = s.get("enum", []) if "enum" in s else [s.get("const")]
        if not isinstance(vals, list):
            return None
        if "enum" in s and "const" in s:
            vals = [v for v in vals if json_eq(v, s["const"])]
        scalars = [v for v in vals if not isinstance(v, (dict, list))]
        schemas = [{"not": {"enum": scalars}}] if scalars else []
        for v in vals:
            if isinstance(v, list):
                schemas.append({"type": "array", "minItems": len(v), "maxItems": len(v),
                                "prefix__": [{"const": x} for x in v]})
            elif isinstance(v, dict):
                schemas.append({"type": "object", "required": list(v), "additionalProperties": False,
                                "properties": {k: {"const": x} for k, x in v.items()}})
        if len(schemas) == 1 and scalars:
            return schemas[0]
        rest = self._complements(schemas[1 if scalars else 0:], base, depth)
        if rest is None or rest is False:
            return rest
        comps = ([schemas[0]] if scalars else []) + rest
        return {"allOf": comps} if len(comps) > 1 else (comps[0] if comps else True)

    def _complements(self, schemas, base, depth):
        """The complements of ``schemas`` (each under its own base) other than True, as
        a list; None where one cannot be written, False where one accepts nothing."""
        comps = []
        for x in schemas:
            c = self.complement(x, self.base(x, base), depth + 1)
            if c is None or c is False:
                return c
            if c is not True:
                comps.append(c)
        return comps

    def _complement_all(self, branches, base, depth):
        """The values in the complement of every branch (None where one cannot be
        written)."""
        if not isinstance(branches, list):
            return None
        comps = self._complements(branches, base, depth)
        if comps is None or comps is False:
            return comps
        return {"allOf": comps} if comps else True

    def _complement_object(self, s, base, depth):
        """Alternatives of the objects that violate the object keywords of ``s``: one
        per required key (absent), per property (present, in its complement), for too
        few or too many members, and for a member whose key is not declared with a
        value in the complement of ``additionalProperties`` (``extra__``); None with
        ``patternProperties``, ``propertyNames`` or dependencies."""
        props = s.get("properties", {})
        req = s.get("required", [])
        addl = s.get("additionalProperties", True)
        if self.opts["additional_properties"] is False and "additionalProperties" not in s:
            addl = False
        if not isinstance(props, dict) or not isinstance(req, list) or \
                not (isinstance(addl, (bool, dict))):
            return None
        alts = [{"type": "object", "not": {"required": [r]}} for r in req if isinstance(r, str)]
        alts += [{"type": "object", "required": [k]} for k in s.get("forbidden__", ())]
        lo, hi = s.get("minProperties", 0), s.get("maxProperties")
        if not _count(lo) or (hi is not None and not _count(hi)):
            return None
        if lo > 0:
            alts.append({"type": "object", "maxProperties": lo - 1})
        if hi is not None:
            alts.append({"type": "object", "minProperties": hi + 1})
        # a member whose key is not declared, with a value outside additionalProperties
        # (``extra__``, see _build_object: [declared keys, value schema, its complement])
        if addl is not True and addl != {}:
            c = self.complement(addl, self.base(addl, base), depth + 1)
            if c is None:
                return None
            if c is not False:
                alts.append({"type": "object", "extra__": [[sorted(props), c, addl]]})
        for K, V, _ in s.get("extra__", ()):
            if V is not True:
                return None
            # every key in K: the properties the object declares there are its own
            alts.append({"type": "object", "propertyNames": {"enum": list(K)}})
        for p, ps in props.items():
            c = self.complement(ps, self.base(ps, base), depth + 1)
            if c is None:
                return None
            if c is not False:
                alts.append({"type": "object", "required": [p], "properties": {p: c}})
        return alts

    def _complement_array(self, s, base, depth):
        """Alternatives of the arrays that violate the array keywords of ``s``: too
        few or too many items, an item of the first ones in its schema's complement,
        or (without a prefix) some item in the complement of ``items`` (``contains``
        of its ``not``); None for a prefix followed by a constrained rest."""
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if not _count(lo) or (hi is not None and not _count(hi)):
            return None
        prefix, rest = self.array_parts(s)
        if not isinstance(prefix, list):
            return None
        alts = []
        if lo > 0:
            alts.append({"type": "array", "maxItems": lo - 1})
        if hi is not None:
            alts.append({"type": "array", "minItems": hi + 1})
        for i, p in enumerate(prefix):
            c = self.complement(p, self.base(p, base), depth + 1)
            if c is None:
                return None
            if c is not False:
                alts.append({"type": "array", "minItems": i + 1, "prefix__": [True] * i + [c]})
        c = self.complement(rest, self.base(rest, base), depth + 1) if rest is not True else False
        if c is None:
            return None
        if c is not False:
            if prefix:
                return None         # "some item after the prefix": not written
            alts.append({"type": "array", "contains": {"not": rest}})
        return alts

    # -- not ----------------------------------------------------------------------------
    def expand_not(self, d, base):
        """``d`` with each ``not`` that :meth:`apply_not` cannot apply directly written
        as its complement (:meth:`complement`): ``allOf: [rest, complement, ...]``;
        None when every ``not`` applies directly (or none has a complement: reported)."""
        if "enum" in d or "const" in d:
            return None             # enum_lang keeps exactly the values ``not`` allows
        nots = ([d["not"]] if "not" in d else []) + \
            (list(d["nots__"]) if isinstance(d.get("nots__"), list) else [])
        keep, comps = [], []
        for n in nots:
            c = None if self.not_direct(n, base) else self.complement(n, self.base(n, base))
            (keep if c is None else comps).append(n if c is None else c)
        if not comps:
            return None
        rest = {k: v for k, v in d.items() if k not in ("not", "nots__")}
        if keep:
            rest["nots__"] = keep
        return {"allOf": [rest] + comps}

    def not_direct(self, n, base) -> bool:
        """Can :meth:`apply_not` remove the values of ``n`` from a language directly
        (``type``, string and number keywords, ``enum``/``const`` of scalars,
        ``required``)? Other ``not`` schemas are written as their complement."""
        if isinstance(n, bool):
            return True
        flat = self.flat(n, base)
        if flat is None:
            return True             # reported by apply_not
        keys = self._effective_keys(flat)
        return keys <= SCALAR_KEYS or (keys <= {"enum", "const", "type"} and self._scalar_values(flat)) \
            or (keys <= {"required"} and isinstance(flat.get("required"), list))

    def apply_not(self, lang: Lang, n, base, ptr) -> Lang:
        if n is True:
            return Lang()
        if n is False:
            return lang
        try:
            n, nbase, _ = self.deref(n, base, ptr)
        except Problem as e:
            self.problem("not", ptr, str(e))
            return lang
        if isinstance(n, dict) and "allOf" in n:
            n = self.merge_all(n, nbase, ptr, report=False)
            if n is None:
                return lang             # n accepts nothing
        if not isinstance(n, dict):
            self.problem("not", ptr, "not a schema")
            return lang
        keys = self._effective_keys(n)
        if keys <= SCALAR_KEYS:
            return self._not_scalar(lang, n, keys, ptr)
        if keys <= {"enum", "const", "type"}:
            vals = list(n.get("enum", [])) if isinstance(n.get("enum"), list) else []
            if "const" in n:
                vals = [v for v in vals if json_eq(v, n["const"])] if "enum" in n else [n["const"]]
            if "type" in n:
                t = self.types_of(n, ptr)
                vals = [v for v in vals if self.value_type_ok(v, t)]
            out = Lang(**lang.__dict__)
            strs = [v for v in vals if isinstance(v, str)]
            nums = [v for v in vals if num(v) is not None]
            try:
                if strs and out.string != NONE:
                    out.string = R.difference(out.string, alt(*[lit(s) for s in strs]))
                if nums and out.number != NONE:     # every spelling of the values (plain decimals left)
                    out.number = R.difference(R.intersect(out.number, PLAIN),
                                              alt(*[value_spellings(v) for v in nums]))
            except TooComplex:
                self.problem("not", ptr, "too complex")
            if any(v is None for v in vals):
                out.null = False
            if any(v is True for v in vals):
                out.true = False
            if any(v is False for v in vals):
                out.false = False
            if any(isinstance(v, (dict, list)) for v in vals):
                self.problem("not", ptr, "excluding object/array constants is not supported")
            return out
        if keys <= {"required"} and isinstance(n.get("required"), list):
            # objects that lack at least one of the keys: one alternative per key. Every
            # other value satisfies ``required`` (it applies to objects only), so ``not``
            # excludes it
            out = Lang(others=lang.others)
            objs = []
            for sym in lang.objects:
                d = self.obj_source.get(sym)
                if d is None:
                    self.problem("not", ptr, "cannot apply to this object schema")
                    objs.append(sym)
                    continue
                obj_d, obase, optr = d
                for key in n["required"]:
                    forb = list(obj_d.get("forbidden__", [])) + [key]
                    nd = dict(obj_d)
                    nd["forbidden__"] = forb
                    s = self.object_symbol(nd, obase, optr)
                    if s:
                        objs.append(s)
            out.objects = uniq(tuple(objs))
            return out
        self.problem("not", ptr, "its complement cannot be written (see the Complements section of "
                     "docs/json-schema.md)")
        return lang

    def _not_scalar(self, lang: Lang, n, keys, ptr) -> Lang:
        """``lang`` without the values of ``n``, a schema of ``type`` and string/number
        keywords: ``n`` holds every value of its types whose keywords do not apply, the
        strings of its string language, the numbers of its number language (by value:
        every plain spelling; numbers left in plain decimal notation, policy). Where a
        part of ``n`` cannot be enforced (reported) the ``not`` is ignored."""
        t = self.types_of(n, ptr)
        before = len(self.problems)
        out = Lang(**lang.__dict__)
        if "null" in t:
            out.null = False
        if "boolean" in t:
            out.true = out.false = False
        if "object" in t:
            out.objects = ()
        if "array" in t:
            out.arrays = ()
        try:
            if "string" in t and out.string != NONE:
                if keys & STRING_KEYS:
                    diff = R.difference(out.string, self.string_lang(n, ptr))
                    out.string = self.lexable(diff, diff, 0, None, ptr)
                else:
                    out.string = NONE
            if ("number" in t or "integer" in t) and out.number != NONE:
                if "number" in t and not keys & NUMBER_KEYS:
                    out.number = NONE
                else:
                    # every spelling of an integer value: plain decimals left (policy)
                    ints = "number" not in t
                    held = self.number_lang(n, ptr, integer=ints) if keys & NUMBER_KEYS else INT_LITERALS
                    held = seq(held, INT_ZEROS) if ints else held
                    out.number = R.difference(R.intersect(out.number, PLAIN), held)
        except TooComplex:
            self.problem("not", ptr, "the values outside this pattern/format/number range form a regex "
                         "over the size limit (the complement is not written)")
        if len(self.problems) > before:
            return lang
        return out
