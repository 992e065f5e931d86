"""A checkout without ``../shared/bench``: the tests that need its grammars skip, with
the reason, and nothing fails (the first-contact run of a newcomer who cloned only this
repository). Run in a subprocess over files whose tests read the benchmark grammars
in each of the ways they do: ``conftest``'s ``read_bench_grammar`` and
``bench_grammar_path``, the ``bench_grammar`` fixture, a file's ``needs_grammars`` marker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = ("test_lalr.py", "test_scanner.py", "test_glr_vs_lark.py", "test_generate.py",
         "test_glr_step.py", "test_normal_form.py")


def test_bench_tests_skip_with_a_reason_without_the_bench_folder(tmp_path):
    env = dict(os.environ, STACKMASK_BENCH=str(tmp_path / "no-bench"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                        "-rs", *[str(HERE / f) for f in FILES]],
                       cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    # pytest's summary line (stderr may end with plugins' warnings)
    summary = [ln for ln in r.stdout.strip().splitlines() if re.search(r"\d+ (passed|skipped)", ln)][-1]
    skipped = re.search(r"(\d+) skipped", summary)
    assert skipped and int(skipped.group(1)) >= 20, summary
    assert "failed" not in summary and "error" not in summary, summary
    assert "not found" in out          # the reason names the missing folder or grammar


def test_every_test_file_collects_without_the_bench_folder(tmp_path):
    """No test module reads the benchmark folder when imported: every file collects (the
    tests that need the grammars then skip as above)."""
    env = dict(os.environ, STACKMASK_BENCH=str(tmp_path / "no-bench"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                        "--collect-only", str(HERE)],
                       cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "error" not in out.lower().split("collected")[-1], out[-3000:]
    assert re.search(r"\d+(/\d+)? tests collected", out), out[-3000:]
