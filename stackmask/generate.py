"""Random sentences and near-miss mutations of a grammar, for tests and benchmarks.

:class:`SentenceGenerator` draws a random derivation from the grammar's start
symbol (a terminal sequence), samples a text for every terminal from the
terminal's byte DFA, and joins the texts so that the project's lexing rule
(global maximal munch, see ``DESIGN.md``) yields exactly the intended terminal
sequence::

    gen = SentenceGenerator(Grammar.from_lark(text), seed=0)
    text, terminals = gen.sentence()
    assert [next(iter(w)) for w in gen.lex(text)] == terminals   # (no ties)

:func:`mutate` turns a text into a near miss (one small edit) and reports the
first character where the result differs from the original.

Joining texts
-------------
Texts are appended left to right. Every lexeme placed so far (terminal texts
and separators) keeps the state of the combined lexer DFA run from its start
over everything appended after it; a candidate continuation is rejected the
moment one of those runs reaches an accepting state (a longer match would
exist, so maximal munch would not cut where we intend) and dropped from the
set once the run dies. The new text itself must end in a state whose winner
set (highest priority, then literals over regexes) contains the intended
terminal and no ignored terminal. This is exact global maximal munch, checked
incrementally, so no ``lex`` of the whole text is needed while generating.

For each terminal the generator tries the join with nothing in between, then
with each separator (single lexemes of ``%ignore`` terminals, ``" "`` first;
none when the grammar ignores nothing); if none works it re-samples the
terminal's text a few times, then steps back and re-samples the previous one,
and after a bounded number of such steps it draws a new derivation.
"""

from __future__ import annotations

import heapq
import random
from typing import Sequence

import numpy as np

from .grammar import Grammar
from .lexer.combined import compile_lexer
from .lexer.dfa import DFA
from .lexer.terminal_dfa import compile_terminal

__all__ = ["SentenceGenerator", "mutate"]

_INF = 1 << 60

# byte tiers used by the random walk
_PRINT = frozenset(range(0x20, 0x7F))           # printable ASCII incl. space
_WS = frozenset((0x09, 0x0A, 0x0D))              # tab, newline, carriage return
_LEAD = frozenset(range(0xC2, 0xF5))             # UTF-8 lead bytes
_CONT = frozenset(range(0x80, 0xC0))             # UTF-8 continuation bytes


def _utf8_len(lead: int) -> int:
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


class _Walker:
    """Random walks on one terminal's DFA."""

    __slots__ = ("dfa", "rows", "acc", "live", "dist", "_opts", "only")

    def __init__(self, dfa: DFA):
        self.dfa = dfa
        self.rows = dfa.trans.tolist()
        self.acc = [bool(a) for a in dfa.accepts]
        self.live = [bool(x) for x in np.asarray(dfa.live_out)]
        # distance (in bytes) to the nearest accepting state
        n = dfa.n_states
        dist = np.where(np.fromiter(self.acc, dtype=bool, count=n), 0, _INF).astype(np.int64)
        trans = dfa.trans
        while True:
            ext = np.append(dist, _INF)                  # index -1 -> _INF
            best = ext[trans].min(axis=1) + 1
            new = np.minimum(dist, best)
            if np.array_equal(new, dist):
                break
            dist = new
        self.dist = dist.tolist()
        self._opts: dict[int, tuple] = {}
        # a language of one string (a plain literal): no walk needed
        self.only: bytes | None = None
        live_bytes = (trans >= 0).sum(axis=1)
        if int(live_bytes.max(initial=0)) <= 1:
            out, st = bytearray(), 0
            while not self.acc[st]:
                b = int(np.argmax(trans[st] >= 0))
                out.append(b)
                st = self.rows[st][b]
            if not self.live[st]:
                self.only = bytes(out)

    def options(self, s: int) -> tuple:
        """(tiers, greedy tiers) of the live bytes leaving ``s``; a tier list is
        (printable, whitespace, UTF-8 lead, continuation, other)."""
        o = self._opts.get(s)
        if o is None:
            row = self.rows[s]
            dist = self.dist
            ds = dist[s]
            tiers: tuple[list[int], ...] = ([], [], [], [], [])
            greedy: tuple[list[int], ...] = ([], [], [], [], [])
            for b in range(256):
                t = row[b]
                if t < 0:
                    continue
                k = (0 if b in _PRINT else 1 if b in _WS else 2 if b in _LEAD
                     else 3 if b in _CONT else 4)
                tiers[k].append(b)
                if dist[t] < ds:
                    greedy[k].append(b)
            o = (tiers, greedy)
            self._opts[s] = o
        return o

    @staticmethod
    def _pick(tiers: tuple[list[int], ...], rng: random.Random, mode: int, p_hi: float) -> int:
        pr, ws, hi, cont, other = tiers
        if mode == 0:
            r = rng.random()
            if hi and r < p_hi:
                return rng.choice(hi)
            if ws and r < p_hi + 0.03:
                return rng.choice(ws)
            for t in (pr, ws, hi, other):
                if t:
                    return rng.choice(t)
        else:  # diverse: every available tier equally likely
            avail = [t for t in (pr, ws, hi) if t] or [t for t in (other,) if t]
            if avail:
                return rng.choice(rng.choice(avail))
        return -1

    def walk(self, rng: random.Random, mode: int = 0, max_len: int = 48) -> bytes | None:
        """One random member of the language (as bytes), or None when the walk
        produced invalid UTF-8. ``mode`` 0 prefers printable ASCII (about one
        text in ten may use non-ASCII characters where ASCII would do), 1
        picks byte classes (printable / whitespace / non-ASCII) uniformly."""
        if self.only is not None:
            return self.only
        rows, acc, live = self.rows, self.acc, self.live
        out = bytearray()
        s = 0
        cont_left = 0
        p_hi = 0.12 if rng.random() < 0.1 else 0.0
        while True:
            n = len(out)
            if cont_left == 0 and acc[s]:
                if not live[s] or n >= max_len or rng.random() < min(0.9, 0.2 + 0.12 * n):
                    break
            tiers, greedy = self.options(s)
            if cont_left:
                cands = (greedy if n >= max_len else tiers)[3] or tiers[3]
                if not cands:
                    return None
                b = rng.choice(cands)
                cont_left -= 1
            else:
                head = n >= max_len or rng.random() < min(0.9, 0.05 + 0.08 * n)
                b = -1
                if head:   # head for acceptance
                    b = self._pick(greedy, rng, 0, p_hi)
                if b < 0:
                    b = self._pick(tiers, rng, mode, p_hi)
                if b < 0:
                    return None
                if b >= 0x80:
                    if b not in _LEAD:
                        return None
                    cont_left = _utf8_len(b) - 1
            out.append(b)
            s = rows[s][b]
        return bytes(out)


class SentenceGenerator:
    """Random sentences of ``grammar`` that lex (global maximal munch) into
    the terminal sequence they were generated from.

    ``max_depth`` bounds the derivation depth (beyond it the alternative with
    the smallest derivation height is taken), ``max_terminals`` the number of
    terminals (alternatives whose shortest completion would exceed it are not
    chosen). Derivations shorter than ``min_terminals`` (default 1: no empty
    sentences) are redrawn, up to 50 times. Deterministic given ``seed`` (or
    the ``rng`` passed to a method); independent of ``PYTHONHASHSEED``.

    ``separators`` lists the strings that may be put between two terminal
    texts (each one lexeme of an ``%ignore`` terminal); ``unlexable_terminals``
    the terminals that can never win maximal munch (rules using them are never
    chosen). ``lex`` reports lexical ties as winner sets of several names.
    """

    def __init__(self, grammar: Grammar, max_depth: int = 12, seed: int | None = None,
                 max_terminals: int = 400, min_terminals: int = 1):
        self.grammar = grammar
        self.max_depth = max_depth
        self.max_terminals = max_terminals
        self.min_terminals = min_terminals
        self.rng = random.Random(seed)
        self._terms = {t.name: t for t in grammar.terminals}
        self._ignored = frozenset(grammar.ignore)
        self._init_lexer()
        self._init_rules()
        self._walkers: dict[str, _Walker] = {}
        self._init_separators()

    # ------------------------------------------------------------------
    # derivations
    # ------------------------------------------------------------------
    def _init_rules(self) -> None:
        g = self.grammar
        terms = g.terminal_names
        nts = g.nonterminals
        # A terminal that never wins maximal munch (e.g. a literal shadowed by a
        # higher-priority regex matching the same strings) cannot appear in a
        # lexable sentence: rules using it are treated like rules using a
        # nonterminal that cannot terminate, and never chosen.
        ok_terms = [t for t in terms if t in self._winnable]
        # derivation height: 1 + the height of the highest child (terminals 0)
        height = {t: 0 for t in ok_terms}
        changed = True
        while changed:
            changed = False
            for r in g.rules:
                if all(x in height for x in r.expansion):
                    h = 1 + max((height[x] for x in r.expansion), default=0)
                    if h < height.get(r.origin, _INF):
                        height[r.origin] = h
                        changed = True
        # shortest yield (number of terminals), by Knuth's generalization of
        # Dijkstra; rank = order of finalization, so that a child of a
        # shortest alternative always has a smaller rank (well-founded even
        # with nullable symbols)
        minlen = {t: 1 for t in ok_terms}
        rank = {t: 0 for t in ok_terms}
        waiting: dict[str, list[int]] = {}
        missing = []
        heap: list[tuple[int, int, str]] = []
        for k, r in enumerate(g.rules):
            nt_children = [x for x in r.expansion if x not in minlen]
            missing.append(len(nt_children))
            for x in nt_children:
                waiting.setdefault(x, []).append(k)
            if not nt_children and all(x in minlen for x in r.expansion):
                heap.append((len(r.expansion), k, r.origin))
        heapq.heapify(heap)
        while heap:
            m, _, a = heapq.heappop(heap)
            if a in minlen:
                continue
            minlen[a] = m
            rank[a] = len(rank)
            for k in waiting.get(a, ()):
                missing[k] -= 1
                r = g.rules[k]
                if missing[k] == 0 and r.origin not in minlen:
                    heapq.heappush(heap, (sum(minlen[x] for x in r.expansion), k, r.origin))
        self._height = height
        self._minlen = minlen
        if g.start not in minlen:
            raise ValueError(f"start symbol {g.start!r} derives no finite sentence"
                             + (f" made of lexable terminals (never lexed: "
                                f"{', '.join(self.unlexable_terminals)})"
                                if self.unlexable_terminals else ""))
        # per nonterminal, its usable alternatives as (expansion, rule minlen):
        # all of them, those of minimal height, and the shortest ones
        alts: dict[str, list[tuple[tuple[str, ...], int]]] = {a: [] for a in minlen if a in nts}
        low: dict[str, list[tuple[tuple[str, ...], int]]] = {a: [] for a in alts}
        short: dict[str, list[tuple[tuple[str, ...], int]]] = {a: [] for a in alts}
        for r in g.rules:
            a = r.origin
            if a not in minlen or not all(x in minlen for x in r.expansion):
                continue   # uses a symbol that cannot terminate: never chosen
            alt = (r.expansion, sum(minlen[x] for x in r.expansion))
            alts[a].append(alt)
            if 1 + max((height[x] for x in r.expansion), default=0) == height[a]:
                low[a].append(alt)
            if alt[1] == minlen[a] and all(rank[x] < rank[a] for x in r.expansion):
                short[a].append(alt)
        self._alts, self._low, self._short = alts, low, short

    def terminal_sequence(self, rng: random.Random | None = None,
                          max_terminals: int | None = None) -> list[str]:
        """A random derivation from the start symbol, as its terminal names
        (redrawn while shorter than ``min_terminals``; see :meth:`derive`)."""
        rng = self.rng if rng is None else rng
        best: list[str] | None = None
        for _ in range(50):
            seq = self.derive(rng, max_terminals)
            if len(seq) >= self.min_terminals:
                return seq
            if best is None or len(seq) > len(best):
                best = seq
        assert best is not None
        return best

    def derive(self, rng: random.Random | None = None,
               max_terminals: int | None = None) -> list[str]:
        """A random derivation from the start symbol, as its terminal names.

        Alternatives are chosen uniformly among those whose shortest completion
        keeps the sentence within ``max_terminals``; from depth ``max_depth`` on
        only among those of minimal derivation height. When no such
        alternative fits, the subtree is completed by a shortest derivation.
        The length bound is strict unless the grammar's shortest sentence is
        longer."""
        rng = self.rng if rng is None else rng
        cap = self.max_terminals if max_terminals is None else max_terminals
        is_term = self.grammar.is_terminal
        minlen, alts, low, short = self._minlen, self._alts, self._low, self._short
        max_depth = self.max_depth
        out: list[str] = []
        start = self.grammar.start
        # (symbol, depth); depth -1 marks a subtree forced to a shortest derivation
        stack: list[tuple[str, int]] = [(start, 0)]
        pending = minlen[start]        # shortest yield of everything on the stack
        while stack:
            sym, d = stack.pop()
            if is_term(sym):
                out.append(sym)
                pending -= 1
                continue
            pending -= minlen[sym]
            if d < 0:
                cands = short[sym]
            else:
                room = cap - len(out) - pending
                cands = [x for x in (low[sym] if d >= max_depth else alts[sym]) if x[1] <= room]
                if cands:
                    d += 1
                else:
                    cands = short[sym]
                    d = -1
            exp, ml = cands[0] if len(cands) == 1 else rng.choice(cands)
            pending += ml
            for x in reversed(exp):
                stack.append((x, d))
        return out

    # ------------------------------------------------------------------
    # lexing
    # ------------------------------------------------------------------
    def _init_lexer(self) -> None:
        terms = self.grammar.terminals
        # no repetition counted (band: none is that long): the generator walks the
        # automaton's states as they are
        self._lexer = compile_lexer(terms, band=1 << 40)
        self._rows = self._lexer.trans.tolist()
        self._live = [bool(x) for x in np.asarray(self._lexer.live_out)]
        winners: list[frozenset[str] | None] = []
        for a in self._lexer.accepts:
            if not a:
                winners.append(None)
                continue
            top = max(terms[i].priority for i in a)
            cands = [i for i in a if terms[i].priority == top]
            lits = [i for i in cands if terms[i].is_literal]
            winners.append(frozenset(terms[i].name for i in (lits or cands)))
        self._winners = winners
        self._acc = [w is not None for w in winners]
        ign = self._ignored
        # lexeme dropped: every winner is ignored; usable as a token: none is
        self._all_ignored = [w is not None and w <= ign for w in winners]
        self._no_ignored = [w is not None and not (w & ign) for w in winners]
        self._winnable = frozenset().union(*(w for w, ok in zip(winners, self._no_ignored) if ok))
        #: terminals no string makes the (unique or tied) maximal-munch winner
        self.unlexable_terminals = tuple(sorted(
            t.name for t in terms if t.name not in self._winnable and t.name not in ign))

    def _spans(self, data: bytes) -> tuple[list[tuple[int, int, frozenset[str]]], bool]:
        """Maximal-munch lexemes of ``data`` as (start, end, winners) byte spans,
        ignored ones included; the flag is False if lexing stopped early."""
        rows, acc, winners = self._rows, self._acc, self._winners
        n = len(data)
        pos = 0
        out = []
        while pos < n:
            s = 0
            last = -1
            last_state = -1
            i = pos
            while i < n:
                s = rows[s][data[i]]
                if s < 0:
                    break
                i += 1
                if acc[s]:
                    last = i
                    last_state = s
            if last < 0:
                return out, False
            out.append((pos, last, winners[last_state]))
            pos = last
        return out, True

    def lex(self, text: str) -> list[frozenset[str]] | None:
        """Reference (non-streaming) global maximal-munch lexing of ``text``:
        the winner set of every lexeme, lexemes whose winners are all ignored
        dropped; None if some position starts no lexeme. A winner set with
        several names is a lexical tie (a set mixing ignored and other
        terminals is kept whole)."""
        spans, ok = self._spans(text.encode("utf-8"))
        if not ok:
            return None
        ign = self._ignored
        return [w for _, _, w in spans if not w <= ign]

    # ------------------------------------------------------------------
    # terminal texts
    # ------------------------------------------------------------------
    def _walker(self, name: str) -> _Walker:
        w = self._walkers.get(name)
        if w is None:
            t = self._terms[name]
            w = _Walker(compile_terminal(t.regex, t.name))
            self._walkers[name] = w
        return w

    def _sample(self, name: str, rng: random.Random, mode: int = 0) -> bytes:
        w = self._walker(name)
        for _ in range(32):
            b = w.walk(rng, mode)
            if b is not None:
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                return b
        raise ValueError(f"terminal {name!r}: could not sample a valid UTF-8 string")

    def terminal_text(self, name: str, rng: random.Random | None = None, mode: int = 0) -> str:
        """A random string of terminal ``name``'s language (mostly printable
        ASCII, sometimes whitespace or non-ASCII characters; ``mode=1`` picks
        those byte classes uniformly)."""
        return self._sample(name, self.rng if rng is None else rng, mode).decode("utf-8")

    def _init_separators(self) -> None:
        """Single ignored lexemes, " " first, then newline, tab, then the
        shortest string and a few samples of every ignored terminal."""
        acc_ign = self._all_ignored
        cands: list[bytes] = [b" ", b"\n", b"\t"]
        rng = random.Random(0x5e9)
        for name in sorted(self._ignored):
            w = self._walker(name)
            cands.append(_shortest(w))
            for _ in range(6):
                b = w.walk(rng, 0, max_len=4)
                if b is not None and len(b) <= 8:
                    cands.append(b)
        seen: set[bytes] = set()
        first, rest = [], []
        for c in cands:
            if c in seen:
                continue
            seen.add(c)
            s = self._lexer.run(c)
            if s >= 0 and acc_ign[s]:
                (first if c in (b" ", b"\n", b"\t") else rest).append(c)
        rest.sort(key=lambda c: (len(c), c))
        self.separators: tuple[str, ...] = tuple(c.decode("utf-8") for c in (first + rest)[:8])
        self._seps = tuple(s.encode("utf-8") for s in self.separators)

    # ------------------------------------------------------------------
    # sentences
    # ------------------------------------------------------------------
    def _try_append(self, opens: list[int], sep: bytes, tb: bytes, name: str) -> list[int] | None:
        """Open lexeme states after appending ``sep + tb``, or None if that
        would not lex as (``sep`` as one ignored lexeme,) ``tb`` as ``name``."""
        rows, acc, live = self._rows, self._acc, self._live
        new_open = []
        data = sep + tb
        for s in opens:                       # earlier lexemes must not grow
            for b in data:
                s = rows[s][b]
                if s < 0:
                    break
                if acc[s]:
                    return None
            else:
                if live[s]:
                    new_open.append(s)
        if sep:
            s = 0
            for b in sep:
                s = rows[s][b]
                if s < 0:
                    return None
            if not self._all_ignored[s]:
                return None
            for b in tb:
                s = rows[s][b]
                if s < 0:
                    break
                if acc[s]:
                    return None
            else:
                if live[s]:
                    new_open.append(s)
        s = 0
        for b in tb:
            s = rows[s][b]
            if s < 0:
                return None
        if not self._no_ignored[s] or name not in self._winners[s]:
            return None
        if live[s]:
            new_open.append(s)
        return new_open

    def _realize(self, seq: Sequence[str], rng: random.Random,
                 resamples: int = 6, max_backtracks: int | None = None) -> str | None:
        n = len(seq)
        if max_backtracks is None:
            max_backtracks = 20 + n // 4
        pieces: list[bytes] = [b""] * n
        opens: list[list[int]] = [[] for _ in range(n + 1)]
        revisits = [0] * n
        all_seps = (b"",) + self._seps
        backtracks = 0
        i = 0
        while i < n:
            name = seq[i]
            seps = all_seps if i else (b"",)
            before = opens[i]
            done = False
            for k in range(resamples):
                mode = 0 if (k == 0 and revisits[i] == 0) else (k + revisits[i]) & 1
                tb = self._sample(name, rng, mode)
                for sep in seps:
                    r = self._try_append(before, sep, tb, name)
                    if r is not None:
                        pieces[i] = sep + tb
                        opens[i + 1] = r
                        done = True
                        break
                if done:
                    break
            if done:
                i += 1
                continue
            backtracks += 1
            if i == 0 or backtracks > max_backtracks:
                return None
            i -= 1
            revisits[i] += 1
        return b"".join(pieces).decode("utf-8")

    def sentence(self, rng: random.Random | None = None,
                 max_tries: int = 200) -> tuple[str, list[str]]:
        """A random sentence and the terminal sequence it lexes to. Raises
        ValueError when no lexable sentence is found in ``max_tries`` draws."""
        rng = self.rng if rng is None else rng
        for _ in range(max_tries):
            seq = self.terminal_sequence(rng)
            text = self._realize(seq, rng)
            if text is not None:
                return text, seq
        raise ValueError(f"grammar produced no lexable sentence in {max_tries} tries "
                         f"(separators available: {list(self.separators)!r})")

    def sentences(self, n: int, rng: random.Random | None = None) -> list[tuple[str, list[str]]]:
        return [self.sentence(rng) for _ in range(n)]

    def lexeme_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the maximal-munch lexemes of ``text`` (ignored
        ones included), as far as it lexes."""
        data = text.encode("utf-8")
        spans, _ = self._spans(data)
        if not spans:
            return []
        # byte offset -> character offset (lexemes end on character boundaries)
        pos = {}
        off = 0
        for ci, ch in enumerate(text):
            pos[off] = ci
            off += len(ch.encode("utf-8"))
        pos[off] = len(text)
        return [(pos[a], pos[b]) for a, b, _ in spans]


def _shortest(w: _Walker) -> bytes:
    """A shortest member of the walker's language (printable ASCII first)."""
    out = bytearray()
    s = 0
    while not w.acc[s]:
        _, greedy = w.options(s)
        pick = next((t for t in greedy if t), None)
        if pick is None:
            break
        b = pick[0] if pick is not greedy[0] or 0x20 not in pick else 0x20
        out.append(b)
        s = w.rows[s][b]
    return bytes(out)


# ----------------------------------------------------------------------
# mutation
# ----------------------------------------------------------------------

_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
          " \n\t{}[]()<>;:,.'\"`+-*/=!&|^%~?@#$\\_") + "éß€中😀"


def _first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _chunks(text: str, generator: SentenceGenerator | None) -> list[tuple[int, int]]:
    if generator is not None:
        spans = generator.lexeme_spans(text)
        if spans:
            return spans
    import re
    return [m.span() for m in re.finditer(r"\w+|\s+|[^\w\s]", text)]


def mutate(text: str, rng: random.Random,
           generator: SentenceGenerator | None = None) -> tuple[str, int]:
    """A near miss of ``text``: one edit among delete / insert / replace a
    character, duplicate / delete / swap lexeme-sized chunks (lexemes of
    ``generator``'s lexer when given), insert a random terminal's text, or
    truncate. Returns ``(mutated, index)`` where ``index`` is the first
    character position at which ``mutated`` differs from ``text`` (the length
    of the shorter one when one is a prefix of the other). The result always
    differs from ``text``."""
    ops = ("delete", "insert", "replace", "dup_chunk", "del_chunk", "swap_chunks",
           "insert_terminal", "truncate")
    n = len(text)
    for _ in range(20):
        op = rng.choice(ops)
        out = None
        if op == "delete" and n:
            i = rng.randrange(n)
            out = text[:i] + text[i + 1:]
        elif op == "insert":
            i = rng.randrange(n + 1)
            out = text[:i] + rng.choice(_CHARS) + text[i:]
        elif op == "replace" and n:
            i = rng.randrange(n)
            out = text[:i] + rng.choice(_CHARS) + text[i + 1:]
        elif op in ("dup_chunk", "del_chunk", "swap_chunks") and n:
            ch = _chunks(text, generator)
            if not ch:
                continue
            j = rng.randrange(len(ch))
            a, b = ch[j]
            if op == "dup_chunk":
                out = text[:b] + text[a:b] + text[b:]
            elif op == "del_chunk":
                out = text[:a] + text[b:]
            elif len(ch) >= 2:
                j = min(j, len(ch) - 2)
                (a, b), (c, d) = ch[j], ch[j + 1]
                out = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
        elif op == "insert_terminal":
            i = rng.randrange(n + 1)
            if generator is not None:
                names = sorted(t.name for t in generator.grammar.terminals
                               if t.name not in generator.grammar.ignore)
                if not names:
                    continue
                piece = generator.terminal_text(rng.choice(names), rng)
            else:
                piece = "".join(rng.choice(_CHARS) for _ in range(rng.randint(1, 5)))
            out = text[:i] + piece + text[i:]
        elif op == "truncate" and n:
            out = text[:rng.randrange(n)]
        if out is not None and out != text:
            return out, _first_diff(text, out)
    i = rng.randrange(n + 1)   # fallback: an insertion always changes the text
    out = text[:i] + rng.choice(_CHARS) + text[i:]
    return out, _first_diff(text, out)
