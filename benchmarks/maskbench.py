"""MaskBench: JSON Schema coverage and latency on real-world schemas.

    python benchmarks/maskbench.py                      # all 1000 schemas, all engines
    python benchmarks/maskbench.py --limit 100 --json out.json
    python benchmarks/maskbench.py --engines stackmask --mask-steps 0

Data: ../shared/bench/maskbench/sample1000.jsonl (one JSON object per line:
``name``, ``schema``, ``valid`` and ``invalid``: lists of JSON texts).

For every schema and engine: compile (stackmask: conversion + ``Constraint``
construction with the artifact cache disabled and the vocabulary index built
once beforehand; ``--stackmask-compile lazy``, the default, defers the mask
automaton to the first ``get_mask`` that needs it, so the mask timings include
that compile), commit every valid instance token by token (qwen2_5_encoding,
the same ids for every engine) and then EOS (accepted = every token and EOS
accepted), commit every invalid instance (rejected = some token or EOS
rejected), time compile and every commit, and time the mask at a few sampled
steps per schema (``--mask-steps``, the same steps for every engine). Each
sampled mask is checked to contain the next token; stackmask's is also
compared with the reference oracle (``reference_mask``, untimed).

stackmask runs with ``strict=False`` so schemas with non-enforceable
keywords compile (the keywords are reported); the table also counts how many
schemas compile with ``strict=True``. Valid instances that stackmask
rejects are classified: ``key order`` when the same instance with its object
keys in the schema's property order is accepted (the documented policy);
invalid instances that it accepts are classified by the keywords it could
not enforce, or as valid per the ``jsonschema`` package (a mislabelled
instance), else as an error of the converter.

Peers (``pip install glrmask llguidance xgrammar``) run on the same
instances and token ids; an engine that is not installed is reported as such.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = next((d / "shared" / "bench" / "maskbench" / "sample1000.jsonl" for d in ROOT.parents
                     if (d / "shared" / "bench" / "maskbench" / "sample1000.jsonl").exists()),
                    ROOT.parent / "shared" / "bench" / "maskbench" / "sample1000.jsonl")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]


def fmt_t(x):
    if x != x:
        return "-"
    if x < 1e-3:
        return f"{x * 1e6:.0f}us"
    if x < 1:
        return f"{x * 1e3:.1f}ms"
    return f"{x:.2f}s"


def _resolve(root, node, depth=0):
    while isinstance(node, dict) and "$ref" in node and depth < 50:
        ref = node["$ref"]
        depth += 1
        if not isinstance(ref, str) or not ref.startswith("#"):
            return node
        cur = root
        ok = True
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
                cur = cur[int(part)]
            else:
                ok = False
                break
        if not ok:
            return node
        node = cur
    return node


def _prop_order(root, node, inst, out, depth=0):
    """Collect (name, schema) in document order, as the converter orders
    keys: a node's keywords in the order written, allOf members in place,
    for anyOf/oneOf the branch sharing most keys with ``inst``."""
    node = _resolve(root, node)
    if not isinstance(node, dict) or depth > 20:
        return
    for kw, val in node.items():
        if kw == "properties" and isinstance(val, dict):
            for k, v in val.items():
                out["props"].setdefault(k, v)
        elif kw == "allOf" and isinstance(val, list):
            for sub in val:
                _prop_order(root, sub, inst, out, depth + 1)
        elif kw in ("anyOf", "oneOf") and isinstance(val, list) and val:
            def score(b):
                o = {"props": {}, "pats": [], "addl": None, "req": []}
                _prop_order(root, b, inst, o, depth + 1)
                return len(set(o["props"]) & set(inst)) if isinstance(inst, dict) else 0
            _prop_order(root, max(val, key=score), inst, out, depth + 1)
        elif kw == "patternProperties" and isinstance(val, dict):
            out["pats"] += list(val.items())
        elif kw == "additionalProperties" and out["addl"] is None:
            out["addl"] = val
        elif kw == "required" and isinstance(val, list):
            out["req"] += [k for k in val if isinstance(k, str)]


def reorder_keys(root, node, inst, depth=0):
    """``inst`` with every object's keys in the order the grammar requires:
    declared properties in schema order, then required-but-undeclared, then
    the rest in their original order (heuristic for the benchmark's
    classification of rejections only)."""
    if depth > 60:
        return inst
    if isinstance(inst, dict):
        o = {"props": {}, "pats": [], "addl": None, "req": []}
        _prop_order(root, node, inst, o)
        sub_of, pats, addl = o["props"], o["pats"], o["addl"]
        order = list(sub_of) + [k for k in dict.fromkeys(o["req"]) if k not in sub_of]
        rank = {k: i for i, k in enumerate(order)}
        keys = sorted(inst, key=lambda k: (rank.get(k, len(order)), list(inst).index(k)))
        out = {}
        for k in keys:
            sub = sub_of.get(k)
            if sub is None:
                import re
                for p, s in pats:
                    try:
                        if re.search(p, k):
                            sub = s
                            break
                    except re.error:
                        pass
            if sub is None:
                sub = addl if isinstance(addl, dict) else {}
            out[k] = reorder_keys(root, sub, inst[k], depth + 1)
        return out
    if isinstance(inst, list):
        node = _resolve(root, node)
        items = node.get("items") if isinstance(node, dict) else None
        prefix = node.get("prefixItems") if isinstance(node, dict) else None
        if isinstance(items, list):
            prefix, items = items, node.get("additionalItems")
        res = []
        for i, x in enumerate(inst):
            sub = prefix[i] if isinstance(prefix, list) and i < len(prefix) else items
            res.append(reorder_keys(root, sub if isinstance(sub, dict) else {}, x, depth + 1))
        return res
    return inst


# --------------------------------------------------------------------------
# engines
# --------------------------------------------------------------------------

class Engine:
    name = "?"

    def compile(self, schema):         # -> handle
        raise NotImplementedError

    def start(self, h):
        raise NotImplementedError

    def commit(self, h, st, tok):      # -> (ok, new state)
        raise NotImplementedError

    def finish(self, h, st) -> bool:   # EOS accepted
        raise NotImplementedError

    def mask(self, h, st):             # the engine's own mask object (timed)
        raise NotImplementedError

    def has(self, m, tok) -> bool:     # whether mask ``m`` allows ``tok`` (untimed)
        return bool((int(m[tok // 32]) >> (tok % 32)) & 1)


class Stackmask(Engine):
    name = "stackmask"

    def __init__(self, vocab, whitespace="bounded", mode="eager", budget_s=None):
        import stackmask
        from stackmask.compile.token_index import vocab_index
        from stackmask.grammars.json_schema import convert_schema
        self.sm = stackmask
        self.convert = convert_schema
        self.vocab = vocab
        self.eos = min(vocab.eos_token_ids)
        self.whitespace = whitespace
        self.mode = mode
        self.budget_s = budget_s
        t0 = time.perf_counter()
        vocab_index(vocab)              # vocabulary preprocessing, once (not part of compile)
        self.vocab_index_s = time.perf_counter() - t0

    def compile(self, schema):
        """Conversion + ``Constraint`` construction with the artifact cache disabled: a real
        compile, never a cache load (the vocabulary index is already built)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sg = self.convert(schema, strict=False, whitespace=self.whitespace)
        c = self.sm.Constraint(sg.grammar, self.vocab, ambiguous=sg.ambiguous, cache_dir=False,
                               progress=False, compile=self.mode, compile_budget_s=self.budget_s)
        return (c, sg)

    def strict_ok(self, schema):
        try:
            self.convert(schema, strict=True, whitespace=self.whitespace)
            return True, ""
        except self.sm.GrammarError as e:
            return False, str(e).splitlines()[1].strip() if "\n" in str(e) else str(e)

    def start(self, h):
        return h[0].start()

    def commit(self, h, st, tok):
        try:
            return True, h[0].commit(st, tok)
        except self.sm.TokenRejected:
            return False, st

    def finish(self, h, st):
        try:
            h[0].commit(st, self.eos)
            return True
        except self.sm.TokenRejected:
            return False

    def mask(self, h, st):
        return h[0].get_mask(st)

    def accepts_text(self, h, text: str) -> bool:
        c = h[0]
        try:
            s = c.commit_bytes(c.start(), text.encode())
        except self.sm.TokenRejected:
            return False
        return c.is_accepting(s)


class GLRMask(Engine):
    name = "glrmask"

    def __init__(self, vocab):
        import glrmask
        self.g = glrmask
        self.v = glrmask.Vocab.from_id_to_bytes(
            {i: vocab.token_bytes(i) for i in range(vocab.size)
             if vocab.token_bytes(i) and i not in vocab.special_token_ids})

    def compile(self, schema):
        return self.g.Grammar.from_json_schema(schema).compile(self.v)

    def start(self, h):
        return h.start()

    def commit(self, h, st, tok):
        return bool(st.commit_token(tok)), st

    def finish(self, h, st):
        return bool(st.is_accepting())

    def mask(self, h, st):
        return st.mask()               # bool per token id

    def has(self, m, tok):
        return tok < len(m) and bool(m[tok])


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self, vocab, enc):
        import llguidance
        import llguidance.numpy
        import llguidance.tiktoken
        self.ll = llguidance
        self.eos = min(vocab.eos_token_ids)
        self.tok = llguidance.tiktoken.lltokenizer_from_encoding(enc, n_vocab=vocab.size, eos_token=self.eos)
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, vocab.size)

    def compile(self, schema):
        grm = self.ll.LLMatcher.grammar_from_json_schema(json.dumps(schema))
        msg = self.ll.LLMatcher.validate_grammar(grm, self.tok)
        if msg:
            raise ValueError(msg)
        m = self.ll.LLMatcher(self.tok, grm, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return grm

    def start(self, h):
        return self.ll.LLMatcher(self.tok, h, log_level=0)

    def commit(self, h, st, tok):
        ok = st.consume_token(tok)
        return bool(ok) and not st.is_error(), st

    def finish(self, h, st):
        return bool(st.consume_token(self.eos)) and not st.is_error()

    def mask(self, h, st):
        import llguidance.numpy
        llguidance.numpy.fill_next_token_bitmask(st, self.bitmask, 0)
        return self.bitmask[0]


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self, vocab):
        import xgrammar as xgr
        self.xgr = xgr
        self.eos = min(vocab.eos_token_ids)
        toks = [vocab.token_bytes(i) or b"" for i in range(vocab.size)]
        info = xgr.TokenizerInfo(toks, vocab_type=xgr.VocabType.RAW, vocab_size=vocab.size,
                                 stop_token_ids=sorted(vocab.eos_token_ids))
        self.compiler = xgr.GrammarCompiler(info, cache_enabled=False)
        self.bitmask = xgr.allocate_token_bitmask(1, vocab.size)

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)

    def start(self, h):
        return self.xgr.GrammarMatcher(h)

    def commit(self, h, st, tok):
        return bool(st.accept_token(tok)), st

    def finish(self, h, st):
        return bool(st.accept_token(self.eos))

    def mask(self, h, st):
        st.fill_next_token_bitmask(self.bitmask)
        return self.bitmask[0]


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------

def _has(m, t) -> bool:
    return bool((int(m[t // 32]) >> (t % 32)) & 1)


def run_instance(eng, h, toks, rec, mask_at=()):
    """Commit ``toks`` then EOS. Returns (accepted, index of the rejected token).

    At the steps in ``mask_at`` the mask is timed first (before the commit of that step), then
    checked to contain the next token; for stackmask it is also compared word for word with
    the reference oracle (``reference_mask``, untimed)."""
    st = eng.start(h)
    for i, t in enumerate(toks):
        if i in mask_at:
            t0 = time.perf_counter()
            m = eng.mask(h, st)
            rec["mask"].append(time.perf_counter() - t0)
            rec["mask_steps"] += 1
            if not eng.has(m, t):
                rec["mask_without_next"] += 1
            if eng.name == "stackmask":
                m = np.array(m, copy=True)
                t0 = time.perf_counter()
                eng.mask(h, st)
                rec["mask_again"].append(time.perf_counter() - t0)
                ref = h[0].reference_mask(st)
                rec["mask_checked"] += 1
                if not np.array_equal(m, ref):
                    rec["mask_mismatch"] += 1
                    rec.setdefault("mismatch_at", []).append(i)
        t0 = time.perf_counter()
        ok, st = eng.commit(h, st, t)
        rec["commit"].append(time.perf_counter() - t0)
        if not ok:
            return False, i
    return eng.finish(h, st), len(toks)


def peak_rss_gb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20     # KiB on Linux


def new_record():
    return dict(compiled=0, compile_fail=Counter(), compile=[], commit=[], mask=[], mask_again=[], valid=0,
                valid_ok=0, invalid=0, invalid_rej=0, valid_rej_reasons=Counter(),
                invalid_acc_reasons=Counter(), mask_steps=0, mask_without_next=0, mask_checked=0,
                mask_mismatch=0, valid_ok_reordered=0, strict_ok=0, ambiguous=0, with_warnings=0,
                partial=0, run_fail=Counter(), all_valid=0, all_invalid=0, per_schema=[])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--engines", default="stackmask,glrmask,llguidance,xgrammar")
    ap.add_argument("--mask-steps", type=int, default=3,
                    help="masks timed per schema (random steps of the first valid instance, same steps "
                         "for every engine)")
    ap.add_argument("--compile-timeout", type=int, default=120, help="seconds per compile (SIGALRM)")
    ap.add_argument("--run-timeout", type=int, default=300,
                    help="seconds for one schema's instances after its compile (SIGALRM)")
    ap.add_argument("--stackmask-compile", default="lazy", choices=("eager", "lazy"),
                    help="lazy (default): construction builds the tables; automaton parts are compiled "
                         "when a mask first needs them, inside the timed get_mask")
    ap.add_argument("--stackmask-budget", type=float, default=None,
                    help="stackmask compile_budget_s (default: none, compile everything up front)")
    ap.add_argument("--whitespace", default="bounded")
    ap.add_argument("--json", default=None, help="write the results (.zst: compressed)")
    ap.add_argument("--merge", nargs="+", default=None,
                    help="print the tables of earlier --json outputs (engines run in separate processes)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)

    if args.merge:
        merged = dict(engines={}, runs=[])
        chunks: dict = {}
        for path in args.merge:
            d = read_json(path)
            merged["runs"].append({k: d.get(k) for k in ("argv", "peak_rss_gb", "wall_s", "engines_run")})
            for name, e in d["engines"].items():
                chunks.setdefault(name, []).append(e)
        for name, parts in chunks.items():
            merged["engines"][name] = parts[0] if len(parts) == 1 else merge_chunks(parts)
        merged["schemas"] = max(e["schemas"] for e in merged["engines"].values())
        print(markdown(merged))
        print(per_instance_comparison(merged))
        return

    rows = [json.loads(line) for line in open(args.data)]
    rows = rows[args.start:]
    if args.limit is not None:
        rows = rows[:args.limit]

    import stackmask
    from stackmask.vocab import qwen2_5_encoding
    t0 = time.perf_counter()
    vocab = stackmask.Vocab.qwen2_5()
    enc = qwen2_5_encoding()
    print(f"vocabulary: {vocab.size} ids, loaded in {time.perf_counter() - t0:.2f}s; {len(rows)} schemas",
          flush=True)

    engines, unavailable = [], {}
    for name in args.engines.split(","):
        name = name.strip()
        try:
            if name == "stackmask":
                engines.append(Stackmask(vocab, args.whitespace, args.stackmask_compile, args.stackmask_budget))
                print(f"stackmask vocabulary index: {engines[-1].vocab_index_s:.2f}s (once, not in compile)",
                      flush=True)
            elif name == "glrmask":
                engines.append(GLRMask(vocab))
            elif name == "llguidance":
                engines.append(LLGuidance(vocab, enc))
            elif name == "xgrammar":
                engines.append(XGrammar(vocab))
            else:
                unavailable[name] = "unknown engine"
        except Exception as e:  # noqa: BLE001
            unavailable[name] = f"{type(e).__name__}: {e}"
    try:
        import jsonschema
    except ImportError:
        jsonschema = None

    res = {e.name: new_record() for e in engines}
    signal.signal(signal.SIGALRM, _alarm)
    t_start = time.perf_counter()
    for si, row in enumerate(rows):
        schema = row["schema"]
        valid_toks = [enc.encode(v, disallowed_special=()) for v in row["valid"]]
        invalid_toks = [enc.encode(v, disallowed_special=()) for v in row["invalid"]]
        steps0 = ()
        if args.mask_steps and valid_toks and valid_toks[0]:
            rng = np.random.default_rng(args.start + si)
            n0 = len(valid_toks[0])
            steps0 = set(rng.choice(n0, size=min(args.mask_steps, n0), replace=False).tolist())
        for eng in engines:
            rec = res[eng.name]
            srec = dict(name=row["name"], valid=[None] * len(row["valid"]), invalid=[None] * len(row["invalid"]))
            t0 = time.perf_counter()
            try:
                signal.alarm(args.compile_timeout)
                h = eng.compile(schema)
                signal.alarm(0)
            except Timeout:
                rec["compile_fail"][f"timeout > {args.compile_timeout}s"] += 1
                srec["compile_error"] = "timeout"
                rec["per_schema"].append(srec)
                continue
            except Exception as e:  # noqa: BLE001
                signal.alarm(0)
                msg = f"{type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"
                rec["compile_fail"][_bucket(msg)] += 1
                srec["compile_error"] = msg
                rec["per_schema"].append(srec)
                continue
            dt = time.perf_counter() - t0
            rec["compile"].append(dt)
            rec["compiled"] += 1
            srec["compile_s"] = dt
            if eng.name == "stackmask":
                sg = h[1]
                ok, why = eng.strict_ok(schema)
                rec["strict_ok"] += ok
                rec["ambiguous"] += sg.ambiguous
                rec["with_warnings"] += bool(sg.warnings)
                srec["warnings"] = list(sg.warnings)
                st = h[0].compile_stats()
                srec["stats"] = {k: st.get(k) for k in ("configs", "states", "complete_states",
                                                        "budget_exhausted", "mode")}
                if st.get("budget_exhausted") or st.get("mode") == "lazy":
                    rec["partial"] += 1
            try:
                signal.alarm(args.run_timeout)
                run_schema(eng, h, row, schema, valid_toks, invalid_toks, steps0, rec, srec, jsonschema)
                signal.alarm(0)
            except Timeout:
                rec["run_fail"][f"timeout > {args.run_timeout}s in instances"] += 1
                srec["run_error"] = "timeout"
            except Exception as e:  # noqa: BLE001
                signal.alarm(0)
                msg = f"{type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"
                rec["run_fail"][msg] += 1
                srec["run_error"] = msg
            rec["per_schema"].append(srec)
            del h
        if args.verbose or (si + 1) % 25 == 0:
            print(f"  {si + 1}/{len(rows)} schemas, {time.perf_counter() - t_start:.0f}s, "
                  f"peak RSS {peak_rss_gb():.2f} GB", flush=True)
            if args.json and si + 1 < len(rows):       # checkpoint (a killed run keeps its data)
                with open(args.json + ".part", "w") as f:
                    json.dump(build_out(args, res, engines, unavailable, rows, t_start, si + 1), f,
                              default=str)

    out = build_out(args, res, engines, unavailable, rows, t_start, done=len(rows))
    print_table(res, engines, unavailable, len(rows))
    print()
    print(markdown(out))
    print(f"wall {out['wall_s']:.0f}s, peak RSS {out['peak_rss_gb']:.2f} GB (engines in this process: "
          f"{', '.join(out['engines_run'])})")
    if args.json:
        write_json(args.json, out)
        print(f"wrote {args.json}")


def write_json(path: str, data) -> None:
    """``path`` ending in ``.zst``: zstd-compressed (the raw timings make ~10 MB of JSON)."""
    text = json.dumps(data, indent=1, default=str).encode()
    if path.endswith(".zst"):
        import zstandard
        text = zstandard.ZstdCompressor(level=19).compress(text)
    with open(path, "wb") as f:
        f.write(text)


def read_json(path: str):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".zst"):
        import zstandard
        data = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 31)
    return json.loads(data)


def build_out(args, res, engines, unavailable, rows, t_start, done):
    out = dict(schemas=done, start=args.start, argv=sys.argv[1:], unavailable=unavailable,
               wall_s=time.perf_counter() - t_start, peak_rss_gb=peak_rss_gb(),
               engines_run=[e.name for e in engines], engines={})
    for e in engines:
        r = res[e.name]
        out["engines"][e.name] = summary(r, done)
        if e.name == "stackmask":
            out["engines"][e.name]["vocab_index_s"] = e.vocab_index_s
            out["engines"][e.name]["mode"] = args.stackmask_compile
            out["engines"][e.name]["budget_s"] = args.stackmask_budget
        out["engines"][e.name]["peak_rss_gb_process"] = out["peak_rss_gb"]
        out["engines"][e.name]["per_schema"] = r["per_schema"]
        out["engines"][e.name]["raw"] = {k: v for k, v in r.items() if k != "per_schema"}
    return out


def merge_chunks(parts: list) -> dict:
    """One engine's summary from several --json outputs over disjoint schema ranges (needs their
    ``raw`` records)."""
    r = new_record()
    for d in parts:
        raw = d["raw"]
        for k, v in raw.items():
            if isinstance(r.get(k), Counter):
                r[k].update(v)
            elif isinstance(r.get(k), list):
                r[k] += v
            elif k in r:
                r[k] += v
        r["per_schema"] += d["per_schema"]
    n = sum(d["schemas"] for d in parts)
    e = summary(r, n)
    e["per_schema"] = r["per_schema"]
    e["peak_rss_gb_process"] = max(d.get("peak_rss_gb_process") or 0 for d in parts)
    return e


def run_schema(eng, h, row, schema, valid_toks, invalid_toks, steps0, rec, srec, jsonschema):
    for k, (text, toks) in enumerate(zip(row["valid"], valid_toks)):
        rec["valid"] += 1
        n_mask = len(rec["mask"])
        ok, at = run_instance(eng, h, toks, rec, steps0 if k == 0 else ())
        if len(rec["mask"]) > n_mask:
            srec["mask_s"] = rec["mask"][n_mask:]
        srec["valid"][k] = ok
        if ok:
            rec["valid_ok"] += 1
            continue
        reason = "rejected"
        if eng.name == "stackmask":
            try:
                inst = json.loads(text)
                re_text = json.dumps(reorder_keys(schema, schema, inst), ensure_ascii=False)
                if re_text != json.dumps(inst, ensure_ascii=False) and eng.accepts_text(h, re_text):
                    reason = "key order (policy: schema property order)"
                    rec["valid_ok_reordered"] += 1
                else:
                    reason = "rejected (not explained)"
            except Exception:  # noqa: BLE001
                reason = "rejected (not explained)"
            srec.setdefault("valid_rejected", []).append(dict(reason=reason, at=at, text=text[:300]))
        rec["valid_rej_reasons"][reason] += 1
    rec["all_valid"] += all(srec["valid"])
    for k, (text, toks) in enumerate(zip(row["invalid"], invalid_toks)):
        rec["invalid"] += 1
        ok, _ = run_instance(eng, h, toks, rec)
        srec["invalid"][k] = not ok
        if not ok:
            rec["invalid_rej"] += 1
            continue
        reason = "accepted"
        if eng.name == "stackmask":
            reason = _explain_invalid(jsonschema, schema, text, h[1])
            srec.setdefault("invalid_accepted", []).append(dict(reason=reason, text=text[:300]))
        rec["invalid_acc_reasons"][reason] += 1
    rec["all_invalid"] += all(srec["invalid"])


def _bucket(msg: str) -> str:
    m = msg
    for key in ("combined lexer automaton", "is too large", "not LALR", "accepts no JSON value",
                "cannot be enforced", "reduction cycle"):
        if key in m:
            return m.split(":")[0] + ": ..." + key + "..."
    return m[:100]


def _explain_invalid(jsonschema, schema, text, sg) -> str:
    if jsonschema is not None:
        try:
            inst = json.loads(text)
            cls = jsonschema.validators.validator_for(schema)
            v = cls(schema, format_checker=cls.FORMAT_CHECKER)
            if v.is_valid(inst):
                return "valid per jsonschema (mislabelled instance)"
        except Exception:  # noqa: BLE001
            pass
    if sg.warnings:
        kws = sorted({w.split(" at ")[0] for w in sg.warnings})
        return "non-enforced keyword(s): " + ", ".join(kws)
    return "ACCEPTED INVALID (converter error)"


PCTS = (50, 90, 99, 99.9)


def summary(r, n):
    def p(xs):
        d = {f"p{q:g}": pct(xs, q) for q in PCTS}
        d.update(max=max(xs) if xs else None, n=len(xs))
        return d
    return dict(schemas=n, compiled=r["compiled"], compile_fail=dict(r["compile_fail"]),
                run_fail=dict(r["run_fail"]), partial=r["partial"],
                valid=r["valid"], valid_ok=r["valid_ok"], valid_ok_after_key_reorder=r["valid_ok_reordered"],
                valid_rej_reasons=dict(r["valid_rej_reasons"]), invalid=r["invalid"],
                invalid_rej=r["invalid_rej"], invalid_acc_reasons=dict(r["invalid_acc_reasons"]),
                schemas_all_valid_ok=r["all_valid"], schemas_all_invalid_rej=r["all_invalid"],
                compile_s=p(r["compile"]), commit_s=p(r["commit"]), mask_s=p(r["mask"]),
                mask_again_s=p(r["mask_again"]),
                mask_steps=r["mask_steps"], mask_without_next=r["mask_without_next"],
                mask_checked=r["mask_checked"], mask_mismatch=r["mask_mismatch"],
                strict_ok=r["strict_ok"], ambiguous=r["ambiguous"], with_warnings=r["with_warnings"])


def _us(x):
    if x is None or x != x:
        return "-"
    x *= 1e6
    if x < 100:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def _s(x):
    if x is None or x != x:
        return "-"
    return f"{x * 1e3:.0f} ms" if x < 1 else f"{x:.2f} s"


def markdown(out) -> str:
    """The comparison tables (markdown) of a --json output."""
    n = out["schemas"]
    lines = ["| engine | compiled | valid accepted | invalid rejected | all instances right | compile p50 | p90 "
             "| p99 | max | peak RSS |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, e in out["engines"].items():
        c = e["compile_s"]
        va = f"{e['valid_ok']}/{e['valid']} ({100 * e['valid_ok'] / max(1, e['valid']):.1f}%)"
        ir = f"{e['invalid_rej']}/{e['invalid']} ({100 * e['invalid_rej'] / max(1, e['invalid']):.1f}%)"
        rss = e.get("peak_rss_gb_process")
        rss = f"{rss:.2f} GB" if rss is not None else "-"
        ps = e.get("per_schema", [])
        tot = sum(len(p.get("valid", [])) + len(p.get("invalid", [])) for p in ps)
        right = sum(sum(bool(x) for x in p.get("valid", []) + p.get("invalid", [])) for p in ps)
        allr = f"{right}/{tot} ({100 * right / max(1, tot):.1f}%)"
        lines.append(f"| {name} | {e['compiled']}/{e.get('schemas', n)} | {va} | {ir} | {allr} | {_s(c['p50'])} | {_s(c['p90'])} "
                     f"| {_s(c['p99'])} | {_s(c['max'])} | {rss} |")
    lines += ["", "| engine | masks | mask p50 µs | p90 | p99 | p99.9 | max | commit p50 µs | p90 | p99 "
              "| p99.9 | max | next token in mask | masks = oracle |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, e in out["engines"].items():
        m, c = e["mask_s"], e["commit_s"]
        ver = (f"{e['mask_checked'] - e['mask_mismatch']}/{e['mask_checked']}" if name == "stackmask"
               else "-")
        lines.append(f"| {name} | {m['n']} | " + " | ".join(_us(m[k]) for k in ("p50", "p90", "p99", "p99.9", "max"))
                     + " | " + " | ".join(_us(c[k]) for k in ("p50", "p90", "p99", "p99.9", "max"))
                     + f" | {e['mask_steps'] - e['mask_without_next']}/{e['mask_steps']} | {ver} |")
        again = e.get("mask_again_s")
        if again and again["n"]:
            lines.append(f"| {name}, same state again | {again['n']} | "
                         + " | ".join(_us(again[k]) for k in ("p50", "p90", "p99", "p99.9", "max"))
                         + " | | | | | | | |")
    return "\n".join(lines)


def per_instance_comparison(out) -> str:
    """Instances stackmask gets wrong that some peer gets right (and the reverse), per engine."""
    names = list(out["engines"])
    if "stackmask" not in names:
        return ""
    sm = {p["name"]: p for p in out["engines"]["stackmask"]["per_schema"]}
    lines = ["", "per-instance (same token ids): instances an engine gets right and stackmask does not / "
                 "the reverse"]
    for name in names:
        if name == "stackmask":
            continue
        peer = {p["name"]: p for p in out["engines"][name]["per_schema"]}
        better = worse = 0
        for key, s in sm.items():
            q = peer.get(key)
            if q is None:
                continue
            for kind in ("valid", "invalid"):
                for a, b in zip(s.get(kind, []), q.get(kind, [])):
                    better += bool(b) and not a
                    worse += bool(a) and not b
        lines.append(f"  {name}: {better} / {worse}")
    return "\n".join(lines)


def print_table(res, engines, unavailable, n):
    for name, why in unavailable.items():
        print(f"{name:<11} not run: {why}")
    for e in engines:
        r = res[e.name]
        print(f"\n{e.name}: compiled {r['compiled']}/{n}; valid accepted {r['valid_ok']}/{r['valid']}; "
              f"invalid rejected {r['invalid_rej']}/{r['invalid']}")
        if r["compile_fail"]:
            print("  compile failures:")
            for k, v in r["compile_fail"].most_common():
                print(f"    {v:4d}  {k}")
        if r["run_fail"]:
            print("  failures while running instances:")
            for k, v in r["run_fail"].most_common():
                print(f"    {v:4d}  {k}")
        if r["valid_rej_reasons"]:
            print("  valid instances rejected:")
            for k, v in r["valid_rej_reasons"].most_common():
                print(f"    {v:4d}  {k}")
        if r["invalid_acc_reasons"]:
            print("  invalid instances accepted:")
            for k, v in r["invalid_acc_reasons"].most_common():
                print(f"    {v:4d}  {k}")
        print(f"  sampled masks: {r['mask_steps']}, {r['mask_without_next']} without the next token")
        if e.name == "stackmask":
            print(f"  compiled with strict=True: {r['strict_ok']}/{n}; with ignored keywords (strict=False): "
                  f"{r['with_warnings']}; needing ambiguous=True: {r['ambiguous']}; "
                  f"partially compiled up front (budget/lazy): {r['partial']}")
            if r["valid"]:
                acc = r["valid_ok"] + r["valid_ok_reordered"]
                print(f"  valid accepted as given or with keys in schema order: {acc}/{r['valid']} "
                      f"({100 * acc / r['valid']:.1f}%)")
            print(f"  masks compared with the reference oracle: {r['mask_checked']}, "
                  f"{r['mask_mismatch']} different")


if __name__ == "__main__":
    main()
