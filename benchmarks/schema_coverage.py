"""JSON Schema coverage: how many schemas compile, and which instances their grammars accept.

For each schema of a MaskBench-style JSONL (``name``, ``schema``, ``valid``, ``invalid``), the
grammar of ``stackmask.grammars.json_schema.convert_schema`` is built with default settings over
the 256 bytes and one long token (``compile="lazy"``: membership needs no mask automaton; the
long token gives the lexer the band Qwen2.5 gives it, ``--band``), and each instance
is committed byte by byte and checked with ``is_accepting``. Prints refused schemas, valid
instances accepted and invalid instances accepted, and the most common refusals.

A valid instance rejected as written is tried again in every order of its objects' keys
(:func:`some_key_order`: a search driven by the constraint itself, numbers and strings spelled
as written, so only the order changes); one accepted that way is counted as rejected by the
key-order policy (docs/json-schema.md, Policies), not as a wrong rejection. An invalid instance
accepted is checked again with ``jsonschema`` against the schema without ``uniqueItems``: valid
there, it is counted as accepted by the ``uniqueItems`` policy (not enforced over infinite item
domains, with a warning), else as a wrong acceptance.

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


class _Raw(str):
    """A JSON number kept as written (``1e5`` stays ``1e5``)."""


def _spell(v) -> str:
    return str(v) if isinstance(v, _Raw) else json.dumps(v, ensure_ascii=False)


def some_key_order(c, text: str, budget: int = 20000):
    """True when ``c`` accepts the JSON ``text`` with its objects' keys in some order
    (compact separators, each scalar spelled as in ``text``); False when no order is
    accepted; None when the search passed ``budget`` commits."""
    from stackmask import TokenRejected
    value = json.loads(text, parse_float=_Raw, parse_int=_Raw)
    left = [budget]

    def step(state, s: str):
        left[0] -= 1
        if left[0] < 0:
            raise _Budget()
        try:
            return c.commit_bytes(state, s.encode())
        except TokenRejected:
            return None

    def spell(state, v):
        """Every state after some spelling of ``v`` from ``state``."""
        if isinstance(v, dict):
            st = step(state, "{")
            if st is not None:
                yield from members(st, list(v.items()), True)
        elif isinstance(v, list):
            st = step(state, "[")
            if st is not None:
                yield from items(st, v, 0)
        else:
            st = step(state, _spell(v))
            if st is not None:
                yield st

    def members(state, rest: list, first: bool):
        if not rest:
            st = step(state, "}")
            if st is not None:
                yield st
            return
        for i, (k, x) in enumerate(rest):
            st = step(state, ("" if first else ",") + json.dumps(k, ensure_ascii=False) + ":")
            if st is None:
                continue
            for after in spell(st, x):
                yield from members(after, rest[:i] + rest[i + 1:], False)

    def items(state, v: list, i: int):
        if i == len(v):
            st = step(state, "]")
            if st is not None:
                yield st
            return
        st = state if i == 0 else step(state, ",")
        if st is None:
            return
        for after in spell(st, v[i]):
            yield from items(after, v, i + 1)

    try:
        return any(c.is_accepting(st) for st in spell(c.start(), value))
    except _Budget:
        return None


class _Budget(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def _without_unique(x):
    """The schema with every Boolean ``uniqueItems`` dropped."""
    if isinstance(x, dict):
        return {k: _without_unique(v) for k, v in x.items()
                if not (k == "uniqueItems" and isinstance(v, bool))}
    if isinstance(x, list):
        return [_without_unique(v) for v in x]
    return x


def by_unique_policy(schema, text: str) -> bool:
    """Whether ``text`` (an invalid instance) is valid once ``uniqueItems`` is dropped."""
    import jsonschema
    s = _without_unique(schema)
    cls = jsonschema.validators.validator_for(s) if isinstance(s, dict) else jsonschema.Draft202012Validator
    try:
        return cls(s).is_valid(json.loads(text))
    except Exception:           # noqa: BLE001 - an unresolvable $ref etc.: not explained
        return False


#: the lexer's band (``stackmask.compile.counting_band``) the run compiles with: Qwen2.5's
#: (its longest token has 128 bytes). A count near a bound is a lexer state of its own
#: within the band, so a smaller band gives smaller lexers than real vocabularies get.
BAND = 129


def coverage(rows: list, timeout: float, band: int = BAND) -> list:
    """Per schema: ``{"name", "ok", "valid": [bool], "invalid": [bool]}`` or ``ok`` False
    with ``err`` (the refusal's first line, or ``timeout``). The vocabulary is the 256
    bytes and a token of ``band - 1`` bytes (the lexer then counts as with a real
    vocabulary whose longest token has that length; instances are committed as bytes)."""
    from stackmask import Constraint, TokenRejected, Vocab
    from stackmask.grammars.json_schema import convert_schema
    long = [b"\x00" * (band - 1)] if band > 2 else []
    vocab = Vocab([bytes([i]) for i in range(256)] + long + [b"<eos>"],
                  eos_token_ids=[256 + len(long)], special_token_ids=[256 + len(long)])

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
            valid = [accepts(c, t) for t in r.get("valid", [])]
            invalid = [accepts(c, t) for t in r.get("invalid", [])]
            rec.update(ok=True, valid=valid, invalid=invalid, policies=list(sg.warnings),
                       # per invalid instance accepted: by the uniqueItems policy
                       unique_policy=[bool(a and sg.warnings and by_unique_policy(r["schema"], t))
                                      for a, t in zip(invalid, r.get("invalid", []))],
                       # per valid instance: accepted in another key order (None: as written,
                       # or the search ran out of budget)
                       key_order=[None if a else some_key_order(c, t) for a, t in zip(valid, r.get("valid", []))])
        except _Timeout:
            rec.update(ok=False, err="timeout")
        except Exception as e:          # noqa: BLE001 - a refusal of any kind is recorded
            rec.update(ok=False, err=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
            if getattr(e, "problems", None):       # keyword refusals: (keyword, JSON pointer, why)
                rec["problems"] = [list(p) for p in e.problems]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.append(rec)
    return out


def summary(recs: list) -> str:
    ok = [x for x in recs if x["ok"]]
    v = [a for x in ok for a in x["valid"]]
    iv = [a for x in ok for a in x["invalid"]]
    ko = [a for x in ok for a in x.get("key_order", ())]
    up = sum(a for x in ok for a in x.get("unique_policy", ()))
    pol = sum(1 for x in ok if x.get("policies"))
    lines = [f"schemas {len(recs)}: compiled {len(ok)}, refused {len(recs) - len(ok)}; "
             f"valid accepted {sum(v)}/{len(v)} as written, {sum(v) + ko.count(True)}/{len(v)} "
             f"with the key-order policy ({ko.count(True)} in another key order, "
             f"{ko.count(None) - sum(v)} undecided); invalid accepted {sum(iv)}/{len(iv)} "
             f"({up} by the uniqueItems policy, {sum(iv) - up} otherwise); "
             f"{pol} schemas with uniqueItems not enforced"]
    for x in ok:
        for t, (a, u) in enumerate(zip(x["invalid"], x.get("unique_policy", [False] * len(x["invalid"])))):
            if a and not u:
                lines.append(f"  invalid instance {t} of {x['name']} accepted")
    for x in ok:
        for t, (a, k) in enumerate(zip(x["valid"], x.get("key_order", [None] * len(x["valid"])))):
            if not a and k is not True:
                lines.append(f"  valid instance {t} of {x['name']} rejected in every key order"
                             if k is False else f"  valid instance {t} of {x['name']}: key-order search ran out")
    def why(x) -> str:
        if x.get("problems"):
            kw, _ptr, reason = x["problems"][0]
            return f"{kw}: {reason[:90]}"
        return x["err"][:100]
    for err, n in Counter(why(x) for x in recs if not x["ok"]).most_common(20):
        lines.append(f"  {n} x {err}")
    for x in recs:
        if not x["ok"]:
            where = "; ".join(f"{k} at {p}" for k, p, _ in x.get("problems", ())[:3]) or x["err"][:100]
            lines.append(f"  refused {x['name']}: {where}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(BENCH / "maskbench" / "sample1000.jsonl"))
    ap.add_argument("--limit", type=int, default=None, help="the first N schemas")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per schema")
    ap.add_argument("--json", default=None, help="write the per-schema records here")
    ap.add_argument("--band", type=int, default=BAND,
                    help="the lexer's band: the longest token + 1 of the vocabulary to stand for "
                         "(default: Qwen2.5's, 129)")
    args = ap.parse_args(argv)
    logging.getLogger("stackmask").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    with open(args.data) as f:
        rows = [json.loads(line) for line in f if line.strip()][:args.limit]
    recs = coverage(rows, args.timeout, args.band)
    if args.json:
        Path(args.json).write_text(json.dumps(recs, indent=0))
    print(summary(recs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
