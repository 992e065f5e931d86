"""First contact with the command line and the package: help, grammar names, clear errors,
progress logging, token-id types, the Python 3.10 import fallback."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stackmask
from stackmask import report
from stackmask.__main__ import main as cli_main
from stackmask.report.workload import bench_dir

from conftest import GRAMMAR_DIR

needs_bench = pytest.mark.skipif(not (GRAMMAR_DIR / "calc.lark").exists(),
                                 reason=f"benchmark grammars not found in {GRAMMAR_DIR} "
                                        "(set STACKMASK_BENCH to the shared/bench folder)")


@pytest.fixture(autouse=True)
def _restore_stackmask_logger():
    """The CLI configures the ``stackmask`` logger; leave it as found for other tests."""
    logger = logging.getLogger("stackmask")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    logger.handlers[:] = handlers


@pytest.mark.parametrize("argv", [["report", "--help"], ["report", "-h"], ["--grammar", "json", "--help"]])
def test_report_help_lists_the_report_options(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(argv)
    assert e.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--grammar", "--corpus", "--compare", "--verify", "--plot", "--quiet"):
        assert opt in out, opt


def test_top_level_help_names_both_commands(capsys):
    assert cli_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "stackmask demo" in out and "stackmask report --help" in out


def test_demo_unknown_grammar_is_a_one_line_error(tmp_path, capsys):
    assert cli_main(["demo", "--grammar", str(tmp_path / "missing.lark")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --grammar") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_demo_missing_benchmark_grammar_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setenv("STACKMASK_BENCH", "/nonexistent-stackmask-bench")
    assert bench_dir().as_posix() == "/nonexistent-stackmask-bench"
    assert cli_main(["demo", "--grammar", "c"]) == 2
    err = capsys.readouterr().err
    assert "benchmark grammar 'c' not found" in err and "STACKMASK_BENCH" in err
    assert len(err.strip().splitlines()) == 1


def test_demo_missing_text_file_is_a_clear_error(tmp_path, capsys):
    assert cli_main(["demo", "--text-file", str(tmp_path / "none.txt")]) == 2
    err = capsys.readouterr().err
    assert "--text-file" in err and "Traceback" not in err


@needs_bench
def test_demo_resolves_benchmark_grammar_names_like_report(capsys):
    """`demo --grammar calc` reads the benchmark grammar (as `report --grammar calc` does)
    and decodes the first benchmark trace by default; every mask is checked against the
    reference oracle."""
    rc = cli_main(["demo", "--grammar", "calc", "--quiet", "--text", "(1+2)*3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "grammar: calc" in out
    assert "the document is a sentence of the grammar" in out
    assert "masks are equal to the reference oracle's" in out


@needs_bench
def test_json_is_bundled_and_json_outlines_is_the_benchmark_file():
    """`json` is the bundled RFC 8259 grammar; the benchmark folder's json.lark (adapted
    from outlines) is `json-outlines`, replayed on its own traces by default."""
    from stackmask.grammars import load
    from stackmask.report.workload import bench_grammar_path, default_corpus
    bundled = report.load_workload("json")
    assert bundled.source.startswith("bundled") and bundled.text == load("json")
    w = report.load_workload("json-outlines")
    assert bench_grammar_path("json-outlines").resolve() == (GRAMMAR_DIR / "json.lark").resolve()
    assert w.text == (GRAMMAR_DIR / "json.lark").read_text(encoding="utf-8") != bundled.text
    assert not w.ambiguous
    docs = default_corpus(w)
    assert docs and all("tokens" in d for d in docs)       # benchmarks/traces/json-outlines.jsonl
    with pytest.raises(report.WorkloadError, match="json-outlines"):
        bench_grammar_path("json")


def test_plot_without_matplotlib_fails_before_running(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # `import matplotlib` raises

    def no_run(*a, **k):
        raise AssertionError("the engines ran although --plot cannot draw")
    monkeypatch.setattr(report, "run_isolated", no_run)
    monkeypatch.setattr(report, "load_vocab", no_run)
    assert report.main(["--plot", "cdf.png"]) == 2
    err = capsys.readouterr().err
    assert "--plot needs matplotlib" in err and "Traceback" not in err


def test_configure_logging_shows_progress_on_stderr_once(capsys):
    report.configure_logging()
    report.configure_logging()                  # no second handler
    logging.getLogger("stackmask.report").info("compiling %s", "sql")
    err = capsys.readouterr().err
    assert err.count("stackmask.report: compiling sql") == 1
    # the library's own "stackmask: " prefix is not printed after the logger's name
    logging.getLogger("stackmask.runtime").info("stackmask: exploring %d", 3)
    err = capsys.readouterr().err
    assert "stackmask.runtime: exploring 3" in err and "stackmask: stackmask" not in err
    report.configure_logging(quiet=True)
    logging.getLogger("stackmask.report").info("hidden")
    logging.getLogger("stackmask.report").warning("shown")
    err = capsys.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_run_engine_logs_its_stages(caplog):
    vocab, encode = report.load_vocab("qwen2.5")
    w = report.load_workload("json")
    with caplog.at_level(logging.INFO, logger="stackmask"):
        r = report.run_engine("stackmask", "qwen2.5", None, w, [encode("[1]")],
                              {"verify": 1, "cache_dir": False})
    assert "error" not in r, r.get("traceback")
    msgs = [rec.getMessage() for rec in caplog.records if rec.name == "stackmask.report"]
    assert any(m.startswith("stackmask: compiling json") for m in msgs), msgs
    assert any(m.startswith("stackmask: compiled in") for m in msgs), msgs
    assert any("reference oracle" in m for m in msgs), msgs


def test_report_heartbeat_while_an_engine_is_silent(monkeypatch, caplog):
    """run_isolated logs a line every HEARTBEAT_S while the engine's process runs."""
    monkeypatch.setattr(report, "HEARTBEAT_S", 0.2)
    monkeypatch.setattr(report, "_child", _sleepy_child)
    with caplog.at_level(logging.INFO, logger="stackmask"):
        r = report.run_isolated("stackmask", "qwen2.5", None, None, [], {}, timeout=30)
    assert r == {"engine": "stackmask", "slept": True}
    assert any("stackmask: still running" in rec.getMessage() for rec in caplog.records)


def _sleepy_child(conn, level, name, *args):
    import time
    time.sleep(1.0)
    conn.send({"engine": name, "slept": True})
    conn.close()


# -- token ids -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    vocab = stackmask.Vocab([b"a", b"b", b"ab", b"x"], eos_token_ids=[3])
    return stackmask.Constraint('start: "a" "b"*', vocab, cache_dir=False, progress=False)


@pytest.mark.parametrize("bad", [3.0, 1.0, True, False, np.bool_(True), "a", None, np.float64(1.0)])
def test_token_id_of_a_wrong_type_is_type_error(tiny, bad):
    s = tiny.start()
    with pytest.raises(TypeError, match="token id must be an int"):
        tiny.commit(s, bad)
    with pytest.raises(TypeError, match="token id must be an int"):
        tiny.validate_tokens(s, [0, bad])


@pytest.mark.parametrize("good", [0, np.int64(0), np.int32(0), np.uint8(0), np.intc(0)])
def test_numpy_integer_token_ids_keep_working(tiny, good):
    s = tiny.commit(tiny.start(), good)
    assert tiny.is_accepting(s)
    assert tiny.validate_tokens(tiny.start(), [good, np.int64(1)]) == 2


def test_out_of_range_token_id_stays_value_error(tiny):
    for bad in (-1, 4, np.int64(10**6)):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            tiny.commit(tiny.start(), bad)


# -- Python 3.10 -----------------------------------------------------------------------------
def test_regex_modules_fall_back_to_sre_parse_without_re_parser():
    """Python 3.10 has no ``re._parser``/``re._constants``: the lexer and the regex front
    end fall back to ``sre_parse``/``sre_constants`` (as Lark does). Simulated on 3.11+ by
    blocking the 3.11 modules in a fresh interpreter; on 3.10 the block is a no-op."""
    code = textwrap.dedent("""
        import sys, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_parse, sre_constants          # 3.11's shims (3.10's modules), bound first
        import lark.utils                        # Lark picks its module by version
        sys.modules.pop("re._parser", None), sys.modules.pop("re._constants", None)

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name in ("re._parser", "re._constants"):
                    raise ImportError(f"No module named {name!r} (simulated Python 3.10)")
                return None
        sys.meta_path.insert(0, Block())
        import stackmask
        from stackmask.lexer import regex as lr
        from stackmask.grammars import regex as gr
        assert lr.sre_parse is sre_parse and gr.C is sre_constants, (lr.sre_parse, gr.C)
        vocab = stackmask.Vocab([b"a", b"b", b"ab", b"ba"], eos_token_ids=[])
        c = stackmask.Constraint(stackmask.Grammar.from_regex("(ab)+"), vocab, cache_dir=False,
                                 progress=False)
        s = c.commit(c.start(), 2)
        assert c.is_accepting(s)
        c2 = stackmask.Constraint('start: W\\nW: /[ab]+?b/', vocab, cache_dir=False,
                                  progress=False)
        assert c2.is_accepting(c2.commit(c2.start(), 2))
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
