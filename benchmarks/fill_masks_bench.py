"""Batch masks: ``fill_masks`` per-row cost, one thread and two, compiled and pure paths.

A serving engine fills one mask per row each step. This replays the bundled JSON corpus
(or ``--corpus``) to collect decoding states, then times ``fill_masks`` on batches of them:

* ``fresh``: every state in the batch was just made by ``commit`` (new GSS nodes, nothing
  memoized on them), as in a decoding step; the commits are made outside the timing.
* ``repeated``: the same batch again (the states' mask weights are known): the lookups
  and the copies only.

With two threads, the native worker is asleep at a ``fresh`` call (the commits before it
take longer than its ~0.1 ms of spinning) and awake at a ``repeated`` one. ``--idle-ms M``
sleeps M ms before each ``fresh`` call, as a server's process does while the model runs
(caches and clocks cool down; both thread counts pay it).

Each (path, batch, threads, mode) is timed ``--reps`` times; the table gives per-row µs at
p50/p90/p99/max of the calls, and the two-thread speed-up over one thread on the same
batches. The pure-Python path is a second process with ``STACKMASK_PURE_PYTHON=1``.

    python benchmarks/fill_masks_bench.py                  # batches 64 and 256
    python benchmarks/fill_masks_bench.py --batches 64,256,1024 --reps 300
    python benchmarks/fill_masks_bench.py --idle-ms 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np


def collect(c, traces) -> list:
    """(state before token, token) for every step of the traces."""
    steps = []
    for toks in traces:
        st = c.start()
        for t in toks:
            steps.append((st, t))
            st = c.commit(st, t)
    return steps


def run_path(batches: list[int], reps: int, seed: int, corpus: str | None,
             idle_ms: float = 0.0) -> dict:
    from stackmask import Constraint
    from stackmask.grammars import load
    from stackmask.report.workload import load_traces, load_vocab, load_workload
    vocab, enc = load_vocab("qwen2.5")
    w = load_workload("json")
    tr = load_traces(w, [corpus] if corpus else [], "qwen2.5", vocab, enc)
    c = Constraint(load("json"), vocab, progress=False)
    steps = collect(c, tr.tokens)
    rng = random.Random(seed)
    out: dict = {"native": c.native, "rows": {}}
    for n in batches:
        arr = np.zeros((n, c.mask_words), dtype=np.int32)
        for threads in ((1, 2) if c.native else (1,)):
            fresh, repeated = [], []
            for _ in range(reps):
                pick = [steps[rng.randrange(len(steps))] for _ in range(n)]
                # fresh states: committed again now, so nothing is memoized on their nodes
                batch = [c.commit(st, t) for st, t in pick]
                if idle_ms:
                    time.sleep(idle_ms / 1000)
                t0 = time.perf_counter()
                c.fill_masks(batch, arr, threads=threads)
                t1 = time.perf_counter()
                c.fill_masks(batch, arr, threads=threads)
                t2 = time.perf_counter()
                fresh.append((t1 - t0) / n * 1e6)
                repeated.append((t2 - t1) / n * 1e6)
            out["rows"][f"{n}/{threads}"] = {"fresh": fresh, "repeated": repeated}
    return out


def pct(xs: list[float]) -> list[float]:
    return [float(np.percentile(xs, q)) for q in (50, 90, 99)] + [max(xs)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", default=None, help="JSONL corpus (default: the bundled one)")
    ap.add_argument("--idle-ms", type=float, default=0.0,
                    help="sleep this long before each fresh call (default 0)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    if args.worker:
        json.dump(run_path(batches, args.reps, args.seed, args.corpus, args.idle_ms), sys.stdout)
        return 0
    results = {}
    for label, env in (("compiled", {}), ("pure Python", {"STACKMASK_PURE_PYTHON": "1"})):
        cmd = [sys.executable, __file__, "--worker", "--batches", args.batches,
               "--reps", str(args.reps), "--seed", str(args.seed), "--idle-ms", str(args.idle_ms)]
        if args.corpus:
            cmd += ["--corpus", args.corpus]
        r = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stderr)
            return r.returncode
        results[label] = json.loads(r.stdout)
    if not results["compiled"]["native"]:
        print("note: the compiled extension is not built; both rows are the pure path")
    print("| path | batch | threads | mode | µs per row p50 | p90 | p99 | max | 2 threads vs 1 (p50) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, res in results.items():
        rows = res["rows"]
        for key, modes in rows.items():
            n, threads = key.split("/")
            for mode, xs in modes.items():
                p = pct(xs)
                speed = ""
                if threads == "2":
                    one = np.percentile(rows[f"{n}/1"][mode], 50)
                    speed = f"{one / p[0]:.2f}x"
                print(f"| {label} | {n} | {threads} | {mode} | " +
                      " | ".join(f"{v:.2f}" for v in p) + f" | {speed} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
