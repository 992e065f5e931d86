"""stackmask.runtime.decoding: validate_tokens, fill_masks, forced bytes/tokens,
and sharing one Constraint across threads. Everything is checked against
``get_mask`` (the reference oracle) and ``commit``."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import stackmask
from stackmask import Constraint, TokenRejected, Vocab
from stackmask.grammars import load
from stackmask.runtime import decoding
from stackmask.runtime import mask_to_ids

from conftest import run_in_threads

EXTRA = ['{"', '":', '": ', '", "', "true", "tr", "ue", "false", "null", ", ", '"}', "12", "123",
         " [", "],", "é", "ab", "abc", "select", " from"]


def small_vocab(extra=EXTRA, eos=1):
    toks = [bytes([i]) for i in range(256)] + [e.encode() for e in extra]
    n = len(toks)
    toks += [b"<eos%d>" % k for k in range(eos)]
    ids = list(range(n, n + eos))
    return Vocab(toks, eos_token_ids=ids, special_token_ids=ids)


@pytest.fixture(scope="module")
def vocab():
    return small_vocab()


@pytest.fixture(scope="module")
def json_c(vocab):
    return Constraint(load("json"), vocab)


def greedy_ids(vocab: Vocab, text: bytes) -> list[int]:
    """Longest-match tokenization over the vocabulary's text tokens."""
    by = {}
    for i in vocab.text_token_ids():
        by.setdefault(vocab.tokens[int(i)], int(i))
    out, i = [], 0
    longest = max(map(len, by))
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            if text[i:i + n] in by:
                out.append(by[text[i:i + n]])
                i += n
                break
        else:
            raise ValueError(text[i:])
    return out


def random_walk(c: Constraint, rng: random.Random, steps: int):
    """States along a random path of allowed tokens (EOS only when nothing else)."""
    eos = c.vocab.eos_token_ids
    s = c.start()
    out = [s]
    for _ in range(steps):
        ids = [int(i) for i in c.allowed_tokens(s)]
        text = [i for i in ids if i not in eos]
        if not text:
            break
        s = c.commit(s, rng.choice(text))
        out.append(s)
    return out


# ---------------------------------------------------------------------------
# validate_tokens
# ---------------------------------------------------------------------------

def test_validate_tokens_counts_the_accepted_prefix(json_c, vocab):
    c = json_c
    eos = next(iter(vocab.eos_token_ids))
    good = greedy_ids(vocab, b'{"a": [1, 2], "b": true}')
    s = c.start()
    # an id outside the vocabulary raises wherever it is, also after a rejection
    rejected = greedy_ids(vocab, b"}")
    for draft in (good + [vocab.size], rejected + [vocab.size], [-1]):
        with pytest.raises(ValueError):
            c.validate_tokens(s, draft)
    with pytest.raises(TypeError):                      # not an int: also after a rejection
        c.validate_tokens(s, rejected + ["x"])
    before = c.get_mask(s).copy()
    assert decoding.validate_tokens(c, s, good) == len(good)
    assert c.validate_tokens(s, good + [eos]) == len(good) + 1
    assert c.validate_tokens(s, good + [eos, eos]) == len(good) + 2     # EOS after the end
    assert c.validate_tokens(s, good + [eos, good[0]]) == len(good) + 1
    assert c.validate_tokens(s, good[:-1] + [eos]) == len(good) - 1     # not a sentence yet
    for k in (0, 3, len(good) - 1):
        bad = good[:k] + greedy_ids(vocab, b"}") + good[k:]
        n = c.validate_tokens(s, bad)
        assert k <= n < len(bad)
        # the count is exactly the committable prefix
        st = s
        for t in bad[:n]:
            st = c.commit(st, t)
        if n < len(bad):
            with pytest.raises(TokenRejected):
                c.commit(st, bad[n])
    assert c.validate_tokens(s, []) == 0
    assert np.array_equal(c.get_mask(s), before)                       # nothing changed
    with pytest.raises(ValueError):
        c.validate_tokens(s, [vocab.size])


def test_commit_tokens(json_c, vocab):
    c = json_c
    ids = greedy_ids(vocab, b"[1, 2]")
    s = decoding.commit_tokens(c, c.start(), ids)
    assert c.is_accepting(s)
    with pytest.raises(TokenRejected):
        decoding.commit_tokens(c, c.start(), ids + ids)


# ---------------------------------------------------------------------------
# fill_masks
# ---------------------------------------------------------------------------

def test_fill_masks_matches_get_mask(json_c):
    c = json_c
    states = random_walk(c, random.Random(3), 12)
    states.append(states[2])                                      # same object twice
    n = len(states)
    out = np.full((n + 3, c.mask_words), 7, dtype=np.int32)
    rows = list(range(n + 3))
    random.Random(1).shuffle(rows)
    rows = rows[:n]
    assert c.fill_masks(states, out, rows) is out
    for st, r in zip(states, rows):
        assert np.array_equal(out[r], c.get_mask(st))
    untouched = sorted(set(range(n + 3)) - set(rows))
    assert (out[untouched] == 7).all()
    # rows=None, an unconstrained (None) row, and wider rows (zero padding)
    wide = np.full((3, c.mask_words + 2), 7, dtype=np.int32)
    decoding.fill_masks(c, [states[1], None, states[4]], wide)
    assert np.array_equal(wide[0, :c.mask_words], c.get_mask(states[1]))
    assert (wide[0, c.mask_words:] == 0).all()
    assert (wide[1] == -1).all()
    assert np.array_equal(wide[2, :c.mask_words], c.get_mask(states[4]))
    u = np.zeros((1, c.mask_words), dtype=np.uint32)
    decoding.fill_masks(c, [states[5]], u)
    assert np.array_equal(u.view(np.int32)[0], c.get_mask(states[5]))


def test_fill_masks_rows_of_strided_and_read_only_arrays(json_c):
    """C-contiguous arrays are written through slices of one flat view, others row by
    row: the same masks; negative rows count from the end, rows out of range raise
    (a slice would clip silently), and a read-only array is refused."""
    c = json_c
    states = random_walk(c, random.Random(5), 6)[1:6]
    base = np.full((10, c.mask_words + 3), 7, dtype=np.int32)
    strided = base[::2, 1:]                       # every other row, offset by one word
    assert not strided.flags.c_contiguous
    decoding.fill_masks(c, states, strided)
    for k, st in enumerate(states):
        assert np.array_equal(strided[k, :c.mask_words], c.get_mask(st))
        assert (strided[k, c.mask_words:] == 0).all()
    assert (base[1::2] == 7).all() and (base[:, 0] == 7).all()
    out = np.full((4, c.mask_words), 7, dtype=np.int32)
    decoding.fill_masks(c, states[:2], out, rows=[-1, 1])
    assert np.array_equal(out[3], c.get_mask(states[0]))
    assert np.array_equal(out[1], c.get_mask(states[1]))
    assert (out[[0, 2]] == 7).all()
    for bad in (4, -5):
        with pytest.raises(IndexError):
            decoding.fill_masks(c, states[:1], out, rows=[bad])
    ro = np.zeros((1, c.mask_words), dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises((ValueError, TypeError)):
        decoding.fill_masks(c, states[:1], ro)
    empty = np.zeros((0, c.mask_words), dtype=np.int32)        # an empty batch
    assert decoding.fill_masks(c, [], empty) is empty


def test_fill_masks_rows_written_twice_keep_the_last_mask(json_c):
    """A row given twice holds the later state's mask, and a state seen again copies its
    mask from a row that still holds it (not from one overwritten since)."""
    c = json_c
    walk = random_walk(c, random.Random(8), 8)
    a = walk[0]
    b = next(s for s in walk if not np.array_equal(c.get_mask(s), c.get_mask(a)))
    out = np.zeros((3, c.mask_words), dtype=np.int32)
    decoding.fill_masks(c, [a, b, a], out, rows=[0, 0, 2])
    assert np.array_equal(out[0], c.get_mask(b)) and np.array_equal(out[2], c.get_mask(a))
    decoding.fill_masks(c, [a, None, a], out, rows=[1, 1, 2])
    assert (out[1] == -1).all() and np.array_equal(out[2], c.get_mask(a))


def test_fill_masks_errors_and_torch_out(json_c):
    c = json_c
    s = c.start()
    with pytest.raises(ValueError):
        c.fill_masks([s], np.zeros((1, c.mask_words - 1), np.int32))
    with pytest.raises(ValueError):
        c.fill_masks([s, s], np.zeros((1, c.mask_words), np.int32))
    with pytest.raises(ValueError):
        c.fill_masks([s], np.zeros((2, c.mask_words), np.int32), rows=[0, 1])
    with pytest.raises(TypeError):
        c.fill_masks([s], np.zeros((1, c.mask_words), np.int64))
    with pytest.raises(TypeError):
        c.fill_masks(["x"], np.zeros((1, c.mask_words), np.int32))
    torch = pytest.importorskip("torch")
    t = torch.zeros((2, c.mask_words), dtype=torch.int32)
    c.fill_masks([s], t, rows=[1])
    assert np.array_equal(t[1].numpy(), c.get_mask(s))
    assert (t[0] == 0).all()


# ---------------------------------------------------------------------------
# forced bytes: checked against the mask
# ---------------------------------------------------------------------------

KEYWORDS = r"""
start: "select " NAME ("," NAME)* " from " NAME ";"
NAME: /[a-z]+/
"""

REGEX = r'\{"n": (0|[1-9][0-9]{0,2}), "ok": (true|false)\}'


def _check_forced_bytes(c: Constraint, s) -> bytes:
    v = c.vocab
    f = c.forced_bytes(s)
    assert f == decoding.forced_bytes(c, s)
    ids = [int(i) for i in c.allowed_tokens(s)]
    eos = [i for i in ids if i in v.eos_token_ids]
    if f:
        assert not eos, "EOS allowed although bytes are forced"
    for i in ids:
        if i in v.eos_token_ids:
            continue
        w = v.tokens[i]
        assert w.startswith(f) or f.startswith(w), (f, w)
    # every single-byte token spelling a prefix of f is allowed
    for k in range(1, len(f) + 1):
        st = c.commit_bytes(s, f[:k - 1])
        assert f[k - 1] in [v.tokens[i][0] for i in c.allowed_tokens(st)
                            if i not in v.eos_token_ids]
    # maximal: after f the text ends or at least two bytes may follow
    after = c.commit_bytes(s, f)
    if len(f) < 256 and not c.is_accepting(after):
        firsts = {v.tokens[i][0] for i in c.allowed_tokens(after) if i not in v.eos_token_ids}
        assert len(firsts) >= 2, (f, firsts)
    return f


@pytest.mark.parametrize("grammar", ["json", "keywords", "regex"])
def test_forced_bytes_against_mask(grammar, vocab):
    g = {"json": load("json"), "keywords": KEYWORDS,
         "regex": stackmask.Grammar.from_regex(REGEX)}[grammar]
    c = Constraint(g, vocab)
    seen = set()
    for seed in range(4):
        for s in random_walk(c, random.Random(seed), 25):
            seen.add(_check_forced_bytes(c, s))
    assert any(len(f) >= 3 for f in seen) or grammar == "json"


def test_forced_bytes_examples(vocab):
    c = Constraint(KEYWORDS, vocab)
    s = c.start()
    assert c.forced_bytes(s) == b"select "
    s = c.commit_bytes(s, b"select ab")
    assert c.forced_bytes(s) == b""                       # more letters, "," or " from "
    s = c.commit_bytes(s, b" ")
    assert c.forced_bytes(s) == b"from "
    assert c.forced_bytes(s, max_bytes=2) == b"fr"
    s = c.commit_bytes(s, b"from x;")
    assert c.is_accepting(s) and c.forced_bytes(s) == b""
    eos = next(iter(vocab.eos_token_ids))
    assert c.forced_bytes(c.commit(s, eos)) == b""        # finished


# ---------------------------------------------------------------------------
# forced tokens
# ---------------------------------------------------------------------------

def test_forced_tokens_by_mask():
    v = Vocab([b"ab", b"c", b"d", b"e", b"x", b"<e>"], eos_token_ids=[5])
    c = Constraint('start: "abc" ("d" | "e") "x"', v)
    s = c.start()
    assert c.forced_tokens(s) == [0, 1]                    # "ab", "c": each the only allowed id
    s2 = c.commit_bytes(s, b"abc")
    assert c.forced_tokens(s2) == []                      # d or e
    s3 = c.commit_bytes(s2, b"d")
    assert c.forced_tokens(s3) == [4, 5]                  # "x", then EOS (the only EOS id)
    assert c.forced_tokens(c.commit(c.commit(s3, 4), 5)) == []
    assert c.forced_tokens(s, max_tokens=1) == [0]


def test_forced_tokens_by_mask_property(json_c):
    c = json_c
    eos = c.vocab.eos_token_ids
    for s in random_walk(c, random.Random(11), 20):
        forced = c.forced_tokens(s)
        st = s
        for t in forced:
            assert c.allowed_tokens(st).tolist() == [t]
            if t in eos:
                break
            st = c.commit(st, t)
        else:
            assert len(c.allowed_tokens(st)) != 1


def _longest_match_encoder(vocab: Vocab):
    def encode(text: str):
        return greedy_ids(vocab, text.encode())
    return encode


def test_forced_tokens_with_tokenizer_small():
    toks = [b"a", b"b", b"c", b"d", b"ab", b"abc", b"<e>", b"<f>"]
    # "abc" could be chosen by the model: the boundary after "ab" is not stable
    v = Vocab(toks, eos_token_ids=[6, 7], special_token_ids=[6, 7])
    c = Constraint('start: "ab" ("c" | "d")', v)
    enc = _longest_match_encoder(v)
    assert c.forced_bytes(c.start()) == b"ab"
    assert c.forced_tokens(c.start(), enc) == []
    # without a token crossing the end of the forced text, "ab" is forced
    v2 = Vocab(toks[:5] + [b"<e>"], eos_token_ids=[5], special_token_ids=[5])
    c2 = Constraint('start: "ab" ("c" | "d")', v2)
    assert c2.forced_tokens(c2.start(), _longest_match_encoder(v2)) == [4]
    # a closed text: everything forced, then the single EOS id
    c3 = Constraint('start: "abc"', v2)
    assert c3.forced_tokens(c3.start(), _longest_match_encoder(v2)) == [4, 2, 5]
    c4 = Constraint('start: "abc"', v)                   # two EOS ids: none appended
    assert c4.forced_tokens(c4.start(), enc) == [5]
    assert c4.forced_tokens(c4.commit(c4.start(), 5), enc) == []    # complete: 2 EOS ids
    # a tokenizer whose tokens do not spell the text (normalization) is cut there
    assert c2.forced_tokens(c2.start(), lambda s: [0, 0]) == [0]


def test_forced_tokens_limits_and_a_closed_end_at_the_byte_bound():
    """``max_tokens=0`` forces nothing on both paths, ``max_tokens`` also bounds the
    appended EOS, and a text closed exactly at ``max_bytes`` still gets its EOS id."""
    v = Vocab([b"a", b"b", b"<e>"], eos_token_ids=[2], special_token_ids=[2])
    c = Constraint('start: "ab"', v, cache_dir=False)
    enc = _longest_match_encoder(v)
    s = c.start()
    assert c.forced_tokens(s, enc) == [0, 1, 2]
    assert c.forced_tokens(s, enc, max_bytes=2) == [0, 1, 2]      # closed at the bound
    assert c.forced_tokens(s, enc, max_bytes=1) == [0]            # cut before the end
    assert c.forced_bytes(s, max_bytes=2) == b"ab"
    for k, want in ((0, []), (1, [0]), (2, [0, 1]), (3, [0, 1, 2])):
        assert c.forced_tokens(s, enc, max_tokens=k) == want
    assert c.forced_tokens(s, max_tokens=0) == []                   # by the mask


def test_forced_tokens_with_tokenizer_mid_character():
    v = small_vocab()
    c = Constraint('start: "éa" | "éb"', v)
    s = c.commit(c.start(), 0xC3)                          # first byte of "é"
    assert c.forced_bytes(s) == b"\xa9"
    assert c.forced_tokens(s, _longest_match_encoder(v)) == []
    assert c.forced_tokens(s) == [0xA9]                    # by the mask: the lone byte token
    s0 = c.start()
    assert c.forced_bytes(s0) == "é".encode()


def test_forced_tokens_qwen_tiktoken(qwen_vocab, qwen_encoding):
    v = qwen_vocab
    c = Constraint(stackmask.Grammar.from_regex(REGEX), v)
    s = c.start()
    forced = c.forced_tokens(s, qwen_encoding)
    text = b"".join(v.tokens[t] for t in forced)
    # Qwen splits digits from spaces, so no token crosses the end of '{"n": '
    assert text == b'{"n": '
    assert forced == qwen_encoding.encode(text.decode())     # the tokenizer's own tokens
    for doc in ('{"n": 12, "ok": true}', '{"n": 0, "ok": false}'):
        ids = qwen_encoding.encode(doc)
        st = c.start()
        for t in ids + [None]:
            f = c.forced_bytes(st)
            ft = c.forced_tokens(st, qwen_encoding)
            spelled = b"".join(v.tokens[x] for x in ft)
            assert f.startswith(spelled)
            assert ft == qwen_encoding.encode(spelled.decode()) if spelled else ft == []
            cur = st
            for x in ft:
                assert x in set(c.allowed_tokens(cur).tolist())
                cur = c.commit(cur, x)
            if t is not None:
                st = c.commit(st, t)
        assert c.is_accepting(st)
    # a plain callable works too
    assert c.forced_tokens(s, qwen_encoding.encode_ordinary) == forced
    # here the tail ' "' is cut: tokens such as ' "a' cross the end of the forced text
    c2 = Constraint(stackmask.Grammar.from_regex(r'\{"name": "[a-z]+"\}'), v)
    ft = c2.forced_tokens(c2.start(), qwen_encoding)
    assert c2.forced_bytes(c2.start()) == b'{"name": "'
    assert [v.tokens[t] for t in ft] == [b'{"', b"name", b'":']


# ---------------------------------------------------------------------------
# one Constraint shared by several threads
# ---------------------------------------------------------------------------

def _walk_record(c: Constraint, seed: int, steps: int, barrier=None):
    rng = random.Random(seed)
    eos = c.vocab.eos_token_ids
    if barrier is not None:
        barrier.wait()
    s = c.start()
    rec = []
    for _ in range(steps):
        mask = c.get_mask(s)
        ids = [int(i) for i in mask_to_ids(mask, c.vocab.size)]
        text = [i for i in ids if i not in eos]
        rec.append((mask.tobytes(), c.is_accepting(s), c.forced_bytes(s)))
        if not text:
            break
        t = rng.choice(text)
        draft = [t] + [rng.choice(range(c.vocab.size - 1)) for _ in range(2)]
        rec.append(c.validate_tokens(s, draft))
        s = c.commit(s, t)
    return rec


@pytest.mark.parametrize("grammar", ["json", "keywords"])
def test_constraint_is_thread_safe(grammar, vocab):
    g = load("json") if grammar == "json" else KEYWORDS
    seeds = [1, 2, 3, 4]
    steps = 30
    shared = Constraint(g, vocab)              # fresh: caches are filled concurrently
    results = run_in_threads(lambda seed, barrier: _walk_record(shared, seed, steps, barrier),
                             seeds, 1e-6)    # switch threads as often as possible
    for sd in seeds:
        alone = _walk_record(Constraint(g, vocab), sd, steps)
        assert results[sd] == alone, f"seed {sd}: threaded results differ"


def test_constraint_is_thread_safe_qwen(qwen_vocab):
    """The big-vocabulary oracle's lazy setup raced by two threads."""
    g = stackmask.Grammar.from_regex(REGEX)
    shared = Constraint(g, qwen_vocab)
    results = {}
    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=lambda sd=sd: results.__setitem__(
        sd, _walk_record(shared, sd, 8, barrier))) for sd in (5, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sd in (5, 6):
        assert results[sd] == _walk_record(shared, sd, 8)
