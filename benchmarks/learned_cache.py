"""How much ``Constraint.save_cache()`` helps texts it has not seen.

For each grammar (default: sql, java, go, the ones that do not compile completely):

1. compile with the default budget into an empty cache directory (artifact A0);
2. *baseline*: a fresh process loads A0 and replays the benchmark traces
   (``benchmarks/traces/<grammar>.jsonl``) once, timing ``get_mask`` and
   ``commit`` at every step: the cold pass after a cache load;
3. *warm-up*: a fresh process loads A0, replays ``--warmup`` other programs
   generated from the grammar with other seeds (never the benchmark traces:
   ``mask_latency.generate_traces`` with seed ``--seed``), asking every mask,
   then calls ``save_cache()`` (artifact A1);
4. *after*: a fresh process loads A1 and replays the benchmark traces once, as in 2.

Every mask of steps 2 and 4 is checked to allow the next token; ``--verify K``
also compares K of them per process with the reference oracle. The warm-up programs come
from the same generator as the benchmark traces, so the gain is what a cache warmed
on texts *like* the ones to come gives; real model output differs from random
sentences of the grammar.

    python benchmarks/learned_cache.py --grammars java --warmup 50 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from stackmask.report.workload import bench_grammar_path

HERE = Path(__file__).resolve().parent
BENCH = Path(os.environ.get("STACKMASK_BENCH", HERE.parents[1] / "shared" / "bench"))
AMBIGUOUS = {"sql", "java", "go", "c"}

CHILD = r"""
import gc, json, random, sys, time
import numpy as np
import stackmask
sys.path.insert(0, sys.argv[6])
name, path, amb, cache, action = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5]
arg = json.loads(sys.argv[7])
vocab = stackmask.Vocab.qwen2_5()
t = time.perf_counter()
c = stackmask.Constraint(open(path).read(), vocab, ambiguous=amb, cache_dir=cache, progress=False)
construct = time.perf_counter() - t
out = {"construct_s": construct, "from_cache": c.loaded_from_cache,
       "states": c.compile_stats()["states"], "complete_states": c.compile_stats()["complete_states"]}
buf = np.zeros(c.mask_words, dtype=np.int32)

def bit(tok):
    return bool((int(buf[tok >> 5]) >> (tok & 31)) & 1)

def replay(traces, verify):
    gc.collect()        # as the report does: no collection of construction garbage in the timings
    rng = random.Random(7)
    mask_ns, commit_ns, checked = [], [], 0
    pc = time.perf_counter_ns
    for toks in traces:
        s = c.start()
        for i in range(len(toks) + 1):
            t0 = pc(); c.get_mask(s, out=buf); mask_ns.append(pc() - t0)
            if verify and rng.random() < verify:
                checked += 1
                assert np.array_equal(buf, c.reference_mask(s)), "mask differs from the oracle"
            if i == len(toks):
                assert any(bit(e) for e in vocab.eos_token_ids), "EOS is not in the final mask"
                break
            assert bit(toks[i]), "the next token is not in the mask"
            t0 = pc(); s = c.commit(s, toks[i]); commit_ns.append(pc() - t0)
    return mask_ns, commit_ns, checked

if action == "replay":
    traces = [json.loads(l)["tokens"] for l in open(arg["traces"]) if l.strip()]
    n_masks = sum(len(t) + 1 for t in traces)
    m, cm, checked = replay(traces, min(1.0, arg["verify"] / n_masks))
    out.update(mask_ns=m, commit_ns=cm, checked=checked,
               states_after=len(c.compiled.dwa.items))
else:
    from mask_latency import generate_traces
    from stackmask.vocab import qwen2_5_encoding
    traces = [t["tokens"] for t in generate_traces(name, qwen2_5_encoding(), arg["programs"],
                                                   arg["max_terminals"], arg["seed"])]
    t = time.perf_counter()
    m, cm, _ = replay(traces, 0)
    out["warmup_s"] = time.perf_counter() - t
    out["warmup_masks"] = len(m)
    t = time.perf_counter()
    out["saved"] = str(c.save_cache())
    out["save_s"] = time.perf_counter() - t
    out["states_after"] = len(c.compiled.dwa.items)
print(json.dumps(out))
"""


def child(name: str, cache: str, action: str, arg: dict, timeout: float) -> dict:
    path = bench_grammar_path(name, BENCH)
    r = subprocess.run([sys.executable, "-c", CHILD, name, str(path), "1" if name in AMBIGUOUS else "0",
                        cache, action, str(HERE), json.dumps(arg)],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{name} {action}: {r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def pct(ns: list) -> dict:
    import numpy as np
    a = np.array(ns, dtype=np.float64) / 1000.0
    return {f"p{q:g}": float(np.percentile(a, q)) for q in (50, 90, 99, 99.9)} | {"max": float(a.max())}


def fmt(us: float) -> str:
    return f"{us / 1000:,.1f} ms" if us >= 1000 else f"{us:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grammars", default="sql,java,go")
    ap.add_argument("--warmup", type=int, default=50, help="warm-up programs per grammar")
    ap.add_argument("--max-terminals", type=int, default=80)
    ap.add_argument("--seed", type=int, default=2, help="warm-up generator seed (traces use 1)")
    ap.add_argument("--verify", type=int, default=20, help="masks per replay compared with the oracle")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args(argv)
    rows = []
    print("| grammar | replay of the benchmark traces | states loaded | get_mask p50 | p90 | p99 | p99.9 | max "
          "| commit p50 | p99 | states compiled in the replay |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.grammars.split(","):
        traces = str(HERE / "traces" / f"{name}.jsonl")
        with tempfile.TemporaryDirectory(prefix="stackmask-learned-") as cache:
            first = child(name, cache, "replay", {"traces": traces, "verify": 0}, args.timeout)
            if first["from_cache"]:
                raise SystemExit(f"{name}: the cache was not empty")
            base = child(name, cache, "replay", {"traces": traces, "verify": args.verify}, args.timeout)
            warm = child(name, cache, "warmup", {"programs": args.warmup, "seed": args.seed,
                                                 "max_terminals": args.max_terminals}, args.timeout)
            after = child(name, cache, "replay", {"traces": traces, "verify": args.verify}, args.timeout)
        for label, r in (("after a cache load", base),
                         (f"after a cache load, saved after {args.warmup} other programs", after)):
            m, c = pct(r["mask_ns"]), pct(r["commit_ns"])
            print(f"| {name} | {label} | {r['states']:,} ({r['complete_states']:,} expanded) | "
                  f"{fmt(m['p50'])} | {fmt(m['p90'])} | {fmt(m['p99'])} | {fmt(m['p99.9'])} | "
                  f"{fmt(m['max'])} | {fmt(c['p50'])} | {fmt(c['p99'])} | "
                  f"{r['states_after'] - r['states']:,} |", flush=True)
        rows.append({"grammar": name, "compile": {k: v for k, v in first.items() if not k.endswith("_ns")},
                     "baseline": base, "warmup": warm, "after": after})
        print(f"<!-- {name}: compile {first['construct_s']:.0f} s; warm-up {warm['warmup_masks']} masks "
              f"in {warm['warmup_s']:.1f} s, save_cache {warm['save_s']:.1f} s; oracle checks "
              f"{base['checked']} + {after['checked']} -->", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
