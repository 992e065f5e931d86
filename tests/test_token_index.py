"""The vocabulary index: plain-data round trip and the on-disk cache by fingerprint."""

from __future__ import annotations

import numpy as np
import pytest

from stackmask import Vocab
from stackmask import artifact
from stackmask.compile import token_index as vi
from stackmask.artifact import StaleArtifactWarning
from stackmask.compile.token_index import VocabIndex, index_location, vocab_index
from stackmask.plain import Codec


def dup_vocab() -> Vocab:
    toks = [b"a", b"ab", b"b", b"ab", b"abc", b"\xc3", b"a", b"zz", b"", b"<eos>"]
    return Vocab(toks, eos_token_ids=[9], special_token_ids=[9])


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    """Nothing indexed in memory yet (vocabularies with equal tokens share an entry)."""
    monkeypatch.setattr(vi, "_INDEX", type(vi._INDEX)())


def same_index(a: VocabIndex, b: VocabIndex) -> None:
    assert a.toks == b.toks and a.fingerprint == b.fingerprint
    np.testing.assert_array_equal(a.first_id, b.first_id)
    assert a.dups == b.dups
    (oa, ca), (ob, cb) = a.byte_columns(), b.byte_columns()
    np.testing.assert_array_equal(oa, ob)
    assert len(ca) == len(cb) and all(np.array_equal(x, y) for x, y in zip(ca, cb))
    pos = np.arange(len(a.toks))
    np.testing.assert_array_equal(np.sort(a.ids_of(pos)), np.sort(b.ids_of(pos)))
    assert a.bitmap_of(pos[::2]) == b.bitmap_of(pos[::2])


@pytest.mark.parametrize("which", ["dups", "qwen"])
def test_index_round_trips_through_plain_data(which, qwen_vocab):
    v = dup_vocab() if which == "dups" else qwen_vocab
    idx = VocabIndex(v)
    if which == "dups":
        assert idx.dups                                   # duplicates are grouped
    c = Codec()
    same_index(idx, VocabIndex.from_data(c.loads(c.dumps(idx.to_data()))))


def test_a_new_process_loads_the_index_from_the_cache(tmp_path, monkeypatch):
    v = dup_vocab()
    built = vocab_index(v, tmp_path)
    path, _ = index_location(tmp_path, v)
    assert path.exists()
    monkeypatch.setattr(vi, "_INDEX", type(vi._INDEX)())   # a fresh process: nothing in memory

    def refuse(self, vocab):
        raise AssertionError("the index was rebuilt instead of loaded")

    monkeypatch.setattr(VocabIndex, "__init__", refuse)
    again = vocab_index(dup_vocab(), tmp_path)              # another object, same tokens
    same_index(built, again)


def test_a_damaged_index_file_is_rebuilt_with_a_warning(tmp_path, monkeypatch):
    v = dup_vocab()
    vocab_index(v, tmp_path)
    path, _ = index_location(tmp_path, v)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x5A
    path.write_bytes(bytes(data))
    monkeypatch.setattr(vi, "_INDEX", type(vi._INDEX)())
    with pytest.warns(StaleArtifactWarning, match="corrupted"):
        idx = vocab_index(dup_vocab(), tmp_path)
    same_index(idx, VocabIndex(v))
    assert artifact.load(path, index_location(tmp_path, v)[1]) is not None   # rewritten


def test_another_vocabulary_gets_another_file(tmp_path):
    a, b = dup_vocab(), Vocab([b"x", b"y", b"<eos>"], eos_token_ids=[2], special_token_ids=[2])
    vocab_index(a, tmp_path)
    vocab_index(b, tmp_path)
    assert index_location(tmp_path, a)[0] != index_location(tmp_path, b)[0]
    assert len(list(tmp_path.glob("vocab-*.smv"))) == 2


def test_common_prefixes_of_neighbours_in_byte_order():
    import os
    idx = VocabIndex(dup_vocab())
    assert idx.toks == (b"a", b"ab", b"abc", b"b", b"zz", b"\xc3")
    assert idx.common_prefixes() == [0, 1, 2, 0, 0, 0]
    rng = np.random.default_rng(3)
    toks = sorted({bytes(rng.integers(97, 100, size=int(rng.integers(1, 6))).tolist()) for _ in range(300)})
    idx = VocabIndex(Vocab(toks + [b"<e>"], eos_token_ids=[len(toks)], special_token_ids=[len(toks)]))
    want = [0] + [len(os.path.commonprefix([a, b])) for a, b in zip(idx.toks, idx.toks[1:])]
    assert idx.common_prefixes() == want
