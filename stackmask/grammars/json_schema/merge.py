"""``allOf`` merging: the members of an ``allOf`` (references followed, ``if`` expanded)
merged keyword by keyword into one schema dict."""

from __future__ import annotations

from .. import ecma_regex as R
from ..ecma_regex import PatternError
from .common import ANNOTATIONS, ITEM_KEYS, Problem, canon, conj, json_eq, num
from .numbers import lcm_multiple


class MergeMixin:
    """Methods of the converter (:class:`..converter.Converter`) for ``allOf``."""


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
            except Problem as e:
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
        out = {k: v for k, v in a.items() if k not in ITEM_KEYS}
        for k, v in b.items():
            if k in ITEM_KEYS:
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
            if canon(w) == canon(v):
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
                out[k] = [x for x in w if any(json_eq(x, y) for y in v)]
            elif k == "const":
                if not json_eq(w, v):
                    return None
            elif k in ("minimum", "minLength", "minItems", "minProperties"):
                out[k] = max(w, v) if num(w) is not None and num(v) is not None else w
            elif k in ("maximum", "maxLength", "maxItems", "maxProperties"):
                out[k] = min(w, v) if num(w) is not None and num(v) is not None else w
            elif k in ("exclusiveMinimum", "exclusiveMaximum") and num(w) is not None and num(v) is not None:
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
                        if not (self.excludes(x, self.surface_facts(y)) or
                                self.excludes(y, self.surface_facts(x)))]
                if len(prod) > 256:
                    if report:
                        self.problem("anyOf", ptr, "too many combinations inside allOf")
                    prod = prod[:256]
                    out["truncated__"] = ["anyOf"]     # not exact: flat's users must not read it
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
            elif k == "multipleOf" and lcm_multiple(w, v) is not None:
                out[k] = lcm_multiple(w, v)
            else:
                out.setdefault("allOf_conflicts__", []).append(k)
        if any(k in a for k in ITEM_KEYS) or any(k in b for k in ITEM_KEYS):
            # ``items`` applies beyond the ``prefixItems`` of its own schema object only: item
            # i must satisfy each side's schema for position i
            pa, ra = self.array_parts(a)
            pb, rb = self.array_parts(b)
            prefix = [conj(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb)
                      for i in range(max(len(pa), len(pb)))]
            rest = conj(ra, rb)
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

    def flat(self, node, base):
        """Branch schema with refs followed and allOf merged (for disjointness tests)."""
        try:
            node, base, _ = self.deref(node, base, "#")
        except Problem:
            return None
        if isinstance(node, dict) and "allOf" in node:
            node = self.merge_all(node, base, "#", report=False)
        if isinstance(node, dict) and node.get("truncated__"):
            return None             # an anyOf product was cut (reported where it is compiled)
        return node if isinstance(node, dict) else None
