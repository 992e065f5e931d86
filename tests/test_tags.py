"""Special tokens inside grammars, trigger mode and tag dispatch.

Every mask check compares the compiled ``get_mask`` with the brute-force
``reference_mask`` (and, on small vocabularies, with ``commit`` of every
id), at every step of teacher-forced traces and random walks that go
through free text, tags given as special tokens and spelled out as text,
JSON and Lark bodies, stop strings and trigger mode.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stackmask import Constraint, Grammar, GrammarError, TokenRejected, Vocab
from stackmask.grammar import FreeText, LexerMode, Rule, TerminalDef
from stackmask.grammars.tags import needs_glr, tag_dispatch, tool_calling
from stackmask.lexer.text import free_text_dfa
from stackmask.runtime import mask_to_ids


@pytest.fixture(autouse=True, scope="module")
def _no_artifact_cache():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STACKMASK_CACHE_DIR", "off")
        yield


# ---------------------------------------------------------------------------
# helpers

def check_state(c: Constraint, s, every_id: bool = True) -> np.ndarray:
    """get_mask == reference_mask; with ``every_id`` also commit agrees with the mask."""
    m = c.get_mask(s)
    r = c.reference_mask(s)
    if not np.array_equal(m, r):
        a, b = set(mask_to_ids(m, c.vocab.size)), set(mask_to_ids(r, c.vocab.size))
        raise AssertionError(f"compiled mask differs from the oracle: only compiled "
                             f"{sorted(a - b)[:10]}, only oracle {sorted(b - a)[:10]}")
    if every_id:
        allowed = set(mask_to_ids(m, c.vocab.size).tolist())
        for t in range(c.vocab.size):
            try:
                c.commit(s, t)
                ok = True
            except TokenRejected:
                ok = False
            assert ok == (t in allowed), (t, c.vocab.token_bytes(t), ok)
    return m


def run_trace(c: Constraint, ids, every_id: bool = True, check=None):
    s = c.start()
    for k, t in enumerate(ids):
        if check is None or k in check:
            m = check_state(c, s, every_id)
            assert t in set(mask_to_ids(m, c.vocab.size).tolist()), (k, t, c.vocab.token_bytes(t))
        s = c.commit(s, t)
    if check is None:
        check_state(c, s, every_id)
    return s


def greedy_tokenize(vocab: Vocab, text: str, specials: dict | None = None) -> list[int]:
    """Longest-match tokenization over the text tokens; ``specials`` maps a
    substring to a special token id inserted there."""
    specials = specials or {}
    by_bytes: dict = {}
    for i in vocab.text_token_ids():
        by_bytes.setdefault(vocab.tokens[int(i)], int(i))
    data = text.encode()
    out, i = [], 0
    while i < len(data):
        for k, tid in specials.items():
            kb = k.encode()
            if data.startswith(kb, i):
                out.append(tid)
                i += len(kb)
                break
        else:
            for j in range(len(data), i, -1):
                t = by_bytes.get(data[i:j])
                if t is not None:
                    out.append(t)
                    i = j
                    break
            else:
                raise ValueError(f"cannot tokenize {data[i:]!r}")
    return out


# ---------------------------------------------------------------------------
# free-text terminals

def _ref_free(b: bytes, exclude, until) -> bool:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not s:
        return False
    pats = [x.encode() for x in exclude]
    ends = sorted({i + len(p) for p in pats for i in range(len(b)) if b.startswith(p, i)})
    if until is None:
        return not ends
    if not ends or ends[0] != len(b):
        return False
    longest = max((p for p in pats if b.endswith(p)), key=len)
    return longest == until.encode()


_ALPH = "ab<>/cé"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=_ALPH, min_size=1, max_size=4), min_size=0, max_size=3),
       st.lists(st.binary(max_size=9) | st.text(alphabet=_ALPH, max_size=9).map(str.encode),
                min_size=1, max_size=30),
       st.integers(-1, 2))
def test_free_text_dfa_matches_definition(exclude, samples, u):
    exclude = tuple(dict.fromkeys(exclude))
    until = exclude[u] if 0 <= u < len(exclude) else None
    try:
        d = free_text_dfa(FreeText(exclude, until=until))
    except GrammarError:
        # an empty language: the tag itself is not in it (another string ends first)
        assert until is not None and not _ref_free(until.encode(), exclude, until)
        assert not any(_ref_free(b, exclude, until) for b in samples)
        return
    for b in samples:
        assert bool(d.fullmatch(b)) == _ref_free(b, exclude, until), (exclude, until, b)


def test_free_text_is_valid_utf8_and_stops_at_tags():
    d = free_text_dfa(FreeText(("<tc>",)))
    assert d.fullmatch("héllo <tc".encode())
    assert not d.fullmatch(b"ab<tc>")
    assert not d.fullmatch("é".encode()[:1])       # a prefix only
    assert d.run("é".encode()[:1]) >= 0
    assert not d.fullmatch(b"\xff")
    u = free_text_dfa(FreeText(("<tc>", "tc>"), until="<tc>"))
    assert u.fullmatch(b"x<tc>") and u.fullmatch(b"<tc>")
    assert not u.fullmatch(b"xtc>")                # the other string ends first
    assert u.run(b"<tc>x") < 0                     # nothing follows the tag


# ---------------------------------------------------------------------------
# special-token terminals on a small vocabulary

SMALL = [b"a", b"b", b"ab", b" ", b"<", b"x", b">", b"<x>", b"<x", b"x>", "é".encode(),
         "é".encode()[:1], "é".encode()[1:], b"<x>", b"<|end|>", b"<|other|>"]
# ids 13 "<x>" (special), 14 EOS, 15 another special
SMALL_SPECIAL = [13, 14, 15]


def small_vocab() -> Vocab:
    return Vocab(SMALL, eos_token_ids=[14], special_token_ids=SMALL_SPECIAL, vocab_size=20)


SPECIAL_GRAMMAR = r'''start: pair* WORD?
pair: WORD X
%declare X
WORD: /[abé]+/
%ignore " "
'''


@pytest.mark.parametrize("spec", ["<x>", 13])
@pytest.mark.parametrize("compile_mode", ["eager", "lazy"])
def test_special_token_terminal_masks_equal_oracle(spec, compile_mode):
    v = small_vocab()
    c = Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": spec}, compile=compile_mode)
    assert c.special_terminals.keys() == {13}
    s = c.start()
    m = check_state(c, s)
    assert 13 not in mask_to_ids(m, v.size) and 15 not in mask_to_ids(m, v.size)
    assert 13 in mask_to_ids(check_state(c, c.commit(s, 0)), v.size)
    # "a" "<x>"(special) "b" "é"(two halves) "<x>" EOS
    s = run_trace(c, [0, 13, 1, 11, 12, 13, 14])
    assert s.finished
    # the text spelling is not the terminal: "<x>" bytes are not allowed as text
    with pytest.raises(TokenRejected):
        c.commit(c.commit(c.start(), 0), 7)
    # a special token cannot cut a character in half (the lexeme must be complete)
    half = c.commit(c.commit(c.start(), 0), 11)
    with pytest.raises(TokenRejected):
        c.commit(half, 13)
    # unbound special tokens stay forbidden
    with pytest.raises(TokenRejected):
        c.commit(c.start(), 15)


def test_special_token_ends_the_lexeme_like_end_of_text():
    # maximal munch with inhibition: "." "..." ; the special token ends the lexeme
    v = Vocab([b".", b"..", b"S"], eos_token_ids=[], special_token_ids=[2])
    g = 'start: (DOT | ELL)+ S DOT\nDOT: "."\nELL: "..."\n%declare S\n'
    c = Constraint(g, v, special_tokens={"S": "S"})
    s = run_trace(c, [1, 2, 0])          # ".." then S: two dots, then S, then "."
    assert c.is_accepting(s)
    s = run_trace(c, [1, 0, 2, 0])       # "..." + S
    assert c.is_accepting(s)


def test_token_viable_only_because_a_special_token_can_follow():
    # after "..": either one pending lexeme (only ELL could finish it, and ELL
    # cannot start the text), or DOT DOT with an inhibited boundary: no byte
    # can follow (a third "." completes ELL), the text cannot end, but S can.
    v = Vocab([b".", b"..", b"S", b"x", b"...", b"</s>"], eos_token_ids=[5], special_token_ids=[2])
    g = 'start: DOT DOT S | "x" ELL\nDOT: "."\nELL: "..."\n%declare S\n'
    c = Constraint(g, v, special_tokens={"S": "S"})
    assert 1 in mask_to_ids(check_state(c, c.start()), v.size)
    s = run_trace(c, [1, 2, 5])
    assert s.finished
    s = run_trace(c, [0, 0, 2])
    lazy = Constraint(g, v, special_tokens={"S": "S"}, compile="lazy")
    assert 1 in mask_to_ids(check_state(lazy, lazy.start()), v.size)


def test_special_binding_falls_back_to_the_literal_when_not_special():
    # "<x>" is an ordinary token in this vocabulary: the terminal is the text
    v = Vocab([b"a", b"<x>", b"<", b"x>", b"</s>"], eos_token_ids=[4])
    c = Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": "<x>"})
    assert not c.special_terminals
    run_trace(c, [0, 1, 0, 2, 3, 0, 4])


def test_grammar_object_binding_and_trigger_compose():
    g = Grammar.from_lark(SPECIAL_GRAMMAR, special_tokens={"X": "<x>"})
    assert g.terminal("X").is_special
    c = Constraint(g, small_vocab())
    run_trace(c, [0, 13, 14])


def test_special_token_errors():
    v = small_vocab()
    with pytest.raises(GrammarError, match="declared but has no pattern"):
        Grammar.from_lark(SPECIAL_GRAMMAR)
    with pytest.raises(GrammarError, match="not a %declare'd"):
        Grammar.from_lark(SPECIAL_GRAMMAR, special_tokens={"X": "<x>", "Y": "<y>"})
    with pytest.raises(GrammarError, match="not a special token"):
        Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": 0})
    with pytest.raises(GrammarError, match="EOS"):
        Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": 14})
    with pytest.raises(GrammarError, match="EOS"):
        Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": "<|end|>"})
    with pytest.raises(GrammarError, match="two terminals"):
        Constraint('start: X Y\n%declare X Y\n', v, special_tokens={"X": "<x>", "Y": 13})


@pytest.mark.parametrize("literal", ['"<x>"', '"<|end|>"', '"<|OTHER|>"i'])
def test_literal_colliding_with_a_special_token_is_reported(literal):
    v = small_vocab()
    with pytest.raises(GrammarError, match="special token") as e:
        Constraint(f'start: "a" {literal}\n', v)
    assert e.value.name
    # ... unless that special token is bound to a terminal (both spellings wanted)
    if literal == '"<x>"':
        c = Constraint(f'start: "a" ({literal} | X)\n%declare X\n', v, special_tokens={"X": "<x>"})
        run_trace(c, [0, 13, 14])
        run_trace(c, [0, 4, 9, 14])


def test_regex_terminals_matching_special_text_are_fine():
    c = Constraint('start: /[<>|a-z]+/\n', small_vocab())
    check_state(c, c.start())


def test_forced_bytes_stop_where_a_special_token_may_come():
    v = Vocab([b"a", b"b", b"S", b"</s>"], eos_token_ids=[3], special_token_ids=[2])
    c = Constraint('start: "ab" S? "ab"\n%declare S\n', v, special_tokens={"S": "S"})
    assert c.forced_bytes(c.start()) == b"ab"
    s = c.commit_bytes(c.start(), b"ab")
    assert c.forced_bytes(s) == b""          # S or "ab"
    assert c.forced_bytes(c.commit(s, 2)) == b"ab"


def test_special_token_artifact_roundtrip(tmp_path):
    v = small_vocab()
    c1 = Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": "<x>"}, cache_dir=tmp_path)
    c2 = Constraint(SPECIAL_GRAMMAR, v, special_tokens={"X": "<x>"}, cache_dir=tmp_path)
    assert c2.loaded_from_cache and not c1.loaded_from_cache
    for ids in ([], [0], [0, 13], [0, 13, 3]):
        s1 = s2 = None
        s1, s2 = c1.start(), c2.start()
        for t in ids:
            s1, s2 = c1.commit(s1, t), c2.commit(s2, t)
        assert np.array_equal(c1.get_mask(s1), c2.get_mask(s2))
        assert np.array_equal(c2.get_mask(s2), c2.reference_mask(s2))


# ---------------------------------------------------------------------------
# lexer modes

def test_lexer_modes_keep_a_catch_all_terminal_out_of_other_modes():
    # mode "text": ANY (catch-all) until "#"; mode "num": digits until ";"
    terms = [TerminalDef("ANY", "", text=FreeText(("#",))), TerminalDef("HASH", "#", is_literal=True),
             TerminalDef("NUM", "[0-9]+"), TerminalDef("SEMI", ";", is_literal=True)]
    rules = [Rule("start", ("parts",)), Rule("parts", ("part",)), Rule("parts", ("parts", "part")),
             Rule("part", ("ANY",)), Rule("part", ("HASH", "NUM", "SEMI"))]
    modes = [LexerMode("text", ("ANY", "HASH"), (("HASH", "num"),)),
             LexerMode("num", ("NUM", "SEMI"), (("SEMI", "text"),))]
    g = Grammar.build(terms, rules, "start", modes=modes)
    v = Vocab([b"a1", b"#", b"12", b";", b"#1", b"2;", b"x;#", b"</s>"], eos_token_ids=[7])
    c = Constraint(g, v, ambiguous=True)
    run_trace(c, [0, 1, 2, 3, 6, 2, 5, 7])
    with pytest.raises(TokenRejected):
        c.commit(c.commit(c.start(), 1), 0)      # "a" is not lexed in mode "num"


def _tied_modes_constraint(vocab):
    # A and B tie on "a"; A switches to mode m1 (only Z "z"), B stays in m0 (X "x+"):
    # the language is (az | ax+)+, and "z" is lexable only after A, "x" only after B
    terms = [TerminalDef("A", "a", is_literal=True), TerminalDef("B", "a", is_literal=True),
             TerminalDef("X", "x+"), TerminalDef("Z", "z", is_literal=True)]
    rules = [Rule("start", ("item",)), Rule("start", ("start", "item")),
             Rule("item", ("A", "Z")), Rule("item", ("B", "X"))]
    modes = [LexerMode("m0", ("A", "B", "X"), (("A", "m1"),)), LexerMode("m1", ("Z",), (("Z", "m0"),))]
    return Constraint(Grammar.build(terms, rules, "start", modes=modes), vocab)


def test_terminals_tied_across_modes_fork_the_lexer_one_branch_per_mode():
    import itertools
    import re
    toks = [b"a", b"x", b"z", b"az", b"ax", b"za", b"xa", b"axx", b"zax", b"aza"]
    v = Vocab(toks + [b"</s>"], eos_token_ids=[len(toks)])
    c = _tied_modes_constraint(v)
    word, prefix = re.compile(r"(?:az|ax+)+"), re.compile(r"(?:az|ax+)*(?:a|az|ax+)?")
    for n in range(7):
        for chars in itertools.product("axz", repeat=n):
            text = "".join(chars)
            s = c.start()
            try:
                for ch in text:
                    s = c.commit(s, toks.index(ch.encode()))
                alive = True
            except TokenRejected:
                alive = False
            assert alive == bool(prefix.fullmatch(text)), text
            if alive:
                assert c.is_accepting(s) == bool(word.fullmatch(text)), text
    # the scanner: reading "a" emits A and B apart, each into its mode's boundary; a
    # special token after a pending "a" finishes it the same way
    sc = c.scanner
    tid = {t.name: c.tables.terminal_ids[t.name] for t in c.tables.grammar.terminals}
    outs = sc.step(0, ord("a"))
    assert sorted(em for em, _ in outs) == sorted([(tid["A"],), (tid["B"],)])
    by_em = {em: sc.config(cfg) for em, cfg in outs}
    assert by_em[(tid["A"],)][0] == -2 and by_em[(tid["B"],)][0] == -1     # boundaries of m1, m0
    pending = sc.intern(sc.dfa.trans[sc.mode_starts[0]][ord("a")].item(), frozenset())
    assert sorted(sc.special(pending, tid["X"])) == sorted(      # X switches nowhere
        [((tid["A"],), sc.intern(-2, frozenset())), ((tid["B"],), sc.intern(-1, frozenset()))])
    assert sc.special(pending, tid["Z"]) == (((tid["A"], tid["B"]), 0),)   # Z: m1 -> m0
    # compiled masks equal the oracle's, and every token's commit agrees with them, along
    # texts through both branches (multi-byte tokens cross the fork)
    for trace in (["az", "axx", "a", "z", "ax", "x", "aza", "z"], ["ax", "a", "zax", "x"], ["aza", "z", "axx", "xa", "z"]):
        run_trace(c, [toks.index(t.encode()) for t in trace] + [len(toks)])


# ---------------------------------------------------------------------------
# tag dispatch and trigger mode on small vocabularies

TAG_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"enum": ["é", "b"]}},
              "required": ["n"], "additionalProperties": False}
LARK_BODY = 'start: "go" NUM\nNUM: /[0-9]+/\n%ignore " "\n'


def tag_grammar():
    return tag_dispatch({"<tc>": (TAG_SCHEMA, "</tc>"), "[[": (LARK_BODY, "]]")}, stop=["STOP", "<|stop|>"],
                        whitespace=r"\n")


TAG_SENTENCES = [
    'hi <tc>{"n": 1}</tc> ok',
    '<tc>\n{"n":-2,"s":"é"}\n</tc>',
    'a<tc{"n": 1}[[go 12]]é<t',
    '[[go 3]]x<tc>{"n": 7, "s": "b"}</tc>STOP',
    'x <|stop|>',
    'é<tc>{"n":1}</tc><tc>{"n":2}</tc>[[go 1 ]]',
]
# special ids: 0 "<tc>", 1 "</tc>", 2 "<|stop|>", 3 EOS "<|end|>", 4 an unbound special
TAG_SPECIALS = [b"<tc>", b"</tc>", b"<|stop|>", b"<|end|>", b"<|x|>"]


@st.composite
def tag_vocabularies(draw):
    chars = sorted(set("".join(TAG_SENTENCES)) | set(' \n"{}:,[]'))
    alphabet = sorted({b for ch in chars for b in ch.encode()})
    toks: list = list(TAG_SPECIALS)
    toks += [bytes([b]) for b in alphabet]
    sents = [s.encode() for s in TAG_SENTENCES]
    for _ in range(draw(st.integers(0, 25))):
        sb = sents[draw(st.integers(0, len(sents) - 1))]
        i = draw(st.integers(0, len(sb) - 1))
        toks.append(sb[i:draw(st.integers(i + 1, min(len(sb), i + 7)))])
    toks += [s.encode() for s in draw(st.lists(st.text(alphabet=chars, min_size=1, max_size=4), max_size=10))]
    special_is_special = draw(st.booleans())     # "<tc>" a special token, or ordinary text
    specials = [0, 1, 2, 3, 4] if special_is_special else [2, 3, 4]
    return Vocab(toks, eos_token_ids=[3], special_token_ids=specials, vocab_size=len(toks) + 3)


def _walk(c: Constraint, rng: random.Random, steps: int, prefer=None):
    s = c.start()
    for _ in range(steps):
        m = check_state(c, s)
        ids = mask_to_ids(m, c.vocab.size).tolist()
        if not ids or s.finished:
            break
        if prefer is not None and prefer and prefer[0] in ids:
            t = prefer.pop(0)
        else:
            prefer = None
            t = rng.choice(ids)
        s = c.commit(s, t)
    return s


_TAG_CONSTRAINTS: dict = {}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(tag_vocabularies(), st.integers(0, 2**31), st.integers(0, len(TAG_SENTENCES) - 1))
def test_tag_dispatch_masks_equal_oracle_property(vocab, seed, k):
    g = tag_grammar()
    c = Constraint(g, vocab, ambiguous=needs_glr(g), compile=random.Random(seed).choice(["eager", "lazy"]))
    specials = {"<tc>": 0, "</tc>": 1} if 0 in vocab.special_token_ids else {}
    specials["<|stop|>"] = 2
    trace = greedy_tokenize(vocab, TAG_SENTENCES[k], specials)
    _walk(c, random.Random(seed), len(trace) + 4, prefer=list(trace))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(tag_vocabularies(), st.integers(0, 2**31), st.integers(0, len(TAG_SENTENCES) - 1))
def test_tag_dispatch_masks_equal_oracle_property_slow(vocab, seed, k):
    test_tag_dispatch_masks_equal_oracle_property.hypothesis.inner_test(vocab, seed, k)


def test_tag_dispatch_teacher_forced_every_sentence():
    vocab = Vocab(TAG_SPECIALS + [bytes([b]) for b in range(32, 127)] + [b"\n", "é".encode(),
                  "é".encode()[:1], b"<tc", b"c>", b"</", b'{"n', b'":', b"go 1"],
                  eos_token_ids=[3], special_token_ids=[0, 1, 2, 3, 4])
    g = tag_grammar()
    c = Constraint(g, vocab, ambiguous=needs_glr(g))
    for sent in TAG_SENTENCES:
        for specials in ({"<tc>": 0, "</tc>": 1, "<|stop|>": 2}, {"<|stop|>": 2}):
            ids = greedy_tokenize(vocab, sent, specials)
            s = run_trace(c, ids, every_id=False)
            assert c.is_accepting(s), sent
            if sent.endswith("STOP") or sent.endswith("<|stop|>"):
                assert mask_to_ids(c.get_mask(s), vocab.size).tolist() == [3]   # only EOS


def test_tag_dispatch_rejections():
    vocab = Vocab(TAG_SPECIALS + [bytes([b]) for b in range(32, 127)] + [b"\n"],
                  eos_token_ids=[3], special_token_ids=[0, 1, 2, 3, 4])
    g = tag_grammar()
    c = Constraint(g, vocab, ambiguous=needs_glr(g))
    def commit_text(s, text):
        for t in greedy_tokenize(vocab, text):
            s = c.commit(s, t)
        return s
    s = commit_text(c.start(), "ok ")
    s = c.commit(s, 0)                                       # <tc> (special)
    with pytest.raises(TokenRejected):
        commit_text(s, '{"n": "x"')                          # n must be an integer
    with pytest.raises(TokenRejected):
        commit_text(s, '{"s": "b"}')                         # n is required
    with pytest.raises(TokenRejected):
        commit_text(s, '{"n": 1, "t": 2}')                   # no additional properties
    with pytest.raises(TokenRejected):
        commit_text(s, 'free text')                          # the body is JSON
    s2 = commit_text(s, '{"n": 1}')
    with pytest.raises(TokenRejected):
        c.commit(s2, 3)                                      # EOS inside the call
    with pytest.raises(TokenRejected):
        commit_text(s2, "]]")                                # the other tag's closing tag
    s3 = c.commit(s2, 1)                                     # </tc> (special)
    assert c.is_accepting(s3)
    # the opening tag spelled out opens a call as well; "<tc" without ">" stays text
    s4 = commit_text(c.start(), "a<tc")
    assert c.is_accepting(s4)
    with pytest.raises(TokenRejected):
        commit_text(commit_text(s4, ">"), "x")
    assert c.is_accepting(commit_text(s4, "x"))
    # after a stop string nothing but EOS
    s5 = commit_text(c.start(), "bye STOP")
    assert mask_to_ids(c.get_mask(s5), vocab.size).tolist() == [3]
    with pytest.raises(TokenRejected):
        c.commit(s5, 0)
    # the unbound special token is never allowed
    with pytest.raises(TokenRejected):
        c.commit(c.start(), 4)


TRIGGER_VOCAB = [b"</think>", b"<|end|>", b"a", b"b", b"1", b"2", b"</", b"think", b">", b" ", b"<",
                 b"</think", b"k>", "é".encode()[:1], "é".encode()[1:]]


@pytest.mark.parametrize("trigger_special", [True, False])
@pytest.mark.parametrize("trigger", ["</think>", 0])
def test_trigger_mode(trigger_special, trigger):
    if trigger == 0 and not trigger_special:
        pytest.skip("a token id trigger must be a special token")
    v = Vocab(TRIGGER_VOCAB, eos_token_ids=[1], special_token_ids=[0, 1] if trigger_special else [1])
    c = Constraint('start: NUM+\nNUM: /[12]+/\n%ignore " "\n', v, trigger=trigger)
    s = c.start()
    m = check_state(c, s)
    assert 1 not in mask_to_ids(m, v.size)              # no EOS before the trigger
    # reasoning: anything (text), including "</" and "<" and a split character
    for t in [2, 10, 9, 6, 13, 14, 7, 3]:
        s = c.commit(s, t)
        check_state(c, s)
    if trigger_special:
        s = c.commit(s, 0)
    else:
        for t in [6, 7, 8]:
            s = c.commit(s, t)
    m = check_state(c, s)
    assert set(mask_to_ids(m, v.size)) <= {4, 5, 9}     # the grammar applies now
    for t in [4, 9, 5]:
        s = c.commit(s, t)
        check_state(c, s)
    assert c.is_accepting(s)
    with pytest.raises(TokenRejected):
        c.commit(s, 2)
    # the trigger spelled out also ends reasoning (the text form is always accepted)
    s = c.start()
    for t in [2, 11, 8]:
        s = c.commit(s, t)
        check_state(c, s)
    assert set(mask_to_ids(c.get_mask(s), v.size)) <= {4, 5, 9}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([b"a", b"</", b"think", b">", b"<", b"k>", b"</think", b"1", b" ",
                                 "é".encode()[:1], "é".encode()[1:], b"</think>"]),
                min_size=3, max_size=12, unique=True),
       st.booleans(), st.integers(0, 2**31))
def test_trigger_mode_property(tokens, special, seed):
    toks = [b"</think>", b"<|end|>"] + tokens
    v = Vocab(toks, eos_token_ids=[1], special_token_ids=[0, 1] if special else [1])
    c = Constraint('start: "1" "a"?\n', v, trigger="</think>")
    _walk(c, random.Random(seed), 12)


# ---------------------------------------------------------------------------
# the real Qwen2.5 vocabulary

def test_qwen_tool_call_tokens_are_special(qwen_vocab):
    assert qwen_vocab.tokens[151657] == b"<tool_call>" and 151657 in qwen_vocab.special_token_ids
    assert qwen_vocab.tokens[151658] == b"</tool_call>" and 151658 in qwen_vocab.special_token_ids


def test_qwen_literal_collision_is_reported(qwen_vocab):
    with pytest.raises(GrammarError, match="special token 151657"):
        Constraint('start: "<tool_call>" /[a-z]+/\n', qwen_vocab, compile="lazy")
    with pytest.raises(GrammarError, match="special token 151645"):
        Constraint('start: "hi" "<|im_end|>"\n', qwen_vocab, compile="lazy")


QWEN_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                          "required": ["city"]}}},
    {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}},
                                   "required": ["a"]}}]


def _qwen_trace(enc):
    text = ('Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
            'Also <tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>')
    special = enc.encode(text, allowed_special="all")            # tags as special tokens
    spelled = enc.encode(text, disallowed_special=())            # tags spelled out as text
    assert 151657 in special and 151657 not in spelled
    return special, spelled


def test_qwen_tool_calling_exact(qwen_vocab, qwen_encoding):
    """Tool calling with the real vocabulary: masks equal the oracle at a
    selection of steps (the slow variant checks every step)."""
    g = tool_calling(QWEN_TOOLS, stop=["<|endoftext|>"])
    c = Constraint(g, qwen_vocab, ambiguous=needs_glr(g), compile="lazy", progress=False)
    special, spelled = _qwen_trace(qwen_encoding)
    s = run_trace(c, special, every_id=False, check={1, 3, 19, 20})
    assert c.is_accepting(s)
    m = c.get_mask(s)
    assert 151645 in mask_to_ids(m, qwen_vocab.size)          # EOS <|im_end|>
    s = run_trace(c, spelled[:8], every_id=False, check={5})
    with pytest.raises(TokenRejected):                         # "Paris" is not an integer
        run_trace(c, qwen_encoding.encode('<tool_call>{"name": "add", "arguments": {"a": "',
                                          allowed_special="all"), every_id=False, check=set())


@pytest.mark.slow
def test_qwen_tool_calling_exact_every_step(qwen_vocab, qwen_encoding):
    g = tool_calling(QWEN_TOOLS, stop=["<|endoftext|>"])
    c = Constraint(g, qwen_vocab, ambiguous=needs_glr(g), progress=False)
    for trace in _qwen_trace(qwen_encoding):
        s = run_trace(c, trace, every_id=False)
        assert c.is_accepting(s)


@pytest.mark.slow
def test_qwen_trigger_mode_every_step(qwen_vocab, qwen_encoding):
    c = Constraint('start: "{" "}"\n', qwen_vocab, trigger="</think>", progress=False)
    run_trace(c, qwen_encoding.encode("Let me think. <b>2 < 3</think>{}"), every_id=False)
