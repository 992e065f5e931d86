"""Runtime semantics on small grammars and small synthetic vocabularies:
maximal munch with backtracking, keywords vs identifiers, lexical ambiguity,
priorities, EOS, errors, and the trie-sharing oracle against the literal
definition (commit every token separately, check viability)."""

from __future__ import annotations

import random
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stackmask
from stackmask import Constraint, GrammarError, TokenRejected, Vocab
from stackmask.runtime import ids_to_mask, mask_to_ids
from stackmask.runtime.oracle import ReferenceOracle

from conftest import accepts


def byte_vocab(extra=(), eos=True):
    toks = [bytes([i]) for i in range(256)] + [e.encode() if isinstance(e, str) else e for e in extra]
    n = len(toks)
    if eos:
        toks.append(b"<eos>")
        return Vocab(toks, eos_token_ids=[n], special_token_ids=[n])
    return Vocab(toks)




def viable_prefix(c: Constraint, text: str) -> bool:
    try:
        c.commit_bytes(c.start(), text.encode())
        return True
    except TokenRejected:
        return False


DOTS = """
start: item+
item: DOT | ELLIPSIS
DOT: "."
ELLIPSIS: "..."
"""


def test_maximal_munch_backtracks_dot_and_ellipsis():
    c = Constraint(DOTS, byte_vocab())
    for text in [".", "..", "...", "....", ".....", "......"]:
        assert accepts(c, text), text


def test_maximal_munch_forbids_the_shorter_split():
    # "..." always lexes as ELLIPSIS, so DOT DOT DOT can never be produced
    # (ELLIPSIS must be used by a rule: unused terminals are not lexed at all)
    g = 'start: DOT DOT DOT | "x" ELLIPSIS\nDOT: "."\nELLIPSIS: "..."\n'
    c = Constraint(g, byte_vocab())
    assert viable_prefix(c, ".")
    # after ".." the only continuation "." would complete the longer match
    assert not viable_prefix(c, "..")
    assert not accepts(c, "...")
    g2 = 'start: DOT DOT | ELLIPSIS\nDOT: "."\nELLIPSIS: "..."\n'
    c2 = Constraint(g2, byte_vocab())
    assert accepts(c2, "..") and accepts(c2, "...")
    assert not accepts(c2, ".")


def test_backtracking_across_token_boundaries():
    # the same text split into tokens differently gives the same verdicts
    c = Constraint(DOTS, byte_vocab(extra=["..", "...", "...."]))
    v = c.vocab
    ids = {v.tokens[i]: i for i in range(len(v.tokens))}
    for split in ([b".."], [b".", b"."], [b"...."], [b"..", b".."], [b"...", b"."]):
        s = c.start()
        for piece in split:
            s = c.commit(s, ids[piece])
        assert c.is_accepting(s)


KEYWORDS = r"""
start: stmt+
stmt: "if" NAME | NAME "=" NAME
NAME: /[a-z]+/
%ignore " "
"""


def test_keyword_beats_identifier_at_equal_length_only():
    c = Constraint(KEYWORDS, byte_vocab())
    assert accepts(c, "if x")
    assert accepts(c, "iffy = x")        # longer identifier wins over the keyword
    assert not accepts(c, "x = if0")     # '0' is not lexable at all
    assert not accepts(c, "if = x")     # "if" is the keyword, not a NAME
    assert accepts(c, "ifx = y")
    assert not accepts(c, "x = if")


def test_lexical_ambiguity_forks_the_parser():
    g = r"""
start: a | b
a: A "!"
b: B "?"
A: /[0-9]+/
B: /[0-9][0-9]/
"""
    c = Constraint(g, byte_vocab())
    assert accepts(c, "12!")
    assert accepts(c, "12?")            # tie between A and B: both tried
    assert accepts(c, "123!")
    assert not accepts(c, "123?")       # maximal munch: "123" is only an A
    assert not accepts(c, "1?")


def test_priority_resolves_a_tie():
    g = r"""
start: a | b
a: A "!"
b: B "?"
A: /[0-9]+/
B.2: /[0-9][0-9]/
"""
    c = Constraint(g, byte_vocab())
    assert accepts(c, "12?")
    assert not accepts(c, "12!")        # B has priority at length 2
    assert accepts(c, "123!")


def test_ignored_terminals_and_empty_language_member():
    g = 'start: "a"*\n%ignore " "\n'
    c = Constraint(g, byte_vocab())
    assert accepts(c, "")
    assert accepts(c, "   ")
    assert accepts(c, " a a  a ")
    assert not accepts(c, " b")


def test_eos_bit_and_finished_state():
    c = Constraint(DOTS, byte_vocab())
    eos = next(iter(c.vocab.eos_token_ids))
    s = c.start()
    assert eos not in set(c.allowed_tokens(s).tolist())
    with pytest.raises(TokenRejected):
        c.commit(s, eos)
    s = c.commit(s, ord("."))
    assert eos in set(c.allowed_tokens(s).tolist())
    done = c.commit(s, eos)
    assert c.is_accepting(done)
    assert c.allowed_tokens(done).tolist() == [eos]
    with pytest.raises(TokenRejected):
        c.commit(done, ord("."))


def test_rejected_token_keeps_state_usable():
    c = Constraint(KEYWORDS, byte_vocab())
    s = c.commit_bytes(c.start(), b"if x")
    with pytest.raises(TokenRejected) as ei:
        c.commit(s, ord("="))
    assert ei.value.token_id == ord("=") and ei.value.token_bytes == b"=" and ei.value.offset == 0
    s2 = c.commit(s, ord(" "))
    s3 = c.commit_bytes(s2, b"y = z")
    assert c.is_accepting(s3)
    assert c.is_accepting(s)             # s itself unchanged: "if x" is still a sentence


def test_unknown_token_id_is_value_error_and_a_non_int_type_error():
    c = Constraint(DOTS, byte_vocab())
    with pytest.raises(ValueError):
        c.commit(c.start(), 10**6)
    with pytest.raises(ValueError):
        c.commit(c.start(), -1)
    with pytest.raises(TypeError):
        c.commit(c.start(), "a")


def test_special_and_byteless_tokens_never_allowed():
    toks = [b"a", b"", None, b"<s>", b"a"]
    v = Vocab(toks, eos_token_ids=[3], special_token_ids=[3], vocab_size=40)
    c = Constraint('start: "a"+\n', v)
    ids = c.allowed_tokens(c.start()).tolist()
    assert ids == [0, 4]                  # duplicates share the verdict
    s = c.commit(c.start(), 4)
    assert c.allowed_tokens(s).tolist() == [0, 3, 4]
    for bad in (1, 2, 39):
        with pytest.raises(TokenRejected):
            c.commit(s, bad)


def test_mask_layout():
    ids = [0, 1, 31, 32, 33, 95]
    m = ids_to_mask(ids, 100)
    assert m.dtype == np.int32 and m.shape == (4,)
    assert mask_to_ids(m, 100).tolist() == ids
    assert (int(m[0]) & 1) and ((int(m[0]) >> 31) & 1) and (int(m[1]) & 1)


def test_conflicts_need_ambiguous_true():
    g = 'start: e\ne: e "+" e | "x"\n'
    with pytest.raises(GrammarError) as ei:
        Constraint(g, byte_vocab(), ambiguous=False)
    assert "ambiguous=True" in str(ei.value)
    c = Constraint(g, byte_vocab(), ambiguous=True)
    assert accepts(c, "x+x+x") and not accepts(c, "x+") and not accepts(c, "+x")


# ---------------------------------------------------------------------------
# The oracle's trie sharing against the literal definition

GRAMMARS = {
    "dots": DOTS,
    "keywords": KEYWORDS,
    "ambig_expr": 'start: e\ne: e "+" e | e "*" e | "(" e ")" | NUM\nNUM: /[0-9]+/\n%ignore " "\n',
    "ss": 'start: s\ns: s s | "a" | "ab"\n',
    "strings": r'''start: item ("," item)*
item: STR | NAME | "null"
STR: /"[^"]*"/
NAME: /[a-z]+/
%ignore /[ \t]+/
''',
}
AMBIG = {"ambig_expr", "ss"}


def literal_allowed(c: Constraint, s) -> list[int]:
    out = []
    for i in c.vocab.text_token_ids():
        try:
            c.commit(s, int(i))
            out.append(int(i))
        except TokenRejected:
            pass
    if c.is_accepting(s):
        out.extend(sorted(c.vocab.eos_token_ids))
    return sorted(out)


def small_vocab(rng: random.Random, alphabet: bytes, n: int) -> Vocab:
    toks = [bytes([b]) for b in alphabet]
    while len(toks) < n:
        k = rng.randint(2, 5)
        toks.append(bytes(rng.choice(alphabet) for _ in range(k)))
    toks.append(b"</s>")
    return Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1], vocab_size=len(toks) + 7)


@pytest.mark.parametrize("min_columns", [1, ReferenceOracle.MIN_COLUMNS])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_oracle_equals_literal_definition_on_random_walks(name, min_columns, monkeypatch):
    # min_columns 1: the oracle's byte columns even on this small vocabulary
    monkeypatch.setattr(ReferenceOracle, "MIN_COLUMNS", min_columns)
    rng = random.Random(hash(name) & 0xFFFF)
    alphabet = b'.a+*()0123 "b,xnul\t'
    v = small_vocab(rng, alphabet, 120)
    c = Constraint(GRAMMARS[name], v, ambiguous=name in AMBIG)
    for _walk in range(4):
        s = c.start()
        for _step in range(25):
            fast = c.allowed_tokens(s).tolist()
            literal = literal_allowed(c, s)
            assert fast == literal
            # the oracle's shared-prefix trie walk is the literal definition too
            assert mask_to_ids(c.reference_mask(s), v.size).tolist() == literal
            text_ids = [i for i in fast if i not in v.eos_token_ids]
            if not text_ids:
                break
            s = c.commit(s, rng.choice(text_ids))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_oracle_property_random_vocab_and_walks(data):
    name = data.draw(st.sampled_from(sorted(GRAMMARS)))
    alphabet = b'.a+*()0123 "b,xnul'
    toks = data.draw(st.lists(st.binary(min_size=1, max_size=4).map(
        lambda b: bytes(alphabet[x % len(alphabet)] for x in b)), min_size=5, max_size=40, unique=True))
    toks = [bytes([b]) for b in alphabet] + toks + [b"<e>"]
    v = Vocab(toks, eos_token_ids=[len(toks) - 1], special_token_ids=[len(toks) - 1])
    c = Constraint(GRAMMARS[name], v, ambiguous=name in AMBIG)
    min_columns = data.draw(st.sampled_from([1, 3, ReferenceOracle.MIN_COLUMNS]))
    s = c.start()
    for _ in range(data.draw(st.integers(1, 12))):
        fast = c.allowed_tokens(s).tolist()
        literal = literal_allowed(c, s)
        assert fast == literal
        with patch.object(ReferenceOracle, "MIN_COLUMNS", min_columns):
            assert mask_to_ids(ReferenceOracle(c).mask(s), v.size).tolist() == literal
        text_ids = [i for i in fast if i not in v.eos_token_ids]
        if not text_ids:
            break
        s = c.commit(s, data.draw(st.sampled_from(text_ids)))


def test_public_api_names():
    for name in ("Constraint", "Vocab", "Grammar", "GrammarError", "TokenRejected", "State"):
        assert hasattr(stackmask, name)
