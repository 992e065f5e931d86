"""Run ``stackmask report --compare`` over several grammars and collect the tables.

    python benchmarks/compare_engines.py                       # json calc c sql java go, all peers
    python benchmarks/compare_engines.py --grammars json,c --out benchmarks/results/engines

For every grammar: ``stackmask report --grammar G --compare glrmask,llguidance,xgrammar
--verify K --json OUT/G.json`` (each engine in its own fresh process, the same token ids
from ``benchmarks/traces/G.jsonl`` for all of them). The Markdown report of every grammar
is printed and written to ``OUT/G.md``; ``OUT/summary.md`` gathers the tables and
ratios of all grammars.
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

from stackmask.report import format_ratios, format_table, main as report_main  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grammars", default=",".join(GRAMMARS))
    ap.add_argument("--compare", default="glrmask,llguidance,xgrammar")
    ap.add_argument("--verify", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "engines"))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("extra", nargs="*", help="more `stackmask report` arguments (after --)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = []
    status = 0
    # sections of grammars not run this time are kept from an earlier summary
    kept = _sections(out / "summary.md")
    for g in [x.strip() for x in args.grammars.split(",") if x.strip()]:
        kept.pop(g, None)
        print(f"== {g}", file=sys.stderr, flush=True)
        (out / f"{g}.json").unlink(missing_ok=True)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = report_main(["--grammar", g, "--compare", args.compare, "--verify", str(args.verify),
                              "--timeout", str(args.timeout), "--json", str(out / f"{g}.json"),
                              *args.extra])
        text = buf.getvalue()
        print(text, flush=True)
        (out / f"{g}.md").write_text(text, encoding="utf-8")
        status |= rc
        if not (out / f"{g}.json").exists():
            summary += [f"### {g}: the report failed (exit status {rc}); see {g}.md", ""]
            continue
        raw = json.loads((out / f"{g}.json").read_text())
        summary += [f"### {g}: {raw['traces']} traces, {raw['tokens']} tokens (µs per call)", "",
                    format_table(raw["rows"]), "", format_ratios(raw["rows"]), ""]
    print("\n".join(summary))
    sections = _sections_of("\n".join(summary) + "\n")
    order = [g for g in GRAMMARS if g in kept or g in sections] + [
        g for g in {**kept, **sections} if g not in GRAMMARS]
    (out / "summary.md").write_text("".join({**kept, **sections}[g] for g in order), encoding="utf-8")
    return status


GRAMMARS = ("json", "calc", "c", "sql", "java", "go")


def _sections_of(text: str) -> dict:
    """``### G: ...`` sections of a summary, by grammar (each with its trailing lines)."""
    out: dict = {}
    name = None
    for line in text.splitlines(keepends=True):
        if line.startswith("### "):
            name = line[4:].split(":", 1)[0].strip()
            out[name] = ""
        if name is not None:
            out[name] += line
    return out


def _sections(path: Path) -> dict:
    return _sections_of(path.read_text(encoding="utf-8")) if path.exists() else {}


if __name__ == "__main__":
    sys.exit(main())
