"""Shared fixtures: benchmark grammars from ../shared/bench and the real Qwen2.5 vocabulary."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

BENCH = Path(os.environ.get("STACKMASK_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))
GRAMMAR_DIR = BENCH / "grammars"
# "json-outlines" is GRAMMAR_DIR/json.lark (adapted from outlines), not the bundled "json"
# grammar; every other name is GRAMMAR_DIR/<name>.lark (bench_grammar_path)
BENCH_GRAMMARS = ("json-outlines", "calc", "c", "sql", "java", "go")
AMBIGUOUS_BENCH = frozenset({"sql", "java", "go"})   # LALR(1) conflicts: need ambiguous=True


def accepts(c, text) -> bool:
    """Whether ``text`` (bytes, or a str as UTF-8) is a sentence of ``c``'s grammar:
    committed as raw bytes from the start, then accepting (a rejected byte: False)."""
    from stackmask import TokenRejected
    data = text.encode() if isinstance(text, str) else text
    try:
        s = c.commit_bytes(c.start(), data)
    except TokenRejected:
        return False
    return c.is_accepting(s)



_OWN_CACHE = None


def pytest_configure(config):
    """Compiled artifacts go to a fresh cache directory per test session (never the user's
    cache: artifacts written by another version of the code must not leak into tests)."""
    global _OWN_CACHE
    if "STACKMASK_CACHE_DIR" not in os.environ:
        _OWN_CACHE = tempfile.mkdtemp(prefix="stackmask-test-cache-")
        os.environ["STACKMASK_CACHE_DIR"] = _OWN_CACHE


def pytest_unconfigure(config):
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)
        os.environ.pop("STACKMASK_CACHE_DIR", None)


def require_native() -> None:
    """Skip the calling test without the compiled extension (``stackmask._native``), or
    fail it under ``STACKMASK_REQUIRE_NATIVE=1`` (set by ``.ci/run``, which builds it)."""
    from stackmask import native
    if native.module() is None:
        if os.environ.get("STACKMASK_REQUIRE_NATIVE") == "1":
            pytest.fail(f"STACKMASK_REQUIRE_NATIVE=1 but {native.describe()}")
        pytest.skip(native.describe())


@pytest.fixture
def needs_native(monkeypatch):
    """The compiled path for the test (``STACKMASK_PURE_PYTHON`` unset), or a skip
    (:func:`require_native`)."""
    from stackmask import native
    monkeypatch.delenv(native.ENV, raising=False)
    require_native()


def bench_grammar_path(name: str) -> Path:
    """The Lark file of benchmark grammar ``name`` (one of BENCH_GRAMMARS) in GRAMMAR_DIR."""
    from stackmask.report.workload import bench_grammar_file
    return GRAMMAR_DIR / bench_grammar_file(name)


def read_bench_grammar(name: str) -> str:
    path = bench_grammar_path(name)
    if not path.exists():       # a checkout without ../shared/bench: skipped, with the reason
        pytest.skip(f"benchmark grammar {path} not found (set STACKMASK_BENCH to the shared/bench folder)")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def bench_grammar():
    return read_bench_grammar


@pytest.fixture(scope="session")
def qwen_vocab():
    from stackmask import Vocab
    return Vocab.qwen2_5()


@pytest.fixture(scope="session")
def qwen_encoding():
    from stackmask.vocab import qwen2_5_encoding
    return qwen2_5_encoding()


# Benchmark-grammar constraints are expensive to build, so they are shared by the whole
# session. The eager compile of c/sql/java/go takes minutes each on the 2-core CI machine, so
# the default run compiles those lazily (the same automaton construction, done per state on
# first use: masks are identical, which test_compile.py and test_artifact.py check on smaller
# grammars); STACKMASK_TEST_EAGER=1 or slow tests (eager=True) compile them up front.
LAZY_BY_DEFAULT = frozenset({"c", "sql", "java", "go"})
_BENCH_CONSTRAINTS: dict = {}


def plain_copy(dwa, tables):
    """An independent copy of Parser DWA ``dwa`` (over ``tables``), through its plain data
    encoded and decoded as an artifact stores it."""
    from stackmask.compile.parser_dwa import ParserDWA
    from stackmask.plain import Codec
    codec = Codec()
    data = codec.loads(codec.dumps(dwa.to_data()))
    return ParserDWA.from_data(tables.lr, tables.normal_form.accepts_empty, data)


def bench_constraint(name: str, vocab, eager: bool | None = None):
    from stackmask import Constraint
    if eager is None:
        eager = name not in LAZY_BY_DEFAULT or os.environ.get("STACKMASK_TEST_EAGER") == "1"
    key = (name, vocab.fingerprint, eager)
    c = _BENCH_CONSTRAINTS.get(key)
    if c is None:
        if eager and name in LAZY_BY_DEFAULT:
            # an eagerly compiled big grammar holds several GB: keep one at a time
            for k in [k for k in _BENCH_CONSTRAINTS if k[2] and k[0] in LAZY_BY_DEFAULT]:
                del _BENCH_CONSTRAINTS[k]
            import gc
            gc.collect()
        c = _BENCH_CONSTRAINTS[key] = Constraint(read_bench_grammar(name), vocab,
                                                 ambiguous=name in AMBIGUOUS_BENCH,
                                                 compile="eager" if eager else "lazy")
    return c


def run_in_threads(fn, seeds, switch_interval: float) -> dict:
    """``fn(seed, barrier)`` in one thread per seed, all released together by the
    barrier, with the interpreter switching threads every ``switch_interval`` s;
    ``{seed: result}``. Fails the test if any thread raised."""
    import sys
    import threading
    results: dict = {}
    errors: list = []
    barrier = threading.Barrier(len(seeds))

    def work(seed):
        try:
            results[seed] = fn(seed, barrier)
        except BaseException as e:      # pragma: no cover - reported below
            errors.append(repr(e))

    old = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)
    try:
        threads = [threading.Thread(target=work, args=(sd,)) for sd in seeds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    return results
