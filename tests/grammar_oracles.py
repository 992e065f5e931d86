"""Grammar oracles shared by the parser tests: an Earley recognizer over
terminal-name sequences (epsilon rules allowed, Aycock & Horspool's nullable
completion) and a compact way to write small grammars."""

from __future__ import annotations

from stackmask.grammar import Grammar, Rule, TerminalDef
from stackmask.glr.normal_form import nullable_symbols


class Earley:
    def __init__(self, g: Grammar):
        self.g = g
        self.rules = [(r.origin, r.expansion) for r in g.rules]
        self.by_lhs: dict[str, list[int]] = {}
        for i, (a, _) in enumerate(self.rules):
            self.by_lhs.setdefault(a, []).append(i)
        self.nullable = nullable_symbols(g.rules)

    def accepts(self, tokens) -> bool:
        rules, by_lhs, nullable = self.rules, self.by_lhs, self.nullable
        n = len(tokens)
        sets: list[set] = [set() for _ in range(n + 1)]
        waiting: list[dict[str, list]] = [dict() for _ in range(n + 1)]

        def add(i, item, agenda):
            if item not in sets[i]:
                sets[i].add(item)
                r, d, o = item
                rhs = rules[r][1]
                if d < len(rhs) and rhs[d] in by_lhs:
                    waiting[i].setdefault(rhs[d], []).append(item)
                if agenda is not None:
                    agenda.append(item)

        agenda0: list = []
        for r in by_lhs.get(self.g.start, ()):
            add(0, (r, 0, 0), agenda0)
        agenda = agenda0
        for i in range(n + 1):
            if i > 0:
                agenda = list(sets[i])
            while agenda:
                r, d, o = agenda.pop()
                lhs, rhs = rules[r]
                if d < len(rhs):
                    x = rhs[d]
                    if x in by_lhs:
                        for r2 in by_lhs[x]:
                            add(i, (r2, 0, i), agenda)
                        if x in nullable:
                            add(i, (r, d + 1, o), agenda)
                    elif i < n and tokens[i] == x:
                        add(i + 1, (r, d + 1, o), None)
                else:
                    for (r2, d2, o2) in list(waiting[o].get(lhs, ())):
                        add(i, (r2, d2 + 1, o2), agenda)
        return any(d == len(rules[r][1]) and o == 0 and rules[r][0] == self.g.start
                   for (r, d, o) in sets[n])


# ---------------------------------------------------------------------------
# random sentences of a grammar (depth-bounded random derivations)


def plain_grammar(spec: dict[str, list[str]], start: str = "start") -> Grammar:
    """Grammar from {nonterminal: ["X y z", "", ...]}; lowercase single-letter
    or unknown names that are not keys are terminals."""
    nts = set(spec)
    rules = []
    terms: dict[str, None] = {}
    for a, alts in spec.items():
        for alt in alts:
            exp = tuple(alt.split())
            for s in exp:
                if s not in nts:
                    terms.setdefault(s, None)
            rules.append(Rule(a, exp, source=a))
    tdefs = [TerminalDef(t, t, is_literal=True) for t in terms]
    return Grammar.build(tdefs, rules, start)
