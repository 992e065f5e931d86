"""Free-text terminals (:class:`stackmask.grammar.FreeText`) as byte DFAs.

"Any text in which no tag occurs" is a complement, which a Python regex
cannot express, so these terminals are built directly: the Aho-Corasick
automaton of the excluded strings (over their UTF-8 bytes) run in product
with the UTF-8 validity automaton of ``(?s:.)+``, then trimmed and minimized
like every regex terminal. The result obeys the lexer's usual rule: only
valid UTF-8 is accepted, and a byte string ending inside a character is only
ever a prefix.

* ``FreeText(exclude)``: accepting while no excluded string has occurred and
  the text ends at a character boundary; the moment one occurs the automaton
  dies.
* ``FreeText(exclude, until=s)``: accepting only right after the first
  occurrence of any excluded string, if the longest one ending there is
  ``s``; nothing follows (one lexeme = free text + the tag).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import GrammarError
from ..grammar import FreeText
from .dfa import DFA
from ..wfa.reduction import minimize, trim
from .terminal_dfa import compile_terminal

__all__ = ["free_text_dfa"]


def _aho_corasick(patterns: list[bytes]) -> tuple[list[list[int]], list[int]]:
    """Full byte DFA of the Aho-Corasick automaton: ``(goto, match)`` where
    ``match[q]`` is the index of the longest pattern that is a suffix of the
    text read (-1: none)."""
    goto: list[dict[int, int]] = [{}]
    own = [-1]
    for k, p in enumerate(patterns):
        q = 0
        for b in p:
            nq = goto[q].get(b)
            if nq is None:
                nq = len(goto)
                goto[q][b] = nq
                goto.append({})
                own.append(-1)
            q = nq
        if own[q] < 0 or len(patterns[own[q]]) < len(p):
            own[q] = k
    n = len(goto)
    full = [[0] * 256 for _ in range(n)]
    fail = [0] * n
    match = [-1] * n
    match[0] = own[0]
    order = []
    for b, q in goto[0].items():
        full[0][b] = q
        order.append(q)
    i = 0
    while i < len(order):
        q = order[i]
        i += 1
        f = fail[q]
        match[q] = own[q] if own[q] >= 0 else match[f]
        row = full[q]
        frow = full[f]
        for b in range(256):
            row[b] = frow[b]
        for b, r in goto[q].items():
            fail[r] = full[f][b]
            row[b] = r
            order.append(r)
    return full, match


@lru_cache(maxsize=256)
def free_text_dfa(spec: FreeText, name: str = "") -> DFA:
    """Minimized byte DFA of a :class:`FreeText` terminal (accepts == {0})."""
    pats = [x.encode("utf-8") for x in spec.exclude]
    until = None if spec.until is None else spec.exclude.index(spec.until)
    ac, match = _aho_corasick(pats)
    utf = compile_terminal(r"(?s:.)+")
    ut = utf.rows()
    uacc = [bool(a) for a in utf.accepts]
    ids = {(0, 0): 0}
    pairs = [(0, 0)]
    rows: list[list[int]] = []
    accepting: list[bool] = [False]
    FINAL = -2
    final_id = None
    i = 0
    while i < len(pairs):
        u, a = pairs[i]
        i += 1
        row = [-1] * 256
        if (u, a) != (FINAL, FINAL):
            urow, arow = ut[u], ac[a]
            for b in range(256):
                u2 = urow[b]
                if u2 < 0:
                    continue
                a2 = arow[b]
                m = match[a2]
                if m >= 0:
                    if m != until:
                        continue
                    assert uacc[u2]
                    key = (FINAL, FINAL)
                else:
                    key = (u2, a2)
                d = ids.get(key)
                if d is None:
                    d = ids[key] = len(pairs)
                    pairs.append(key)
                    accepting.append(key == (FINAL, FINAL) if until is not None else uacc[u2])
                    if key == (FINAL, FINAL):
                        final_id = d
                row[b] = d
        rows.append(row)
    del final_id
    trans = np.array(rows, dtype=np.int32).reshape(len(rows), 256)
    acc = np.array(accepting, dtype=bool)
    t, old = trim(trans, acc)
    label = name or f"FreeText{spec.exclude!r}"
    if t.shape[0] == 0:
        raise GrammarError(f"terminal {label!r} matches no string at all", name=name or None)
    acc = acc[old]
    t, old2 = minimize(t, acc.astype(np.int64))
    acc = acc[old2]
    accepts = tuple(frozenset((0,)) if x else frozenset() for x in acc.tolist())
    return DFA(trans=np.ascontiguousarray(t, dtype=np.int32), accepts=accepts, n_states=t.shape[0])
