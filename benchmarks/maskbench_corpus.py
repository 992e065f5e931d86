"""Write a JSON-grammar corpus of real-world documents: MaskBench's valid instances.

The bundled JSON corpus (14 documents, ~1,100 masks) is what ``stackmask report`` replays
by default, so that it finishes in seconds; its get_mask p99.9 then lies at the 2nd
and 3rd slowest of ~1,100 masks: two calls decide it. This writes the first valid instance of every
MaskBench schema (``../shared/bench/maskbench/sample1000.jsonl``: 1,000 documents, about
166,000 masks with the Qwen2.5 vocabulary) as a corpus for the plain JSON grammar:

    python benchmarks/maskbench_corpus.py /tmp/maskbench_json.jsonl
    stackmask report --grammar json --corpus /tmp/maskbench_json.jsonl --compare glrmask --no-cache
    python benchmarks/repeat_report.py --grammar json --runs 5 --out OUT -- \\
        --corpus /tmp/maskbench_json.jsonl --no-cache

The documents are the instances' texts as the data file has them (``json.dumps`` with its
default separators: compact, no newlines); every engine replays the same token ids.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from maskbench import DEFAULT_DATA  # noqa: E402


def documents(data: Path, per_schema: int = 1) -> list[str]:
    """The first ``per_schema`` valid instances of every schema in ``data``, in file order."""
    docs = []
    with data.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                docs.extend(json.loads(line).get("valid", [])[:per_schema])
    return docs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the corpus file to write (.jsonl, one {\"text\": ...} per line)")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="MaskBench data file")
    ap.add_argument("--per-schema", type=int, default=1, help="valid instances per schema")
    args = ap.parse_args()
    out = Path(args.out)
    if out.suffix != ".jsonl":
        ap.error("the corpus file must end in .jsonl (stackmask report reads other files whole)")
    docs = documents(Path(args.data), args.per_schema)
    if not docs:
        print(f"error: no valid instances in {args.data}", file=sys.stderr)
        return 1
    with out.open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")
    print(f"{len(docs)} documents, {sum(map(len, docs)):,} characters -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
