"""``anyOf``/``oneOf``: the union of the branches' languages, ``oneOf`` made exclusive
(exact scalar differences, disjoint rewrites), and the disjointness tests it needs."""

from __future__ import annotations

from .. import ecma_regex as R
from ..ecma_regex import NONE, TooComplex, alt, seq
from .common import ANNOTATIONS, Lang
from .numbers import INT_LITERALS, INT_ZEROS, PLAIN


class CombinatorsMixin:
    """Methods of the converter (:class:`..converter.Converter`) for ``anyOf``/``oneOf``."""


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
        (:meth:`excludes`)."""
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
                keep = [a for a in alts[j] if a is not False and not self.excludes(a, info)]
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
        flat = self.flat(node, base) if node is not True else {}
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
    def surface_facts(s):
        """:meth:`_branch_facts` of ``s`` from its own ``type`` and ``required`` only (no
        reference followed, nothing merged): safe where no base is at hand."""
        if not isinstance(s, dict) or any(k in s for k in ("$ref", "$recursiveRef", "$dynamicRef", "allOf")):
            return None, set(), None
        t = s.get("type")
        t = t if isinstance(t, list) else [t] if t is not None else None
        types = set(t) if t is not None and all(isinstance(x, str) for x in t) else None
        req = {r for r in s["required"] if isinstance(r, str)} if isinstance(s.get("required"), list) else set()
        return types, req, None

    def excludes(self, alt, info) -> bool:
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
                    elif attr == "number":
                        setattr(out[i], attr, R.difference(mine, others))
                    else:
                        # too large as a regex: the others as a negative lookahead (the
                        # branches' parts stay disjoint, each its own terminal if need be)
                        setattr(out[i], attr, R.exclude(mine, others))
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

    def objects_disjoint(self, a, b, base) -> bool:
        a, b = self.flat(a, base), self.flat(b, base)
        if a is None or b is None:
            return False
        if "anyOf" in a or "anyOf" in b or "oneOf" in a or "oneOf" in b:
            return False
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        # in the schemas' order, not a set's: the languages read below name grammar symbols
        # as they are met, and a set's order varies between processes (PYTHONHASHSEED),
        # which would give one schema several grammars (and cache keys)
        ra = list(dict.fromkeys(k for k in a.get("required") or () if isinstance(k, str)))
        rb = list(dict.fromkeys(k for k in b.get("required") or () if isinstance(k, str)))
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
        both = set(rb)
        for k in [k for k in ra if k in both]:
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
        flat = self.flat(s, base) if isinstance(s, dict) else None
        if flat is None or not ("enum" in flat or "const" in flat):
            return None
        vals = flat["enum"] if isinstance(flat.get("enum"), list) else [flat.get("const")]
        return [v for v in vals if self.value_valid(v, flat, base, 0)]

    def arrays_disjoint(self, a, b, base) -> bool:
        a, b = self.flat(a, base), self.flat(b, base)
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
