"""Start items held out of the mask automaton (DESIGN, *Routing*; ``ParserDWA.route_min``):
tokens whose outcome shifts several terminals are checked by masks over the GSS
(``runtime.held.HeldOut``) instead of being states of the automaton. Masks stay those of the
oracle (compared at every step, the held-out threshold forced down so that most tokens
go that way), through artifacts, in lazy and eager compiles, and SQL, whose automaton
did not complete with them, now compiles completely."""

from __future__ import annotations

import random

import numpy as np
import pytest
import zstandard

from stackmask import Constraint
from stackmask import artifact
from stackmask.compile import build, decode_artifact, encode_artifact
from stackmask.artifact import StaleArtifactWarning
from stackmask.compile.parser_dwa import ParserDWA
from stackmask.grammars import load as load_grammar

from conftest import read_bench_grammar
from test_artifact import _rewrite_payload, only_file, small_vocab
from test_compiled_exact import (AMBIGUOUS_GRAMMARS, _AMBIGUOUS_FIXED, check_steps,
                                 check_trace, committing_prefix, random_walk)


@pytest.fixture
def route(monkeypatch):
    """Hold out the start items of ``k`` or more terminals from the start (eager and lazy
    compiles) for the constraints built in the test."""
    def set_(k):
        monkeypatch.setattr(build, "ROUTE_AFTER_STATES", 0)
        monkeypatch.setattr(ParserDWA, "ROUTE_MIN_TERMINALS", k)
    return set_


# every grammar with all its tokens held out; with those of two or more terminals, two of
# them by default and the others in the slow run
_HELD_CASES = [(name, 1) for name in sorted(AMBIGUOUS_GRAMMARS)] + [
    (name, 2) if name in ("expr", "ss") else pytest.param(name, 2, marks=pytest.mark.slow)
    for name in sorted(AMBIGUOUS_GRAMMARS)]


@pytest.mark.parametrize("name, threshold", _HELD_CASES)
def test_held_out_items_give_the_oracle_masks_on_ambiguous_grammars(
        name, threshold, route, qwen_vocab, qwen_encoding):
    """GLR grammars (several heads, lexical ties), tokens of ``threshold`` or more
    terminals held out: every step of the fixed traces (which fork the GSS) equals the
    oracle, eager and lazy (the oracle's masks computed once: they do not depend on how
    the automaton is built)."""
    route(threshold)
    refs: dict = {}
    for mode in ("eager", "lazy"):
        c = Constraint(AMBIGUOUS_GRAMMARS[name], qwen_vocab, ambiguous=True, cache_dir=False,
                       compile=mode)
        for text in _AMBIGUOUS_FIXED[name]:
            ok = committing_prefix(c, qwen_encoding.encode(text, disallowed_special=()))[0]
            check_steps(c, ok, f"{name} {mode} route {threshold} {text!r}", refs)
        assert c.compiled.dwa.routed, "nothing held out: the test lost its point"
    random_walk(c, random.Random(f"route-{name}-{threshold}"), 6, lambda k: True,
                f"{name} route {threshold} walk")


def test_held_out_items_give_the_oracle_masks_on_json(route, qwen_vocab, qwen_encoding):
    """A conflict-free grammar with tokens of two or more terminals held out (``"},{"``,
    ``":``, ``],``): the oracle's masks at every step of a document, and on a walk."""
    route(2)
    c = Constraint(load_grammar("json"), qwen_vocab, cache_dir=False)
    st = c.compile_stats()
    assert st["routed_items"] > 0 and st["routed_starts"] > 0
    doc = '{"a": [1, {"b": null}, "x"], "cd": {"e": [[]], "f": -2.5e3}, "g": [{"h": "i"}]}'
    check_trace(c, qwen_encoding.encode(doc), "all", "json held out")
    random_walk(c, random.Random("route-json"), 12, lambda k: k % 2 == 0, "json held out walk")


def test_held_out_items_survive_an_artifact(tmp_path, route):
    """The held-out items are written to the artifact and read back (same masks after a
    load); a file whose held-out items are malformed is refused and rebuilt."""
    route(2)
    v = small_vocab()
    grammar = load_grammar("json")
    c = Constraint(grammar, v, cache_dir=tmp_path)
    assert c.compile_stats()["routed_items"] > 0
    d = Constraint(grammar, v, cache_dir=tmp_path)
    assert d.loaded_from_cache
    assert d.compiled.dwa.routed == c.compiled.dwa.routed
    assert d.compiled.dwa.route_min == 2
    text = b'{"a": [1, {"ab": null}], "b": "a"}'
    s, t = c.start(), d.start()
    for k in range(len(text) + 1):
        assert np.array_equal(c.get_mask(s), d.get_mask(t)), k
        if k < len(text):
            s, t = c.commit_bytes(s, text[k:k + 1]), d.commit_bytes(t, text[k:k + 1])
    # an item that is not one (a terminal past the grammar's): refused, rebuilt
    path = only_file(tmp_path)
    comp = decode_artifact(zstandard.ZstdDecompressor().decompress(
        path.read_bytes()[artifact._HEADER.size:]))
    key = next(iter(comp.dwa.routed))
    comp.dwa.routed[key] = (((0, -1, (10 ** 6, 1, 2), None), 1),)
    _rewrite_payload(path, encode_artifact(comp))
    with pytest.warns(StaleArtifactWarning, match="held-out"):
        e = Constraint(grammar, v, cache_dir=tmp_path)
    assert not e.loaded_from_cache


def test_sql_compiles_completely_and_masks_hold(qwen_vocab, qwen_encoding):
    """SQL (101 LALR conflicts), with the default thresholds: the automaton is complete
    (no budget stop, nothing left for a mask to compile: no mask calls the compiler),
    tokens of three or more
    terminals (``)));``) are held out, and masks at steps after such tokens equal the
    oracle's."""
    c = Constraint(read_bench_grammar("sql"), qwen_vocab, ambiguous=True, cache_dir=False,
                   explore_sentences=0)
    st = c.compile_stats()
    assert not st["budget_exhausted"] and st["complete_states"] == st["states"]
    assert st["routed_items"] > 0
    text = ("SELECT a FROM t WHERE b IN (SELECT c FROM u WHERE d IN (SELECT e FROM v "
            "WHERE f IN (SELECT g FROM w)));")
    ids = qwen_encoding.encode(text)
    assert any(len(qwen_vocab.token_bytes(i).strip()) >= 3 and
               set(qwen_vocab.token_bytes(i).strip()) <= set(b");") for i in ids)
    # complete: no mask compiles an automaton edge or a lexer configuration
    def compiles(*a):
        raise AssertionError(f"a mask compiled {a}")
    c.compiled.dwa.edge = compiles
    c._masker._ensure_config = compiles
    assert len(committing_prefix(c, ids)[0]) == len(ids)
    # the steps before the last tokens (`` w`` then ``)));``) and at the end
    check_trace(c, ids, [len(ids) - 2, len(ids) - 1], "sql held out")
    s = c.start()
    for i in ids:                     # every step's mask
        c.get_mask(s)
        s = c.commit(s, i)


@pytest.mark.usefixtures("needs_native")
@pytest.mark.parametrize("name", ["json", "expr"])
def test_compiled_held_checks_equal_the_reference(name, route, monkeypatch, qwen_vocab,
                                                  qwen_encoding):
    """The compiled check (``_native.HeldChecks``: first steps kept per state, items
    that discard entries read that many links below) and the reference
    (``runtime.held.HeldOut``) give the same masks, most tokens held out."""
    from test_native import pair
    route(2)
    if name == "json":
        grammar, kw = load_grammar("json"), {}
        texts = ['{"a": [1, {"b": null}, "x"], "cd": {"e": [[{}]], "f": -2.5e3}}']
    else:
        grammar, kw = AMBIGUOUS_GRAMMARS["expr"], {"ambiguous": True}
        texts = ["1-2*-x+(y)", "((a))*-(b+(c-(d)))"]
    fast, pure = pair(grammar, qwen_vocab, monkeypatch, cache_dir=False, **kw)
    assert fast.compiled.dwa.routed and pure.compiled.dwa.routed
    for text in texts:
        s, t = fast.start(), pure.start()
        for k, tok in enumerate(qwen_encoding.encode(text) + [None]):
            assert np.array_equal(fast.get_mask(s), pure.get_mask(t)), (text, k)
            if tok is not None:
                s, t = fast.commit(s, tok), pure.commit(t, tok)
    walk = random.Random(f"held-{name}")
    s, t = fast.start(), pure.start()
    for k in range(30):
        m = fast.get_mask(s)
        assert np.array_equal(m, pure.get_mask(t)), ("walk", k)
        ids = [i for i in np.flatnonzero(np.unpackbits(m.view(np.uint8), bitorder="little"))
               if i not in qwen_vocab.eos_token_ids]
        if not ids:
            break
        tok = int(walk.choice(ids))
        s, t = fast.commit(s, tok), pure.commit(t, tok)


def test_an_automaton_past_the_bound_is_built_again_with_items_held_out(
        monkeypatch, caplog, qwen_vocab, qwen_encoding):
    """``build.ROUTE_AFTER_STATES``: a build that passes it starts over with the items of
    ``ROUTE_MIN_TERMINALS`` or more terminals held out (and says so); one that stays
    below holds nothing out. Masks equal the oracle's either way."""
    grammar = AMBIGUOUS_GRAMMARS["expr"]
    whole = Constraint(grammar, qwen_vocab, ambiguous=True, cache_dir=False)
    assert not whole.compiled.dwa.routed and whole.compiled.dwa.route_min is None
    monkeypatch.setattr(build, "ROUTE_AFTER_STATES", 20)
    monkeypatch.setattr(ParserDWA, "ROUTE_MIN_TERMINALS", 2)
    with caplog.at_level("INFO", logger="stackmask"):
        c = Constraint(grammar, qwen_vocab, ambiguous=True, cache_dir=False)
    assert "passed 20 states" in caplog.text
    st = c.compile_stats()
    assert st["routed_items"] > 0 and not st["budget_exhausted"]
    assert st["states"] < whole.compile_stats()["states"]
    ids = qwen_encoding.encode("((a))*-(b+(c-(d)))")
    check_trace(c, ids, "all", "expr rebuilt")
