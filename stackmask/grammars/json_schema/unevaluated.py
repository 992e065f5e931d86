"""``unevaluatedProperties`` and ``unevaluatedItems``, decided statically.

A member or item is *evaluated* when a keyword of the schema object, or of a subschema
applied in place to the same value and valid on it, looked at it: ``properties``,
``patternProperties`` and ``additionalProperties`` (every member),
``prefixItems`` (the first n items), ``items`` after a prefix (every item), a nested
``unevaluated*`` (every one it saw). In-place subschemas are those of ``$ref``,
``allOf``, the valid branches of ``anyOf``/``oneOf``, ``if`` and ``then`` when ``if``
holds, ``else`` when it does not, and ``dependentSchemas`` of present keys; ``not``
contributes nothing.

Where that set does not depend on the value, ``unevaluatedProperties: U`` is the closure
"every member outside the evaluated names and patterns satisfies U", one more ``allOf``
member. Where one ``anyOf``/``oneOf``/``if`` group decides it (its branches evaluate
different members), the closure is chosen with the branch: the schema gets
``anyOf: [branch_i ∧ closure_i]``, exact when at most one branch can hold for a value
(``oneOf``, ``if``'s two sides, a dependent schema's key present or absent, ``anyOf``
branches the converter proves disjoint), since the group's own keyword already requires
that branch. Anything else (``contains`` next to ``unevaluatedItems``, two deciding
groups, ``anyOf`` branches that may hold together) is refused by name.
"""

from __future__ import annotations

from .common import Problem

_KEYWORDS = ("unevaluatedProperties", "unevaluatedItems")


class _Undecidable(Exception):
    pass


class _Evaluated:
    """What one subschema evaluates: member names and patterns, or an item prefix
    length; ``every`` when it evaluates everything."""
    __slots__ = ("names", "patterns", "prefix", "every")

    def __init__(self, names=(), patterns=(), prefix=0, every=False):
        self.names = list(dict.fromkeys(names))
        self.patterns = list(dict.fromkeys(patterns))
        self.prefix = prefix
        self.every = every

    def join(self, other: "_Evaluated") -> "_Evaluated":
        return _Evaluated(self.names + other.names, self.patterns + other.patterns,
                          max(self.prefix, other.prefix), self.every or other.every)

    def key(self):
        if self.every:
            return ("every",)
        return (frozenset(self.names), frozenset(self.patterns), self.prefix)


class UnevaluatedMixin:
    """Methods of the converter (:class:`..converter.Converter`) for ``unevaluated*``."""

    #: in-place subschemas followed this deep at most (references included)
    MAX_UNEVALUATED_DEPTH = 32

    def without_unevaluated(self, d, base, ptr, report: bool = True):
        """``d`` with its ``unevaluatedProperties``/``unevaluatedItems`` (other than
        ``true``) replaced by the equivalent closures. Where that cannot be decided
        statically the keywords are reported here, with the reason (so refused when
        strict), and left out (``strict=False``: the grammar accepts more)."""
        if not isinstance(d, dict) or not any(k in d and d[k] is not True for k in _KEYWORDS):
            return d
        memo = self.__dict__.setdefault("_unevaluated_memo", {})
        got = memo.get(id(d))
        if got is not None and got[0] is d:
            if got[2] and report:
                self.problem(*got[2])
            return got[1]
        out, why = d, None
        for kw in _KEYWORDS:
            if kw not in out or out[kw] is True:
                continue
            try:
                out = self._close(out, base, kw)
            except _Undecidable as e:
                # reported (refused when strict); dropped, so that no part of ``d`` split
                # off later (a combinator's carried keywords) closes over a smaller scope
                why = (kw, f"{ptr}/{kw}", f"cannot be decided statically: {e}")
                out = {k: v for k, v in d.items() if k not in _KEYWORDS}
                break
        memo[id(d)] = (d, out, why)        # d kept alive: its id stays its own
        if why and report:
            self.problem(*why)
        return out

    # -- the closure -----------------------------------------------------------------
    def _close(self, d, base, kw):
        items = kw == "unevaluatedItems"
        u = d[kw]
        rest = {k: v for k, v in d.items() if k != kw}
        groups: list = []
        fixed = self._evaluated(rest, base, items, 0, groups, top=True)
        if fixed.every:
            return rest                 # everything is evaluated: no effect
        member = None
        if not groups:
            member = self._closure(fixed, u, items)
        elif len(groups) == 1:
            kind, branches, evs, gbase = groups[0]
            terms = [{"allOf": [b, self._closure(fixed.join(ev), u, items)]} for b, ev in zip(branches, evs)]
            keep = self.__dict__.setdefault("_unevaluated_keep", [])
            for b in branches:
                if isinstance(b, dict):
                    self.base_of.setdefault(id(b), gbase)
                    keep.append(b)
            member = {"anyOf": terms}
        else:
            raise _Undecidable("more than one anyOf/oneOf/if decides which "
                               + ("items" if items else "members") + " are evaluated")
        out = dict(rest)
        out["allOf"] = list(rest.get("allOf", [])) + [member] if isinstance(rest.get("allOf", []), list) \
            else [member]
        keep = self.__dict__.setdefault("_unevaluated_keep", [])
        keep.append(out)
        self.base_of[id(out)] = self.base(d, base)
        return out

    def _closure(self, ev: "_Evaluated", u, items: bool):
        """The schema "every member (item) outside ``ev`` satisfies ``u``"."""
        if ev.every:
            return True
        if items:
            c = {"prefix__": [True] * ev.prefix, "rest__": u} if ev.prefix else {"rest__": u}
        elif u is False:
            # no member may be unevaluated: a condition on the names, which leaves the
            # members' order (the key-order policy) as the rest of the schema makes it
            names = [{"enum": list(ev.names)}] if ev.names else []
            names += [{"pattern": p} for p in ev.patterns]
            c = {"propertyNames": {"anyOf": names} if len(names) > 1 else (names[0] if names else False)}
        else:
            c = {"properties": {k: True for k in ev.names},
                 "patternProperties": {p: True for p in ev.patterns}, "additionalProperties": u}
            if not ev.patterns:
                del c["patternProperties"]
        self.__dict__.setdefault("_unevaluated_keep", []).append(c)
        return c

    # -- what a subschema evaluates ----------------------------------------------------
    def _evaluated(self, node, base, items: bool, depth: int, groups: list, top=False) -> _Evaluated:
        """The members (items) ``node`` evaluates whatever the value; a group whose
        branches evaluate different ones is appended to ``groups`` as ``(keyword,
        branches, [evaluated], base)``."""
        if depth > self.MAX_UNEVALUATED_DEPTH:
            raise _Undecidable("in-place subschemas nest too deeply")
        if not isinstance(node, dict):
            return _Evaluated()
        base = self.base(node, base)
        k, ref = self.ref_of(node)
        ev = _Evaluated()
        if k is not None:
            try:
                if k in ("$recursiveRef", "$dynamicRef") and ref == "#":
                    tgt, tbase = self.root, self.root_base
                else:
                    tgt, tbase, _ = self.resolve(ref, base, "#")
            except Problem as e:
                raise _Undecidable(str(e))
            ev = ev.join(self._evaluated(tgt, tbase, items, depth + 1, groups))
            if self.draft <= 7:
                return ev               # siblings of $ref are ignored
        if not top and any(kw in node for kw in _KEYWORDS):
            kw = "unevaluatedItems" if items else "unevaluatedProperties"
            if kw in node:
                return _Evaluated(every=True)
        if items:
            if "contains" in node:
                raise _Undecidable("contains evaluates the items it matches, which depends on the values")
            if isinstance(node.get("items"), list):
                ev = ev.join(_Evaluated(prefix=len(node["items"])))
                if "additionalItems" in node:
                    ev = ev.join(_Evaluated(every=True))
            else:
                if isinstance(node.get("prefixItems"), list):
                    ev = ev.join(_Evaluated(prefix=len(node["prefixItems"])))
                if "items" in node:
                    ev = ev.join(_Evaluated(every=True))
        else:
            props, pats = node.get("properties"), node.get("patternProperties")
            ev = ev.join(_Evaluated(names=list(props) if isinstance(props, dict) else (),
                                    patterns=list(pats) if isinstance(pats, dict) else ()))
            if "additionalProperties" in node:
                ev = ev.join(_Evaluated(every=True))
            deps = dict(node.get("dependentSchemas") or {})
            deps.update({a: b for a, b in (node.get("dependencies") or {}).items() if isinstance(b, (dict, bool))}
                        if isinstance(node.get("dependencies"), dict) else {})
            for key, dep in deps.items():
                inner: list = []
                e = self._evaluated(dep, base, items, depth + 1, inner)
                if inner:
                    raise _Undecidable("a dependent schema holds a group that decides what is evaluated")
                if e.key() != _Evaluated().key():
                    # evaluated when the key is present: a group of two exclusive sides
                    groups.append(("dependentSchemas", [{"required": [key]}, {"not": {"required": [key]}}],
                                   [e, _Evaluated()], base))
        for m in node.get("allOf", ()) if isinstance(node.get("allOf"), list) else ():
            ev = ev.join(self._evaluated(m, base, items, depth + 1, groups))
        for kw in ("anyOf", "oneOf"):
            branches = node.get(kw)
            if not isinstance(branches, list) or not branches:
                continue
            evs = []
            for b in branches:
                inner = []
                evs.append(self._evaluated(b, base, items, depth + 1, inner))
                if inner:
                    raise _Undecidable(f"a {kw} branch holds another group that decides what is evaluated")
            if len({e.key() for e in evs}) == 1:
                ev = ev.join(evs[0])    # every branch evaluates the same: whichever holds
                continue
            # oneOf: the keyword itself lets only one branch hold
            if kw == "anyOf" and not self._exclusive(branches, base, items):
                raise _Undecidable(f"{kw} branches that may hold together evaluate different "
                                   + ("items" if items else "members"))
            groups.append((kw, branches, evs, base))
        if "if" in node:
            cond = node["if"]
            inner: list = []
            e_if = self._evaluated(cond, base, items, depth + 1, inner)
            e_then = self._evaluated(node.get("then", True), base, items, depth + 1, inner)
            e_else = self._evaluated(node.get("else", True), base, items, depth + 1, inner)
            if inner:
                raise _Undecidable("if/then/else holds another group that decides what is evaluated")
            yes, no = e_if.join(e_then), e_else
            if yes.key() == no.key():
                ev = ev.join(yes)
            else:
                neg = self.complement(cond, base)
                if neg is None:
                    raise _Undecidable("the complement of if cannot be written")
                groups.append(("if", [cond, neg], [yes, no], base))
        return ev

    def _exclusive(self, branches, base, items: bool) -> bool:
        """At most one of ``branches`` holds for any object (array)."""
        want = "array" if items else "object"
        live = []
        for b in branches:
            flat = self.flat(b, base) if isinstance(b, dict) else ({} if b is True else None)
            if b is False:
                continue
            if flat is not None and "type" in flat:
                t = flat["type"]
                types = set(t) if isinstance(t, list) else {t}
                if want not in types:
                    continue            # holds for no object (array): never the deciding branch
            live.append(b)
        disjoint = self.arrays_disjoint if items else self.objects_disjoint
        return all(disjoint(live[i], live[j], base) for i in range(len(live)) for j in range(i))
