"""Fuzzing (hypothesis): random and mutated Lark grammar text, random regexes for
terminals, nasty vocabularies and random token sequences against random grammars.
Every outcome is a checked result or a documented exception (see tests/fuzzing.py).
Modest example counts here; ``python benchmarks/fuzz.py`` runs many more and
prints the outcome counts."""

from __future__ import annotations

import collections
import functools
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stackmask import GrammarError, LimitExceeded
from stackmask.grammars import load as load_grammar

from fuzzing import (ALPHABET, _constraint, grammar_texts, regexes, run_grammar_text,
                     run_regex_terminal, run_token_sequence, run_vocabulary, vocabularies)

N = int(os.environ.get("STACKMASK_FUZZ_EXAMPLES", "0")) or None
OUTCOMES: collections.Counter = collections.Counter()
SLOWEST: list = []          # (seconds, test, outcome, input) of the slowest examples


def timed(fn):
    """Record each example's duration and outcome (the test returns ``(outcome, input)``)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        outcome, what = fn(*args, **kwargs)
        OUTCOMES[outcome] += 1
        SLOWEST.append((time.perf_counter() - t0, fn.__name__, outcome, what))
        SLOWEST.sort(key=lambda x: -x[0])
        del SLOWEST[5:]
    return wrapper
FUZZ = settings(max_examples=N or 25, deadline=None, derandomize=N is None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\nfuzz outcomes:", dict(sorted(OUTCOMES.items())))
    for sec, name, outcome, what in SLOWEST[:3]:
        print(f"  slow: {sec:.1f} s {name} {outcome} {what!r:.200}")


_VOCAB = []


def _byte_vocab():
    """Every byte of the alphabet, its characters and a few multi-character pieces."""
    if _VOCAB:
        return _VOCAB[0]
    from stackmask import Vocab
    pieces = sorted({bytes([b]) for c in ALPHABET for b in c.encode()} | {c.encode() for c in ALPHABET}
                    | {b"if", b"ab", b"xy", "é,".encode(), b'"x', b"+("})
    toks = list(pieces) + [b"<eos>"]
    _VOCAB.append(Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1]))
    return _VOCAB[0]


@FUZZ
@given(text=grammar_texts(), ambiguous=st.booleans(), seed=st.integers(0, 2 ** 16))
@timed
def test_fuzz_grammar_text(text, ambiguous, seed):
    return "grammar:" + run_grammar_text(text, _byte_vocab(), ambiguous, seed), text


@FUZZ
@given(regex=regexes(), data=st.data(), seed=st.integers(0, 2 ** 16))
@timed
def test_fuzz_regex_terminals(regex, data, seed):
    samples = data.draw(st.lists(st.text(alphabet="abcxyzk019 é→.+\n\u0150", max_size=6),
                                 max_size=6))
    try:
        import re
        re.compile(regex)
        if not re.search(r"\(\?[=!<>(]|\\[1AZbB]|[\^$]|\*\+", regex):
            samples += data.draw(st.lists(st.from_regex(regex, fullmatch=True), max_size=4))
    except Exception:       # noqa: BLE001 - invalid for re or hypothesis: plain samples only
        pass
    return "regex:" + run_regex_terminal(regex, samples, _byte_vocab(), seed), regex


GRAMMARS = {
    "json": (load_grammar("json"), False),
    "keywords": ('start: stmt+\nstmt: "if" NAME ":" stmt | "int" NAME ";" | NAME "=" NAME ";"\n'
                 'NAME: /[a-zé]+/\n%ignore " "\n', False),
    "ss": ('start: s\ns: s s | "a" | "ab"\n', True),
}


@FUZZ
@given(name=st.sampled_from(sorted(GRAMMARS)), data=st.data(), seed=st.integers(0, 2 ** 16))
@timed
def test_fuzz_vocabularies(name, data, seed):
    grammar, ambiguous = GRAMMARS[name]
    alphabet = {"json": '{}[],:" 0123456789.-+eEtrufalsn\\é', "keywords": "ifnt:;=abé ",
                "ss": "ab"}[name]
    vocab = data.draw(vocabularies(alphabet=alphabet))
    return "vocab:" + run_vocabulary(grammar, ambiguous, vocab, seed), (name, vocab.tokens)


@FUZZ
@given(text=grammar_texts(), ambiguous=st.booleans(), data=st.data())
@timed
def test_fuzz_token_sequences(text, ambiguous, data):
    vocab = _byte_vocab()
    try:
        c = _constraint(text, vocab, ambiguous)
    except (GrammarError, LimitExceeded) as e:
        return "tokens:" + type(e).__name__, text
    ids = data.draw(st.lists(st.integers(-2, vocab.size + 1), max_size=30))
    return "tokens:" + run_token_sequence(c, ids, f"grammar {text!r} ids {ids}"), (text, ids)
