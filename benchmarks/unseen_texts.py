"""Cold masks after a cache load on texts unlike the ones the construction explored.

A construction stopped by its compile budget explores random sentences of the grammar
(``stackmask.compile.explore``: derivation depth 12, 20-200 terminals) and caches what
their masks compiled. The benchmark traces come from the same generator (other seeds).
This measures texts of another shape: ``--programs`` programs per grammar generated with
``--depth``/``--min-terminals``/``--max-terminals`` (seed ``--seed``), tokenized with
Qwen2.5, replayed once in a fresh process that loads the artifact (``--cache-dir``; a
first process constructs it there when it is missing), timing every ``get_mask`` and
``commit`` (``learned_cache.py``'s replay; every mask must allow the next token, ``--verify``
masks are compared with the oracle).

    python benchmarks/unseen_texts.py --grammars sql,java,go --cache-dir /tmp/sm-cache
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from learned_cache import BENCH, child, fmt, pct  # noqa: E402


def write_traces(name: str, path: Path, programs: int, depth: int, lo: int, hi: int,
                 seed: int) -> int:
    """Write the texts (``mask_latency.generate_traces`` with this benchmark's seeds) to
    ``path``; returns the number of masks a replay asks (tokens + the EOS step)."""
    from mask_latency import generate_traces
    from stackmask.vocab import qwen2_5_encoding
    traces = generate_traces(name, qwen2_5_encoding(), programs, hi, seed, max_depth=depth,
                             min_terminals=lo, label="unseen_texts")
    with path.open("w", encoding="utf-8") as f:
        for t in traces:
            f.write(json.dumps(t) + "\n")
    return sum(len(t["tokens"]) + 1 for t in traces)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grammars", default="sql,java,go")
    ap.add_argument("--cache-dir", required=True, help="artifact cache (constructed there if missing)")
    ap.add_argument("--programs", type=int, default=10)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--min-terminals", type=int, default=100)
    ap.add_argument("--max-terminals", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verify", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args(argv)
    rows = []
    print("| grammar | texts | masks | get_mask p50 | p90 | p99 | p99.9 | max | masks > 1 ms "
          "| commit p50 | states compiled in the replay |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.grammars.split(","):
        with tempfile.TemporaryDirectory(prefix="stackmask-unseen-") as d:
            traces = Path(d) / f"{name}.jsonl"
            write_traces(name, traces, args.programs, args.depth, args.min_terminals,
                         args.max_terminals, args.seed)
            built = child(name, args.cache_dir, "replay",
                          {"traces": str(traces), "verify": args.verify}, args.timeout)
            r = built if built["from_cache"] else child(
                name, args.cache_dir, "replay", {"traces": str(traces), "verify": args.verify},
                args.timeout)
        m, c = pct(r["mask_ns"]), pct(r["commit_ns"])
        slow = sum(1 for x in r["mask_ns"] if x > 1_000_000)
        print(f"| {name} | {args.programs} (depth {args.depth}, {args.min_terminals}-"
              f"{args.max_terminals} terminals) | {len(r['mask_ns'])} | {fmt(m['p50'])} | "
              f"{fmt(m['p90'])} | {fmt(m['p99'])} | {fmt(m['p99.9'])} | {fmt(m['max'])} | {slow} | "
              f"{fmt(c['p50'])} | {r['states_after'] - r['states']:,} |", flush=True)
        rows.append({"grammar": name, "built_here": not built["from_cache"], "replay": r})
        print(f"<!-- {name}: artifact {'constructed by this run' if not built['from_cache'] else 'found'}; "
              f"oracle checks {r['checked']} -->", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
