"""Compile time (the budgeted compile and the exploration after it), peak memory and
cache-load time per benchmark grammar.

Each compile runs in a fresh subprocess (so peak RSS is that compile's own),
with an empty cache directory; a second subprocess then builds the same
``Constraint`` and must load it from the cache.

    python benchmarks/compile_bench.py                      # all benchmark grammars
    python benchmarks/compile_bench.py --grammars json-outlines,c --json out.json

The grammars are the benchmark folder's (``../shared/bench/grammars`` or
``$STACKMASK_BENCH/grammars``): ``json-outlines`` is its ``json.lark`` (not the
bundled ``json`` grammar), every other name its ``<name>.lark``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from stackmask.report.workload import WorkloadError, bench_grammar_path

BENCH = Path(os.environ.get("STACKMASK_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))
GRAMMARS = ("json-outlines", "calc", "c", "sql", "java", "go")
AMBIGUOUS = {"sql", "java", "go"}

CHILD = r"""
import json, resource, sys, time
import stackmask
name, path, amb, cache = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
vocab = stackmask.Vocab.qwen2_5()
vocab.fingerprint
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
c = stackmask.Constraint(open(path).read(), vocab, ambiguous=amb, cache_dir=cache)
dt = time.perf_counter() - t
st = c.compile_stats()
print(json.dumps({"seconds": dt, "from_cache": c.loaded_from_cache, "stats": st,
                  "rss_before_kb": rss0,
                  "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def artifact_bytes(loaded: dict) -> int:
    """Size of the artifact the second construction loaded (``stats["artifact"]``)."""
    return Path(loaded["stats"]["artifact"]).stat().st_size


def run(name: str, cache: str, timeout: float) -> dict:
    path = bench_grammar_path(name, BENCH)
    out = subprocess.run([sys.executable, "-c", CHILD, name, str(path), "1" if name in AMBIGUOUS else "0",
                          cache], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{name}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grammars", default=",".join(GRAMMARS))
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--cache-dir", help="keep the artifacts here (must not hold them yet); "
                                        "default: a temporary directory per grammar")
    args = ap.parse_args(argv)
    for name in args.grammars.split(","):
        try:
            bench_grammar_path(name, BENCH)
        except WorkloadError as e:
            ap.error(str(e))
    rows = []
    print("| grammar | compile | peak RSS | configs | states | edges | weights | acyclic | max depth "
          "| explored after the budget | artifact | cached load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.grammars.split(","):
        if args.cache_dir:
            Path(args.cache_dir).mkdir(parents=True, exist_ok=True)
            first = run(name, args.cache_dir, args.timeout)
            second = run(name, args.cache_dir, args.timeout)
            size = artifact_bytes(second)
        else:
            with tempfile.TemporaryDirectory(prefix="stackmask-bench-") as cache:
                first = run(name, cache, args.timeout)
                second = run(name, cache, args.timeout)
                size = artifact_bytes(second)
        if first["from_cache"]:
            raise SystemExit(f"{name}: already in the cache directory; use an empty one")
        if not second["from_cache"]:
            raise SystemExit(f"{name}: the second construction did not load from the cache")
        st = first["stats"]
        explored = "—" if st.get("explore_sentences") is None else (
            f"{st['explore_sentences']} sentences, +{st['explore_states']:,} states, "
            f"{st['explore_s']:.0f} s (+{st.get('explore_save_s', 0):.0f} s saving)")
        rows.append({"grammar": name, "compile": first, "load": second, "artifact_bytes": size})
        print(f"| {name} | {first['seconds']:.1f} s | {first['peak_rss_kb'] / 1024 ** 2:.2f} GB | "
              f"{st['configs']} | {st['states']} | {st['edges']} | {st['weights']} | {st['acyclic']} | "
              f"{st['max_depth']} | {explored} | {size / 2 ** 20:.2f} MB | {second['seconds']:.2f} s |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
