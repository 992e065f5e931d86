"""LR(0) automaton with LALR(1) lookaheads (DeRemer & Pennello), conflicts kept.

``build_lalr(g)`` returns :class:`LRTables`: plain tuples/dicts of indices,
several actions per (state, lookahead) where the grammar has conflicts (the
runtime parses with GLR). Epsilon rules are allowed.

The augmented start rule ``$accept -> start`` is internal: it is not in
``rules``. Reaching ``accept_state`` directly on top of ``start_state`` with
lookahead END (terminal index 0) means accept.

``check_deterministic(g)`` is the ``ambiguous=False`` promise: the user's
grammar must have a conflict-free LALR(1) table once reduce/reduce conflicts
are resolved by Lark rule priority.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..errors import GrammarError
from ..grammar import END, Grammar, Rule

__all__ = ["Conflict", "LRTables", "build_lalr", "check_deterministic", "lalr_conflicts"]

ACCEPT = "$accept"


@dataclass(frozen=True)
class Conflict:
    state: int
    terminal: str                   # lookahead terminal name ("$END" for end of input)
    kind: str                       # "shift/reduce" | "reduce/reduce"
    rules: tuple[str, ...]          # the rules to reduce ("a -> b c"); for shift/reduce
    #                                 also the items that shift ("a -> b . T c")
    reduce_rules: tuple[int, ...] = ()   # indices (into LRTables.rules) of the rules to reduce
    shift_items: tuple[str, ...] = ()    # the shifting items (shift/reduce only)


@dataclass(frozen=True, eq=False)
class LRTables:
    terminals: tuple[str, ...]          # index 0 is END ("$END")
    nonterminals: tuple[str, ...]
    rule_lhs: tuple[int, ...]           # nonterminal index per rule
    rule_len: tuple[int, ...]           # rhs length per rule
    rules: tuple[Rule, ...]             # the Rule objects, same indices
    shift: tuple[dict[int, int], ...]   # state -> terminal index -> next state
    reduce: tuple[dict[int, tuple[int, ...]], ...]  # state -> lookahead terminal -> rule indices
    goto: tuple[dict[int, int], ...]    # state -> nonterminal index -> next state
    start_state: int                    # 0
    accept_state: int                   # goto(start_state, start symbol)
    conflicts: tuple[Conflict, ...]
    n_states: int
    terminal_index: dict[str, int]
    nonterminal_index: dict[str, int]
    kernels: tuple[tuple[tuple[int, int], ...], ...] = ()   # state -> kernel items (rule, dot);
    #                                                         rule -1 is the augmented start rule


def _iter_bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def _digraph(n: int, edges: list[list[int]], init: list[int]) -> list[int]:
    """DeRemer & Pennello's digraph: F(x) = init(x) | U{F(y) : x R y}; the
    members of a strongly connected component share one value. Iterative."""
    INF = 1 << 62
    F = list(init)
    N = [0] * n
    stack: list[int] = []
    for root in range(n):
        if N[root]:
            continue
        stack.append(root)
        N[root] = len(stack)
        work = [[root, 0, len(stack)]]
        while work:
            fr = work[-1]
            x = fr[0]
            ex = edges[x]
            if fr[1] < len(ex):
                y = ex[fr[1]]
                fr[1] += 1
                if N[y] == 0:
                    stack.append(y)
                    N[y] = len(stack)
                    work.append([y, 0, len(stack)])
                    continue
                if N[y] < N[x]:
                    N[x] = N[y]
                F[x] |= F[y]
                continue
            work.pop()
            if N[x] == fr[2]:
                v = F[x]
                while True:
                    y = stack.pop()
                    N[y] = INF
                    F[y] = v
                    if y == x:
                        break
            if work:
                p = work[-1][0]
                if N[x] < N[p]:
                    N[p] = N[x]
                F[p] |= F[x]
    return F


#: the last tables built, by the identity of the rules they were built from (and the
#: terminals' names):
#: ``Constraint`` asks for the conflicts of the user's grammar (``ambiguous=None``), then
#: checks it deterministic, on copies of one grammar sharing its rule tuple
_RECENT: "OrderedDict[tuple, tuple]" = OrderedDict()
_RECENT_SIZE = 2
_RECENT_LOCK = threading.Lock()


def build_lalr(g: Grammar) -> LRTables:
    """LR(0) automaton + LALR(1) lookaheads for ``g``; conflicts are kept. The tables
    are read-only; the last two built are reused for a grammar with the same rule tuple
    (the same object), terminal names and start symbol."""
    key = (id(g.rules), tuple(t.name for t in g.terminals), g.start)
    with _RECENT_LOCK:
        hit = _RECENT.get(key)
        if hit is not None and hit[0] is g.rules:
            _RECENT.move_to_end(key)
            return hit[1]
    t = _build_lalr(g)
    with _RECENT_LOCK:
        _RECENT[key] = (g.rules, t)       # the rule tuple kept: its id stays its own
        while len(_RECENT) > _RECENT_SIZE:
            _RECENT.popitem(last=False)
    return t


def _build_lalr(g: Grammar) -> LRTables:
    terminals = (END,) + tuple(t.name for t in g.terminals)
    if len(set(terminals)) != len(terminals):
        raise GrammarError(f"a terminal may not be named {END!r}")
    tindex = {t: i for i, t in enumerate(terminals)}
    nonterminals = g.nonterminals
    nindex = {n: i for i, n in enumerate(nonterminals)}
    T = len(terminals)
    NT = len(nonterminals)
    rules = tuple(g.rules)
    R = len(rules)

    def code(s: str) -> int:
        t = tindex.get(s)
        if t is not None:
            return t
        return T + nindex[s]

    rhs: list[tuple[int, ...]] = [tuple(code(s) for s in r.expansion) for r in rules]
    lhs: list[int] = [nindex[r.origin] for r in rules]
    start_nt = nindex[g.start]
    # the augmented rule, internal index R: $accept -> start
    rhs.append((T + start_nt,))
    lhs.append(NT)

    # items
    base = []
    n_items = 0
    for r in range(R + 1):
        base.append(n_items)
        n_items += len(rhs[r]) + 1
    item_next = [0] * n_items
    item_rule = [0] * n_items
    for r in range(R + 1):
        b = base[r]
        rr = rhs[r]
        for d in range(len(rr)):
            item_next[b + d] = rr[d]
            item_rule[b + d] = r
        item_next[b + len(rr)] = -1
        item_rule[b + len(rr)] = r

    nt_rules: list[list[int]] = [[] for _ in range(NT + 1)]
    for r in range(R + 1):
        nt_rules[lhs[r]].append(r)

    # nullable nonterminals
    nullable = [False] * (NT + 1)
    changed = True
    while changed:
        changed = False
        for r in range(R):
            if not nullable[lhs[r]] and all(s >= T and nullable[s - T] for s in rhs[r]):
                nullable[lhs[r]] = True
                changed = True

    # closure of each nonterminal: dot-0 items of every nonterminal reachable
    # through "first symbol after the dot"
    closure_of: list[tuple[int, ...] | None] = [None] * (NT + 1)

    def nt_closure(n: int) -> tuple[int, ...]:
        c = closure_of[n]
        if c is not None:
            return c
        seen = {n}
        stack = [n]
        items = []
        while stack:
            m = stack.pop()
            for r in nt_rules[m]:
                items.append(base[r])
                rr = rhs[r]
                if rr and rr[0] >= T and rr[0] - T not in seen:
                    seen.add(rr[0] - T)
                    stack.append(rr[0] - T)
        c = tuple(items)
        closure_of[n] = c
        return c

    def closure(kernel: tuple[int, ...]) -> set[int]:
        items = set(kernel)
        for it in kernel:
            s = item_next[it]
            if s >= T:
                items.update(nt_closure(s - T))
        return items

    # LR(0) automaton
    kernels: list[tuple[int, ...]] = [(base[R],)]
    kindex = {kernels[0]: 0}
    trans: list[dict[int, int]] = []
    complete: list[list[int]] = []
    i = 0
    while i < len(kernels):
        items = closure(kernels[i])
        groups: dict[int, list[int]] = {}
        comp = []
        for it in items:
            s = item_next[it]
            if s < 0:
                comp.append(item_rule[it])
            else:
                lst = groups.get(s)
                if lst is None:
                    groups[s] = [it + 1]
                else:
                    lst.append(it + 1)
        tr: dict[int, int] = {}
        for s in sorted(groups):
            k = tuple(sorted(groups[s]))
            j = kindex.get(k)
            if j is None:
                j = len(kernels)
                kindex[k] = j
                kernels.append(k)
            tr[s] = j
        trans.append(tr)
        complete.append(sorted(comp))
        i += 1
    n_states = len(kernels)
    accept_state = trans[0][T + start_nt]

    # DeRemer & Pennello: nonterminal transitions
    ntt: dict[tuple[int, int], int] = {}
    ntt_list: list[tuple[int, int]] = []
    for p in range(n_states):
        for s, q in trans[p].items():
            if s >= T:
                ntt[(p, s)] = len(ntt_list)
                ntt_list.append((p, s))
    X = len(ntt_list)
    shiftmask = [0] * n_states
    for p in range(n_states):
        m = 0
        for s in trans[p]:
            if s < T:
                m |= 1 << s
        shiftmask[p] = m
    DR = [0] * X
    reads: list[list[int]] = [[] for _ in range(X)]
    for x, (p, s) in enumerate(ntt_list):
        r = trans[p][s]
        DR[x] = shiftmask[r]
        for s2 in trans[r]:
            if s2 >= T and nullable[s2 - T]:
                reads[x].append(ntt[(r, s2)])
    DR[ntt[(0, T + start_nt)]] |= 1  # END follows the start symbol
    Read = _digraph(X, reads, DR)

    # includes and lookback
    includes: list[list[int]] = [[] for _ in range(X)]
    lookback: dict[tuple[int, int], list[int]] = {}
    null_from = []  # per rule: smallest k with rhs[k:] all nullable
    for r in range(R + 1):
        rr = rhs[r]
        k = len(rr)
        while k > 0 and rr[k - 1] >= T and nullable[rr[k - 1] - T]:
            k -= 1
        null_from.append(k)
    for y, (p0, s) in enumerate(ntt_list):
        B = s - T
        for r in nt_rules[B]:
            rr = rhs[r]
            k = null_from[r]
            q = p0
            for idx, sym in enumerate(rr):
                if sym >= T and idx + 1 >= k:
                    includes[ntt[(q, sym)]].append(y)
                q = trans[q][sym]
            key = (q, r)
            lb = lookback.get(key)
            if lb is None:
                lookback[key] = [y]
            else:
                lb.append(y)
    Follow = _digraph(X, includes, Read)

    # tables
    shift: list[dict[int, int]] = []
    goto: list[dict[int, int]] = []
    reduce: list[dict[int, tuple[int, ...]]] = []
    for q in range(n_states):
        sh: dict[int, int] = {}
        gt: dict[int, int] = {}
        for s, j in trans[q].items():
            if s < T:
                sh[s] = j
            else:
                gt[s - T] = j
        shift.append(sh)
        goto.append(gt)
        red: dict[int, list[int]] = {}
        for r in complete[q]:
            if r == R:
                continue
            la = 0
            for y in lookback.get((q, r), ()):
                la |= Follow[y]
            for t in _iter_bits(la):
                lst = red.get(t)
                if lst is None:
                    red[t] = [r]
                else:
                    lst.append(r)
        reduce.append({t: tuple(sorted(v)) for t, v in sorted(red.items())})

    kern_out = tuple(tuple((item_rule[it] if item_rule[it] != R else -1, it - base[item_rule[it]])
                           for it in k) for k in kernels)

    # conflicts
    conflicts: list[Conflict] = []

    def item_text(it: int) -> str:
        r = item_rule[it]
        d = it - base[r]
        if r == R:
            body = [g.start]
            head = ACCEPT
        else:
            body = list(rules[r].expansion)
            head = rules[r].origin
        body.insert(d, ".")
        return f"{head} -> {' '.join(body)}"

    for q in range(n_states):
        red = reduce[q]
        if not red:
            continue
        items = None
        for t, rs in red.items():
            shifts = t in shift[q] or (q == accept_state and t == 0)
            if not shifts and len(rs) < 2:
                continue
            rtexts = tuple(str(rules[r]) for r in rs)
            if len(rs) >= 2:
                conflicts.append(Conflict(q, terminals[t], "reduce/reduce", rtexts, rs))
            if shifts:
                if items is None:
                    items = sorted(closure(kernels[q]))
                if t == 0:
                    sitems = (f"{ACCEPT} -> {g.start} . (accept)",)
                else:
                    sitems = tuple(item_text(it) for it in items if item_next[it] == t)
                conflicts.append(Conflict(q, terminals[t], "shift/reduce", rtexts + sitems, rs, sitems))

    return LRTables(
        terminals=terminals,
        nonterminals=nonterminals,
        rule_lhs=tuple(lhs[:R]),
        rule_len=tuple(len(rhs[r]) for r in range(R)),
        rules=rules,
        shift=tuple(shift),
        reduce=tuple(reduce),
        goto=tuple(goto),
        start_state=0,
        accept_state=accept_state,
        conflicts=tuple(conflicts),
        n_states=n_states,
        terminal_index=tindex,
        nonterminal_index=nindex,
        kernels=kern_out,
    )


# ---------------------------------------------------------------------------
# ambiguous=False

def lalr_conflicts(g: Grammar, tables: LRTables | None = None) -> list[Conflict]:
    """The conflicts of ``g``'s LALR(1) table that Lark's rule priorities do
    not resolve (a reduce/reduce conflict is resolved when one rule has a
    strictly higher priority than all others; shift/reduce never is)."""
    t = tables if tables is not None else build_lalr(g)
    by_key = {(c.state, c.terminal, c.kind): c for c in t.conflicts}
    out: list[Conflict] = []
    for q in range(t.n_states):
        for la, rs in t.reduce[q].items():
            name = t.terminals[la]
            winners = rs
            if len(rs) > 1:
                prios = sorted((t.rules[r].priority for r in rs), reverse=True)
                if prios[0] > prios[1]:
                    winners = (max(rs, key=lambda r: t.rules[r].priority),)
                else:
                    out.append(by_key[(q, name, "reduce/reduce")])
            if la in t.shift[q] or (q == t.accept_state and la == 0):
                c = by_key[(q, name, "shift/reduce")]
                if winners != rs:
                    c = Conflict(c.state, c.terminal, c.kind,
                                 tuple(str(t.rules[r]) for r in winners) + c.shift_items,
                                 winners, c.shift_items)
                out.append(c)
    return out


def check_deterministic(g: Grammar) -> None:
    """Raise :class:`GrammarError` unless the LALR(1) table of ``g`` itself
    (not of its normal form) is conflict-free after Lark's priority rule for
    reduce/reduce conflicts. The message lists every conflict."""
    t = build_lalr(g)
    bad = lalr_conflicts(g, t)
    if not bad:
        return
    term_desc = {td.name: td for td in g.terminals}

    def tname(name: str) -> str:
        td = term_desc.get(name)
        if td is None:
            return name
        if td.is_literal:
            return f"{name} ({_literal_text(td.regex)!r})"
        return f"{name} (/{td.regex}/)"

    def rdesc(r: int) -> str:
        rule = t.rules[r]
        s = str(rule)
        if rule.source and rule.source != rule.origin:
            s += f" [in rule {rule.source!r}]"
        return s

    lines = []
    for c in bad:
        if c.kind == "reduce/reduce":
            lines.append(f"  reduce/reduce conflict in state {c.state} on {tname(c.terminal)}: "
                         + " | ".join(f"reduce {rdesc(r)}" for r in c.reduce_rules))
        else:
            lines.append(f"  shift/reduce conflict in state {c.state} on {tname(c.terminal)}: "
                         + " | ".join(f"reduce {rdesc(r)}" for r in c.reduce_rules)
                         + " vs shift (" + "; ".join(c.shift_items) + ")")
    first = t.rules[bad[0].reduce_rules[0]]
    raise GrammarError(
        f"the grammar is not LALR(1) ({len(bad)} conflict{'s' if len(bad) != 1 else ''}); "
        "pass ambiguous=True to parse it with GLR, or fix the grammar:\n" + "\n".join(lines),
        name=first.source or first.origin)


def _literal_text(regex: str) -> str:
    import re
    m = re.fullmatch(r"\(\?([a-zA-Z]+):(.*)\)", regex, re.S)
    body = m.group(2) if m else regex
    return re.sub(r"\\(.)", r"\1", body)
