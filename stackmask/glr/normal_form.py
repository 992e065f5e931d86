"""The grammar's normal form: same language (minus the empty string), shaped
so that the LR parser's chain of reductions between two shifts is bounded.

``normalize(g)`` returns a :class:`NormalForm` whose grammar has

(a) no epsilon rules: nullable symbols are expanded away (a right-hand side
    with more than ``MAX_NULLABLE`` nullable symbols is first split into a
    chain of suffix nonterminals so the ``2**k`` expansion stays small);
(b) no cycles ``A =>+ A``: a grammar with one is rejected with a
    :class:`GrammarError` naming the user's rules on the cycle; the one
    exception is the identity rule ``A -> A`` (also what ``A -> A B`` becomes
    when B derives epsilon, as in Lark's own expansion of ``[x]*``), which
    adds no sentence and is dropped;
(c) no right recursion, direct or indirect: no ``A =>+ alpha A`` with
    ``alpha`` non-empty. Each strongly connected component of the
    right-corner graph (edge ``A -> B`` when some rule ``A -> gamma B``) is
    rewritten twice and the smaller result kept:
    - the mirror image of Paull's algorithm, eliminating members one at a
      time in a greedy minimum-fill order: ``v -> d v | f`` first becomes the
      design's ``v -> f | v#rN f``, ``v#rN -> d | v#rN d`` (left recursive),
      then v is substituted into the remaining members' rules that end with
      it; v's rules sharing a right corner share one prefix nonterminal
      (``v#hN``, and ``v#xN`` for its exits) whenever copying them would cost
      more (plain Paull substitution can grow exponentially);
    - the right-corner transform (mirror of the left-corner transform,
      restricted to the component; new nonterminals ``A#cN``).
    (On the benchmark grammars the Paull form is smaller or equal in every
    component but one, Java's ``expression``: 8 vs 7 rules.)
(d) no hidden left recursion (it disappears with (a)), and indirect left
    recursion turned into direct left recursion by the same elimination on
    the left-corner graph (``v -> v d | f`` substituted as ``f | f v#lN``),
    unless the component would grow past ``LEFT_GROWTH_CAP`` times its
    rules (+8); direct left recursion is kept (LR parsers like it).

New nonterminals are named ``<user name>#<tag><n>``; ``#`` cannot occur in a
Lark rule name, so they never clash with the user's. Every rule keeps in
``source`` the user's rule it came from, and that rule's priority.

``check_normal_form(g)`` verifies (a), (b) and (c) and raises
:class:`GrammarError` naming the offending rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Sequence

from ..errors import GrammarError
from ..grammar import Grammar, Rule

MAX_NULLABLE = 4          # nullable symbols per rule before the rule is split
LEFT_GROWTH_CAP = 2.0     # (d): max growth factor of a left-recursive component

__all__ = ["NormalForm", "normalize", "check_normal_form", "nullable_symbols"]


@dataclass(frozen=True)
class NormalForm:
    grammar: Grammar        # same terminals/ignore/start name; rules in normal form
    accepts_empty: bool     # the user's language contains the empty string
    #                         (the normal form itself never derives epsilon)


# A working rule: (expansion, index of the user's rule it comes from).
_WRule = tuple[tuple[str, ...], int]
_Work = dict[str, list[_WRule]]


# ---------------------------------------------------------------------------
# generic helpers

def nullable_symbols(rules: Iterable[Rule]) -> set[str]:
    """Nonterminals that derive the empty string."""
    rules = list(rules)
    nullable: set[str] = set()
    changed = True
    while changed:
        changed = False
        for r in rules:
            if r.origin not in nullable and all(s in nullable for s in r.expansion):
                nullable.add(r.origin)
                changed = True
    return nullable


def _sccs(nodes: Sequence[Hashable], succ: Callable[[Hashable], Iterable[Hashable]]) -> list[list]:
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


def _find_path(src: str, dst: str, edges: dict[str, list[tuple[str, object]]],
               allowed: set[str]) -> list[object] | None:
    """BFS path from src to dst inside ``allowed``; returns the edge labels."""
    prev: dict[str, tuple[str, object] | None] = {src: None}
    queue = [src]
    for v in queue:
        for w, label in edges.get(v, ()):
            if w not in allowed or w in prev:
                continue
            prev[w] = (v, label)
            if w == dst:
                labels = []
                x = w
                while x != src:
                    p, lab = prev[x]  # type: ignore[misc]
                    labels.append(lab)
                    x = p
                labels.reverse()
                return labels
            queue.append(w)
    return None


def _cycle_through(a: str, b: str, first_label: object, edges: dict[str, list[tuple[str, object]]],
                   comp: set[str]) -> list[object]:
    """Labels of a cycle that takes edge a->b (label first_label) then returns to a."""
    if a == b:
        return [first_label]
    back = _find_path(b, a, edges, comp)
    return [first_label] + (back or [])


# ---------------------------------------------------------------------------
# the normal form

class _Namer:
    """Fresh nonterminal names ``base#tagN``. A clone is an overlay on its parent (which
    must not name anything while the clone lives): cloning costs nothing, however many
    names exist (a schema's normal form clones once per recursive component)."""

    def __init__(self, taken: Iterable[str], parent: "_Namer | None" = None):
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

    def clone(self) -> "_Namer":
        return _Namer((), parent=self)

    def adopt(self, other: "_Namer") -> None:
        """Take the names a clone of this namer gave."""
        assert other.parent is self
        self.taken |= other.taken
        self.counters.update(other.counters)


def normalize(g: Grammar, left_growth_cap: float = LEFT_GROWTH_CAP) -> NormalForm:
    """The normal form of ``g`` (see the module docstring).

    ``left_growth_cap`` bounds step (d) (indirect -> direct left recursion):
    a left-recursive component whose rules would grow past
    ``cap * before + 8`` is left as it is; 0 disables step (d)."""
    user = list(g.rules)
    nullable = nullable_symbols(user)
    accepts_empty = g.start in nullable
    namer = _Namer([r.origin for r in user] + list(g.terminal_names))

    work: _Work = {}
    for i, r in enumerate(user):
        work.setdefault(r.origin, []).append((r.expansion, i))
    work = _clean(work, g, allow_empty=True)

    # (a) split long right-hand sides, then expand nullable symbols away
    work = _split_nullable(work, nullable, namer)
    work = _remove_epsilon(work, nullable)
    work = _clean(work, g)
    if not work:
        if accepts_empty:
            raise GrammarError("the grammar only derives the empty string; "
                               "stackmask needs a language with at least one non-empty sentence",
                               name=g.start)
        raise GrammarError("the grammar derives no sentence at all", name=g.start)

    # (b) cycles
    _check_unit_cycles(work, g)

    # (c) right recursion
    _remove_right_recursion(work, g.start, namer)
    # (d) indirect left recursion -> direct (best effort, bounded growth)
    if left_growth_cap > 0:
        _left_indirect_to_direct(work, namer, left_growth_cap)

    work = _clean(work, g)
    ng = _to_grammar(work, g)
    check_normal_form(ng)
    return NormalForm(grammar=ng, accepts_empty=accepts_empty)


def _to_grammar(work: _Work, g: Grammar) -> Grammar:
    user = g.rules
    out: list[Rule] = []
    order = [g.start] + [a for a in work if a != g.start]
    for a in order:
        for exp, oi in work.get(a, ()):
            u = user[oi]
            out.append(Rule(origin=a, expansion=exp, source=u.source or u.origin, priority=u.priority))
    return Grammar(terminals=g.terminals, rules=tuple(out), start=g.start, ignore=g.ignore, modes=g.modes)


def _clean(work: _Work, g: Grammar, allow_empty: bool = False) -> _Work:
    """Drop unproductive and unreachable rules, and duplicates."""
    terms = g.terminal_names
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for a, rs in work.items():
            if a in productive:
                continue
            for exp, _ in rs:
                if all(s in terms or s in productive for s in exp):
                    productive.add(a)
                    changed = True
                    break
    if g.start not in productive:
        return {}
    reach = {g.start}
    stack = [g.start]
    while stack:
        a = stack.pop()
        for exp, _ in work.get(a, ()):
            if all(s in terms or s in productive for s in exp):
                for s in exp:
                    if s not in terms and s not in reach:
                        reach.add(s)
                        stack.append(s)
    out: _Work = {}
    for a, rs in work.items():
        if a not in reach:
            continue
        seen: set[tuple[str, ...]] = set()
        keep = []
        for exp, oi in rs:
            if exp in seen or not all(s in terms or s in productive for s in exp):
                continue
            if not exp and not allow_empty:
                continue
            seen.add(exp)
            keep.append((exp, oi))
        if keep:
            out[a] = keep
    return out


def _split_nullable(work: _Work, nullable: set[str], namer: _Namer) -> _Work:
    """Split rules with more than MAX_NULLABLE nullable symbols into a chain
    ``A -> X1..Xj A#s1``, ``A#s1 -> Xj+1 .. A#s2``, ... so that each piece
    holds at most MAX_NULLABLE nullable symbols (its tail included). The new
    tails are added to ``nullable`` when the rest they stand for is."""
    out: _Work = {}
    for a, rs in list(work.items()):
        for exp, oi in rs:
            origin = a
            while sum(1 for s in exp if s in nullable) > MAX_NULLABLE:
                # the head keeps MAX_NULLABLE - 1 nullable symbols, the tail is one more
                cnt = 0
                cut = len(exp)
                for i, s in enumerate(exp):
                    if s in nullable:
                        cnt += 1
                        if cnt == MAX_NULLABLE:
                            cut = i
                            break
                head, rest = exp[:cut], exp[cut:]
                tail = namer(a, "s")
                if all(s in nullable for s in rest):
                    nullable.add(tail)
                out.setdefault(origin, []).append((head + (tail,), oi))
                origin, exp = tail, rest
            out.setdefault(origin, []).append((exp, oi))
    return out


def _remove_epsilon(work: _Work, nullable: set[str]) -> _Work:
    out: _Work = {}
    for a, rs in work.items():
        lst: list[_WRule] = []
        for exp, oi in rs:
            pos = [i for i, s in enumerate(exp) if s in nullable]
            for mask in range(1 << len(pos)):
                drop = {pos[j] for j in range(len(pos)) if mask >> j & 1}
                e = tuple(s for i, s in enumerate(exp) if i not in drop)
                # ``A -> A`` (also what ``A -> A B`` becomes when B is
                # dropped) is an identity step: it adds no sentence, only
                # infinite ambiguity. Lark's own ``[x]*`` produces it, so it
                # is dropped rather than reported as a cycle.
                if e and e != (a,):
                    lst.append((e, oi))
        out[a] = lst
    return out


def _check_unit_cycles(work: _Work, g: Grammar) -> None:
    edges: dict[str, list[tuple[str, object]]] = {}
    for a, rs in work.items():
        for exp, oi in rs:
            if len(exp) == 1 and exp[0] in work:
                edges.setdefault(a, []).append((exp[0], oi))
    comps = _sccs(list(work), lambda v: [w for w, _ in edges.get(v, ())])
    bad = []
    for comp in comps:
        cs = set(comp)
        for a in comp:
            for b, oi in edges.get(a, ()):
                if b in cs:
                    bad.append(_cycle_through(a, b, oi, edges, cs))
                    break
            else:
                continue
            break
    if bad:
        user = g.rules
        parts = []
        for cyc in bad:
            parts.append(" ; ".join(_describe_user_rule(user[oi]) for oi in cyc))  # type: ignore[index]
        first = user[bad[0][0]]  # type: ignore[index]
        raise GrammarError("the grammar has a derivation cycle (a nonterminal derives itself, "
                           "A =>+ A), which cannot be parsed; rules on the cycle: "
                           + " || ".join(parts), name=first.source or first.origin)


def _describe_user_rule(r: Rule) -> str:
    s = str(r)
    if r.source and r.source != r.origin:
        s += f" (from rule {r.source!r})"
    return s


def _corner_succ(work: _Work, right: bool):
    def succ(v: str, among=None) -> list[str]:
        out = []
        for exp, _ in work.get(v, ()):
            c = exp[-1] if right else exp[0]
            if c in work and (among is None or c in among) and (right or c != v):
                out.append(c)
        return out
    return succ


def _remove_right_recursion(work: _Work, start: str, namer: _Namer) -> None:
    """(c), in place: for every recursive component of the right-corner
    graph, try both the mirrored Paull elimination and the right-corner
    transform and keep the smaller result."""
    succ = _corner_succ(work, True)
    comps = _sccs(list(work), succ)
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

    def __init__(self, work: _Work, comps: list):
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


def _live_size(sub: _Work, entries: list[str]) -> int:
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


def _paull_right(sub: _Work, comp: list[str], entries: list[str], namer: "_Namer") -> None:
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


def _right_step(sub: _Work, v: str, rem: set[str], namer: "_Namer | None") -> int:
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
    groups: dict[str | None, list[_WRule]] = {}
    for e, oi in full:
        key = e[-1] if (e[-1] in rem and e[-1] != v) else None
        groups.setdefault(key, []).append((e, oi))
    compact: list[_WRule] = []
    shared: list[tuple[str | None, list[_WRule]]] = []
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
        new: list[_WRule] = []
        for e, oi in sub[u]:
            if e[-1] == v:
                new.extend((e[:-1] + f, oi) for f, _ in repl)
            else:
                new.append((e, oi))
        sub[u] = _dedupe(new)
    return 0


def _right_corner_transform(sub: _Work, comp: list[str], entries: list[str],
                            namer: "_Namer") -> None:
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
    exits: dict[str, list[_WRule]] = {v: [] for v in comp}
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
    new: _Work = {}
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
        rules_a: list[_WRule] = []
        for x in U:
            rules_a.extend(exits[x])
        for x in Rs:
            rules_a.extend(((name[x],) + beta, oi) for beta, oi in exits[x])
        new[a] = _dedupe(rules_a)
        for x in Rs:
            rx: list[_WRule] = []
            for y, gamma, oi in into[x]:
                if gamma and y in uset:
                    rx.append((gamma, oi))
                if y in rset:
                    rx.append(((name[y],) + gamma, oi))
            new[name[x]] = _dedupe(rx)
    for v in comp:
        sub.pop(v, None)
    sub.update(new)


def _left_indirect_to_direct(work: _Work, namer: "_Namer", cap: float) -> None:
    """(d), in place, best effort: inside each left-corner component with more
    than one member, eliminate members (greedy minimum fill) until only
    direct left recursion is left; a component whose rules would grow more
    than ``cap`` times is left as it is."""
    succ = _corner_succ(work, False)

    def corner(e):
        return e[0]
    for comp in _sccs(list(work), succ):
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
            subs = _sccs(remaining, lambda v: succ(v, rem))
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


def _fill(work: _Work, v: str, scope: set[str], corner) -> int:
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


def _eliminate_one(work: _Work, v: str, into: list[str], namer: _Namer,
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


def _dedupe(rs: list[_WRule]) -> list[_WRule]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for e, oi in rs:
        if e not in seen:
            seen.add(e)
            out.append((e, oi))
    return out


# ---------------------------------------------------------------------------
# the check

def check_normal_form(g: Grammar) -> None:
    """Raise :class:`GrammarError` unless ``g`` has (a) no epsilon rules,
    (b) no cycle ``A =>+ A`` and (c) no right recursion ``A =>+ alpha A``
    (alpha non-empty). The message names the offending rules."""
    problems: list[str] = []
    names: list[str] = []
    eps = [r for r in g.rules if not r.expansion]
    if eps:
        problems.append("epsilon rules: " + ", ".join(_describe(r) for r in eps))
        names.append(eps[0].source or eps[0].origin)
    nullable = nullable_symbols(g.rules)
    nts = set(g.nonterminals)

    # (b): edge A -> B for A -> alpha B beta, alpha and beta nullable.
    # (c): edge A -> B for A -> gamma B beta, beta nullable; label says gamma is non-empty.
    unit: dict[str, list[tuple[str, object]]] = {}
    rc: dict[str, list[tuple[str, object]]] = {}
    for r in g.rules:
        exp = r.expansion
        n = len(exp)
        for i in range(n - 1, -1, -1):
            s = exp[i]
            if s in nts:
                rc.setdefault(r.origin, []).append((s, (r, i > 0)))
                if all(x in nullable for x in exp[:i]):
                    unit.setdefault(r.origin, []).append((s, (r, False)))
            if s not in nullable:
                break
    order = list(g.nonterminals)
    cyc_msgs = []
    for comp in _sccs(order, lambda v: [w for w, _ in unit.get(v, ())]):
        cs = set(comp)
        for a in comp:
            hit = next(((b, lab) for b, lab in unit.get(a, ()) if b in cs), None)
            if hit is not None:
                labels = _cycle_through(a, hit[0], hit[1], unit, cs)
                cyc_msgs.append(" ; ".join(_describe(lab[0]) for lab in labels))  # type: ignore[index]
                names.append(a)
                break
    if cyc_msgs:
        problems.append("derivation cycles A =>+ A: " + " || ".join(cyc_msgs))
    rr_msgs = []
    for comp in _sccs(order, lambda v: [w for w, _ in rc.get(v, ())]):
        cs = set(comp)
        found = None
        for a in comp:
            for b, lab in rc.get(a, ()):
                if b in cs and lab[1]:  # type: ignore[index]
                    found = (a, b, lab)
                    break
            if found:
                break
        if found:
            a, b, lab = found
            labels = _cycle_through(a, b, lab, rc, cs)
            rr_msgs.append(" ; ".join(_describe(l[0]) for l in labels))  # type: ignore[index]
            names.append(a)
    if rr_msgs:
        problems.append("right recursion A =>+ alpha A: " + " || ".join(rr_msgs))
    if problems:
        raise GrammarError("grammar is not in normal form: " + "; ".join(problems),
                           name=names[0] if names else None)


def _describe(r: Rule) -> str:
    s = str(r)
    if r.source and r.source != r.origin:
        s += f" (from rule {r.source!r})"
    return s
