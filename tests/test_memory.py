"""Memory stays bounded: a 100k-token decode keeps no old GSS nodes and no growing
memo; every runtime memo respects memo_cache_bytes (and masks stay exact when the
bounds evict constantly); one Constraint shared by many threads gives the masks a
single thread gives (Qwen2.5 vocabulary, eager and lazy, with constantly evicting
caches)."""

from __future__ import annotations

import gc
import random
import sys

import numpy as np
import pytest

from stackmask import Constraint, TokenRejected, Vocab, native
from stackmask.glr import gss
from stackmask.grammars import load as load_grammar
from stackmask.runtime import mask_to_ids

from conftest import run_in_threads

JSON = load_grammar("json")
PIECES = [b"[", b"]", b", ", b",", b" ", b"-", b".", b"e", b"12", b"345", b"6789", b"0"] + [
    bytes([c]) for c in b"123456789"]
NUMBERS_VOCAB = Vocab(PIECES + [b"<eos>"], eos_token_ids=[len(PIECES)],
                      special_token_ids=[len(PIECES)])


def number_tokens(rng: random.Random):
    """Token ids of one JSON number followed by a separator."""
    ids = {p: i for i, p in enumerate(PIECES)}
    out = []
    if rng.random() < 0.3:
        out.append(ids[b"-"])
    out.append(ids[rng.choice([b"12", b"345", b"6789", b"1", b"7"])])
    if rng.random() < 0.3:
        out += [ids[b"."], ids[rng.choice([b"0", b"12", b"345"])]]
    if rng.random() < 0.2:
        out += [ids[b"e"], ids[rng.choice([b"-", b"12"])], ids[b"345"]]
        if PIECES[out[-2]] == b"-":
            out[-1] = ids[b"6789"]
    out.append(ids[rng.choice([b", ", b","])])
    return out


def decode(c: Constraint, n_tokens: int, check_every: int, on_check, seed: int = 0,
           masks_every: int = 1):
    rng = random.Random(seed)
    s = c.commit(c.start(), PIECES.index(b"["))
    done = 1
    pending: list = []
    while done < n_tokens:
        if not pending:
            pending = number_tokens(rng)
        t = pending.pop(0)
        if done % masks_every == 0:
            m = c.get_mask(s)
            assert m[t // 32] >> (t % 32) & 1
        s = c.commit(s, t)
        done += 1
        if done % check_every == 0:
            on_check(done, s)
    return s


def live_nodes() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is gss.Node)


def test_long_decode_keeps_memory_bounded():
    """100k tokens of one JSON array: the number of allocated Python objects does not grow
    between token 10k and token 100k, and only a handful of GSS nodes are alive at the
    end (sys.getallocatedblocks: exact, and free unlike tracemalloc)."""
    c = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False)
    decode(c, 3000, 1000, lambda *a: None)          # warm the memos
    samples = {}

    def sample(done, s):
        if done in (10_000, 100_000):
            gc.collect()
            samples[done] = sys.getallocatedblocks()

    s = decode(c, 100_000, 10_000, sample, seed=1, masks_every=4)
    growth = samples[100_000] - samples[10_000]
    assert growth < 2_000, f"{growth} more allocated blocks after 90k more tokens"
    assert live_nodes() < 200
    s = c.commit(s, PIECES.index(b"1"))
    s = c.commit(s, PIECES.index(b"]"))
    assert c.is_accepting(s)


def test_long_decode_measurement_detects_a_node_leak(monkeypatch):
    """The control for the test above: if old GSS nodes were kept (here: a list holding
    every node a shift creates), the same measurement fails."""
    leak: list = []
    real_shift = gss.GLR.shift

    def leaky_shift(self, starts, term):
        out = real_shift(self, starts, term)
        leak.extend(out)
        return out

    real_shift1 = gss.GLR.shift1

    def leaky_shift1(self, node, term):       # commit's deterministic fast path
        out = real_shift1(self, node, term)
        if isinstance(out, gss.Node):
            leak.append(out)
        return out

    monkeypatch.setattr(gss.GLR, "shift", leaky_shift)
    monkeypatch.setattr(gss.GLR, "shift1", leaky_shift1)
    # the leak is injected into the Python GLR steps: the compiled commit inlines shift1
    monkeypatch.setenv(native.ENV, "1")
    c = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False)
    samples = {}

    def sample(done, s):
        if done in (2_000, 20_000):
            gc.collect()
            samples[done] = sys.getallocatedblocks()

    decode(c, 20_000, 2_000, sample, seed=1, masks_every=50)
    assert samples[20_000] - samples[2_000] > 2_000
    assert live_nodes() > 5_000


SMALL = 4096     # bytes: every memo evicts all the time


def test_every_runtime_memo_respects_its_byte_bound():
    """With memo_cache_bytes=4096 every runtime memo stays under its bound (two
    generations: the bound plus one entry) through many distinct texts, compiled on
    first use (lazy) — and the masks are those of an unbounded constraint."""
    bounded = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False, compile="lazy",
                         memo_cache_bytes=SMALL, mask_cache_bytes=SMALL)
    free = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False)
    rng = random.Random(3)
    peak: dict = {}
    texts = [b'{"a": [1, -2.5e3, "x\\n\\u00e9", true, null], "bc": {}}', b"[[[[[[1]]]]]]",
             b'"\\ud83d\\ude00"', b"-0.0e+12", b'{"k": false}']
    for round_ in range(40):
        text = rng.choice(texts)
        cut = rng.randrange(1, len(text) + 1)
        sb, sf = bounded.start(), free.start()
        for i in range(cut):
            b = text[i:i + 1]
            sb, sf = bounded.commit_bytes(sb, b), free.commit_bytes(sf, b)
            assert np.array_equal(bounded.get_mask(sb), free.get_mask(sf)), (text, i)
            for k, v in bounded.memo_stats().items():
                peak[k] = max(peak.get(k, 0), v)
    assert peak["masks"] <= SMALL
    # two generations of at most half the bound each, plus the entry being added
    for k in ("lexer_steps", "lexer_finishable", "requirements"):
        assert 0 < peak[k] <= SMALL + 400, (k, peak[k])
    # token sets united into masks: dense, or (at most Masker.SPARSE_MAX tokens, compiled
    # path) serialized, in a memo of at most an eighth of the mask cache
    assert peak["dense_token_sets"] <= SMALL + 400 and peak["sparse_token_sets"] <= SMALL // 8
    assert peak["dense_token_sets"] + peak["sparse_token_sets"] > 0
    for k in ("automaton_runs", "token_set_ops", "terminal_outcomes"):
        assert 0 < peak[k] <= 2 * SMALL, (k, peak[k])
    unbounded = free.memo_stats()
    assert unbounded["lexer_steps"] > SMALL          # the bound did matter


def test_token_paths_memo_bounded_in_two_generations():
    """commit's memo of lexing paths per (config, token) holds two generations of at
    most half of memo_cache_bytes each (a full one becomes the old one; entries met
    again move up): bounded, rotated without scanning it, and commits and masks equal
    to an unbounded constraint's."""
    bounded = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False,
                         memo_cache_bytes=SMALL)
    free = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False)
    cap = SMALL // (2 * Constraint.PATHS_ENTRY_BYTES)
    rng = random.Random(9)
    olds, peak = [], 0
    for _ in range(6):
        sb = bounded.commit(bounded.start(), PIECES.index(b"["))
        sf = free.commit(free.start(), PIECES.index(b"["))
        for _ in range(40):
            t = rng.choice(number_tokens(rng))
            try:
                sf = free.commit(sf, t)
            except TokenRejected:
                with pytest.raises(TokenRejected):
                    bounded.commit(sb, t)
                continue
            sb = bounded.commit(sb, t)
            assert np.array_equal(bounded.get_mask(sb), free.get_mask(sf))
            paths = bounded._token_paths
            assert len(paths.cur) <= cap and len(paths.old) <= cap
            old = paths.old                         # kept: ids of dropped ones are reused
            if not any(o is old for o in olds):
                olds.append(old)
            peak = max(peak, bounded.memo_stats()["token_paths"])
    assert 0 < peak <= SMALL
    assert len(olds) > 2, len(olds)                          # rotated, several times
    assert free.memo_stats()["token_paths"] > SMALL          # the bound did matter


def test_dwa_memos_bounded_at_runtime_in_bytes():
    """Lazy compilation from get_mask drops the symbolic-run memos past memo_cache_bytes
    (before: only the eager compile bounded them, by entries)."""
    c = Constraint(JSON, NUMBERS_VOCAB, cache_dir=False, progress=False, compile="lazy",
                   memo_cache_bytes=20_000)
    decode(c, 3000, 1000, lambda done, s: None, seed=4)
    assert c.compiled.dwa.memo_estimate() <= 20_000


# ---------------------------------------------------------------------------
# one Constraint, many threads (Qwen2.5 vocabulary)
# ---------------------------------------------------------------------------

def _walk(c: Constraint, seed: int, steps: int, barrier=None) -> list:
    rng = random.Random(seed)
    eos = np.array(sorted(c.vocab.eos_token_ids))
    if barrier is not None:
        barrier.wait()
    s = c.start()
    rec = []
    buf = np.empty((c.vocab.size + 31) // 32, dtype=np.int32)    # this thread's buffer
    for k in range(steps):
        # every other mask into the thread's buffer (the masker keeps the last buffer
        # it was given: threads must never write into each other's)
        m = c.get_mask(s) if k % 2 else c.get_mask(s, out=buf)
        rec.append(hash(m.tobytes()))
        ids = mask_to_ids(m, c.vocab.size)
        ids = ids[~np.isin(ids, eos)]
        if not len(ids):
            break
        t = int(ids[rng.randrange(len(ids))])
        s = c.commit(s, t)
        rec.append(t)
    return rec


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_threads_sharing_a_constraint_get_single_thread_masks(mode, qwen_vocab):
    n_threads, steps = 8, 150
    # small caches: evictions race with lookups in every memo
    shared = Constraint(JSON, qwen_vocab, progress=False, compile=mode,
                        mask_cache_bytes=64 << 10, memo_cache_bytes=64 << 10)
    results = run_in_threads(lambda seed, barrier: _walk(shared, seed, steps, barrier),
                             range(n_threads), 1e-5)
    alone = Constraint(JSON, qwen_vocab, progress=False)
    for k in range(n_threads):
        assert results[k] == _walk(alone, k, steps), f"thread {k}: masks differ from one thread's"


# ---------------------------------------------------------------------------
# memos and the garbage collector's young generation
# ---------------------------------------------------------------------------

def _memos(c: Constraint) -> dict:
    sc, dwa = c.scanner, c.compiled.dwa
    wt = dwa.weights
    out = {"scanner._special_memo": sc._special_memo}
    for name, g in (("scanner._steps", sc._steps), ("scanner._finish", sc._finish),
                    ("constraint._token_paths", c._token_paths),
                    ("constraint._requirements", c._requirements)):
        out[name] = g.cur
        out[name + "_old"] = g.old
    out.update({f"templates.{k}": m for k, m in dwa.templates.memos().items()})
    out.update({f"weights.{k}": getattr(wt, k) for k in ("_and", "_or", "_sub", "_dense", "_dense_old")})
    return out


@pytest.mark.parametrize("how", ["eager", "cached", "lazy"])
def test_runtime_memos_stay_out_of_young_collections(how, tmp_path):
    """Memos hold ints and tuples of ints, which the garbage collector stops tracking;
    an exact dict of them is then untracked too, and the next new entry tracks it again
    in the youngest generation, where the next young collection traverses all of it
    (one Go commit took 1.3 ms that way). Every runtime memo is a Memo: after a full
    collection, new entries added by commits and masks leave every memo in the
    generation it was in (none in generation 0 or 1), fresh, loaded from an artifact,
    and lazy."""
    from stackmask.memo import Memo
    kw = dict(cache_dir=tmp_path, progress=False)
    if how == "cached":
        Constraint(JSON, NUMBERS_VOCAB, **kw)
    c = Constraint(JSON, NUMBERS_VOCAB, compile="lazy" if how == "lazy" else "eager", **kw)
    assert c.loaded_from_cache == (how == "cached")
    s = c.start()
    for t in (b"[", b"12"):                 # a little, so that most entries come later
        c.get_mask(s)
        s = c.commit(s, PIECES.index(t))
    memos = _memos(c)
    bad = [k for k, d in memos.items() if not isinstance(d, Memo)]
    assert not bad
    for _ in range(4):           # each full collection untracks one more level of
        gc.collect()             # nested tuples (then the dicts holding only them)
    assert not [k for k, d in memos.items() if d and not gc.is_tracked(d)]
    sizes = {k: len(d) for k, d in memos.items()}
    gc.disable()                 # whatever new entries put in generation 0 stays there
    try:
        decode(c, 300, 50, lambda done, s: None, seed=6)      # new entries
        young = {id(o) for o in gc.get_objects(0)} | {id(o) for o in gc.get_objects(1)}
    finally:
        gc.enable()
    grew = [k for k, d in _memos(c).items() if len(d) > sizes[k] and d is memos[k]]
    assert "constraint._token_paths" in grew, grew
    assert not [k for k in grew if id(memos[k]) in young]


def test_sized_cache_keeps_the_recent_entries_within_its_bytes():
    from stackmask.memo import SizedCache
    c = SizedCache(100, len)
    for k in "abcd":
        c.put(k, "x" * 30)                       # 120 bytes: "a" goes
    assert "a" not in c and c.nbytes == 90 and len(c) == 3
    assert c.get("b") == "x" * 30                # "b" used: "c" is the oldest now
    c.put("e", "y" * 30)
    assert "c" not in c and "b" in c and c.get("zz", 7) == 7
    c.put("big", "z" * 500)                      # larger than the bound: kept alone
    assert len(c) == 1 and c.get("big") and c.nbytes == 500
    c.put("big", "z")                            # replaced: its size counted once
    assert c.nbytes == 1
    c.clear()
    assert len(c) == 0 and c.nbytes == 0
    # get_or_make: made once, a None result cached like any other
    made = []
    g = SizedCache(100, lambda v: 1)
    for _ in range(3):
        assert g.get_or_make("k", lambda: made.append(1)) is None
    assert made == [1] and "k" in g


def test_sized_cache_settles_to_its_resting_bytes():
    from stackmask.memo import SizedCache
    c = SizedCache(100, len, rest_bytes=40)
    for k, n in (("a", 5), ("big", 11), ("b", 10), ("c", 10), ("d", 10), ("e", 10)):
        c.put(k, "x" * n)
    assert len(c) == 6 and c.nbytes == 56           # within max_bytes: all kept meanwhile
    c.settle()               # over a quarter of 40 ("big") goes, then the oldest past 40
    assert "big" not in c and "a" not in c and c.nbytes == 40 and len(c) == 4
    c.settle()
    assert len(c) == 4
    assert SizedCache(100, len).rest_bytes == 100    # by default it rests at its bound


def test_the_lexer_caches_are_bounded_by_bytes():
    # a process that builds many grammars keeps the recent automata, not all of them
    from stackmask.lexer import combined, terminal_dfa
    for cache in (combined._LEXER_CACHE, terminal_dfa._TERMINALS, terminal_dfa._GROUPS, terminal_dfa._LOOKAHEAD_PARTS):
        assert cache.max_bytes <= 256 << 20 and cache.rest_bytes <= 16 << 20
    terminal_dfa.clear_cache()
    old = terminal_dfa._TERMINALS.max_bytes
    terminal_dfa._TERMINALS.max_bytes = 300_000
    try:
        for i in range(40):
            terminal_dfa.compile_terminal('"[a-z]{%d}"' % (50 + i), band=64)
        assert terminal_dfa._TERMINALS.nbytes <= 300_000 < 40 * 50 * 1024
        assert len(terminal_dfa._TERMINALS) < 40
    finally:
        terminal_dfa._TERMINALS.max_bytes = old
        terminal_dfa.clear_cache()


def test_a_construction_leaves_the_lexer_caches_at_their_resting_bytes(monkeypatch):
    # its own automata are reused while it runs (the conversion's in the construction);
    # after it, the caches keep what later grammars reuse: recent and small
    from stackmask import Grammar
    from stackmask.lexer import combined, terminal_dfa
    caches = (combined._LEXER_CACHE, terminal_dfa._TERMINALS, terminal_dfa._GROUPS,
              terminal_dfa._LOOKAHEAD_PARTS)
    for cache in caches:
        monkeypatch.setattr(cache, "rest_bytes", 64 << 10)
    vocab = Vocab([bytes([i]) for i in range(32, 127)] + [b"</s>"], eos_token_ids=[95])
    s = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 300}},
         "required": ["s"]}
    g = Grammar.from_json_schema(s)
    made = [c.nbytes for c in caches]
    assert max(made) > 64 << 10                       # (the conversion's lexers are large)
    c = Constraint(g, vocab, cache_dir=False)
    assert all(cache.nbytes <= 64 << 10 for cache in caches), [x.nbytes for x in caches]
    assert all(n <= 16 << 10 for cache in caches for _, n in cache._d.values())
    assert c.get_mask(c.start()) is not None


def test_a_long_construction_gives_free_memory_back(monkeypatch):
    # glibc keeps what a construction freed; past TRIM_AFTER_S it is handed back
    import stackmask.compile as comp
    from stackmask import Constraint, Vocab
    from stackmask.limits import release_free_memory
    assert release_free_memory() >= 0
    vocab = Vocab([bytes([i]) for i in range(256)] + [b"</s>"], eos_token_ids=[256],
                  special_token_ids=[256])
    calls = []
    monkeypatch.setattr(comp, "release_free_memory", lambda: calls.append(1) or 5)
    monkeypatch.setattr(comp, "TRIM_AFTER_S", 0.0)
    c = Constraint('start: "a"+\n', vocab, cache_dir=False)
    assert calls == [1] and c.compile_stats()["released_bytes"] == 5
    monkeypatch.setattr(comp, "TRIM_AFTER_S", 1e9)
    d = Constraint('start: "b"+\n', vocab, cache_dir=False)
    assert calls == [1] and "released_bytes" not in d.compile_stats()
