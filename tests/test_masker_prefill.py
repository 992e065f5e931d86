"""The masks get_mask computes ahead and from parts (runtime.masker): the masks of
single-path walks computed at construction, the masks of several-head states united
from their heads' masks, two heads walked as one from a pair start state
(compile.build.add_pairs), and the pre-written pool rows new masks are stored
in. Each is compared with the union of its token sets or its heads' masks and with
the reference oracle."""

from __future__ import annotations

import json
import random
import time
from importlib import resources

import numpy as np
import pytest
from pyroaring import BitMap

from stackmask import Constraint, Vocab, native
from stackmask.compile import build as dwa_build
from stackmask.grammars import load as load_grammar
from stackmask.runtime import State
from stackmask.compile import ahead
from stackmask.runtime.masker import Masker
from stackmask.wfa.weights import mask_from_bitmap

JSON = load_grammar("json")


def _key_set(wt, key: frozenset) -> BitMap:
    """The token set of a mask key: the union of its token sets, and of each term
    ``(token set, key)`` (a base's or a restricted start's mask without those tokens)."""
    sets = [wt.get(w) if type(w) is not tuple else _key_set(wt, w[1]) - wt.get(w[0])
            for w in key if w]
    return BitMap.union(*sets) if sets else BitMap()


def _key_mask(c: Constraint, key: frozenset) -> np.ndarray:
    return mask_from_bitmap(_key_set(c.compiled.dwa.weights, key), c.vocab.size)


def _memo(c: Constraint) -> dict:
    m = c._masker
    return {**m._memo_old, **m.memo}


def _corpus_traces(encoding, n: int = 6) -> list:
    text = resources.files("stackmask.grammars").joinpath("json_corpus.jsonl").read_text("utf-8")
    docs = [json.loads(line)["text"] for line in text.splitlines() if line.strip()]
    return [encoding.encode(d) for d in docs[:n]]


@pytest.fixture(autouse=True)
def _prefill_on(monkeypatch):
    """The prefill's time is a share of the construction's (``ahead.PREFILL_SHARE``);
    these tests of what it computes give it its whole ``PREFILL_S``."""
    monkeypatch.setattr(ahead, "PREFILL_SHARE", 1e9)


def test_prefilled_masks_are_the_unions_of_their_walks_token_sets(qwen_vocab):
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    m = c._masker
    assert m.prefilled > 50                  # the JSON automaton's walks: ~470 masks
    assert c.compile_stats()["masks_ahead"] == m.prefilled
    memo = _memo(c)
    assert len(memo) == m.prefilled
    assert m.misses == 0
    for key, mask in memo.items():
        assert np.array_equal(np.frombuffer(mask, dtype=np.int32), _key_mask(c, key)), sorted(key)


@pytest.mark.parametrize("stride", [pytest.param(25, id="every-25th"),
                                    pytest.param(3, id="every-3rd", marks=pytest.mark.slow)])
def test_first_masks_of_a_fresh_constraint_equal_the_oracle(stride, qwen_vocab, qwen_encoding,
                                                          monkeypatch):
    """Single-head masks come from the prefilled memo, several-head ones are united from
    their heads' masks the first time: they equal the oracle (every several-head step
    up to 25 of them, every ``stride``-th other step: the oracle takes ~0.2 s a mask), and every
    several-head mask met was computed from its parts. Compiled without head pairs
    (with them every two-head state of this corpus is walked as one: see below)."""
    monkeypatch.setattr(dwa_build, "head_pairs", lambda scanner, configs, allowed=None: set())
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert c.compile_stats()["head_pairs"] == 0
    m = c._masker
    combined = []
    orig = m._combine

    def spy(key, parts):
        combined.append((key, parts))
        return orig(key, parts)

    m._combine = spy
    multi = step = 0
    for toks in _corpus_traces(qwen_encoding):
        s = c.start()
        for t in toks:
            mask = c.get_mask(s)
            several = len(s.heads) > 1
            if (several and multi < 25) or step % stride == 0:
                assert np.array_equal(mask, c.reference_mask(s))
            multi += several
            step += 1
            s = c.commit(s, t)
    assert multi > 20 and combined
    for key, parts in combined:
        assert len(parts) > 1 and frozenset().union(*parts) == key
        assert np.array_equal(np.frombuffer(_memo(c)[key], dtype=np.int32), _key_mask(c, key))


def test_prefill_time_is_a_share_of_the_construction(qwen_vocab, monkeypatch):
    """At most ``PREFILL_S`` and ``PREFILL_SHARE`` of the time the construction took
    before it; none when that time is none (the start mask is still kept)."""
    monkeypatch.setattr(ahead, "PREFILL_SHARE", 0.1)
    t0 = time.perf_counter()
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    took = time.perf_counter() - t0
    m = c._masker
    # a tenth of the construction before the masker: most of ``took``
    assert 0.05 * took < m.prefill_s <= min(ahead.PREFILL_S, 0.1 * took)
    fresh = Masker(c.compiled.dwa, qwen_vocab.size, qwen_vocab.eos_token_ids, m._ensure_config)
    ahead.masks_ahead(fresh, 0.0)
    assert fresh.prefill_s == 0 and fresh.prefilled == 0
    ahead.masks_ahead(fresh, 0.5)
    assert fresh.prefill_s == pytest.approx(0.05) and fresh.prefilled > 0
    for built, want in ((0.5, 0.05), (30.0, ahead.PREFILL_S), (None, ahead.PREFILL_S)):
        assert ahead.prefill_seconds(built) == pytest.approx(want)
    assert c.start().mask_src is not None


def test_prefill_respects_its_bounds(qwen_vocab, monkeypatch):
    monkeypatch.setattr(ahead, "PREFILL_BYTES", 10 * ((qwen_vocab.size + 31) // 32) * 4)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert c._masker.prefilled == 10
    monkeypatch.setattr(ahead, "PREFILL_S", 0.0)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert c._masker.prefilled == 0


def test_no_prefill_while_nothing_is_compiled(qwen_vocab):
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False, compile="lazy")
    assert c._masker.prefilled == 0
    assert len(c._masker._pool[0]) == 0       # no memory written ahead either


def test_partly_compiled_automaton_gets_masks_and_memory_ahead(qwen_vocab):
    """A budget-stopped compile that explored: the masks of the walks over its compiled
    states are computed ahead (after the exploration dropped its own), rows are written
    ahead for one mask per compiled state at most, and token sets are dense ahead; the
    masks equal their token sets' unions and the oracle on text it did not explore."""
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False, compile_budget_s=0,
                   explore_sentences=15, explore_budget_s=60)
    dwa = c.compiled.dwa
    n_complete = sum(dwa.complete)
    assert c.compile_stats()["budget_exhausted"] and 0 < n_complete < len(dwa.trans)
    m = c._masker
    assert m.prefilled > 10 and len(_memo(c)) == m.prefilled
    assert 0 < len(m._pool[0]) <= n_complete
    # token sets of more than SPARSE_MAX tokens are made dense (on the compiled path the
    # others are written by position when a mask unites them)
    big = [w for w in range(len(dwa.weights))
           if not c.native or len(dwa.weights.get(w)) > Masker.SPARSE_MAX]
    assert m.prewarmed == len(big) or m.prewarmed * m.n_words * 4 > ahead.PREWARM_BYTES // 2
    for key, mask in _memo(c).items():
        assert np.array_equal(np.frombuffer(mask, dtype=np.int32), _key_mask(c, key)), sorted(key)
    s = c.start()
    for b in b'{"k": [true, null, -0.5e3], "": {"z": "\\n\\u00e9"}}':
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))
        s = c.commit_bytes(s, bytes([b]))
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def test_prewarm_respects_its_bounds(qwen_vocab, monkeypatch):
    size = ((qwen_vocab.size + 31) // 32) * 4
    monkeypatch.setattr(Masker, "SPARSE_MAX", -1)       # every token set dense
    monkeypatch.setattr(ahead, "PREWARM_BYTES", 7 * size)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert c._masker.prewarmed == 7
    wt = c.compiled.dwa.weights
    assert all(wt.cached_dense(w, qwen_vocab.size) is not None for w in range(7))
    monkeypatch.setattr(ahead, "PREWARM_S", -1.0)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert c._masker.prewarmed == 0
    monkeypatch.setattr(ahead, "PREWARM_S", 10.0)
    monkeypatch.setattr(ahead, "PREWARM_BYTES", 1 << 40)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False, memo_cache_bytes=9 * size)
    assert c._masker.prewarmed == 9 // 2 - 1      # half the dense cache, less one mask


@pytest.mark.usefixtures("needs_native")
def test_small_token_sets_are_not_made_dense_ahead(qwen_vocab):
    """On the compiled path, token sets of at most SPARSE_MAX tokens are written into a
    mask by position: none is made dense ahead; the larger ones are, and masks equal
    their keys' unions."""
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    wt = c.compiled.dwa.weights
    small = [w for w in range(1, len(wt)) if len(wt.get(w)) <= Masker.SPARSE_MAX]
    big = [w for w in range(1, len(wt)) if len(wt.get(w)) > Masker.SPARSE_MAX]
    assert small and big
    assert all(wt.cached_dense(w, qwen_vocab.size) is None for w in small)
    assert c._masker.prewarmed == len(big)
    for key, mask in _memo(c).items():
        assert np.array_equal(np.frombuffer(mask, dtype=np.int32), _key_mask(c, key)), sorted(key)


def test_pool_is_sized_by_the_automaton(qwen_vocab):
    """One row per automaton state at most: many small constraints in one process
    (one per JSON Schema) do not each write 16 MiB."""
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    n_states = c.compile_stats()["states"]
    assert 0 < len(c._masker._pool[0]) <= n_states
    assert c._masker._pool[0].nbytes <= Masker.POOL_BYTES


@pytest.mark.parametrize("pool_masks", [0, 3])
def test_pool_rows_are_never_shared_between_masks(pool_masks, monkeypatch):
    """A small pool runs out: masks then get rows of mapped chunks (two rows each here).
    No two memoized masks share memory and each is its key's union, through random walks
    of a small vocabulary."""
    pieces = [b"[", b"]", b",", b" ", b"1", b"23", b"-", b".", b"e", b'"', b"a", b"{", b"}", b":"]
    vocab = Vocab(pieces + [b"<eos>"], eos_token_ids=[len(pieces)], special_token_ids=[len(pieces)])
    monkeypatch.setattr(Masker, "POOL_BYTES", pool_masks * 4)      # one word per mask
    monkeypatch.setattr(ahead, "PREFILL_BYTES", 0)
    monkeypatch.setattr(Masker, "CHUNK_BYTES", 2 * 4)
    c = Constraint(JSON, vocab, cache_dir=False, progress=False)
    rng = random.Random(5)
    for _ in range(30):
        s = c.start()
        for _ in range(25):
            mask = c.get_mask(s)
            assert np.array_equal(mask, c.reference_mask(s))
            ids = [i for i in range(len(pieces)) if mask[i // 32] >> (i % 32) & 1]
            if not ids:
                break
            s = c.commit(s, rng.choice(ids))
    memo = _memo(c)
    assert len(memo) > pool_masks + 3
    arrays = [mv.obj for mv in memo.values()]
    # rows of the pool (pool_masks rows) and of chunks (two rows each)
    assert all(len(a.base) in (pool_masks, 2) for a in arrays)
    in_chunks = [a for a in arrays if len(a.base) == 2]
    assert len(in_chunks) >= len(arrays) - pool_masks
    assert len({id(a.base) for a in in_chunks}) >= len(in_chunks) // 2
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)
    for key, mask in memo.items():
        assert np.array_equal(np.frombuffer(mask, dtype=np.int32), _key_mask(c, key))


def _two_head_states(c: Constraint, traces) -> list:
    out = []
    for toks in traces:
        s = c.start()
        for t in toks:
            if len(s.heads) == 2:
                out.append(s)
            s = c.commit(s, t)
    return out


def test_pair_walks_equal_their_heads_masks(qwen_vocab, qwen_encoding, tmp_path):
    """Every two-head state of the JSON corpus whose heads are walked as one (from a pair
    start) gets the union of its heads' own masks, also after an artifact reload."""
    for attempt in range(2):                  # compiled, then loaded from the cache
        c = Constraint(JSON, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert c.compile_stats()["head_pairs"] >= 3
        paired = 0
        states = _two_head_states(c, _corpus_traces(qwen_encoding, 8))
        for s in states:
            paired += len(c._masker.paired(s.heads)) == 1
            want = np.zeros_like(c.get_mask(State((s.heads[0],))))
            for h in s.heads:
                want |= c.get_mask(State((h,)))
            assert np.array_equal(c.get_mask(s), want)
        # 176 two-head states in these documents, all paired when written
        assert len(states) > 100 and paired >= 0.9 * len(states)


def test_few_pairs_do_not_depend_on_the_time_budget(qwen_vocab, monkeypatch):
    """A grammar with few pairs (JSON: 4) gets all of them however late the pairs start:
    the automaton does not depend on the machine's load (a loaded CI machine once cut
    JSON's pairs and built a smaller automaton than a quiet one)."""
    full = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False).compile_stats()
    add = dwa_build.add_pairs

    def no_time(*a, **k):
        k["seconds"] = 0.0
        return add(*a, **k)
    monkeypatch.setattr(dwa_build, "add_pairs", no_time)
    late = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False).compile_stats()
    assert full["head_pairs"] >= 3
    assert (late["head_pairs"], late["states"]) == (full["head_pairs"], full["states"])


def test_pairs_past_their_state_limit_are_dropped(qwen_vocab, qwen_encoding, monkeypatch):
    """A pair whose walks would add states beyond the limit is dropped with its states:
    the automaton is the one compiled without pairs, and masks still equal the oracle."""
    full = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False).compile_stats()
    with monkeypatch.context() as mp:
        mp.setattr(dwa_build, "head_pairs", lambda scanner, configs, allowed=None: set())
        none = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False).compile_stats()
    assert none["head_pairs"] == 0 and full["states"] > none["states"]
    monkeypatch.setattr(dwa_build, "PAIR_MIN_STATES", 0)
    monkeypatch.setattr(dwa_build, "PAIR_SHARE", 0.0)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    st = c.compile_stats()
    assert st["head_pairs"] < full["head_pairs"]      # those needing new states are gone
    assert st["states"] == none["states"]             # and so are their states
    dwa = c.compiled.dwa
    assert len(dwa.items) == len(dwa.trans) == len(dwa.default) == len(dwa.complete)
    assert all(dwa.complete)
    states = _two_head_states(c, _corpus_traces(qwen_encoding, 3))
    for s in states[::6][:8]:
        assert np.array_equal(c.get_mask(s), c.reference_mask(s))


def _dense_sets(c: Constraint) -> set:
    """The token sets ``c`` holds as dense masks."""
    wt = c.compiled.dwa.weights
    return {wt.get(w) for w in range(len(wt)) if wt.cached_dense(w, c.vocab.size) is not None}


def test_artifact_remembers_the_token_sets_its_masks_needed(tmp_path, monkeypatch):
    """The sets the exploration's masks united, the most used first, are the artifact's
    hot sets (renumbered by the compaction: the same sets in the same order), and a
    loading constraint makes them dense first; likewise for a user's save_cache after
    masks of their own (their sets first, then the loaded hot ones)."""
    from test_artifact import DOC, masks_along, small_vocab
    v = small_vocab()
    seen = {}
    import stackmask.compile as compile_pkg
    orig = compile_pkg.prewarm

    def spy(masker, hot=()):       # after the exploration (the masks ahead call their own)
        seen["hot"] = [masker.dwa.weights.get(w) for w in hot]
        seen["uses"] = dict(masker._uses)
        return orig(masker, hot)

    monkeypatch.setattr(compile_pkg, "prewarm", spy)
    monkeypatch.setattr(Masker, "SPARSE_MAX", -1)       # every token set dense (a small vocabulary)
    Constraint(JSON, v, cache_dir=tmp_path / "x", compile_budget_s=0, progress=False,
               explore_sentences=15, explore_budget_s=60)
    assert len(seen["hot"]) > 5 and len(seen["hot"]) == len(seen["uses"])
    counts = list(seen["uses"].values())
    assert sorted(counts, reverse=True) == [seen["uses"][w] for w in sorted(
        seen["uses"], key=lambda w: -seen["uses"][w])]
    size = ((v.size + 31) // 32) * 4
    monkeypatch.setattr(ahead, "PREWARM_BYTES", 4 * size)
    again = Constraint(JSON, v, cache_dir=tmp_path / "x", compile_budget_s=0, progress=False,
                       explore_sentences=15, explore_budget_s=60)
    assert again.loaded_from_cache
    dwa = again.compiled.dwa
    assert [dwa.weights.get(w) for w in dwa.hot_weights] == seen["hot"]
    assert again._masker.prewarmed == 4
    assert {dwa.weights.get(w) for w in dwa.hot_weights[:4]} <= _dense_sets(again)

    # a user's masks: save_cache puts the sets they united first
    monkeypatch.setattr(ahead, "PREWARM_BYTES", 0)
    user = Constraint(JSON, v, cache_dir=tmp_path / "u", compile_budget_s=0, progress=False,
                      explore_sentences=0)
    masks_along(user, DOC)
    uses = user._masker._uses
    assert uses and user.save_cache() is not None
    wt = user.compiled.dwa.weights
    used = [wt.get(w) for w, _ in uses.most_common()]
    monkeypatch.setattr(ahead, "PREWARM_BYTES", 3 * size)
    later = Constraint(JSON, v, cache_dir=tmp_path / "u", compile_budget_s=0, progress=False,
                       explore_sentences=0)
    assert later.loaded_from_cache and later._masker.prewarmed == 3
    hot = later.compiled.dwa.hot_weights
    assert [later.compiled.dwa.weights.get(w) for w in hot] == used
    assert _dense_sets(later) == set(used[:3])


def _edge(dwa, q: int, s: int):
    e = dwa.trans[q].get(s)
    if e is None:
        e = dwa.default[q] if dwa.complete[q] else dwa.edge(q, s)
    return e


def _walk_all(dwa, q0: int, node) -> tuple:
    """Reference: the weights met walking every link below ``node`` from DWA state
    ``q0``, pair by pair with no memo, and the (state, branching node) pairs reached."""
    outs, seen, pairs = set(), set(), set()
    todo = [(q0, m) for m in node.links]
    while todo:
        q, n = todo.pop()
        if (q, id(n)) in seen:
            continue
        seen.add((q, id(n)))
        e = _edge(dwa, q, n.state)
        if e is None:
            continue
        q2, w = e
        if w:
            outs.add(w)
        if q2 >= 0:
            if len(n.links) > 1:
                pairs.add((q2, n))
            todo.extend((q2, m) for m in n.links)
    return frozenset(outs), pairs


def _branching_nodes(state) -> list:
    seen, out = set(), []
    todo = [n for n, _ in state.heads]
    while todo:
        n = todo.pop()
        if id(n) not in seen:
            seen.add(id(n))
            if len(n.links) > 1:
                out.append(n)
            todo.extend(n.links)
    return out


# the default run walks the first generated texts of each grammar up to one whose stack
# branches (plus the fixed long ones); the slow run six. Every step asks the O(|V|)
# oracle, which is the whole cost of this test.
_BRANCHING_CASES = ([pytest.param(n, k, id=n) for n, k in (("ss", 2), ("expr", 2), ("rlist", 3))]
                    + [pytest.param(n, 6, id=f"{n}-6-texts", marks=pytest.mark.slow)
                       for n in ("ss", "expr", "rlist")])


@pytest.mark.parametrize("name, n_texts", _BRANCHING_CASES)
def test_walks_below_branching_nodes_are_memoized_exactly(name, n_texts, qwen_vocab,
                                                          qwen_encoding, monkeypatch):
    """GLR stacks share branching nodes: the walk below one is memoized on it by DWA
    state, bottom up (every branching node the walk reaches keeps its own part, so the
    next tokens' masks walk only what is new above them), and a node's links are read
    once per LR state among them ("ss": every split of the text is a parse, so nodes
    link to many nodes of few states). Every mask equals the oracle (each step asked
    twice: computed, then memoized); every memo entry on every branching node of the
    stack equals the walk of all its paths without memo; the branching nodes a walk
    reaches have their parts memoized; a node's links are grouped once."""
    import stackmask.runtime.masker as masker_mod
    from test_compiled_exact import AMBIGUOUS_GRAMMARS, ambiguous_traces
    # the Python walk (the compiled one, _walk.pxi, is compared with the walk's
    # definition in test_glr_step)
    with monkeypatch.context() as env:
        env.setenv(native.ENV, "1")
        c = Constraint(AMBIGUOUS_GRAMMARS[name], qwen_vocab, ambiguous=True)
    m = c._masker
    dwa = m.dwa
    grouped: list = []          # (links, groups): the lists kept, so ids stay unique
    groups = masker_mod._link_groups

    def spy_groups(links):
        g = groups(links)
        grouped.append((links, g))
        return g

    monkeypatch.setattr(masker_mod, "_link_groups", spy_groups)
    asked = {}
    branches = m.branches

    def spy_branches(q, node):
        r = branches(q, node)
        asked[(q, id(node))] = (q, node, r)
        return r

    m.branches = spy_branches
    try:
        for text in _AMBIGUOUS_FIXED_LONG.get(name, []) + ambiguous_traces(
                name, n_texts, max_terminals=12, seed=11):
            s = c.start()
            for tok in qwen_encoding.encode(text, disallowed_special=()):
                ref = c.reference_mask(s)
                for _ in range(2):
                    assert np.array_equal(c.get_mask(s), ref), (name, text)
                for node in _branching_nodes(s):
                    for q, r in (node.walk_memo or {}).items():
                        assert r == _walk_all(dwa, q, node)[0], (name, text)
                s = c.commit(s, tok)
        assert asked
        for q, node, r in asked.values():
            ref, pairs = _walk_all(dwa, q, node)
            assert r == ref
            assert branches(q, node) is r                       # from the memo
            for q2, n2 in pairs:                                # parts below memoized
                memo = n2.walk_memo
                assert memo is not None and q2 in memo, (name, q2, n2)
        # each node's links grouped once (kept on the node), every link in its state's group
        assert grouped and len({id(links) for links, _ in grouped}) == len(grouped)
        for links, g in grouped:
            assert sorted(map(id, links)) == sorted(id(n) for st, ns in g for n in ns)
            assert all(n.state == st for st, ns in g for n in ns)
            assert len({st for st, _ in g}) == len(g)
        if name == "ss":        # links of one state read as one: the case is exercised
            assert any(len(ns) > 1 for _, g in grouped for _, ns in g)
    finally:
        del m.branches


@pytest.mark.parametrize("name", ["expr", "kw"])
def test_branching_walk_on_random_stack_graphs(name, qwen_vocab):
    """The bottom-up branching walk on random stack graphs (LR states of the grammar,
    each node linking to 1-5 nodes below, many sharing a state, so links of one state
    lead to different stacks): equal to the walk of every path without memo, from every
    automaton state the tops lead to, on a fresh graph and again after new nodes were
    put on top of a graph whose lower nodes hold memos."""
    from stackmask.glr.gss import Node
    from test_compiled_exact import ambiguous_constraint
    c = ambiguous_constraint(name, qwen_vocab)
    m = c._masker
    dwa = m.dwa
    rng = random.Random(f"branching:{name}")
    n_lr = len(dwa.templates.shiftable)
    checked = 0
    for _ in range(12):
        pool = rng.sample(range(n_lr), 5)       # few states: groups of several links
        level = [Node(dwa.templates.start_state, [])]
        nodes = list(level)
        for _ in range(8):
            level = [Node(rng.choice(pool), rng.sample(nodes, rng.randint(1, min(5, len(nodes)))))
                     for _ in range(4)]
            nodes.extend(level)
        for top in level + [Node(rng.choice(pool), level[:3])]:
            if len(top.links) < 2:
                continue
            for q0, _ in list(dwa.init.values()):
                e = _edge(dwa, q0, top.state) if q0 >= 0 else None
                if e is None or e[0] < 0:
                    continue
                q = e[0]
                r = m.branches(q, top)
                ref, _ = _walk_all(dwa, q, top)
                assert r == ref, (name, q)
                checked += 1
    assert checked > 20, checked


# long texts of the dense grammar: ladders of branching nodes, many links each
_AMBIGUOUS_FIXED_LONG = {"ss": ["abababbaab", "aaaaaaaaaaaaaaaa"]}


@pytest.mark.parametrize("prefill_s", [0.0, 0.1])
def test_start_mask_is_pinned_and_asked_again_states_skip_the_walk(prefill_s, qwen_vocab,
                                                                   qwen_encoding, monkeypatch):
    """The start state keeps its own copy of its mask (not the memo's, which may be
    dropped), with masks computed ahead or not; a state asked again reads
    the token sets its first walk met. Both stay equal to the oracle after the memo is
    dropped, and a caller writing into a mask it was given changes neither."""
    monkeypatch.setattr(ahead, "PREFILL_S", prefill_s)
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False)
    assert (c._masker.prefilled > 0) == (prefill_s > 0)
    start = c.start()
    assert start.mask_src is not None and start.mask_src.readonly
    assert not any(start.mask_src.obj is m.obj for m in _memo(c).values())
    ref0 = c.reference_mask(start)
    given = c.get_mask(start)
    given[:] = -1                               # the caller's copy, not the pin
    states = [start]
    for tok in _corpus_traces(qwen_encoding, 2)[1][:20]:
        states.append(c.commit(states[-1], tok))
    refs = [c.reference_mask(s) for s in states]
    for s, ref in zip(states, refs):
        assert np.array_equal(c.get_mask(s), ref)
        assert s.mask_key is not None or s is start
    m = c._masker
    m.memo, m._memo_old = {}, {}                # memo dropped: keys recomputed as unions
    misses = m.misses
    buf = np.zeros(c.mask_words, dtype=np.int32)
    for s, ref in zip(states, refs):
        assert np.array_equal(c.get_mask(s, out=buf), ref)
    assert m.misses > misses
    assert np.array_equal(c.get_mask(start), ref0)


def test_lazy_constraint_does_not_pin_before_its_first_mask(qwen_vocab):
    c = Constraint(JSON, qwen_vocab, cache_dir=False, progress=False, compile="lazy")
    assert c.start().mask_src is None and c._masker.prefilled == 0
    assert np.array_equal(c.get_mask(c.start()), c.reference_mask(c.start()))
