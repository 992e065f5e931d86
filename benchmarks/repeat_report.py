"""Repeat ``stackmask report --compare`` and summarize the runs: median and range per figure.

One report run cannot decide "at or below glrmask" on this 2-core machine: the
same code's JSON get_mask p50 and p99.9 move 30-60% between runs minutes apart.
This runs the report ``--runs`` times back to back (each run: every engine in
its own fresh process on the same token ids, as in ``compare_engines.py``) and
prints, per engine and pass, the median and the range of get_mask p50 / p99 /
p99.9 / max and commit p50 over the runs, and per figure the median of the
per-run ratios stackmask / peer and in how many runs stackmask was at or below.

    python benchmarks/repeat_report.py --grammar json --compare glrmask --runs 7
    python benchmarks/repeat_report.py --grammar json --runs 5 -- --no-cache

Writes ``OUT/<grammar>.md`` and ``OUT/<grammar>.json`` (every run's rows).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stackmask.report import main as report_main  # noqa: E402

FIGURES = (("mask", "p50"), ("mask", "p99"), ("mask", "p99.9"), ("mask", "max"), ("commit", "p50"))


def run_once(grammar: str, compare: str, verify: int, extra: list) -> list:
    with tempfile.TemporaryDirectory(prefix="stackmask-repeat-") as d:
        out = Path(d) / "r.json"
        with contextlib.redirect_stdout(io.StringIO()):
            rc = report_main(["--grammar", grammar, "--compare", compare, "--verify", str(verify),
                              "--json", str(out), *extra])
        if rc != 0 or not out.exists():
            raise SystemExit(f"the report failed (exit status {rc})")
        return json.loads(out.read_text())["rows"]


def summarize(runs: list, peers: list) -> tuple[str, dict]:
    """Markdown tables and the figures behind them, from the rows of every run."""
    def value(rows, engine, pas, kind, q):
        for r in rows:
            if r.get("engine") == engine and r.get("pass") == pas and kind in r:
                return r[kind][q]
        return None

    engines = ["stackmask"] + peers
    lines = [f"| engine | pass | {' | '.join(f'{k} {q}' for k, q in FIGURES)} |",
             "|---|---|" + "---|" * len(FIGURES)]
    figures: dict = {}
    for e in engines:
        for pas in ("cold", "warm"):
            cells = []
            for k, q in FIGURES:
                vals = [v for v in (value(r, e, pas, k, q) for r in runs) if v is not None]
                if not vals:
                    cells.append("-")
                    continue
                med = statistics.median(vals)
                figures[f"{e}/{pas}/{k} {q}"] = {"median": med, "min": min(vals), "max": max(vals)}
                cells.append(f"{med:.1f} ({min(vals):.1f}-{max(vals):.1f})")
            if any(c != "-" for c in cells):
                lines.append(f"| {e} | {pas} | {' | '.join(cells)} |")
    lines.append("")
    for p in peers:
        lines.append(f"stackmask / {p}, median of the per-run ratios (runs with stackmask at or below):")
        lines.append("")
        lines.append(f"| pass | {' | '.join(f'{k} {q}' for k, q in FIGURES)} |")
        lines.append("|---|" + "---|" * len(FIGURES))
        for pas in ("cold", "warm"):
            cells = []
            for k, q in FIGURES:
                pairs = [(value(r, "stackmask", pas, k, q), value(r, p, pas, k, q)) for r in runs]
                pairs = [(a, b) for a, b in pairs if a is not None and b]
                if not pairs:
                    cells.append("-")
                    continue
                ratios = [a / b for a, b in pairs]
                below = sum(a <= b for a, b in pairs)
                figures[f"ratio {p}/{pas}/{k} {q}"] = {"median": statistics.median(ratios),
                                                       "at_or_below": below, "runs": len(pairs)}
                cells.append(f"{statistics.median(ratios):.2f}x ({below}/{len(pairs)})")
            lines.append(f"| {pas} | {' | '.join(cells)} |")
        lines.append("")
    lines.append("Slowest masks (trace:step, each named by the runs where it was among a "
                 "pass's five slowest; step 0 is the start state's mask):")
    lines.append("")
    for e in engines:
        for pas in ("cold", "warm"):
            counts = Counter(f"{m['trace']}:{m['step']}" for rows in runs for r in rows
                             if r.get("engine") == e and r.get("pass") == pas
                             for m in r.get("slowest_masks", ()))
            if counts:
                figures[f"{e}/{pas}/slowest"] = dict(counts.most_common())
                top = ", ".join(f"{k} ({n})" for k, n in counts.most_common(6))
                lines.append(f"- {e} {pas}: {top}")
    lines.append("")
    return "\n".join(lines), figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grammar", default="json")
    ap.add_argument("--compare", default="glrmask")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--verify", type=int, default=0, help="masks per run checked against the oracle")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "repeat"))
    ap.add_argument("extra", nargs="*", help="more `stackmask report` arguments (after --)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    peers = [p.strip() for p in args.compare.split(",") if p.strip()]
    runs = []
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs} ...", file=sys.stderr, flush=True)
        runs.append(run_once(args.grammar, args.compare, args.verify, args.extra))
    table, figures = summarize(runs, peers)
    text = (f"## {args.grammar}: {args.runs} report runs, µs per call: median (min-max over "
            f"the runs)\n\n{table}")
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.grammar}.md").write_text(text, encoding="utf-8")
    (out / f"{args.grammar}.json").write_text(json.dumps({"runs": runs, "figures": figures,
                                                          "args": sys.argv[1:]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
