"""Schema sweep: construction and mask latency per JSON Schema, each engine in its own process.

    python benchmarks/schema_sweep.py --limit 40 --json out.json
    python benchmarks/schema_sweep.py --data benchmarks/schemas/fresh.jsonl --engines stackmask,llguidance
    python benchmarks/schema_sweep.py --data some/dir/of/schemas --limit 100 --seed 1 --timeout 30

Input (``--data``): a JSONL file in MaskBench's format (one object a line: ``name``, ``schema``,
``valid`` and ``invalid``: lists of JSON texts; default ``../shared/bench/maskbench/sample1000.jsonl``)
or a directory of ``*.json`` files, each a schema or an object of that format (a bare schema has
no instances). ``--limit N`` takes the first N schemas, or with ``--seed S`` N drawn at random
(kept in file order).

Every instance is made compact (whitespace outside strings removed, which is
``json.dumps(..., separators=(",", ":"))`` of it with its key order and number spellings kept;
``--format spaced`` uses json.dumps's default ``", "`` and ``": "`` instead, the only layout
glrmask's JSON Schema grammar accepts) and tokenized once with the vocabulary's tokenizer
(``--vocab``, Qwen2.5 by default): every engine gets the same token ids. stackmask's policy requires object keys in the schema's property
order; when an engine rejects a valid instance, the instance with its keys in schema order
(:func:`maskbench.reorder_keys`) is tried too and counted apart ("key order").

Each engine runs in one worker process that loads the vocabulary (not timed) and then handles
the schemas one after the other. Per schema the worker times, with ``perf_counter``:

* ttfm: construction + ``start`` + the first mask (filling a preallocated buffer);
* for each valid instance, from a fresh start: the mask before every token and before EOS
  (same buffer), then the commit of the token; accepted = every token and EOS accepted;
* for each invalid instance: commits only; rejected = some token or EOS rejected.

Outcomes: ``ok``, ``refused`` (construction raised; first line of the message kept),
``timeout`` (the schema's work passed ``--timeout`` seconds: the worker is killed and a new one
started for the next schema; a timeout after construction keeps the ttfm and counts the
schema's instances as not decided), ``crash`` (the worker died). Peak RSS per schema is the
worker's VmHWM (reset before each schema through ``/proc/self/clear_refs``, else the
process's ``ru_maxrss``): the vocabulary, the engine's tables and whatever earlier schemas left
in the worker are in it (``rss_start_kb``: the RSS when the schema began).

Engines at their default settings, except where noted: ``stackmask``:
``Constraint(Grammar.from_json_schema(schema), vocab)`` with the artifact cache disabled (each
construction is a real one, never a load) and no progress output; a grammar that is not LALR(1)
falls back to ``schema_constraint`` (which picks ``ambiguous``), recorded as ``glr_fallback``.
For stackmask, the lexer configurations started and automaton states made while the instances
were decoded are recorded (``compiled_decoding``: a mask that compiles is the latency spike
#24 rules out); the notes under the table name the schemas where some were.
``stackmask-nomodes``: the same with ``lexer_modes=False`` (an A/B of the value modes).
Peers through :mod:`stackmask.report.engines` (xgrammar: ``any_whitespace=True,
strict_mode=False``, as in MaskBench, so undeclared properties stay allowed; compile cache off).

The printed table: per engine, outcomes, ttfm percentiles over constructions that were not
refused (a timeout counts as longer than every other and prints as ``> T s``), mask percentiles
over all masks of valid instances, the largest per-schema peak RSS, and valid accepted / invalid
rejected over the instances of the schemas that constructed. ``--json`` writes everything,
per-schema records and every mask latency included.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import multiprocessing as mp
import random
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.maskbench import DEFAULT_DATA, reorder_keys  # noqa: E402

log = logging.getLogger("stackmask.bench.schema_sweep")

ENGINES = ("stackmask", "llguidance", "xgrammar", "glrmask")
#: stackmask with options other than the defaults (A/B of one checkout): name -> options of
#: ``Grammar.from_json_schema``
VARIANTS = {"stackmask-nomodes": {"lexer_modes": False}}
#: seconds a new worker may take to load the vocabulary and prepare its engine
WORKER_START_TIMEOUT = 600.0
PCTS = (50, 90, 99, 99.9)


# --------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------

def load_rows(path: str | Path) -> list[dict]:
    """Schemas with their instances from a JSONL file or a directory of ``*.json`` files."""
    path = Path(path)
    if path.is_dir():
        rows = []
        for f in sorted(path.glob("*.json")):
            d = json.loads(f.read_text())
            if isinstance(d, dict) and "schema" in d and ("valid" in d or "invalid" in d):
                rows.append(dict(name=d.get("name", f.stem), schema=d["schema"],
                                 valid=list(d.get("valid", [])), invalid=list(d.get("invalid", []))))
            else:
                rows.append(dict(name=f.stem, schema=d, valid=[], invalid=[]))
        if not rows:
            raise ValueError(f"{path}: no *.json files")
        return rows
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            d = json.loads(line)
            if "schema" not in d:
                raise ValueError(f"{path}:{n}: no 'schema' field")
            rows.append(dict(d, name=d.get("name", f"line{n}"), valid=list(d.get("valid", [])),
                             invalid=list(d.get("invalid", []))))
    return rows


def select(rows: list, limit: int | None, seed: int | None) -> list:
    """The first ``limit`` rows, or with ``seed`` ``limit`` rows drawn at random (file order)."""
    if limit is None or limit >= len(rows):
        return list(rows)
    if seed is None:
        return rows[:limit]
    keep = sorted(random.Random(seed).sample(range(len(rows)), limit))
    return [rows[i] for i in keep]


#: instance text formats: (item separator, key separator)
FORMATS = {"compact": (",", ":"), "spaced": (", ", ": ")}


def reformat(text: str, fmt: str = "compact") -> str:
    """``text`` with whitespace outside JSON strings removed and the separators of ``fmt``
    (``compact``: ``json.dumps(..., separators=(",", ":"))``; ``spaced``: json.dumps's default
    ``", "`` and ``": "``), key order, escapes and number spellings kept. Text that is not JSON
    is returned unchanged."""
    item_sep, key_sep = FORMATS[fmt]
    try:
        json.loads(text)
    except ValueError:
        return text
    out, in_str, esc = [], False, False
    for ch in text:
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            out.append(ch)
        elif ch == ",":
            out.append(item_sep)
        elif ch == ":":
            out.append(key_sep)
        elif ch not in " \t\n\r":
            out.append(ch)
    return "".join(out)


def compact(text: str) -> str:
    """``reformat(text, "compact")``."""
    return reformat(text, "compact")


def schema_order_text(schema, text: str, fmt: str = "compact") -> str | None:
    """The valid instance ``text`` with its object keys in the schema's property order (in
    ``fmt``), or None when that is ``reformat(text, fmt)`` itself or cannot be made."""
    try:
        inst = json.loads(text)
        alt = json.dumps(reorder_keys(schema, schema, inst), ensure_ascii=False, separators=FORMATS[fmt])
    except Exception:  # noqa: BLE001  (a heuristic; any failure means no alternative)
        return None
    return None if alt == reformat(text, fmt) else alt


def make_jobs(rows: list, encode, fmt: str = "compact") -> list[dict]:
    """What a worker needs per schema: the schema and the token ids of its instances."""
    jobs = []
    for r in rows:
        valid = [reformat(t, fmt) for t in r["valid"]]
        alts = [schema_order_text(r["schema"], t, fmt) for t in r["valid"]]
        jobs.append(dict(name=r["name"], schema=r["schema"],
                         valid=[list(encode(t)) for t in valid],
                         valid_alt=[list(encode(a)) if a is not None else None for a in alts],
                         invalid=[list(encode(reformat(t, fmt))) for t in r["invalid"]]))
    return jobs


# --------------------------------------------------------------------------
# the worker (one process per engine)
# --------------------------------------------------------------------------

def _status_kb(pid: int | str, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.MULTILINE)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_kb(reset_ok: bool) -> int:
    kb = _status_kb("self", "VmHWM") if reset_ok else None
    return kb if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class _Schema:
    """The workload object :mod:`stackmask.report.engines` compiles."""
    kind = "schema"

    def __init__(self, schema):
        self.schema = schema


def make_sweep_engine(name: str, vocab, encode):
    """The engine ``name`` at its default settings (see the module docstring)."""
    from stackmask.report import engines
    if name != "stackmask" and name not in VARIANTS:
        return engines.make_engine(name, vocab, encode)
    options = VARIANTS.get(name, {})

    class StackmaskDefault(engines.Stackmask):
        def compile(self, w):
            import stackmask
            from stackmask.grammars.json_schema import schema_constraint
            g = stackmask.Grammar.from_json_schema(w.schema, **options)
            try:
                return stackmask.Constraint(g, self.vocab, cache_dir=False, progress=False)
            except stackmask.GrammarError as e:
                if "LALR" not in str(e):
                    raise
            self.notes.append("glr_fallback")
            return schema_constraint(w.schema, self.vocab, cache_dir=False, progress=False,
                                     **options)

        def describe(self, h) -> dict:
            st = h.compile_stats()
            return {k: st.get(k) for k in ("mode", "states", "complete_states", "configs",
                                           "budget_exhausted", "explore_s", "explore_states")}

        def compiled_so_far(self, h) -> tuple[int, int]:
            """(lexer configurations started, automaton states): what grows when a mask
            compiles (#24: no mask should)."""
            dwa = h.compiled.dwa
            return len(dwa.init) + len(dwa.pair_init), len(dwa.items)

    return StackmaskDefault(vocab, cache_dir=False)


def _bit(words, t: int) -> bool:
    return bool((int(words[t >> 5]) >> (t & 31)) & 1)


def _replay(eng, h, toks, buf, masks: list) -> tuple[bool, int, int]:
    """Mask (timed into ``masks``) and commit each token, then mask and EOS.
    (accepted, index of the rejected token or len(toks), tokens absent from their mask)."""
    words = buf.view("uint32")
    missing = 0
    st = eng.start(h)
    for i, t in enumerate(toks):
        t0 = time.perf_counter()
        eng.mask(h, st, buf)
        masks.append(time.perf_counter() - t0)
        missing += not _bit(words, t)
        ok, st = eng.commit(h, st, t)
        if not ok:
            return False, i, missing
    t0 = time.perf_counter()
    eng.mask(h, st, buf)
    masks.append(time.perf_counter() - t0)
    return eng.finish(h, st), len(toks), missing


def _rejects(eng, h, toks) -> bool:
    st = eng.start(h)
    for t in toks:
        ok, st = eng.commit(h, st, t)
        if not ok:
            return True
    return not eng.finish(h, st)


def _first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:300] if msg else ''}"


def _detail(e: BaseException) -> str:
    """The message's second non-empty line (where stackmask names the keyword and pointer)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[1][:300] if len(lines) > 1 else ""


def run_job(eng, job: dict, buf, send) -> dict:
    """One schema in the worker: construction, ttfm, replays. ``send`` reports the ttfm early
    (so a timeout during the replays keeps it)."""
    reset_ok = _reset_peak()
    rec = dict(name=job["name"], rss_start_kb=_status_kb("self", "VmRSS"))
    eng.notes.clear()
    t0 = time.perf_counter()
    try:
        h = eng.compile(_Schema(job["schema"]))
        st = eng.start(h)
        eng.mask(h, st, buf)
        rec["ttfm_s"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001  (any construction error is a refusal)
        rec.update(outcome="refused", error=_first_line(e), error_detail=_detail(e),
                   seconds=time.perf_counter() - t0,
                   notes=list(eng.notes), peak_rss_kb=_peak_kb(reset_ok))
        return rec
    rec.update(outcome="ok", notes=list(eng.notes))
    if hasattr(eng, "describe"):
        rec["stats"] = eng.describe(h)
    before = eng.compiled_so_far(h) if hasattr(eng, "compiled_so_far") else None
    send(("compiled", rec["ttfm_s"]))
    masks: list[float] = []
    rec["valid"], rec["valid_rejected_at"], rec["valid_alt"] = [], [], []
    rec["mask_missing"] = 0
    for k, toks in enumerate(job["valid"]):
        ok, at, missing = _replay(eng, h, toks, buf, masks)
        rec["valid"].append(ok)
        rec["mask_missing"] += missing
        if not ok:
            rec["valid_rejected_at"].append(at)
            alt = job["valid_alt"][k]
            rec["valid_alt"].append(alt is not None and not _rejects(eng, h, alt))
    rec["invalid"] = [_rejects(eng, h, toks) for toks in job["invalid"]]
    if before is not None:
        # starts and states added while decoding (a mask or commit compiled them)
        rec["compiled_decoding"] = [a - b for a, b in zip(eng.compiled_so_far(h), before)]
    rec["masks_s"] = masks
    rec["peak_rss_kb"] = _peak_kb(reset_ok)
    return rec


def worker_main(conn, engine: str, vocab_spec: str, log_level: int) -> None:
    """Entry point of a worker process: ``("ready", info)``, then per job ``("compiled", ttfm)``
    (when construction succeeded) and ``("result", record)``; ``None`` ends it."""
    import numpy as np
    from stackmask.report.workload import load_vocab
    logging.basicConfig(level=log_level, format="%(message)s")
    t0 = time.perf_counter()
    vocab, encode = load_vocab(vocab_spec)
    eng = make_sweep_engine(engine, vocab, encode)
    buf = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    conn.send(("ready", dict(start_s=time.perf_counter() - t0, version=eng.version(),
                             rss_kb=_status_kb("self", "VmRSS"))))
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send(("result", run_job(eng, job, buf, conn.send)))


class Worker:
    """The parent's handle on one engine's worker process; restarted after a timeout or crash."""

    def __init__(self, engine: str, vocab_spec: str):
        self.engine, self.vocab_spec = engine, vocab_spec
        self.proc = self.conn = None
        self.starts: list[dict] = []

    def ensure(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            return
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, name=f"sweep-{self.engine}",
                                args=(child, self.engine, self.vocab_spec, log.getEffectiveLevel()),
                                daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not parent.poll(WORKER_START_TIMEOUT):
            self.kill()
            raise RuntimeError(f"{self.engine} worker did not start in {WORKER_START_TIMEOUT:g} s")
        try:
            kind, info = parent.recv()
        except EOFError:
            code = self.kill()
            raise RuntimeError(f"{self.engine} worker died while starting (exit code {code})") from None
        self.starts.append(info)
        log.info("%s worker ready in %.1f s (version %s, RSS %.0f MB)", self.engine, info["start_s"],
                 info["version"], (info["rss_kb"] or 0) / 1024)

    def kill(self):
        code = None
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
            code = self.proc.exitcode
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None
        return code

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(10)
            except (OSError, BrokenPipeError):
                pass
        self.kill()

    def run(self, job: dict, timeout: float) -> dict:
        """The worker's record for ``job``; a timeout or death of the worker makes the record."""
        self.ensure()
        self.conn.send(job)
        deadline = time.perf_counter() + timeout
        ttfm = None
        while True:
            left = deadline - time.perf_counter()
            try:
                ready = left > 0 and self.conn.poll(left)
                if ready:
                    kind, payload = self.conn.recv()
                    if kind == "compiled":
                        ttfm = payload
                        continue
                    return payload
            except EOFError:
                code = self.kill()
                rec = dict(name=job["name"], outcome="crash", error=f"worker died (exit code {code})")
                if ttfm is not None:
                    rec.update(outcome="ok", ttfm_s=ttfm, run_error=rec.pop("error"))
                return rec
            peak = _status_kb(self.proc.pid, "VmHWM")
            self.kill()
            rec = dict(name=job["name"], outcome="timeout", peak_rss_kb=peak,
                       error=f"no result in {timeout:g} s")
            if ttfm is not None:          # constructed; the replays did not finish
                rec.update(outcome="ok", ttfm_s=ttfm, run_error=rec.pop("error"))
            return rec


def sweep(rows: list, engines, vocab_spec: str = "qwen2.5", timeout: float = 60.0,
          encode=None, fmt: str = "compact") -> dict:
    """Run every engine over ``rows``; per engine ``{"workers": [...], "schemas": [records]}``."""
    if encode is None:
        from stackmask.report.workload import load_vocab
        encode = load_vocab(vocab_spec)[1]
    jobs = make_jobs(rows, encode, fmt)
    out = {}
    for engine in engines:
        w = Worker(engine, vocab_spec)
        recs = []
        t_engine = time.perf_counter()
        try:
            for i, job in enumerate(jobs):
                rec = w.run(job, timeout)
                recs.append(rec)
                log.info("[%d/%d] %s %s %s", i + 1, len(jobs), engine, job["name"], _brief(rec))
        finally:
            w.close()
        out[engine] = dict(workers=w.starts, schemas=recs, wall_s=time.perf_counter() - t_engine)
    return out


def _brief(rec: dict) -> str:
    s = rec["outcome"]
    if "ttfm_s" in rec:
        s += " " + fmt_s(rec["ttfm_s"])
    if rec.get("run_error"):
        s += f" (instances: {rec['run_error']})"
    if rec.get("error"):
        s += f" ({rec['error'][:120]})"
    if "valid" in rec:
        s += f"; valid {sum(rec['valid'])}/{len(rec['valid'])}, invalid rejected " \
             f"{sum(rec['invalid'])}/{len(rec['invalid'])}"
    if rec.get("peak_rss_kb"):
        s += f"; peak RSS {rec['peak_rss_kb'] / 1024:.0f} MB"
    return s


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------

def percentile(xs, q: float) -> float:
    """Nearest-rank percentile (the smallest value with at least ``q`` % of the values at or
    below it); NaN for no values."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(1, math.ceil(q / 100 * len(xs)))
    return xs[min(k, len(xs)) - 1]


def summarize(recs: list, timeout: float) -> dict:
    """One engine's figures from its per-schema records."""
    outcomes = {k: sum(r["outcome"] == k for r in recs) for k in ("ok", "refused", "timeout", "crash")}
    ttfm = [r["ttfm_s"] for r in recs if "ttfm_s" in r]
    ttfm += [math.inf] * outcomes["timeout"]
    masks = [m for r in recs for m in r.get("masks_s", ())]
    ok = [r for r in recs if r["outcome"] == "ok"]
    n_valid = sum(len(r.get("valid", ())) for r in ok)
    n_invalid = sum(len(r.get("invalid", ())) for r in ok)
    rss = [r["peak_rss_kb"] for r in recs if r.get("peak_rss_kb")]
    errors: dict = {}
    for r in recs:
        if r["outcome"] in ("refused", "crash"):
            key = r["error"][:100]
            if r.get("error_detail"):        # the keyword, without the schema-specific pointer
                key += " / " + re.sub(r"#/[^\s:]*", "#/...", r["error_detail"])[:120]
            errors[key] = errors.get(key, 0) + 1
    return dict(
        schemas=len(recs), **outcomes,
        run_errors=sum(bool(r.get("run_error")) for r in recs),
        ttfm={f"p{q:g}": percentile(ttfm, q) for q in (50, 90, 99)} | {"max": max(ttfm, default=math.nan),
                                                                       "n": len(ttfm)},
        mask={f"p{q:g}": percentile(masks, q) for q in PCTS} | {"max": max(masks, default=math.nan),
                                                                "n": len(masks)},
        peak_rss_mb=max(rss, default=0) / 1024 if rss else math.nan,
        rss_start_mb=max((r.get("rss_start_kb") or 0 for r in recs), default=0) / 1024,
        valid=n_valid, valid_ok=sum(sum(r.get("valid", ())) for r in ok),
        valid_ok_key_order=sum(sum(r.get("valid_alt", ())) for r in ok),
        invalid=n_invalid, invalid_rej=sum(sum(r.get("invalid", ())) for r in ok),
        mask_missing=sum(r.get("mask_missing", 0) for r in ok),
        glr_fallback=sum("glr_fallback" in r.get("notes", ()) for r in recs),
        compiled_decoding=[(r["name"], *r["compiled_decoding"]) for r in ok
                           if any(r.get("compiled_decoding") or ())],
        errors=dict(sorted(errors.items(), key=lambda kv: -kv[1])), timeout_s=timeout)


def fmt_s(x: float, timeout: float | None = None) -> str:
    if x != x:
        return "-"
    if x == math.inf:
        return f"> {timeout:g} s" if timeout is not None else "timeout"
    if x < 1e-3:
        return f"{x * 1e6:.1f} µs" if x < 1e-4 else f"{x * 1e6:.0f} µs"
    if x < 1:
        return f"{x * 1e3:.1f} ms"
    return f"{x:.2f} s"


def _frac(a: int, n: int) -> str:
    return f"{a}/{n} ({100 * a / n:.1f}%)" if n else "-"


def markdown(summaries: dict) -> str:
    """The comparison table, one row per engine."""
    lines = ["| engine | ok / refused / timeout / crash | ttfm p50 | p90 | p99 | max | masks | mask p50 "
             "| p90 | p99 | p99.9 | max | peak RSS max | valid accepted | invalid rejected |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in summaries.items():
        t, m, to = s["ttfm"], s["mask"], s["timeout_s"]
        va = _frac(s["valid_ok"], s["valid"])
        if s["valid_ok_key_order"]:
            va += f" +{s['valid_ok_key_order']} in key order"
        rss = "-" if s["peak_rss_mb"] != s["peak_rss_mb"] else f"{s['peak_rss_mb']:.0f} MB"
        lines.append(
            f"| {name} | {s['ok']} / {s['refused']} / {s['timeout']} / {s['crash']} | "
            + " | ".join(fmt_s(t[k], to) for k in ("p50", "p90", "p99", "max"))
            + f" | {m['n']} | " + " | ".join(fmt_s(m[k]) for k in ("p50", "p90", "p99", "p99.9", "max"))
            + f" | {rss} | {va} | {_frac(s['invalid_rej'], s['invalid'])} |")
    return "\n".join(lines)


def notes(summaries: dict) -> str:
    """Refusal reasons and other remarks under the table."""
    lines = []
    for name, s in summaries.items():
        extra = []
        if s["run_errors"]:
            extra.append(f"{s['run_errors']} schemas constructed but their instances did not finish")
        if s["mask_missing"]:
            extra.append(f"{s['mask_missing']} valid-instance tokens absent from their mask")
        if s.get("compiled_decoding"):
            worst = max(s["compiled_decoding"], key=lambda x: (x[1], x[2]))
            extra.append(f"{len(s['compiled_decoding'])} schemas compiled lexer configurations or "
                         f"automaton states while decoding (most: {worst[0]}, {worst[1]} starts, "
                         f"{worst[2]} states)")
        if s["rss_start_mb"]:
            extra.append(f"worker RSS at the start of a schema up to {s['rss_start_mb']:.0f} MB "
                         "(the vocabulary, the engine, and what earlier schemas left)")
        if s["glr_fallback"]:
            extra.append(f"{s['glr_fallback']} schema(s) needed the GLR fallback (schema_constraint)")
        if extra:
            lines.append(f"- {name}: " + "; ".join(extra))
        for err, n in s["errors"].items():
            lines.append(f"- {name} refused/crashed x{n}: {err}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="JSONL file or directory of *.json")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None, help="draw --limit schemas at random")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per schema and engine")
    ap.add_argument("--vocab", default="qwen2.5", help="as `stackmask report --vocab`")
    ap.add_argument("--format", default="compact", choices=sorted(FORMATS),
                    help="instance text: compact (default) or spaced (', ' and ': ', json.dumps's default)")
    ap.add_argument("--json", default=None, help="write everything to this file")
    ap.add_argument("--quiet", action="store_true", help="no per-schema progress lines")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES and e not in VARIANTS]
    if unknown:
        ap.error(f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(ENGINES)}")
    rows = select(load_rows(args.data), args.limit, args.seed)
    log.info("%d schemas from %s; engines %s; timeout %g s", len(rows), args.data, ", ".join(engines),
             args.timeout)
    t0 = time.perf_counter()
    res = sweep(rows, engines, args.vocab, args.timeout, fmt=args.format)
    sums = {name: summarize(r["schemas"], args.timeout) for name, r in res.items()}
    print(markdown(sums))
    extra = notes(sums)
    if extra:
        print()
        print(extra)
    print(f"\n{len(rows)} schemas from {args.data}, {args.format} instances, timeout {args.timeout:g} s, wall "
          f"{time.perf_counter() - t0:.0f} s")
    if args.json:
        data = dict(argv=sys.argv[1:], data=args.data, limit=args.limit, seed=args.seed, vocab=args.vocab,
                    timeout_s=args.timeout, engines={n: dict(r, summary=sums[n]) for n, r in res.items()})
        with open(args.json, "w") as f:
            json.dump(data, f, default=str)
        log.info("wrote %s", args.json)


if __name__ == "__main__":
    main()
