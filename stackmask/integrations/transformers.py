"""A ``transformers`` logits processor that keeps generation inside a grammar.

    from transformers import LogitsProcessorList
    from stackmask.integrations.transformers import StackmaskLogitsProcessor

    c = stackmask.Constraint(grammar, stackmask.Vocab.from_pretrained(tokenizer))
    proc = StackmaskLogitsProcessor(c)
    out = model.generate(**inputs, logits_processor=LogitsProcessorList([proc]),
                         max_new_tokens=64, pad_token_id=tokenizer.pad_token_id)

One processor per ``generate`` call (or call :meth:`~StackmaskLogitsProcessor.reset`
between calls).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from transformers import LogitsProcessor

from ..errors import TokenRejected
from ..runtime import State
from ..runtime.decoding import fill_masks
from .torch import apply_token_bitmask_inplace

__all__ = ["StackmaskLogitsProcessor"]

_ENDED = State((), finished=True)


class _Row:
    __slots__ = ("tokens", "states")

    def __init__(self, tokens: list, states: list):
        self.tokens = tokens          # generated token ids seen so far
        self.states = states          # states[k]: state after tokens[:k]; len = len(tokens) + 1


def _per_row(value, batch: int, what: str) -> list:
    """A scalar for every row, or a list of ``batch`` values, or of ``batch / k``
    values each repeated ``k`` times (``num_return_sequences`` / beams)."""
    if value is None or not isinstance(value, (list, tuple, np.ndarray, torch.Tensor)):
        return [value] * batch
    vals = list(value.tolist() if hasattr(value, "tolist") and not isinstance(value, list) else value)
    if len(vals) == batch:
        return vals
    if vals and batch % len(vals) == 0:
        k = batch // len(vals)
        return [v for v in vals for _ in range(k)]
    raise ValueError(f"{what} has {len(vals)} entries for a batch of {batch} rows")


class StackmaskLogitsProcessor(LogitsProcessor):
    """Mask every batch row's scores to the tokens its grammar state allows.

    ``constraint``: a :class:`stackmask.Constraint` whose vocabulary is the
    model's (``Vocab.from_pretrained(tokenizer)``, ``Vocab.qwen2_5()`` ...).

    **Prompt prefix.** Only tokens generated after the prompt are
    constrained. ``prompt_lengths`` is the number of leading ``input_ids``
    columns that belong to the prompt: an int for every row, or one per row
    (a list of ``batch / k`` entries is repeated ``k`` times, matching
    ``num_return_sequences``). ``None`` (default) takes the width of
    ``input_ids`` at the first call, which is right for ``generate`` (prompts
    are left-padded to one width). ``initial_state`` (a state, or one per
    row) is where each row starts, e.g. ``c.commit_bytes(c.start(), b'{"')``
    when the prompt already holds the start of the structured text; default
    ``c.start()``.

    **Each step** the generated suffix of every row is compared with what the
    row committed before: normally one new token is committed; rows that were
    reordered (beam search) take the history of the row they continue (a row
    with the same ``initial_state`` object: beams of one prompt), and
    rolled-back rows (assisted decoding) go back to the state of the common
    prefix -- states are immutable, so this costs nothing. Rows in the same
    state share one mask computation.

    **EOS.** EOS ids (the vocabulary's) are allowed exactly when a row's text
    is a complete sentence. After a row commits EOS it only allows EOS ids
    and ``pad_token_id`` (what ``generate`` appends to finished rows); later
    tokens of that row are ignored. A row that reaches ``max_new_tokens``
    without EOS holds a valid prefix of a sentence.

    ``on_reject``: a generated token the row's state rejects, or an id past the
    vocabulary (a logit column beyond it; possible only
    when something after this processor changes the choice) raises
    :class:`stackmask.TokenRejected` (``"raise"``, default) or ends the row
    (``"eos"``: from then on only EOS/pad are allowed).

    ``inplace=False`` returns a masked copy of ``scores`` (transformers keeps
    the raw logits it passed in); ``True`` masks ``scores`` itself. Scores may
    live on any device; masks are built on the host (pinned memory when the
    scores are on a GPU) and unpacked on the scores' device.
    """

    supports_continuous_batching = False

    def __init__(self, constraint, prompt_lengths: int | Sequence[int] | None = None, *,
                 initial_state: State | Sequence[State] | None = None,
                 pad_token_id: int | None = None, on_reject: str = "raise",
                 inplace: bool = False):
        if on_reject not in ("raise", "eos"):
            raise ValueError("on_reject must be 'raise' or 'eos'")
        self.constraint = constraint
        self.prompt_lengths = prompt_lengths
        self.initial_state = initial_state
        self.pad_token_id = None if pad_token_id is None else int(pad_token_id)
        self.on_reject = on_reject
        self.inplace = inplace
        self._rows: list[_Row] | None = None
        self._plen: list[int] | None = None
        self._buf: torch.Tensor | None = None

    # -- public helpers --------------------------------------------------------
    def reset(self) -> None:
        """Forget all rows (use before reusing the processor for a new ``generate``)."""
        self._rows = None
        self._plen = None

    @property
    def states(self) -> list[State]:
        """The current state of every row (after the tokens seen at the last call)."""
        return [] if self._rows is None else [r.states[-1] for r in self._rows]

    @property
    def generated(self) -> list[list[int]]:
        """The generated tokens of every row seen so far (EOS and padding included)."""
        return [] if self._rows is None else [list(r.tokens) for r in self._rows]

    # -- LogitsProcessor -------------------------------------------------------
    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        batch, width = input_ids.shape
        if self._rows is None:
            self._begin(batch, width)
        elif len(self._rows) != batch:
            raise ValueError(f"batch size changed from {len(self._rows)} to {batch}: "
                             f"use one processor per generate call or call reset()")
        lo = min(self._plen)
        tail = input_ids[:, lo:].tolist()        # one device sync per step
        gens = [tail[r][self._plen[r] - lo:] for r in range(batch)]
        self._sync(gens)
        states = [row.states[-1] for row in self._rows]
        masks = self._masks(states, scores)
        out = scores if self.inplace else scores.clone()
        apply_token_bitmask_inplace(out, masks)
        return out

    # -- machinery -------------------------------------------------------------
    def _begin(self, batch: int, width: int) -> None:
        c = self.constraint
        plen = [int(p) if p is not None else width
                for p in _per_row(self.prompt_lengths, batch, "prompt_lengths")]
        for p in plen:
            if not 0 <= p <= width:
                raise ValueError(f"prompt length {p} outside the input width {width}")
        init = [s if s is not None else c.start()
                for s in _per_row(self.initial_state, batch, "initial_state")]
        for s in init:
            if not isinstance(s, State):
                raise TypeError(f"initial_state must be stackmask.State, not {type(s).__name__}")
        self._plen = plen
        self._init = init
        self._rows = [_Row([], [s]) for s in init]

    def _sync(self, gens: list[list[int]]) -> None:
        rows = self._rows
        batch = len(rows)
        plan = []                                  # (source row, common prefix length)
        for r, gen in enumerate(gens):
            own = rows[r]
            n = len(own.tokens)
            if n <= len(gen) and own.tokens == gen[:n]:
                plan.append((r, n))
                continue
            best = None
            home = self._init[r]
            for s in range(batch):                 # beam search reordered the rows
                o = rows[s]
                if o.states[0] is not home:        # another prompt's row (another start):
                    continue                       # its states are not this row's
                m = len(o.tokens)
                if m <= len(gen) and o.tokens == gen[:m] and (best is None or m > best[1]):
                    best = (s, m)
            if best is None:                       # rolled back (assisted decoding)
                k = 0
                lim = min(n, len(gen))
                while k < lim and own.tokens[k] == gen[k]:
                    k += 1
                best = (r, k)
            plan.append(best)
        claims = [0] * batch
        for s, _ in plan:
            claims[s] += 1
        new_rows = []
        for r, (s, k) in enumerate(plan):
            src = rows[s]
            if s == r and claims[s] == 1:
                del src.tokens[k:]
                del src.states[k + 1:]
                row = src
            else:
                row = _Row(src.tokens[:k], src.states[:k + 1])
            new_rows.append(row)
        for r, (row, gen) in enumerate(zip(new_rows, gens)):
            for t in gen[len(row.tokens):]:
                row.states.append(self._commit(r, row.states[-1], t))
                row.tokens.append(t)
        self._rows = new_rows

    def _commit(self, r: int, state: State, token: int) -> State:
        if state.finished:
            return state                       # EOS/padding after the end of the row
        c = self.constraint
        if not 0 <= token < c.vocab.size:      # a logit column past the vocabulary
            if self.on_reject == "eos":
                return _ENDED
            raise TokenRejected(token, b"", 0, f"batch row {r}: the generated token id is "
                                f"outside the vocabulary [0, {c.vocab.size})")
        try:
            return c.commit(state, token)
        except TokenRejected as e:
            if self.on_reject == "eos":
                return _ENDED
            raise TokenRejected(e.token_id, e.token_bytes, e.offset,
                                f"batch row {r}: the generated token is not allowed by the "
                                f"grammar") from e

    def _masks(self, states: list[State], scores: torch.Tensor) -> torch.Tensor:
        c = self.constraint
        batch = len(states)
        words = c.mask_words
        buf = self._buf
        pin = scores.is_cuda and torch.cuda.is_available()
        if buf is None or buf.shape[0] < batch or buf.shape[1] != words or (pin and not buf.is_pinned()):
            buf = torch.empty((batch, words), dtype=torch.int32)
            if pin:
                buf = buf.pin_memory()
            self._buf = buf
        # The previous step's non-blocking host-to-device copy out of this
        # buffer has completed: __call__ synced on input_ids.tolist() after it.
        view = buf[:batch]
        arr = view.numpy()
        fill_masks(c, states, arr)
        pad = self.pad_token_id
        if pad is not None and 0 <= pad < words * 32:
            u = arr.view(np.uint32)
            bit = np.uint32(1 << (pad % 32))
            for r, st in enumerate(states):
                if st.finished:
                    u[r, pad // 32] |= bit
        return view
