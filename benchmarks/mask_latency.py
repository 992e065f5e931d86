"""get_mask and commit latency on fixed token traces (the README's numbers).

For each benchmark grammar (json-outlines, calc, c, sql, java, go from
``../shared/bench/grammars`` or ``$STACKMASK_BENCH/grammars``: ``json-outlines``
is that folder's ``json.lark``, not the bundled ``json`` grammar, the others
``<name>.lark``; sql, java and go with ``ambiguous=True``) and the Qwen2.5
vocabulary:

1. **Traces.** ``benchmarks/traces/<grammar>.jsonl`` holds generated programs,
   one JSON object per line: ``{"text": ..., "tokens": [...]}`` (Qwen2.5 token
   ids, ``qwen2_5_encoding().encode(text, disallowed_special=())``). The file is
   generated (``stackmask.generate.SentenceGenerator``, fixed seeds; by default
   10 programs of 20 to 80 terminals, derivation depth 12) only when it is
   missing or ``--regenerate`` is given, so every run, and every other engine
   benchmarked later, replays identical token ids.
2. **Replay.** The ``Constraint`` is built once per grammar (default artifact
   cache; construction time and ``loaded_from_cache`` are reported with
   ``compile_stats()``). Every trace is teacher-forced from ``start()``: at every
   step ``get_mask(state, out=buf)`` (a preallocated int32 buffer) and
   ``commit(state, token)`` are timed separately with ``time.perf_counter_ns``;
   after the last token the mask before EOS is timed too (so a trace of n
   tokens gives n + 1 masks and n commits). Outside the timed region every
   mask is checked to allow the next token (EOS at the end) and the EOS is
   committed.
   The *cold* pass is the first replay after construction; the *warm* pass
   replays the same traces again. Runtime caches (memoized dense masks, dense
   forms of weights, lazily computed automaton edges, scanner memos) make the
   warm pass faster; both are reported. Percentiles are over all steps of a
   pass (with ~1000 steps p99.9 is close to the max). masks/s is steps divided
   by the summed get_mask time. The garbage collector stays enabled (a
   collection is forced before each pass); outliers are listed with what
   happened during the call (mask-memo miss, weights turned dense, lazy edges
   or lexer configurations compiled, GC collections).
3. ``--verify K``: after the timed passes, replay again untimed and compare
   ``get_mask`` with ``reference_mask`` (the O(|V|) oracle) at K random steps
   per grammar; any mismatch makes the exit status non-zero (as does a token
   that is rejected or missing from its mask).

    python benchmarks/mask_latency.py                          # all grammars
    python benchmarks/mask_latency.py --grammars json-outlines,calc --verify 20 --json out.json
    python benchmarks/mask_latency.py --regenerate             # rewrite the trace files
    python benchmarks/mask_latency.py --traces-only            # only write missing trace files

The Markdown tables go to stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

from stackmask import Constraint, Grammar, TokenRejected, Vocab
from stackmask.generate import SentenceGenerator
from stackmask.report.workload import WorkloadError, bench_grammar_path
from stackmask.vocab import qwen2_5_encoding

HERE = Path(__file__).resolve().parent
BENCH = Path(os.environ.get("STACKMASK_BENCH", HERE.parents[1] / "shared" / "bench"))
TRACES = HERE / "traces"
GRAMMARS = ("json-outlines", "calc", "c", "sql", "java", "go")
AMBIGUOUS = {"sql", "java", "go"}
PCTS = (50, 90, 99, 99.9)

# trace generation (changing these changes the traces only with --regenerate)
GEN_SEED = 20240601
GEN_PROGRAMS = 10
GEN_MAX_TERMINALS = 80
GEN_MIN_TERMINALS = 20        # no trivial documents ("[]")
GEN_MAX_DEPTH = 12


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


# -- traces --------------------------------------------------------------------------------
def grammar_text(name: str) -> str:
    return bench_grammar_path(name, BENCH).read_text()


def seed_name(name: str) -> str:
    """The grammar in the random seeds: its file's stem, so that json-outlines
    (``json.lark``) draws the texts and steps it drew when it was named json, and
    ``--regenerate`` rewrites the stored traces unchanged."""
    return bench_grammar_path(name, BENCH).stem


def generate_traces(name: str, enc, programs: int, max_terminals: int, seed: int, *,
                    max_depth: int = GEN_MAX_DEPTH, min_terminals: int | None = None,
                    label: str = "mask_latency") -> list[dict]:
    """``programs`` random sentences of the benchmark grammar ``name`` (derivation depth
    ``max_depth``, ``min_terminals``-``max_terminals`` terminals), tokenized with ``enc``:
    ``{"text", "tokens"}`` dicts. The sentences depend only on the arguments (``label``
    names the benchmark in the seed, so two benchmarks draw different texts)."""
    if min_terminals is None:
        min_terminals = min(GEN_MIN_TERMINALS, max_terminals)
    gen = SentenceGenerator(Grammar.from_lark(grammar_text(name)), max_depth=max_depth,
                            seed=seed, max_terminals=max_terminals, min_terminals=min_terminals)
    rng = random.Random(f"{label}:{seed_name(name)}:{seed}")   # str seeds: independent of PYTHONHASHSEED
    out = []
    for _ in range(programs):
        text, _terms = gen.sentence(rng)
        tokens = enc.encode(text, disallowed_special=())
        if enc.decode_bytes(tokens) != text.encode("utf-8"):
            raise RuntimeError(f"{name}: tokenization does not round-trip for {text[:60]!r}")
        out.append({"text": text, "tokens": [int(t) for t in tokens]})
    return out


def load_traces(name: str, directory: Path, enc, regenerate: bool, programs: int,
                max_terminals: int, seed: int) -> tuple[list[dict], bool]:
    path = directory / f"{name}.jsonl"
    if path.exists() and not regenerate:
        with path.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()], False
    traces = generate_traces(name, enc, programs, max_terminals, seed)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for t in traces:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return traces, True


# -- instrumentation (read outside the timed region) ---------------------------------------
class Probe:
    """Counters that explain slow calls: GC collections, memo misses, dense conversions,
    lazily computed automaton edges and lexer configurations. Reads private attributes
    defensively: if the runtime changes shape, the counters read 0."""

    def __init__(self, c: Constraint):
        self.gc_runs = 0
        self.lazy_edges = 0
        self._masker = getattr(c, "_masker", None)
        dwa = getattr(getattr(c, "compiled", None), "dwa", None)
        self._dwa = dwa
        self._dense = getattr(getattr(dwa, "weights", None), "_dense", None)
        self._init = getattr(dwa, "init", None)
        if dwa is not None and hasattr(dwa, "edge"):
            inner = dwa.edge             # only called when an edge is not computed yet

            def edge(q, s, _inner=inner, _self=self):
                _self.lazy_edges += 1
                return _inner(q, s)
            dwa.edge = edge              # instance attribute shadows the method
        gc.callbacks.append(self._on_gc)
        self._who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)

    def _on_gc(self, phase, info) -> None:
        if phase == "start":
            self.gc_runs += 1

    def close(self) -> None:
        try:
            gc.callbacks.remove(self._on_gc)
        except ValueError:
            pass

    def snapshot(self) -> tuple:
        m = self._masker
        return (self.gc_runs,
                getattr(m, "misses", 0) if m is not None else 0,
                len(self._dense) if self._dense is not None else 0,
                self.lazy_edges,
                len(self._init) if self._init is not None else 0,
                resource.getrusage(self._who).ru_nivcsw)

    # the last one is not a cache event: the OS took the CPU away during the call
    FIELDS = ("gc", "memo_miss", "dense_new", "lazy_edges", "lazy_configs", "preempted")
    EVENTS = FIELDS[:-1]

    @classmethod
    def delta(cls, a: tuple, b: tuple) -> dict:
        return {k: y - x for k, x, y in zip(cls.FIELDS, a, b) if y != x}


def pct(ns: np.ndarray) -> dict:
    us = ns.astype(float) / 1e3
    if us.size == 0:
        return {}
    p = np.percentile(us, PCTS)
    d = {"n": int(us.size)}
    d.update({f"p{q:g}": float(v) for q, v in zip(PCTS, p)})
    d["max"] = float(us.max())
    d["mean"] = float(us.mean())
    return d


def bit(mask: np.ndarray, tok: int) -> bool:
    return bool((int(mask[tok >> 5]) >> (tok & 31)) & 1)


# -- replay --------------------------------------------------------------------------------
def replay(c: Constraint, traces: list[dict], eos: int, probe: Probe, n_outliers: int) -> dict:
    buf = np.zeros(c.mask_words, dtype=np.int32)
    get_mask, commit = c.get_mask, c.commit
    pc = time.perf_counter_ns
    mask_ns, commit_ns = [], []
    mask_info, commit_info = [], []     # per call: (trace, position, token) + probe deltas
    errors = []
    masker = getattr(c, "_masker", None)
    miss0 = getattr(masker, "misses", 0)
    gc.collect()
    for ti, tr in enumerate(traces):
        s = c.start()
        toks = tr["tokens"]
        for pos, tok in enumerate(toks):
            a = probe.snapshot()
            t0 = pc()
            get_mask(s, out=buf)
            t1 = pc()
            b = probe.snapshot()
            mask_ns.append(t1 - t0)
            mask_info.append((ti, pos, tok, len(s.heads), a, b))
            if not bit(buf, tok):
                errors.append(f"trace {ti} step {pos}: token {tok} not in the mask")
            t0 = pc()
            try:
                s2 = commit(s, tok)
            except TokenRejected as e:
                errors.append(f"trace {ti} step {pos}: token {tok} rejected: {e}")
                break
            t1 = pc()
            a2 = probe.snapshot()
            commit_ns.append(t1 - t0)
            commit_info.append((ti, pos, tok, len(s.heads), b, a2))
            s = s2
        else:
            a = probe.snapshot()
            t0 = pc()
            get_mask(s, out=buf)
            t1 = pc()
            b = probe.snapshot()
            mask_ns.append(t1 - t0)
            mask_info.append((ti, len(toks), eos, len(s.heads), a, b))
            if not bit(buf, eos):
                errors.append(f"trace {ti}: EOS not in the final mask")
            try:
                commit(s, eos)
            except TokenRejected as e:
                errors.append(f"trace {ti}: EOS rejected: {e}")
    mask_ns = np.asarray(mask_ns, dtype=np.int64)
    commit_ns = np.asarray(commit_ns, dtype=np.int64)
    total_s = mask_ns.sum() / 1e9

    def outliers(ns, info, vocab):
        out = []
        for i in np.argsort(ns)[::-1][:n_outliers]:
            ti, pos, tok, heads, a, b = info[int(i)]
            out.append({"us": ns[i] / 1e3, "trace": ti, "step": pos, "token": tok,
                        "bytes": (vocab.token_bytes(tok) or b"").decode("utf-8", "replace"),
                        "heads": heads, **Probe.delta(a, b)})
        return out

    def share(info, ns):
        # calls during which a cache was filled or GC ran; calls the OS preempted
        ds = [Probe.delta(a, b) for *_, a, b in info]
        ev = np.array([any(k in d for k in Probe.EVENTS) for d in ds], dtype=bool)
        pre = np.array(["preempted" in d for d in ds], dtype=bool)
        tot = max(int(ns.sum()), 1)
        return {"calls_with_event": int(ev.sum()), "time_share_with_event": float(ns[ev].sum() / tot),
                "preempted_calls": int(pre.sum()), "time_share_preempted": float(ns[pre].sum() / tot),
                "us_not_preempted": pct(ns[~pre]) if ev.size else {}}

    return {
        "steps": int(mask_ns.size), "commits": int(commit_ns.size),
        "get_mask_us": pct(mask_ns), "commit_us": pct(commit_ns),
        "masks_per_s": float(mask_ns.size / total_s) if total_s else None,
        # dense masks computed (the rest of the masks were memo hits)
        "memo_misses": getattr(masker, "misses", 0) - miss0,
        "get_mask_events": share(mask_info, mask_ns), "commit_events": share(commit_info, commit_ns),
        "get_mask_outliers": outliers(mask_ns, mask_info, c.vocab),
        "commit_outliers": outliers(commit_ns, commit_info, c.vocab),
        "errors": errors,
        "_mask_ns": mask_ns.tolist(), "_commit_ns": commit_ns.tolist(),
    }


def verify(c: Constraint, traces: list[dict], eos: int, k: int, seed: int, name: str) -> dict:
    """get_mask vs reference_mask at k random steps (untimed replay)."""
    steps = [(ti, pos) for ti, tr in enumerate(traces) for pos in range(len(tr["tokens"]) + 1)]
    rng = random.Random(f"mask_latency:verify:{seed_name(name)}:{seed}")
    chosen = set(rng.sample(steps, min(k, len(steps))))
    checked, mismatches, details, oracle_s = 0, 0, [], 0.0
    for ti, tr in enumerate(traces):
        s = c.start()
        toks = tr["tokens"]
        for pos in range(len(toks) + 1):
            if (ti, pos) in chosen:
                fast = c.get_mask(s).copy()
                t = time.perf_counter()
                ref = c.reference_mask(s)
                oracle_s += time.perf_counter() - t
                checked += 1
                if not np.array_equal(fast, ref):
                    mismatches += 1
                    diff = np.unpackbits((fast ^ ref).view(np.uint8), bitorder="little")
                    extra = np.unpackbits((fast & ~ref).view(np.uint8), bitorder="little")
                    details.append({"trace": ti, "step": pos, "differing_tokens": int(diff.sum()),
                                    "extra_in_fast": int(extra.sum()),
                                    "missing_in_fast": int(diff.sum() - extra.sum())})
            if pos < len(toks):
                try:
                    s = c.commit(s, toks[pos])
                except TokenRejected:
                    break
    return {"checked": checked, "mismatches": mismatches, "details": details,
            "oracle_mean_ms": oracle_s / checked * 1e3 if checked else None}


def run_grammar(name: str, vocab: Vocab, traces: list[dict], args) -> dict:
    text = grammar_text(name)
    kw = {} if args.compile == "eager" else {"compile": args.compile}
    log(f"[{name}] building Constraint ...")
    t0 = time.perf_counter()
    c = Constraint(text, vocab, ambiguous=name in AMBIGUOUS, **kw)
    build_s = time.perf_counter() - t0
    log(f"[{name}] built in {build_s:.2f} s (from cache: {c.loaded_from_cache})")
    eos = min(vocab.eos_token_ids)
    probe = Probe(c)
    try:
        passes = {}
        for p in ("cold", "warm"):
            passes[p] = replay(c, traces, eos, probe, args.outliers)
            log(f"[{name}] {p} pass: {passes[p]['steps']} masks, "
                f"get_mask p50 {passes[p]['get_mask_us'].get('p50', 0):.1f} us")
    finally:
        probe.close()
    r = {"grammar": name, "ambiguous": name in AMBIGUOUS, "build_s": build_s,
         "loaded_from_cache": bool(c.loaded_from_cache), "compile_stats": c.compile_stats(),
         "programs": len(traces), "tokens": sum(len(t["tokens"]) for t in traces),
         "cold": passes["cold"], "warm": passes["warm"]}
    if args.verify:
        log(f"[{name}] verifying {args.verify} masks against the reference oracle ...")
        r["verify"] = verify(c, traces, eos, args.verify, GEN_SEED, name)
    return r


# -- output --------------------------------------------------------------------------------
def f_us(d: dict, k: str) -> str:
    v = d.get(k)
    if v is None:
        return "n/a"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def print_tables(results: list[dict]) -> None:
    print("### Construction\n")
    print("| grammar | construct | from cache | configs | states | edges | weights | max depth | compile (stats) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        st = r["compile_stats"]
        comp = st.get("compile_s")
        b = r["build_s"]
        print(f"| {r['grammar']} | {f'{b:.2f} s' if b >= 1 else f'{b * 1e3:.0f} ms'} | {'yes' if r['loaded_from_cache'] else 'no'} | "
              f"{st.get('configs', '?')} | {st.get('states', '?')} | {st.get('edges', '?')} | "
              f"{st.get('weights', '?')} | {st.get('max_depth', '?')} | "
              f"{f'{comp:.1f} s' if isinstance(comp, (int, float)) else '?'} |")
    print()
    for r in results:
        st = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in r["compile_stats"].items())
        print(f"- {r['grammar']} compile_stats(): {st}")
    print()
    print("### Latency (µs; teacher-forced replay of benchmarks/traces)\n")
    cols = ("p50", "p90", "p99", "p99.9", "max")
    print("| grammar | pass | steps | get_mask " + " | ".join(cols) + " | masks/s | commit "
          + " | ".join(cols) + " | preempted |")
    print("|---|---|---|" + "---|" * (2 * len(cols) + 2))
    for r in results:
        for p in ("cold", "warm"):
            x = r[p]
            g, cm = x["get_mask_us"], x["commit_us"]
            mps = x["masks_per_s"]
            print(f"| {r['grammar']} | {p} | {x['steps']} | " + " | ".join(f_us(g, c) for c in cols)
                  + f" | {mps:,.0f} | " + " | ".join(f_us(cm, c) for c in cols)
                  + f" | {x['get_mask_events']['preempted_calls']} + {x['commit_events']['preempted_calls']} |")
    if any("verify" in r for r in results):
        print("\n### Verification against reference_mask\n")
        print("| grammar | masks checked | mismatches | oracle mean |")
        print("|---|---|---|---|")
        for r in results:
            v = r.get("verify")
            if v:
                om = v["oracle_mean_ms"]
                print(f"| {r['grammar']} | {v['checked']} | {v['mismatches']} | "
                      f"{'n/a' if om is None else f'{om:.0f} ms'} |")
    if any(r[p][f"{w}_outliers"] for r in results for p in ("cold", "warm") for w in ("get_mask", "commit")):
        print("\n### Slowest calls\n")
    for r in results:
        for p in ("cold", "warm"):
            x = r[p]
            for what in ("get_mask", "commit"):
                ev = x[f"{what}_events"]
                outs = x[f"{what}_outliers"]
                if not outs:
                    continue
                desc = "; ".join(
                    f"{o['us']:.0f} µs (trace {o['trace']} step {o['step']} {o['bytes']!r}, "
                    f"{o['heads']} head{'s' if o['heads'] != 1 else ''}"
                    + "".join(f", {k} {v}" for k, v in o.items() if k in Probe.FIELDS) + ")"
                    for o in outs)
                print(f"- {r['grammar']} {p} {what}: {desc}. Calls that filled a cache or ran GC: "
                      f"{ev['calls_with_event']} ({100 * ev['time_share_with_event']:.0f}% of the time); "
                      f"preempted by the OS: {ev['preempted_calls']} "
                      f"({100 * ev['time_share_preempted']:.0f}% of the time).")
    errs = [(r["grammar"], p, e) for r in results for p in ("cold", "warm") for e in r[p]["errors"]]
    if errs:
        print("\n### Errors\n")
        for g, p, e in errs[:50]:
            print(f"- {g} ({p}): {e}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammars", default=",".join(GRAMMARS), help="comma-separated (default: all)")
    ap.add_argument("--traces", default=str(TRACES), help="trace directory (default: benchmarks/traces)")
    ap.add_argument("--regenerate", action="store_true", help="regenerate the trace files")
    ap.add_argument("--traces-only", action="store_true",
                    help="only write missing (or, with --regenerate, all) trace files; no Constraint")
    ap.add_argument("--programs", type=int, default=GEN_PROGRAMS, help="programs per grammar when generating")
    ap.add_argument("--max-terminals", type=int, default=GEN_MAX_TERMINALS,
                    help="terminals per program at most when generating")
    ap.add_argument("--verify", type=int, default=0, metavar="K",
                    help="compare get_mask with reference_mask at K random steps per grammar")
    ap.add_argument("--outliers", type=int, default=3, help="slowest calls listed per grammar/pass/op")
    ap.add_argument("--compile", choices=("eager", "lazy"), default="eager",
                    help="Constraint compile mode (lazy: only if the runtime supports it)")
    ap.add_argument("--json", default=None, metavar="FILE", help="write the raw figures here")
    ap.add_argument("--raw", action="store_true", help="include every per-step time in --json")
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.grammars.split(",") if n.strip()]
    for n in names:
        try:
            path = bench_grammar_path(n, BENCH)
        except WorkloadError as e:
            ap.error(str(e))
        if not path.exists():
            ap.error(f"no grammar {n!r} in {BENCH / 'grammars'} ({path.name} is missing)")
    enc = qwen2_5_encoding()
    trace_dir = Path(args.traces)
    all_traces = {}
    for n in names:
        all_traces[n], made = load_traces(n, trace_dir, enc, args.regenerate, args.programs,
                                          args.max_terminals, GEN_SEED)
        if made:
            log(f"[{n}] wrote {trace_dir / (n + '.jsonl')} ({len(all_traces[n])} programs, "
                f"{sum(len(t['tokens']) for t in all_traces[n])} tokens)")
    if args.traces_only:
        return 0
    vocab = Vocab.qwen2_5()
    results = []
    for n in names:
        results.append(run_grammar(n, vocab, all_traces[n], args))
    print_tables(results)
    if args.json:
        out = []
        for r in results:
            r = json.loads(json.dumps(r, default=str))
            if not args.raw:
                for p in ("cold", "warm"):
                    r[p].pop("_mask_ns", None)
                    r[p].pop("_commit_ns", None)
            out.append(r)
        meta = {"python": sys.version.split()[0], "vocab_size": vocab.size, "cpu_count": os.cpu_count(),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        Path(args.json).write_text(json.dumps({"meta": meta, "results": out}, indent=1))
    bad = any(r[p]["errors"] for r in results for p in ("cold", "warm"))
    bad |= any(r.get("verify", {}).get("mismatches", 0) for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
