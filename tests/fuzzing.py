"""Fuzzing: generators (hypothesis strategies) and case runners shared by
``tests/test_fuzz.py`` (modest example counts) and ``benchmarks/fuzz.py`` (long runs).

Every runner feeds one generated input to the public API and returns the outcome
category (a short string). Only documented outcomes are allowed: a result that is
checked for correctness (masks equal the reference oracle, commits agree with masks,
full matches of a terminal's regex are sentences and nothing else is), or a
documented ``stackmask`` exception (``GrammarError``, ``LimitExceeded``,
``TokenRejected``) or the documented ``ValueError``/``TypeError`` for bad arguments.
Anything else raises ``AssertionError`` (a bug), with the input in the message.
"""

from __future__ import annotations

import random
import re

import numpy as np
from hypothesis import strategies as st

from stackmask import (Constraint, GrammarError, LimitExceeded, Limits, StackmaskError,
                       TokenRejected, Vocab, validate)
from stackmask.runtime import mask_to_ids

# small enough that no fuzz case can hang or thrash, large enough for real grammars
FUZZ_LIMITS = Limits(max_compile_seconds=30, max_compile_memory_bytes=2 << 30,
                     max_automaton_states=20_000, max_gss_work=200_000)


def _constraint(grammar, vocab, ambiguous, **kw):
    return Constraint(grammar, vocab, ambiguous=ambiguous, cache_dir=False, progress=False,
                      limits=FUZZ_LIMITS, **kw)


# ---------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------

ALPHABET = "abcxyz019 .,+-*()[]{}\"'\\é→\n"

_ATOMS_OK = ["a", "b", "ab", "xyz", "[a-c]", "[^a]", "[0-9]", "\\d", "\\w", "\\s", ".",
             "é", "→", "\\.", "\\+", "[a-zé]", "(?i:k)", "[\\u0100-\\u0200]", "\\n", " "]
_ATOMS_BAD = ["(?=a)", "(?!a)", "(?<=a)", "(?<!a)", "\\1", "^", "$", "\\b", "\\B", "\\A", "\\Z",
              "(?>a)", "a*+", "(?(1)a|b)", "(", "[", "*", "a{2,1}"]
_QUANT = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?", "+?", "??", "{2,}"]


@st.composite
def regexes(draw, bad: bool = True):
    """A regex from supported atoms, groups, alternation and quantifiers (and, with
    ``bad``, sometimes an unsupported or invalid construct)."""

    def node(depth):
        kind = draw(st.integers(0, 5 if depth < 3 else 1))
        if kind <= 1:
            pool = _ATOMS_OK + (_ATOMS_BAD if bad and draw(st.integers(0, 9)) == 0 else [])
            a = draw(st.sampled_from(pool))
        elif kind == 2:
            a = "(" + node(depth + 1) + ")"
        elif kind == 3:
            a = "(?:" + node(depth + 1) + "|" + node(depth + 1) + ")"
        else:
            a = node(depth + 1) + node(depth + 1)
        q = draw(st.sampled_from(_QUANT))
        if q and (kind > 3 or a[-1] in "*+?}"):
            a = "(?:" + a + ")"                 # never a quantifier on a quantifier
        return a + q

    return node(0)


_TERM_NAMES = ["A", "B", "NUM", "WORD", "WS"]
_RULE_NAMES = ["start", "a", "b", "c", "expr"]


@st.composite
def grammar_texts(draw):
    """Lark grammar text: random rules (alternatives of rule names, terminals and
    literals, with ``? * +``, groups, optional ``|`` empty alternatives), terminals
    (literals or regexes, sometimes with a priority), maybe ``%ignore``; then maybe a
    few random character mutations."""
    n_rules = draw(st.integers(1, 4))
    rules = _RULE_NAMES[:n_rules]
    n_terms = draw(st.integers(0, 3))
    terms = _TERM_NAMES[:n_terms]
    lines = []
    for r in rules:
        # a base case first (literals and terminals only), so most grammars derive something
        base = [draw(st.sampled_from(terms)) if terms and draw(st.booleans()) else
                '"' + draw(st.sampled_from(["x", "y", "if", "ab", "é"])) + '"'
                for _ in range(draw(st.integers(1, 2)))]
        alts = [" ".join(base)] if draw(st.integers(0, 5)) else []
        for _ in range(draw(st.integers(1, 3))):
            syms = []
            for _ in range(draw(st.integers(0, 3))):
                k = draw(st.integers(0, 3))
                if k == 0 and rules:
                    s = draw(st.sampled_from(rules))
                elif k == 1 and terms:
                    s = draw(st.sampled_from(terms))
                else:
                    s = '"' + draw(st.sampled_from(["x", "y", "if", "(", ")", ",", "+", "é", "ab"])) + '"'
                if draw(st.integers(0, 5)) == 0:
                    s = "(" + s + " " + draw(st.sampled_from(['"z"', rules[0]])) + ")"
                s += draw(st.sampled_from(["", "", "", "?", "*", "+"]))
                syms.append(s)
            alts.append(" ".join(syms))
        lines.append(f"{r}: " + " | ".join(alts))
    for t in terms:
        prio = draw(st.sampled_from(["", "", ".2"]))
        if draw(st.booleans()):
            body = '"' + draw(st.sampled_from(["x", "if", "ab", "é", "+"])) + '"'
        else:
            body = "/" + draw(regexes(bad=draw(st.integers(0, 4)) == 0)).replace("/", "\\/") + "/"
        lines.append(f"{t}{prio}: {body}")
    if draw(st.booleans()):
        lines.append('%ignore " "')
    text = "\n".join(lines) + "\n"
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2, 4]))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.integers(0, 2))
        ch = draw(st.sampled_from(list(':|()[]?*+"/\n %.') + ["ab", "x"]))
        text = (text[:i] + text[i + 1:] if op == 0 else
                text[:i] + ch + text[i:] if op == 1 else text[:i] + ch + text[i + 1:])
    return text


@st.composite
def vocabularies(draw, alphabet: str = ALPHABET, nasty: bool = True):
    """Tokens over the alphabet's characters (as UTF-8 and cut inside characters), every
    single byte of the alphabet, and with ``nasty``: empty tokens, duplicates, invalid
    UTF-8, very long tokens, byteless ids, special tokens, several EOS ids, padding ids."""
    chars = sorted(set(alphabet))
    pieces: list = sorted({c.encode() for c in chars} | {bytes([b]) for c in chars for b in c.encode()})
    words = draw(st.lists(st.text(alphabet=chars, min_size=1, max_size=6), max_size=25))
    pieces += [w.encode() for w in words]
    pieces += [w.encode()[:-1] for w in words if len(w.encode()) > 1 and draw(st.booleans())]
    specials = []
    if nasty:
        pieces += draw(st.lists(st.binary(min_size=1, max_size=4), max_size=6))    # any bytes
        pieces += [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"][:draw(st.integers(0, 4))]
        if draw(st.booleans()):
            pieces.append((draw(st.sampled_from(words or ["ab"])) * 2000).encode()[:5000])
        pieces += [b""] * draw(st.integers(0, 2)) + [None] * draw(st.integers(0, 2))
        pieces += draw(st.lists(st.sampled_from(pieces), max_size=5))              # duplicates
    rnd = random.Random(draw(st.integers(0, 2 ** 32)))
    rnd.shuffle(pieces)
    n_eos = draw(st.integers(1, 2))
    toks = pieces + [b"<|eos%d|>" % k for k in range(n_eos)]
    eos = list(range(len(pieces), len(toks)))
    if nasty and draw(st.booleans()):
        toks.append(b"<|special|>")
        specials.append(len(toks) - 1)
    size = len(toks) + (draw(st.integers(0, 40)) if nasty else 0)
    return Vocab(toks, eos_token_ids=eos, special_token_ids=eos + specials, vocab_size=size)


# ---------------------------------------------------------------------------
# checks shared by the runners
# ---------------------------------------------------------------------------

def check_walk(c: Constraint, rng: random.Random, steps: int, ctx: str,
               random_commits: int = 3) -> str:
    """Walk from start() choosing tokens from the compiled mask; at every step the mask
    equals the oracle's, every masked id commits, random other ids are rejected with
    TokenRejected (ValueError out of range). Returns "walked" or "limit"."""
    s = c.start()
    V = c.vocab.size
    for step in range(steps):
        try:
            m = c.get_mask(s)
        except LimitExceeded:
            return "limit"
        try:
            ref = c.reference_mask(s)       # the oracle commits every token: GLR work too
        except LimitExceeded:
            return "limit"
        assert np.array_equal(m, ref), f"{ctx}: mask != oracle at step {step}"
        allowed = mask_to_ids(m, V)
        allowed_set = set(int(i) for i in allowed)
        for _ in range(random_commits):
            t = rng.randrange(V)
            try:
                c.commit(s, t)
                ok = True
            except TokenRejected:
                ok = False
            except LimitExceeded:
                return "limit"
            assert ok == (t in allowed_set), f"{ctx}: commit({t}) {'accepted' if ok else 'rejected'} but mask says {t in allowed_set}"
        for bad in (-1, V):
            try:
                c.commit(s, bad)
                raise AssertionError(f"{ctx}: out-of-range id {bad} committed")
            except ValueError:
                pass
        if not len(allowed):
            break
        t = int(allowed[rng.randrange(len(allowed))])
        try:
            s = c.commit(s, t)
        except LimitExceeded:
            return "limit"
        if s.finished:
            assert c.is_accepting(s)
            break
    return "walked"


def _classify(e: BaseException) -> str:
    if isinstance(e, GrammarError):
        return "GrammarError"
    if isinstance(e, LimitExceeded):
        return f"LimitExceeded:{e.limit}"
    return type(e).__name__


# ---------------------------------------------------------------------------
# runners
# ---------------------------------------------------------------------------

def run_grammar_text(text: str, vocab: Vocab, ambiguous: bool, seed: int) -> str:
    """Random or mutated Lark text: validate() and Constraint agree; a constraint that
    builds gives oracle masks on a short walk."""
    ctx = f"grammar {text!r} ambiguous={ambiguous}"
    try:
        report = validate(text, ambiguous=ambiguous)
    except StackmaskError as e:      # validate reports, it does not raise
        raise AssertionError(f"{ctx}: validate raised {e!r}") from e
    try:
        c = _constraint(text, vocab, ambiguous)
    except (GrammarError, LimitExceeded) as e:
        cat = _classify(e)
        if report.ok and isinstance(e, GrammarError):
            return cat + "(validate missed)"
        return cat
    except Exception as e:
        raise AssertionError(f"{ctx}: Constraint raised {type(e).__name__}: {e}") from e
    assert report.ok, f"{ctx}: validate reported {report} but the constraint compiled"
    return "compiled:" + check_walk(c, random.Random(seed), 6, ctx)


def run_regex_terminal(regex: str, samples: list, vocab: Vocab, seed: int) -> str:
    """``start: T`` with ``T: /regex/``: a GrammarError, or a constraint under which a
    string is a sentence iff Python's re fullmatches it (for greedy regexes), and whose
    masks equal the oracle's."""
    text = "start: T\nT: /" + regex.replace("/", "\\/") + "/\n"
    ctx = f"regex {regex!r}"
    try:
        c = _constraint(text, vocab, False)
    except (GrammarError, LimitExceeded) as e:
        return _classify(e)
    except Exception as e:
        raise AssertionError(f"{ctx}: Constraint raised {type(e).__name__}: {e}") from e
    reluctant = bool(re.search(r"[*+?}]\?", regex))
    try:
        pattern = re.compile(regex)
    except re.error as e:
        raise AssertionError(f"{ctx}: compiled although re rejects it: {e}") from e
    for sample in samples:
        data = sample.encode("utf-8", "surrogatepass")
        try:
            s = c.commit_bytes(c.start(), data)
            accepted = c.is_accepting(s)
        except TokenRejected:
            accepted = False
        expect = pattern.fullmatch(sample) is not None
        if reluctant:
            if accepted:
                assert expect, f"{ctx}: {sample!r} accepted but re does not fullmatch it"
            continue
        assert accepted == expect, f"{ctx}: {sample!r}: stackmask says {accepted}, re says {expect}"
    return "compiled:" + check_walk(c, random.Random(seed), 5, ctx)


def run_vocabulary(grammar: str, ambiguous: bool, vocab: Vocab, seed: int) -> str:
    """A nasty vocabulary against a fixed grammar: oracle masks, commits agree."""
    ctx = f"vocab of {len(vocab.tokens)} tokens (size {vocab.size}) on {grammar[:40]!r}"
    try:
        c = _constraint(grammar, vocab, ambiguous, compile=random.Random(seed).choice(["eager", "lazy"]))
    except LimitExceeded as e:
        return _classify(e)
    except Exception as e:
        raise AssertionError(f"{ctx}: Constraint raised {type(e).__name__}: {e}") from e
    return "compiled:" + check_walk(c, random.Random(seed), 8, ctx)


def run_token_sequence(c: Constraint, ids: list, ctx: str) -> str:
    """Commit arbitrary ids in order, keeping the last good state: every commit agrees
    with the mask (accepted iff masked; ids out of range raise ValueError)."""
    s = c.start()
    V = c.vocab.size
    accepted = rejected = 0
    for t in ids:
        try:
            m = c.get_mask(s)
        except LimitExceeded:
            return "limit"
        in_range = 0 <= t < V
        masked = in_range and bool(m[t // 32] >> (t % 32) & 1)
        try:
            s2 = c.commit(s, t)
        except ValueError:
            assert not in_range, f"{ctx}: ValueError for in-range id {t}"
            continue
        except TokenRejected:
            assert not masked, f"{ctx}: masked id {t} rejected"
            rejected += 1
            continue
        except LimitExceeded:
            return "limit"
        assert masked, f"{ctx}: unmasked id {t} committed"
        accepted += 1
        s = s2
    try:
        ref = c.reference_mask(s)
    except LimitExceeded:
        return "limit"
    assert np.array_equal(c.get_mask(s), ref), f"{ctx}: final mask != oracle"
    return "accepted-some" if accepted else "all-rejected"
