"""Counted strings: construction time by ``maxLength``, and decoding inside a long string.

Each construction runs in its own process with the artifact cache off (Qwen2.5; the
vocabulary index is loaded before the clock): construction + start + first mask, the
lexer's states and what the mask automaton compiled. Then one long string is decoded token
by token (its Qwen2.5 tokenization), timing get_mask and commit per token.

    python benchmarks/counted_strings.py
    python benchmarks/counted_strings.py --lengths 300 65535 --decode 65535 --chars 8000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time


def _schema(kind: str, n: int) -> dict:
    return {"type": "object", "properties": {"summary": {"type": "string", kind: n}},
            "required": ["summary"]}


def construct(spec: str) -> dict:
    """One construction (``maxLength=N``, ``minLength=N`` or a regex ``/.../`` as the
    one terminal of a grammar), in this process."""
    from stackmask import Constraint, Grammar, Vocab
    vocab = Vocab.qwen2_5()
    Constraint(Grammar.from_json_schema({"type": "integer"}), vocab, cache_dir=False,
               progress=False)                    # the vocabulary index, before the clock
    if spec.startswith("/"):
        grammar = f"start: A\nA: {spec}\n"
    else:
        kind, n = spec.split("=")
        grammar = Grammar.from_json_schema(_schema(kind, int(n)))
    t0 = time.perf_counter()
    c = Constraint(grammar, vocab, cache_dir=False, progress=False)
    c.get_mask(c.start())
    st = c.compile_stats()
    return {"spec": spec, "seconds": time.perf_counter() - t0, "lexer_states": c.scanner.dfa.n_states,
            "configs": st["configs"], "aliased": st["configs_aliased"], "states": st["states"]}


def decode(n: int, chars: int, seed: int = 1) -> dict:
    """Decode an English-like body of ``chars`` characters in a ``maxLength: n`` string."""
    import numpy as np

    from stackmask import Constraint, Grammar, Vocab
    from stackmask.vocab import qwen2_5_encoding
    vocab, enc = Vocab.qwen2_5(), qwen2_5_encoding()
    c = Constraint(Grammar.from_json_schema(_schema("maxLength", n)), vocab, cache_dir=False,
                   progress=False)
    rng = random.Random(seed)
    words = ("the of and to in is was for on that with as by at from it an be this are or "
             "which has not").split()
    body = " ".join(rng.choice(words) for _ in range(chars))[:min(n, chars)]
    ids = enc.encode('{"summary": "' + body + '"}')
    out = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    s = c.start()
    mask_t, commit_t = [], []
    for t in ids:
        a = time.perf_counter()
        c.get_mask(s, out)
        b = time.perf_counter()
        s = c.commit(s, t)
        mask_t.append(b - a)
        commit_t.append(time.perf_counter() - b)
    if not c.is_accepting(s):
        raise SystemExit("the decoded text was not accepted")
    pct = (50, 90, 99, 100)
    return {"tokens": len(ids),
            "get_mask_us": dict(zip(("p50", "p90", "p99", "max"), np.percentile(np.array(mask_t) * 1e6, pct))),
            "commit_us": dict(zip(("p50", "p90", "p99", "max"), np.percentile(np.array(commit_t) * 1e6, pct)))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="*", default=[40, 300, 1000, 4096, 65535])
    ap.add_argument("--extra", nargs="*", default=["minLength=5000", "/a{1,20000}/"])
    ap.add_argument("--decode", type=int, default=65535, help="maxLength of the decoded string")
    ap.add_argument("--chars", type=int, default=8000, help="characters decoded")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)     # worker mode
    a = ap.parse_args()
    if a.one is not None:
        print(json.dumps(construct(a.one)))
        return
    print("| spec | construct | lexer states | configurations compiled | aliases | automaton states |")
    print("|---|---|---|---|---|---|")
    for spec in [f"maxLength={n}" for n in a.lengths] + a.extra:
        r = json.loads(subprocess.run([sys.executable, __file__, "--one", spec], check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1])
        print(f"| {spec} | {r['seconds']:.2f} s | {r['lexer_states']:,} | {r['configs']:,} | "
              f"{r['aliased']:,} | {r['states']:,} |", flush=True)
    if a.decode:
        d = decode(a.decode, a.chars)
        for k in ("get_mask_us", "commit_us"):
            v = d[k]
            print(f"{k} over {d['tokens']} tokens: p50 {v['p50']:.1f}, p90 {v['p90']:.1f}, "
                  f"p99 {v['p99']:.1f}, max {v['max']:.1f}")


if __name__ == "__main__":
    main()
