"""``stackmask`` / ``python -m stackmask``: the command line.

* ``stackmask`` or ``stackmask report [...]``: compile a grammar and print its
  latency-percentile report (see :mod:`stackmask.report`). With no arguments:
  the bundled JSON grammar, the bundled Qwen2.5 vocabulary and the bundled JSON
  corpus, with 20 masks checked against the reference oracle.
* ``stackmask demo [...]``: decode one document token by token under a
  grammar, printing every step; every token must be allowed by ``get_mask``
  before it is committed, EOS must be allowed at the end, and every mask is
  compared with the reference oracle (``--no-verify`` skips that).

Both resolve ``--grammar`` alike (:func:`stackmask.report.workload.load_workload`:
the bundled ``json``, the benchmark grammars ``json-outlines c calc sql java go``
(``json-outlines`` is the benchmark folder's ``json.lark``, not the bundled
grammar), a ``.lark`` file or a JSON Schema ``.json`` file) and log progress
(logger ``stackmask``) to stderr; ``--quiet`` keeps only warnings.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

log = logging.getLogger("stackmask.cli")

SAMPLE = '{"name": "stackmask", "tags": ["glr", "masks"], "version": 0.1, "exact": true, "peers": null}'


def _percentiles(xs: list[float]) -> str:
    import numpy as np
    if not xs:
        return "n/a"
    a = np.array(xs) * 1e6
    ps = np.percentile(a, [50, 90, 99, 99.9])
    return (f"p50 {ps[0]:.0f} us  p90 {ps[1]:.0f} us  p99 {ps[2]:.0f} us  "
            f"p99.9 {ps[3]:.0f} us  max {a.max():.0f} us  (n={len(xs)})")


def _demo_text(args, w) -> str:
    """The document to decode: --text, --text-file, else the grammar's first bundled
    document (the JSON sample, or the first trace of ``benchmarks/traces/<name>.jsonl``)."""
    from .report.workload import WorkloadError, default_corpus
    if args.text_file:
        try:
            with open(args.text_file, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            raise WorkloadError(f"--text-file {args.text_file!r}: {e.strerror}") from None
    if args.text is not None:
        return args.text
    if w.name == "json" and w.source.startswith("bundled"):
        return SAMPLE
    docs = default_corpus(w) or []
    text = next((d["text"] for d in docs if isinstance(d.get("text"), str) and d["text"]), None)
    if text is None:
        raise WorkloadError(f"no sample document for grammar {w.name!r}: give --text or --text-file")
    return text


def demo(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="stackmask demo",
                                 description="Decode a document token by token under a grammar, "
                                             "checking every token against the mask.")
    ap.add_argument("--grammar", default="json",
                    help="bundled grammar (json), benchmark grammar (json-outlines, c, calc, sql, "
                         "java, go; json-outlines is the benchmark folder's json.lark), a .lark "
                         "file or a JSON Schema .json file (default: json)")
    ap.add_argument("--text", default=None,
                    help="document to decode (default: a bundled JSON sample for json, the first "
                         "benchmark trace for the benchmark grammars)")
    ap.add_argument("--text-file", default=None, help="read the document from this file")
    ap.add_argument("--ambiguous", action="store_true", default=None,
                    help="allow LALR conflicts (GLR); on by default for sql, java, go")
    ap.add_argument("--quiet", action="store_true",
                    help="only print the summary (no steps, no progress lines)")
    ap.add_argument("--no-verify", action="store_true",
                    help="do not compare every mask with the reference oracle (O(|V|) per step)")
    args = ap.parse_args(argv)

    import numpy as np
    from . import Constraint, TokenRejected, Vocab
    from .report import configure_logging
    from .report.workload import WorkloadError, load_workload
    from .vocab import qwen2_5_encoding

    configure_logging(quiet=args.quiet)
    try:
        w = load_workload(args.grammar, args.ambiguous)
        text = _demo_text(args, w)
    except WorkloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    log.info("loading the Qwen2.5 vocabulary")
    vocab = Vocab.qwen2_5()
    t1 = time.perf_counter()
    log.info("building the mask automaton of %s (%s)", w.name, w.source)
    if w.kind == "schema":
        from .grammars.json_schema import schema_constraint
        c = schema_constraint(w.schema, vocab, progress=not args.quiet)
    else:
        c = Constraint(w.text, vocab, ambiguous=w.ambiguous, progress=not args.quiet)
    t2 = time.perf_counter()
    print(f"vocabulary: Qwen2.5, {len(vocab.tokens)} tokens, mask width {vocab.size} ({t1 - t0:.2f} s)")
    print(f"grammar: {w.name}{' [GLR]' if c.ambiguous else ''}: {len(c.grammar.terminals)} terminals, {len(c.grammar.rules)} rules; "
          f"LR states {c.tables.lr.n_states}, lexer states {c.tables.lexer.n_states}")
    st = c.compile_stats()
    how = "loaded from cache" if c.loaded_from_cache else "compiled"
    print(f"mask automaton {how} in {t2 - t1:.2f} s: {st.get('configs')} lexer configurations, "
          f"{st.get('states')} states, {st.get('edges')} edges, {st.get('weights')} token sets, "
          f"reads at most {st.get('max_depth')} stack entries")

    ids = qwen2_5_encoding().encode(text, allowed_special=set())
    s = c.start()
    mask_times: list[float] = []
    commit_times: list[float] = []
    eos = min(vocab.eos_token_ids)
    for step, tok in enumerate(ids + [eos]):
        ta = time.perf_counter()
        mask = c.get_mask(s)
        tb = time.perf_counter()
        mask_times.append(tb - ta)
        allowed = bool((int(mask[tok >> 5]) >> (tok & 31)) & 1)
        n_allowed = int(np.unpackbits(mask.view(np.uint8)).sum())
        if not args.quiet:
            shown = vocab.tokens[tok] if tok not in vocab.eos_token_ids else b"<EOS>"
            print(f"step {step:3d}  token {tok:6d} {shown!r:24}  allowed: {n_allowed:6d} tokens"
                  f"  {'ok' if allowed else 'NOT ALLOWED'}")
        if not allowed:
            print(f"error: token {tok} is not allowed at step {step}", file=sys.stderr)
            return 1
        if not args.no_verify and not np.array_equal(mask, c.reference_mask(s)):
            print(f"error: the mask at step {step} differs from the reference oracle", file=sys.stderr)
            return 1
        try:
            tc = time.perf_counter()
            s = c.commit(s, tok)
            commit_times.append(time.perf_counter() - tc)
        except TokenRejected as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    print(f"decoded {len(ids)} tokens + EOS; the document is a sentence of the grammar")
    if not args.no_verify:
        print(f"all {len(mask_times)} masks are equal to the reference oracle's")
    print(f"get_mask: {_percentiles(mask_times)}")
    print(f"commit: {_percentiles(commit_times)}")
    return 0


USAGE = ("usage: stackmask [report] [options]   (latency report; stackmask report --help)\n"
         "       stackmask demo [options]       (decode one document step by step; "
         "stackmask demo --help)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "demo":
        return demo(argv[1:])
    if argv and argv[0] == "report":
        argv = argv[1:]            # `stackmask report --help`: the report's own options
    elif argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    from .report import main as report_main
    return report_main(argv)


if __name__ == "__main__":
    sys.exit(main())
