"""Restricted starts (``ParserDWA.init_restrict``): a lexer configuration whose start is
another's restricted to its own tokens walks that start and drops the other tokens.
Checked on the set algebra directly, and mask for mask against the oracle on schemas
whose bounded whitespace and bounded strings make such configurations."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from pyroaring import BitMap

from stackmask import Constraint, Grammar
from hypothesis import given, settings, strategies as st

from stackmask.compile import dwa_starts
from stackmask.compile.dwa_starts import implied_checks, restricted, same_as_base, same_as_base_algebra
from stackmask.wfa.weights import EMPTY_ID, UNIVERSE_ID, WeightTable


def _dwa(template):
    """Token sets holding one start, ``template`` (item -> tokens, acc tokens), as a
    candidate for :func:`restricted`."""
    d = SimpleNamespace(weights=WeightTable(100))
    pairs = {it: d.weights.intern(BitMap(ts)) for it, ts in template[0].items()}
    acc = d.weights.intern(BitMap(template[1]))
    d.candidates = [(frozenset(pairs), pairs, acc, (7, acc))]
    return d


def _restricted(d, items: dict, acc):
    wt = d.weights
    pairs = {it: wt.intern(BitMap(ts)) for it, ts in items.items()}
    r = restricted(wt, pairs, wt.intern(BitMap(acc)), d.candidates)
    return None if r is None else sorted(BitMap(range(100)) - wt.get(r[1]))


_SETS = st.lists(st.integers(0, 59), max_size=40)


@settings(max_examples=300, deadline=None)
@given(mine=st.dictionaries(st.sampled_from("ABCDE"), _SETS, max_size=4), acc=_SETS,
       theirs=st.dictionaries(st.sampled_from("ABCDEFGH"), _SETS, max_size=8), b_acc=_SETS,
       diff=_SETS, by_token=st.sampled_from([0, 3, 24, 1000]))
def test_same_as_base_by_token_equals_the_algebra(mine, acc, theirs, b_acc, diff, by_token):
    """The tokens of a start on a base that keep the base's items: compared one by one
    (few candidates) or with bitmap algebra, the same set, and by the definition: live,
    in the diff, and in the same items and decided-at-once set on both sides."""
    wt = WeightTable(60)
    pairs = {it: wt.intern(BitMap(ts)) for it, ts in mine.items()}
    b_pairs = {it: wt.intern(BitMap(ts)) for it, ts in theirs.items()}
    a, b_a, d = wt.intern(BitMap(acc)), wt.intern(BitMap(b_acc)), BitMap(diff)
    old = dwa_starts.SAME_BY_TOKEN
    dwa_starts.SAME_BY_TOKEN = by_token
    try:
        fast = same_as_base(wt, pairs, a, b_pairs, b_a, d)
    finally:
        dwa_starts.SAME_BY_TOKEN = old
    ref = same_as_base_algebra(wt, pairs, a, b_pairs, b_a, d)
    assert fast == ref

    def sig(t, items, acc_set):
        return (t in acc_set, frozenset(it for it, ts in items.items() if t in ts))
    live = set(acc).union(*mine.values())
    want = {t for t in live if t in d and sig(t, mine, set(acc)) == sig(t, theirs, set(b_acc))}
    assert set(ref) == want


def test_a_start_within_another_is_restricted():
    d = _dwa(({"A": [1, 2, 3], "B": [4, 5]}, [6]))
    # within W = {1, 2, 4}: A -> {1, 2}, B -> {4}, acc -> {}
    assert _restricted(d, {"A": [1, 2], "B": [4]}, []) == [1, 2, 4]
    assert _restricted(d, {"A": [1, 2], "B": [4]}, [6]) == [1, 2, 4, 6]
    assert _restricted(d, {"A": [3]}, []) == [3]             # B has nothing in W
    # a token in another item, one the template does not have, one decided at once there
    assert _restricted(d, {"A": [1, 4]}, []) is None
    assert _restricted(d, {"A": [1, 7]}, []) is None
    assert _restricted(d, {"A": [1, 6]}, []) is None
    assert _restricted(d, {"A": [1]}, [6, 2]) is None
    assert _restricted(d, {"C": [1]}, []) is None             # an item it does not have
    assert _restricted(d, {}, [6]) is None                    # nothing to walk
    assert _restricted(d, {"A": [1]}, [9]) is None            # decided at once, unknown there
    assert _restricted(d, {"A": [1]}, [6]) == [1, 6]


SCHEMAS = [
    # bounded whitespace (the default): counted blanks before } ] , and after { [ , :
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 24},
                                      "tags": {"type": "array", "items": {"type": "string"}},
                                      "n": {"type": "integer"}},
     "required": ["name"]},
    {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string", "minLength": 2, "maxLength": 6}, "ok": {"type": "boolean"}}}},
]
# committed a byte at a time: escapes and UTF-8 sequences inside counted strings reach the
# configurations started on their base with no start of their own
TEXTS = ['{"name": "ab\\u00e9\u00e9\\n' + "x" * 15 + '\u00e9", "tags": [ "q" ,  "rr"],\n  "n": 5}',
         '[{"id": "\\u00e9\u00e9x", "ok": true}, {"id": "a\\"\u00e9"}]']


def _random_masks(c: Constraint, seed: int, steps: int, check) -> int:
    rng = random.Random(seed)
    s, n = c.start(), 0
    for _ in range(steps):
        mask = c.get_mask(s)
        check(s, mask)
        n += 1
        ids = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
        ids = ids[ids < c.vocab.size]
        if not len(ids):
            break
        # prefer short tokens and blanks: they reach the counted configurations
        short = [int(i) for i in ids[:4000]]
        s = c.commit(s, rng.choice(short))
    return n


@pytest.mark.parametrize("schema", SCHEMAS, ids=["object", "array"])
def test_restricted_configurations_equal_the_oracle(schema, qwen_vocab, tmp_path):
    g = Grammar.from_json_schema(schema)
    for attempt in range(2):                      # compiled, then loaded from the cache
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        dwa = c.compiled.dwa
        assert dwa.init_restrict, "no restricted start: the test checks nothing"
        # started on their base with no start of their own (the differing tokens that
        # still fit behave as in the base)
        on_base = {cfg for cfg in dwa.init_base if dwa.init.get(cfg) == (-1, EMPTY_ID)}
        met = []

        def check(s, mask):
            # the oracle costs a commit per vocabulary token: asked where a head's
            # configuration is restricted (and at the start)
            here = [("r" if cfg in dwa.init_restrict else "b") for _, cfg in s.heads
                    if cfg in dwa.init_restrict or cfg in on_base]
            # (up to 12 checks per kind, so that neither kind crowds out the other)
            if not met or any(sum(k in m for m in met) < 12 for k in here):
                met.append(tuple(here))
                assert np.array_equal(mask, c.reference_mask(s))
        for seed in range(4):
            _random_masks(c, seed + 10 * attempt, 50, check)
        byte_token = {}
        for i in range(c.vocab.size):
            b = c.vocab.token_bytes(i)
            if b is not None and len(b) == 1:
                byte_token.setdefault(b[0], i)
        s = c.start()
        for byte in TEXTS[SCHEMAS.index(schema)].encode():
            s = c.commit(s, byte_token[byte])
            check(s, c.get_mask(s))
        kinds = [k for m in met for k in m]
        assert kinds.count("r") >= 2, "too few restricted configurations met"
        if on_base:
            assert kinds.count("b") >= 2, "too few configurations on a base without a start met"


def test_universe_and_empty_ids_are_what_restriction_assumes():
    wt = WeightTable(10)
    a = wt.intern(BitMap([1, 2]))
    assert wt.difference(UNIVERSE_ID, wt.difference(UNIVERSE_ID, a)) == a
    assert wt.intersect(a, EMPTY_ID) == EMPTY_ID


def _implied(items: dict, follows: dict, n_terms: int = 6):
    """:func:`implied_checks` on ``items`` ((terms, check set or None) -> tokens),
    with ``follows`` (terminal -> the terminals that may come after it, END = 0)."""
    from stackmask.compile.templates import NO_LHS
    wt = WeightTable(100)
    follow_masks = tuple(sum(1 << u for u in follows.get(t, ())) for t in range(n_terms))
    bits = lambda F: None if F is None else sum(1 << u for u in F)
    pairs = {(0, NO_LHS, terms, bits(F)): wt.intern(BitMap(ts))
             for (terms, F), ts in items.items()}
    out = implied_checks(wt, follow_masks, pairs)
    sets = lambda G: None if G is None else frozenset(u for u in range(n_terms) if G >> u & 1)
    return {(it[2], sets(it[3])): sorted(wt.get(w)) for it, w in out.items()}


def test_a_check_implied_by_the_emitted_item_is_dropped():
    F = frozenset
    follows = {1: {2, 3}, 2: {1}, 3: {0, 1}}
    # tokens 1, 2 also emit terminal 1 and then allow all that may follow it: for them
    # "terminal 1 next" is implied; token 3 keeps the whole check
    got = _implied({((), F({1, 2})): [1, 2, 3], ((1,), F({2, 3, 4})): [1, 2, 9]}, follows)
    assert got == {((), F({2})): [1, 2], ((), F({1, 2})): [3], ((1,), F({2, 3, 4})): [1, 2, 9]}
    # not every follower of 1 allowed after it: nothing implied
    items = {((), F({1, 2})): [1, 2, 3], ((1,), F({2})): [1, 2]}
    assert _implied(items, follows) == {k: v for k, v in items.items()}
    # no check after the emission (None) implies it; a check of only that terminal goes
    assert _implied({((), F({1})): [1, 2], ((1,), None): [2]}, follows) == {
        ((), F({1})): [1], ((1,), None): [2]}
    # the end of the text (0) is never implied; it may follow 3, so F' must hold it
    assert _implied({((), F({0, 3})): [5], ((3,), F({1})): [5]}, follows) == {
        ((), F({0, 3})): [5], ((3,), F({1})): [5]}
    assert _implied({((), F({0, 3})): [5], ((3,), F({0, 1})): [5]}, follows) == {
        ((), F({0})): [5], ((3,), F({0, 1})): [5]}
    # after a longer emitted prefix: (S, F) against (S t, F')
    assert _implied({((2,), F({1, 2})): [4], ((2, 1), F({2, 3})): [4, 6]}, follows) == {
        ((2,), F({2})): [4], ((2, 1), F({2, 3})): [4, 6]}
    # two implied terminals: the tokens are split by which of them they have
    got = _implied({((), F({1, 3})): [1, 2, 3, 4], ((1,), None): [1, 2], ((3,), None): [2, 3]},
                   follows)
    assert got == {((), F({1, 3})): [4], ((), F({3})): [1], ((), F({1})): [3],
                   ((1,), None): [1, 2], ((3,), None): [2, 3]}


def test_a_blank_run_has_one_start(qwen_vocab):
    """The configurations inside a bounded run of blanks (after ``{``: one per count) are
    all one start: each is on the run's base and has no start of its own, because the
    tokens that end the run right at its bound lose the check their emitted half implies
    (``implied_checks``) and the tokens that still fit are the base's (``trim_on_base``).
    Before both, each count had its own start of some 80 states."""
    from stackmask.lexer.scanner import BOUNDARY_CONFIG
    c = Constraint(Grammar.from_json_schema(SCHEMAS[0]), qwen_vocab, cache_dir=False,
                   progress=False)
    dwa = c.compiled.dwa
    cfg = c.scanner.step(BOUNDARY_CONFIG, ord("{"))[0][1]
    own = []
    for k in range(19):                   # (the 20th blank ends the gap: nothing pending)
        cfg = [c2 for ems, c2 in c.scanner.step(cfg, ord(" ")) if not ems][0]
        cfg = dwa.alias.get(cfg, cfg)
        if cfg in dwa.init_base and dwa.init.get(cfg) != (-1, EMPTY_ID):
            own.append(k + 1)
        elif cfg not in dwa.init_base and cfg not in dwa.init_restrict:
            own.append(-(k + 1))          # a whole start: the run's base
    assert len(own) <= 1, f"blank counts with a start of their own: {own}"


def test_literal_key_prefixes_share_one_item_start(qwen_vocab, tmp_path):
    """Inside a property name that is also a free key string, each prefix of the name
    (``"t``, ``"ta``, ``"tag``) differs from the free string in the few tokens that may
    still end as that key: a start of one item, the same item for every prefix. They walk
    one automaton (``Starts._universal``), restricted to each prefix's tokens; masks
    after each prefix equal the oracle's, fresh and loaded from the cache."""
    schema = {"type": "object", "properties": {"tags": {"type": "string"},
                                               "title": {"type": "string"}},
              "additionalProperties": {"type": "integer"}}
    g = Grammar.from_json_schema(schema)
    for attempt in range(2):
        c = Constraint(g, qwen_vocab, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        dwa = c.compiled.dwa
        byte_token = {}
        for i in range(c.vocab.size):
            b = c.vocab.token_bytes(i)
            if b is not None and len(b) == 1:
                byte_token.setdefault(b[0], i)
        starts = set()
        s = c.commit(c.start(), byte_token[ord("{")])
        for text in ('"tag', '"titl'):
            t = s
            for k, byte in enumerate(text.encode()):
                t = c.commit(t, byte_token[byte])
                assert np.array_equal(c.get_mask(t), c.reference_mask(t)), (text, k)
                if k >= 2:
                    (_, cfg), = t.heads
                    cfg = dwa.alias.get(cfg, cfg)
                    if dwa.init.get(cfg, (-1, EMPTY_ID)) != (-1, EMPTY_ID):
                        assert cfg in dwa.init_restrict, (text, k)
                        starts.add((text, dwa.init[cfg]))
        # both names' prefixes met restricted starts, and they share (at most one per
        # name: its item; here the names' checks are alike, so one)
        assert {n for n, _ in starts} == {'"tag', '"titl'}
        assert len({e for _, e in starts}) == 1


def _repeatable_blanks(schema) -> Grammar:
    """The schema's grammar with its whitespace an ignored terminal that may follow itself
    (no gap, ``Grammar.gaps``): a blank run emitted below its bound leaves its longer match
    as a shadow (the next blank would extend it), the configurations tested here. Under the
    gap the default grammar has, that shadow reads no byte a lexeme may start with after a
    gap and is dropped (``Scanner.intern``)."""
    g = Grammar.from_json_schema(schema)
    return Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, modes=g.modes)


def test_configurations_with_a_shadow_start_on_their_plain_one(qwen_vocab):
    """After a blank run ended (emitted) the lexer is at a boundary with the run's longer
    match as a shadow: ``(d, S)``. Only the tokens on which the shadow's run does not die
    at once (blank runs: they kill the emission) can differ from ``(d, ∅)``, so such a
    configuration starts on ``(d, ∅)`` with those tokens as its diff
    (``add_config_on_shadow_base``), mostly with no start of its own. Masks with such
    heads equal the oracle's for every count of blanks."""
    c = Constraint(_repeatable_blanks(SCHEMAS[0]), qwen_vocab, cache_dir=False,
                   progress=False)
    dwa = c.compiled.dwa
    sc = c.scanner
    byte_token = {}
    for i in range(c.vocab.size):
        b = c.vocab.token_bytes(i)
        if b is not None and len(b) == 1:
            byte_token.setdefault(b[0], i)
    s = c.commit(c.start(), byte_token[ord("{")])
    shadowed = set()
    for k in range(20):                 # the run's bound: 20 blanks
        s = c.commit(s, byte_token[ord(" " if k % 3 else "\t")])
        for _, cfg in s.heads:
            d, shadows = sc.config(cfg)
            if shadows:
                # (or an alias of one that does: shadows equivalent as shadows, the run's
                # counts below its bound, config_classes)
                a = dwa.alias.get(cfg, cfg)
                assert sc.config(a)[0] == d
                base, _ = dwa.init_base[a]
                assert sc.config(base) == (d, frozenset())
                shadowed.add(cfg)
        if k % 4 == 0 or k == 19:
            assert np.array_equal(c.get_mask(s), c.reference_mask(s)), k
    assert len(shadowed) >= 10
    assert sum(dwa.init[dwa.alias.get(cfg, cfg)] == (-1, EMPTY_ID)
               for cfg in shadowed) >= len(shadowed) - 2


def test_shadow_outcomes_shortcut_equals_the_walk(qwen_vocab):
    """Where every token a shadow reads on is killed by one, ``shadow_outcomes`` skips
    the walk (no outcomes, no ends); everywhere its result is what the walk gives, and the
    configurations whose shadows read on the same tokens share one array of them."""
    from stackmask.compile.terminal import TerminalCompiler
    from stackmask.compile.token_index import vocab_index
    c = Constraint(_repeatable_blanks(SCHEMAS[0]), qwen_vocab, cache_dir=False,
                   progress=False)
    sc = c.scanner
    terms = TerminalCompiler(sc, vocab_index(qwen_vocab))
    shortcut = 0
    diffs = {}
    for cfg in range(len(sc.export_configs())):
        _, shadows = sc.config(cfg)
        if not shadows:
            continue
        diff, groups, ends = terms.shadow_outcomes(cfg)
        live = np.zeros(len(terms.index.toks), dtype=bool)
        live[diff] = True
        g2, e2 = terms.shadow_group(cfg, live)
        assert set(groups) == set(g2) and ends == e2, cfg
        for k in groups:
            assert np.array_equal(groups[k], g2[k]), (cfg, k)
        shortcut += not groups and not ends
        prev = diffs.setdefault(diff.tobytes(), diff)
        assert prev is diff
    assert shortcut >= 10
