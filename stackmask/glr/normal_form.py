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
from typing import Iterable

from ..errors import GrammarError
from ..grammar import Grammar, Rule
from .recursion import Namer, Work, WRule, left_indirect_to_direct, remove_right_recursion, sccs

MAX_NULLABLE = 4          # nullable symbols per rule before the rule is split
LEFT_GROWTH_CAP = 2.0     # (d): max growth factor of a left-recursive component

__all__ = ["NormalForm", "normalize", "check_normal_form", "nullable_symbols"]


@dataclass(frozen=True)
class NormalForm:
    grammar: Grammar        # same terminals/ignore/start name; rules in normal form
    accepts_empty: bool     # the user's language contains the empty string
    #                         (the normal form itself never derives epsilon)


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

def normalize(g: Grammar, left_growth_cap: float = LEFT_GROWTH_CAP) -> NormalForm:
    """The normal form of ``g`` (see the module docstring).

    ``left_growth_cap`` bounds step (d) (indirect -> direct left recursion):
    a left-recursive component whose rules would grow past
    ``cap * before + 8`` is left as it is; 0 disables step (d)."""
    user = list(g.rules)
    nullable = nullable_symbols(user)
    accepts_empty = g.start in nullable
    namer = Namer([r.origin for r in user] + list(g.terminal_names))

    work: Work = {}
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
    remove_right_recursion(work, g.start, namer)
    # (d) indirect left recursion -> direct (best effort, bounded growth)
    if left_growth_cap > 0:
        left_indirect_to_direct(work, namer, left_growth_cap)

    work = _clean(work, g)
    ng = _to_grammar(work, g)
    check_normal_form(ng)
    return NormalForm(grammar=ng, accepts_empty=accepts_empty)


def _to_grammar(work: Work, g: Grammar) -> Grammar:
    user = g.rules
    out: list[Rule] = []
    order = [g.start] + [a for a in work if a != g.start]
    for a in order:
        for exp, oi in work.get(a, ()):
            u = user[oi]
            out.append(Rule(origin=a, expansion=exp, source=u.source or u.origin, priority=u.priority))
    return Grammar(terminals=g.terminals, rules=tuple(out), start=g.start, ignore=g.ignore, modes=g.modes, gaps=g.gaps)


def _clean(work: Work, g: Grammar, allow_empty: bool = False) -> Work:
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
    out: Work = {}
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


def _split_nullable(work: Work, nullable: set[str], namer: Namer) -> Work:
    """Split rules with more than MAX_NULLABLE nullable symbols into a chain
    ``A -> X1..Xj A#s1``, ``A#s1 -> Xj+1 .. A#s2``, ... so that each piece
    holds at most MAX_NULLABLE nullable symbols (its tail included). The new
    tails are added to ``nullable`` when the rest they stand for is."""
    out: Work = {}
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


def _remove_epsilon(work: Work, nullable: set[str]) -> Work:
    out: Work = {}
    for a, rs in work.items():
        lst: list[WRule] = []
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


def _check_unit_cycles(work: Work, g: Grammar) -> None:
    edges: dict[str, list[tuple[str, object]]] = {}
    for a, rs in work.items():
        for exp, oi in rs:
            if len(exp) == 1 and exp[0] in work:
                edges.setdefault(a, []).append((exp[0], oi))
    comps = sccs(list(work), lambda v: [w for w, _ in edges.get(v, ())])
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
    for comp in sccs(order, lambda v: [w for w, _ in unit.get(v, ())]):
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
    for comp in sccs(order, lambda v: [w for w, _ in rc.get(v, ())]):
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
