"""``allOf`` merging, ``anyOf``/``oneOf``, ``not``, ``if``/``then``/``else`` and the
complements and disjointness tests they need."""

from __future__ import annotations

from .. import ecma_regex as R
from ..ecma_regex import NONE, PatternError, TooComplex, alt, lit, rep, seq
from .common import ANNOTATIONS, KNOWN_KEYWORDS, Lang, _ARRAY_KEYS, _Problem, _canon, _conj, _json_eq, _num, _uniq
from .numbers import PLAIN, _lcm_multiple, _value_spellings, int_range

#: keywords of strings and of numbers: ``not`` of them is applied exactly (:meth:`apply_not`)
STRING_KEYS = frozenset({"pattern", "format", "minLength", "maxLength", "patterns__", "formats__"})
NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
SCALAR_KEYS = STRING_KEYS | NUMBER_KEYS | {"type", "nullable"}
#: object, array and combinator keywords whose complement :meth:`complement` writes
OBJECT_KEYS = frozenset({"properties", "required", "additionalProperties", "minProperties", "maxProperties",
                         "forbidden__", "extra__"})
ARRAY_KEYS = frozenset({"items", "prefixItems", "additionalItems", "prefix__", "rest__", "minItems", "maxItems"})
COMBINATOR_KEYS = frozenset({"not", "nots__", "anyOf", "oneOf", "__oneOf"})

#: every integer literal (the "integer" type's spellings), and the zero fraction that
#: spells the same value (1 -> 1.0, 1.00)
INT_LITERALS = int_range(None, None)
INT_ZEROS = rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1)


def _count(n) -> bool:
    """A count keyword's value the complements can use: a non-negative integer."""
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


class CombinatorsMixin:
    """Methods of the converter (:class:`..converter._Converter`) for combinators."""

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
        s = self._flat(s, base)
        if s is not None and "if" in s:
            x = self.expand_if(s, base, depth + 1)
            s = None if x is None else self._flat(x, base)
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
            vals = [v for v in vals if _json_eq(v, s["const"])]
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

    # -- combinators ---------------------------------------------------------------
    def _local(self, d) -> dict:
        return {k: v for k, v in d.items() if k not in ("anyOf", "oneOf", "__oneOf")}

    def _has_constraints(self, d) -> bool:
        return any(k not in ANNOTATIONS and not k.startswith("x-") for k in d)

    def combinators(self, d, base, ptr) -> Lang:
        local = self._local(d)
        groups = []
        if "anyOf" in d:
            groups.append(("anyOf", d["anyOf"], ptr + "/anyOf"))
        if "oneOf" in d:
            groups.append(("oneOf", d["oneOf"], ptr + "/oneOf"))
        for g in d.get("__oneOf", ()):
            groups.append(("oneOf", g, ptr + "/oneOf"))
        for kw, branches, _p in groups:
            if not isinstance(branches, list) or not branches:
                self.problem(kw, _p, "must be a non-empty array")
                return self.any_lang()
        # one group at a time: the first is expanded, the others stay in every branch
        kw, branches, gptr = groups[0]
        carry = dict(local)
        if "anyOf" in d and kw != "anyOf":
            carry["anyOf"] = d["anyOf"]
        more_one = [g[1] for g in groups[1:] if g[0] == "oneOf"]
        if more_one:
            carry["__oneOf"] = more_one
        # property order: the properties written before the combinator come
        # first, then the branch's, then the rest (document order)
        props = carry.get("properties") if isinstance(carry.get("properties"), dict) else {}
        if "before__" in d:
            before = [k for k in d["before__"] if k in props]
        else:
            order = list(d)
            first_comb = min(order.index(k) for k in ("anyOf", "oneOf", "__oneOf") if k in d)
            before = list(props) if "properties" in d and order.index("properties") < first_comb else []
        carry.pop("before__", None)

        def branch_langs(branches) -> list:
            langs = []
            for i, b in enumerate(branches):
                bptr = f"{gptr}/{i}"
                if self._has_constraints(carry):
                    m = self.merge_all({"allOf": [carry, b] if before else [b, carry]}, base, bptr)
                    if m is not None and before and isinstance(m.get("properties"), dict):
                        mp = m["properties"]
                        new = [k for k in mp if k not in props]
                        order = before + new + [k for k in mp if k in props and k not in before]
                        m = dict(m, properties={k: mp[k] for k in order})
                    lg = Lang() if m is None else self.lang(m, base, bptr)
                else:
                    lg = self.lang(b, self.base(b, base), bptr)
                langs.append(lg)
            return langs

        langs = branch_langs(branches)
        if kw == "oneOf":
            overlaps: list = []
            # disjointness is that of the branches with the keywords beside the oneOf
            # (exactly one of "carry and b_i" is exactly one of b_i, carry holding): a
            # key required beside it and a constant in each branch tell them apart
            merged = [{"allOf": [carry, b]} for b in branches] \
                if self._has_constraints(carry) else branches
            one = self.one_of(list(langs), merged, base, gptr, overlaps)
            excl = self.exclusive_branches(branches, base, carry) if overlaps else None
            if excl is not None:
                # each branch and the complements of the others: disjoint by construction
                langs = branch_langs(excl)
            else:
                for why in overlaps:
                    self.problem("oneOf", gptr, why)
                langs = one
        out = Lang()
        for lg in langs:
            out = out.union(lg)
        return out

    #: at most this many alternatives in a branch of an exclusive ``oneOf`` rewrite (the
    #: product of the other branches' complements' alternatives)
    MAX_EXCLUSIVE_ALTERNATIVES = 64

    def exclusive_branches(self, branches, base, context=None):
        """``oneOf`` as disjoint branches: branch ``i`` and the complement of every other
        branch (:meth:`complement`), so "exactly one" is their union; None when a
        complement cannot be written or the rewrite grows past
        :data:`MAX_EXCLUSIVE_ALTERNATIVES` alternatives per branch. Alternatives of a
        complement that provably hold no value of branch ``i`` (in ``context``, the
        keywords next to the ``oneOf``) are left out of branch ``i``'s product
        (:meth:`_excludes`)."""
        comps = []
        for b in branches:
            c = self.complement(b, self.base(b, base))
            if c is None:
                return None
            comps.append(c)
        alts = [c["anyOf"] if isinstance(c, dict) and set(c) == {"anyOf"} else [c] for c in comps]
        out = []
        for i, b in enumerate(branches):
            info = self._branch_facts(b, base, context)
            others = []
            size = 1
            for j in range(len(branches)):
                if j == i or (info[0] is not None and info[0] <= {"object"} and
                              self.objects_disjoint(b, branches[j], base)):
                    continue            # i holds objects only, none of them in j
                keep = [a for a in alts[j] if a is not False and not self._excludes(a, info)]
                size *= len(keep)
                others.append({"anyOf": keep} if len(keep) > 1 else (keep[0] if keep else False))
            if size > self.MAX_EXCLUSIVE_ALTERNATIVES:
                return None
            out.append(False if False in others else ({"allOf": [b] + others} if others else b))
        return out

    def _branch_facts(self, b, base, context):
        """``(types, required, closed)`` of a ``oneOf`` branch merged with the keywords
        next to the ``oneOf``: its explicit types (None: any), its required keys, and
        its declared keys when it allows no others (None: it allows others)."""
        node = {"allOf": [context, b]} if context and self._has_constraints(context) else b
        flat = self._flat(node, base) if node is not True else {}
        if flat is None:
            return None, set(), None
        types = None
        if "type" in flat:
            t = flat["type"] if isinstance(flat["type"], list) else [flat["type"]]
            types = set(t) if all(isinstance(x, str) for x in t) else None
        req = set(r for r in flat.get("required", ()) if isinstance(r, str)) \
            if isinstance(flat.get("required"), list) else set()
        closed = None
        if flat.get("additionalProperties") is False and not flat.get("patternProperties") and \
                isinstance(flat.get("properties", {}), dict):
            closed = set(flat.get("properties", {}))
        return types, req, closed

    @staticmethod
    def _surface_facts(s):
        """:meth:`_branch_facts` of ``s`` from its own ``type`` and ``required`` only (no
        reference followed, nothing merged): safe where no base is at hand."""
        if not isinstance(s, dict) or any(k in s for k in ("$ref", "$recursiveRef", "$dynamicRef", "allOf")):
            return None, set(), None
        t = s.get("type")
        t = t if isinstance(t, list) else [t] if t is not None else None
        types = set(t) if t is not None and all(isinstance(x, str) for x in t) else None
        req = {r for r in s["required"] if isinstance(r, str)} if isinstance(s.get("required"), list) else set()
        return types, req, None

    def _excludes(self, alt, info) -> bool:
        """Does ``alt``, an alternative of a complement (as :meth:`complement` writes
        them), provably hold no value of a branch with these facts
        (:meth:`_branch_facts`)? Only the cheap cases: ``not: {type}`` of all the
        branch's types; an object/array alternative for a branch of other types; an
        object lacking a key the branch requires; an object with a key the closed
        branch does not declare."""
        types, req, closed = info
        if not isinstance(alt, dict):
            return False
        n = alt.get("not")
        if set(alt) == {"not"} and isinstance(n, dict) and set(n) <= {"type"} and "type" in n:
            t = n["type"] if isinstance(n["type"], list) else [n["type"]]
            return types is not None and all(x in t or (x == "integer" and "number" in t) for x in types)
        kind = alt.get("type")
        if kind in ("object", "array") and types is not None and kind not in types:
            return True
        if kind == "object":
            if isinstance(n, dict) and set(n) == {"required"} and isinstance(n["required"], list) and \
                    len(n["required"]) == 1 and n["required"][0] in req:
                return True
            if closed is not None and any(closed <= set(K) for K, _, _ in alt.get("extra__", ())):
                return True
        return False

    def one_of(self, langs, branches, base, ptr, overlaps: list) -> list:
        """Exactly one branch: exact when the branches are disjoint; string and
        number parts are made disjoint exactly (symmetric difference). Structured
        branches that may overlap are listed in ``overlaps`` (the caller reports them
        unless :meth:`exclusive_branches` makes the branches disjoint)."""
        n = len(langs)
        if n == 1:
            return langs
        # scalar parts: exact exclusive union
        out = [Lang(objects=lg.objects, arrays=lg.arrays, others=lg.others) for lg in langs]
        for attr in ("null", "true", "false"):
            cnt = sum(1 for lg in langs if getattr(lg, attr))
            if cnt == 1:
                for o, lg in zip(out, langs):
                    setattr(o, attr, getattr(lg, attr))
        for attr in ("string", "number"):
            parts = [getattr(lg, attr) for lg in langs]
            nonempty = [i for i, p in enumerate(parts) if p != NONE]
            if len(nonempty) <= 1:
                for i in nonempty:
                    setattr(out[i], attr, parts[i])
                continue
            try:
                # a branch of integer literals (the "integer" type's spelling policy) has
                # its values spelt other ways too (1.0, 1.00): excluded from the others by
                # value, every spelling; those others then keep plain decimals only (1e0
                # is the value 1 as well, and "exponent denotes an integer" is not regular)
                ints = {i for i in nonempty if attr == "number" and R.is_subset(parts[i], INT_LITERALS)}
                closed = {i: seq(parts[i], INT_ZEROS) if i in ints else parts[i] for i in nonempty}
                for i in nonempty:
                    others = alt(*[closed[j] for j in nonempty if j != i])
                    mine = parts[i]
                    if i not in ints and any(j in ints for j in nonempty if j != i):
                        mine = R.intersect(mine, PLAIN)
                    if R.is_disjoint(mine, others):
                        setattr(out[i], attr, mine)
                    else:
                        setattr(out[i], attr, R.difference(mine, others))
            except TooComplex:
                self.problem("oneOf", ptr, f"overlapping {attr} branches")
                for i in nonempty:
                    setattr(out[i], attr, parts[i])
        # structured parts: identical in every branch that has them -> in no
        # branch exactly once (when >= 2 branches); otherwise must be provably disjoint
        for attr in ("objects", "arrays"):
            have = [i for i, lg in enumerate(langs) if getattr(lg, attr)]
            if len(have) >= 2 and len({getattr(langs[i], attr) for i in have}) == 1:
                for i in have:
                    setattr(out[i], attr, ())
                    langs[i] = Lang(**{**langs[i].__dict__, attr: ()})
        structured = [i for i, lg in enumerate(langs) if lg.objects or lg.arrays or lg.others]
        for a_i in range(len(structured)):
            for b_i in range(a_i + 1, len(structured)):
                i, j = structured[a_i], structured[b_i]
                li, lj = langs[i], langs[j]
                if li.others or lj.others:
                    self.problem("oneOf", ptr, "recursive branches cannot be checked for disjointness")
                    continue
                if li.objects and lj.objects and not self.objects_disjoint(branches[i], branches[j], base):
                    overlaps.append(f"object branches {i} and {j} may overlap")
                if li.arrays and lj.arrays and not self.arrays_disjoint(branches[i], branches[j], base):
                    overlaps.append(f"array branches {i} and {j} may overlap")
        return out

    def _flat(self, node, base):
        """Branch schema with refs followed and allOf merged (for disjointness tests)."""
        try:
            node, base, _ = self.deref(node, base, "#")
        except _Problem:
            return None
        if isinstance(node, dict) and "allOf" in node:
            node = self.merge_all(node, base, "#", report=False)
        if isinstance(node, dict) and node.get("truncated__"):
            return None             # an anyOf product was cut (reported where it is compiled)
        return node if isinstance(node, dict) else None

    def objects_disjoint(self, a, b, base) -> bool:
        a, b = self._flat(a, base), self._flat(b, base)
        if a is None or b is None:
            return False
        if "anyOf" in a or "anyOf" in b or "oneOf" in a or "oneOf" in b:
            return False
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        ra, rb = set(a.get("required") or ()), set(b.get("required") or ())
        # a required key the other side forbids
        for req, other, oprops in ((ra, b, pb), (rb, a, pa)):
            for k in req:
                if oprops.get(k) is False:
                    return True
                if k not in oprops and other.get("additionalProperties") is False and \
                        not other.get("patternProperties"):
                    return True
        # a property required on both sides with disjoint scalar languages, or with
        # constants on one side that the other side's schema rejects
        for k in ra & rb:
            if k in pa and k in pb:
                la = self.lang(pa[k], self.base(pa[k], base), "#")
                lb = self.lang(pb[k], self.base(pb[k], base), "#")
                if self.langs_disjoint(la, lb):
                    return True
                for x, y in ((pa[k], pb[k]), (pb[k], pa[k])):
                    vals = self._constants(x, base)
                    if vals is not None and not any(self.value_valid(v, y, self.base(y, base), 0) for v in vals):
                        return True
        return False

    def _constants(self, s, base):
        """The values valid under ``s`` when it has ``enum``/``const`` (None otherwise)."""
        flat = self._flat(s, base) if isinstance(s, dict) else None
        if flat is None or not ("enum" in flat or "const" in flat):
            return None
        vals = flat["enum"] if isinstance(flat.get("enum"), list) else [flat.get("const")]
        return [v for v in vals if self.value_valid(v, flat, base, 0)]

    def arrays_disjoint(self, a, b, base) -> bool:
        a, b = self._flat(a, base), self._flat(b, base)
        if a is None or b is None:
            return False
        lo_a, hi_a = a.get("minItems", 0), a.get("maxItems")
        lo_b, hi_b = b.get("minItems", 0), b.get("maxItems")
        if (hi_a is not None and hi_a < lo_b) or (hi_b is not None and hi_b < lo_a):
            return True
        (pa, ra), (pb, rb) = self.array_parts(a), self.array_parts(b)
        ia, ib = (pa[0] if pa else ra), (pb[0] if pb else rb)      # the first item's schemas
        if isinstance(ia, dict) and isinstance(ib, dict) and lo_a >= 1 and lo_b >= 1:
            la = self.lang(ia, self.base(ia, base), "#")
            lb = self.lang(ib, self.base(ib, base), "#")
            if self.langs_disjoint(la, lb):
                return True
        return False

    def langs_disjoint(self, a: Lang, b: Lang) -> bool:
        if (a.null and b.null) or (a.true and b.true) or (a.false and b.false):
            return False
        if a.objects and b.objects or a.arrays and b.arrays or a.others or b.others:
            return False
        try:
            return R.is_disjoint(a.string, b.string) and R.is_disjoint(a.number, b.number)
        except TooComplex:
            return False

    # -- allOf merging -------------------------------------------------------------------
    def merge_all(self, d, base, ptr, report: bool = True):
        """Merge ``d`` (with ``allOf``) into one schema dict; None = unsatisfiable."""
        d = self.without_unevaluated(d, base, ptr, report)
        if "allOf" not in d:
            return d
        parts = [{k: v for k, v in d.items() if k != "allOf"}]
        if not isinstance(d.get("allOf"), list):
            if report:
                self.problem("allOf", ptr, "must be an array")
            return parts[0]
        out: dict = {}
        members = [(x, self.base(x, base), f"{ptr}/allOf/{i}") for i, x in enumerate(d["allOf"])]
        keys = list(d)
        if "properties" in d and keys.index("properties") > keys.index("allOf"):
            todo = members + [(parts[0], base, ptr)]        # document order: allOf's properties first
        else:
            todo = [(parts[0], base, ptr)] + members
        seen_refs = 0
        while todo:
            node, nbase, nptr = todo.pop(0)
            if node is True:
                continue
            if node is False:
                return None
            if not isinstance(node, dict):
                if report:
                    self.problem("allOf", ptr, "member is not a schema")
                continue
            if report:
                self.check_keywords(node, nptr)
            try:
                node2, nbase2, nptr2 = self.deref(node, nbase, nptr)
            except _Problem as e:
                if report:
                    self.problem("$ref", ptr, str(e))
                continue
            if node2 is node:
                node2 = node = self.without_unevaluated(node, nbase, nptr, report)
            if node2 is node and "if" in node2:
                x = self.expand_if(node, nbase)
                if x is not None:
                    todo.insert(0, (x, nbase, nptr))
                    continue
            if node2 is not node:
                seen_refs += 1
                if seen_refs > 200:
                    if report:
                        self.problem("allOf", ptr, "references nest too deeply")
                    break
                todo.insert(0, (node2, nbase2, nptr2))        # in place: keeps the document order
                continue
            if "allOf" in node:
                rest = {k: v for k, v in node.items() if k != "allOf"}
                subs = [(x, self.base(x, nbase), f"{nptr}/allOf/{i}")
                        for i, x in enumerate(node["allOf"] if isinstance(node["allOf"], list) else [])]
                nk = list(node)
                if "properties" in node and nk.index("properties") > nk.index("allOf"):
                    todo[0:0] = subs + [(rest, nbase, nptr)]
                else:
                    todo[0:0] = [(rest, nbase, nptr)] + subs
                continue
            out = self.merge2(out, node, ptr, report)
            if out is None:
                return None
        return out

    def merge2(self, a: dict, b: dict, ptr, report=True):
        out = {k: v for k, v in a.items() if k not in _ARRAY_KEYS}
        for k, v in b.items():
            if k in _ARRAY_KEYS:
                continue            # merged below, as (prefix, rest) of each side
            if k in ANNOTATIONS or k.startswith("x-"):
                out.setdefault(k, v)
                continue
            if k not in out:
                if k in ("anyOf", "oneOf") and "before__" not in out and "anyOf" not in out and "oneOf" not in out:
                    out["before__"] = list(out.get("properties") or {})
                out[k] = v
                continue
            w = out[k]
            if k.endswith("__"):
                out[k] = list(w) + list(v)
                continue
            if _canon(w) == _canon(v):
                continue
            if k == "type":
                ta = set(w) if isinstance(w, list) else {w}
                tb = set(v) if isinstance(v, list) else {v}
                t = ta & tb
                if "integer" in ta and "number" in tb or "number" in ta and "integer" in tb:
                    t.add("integer")
                out[k] = sorted(t)
                if not t:
                    return None
            elif k == "required":
                out[k] = list(dict.fromkeys(list(w) + list(v)))
            elif k in ("properties", "patternProperties"):
                m = dict(w)
                for pk, pv in v.items():
                    m[pk] = {"allOf": [m[pk], pv]} if pk in m else pv
                out[k] = m
            elif k in ("enum",):
                out[k] = [x for x in w if any(_json_eq(x, y) for y in v)]
            elif k == "const":
                if not _json_eq(w, v):
                    return None
            elif k in ("minimum", "minLength", "minItems", "minProperties"):
                out[k] = max(w, v) if _num(w) is not None and _num(v) is not None else w
            elif k in ("maximum", "maxLength", "maxItems", "maxProperties"):
                out[k] = min(w, v) if _num(w) is not None and _num(v) is not None else w
            elif k in ("exclusiveMinimum", "exclusiveMaximum") and _num(w) is not None and _num(v) is not None:
                out[k] = max(w, v) if k == "exclusiveMinimum" else min(w, v)
            elif k in ("pattern", "format"):
                lst = k + "s__"
                out.setdefault(lst, [])
                out[lst] = out[lst] + [v]
            elif k in ("additionalProperties", "propertyNames"):
                if w is False or v is False:
                    out[k] = False
                elif w is True:
                    out[k] = v
                elif v is True:
                    out[k] = w
                else:
                    out[k] = {"allOf": [w, v]}
            elif k == "anyOf":
                # pairs that provably hold no value (complements' alternatives) are left out
                prod = [{"allOf": [x, y]} for x in w for y in v
                        if not (self._excludes(x, self._surface_facts(y)) or
                                self._excludes(y, self._surface_facts(x)))]
                if len(prod) > 256:
                    if report:
                        self.problem("anyOf", ptr, "too many combinations inside allOf")
                    prod = prod[:256]
                    out["truncated__"] = ["anyOf"]     # not exact: _flat's users must not read it
                out[k] = prod
            elif k == "oneOf":
                out["__oneOf"] = list(out.get("__oneOf", [])) + [v]
            elif k == "not":
                out["nots__"] = list(out.get("nots__", [])) + [v]
            elif k == "contains" and not ("minContains" in b or "maxContains" in b):
                # both apply: b's (at least once) joins the array's other contains
                out["contains__"] = list(out.get("contains__", [])) + [v]
            elif k == "uniqueItems":
                out[k] = bool(w) or bool(v)
            elif k in ("dependencies", "dependentRequired", "dependentSchemas") and \
                    isinstance(w, dict) and isinstance(v, dict):
                m = dict(w)
                for dk, dv in v.items():
                    if dk not in m:
                        m[dk] = dv
                    elif isinstance(m[dk], list) and isinstance(dv, list):
                        m[dk] = list(dict.fromkeys(m[dk] + dv))
                    else:      # schemas, or an array (= required) and a schema: both apply
                        m[dk] = {"allOf": [{"required": x} if isinstance(x, list) else x for x in (m[dk], dv)]}
                out[k] = m
            elif k == "multipleOf" and _lcm_multiple(w, v) is not None:
                out[k] = _lcm_multiple(w, v)
            else:
                out.setdefault("allOf_conflicts__", []).append(k)
        if any(k in a for k in _ARRAY_KEYS) or any(k in b for k in _ARRAY_KEYS):
            # ``items`` applies beyond the ``prefixItems`` of its own schema object only: item
            # i must satisfy each side's schema for position i
            pa, ra = self.array_parts(a)
            pb, rb = self.array_parts(b)
            prefix = [_conj(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb)
                      for i in range(max(len(pa), len(pb)))]
            rest = _conj(ra, rb)
            if prefix:
                out["prefix__"] = prefix
            if rest is not True:
                out["rest__"] = rest
        # additionalProperties interplay: a key declared on one side only must
        # satisfy the other side's additional/pattern schema
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        if isinstance(pa, dict) and isinstance(pb, dict) and ("additionalProperties" in a or "additionalProperties" in b
                                                               or a.get("patternProperties") or b.get("patternProperties")):
            props = dict(out.get("properties") or {})
            for side, other, oprops in ((pa, b, pb), (pb, a, pa)):
                for key in side:
                    if key in oprops:
                        continue
                    extra = self._schema_for_extra_key(other, key, ptr, report)
                    if extra is not True:
                        props[key] = {"allOf": [props[key], extra]}
            out["properties"] = props
            # a key one side's pattern matches and the other's does not meets that other
            # side's additionalProperties, which the merged object cannot say (its
            # additional schema is for keys no pattern matches): exact only when the
            # other side has every pattern too (as the closures of ``unevaluated*`` do)
            def uncovered(x, y):
                px = x.get("patternProperties") if isinstance(x.get("patternProperties"), dict) else {}
                py = y.get("patternProperties") if isinstance(y.get("patternProperties"), dict) else {}
                return bool(set(px) - set(py)) and "additionalProperties" in y and y["additionalProperties"] is not True
            if uncovered(a, b) or uncovered(b, a):
                if report:
                    self.problem("allOf", ptr, "patternProperties on one side and additionalProperties on the other")
        return out

    def _schema_for_extra_key(self, d, key, ptr, report):
        pats = d.get("patternProperties") or {}
        matched = []
        for p, s in pats.items():
            try:
                if R.fullmatch(R.parse_pattern(p), key):
                    matched.append(s)
            except PatternError:
                pass
        if matched:
            return matched[0] if len(matched) == 1 else {"allOf": matched}
        ap = d.get("additionalProperties", True)
        return ap

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
        flat = self._flat(n, base)
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
        except _Problem as e:
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
                vals = [v for v in vals if _json_eq(v, n["const"])] if "enum" in n else [n["const"]]
            if "type" in n:
                t = self.types_of(n, ptr)
                vals = [v for v in vals if self._value_type_ok(v, t)]
            out = Lang(**lang.__dict__)
            strs = [v for v in vals if isinstance(v, str)]
            nums = [v for v in vals if _num(v) is not None]
            try:
                if strs and out.string != NONE:
                    out.string = R.difference(out.string, alt(*[lit(s) for s in strs]))
                if nums and out.number != NONE:     # every spelling of the values (plain decimals left)
                    out.number = R.difference(R.intersect(out.number, PLAIN),
                                              alt(*[_value_spellings(v) for v in nums]))
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
            out.objects = _uniq(tuple(objs))
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
