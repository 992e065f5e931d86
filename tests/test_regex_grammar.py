"""Grammar.from_regex: the language is re.fullmatch's, checked exhaustively on
short strings; prefixes, masks with the real Qwen2.5 vocabulary, errors."""

from __future__ import annotations

import itertools
import re

import pytest

from stackmask import Constraint, Grammar, GrammarError, TokenRejected, Vocab
from stackmask.grammars.regex import regex_to_grammar

from conftest import accepts


def small_vocab():
    toks = [bytes([i]) for i in range(256)] + [b"<eos>"]
    return Vocab(toks, eos_token_ids=[256], special_token_ids=[256])


VOCAB = small_vocab()




def viable(c: Constraint, data: bytes) -> bool:
    try:
        c.commit_bytes(c.start(), data)
        return True
    except TokenRejected:
        return False


PATTERNS = [
    # (pattern, flags, alphabet)
    (r"a*", 0, "ab"),
    (r"(a|b)*?", 0, "abc"),
    (r'".*?"', 0, 'a"'),
    (r"^ab?$", 0, "ab"),
    (r"a?b?", 0, "ab"),
    (r"(?:a*b*)*", 0, "abc"),
    (r"(a|)(b|)a", 0, "ab"),
    (r"A+B", re.IGNORECASE, "aAbB"),
    (r"(?i:x)y", 0, "xXyY"),
    (r"\Aa\Z|^b$", 0, "ab"),
    (r"(a?){2,3}b?", 0, "ab"),
    (r"[ab]{0,2}c?", 0, "abc"),
    (r"a{0}b", 0, "ab"),
    (r"(?:ab|a)(?:bc|c)?", 0, "abc"),
    (r"a b # comment", re.VERBOSE, "ab "),
    (r"(?s:.)\.", 0, "a.\n"),
    (r".\.?", 0, "a.\n"),
    (r"\d+(\.\d+)?", 0, "1.a"),
    (r"[^b]+?b", 0, "abc"),
    (r"(a+?|b)+c", 0, "abc"),
    (r"é?[à-ä]", 0, "éàäa"),
]


@pytest.mark.parametrize("pattern,flags,alphabet", PATTERNS)
def test_language_is_fullmatch(pattern, flags, alphabet):
    """Every string over the alphabet up to length 5 (6 for small alphabets)."""
    c = Constraint(Grammar.from_regex(pattern, flags=flags), VOCAB)
    rx = re.compile(pattern, flags)
    maxlen = 6 if len(alphabet) <= 2 else 5 if len(alphabet) <= 3 else 4
    strings = ["".join(t) for n in range(maxlen + 1) for t in itertools.product(alphabet, repeat=n)]
    matched = {s for s in strings if rx.fullmatch(s)}
    for s in strings:
        assert accepts(c, s.encode()) == (s in matched), (pattern, s)
    # prefixes: viable iff some string of length <= maxlen extending it matches
    # (checked where the witness lies within the enumerated strings)
    prefixes = {m[:k] for m in matched for k in range(len(m) + 1)}
    for s in strings:
        if s in prefixes:
            assert viable(c, s.encode()), (pattern, s)
        elif len(s) <= 2 and not any(rx.fullmatch(s + "".join(t))
                                     for n in range(4) for t in itertools.product(alphabet, repeat=n)):
            assert not viable(c, s.encode()), (pattern, s)


def test_empty_match_allows_eos_at_start():
    c = Constraint(Grammar.from_regex(r"[0-9]*"), VOCAB)
    s = c.start()
    assert c.is_accepting(s)
    allowed = c.allowed_tokens(s).tolist()
    assert allowed == [ord(d) for d in "0123456789"] + [256]
    g = Grammar.from_regex(r"[0-9]*")
    assert {r.expansion for r in g.rules} == {("REGEX",), ()}
    assert not re.fullmatch(g.terminals[0].regex, "")
    # non-nullable: no empty alternative, the pattern text is used as given
    g2 = Grammar.from_regex(r"[0-9]+")
    assert [r.expansion for r in g2.rules] == [("REGEX",)]
    assert g2.terminals[0].regex == "[0-9]+"


def test_reluctant_full_match_vs_shortest_match():
    pat = r'".*?"'
    full = Constraint(Grammar.from_regex(pat), VOCAB)
    short = Constraint(Grammar.from_regex(pat, shortest_match=True), VOCAB)
    assert accepts(full, b'"a"b"') and accepts(short, b'"a"')
    assert not accepts(short, b'"a"b"')
    assert not viable(short, b'"a"b')
    with pytest.raises(GrammarError, match="empty string"):
        Grammar.from_regex(r"a*?", shortest_match=True)
    # shortest-match with flags keeps the reluctant quantifier through the rewrite
    s2 = Constraint(Grammar.from_regex(r"X.*?X", flags=re.IGNORECASE, shortest_match=True), VOCAB)
    assert accepts(s2, b"xaX") and not accepts(s2, b"xaxbx")


def test_terminal_name_option_and_delegation():
    g = Grammar.from_regex(r"ab", name="WORD")
    assert [t.name for t in g.terminals] == ["WORD"]
    assert regex_to_grammar(r"ab") == Grammar.from_regex(r"ab")


@pytest.mark.parametrize("pattern,match", [
    (r"a(?=b)", "lookahead"),           # reads past the end: not a terminal's language
    (r"a(?!b)", "lookahead"),
    (r"(a)\1", "backreferences"),
    (r"a\bb", "anchors"),
    (r"a^b", "anchors"),
    (r"(?>a)", "atomic"),
    (r"a++", "possessive"),
    (r"a(", "invalid regex"),
    (r"(?:)", "only the empty string"),
    (r"a{0}", "only the empty string"),
    (r"[^\s\S]", "no string"),
    (r"a*(?=b)", "lookahead"),          # nullable: rewritten, so the rewrite reports it
])
def test_errors(pattern, match):
    with pytest.raises(GrammarError, match=match):
        Constraint(Grammar.from_regex(pattern), VOCAB)


def test_a_lookahead_within_the_text_is_an_intersection():
    rx = r"(?=[a-c]{0,3}x)[a-c]+x"
    c = Constraint(Grammar.from_regex(rx), VOCAB)
    for text, ok in (("ax", True), ("abcx", True), ("x", False), ("abcax", False), ("ab", False)):
        assert accepts(c, text.encode()) == ok == (re.fullmatch(rx, text) is not None), text


def test_not_a_str():
    with pytest.raises(GrammarError):
        Grammar.from_regex(b"abc")


def test_utf8_prefixes():
    c = Constraint(Grammar.from_regex(r"[é€]+"), VOCAB)
    assert viable(c, "é".encode()[:1])
    assert viable(c, "€".encode()[:2])
    assert accepts(c, "é€é".encode())
    assert not accepts(c, "é".encode()[:1])
    assert not viable(c, b"\xc3\x28")                      # invalid UTF-8
    assert not viable(c, "€".encode()[:2] + b"a")


def _expected_mask_ids(vocab: Vocab, sentences: set[bytes], prefix: bytes) -> set[int]:
    """Tokens w with prefix·w a prefix of some sentence; EOS iff prefix is one."""
    pre = {s[:k] for s in sentences for k in range(len(s) + 1)}
    out = set()
    for i in vocab.text_token_ids():
        w = vocab.tokens[int(i)]
        if prefix + w in pre:
            out.add(int(i))
    if prefix in sentences:
        out |= set(vocab.eos_token_ids)
    return out


def test_masks_with_qwen_vocab_finite_language(qwen_vocab):
    pattern = r"(yes|no|maybe)(, please)?!?"
    sentences = set()
    for a in ("yes", "no", "maybe"):
        for b in ("", ", please"):
            for e in ("", "!"):
                sentences.add((a + b + e).encode())
    assert all(re.fullmatch(pattern, s.decode()) for s in sentences)
    c = Constraint(Grammar.from_regex(pattern), qwen_vocab)
    for prefix in (b"", b"y", b"no", b"maybe,", b"yes, please", b"no!"):
        s = c.commit_bytes(c.start(), prefix)
        got = set(c.allowed_tokens(s).tolist())
        assert got == _expected_mask_ids(qwen_vocab, sentences, prefix), prefix


def test_masks_with_qwen_vocab_nullable(qwen_vocab):
    c = Constraint(Grammar.from_regex(r"(ab)*"), qwen_vocab)
    ids = set(c.allowed_tokens(c.start()).tolist())
    assert {151643, 151645} <= ids                            # "" is a sentence
    texts = {qwen_vocab.tokens[i] for i in ids - {151643, 151645}}
    assert texts and all(re.fullmatch(r"(ab)*a?", t.decode()) for t in texts)
    assert b"ab" in texts and b"a" in texts
