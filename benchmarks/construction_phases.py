"""Where a construction's time goes: CPU seconds per phase, per grammar or schema.

    python benchmarks/construction_phases.py --schemas 601,3             # sample1000 rows
    python benchmarks/construction_phases.py --grammars json,c --tools    # bundled grammars

Each construction runs in this process with caching off, after one warm-up
construction (the vocabulary index is built first and not counted). Each phase
is the CPU time (``time.process_time``) inside the function that does it
(outermost only): state expansion (``ParserDWA.expand_all``; the expansions of
head pairs count as *head pairs*), whole starts (``add_config``), starts on a base
(``add_config_on_base``, ``add_config_on_class_base``, ``add_config_on_shadow_base``), head pairs
(``add_pairs``), minimization, releasing the build's items, the masker and the work
done ahead for the first masks (``Masker.__init__``, ``compile.ahead.masks_ahead``)
and the grammar tables. The rest of *total* is
glue (the scanner, the configuration classes, the stats, the artifact key).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "bench" / "maskbench" / "sample1000.jsonl"

#: (module attribute path, phase label); the functions are wrapped in place
PHASES = (
    ("stackmask.compile.build:add_config", "whole starts"),
    ("stackmask.compile.build:add_config_on_base", "starts on a base"),
    ("stackmask.compile.build:add_config_on_class_base", "starts on a base"),
    ("stackmask.compile.build:add_config_on_shadow_base", "starts on a base"),
    ("stackmask.compile.build:add_pairs", "head pairs"),
    ("stackmask.compile.parser_dwa:ParserDWA.expand_all", "state expansion"),
    ("stackmask.compile.parser_dwa:ParserDWA.minimize", "minimize"),
    ("stackmask.compile.parser_dwa:ParserDWA.release_items", "release"),
    ("stackmask.runtime.masker:Masker.__init__", "masker prefill"),
    ("stackmask.runtime.constraint:masks_ahead", "masker prefill"),
    ("stackmask.compile:build_tables", "tables"),
)


def instrument(acc: dict) -> None:
    """Wrap each phase's function to add its CPU time to ``acc[label]``, outermost phase
    only (the expansions head pairs make count as head pairs)."""
    import importlib
    active: set = set()
    for where, label in PHASES:
        mod_name, attr = where.split(":")
        owner = importlib.import_module(mod_name)
        parts = attr.split(".")
        for p in parts[:-1]:
            owner = getattr(owner, p)
        f = getattr(owner, parts[-1])

        def wrapped(*a, _f=f, _label=label, _key=where, **k):
            if active:
                return _f(*a, **k)
            active.add(_key)
            t = time.process_time()
            try:
                return _f(*a, **k)
            finally:
                active.discard(_key)
                acc[_label] = acc.get(_label, 0.0) + time.process_time() - t
        setattr(owner, parts[-1], wrapped)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schemas", default="", help="comma-separated row indexes of --data")
    ap.add_argument("--data", default=str(DATA), help="JSONL with a 'schema' per row")
    ap.add_argument("--grammars", default="", help="comma-separated grammar names (bundled json, "
                    "or json-outlines, calc, c, sql, java, go from ../shared/bench/grammars; "
                    "json-outlines is its json.lark)")
    ap.add_argument("--tools", action="store_true", help="examples/tool_calling.py's grammar")
    args = ap.parse_args(argv)
    import stackmask
    from stackmask import Grammar
    from stackmask.compile.token_index import vocab_index
    from stackmask.report.workload import load_vocab, load_workload
    vocab, _ = load_vocab("qwen2.5")
    vocab_index(vocab, None)
    jobs = []
    if args.schemas:
        rows = [json.loads(line) for line in open(args.data)]
        for i in args.schemas.split(","):
            r = rows[int(i)]
            jobs.append((r.get("name", i), lambda r=r: (Grammar.from_json_schema(r["schema"]), None)))
    for name in filter(None, args.grammars.split(",")):
        w = load_workload(name)          # bundled, or a benchmark grammar (bench_grammar_path)
        jobs.append((name, lambda w=w: (w.text, w.ambiguous)))
    if args.tools:
        from stackmask.grammars.tags import needs_glr, tool_calling
        src = (REPO / "examples" / "tool_calling.py").read_text()
        ns: dict = {}
        exec(src.split("vocab = stackmask.Vocab")[0], ns)      # the example's tool list

        def tools():
            g = tool_calling(ns["tools"])
            return g, needs_glr(g)
        jobs.append(("tool calling (examples/tool_calling.py)", tools))
    if not jobs:
        ap.error("nothing to measure: give --schemas, --grammars or --tools")
    acc: dict = {}
    instrument(acc)
    labels = list(dict.fromkeys(label for _, label in PHASES))
    print("| construction | total | " + " | ".join(labels) + " | configurations / states |")
    print("|---" * (len(labels) + 3) + "|")
    warm = True
    for name, make in jobs:
        if warm:                  # imports, the scanner's first use, numpy's first calls
            g, amb = make()
            stackmask.Constraint(g, vocab, ambiguous=amb, cache_dir=False, progress=False)
            warm = False
        g, amb = make()
        acc.clear()
        t = time.process_time()
        c = stackmask.Constraint(g, vocab, ambiguous=amb, cache_dir=False, progress=False)
        total = time.process_time() - t
        st = c.compiled.stats
        cells = " | ".join(f"{acc.get(label, 0.0):.2f}" for label in labels)
        print(f"| {name} | {total:.2f} s | {cells} | {st['configs']:,} / {st['states']:,} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
