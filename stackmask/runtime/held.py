"""The mask-time check of the start items held out of the mask automaton.

Where an automaton would not complete with them, the start items of several terminals
are held out of it (``ParserDWA.routed``; DESIGN, *Routing*): a mask runs each on the
head's stack instead. An item reads a GSS node's LR state (a symbolic LR run,
:meth:`ParserDWA.routed_step`), then the items it waits for read each link below; the
answer is memoized on the node by item (a node's stack is fixed once the commit that
made it has finished). :class:`HeldOut` is the reference (:meth:`HeldOut.holds`) and
uses the compiled twin (``_native.HeldChecks``) where the extension is built.
"""

from __future__ import annotations

import time

from ..glr.gss import Node
from ..limits import deep_recursion


class HeldOut:
    """The held-out items' check for one constraint's automaton ``dwa``."""

    #: items the compiled check reads between two measures of its memos
    STEPS_BETWEEN_BOUNDS = 4096
    #: seconds the items' runs may take ahead, at construction or load (:meth:`warm`)
    WARM_S = 0.5

    def __init__(self, dwa):
        self.dwa = dwa
        #: the compiled check (None: the reference, :meth:`holds`)
        self.compiled = dwa.held_checks(Node)
        self._bound = self.STEPS_BETWEEN_BOUNDS     # when its memos are next measured

    def weights(self, node, held: tuple) -> frozenset:
        """The weights of the start items ``held`` (``((item, weight id), ...)``) that
        hold on the stack from ``node`` down. The compiled check runs under the
        automaton's lock (its runs' memos are shared)."""
        checks = self.compiled
        if checks is not None:
            dwa = self.dwa
            with dwa.lock:
                r = checks.weights(node, held)
                if checks.steps > self._bound:
                    self._bound = checks.steps + self.STEPS_BETWEEN_BOUNDS
                    if checks.memo_entries() * dwa.CORE_ENTRY_BYTES > dwa.memo_bytes:
                        checks.clear_memos()
            return r
        out = set()
        with deep_recursion():       # one frame per entry an item reads (Java: 200 deep)
            for it, w in held:
                if w not in out and self.holds(it, node):
                    out.add(w)
        return frozenset(out)

    def holds(self, item: tuple, node) -> bool:
        """Whether ``item`` succeeds on some stack from ``node`` down: it reads the
        node's state, then the items it waits for read each link below (memoized on the
        node by item). The runs are acyclic, so the recursion is as deep as an item
        reads."""
        memo = getattr(node, "route_memo", None)
        if memo is None:
            memo = node.route_memo = {}
        r = memo.get(item)
        if r is None:
            waits = self.dwa.routed_step(item, node.state)
            r = waits is True
            if not r and waits:
                links = node.links
                holds = self.holds
                r = any(holds(it2, n2) for it2 in waits for n2 in links)
            memo[item] = r
        return r

    def warm(self) -> int:
        """Make ahead the compiled runs of the held-out items (and of every item they
        may wait for, on every stack state it may read; SQL: 14,500 items, 460,000 steps
        in 0.2 s, 22 MB) and each start's first steps, for at most ``WARM_S``: made on
        first use, they made the cold masks of unseen programs several times slower in
        the tail. Returns the steps."""
        checks, dwa = self.compiled, self.dwa
        if checks is None or not dwa.routed:
            return 0
        helds = list({id(h): h for h in dwa.routed.values()}.values())
        with dwa.lock:
            _, steps, _ = checks.warm(helds, dwa.templates.relevant,
                                      time.perf_counter() + self.WARM_S, time.perf_counter)
        return steps
