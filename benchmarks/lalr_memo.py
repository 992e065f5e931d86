"""LALR(1) tables of one grammar built once: a schema's lazy construction with the table memo
(``stackmask.glr.lalr.build_lalr``) and without it, alternated in one process.

    python benchmarks/lalr_memo.py --schema Kubernetes---kb_794_Normalized --rounds 2

``Constraint(ambiguous=None)`` asks the user grammar for its LALR(1) conflicts, then builds
the tables of the same grammar (and of its normal form); the memo reuses the last two tables
for the same rule tuple. Prints the construction's wall time (``compile="lazy"``, a 256-byte
vocabulary, cache off) and the number of LALR(1) builds per round.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import warnings
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "maskbench" / "sample1000.jsonl"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--schema", default="Kubernetes---kb_794_Normalized", help="row name in --data")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    from stackmask import Constraint, Grammar, Vocab
    from stackmask.glr import lalr
    with open(args.data) as f:
        schema = next(r["schema"] for r in map(json.loads, f) if r.get("name") == args.schema)
    vocab = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256],
                  special_token_ids=[256])
    size, build = lalr._RECENT_SIZE, lalr._build_lalr
    builds = [0]

    def counted(g):
        builds[0] += 1
        return build(g)

    lalr._build_lalr = counted
    try:
        for _ in range(args.rounds):
            for memo in (True, False):
                lalr._RECENT.clear()
                lalr._RECENT_SIZE = size if memo else 0
                builds[0] = 0
                g = Grammar.from_json_schema(schema)
                t = time.perf_counter()
                Constraint(g, vocab, compile="lazy", cache_dir=False, progress=False)
                print(f"memo {'on ' if memo else 'off'}: {time.perf_counter() - t:6.2f} s, "
                      f"{builds[0]} LALR(1) builds, {len(g.rules)} rules", flush=True)
    finally:
        lalr._build_lalr, lalr._RECENT_SIZE = build, size
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
