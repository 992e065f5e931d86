"""MaskBench: JSON Schema coverage and latency on real-world schemas.

    python benchmarks/maskbench.py                      # all 1000 schemas, all engines
    python benchmarks/maskbench.py --limit 100 --json out.json
    python benchmarks/maskbench.py --engines stackmask --mask-steps 0

Data: ../shared/bench/maskbench/sample1000.jsonl (one JSON object per line:
``name``, ``schema``, ``valid`` and ``invalid``: lists of JSON texts).

For every schema and engine: compile (Constraint construction; the Qwen2.5
vocabulary is loaded once), commit every valid instance token by token
(qwen2_5_encoding) and then EOS (accepted = every token and EOS accepted),
commit every invalid instance (rejected = some token or EOS rejected), time
compile and every commit, and time the mask at a few sampled steps per
schema (``--mask-steps``; stackmask's ``get_mask`` is still the O(|V|)
reference oracle, so its mask timings are reported as oracle timings).

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
import os
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "maskbench" / "sample1000.jsonl"


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

    def mask(self, h, st):
        raise NotImplementedError


class Stackmask(Engine):
    name = "stackmask"

    def __init__(self, vocab, whitespace="bounded"):
        import stackmask
        from stackmask.grammars.json_schema import convert_schema
        self.sm = stackmask
        self.convert = convert_schema
        self.vocab = vocab
        self.eos = min(vocab.eos_token_ids)
        self.whitespace = whitespace

    def compile(self, schema):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sg = self.convert(schema, strict=False, whitespace=self.whitespace)
        c = self.sm.Constraint(sg.grammar, self.vocab, ambiguous=sg.ambiguous)
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
        st2 = st.copy()
        return bool(st2.commit_token(tok)), st2

    def finish(self, h, st):
        return bool(st.is_accepting())

    def mask(self, h, st):
        return st.mask()


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
        return self.bitmask


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
        return self.bitmask


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------

def run_instance(eng, h, toks, rec, mask_at=()):
    """Commit ``toks`` then EOS. Returns (accepted, index of the rejected token)."""
    st = eng.start(h)
    for i, t in enumerate(toks):
        if i in mask_at:
            t0 = time.perf_counter()
            m = eng.mask(h, st)
            rec["mask"].append(time.perf_counter() - t0)
            if eng.name == "stackmask":
                rec["mask_checked"] += 1
                if not (int(m[t // 32]) >> (t % 32)) & 1:
                    rec["mask_mismatch"] += 1
        t0 = time.perf_counter()
        ok, st = eng.commit(h, st, t)
        rec["commit"].append(time.perf_counter() - t0)
        if not ok:
            return False, i
    return eng.finish(h, st), len(toks)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--engines", default="stackmask,glrmask,llguidance,xgrammar")
    ap.add_argument("--mask-steps", type=int, default=3, help="mask timings per schema (first valid instance)")
    ap.add_argument("--compile-timeout", type=int, default=120, help="seconds per stackmask compile")
    ap.add_argument("--whitespace", default="bounded")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)

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
                engines.append(Stackmask(vocab, args.whitespace))
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

    res = {e.name: dict(compiled=0, compile_fail=Counter(), compile=[], commit=[], mask=[], valid=0,
                        valid_ok=0, invalid=0, invalid_rej=0, valid_rej_reasons=Counter(),
                        invalid_acc_reasons=Counter(), mask_checked=0, mask_mismatch=0,
                        valid_ok_reordered=0, strict_ok=0, ambiguous=0, with_warnings=0,
                        per_schema=[])
           for e in engines}
    signal.signal(signal.SIGALRM, _alarm)
    t_start = time.perf_counter()
    for si, row in enumerate(rows):
        schema = row["schema"]
        valid_toks = [enc.encode(v, disallowed_special=()) for v in row["valid"]]
        invalid_toks = [enc.encode(v, disallowed_special=()) for v in row["invalid"]]
        for eng in engines:
            rec = res[eng.name]
            srec = dict(name=row["name"])
            t0 = time.perf_counter()
            try:
                if eng.name == "stackmask":
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
            va = 0
            for k, (text, toks) in enumerate(zip(row["valid"], valid_toks)):
                rec["valid"] += 1
                steps = ()
                if k == 0 and args.mask_steps and toks:
                    rng = np.random.default_rng(si)
                    steps = set(rng.choice(len(toks), size=min(args.mask_steps, len(toks)), replace=False).tolist())
                ok, at = run_instance(eng, h, toks, rec, steps)
                if ok:
                    rec["valid_ok"] += 1
                    va += 1
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
            srec["valid_ok"] = va
            ir = 0
            for text, toks in zip(row["invalid"], invalid_toks):
                rec["invalid"] += 1
                ok, _ = run_instance(eng, h, toks, rec)
                if not ok:
                    rec["invalid_rej"] += 1
                    ir += 1
                    continue
                reason = "accepted"
                if eng.name == "stackmask":
                    reason = _explain_invalid(jsonschema, schema, text, h[1])
                    srec.setdefault("invalid_accepted", []).append(dict(reason=reason, text=text[:300]))
                rec["invalid_acc_reasons"][reason] += 1
            srec["invalid_rej"] = ir
            rec["per_schema"].append(srec)
        if args.verbose or (si + 1) % 50 == 0:
            print(f"  {si + 1}/{len(rows)} schemas, {time.perf_counter() - t_start:.0f}s", flush=True)

    print_table(res, engines, unavailable, len(rows))
    if args.json:
        out = dict(schemas=len(rows), unavailable=unavailable, engines={})
        for e in engines:
            r = res[e.name]
            out["engines"][e.name] = summary(r, len(rows))
            out["engines"][e.name]["per_schema"] = r["per_schema"]
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
        print(f"wrote {args.json}")


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


def summary(r, n):
    def p(xs):
        return {"p50": pct(xs, 50), "p99": pct(xs, 99), "p99.9": pct(xs, 99.9), "max": max(xs) if xs else None,
                "n": len(xs)}
    return dict(schemas=n, compiled=r["compiled"], compile_fail=dict(r["compile_fail"]),
                valid=r["valid"], valid_ok=r["valid_ok"], valid_ok_after_key_reorder=r["valid_ok_reordered"],
                valid_rej_reasons=dict(r["valid_rej_reasons"]), invalid=r["invalid"],
                invalid_rej=r["invalid_rej"], invalid_acc_reasons=dict(r["invalid_acc_reasons"]),
                compile_s=p(r["compile"]), commit_s=p(r["commit"]), mask_s=p(r["mask"]),
                mask_checked=r["mask_checked"], mask_mismatch=r["mask_mismatch"],
                strict_ok=r["strict_ok"], ambiguous=r["ambiguous"], with_warnings=r["with_warnings"])


def print_table(res, engines, unavailable, n):
    print()
    hdr = (f"{'engine':<11} {'compiled':>9} {'valid acc.':>16} {'invalid rej.':>16} "
           f"{'compile p50/p99/max':>24} {'commit p50/p99':>16} {'mask p50/p99':>18}")
    print(hdr)
    print("-" * len(hdr))
    for e in engines:
        r = res[e.name]
        va = f"{r['valid_ok']}/{r['valid']} ({100 * r['valid_ok'] / max(1, r['valid']):.1f}%)"
        ir = f"{r['invalid_rej']}/{r['invalid']} ({100 * r['invalid_rej'] / max(1, r['invalid']):.1f}%)"
        c = r["compile"]
        ct = f"{fmt_t(pct(c, 50))}/{fmt_t(pct(c, 99))}/{fmt_t(max(c) if c else float('nan'))}"
        cm = f"{fmt_t(pct(r['commit'], 50))}/{fmt_t(pct(r['commit'], 99))}"
        mk = f"{fmt_t(pct(r['mask'], 50))}/{fmt_t(pct(r['mask'], 99))}"
        if e.name == "stackmask":
            mk += "*"
        print(f"{e.name:<11} {r['compiled']:>4}/{n:<4} {va:>16} {ir:>16} {ct:>24} {cm:>16} {mk:>18}")
    for name, why in unavailable.items():
        print(f"{name:<11} not run: {why}")
    print("* stackmask get_mask is the O(|V|) reference oracle (compiled masks are a later milestone)")
    print("  valid acc./invalid rej. are over the schemas each engine compiled")
    for e in engines:
        r = res[e.name]
        print(f"\n{e.name}:")
        if r["compile_fail"]:
            print("  compile failures:")
            for k, v in r["compile_fail"].most_common():
                print(f"    {v:4d}  {k}")
        if r["valid_rej_reasons"]:
            print("  valid instances rejected:")
            for k, v in r["valid_rej_reasons"].most_common():
                print(f"    {v:4d}  {k}")
        if r["invalid_acc_reasons"]:
            print("  invalid instances accepted:")
            for k, v in r["invalid_acc_reasons"].most_common():
                print(f"    {v:4d}  {k}")
        if e.name == "stackmask":
            print(f"  compiled with strict=True: {r['strict_ok']}/{n}; with ignored keywords (strict=False): "
                  f"{r['with_warnings']}; needing ambiguous=True: {r['ambiguous']}")
            if r["valid"]:
                acc = r["valid_ok"] + r["valid_ok_reordered"]
                print(f"  valid accepted as given or with keys in schema order: {acc}/{r['valid']} "
                      f"({100 * acc / r['valid']:.1f}%)")
            print(f"  sampled masks: {r['mask_checked']} checked against the next token, "
                  f"{r['mask_mismatch']} without it")


if __name__ == "__main__":
    main()
