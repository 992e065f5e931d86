"""`stackmask report`: workload resolution, replay, verification, peers, output formats."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stackmask.__main__ import main as cli_main
from stackmask.report import format_table, main, percentiles, run_engine, slowest, summarize
from stackmask.report.engines import clear_special_bits, strip_rule_priorities
from stackmask.report.workload import (WorkloadError, default_corpus, load_traces, load_vocab,
                                       load_workload)


def test_strip_rule_priorities_keeps_terminal_priorities():
    text = "start: a\noperand.3: NAME\n?expr.-1 : x\nNAME.2: /[a-z]+/\nfoo.bar: x\n"
    out, n = strip_rule_priorities(text)
    assert n == 2
    assert "operand: NAME" in out and "?expr : x" in out
    assert "NAME.2:" in out          # terminal priorities change the lexing: kept


def test_clear_special_bits():
    m = np.full(3, -1, dtype=np.int32)
    out = clear_special_bits(m, np.array([0, 33], dtype=np.int64), 70)
    bits = np.unpackbits(out.view(np.uint8), bitorder="little")
    assert bits[0] == 0 and bits[33] == 0 and bits[1] == 1 and bits[69] == 1
    assert not bits[70:].any()
    assert m[0] == -1                # the input is not modified


def test_percentiles():
    d = percentiles([1000, 2000, 3000, 4000])
    assert d["n"] == 4 and d["p50"] == pytest.approx(2.5) and d["max"] == pytest.approx(4.0)
    assert percentiles([]) == {"n": 0}


def test_workload_resolution(tmp_path):
    w = load_workload("json")
    assert w.kind == "lark" and not w.ambiguous and "value" in w.text
    assert len(default_corpus(w)) >= 10
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    ws = load_workload(str(schema))
    assert ws.kind == "schema" and ws.schema == {"type": "integer"}
    with pytest.raises(WorkloadError, match="not a bundled grammar"):
        load_workload("no-such-grammar")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(WorkloadError, match="not valid JSON"):
        load_workload(str(bad))
    with pytest.raises(WorkloadError, match="nothing is downloaded"):
        load_vocab("org/some-model")


def test_traces_from_corpus_files(tmp_path):
    vocab, encode = load_vocab("qwen2.5")
    w = load_workload("json")
    f = tmp_path / "c.jsonl"
    f.write_text('{"text": "[1, 2]"}\n"{}"\n{"tokens": [58, 16, 60]}\n')
    plain = tmp_path / "doc.txt"
    plain.write_text('{"a": true}')
    tr = load_traces(w, [str(f), str(plain)], "qwen2.5", vocab, encode)
    assert tr.tokens[0] == encode("[1, 2]") and tr.tokens[1] == encode("{}")
    assert tr.tokens[2] == [58, 16, 60] and tr.tokens[3] == encode('{"a": true}')
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tokens": [999999999]}\n')
    with pytest.raises(WorkloadError, match="outside the vocabulary"):
        load_traces(w, [str(bad)], "qwen2.5", vocab, encode)
    with pytest.raises(WorkloadError, match="no such file"):
        load_traces(w, [str(tmp_path / "missing.jsonl")], "qwen2.5", vocab, encode)


def test_run_engine_in_process_counts_and_rejections():
    vocab, encode = load_vocab("qwen2.5")
    w = load_workload("json")
    good = encode('{"k": [1, 2.5, null]}')
    bad = encode('{"k": [1,, 2]}')
    r = run_engine("stackmask", "qwen2.5", None, w, [good, bad], {"verify": 4, "cache_dir": False})
    assert "error" not in r, r.get("traceback")
    assert r["cold"]["accepted"] == 1 and r["warm"]["accepted"] == 1
    rej = r["cold"]["first_reject"]
    assert rej["trace"] == 1 and rej["in_mask"] is False
    assert len(r["cold"]["mask_ns"]) == len(good) + 1 + rej["step"] + 1
    assert r["verify"] == (4, 0)
    rows = summarize([r], 2)
    table = format_table(rows)
    assert table.count("| stackmask |") == 2 and "| 1/2 |" in table


def test_run_engine_on_a_json_schema(tmp_path):
    """A JSON Schema workload: conversion options and Constraint options both reach
    their target (the stackmask engine passes cache_dir/compile/budget through
    schema_constraint)."""
    vocab, encode = load_vocab("qwen2.5")
    f = tmp_path / "s.json"
    f.write_text('{"type": "object", "properties": {"n": {"type": "integer", "maximum": 20}}, '
                 '"required": ["n"]}')
    w = load_workload(str(f))
    good, bad = encode('{"n": 12}'), encode('{"n": 21}')
    r = run_engine("stackmask", "qwen2.5", None, w, [good, bad],
                   {"verify": 3, "cache_dir": False, "compile": "lazy"})
    assert "error" not in r, r.get("traceback")
    assert r["cold"]["accepted"] == 1 and r["cold"]["first_reject"]["trace"] == 1
    checked, different = r["verify"]        # steps past the rejection are not checked
    assert checked >= 1 and different == 0


def test_report_cli_end_to_end(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = cli_main(["report", "--limit", "3", "--verify", "3", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "| stackmask | cold |" in text and "| stackmask | warm |" in text
    assert "3 masks checked against the reference oracle, 0 different" in text
    raw = json.loads(out.read_text())
    assert raw["traces"] == 3 and raw["rows"][0]["accepted"] == 3
    assert len(raw["engines"][0]["cold"]["mask_ns"]) == raw["tokens"] + 3
    # the rows name each pass's slowest masks by trace and step
    for row in raw["rows"]:
        ns = raw["engines"][0][row["pass"]]["mask_ns"]
        starts = raw["engines"][0][row["pass"]]["trace_starts"]
        got = row["slowest_masks"]
        assert len(got) == 5 and [g["us"] for g in got] == sorted((g["us"] for g in got), reverse=True)
        for g in got:
            assert g["us"] == round(ns[starts[g["trace"]] + g["step"]] / 1e3, 1)
        assert got[0]["us"] == round(max(ns) / 1e3, 1)


def test_slowest_masks_are_named_by_trace_and_step():
    ns = [5000, 1000, 9040, 2000, 7000, 3000, 8000]          # traces of 3, 2 and 2 masks
    got = slowest(ns, [0, 3, 5], k=3)
    assert [(g["trace"], g["step"]) for g in got] == [(0, 2), (2, 1), (1, 1)]
    assert [g["us"] for g in got] == [9.0, 8.0, 7.0]      # ns -> µs, rounded
    assert slowest([], [], k=3) == []
    assert [(g["trace"], g["step"]) for g in slowest([4000, 6000], [0, 1], k=5)] == [(1, 0), (0, 0)]


def test_report_exit_status_when_stackmask_rejects(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "[1, 2]"}\n{"text": "[1 2]"}\n')
    rc = main(["--corpus", str(corpus), "--verify", "0"])
    text = capsys.readouterr().out
    assert rc == 1 and "stackmask rejected a trace" in text


def test_report_unknown_peer_and_missing_corpus(tmp_path, capsys):
    assert main(["--compare", "nosuch"]) == 2
    g = tmp_path / "g.lark"
    g.write_text('start: "a"+\n')
    assert main(["--grammar", str(g)]) == 2
    assert "give --corpus" in capsys.readouterr().err


def test_report_compares_glrmask_on_same_tokens(tmp_path, capsys):
    pytest.importorskip("glrmask")
    rc = main(["--limit", "2", "--verify", "0", "--compare", "glrmask"])
    text = capsys.readouterr().out
    assert rc == 0
    row = next(line for line in text.splitlines() if line.startswith("| glrmask | cold |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4] == "2/2"
    same, n = map(int, cells[-1].split("/"))
    assert n > 0 and same == n        # same grammar, same tokens: the same masks
    assert "stackmask / glrmask (cold)" in text


def test_repeat_report_summarizes_medians_ranges_and_ratios():
    """benchmarks/repeat_report.py: per figure the median and range over the runs, and
    the median per-run ratio with the runs where stackmask was at or below the peer."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "repeat_report.py"
    spec = importlib.util.spec_from_file_location("repeat_report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def row(engine, pas, p50, p999, commit, slow=((0, 0), (0, 1))):
        return {"engine": engine, "pass": pas,
                "mask": {"p50": p50, "p99": p50 * 3, "p99.9": p999, "max": p999 * 2},
                "commit": {"p50": commit},
                "slowest_masks": [{"trace": t, "step": i, "us": 1.0} for t, i in slow]}

    runs = [[row("stackmask", "warm", 2.0, 30.0, 5.0, ((3, 4), (0, 0))),
             row("glrmask", "warm", 4.0, 20.0, 5.0)],
            [row("stackmask", "warm", 3.0, 10.0, 6.0), row("glrmask", "warm", 2.0, 20.0, 4.0)],
            [row("stackmask", "warm", 4.0, 20.0, 7.0), row("glrmask", "warm", 2.0, 40.0, 7.0),
             {"engine": "llguidance", "error": "failed"}]]
    text, fig = mod.summarize(runs, ["glrmask"])
    assert fig["stackmask/warm/mask p50"] == {"median": 3.0, "min": 2.0, "max": 4.0}
    assert fig["glrmask/warm/mask p99.9"] == {"median": 20.0, "min": 20.0, "max": 40.0}
    r = fig["ratio glrmask/warm/mask p50"]           # ratios 0.5, 1.5, 2.0
    assert r["median"] == 1.5 and r["at_or_below"] == 1 and r["runs"] == 3
    r = fig["ratio glrmask/warm/mask p99.9"]         # ratios 1.5, 0.5, 0.5
    assert r["median"] == 0.5 and r["at_or_below"] == 2
    assert fig["ratio glrmask/warm/commit p50"]["at_or_below"] == 2     # 5<=5, 6>4, 7<=7
    assert "stackmask/cold/mask p50" not in fig
    assert "| stackmask | warm | 3.0 (2.0-4.0) |" in text and "1.50x (1/3)" in text
    assert fig["stackmask/warm/slowest"] == {"0:0": 3, "0:1": 2, "3:4": 1}
    assert "- stackmask warm: 0:0 (3), 0:1 (2), 3:4 (1)" in text


def test_maskbench_corpus_writes_valid_instances_as_a_report_corpus(tmp_path):
    """benchmarks/maskbench_corpus.py: the first valid instance(s) of every schema, in
    file order, as a corpus file that the report reads."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    path = root / "benchmarks" / "maskbench_corpus.py"
    spec = importlib.util.spec_from_file_location("maskbench_corpus", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(root / "benchmarks"))
    data = tmp_path / "mb.jsonl"
    rows = [{"name": "a", "schema": {}, "valid": ['{"x": 1}', '{"x": 2}'], "invalid": ["[]"]},
            {"name": "b", "schema": {}, "valid": [], "invalid": []},
            {"name": "c", "schema": {}, "valid": ['[true, "y"]'], "invalid": []}]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert mod.documents(data) == ['{"x": 1}', '[true, "y"]']
    assert mod.documents(data, 2) == ['{"x": 1}', '{"x": 2}', '[true, "y"]']
    out = tmp_path / "corpus.jsonl"
    r = subprocess.run([sys.executable, str(path), str(out), "--data", str(data)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    vocab, encode = load_vocab("qwen2.5")
    tr = load_traces(load_workload("json"), [str(out)], "qwen2.5", vocab, encode)
    assert tr.texts == ['{"x": 1}', '[true, "y"]']
    assert tr.tokens[0] == list(encode('{"x": 1}'))
    r = subprocess.run([sys.executable, str(path), str(tmp_path / "c.txt"), "--data", str(data)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and ".jsonl" in r.stderr


def test_tail_note_names_the_calls_p999_rests_on():
    """Under 10,000 calls the report says which of the slowest calls numpy's p99.9 lies
    at: checked against numpy on 1..n, whose k-th slowest value is n - k + 1."""
    import re
    from stackmask.report import tail_note
    for n, text in ((1_100, "2nd slowest and the 3rd slowest calls"), (1_001, "2nd slowest call "),
                    (500, "slowest and the 2nd slowest calls"), (2, "slowest and the 2nd"),
                    (9_999, "10th slowest and the 11th slowest calls")):
        note = tail_note(n)
        assert note is not None and text in note and f"{n:,} calls" in note, note
        head = note.split("lies at the ")[1].split(" of a pass")[0]
        ranks = [int(r) for r in re.findall(r"(\d+)(?:st|nd|rd|th) slowest", head)]
        if head.startswith("slowest"):
            ranks.append(1)
        values = [n - k + 1 for k in ranks]
        p = float(np.percentile(np.arange(1, n + 1), 99.9))
        assert min(values) - 1e-6 <= p <= max(values) + 1e-6, (n, note, p)
        if len(ranks) == 1:
            assert abs(p - values[0]) < 1e-6
    assert tail_note(10_000) is None and tail_note(1) is None
