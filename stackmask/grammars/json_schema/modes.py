"""Lexer modes for property values: after a key, only the terminals that can follow it.

The lexer reads all of a schema's terminals with one product automaton. Where many
property values have their own string languages (patterns, formats, lengths), the product
after a ``"`` pairs the states of all of them, and of the keys, though only one property's
values can follow a key: 30 of 200 CloudFormation schemas passed the lexer's 100,000
states that way, and every such pairing is lexer configurations to compile.

A key terminal (the key, its colon and the whitespace before it) therefore switches to a
*value mode* holding the terminals that can follow that key (and the whitespace terminal
read right after it); the first lexeme other than that whitespace switches back to the
*default mode* (mode 0), which holds every terminal that can be read anywhere else. A key
switches only where its value mode has a terminal the default mode lacks (terminals read
only as the values of some keys); keys whose values need nothing of their own stay in the
default mode, and keys that can match the same text (the winners of one lexeme, which the
scanner requires to switch alike) share one value mode. Keys whose value terminals are the
same share their mode too.

The language is unchanged: each mode holds every terminal the parser can accept where the
lexer is in that mode (computed from the grammar's FIRST and FOLLOW sets), and the terminals
left out could only be read there by a longer match of a terminal the parser rejects (no
JSON text has a key's colon after a value). ``tests/test_json_schema_modes.py`` checks the
modes and compares languages with and without them.

Each mode repeats the terminals it shares with others (the plain string, numbers), so the
value modes are *optional* (``LexerMode.merge_into``): the compiler, at the vocabulary's
band, keeps them where their automata are smaller together than the one product, or where
the one product would count several length-bounded strings on one chain
(``stackmask.compile.tables._lexer``, ``WIDE_CHAIN``). They are not offered at all where
the values' own terminals are small.
"""

from __future__ import annotations

from ...errors import GrammarError
from ...glr.normal_form import nullable_symbols
from ...grammar import LexerMode, Rule
from ...lexer.combined import compile_lexer, terminal_dfas
from ...lexer.counted import MIN_BAND

__all__ = ["value_modes"]

#: value terminals of fewer states than this, together, never make modes pay (the modes
#: are then not even offered to the compiler)
MIN_OWN_STATES = 64


def _first_follow(terms: set, rules: list, start: str):
    """``(nullable, first, follow)`` of a grammar: ``first[X]`` for every symbol,
    ``follow[A]`` for nonterminals (the terminals that can come right after ``A``)."""
    nts = {r.origin for r in rules}
    nullable = nullable_symbols(rules)
    first: dict = {t: {t} for t in terms}
    for a in nts:
        first[a] = set()
    changed = True
    while changed:
        changed = False
        for r in rules:
            f = first[r.origin]
            n = len(f)
            for s in r.expansion:
                f |= first.get(s, set())
                if s not in nullable:
                    break
            if len(f) != n:
                changed = True
    follow: dict = {a: set() for a in nts}
    changed = True
    while changed:
        changed = False
        for r in rules:
            exp = r.expansion
            trail = set(follow[r.origin])        # what follows the rest of the rule
            for s in reversed(exp):
                if s in follow:
                    n = len(follow[s])
                    follow[s] |= trail
                    if len(follow[s]) != n:
                        changed = True
                if s in nullable:
                    trail = trail | first.get(s, set())
                else:
                    trail = set(first.get(s, set()))
    return nullable, first, follow


def _after(rule: Rule, i: int, nullable: set, first: dict, follow: dict) -> set:
    """The terminals that can come right after position ``i`` of ``rule``."""
    out: set = set()
    for s in rule.expansion[i + 1:]:
        out |= first.get(s, set())
        if s not in nullable:
            return out
    return out | follow.get(rule.origin, set())


def _key_classes(keys: list, term_defs: dict) -> list:
    """Keys that can win the same lexeme, grouped (union-find over the accepting states of
    the keys' product automaton, at the highest priority, as the scanner resolves them)."""
    defs = [term_defs[k] for k in keys]
    parent = list(range(len(keys)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    try:
        dfa = compile_lexer(defs, MIN_BAND)
    except GrammarError:
        return [list(keys)]          # too large to tell apart: one class (one value mode)
    for acc in dfa.accepts:
        if len(acc) < 2:
            continue
        top = max(defs[i].priority for i in acc)
        win = [i for i in acc if defs[i].priority == top]
        for i in win[1:]:
            parent[find(i)] = find(win[0])
    groups: dict = {}
    for i, k in enumerate(keys):
        groups.setdefault(find(i), []).append(k)
    return list(groups.values())


def value_modes(terms: list, rules: list, start: str, key_names: set,
                ws_names: set) -> tuple:
    """The lexer modes of a schema grammar (module doc), or ``()`` where no key's values
    need terminals of their own. ``key_names``: the key terminals; ``ws_names``: the
    whitespace terminals read right after a key (they keep the value mode)."""
    term_defs = {t.name: t for t in terms}
    names = set(term_defs)
    keys = sorted(k for k in key_names if k in names)
    if not keys:
        return ()
    nullable, first, follow = _first_follow(names, rules, start)
    # per key: the terminals that can follow it (through the whitespace right after it)
    after_key: dict = {k: set() for k in keys}
    ws_after_key: set = set()          # (rule, position) of whitespace read right after a key
    ambiguous: set = set()             # keys whose whitespace's context is not told apart
    for r in rules:
        exp = r.expansion
        for i, s in enumerate(exp):
            if s not in after_key:
                continue
            if i + 1 < len(exp) and exp[i + 1] in ws_names:
                nxt = _after(r, i + 1, nullable, first, follow)
                after_key[s].add(exp[i + 1])
                after_key[s] |= nxt
                ws_after_key.add((id(r), i + 1))
                if exp[i + 1] in nxt:
                    ambiguous.add(s)
            else:
                nxt = _after(r, i, nullable, first, follow)
                if nxt & ws_names:
                    ambiguous.add(s)   # whitespace after it from elsewhere: stays in mode 0
                after_key[s] |= nxt
    classes = [tuple(c) for c in _key_classes(keys, term_defs) if not ambiguous.intersection(c)]
    # what the default mode must hold, whichever keys switch
    base = set(first.get(start, set()))
    for r in rules:
        for i, s in enumerate(r.expansion):
            if s in names and s not in after_key and (id(r), i) not in ws_after_key:
                base |= _after(r, i, nullable, first, follow)
    switching = set(classes)
    while True:
        default = set(base)
        moving = {k for c in switching for k in c}
        for k in keys:
            if k not in moving:               # read in the default mode, and so its values
                default |= after_key[k]
        dropped = {c for c in switching
                   if not set().union(*(after_key[k] for k in c)) - default - ws_names}
        if not dropped:
            break
        switching -= dropped
    if not switching:
        return ()
    value_sets = [set().union(*(after_key[k] for k in c)) for c in switching]
    own = set().union(*value_sets) - default - ws_names
    try:
        own_states = sum(d.n_states for d in terminal_dfas([term_defs[n] for n in sorted(own)], MIN_BAND))
    except GrammarError:
        # a terminal whose length the least band counts with stalls beside a count of its
        # pattern can pass the limit there and not at a vocabulary's band (no stall):
        # large in any case
        own_states = MIN_OWN_STATES
    if own_states < MIN_OWN_STATES:
        return ()
    order = [t.name for t in terms]
    modes_of: dict = {}                # value terminals -> keys switching to that mode
    for c in sorted(switching):
        v = frozenset(set().union(*(after_key[k] for k in c)))
        modes_of.setdefault(v, []).extend(c)
    out_modes = []
    default_switch = []
    for j, (v, ks) in enumerate(sorted(modes_of.items(), key=lambda x: sorted(x[1]))):
        mode = f"value{j}"
        default_switch.extend((k, mode) for k in sorted(ks))
        members = tuple(n for n in order if n in v)
        out_modes.append(LexerMode(mode, members, tuple((n, "json") for n in members
                                                        if n not in ws_names), merge_into="json"))
    # terminals that follow nothing reachable (rules the start never reaches) stay readable
    default |= names - set().union(*modes_of)
    dmembers = tuple(n for n in order if n in default)
    return (LexerMode("json", dmembers, tuple(default_switch)),) + tuple(out_modes)
