"""torch bitmask helper and the transformers LogitsProcessor (CPU; GPU where present).

The generation tests run a randomly initialized tiny Qwen2 model built from a
local config (no download) over the real Qwen2.5 vocabulary (151,936 logits).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import stackmask  # noqa: E402
from stackmask import TokenRejected  # noqa: E402
from stackmask.integrations.torch import apply_token_bitmask_inplace, bitmask_to_bool  # noqa: E402
from stackmask.runtime import ids_to_mask, mask_to_ids  # noqa: E402

NEG = float("-inf")


# ---------------------------------------------------------------------------
# apply_token_bitmask_inplace
# ---------------------------------------------------------------------------

def _random_masks(rng, n, vocab):
    ids = [rng.choice(vocab, size=rng.integers(1, vocab), replace=False) for _ in range(n)]
    masks = np.stack([ids_to_mask(i, vocab) for i in ids])
    return ids, masks


def _expected(logits: np.ndarray, ids_per_row, rows=None):
    out = logits.copy()
    rows = range(len(ids_per_row)) if rows is None else rows
    for r, ids in zip(rows, ids_per_row):
        keep = np.zeros(out.shape[1], dtype=bool)
        ids = np.asarray(ids)
        keep[ids[ids < out.shape[1]]] = True
        out[r, ~keep] = NEG
    return out


@pytest.mark.parametrize("width", [100, 128, 150, 70])   # equal bits, padding bits, wider, narrower
@pytest.mark.parametrize("kind", ["numpy", "torch", "uint32"])
def test_apply_bitmask_matches_reference(width, kind):
    rng = np.random.default_rng(width)
    vocab = 100                                      # 4 words = 128 bits
    ids, masks = _random_masks(rng, 3, vocab)
    ids[0] = np.array([0, 31, 32, 63, 99])           # sign bits of words 0 and 1
    masks[0] = ids_to_mask(ids[0], vocab)
    logits = rng.standard_normal((3, width)).astype(np.float32)
    bm = {"numpy": masks, "torch": torch.from_numpy(masks),
          "uint32": masks.view(np.uint32)}[kind]
    t = torch.from_numpy(logits.copy())
    ret = apply_token_bitmask_inplace(t, bm)
    assert ret is t
    np.testing.assert_array_equal(t.numpy(), _expected(logits, ids))
    if width > 128:
        assert torch.isinf(t[:, 128:]).all()           # columns past the mask are disallowed


def test_apply_bitmask_indices_full_and_compact():
    rng = np.random.default_rng(1)
    vocab = 80
    ids, masks = _random_masks(rng, 4, vocab)
    logits = rng.standard_normal((4, vocab)).astype(np.float32)
    # full-batch mask, rows selected by indices (xgrammar / vLLM convention)
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, masks, indices=[2, 0])
    np.testing.assert_array_equal(t.numpy(), _expected(logits, [ids[2], ids[0]], rows=[2, 0]))
    assert np.array_equal(t.numpy()[[1, 3]], logits[[1, 3]])       # untouched rows
    # compact mask: row k applies to logits row indices[k]
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, masks[:2], indices=torch.tensor([3, 1]))
    np.testing.assert_array_equal(t.numpy(), _expected(logits, [ids[0], ids[1]], rows=[3, 1]))
    # empty index list: nothing happens
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, masks, indices=[])
    assert np.array_equal(t.numpy(), logits)


def test_apply_bitmask_1d_and_half_precision():
    vocab = 40
    ids = [1, 5, 39]
    mask = ids_to_mask(ids, vocab)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        t = torch.zeros(vocab, dtype=dtype)
        apply_token_bitmask_inplace(t, mask)
        assert torch.isfinite(t).nonzero().flatten().tolist() == ids


def test_apply_bitmask_errors():
    mask = ids_to_mask([1], 40)
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(3, 40), np.stack([mask, mask]))
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(3, 40), np.stack([mask, mask]), indices=[0, 1, 2])
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(torch.zeros(1, 40), mask.astype(np.int64)[None])
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(torch.zeros(1, 40, dtype=torch.long), mask[None])
    with pytest.raises(IndexError):
        apply_token_bitmask_inplace(torch.zeros(2, 40), np.stack([mask]), indices=[5])


def test_bitmask_unpack_full_qwen_width_is_vectorized():
    """151,936-wide logits for 64 rows: equal to the numpy unpacking, and fast
    (tensor ops, no Python loop over the vocabulary)."""
    import time
    rng = np.random.default_rng(0)
    v = 151_936
    masks = rng.integers(-2**31, 2**31, size=(64, v // 32), dtype=np.int64).astype(np.int32)
    t0 = time.perf_counter()
    bits = bitmask_to_bool(torch.from_numpy(masks), v)
    dt = time.perf_counter() - t0
    ref = np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little")[:, :v].astype(bool)
    assert np.array_equal(bits.numpy(), ref)
    assert dt < 2.0, dt            # a Python loop over 9.7M bits would take many seconds


def test_tensor_op_unpacking_used_off_cpu():
    """The device (GPU) unpacking path, run here on CPU tensors."""
    from stackmask.integrations.torch import _unpack_bytes
    rng = np.random.default_rng(3)
    masks = rng.integers(-2**31, 2**31, size=(5, 7), dtype=np.int64).astype(np.int32)
    ref = np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little").astype(bool)
    by = torch.from_numpy(masks).view(torch.uint8)
    for ncols in (224, 200, 1):
        got = _unpack_bytes(by[:, :(ncols + 7) // 8], ncols)
        assert np.array_equal(got.numpy(), ref[:, :ncols])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_apply_bitmask_cuda():
    rng = np.random.default_rng(2)
    ids, masks = _random_masks(rng, 3, 300)
    logits = rng.standard_normal((3, 320)).astype(np.float32)
    t = torch.from_numpy(logits).cuda()
    apply_token_bitmask_inplace(t, torch.from_numpy(masks).pin_memory(), indices=[0, 1, 2])
    np.testing.assert_array_equal(t.cpu().numpy(), _expected(logits, ids))


# ---------------------------------------------------------------------------
# StackmaskLogitsProcessor with a tiny random Qwen2 model
# ---------------------------------------------------------------------------

PATTERN = r'\{"n": (0|[1-9][0-9]{0,2}), "ok": (true|false)\}'
EOS = (151643, 151645)
PAD = 151643
OTHER_PAD = 151654          # <|vision_pad|>: a pad id that is not an EOS id


@pytest.fixture(scope="module")
def torch_one_thread():
    # tiny matmuls on a 2-core runner are ~100x slower with several threads
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_model(torch_one_thread):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=151_936, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=256, tie_word_embeddings=True,
                      bos_token_id=PAD, eos_token_id=list(EOS), pad_token_id=PAD)
    return Qwen2ForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def regex_constraint(qwen_vocab):
    return stackmask.Constraint(stackmask.Grammar.from_regex(PATTERN), qwen_vocab)


def _prompts(enc, texts):
    """Left-padded batch (what generate expects for decoder-only models)."""
    rows = [enc.encode(t) for t in texts]
    width = max(map(len, rows))
    ids = torch.tensor([[PAD] * (width - len(r)) + r for r in rows])
    att = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    return ids, att


def _check_rows(c, vocab, generated, max_new, prefix=b""):
    """Every row is a sentence ended by EOS (then only EOS/pad), or a valid
    prefix cut by max_new_tokens. Returns the texts of the finished rows."""
    texts = []
    for row in generated:
        s = c.start() if not prefix else c.commit_bytes(c.start(), prefix)
        data = bytearray(prefix)
        for k, t in enumerate(row):
            if s.finished:
                assert t in EOS or t == PAD, (k, t)
                continue
            s = c.commit(s, t)                     # raises TokenRejected if not allowed
            if not s.finished:
                data += vocab.tokens[t]
        if s.finished:
            text = bytes(data).decode("utf-8")
            assert re.fullmatch(PATTERN, text), text
            texts.append(text)
        else:
            assert len(row) == max_new
    return texts


def _generate(model, ids, att, proc, **kw):
    from transformers import LogitsProcessorList
    procs = LogitsProcessorList([proc]) if proc is not None else None
    return model.generate(ids, attention_mask=att, logits_processor=procs, pad_token_id=PAD,
                          eos_token_id=list(EOS), **kw)


@pytest.mark.parametrize("mode", ["greedy", "sample"])
def test_generate_parses(tiny_model, regex_constraint, qwen_vocab, qwen_encoding, mode):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    ids, att = _prompts(qwen_encoding, ["Give me JSON:", "hi", "a b c d e f"])
    max_new = 24
    kw = {"do_sample": False} if mode == "greedy" else {"do_sample": True, "top_k": 0, "top_p": 1.0}
    torch.manual_seed(1)
    proc = StackmaskLogitsProcessor(c, pad_token_id=PAD)
    out = _generate(tiny_model, ids, att, proc, max_new_tokens=max_new, **kw)
    gen = out[:, ids.shape[1]:].tolist()
    texts = _check_rows(c, qwen_vocab, gen, max_new)
    assert texts, "no row finished"                  # the grammar's sentences are short
    # the processor saw every token but the last one generated
    assert [s.finished for s in proc.states] == [any(t in EOS for t in r[:-1]) for r in gen]


def test_generate_sample_num_return_sequences(tiny_model, regex_constraint, qwen_vocab,
                                              qwen_encoding):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    ids, att = _prompts(qwen_encoding, ["x", "JSON please"])
    torch.manual_seed(7)
    proc = StackmaskLogitsProcessor(c, pad_token_id=PAD)
    out = _generate(tiny_model, ids, att, proc, max_new_tokens=20, do_sample=True,
                    num_return_sequences=2, temperature=1.5, top_k=0)
    assert out.shape[0] == 4
    _check_rows(c, qwen_vocab, out[:, ids.shape[1]:].tolist(), 20)


def test_generate_beam_search(tiny_model, regex_constraint, qwen_vocab, qwen_encoding):
    """Beams reorder rows every step: each row takes the history it continues."""
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    ids, att = _prompts(qwen_encoding, ["beam", "two beams"])
    proc = StackmaskLogitsProcessor(c, pad_token_id=PAD)
    out = _generate(tiny_model, ids, att, proc, max_new_tokens=20, num_beams=3, do_sample=False)
    _check_rows(c, qwen_vocab, out[:, ids.shape[1]:].tolist(), 20)


def test_unconstrained_model_does_not_parse(tiny_model, regex_constraint, qwen_vocab,
                                            qwen_encoding):
    """Sanity: the checks above can fail -- the random model alone emits junk."""
    ids, att = _prompts(qwen_encoding, ["Give me JSON:", "hi"])
    out = _generate(tiny_model, ids, att, None, max_new_tokens=8, do_sample=False)
    with pytest.raises(TokenRejected):
        _check_rows(regex_constraint, qwen_vocab, out[:, ids.shape[1]:].tolist(), 8)


def test_initial_state_continues_prefilled_text(tiny_model, regex_constraint, qwen_vocab,
                                                qwen_encoding):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    prefix = b'{"n": 4'
    ids, att = _prompts(qwen_encoding, ['{"n": 4', '{"n": 4'])
    s0 = c.commit_bytes(c.start(), prefix)
    proc = StackmaskLogitsProcessor(c, prompt_lengths=ids.shape[1], initial_state=s0,
                                    pad_token_id=PAD)
    out = _generate(tiny_model, ids, att, proc, max_new_tokens=16, do_sample=True, top_k=0)
    texts = _check_rows(c, qwen_vocab, out[:, ids.shape[1]:].tolist(), 16, prefix=prefix)
    assert all(t.startswith('{"n": 4') for t in texts)


# ---------------------------------------------------------------------------
# the processor without a model: prompt columns, rollback, reordering, EOS rows
# ---------------------------------------------------------------------------

def _tok(vocab, enc, text):
    ids = enc.encode(text)
    assert b"".join(vocab.tokens[i] for i in ids) == text.encode()
    return ids


def _call(proc, rows, width):
    ids = torch.tensor(rows)
    scores = torch.zeros((len(rows), width))
    out = proc(ids, scores)
    assert torch.equal(scores, torch.zeros_like(scores))       # not in place by default
    return out


def _finite(row) -> set:
    return set(torch.isfinite(row).nonzero().flatten().tolist())


def test_processor_steps_rollback_and_reorder(regex_constraint, qwen_vocab, qwen_encoding):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    v = qwen_vocab
    a = _tok(v, qwen_encoding, '{"n": 12')
    b = _tok(v, qwen_encoding, '{"n": 7, ')
    b = b[:len(a)]
    assert len(a) == len(b) and a != b
    text = lambda ids: b"".join(v.tokens[t] for t in ids)      # noqa: E731
    state = lambda ids: c.commit_bytes(c.start(), text(ids))    # noqa: E731
    prompt = [[11, 22], [33, 44]]
    proc = StackmaskLogitsProcessor(c, pad_token_id=PAD)
    width = 151_936
    out = _call(proc, prompt, width)
    start_ids = set(c.allowed_tokens(c.start()).tolist())
    assert _finite(out[0]) == _finite(out[1]) == start_ids
    # several new tokens in one call are fine
    out = _call(proc, [prompt[0] + a, prompt[1] + b], width)
    assert _finite(out[0]) == set(c.allowed_tokens(state(a)).tolist())
    assert _finite(out[1]) == set(c.allowed_tokens(state(b)).tolist())
    # rows swapped and extended (beam search): each row continues the other's history
    x = int(c.allowed_tokens(state(b))[0])
    y = int(c.allowed_tokens(state(a))[-1])
    out = _call(proc, [prompt[1] + b + [x], prompt[0] + a + [y]], width)
    assert _finite(out[0]) == set(c.allowed_tokens(state(b + [x])).tolist())
    assert _finite(out[1]) == set(c.allowed_tokens(state(a + [y])).tolist())
    assert proc.generated == [b + [x], a + [y]]
    # both rows rolled back (assisted decoding rejected draft tokens)
    out = _call(proc, [prompt[1] + b[:2], prompt[0] + a[:2]], width)
    assert _finite(out[0]) == set(c.allowed_tokens(state(b[:2])).tolist())
    assert _finite(out[1]) == set(c.allowed_tokens(state(a[:2])).tolist())
    assert proc.generated == [b[:2], a[:2]]


def test_processor_ends_rows_at_eos(regex_constraint, qwen_vocab, qwen_encoding):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    done = _tok(qwen_vocab, qwen_encoding, '{"n": 0, "ok": true}')
    part = _tok(qwen_vocab, qwen_encoding, '{"n": 0, "ok": tr')
    k = min(len(done), len(part)) - 2
    proc = StackmaskLogitsProcessor(c, prompt_lengths=[1, 1 + len(done) - k],
                                    pad_token_id=OTHER_PAD)
    width = 151_936
    pre1 = [5] * (1 + len(done) - k)
    out = _call(proc, [[5] + done, pre1 + part[:k]], width)
    assert _finite(out[0]) == set(EOS)                 # a complete sentence: EOS only
    out = _call(proc, [[5] + done + [EOS[1]], pre1 + part[:k + 1]], width)
    assert _finite(out[0]) == {EOS[0], EOS[1], OTHER_PAD}    # ended: EOS and padding
    assert proc.states[0].finished and not proc.states[1].finished
    assert EOS[0] not in _finite(out[1])
    # after EOS anything (padding) is ignored
    out = _call(proc, [[5] + done + [EOS[1], OTHER_PAD], pre1 + part[:k + 2]], width)
    assert _finite(out[0]) == {EOS[0], EOS[1], OTHER_PAD}


def test_processor_rejects_or_ends_bad_rows(regex_constraint, qwen_vocab, qwen_encoding):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    c = regex_constraint
    bad = _tok(qwen_vocab, qwen_encoding, "hello")
    proc = StackmaskLogitsProcessor(c)
    _call(proc, [[1]], 151_936)
    with pytest.raises(TokenRejected, match="batch row 0"):
        _call(proc, [[1] + bad], 151_936)
    proc = StackmaskLogitsProcessor(c, on_reject="eos", pad_token_id=OTHER_PAD)
    _call(proc, [[1], [1]], 151_936)
    out = _call(proc, [[1] + bad, [1] + _tok(qwen_vocab, qwen_encoding, "{")], 151_936)
    assert set(torch.isfinite(out[0]).nonzero().flatten().tolist()) == {EOS[0], EOS[1], OTHER_PAD}
    assert _finite(out[1]) == set(c.allowed_tokens(c.commit_bytes(c.start(), b"{")).tolist())
    with pytest.raises(ValueError, match="batch size changed"):
        _call(proc, [[1]], 151_936)
    proc.reset()
    _call(proc, [[1]], 151_936)


def test_processor_logits_wider_than_vocab(qwen_encoding):
    """Logits wider than the vocabulary's mask (padded embedding rows) are masked off."""
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    vocab = stackmask.Vocab([b"a", b"b", b"<e>"], eos_token_ids=[2])
    c = stackmask.Constraint('start: "ab"', vocab)
    proc = StackmaskLogitsProcessor(c, inplace=True)
    scores = torch.zeros((1, 70))
    out = proc(torch.tensor([[9, 9, 0]]), scores.clone())      # prompt width taken at first call
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [0]
    proc2 = StackmaskLogitsProcessor(c, prompt_lengths=2)
    out = proc2(torch.tensor([[9, 9, 0]]), torch.zeros((1, 70)))
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [1]
    scores = torch.zeros((1, 70))
    assert proc2(torch.tensor([[9, 9, 0, 1]]), scores) is not scores
    assert mask_to_ids(c.get_mask(proc2.states[0]), 3).tolist() == [2]


def test_processor_beams_continue_rows_of_their_own_prompt():
    """Reordered rows take a history only from rows with the same initial state: two
    prompts with different starts, two beams each, where beam 2 of prompt B continues
    beam 3 (its own prompt) and not beam 0 of prompt A, whose tokens also match."""
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    vocab = stackmask.Vocab([b"a", b"b", b"c", b"x", b"<e>"], eos_token_ids=[4])
    c = stackmask.Constraint('start: "xab" | "ac"', vocab, cache_dir=False, progress=False)
    sa, sb = c.commit_bytes(c.start(), b"x"), c.start()
    proc = StackmaskLogitsProcessor(c, initial_state=[sa, sa, sb, sb])
    p = [9]
    z = torch.zeros(4, 5)
    proc(torch.tensor([p, p, p, p]), z)
    proc(torch.tensor([p + [0], p + [0], p + [3], p + [0]]), z)
    # prompt B's rows end up both continuing row 3 ("a" from B's start), prompt A's row 0
    # has the same tokens but started after "x"
    out = proc(torch.tensor([p + [0, 1], p + [0, 1], p + [0, 2], p + [0, 2]]), z)
    assert proc.states[2].finished is False
    assert _finite(out[2]) == {4} and _finite(out[3]) == {4}        # "ac" is a sentence
    assert _finite(out[0]) == {4} and _finite(out[1]) == {4}        # "xab" is one


def test_processor_ids_past_the_vocabulary_follow_on_reject():
    """A generated id past the vocabulary (a logit column beyond it) is a rejection:
    TokenRejected naming the row, or with on_reject="eos" the row ends."""
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    vocab = stackmask.Vocab([b"a", b"b", b"<e>"], eos_token_ids=[2])
    c = stackmask.Constraint('start: "ab"', vocab, cache_dir=False, progress=False)
    proc = StackmaskLogitsProcessor(c)
    proc(torch.tensor([[9]]), torch.zeros(1, 40))
    with pytest.raises(TokenRejected, match="batch row 0: the generated token id is outside the vocabulary"):
        proc(torch.tensor([[9, 37]]), torch.zeros(1, 40))
    proc = StackmaskLogitsProcessor(c, on_reject="eos")
    proc(torch.tensor([[9], [9]]), torch.zeros(2, 40))
    out = proc(torch.tensor([[9, 37], [9, 0]]), torch.zeros(2, 40))
    assert _finite(out[0]) == {2} and proc.states[0].finished
    assert _finite(out[1]) == {1}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_processor_cuda_scores(regex_constraint):
    from stackmask.integrations.transformers import StackmaskLogitsProcessor
    proc = StackmaskLogitsProcessor(regex_constraint)
    out = proc(torch.tensor([[1, 2]]).cuda(), torch.zeros((1, 151_936)).cuda())
    assert out.is_cuda
    assert set(torch.isfinite(out[0]).nonzero().flatten().tolist()) == \
        set(regex_constraint.allowed_tokens(regex_constraint.start()).tolist())


# ---------------------------------------------------------------------------
# the examples run as written
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["serving_loop.py", "transformers_example.py"])
def test_example_runs(name, torch_one_thread, capsys):
    import runpy
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / name
    ns = runpy.run_path(str(path), run_name="stackmask_example")
    assert ns["main"]() == 0
    out = capsys.readouterr().out
    assert "done" in out or "constrained" in out
