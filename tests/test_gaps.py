"""Gap terminals (``Grammar.gaps``): ignored terminals the lexer reads at most once between
two lexemes (``stackmask.lexer.gaps``, the scanner's gap boundaries). The language is
checked against a regex written from the definition; masks against the reference oracle,
fresh and loaded from the artifact cache."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask import Constraint, Grammar, GrammarError, Vocab

from conftest import accepts

WORDS = r"""
start: item+
item: WORD | NUM
WORD: /[a-z]+/
NUM: /[0-9]+/
WS: /[ ]{1,3}|\n[ ]{0,2}/
%ignore WS
"""

#: the language by definition: items, at most one gap (a line break then at most two
#: blanks, or one to three blanks) between two of them, before the first and after the last
GAP = r"(?:[ ]{1,3}|\n[ ]{0,2})?"
LANGUAGE = re.compile(GAP + r"(?:[a-z]+|[0-9]+)(?:" + GAP + r"(?:[a-z]+|[0-9]+))*" + GAP)

TOKENS = [b"a", b"b", b"1", b" ", b"  ", b"   ", b"    ", b" a", b"  a", b"a ", b"1 ", b"   1",
          b"a  ", b" 1 ", b"\n", b"\n ", b" \n", b"\n  a", b"a\n"]


def _grammar(gaps=("WS",)) -> Grammar:
    g = Grammar.from_lark(WORDS)
    return Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, gaps=gaps)


_C: list = []


def _constraint() -> Constraint:
    if not _C:
        vocab = Vocab(TOKENS + [b"<eos>"], eos_token_ids=[len(TOKENS)])
        _C.append(Constraint(_grammar(), vocab, cache_dir=False, progress=False))
    return _C[0]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1 \n", max_size=12))
def test_the_language_is_one_gap_at_most_between_lexemes(text):
    assert accepts(_constraint(), text) == bool(LANGUAGE.fullmatch(text)), repr(text)


def test_plain_ignore_repeats_where_a_gap_does_not():
    c, plain = _constraint(), Constraint(Grammar.from_lark(WORDS), _constraint().vocab,
                                         cache_dir=False, progress=False)
    for text in ("a    b", "a \nb", "      a", "a\n\n"):
        assert accepts(plain, text) and not accepts(c, text), repr(text)
    for text in ("a   b", "a\n  b", "   a", "a\n  ", "a1 b"):
        assert accepts(plain, text) and accepts(c, text), repr(text)


def _walk_masks(c: Constraint, depth: int) -> int:
    front, n = [c.start()], 0
    for _ in range(depth):
        nxt = []
        for s in front:
            ref = c.reference_mask(s)
            assert np.array_equal(c.get_mask(s), ref)
            n += 1
            nxt.extend(c.commit(s, t) for t in range(len(TOKENS)) if (ref[t >> 5] >> (t & 31)) & 1)
        front = nxt[:2000]
    return n


def test_masks_equal_the_oracle_fresh_and_loaded(tmp_path):
    vocab = Vocab(TOKENS + [b"<eos>"], eos_token_ids=[len(TOKENS)])
    for attempt in range(2):
        c = Constraint(_grammar(), vocab, cache_dir=tmp_path, progress=False)
        assert ("load_s" in c.compile_stats()) == (attempt == 1)     # built, then loaded
        assert c.tables.gap_starts and c.tables.gap_starts[0] >= 0
        assert _walk_masks(c, 5) > 1000


def test_a_gap_must_not_share_a_first_byte():
    g = Grammar.from_lark(WORDS.replace("WORD: /[a-z]+/", "WORD: /[a-z ]+/"))
    bad = Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, gaps=("WS",))
    with pytest.raises(GrammarError, match="gap terminal 'WS' and terminal 'WORD'"):
        Constraint(bad, _constraint().vocab, cache_dir=False, progress=False)


def test_a_gap_is_an_ignored_terminal():
    g = Grammar.from_lark(WORDS)
    with pytest.raises(GrammarError, match="not an ignored terminal"):
        Grammar.build(g.terminals, g.rules, g.start, gaps=("WS",))


def test_json_gap_boundaries_drop_their_shadow_and_start_on_their_mode(qwen_vocab):
    """Under the JSON Schema front end's bounded whitespace, the configuration after a
    gap (met after a whole gap: one at its bound is emitted at once) has no shadow (the gap's longer match reads only blanks, dead after a gap) and
    starts on its mode's boundary (the tokens it drops: those starting with a blank or a
    line break). Masks there equal the oracle's."""
    c = Constraint(Grammar.from_json_schema({}), qwen_vocab, cache_dir=False, progress=False)
    sc, dwa = c.scanner, c.compiled.dwa
    after_gap = [cfg for cfg, (d, _) in enumerate(sc.export_configs())
                 if type(d) is int and d < -sc.n_modes]
    assert after_gap and all(not sc.config(cfg)[1] for cfg in after_gap)
    for cfg in after_gap:
        d, _ = sc.config(cfg)
        assert sc.config(dwa.init_base[cfg][0]) == (sc.mode_boundary(d), frozenset())
        assert sc.mode_boundary(d) == -1 - ((-1 - d) - sc.n_modes)
    # (a gap is emitted at its bound, or with the byte after it: full gaps end a text here)
    for text in ("{" + " " * 20, '{\n  "a":\n' + "\t" * 20, "[1," + " \t" * 10, "{}\r\n" + " " * 20):
        s = c.commit_bytes(c.start(), text.encode())
        assert any(sc.config(cfg)[0] < -sc.n_modes for _, cfg in s.heads), text
        assert np.array_equal(c.get_mask(s), c.reference_mask(s)), text


# --- the first-byte check, read off the mode's lexer automaton ------------------------------

def _dfa_first(regex: str) -> np.ndarray:
    from stackmask.lexer.combined import terminal_dfas
    from stackmask.lexer.gaps import first_bytes
    return first_bytes(terminal_dfas([regex])[0])


_ATOMS = ["a", "b", "é", "\u4e2d", "\U0001F600", "[a-c]", "[^a]", "[\u0080-\u07ff]",
          "[\u0800-\uffff]", "\\d", "\\s", ".", "[^\\s\\S]", "(?:)", "\\n", " ", "\\t"]


@st.composite
def _regex(draw, depth=0):
    kind = draw(st.sampled_from(["atom", "atom", "seq", "alt", "rep"] if depth < 3 else ["atom"]))
    if kind == "atom":
        return draw(st.sampled_from(_ATOMS))
    if kind == "seq":
        return "".join(draw(st.lists(_regex(depth + 1), min_size=1, max_size=3)))
    if kind == "alt":
        return "(?:" + "|".join(draw(st.lists(_regex(depth + 1), min_size=1, max_size=3))) + ")"
    lo = draw(st.integers(0, 3))
    hi = draw(st.sampled_from([lo, lo + 1, lo + 4, None]))
    return "(?:" + draw(_regex(depth + 1)) + "){" + f"{lo},{'' if hi is None else hi}" + "}"


@settings(max_examples=120, deadline=None)
@given(_regex())
def test_the_gap_check_is_first_byte_overlap(regex):
    """A terminal is refused beside the gap exactly where its own DFA shares a first byte
    with the gap's (what the check reads off the mode's automaton instead)."""
    from stackmask.compile.tables import build_tables
    try:
        clash = bool((_dfa_first(regex) & _dfa_first(r"[ ]{1,3}|\n[ ]{0,2}")).any())
    except GrammarError:                 # matches the empty string or nothing at all
        return
    g = Grammar.from_lark(WORDS.replace("WORD: /[a-z]+/", f"WORD: /{regex}/"))
    g = Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, gaps=("WS",))
    try:
        build_tables(g, ambiguous=True)
    except GrammarError as e:
        assert clash and "gap terminal 'WS' and terminal 'WORD'" in str(e), (regex, str(e))
    else:
        assert not clash, regex


def test_a_length_bounded_terminal_is_still_checked():
    g = Grammar.from_lark(WORDS.replace("WORD: /[a-z]+/", "WORD: /[a-z ]{1,200}/"))
    bad = Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, gaps=("WS",))
    with pytest.raises(GrammarError, match="gap terminal 'WS' and terminal 'WORD'"):
        Constraint(bad, _constraint().vocab, cache_dir=False, progress=False)


@pytest.mark.parametrize("word,clash", [(r"/(?=[ a-z]{1,5};)[ a-z]+;/", True),
                                        (r"/(?=[a-z]{1,5};)[ a-z]+;/", False),
                                        (r"/(?!\x20)[ a-z]+;/", False),
                                        (r"/(?!x)[ a-z]+;/", True)])
def test_a_lookahead_terminal_is_checked_on_the_lexer(word, clash):
    """A terminal with a lookahead (a pattern beside a length) is an intersection: the
    check reads what can follow a gap byte off the mode's automaton, where the lookahead
    may rule a first byte out (``(?=[a-z]{1,5};)[ a-z]+;`` never starts with a blank)."""
    g = Grammar.from_lark(WORDS.replace("WORD: /[a-z]+/", f"WORD: {word}"))
    g = Grammar.build(g.terminals, g.rules, g.start, ignore=g.ignore, gaps=("WS",))
    if clash:
        with pytest.raises(GrammarError, match="gap terminal 'WS' and terminal 'WORD' both "
                                               "start with byte 32"):
            Constraint(g, _constraint().vocab, cache_dir=False, progress=False)
    else:
        Constraint(g, _constraint().vocab, cache_dir=False, progress=False)
