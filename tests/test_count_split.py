"""Counted chains' states near a bound without starts of their own
(:mod:`stackmask.compile.count_split`): their masks are the deep states' masks restricted by
per-token iteration counts.

Checked: the classes of a chain's counts; the iteration counts against a token-by-token
run; that construction gives near states terms instead of starts (so the tests below check
something); and masks against the oracle at every step of texts that cross every bound,
with other terminals read beside the chain or not, bounded and unbounded members in one
chain, characters of several bytes and escapes split across tokens, fresh and loaded."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from stackmask import Constraint, Grammar, Vocab
from stackmask.compile.count_split import counts_for, iteration_counts
from stackmask.lexer.counted import IN, INF, count_classes, split_counted
from stackmask.lexer.pinned import PINNED
from stackmask.compile.token_index import VocabIndex
from stackmask.lexer.counted import _x_steps
from stackmask.lexer.regex import ByteNFA, regex_ir, utf8_leaf
from stackmask.vocab import qwen2_5_encoding
from test_counted import _walk

STRING = r'"(?:[^"\\]|\\.){%s}"'
PIECES = ["a", "b", " ", "é", "中", '\\"', "\\n", '"', ",", ":", "\\"]


def _vocab(seed: int = 5, n: int = 400) -> Vocab:
    """Every byte, and ``n`` tokens of 2-20 pieces (at most 63 bytes: the band is 64)."""
    rng = random.Random(seed)
    extra = set()
    while len(extra) < n:
        t = "".join(rng.choice(PIECES) for _ in range(rng.randint(2, 20))).encode()
        if len(t) < 64:
            extra.add(t)
    toks = [bytes([b]) for b in range(256)] + sorted(extra)
    return Vocab(toks + [None], eos_token_ids=[len(toks)], special_token_ids=[len(toks)])


def test_count_classes():
    assert count_classes([(0, 300)]) == [(0, 300, True), (301, INF, False)]
    assert count_classes([(0, -1), (0, 300)]) == [(0, 300, True), (301, INF, True)]
    assert count_classes([(400, 700)]) == [(0, 399, True), (400, 700, True), (701, INF, False)]
    assert count_classes([(0, -1), (5000, -1), (3, 20)]) == [
        (0, 2, True), (3, 20, True), (21, 4999, True), (5000, INF, True)]


def test_iteration_counts_equal_a_run_per_token():
    v = _vocab()
    index = VocabIndex(v)
    parts = split_counted(regex_ir(STRING % "0,300", ByteNFA("", 10 ** 5, "t")), 64)
    xn, xd = _x_steps(parts[1], lambda: ByteNFA("", 10 ** 5, "t"), utf8_leaf)
    starts = list(range(xn.shape[0]))
    got = iteration_counts(index, xn, xd, starts, v.size, 63)
    for s in starts:
        for i in range(v.size):
            b = v.token_bytes(i)
            if not b or i in v.eos_token_ids or xn[s, b[0]] < 0:
                assert got[s, i] == 0
                continue
            x, u = s, 0
            for byte in b:
                nx = xn[x, byte]
                if nx < 0:
                    break
                u += bool(xd[x, byte])
                x = nx
            else:
                u += x != 0
            assert got[s, i] == u, (s, b)
    # kept across constraints: the same counts, the same arrays the second time
    first = counts_for(index, xn, xd, starts, v.size, 63)
    again = counts_for(index, xn, xd, starts[::-1], v.size, 63)
    assert all(np.array_equal(a, got[s]) for s, a in zip(starts, first))
    assert all(a is b for a, b in zip(first, again[::-1]))


def _uncompiled(c: Constraint) -> list:
    """The chain states whose plain configuration has no start, alias or terms: a mask
    there would compile it (construction must leave none)."""
    dwa, grp, pos = c.compiled.dwa, c.scanner.dfa.chains[0], c.scanner.dfa.chains[1]
    out = []
    for d in np.flatnonzero((grp >= 0) & (pos >= 0)).tolist():
        cfg = c.scanner.intern(d, frozenset())
        if cfg not in dwa.init and cfg not in dwa.alias and cfg not in dwa.count_split:
            out.append(d)
    return out


def _body(rng, n: int) -> str:
    """``n`` string characters (escapes and characters of 2 and 3 bytes among them)."""
    return "".join(rng.choice(["a", " ", "é", "中", '\\"', "\\n", "b"]) for _ in range(n))


CASES = [
    # one bounded string: past the bound nothing can be read
    ('start: "[" S ("," S)* "]"\nS: /' + STRING % "0,300" + '/\n', [(299, 300), (300,)]),
    # a bounded and an unbounded string in one chain, a key read beside it (other bytes)
    ('start: "{" pair ("," pair)* "}"\npair: KEY (S | T)\nKEY: /"[a-z ]*":/\n'
     'S: /' + STRING % "0,300" + '/\nT: /' + STRING % "0," + '/\n', [(300, 5), (301,), (350, 299)]),
    # a string between two far bounds, and an unbounded one
    ('start: "[" (S | T) ("," (S | T))* "]"\nS: /' + STRING % "200,400" + '/\n'
     'T: /' + STRING % "0," + '/\n', [(199, 200), (400, 401), (450,)]),
    # classes shorter than a token (counts 0-4, 5-20, 21-40): pinned states stand for them
    ('start: "[" (S | U | V | T) ("," (S | U | V | T))* "]"\nS: /' + STRING % "0,300" + '/\n'
     'U: /' + STRING % "0,20" + '/\nV: /' + STRING % "5,40" + '/\nT: /' + STRING % "0," + '/\n',
     [(3, 4, 5), (19, 20, 21), (39, 40, 41), (299, 300, 301)]),
]


@pytest.mark.parametrize("grammar,lengths", CASES, ids=["bounded", "with-key", "between", "short"])
def test_masks_equal_the_oracle_at_every_step(grammar, lengths, tmp_path):
    v = _vocab()
    rng = random.Random(13)
    for attempt in range(2):
        c = Constraint(grammar, v, cache_dir=tmp_path, progress=False)
        assert c.loaded_from_cache == bool(attempt)
        assert c.compile_stats()["configs_counted"] > 100, "no near state without a start"
        if "U:" in grammar:
            assert (c.scanner.dfa.chains[1] <= PINNED).sum() > 20, "no pinned state"
        texts = []
        for ns in lengths:
            bodies = ['"' + _body(rng, n) + '"' for n in ns]
            if grammar.startswith('start: "{"'):
                texts.append("{" + ",".join(f'"k":{b}' for b in bodies) + "}")
            else:
                texts.append("[" + ",".join(bodies) + "]")
        assert not _uncompiled(c)
        dwa = c.compiled.dwa
        started = len(dwa.init)
        # every mask (loaded from the cache: the last text)
        assert _walk(c, texts if attempt == 0 else texts[-1:], rng, 1) > 100
        # complete: no mask compiled a configuration
        assert len(dwa.init) == started


def test_schema_masks_equal_the_oracle_near_the_bounds(qwen_vocab):
    _near_the_bounds(qwen_vocab, 64)


@pytest.mark.slow
def test_schema_masks_equal_the_oracle_near_the_bounds_all(qwen_vocab):
    _near_the_bounds(qwen_vocab, 130)


def _near_the_bounds(qwen_vocab, window: int):
    # Qwen2.5 (tokens up to 128 bytes), a bounded and a plain string and the keys of
    # other properties read beside the chain: every mask from 40 characters before a
    # bound on, over ``window`` bytes
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 300},
                                               "t": {"type": "string"}},
              "required": ["s", "t"]}
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=False,
                   progress=False)
    assert c.compile_stats()["configs_counted"] > 1000
    assert not _uncompiled(c)
    rng = random.Random(3)
    s_body, t_body = _body(rng, 300), _body(rng, 320)
    text = '{"s": "' + s_body + '", "t": "' + t_body + '"}'
    ids = qwen2_5_encoding().encode(text)
    s = c.start()
    data = b""
    near = [len(('{"s": "' + s_body[:260]).encode()), len(('{"s": "' + s_body + '", "t": "'
                                                          + t_body[:260]).encode())]
    checked = 0
    for i in ids:
        s = c.commit(s, i)
        data += qwen_vocab.token_bytes(i)
        if any(n <= len(data) <= n + window for n in near):
            assert np.array_equal(c.get_mask(s), c.reference_mask(s)), len(data)
            checked += 1
    assert checked > window // 5


def test_every_chain_state_is_started_or_counted(qwen_vocab):
    # keys read beside the chain's first counts (MaskBench o9955: "ssoType" and
    # "ssoRequest" beside a string whose stall starts at count 1): such stall states are
    # met only while decoding (the construction reads a stall as one count), so the
    # construction must start every chain state it gives no terms
    schema = {"type": "object", "properties": {
        "ssoType": {"type": "string", "enum": ["SAML"]},
        "ssoRequest": {"type": "string", "maxLength": 32767}}, "required": ["ssoType", "ssoRequest"]}
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=False,
                   progress=False)
    assert c.compile_stats()["configs_counted"] > 1000
    assert not _uncompiled(c)
    started = len(c.compiled.dwa.init)
    s = c.commit_bytes(c.start(), b'{"ssoType": "SAML", "ssoRequest": "ssoTyp')
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    assert len(c.compiled.dwa.init) == started


#: MaskBench Github_medium---o9764 (its "$schema" left out)
O9764 = ('{"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Fa-f\\\\d]{'
    '24}$"}, "apiTokenId": {"type": "string", "pattern": "^[A-Fa-f\\\\d]{24}$"}, "ownerId":'
    ' {"type": "string", "pattern": "^[A-Fa-f\\\\d]{24}$"}, "ownerType": {"type": "string",'
    ' "enum": ["application"]}, "creatorId": {"type": "string", "pattern": "^[A-Fa-f\\\\d]{'
    '24}$"}, "creatorType": {"type": "string", "enum": ["apiToken", "user", "flow"]}, "cr'
    'eatorName": {"type": "string", "maxLength": 1024}, "name": {"type": "string", "minLe'
    'ngth": 1, "maxLength": 255}, "description": {"type": "string", "maxLength": 32767}, '
    '"creationDate": {"type": "string", "format": "date-time"}, "lastUpdated": {"type": "'
    'string", "format": "date-time"}, "expirationDate": {"type": "string", "format": "dat'
    'e-time"}, "scope": {"type": "array", "items": {"type": "string", "minLength": 1, "ma'
    'xLength": 1024}}, "status": {"type": "string", "enum": ["active", "inactive"]}, "tok'
    'en": {"type": "string", "minLength": 1}}}')


def test_every_stall_state_is_started(qwen_vocab):
    # (MaskBench o9764) patterns and enums read beside strings whose stalls start at count
    # 1, chains the masks do not split (a length beside a pattern): an extended
    # configuration in a stall takes its plain configuration's masks, which the
    # construction, reading a stall as one count, never meets; it must start it anyway
    schema = json.loads(O9764)
    c = Constraint(Grammar.from_json_schema(schema), qwen_vocab, cache_dir=False,
                   progress=False)
    dwa, tags = c.compiled.dwa, c.scanner.dfa.counters[3]
    stalled = np.flatnonzero((tags == IN).any(axis=1))
    assert len(stalled) > 10
    for q in stalled.tolist():
        cfg = c.scanner.intern(q, frozenset())
        assert cfg in dwa.init or cfg in dwa.alias or cfg in dwa.count_split, q
    started = len(dwa.init)
    s = c.commit_bytes(c.start(), b'{"id": "' + b"a" * 24 + b'", "ownerType": "application", '
                       b'"creatorName": "creat')
    assert np.array_equal(c.get_mask(s), c.reference_mask(s))
    assert len(dwa.init) == started
