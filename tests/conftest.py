"""Shared fixtures: benchmark grammars from ../shared/bench and the real Qwen2.5 vocabulary."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

BENCH = Path(os.environ.get("STACKMASK_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))
GRAMMAR_DIR = BENCH / "grammars"
BENCH_GRAMMARS = ("json", "calc", "c", "sql", "java", "go")
AMBIGUOUS_BENCH = frozenset({"sql", "java", "go"})   # LALR(1) conflicts: need ambiguous=True


def read_bench_grammar(name: str) -> str:
    path = GRAMMAR_DIR / f"{name}.lark"
    if not path.exists():
        pytest.fail(f"benchmark grammar {path} not found (set STACKMASK_BENCH to the shared/bench folder)")
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
