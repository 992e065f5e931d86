"""Throughput of constrained vs unconstrained teacher-forced decoding.

    python benchmarks/throughput.py                       # CPU (GPU if available), batch 1..64
    python benchmarks/throughput.py --batch-sizes 1,8 --steps 8 --device cpu
    python benchmarks/throughput.py --grammar records     # a regex grammar instead of JSON

A randomly initialized small Qwen2 causal LM (built from a local config, no
download) over the real Qwen2.5 vocabulary (151,936 logits) decodes with a
KV cache, one token per row per step. The next token is *teacher-forced*: it
is the next token of a valid document of the grammar (a different document
per row), so both runs do exactly the same model work and the constrained run
adds, per step, masks for every row (``fill_masks``), the bitmask applied to
the logits on the model's device (``apply_token_bitmask_inplace``; each
teacher token is checked to be allowed) and one ``commit`` per row.

Reported per batch size: tokens/s (batch * steps / wall time of the decode
loop, prefill excluded; best of ``--repeats``), the slowdown, and the per-step
mask time (all rows) and per-token commit time as percentiles.

Masks come from the compiled automaton (``fill_masks`` -> ``get_mask``); the
constraint is built (or loaded from the artifact cache) before timing starts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time

import numpy as np

REC = r'\{"id": (0|[1-9][0-9]{0,5}), "name": "[a-z]{1,12}", "ok": (true|false)\}'
GRAMMARS = {
    # name: (description, regex or None for the bundled JSON grammar)
    "records": ("regex: a JSON-like list of records (ids, short names, booleans)",
                r"\[" + REC + r"(, " + REC + r")*\]"),
    "numbers": ("regex: a list of integers", r"\[(0|[1-9][0-9]{0,5})(, (0|[1-9][0-9]{0,5}))*\]"),
    "json": ("stackmask's bundled JSON grammar", None),
}


def _record(rng: random.Random) -> str:
    name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 12)))
    return '{"id": %d, "name": "%s", "ok": %s}' % (rng.randint(0, 99999), name,
                                                    rng.choice(["true", "false"]))


def make_document(grammar: str, rng: random.Random, min_chars: int) -> str:
    parts = []
    while sum(map(len, parts)) < min_chars:
        if grammar == "numbers":
            parts.append(str(rng.randint(0, 99999)))
        else:
            parts.append(_record(rng))
    return "[" + ", ".join(parts) + "]"


def percentiles(xs, scale=1e3, unit="ms") -> str:
    if not xs:
        return "n/a"
    a = np.asarray(xs) * scale
    p50, p99 = np.percentile(a, [50, 99])
    return f"{p50:.2f}/{p99:.2f}/{a.max():.2f} {unit}"


def machine_description(torch, device) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    desc = (f"{platform.system()} {platform.machine()}, CPU {cpu}, {os.cpu_count()} logical cores, "
            f"Python {platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} intra-op threads)")
    if device.type == "cuda":
        desc += f", GPU {torch.cuda.get_device_name(device)}"
    return desc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-sizes", default="1,2,4,8,16,32,64")
    ap.add_argument("--steps", type=int, default=16, help="teacher-forced tokens per row")
    ap.add_argument("--repeats", type=int, default=2, help="runs per setting; the best is reported")
    ap.add_argument("--grammar", choices=sorted(GRAMMARS), default="json")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--device", default="auto", help="auto (cuda if available), cpu or cuda")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads on CPU (default 1: on small CPU machines tiny "
                         "matmuls get much slower with more)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    import stackmask
    from stackmask.grammars import load as load_grammar
    from stackmask.integrations.torch import allocate_token_bitmask, apply_token_bitmask_inplace
    from stackmask.runtime.decoding import fill_masks
    from stackmask.vocab import qwen2_5_encoding

    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]

    vocab = stackmask.Vocab.qwen2_5()
    enc = qwen2_5_encoding()
    desc, regex = GRAMMARS[args.grammar]
    grammar = load_grammar("json") if regex is None else stackmask.Grammar.from_regex(regex)
    t0 = time.perf_counter()
    constraint = stackmask.Constraint(grammar, vocab)
    constraint.get_mask(constraint.start())
    setup_s = time.perf_counter() - t0

    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=vocab.size, hidden_size=args.hidden, intermediate_size=args.hidden * 2,
                      num_hidden_layers=args.layers, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=4096, tie_word_embeddings=True)
    model = Qwen2ForCausalLM(cfg).to(device).eval()
    n_params = sum(p.numel() for p in model.parameters())

    rng = random.Random(0)
    max_batch = max(batch_sizes)
    teacher = []
    for _ in range(max_batch):
        doc = make_document(args.grammar, rng, min_chars=8 * args.steps)
        ids = enc.encode(doc)
        assert len(ids) >= args.steps
        teacher.append(ids[:args.steps])
    teacher = np.array(teacher, dtype=np.int64)
    prompt = enc.encode("Output:")

    print("# stackmask throughput: constrained vs unconstrained teacher-forced decoding")
    print(f"# machine: {machine_description(torch, device)}")
    print(f"# device: {device}; model: random Qwen2 hidden={args.hidden} layers={args.layers} "
          f"vocab={vocab.size} ({n_params / 1e6:.1f}M params)")
    print(f"# grammar: {args.grammar} -- {desc}; constraint setup {setup_s:.2f} s")
    print(f"# {args.steps} teacher-forced tokens per row after a {len(prompt)}-token prompt, "
          f"best of {args.repeats}")
    print()
    header = (f"{'batch':>5} | {'unconstrained tok/s':>19} | {'constrained tok/s':>17} | "
              f"{'slowdown':>8} | {'masks/step p50/p99/max':>24} | {'commit/token p50/p99/max':>25}")
    print(header)
    print("-" * len(header))

    @torch.inference_mode()
    def run(batch: int, constrained: bool):
        ids = torch.tensor([prompt] * batch, device=device)
        out = model(input_ids=ids, use_cache=True)
        past = out.past_key_values
        logits = out.logits[:, -1, :].float()
        states = [constraint.start()] * batch
        buf = allocate_token_bitmask(batch, vocab.size, pin_memory=device.type == "cuda")
        arr = buf.numpy()
        teach = torch.from_numpy(teacher[:batch]).to(device)
        mask_times, commit_times = [], []
        if device.type == "cuda":
            torch.cuda.synchronize()
        t_start = time.perf_counter()
        for step in range(args.steps):
            col = teacher[:batch, step]
            if constrained:
                t1 = time.perf_counter()
                fill_masks(constraint, states, arr)
                mask_times.append(time.perf_counter() - t1)
                apply_token_bitmask_inplace(logits, buf)
                allowed = torch.isfinite(logits.gather(1, teach[:, step:step + 1]))
                if not bool(allowed.all()):
                    raise AssertionError(f"a teacher token was masked at step {step}")
                new_states = []
                for s, t in zip(states, col.tolist()):
                    t2 = time.perf_counter()
                    new_states.append(constraint.commit(s, t))
                    commit_times.append(time.perf_counter() - t2)
                states = new_states
            out = model(input_ids=teach[:, step:step + 1], past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[:, -1, :].float()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t_start, mask_times, commit_times

    run(1, False)                                  # warm up
    results = []
    for batch in batch_sizes:
        best = {}
        for constrained in (False, True):
            runs = [run(batch, constrained) for _ in range(args.repeats)]
            best[constrained] = min(runs, key=lambda r: r[0])
        tu = batch * args.steps / best[False][0]
        tc = batch * args.steps / best[True][0]
        _, masks, commits = best[True]
        print(f"{batch:>5} | {tu:>19.1f} | {tc:>17.1f} | {tu / tc:>7.1f}x | "
              f"{percentiles(masks):>24} | {percentiles(commits, 1e6, 'us'):>25}", flush=True)
        results.append({"batch": batch, "unconstrained_tok_s": tu, "constrained_tok_s": tc,
                        "mask_step_ms_p50": float(np.percentile(masks, 50) * 1e3),
                        "mask_step_ms_p99": float(np.percentile(masks, 99) * 1e3),
                        "mask_step_ms_max": float(np.max(masks) * 1e3),
                        "commit_us_p50": float(np.percentile(commits, 50) * 1e6),
                        "commit_us_p99": float(np.percentile(commits, 99) * 1e6)})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_description(torch, device), "device": str(device),
                       "grammar": args.grammar, "steps": args.steps, "hidden": args.hidden,
                       "layers": args.layers, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
