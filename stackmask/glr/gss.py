"""Graph-structured stack and the GLR step over (normal-form) LR tables.

Nodes are immutable once the step that created them has finished, so a parse
configuration is a persistent value: old states share nodes with new ones and
stay valid. Because the normal form has no epsilon rules, every link goes
strictly backwards in the input, and a node created by a reduction at the
current position only ever gains links during the same step; a new link is
then reduced through on its own (the classic correction for GLR with shared
nodes), so no reduction path is missed.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import LimitExceeded
from .lalr import LRTables


_NO_MASK = (None, None)


class Node:
    """One GSS node: an LR state with links to the nodes below it."""

    #: ``shift_memo`` belongs to :meth:`GLR.can_shift` (and its compiled twin in
    #: ``stackmask._native``): terminal -> whether it can be shifted after reductions.
    #: ``mask_memo``, ``walk_memo``, ``link_groups``, ``base_memo`` and ``route_memo``
    #: belong to the masker (:mod:`stackmask.runtime.masker`), which keeps its memos on
    #: the nodes it walks.
    __slots__ = ("state", "links", "below", "shift_memo", "mask_memo", "walk_memo",
                 "link_groups", "base_memo", "route_memo", "__weakref__")

    #: the slots ``__init__`` sets to fixed values: the compiled twin of ``GLR.shift1``
    #: (``stackmask._native``) builds nodes without calling ``__init__`` and sets these
    #: (a test checks that both give equal nodes)
    FIXED_SLOTS = (("shift_memo", None), ("mask_memo", _NO_MASK), ("walk_memo", None))

    def __init__(self, state: int, links: list):
        self.state = state
        self.links = links            # list[Node]; never changed after its step
        self.below = links[0] if len(links) == 1 else None   # the only link, if one
        self.shift_memo = None        # memo: terminal -> bool
        self.mask_memo = _NO_MASK    # memo of the masker: (lexer config, weights met)
        self.walk_memo = None        # memo of the masker: automaton state -> weights met
                                      # walking this node's links (several links only)
        # link_groups (memo of the masker: links grouped by state), base_memo (the walk
        # of a base configuration, for configurations on a base) and route_memo (held-out
        # start items that hold on the stack from here) are set on first use

    def __repr__(self) -> str:
        return f"Node({self.state}, {len(self.links)} links)"


def _bases(node: Node, length: int, via: Node | None) -> tuple[list[Node], int]:
    """Distinct nodes reached by popping ``length`` links from ``node``
    (the first link restricted to ``via`` when given), and the links followed."""
    level = [via] if via is not None else node.links
    cost = len(level)
    for _ in range(length - 1):
        nxt: dict[int, Node] = {}
        for n in level:
            cost += len(n.links)
            for p in n.links:
                nxt[id(p)] = p
        level = list(nxt.values())
    return level, cost


AMBIGUOUS = object()   # shift1: the deterministic fast path does not apply


class GLR:
    """The GLR step: reductions for one lookahead terminal, then its shift."""

    def __init__(self, tables: LRTables, max_work: int | None = None, compiled=None):
        """``compiled``: the compiled inner loops (``stackmask.native.module()``) or
        None; with them, :meth:`reduce_all`, :meth:`shift` and :meth:`can_shift` are
        their compiled twin (``GLRStep``: the same nodes in the same order), these methods
        the reference."""
        self.tables = tables
        self.max_work = max_work      # Limits.max_gss_work: per reduction pass
        self.end = 0  # terminal index of END
        self._shift = tables.shift
        self._reduce = tables.reduce
        self._goto = tables.goto
        self._rlen = tables.rule_len
        self._rlhs = tables.rule_lhs
        self.root = Node(tables.start_state, [])
        #: the compiled GLR step (``GLRStep``; None on the pure-Python path)
        self.step = None
        if compiled is not None:
            self.step = compiled.GLRStep(self.shift1_tables(), max_work, self._too_much)
            self.reduce_all = self.step.reduce_all
            self.shift = self.step.shift
            self.can_shift = self.step.can_shift

    def _too_much(self, spent: int, nodes: int):
        raise LimitExceeded("max_gss_work", spent, self.max_work,
                            "one GLR reduction pass did too much work",
                            f"{nodes} GSS nodes; the grammar is highly ambiguous "
                            "(ambiguous=True), so the parse graph grows with the text")

    def reduce_all(self, starts: Iterable[Node], term: int) -> list[Node]:
        """Every node reachable from ``starts`` by reductions on lookahead
        ``term`` (the starts included).

        Raises :class:`LimitExceeded` when the pass does more than ``max_work`` units of
        work (links followed and compared): a highly ambiguous grammar's GSS grows links
        with the text and the reductions over them grow quadratically."""
        reduce = self._reduce
        goto = self._goto
        rlen = self._rlen
        rlhs = self._rlhs
        nodes = list(starts)
        created: dict[int, Node] = {}
        work: list[tuple[Node, Node | None]] = [(n, None) for n in nodes if term in reduce[n.state]]
        spent = 0
        limit = self.max_work
        while work:
            n, via = work.pop()
            for r in reduce[n.state].get(term, ()):
                lhs = rlhs[r]
                bases, cost = _bases(n, rlen[r], via)
                spent += cost
                for base in bases:
                    g = goto[base.state][lhs]
                    m = created.get(g)
                    if m is None:
                        m = Node(g, [base])
                        created[g] = m
                        nodes.append(m)
                        if term in reduce[g]:
                            work.append((m, None))
                    else:
                        links = m.links
                        spent += len(links)
                        if not any(x is base for x in links):
                            links.append(base)
                            m.below = None
                            if term in reduce[g]:
                                work.append((m, base))
            if limit is not None and spent > limit:
                self._too_much(spent, len(nodes))
        return nodes

    def shift(self, starts: Iterable[Node], term: int) -> list[Node]:
        """Reduce on lookahead ``term`` then shift it: the new top nodes, one
        per LR state (heads reaching the same state merge)."""
        shift = self._shift
        out: dict[int, Node] = {}
        for n in self.reduce_all(starts, term):
            s2 = shift[n.state].get(term)
            if s2 is not None:
                m = out.get(s2)
                if m is None:
                    out[s2] = Node(s2, [n])
                elif not any(x is n for x in m.links):
                    m.links.append(n)
                    m.below = None
        return list(out.values())

    def shift1(self, node: Node, term: int):
        """``shift((node,), term)`` when the parse is deterministic there: the new
        top node, or ``None`` when ``term`` cannot be shifted. Returns ``AMBIGUOUS``
        (and builds nothing visible) where GLR would branch: a conflict on
        ``term`` or a reduction popping through a node with several links."""
        reduce = self._reduce
        shift = self._shift
        n = node
        while True:
            st = n.state
            rs = reduce[st].get(term)
            if not rs:
                s2 = shift[st].get(term)
                return None if s2 is None else Node(s2, [n])
            if len(rs) != 1 or term in shift[st]:
                return AMBIGUOUS
            r = rs[0]
            base = n
            for _ in range(self._rlen[r]):
                links = base.links
                if len(links) != 1:
                    return AMBIGUOUS
                base = links[0]
            n = Node(self._goto[base.state][self._rlhs[r]], [base])

    def shift1_tables(self) -> tuple:
        """What :meth:`shift1` reads, for its compiled twin (``stackmask._native``):
        ``(reduce, shift, rule_len, rule_lhs, goto, Node, AMBIGUOUS)``."""
        return (tuple(self._reduce), tuple(self._shift), tuple(self._rlen), tuple(self._rlhs),
                tuple(self._goto), Node, AMBIGUOUS)

    def can_shift(self, node: Node, term: int) -> bool:
        """Whether ``term`` can be shifted after reductions (memoized per node)."""
        shift = self._shift
        if term in shift[node.state]:
            return True
        memo = node.shift_memo
        if memo is None:
            memo = node.shift_memo = {}
        v = memo.get(term)
        if v is None:
            v = any(term in shift[n.state] for n in self.reduce_all((node,), term))
            memo[term] = v
        return v

    def accepts(self, node: Node) -> bool:
        """Whether the stack(s) under ``node`` form a complete sentence."""
        acc = self.tables.accept_state
        start = self.tables.start_state
        for n in self.reduce_all((node,), self.end):
            if n.state == acc and any(p.state == start and not p.links for p in n.links):
                return True
        return False
