"""How a serving engine drives stackmask: one state per sequence, one packed
bitmask row per sequence per step.

    python examples/serving_loop.py

Engines such as vLLM and SGLang keep a ``(max_batch, ceil(vocab/32))`` int32
tensor (``grammar_bitmask`` / ``vocab_mask``). Each step they ask every
constrained request to fill *its* row, copy the tensor to the GPU and set
the logits of disallowed tokens to ``-inf`` (bit ``id % 32`` of word
``id // 32`` set = allowed: exactly the layout ``Constraint.get_mask``
writes). After sampling, every request commits its token. Speculative
decoding validates draft tokens without committing and rolls back rejected
ones; "jump forward" appends forced tokens without a model call.

stackmask maps onto that directly:

* one :class:`stackmask.Constraint` per (grammar, vocabulary), shared by
  every request and every thread: it is safe to use concurrently (its caches
  are filled idempotently, and states are never mutated);
* one immutable ``State`` per request (rollback = keep the old state);
* ``c.get_mask(state, out=bitmask[row])`` fills a row in place, so rows can
  be filled in parallel by a thread pool while the GPU runs the forward pass
  (vLLM does this with its fill-bitmask executor).

``StackmaskRequestGrammar`` below has the shape of vLLM V1's per-request
``StructuredOutputGrammar`` (accept_tokens / validate_tokens / rollback /
fill_bitmask / is_terminated / reset); an engine plugin would subclass that
interface with these bodies. The "model" here is random logits, so the
example runs anywhere (numpy only; torch is used for the masking if present).
"""

from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import stackmask
from stackmask.runtime import mask_to_ids

PATTERN = r'\{"name": "[a-z]{1,8}", "age": (0|[1-9][0-9]?)\}'


class StackmaskRequestGrammar:
    """Per-request grammar state, with the methods a vLLM-style engine calls."""

    def __init__(self, constraint: stackmask.Constraint):
        self.c = constraint
        self.states = [constraint.start()]      # states[k]: after k accepted tokens

    @property
    def state(self):
        return self.states[-1]

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Commit tokens; on a rejected token nothing is committed."""
        new = []
        s = self.state
        for t in tokens:
            try:
                s = self.c.commit(s, t)
            except stackmask.TokenRejected:
                return False
            new.append(s)
        self.states.extend(new)
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The accepted prefix of draft tokens, without advancing."""
        return tokens[:self.c.validate_tokens(self.state, tokens)]

    def rollback(self, num_tokens: int) -> None:
        if num_tokens > 0:
            del self.states[-num_tokens:]

    def fill_bitmask(self, bitmask: np.ndarray, batch_index: int) -> None:
        self.c.get_mask(self.state, out=bitmask[batch_index])

    def is_terminated(self) -> bool:
        return self.state.finished

    def reset(self) -> None:
        del self.states[1:]

    def jump_forward(self, tokenizer) -> list[int]:
        """Tokens the grammar forces next (appendable without a model call)."""
        return self.c.forced_tokens(self.state, tokenizer)


def apply_bitmask(logits: np.ndarray, bitmask: np.ndarray) -> None:
    """What the engine does on the GPU; numpy/torch here."""
    try:
        import torch
        from stackmask.integrations.torch import apply_token_bitmask_inplace
    except ImportError:
        bits = np.unpackbits(bitmask.view(np.uint8), axis=1, bitorder="little")
        logits[:, :bits.shape[1]][bits[:, :logits.shape[1]] == 0] = -np.inf
        logits[:, bits.shape[1]:] = -np.inf
        return
    apply_token_bitmask_inplace(torch.from_numpy(logits), bitmask)


def main() -> int:
    vocab = stackmask.Vocab.qwen2_5()
    from stackmask.vocab import qwen2_5_encoding
    tokenizer = qwen2_5_encoding()
    c = stackmask.Constraint(stackmask.Grammar.from_regex(PATTERN), vocab)
    n_req, max_steps, width = 6, 40, vocab.size
    rng = np.random.default_rng(0)

    requests = {f"req{i}": StackmaskRequestGrammar(c) for i in range(n_req)}
    outputs = {rid: [] for rid in requests}
    bitmask = np.zeros((n_req, c.mask_words), dtype=np.int32)   # allocated once
    pool = ThreadPoolExecutor(max_workers=4)
    model_calls = forced_total = drafts_rejected = 0
    t0 = time.perf_counter()
    for step in range(max_steps):
        active = [rid for rid, g in requests.items() if not g.is_terminated()]
        if not active:
            break
        # 1. jump forward: forced tokens need no model call
        for rid in active:
            forced = requests[rid].jump_forward(tokenizer)
            if forced and requests[rid].accept_tokens(rid, forced):
                outputs[rid] += forced
                forced_total += len(forced)
        active = [rid for rid in active if not requests[rid].is_terminated()]
        if not active:
            break
        # 2. masks for the batch, filled in parallel into the shared buffer
        list(pool.map(lambda ir: requests[ir[1]].fill_bitmask(bitmask, ir[0]), enumerate(active)))
        # 3. "forward pass" + mask + sample
        logits = rng.standard_normal((len(active), width)).astype(np.float32)
        model_calls += 1
        apply_bitmask(logits, bitmask[:len(active)])
        sampled = logits.argmax(axis=1)
        for row, rid in enumerate(active):
            g = requests[rid]
            tok = int(sampled[row])
            assert bitmask[row, tok // 32] >> (tok % 32) & 1, "sampled a masked token"
            # 4. a speculative draft: the sampled token plus two guesses
            draft = [tok] + [int(x) for x in rng.integers(0, width, size=2)]
            ok = g.validate_tokens(draft)
            assert ok[:1] == [tok]
            drafts_rejected += len(draft) - len(ok)
            assert g.accept_tokens(rid, ok)
            if len(ok) > 1:                    # pretend the target model disagreed
                g.rollback(len(ok) - 1)
                ok = ok[:1]
            outputs[rid] += ok
    pool.shutdown()
    dt = time.perf_counter() - t0

    print(f"{n_req} requests, {model_calls} model calls, {forced_total} forced tokens, "
          f"{drafts_rejected} draft tokens rejected, {dt:.2f} s (random logits stand in for "
          f"the model)")
    for rid, toks in outputs.items():
        eos = [t for t in toks if t in vocab.eos_token_ids]
        text = b"".join(vocab.tokens[t] for t in toks if t not in vocab.eos_token_ids).decode()
        status = "done" if eos else "cut at max_steps"
        print(f"  {rid}: {text!r} ({status})")
        if eos:
            assert re.fullmatch(PATTERN, text), text
        # the whole output replays on a fresh state, single-threaded
        assert c.validate_tokens(c.start(), toks) == len(toks)

    # masks filled concurrently equal masks filled one by one
    states = [g.state for g in requests.values()]
    par = np.zeros_like(bitmask)
    with ThreadPoolExecutor(max_workers=4) as ex:
        list(ex.map(lambda i: c.get_mask(states[i], out=par[i]), range(n_req)))
    seq = np.zeros_like(bitmask)
    c.fill_masks(states, seq)
    assert np.array_equal(par, seq)
    assert all(len(mask_to_ids(seq[i], vocab.size)) > 0 for i in range(n_req))
    return 0


if __name__ == "__main__":
    sys.exit(main())
