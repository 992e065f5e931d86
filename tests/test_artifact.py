"""Compiled-constraint artifacts: cache hits, and every kind of bad file is detected,
warned about and rebuilt atomically (never loaded into wrong masks)."""

from __future__ import annotations

import multiprocessing
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from stackmask import Constraint, Vocab
from stackmask import artifact
from stackmask.compile import decode_artifact, encode_artifact
from stackmask.artifact import StaleArtifactWarning
from stackmask.grammars import load as load_grammar

from conftest import plain_copy

JSON = load_grammar("json")


def small_vocab() -> Vocab:
    pieces = ['{', '}', '[', ']', ',', ':', '"', ' ', '\n', 'true', 'false', 'null', '0', '1', '12',
              '-', '.', 'e', 'a', 'b', 'ab', '"a', 'a"', '":', '",', '{"', '"}', ' "', '\\', '\\n',
              'é'.encode(), b'\xc3', b'\xa9', 'tru', 'nul', '1.', ', "', '}]', '[{']
    toks = [p.encode() if isinstance(p, str) else p for p in pieces] + [b"<eos>"]
    return Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1])


def masks_along(c: Constraint, text: bytes) -> list[np.ndarray]:
    out = []
    s = c.start()
    for b in text:
        out.append(c.get_mask(s))
        s = c.commit_bytes(s, bytes([b]))
    out.append(c.get_mask(s))
    return out


DOC = b'{"a": [1, -12.5e1, "ab\\n\xc3\xa9", true, null], "b": {}}'


def only_file(d: Path) -> Path:
    files = [p for p in d.iterdir() if p.suffix == ".smk"]
    assert len(files) == 1, files
    return files[0]


def test_second_constraint_loads_from_cache(tmp_path):
    v = small_vocab()
    c1 = Constraint(JSON, v, cache_dir=tmp_path)
    assert not c1.loaded_from_cache
    path = only_file(tmp_path)
    c2 = Constraint(JSON, v, cache_dir=tmp_path)
    assert c2.loaded_from_cache
    assert "load_s" in c2.compile_stats()
    for a, b in zip(masks_along(c1, DOC), masks_along(c2, DOC)):
        assert np.array_equal(a, b)
    # the masks are the oracle's
    for m, r in zip(masks_along(c2, DOC), [c2.reference_mask(s) for s in states_along(c2, DOC)]):
        assert np.array_equal(m, r)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert path.stat().st_size > 0


def states_along(c, text):
    s = c.start()
    out = [s]
    for b in text:
        s = c.commit_bytes(s, bytes([b]))
        out.append(s)
    return out


def test_key_separates_grammar_vocab_and_ambiguity(tmp_path):
    v = small_vocab()
    Constraint(JSON, v, cache_dir=tmp_path)
    Constraint(JSON, v, ambiguous=True, cache_dir=tmp_path)
    Constraint(JSON + "\n", v, cache_dir=tmp_path)
    toks = list(v.tokens)
    toks[0] = b"["
    Constraint(JSON, Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1]),
               cache_dir=tmp_path)
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".smk"]) == 4


def _damage_truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _damage_flip(data: bytes) -> bytes:
    b = bytearray(data)
    b[-10] ^= 0x55
    return bytes(b)


def _damage_header_only(data: bytes) -> bytes:
    return data[:10]


def _damage_version(data: bytes) -> bytes:
    b = bytearray(data)
    b[8:12] = (artifact.FORMAT_VERSION + 7).to_bytes(4, "little")
    return bytes(b)


def _damage_key(data: bytes) -> bytes:
    b = bytearray(data)
    b[12] ^= 0xFF
    return bytes(b)


def _damage_magic(data: bytes) -> bytes:
    return b"NOTMAGIC" + data[8:]


def _damage_append(data: bytes) -> bytes:
    return data + b"junk"


@pytest.mark.parametrize("damage,words", [
    (_damage_truncate, "truncated"),
    (_damage_flip, "corrupted"),
    (_damage_header_only, "truncated"),
    (_damage_version, "format version"),
    (_damage_key, "another grammar"),
    (_damage_magic, "not a stackmask artifact"),
    (_damage_append, "4 unexpected bytes after its payload"),
])
def test_bad_artifact_is_rebuilt_with_warning(tmp_path, damage, words):
    v = small_vocab()
    good = Constraint(JSON, v, cache_dir=tmp_path)
    path = only_file(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.warns(StaleArtifactWarning, match=words):
        c = Constraint(JSON, v, cache_dir=tmp_path)
    assert not c.loaded_from_cache
    for a, b in zip(masks_along(good, DOC), masks_along(c, DOC)):
        assert np.array_equal(a, b)
    # rebuilt atomically: the file is whole again and loads without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c3 = Constraint(JSON, v, cache_dir=tmp_path)
    assert c3.loaded_from_cache


class _Trap:
    """Unpickling this runs ``os.system``-like code: it creates the marker file."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path(self.marker).touch, ())


def _rewrite_payload(path: Path, payload: bytes) -> None:
    """Replace the artifact's payload keeping a valid header (same key, matching size and
    checksum): a file a hostile writer of the cache directory could leave."""
    import hashlib
    import zstandard
    data = path.read_bytes()
    magic, version, key, _, _ = artifact._HEADER.unpack_from(data)
    z = zstandard.ZstdCompressor().compress(payload)
    path.write_bytes(artifact._HEADER.pack(magic, version, key, hashlib.sha256(z).digest(), len(z)) + z)


def test_a_hostile_pickle_in_the_cache_runs_nothing(tmp_path):
    """An artifact file whose (well-formed, checksummed) payload is a pickle that would
    run code when unpickled is refused with a warning and rebuilt; nothing runs."""
    import pickle
    v = small_vocab()
    Constraint(JSON, v, cache_dir=tmp_path)
    path = only_file(tmp_path)
    marker = tmp_path / "pwned"
    pickle.loads(pickle.dumps(_Trap(str(marker))))       # the trap works when unpickled
    assert marker.exists()
    marker.unlink()
    _rewrite_payload(path, pickle.dumps({"tables": _Trap(str(marker))}, protocol=5))
    with pytest.warns(StaleArtifactWarning, match="cannot decode"):
        c = Constraint(JSON, v, cache_dir=tmp_path)
    assert not c.loaded_from_cache and not marker.exists()
    assert Constraint(JSON, v, cache_dir=tmp_path).loaded_from_cache     # rebuilt


def test_an_artifact_naming_a_class_not_allowed_is_refused(tmp_path):
    """Plain data may name only the grammar's own dataclasses: a record of any other
    class (here one whose construction would have an effect) is refused, unbuilt."""
    import msgpack
    from stackmask.plain import Codec, PlainDataError
    v = small_vocab()
    Constraint(JSON, v, cache_dir=tmp_path)
    path = only_file(tmp_path)
    record = msgpack.ExtType(5, Codec().dumps(("pathlib.Path", (str(tmp_path / "x"),))))
    payload = msgpack.packb({"tables": record}, use_bin_type=True)
    with pytest.raises(PlainDataError, match="not allowed"):
        decode_artifact(payload)
    _rewrite_payload(path, payload)
    with pytest.warns(StaleArtifactWarning, match="not allowed"):
        c = Constraint(JSON, v, cache_dir=tmp_path)
    assert not c.loaded_from_cache


def test_an_artifact_is_plain_data_and_round_trips(tmp_path):
    """The payload is msgpack of plain values (no pickle opcodes), and decoding it gives
    the same tables, configurations and automaton (same masks)."""
    import zstandard
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=tmp_path)
    path = only_file(tmp_path)
    body = zstandard.ZstdDecompressor().decompress(path.read_bytes()[artifact._HEADER.size:])
    assert not body.startswith(b"\x80")                  # not a pickle (protocol 2+)
    comp = decode_artifact(body)
    assert comp.configs == c.compiled.configs
    assert comp.tables.lr.shift == c.compiled.tables.lr.shift
    assert comp.tables.grammar == c.compiled.tables.grammar
    # a loaded automaton's complete states keep their edges in the arrays until read
    assert all(t is None for t, done in zip(comp.dwa.trans, comp.dwa.complete) if done)
    assert [comp.dwa.state_edges(q) for q in range(len(comp.dwa.trans))] == c.compiled.dwa.trans
    assert comp.dwa.init == c.compiled.dwa.init
    again = decode_artifact(encode_artifact(comp)).dwa
    again.materialize()
    assert again.trans == comp.dwa.trans and again.edge_arrays is None


@pytest.mark.parametrize("pure", [False, True])
def test_loaded_edges_are_made_on_first_read(tmp_path, monkeypatch, pure):
    """Compiled and pure-Python edge arrays (``dwa_data.EdgeArrays``) give every state
    the edges the compile made; ``materialize`` with a deadline stops part way, and
    masks of a loaded constraint whose states were not made at load equal the
    compiled constraint's and the reference oracle's."""
    import time as _time
    if pure:
        monkeypatch.setenv("STACKMASK_PURE_PYTHON", "1")
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=tmp_path)
    monkeypatch.setattr("stackmask.compile.EDGES_AHEAD_S", 0.0)   # nothing made at load
    d = Constraint(JSON, v, cache_dir=tmp_path)
    assert d.loaded_from_cache
    dwa = d.compiled.dwa
    assert (type(dwa.edge_arrays).__module__ == "stackmask.compile.dwa_data") == pure
    s1, s2 = c.start(), d.start()
    for b in [b'{"a"', b': [1', b', 2.5e3', b', "x\\u00e9"', b']}']:
        assert np.array_equal(c.get_mask(s1), d.get_mask(s2))
        assert np.array_equal(d.get_mask(s2), d.reference_mask(s2))     # the oracle
        s1, s2 = c.commit_bytes(s1, b), d.commit_bytes(s2, b)
    assert np.array_equal(c.get_mask(s1), d.get_mask(s2))
    if all(t is not None for t in dwa.trans):     # (the masks ahead read them all)
        dwa.trans[-1] = None
    assert not dwa.materialize(_time.perf_counter() - 1) and dwa.edge_arrays is not None
    assert dwa.materialize() and dwa.edge_arrays is None
    assert dwa.trans == c.compiled.dwa.trans


def test_cache_disabled_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKMASK_CACHE_DIR", str(tmp_path))
    c = Constraint(JSON, small_vocab(), cache_dir=False)
    assert not c.loaded_from_cache
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("STACKMASK_CACHE_DIR", "off")
    assert artifact.default_cache_dir() is None
    monkeypatch.setenv("STACKMASK_CACHE_DIR", str(tmp_path / "x"))
    assert artifact.default_cache_dir() == tmp_path / "x"


def test_lazy_mode_writes_nothing_and_gives_the_same_masks(tmp_path, monkeypatch):
    from stackmask.compile import token_index
    monkeypatch.setattr(token_index, "_INDEX", type(token_index._INDEX)())   # not indexed yet
    v = small_vocab()
    lazy = Constraint(JSON, v, cache_dir=tmp_path, compile="lazy")
    # no artifact; only the vocabulary's index, shared by every grammar and mode
    assert [p.suffix for p in tmp_path.iterdir()] == [".smv"]
    eager = Constraint(JSON, v, cache_dir=False)
    for a, b in zip(masks_along(lazy, DOC), masks_along(eager, DOC)):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="compile mode"):
        Constraint(JSON, v, compile="sometimes")


def _compile_in_child(cache_dir: str, q) -> None:
    c = Constraint(JSON, small_vocab(), cache_dir=cache_dir, progress=False)
    s = c.commit_bytes(c.start(), b'{"a": [')
    q.put(np.flatnonzero(c.get_mask(s)).tolist())


def test_concurrent_writers_leave_a_valid_artifact(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_compile_in_child, args=(str(tmp_path), q)) for _ in range(3)]
    for p in procs:
        p.start()
    results = [q.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    assert all(r == results[0] for r in results)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = Constraint(JSON, small_vocab(), cache_dir=tmp_path)
    assert c.loaded_from_cache


def test_commit_bytes_reaches_configurations_compiled_on_demand(tmp_path):
    # '"a' ends inside a string: a configuration tokens of this vocabulary reach too; 'tr'
    # is a prefix no token ends in ('tru' does), so its configuration is compiled on use
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=tmp_path)
    s = c.commit_bytes(c.start(), b'[tr')
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    c2 = Constraint(JSON, v, cache_dir=tmp_path)
    s2 = c2.commit_bytes(c2.start(), b'[fa')
    assert np.array_equal(c2.get_mask(s2), c2.reference_mask(s2))


def test_compile_budget_leaves_the_rest_to_first_use(tmp_path, caplog):
    v = small_vocab()
    full = Constraint(JSON, v, cache_dir=False, compile_budget_s=None)
    assert not full.compile_stats()["budget_exhausted"]
    part = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0)
    st = part.compile_stats()
    assert st["budget_exhausted"] and st["complete_states"] < full.compile_stats()["states"]
    assert any(r.levelname == "WARNING" and "compile budget used up" in r.getMessage()
               for r in caplog.records if r.name == "stackmask")
    again = Constraint(JSON, v, cache_dir=tmp_path)          # the partial artifact, reloaded
    assert again.loaded_from_cache
    for s_full, s_part, s_again in zip(states_along(full, DOC), states_along(part, DOC),
                                       states_along(again, DOC)):
        m = full.get_mask(s_full)
        assert np.array_equal(part.get_mask(s_part), m)
        assert np.array_equal(again.get_mask(s_again), m)


def test_a_reloaded_partial_automaton_finds_its_pending_states_again(tmp_path):
    """The artifact indexes automaton states by digests of their item sets: a state a
    reloaded automaton builds again (from the same items) gets its old id, not a copy;
    a state never seen gets a new one."""
    v = small_vocab()
    part = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0)
    masks_along(part, DOC)                     # states built on first use, edges computed lazily
    dwa = part.compiled.dwa
    pending = [q for q, done in enumerate(dwa.complete) if not done and dwa.items[q] is not None]
    assert pending
    again = plain_copy(dwa, part.compiled.tables)
    assert again._digest_ids and len(again._ids) == len(dwa._ids)
    for q in pending:
        items = dwa.items[q]
        assert dwa.intern_state(dict(items)) == q
        assert again.intern_state(dict(items)) == q
    n = len(again.items)
    (it, w), *rest = dwa.items[pending[0]]
    other = again.intern_state({it: w}) if rest else again.intern_state({(it[0] + 7,) + it[1:]: w})
    assert other == n and len(again.items) == n + 1


def test_unwritable_cache_warns_and_still_compiles(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.warns(StaleArtifactWarning, match="cannot write"):
        c = Constraint(JSON, small_vocab(), cache_dir=blocker / "cache", progress=False)
    assert not c.loaded_from_cache
    s = c.commit_bytes(c.start(), b'{"a": [')
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def _compile_and_hang_while_writing(cache_dir: str) -> None:
    import time as _time
    from stackmask.compile.token_index import vocab_index
    vocab_index(small_vocab(), Path(cache_dir))     # the vocabulary's index is written first
    real_fsync = os.fsync

    def slow_fsync(fd):                  # the temporary file is written: now get killed
        real_fsync(fd)
        _time.sleep(600)

    os.fsync = slow_fsync
    Constraint(JSON, small_vocab(), cache_dir=cache_dir, progress=False)


def test_writer_killed_mid_write_leaves_no_artifact_and_its_temp_is_cleaned(tmp_path):
    import signal
    import time as _time
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=_compile_and_hang_while_writing, args=(str(tmp_path),))
    p.start()
    try:
        deadline = _time.monotonic() + 300
        # the artifact's temporary file (the vocabulary index's, written just before
        # fsync is slowed, can show one too: killing then would test nothing)
        while not [q for q in tmp_path.iterdir()
                   if q.name.endswith(".tmp") and not q.name.startswith("vocab-")]:
            assert _time.monotonic() < deadline and p.is_alive(), "the writer never started writing"
            _time.sleep(0.05)
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.join(timeout=60)
    assert p.exitcode == -signal.SIGKILL
    temps = [q for q in tmp_path.iterdir() if q.name.endswith(".tmp")]
    assert len(temps) == 1 and not temps[0].name.startswith("vocab-") and not [q for q in tmp_path.iterdir() if q.suffix == ".smk"]
    # the next process compiles and caches normally; a fresh temp file is left alone
    # (it could be another writer's), an old one is removed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = Constraint(JSON, small_vocab(), cache_dir=tmp_path, progress=False)
    assert not c.loaded_from_cache and temps[0].exists()
    old = _time.time() - artifact.STALE_TEMP_S - 10
    os.utime(temps[0], (old, old))
    only_file(tmp_path).unlink()
    Constraint(JSON, small_vocab(), cache_dir=tmp_path, progress=False)
    assert not temps[0].exists()
    assert Constraint(JSON, small_vocab(), cache_dir=tmp_path).loaded_from_cache


def _weights_referenced(dwa) -> set:
    used = {0, 1, dwa.eos_weight}
    for q in range(len(dwa.trans)):
        used.update(w for _, w in dwa.state_edges(q).values())
    used.update(d[1] for d in dwa.default if d)
    used.update(w for _, w in list(dwa.init.values()) + list(dwa.pair_init.values()))
    used.update(w for _, w in dwa.init_base.values())
    used.update(dwa.init_restrict.values())
    for its in dwa.items:
        if its is not None:
            used.update(w for _, w in its)
    return used


def test_compiled_automaton_keeps_only_the_token_sets_it_refers_to(tmp_path):
    """After a compile the weight table holds the sets the automaton refers to (edges,
    defaults, starts, EOS), not every intermediate one, and the reloaded artifact gives
    the same masks. Compacting a partial automaton (pending states' items refer to sets
    too) keeps its masks exact and its pending states found again by their items."""
    v = small_vocab()
    c = Constraint(JSON, v, cache_dir=tmp_path)
    st = c.compile_stats()
    dwa = c.compiled.dwa
    assert st["weights"] == len(dwa.weights) < st["weights_interned"]
    assert _weights_referenced(dwa) == set(range(len(dwa.weights)))
    again = Constraint(JSON, v, cache_dir=tmp_path)
    assert again.loaded_from_cache
    for s1, s2 in zip(states_along(c, DOC), states_along(again, DOC)):
        assert np.array_equal(again.get_mask(s2), c.get_mask(s1))
        assert np.array_equal(c.get_mask(s1), c.reference_mask(s1))
    part = Constraint(JSON, v, cache_dir=False, compile_budget_s=0)
    masks_along(part, DOC)                      # states built on first use: some pending
    dwa = part.compiled.dwa
    pending = [q for q, done in enumerate(dwa.complete) if not done and dwa.items[q] is not None]
    assert pending
    n = len(dwa.weights)
    assert dwa.compact_weights() == n - len(dwa.weights) > 0
    assert _weights_referenced(dwa) == set(range(len(dwa.weights)))
    for q in pending:
        assert dwa.intern_state(dict(dwa.items[q])) == q
    # compaction renumbers token sets: it runs in the compile, before any mask is
    # memoized; the compacted partial automaton goes through an artifact to a new one
    from stackmask.compile import Compiled, encode_artifact, grammar_text
    key = artifact.artifact_key(grammar_text(JSON), False, v.fingerprint)
    artifact.save(artifact.artifact_path(tmp_path / "part", key), key, encode_artifact(
        Compiled(part.compiled.tables, part.scanner.export_configs(), dwa, {})))
    reloaded = Constraint(JSON, v, cache_dir=tmp_path / "part")
    assert reloaded.loaded_from_cache
    for doc in (DOC, b'{"b": [true, null, {"a": -0.5e3}], "c": "x\\n"}'):
        for s in states_along(reloaded, doc):
            assert np.array_equal(reloaded.get_mask(s), reloaded.reference_mask(s))


def test_saving_an_artifact_says_so(tmp_path, caplog, monkeypatch):
    """A write of the cache logs what it writes and how long it took: on request
    (``save_cache`` of a constraint with progress on) and after a construction that took
    more than a second (which also says when it minimizes); a quick construction writes
    silently."""
    import logging
    v = small_vocab()
    with caplog.at_level(logging.INFO, logger="stackmask"):
        c = Constraint(JSON, v, cache_dir=tmp_path / "a", compile="lazy")
        assert not any("writing the artifact" in r.getMessage() for r in caplog.records)
        caplog.clear()
        assert c.save_cache() is not None
        msgs = [r.getMessage() for r in caplog.records if r.name == "stackmask"]
        assert any(m.startswith("stackmask: writing the artifact (") for m in msgs)
        assert any(m.startswith("stackmask: artifact written in") for m in msgs)
        caplog.clear()
        quiet = Constraint(JSON, v, cache_dir=tmp_path / "b", compile="lazy", progress=False)
        quiet.save_cache()
        assert not caplog.records
        # a construction over a second (the clock made to say so) logs its write
        import stackmask.compile as comp
        import types
        clock = iter(range(0, 10 ** 6, 2))
        monkeypatch.setattr(comp, "time", types.SimpleNamespace(perf_counter=lambda: float(next(clock))))
        Constraint(JSON, v, cache_dir=tmp_path / "c")
        assert any("writing the artifact" in r.getMessage() for r in caplog.records)
        assert any(r.getMessage().startswith("stackmask: minimizing the mask automaton (")
                   for r in caplog.records)
        caplog.clear()
        Constraint(JSON, v, cache_dir=tmp_path / "d", progress=False)
        assert not caplog.records


def test_save_cache_keeps_what_was_compiled_on_first_use(tmp_path):
    """A partial automaton saved after use gives the next construction the states and
    lexer configurations its first masks compiled: replaying the same text compiles
    nothing, every mask equals the first constraint's and the oracle, and the saving
    constraint goes on giving exact masks."""
    v = small_vocab()
    part = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0)
    before = masks_along(part, DOC)
    live = part.compiled.dwa
    path = part.save_cache()
    assert path is not None and path.exists()
    again = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0)
    assert again.loaded_from_cache
    st = again.compile_stats()
    assert st["saved_after_use"] and st["budget_exhausted"]
    dwa = again.compiled.dwa
    n_states, configs = len(dwa.items), set(dwa.init)
    assert n_states == len(live.items) > 0 and configs == set(live.init)
    assert len(dwa.weights) < len(live.weights)                 # compacted copy
    after = masks_along(again, DOC)
    assert len(dwa.items) == n_states and set(dwa.init) == configs    # nothing compiled again
    for a, b in zip(before, after):
        assert np.array_equal(a, b)
    other = b'[{"x": false}, 2.5e-3, "\\u00e9"]'
    for c in (again, part):
        for s in states_along(c, other):
            assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    assert Constraint(JSON, v, cache_dir=False, compile_budget_s=0).save_cache() is None


KW = r'''start: stmt*
stmt: "if" NAME "then" NAME ";" | NAME "=" NAME ";"
NAME: /[a-z]+/
%ignore " "
'''
KW_TEXT = b"if iff then thenx; ifx = thena; i = t;"


def kw_vocab() -> Vocab:
    pieces = ["if", "i", "f", "iff", "then", "the", "n", "x", "t", "h", "e", " ", ";", "=",
              " =", "; ", "if ", " then", "en", "0", "a"]
    toks = [p.encode() for p in pieces] + [b"<eos>"]
    return Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1])


def test_artifact_lists_the_requirement_of_every_lexer_configuration(tmp_path, monkeypatch):
    """What a head in each lexer configuration needs from its stack (keywords shadowing
    a NAME make these non-trivial: exploring the shadows cost up to ~0.4 ms per config on
    a head's first commit after a load) is part of the compiled artifact: equal to
    computing it, read by commit's viability check instead of computing it. An artifact
    written without the list (before it existed) loads and computes them on use, with the
    same masks."""
    import stackmask.runtime.constraint as constraint_mod
    from stackmask.lexer.scanner import TRUE, requirement
    v = kw_vocab()
    Constraint(KW, v, cache_dir=tmp_path, progress=False)
    c = Constraint(KW, v, cache_dir=tmp_path, progress=False)
    assert c.loaded_from_cache
    reqs = c.compiled.requirements
    assert set(reqs) == set(range(len(c.compiled.configs)))
    assert reqs == {cfg: requirement(c.scanner, cfg) for cfg in reqs}
    assert any(r not in (TRUE, None) for r in reqs.values())
    computed: list = []

    def spy(scanner, cfg):
        computed.append(cfg)
        return requirement(scanner, cfg)

    monkeypatch.setattr(constraint_mod, "requirement", spy)
    # an artifact whose list is empty (as for configurations added after it was written)
    path, key = c._artifact
    comp = artifact.load(path, key, decode_artifact)
    comp.requirements = {}
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    artifact.save(old_dir / path.name, key, encode_artifact(comp))
    old = Constraint(KW, v, cache_dir=old_dir, progress=False)
    assert old.loaded_from_cache and old.compiled.requirements == {}
    for con in (c, old):
        s_list = states_along(con, KW_TEXT)
        masks = [con.get_mask(s) for s in s_list]
        for s, m in zip(s_list, masks):
            assert np.array_equal(m, con.reference_mask(s))
        if con is c:
            assert not [cfg for cfg in computed if cfg in reqs]     # read, not computed
            first = masks
        else:
            assert computed                                         # computed on use
            assert all(np.array_equal(a, b) for a, b in zip(first, masks))


def test_save_after_a_load_keeps_the_artifacts_states_as_they_were(tmp_path):
    """Saving a loaded partial automaton after use keeps the loaded artifact's token
    sets at their ids and its states' item sets as stored (not decoded, renumbered
    and encoded again: Java's 44,000 pending states made that 9 s); the states and
    sets added by first use are compacted as before. The saved artifact loads with
    every state findable again (a replay compiles nothing) and exact masks."""
    v = small_vocab()
    first = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0, progress=False)
    masks_along(first, b'{"a": [1')
    assert first.save_cache() is not None
    loaded = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0, progress=False)
    assert loaded.loaded_from_cache
    dwa = loaded.compiled.dwa
    n_w, n_q = dwa._loaded
    assert n_q == len(dwa.items) and n_w == len(dwa.weights)
    blobs = list(dwa.items)
    assert any(isinstance(b, bytes) for b in blobs)
    more = b'{"a": [1, -12.5e1, "ab\\n\xc3\xa9", true, null], "b": {}}'
    before = masks_along(loaded, more)                 # compiles new states and sets
    assert len(dwa.items) > n_q and len(dwa.weights) > n_w
    path = loaded.save_cache()
    key = loaded._artifact[1]
    saved = artifact.load(path, key, decode_artifact).dwa
    for q in range(n_q):                               # the artifact's states: as stored
        if isinstance(blobs[q], bytes):
            assert saved.items[q] == blobs[q], q
    assert len(saved.weights) < len(dwa.weights)       # the additions compacted
    for w in range(n_w):
        assert saved.weights.get(w) == dwa.weights.get(w)
    again = Constraint(JSON, v, cache_dir=tmp_path, compile_budget_s=0, progress=False)
    assert again.loaded_from_cache
    states = len(again.compiled.dwa.items)
    after = masks_along(again, more)
    assert len(again.compiled.dwa.items) == states     # every state found again
    for a, b in zip(before, after):
        assert np.array_equal(a, b)
    for s in states_along(again, more):
        assert np.array_equal(again.get_mask(s), again.reference_mask(s))


def test_a_user_facing_grammar_object_is_stored_and_loaded(tmp_path):
    """``stackmask.Grammar`` (the front ends' class) compiles to tables of the grammar
    model, which an artifact stores: the second construction loads it."""
    import stackmask
    v = small_vocab()
    g = stackmask.Grammar.from_lark(JSON)
    first = Constraint(g, v, cache_dir=tmp_path)
    assert not first.loaded_from_cache and only_file(tmp_path)
    again = Constraint(stackmask.Grammar.from_lark(JSON), v, cache_dir=tmp_path)
    assert again.loaded_from_cache
    for a, b in zip(masks_along(first, DOC), masks_along(again, DOC)):
        assert np.array_equal(a, b)


def test_an_artifact_of_other_code_is_not_found(tmp_path, monkeypatch):
    # the key holds a hash of the library's sources: after a change to the lexer or the
    # compiler (same grammar text, same format) the old artifact is not read, which would
    # mask by the old rules; it is built again
    v = small_vocab()
    assert not Constraint(JSON, v, cache_dir=tmp_path).loaded_from_cache
    assert Constraint(JSON, v, cache_dir=tmp_path).loaded_from_cache
    fp = artifact.code_fingerprint()
    assert len(fp) == 64 and fp == artifact.code_fingerprint()
    monkeypatch.setattr(artifact, "code_fingerprint", lambda: "0" * 64)
    c = Constraint(JSON, v, cache_dir=tmp_path)
    assert not c.loaded_from_cache
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".smk"]) == 2
    assert Constraint(JSON, v, cache_dir=tmp_path).loaded_from_cache


def test_the_cache_is_held_to_its_size_limit(tmp_path, monkeypatch):
    # each save removes the least recently used files of this library past
    # $STACKMASK_CACHE_MAX_BYTES; a load marks a file used; other files stay
    paths = []
    for i in range(4):
        key = bytes([i]) * 32
        p = artifact.artifact_path(tmp_path, key)
        artifact.save(p, key, os.urandom(3000))
        os.utime(p, (1_000_000 + i, 1_000_000 + i))       # written long ago, in order
        paths.append((p, key))
    foreign = tmp_path / "notes.smk"
    foreign.write_bytes(b"not an artifact" * 1000)
    os.utime(foreign, (1, 1))
    size = paths[0][0].stat().st_size
    assert artifact.load(paths[0][0], paths[0][1]) is not None    # used now
    monkeypatch.setenv("STACKMASK_CACHE_MAX_BYTES", str(3 * size + 10))
    key = b"\x09" * 32
    new = artifact.artifact_path(tmp_path, key)
    artifact.save(new, key, os.urandom(3000))
    left = {p.name for p in tmp_path.iterdir()}
    # the two least recently used go (1 and 2), the loaded one, the newest and the new one stay
    assert left == {paths[0][0].name, paths[3][0].name, new.name, foreign.name}
    monkeypatch.setenv("STACKMASK_CACHE_MAX_BYTES", "off")
    artifact.save(artifact.artifact_path(tmp_path, b"\x0a" * 32), b"\x0a" * 32, b"x" * 3000)
    assert len(list(tmp_path.iterdir())) == 5
    assert artifact.cache_max_bytes() is None
    monkeypatch.delenv("STACKMASK_CACHE_MAX_BYTES")
    assert artifact.cache_max_bytes() == artifact.CACHE_MAX_BYTES


def test_an_artifact_that_cannot_be_read_warns_and_is_rebuilt(tmp_path):
    # a read error other than "absent" (here the path is a directory) is a stale artifact:
    # a warning and None (the caller recompiles), not an exception
    path = tmp_path / "x.smk"
    path.mkdir()
    with pytest.warns(StaleArtifactWarning, match="cannot read"):
        assert artifact.load(path, b"k" * 32) is None
