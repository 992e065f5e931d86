"""Tag dispatch (tool calling) and trigger mode: compile time and mask/commit latency.

Scenarios, all with the Qwen2.5 vocabulary (151,936 ids):

* ``tools``: :func:`stackmask.grammars.tags.tool_calling` with three tools
  (JSON Schemas for their arguments) between Qwen's ``<tool_call>`` /
  ``</tool_call>`` special tokens; the trace is free text with several tool
  calls, the tags as special tokens (and one call with the tags spelled out).
* ``trigger``: the bundled JSON grammar behind ``trigger="</think>"``
  (reasoning text first, then a JSON document).
* ``schema`` (not run by default): the tool-call JSON Schema alone, to see
  what the free text and tags add to the compile.
* ``random-tools`` (not run by default): ``--tools N`` tools drawn with ``--tools-seed``
  (1-5 parameters each: strings, some with ``maxLength`` or a ``format``, enums, bounded
  integers, numbers, booleans, string arrays, small objects); the trace calls every tool
  once with arguments made for it.

For each: compile in this process with caching off (construction time, peak
RSS so far, automaton size), then teacher-forced replays of the trace: every
step times ``get_mask(state, out=buf)`` and ``commit`` with
``time.perf_counter_ns``; *cold* is the first replay, *warm* the second.
``--verify K`` compares ``get_mask`` with ``reference_mask`` (the O(|V|)
oracle) at K random steps (plus the steps right before and after each tag)
and fails on any mismatch.

    python benchmarks/tags_bench.py --verify 12
    python benchmarks/tags_bench.py --scenarios random-tools --tools 20 --verify 12
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import sys
import time

import numpy as np

from stackmask import Constraint, Vocab
from stackmask.grammars import load
from stackmask.grammars.tags import needs_glr, tool_calling
from stackmask.vocab import qwen2_5_encoding

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 40},
                       "unit": {"enum": ["celsius", "fahrenheit"]},
                       "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1},
                       "sites": {"type": "array", "items": {"type": "string"}, "maxItems": 5}},
        "required": ["query"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "send_email", "parameters": {
        "type": "object",
        "properties": {"to": {"type": "string", "format": "email"}, "subject": {"type": "string"},
                       "body": {"type": "string"}, "urgent": {"type": "boolean"}},
        "required": ["to", "subject", "body"], "additionalProperties": False}}},
]

TOOL_TEXTS = [
    'I will look that up for you.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", '
    '"unit": "celsius", "days": 3}}\n</tool_call>',
    'Let me search first. <tool_call>\n{"name": "search", "arguments": {"query": "stackmask grammar '
    'decoding", "limit": 5, "sites": ["github.com", "arxiv.org"]}}\n</tool_call>\nThen I will write '
    'the email.<tool_call>\n{"name": "send_email", "arguments": {"to": "ada@example.org", "subject": '
    '"Results", "body": "Hi Ada,\\nthe results are in.\\nBest", "urgent": false}}\n</tool_call>',
    'Sure! Here is the forecast: sunny, 21 °C. No tool needed for that, but I can also check '
    'Tokyo.<tool_call>{"name": "get_weather", "arguments": {"city": "東京"}}</tool_call>',
    'Two calls at once:\n<tool_call>\n{"name": "search", "arguments": {"query": "a < b and c > d"}}\n'
    '</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich", "days": 14}}\n'
    '</tool_call>',
]
SPELLED = ('Spelled-out tags work too: <tool_call>{"name": "search", "arguments": {"query": "x"}}'
           '</tool_call> done.')

TRIGGER_TEXTS = [
    'The user wants a JSON object with the city and a list of numbers. Let me think: 2 < 3, and '
    '"quotes" are fine here. </think>{"city": "Paris", "values": [1, 2.5, -3e2], "ok": true}',
    'Short.</think>[{"a": null}, "x", {"nested": {"deep": [[], {}]}}]',
]


def percentiles(xs) -> dict:
    a = np.sort(np.asarray(xs, dtype=np.float64)) / 1000.0
    q = lambda p: float(a[min(len(a) - 1, int(np.ceil(p / 100 * len(a))) - 1)])
    return {"n": len(a), "p50": q(50), "p90": q(90), "p99": q(99), "p99.9": q(99.9), "max": float(a[-1])}


def random_tools(n: int, seed: int) -> tuple[list, list[str]]:
    """``n`` tools with random parameter schemas, and one call text per tool."""
    import json
    rng = random.Random(seed)

    def param(j: int, t: int):
        k = rng.randrange(9)
        if k == 0:
            return {"type": "string"}, f"text {j}"
        if k == 1:
            m = rng.choice([20, 64, 200])
            return {"type": "string", "maxLength": m}, "abc xyz"[:m]
        if k == 2:
            vals = [f"v{i}_{t}_{j}" for i in range(rng.randrange(2, 6))]
            return {"enum": vals}, rng.choice(vals)
        if k == 3:
            hi = rng.choice([10, 100, 5000])
            return {"type": "integer", "minimum": 0, "maximum": hi}, rng.randrange(hi + 1)
        if k == 4:
            return {"type": "number"}, -12.5
        if k == 5:
            return {"type": "boolean"}, True
        if k == 6:
            return {"type": "array", "items": {"type": "string"}, "maxItems": 3}, ["a", "b c"]
        if k == 7:
            f, v = rng.choice([("date", "2026-11-29"), ("email", "ada@example.org"),
                               ("uri", "https://example.org/a?b=1"),
                               ("date-time", "2026-11-29T15:03:00Z")])
            return {"type": "string", "format": f}, v
        return ({"type": "object", "properties": {"id": {"type": "integer"}, "label": {"type": "string"}},
                 "required": ["id"], "additionalProperties": False}, {"id": 7, "label": "x"})

    tools, calls = [], []
    for t in range(n):
        ps = [param(j, t) for j in range(rng.randrange(1, 6))]
        props = {f"p{j}": schema for j, (schema, _) in enumerate(ps)}
        required = [f"p{j}" for j in range(len(ps)) if rng.random() < 0.5]
        tools.append({"type": "function", "function": {"name": f"tool_{t}", "parameters": {
            "type": "object", "properties": props, "required": required,
            "additionalProperties": False}}})
        args = {f"p{j}": v for j, (_, v) in enumerate(ps)}
        calls.append(f"Calling tool {t}.<tool_call>\n" + json.dumps(
            {"name": f"tool_{t}", "arguments": args}, ensure_ascii=False) + "\n</tool_call>")
    return tools, calls


def replay(c: Constraint, traces) -> tuple[list, list]:
    buf = np.zeros(c.mask_words, dtype=np.int32)
    masks, commits = [], []
    clock = time.perf_counter_ns
    for trace in traces:
        s = c.start()
        for t in trace:
            t0 = clock()
            c.get_mask(s, out=buf)
            t1 = clock()
            s2 = c.commit(s, t)
            t2 = clock()
            if not (buf[t >> 5] >> (t & 31)) & 1:
                raise SystemExit(f"token {t} committed but not in its mask")
            masks.append(t1 - t0)
            commits.append(t2 - t1)
            s = s2
        t0 = clock()
        c.get_mask(s, out=buf)
        masks.append(clock() - t0)
        if not c.is_accepting(s):
            raise SystemExit("trace is not a complete sentence")
    return masks, commits


def verify(c: Constraint, traces, k: int, rng: random.Random, special_ids) -> int:
    steps = [(i, j) for i, tr in enumerate(traces) for j in range(len(tr) + 1)]
    pick = set(rng.sample(steps, min(k, len(steps))))
    for i, tr in enumerate(traces):          # around every special token
        for j, t in enumerate(tr):
            if t in special_ids:
                pick |= {(i, j), (i, j + 1)}
    bad = 0
    for i, tr in enumerate(traces):
        s = c.start()
        for j in range(len(tr) + 1):
            if (i, j) in pick and not np.array_equal(c.get_mask(s), c.reference_mask(s)):
                print(f"MISMATCH trace {i} step {j}", file=sys.stderr)
                bad += 1
            if j < len(tr):
                s = c.commit(s, tr[j])
    print(f"verified {len(pick)} masks against the oracle: {bad} mismatches", file=sys.stderr)
    return bad


def scenario(name: str, make, traces, args, vocab) -> int:
    gc.collect()
    t0 = time.perf_counter()
    c = make()
    build = time.perf_counter() - t0
    st = c.compile_stats()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    n_tokens = sum(len(t) for t in traces)
    print(f"\n### {name}\n")
    print(f"construct (compile, cache off): {build:.1f} s; peak RSS so far {rss:.2f} GB; lexer configs "
          f"{st.get('configs')}, automaton states {st.get('states')}, edges {st.get('edges')}, "
          f"token sets {st.get('weights')}, acyclic {st.get('acyclic')}, max depth {st.get('max_depth')}; "
          f"{len(traces)} traces, {n_tokens} tokens\n")
    print("| pass | masks | get_mask p50 | p90 | p99 | p99.9 | max | commit p50 | p90 | p99 | p99.9 | max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label in ("cold", "warm"):
        gc.collect()
        m, cm = replay(c, traces)
        pm, pc = percentiles(m), percentiles(cm)
        print(f"| {label} | {pm['n']} | {pm['p50']:.1f} | {pm['p90']:.1f} | {pm['p99']:.1f} | "
              f"{pm['p99.9']:.1f} | {pm['max']:.1f} | {pc['p50']:.1f} | {pc['p90']:.1f} | "
              f"{pc['p99']:.1f} | {pc['p99.9']:.1f} | {pc['max']:.1f} |")
    print("\n(µs per call)")
    sys.stdout.flush()
    if args.verify:
        return verify(c, traces, args.verify, random.Random(0), set(c.special_terminals))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verify", type=int, default=0, help="compare K random masks with the oracle")
    ap.add_argument("--scenarios", default="tools,trigger",
                    help="comma-separated: tools, trigger, schema (the tool-call JSON Schema alone, "
                         "for comparison: what the tag skeleton costs on top), random-tools")
    ap.add_argument("--tools", type=int, default=20, help="random-tools: how many tools")
    ap.add_argument("--tools-seed", type=int, default=1, help="random-tools: the seed")
    args = ap.parse_args()
    vocab = Vocab.qwen2_5()
    enc = qwen2_5_encoding()
    bad = 0
    which = args.scenarios.split(",")
    if "tools" in which:
        g = tool_calling(TOOLS)
        traces = [enc.encode(t, allowed_special="all") for t in TOOL_TEXTS]
        traces.append(enc.encode(SPELLED, disallowed_special=()))
        bad += scenario("tool calling (3 tools, Qwen <tool_call> special tokens)",
                        lambda: Constraint(g, vocab, ambiguous=needs_glr(g), cache_dir=False,
                                           compile_budget_s=None, progress=False),
                        traces, args, vocab)
    if "random-tools" in which:
        tools, calls = random_tools(args.tools, args.tools_seed)
        gr = tool_calling(tools)
        traces = [enc.encode(t, allowed_special="all") for t in calls]
        bad += scenario(f"tool calling ({args.tools} random tools, seed {args.tools_seed})",
                        lambda: Constraint(gr, vocab, ambiguous=needs_glr(gr), cache_dir=False,
                                           compile_budget_s=None, progress=False),
                        traces, args, vocab)
    if "schema" in which:
        from stackmask import Grammar
        from stackmask.grammars.tags import tool_call_schema
        gs = Grammar.from_json_schema(tool_call_schema(TOOLS))
        calls = [enc.encode('{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'),
                 enc.encode('{"name": "search", "arguments": {"query": "a < b", "sites": ["x"]}}')]
        bad += scenario("the tool-call JSON Schema alone (no tags, no free text)",
                        lambda: Constraint(gs, vocab, ambiguous=needs_glr(gs), cache_dir=False,
                                           compile_budget_s=None, progress=False),
                        calls, args, vocab)
    if "trigger" in which:
        traces = [enc.encode(t, disallowed_special=()) for t in TRIGGER_TEXTS]
        bad += scenario('trigger mode (JSON grammar after "</think>")',
                        lambda: Constraint(load("json"), vocab, trigger="</think>", cache_dir=False,
                                           compile_budget_s=None, progress=False),
                        traces, args, vocab)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
