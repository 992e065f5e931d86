"""Seeded generator of API-like JSON Schemas with valid and invalid instances.

    python benchmarks/schemas/generate.py --count 220 --seed 2026 --out benchmarks/schemas/fresh.jsonl

Each schema looks like a request or response body of a web API: nested objects, arrays,
string enums, string formats (date, date-time, email, uuid, ipv4, uri), patterns from a fixed
table, numeric bounds, ``maxLength`` from 8 to 65535, optional properties, ``anyOf``/``oneOf``
(discriminated object variants, nullable values), ``$ref`` into ``$defs``, and
``additionalProperties: false`` on some objects. Output lines have MaskBench's fields (``name``,
``schema``, ``valid``, ``invalid``: compact JSON texts) plus ``source`` and ``license``.

Valid instances are generated from the schema (:func:`instance`; objects keep the schema's
property order) and invalid ones by mutating a valid one (:func:`mutations`: a required key
dropped, a value of the wrong type, a bound crossed, an enum or const missed, a bad format or
pattern, an undeclared key, too many items). Every valid instance is checked valid and every
invalid one invalid by ``jsonschema`` (Draft 2020-12, formats asserted); an instance that fails
its check is dropped, and a schema without at least one of each is replaced by the next draw.
The output is a function of ``--seed`` and ``--count`` alone.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import string
from pathlib import Path

import jsonschema

DRAFT = "https://json-schema.org/draft/2020-12/schema"

WORDS = ("account address amount author balance category city code comment country currency "
         "customer date description detail discount email event field file group id item label "
         "language level limit message metadata name note order owner page parent payment phone "
         "price priority product quantity reason region request result role score session source "
         "state status summary tag team text title token total type unit url user value version "
         "weight zone").split()
TEXT = ("the quick brown fox jumps over the lazy dog while a small team reviews the quarterly "
        "report and the customer waits for a reply about the delayed order number and its "
        "refund status in the north region office").split()
ENUMS = (["active", "inactive", "pending"], ["low", "medium", "high", "critical"],
         ["USD", "EUR", "GBP", "JPY"], ["draft", "published", "archived"], ["GET", "POST", "PUT", "DELETE"],
         ["admin", "editor", "viewer"], ["small", "medium", "large", "x-large"], ["asc", "desc"])
#: pattern -> a function drawing a matching string
PATTERNS = {
    "^[A-Z]{3}$": lambda r: "".join(r.choice(string.ascii_uppercase) for _ in range(3)),
    "^[0-9]{5}(-[0-9]{4})?$": lambda r: f"{r.randrange(10**5):05d}" + (f"-{r.randrange(10**4):04d}" if r.random() < .5 else ""),
    "^[a-z0-9_-]{3,16}$": lambda r: "".join(r.choice(string.ascii_lowercase + string.digits + "_-")
                                            for _ in range(r.randint(3, 16))),
    "^\\+?[0-9]{7,15}$": lambda r: "+" + "".join(r.choice(string.digits) for _ in range(r.randint(7, 15))),
    "^[A-Z]{2}-[0-9]{4,8}$": lambda r: r.choice(["AB", "XY", "QA"]) + "-" + str(r.randrange(10**4, 10**8)),
    "^#[0-9a-fA-F]{6}$": lambda r: "#" + "".join(r.choice("0123456789abcdefABCDEF") for _ in range(6)),
    "^v[0-9]+\\.[0-9]+\\.[0-9]+$": lambda r: f"v{r.randrange(10)}.{r.randrange(30)}.{r.randrange(100)}",
}
FORMATS = {
    "date": lambda r: f"20{r.randrange(10, 30)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "date-time": lambda r: (f"20{r.randrange(10, 30)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
                            f"{r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}Z"),
    "email": lambda r: f"{r.choice(WORDS)}.{r.choice(WORDS)}@example.{r.choice(['com', 'org', 'net'])}",
    "uuid": lambda r: "-".join("".join(r.choice("0123456789abcdef") for _ in range(n)) for n in (8, 4, 4, 4, 12)),
    "ipv4": lambda r: ".".join(str(r.randrange(256)) for _ in range(4)),
    "uri": lambda r: f"https://{r.choice(WORDS)}.example.com/{r.choice(WORDS)}/{r.randrange(1000)}",
}
MAX_LENGTHS = (8, 16, 20, 32, 40, 64, 100, 128, 255, 256, 300, 500, 1000, 2000, 4096, 10000, 65535)


class CannotGenerate(Exception):
    """The instance generator does not handle this schema."""


# --------------------------------------------------------------------------
# schemas
# --------------------------------------------------------------------------

def _names(r: random.Random, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        w = r.choice(WORDS)
        if r.random() < .3:
            w += r.choice(["_id", "_at", "_name", "_count", "_url", "Type", "List"])
        if w not in out:
            out.append(w)
    return out


def string_schema(r: random.Random) -> dict:
    k = r.random()
    if k < .2:
        return {"type": "string", "enum": list(r.choice(ENUMS))}
    if k < .4:
        return {"type": "string", "format": r.choice(list(FORMATS))}
    if k < .5:
        return {"type": "string", "pattern": r.choice(list(PATTERNS))}
    s = {"type": "string"}
    if r.random() < .8:
        s["maxLength"] = r.choice(MAX_LENGTHS)
        if r.random() < .3:
            s["minLength"] = r.randint(1, min(5, s["maxLength"]))
    if r.random() < .3:
        s["description"] = " ".join(r.sample(TEXT, 6))
    return s


def number_schema(r: random.Random) -> dict:
    if r.random() < .6:
        s = {"type": "integer"}
        lo = r.choice([0, 1, -100, 18])
        if r.random() < .8:
            s["minimum"] = lo
        if r.random() < .6:
            s["maximum"] = lo + r.choice([10, 100, 1000, 65535, 2**31])
        if r.random() < .1:
            s["multipleOf"] = r.choice([2, 5, 10])
        return s
    s = {"type": "number"}
    if r.random() < .7:
        s["minimum"] = r.choice([0, -90, -180, 0.5])
    if r.random() < .5:
        s["maximum"] = r.choice([1, 90, 180, 100, 1e6])
    if r.random() < .2:
        s["exclusiveMinimum"] = s.pop("minimum", 0)
    return s


def scalar_schema(r: random.Random) -> dict:
    k = r.random()
    if k < .5:
        return string_schema(r)
    if k < .8:
        return number_schema(r)
    if k < .9:
        return {"type": "boolean"}
    return {"type": ["string", "null"], "maxLength": r.choice(MAX_LENGTHS)} if r.random() < .5 else \
        {"anyOf": [scalar_schema(r), {"type": "null"}]}


def object_schema(r: random.Random, depth: int, defs: dict, lo: int = 2, hi: int = 7) -> dict:
    names = _names(r, r.randint(lo, hi))
    props = {n: value_schema(r, depth + 1, defs) for n in names}
    s = {"type": "object", "properties": props}
    req = [n for n in names if r.random() < .6]
    if req:
        s["required"] = req
    if r.random() < .35:
        s["additionalProperties"] = False
    return s


def value_schema(r: random.Random, depth: int, defs: dict) -> dict:
    k = r.random()
    if depth >= 3 or k < .55:
        return scalar_schema(r)
    if k < .68:
        return object_schema(r, depth, defs, 1, 4)
    if k < .83:
        items = scalar_schema(r) if r.random() < .5 else object_schema(r, depth + 1, defs, 1, 3)
        s = {"type": "array", "items": items}
        if r.random() < .4:
            s["minItems"] = r.randint(0, 2)
        if r.random() < .4:
            s["maxItems"] = r.choice([3, 5, 10, 100])
        return s
    if k < .93:
        name = r.choice(["Address", "Money", "Contact", "Link", "Audit", "Dimensions"]) + str(len(defs))
        if name not in defs:
            defs[name] = object_schema(r, depth + 1, defs, 2, 4)
        return {"$ref": f"#/$defs/{name}"}
    # discriminated variants
    variants = []
    for kind in r.sample(["card", "bank", "wallet", "cash"], r.randint(2, 3)):
        o = object_schema(r, depth + 1, defs, 1, 3)
        o["properties"] = {"kind": {"const": kind}, **o["properties"]}
        o["required"] = ["kind"] + [n for n in o.get("required", []) if n != "kind"]
        variants.append(o)
    return {r.choice(["oneOf", "anyOf"]): variants}


def schema(r: random.Random) -> dict:
    """One API-like schema."""
    defs: dict = {}
    s = object_schema(r, 0, defs, 3, 10)
    out = {"$schema": DRAFT, "title": r.choice(WORDS).capitalize() + r.choice(["Request", "Response", "Event"])}
    out.update(s)
    if defs:
        out["$defs"] = defs
    return out


# --------------------------------------------------------------------------
# instances
# --------------------------------------------------------------------------

def _resolve(root: dict, s):
    seen = 0
    while isinstance(s, dict) and "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/") or seen > 20:
            raise CannotGenerate(f"$ref {ref!r}")
        node = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise CannotGenerate(f"$ref {ref!r}")
            node = node[part]
        s, seen = node, seen + 1
    return s


def _text(r: random.Random, lo: int, hi: int) -> str:
    n = r.randint(lo, hi)
    words: list[str] = []
    while len(" ".join(words)) < n:
        words.append(r.choice(TEXT))
    t = " ".join(words)[:n]
    return t if not t.endswith(" ") else t[:-1] + "s"


def instance(root: dict, s, r: random.Random, depth: int = 0):
    """A value meant to be valid under ``s`` (checked by the caller with jsonschema)."""
    if depth > 12:
        raise CannotGenerate("too deep")
    s = _resolve(root, s)
    if s is True or s == {}:
        return r.choice([1, "x", True, None])
    if not isinstance(s, dict):
        raise CannotGenerate("false schema")
    if "const" in s:
        return copy.deepcopy(s["const"])
    if "enum" in s:
        return copy.deepcopy(r.choice(s["enum"]))
    for kw in ("oneOf", "anyOf"):
        if kw in s:
            return instance(root, r.choice(s[kw]), r, depth + 1)
    if "allOf" in s:
        raise CannotGenerate("allOf")
    t = s.get("type")
    if isinstance(t, list):
        t = r.choice(t)
    if t is None:
        t = "object" if "properties" in s else "array" if "items" in s else "string" if "maxLength" in s else None
    if t == "null":
        return None
    if t == "boolean":
        return r.random() < .5
    if t in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", -1000))
        hi = s.get("maximum", s.get("exclusiveMaximum", lo + 10000))
        if t == "integer" or r.random() < .4:
            m = s.get("multipleOf", 1)
            v = r.randint(int(lo) // m + 1, max(int(lo) // m + 1, int(hi) // m)) * m
            return min(v, int(hi)) if t == "integer" else v
        return round(r.uniform(lo, hi), r.choice([1, 2, 3]))
    if t == "string":
        if "format" in s:
            if s["format"] not in FORMATS:
                raise CannotGenerate(f"format {s['format']}")
            return FORMATS[s["format"]](r)
        if "pattern" in s:
            if s["pattern"] not in PATTERNS:
                raise CannotGenerate(f"pattern {s['pattern']}")
            return PATTERNS[s["pattern"]](r)
        lo = s.get("minLength", 0)
        hi = min(s.get("maxLength", 60), lo + r.choice([12, 30, 60, 200]))
        return _text(r, max(lo, min(hi, 3)), hi)
    if t == "array":
        items = s.get("items", {})
        lo = s.get("minItems", 0)
        hi = min(s.get("maxItems", lo + 3), lo + 3)
        return [instance(root, items, r, depth + 1) for _ in range(r.randint(lo, hi))]
    if t == "object":
        props = s.get("properties", {})
        req = set(s.get("required", ()))
        return {k: instance(root, v, r, depth + 1) for k, v in props.items() if k in req or r.random() < .6}
    raise CannotGenerate(f"type {t!r}")


def _paths(v, path=()):
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, path + (i,))


def _set(doc, path, value):
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def _drop(doc, path):
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    return doc


def mutations(inst, r: random.Random) -> list:
    """Candidate invalid instances derived from the valid ``inst`` (most really are invalid;
    the caller keeps those jsonschema rejects)."""
    out = []
    for path, v in _paths(inst):
        if isinstance(v, dict) and v:
            out.append(_drop(inst, path + (r.choice(list(v)),)))                   # a key missing
            out.append(_set(inst, path, dict(v, **{"unexpected_" + r.choice(WORDS): 1})))
        if isinstance(v, str):
            out += [_set(inst, path, 17), _set(inst, path, v + "x" * r.choice([1, 50, 400, 5000])),
                    _set(inst, path, "not-" + v[:8] + "!")]
        elif isinstance(v, bool):
            out.append(_set(inst, path, "yes"))
        elif isinstance(v, (int, float)):
            out += [_set(inst, path, str(v)), _set(inst, path, v + 10**12), _set(inst, path, -v - 10**9),
                    _set(inst, path, v + 0.5)]
        elif isinstance(v, list):
            out += [_set(inst, path, v + v + v + v * 30), _set(inst, path, []), _set(inst, path, {"a": v})]
        elif v is None:
            out.append(_set(inst, path, 0))
    r.shuffle(out)
    return out


def dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def checked_instances(s: dict, r: random.Random, n_valid: int = 2, n_invalid: int = 3):
    """(valid texts, invalid texts), each checked with jsonschema (the schema's draft, else 2020-12;
    formats asserted)."""
    cls = jsonschema.validators.validator_for(s, default=jsonschema.Draft202012Validator)
    v = cls(s, format_checker=cls.FORMAT_CHECKER)
    valid: list = []
    for _ in range(20 * n_valid):
        if len(valid) >= n_valid:
            break
        try:
            x = instance(s, s, r)
        except (CannotGenerate, ValueError):
            continue
        if v.is_valid(x) and dumps(x) not in map(dumps, valid):
            valid.append(x)
    invalid: list = []
    for base in valid:
        for m in mutations(base, r):
            if len(invalid) >= n_invalid:
                break
            if not v.is_valid(m) and dumps(m) not in map(dumps, invalid):
                invalid.append(m)
    return [dumps(x) for x in valid], [dumps(x) for x in invalid]


def generate(count: int, seed: int) -> list[dict]:
    """``count`` schema records, a function of ``seed``."""
    r = random.Random(seed)
    rows = []
    draws = 0
    while len(rows) < count:
        draws += 1
        s = schema(r)
        jsonschema.Draft202012Validator.check_schema(s)
        valid, invalid = checked_instances(s, r)
        if not valid or not invalid:
            continue
        rows.append(dict(name=f"gen{seed}-{len(rows):03d}", schema=s, valid=valid, invalid=invalid,
                         source=f"benchmarks/schemas/generate.py --seed {seed} (draw {draws})",
                         license="CC0-1.0 (generated)"))
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=220)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=str(Path(__file__).with_name("fresh.jsonl")))
    args = ap.parse_args(argv)
    rows = generate(args.count, args.seed)
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} schemas to {args.out}")


if __name__ == "__main__":
    main()
