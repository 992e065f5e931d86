"""Graph utilities of the automaton compiler.

:func:`topological_order` orders the states of the Parser DWA
(:mod:`stackmask.compile.parser_dwa`) and detects a cycle in it.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["topological_order"]


def topological_order(states: Iterable[int], succ) -> list[int] | None:
    """Topological order of ``states`` (DFS post-order reversed) or None on a cycle."""
    WHITE, GREY, BLACK = 0, 1, 2
    color: dict[int, int] = {}
    post: list[int] = []
    for root in states:
        if color.get(root, WHITE) != WHITE:
            continue
        color[root] = GREY
        stack = [(root, iter(succ[root]))]
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt in it:
                c = color.get(nxt, WHITE)
                if c == GREY:
                    return None
                if c == WHITE:
                    color[nxt] = GREY
                    stack.append((nxt, iter(succ[nxt])))
                    advanced = True
                    break
            if not advanced:
                color[node] = BLACK
                post.append(node)
                stack.pop()
    post.reverse()
    return post
