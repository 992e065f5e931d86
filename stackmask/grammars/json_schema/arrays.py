"""Array rules: prefix and rest items, item counts, ``contains`` counts, ``uniqueItems``
over finite domains."""

from __future__ import annotations

import math

from .common import StateSymbols, canon, conj, json_eq, num

#: item counts further apart than this (past the prefix items) are counted in binary
#: (:meth:`ArraysMixin._counted_items`) instead of a chain of one rule per count
LINEAR_ITEMS = 16


class ArraysMixin:
    """Methods of the converter (:class:`..converter.Converter`) for arrays."""

    def array_parts(self, d) -> tuple:
        """``(prefix, rest)`` of one schema object's array keywords: the schemas of the
        first items and the schema of every later item (``prefixItems`` + ``items``;
        ``items`` as an array + ``additionalItems``; merged: ``prefix__`` + ``rest__``)."""
        if "prefix__" in d or "rest__" in d:
            return list(d.get("prefix__", ())), d.get("rest__", True)
        items = d.get("items", True)
        if isinstance(items, list):
            return list(items), d.get("additionalItems", True)
        if isinstance(d.get("prefixItems"), list):
            return list(d["prefixItems"]), items
        return [], items

    # -- arrays -------------------------------------------------------------------------------
    def array_symbol(self, d, base, ptr):
        keys = ("minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "contains__")
        ad = {k: d[k] for k in keys if k in d}
        prefix, rest = self.array_parts(d)
        if prefix:
            ad["prefix__"] = prefix
        if rest is not True:
            ad["rest__"] = rest
        key = (canon(ad), base)
        s = self.arr_cache.get(key)
        if s is None:
            s = self.name("arr")
            self.arr_cache[key] = s
            self.queue.append((self._build_array, s, ad, base, ptr))
        return s

    def finite_domain(self, s, base, size: int = 8):
        """The values valid under ``s`` when they are at most ``size`` scalars
        (``enum``/``const``, ``boolean``/``null`` types, small integer ranges), else None."""
        if s is False:
            return []
        flat = self.flat(s, base) if s is not True else None
        if flat is None or "anyOf" in flat or "oneOf" in flat or "__oneOf" in flat:
            return None
        types = self.types_of(flat, "#")
        if "enum" in flat or "const" in flat:
            cands = list(flat["enum"]) if isinstance(flat.get("enum"), list) else []
            cands += [flat["const"]] if "const" in flat else []
        elif types <= {"boolean", "null"}:
            cands = ([True, False] if "boolean" in types else []) + ([None] if "null" in types else [])
        elif types <= {"integer", "boolean", "null"} and "integer" in types:
            lo, lo_x, hi, hi_x = self.bounds(flat)
            if lo is None or hi is None or hi - lo > 4 * size:
                return None
            a = int(math.floor(lo)) + 1 if lo_x and lo == lo.to_integral_value() else int(math.ceil(lo))
            b = int(math.ceil(hi)) - 1 if hi_x and hi == hi.to_integral_value() else int(math.floor(hi))
            cands = list(range(a, b + 1)) + ([True, False] if "boolean" in types else []) + \
                ([None] if "null" in types else [])
        else:
            return None
        vals = []
        for v in cands:
            if isinstance(v, (dict, list)):
                return None
            if self.value_valid(v, flat, base, 0) and not any(json_eq(v, w) for w in vals):
                vals.append(v)
            if len(vals) > size:
                return None
        return vals

    def _build_unique(self, nt, domains, lo, hi, ptr) -> bool:
        """``uniqueItems`` over finite item domains: the rules remember the set of
        values used so far (at most 2^8 sets). False when there are too many."""
        k = len(domains) - 1          # the prefix's length; domains[k] is every later item's
        values = []
        for dom in domains:
            for v in dom:
                if not any(json_eq(v, w) for w in values):
                    values.append(v)
        if len(values) > 8:
            return False
        index = [[next(j for j, w in enumerate(values) if json_eq(v, w)) for v in dom] for dom in domains]
        syms = [self.literal_value_symbol(v) for v in values]
        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        # U(i, used): after i items (i counted up to k), the values in the bit set used
        U = StateSymbols(lambda i, used: f"{nt}_u{i}s{used}")

        if lo == 0:
            self.rule(nt, [self.punct("[]")], ptr)
        if hi is None or hi >= 1:
            for j in index[0]:
                self.rule(nt, [LB, syms[j], U(min(1, k), 1 << j), RB], ptr)
        while U:
            (i, used), name = U.pop()
            n = bin(used).count("1")
            if n >= lo:
                self.rule(name, [], ptr)
            if hi is None or n < hi:
                for j in index[min(i, k)]:
                    if not used >> j & 1:
                        self.rule(name, [CM, syms[j], U(min(i + 1, k), used | 1 << j)], ptr)
        return True

    def _build_contains(self, nt, d, base, ptr, prefix, rest, lo, hi, limit):
        """Array rules counting the items valid under ``contains`` (each item is
        split into its schema and ``contains``, or its schema and the complement of
        ``contains``): at least ``minContains`` (default 1), at most ``maxContains``.
        The ``contains__`` merged in by ``allOf`` need an item each: a bit of state
        per one, every item in it or in its complement."""
        cont = d["contains"]
        lo_c = d.get("minContains", 1) if self.draft >= 2019 else 1
        hi_c = d.get("maxContains") if self.draft >= 2019 else None
        lo_c = math.ceil(lo_c) if num(lo_c) is not None else 1
        hi_c = math.floor(hi_c) if num(hi_c) is not None else None
        neg = self.complement(cont, self.base(cont, base))
        if neg is None:
            self.problem("contains", ptr + "/contains", "its complement cannot be written (see the "
                         "Complements section of docs/json-schema.md)")
            neg, lo_c, hi_c = True, 0, None
        # more contains (merged by allOf, each at least once): a bit each, an item in
        # each or in its complement
        more = []
        for x in d.get("contains__", ()):
            nx = self.complement(x, self.base(x, base))
            if nx is None:
                self.problem("contains", ptr + "/contains", "its complement cannot be written (see the "
                             "Complements section of docs/json-schema.md)")
                continue
            more.append((x, nx))
        if len(more) > 3:
            self.problem("contains", ptr + "/contains", "more than 4 contains in one array (allOf)")
            more = more[:3]
        full = (1 << len(more)) - 1
        if hi_c is not None and hi_c < lo_c or hi is not None and hi < lo_c:
            return
        cap = hi_c if hi_c is not None else lo_c
        if (limit + 2) * (cap + 1) > 20000:
            self.problem("minContains" if hi_c is None else "maxContains", ptr, "too many items to count")
            return
        k = len(prefix)

        def elems(i, m):
            """``(symbol, bits)`` of item ``i`` in (m = 1) or outside contains, each
            choice of the other contains it meets (its bits)."""
            s = prefix[i] if i < k else rest
            where = f"{ptr}/prefixItems/{i}" if i < k else f"{ptr}/items"
            out = []
            for bits in range(full + 1):
                sub = conj(s, cont if m else neg)
                for j, (x, nx) in enumerate(more):
                    sub = conj(sub, x if bits >> j & 1 else nx)
                if sub is not False:
                    out.append((self.symbol(sub, self.base(s, base), where), bits))
            return out

        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        src = ptr
        # T(i, c): after i items (saturating at limit when unbounded), c of them valid
        # under contains (saturating at cap when maxContains is absent)
        T = StateSymbols(lambda i, c, b: f"{nt}_t{i}c{c}" + (f"b{b}" if more else ""))

        def step(i, c, m):
            c2 = c + m if hi_c is not None else min(c + m, cap)
            i2 = i + 1 if hi is not None or i + 1 < limit else limit
            return None if hi_c is not None and c2 > hi_c else (i2, c2)

        if lo == 0 and lo_c <= 0 and not more:
            self.rule(nt, [self.punct("[]")], src)
        if hi is None or hi >= 1:
            for m in (0, 1):
                nxt = step(0, 0, m)
                for e, bits in (elems(0, m) if nxt is not None else ()):
                    self.rule(nt, [LB, e, T(*nxt, bits), RB], src)
        while T:
            (i, c, b), name = T.pop()
            if i >= lo and c >= lo_c and b == full:
                self.rule(name, [], src)
            if hi is None or i < hi:
                for m in (0, 1):
                    nxt = step(i, c, m)
                    for e, bits in (elems(i, m) if nxt is not None else ()):
                        self.rule(name, [CM, e, T(*nxt, b | bits)], src)

    def _build_array(self, nt, d, base, ptr):
        prefix, rest = self.array_parts(d)
        lo = d.get("minItems", 0) or 0
        hi = d.get("maxItems")
        if not isinstance(lo, int) or isinstance(lo, bool):
            lo = int(math.ceil(lo)) if num(lo) is not None else 0
        if hi is not None and (not isinstance(hi, int) or isinstance(hi, bool)):
            hi = int(math.floor(hi)) if num(hi) is not None else None
        k = len(prefix)
        if rest is False:
            hi = k if hi is None else min(hi, k)
        for i, p in enumerate(prefix):
            if p is False:
                hi = i if hi is None else min(hi, i)
                break
        if hi is not None and hi < lo:
            return
        if d.get("uniqueItems") is True and (hi is None or hi > 1):
            domains = [self.finite_domain(x, base) for x in prefix + [rest]]
            if "contains" not in d and all(x is not None for x in domains) and \
                    self._build_unique(nt, domains, lo, hi, ptr):
                return
            self.unique_items_not_enforced(ptr + "/uniqueItems")
        limit = max(lo, k)
        if "contains" in d:
            if hi is not None and hi - limit > 2000 or limit > 2000:
                self.problem("maxItems" if hi is not None and hi - limit > 2000 else "minItems", ptr,
                             "item counts above 2000 beside `contains` are not expanded")
                hi = None if hi is not None and hi > 2000 else hi
                lo = min(lo, 2000)
                limit = max(lo, k)
            self._build_contains(nt, d, base, ptr, prefix, rest, lo, hi, limit)
            return

        def elem(i):
            s = prefix[i] if i < k else rest
            where = f"{ptr}/prefixItems/{i}" if i < k else f"{ptr}/items"
            return self.symbol(s, self.base(s, base), where)

        LB, RB, CM = self.punct("["), self.punct("]"), self.punct(",")
        src = ptr
        star = f"{nt}_t"

        def T(i):
            if hi is None and i >= limit:
                return star
            return f"{nt}_t{i}"

        made = set()
        #: items past ``first`` (all of them ``rest``) are counted in binary when their
        #: bounds are far apart (:meth:`_counted_items`); the chain stops at ``first``
        first = max(k, 1)
        counted = (hi is not None and hi - first > LINEAR_ITEMS) or lo - first > LINEAR_ITEMS

        def build_T(i):
            name = T(i)
            if name in made:
                return name
            made.add(name)
            if name == star:
                self.rule(star, [], src)
                self.rule(star, [star, CM, elem(limit)], src)
                return name
            if counted and i == first:
                tail = build_T(limit) if hi is None else None      # the unbounded rest
                self._counted_items(name, [CM, elem(first)], max(lo - first, 0),
                                    None if hi is None else hi - first, f"{nt}_", made, src, tail)
                return name
            if i >= lo:
                self.rule(name, [], src)
            if hi is None or i < hi:
                self.rule(name, [CM, elem(i), T(i + 1)], src)
            return name

        if lo == 0:
            self.rule(nt, [self.punct("[]")], src)
        if hi is None or hi >= 1:
            self.rule(nt, [LB, elem(0), T(1), RB], src)
            i = 1
            while True:
                build_T(i)
                if T(i) == star or (hi is not None and i >= hi) or (counted and i == first):
                    break
                i += 1

    def _counted_items(self, name, x, lo, hi, prefix, made, src, tail=None):
        """Rules for ``name`` -> ``x`` repeated ``lo`` to ``hi`` times with O(log)
        nonterminals (``hi`` None: ``lo`` copies, then the symbol ``tail``, the array's
        unbounded rest), all LR(1): ``A_j`` is exactly ``2^j`` copies
        (``A_j -> A_{j-1} A_{j-1}``), ``L_j`` 0 to ``2^j - 1`` (``L_j -> L_{j-1} | A_{j-1}
        L_{j-1}``), ``U_m`` 0 to ``m`` (``U_m -> L_n | A_n U_{m - 2^n}`` with ``2^n <= m``);
        ``name -> A_{j1} ... A_{jt} U_{hi-lo}`` for the set bits of ``lo``. Each choice is
        made when the item after a complete block starts (``,``) or the array ends (``]``),
        so a parser counts on its stack: an array of n items keeps O(log n) entries."""
        def A(j):
            nm = f"{prefix}a{j}"
            if nm not in made:
                made.add(nm)
                self.rule(nm, x if j == 0 else [A(j - 1), A(j - 1)], src)
            return nm

        def L(j):
            nm = f"{prefix}l{j}"
            if nm not in made:
                made.add(nm)
                if j == 0:
                    self.rule(nm, [], src)
                else:
                    self.rule(nm, [L(j - 1)], src)
                    self.rule(nm, [A(j - 1), L(j - 1)], src)
            return nm

        def U(m):
            if (m + 1) & m == 0:
                return L((m + 1).bit_length() - 1)
            nm = f"{prefix}u{m}"
            if nm not in made:
                made.add(nm)
                n = m.bit_length() - 1
                self.rule(nm, [L(n)], src)
                self.rule(nm, [A(n), U(m - (1 << n))], src)
            return nm

        blocks = [A(j) for j in range(lo.bit_length() - 1, -1, -1) if lo >> j & 1]
        self.rule(name, blocks + [tail if hi is None else U(hi - lo)], src)
