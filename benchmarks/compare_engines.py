"""Run ``stackmask report --compare`` over several grammars and collect the tables.

    python benchmarks/compare_engines.py                       # json calc c sql java go, all peers
    python benchmarks/compare_engines.py --grammars json,c --out benchmarks/results/engines

For every grammar: ``stackmask report --grammar G --compare glrmask,llguidance,xgrammar
--verify K --json OUT/G.json`` (each engine in its own fresh process, the same token ids
from ``benchmarks/traces/G.jsonl`` for all of them). The Markdown report of every grammar
is printed and written to ``OUT/G.md``; ``OUT/summary.md`` gathers the warm and cold
get_mask/commit percentiles of every engine in one table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stackmask.report import main as report_main  # noqa: E402


def _cell(d: dict, key: str) -> str:
    v = d.get(key)
    if v is None:
        return "-"
    if v >= 1e5:
        return f"{v / 1e3:,.0f} ms"
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grammars", default="json,calc,c,sql,java,go")
    ap.add_argument("--compare", default="glrmask,llguidance,xgrammar")
    ap.add_argument("--verify", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "engines"))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("extra", nargs="*", help="more `stackmask report` arguments (after --)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = ["| grammar | engine | compile | peak RSS | accepted | pass | get_mask p50 | p99 | p99.9 | max "
               "| commit p50 | p99 | p99.9 | same mask as stackmask |",
               "|" + "---|" * 14]
    status = 0
    for g in [x.strip() for x in args.grammars.split(",") if x.strip()]:
        print(f"== {g}", file=sys.stderr, flush=True)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = report_main(["--grammar", g, "--compare", args.compare, "--verify", str(args.verify),
                              "--timeout", str(args.timeout), "--json", str(out / f"{g}.json"),
                              *args.extra])
        text = buf.getvalue()
        print(text, flush=True)
        (out / f"{g}.md").write_text(text, encoding="utf-8")
        status |= rc
        raw = json.loads((out / f"{g}.json").read_text())
        for row in raw["rows"]:
            if "error" in row:
                summary.append(f"| {g} | {row['engine']} | failed: {row['error'][:120]} |" + " |" * 11)
                continue
            m, c = row["mask"], row["commit"]
            same = row.get("same_masks")
            summary.append(
                f"| {g} | {row['engine']} | {row['compile_s']:.2f} s | {row['peak_rss'] / 2**30:.2f} GB "
                f"| {row['accepted']}/{row['traces']} | {row['pass']} | {_cell(m, 'p50')} | {_cell(m, 'p99')} "
                f"| {_cell(m, 'p99.9')} | {_cell(m, 'max')} | {_cell(c, 'p50')} | {_cell(c, 'p99')} "
                f"| {_cell(c, 'p99.9')} | {f'{same[0]}/{same[1]}' if same else '-'} |")
    (out / "summary.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    print("\n".join(summary))
    return status


if __name__ == "__main__":
    sys.exit(main())
