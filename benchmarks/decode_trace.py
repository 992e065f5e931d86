"""Teacher-forced decoding of generated programs for each benchmark grammar
with the Qwen2.5 vocabulary: build time, commit percentiles over every step,
and reference-oracle get_mask percentiles over a sample of steps.

    python benchmarks/decode_trace.py [--grammars json-outlines,sql] [--programs 5] [--mask-steps 20]

Grammars are read from ../shared/bench/grammars (or $STACKMASK_BENCH/grammars):
json-outlines is its json.lark (not the bundled json grammar), the others <name>.lark.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from stackmask import Constraint, Grammar, Vocab
from stackmask.generate import SentenceGenerator
from stackmask.report.workload import bench_grammar_path
from stackmask.vocab import qwen2_5_encoding

BENCH = Path(os.environ.get("STACKMASK_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))
AMBIGUOUS = {"sql", "java", "go"}


def pct(xs) -> dict:
    a = np.asarray(xs, dtype=float) * 1e6
    if a.size == 0:
        return {}
    p = np.percentile(a, [50, 90, 99, 99.9])
    return {"n": int(a.size), "p50": p[0], "p90": p[1], "p99": p[2], "p99.9": p[3], "max": float(a.max())}


def fmt(d: dict) -> str:
    if not d:
        return "n/a"
    return (f"p50 {d['p50']:9.0f}  p90 {d['p90']:9.0f}  p99 {d['p99']:9.0f}  "
            f"p99.9 {d['p99.9']:9.0f}  max {d['max']:9.0f} us  (n={d['n']})")


def run(name: str, vocab: Vocab, enc, programs: int, mask_steps: int, seed: int) -> dict:
    text = bench_grammar_path(name, BENCH).read_text()
    t0 = time.perf_counter()
    c = Constraint(text, vocab, ambiguous=name in AMBIGUOUS)
    build = time.perf_counter() - t0
    # peak Python allocation of a second, traced build (tracemalloc slows it down,
    # so it is not the timed one; the lexer DFA cache is cleared first)
    from stackmask.lexer.combined import clear_caches
    clear_caches()
    tracemalloc.start()
    Constraint(text, vocab, ambiguous=name in AMBIGUOUS)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    gen = SentenceGenerator(Grammar.from_lark(text), max_depth=10, seed=seed, max_terminals=120)
    rng = random.Random(seed)
    commits, masks = [], []
    steps = 0
    traces = [enc.encode(gen.sentence(rng)[0], disallowed_special=()) for _ in range(programs)]
    total = sum(len(t) + 1 for t in traces)
    sample = set(rng.sample(range(total), min(mask_steps, total)))
    k = 0
    for ids in traces:
        s = c.start()
        for tok in ids + [min(vocab.eos_token_ids)]:
            if k in sample:
                t = time.perf_counter()
                m = c.get_mask(s)
                masks.append(time.perf_counter() - t)
                assert (int(m[tok >> 5]) >> (tok & 31)) & 1, f"{name}: token {tok} not allowed"
            t = time.perf_counter()
            s = c.commit(s, tok)
            commits.append(time.perf_counter() - t)
            k += 1
            steps += 1
    return {"grammar": name, "build_s": build, "build_peak_mb": peak / 2**20, "steps": steps,
            "commit_us": pct(commits), "oracle_mask_us": pct(masks),
            "lr_states": c.tables.lr.n_states, "lexer_states": c.tables.lexer.n_states}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammars", default="json-outlines,calc,c,sql,java,go")
    ap.add_argument("--programs", type=int, default=5)
    ap.add_argument("--mask-steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the raw figures here")
    args = ap.parse_args(argv)
    vocab = Vocab.qwen2_5()
    enc = qwen2_5_encoding()
    results = []
    for name in args.grammars.split(","):
        r = run(name, vocab, enc, args.programs, args.mask_steps, args.seed)
        results.append(r)
        print(f"{name:5s} build {r['build_s']:.2f} s (peak {r['build_peak_mb']:.0f} MB, LR states {r['lr_states']}, "
              f"lexer states {r['lexer_states']}), {r['steps']} steps")
        print(f"      commit          {fmt(r['commit_us'])}")
        print(f"      get_mask oracle {fmt(r['oracle_mask_us'])}")
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
