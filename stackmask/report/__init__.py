"""``stackmask report``: compile a grammar, replay token traces, print latency percentiles.

    stackmask report                                   # bundled JSON grammar + corpus, Qwen2.5
    stackmask report --grammar sql --compare glrmask,llguidance,xgrammar --verify 50
    stackmask report --grammar my.lark --corpus docs.jsonl --json out.json --plot cdf.png

Each engine runs in its own fresh process (so peak memory is its own): load
the vocabulary, compile the grammar (timed; stackmask loads its artifact from
the cache when there is one, ``--no-cache`` compiles), then replay every
trace teacher-forced twice: the *cold* pass right after compiling, the
*warm* pass over the same traces again. At every step ``get_mask`` (into a
preallocated buffer) and ``commit`` are timed separately; the mask before EOS
is timed too and EOS is then checked. A trace is *accepted* when every token
and the final EOS are accepted (a rejected token ends that trace for that
engine). ``--verify K`` compares stackmask's ``get_mask`` with the reference
oracle at K random steps after the timed passes. For every peer the report
also counts the steps at which its mask equals stackmask's (special tokens
and EOS bits aside: engines disagree on which specials they allow).

Progress (vocabulary, compile, passes; a line every ``HEARTBEAT_S`` while an
engine is silent) goes to the logger ``stackmask.report``, which
:func:`configure_logging` shows on stderr (``--quiet``: warnings only).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import logging
import multiprocessing as mp
import os
import random
import resource
import sys
import time
import traceback
from bisect import bisect_right
from typing import Any

import numpy as np

from .engines import ENGINES, PEERS, EngineUnavailable, clear_special_bits, make_engine
from .workload import DEFAULT_VOCAB, WorkloadError, load_traces, load_vocab, load_workload

log = logging.getLogger("stackmask.report")

PCTS = (50, 90, 99, 99.9)
#: seconds an engine may run without a progress line before the report logs one
HEARTBEAT_S = 30.0
#: the slowest masks of each pass the --json rows name (trace, step, µs)
SLOWEST = 5


def _rss_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_now() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def percentiles(ns: list[int]) -> dict:
    if not ns:
        return {"n": 0}
    us = np.asarray(ns, dtype=float) / 1e3
    d = {"n": int(us.size)}
    d.update({f"p{q:g}": float(v) for q, v in zip(PCTS, np.percentile(us, PCTS))})
    d["max"] = float(us.max())
    d["per_s"] = float(us.size / (us.sum() / 1e6)) if us.sum() > 0 else 0.0
    return d


def _bit(mask: np.ndarray, tok: int) -> bool:
    return bool((int(mask[tok >> 5]) >> (tok & 31)) & 1)


# -- logging --------------------------------------------------------------------------------
class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (so redirected or
    captured stderr gets the lines), one line per record."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:       # pragma: no cover - logging must never break the run
            self.handleError(record)


class _Format(logging.Formatter):
    """``time logger: message``; the library's messages that begin with "stackmask: "
    (for handlers that do not print the logger's name) lose it here, where the name
    already says it."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).replace(f"{record.name}: stackmask: ", f"{record.name}: ", 1)


def configure_logging(quiet: bool = False) -> None:
    """Show the ``stackmask`` logger's INFO records (progress) on stderr, or only its
    warnings when ``quiet``. For the command line; the library itself configures no
    logging. Calling it again changes the level and adds no second handler."""
    logger = logging.getLogger("stackmask")
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        h = _StderrHandler()
        h.setFormatter(_Format("%(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
        logger.addHandler(h)


# -- one engine, in its own process ---------------------------------------------------------
def _replay(eng, h, traces, words, record_masks, skip_ids, width):
    buf = np.zeros(words, dtype=np.int32)
    mask_ns, commit_ns, digests, starts = [], [], [], []
    accepted, first_reject = 0, None
    pc = time.perf_counter_ns
    gc.collect()
    for ti, toks in enumerate(traces):
        starts.append(len(mask_ns))          # the index of this trace's first mask
        st = eng.start(h)
        ok = True
        for i in range(len(toks) + 1):
            t0 = pc()
            eng.mask(h, st, buf)
            t1 = pc()
            mask_ns.append(t1 - t0)
            if record_masks:
                digests.append(hashlib.blake2b(clear_special_bits(buf, skip_ids, width).tobytes(),
                                               digest_size=8).hexdigest())
            if i == len(toks):
                ok = eng.finish(h, st)
                if not ok and first_reject is None:
                    first_reject = {"trace": ti, "step": i, "token": "EOS"}
                break
            t2 = pc()
            good, st = eng.commit(h, st, toks[i])
            commit_ns.append(pc() - t2)
            if not good:
                ok = False
                if first_reject is None:
                    first_reject = {"trace": ti, "step": i, "token": int(toks[i]),
                                    "in_mask": _bit(buf, toks[i])}
                break
        accepted += ok
    return {"mask_ns": mask_ns, "commit_ns": commit_ns, "starts": starts, "accepted": accepted,
            "first_reject": first_reject, "digests": digests}


def _verify(c, traces, k, seed):
    """Compare get_mask with the reference oracle at k random steps (stackmask only)."""
    steps = [(ti, i) for ti, toks in enumerate(traces) for i in range(len(toks) + 1)]
    rng = random.Random(seed)
    chosen = set(rng.sample(steps, min(k, len(steps))))
    checked = mismatched = 0
    for ti, toks in enumerate(traces):
        st = c.start()
        for i in range(len(toks) + 1):
            if (ti, i) in chosen:
                checked += 1
                if not np.array_equal(c.get_mask(st), c.reference_mask(st)):
                    mismatched += 1
            if i == len(toks):
                break
            try:
                st = c.commit(st, toks[i])
            except Exception:
                break
    return checked, mismatched


def run_engine(name: str, vocab_spec: str, eos_id, workload, traces, opts: dict) -> dict:
    out: dict[str, Any] = {"engine": name}
    try:
        vocab, encode = load_vocab(vocab_spec, eos_id)
        t0 = time.perf_counter()
        kw = {}
        if name == "stackmask":
            kw = dict(cache_dir=False if opts.get("no_cache") else opts.get("cache_dir"),
                      compile_mode=opts.get("compile", "eager"),
                      compile_budget_s=opts.get("compile_budget_s", 120.0),
                      progress=opts.get("progress", False))
        log.info("%s: preparing the vocabulary", name)
        eng = make_engine(name, vocab, encode, **kw)
        out["version"] = eng.version()
        out["vocab_prep_s"] = time.perf_counter() - t0
        out["rss_before_compile"] = _rss_now()
        log.info("%s: compiling %s (vocabulary ready in %.1f s)", name, workload.name,
                 out["vocab_prep_s"])
        t0 = time.perf_counter()
        h = eng.compile(workload)
        out["compile_s"] = time.perf_counter() - t0
        out["peak_rss_compile"] = _rss_peak()
        log.info("%s: compiled in %.1f s; replaying %d traces (cold pass, then warm)", name,
                 out["compile_s"], len(traces))
        if name == "stackmask":
            out["loaded_from_cache"] = h.loaded_from_cache
            out["stats"] = {k: v for k, v in h.compile_stats().items()
                            if isinstance(v, (int, float, bool, str))}
        words = (vocab.size + 31) // 32
        skip = np.array(sorted(vocab.special_token_ids | vocab.eos_token_ids), dtype=np.int64)
        out["cold"] = _replay(eng, h, traces, words, True, skip, vocab.size)
        warm = _replay(eng, h, traces, words, False, skip, vocab.size)
        warm.pop("digests")
        out["warm"] = warm
        if name == "stackmask" and opts.get("verify"):
            log.info("%s: comparing %d masks with the reference oracle", name, opts["verify"])
            out["verify"] = _verify(h, traces, opts["verify"], opts.get("seed", 0))
        out["peak_rss"] = _rss_peak()
        out["notes"] = list(eng.notes)
    except EngineUnavailable as e:
        out["error"] = str(e)
        out["unavailable"] = True
    except Exception as e:  # a peer that cannot read the grammar, or a crash: reported, not fatal
        out["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
        out["traceback"] = traceback.format_exc(limit=6)
    return out


def _child(conn, log_level, *args):
    configure_logging(quiet=log_level > logging.INFO)   # a spawned process starts unconfigured
    try:
        conn.send(run_engine(*args))
    finally:
        conn.close()


def run_isolated(name, vocab_spec, eos_id, workload, traces, opts, timeout: float) -> dict:
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    level = logging.getLogger("stackmask").getEffectiveLevel()
    p = ctx.Process(target=_child,
                    args=(child, level, name, vocab_spec, eos_id, workload, traces, opts),
                    daemon=True)
    t0 = time.perf_counter()
    p.start()
    child.close()
    res = None
    ready = False
    while True:             # wait for the result, with a line now and then while it runs
        left = timeout - (time.perf_counter() - t0)
        if left <= 0:
            break
        if parent.poll(min(HEARTBEAT_S, left)):
            ready = True
            break
        if not p.is_alive():
            ready = parent.poll(0)
            break
        log.info("%s: still running (%.0f s)", name, time.perf_counter() - t0)
    if ready:
        try:
            res = parent.recv()
        except EOFError:
            res = None
    p.join(5)
    if p.is_alive():
        p.kill()
        p.join()
    if res is None:
        if time.perf_counter() - t0 >= timeout:
            return {"engine": name, "error": f"timed out after {timeout:.0f} s (--timeout)"}
        return {"engine": name, "error": f"process died (exit code {p.exitcode})"}
    return res


# -- formatting -----------------------------------------------------------------------------
def _us(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1e5:
        return f"{x / 1e3:,.0f} ms"
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def _gb(b: int | None) -> str:
    return "-" if not b else f"{b / 2**30:.2f} GB"


#: calls under which the report says how few calls its p99.9 rests on
STABLE_TAIL_CALLS = 10_000


def tail_note(n: int) -> str | None:
    """A note when ``n`` timed calls are too few for a stable p99.9: which of the slowest
    calls it interpolates between (numpy's linear percentile), else None."""
    if n < 2 or n >= STABLE_TAIL_CALLS:
        return None
    pos = 0.999 * (n - 1)                  # index in ascending order, below n - 1
    lo = int(pos)
    a, b = n - lo - 1, n - lo              # ranks from the slowest (1 = the max) of lo + 1, lo

    def nth(r: int) -> str:
        return {1: "slowest", 2: "2nd slowest", 3: "3rd slowest"}.get(r, f"{r}th slowest")
    where = f"{nth(b)} call" if pos == lo else f"{nth(a)} and the {nth(b)} calls"
    return (f"get_mask p99.9 over {n:,} calls lies at the {where} "
            f"of a pass: with fewer than {STABLE_TAIL_CALLS:,} calls it rests on a few calls "
            "and moves between runs (a larger --corpus steadies it)")


def slowest(mask_ns: list, starts: list, k: int = SLOWEST) -> list[dict]:
    """The ``k`` slowest masks of a pass, slowest first: trace, step (the mask before
    the step-th token; step 0 is the start state's) and µs."""
    if not mask_ns:
        return []
    a = np.asarray(mask_ns)
    idx = np.argsort(a, kind="stable")[::-1][:k]
    out = []
    for i in idx.tolist():
        t = bisect_right(starts, i) - 1
        out.append({"trace": t, "step": i - starts[t], "us": round(float(a[i]) / 1e3, 1)})
    return out


def summarize(results: list[dict], n_traces: int) -> list[dict]:
    rows = []
    ref = next((r for r in results if r["engine"] == "stackmask" and "cold" in r), None)
    for r in results:
        if "error" in r:
            rows.append({"engine": r["engine"], "error": r["error"]})
            continue
        for pas in ("cold", "warm"):
            d = r[pas]
            row = {"engine": r["engine"], "pass": pas, "compile_s": r["compile_s"],
                   "peak_rss": r["peak_rss"], "accepted": d["accepted"], "traces": n_traces,
                   "mask": percentiles(d["mask_ns"]), "commit": percentiles(d["commit_ns"]),
                   "slowest_masks": slowest(d["mask_ns"], d["starts"])}
            if pas == "cold" and ref is not None and r is not ref:
                a, b = ref["cold"]["digests"], d["digests"]
                n = min(len(a), len(b))
                row["same_masks"] = (sum(x == y for x, y in zip(a[:n], b[:n])), n)
            rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    head = ("| engine | pass | compile | peak RSS | accepted | masks | get_mask p50 | p90 | p99 | p99.9 "
            "| max | masks/s | commit p50 | p90 | p99 | p99.9 | max | same mask as stackmask |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['engine']} | - | failed: {row['error']} |" + " |" * 15)
            continue
        m, c = row["mask"], row["commit"]
        same = row.get("same_masks")
        lines.append(
            f"| {row['engine']} | {row['pass']} | {row['compile_s']:.2f} s | {_gb(row['peak_rss'])} "
            f"| {row['accepted']}/{row['traces']} | {m['n']} | {_us(m.get('p50'))} | {_us(m.get('p90'))} "
            f"| {_us(m.get('p99'))} | {_us(m.get('p99.9'))} | {_us(m.get('max'))} | {m.get('per_s', 0):,.0f} "
            f"| {_us(c.get('p50'))} | {_us(c.get('p90'))} | {_us(c.get('p99'))} | {_us(c.get('p99.9'))} "
            f"| {_us(c.get('max'))} | {f'{same[0]}/{same[1]}' if same else '-'} |")
    return "\n".join(lines)


def format_ratios(rows: list[dict]) -> str:
    ours = {r["pass"]: r for r in rows if r["engine"] == "stackmask" and "error" not in r}
    out = []
    for r in rows:
        if r["engine"] == "stackmask" or "error" in r or r["pass"] not in ours:
            continue
        o = ours[r["pass"]]
        if r["accepted"] != r["traces"]:
            note = f" (it accepted {r['accepted']}/{r['traces']} traces: its steps differ)"
        else:
            note = ""
        parts = []
        for key, lab in (("p50", "p50"), ("p99", "p99"), ("p99.9", "p99.9"), ("max", "max")):
            a, b = o["mask"].get(key), r["mask"].get(key)
            if a and b:
                parts.append(f"get_mask {lab} {a / b:.2f}x")
        a, b = o["commit"].get("p50"), r["commit"].get("p50")
        if a and b:
            parts.append(f"commit p50 {a / b:.2f}x")
        out.append(f"- stackmask / {r['engine']} ({r['pass']}): " + ", ".join(parts) + note)
    return "\n".join(out)


def plot_cdfs(results: list[dict], path: str, title: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'stackmask[plot]'") from None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, lab in ((axes[0], "mask_ns", "get_mask"), (axes[1], "commit_ns", "commit")):
        for r in results:
            if "error" in r:
                continue
            for pas, style in (("cold", "--"), ("warm", "-")):
                us = np.sort(np.asarray(r[pas][key], dtype=float) / 1e3)
                if us.size:
                    ax.plot(us, np.arange(1, us.size + 1) / us.size, style, label=f"{r['engine']} {pas}")
        ax.set_xscale("log")
        ax.set_xlabel(f"{lab} latency (µs)")
        ax.set_ylabel("fraction of calls")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# -- command line ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="stackmask report",
        description="Compile a grammar for a vocabulary, replay token traces teacher-forced and "
                    "print compile time, peak memory and get_mask/commit latency percentiles "
                    "(optionally beside other engines replaying the same token ids).")
    ap.add_argument("--grammar", default="json",
                    help="bundled grammar (json), benchmark grammar (json-outlines, c, calc, sql, "
                         "java, go; json-outlines is the benchmark folder's json.lark), a .lark "
                         "file or a JSON Schema .json file (default: json)")
    ap.add_argument("--ambiguous", action="store_true", default=None,
                    help="parse with GLR (allow LALR conflicts); on by default for sql, java, go")
    ap.add_argument("--vocab", default=DEFAULT_VOCAB,
                    help="qwen2.5 (bundled, default), a tokenizer.json file, a tokenizer directory "
                         "or a .tiktoken file")
    ap.add_argument("--eos-id", type=int, default=None, help="EOS token id (overrides the tokenizer's)")
    ap.add_argument("--corpus", nargs="*", default=[],
                    help="JSONL files ({\"text\": ...} or {\"tokens\": [...]} per line) or plain text "
                         "files (one document each); default: the grammar's bundled corpus or traces")
    ap.add_argument("--limit", type=int, default=None, help="replay only the first N documents")
    ap.add_argument("--compare", default="",
                    help="comma-separated peers to run on the same token ids: "
                         f"{','.join(PEERS)} (or 'all'); engines that are not installed are reported")
    ap.add_argument("--verify", type=int, default=20, metavar="K",
                    help="compare stackmask's get_mask with the reference oracle at K random steps "
                         "(default 20; 0 disables)")
    ap.add_argument("--no-cache", action="store_true",
                    help="compile stackmask's automaton instead of loading it from the artifact cache")
    ap.add_argument("--cache-dir", default=None, help="stackmask artifact cache directory")
    ap.add_argument("--compile", choices=("eager", "lazy"), default="eager",
                    help="stackmask compile mode (default eager)")
    ap.add_argument("--compile-budget", type=float, default=120.0,
                    help="stackmask compile_budget_s (default 120; what is left compiles on first use)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per engine")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", dest="json_out", default=None, help="write the raw figures to this file")
    ap.add_argument("--plot", default=None, help="draw latency CDFs to this PNG (needs matplotlib)")
    ap.add_argument("--quiet", action="store_true",
                    help="no progress lines on stderr (warnings and errors only)")
    return ap


def _check_plot_backend() -> str | None:
    """None when ``--plot`` can draw, else the error to stop with (before any run)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "--plot needs matplotlib: pip install 'stackmask[plot]' (or drop --plot)"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(quiet=args.quiet)
    if args.plot:
        err = _check_plot_backend()
        if err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    engines = ["stackmask"]
    if args.compare:
        want = PEERS if args.compare.strip() == "all" else [e.strip() for e in args.compare.split(",") if e.strip()]
        for e in want:
            if e not in ENGINES:
                print(f"error: unknown engine {e!r} (known: {', '.join(PEERS)})", file=sys.stderr)
                return 2
            if e not in engines:
                engines.append(e)
    try:
        w = load_workload(args.grammar, args.ambiguous)
        vocab, encode = load_vocab(args.vocab, args.eos_id)
        tr = load_traces(w, args.corpus, args.vocab, vocab, encode, args.limit)
    except WorkloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"grammar: {w.name} ({w.source}){' [GLR]' if w.ambiguous else ''}", file=sys.stderr)
    print(f"vocabulary: {args.vocab}, mask width {vocab.size}; corpus: {tr.source}, "
          f"{len(tr.tokens)} documents, {tr.n_tokens} tokens", file=sys.stderr)
    opts = dict(no_cache=args.no_cache, cache_dir=args.cache_dir, compile=args.compile,
                compile_budget_s=args.compile_budget, verify=args.verify, seed=args.seed,
                progress=not args.quiet)
    results = []
    for e in engines:
        log.info("running %s in a fresh process ...", e)
        t0 = time.perf_counter()
        r = run_isolated(e, args.vocab, args.eos_id, w, tr.tokens, opts, args.timeout)
        r["wall_s"] = time.perf_counter() - t0
        results.append(r)
        if "error" in r:
            print(f"  {e}: {r['error']}", file=sys.stderr)
    rows = summarize(results, len(tr.tokens))
    print(f"\n## {w.name}: {len(tr.tokens)} traces, {tr.n_tokens} tokens, vocabulary {args.vocab} "
          f"(mask width {vocab.size}); µs per call\n")
    print(format_table(rows))
    ratios = format_ratios(rows)
    if ratios:
        print("\nRatios (stackmask / peer; below 1 means stackmask is faster):\n" + ratios)
    notes = list(tr.notes)
    n_masks = next((len(r["cold"]["mask_ns"]) for r in results if "cold" in r), 0)
    tail = tail_note(n_masks)
    if tail:
        notes.append(tail)
    status = 0
    for r in results:
        for n in r.get("notes", []):
            notes.append(f"{r['engine']}: {n}")
        if r["engine"] == "stackmask":
            if "error" in r:
                status = 1
                print(r.get("traceback", ""), file=sys.stderr)
                continue
            st = r.get("stats", {})
            notes.append(f"stackmask: {'loaded' if r.get('loaded_from_cache') else 'compiled'} "
                         f"{st.get('configs')} lexer configurations, {st.get('states')} automaton states "
                         f"({st.get('complete_states')} complete), {st.get('edges')} edges, "
                         f"{st.get('weights')} token sets")
            if st.get("routed_items"):
                notes.append(f"stackmask: {st['routed_items']} start items of tokens of "
                             f"several terminals held out of the automaton, checked by masks "
                             f"over the parse stack ({st['routed_starts']} starts)")
            if "verify" in r:
                checked, bad = r["verify"]
                notes.append(f"stackmask: {checked} masks checked against the reference oracle, "
                             f"{bad} different")
                if bad:
                    status = 1
            if r["cold"]["accepted"] != len(tr.tokens):
                notes.append(f"stackmask rejected a trace: {r['cold']['first_reject']}")
                status = 1
        elif "error" not in r and r["cold"]["first_reject"]:
            notes.append(f"{r['engine']}: first rejection {r['cold']['first_reject']}")
    if notes:
        print("\nNotes:\n" + "\n".join(f"- {n}" for n in notes))
    if args.json_out:
        raw = {"grammar": w.name, "source": w.source, "ambiguous": w.ambiguous, "vocab": args.vocab,
               "mask_width": vocab.size, "corpus": tr.source, "traces": len(tr.tokens),
               "tokens": tr.n_tokens, "rows": rows, "notes": notes,
               "engines": [{k: v for k, v in r.items() if k not in ("cold", "warm")} |
                           {p: {"mask_ns": r[p]["mask_ns"], "commit_ns": r[p]["commit_ns"],
                                "trace_starts": r[p]["starts"], "accepted": r[p]["accepted"]}
                            for p in ("cold", "warm") if p in r}
                           for r in results]}
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(raw, f)
    if args.plot:
        plot_cdfs(results, args.plot, f"{w.name}, {args.vocab}")
    return status
