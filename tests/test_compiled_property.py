"""Property tests: compiled masks equal the reference oracle on small grammars
and small random vocabularies, and both agree with ``commit``.

Each example draws a vocabulary for one small grammar: every single byte of
the grammar's alphabet (usually), random short strings over its characters,
random slices of real sentences (tokens that span several terminals, cut
inside multi-byte UTF-8 characters), a few arbitrary bytes, duplicates, a
byteless id, a special token, one or two EOS ids and padding ids past the
tokens, all shuffled. It then walks from ``start()`` choosing each token from
the compiled mask and at every step checks

* ``get_mask(s) == reference_mask(s)`` exactly (and with ``out=``);
* every id in the mask commits and every id outside it raises
  ``TokenRejected`` (EOS exactly when ``is_accepting``);
* the mask depends on the text only: the state reached by ``commit_bytes`` of
  the same text has the same mask;

and at the end that the masks of all earlier states are unchanged (states
are persistent; the memo must not hand out shared, mutable arrays). Each
example compiles eagerly or lazily (``compile="lazy"``: parts of the
automaton are built by the first masks that need them).

Deterministic companions: walks with a byte-level vocabulary (all 256 bytes
plus sentence slices), a Constraint loaded from an on-disk artifact, and lazy
compilation driven from several threads at once.

The ``slow`` variant runs ten times as many examples.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

from stackmask import Constraint, TokenRejected, Vocab
from stackmask.generate import SentenceGenerator
from stackmask.grammar import Grammar
from stackmask.runtime import mask_to_ids

# name -> (grammar, ambiguous)
GRAMMARS: dict[str, tuple[str, bool]] = {
    # %ignore whitespace; strings over all of Unicode (multi-byte pieces matter)
    "ws_values": (r'''start: value
value: "[" [value ("," value)*] "]" | NUMBER | STRING | "true" | "null"
NUMBER: /-?[0-9]+(\.[0-9]+)?/
STRING: /"[^"\\]*"/
%ignore /[ \t\n]+/
''', False),
    # keywords vs identifiers: "in" / "int" / "if" are prefixes of each other
    # and of identifiers; identifiers include a 2-byte letter
    "keywords": (r'''start: stmt+
stmt: "if" NAME ":" stmt | "int" NAME ";" | "in" NAME ";" | NAME "=" NAME ";"
NAME: /[a-zé]+/
%ignore " "
''', False),
    # maximal munch with inhibition: "." vs "..."
    "dots": (r'''start: item+
item: DOT | ELLIPSIS | "x"
DOT: "."
ELLIPSIS: "..."
''', False),
    # ... where the shorter split is never a sentence
    "dots_forbidden": (r'''start: DOT DOT DOT | "x" ELLIPSIS | DOT DOT
DOT: "."
ELLIPSIS: "..."
''', False),
    # reluctant terminals: comments end at the first */, strings at the first "
    "reluctant": (r'''start: (COMMENT | STR | WORD)+
COMMENT: /\/\*(.|\n)*?\*\//
STR: /".*?"/
WORD: /[a-z]+/
%ignore " "
''', False),
    # left recursion, no ignored separators
    "left_rec": (r'''start: e
e: e "+" t | e "-" t | t
t: t "*" f | f
f: NUM | "(" e ")"
NUM: /[0-9]+/
''', False),
    # right recursion
    "right_rec": (r'''start: l
l: item "," l | item
item: WORD | "(" l ")" | "(" ")"
WORD: /[a-z]+/
%ignore " "
''', False),
    # nullable rules everywhere (the empty text is a sentence)
    "nullable": (r'''start: a b c
a: "x"*
b: ("y" b)?
c: ("z" | ) d
d: "w"?
''', False),
    # ambiguous: no precedence
    "ambig_expr": (r'''start: e
e: e "+" e | e "*" e | "-" e | "(" e ")" | NUM
NUM: /[0-9]+/
%ignore " "
''', True),
    # ambiguous: every split is a parse
    "ss": ('start: s\ns: s s | "a" | "ab"\n', True),
    # lexical ambiguity (NAME and HEX tie at equal priority) + dangling else
    "lexamb_dangling": (r'''start: stmt+
stmt: "if" NAME "then" stmt "else" stmt | "if" NAME "then" stmt
    | NAME "=" HEX ";" | "#" HEX ";"
NAME: /[a-z]+/
HEX: /[0-9a-f]+/
%ignore " "
''', True),
    # no separators at all: adjacent terminals must not merge under maximal munch
    "no_separators": (r'''start: (WORD NUM | NUM "-" WORD | "select" WORD)+
WORD: /[a-z]+/
NUM: /[0-9]+/
''', False),
    # multi-byte terminals (tokens ending inside a character)
    "unicode": (r'''start: (GREEK | ARROW | "é" | "x")+
GREEK: /[αβγ]+/
ARROW: "→" | "⇒"
%ignore " "
''', False),
}


# ---------------------------------------------------------------------------
# test-wide: never write artifacts of random vocabularies into the user's cache

@pytest.fixture(autouse=True, scope="module")
def _no_artifact_cache():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STACKMASK_CACHE_DIR", "off")
        yield


_POOLS: dict = {}


def sentence_pool(name: str) -> tuple[list[bytes], list[str]]:
    """(sentences as bytes, characters) for ``name``: material for tokens."""
    hit = _POOLS.get(name)
    if hit is None:
        text = GRAMMARS[name][0]
        gen = SentenceGenerator(Grammar.from_lark(text), max_depth=6, seed=3, max_terminals=12)
        rng = random.Random(name)
        sents = []
        for _ in range(25):
            try:
                sents.append(gen.sentence(rng)[0])
            except ValueError:
                break
        chars = sorted(set("".join(sents)) | set(" \n"))
        hit = _POOLS[name] = ([s.encode() for s in sents], chars)
    return hit


@st.composite
def vocabularies(draw, name: str):
    sents, chars = sentence_pool(name)
    toks: list[bytes | None] = []
    alphabet = sorted({b for ch in chars for b in ch.encode()})
    if draw(st.integers(0, 9)) > 0:
        toks += [bytes([b]) for b in alphabet]                           # single bytes (usually)
    toks += [s.encode() for s in draw(st.lists(st.text(alphabet=chars, min_size=1, max_size=4),
                                               max_size=20))]             # short strings
    if sents:
        for _ in range(draw(st.integers(0, 20))):                         # slices of sentences
            sb = sents[draw(st.integers(0, len(sents) - 1))]
            if len(sb) > 1:
                i = draw(st.integers(0, len(sb) - 1))
                j = draw(st.integers(i + 1, min(len(sb), i + 8)))
                toks.append(sb[i:j])
    toks += draw(st.lists(st.binary(min_size=1, max_size=3), max_size=3))  # arbitrary bytes
    mb = [ch.encode() for ch in chars if len(ch.encode()) > 1] + ["é→".encode()]
    for _ in range(draw(st.integers(0, 3))):                              # multi-byte pieces
        b = mb[draw(st.integers(0, len(mb) - 1))]
        i = draw(st.integers(0, len(b) - 1))
        toks.append(b[i:draw(st.integers(i + 1, len(b)))])
    real = [t for t in toks if t]
    if real:
        toks += draw(st.lists(st.sampled_from(real), max_size=3))        # duplicates
    toks.append(None)                                                     # byteless id
    toks.append(b"")                                                      # empty = byteless
    special = b"<|tool|>"
    toks.append(special)
    eos = [b"</s>"] + ([b"<|im_end|>"] if draw(st.booleans()) else [])
    toks += eos
    order = draw(st.permutations(range(len(toks))))
    toks = [toks[i] for i in order]
    special_id = toks.index(special)
    eos_ids = [toks.index(e) for e in eos]
    padding = draw(st.integers(0, 40))
    # EOS ids are never text, whether or not they are also marked special
    specials = [special_id] + (eos_ids if draw(st.booleans()) else [])
    return Vocab(toks, eos_token_ids=eos_ids, special_token_ids=specials,
                 vocab_size=len(toks) + padding)


# ---------------------------------------------------------------------------

def _fmt_ids(v: Vocab, ids) -> str:
    return ", ".join(f"{int(i)}:{v.token_bytes(int(i))!r}" for i in list(ids)[:10])


def assert_exact(c: Constraint, s, text: bytes, where: str) -> np.ndarray:
    size = c.vocab.size
    words = (size + 31) // 32
    fast = c.get_mask(s)
    assert fast.dtype == np.int32 and fast.shape == (words,), f"{where}: bad mask {fast.dtype} {fast.shape}"
    fast = fast.copy()
    ref = c.reference_mask(s)
    if not np.array_equal(fast, ref):
        f, r = mask_to_ids(fast, words * 32), mask_to_ids(ref, words * 32)
        pytest.fail(f"{where}: compiled mask != oracle; text {text!r}, {len(s.heads)} heads\n"
                    f"  compiled only: [{_fmt_ids(c.vocab, np.setdiff1d(f, r))}]\n"
                    f"  oracle only:   [{_fmt_ids(c.vocab, np.setdiff1d(r, f))}]")
    buf = np.full(words, -1, dtype=np.int32)
    c.get_mask(s, out=buf)
    assert np.array_equal(buf, ref), f"{where}: get_mask(out=) differs from get_mask(); text {text!r}"
    # bits past vocab_size are never set
    assert mask_to_ids(ref, words * 32).max(initial=-1) < size
    return ref


def assert_replay_exact(c: Constraint, encoding, text: str, every: int = 1):
    """Commit ``text``'s tokens (``encoding``: the vocabulary's tokenizer) from the start,
    checking the mask against the oracle before every ``every``-th token; the text must
    be accepted at its end."""
    s = c.start()
    done = b""
    for k, tok in enumerate(encoding.encode(text)):
        if k % every == 0:
            assert_exact(c, s, done, f"{text[:40]!r}.. at {k}")
        s = c.commit(s, tok)
        done += c.vocab.token_bytes(tok)
    assert c.is_accepting(s), f"{text[:40]!r}.. not accepted"


def assert_walk_exact(c: Constraint, rng: random.Random, steps: int, label: str,
                      prefer=None, p: float = 0.0) -> None:
    """A random walk from the start, checking every mask against the oracle: each step
    commits an allowed token, with probability ``p`` one of ``prefer(allowed ids)``."""
    s = c.start()
    text = b""
    for k in range(steps):
        ref = assert_exact(c, s, text, f"{label} step {k}")
        ids = [int(i) for i in mask_to_ids(ref, c.vocab.size) if int(i) not in c.vocab.eos_token_ids]
        if not ids:
            break
        pick = prefer(ids) if prefer is not None else None
        tok = rng.choice(pick if pick and rng.random() < p else ids)
        s = c.commit(s, tok)
        text += c.vocab.token_bytes(tok)


def assert_mask_matches_commit(c: Constraint, s, mask: np.ndarray, text: bytes, where: str) -> None:
    allowed = set(mask_to_ids(mask, c.vocab.size).tolist())
    accepting = c.is_accepting(s)
    for tok in range(c.vocab.size):
        if tok in c.vocab.eos_token_ids:
            assert (tok in allowed) == accepting, f"{where}: EOS {tok} vs is_accepting={accepting}; text {text!r}"
        try:
            c.commit(s, tok)
            committed = True
        except TokenRejected:
            committed = False
        assert committed == (tok in allowed), (
            f"{where}: token {tok} {c.vocab.token_bytes(tok)!r} "
            f"{'commits but is not in the mask' if committed else 'is in the mask but commit rejects it'}; "
            f"text {text!r}")


class HypothesisChooser:
    def __init__(self, data):
        self.data = data

    def choice(self, seq, label):
        return self.data.draw(st.sampled_from(seq), label=label)

    def stop(self):
        return self.data.draw(st.integers(0, 5), label="eos?") == 0


class RandomChooser:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, seq, label):
        return self.rng.choice(list(seq))

    def stop(self):
        return self.rng.randrange(6) == 0


def run_walk(c: Constraint, chooser, max_steps: int, label: str) -> None:
    v = c.vocab
    eos = sorted(v.eos_token_ids)
    s = c.start()
    text = b""
    history = []
    for k in range(max_steps + 1):
        where = f"{label} step {k}"
        ref = assert_exact(c, s, text, where)
        assert_mask_matches_commit(c, s, ref, text, where)
        if k:
            # the mask is a function of the text: commit_bytes reaches an equal mask
            sb = c.commit_bytes(c.start(), text)
            mb = c.get_mask(sb)
            assert np.array_equal(mb, ref), (
                f"{where}: mask after commit_bytes({text!r}) differs from the token-by-token mask\n"
                f"  commit_bytes only: [{_fmt_ids(v, np.setdiff1d(mask_to_ids(mb, v.size), mask_to_ids(ref, v.size)))}]\n"
                f"  tokens only:       [{_fmt_ids(v, np.setdiff1d(mask_to_ids(ref, v.size), mask_to_ids(mb, v.size)))}]")
        history.append((s, ref, text))
        # the returned array is the caller's: scribbling on it changes nothing
        scratch = c.get_mask(s)
        scratch[...] = -1
        ids = mask_to_ids(ref, v.size)
        text_ids = [int(i) for i in ids if int(i) not in v.eos_token_ids]
        eos_ok = len(text_ids) < len(ids)
        if k == max_steps or not text_ids or (eos_ok and chooser.stop()):
            if eos_ok:
                done = c.commit(s, chooser.choice(eos, "eos"))
                assert mask_to_ids(assert_exact(c, done, text, f"{label} finished"), v.size).tolist() == eos
            break
        tok = chooser.choice(text_ids, f"token {k}")
        s = c.commit(s, tok)
        text += v.token_bytes(tok)
    for k, (s0, ref0, t0) in enumerate(history):
        assert np.array_equal(c.get_mask(s0), ref0), f"{label}: mask of step {k} ({t0!r}) changed later"


_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


def _random_vocab_walk(name, data):
    grammar, ambiguous = GRAMMARS[name]
    vocab = data.draw(vocabularies(name), label="vocab")
    note(f"grammar {name}: tokens {vocab.tokens!r} size {vocab.size} eos {sorted(vocab.eos_token_ids)}")
    mode = data.draw(st.sampled_from(["eager", "lazy"]), label="compile")
    c = Constraint(grammar, vocab, ambiguous=ambiguous, compile=mode, progress=False)
    run_walk(c, HypothesisChooser(data), data.draw(st.integers(1, 16), label="steps"), f"{name} ({mode})")


@pytest.mark.parametrize("name", sorted(GRAMMARS))
@settings(max_examples=40, deadline=None, suppress_health_check=_HEALTH)   # slow: 400 below
@given(data=st.data())
def test_compiled_equals_oracle_on_random_vocabularies(name, data):
    _random_vocab_walk(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@settings(max_examples=400, deadline=None, suppress_health_check=_HEALTH)
@given(data=st.data())
def test_compiled_equals_oracle_on_random_vocabularies_many(name, data):
    _random_vocab_walk(name, data)


# ---------------------------------------------------------------------------
# deterministic companions: a fixed byte-level vocabulary (every walk can
# reach every text) and an artifact round trip through an on-disk cache

def byte_level_vocab(name: str) -> Vocab:
    sents, chars = sentence_pool(name)
    rng = random.Random(f"bytes-{name}")
    toks = [bytes([b]) for b in range(256)]
    for sb in sents:
        for _ in range(3):
            i = rng.randrange(len(sb))
            toks.append(sb[i:i + rng.randint(2, 6)])
    toks.append(b"<eos>")
    return Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1],
                 vocab_size=len(toks) + 5)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_byte_level_vocab_walks(name):
    grammar, ambiguous = GRAMMARS[name]
    c = Constraint(grammar, byte_level_vocab(name), ambiguous=ambiguous)
    for w in range(3):
        run_walk(c, RandomChooser(f"{name}-{w}"), 12, f"{name} byte walk {w}")


@pytest.mark.parametrize("name", ["ws_values", "lexamb_dangling", "reluctant", "unicode"])
def test_artifact_cache_round_trip(name, tmp_path, monkeypatch):
    """A Constraint built from a cached artifact gives the same exact masks."""
    monkeypatch.setenv("STACKMASK_CACHE_DIR", str(tmp_path))
    grammar, ambiguous = GRAMMARS[name]
    vocab = byte_level_vocab(name)
    c1 = Constraint(grammar, vocab, ambiguous=ambiguous)
    c2 = Constraint(grammar, vocab, ambiguous=ambiguous)
    assert not c1.loaded_from_cache and c2.loaded_from_cache
    for w in range(2):
        rng = random.Random(f"cache-{name}-{w}")
        s1, s2 = c1.start(), c2.start()
        for k in range(12):
            m1, m2 = c1.get_mask(s1), c2.get_mask(s2)
            assert np.array_equal(m1, c1.reference_mask(s1)) and np.array_equal(m2, m1), f"{name} step {k}"
            ids = [int(i) for i in mask_to_ids(m2, vocab.size) if int(i) not in vocab.eos_token_ids]
            if not ids:
                break
            tok = rng.choice(ids)
            s1, s2 = c1.commit(s1, tok), c2.commit(s2, tok)


@pytest.mark.parametrize("name", ["lexamb_dangling", "ambig_expr", "reluctant", "keywords"])
def test_lazy_compile_from_threads(name):
    """Constraints are shared across threads; with compile="lazy" the first
    masks compile parts of the automaton. Masks computed concurrently from
    several threads (in scrambled orders) still equal the oracle's."""
    import threading

    grammar, ambiguous = GRAMMARS[name]
    vocab = byte_level_vocab(name)
    lazy = Constraint(grammar, vocab, ambiguous=ambiguous, compile="lazy", progress=False)
    # states and oracle masks first (neither touches the compiled automaton)
    rng = random.Random(f"threads-{name}")
    states, refs = [], []
    for _ in range(6):
        s = lazy.start()
        for _ in range(10):
            ref = lazy.reference_mask(s)
            states.append(s)
            refs.append(ref)
            ids = [int(i) for i in mask_to_ids(ref, vocab.size) if int(i) not in vocab.eos_token_ids]
            if not ids:
                break
            s = lazy.commit(s, rng.choice(ids))
    errors: list = []

    def worker(seed):
        order = list(range(len(states)))
        random.Random(seed).shuffle(order)
        try:
            for i in order:
                m = lazy.get_mask(states[i])
                if not np.array_equal(m, refs[i]):
                    errors.append(f"state {i}: lazy mask from a thread != oracle")
        except Exception as e:      # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
