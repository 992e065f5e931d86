"""JSON Schema coverage: how many schemas compile, and which instances their grammars accept.

For each schema of a MaskBench-style JSONL (``name``, ``schema``, ``valid``, ``invalid``), the
grammar of ``stackmask.grammars.json_schema.convert_schema`` is built with default settings over
a 256-byte vocabulary (``compile="lazy"``: membership needs no mask automaton), and each instance
is committed byte by byte and checked with ``is_accepting``. Prints refused schemas, valid
instances accepted and invalid instances accepted, and the most common refusals.

    python benchmarks/schema_coverage.py --limit 200
    python benchmarks/schema_coverage.py --data benchmarks/schemas/fresh.jsonl --json cov.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import warnings
from collections import Counter
from pathlib import Path

BENCH = Path(os.environ.get("STACKMASK_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def coverage(rows: list, timeout: float) -> list:
    """Per schema: ``{"name", "ok", "valid": [bool], "invalid": [bool]}`` or ``ok`` False
    with ``err`` (the refusal's first line, or ``timeout``)."""
    from stackmask import Constraint, TokenRejected, Vocab
    from stackmask.grammars.json_schema import convert_schema
    vocab = Vocab([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256],
                  special_token_ids=[256])

    def accepts(c, text: str) -> bool:
        try:
            s = c.commit_bytes(c.start(), text.encode())
        except TokenRejected:
            return False
        return c.is_accepting(s)

    out = []
    signal.signal(signal.SIGALRM, _alarm)
    for r in rows:
        rec = {"name": r.get("name", "")}
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            sg = convert_schema(r["schema"])
            c = Constraint(sg.grammar, vocab, ambiguous=bool(sg.conflicts), compile="lazy",
                           cache_dir=False, progress=False)
            rec.update(ok=True, valid=[accepts(c, t) for t in r.get("valid", [])],
                       invalid=[accepts(c, t) for t in r.get("invalid", [])])
        except _Timeout:
            rec.update(ok=False, err="timeout")
        except Exception as e:          # noqa: BLE001 - a refusal of any kind is recorded
            rec.update(ok=False, err=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.append(rec)
    return out


def summary(recs: list) -> str:
    ok = [x for x in recs if x["ok"]]
    v = [a for x in ok for a in x["valid"]]
    iv = [a for x in ok for a in x["invalid"]]
    lines = [f"schemas {len(recs)}: compiled {len(ok)}, refused {len(recs) - len(ok)}; "
             f"valid accepted {sum(v)}/{len(v)}; invalid accepted {sum(iv)}/{len(iv)}"]
    for err, n in Counter(x["err"][:100] for x in recs if not x["ok"]).most_common(20):
        lines.append(f"  {n} x {err}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(BENCH / "maskbench" / "sample1000.jsonl"))
    ap.add_argument("--limit", type=int, default=None, help="the first N schemas")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per schema")
    ap.add_argument("--json", default=None, help="write the per-schema records here")
    args = ap.parse_args(argv)
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    with open(args.data) as f:
        rows = [json.loads(line) for line in f if line.strip()][:args.limit]
    recs = coverage(rows, args.timeout)
    if args.json:
        Path(args.json).write_text(json.dumps(recs, indent=0))
    print(summary(recs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
