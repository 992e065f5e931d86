"""Decoding-loop helpers on top of :class:`~stackmask.runtime.constraint.Constraint`:
speculative validation, batched masks and forced tokens.

Everything here only *reads* states (states are immutable values) and goes
through the constraint's public operations (``commit``, ``get_mask``,
``is_accepting``) or the very steps ``commit`` is made of, so each helper
becomes faster automatically when ``get_mask`` gets its compiled fast path.

* :func:`validate_tokens` -- how many draft tokens a state accepts.
* :func:`fill_masks` -- masks of many states into one ``(batch, words)`` array.
* :func:`forced_bytes` / :func:`forced_tokens` -- what every continuation
  must start with, so a caller can skip model calls.

The same functions are available as ``Constraint`` methods
(``c.validate_tokens(state, tokens)`` ...).
"""

from __future__ import annotations

import os
import threading
import weakref
from bisect import bisect_left
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..errors import TokenRejected
from ..vocab import successor
from .state import State, mask_to_ids

_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

__all__ = ["validate_tokens", "commit_tokens", "fill_masks", "forced_bytes", "forced_tokens"]


# ---------------------------------------------------------------------------
# speculative decoding
# ---------------------------------------------------------------------------

def validate_tokens(c, state: State, tokens: Iterable[int]) -> int:
    """Number of leading ``tokens`` that can be committed one after another
    from ``state`` (0 .. len(tokens)); nothing is changed.

    Token ``k`` counts iff tokens ``0..k`` all commit, i.e. each is in the
    mask of the state its predecessors lead to. An EOS id counts iff the
    text before it is a sentence, and after it only EOS ids count (the
    sequence has ended). An id outside ``[0, vocab_size)`` anywhere in
    ``tokens`` (or a non-integer) raises ``ValueError``, as
    :meth:`Constraint.commit` does, also after a rejected token.
    """
    tokens = [c.check_token_id(t) for t in tokens]   # every id, not only those before a rejection
    n = 0
    commit = c.commit
    for t in tokens:
        try:
            state = commit(state, t)
        except TokenRejected:
            return n
        n += 1
    return n


def commit_tokens(c, state: State, tokens: Iterable[int]) -> State:
    """Commit ``tokens`` in order; raises ``TokenRejected`` at the first
    rejected one (``state`` and every intermediate state stay valid)."""
    for t in tokens:
        state = c.commit(state, t)
    return state


# ---------------------------------------------------------------------------
# batched masks
# ---------------------------------------------------------------------------

def _as_2d_int32(out) -> np.ndarray:
    if isinstance(out, np.ndarray):
        arr = out
    elif hasattr(out, "numpy") and hasattr(out, "device"):       # a CPU torch tensor
        if getattr(out.device, "type", "cpu") != "cpu":
            raise TypeError("fill_masks writes host memory: pass a CPU (ideally pinned) tensor "
                            "and copy it to the device, or use integrations.torch")
        arr = out.numpy()                                          # shares memory
    else:
        raise TypeError(f"out must be a numpy array or a CPU torch tensor, not {type(out).__name__}")
    if arr.ndim != 2:
        raise ValueError(f"out must be (batch, words), got shape {arr.shape}")
    if arr.dtype == np.uint32:
        arr = arr.view(np.int32)
    if arr.dtype != np.int32:
        raise TypeError(f"out must hold int32 words, not {arr.dtype}")
    return arr


#: ``fill_masks(threads=None)`` uses two threads from this many rows on (on the compiled
#: path, where the machine has two cores or more): the caller finds the rows' masks while
#: a native worker copies those found (benchmarks/fill_masks_bench.py)
THREADS_MIN_ROWS = 128


def fill_masks(c, states: Sequence[State | None], out, rows: Sequence[int] | None = None,
               threads: int | None = None):
    """Write the mask of ``states[k]`` into row ``rows[k]`` of ``out``
    (``rows=None``: row ``k``); returns ``out``. Other rows are untouched.

    ``out`` is an ``int32`` array (or a CPU torch tensor) of shape
    ``(batch, words)`` with ``words >= c.mask_words``; words past
    ``c.mask_words`` are zeroed (e.g. logits width rounded up). A ``None``
    state means an unconstrained row: every bit is set. A row named twice
    gets the later state's mask.

    On the compiled path (``c.native``) the masks are found with the GIL (a walk
    reads Python objects) and copied without it. With ``threads`` > 1, ``threads - 1``
    native worker threads (started on first use, kept for the process; an idle one
    spins ~0.1 ms, then sleeps) copy each row as soon as its mask is found, and this
    thread copies what is left once it has found them all. ``None`` means two from
    ``THREADS_MIN_ROWS`` rows on where the machine has two cores or more, else one.
    At most 16 threads are used (``threads`` above that counts as 16); a call made
    while another thread's call uses the workers copies alone. The pure-Python path
    ignores ``threads``.
    """
    arr = _as_2d_int32(out)
    words = c.mask_words
    if arr.shape[1] < words:
        raise ValueError(f"out has {arr.shape[1]} words per row, the vocabulary needs {words}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"threads must be a positive int or None, not {threads!r}")
    if rows is not None and len(rows) != len(states):
        raise ValueError(f"{len(states)} states but {len(rows)} rows")
    if rows is None and len(states) > arr.shape[0]:
        raise ValueError(f"{len(states)} states but out has {arr.shape[0]} rows")
    # the rows as slices of one flat view of the words: one buffer export per call,
    # not one per row (a strided or empty array's rows are numpy views instead)
    flat = None
    if arr.flags.c_contiguous and arr.size:
        mv = memoryview(arr)
        if len(mv.format) == 1:             # native int32: 'i' (or 'l' where long is 32-bit)
            flat = mv.cast("B").cast(mv.format)
    path = c.mask_path
    if path is not None and flat is not None:
        if threads is None:
            threads = 2 if len(states) >= THREADS_MIN_ROWS and _CORES >= 2 else 1
        path.fill(list(states), rows, arr, flat, words, State, threads)
        return out
    if rows is None:
        rows = range(len(states))
    done: dict[int, int] = {}      # id(state) -> a row written with its mask
    holder: dict[int, int] = {}    # row -> id of the state whose mask it holds now
    n_rows, width = arr.shape
    wide = width > words
    get_mask = c.get_mask
    for st, r in zip(states, rows):
        r = int(r)
        if not -n_rows <= r < n_rows:
            raise IndexError(f"row {r} is out of range for {n_rows} rows")
        if r < 0:
            r += n_rows
        if type(st) is not State:
            if st is None:
                arr[r] = -1
                holder[r] = 0
                continue
            if not isinstance(st, State):
                raise TypeError(f"states must be stackmask.State or None, not {type(st).__name__}")
        key = id(st)
        prev = done.get(key)
        if prev is not None and holder.get(prev) == key:    # not overwritten since
            arr[r] = arr[prev]
            holder[r] = key
            continue
        if flat is not None:
            a = r * width
            get_mask(st, flat[a:a + words])
        else:
            get_mask(st, arr[r, :words])
        if wide:
            arr[r, words:] = 0
        done[key] = r
        holder[r] = key
    return out


# ---------------------------------------------------------------------------
# forced bytes and tokens
# ---------------------------------------------------------------------------

class _Aux:
    """Per-constraint data built on first use: byte classes of the lexer and
    the text tokens sorted by bytes (for prefix searches)."""

    def __init__(self, c):
        trans = np.asarray(c.scanner.dfa.trans)
        cols = np.ascontiguousarray(trans.T)             # (256, n_states)
        _, inverse = np.unique(cols, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        classes: dict[int, list[int]] = {}
        for b in range(256):
            classes.setdefault(int(inverse[b]), []).append(b)
        # (representative byte, class size): bytes with identical DFA columns
        # behave identically in every lexer configuration (same transitions for
        # the pending lexeme and for every shadow), hence in advance/viable.
        self.byte_classes = [(bs[0], len(bs)) for bs in classes.values()]
        vocab = c.vocab
        ids = sorted((int(i) for i in vocab.text_token_ids()), key=lambda i: vocab.tokens[i])
        self.sorted_ids = ids
        self.sorted_toks = [vocab.tokens[i] for i in ids]


_AUX: "weakref.WeakKeyDictionary[Any, _Aux]" = weakref.WeakKeyDictionary()
_AUX_LOCK = threading.Lock()


def _aux(c) -> _Aux:
    a = _AUX.get(c)
    if a is None:
        with _AUX_LOCK:
            a = _AUX.get(c)
            if a is None:
                a = _AUX[c] = _Aux(c)
    return a


def _viable_heads(c, heads: tuple) -> tuple:
    viable = c.viable
    return tuple(h for h in heads if viable(h))


def _forced_walk(c, state: State, max_bytes: int) -> tuple[bytes, list[tuple], bool]:
    """(forced bytes f, heads after each prefix f[:k] for k = 0..len(f),
    whether f's end is a *closed* end: the text x·f is a sentence and no
    byte can follow it)."""
    if state.finished:
        return b"", [state.heads], True
    aux = _aux(c)
    advance = c.advance
    heads = state.heads
    out = bytearray()
    trail = [heads]
    closed = False
    specials = list(c.special_terms_by_terminal())
    while True:
        accepting = c.is_accepting(State(heads))
        if any(c.advance_special(heads, t) for t in specials):
            break            # a special token (no bytes) may come next: nothing is forced
        only = None
        count = 0
        for rep, size in aux.byte_classes:
            nh = advance(heads, rep)
            if not nh:
                continue
            nh = _viable_heads(c, nh)
            if not nh:
                continue
            count += size
            if count > 1:
                break
            only = (rep, nh)
        if count == 0:
            closed = accepting
            break
        if accepting or count > 1 or len(out) >= max_bytes:
            break            # (at the bound, after finding whether the end is closed)
        out.append(only[0])
        heads = only[1]
        trail.append(heads)
    return bytes(out), trail, closed


def forced_bytes(c, state: State, max_bytes: int = 256) -> bytes:
    """The longest byte string ``f`` that every continuation of the text
    must start with (at most ``max_bytes`` bytes).

    Built byte by byte: ``f`` grows by ``b`` while the text ``x·f`` is not
    a complete sentence, no special token bound to a grammar terminal may
    come next, and ``b`` is the *only* byte after which the text is still a
    viable prefix (the viability that defines masks). Since every
    text that can still become a sentence is viable, every sentence that
    extends ``x`` extends ``x·f``; conversely every token whose bytes are a
    prefix of ``f`` is allowed, and every allowed token's bytes are a prefix
    of ``f`` or start with ``f`` (EOS is allowed only when ``f`` is empty).
    Empty for a finished state. (Viability is a one-terminal lookahead, exact
    when terminals can always be separated; in a grammar where they cannot, a
    viable text can be a dead end, and ``f`` stops where no byte is viable.)
    """
    return _forced_walk(c, state, max_bytes)[0]


def _encoder(tokenizer) -> Callable[[str], Sequence[int]]:
    if hasattr(tokenizer, "encode_ordinary"):                      # tiktoken.Encoding
        return tokenizer.encode_ordinary
    if hasattr(tokenizer, "convert_tokens_to_ids") and hasattr(tokenizer, "encode"):  # transformers
        return lambda s: tokenizer.encode(s, add_special_tokens=False)
    if callable(tokenizer):
        return tokenizer
    raise TypeError("tokenizer must be a callable str -> token ids, a tiktoken Encoding "
                    "or a transformers tokenizer")


def _first_crossing(c, f: bytes, trail: list[tuple], closed: bool) -> int:
    """Smallest q such that some token allowed after ``x·f[:q]`` reaches past
    the end of ``f`` (``len(f) + 1`` if there is none)."""
    n = len(f)
    if closed or n == 0:
        return n + 1
    aux = _aux(c)
    toks = aux.sorted_toks
    advance, viable = c.advance, c.viable
    end_heads = trail[n]
    for q in range(n):
        suffix = f[q:]
        lo = bisect_left(toks, suffix)
        succ = successor(suffix)
        hi = len(toks) if succ is None else bisect_left(toks, succ, lo)
        i = lo
        while i < hi:
            w = toks[i]
            if len(w) <= len(suffix):          # w == suffix: ends inside f
                i += 1
                continue
            heads = end_heads
            dead = -1
            for j in range(len(suffix), len(w)):
                heads = advance(heads, w[j])
                if not heads:
                    dead = j
                    break
            if dead >= 0:
                # every token starting with w[:dead+1] dies the same way
                s2 = successor(w[:dead + 1])
                i = hi if s2 is None else bisect_left(toks, s2, i + 1, hi)
                continue
            if any(viable(h) for h in heads):
                return q
            i += 1
    return n + 1


def forced_tokens(c, state: State, tokenizer=None, *, max_bytes: int = 256,
                  max_tokens: int = 64) -> list[int]:
    """Tokens that are the only possible continuation, so a caller may append
    them without calling the model. Committing them in order always succeeds.

    Two definitions, both exact:

    * ``tokenizer=None`` -- **by the mask**: while the mask of the current
      state allows exactly one token id, that id is forced; it is appended
      and the walk goes on from the state it leads to (an EOS id ends the
      walk). Needs no tokenizer; with a large vocabulary it rarely fires,
      because the tokens spelling prefixes of the forced text are all
      allowed.

    * ``tokenizer`` given (a tiktoken ``Encoding``, a transformers tokenizer
      or a callable ``str -> ids``) -- **by the vocabulary's own
      tokenization**: let ``f`` be :func:`forced_bytes` cut back to whole
      UTF-8 characters (nothing is forced if the text so far ends inside a
      character) and ``T = tokenizer(f)`` (tokens whose bytes stop spelling
      ``f``, or special tokens, cut ``T`` there). Let ``q*`` be the smallest
      byte offset ``q`` in ``f`` such that some token allowed after
      ``x·f[:q]`` reaches past the end of ``f`` (a token the model could
      pick there that merges forced text with text not yet known). The
      result is the longest prefix of ``T`` ending at or before ``q*``: the
      tokenizer decides every boundary inside the forced text, and no
      boundary is kept that a token crossing into the unknown continuation
      could still move. When ``x·f`` is a complete sentence after which
      nothing may follow and the vocabulary has exactly one EOS id, that id
      is appended.

    ``max_bytes`` bounds the forced text, ``max_tokens`` the result.
    """
    if state.finished or max_tokens <= 0:
        return []
    if tokenizer is None:
        return _forced_by_mask(c, state, max_tokens)
    encode = _encoder(tokenizer)
    f, trail, closed = _forced_walk(c, state, max_bytes)
    try:
        text = f.decode("utf-8")
    except UnicodeDecodeError as e:
        f = f[:e.start]
        text = f.decode("utf-8")
        closed = False
    out: list[int] = []
    pos = 0
    if f:
        vocab = c.vocab
        special = vocab.special_token_ids | vocab.eos_token_ids
        q_star = _first_crossing(c, f, trail, closed)
        for t in encode(text):
            t = int(t)
            if not 0 <= t < vocab.size or t in special:
                break
            b = vocab.tokens[t] if t < len(vocab.tokens) else None
            if not b or f[pos:pos + len(b)] != b:
                break
            if pos + len(b) > q_star:
                break
            out.append(t)
            pos += len(b)
            if len(out) >= max_tokens:
                return out
    if closed and pos == len(f) and len(c.vocab.eos_token_ids) == 1:
        out.append(next(iter(c.vocab.eos_token_ids)))
    return out


def _forced_by_mask(c, state: State, max_tokens: int) -> list[int]:
    out: list[int] = []
    eos = c.vocab.eos_token_ids
    size = c.vocab.size
    while len(out) < max_tokens and not state.finished:
        ids = mask_to_ids(c.get_mask(state), size)
        if len(ids) != 1:
            break
        t = int(ids[0])
        out.append(t)
        if t in eos:
            break
        state = c.commit(state, t)
    return out
