"""Rewrites of the recursive components of a grammar's corner graphs, for the normal
form (:mod:`.normal_form`): right recursion removed ((c): the mirrored Paull elimination
or the right-corner transform, whichever is smaller) and indirect left recursion made
direct ((d), bounded growth); and the working grammar they rewrite in place."""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Sequence


# A working rule: (expansion, index of the user's rule it comes from).
WRule = tuple[tuple[str, ...], int]
Work = dict[str, list[WRule]]


def sccs(nodes: Sequence[Hashable], succ: Callable[[Hashable], Iterable[Hashable]]) -> list[list]:
    """Tarjan's strongly connected components (iterative), deterministic
    order (reverse topological: a component comes before those reaching it)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list[list] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succ(root)))]
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ(w))))
                    advanced = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comp.reverse()
                out.append(comp)
    return out


class Namer:
    """Fresh nonterminal names ``base#tagN``. A clone is an overlay on its parent (which
    must not name anything while the clone lives): cloning costs nothing, however many
    names exist (a schema's normal form clones once per recursive component)."""

    def __init__(self, taken: Iterable[str], parent: "Namer | None" = None):
        self.taken = set(taken)
        self.counters: dict[tuple[str, str], int] = {}
        self.parent = parent

    def _is_taken(self, name: str) -> bool:
        return name in self.taken or (self.parent is not None and self.parent._is_taken(name))

    def _counter(self, key) -> int:
        n = self.counters.get(key)
        if n is None:
            n = self.parent._counter(key) if self.parent is not None else 0
        return n

    def __call__(self, base: str, tag: str) -> str:
        base = base.split("#", 1)[0]
        n = self._counter((base, tag))
        while True:
            n += 1
            name = f"{base}#{tag}{n}"
            if not self._is_taken(name):
                break
        self.counters[(base, tag)] = n
        self.taken.add(name)
        return name

    def clone(self) -> "Namer":
        return Namer((), parent=self)

    def adopt(self, other: "Namer") -> None:
        """Take the names a clone of this namer gave."""
        assert other.parent is self
        self.taken |= other.taken
        self.counters.update(other.counters)


def _corner_succ(work: Work, right: bool):
    def succ(v: str, among=None) -> list[str]:
        out = []
        for exp, _ in work.get(v, ()):
            c = exp[-1] if right else exp[0]
            if c in work and (among is None or c in among) and (right or c != v):
                out.append(c)
        return out
    return succ


def remove_right_recursion(work: Work, start: str, namer: Namer) -> None:
    """(c), in place: for every recursive component of the right-corner
    graph, try both the mirrored Paull elimination and the right-corner
    transform and keep the smaller result."""
    succ = _corner_succ(work, True)
    comps = sccs(list(work), succ)
    uses = _Uses(work, comps)
    for comp in comps:
        if len(comp) == 1 and not any(e[-1] == comp[0] for e, _ in work[comp[0]]):
            continue
        entries = [v for v in comp if v == start or uses.count.get(v)]
        trials = []
        for method in (_paull_right, _right_corner_transform):
            sub = {v: list(work[v]) for v in comp}
            nm = namer.clone()
            method(sub, comp, entries, nm)
            trials.append((_live_size(sub, entries), len(trials), sub, nm))
        _, _, sub, nm = min(trials, key=lambda t: (t[0], t[1]))
        namer.adopt(nm)
        for v in comp:
            uses.remove(v, work.pop(v, ()))
        work.update(sub)
        for v, rs in sub.items():
            uses.add(v, rs)


class _Uses:
    """The entries of a component (the members whose language is needed outside its own
    right-corner edges: the start symbol and every member used anywhere except as the last
    symbol of a member's rule), kept up to date as components are rewritten: per member of a
    component, how many times it is used anywhere except as the last symbol of a rule of
    its own component (one pass over the grammar, not one per component)."""

    def __init__(self, work: Work, comps: list):
        self.comp_of = {v: i for i, comp in enumerate(comps) for v in comp}
        self.count: dict[str, int] = {}
        for a, rs in work.items():
            self.add(a, rs)

    def _occurrences(self, a: str, rs):
        comp_of = self.comp_of
        ca = comp_of.get(a)
        for exp, _ in rs:
            last = len(exp) - 1
            for i, s in enumerate(exp):
                cs = comp_of.get(s)
                if cs is not None and not (i == last and cs == ca):
                    yield s

    def add(self, a: str, rs) -> None:
        count = self.count
        for s in self._occurrences(a, rs):
            count[s] = count.get(s, 0) + 1

    def remove(self, a: str, rs) -> None:
        count = self.count
        for s in self._occurrences(a, rs):
            count[s] -= 1


def _live_size(sub: Work, entries: list[str]) -> int:
    seen = set(entries)
    stack = list(entries)
    size = 0
    while stack:
        a = stack.pop()
        for exp, _ in sub.get(a, ()):
            size += 1
            for s in exp:
                if s in sub and s not in seen:
                    seen.add(s)
                    stack.append(s)
    return size


def _paull_right(sub: Work, comp: list[str], entries: list[str], namer: "Namer") -> None:
    """Mirrored Paull with sharing: eliminate the members one at a time
    (greedy minimum fill), each first rewritten without direct right
    recursion, then substituted at the end of every remaining member's rules
    that ends with it."""
    remaining = list(comp)
    while remaining:
        rem = set(remaining)
        v = min(remaining, key=lambda v: _right_step(sub, v, rem, None))
        _right_step(sub, v, rem, namer)
        remaining.remove(v)


def _right_step(sub: Work, v: str, rem: set[str], namer: "Namer | None") -> int:
    """Eliminate ``v`` from the remaining members ``rem`` (namer given), or
    just return the number of rules that would add (namer None).

    ``v -> d v | f`` becomes ``v -> f | V f`` with ``V -> d | V d`` (the
    design's rewrite; V = d+ is left recursive). Then v's rules are grouped
    by right corner: those ending with the same remaining member w share one
    prefix nonterminal ``H -> phi1 | phi2 ...`` (``v -> H w``), and v's exits
    (rules ending outside ``rem``) one nonterminal ``X``, whenever sharing is
    cheaper than copying them into every rule ``u -> gamma v``; that keeps
    the elimination polynomial (plain Paull substitution can be exponential).
    Finally every rule ``u -> gamma v`` of a remaining member u becomes
    ``u -> gamma rhs`` for each of v's (compact) rules."""
    rs = sub[v]
    refs = 0
    for u in rem:
        if u != v:
            for e, _ in sub[u]:
                if e[-1] == v:
                    refs += 1
    selfs = [(e[:-1], oi) for e, oi in rs if e[-1] == v]
    others = [(e, oi) for e, oi in rs if e[-1] != v]
    big = None
    if selfs:
        big = namer(v, "r") if namer is not None else "\0"
        sub_big = _dedupe([(d, oi) for d, oi in selfs] + [((big,) + d, oi) for d, oi in selfs])
        full = _dedupe(others + [((big,) + f, oi) for f, oi in others])
    else:
        sub_big = []
        full = others
    groups: dict[str | None, list[WRule]] = {}
    for e, oi in full:
        key = e[-1] if (e[-1] in rem and e[-1] != v) else None
        groups.setdefault(key, []).append((e, oi))
    compact: list[WRule] = []
    shared: list[tuple[str | None, list[WRule]]] = []
    for key, alts in groups.items():
        if key is None:
            body = alts
        else:
            compact.extend(a for a in alts if len(a[0]) == 1)
            body = [(e[:-1], oi) for e, oi in alts if len(e) > 1]
        n = len(body)
        if n >= 2 and refs * n > n + refs + 2:
            shared.append((key, body))
        else:
            compact.extend(((e + (key,)) if key is not None else e, oi) for e, oi in body)
    if namer is None:
        n_compact = len(compact) + len(shared)
        return (len(sub_big) + sum(len(b) for _, b in shared) + (n_compact - len(rs))
                + refs * (n_compact - 1))
    if big is not None:
        sub[big] = sub_big
    for key, body in shared:
        h = namer(v, "h" if key is not None else "x")
        sub[h] = _dedupe(body)
        compact.append(((h, key) if key is not None else (h,), body[0][1]))
    sub[v] = _dedupe(compact)
    repl = sub[v]
    for u in rem:
        if u == v:
            continue
        if not any(e[-1] == v for e, _ in sub[u]):
            continue
        new: list[WRule] = []
        for e, oi in sub[u]:
            if e[-1] == v:
                new.extend((e[:-1] + f, oi) for f, _ in repl)
            else:
                new.append((e, oi))
        sub[u] = _dedupe(new)
    return 0


def _right_corner_transform(sub: Work, comp: list[str], entries: list[str],
                            namer: "Namer") -> None:
    """Right-corner transform of one component (the mirror image of the
    left-corner transform, restricted to the component, as in Moore 2000).

    Rules of members split into exits ``X -> beta`` (last symbol outside the
    component) and edges ``Y -> gamma X``. For each entry A, with
    U(A) = members reachable by unit edges only and R(A) = members reachable
    along a path with a non-empty gamma, the new nonterminal A#X (X in R(A))
    derives the non-empty gamma-strings of the paths from A to X:

        A   -> beta          for exits X -> beta, X in U(A)
        A   -> A#X beta      for exits X -> beta, X in R(A)
        A#X -> gamma         for edges Y -> gamma X, gamma non-empty, Y in U(A)
        A#X -> A#Y gamma     for edges Y -> gamma X, Y in R(A)   (gamma may be empty)

    A#X only ever appears first in a rule, so it is never a right corner; the
    right corners left are exits and members that are entries, whose new
    rules all end with exits."""
    cs = set(comp)
    exits: dict[str, list[WRule]] = {v: [] for v in comp}
    into: dict[str, list[tuple[str, tuple[str, ...], int]]] = {v: [] for v in comp}
    out_edges: dict[str, list[tuple[str, bool]]] = {v: [] for v in comp}
    for y in comp:
        for exp, oi in sub[y]:
            if exp[-1] in cs:
                x = exp[-1]
                into[x].append((y, exp[:-1], oi))
                out_edges[y].append((x, len(exp) > 1))
            else:
                exits[y].append((exp, oi))
    new: Work = {}
    for a in entries:
        # (member, seen a non-empty gamma)
        seen = {(a, False)}
        stack = [(a, False)]
        while stack:
            y, f = stack.pop()
            for x, nonempty in out_edges[y]:
                st = (x, f or nonempty)
                if st not in seen:
                    seen.add(st)
                    stack.append(st)
        U = [x for x in comp if (x, False) in seen]
        Rs = [x for x in comp if (x, True) in seen]
        rset = set(Rs)
        uset = set(U)
        name = {x: namer(a, "c") for x in Rs}
        rules_a: list[WRule] = []
        for x in U:
            rules_a.extend(exits[x])
        for x in Rs:
            rules_a.extend(((name[x],) + beta, oi) for beta, oi in exits[x])
        new[a] = _dedupe(rules_a)
        for x in Rs:
            rx: list[WRule] = []
            for y, gamma, oi in into[x]:
                if gamma and y in uset:
                    rx.append((gamma, oi))
                if y in rset:
                    rx.append(((name[y],) + gamma, oi))
            new[name[x]] = _dedupe(rx)
    for v in comp:
        sub.pop(v, None)
    sub.update(new)


def left_indirect_to_direct(work: Work, namer: "Namer", cap: float) -> None:
    """(d), in place, best effort: inside each left-corner component with more
    than one member, eliminate members (greedy minimum fill) until only
    direct left recursion is left; a component whose rules would grow more
    than ``cap`` times is left as it is."""
    succ = _corner_succ(work, False)

    def corner(e):
        return e[0]
    for comp in sccs(list(work), succ):
        if len(comp) == 1:
            continue
        snapshot = {v: list(work[v]) for v in comp}
        before = sum(len(work[v]) for v in comp)
        created: list[str] = []
        nm = namer.clone()
        ok = True
        remaining = list(comp)
        while remaining:
            rem = set(remaining)
            subs = sccs(remaining, lambda v: succ(v, rem))
            nontrivial = [s for s in subs if len(s) > 1]
            if not nontrivial:
                break
            scope_of: dict[str, set[str]] = {}
            for s in nontrivial:
                ss = set(s)
                for v in s:
                    scope_of[v] = ss
            candidates = [v for s in nontrivial for v in s]
            v = min(candidates, key=lambda v: _fill(work, v, scope_of[v], corner))
            scope = scope_of[v]
            _eliminate_one(work, v, [u for u in remaining if u != v and u in scope], nm, created)
            remaining.remove(v)
            now = sum(len(work[u]) for u in comp) + sum(len(work[u]) for u in created)
            if now > cap * before + 8:
                ok = False
                break
        if ok:
            namer.adopt(nm)
        else:
            for u in created:
                work.pop(u, None)
            work.update(snapshot)


def _fill(work: Work, v: str, scope: set[str], corner) -> int:
    """Growth caused by eliminating v now (greedy minimum-fill order)."""
    rs = work[v]
    n_self = sum(1 for e, _ in rs if corner(e) == v)
    n_other = len(rs) - n_self
    n_new = n_other * (2 if n_self else 1)
    refs = 0
    for u in scope:
        if u == v:
            continue
        for e, _ in work[u]:
            if corner(e) == v:
                refs += 1
    return refs * (n_new - 1) + (n_other + n_self if n_self else 0)


def _eliminate_one(work: Work, v: str, into: list[str], namer: Namer,
                   created: list[str]) -> None:
    """(d): substitute v at the start of the rules of ``into`` that begin with
    it: ``v -> v d | f`` (L(v) = f d*), so ``u -> v g`` becomes
    ``u -> f g | f V g`` with ``V -> d | V d``."""
    rs = work[v]
    selfs = [(e[1:], oi) for e, oi in rs if e[0] == v]
    others = [(e, oi) for e, oi in rs if e[0] != v]
    big = None
    if selfs:
        big = namer(v, "l")
        created.append(big)
        work[big] = _dedupe([(d, oi) for d, oi in selfs] + [((big,) + d, oi) for d, oi in selfs])
    for u in into:
        new = []
        for e, oi in work[u]:
            if e[0] == v:
                for f, _ in others:
                    new.append((f + e[1:], oi))
                    if big is not None:
                        new.append((f + (big,) + e[1:], oi))
            else:
                new.append((e, oi))
        work[u] = _dedupe(new)


def _dedupe(rs: list[WRule]) -> list[WRule]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for e, oi in rs:
        if e not in seen:
            seen.add(e)
            out.append((e, oi))
    return out
