"""Lexer modes for property values: after a key, only the terminals that can follow it.

The lexer reads all of a schema's terminals with one product automaton. Where many
property values have their own string languages (patterns, formats, lengths), the product
after a ``"`` pairs the states of all of them, and of the keys, though only one property's
values can follow a key: 30 of 200 CloudFormation schemas passed the lexer's 100,000
states that way, and every such pairing is lexer configurations to compile.

A key terminal (the key, its colon and the whitespace before it) therefore switches to a
*value mode* holding the terminals that can follow that key; the first lexeme switches back
to the *default mode* (mode 0), which holds every terminal that can be read anywhere else. A key
switches only where its value mode has a terminal the default mode lacks (terminals read
only as the values of some keys); keys whose values need nothing of their own stay in the
default mode. Keys whose value terminals are the same share their mode.

A value of several lexemes with no key inside (an array of scalars) is read in its key's
mode *to its end* (:func:`_span`): the mode holds every terminal read inside the value,
and only those that end it (``]``) switch back; the default mode is then computed from the
grammar as the default mode reads it, those values' insides left out
(:func:`_default_view_base`), so the items of different arrays are not paired there. Where
a terminal can both end the value and be followed inside it (an array of arrays, a value
that is a string or an array of strings) the first lexeme switches back as above.

Key terminals are made per property *name*; where one name is read in places needing
different sizable terminals, :func:`split_keys` gives each place a copy of the key terminal
(and so a mode of its own). The copies tie on the same text: the scanner forks at the key,
one branch per mode, and the parser keeps the branch whose key it can take.

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

import dataclasses

from ...errors import GrammarError
from ...glr.normal_form import nullable_symbols
from ...grammar import LexerMode, Rule
from ...lexer.combined import terminal_dfas
from ...lexer.counted import MIN_BAND

__all__ = ["split_keys", "value_modes"]

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


def _base_terminals(names: set, rules: list, start: str, keys, nullable, first, follow) -> set:
    """What the default mode must hold whichever keys switch: the terminals that can
    come first, or right after any terminal that is not a key."""
    base = set(first.get(start, set()))
    for r in rules:
        for i, s in enumerate(r.expansion):
            if s in names and s not in keys:
                base |= _after(r, i, nullable, first, follow)
    return base


#: a key name's contexts are given key terminals of their own only where one of them needs
#: value terminals (beyond those all need) of at least this many lexer states together
#: (at the least band): one mode for all would pair them with the others' in one product
LARGE_CONTEXT = 256


def _states(names, term_defs: dict) -> int:
    """Lexer states of the terminals ``names`` at the least band, each alone, summed
    (a terminal too large to build there counts as large)."""
    try:
        return sum(d.n_states for d in terminal_dfas([term_defs[n] for n in sorted(names)], MIN_BAND))
    except GrammarError:
        return LARGE_CONTEXT


def _wrappers(by_origin: dict, keys) -> dict:
    """Key -> the nonterminal ``W -> K`` it is read through (its wrapper), None where it
    has several."""
    wrapper: dict = {}
    for w, rs in by_origin.items():
        heads = {r.expansion[0] for r in rs if r.expansion}
        if len(heads) == 1 and heads <= keys and all(len(r.expansion) == 1 for r in rs):
            k = next(iter(heads))
            wrapper[k] = None if k in wrapper else w
    return wrapper


def _default_view_base(names: set, rules: list, start: str, by_origin: dict, keys,
                       cut: set) -> set:
    """:func:`_base_terminals` of the grammar as the default mode reads it: the values at
    ``cut`` (``(id(rule), position)``) are read in value modes to their end, so their
    insides are left out (an opaque symbol stands for each), and so is every rule only
    they reach."""
    hole = "\x00value"
    reach, todo = {start}, [start]
    view = []
    while todo:
        for r in by_origin.get(todo.pop(), ()):
            exp = r.expansion
            if any((id(r), j) in cut for j in range(len(exp))):
                exp = tuple(hole if (id(r), j) in cut else x for j, x in enumerate(exp))
                nr = Rule(r.origin, exp, source=r.source, priority=r.priority)
            else:
                nr = r
            view.append(nr)
            for x in exp:
                if x in by_origin and x not in reach:
                    reach.add(x)
                    todo.append(x)
    nullable, first, follow = _first_follow(names | {hole}, view, start)
    # read as a terminal: what follows a value read in a value mode is read in this one
    return _base_terminals(names | {hole}, view, start, keys, nullable, first, follow) - {hole}


def _value_positions(rules: list, by_origin: dict, keys) -> tuple:
    """``(positions, readers)``: key -> the ``(rule, position)`` of every value read right
    after it, or None where that is not known (a value read further up than the rule the
    key is read in); ``(id(rule), position)`` of a value -> every key read right before it.
    A key is read through its wrapper, or bare, or through *key sets*,
    nonterminals whose rules are each one key symbol (the extra members' shared segment
    tree: the value after one is read after any of its keys)."""
    wrapper = _wrappers(by_origin, set(keys))
    out: dict = {k: [] for k in keys}
    keyset: dict = {}                  # symbol -> the keys it is read as (alone)
    for k in keys:
        w = wrapper.get(k, k)
        if w is None:
            out[k] = None
        else:
            keyset[w] = {k}
    changed = True
    while changed:
        changed = False
        for x, rs in by_origin.items():
            if x in keyset:
                continue
            if all(len(r.expansion) == 1 and r.expansion[0] in keyset for r in rs):
                keyset[x] = set().union(*(keyset[r.expansion[0]] for r in rs))
                changed = True
    readers: dict = {}                 # (id(rule), position) -> every key read right before
    for r in rules:
        if r.origin in keyset:
            continue                   # a wrapper's or a key set's own rule
        for i, x in enumerate(r.expansion):
            ks = keyset.get(x)
            if ks is None:
                if x not in out:
                    continue
                out[x] = None          # a wrapped key also read bare
                ks = {x}
            if i + 1 < len(r.expansion):
                readers.setdefault((id(r), i + 1), set()).update(ks)
            for k in ks:
                if out[k] is None:
                    continue
                if i + 1 < len(r.expansion):
                    out[k].append((r, i + 1))
                else:
                    out[k] = None
    return out, readers


def _span(v: str, by_origin: dict, keys) -> tuple | None:
    """``(terminals, ending, continuing)`` of the texts of symbol ``v``: the terminals
    read inside it, those that can end it, those that can be followed by another one
    inside it; None where a key is read inside (an object: its keys switch modes)."""
    if v not in by_origin:
        return ({v}, {v}, set())
    seen, todo, sub = {v}, [v], []
    terms: set = set()
    while todo:
        for r in by_origin[todo.pop()]:
            sub.append(r)
            for x in r.expansion:
                if x in by_origin:
                    if x not in seen:
                        seen.add(x)
                        todo.append(x)
                else:
                    if x in keys:
                        return None
                    terms.add(x)
    end = "\x00end"
    top = "\x00top"
    rules = sub + [Rule(top, (v, end))]
    nullable, first, follow = _first_follow(terms | {end}, rules, top)
    ending, going = set(), set()
    for r in sub:
        for i, x in enumerate(r.expansion):
            if x in terms:
                nxt = _after(r, i, nullable, first, follow)
                if end in nxt:
                    ending.add(x)
                if nxt - {end}:
                    going.add(x)
    return terms, ending, going


def _read_to_end(span) -> bool:
    """Whether a value of :func:`_span` ``span`` is read in its key's mode to its end:
    several lexemes, and the terminals that end it are never followed inside it (the
    mode switches back on them)."""
    return span is not None and bool(span[2]) and not (span[1] & span[2])


def split_keys(terms: list, rules: list, start: str, key_names: set) -> tuple:
    """``(terms, rules, key_names)`` with a key terminal of its own for each context of a
    key name whose values need terminals of their own, where the name has other contexts.

    Key terminals are made per property *name*: ``Key`` in two objects is one terminal,
    and so one value mode holding both objects' value terminals, whose automata the lexer
    then pairs in one product (CloudFormation's ``Key`` of a tag and of a tag condition,
    each a length-bounded pattern: over 200,000 states together). Here the contexts (the
    places the key is read) are grouped by the value terminals they need that the default
    mode may lack (those that cannot follow anything but a key); each group gets a copy
    of the key terminal (same text and priority), and so a mode of its own; contexts that
    need nothing of their own keep the original key, read in the default mode. The
    copies tie on the same text, so the scanner forks at the key, one branch per mode,
    and the parser keeps the branch of the key it can take."""
    term_defs = {t.name: t for t in terms}
    names = set(term_defs)
    keys = {k for k in key_names if k in names}
    if not keys:
        return terms, rules, key_names
    nullable, first, follow = _first_follow(names, rules, start)
    by_origin: dict = {}
    for r in rules:
        by_origin.setdefault(r.origin, []).append(r)
    wrapper = _wrappers(by_origin, keys)
    occurrences: dict = {}             # key -> [(rule index, position)] of its symbol
    for ri, r in enumerate(rules):
        for i, s in enumerate(r.expansion):
            occurrences.setdefault(s, []).append((ri, i))
    base = _base_terminals(names, rules, start, keys, nullable, first, follow)
    taken = set(names) | set(by_origin)
    plans = []
    spans: dict = {}
    for k in sorted(keys):
        w = wrapper.get(k, k)
        if w is None:
            continue
        wrapped = w != k
        if wrapped and any(rules[ri].origin != w for ri, _ in occurrences.get(k, ())):
            continue                   # read outside its wrapper too: left as it is
        # contexts by what their mode would read: the terminals after the key, and all
        # of the value's where it is read to its end (:func:`_span`)
        contexts: dict = {}
        for ri, i in occurrences.get(w, ()):
            r = rules[ri]
            if r.origin == w:
                continue
            after = frozenset(_after(r, i, nullable, first, follow))
            span = None
            if i + 1 < len(r.expansion):
                v = r.expansion[i + 1]
                if v not in spans:
                    spans[v] = _span(v, by_origin, key_names)
                span = spans[v]
            whole = span is not None and _read_to_end(span)
            need = after | span[0] if whole else after
            contexts.setdefault((need, whole), []).append((ri, i))
        if len(contexts) < 2:
            continue
        common = frozenset.intersection(*(n for n, _ in contexts))
        large = [c for c in contexts if _states(c[0] - common, term_defs) >= LARGE_CONTEXT]
        if not large:
            continue                   # one mode for all contexts pairs little
        groups: dict = {}              # what the group's mode reads -> occurrences
        for (need, whole), occ in contexts.items():
            g = ("span", need) if whole and (need, whole) in large else ("own", need - base)
            groups.setdefault(g, []).extend(occ)
        plain = ("own", frozenset())
        owning = sorted((g for g in groups if g != plain), key=lambda g: (g[0], sorted(g[1])))
        if owning and len(groups) >= 2:
            plans.append((k, w, wrapped, groups, owning[0 if plain in groups else 1:]))
    new_terms, rules, key_names = list(terms), list(rules), set(key_names)
    for k, w, wrapped, groups, copied in plans:
        # the contexts with nothing of their own keep the key, with the first other group
        # unless there are none; each other group gets a copy
        for own in copied:
            n = 1
            while f"{k}_{n}" in taken or f"{w}_{n}" in taken:
                n += 1
            k2, w2 = f"{k}_{n}", (f"{w}_{n}" if wrapped else f"{k}_{n}")
            taken |= {k2, w2}
            new_terms.append(dataclasses.replace(term_defs[k], name=k2))
            key_names.add(k2)
            if wrapped:
                for r in by_origin[w]:
                    rules.append(Rule(w2, (k2,) + r.expansion[1:], source=r.source, priority=r.priority))
            for ri, i in groups[own]:
                r = rules[ri]
                rules[ri] = Rule(r.origin, r.expansion[:i] + (w2,) + r.expansion[i + 1:],
                                 source=r.source, priority=r.priority)
    return new_terms, rules, key_names


def value_modes(terms: list, rules: list, start: str, key_names: set) -> tuple:
    """The lexer modes of a schema grammar (module doc), or ``()`` where no key's values
    need terminals of their own. ``key_names``: the key terminals. Keys that can match
    the same text may switch to different modes (the scanner then forks). (The
    whitespace is an ignored terminal the front end adds to every mode.)"""
    term_defs = {t.name: t for t in terms}
    names = set(term_defs)
    keys = sorted(k for k in key_names if k in names)
    if not keys:
        return ()
    nullable, first, follow = _first_follow(names, rules, start)
    # per key: the terminals that can follow it
    after_key: dict = {k: set() for k in keys}
    for r in rules:
        for i, s in enumerate(r.expansion):
            if s in after_key:
                after_key[s] |= _after(r, i, nullable, first, follow)
    # per key: its mode's terminals and those that end the value (switch back); a value
    # whose texts are several lexemes with no key inside (an array of scalars) is read in
    # the mode to its end, where a value that may also be one lexeme of another kind, or
    # an object, switches back after its first lexeme
    by_origin: dict = {}
    for r in rules:
        by_origin.setdefault(r.origin, []).append(r)
    positions, readers = _value_positions(rules, by_origin, keys)
    spans: dict = {}
    members: dict = {}
    ending: dict = {}
    spanned: dict = {}                 # key -> value positions read in its mode to the end
    for k in keys:
        members[k], ending[k] = after_key[k], set(after_key[k])
        if not positions[k]:
            continue
        parts = []
        for r, j in positions[k]:
            v = r.expansion[j]
            if v not in spans:
                spans[v] = _span(v, by_origin, key_names)
            parts.append(spans[v])
        if any(p is None for p in parts):
            continue
        inside = set().union(*(p[0] for p in parts))
        ends = set().union(*(p[1] for p in parts))
        going = set().union(*(p[2] for p in parts))
        if not _read_to_end((inside, ends, going)):
            continue                   # one lexeme, or no end to tell (the first-lexeme rule)
        members[k] = after_key[k] | inside
        ending[k] = ends
        spanned[k] = positions[k]
    base_memo: dict = {}

    def base_for(moving) -> set:
        """The default mode's base when ``moving`` keys switch: values read in value modes
        to their end (after every key that can come right before them) are left out (the
        grammar seen from the default mode)."""
        whole = {k for k in moving if k in spanned}
        cut = frozenset(p for k in whole for p in ((id(r), j) for r, j in spanned[k])
                        if readers[p] <= whole)
        b = base_memo.get(cut)
        if b is None:
            if not cut:
                b = _base_terminals(names, rules, start, after_key, nullable, first, follow)
            else:
                b = _default_view_base(names, rules, start, by_origin, after_key, cut)
            base_memo[cut] = b
        return b

    switching = {(k,) for k in keys}
    while True:
        moving = {k for c in switching for k in c}
        default = set(base_for(moving))
        for k in keys:
            if k not in moving:               # read in the default mode, and so its values
                default |= after_key[k]
        dropped = {c for c in switching
                   if not set().union(*(members[k] for k in c)) - default}
        if not dropped:
            break
        switching -= dropped
    if not switching:
        return ()
    value_sets = [set().union(*(members[k] for k in c)) for c in switching]
    own = set().union(*value_sets) - default
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
    modes_of: dict = {}                # (terminals, those switching back) -> keys
    for c in sorted(switching):
        v = frozenset(set().union(*(members[k] for k in c)))
        e = frozenset(set().union(*(ending[k] for k in c)))
        modes_of.setdefault((v, e), []).extend(c)
    out_modes = []
    default_switch = []
    for j, ((v, e), ks) in enumerate(sorted(modes_of.items(), key=lambda x: sorted(x[1]))):
        mode = f"value{j}"
        default_switch.extend((k, mode) for k in sorted(ks))
        mem = tuple(n for n in order if n in v)
        out_modes.append(LexerMode(mode, mem, tuple((n, "json") for n in mem if n in e),
                                   merge_into="json"))
    # terminals that follow nothing reachable (rules the start never reaches) stay readable
    default |= names - set().union(*(v for v, _ in modes_of))
    dmembers = tuple(n for n in order if n in default)
    return (LexerMode("json", dmembers, tuple(default_switch)),) + tuple(out_modes)
