"""Boolean operations on the regex IR (:mod:`stackmask.lexer.ir`): intersection, difference,
complement, emptiness, inclusion, length limits, and "any string but these".

Each operation partitions the code points into *atoms* no character set of its operands
splits, builds minimal complete DFAs over the atoms with the package's automaton toolkit
(:mod:`stackmask.wfa.fsa`: Thompson NFA, subset construction, product;
:mod:`stackmask.wfa.reduction`: trimming, minimization) and turns the result back into
the IR by state elimination. That result can grow exponentially, so every step has a
size guard raising :class:`TooComplex`.
"""

from __future__ import annotations

import bisect

import numpy as np

from ...wfa.fsa import Nfa, TooManyStates, determinize, product_bfs
from ...wfa.reduction import minimize, trim
from ...lexer.ir import (ANY, ANYSTAR, EPS, MAX_CP, NONE, UNIVERSE, alt, ast_size, has_node,
                         iv_contains, iv_intersect, length_range, nodes, rep, seq, thompson)
from ...lexer.ir import complement_intervals as iv_complement
from ...lexer.ir import normalize_intervals as iv_norm

__all__ = ["TooComplex", "Dfa", "atom_partition", "intersect", "difference", "union", "complement",
           "is_empty", "is_disjoint", "is_subset", "limit_length", "limited", "has_limits",
           "resolve_limits", "write_out", "map_limits", "not_in", "looking", "meet", "exclude",
           "WB_MARK", "NWB_MARK", "resolve_word_boundaries", "unimplied_bounds"]


class TooComplex(ValueError):
    """A Boolean operation's result is too large to express as a regex."""


MAX_NFA = 20_000
MAX_STATES = 4_000      # DFA states in Boolean operations
MAX_ELIM = 300         # states for DFA -> regex by state elimination


# --------------------------------------------------------------------------
# finite exclusion: any string except a given finite set
# --------------------------------------------------------------------------

def not_in(words, universe=UNIVERSE) -> tuple:
    """AST of all strings over ``universe`` except ``words`` (built on the trie)."""
    trie: dict = {}
    END = object()
    for w in words:
        node = trie
        for c in w:
            node = node.setdefault(ord(c), {})
        node[END] = True

    anystar = ("r", ("c", universe), 0, None)

    def build(node) -> tuple:
        kids = sorted(k for k in node if k is not END)
        other = iv_intersect(universe, iv_complement(iv_norm([(k, k) for k in kids])))
        alts = []
        if END not in node:
            alts.append(EPS)
        if other:
            alts.append(seq(("c", other), anystar))
        for k in kids:
            if iv_contains(universe, k):
                alts.append(seq(("c", ((k, k),)), build(node[k])))
        return alt(*alts)

    return build(trie)



# --------------------------------------------------------------------------
# DFA over code-point atoms
# --------------------------------------------------------------------------

def _collect_sets(x, out: set):
    k = x[0]
    if k == "c":
        out.add(x[1])
    elif k in ("s", "a"):
        for y in x[1]:
            _collect_sets(y, out)
    elif k == "X":
        _collect_sets(x[1], out)
        for _, y in x[2]:
            _collect_sets(y, out)
    else:
        _collect_sets(x[1], out)


def atom_partition(*asts) -> list:
    """Partition of the universe into intervals no AST character set splits."""
    sets: set = {UNIVERSE}
    for a in asts:
        _collect_sets(a, sets)
    cuts = set()
    for s in sets:
        for lo, hi in s:
            cuts.add(lo)
            cuts.add(hi + 1)
    pts = sorted(c for c in cuts if 0 <= c <= MAX_CP + 1)
    atoms = []
    for a, b in zip(pts, pts[1:]):
        iv = iv_norm([(a, b - 1)])
        if iv:
            atoms.append((a, b - 1))
    return atoms


class Dfa:
    """Complete DFA over an atom partition (``atoms``: sorted disjoint code point
    intervals): ``trans[s][i]`` is the state after atom ``i`` (a dead state included
    where needed; no -1), ``final[s]`` whether ``s`` accepts; start state 0. Lists."""

    def __init__(self, atoms, trans, final):
        self.atoms = atoms
        self.trans = trans
        self.final = final

    # -- construction -------------------------------------------------------
    @classmethod
    def from_ast(cls, x, atoms) -> "Dfa":
        """The minimal DFA of the IR ``x`` (every character set a union of ``atoms``)."""
        starts = [a for a, _ in atoms]
        n_atoms = len(atoms)
        ranges: dict = {}

        def atom_ranges(ivs) -> list:
            """``ivs`` as runs ``(first, last)`` of atom indices."""
            out = []
            for lo, hi in ivs:
                i = bisect.bisect_right(starts, lo) - 1
                j = bisect.bisect_right(starts, hi) - 1
                if out and out[-1][1] == i - 1:
                    out[-1] = (out[-1][0], j)
                else:
                    out.append((i, j))
            return out

        nfa = Nfa(MAX_NFA)

        def leaf(ivs, cur: int) -> int:
            r = ranges.get(ivs)
            if r is None:
                r = ranges[ivs] = atom_ranges(ivs)
            nxt = nfa.new()
            edges = nfa.edges[cur]
            for i, j in r:
                edges.append((i, j, nxt))
            return nxt

        try:
            nfa.start = nfa.new()
            nfa.final = thompson(x, nfa, nfa.start, leaf)
        except TooManyStates:
            raise TooComplex("regex too large for the Boolean operations") from None
        try:
            trans, s2c, accepting = determinize(nfa, n_atoms, MAX_STATES + 1)
        except TooManyStates:
            raise TooComplex("automaton too large for the Boolean operations") from None
        return cls._minimal(atoms, trans[:, s2c], accepting)

    @classmethod
    def _minimal(cls, atoms, trans: np.ndarray, final: np.ndarray) -> "Dfa":
        """The minimal complete DFA of the (partial, -1 for no move) table ``trans``."""
        n_atoms = len(atoms)
        t, old = trim(trans, final)
        if t.shape[0] == 0:
            return cls(atoms, [[0] * n_atoms], [False])
        f = final[old]
        t, old2 = minimize(t, f.astype(np.int64))
        f = f[old2].tolist()
        n = t.shape[0]
        if (t < 0).any():                   # complete it with a dead state
            t = np.vstack([np.where(t < 0, n, t), np.full((1, n_atoms), n, dtype=t.dtype)])
            f.append(False)
        return cls(atoms, t.tolist(), [bool(v) for v in f])

    def minimize(self) -> "Dfa":
        n = len(self.trans)
        trans = np.array(self.trans, dtype=np.int32).reshape(n, len(self.atoms))
        return Dfa._minimal(self.atoms, trans, np.array(self.final, dtype=bool))

    # -- operations -----------------------------------------------------------
    def product(self, other: "Dfa", op) -> "Dfa":
        """The minimal DFA accepting where ``op(self accepts, other accepts)``."""
        if len(self.trans) * len(other.trans) > 50 * MAX_STATES:
            raise TooComplex("automaton product too large")
        pairs, trans = self.pairs(other, MAX_STATES + 1)
        fa, fb = self.final, other.final
        final = np.array([op(fa[x], fb[y]) for x, y in pairs], dtype=bool)
        return Dfa._minimal(self.atoms, trans, final)

    def pairs(self, other: "Dfa", max_states: int) -> tuple:
        """``(pairs, trans)``: the reachable pairs of states of the two (complete DFAs
        over one atom partition), breadth first, and the product's transitions; raises
        TooComplex past ``max_states`` pairs."""
        assert self.atoms == other.atoms
        na, n_atoms = len(self.trans), len(self.atoms)
        g = np.vstack([np.array(self.trans, dtype=np.int32).reshape(na, n_atoms),
                       np.array(other.trans, dtype=np.int32).reshape(-1, n_atoms) + na])
        try:
            states, trans = product_bfs(g, (0, na), max_states)
        except TooManyStates:
            raise TooComplex("automaton too large for the Boolean operations") from None
        return [(x, y - na) for x, y in states], trans

    def complement(self) -> "Dfa":
        return Dfa(self.atoms, self.trans, [not f for f in self.final])

    def is_empty(self) -> bool:
        n = len(self.trans)
        trans = np.array(self.trans, dtype=np.int32).reshape(n, len(self.atoms))
        return trim(trans, np.array(self.final, dtype=bool))[0].shape[0] == 0

    def to_ast(self, limit: int = 4000) -> tuple:
        """Regex AST by state elimination; raises TooComplex past ``limit`` nodes."""
        n = len(self.trans)
        # keep only useful states (reachable and co-reachable)
        reach = {0}
        stack = [0]
        while stack:
            s = stack.pop()
            for t in self.trans[s]:
                if t not in reach:
                    reach.add(t)
                    stack.append(t)
        rev: dict[int, set] = {}
        for s in range(n):
            for t in self.trans[s]:
                rev.setdefault(t, set()).add(s)
        co = {s for s in range(n) if self.final[s]}
        stack = list(co)
        while stack:
            s = stack.pop()
            for p in rev.get(s, ()):
                if p not in co:
                    co.add(p)
                    stack.append(p)
        useful = reach & co
        if 0 not in useful:
            return NONE
        if len(useful) > MAX_ELIM:
            raise TooComplex("automaton too large to turn back into a regex")
        S, F = -1, -2
        out: dict[int, dict[int, tuple]] = {S: {0: EPS}}
        inn: dict[int, dict[int, tuple]] = {0: {S: EPS}}
        for s in useful:
            by_t: dict[int, list] = {}
            for i, t in enumerate(self.trans[s]):
                if t in useful:
                    by_t.setdefault(t, []).append(self.atoms[i])
            for t, ivs in by_t.items():
                lab = ("c", iv_norm(ivs))
                out.setdefault(s, {})[t] = lab
                inn.setdefault(t, {})[s] = lab
            if self.final[s]:
                out.setdefault(s, {})[F] = EPS
                inn.setdefault(F, {})[s] = EPS
        remaining = set(useful)
        while remaining:
            q = min(remaining, key=lambda s: (len(inn.get(s, {})) * len(out.get(s, {})),
                                               sum(ast_size(v) for v in inn.get(s, {}).values())))
            remaining.discard(q)
            loop = out.get(q, {}).pop(q, None)
            inn.get(q, {}).pop(q, None)
            star = rep(loop, 0, None) if loop is not None else EPS
            ins = inn.pop(q, {})
            outs = out.pop(q, {})
            for p, a in ins.items():
                out[p].pop(q, None)
                for r, b in outs.items():
                    inn[r].pop(q, None)
                    lab = seq(a, star, b)
                    old = out[p].get(r)
                    lab = lab if old is None else alt(old, lab)
                    if ast_size(lab) > limit:
                        raise TooComplex("the resulting regex is too large")
                    out[p][r] = lab
                    inn.setdefault(r, {})[p] = lab
            for r in outs:
                inn.get(r, {}).pop(q, None)
        return out.get(S, {}).get(F, NONE)


def _dfas(*asts):
    asts = [resolve_limits(a) for a in asts]
    atoms = atom_partition(*asts)
    return [_node_dfa(a, atoms) for a in asts]


def _node_dfa(x, atoms) -> "Dfa":
    """The DFA of ``x``: a length-limited node (``("L", y, lo, hi)``) is ``y``'s DFA
    times a counter of characters; a node with lookaheads (``("X", y, looks)``) the
    product of ``y``'s with each lookahead's (accepted where it is, or where it is not)."""
    k = x[0]
    if k == "L":
        _, y, lo, hi = x
        return _node_dfa(y, atoms).product(Dfa.from_ast(rep(ANY, lo, hi), atoms), lambda p, q: p and q)
    if k == "X":
        d = _node_dfa(x[1], atoms)
        for pos, y in x[2]:
            d = d.product(_node_dfa(y, atoms), (lambda p, q: p and q) if pos else (lambda p, q: p and not q))
        return d
    return Dfa.from_ast(x, atoms)


def limited(x, lo: int, hi) -> tuple:
    """``x`` limited to ``lo..hi`` characters: :func:`limit_length`'s regex where it is
    small, else the node ``("L", x, lo, hi)``, which the Boolean operations here read as
    a product of DFAs and :func:`~.emit.to_json_string` spells as a lookahead (the lexer
    intersects the two, counting long repetitions). A node with lookaheads (``"X"``)
    limits its body, or takes the length as one more lookahead. A bound that ``x``'s own
    lengths imply is dropped first (``maxLength: 2048`` beside a pattern of at most 1,113
    characters): the other one alone is paired with the pattern."""
    lo, hi = unimplied_bounds(x[1] if x[0] == "X" else x, lo, hi)
    if lo == 0 and hi is None:
        return x
    if x[0] == "X":
        try:
            return ("X", _no_blowup(limit_length(x[1], lo, hi), x[1]), x[2])
        except TooComplex:
            return ("X", x[1], x[2] + ((True, rep(ANY, lo, hi)),))
    try:
        return _no_blowup(limit_length(x, lo, hi), x)
    except TooComplex:
        return ("L", x, lo, hi)


def unimplied_bounds(x, lo: int, hi) -> tuple:
    """``(lo, hi)`` without the bounds every string of ``x`` meets (``lo`` 0, ``hi``
    None where implied)."""
    try:
        a, b = length_range(write_out(x, 4000) if has_limits(x) else x)
    except TooComplex:
        return lo, hi
    if b == -1:
        return lo, hi                 # no string: limit_length says so
    if hi is not None and b is not None and b <= hi:
        hi = None
    if a >= lo:
        lo = 0
    return lo, hi


#: a written-out result this many times heavier than its operand (and past
#: :data:`HEAVY`) is not taken (:func:`_no_blowup`)
BLOWUP = 8
HEAVY = 20_000


def _no_blowup(result, operand) -> tuple:
    """``result``, unless it is far heavier than ``operand`` (:func:`weight`): a length
    written into a written-out difference of wide classes repeats each class at every
    count (megabytes of regex text for ``^(?!aws:|rds:)[\\p{L}\\p{Z}\\p{N}...]+$`` with
    ``maxLength: 128``, seconds of parsing per terminal); then TooComplex, so that the
    length stays a lookahead the lexer meets."""
    w = weight(result)
    if w > HEAVY and w > BLOWUP * weight(operand):
        raise TooComplex("the length-limited regex is far larger than the pattern")
    return result


def weight(x) -> int:
    """Nodes plus character-set intervals of the IR ``x``: about the size of its text."""
    return sum(1 + (len(y[1]) if y[0] == "c" else 0) for y in nodes(x))


def looking(body, looks) -> tuple:
    """The node ``("X", body, looks)`` (the words of ``body`` that are, for each
    ``(True, y)`` in ``looks``, or are not, for each ``(False, y)``, words of ``y``),
    flattened: a body or positive lookahead with lookaheads of its own lends them."""
    out = []
    while body[0] == "X":
        out.extend(body[2])
        body = body[1]
    for pos, y in looks:
        if pos and y[0] == "X":
            out.append((True, y[1]))
            out.extend(y[2])
        elif y != ANYSTAR or not pos:
            out.append((pos, y))
    return ("X", body, tuple(out)) if out else body


def meet(*asts, limit: int = 4000) -> tuple:
    """The intersection of ``asts``: a regex where it is small (:func:`intersect`), else
    the first with the others as lookaheads (:func:`looking`), which the lexer
    intersects as automata."""
    try:
        return intersect(*asts, limit=limit)
    except TooComplex:
        return looking(asts[0], tuple((True, y) for y in asts[1:]))


def has_limits(x) -> bool:
    """Whether the IR ``x`` holds an ``"L"`` or ``"X"`` node (:func:`limited`,
    :func:`looking`)."""
    return has_node(x, ("L", "X"))


def resolve_limits(x, limit: int = 4000) -> tuple:
    """``x`` with every ``"L"`` or ``"X"`` node below its top written out as a regex
    (raises TooComplex where that is too large); a top-level one is kept."""
    if x[0] == "L":
        return ("L", resolve_limits(x[1], limit), x[2], x[3]) if has_limits(x[1]) else x
    if x[0] == "X":
        return ("X", resolve_limits(x[1], limit),
                tuple((pos, write_out(y, limit)) for pos, y in x[2]))
    return write_out(x, limit)


def write_out(x, limit: int = 4000) -> tuple:
    """``x`` with every ``"L"`` or ``"X"`` node, its top included, written out as a regex
    (raises TooComplex where that is too large)."""
    if not has_limits(x):
        return x
    return map_limits(x, lambda y, lo, hi: limit_length(y, lo, hi, limit),
                      lambda y, looks: _looks_written_out(y, looks, limit))


def _looks_written_out(body, looks, limit: int) -> tuple:
    """The regex of ``("X", body, looks)`` (raises TooComplex where it is too large)."""
    x = ("X", body, looks)
    return _node_dfa(x, atom_partition(x)).to_ast(limit)


def map_limits(x, f, g=None) -> tuple:
    """``x`` with every ``("L", y, lo, hi)`` node (innermost first) replaced by
    ``f(y, lo, hi)`` and every ``("X", y, looks)`` by ``g(y, looks)`` (kept where
    ``g`` is None)."""
    k = x[0]
    if k == "L":
        return f(map_limits(x[1], f, g), x[2], x[3])
    if k == "X":
        y = map_limits(x[1], f, g)
        looks = tuple((pos, map_limits(z, f, g)) for pos, z in x[2])
        return ("X", y, looks) if g is None else g(y, looks)
    if k == "s":
        return seq(*[map_limits(y, f, g) for y in x[1]])
    if k == "a":
        return alt(*[map_limits(y, f, g) for y in x[1]])
    if k == "r":
        return rep(map_limits(x[1], f, g), x[2], x[3])
    return x


def intersect(*asts, limit: int = 4000) -> tuple:
    """AST of the intersection (raises TooComplex when too large)."""
    asts = [a for a in asts]
    if any(a == NONE for a in asts):
        return NONE
    asts = [a for a in asts if a != ANYSTAR]
    if not asts:
        return ANYSTAR
    if len(asts) == 1:
        return asts[0]
    ds = _dfas(*asts)
    d = ds[0]
    for e in ds[1:]:
        d = d.product(e, lambda x, y: x and y)
    return d.to_ast(limit)


def difference(a, b, limit: int = 4000) -> tuple:
    if b == NONE:
        return a
    da, db = _dfas(a, b)
    return da.product(db, lambda x, y: x and not y).to_ast(limit)


def exclude(a, b, limit: int = 4000) -> tuple:
    """The strings of ``a`` not in ``b``: :func:`difference`'s regex where it is small,
    else ``b`` as a negative lookahead on ``a`` (:func:`looking`; ``b`` written out,
    TooComplex where that is too large)."""
    try:
        return difference(a, b, limit)
    except TooComplex:
        return looking(a, ((False, write_out(b, limit)),))


def union(*asts) -> tuple:
    """The union of ``asts``: their alternation, where nodes that stand only at the top
    are all length-limited with the same bounds (``("L", y, lo, hi)``) or all hold the same
    lookaheads (``("X", y, looks)``), one such node over the union of their bodies (the
    union of strings of one ``maxLength`` stays a lookahead the lexer meets); one node with
    lookaheads beside plain regexes, one such node over the union (each lookahead widened
    by, or a negative one less, the regexes)."""
    asts = [a for a in asts if a != NONE]
    groups: dict = {}                # top-only nodes by kind and bounds (lookaheads)
    plain = []
    for a in asts:
        if a[0] in ("L", "X"):
            groups.setdefault((a[0],) + tuple(a[2:]), []).append(a[1])
        else:
            plain.append(a)
    tops = [(k[0], union(*bodies)) + k[1:] for k, bodies in groups.items()]
    if len(tops) == 1 and tops[0][0] == "X" and plain and not any(has_limits(a) for a in plain):
        # (B ∩ A) ∪ C = (B ∪ C) ∩ (A ∪ C), (B \ N) ∪ C = (B ∪ C) \ (N \ C)
        x, c = tops[0], alt(*plain)
        try:
            looks = tuple((True, alt(y, c)) if pos else (False, difference(y, c)) for pos, y in x[2])
        except TooComplex:
            return alt(*(tops + plain))
        return ("X", alt(x[1], c), looks)
    return alt(*(tops + plain))


def complement(a, limit: int = 4000) -> tuple:
    (d,) = _dfas(a)
    return d.complement().to_ast(limit)


def is_empty(a) -> bool:
    if a == NONE:
        return True
    (d,) = _dfas(a)
    return d.is_empty()


#: reachable pairs :func:`is_disjoint` explores (it keeps no automaton: a larger bound
#: than the Boolean operations')
MAX_DISJOINT_PAIRS = 250_000


def is_disjoint(a, b) -> bool:
    if a == NONE or b == NONE:
        return True
    da, db = _dfas(a, b)
    if len(da.trans) * len(db.trans) <= 50 * MAX_STATES:
        return da.product(db, lambda x, y: x and y).is_empty()
    # the reachable pairs only, none minimized: is any pair accepting in both?
    fa, fb = da.final, db.final
    return not any(fa[x] and fb[y] for x, y in da.pairs(db, MAX_DISJOINT_PAIRS)[0])


def is_subset(a, b) -> bool:
    if a == NONE:
        return True
    da, db = _dfas(a, b)
    return da.product(db, lambda x, y: x and not y).is_empty()


def drop_implied_bounds(x, hi):
    """``x`` with the upper bound of a repetition dropped where the length limit ``hi``
    already implies it: in a top-level sequence (of each top-level alternative), ``y{a,b}``
    whose other items need ``m`` characters, where ``b`` iterations of at least ``len_y``
    characters reach ``hi - m`` (``^arn:...:model-package/[\\S]{1,2048}$`` with
    ``maxLength: 2048``). The same strings of at most ``hi`` characters, with one count
    fewer for the length-limited automaton to pair with the length's."""
    if hi is None:
        return x
    if x[0] == "X":
        return ("X", drop_implied_bounds(x[1], hi), x[2])
    if x[0] == "a":
        return alt(*[drop_implied_bounds(y, hi) for y in x[1]])
    items = list(x[1]) if x[0] == "s" else [x]
    mins = [length_range(y)[0] for y in items]
    if any(m == float("inf") for m in mins):
        return x
    total = sum(mins)
    changed = False
    for i, y in enumerate(items):
        if y[0] != "r" or y[3] is None:
            continue
        _, body, a, b = y
        ly = length_range(body)[0]
        if ly >= 1 and hi - (total - mins[i]) <= b * ly:
            items[i] = rep(body, a, None)
            changed = True
    return seq(*items) if changed else x


def limit_length(x, lo: int, hi, limit: int = 4000) -> tuple:
    """AST of the strings of ``x`` with ``lo <= len <= hi`` (hi None = no
    upper bound). Tries structural rewrites first (exact), then a DFA product;
    raises TooComplex when neither gives a small regex."""
    if has_limits(x):
        x = write_out(x, limit)
    a, b = length_range(x)
    if b == -1:
        return NONE
    if a >= lo and (hi is None or (b is not None and b <= hi)):
        return x
    r = _rewrite_len(x, lo, hi)
    if r is not None:
        return r
    return intersect(x, rep(ANY, lo, hi), limit=limit)


def _fixed_len(x):
    a, b = length_range(x)
    return a if a == b else None


def _rewrite_len(x, lo: int, hi):
    """Structural length restriction: alternation distributes; a
    concatenation with exactly one variable-length part passes the remaining
    budget to it; a repetition of a fixed-length body gets new counts."""
    k = x[0]
    if k == "a":
        parts = []
        for y in x[1]:
            r = _rewrite_len(y, lo, hi)
            if r is None:
                return None
            parts.append(r)
        return alt(*parts)
    if k == "c":
        return x if lo <= 1 and (hi is None or hi >= 1) else NONE
    if k == "s":
        fixed = 0
        var = None
        for i, y in enumerate(x[1]):
            f = _fixed_len(y)
            if f is None:
                if var is not None:
                    return None
                var = i
            else:
                fixed += f
        if var is None:
            return x if fixed >= lo and (hi is None or fixed <= hi) else NONE
        r = _rewrite_len(x[1][var], max(0, lo - fixed), None if hi is None else hi - fixed)
        if r is None:
            return None
        items = list(x[1])
        items[var] = r
        return seq(*items)
    _, y, a, b = x
    f = _fixed_len(y)
    if f is None:
        return None
    if f == 0:
        return x if lo == 0 else NONE
    na = max(a, -(-lo // f))
    nb = b
    if hi is not None:
        nb = hi // f if b is None else min(b, hi // f)
    return rep(y, na, nb)


# --------------------------------------------------------------------------
# word boundaries decided by the whole string
# --------------------------------------------------------------------------

#: stand-ins for ``\b`` and ``\B`` in an IR, past the last code point (no character set of
#: a pattern holds them, :data:`~stackmask.lexer.ir.UNIVERSE` included)
WB_MARK = (MAX_CP + 1, MAX_CP + 1)
NWB_MARK = (MAX_CP + 2, MAX_CP + 2)


def resolve_word_boundaries(x, word) -> tuple:
    """The IR ``x`` whose ``\\b``/``\\B`` stand as the characters :data:`WB_MARK`/
    :data:`NWB_MARK` (one where the assertion holds), with the assertions decided on the
    whole string: its words with marks, met with the words whose every mark sits where
    its assertion holds (the characters before and after, ``word`` characters or not;
    the start and end of the string count as not), the marks then erased. TooComplex
    where an automaton or the regex back passes the Boolean operations' limits."""
    atoms = atom_partition(x, ("c", word)) + [WB_MARK, NWB_MARK]
    d = Dfa.from_ast(x, atoms)
    n = len(atoms)
    mb, mnb = n - 2, n - 1
    kind = [1 if iv_intersect((a,), word) else 0 for a in atoms[:-2]]
    # the marks' automaton: state = 3 * (last character a word one) + what the next
    # character must be (0 anything, 1 a word one, 2 not one or the end); 6 dead
    dead = 6
    trans, final = [], []
    for prev in (0, 1):
        for req in (0, 1, 2):
            row = []
            for k in kind:
                bad = (req == 1 and k != 1) or (req == 2 and k == 1)
                row.append(dead if bad else 3 * k)
            for boundary in (True, False):
                need = (2 if prev else 1) if boundary else (1 if prev else 2)
                row.append(3 * prev + need if req in (0, need) else dead)
            trans.append(row)
            final.append(req != 1)
    trans.append([dead] * n)
    final.append(False)
    marks = Dfa(atoms, trans, final)
    both = d.product(marks, lambda a, b: a and b)
    # erase the marks: the product as an NFA whose marks are no moves, determinized
    nfa = Nfa(MAX_NFA)
    for _ in both.trans:
        nfa.new()
    nfa.start, nfa.final = 0, nfa.new()
    for q, row in enumerate(both.trans):
        nfa.eps[q].extend((row[mb], row[mnb]))
        nfa.edges[q].extend((i, i, r) for i, r in enumerate(row[:mb]))
        if both.final[q]:
            nfa.eps[q].append(nfa.final)
    try:
        trans, s2c, accepting = determinize(nfa, n - 2, MAX_STATES + 1)
    except TooManyStates:
        raise TooComplex("automaton too large for the Boolean operations") from None
    out = Dfa._minimal(atoms[:-2], trans[:, s2c], accepting)
    return out.to_ast()
