"""Object rules: declared, required, pattern and additional members in schema order,
member counts, dependencies."""

from __future__ import annotations

import math

from ...grammar import TerminalDef
from .. import ecma_regex as R
from ..ecma_regex import ANYSTAR, NONE, PatternError, TooComplex, alt, lit
from .common import StateSymbols, canon, conj, esc_ptr, num, uniq


class ObjectsMixin:
    """Methods of the converter (:class:`..converter.Converter`) for objects."""

    #: at most this many ``extra__`` requirements in one object (a bit of state each)
    MAX_EXTRA_REQUIREMENTS = 4

    def dependencies(self, d, ptr) -> tuple[dict, dict]:
        """``(required, schemas)``: for each trigger key, the keys it requires
        (``dependentRequired``, array entries of ``dependencies``) and the schemas the
        object must satisfy when the key is present (``dependentSchemas``, schema entries
        of ``dependencies``; enforced in every draft)."""
        req: dict = {}
        schemas: dict = {}
        for kw in ("dependencies", "dependentRequired", "dependentSchemas"):
            v = d.get(kw)
            if v is None:
                continue
            if not isinstance(v, dict):
                self.problem(kw, f"{ptr}/{kw}", "must be an object")
                continue
            for key, dep in v.items():
                if isinstance(dep, list) and kw != "dependentSchemas":
                    req[key] = list(dict.fromkeys(req.get(key, []) + [x for x in dep if isinstance(x, str)]))
                elif isinstance(dep, (dict, bool)) and kw != "dependentRequired":
                    schemas.setdefault(key, []).append(dep)
                else:
                    self.problem(kw, f"{ptr}/{kw}/{esc_ptr(key)}", "malformed dependency")
        return req, schemas

    def object_alternatives(self, d, base, ptr) -> tuple:
        """Object symbols of ``d``: one, or with dependencies one per choice of which
        trigger keys are present (absent: the key is forbidden; present: its dependent
        keys are required and its dependent schemas merged in); the choices are disjoint."""
        req, schemas = self.dependencies(d, ptr)
        triggers = [k for k in dict.fromkeys(list(req) + list(schemas))
                    if req.get(k) or any(x is not True and x != {} for x in schemas.get(k, ()))]
        plain = {k: v for k, v in d.items() if k not in ("dependencies", "dependentRequired", "dependentSchemas")}
        if not triggers:
            sym = self.object_symbol(plain, base, ptr)
            return (sym,) if sym else ()
        if len(triggers) > 5:
            self.problem("dependentRequired", ptr, "more than 5 dependencies (their combinations are not built)")
            sym = self.object_symbol(plain, base, ptr)
            return (sym,) if sym else ()
        out = []
        for mask in range(1 << len(triggers)):
            dd = dict(plain)
            required = list(dd.get("required") or [])
            forbidden = list(dd.get("forbidden__", []))
            extra = []
            for i, k in enumerate(triggers):
                if mask >> i & 1:
                    required += [k] + req.get(k, [])
                    extra += schemas.get(k, [])
                else:
                    forbidden.append(k)
            dd["required"] = list(dict.fromkeys(required))
            if forbidden:
                dd["forbidden__"] = forbidden
            if not extra:
                sym = self.object_symbol(dd, base, ptr)
                if sym:
                    out.append(sym)
                continue
            m = self.merge_all({"allOf": [dd, {"type": "object"}] + extra}, base, ptr)
            if m is not None:
                out.extend(self.lang(m, base, ptr).objects)
        return uniq(tuple(out))

    # -- objects ----------------------------------------------------------------------------
    def object_symbol(self, d, base, ptr):
        keys = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
                "maxProperties", "propertyNames", "forbidden__", "extra__")
        od = {k: d[k] for k in keys if k in d}
        if self.opts["additional_properties"] is False and "additionalProperties" not in od:
            od["additionalProperties"] = False
        key = (canon(od), base)
        s = self.obj_cache.get(key)
        if s is None:
            s = self.name("obj")
            self.obj_cache[key] = s
            self.obj_source[s] = (od, base, ptr)
            self.queue.append((self._build_object, s, od, base, ptr))
        return s

    def _build_object(self, nt, d, base, ptr):
        props = d.get("properties") or {}
        if not isinstance(props, dict):
            self.problem("properties", ptr + "/properties", "must be an object")
            props = {}
        required = [r for r in (d.get("required") or []) if isinstance(r, str)]
        required = list(dict.fromkeys(required))
        pats = d.get("patternProperties") or {}
        if not isinstance(pats, dict):
            self.problem("patternProperties", ptr + "/patternProperties", "must be an object")
            pats = {}
        addl = d.get("additionalProperties", True)
        forbidden = set(d.get("forbidden__", ()))
        pnames = d.get("propertyNames")
        name_lang = None
        if pnames is not None and pnames is not True:
            nl = self.lang(pnames, self.base(pnames, base), ptr + "/propertyNames")
            if nl.others:
                self.problem("propertyNames", ptr + "/propertyNames", "recursive propertyNames schema")
            name_lang = nl.string          # property names are strings: only that part applies
        pat_asts = []
        wild = False
        for p, s in pats.items():
            try:
                pat_asts.append((R.parse_pattern(p), s, p))
            except PatternError as e:
                self.problem("patternProperties", f"{ptr}/patternProperties/{esc_ptr(p)}",
                             f"unsupported regex: {e}")
                wild = True
        self._disjoint_pats = False
        if len(pat_asts) > 3:
            try:
                self._disjoint_pats = all(R.is_disjoint(pat_asts[i][0], pat_asts[j][0])
                                          for i in range(len(pat_asts)) for j in range(i))
            except TooComplex:
                pass
            if not self._disjoint_pats:
                self.problem("patternProperties", ptr + "/patternProperties",
                             "more than 3 overlapping patterns (their Boolean combinations are not built)")
                wild = True
        if wild:
            # ignored (strict=False): any key, with any of the pattern schemas or the additional one
            alts = list(pats.values()) + ([addl] if addl is not False else [])
            addl = {"anyOf": alts} if alts else False
            pat_asts = []
        # declared entries (schema order), then required-but-undeclared
        entries = []      # (name, [schemas], required)
        for name, sub in props.items():
            schemas = [sub] + [s for a, s, _ in pat_asts if R.fullmatch(a, name)]
            entries.append((name, schemas, name in required))
        for name in required:
            if name not in props:
                matched = [s for a, s, _ in pat_asts if R.fullmatch(a, name)]
                entries.append((name, matched if matched else [addl], True))
        ok_entries = []
        for name, schemas, req in entries:
            dead = name in forbidden or any(s is False for s in schemas) or \
                (name_lang is not None and not R.fullmatch(name_lang, name))
            if dead:
                if req:
                    return      # unsatisfiable: no rules -> removed
                continue
            ok_entries.append((name, schemas, req))
        own = {n for n, _, _ in entries} | forbidden
        # ``extra__`` (written by complements of additionalProperties): requirements
        # ``[K, V, W]``, each "some member's key is not in K and its value is valid
        # under V" (W: the complement of V); bit i of a state's ``b`` says that
        # requirement i is met. A member whose key is outside K_i meets it by a value
        # in V_i, and not by a value in W_i: one variant of the member for each choice
        reqs = [(frozenset(K), V, W) for K, V, W in d.get("extra__", ())]
        if len(reqs) > self.MAX_EXTRA_REQUIREMENTS:
            self.problem("additionalProperties", ptr, "too many complements of additionalProperties "
                         "in one object")
            reqs = reqs[:self.MAX_EXTRA_REQUIREMENTS]      # (reported) accepts more
        full = (1 << len(reqs)) - 1

        def outside(x) -> int:
            """The requirements a member with key ``x`` (None: a key of no list) can meet."""
            return sum(1 << i for i, (K, _, _) in enumerate(reqs) if x is None or x not in K)

        def variants(m: int) -> list:
            """``(bits met, schemas its value must satisfy)`` for a member whose key is
            outside the lists ``m``."""
            out = [(0, [])]
            for i, (_, V, W) in enumerate(reqs):
                if m >> i & 1:
                    out = [(b | 1 << i, xs + ([] if V is True else [V])) for b, xs in out] + \
                        ([(b, xs + [W]) for b, xs in out] if W is not False else [])
            return out

        def conj_all(s, xs):
            for x in xs:
                s = conj(s, x)
            return s

        named = sorted({x for K, _, _ in reqs for x in K})
        # in a fixed order (entries, then the forbidden names sorted), not the set's: the
        # key terminals' numbering is part of the grammar text an artifact is keyed by
        for x in dict.fromkeys([n for n, _, _ in entries] + sorted(forbidden) + named):
            self.declared_key(x)
        # extra members: a nonterminal E (pattern atoms, additional keys; names
        # declared elsewhere in the grammar are added by finish_extras); with
        # ``extra__``, the names of its lists that are extra members here get
        # nonterminals of their own, by the requirements they meet
        has_extras = addl is not False or bool(pat_asts)
        extras = []          # (nonterminal, requirement bits it meets)
        if has_extras:
            by_bits: dict = {full: None}        # None: every key of no list (the regex keys too)
            for x in named:
                if x not in own:
                    by_bits.setdefault(outside(x), []).append(x)
            for m, xs in sorted(by_bits.items(), key=lambda kv: (kv[1] is not None, kv[0])):
                for bits, sch in variants(m):
                    Ex = f"{nt}_e" if not reqs else f"{nt}_e{m}n{bits}" + ("x" if xs is None else "")
                    pats = [(a, conj_all(s, sch), p) for a, s, p in pat_asts]
                    ad = addl if addl is False else conj_all(addl, sch)
                    if xs is None:
                        if not self.extra_members(Ex, pats, ad, name_lang, base, ptr):
                            pats, ad, name_lang = [], True, None      # superset fallback (reported)
                        self.pending_extras.append((Ex, own | set(named), pats, ad, name_lang, base, ptr, None))
                    else:
                        self.pending_extras.append((Ex, own, pats, ad, name_lang, base, ptr, frozenset(xs)))
                    extras.append((Ex, bits))
        n = len(ok_entries)
        n_req = sum(1 for e in ok_entries if e[2])
        min_p, max_p = d.get("minProperties", 0), d.get("maxProperties")
        lo_p = math.ceil(min_p) if num(min_p) is not None else 0
        hi_p = math.floor(max_p) if num(max_p) is not None else None
        if hi_p is not None and hi_p < max(n_req, lo_p):
            return          # no object fits: no rules
        # count the members when the bounds are not implied by the declared/required ones
        # (minProperties <= 1 only forbids {})
        count = lo_p > max(n_req, 1) or (hi_p is not None and (has_extras or n > hi_p))
        cap = hi_p if hi_p is not None else lo_p
        if count and (n + 1) * (cap + 1) > 20000:
            kw = "maxProperties" if hi_p is not None else "minProperties"
            self.problem(kw, f"{ptr}/{kw}", "too many properties to count")
            count, lo_p, hi_p = False, min(lo_p, 1), None
        if not count:
            lo_p, hi_p = min(lo_p, 1), None
        LB, RB, CM = self.punct("{"), self.punct("}"), self.punct(",")
        keys = [self.declared_key(name) for name, _, _ in ok_entries]
        vals = []       # per entry: (value symbol, requirement bits it meets)
        for name, schemas, _ in ok_entries:
            sub = schemas[0] if len(schemas) == 1 else {"allOf": schemas}
            where = f"{ptr}/properties/{esc_ptr(name)}"
            vals.append([(self.symbol(conj_all(sub, sch), self.base(schemas[0], base), where), bits)
                         for bits, sch in variants(outside(name))])
        opt_from = [True] * (n + 1)
        for j in range(n - 1, -1, -1):
            opt_from[j] = opt_from[j + 1] and not ok_entries[j][2]
        src = ptr
        has_S = [j < n or has_extras for j in range(n + 1)]
        # S(j, c): the next member, c emitted so far, declared candidates from j on;
        # H(j, c): the next member is declared, entry j or later; R(j, c): after a member.
        # Without counting c is always 0 (one nonterminal per j).
        need = StateSymbols(lambda kind, j, c, b: f"{nt}_{kind}{j}" + (f"c{c}" if count else "")
                            + (f"b{b}" if reqs else ""))

        def inc(c: int) -> int:
            return 0 if not count else (c + 1 if hi_p is not None else min(c + 1, cap))

        if n_req == 0 and lo_p <= 0 and not reqs:
            self.rule(nt, [self.punct("{}")], src)
        if has_S[0] and (hi_p is None or hi_p >= 1):
            self.rule(nt, [LB, need("s", 0, 0, 0), RB], src)
        while need:
            (kind, j, c, b), name = need.pop()
            if kind == "r":
                if opt_from[j] and (not count or c >= lo_p) and b == full:
                    self.rule(name, [], src)
                if has_S[j] and (hi_p is None or c + 1 <= hi_p):
                    self.rule(name, [CM, need("s", j, c, b)], src)
            elif kind == "s":
                if j < n:
                    self.rule(name, [need("h", j, c, b)], src)
                for Ex, bits in extras:
                    self.rule(name, [Ex, need("r", j, inc(c), b | bits)], src)
            else:
                for sym, bits in vals[j]:
                    self.rule(name, [keys[j], sym, need("r", j + 1, inc(c), b | bits)], src)
                if not ok_entries[j][2] and j + 1 < n:
                    self.rule(name, [need("h", j + 1, c, b)], src)

    def declared_key(self, name: str) -> str:
        """Key terminal of a property name declared somewhere in the schema
        (priority 1: it beats the pattern/additional key terminals, which all
        have priority 0, on the same lexeme)."""
        t = self.key_terms.get(name)
        if t is None:
            regex = '"' + R.to_json_string(lit(name)) + '"' + self.colon()
            t = self.name("KEY")
            self.terms[regex + "\x00prio1"] = t
            self.term_defs.append(TerminalDef(name=t, regex=regex, priority=1))
            self.key_names.add(t)
            self.key_terms[name] = t
        return t

    def extra_members(self, E, pat_asts, addl, name_lang, base, ptr):
        """E -> KEY value for the object's own pattern atoms and the
        additional-property keys (names declared anywhere are lexed as their
        own terminals and handled in :meth:`finish_extras`)."""
        try:
            universe = self.string_cap(ANYSTAR) if name_lang is None else name_lang
            n = len(pat_asts)
            masks = [1 << i for i in range(n)] if n > 3 else range(1, 1 << n)   # > 3: pairwise disjoint
            for mask in masks:
                inside = [pat_asts[i] for i in range(n) if mask >> i & 1]
                outside = [pat_asts[i] for i in range(n) if not mask >> i & 1]
                schemas = [s for _, s, _ in inside]
                if any(s is False for s in schemas):
                    continue
                kast = R.intersect(universe, *[a for a, _, _ in inside])
                for a, _, _ in (outside if n <= 3 else ()):
                    if kast == NONE:
                        break
                    kast = R.difference(kast, a)
                if kast == NONE or R.is_empty(kast):
                    continue
                sub = schemas[0] if len(schemas) == 1 else {"allOf": schemas}
                self.rule(E, [self.key_term(kast), self.symbol(sub, self.base(sub, base),
                                                                ptr + "/patternProperties")], ptr)
            if addl is not False:
                kast = universe
                if n > 3:
                    kast = R.difference(kast, alt(*[a for a, _, _ in pat_asts]))
                for a, _, _ in (pat_asts if n <= 3 else ()):
                    if kast == NONE:
                        break
                    kast = R.difference(kast, a)
                if kast != NONE and not R.is_empty(kast):
                    self.rule(E, [self.key_term(kast), self.symbol(addl, self.base(addl, base),
                                                                    ptr + "/additionalProperties")], ptr)
        except (TooComplex, PatternError) as e:
            self.problem("patternProperties" if pat_asts else "propertyNames", ptr,
                         f"property-name languages too complex: {e}")
            self.rule(E, [self.key_term(ANYSTAR), self.symbol(True, "", ptr)], ptr)
            return False
        return True

    def finish_extras(self):
        """Names declared anywhere in the grammar are lexed as their own key
        terminals, so every object that accepts extra members gets them
        explicitly: individually where the object's patternProperties decide
        the schema, else as ranges of a shared segment tree over all names."""
        names = sorted(self.key_terms)
        M = len(names)
        saved, self.rules = self.rules, []
        made: dict = {}

        def seg(a, b):
            got = made.get((a, b))
            if got is not None:
                return got
            if b - a == 1:
                sym = self.key_terms[names[a]]
            else:
                sym = f"keys_{a}_{b}"
                m = (a + b) // 2
                self.rule(sym, [seg(a, m)], "keys")
                self.rule(sym, [seg(m, b)], "keys")
            made[(a, b)] = sym
            return sym

        def cover(a, b, lo=0, hi=M):
            if a >= hi or b <= lo:
                return
            if a <= lo and hi <= b:
                yield seg(lo, hi)
                return
            m = (lo + hi) // 2
            yield from cover(a, b, lo, m)
            yield from cover(a, b, m, hi)

        for E, own, pat_asts, addl, name_lang, base, ptr, only in self.pending_extras:
            excluded = [False] * M
            add_sym = None if addl is False else self.symbol(addl, self.base(addl, base),
                                                              ptr + "/additionalProperties")
            for i, x in enumerate(names):
                if x in own or (only is not None and x not in only):
                    excluded[i] = True
                    continue
                if name_lang is not None and not R.fullmatch(name_lang, x):
                    excluded[i] = True
                    continue
                matched = [s for a, s, _ in pat_asts if R.fullmatch(a, x)]
                if matched:
                    excluded[i] = True
                    if any(s is False for s in matched):
                        continue
                    sub = matched[0] if len(matched) == 1 else {"allOf": matched}
                    self.rule(E, [self.key_terms[x], self.symbol(sub, self.base(matched[0], base),
                                                                 ptr + "/patternProperties")], ptr)
            if add_sym is None:
                continue
            i = 0
            while i < M:
                if excluded[i]:
                    i += 1
                    continue
                j = i
                while j < M and not excluded[j]:
                    j += 1
                for node in cover(i, j):
                    self.rule(E, [node, add_sym], ptr)
                i = j
        out, self.rules = self.rules, saved
        return out
