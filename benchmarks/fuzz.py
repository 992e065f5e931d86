"""Long fuzzing run: the hypothesis fuzzers of tests/test_fuzz.py with many examples.

    python benchmarks/fuzz.py [--examples N] [--only grammar,regex,vocab,tokens] [--seed S]

Prints, per fuzzer, the number of cases run, the outcome categories with their counts
and the slowest cases. Outcomes are checked results ("compiled:walked": masks equal
the oracle along a walk, commits agree with masks; "accepted-some"/"all-rejected":
random ids committed, each agreeing with the mask) or documented exceptions
("GrammarError", "LimitExceeded:<limit>"; "(validate missed)" marks a GrammarError
that validate() did not predict). A failing case (any other exception, or a wrong
mask) is printed with hypothesis's minimal example and the run exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=500, help="examples per fuzzer")
    ap.add_argument("--only", default="grammar,regex,vocab,tokens")
    ap.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    args = ap.parse_args()
    os.environ["STACKMASK_FUZZ_EXAMPLES"] = str(args.examples)
    os.environ.setdefault("STACKMASK_CACHE_DIR", "off")
    sys.path.insert(0, str(HERE.parent / "tests"))
    sys.path.insert(0, str(HERE.parent))
    import test_fuzz
    from hypothesis import seed as hseed

    fuzzers = {"grammar": test_fuzz.test_fuzz_grammar_text, "regex": test_fuzz.test_fuzz_regex_terminals,
               "vocab": test_fuzz.test_fuzz_vocabularies, "tokens": test_fuzz.test_fuzz_token_sequences}
    failed = False
    total = 0
    for name in args.only.split(","):
        fn = fuzzers[name]
        if args.seed is not None:
            fn = hseed(args.seed)(fn)
        test_fuzz.OUTCOMES.clear()
        test_fuzz.SLOWEST.clear()
        t0 = time.perf_counter()
        try:
            fn()
            status = "ok"
        except Exception:          # noqa: BLE001 - report and go on with the next fuzzer
            failed = True
            status = "FAILED"
            traceback.print_exc()
        n = sum(test_fuzz.OUTCOMES.values())
        total += n
        print(f"{name}: {status}, {n} cases in {time.perf_counter() - t0:.0f} s", flush=True)
        for outcome, count in sorted(test_fuzz.OUTCOMES.items(), key=lambda x: -x[1]):
            print(f"  {count:6d}  {outcome}")
        for sec, _, outcome, what in test_fuzz.SLOWEST[:3]:
            print(f"  slowest: {sec:.1f} s ({outcome}) {what!r:.160}")
    print(f"total: {total} cases{' (FAILURES above)' if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
