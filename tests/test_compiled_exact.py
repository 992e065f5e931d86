"""Compiled masks are exact: ``Constraint.get_mask`` (the compiled automaton
path) equals ``Constraint.reference_mask`` (the brute-force oracle that
defines the mask), bit for bit, with the real Qwen2.5 vocabulary.

* teacher-forced traces of generated programs of every benchmark grammar,
  compared at a sample of steps (always the start state and the final state,
  where EOS must be allowed);
* random walks that sample their next token from the compiled mask (every
  sampled token must commit: a token the mask allows but ``commit`` rejects is
  itself a failure), compared at sampled steps, with a spot check that tokens
  outside the mask are rejected;
* small ambiguous grammars (``ambiguous=True``: GLR with several heads,
  lexical ties, dangling else, no-precedence expressions, left/right recursive
  lists), compared at every step of short traces.

The oracle costs 0.3-3 s per step with 151k tokens on the larger grammars, so
the default run samples steps; the ``slow`` tests (``pytest -m slow``) check
every step of more and longer traces.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from stackmask import Constraint, TokenRejected
from stackmask.generate import SentenceGenerator
from stackmask.grammar import Grammar
from stackmask.runtime import mask_to_ids

from conftest import BENCH_GRAMMARS, bench_constraint, read_bench_grammar

# Constraint objects are expensive to build: the benchmark grammars' are shared by the
# session (conftest.bench_constraint: c/sql/java/go compile lazily in the default run, up
# front in the slow tests); the ambiguous test grammars' by this module.
_CONSTRAINTS: dict = {}


def ambiguous_constraint(name: str, vocab) -> Constraint:
    key = ("ambiguous", name)
    c = _CONSTRAINTS.get(key)
    if c is None:
        c = _CONSTRAINTS[key] = Constraint(AMBIGUOUS_GRAMMARS[name], vocab, ambiguous=True)
    return c


# ---------------------------------------------------------------------------
# comparison helpers

def _fmt_ids(c: Constraint, ids, limit: int = 10) -> str:
    ids = [int(i) for i in ids]
    shown = ", ".join(f"{i}:{c.vocab.token_bytes(i)!r}" for i in ids[:limit])
    more = f" ... (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return f"{len(ids)} ids [{shown}{more}]"


def _text_tail(text: bytes, limit: int = 300) -> str:
    if len(text) <= limit:
        return repr(text)
    return f"...{text[-limit:]!r} ({len(text)} bytes)"


def assert_mask_exact(c: Constraint, state, text: bytes, where: str, use_out: bool = False,
                      ref: np.ndarray | None = None) -> np.ndarray:
    """get_mask(state) == reference_mask(state), with a readable diff.
    Returns the (reference) mask. With ``use_out`` the compiled mask is written
    into a garbage-filled buffer, which must be overwritten completely. ``ref``: the
    oracle's mask of this state when already known (the same grammar's oracle on the same
    text, e.g. from another constraint of it: the oracle depends on nothing else)."""
    words = (c.vocab.size + 31) // 32
    if use_out:
        buf = np.full(words, -1, dtype=np.int32)
        ret = c.get_mask(state, out=buf)
        fast = buf
        assert ret is None or np.array_equal(np.asarray(ret), buf), f"{where}: get_mask(out=) returned something else than out"
    else:
        fast = c.get_mask(state)
    assert isinstance(fast, np.ndarray) and fast.dtype == np.int32 and fast.shape == (words,), (
        f"{where}: get_mask returned {type(fast).__name__} "
        f"{getattr(fast, 'dtype', None)} {getattr(fast, 'shape', None)}, expected int32[{words}]")
    fast = fast.copy()
    if ref is None:
        ref = c.reference_mask(state)
    if not np.array_equal(fast, ref):
        f_ids = mask_to_ids(fast, words * 32)
        r_ids = mask_to_ids(ref, words * 32)
        extra = np.setdiff1d(f_ids, r_ids)
        missing = np.setdiff1d(r_ids, f_ids)
        pytest.fail(
            f"{where}: compiled mask != reference oracle\n"
            f"  text so far: {_text_tail(text)}\n"
            f"  heads: {len(state.heads)}{' (finished)' if state.finished else ''}\n"
            f"  allowed by compiled only: {_fmt_ids(c, extra)}\n"
            f"  allowed by oracle only:   {_fmt_ids(c, missing)}\n"
            f"  (compiled allows {len(f_ids)}, oracle allows {len(r_ids)})")
    return ref


def _bit(mask: np.ndarray, i: int) -> bool:
    return bool((int(mask[i >> 5]) >> (i & 31)) & 1)


def assert_eos(c: Constraint, mask: np.ndarray, expected: bool, where: str, text: bytes) -> None:
    for e in sorted(c.vocab.eos_token_ids):
        assert _bit(mask, e) == expected, (
            f"{where}: EOS {e} {'missing from' if expected else 'wrongly in'} the mask; "
            f"text {_text_tail(text)}")


def spot_check_commit(c: Constraint, state, mask: np.ndarray, rng: random.Random, where: str,
                      text: bytes, k: int = 24) -> None:
    """A few tokens inside the mask commit, a few outside are rejected (cheap:
    commit does not depend on the vocabulary size)."""
    size = c.vocab.size
    allowed = mask_to_ids(mask, size)
    allowed_set = set(allowed.tolist())
    for tok in rng.sample(list(allowed), min(k, len(allowed))):
        try:
            c.commit(state, int(tok))
        except TokenRejected as e:
            pytest.fail(f"{where}: token {int(tok)} {c.vocab.token_bytes(int(tok))!r} is in the mask "
                        f"but commit rejects it ({e}); text {_text_tail(text)}")
    tried = 0
    while tried < k and len(allowed_set) < size:
        tok = rng.randrange(size)
        if tok in allowed_set:
            continue
        tried += 1
        with pytest.raises(TokenRejected):
            c.commit(state, tok)
            pytest.fail(f"{where}: token {tok} {c.vocab.token_bytes(tok)!r} is not in the mask "
                        f"but commits; text {_text_tail(text)}")


# ---------------------------------------------------------------------------
# (a) teacher-forced traces of generated programs

def programs(grammar_text: str, n: int, seed: int, max_terminals: int, max_depth: int = 10) -> list[str]:
    gen = SentenceGenerator(Grammar.from_lark(grammar_text), max_depth=max_depth, seed=seed,
                            max_terminals=max_terminals)
    rng = random.Random(seed)
    return [gen.sentence(rng)[0] for _ in range(n)]


def check_trace(c: Constraint, ids: list[int], steps, label: str, rng: random.Random | None = None) -> None:
    """Commit ``ids`` from the start; compare masks at ``steps`` (indices into
    0..len(ids): step k is the state after the first k tokens; len(ids) is the
    final state, where EOS must be allowed). ``steps='all'`` checks every one."""
    n = len(ids)
    check = set(range(n + 1)) if steps == "all" else set(steps) | {0, n}
    s = c.start()
    text = b""
    for k in range(n + 1):
        if k in check:
            where = f"{label} step {k}/{n}"
            m = assert_mask_exact(c, s, text, where, use_out=(k == 0))
            if k < n:
                tok = ids[k]
                assert _bit(m, tok), (f"{where}: the next token {tok} {c.vocab.token_bytes(tok)!r} "
                                      f"of the trace is not in the mask; text {_text_tail(text)}")
            else:
                assert c.is_accepting(s), f"{where}: complete program not accepted: {_text_tail(text)}"
                assert_eos(c, m, True, where, text)
            if rng is not None and k in (0, n):
                spot_check_commit(c, s, m, rng, where, text)
        if k < n:
            s = c.commit(s, ids[k])
            text += c.vocab.token_bytes(ids[k])
    # the finished state after EOS: only the EOS ids
    eos = min(c.vocab.eos_token_ids)
    done = c.commit(s, eos)
    m = assert_mask_exact(c, done, text, f"{label} after EOS")
    assert mask_to_ids(m, c.vocab.size).tolist() == sorted(c.vocab.eos_token_ids)


# per grammar: (programs, max_terminals, sampled middle steps); json-outlines/calc are cheap
_TF_DEFAULT = {
    "json-outlines": (3, 40, "all"),
    "calc": (3, 40, "all"),
    "c": (2, 30, 1),
    "sql": (2, 30, 1),
    "java": (2, 30, 1),
    "go": (2, 30, 1),
}


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_teacher_forced_sampled_steps(name, qwen_vocab, qwen_encoding):
    c = bench_constraint(name, qwen_vocab)
    n_prog, max_terms, middle = _TF_DEFAULT[name]
    rng = random.Random(f"tf-{name}")
    for p, text in enumerate(programs(read_bench_grammar(name), n_prog, seed=101, max_terminals=max_terms)):
        ids = qwen_encoding.encode(text, disallowed_special=())
        if middle == "all":
            steps = "all"
        else:
            steps = rng.sample(range(1, len(ids)), min(middle, max(0, len(ids) - 1)))
        check_trace(c, ids, steps, f"{name} program {p} {text[:60]!r}", rng)


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_teacher_forced_every_step(name, qwen_vocab, qwen_encoding):
    c = bench_constraint(name, qwen_vocab, eager=True)
    rng = random.Random(f"tf-slow-{name}")
    for p, text in enumerate(programs(read_bench_grammar(name), 4, seed=202, max_terminals=80)):
        ids = qwen_encoding.encode(text, disallowed_special=())
        check_trace(c, ids, "all", f"{name} program {p} {text[:60]!r}", rng)


# ---------------------------------------------------------------------------
# (b) random walks sampled from the compiled mask

def pick_token(c: Constraint, ids: np.ndarray, rng: random.Random) -> int:
    """A random allowed text token; half the time a short one (<= 2 bytes) so
    walks reach structure (punctuation, keywords) and not only long words."""
    if rng.random() < 0.5:
        short = [int(i) for i in ids if len(c.vocab.tokens[int(i)]) <= 2]
        if short:
            return rng.choice(short)
    return int(ids[rng.randrange(len(ids))])


def random_walk(c: Constraint, rng: random.Random, n_steps: int, compare, label: str,
                p_stop: float = 0.15) -> int:
    """Walk from the start, sampling each token from the compiled mask.
    ``compare(k)`` says whether step k is compared with the oracle; the last
    state (before EOS or step n_steps) always is. Returns the number of
    tokens committed."""
    eos_ids = c.vocab.eos_token_ids
    s = c.start()
    text = b""
    for k in range(n_steps + 1):
        last = k == n_steps
        m = c.get_mask(s).copy()
        ids = mask_to_ids(m, c.vocab.size)
        text_ids = ids[~np.isin(ids, list(eos_ids))]
        eos_ok = len(ids) > len(text_ids)
        stop = last or not len(text_ids) or (eos_ok and rng.random() < p_stop)
        if compare(k) or stop:
            where = f"{label} step {k}"
            ref = assert_mask_exact(c, s, text, where)
            assert_eos(c, ref, c.is_accepting(s), where, text)
            spot_check_commit(c, s, ref, rng, where, text, k=8)
        if stop:
            if eos_ok:
                done = c.commit(s, rng.choice(sorted(eos_ids)))
                assert mask_to_ids(c.get_mask(done), c.vocab.size).tolist() == sorted(eos_ids)
            return k
        tok = pick_token(c, text_ids, rng)
        try:
            s = c.commit(s, tok)
        except TokenRejected as e:
            pytest.fail(f"{label} step {k}: token {tok} {c.vocab.token_bytes(tok)!r} sampled from the "
                        f"compiled mask is rejected by commit ({e}); text {_text_tail(text)}")
        text += c.vocab.token_bytes(tok)
    return n_steps


# per grammar: (walks, steps per walk, compare every k-th step)
_WALK_DEFAULT = {
    "json-outlines": (3, 30, 5),
    "calc": (4, 30, 3),
    "c": (1, 8, 4),
    "sql": (1, 8, 4),
    "java": (1, 8, 4),
    "go": (1, 8, 4),
}


@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_random_walks_sampled_steps(name, qwen_vocab):
    c = bench_constraint(name, qwen_vocab)
    walks, n_steps, every = _WALK_DEFAULT[name]
    for w in range(walks):
        rng = random.Random(f"walk-{name}-{w}")
        random_walk(c, rng, n_steps, lambda k: k % every == 0, f"{name} walk {w}")


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCH_GRAMMARS)
def test_random_walks_every_step(name, qwen_vocab):
    c = bench_constraint(name, qwen_vocab, eager=True)
    for w in range(4):
        rng = random.Random(f"walk-slow-{name}-{w}")
        random_walk(c, rng, 40, lambda k: True, f"{name} slow walk {w}", p_stop=0.05)


# ---------------------------------------------------------------------------
# (c) ambiguous grammars (GLR, several heads, lexical ties), every step

AMBIGUOUS_GRAMMARS = {
    # the classic: every split of the string is a parse
    "ss": 'start: s\ns: s s | "a" | "b"\n',
    # expressions without precedence or associativity, prefix and infix minus
    "expr": r'''start: e
e: e "+" e | e "-" e | e "*" e | e "/" e | "-" e | "(" e ")" | NUM | NAME
NUM: /[0-9]+(\.[0-9]+)?/
NAME: /[a-z_]+/
%ignore " "
''',
    # lexical ambiguity: NAME and HEX tie on "cafe", "be", "f" (equal
    # priority, both regexes): the GSS forks on both and the parser prunes
    "lexamb": r'''start: item+
item: NAME "=" HEX ";" | "#" HEX ";" | NAME ":" NAME ";"
NAME: /[a-z]+/
HEX: /[0-9a-f]+/
%ignore /[ \n]+/
''',
    # keywords vs identifiers under %ignore whitespace; dangling else
    "kw": r'''start: stmt*
stmt: "if" expr "then" stmt "else" stmt
    | "if" expr "then" stmt
    | "while" expr "do" stmt
    | NAME "=" expr ";"
    | "{" stmt* "}"
expr: NAME | NUMBER | expr "==" expr | expr "+" expr
NAME: /[a-zA-Z_][a-zA-Z0-9_]*/
NUMBER: /[0-9]+/
%ignore /\s+/
''',
    # a list both right- and left-recursive (every bracketing is a parse)
    "rlist": r'''start: rl
rl: item "," rl | item | rl "," item
item: NUM | WORD | "[" rl "]" | "[" "]"
NUM: /[0-9]+/
WORD: /[a-z]+/
%ignore " "
''',
}


def committing_prefix(c: Constraint, ids: list) -> tuple:
    """``(the longest prefix of ids that commits from the start, the state after it,
    the most heads a state along it had)``."""
    s = c.start()
    ok = []
    heads = len(s.heads)
    for tok in ids:
        try:
            s = c.commit(s, tok)
        except TokenRejected:
            break
        ok.append(tok)
        heads = max(heads, len(s.heads))
    return ok, s, heads


def check_steps(c: Constraint, ids: list, label: str, refs: dict | None = None) -> None:
    """The mask at every step of ``ids`` (which commit) equals the oracle's. ``refs``: the
    oracle's masks by token prefix, read and filled (shared by constraints of one
    grammar, whose oracles are the same)."""
    s = c.start()
    buf = b""
    for k, tok in enumerate(ids + [None]):
        key = tuple(ids[:k])
        ref = assert_mask_exact(c, s, buf, f"{label} step {k}",
                                ref=None if refs is None else refs.get(key))
        if refs is not None:
            refs[key] = ref
        if tok is not None:
            s = c.commit(s, tok)
            buf += c.vocab.token_bytes(tok)


def ambiguous_traces(name: str, n_generated: int, max_terminals: int, seed: int) -> list[str]:
    return programs(AMBIGUOUS_GRAMMARS[name], n_generated, seed=seed, max_terminals=max_terminals,
                    max_depth=6)


# Fixed traces that reach multi-head GSS states (checked by the test).
_AMBIGUOUS_FIXED = {
    "ss": ["abba", "ab ba"],        # the second is rejected at the space: only its prefix is used
    "expr": ["1-2*-x+(y)"],
    "lexamb": ["be=cafe;#f;"],
    "kw": ["if a then if b then{}else{}"],     # dangling else: 3 heads
    "rlist": ["[1,[a],[]],b"],
}


@pytest.mark.parametrize("name", sorted(AMBIGUOUS_GRAMMARS))
def test_ambiguous_grammars_every_step(name, qwen_vocab, qwen_encoding):
    c = ambiguous_constraint(name, qwen_vocab)
    texts = _AMBIGUOUS_FIXED[name] + ambiguous_traces(name, 1, max_terminals=6, seed=7)
    max_heads = 1
    for t, text in enumerate(texts):
        ids = qwen_encoding.encode(text, disallowed_special=())
        # keep the longest prefix of tokens that commits (fixed texts may end invalid)
        ok, s, heads = committing_prefix(c, ids)
        max_heads = max(max_heads, heads)
        if len(ok) == len(ids) and c.is_accepting(s):
            check_trace(c, ok, "all", f"{name} trace {t} {text!r}")
        else:
            check_steps(c, ok, f"{name} trace {t} {text!r}")
    rng = random.Random(f"amb-walk-{name}")
    random_walk(c, rng, 5, lambda k: True, f"{name} walk")
    if name != "ss":
        assert max_heads > 1, f"{name}: the fixed traces never forked the GSS (test lost its point)"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AMBIGUOUS_GRAMMARS))
def test_ambiguous_grammars_every_step_slow(name, qwen_vocab, qwen_encoding):
    c = ambiguous_constraint(name, qwen_vocab)
    for t, text in enumerate(ambiguous_traces(name, 5, max_terminals=20, seed=70)):
        ids = qwen_encoding.encode(text, disallowed_special=())
        check_trace(c, ids, "all", f"{name} slow trace {t} {text!r}")
    for w in range(3):
        rng = random.Random(f"amb-walk-slow-{name}-{w}")
        random_walk(c, rng, 25, lambda k: True, f"{name} slow walk {w}", p_stop=0.05)
