"""Engines the report replays token traces through: stackmask and, when installed, peers.

Every engine has the same small interface, so the replay loop in
``stackmask.report`` (``_replay``) treats them alike:

* ``Engine(vocab)`` prepares the vocabulary (not timed as compile);
* ``compile(workload)`` builds the grammar's matcher (timed as compile);
* ``start(h)`` a fresh state; ``mask(h, state, buf)`` fills ``buf`` (int32,
  ``ceil(vocab.size / 32)`` words, bit ``id % 32`` of word ``id // 32``);
  ``commit(h, state, token)`` returns ``(accepted, new_state)``;
  ``finish(h, state)`` says whether EOS is accepted there.

Peers get the same vocabulary bytes, the same EOS id and the same token ids.
Where a peer cannot read a grammar feature that does not change the
grammar's language (Lark *rule* priorities only pick among parse trees), the
report hands it the grammar with those removed and says so in its notes.
"""

from __future__ import annotations

import importlib
import json
import re

import numpy as np

PEERS = ("glrmask", "llguidance", "xgrammar")
ENGINES = ("stackmask",) + PEERS

# `name.N:` / `?name.N:` at the start of a rule definition (rules are lower case).
_RULE_PRIORITY = re.compile(r"^(\s*[?!]?[a-z_][a-z_0-9]*)\.(-?\d+)(\s*:)", re.MULTILINE)


def strip_rule_priorities(text: str) -> tuple[str, int]:
    """The grammar without rule priorities, and how many were removed."""
    return _RULE_PRIORITY.subn(r"\1\3", text)


class EngineUnavailable(Exception):
    """The engine is not installed (or cannot be imported)."""


class Engine:
    name = "?"

    def __init__(self) -> None:
        self.notes: list[str] = []

    def version(self) -> str:
        return ""

    def _lark_text(self, text: str) -> str:
        """``text`` without Lark rule priorities (which this peer rejects), noted."""
        text, n = strip_rule_priorities(text)
        if n:
            self.notes.append(f"{n} rule priorities removed (not supported; they do not change the language)")
        return text


def _import_peer(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise EngineUnavailable(f"{module.split('.')[0]} is not installed ({e})") from None


class _RowView:
    """The (1, words) view a peer's fill function wants of the caller's 1-D buffer,
    made once per buffer so the timed mask call does not build it."""

    def __init__(self, wrap):
        self._wrap = wrap
        self._buf = None
        self._view = None

    def __call__(self, buf):
        if buf is not self._buf:
            self._buf, self._view = buf, self._wrap(buf.reshape(1, -1))
        return self._view


class Stackmask(Engine):
    name = "stackmask"

    def __init__(self, vocab, *, cache_dir=None, compile_mode: str = "eager",
                 compile_budget_s: float | None = 120.0, progress: bool = False):
        import stackmask
        from stackmask.compile.token_index import vocab_index
        super().__init__()
        self.sm = stackmask
        self.vocab = vocab
        self.eos = min(vocab.eos_token_ids)
        self.cache_dir = cache_dir
        self.compile_mode = compile_mode
        self.compile_budget_s = compile_budget_s
        self.progress = progress      # the compile's own progress lines on stderr
        vocab_index(vocab)        # vocabulary preprocessing, shared by every grammar

    def version(self) -> str:
        return self.sm.__version__

    def compile(self, w):
        kw = dict(cache_dir=self.cache_dir, progress=self.progress, compile=self.compile_mode,
                  compile_budget_s=self.compile_budget_s)
        if w.kind == "schema":
            from stackmask.grammars.json_schema import schema_constraint
            c = schema_constraint(w.schema, self.vocab, **kw)
        else:
            c = self.sm.Constraint(w.text, self.vocab, ambiguous=w.ambiguous, **kw)
        st = c.compile_stats()
        from stackmask import native
        self.notes.append("inner loops (masks, commits): " + (
            "compiled (stackmask._native)" if c.native else native.describe()))
        if c.loaded_from_cache:
            self.notes.append("mask automaton loaded from the artifact cache (--no-cache compiles)")
        elif st.get("budget_exhausted"):
            why = f" ({st['budget_used_up']})" if st.get("budget_used_up") else ""
            explored = ""
            if st.get("explore_sentences") is not None:
                explored = (f"; then {st['explore_sentences']} random sentences of the grammar "
                            f"explored and {st.get('explore_expanded', 0)} states they reached "
                            f"completed in {st['explore_s']:.1f} s (+{st['explore_states']} states)")
            self.notes.append(f"compile budget used up{why}{explored}: "
                              f"{st.get('complete_states')} of {st.get('states')} "
                              f"automaton states complete; the rest is compiled on first use "
                              "(in the cold pass)")
        return c

    def start(self, h):
        return h.start()

    def mask(self, h, st, buf):
        h.get_mask(st, out=buf)

    def commit(self, h, st, tok):
        try:
            return True, h.commit(st, tok)
        except self.sm.TokenRejected:
            return False, st

    def finish(self, h, st):
        try:
            h.commit(st, self.eos)
            return True
        except self.sm.TokenRejected:
            return False


class GLRMask(Engine):
    name = "glrmask"

    def __init__(self, vocab):
        super().__init__()
        glrmask = self.g = _import_peer("glrmask")
        skip = vocab.special_token_ids | vocab.eos_token_ids
        self.v = glrmask.Vocab.from_id_to_bytes(
            {i: b for i, b in enumerate(vocab.tokens) if b and i not in skip})

    def version(self) -> str:
        from importlib.metadata import version
        return version("glrmask")

    def compile(self, w):
        if w.kind == "schema":
            g = self.g.Grammar.from_json_schema(w.schema)
        else:
            g = self.g.Grammar.from_lark(w.text)
        return g.compile(self.v)

    def start(self, h):
        return h.start()

    def mask(self, h, st, buf):
        st.fill_mask(buf)

    def commit(self, h, st, tok):
        return bool(st.commit_token(tok)), st

    def finish(self, h, st):
        return bool(st.is_accepting())


class _Wrapper:
    """What llguidance's ``TokenizerWrapper`` reads: token bytes, EOS, special ids, and a
    tokenize function (only used by llguidance for forced tokens; never for masks)."""

    def __init__(self, vocab, encode):
        self.tokens = [b or b"" for b in vocab.tokens] + [b""] * (vocab.size - len(vocab.tokens))
        self.eos_token_id = min(vocab.eos_token_ids)
        self.bos_token_id = None
        self.special_token_ids = sorted(vocab.special_token_ids | vocab.eos_token_ids)
        self._encode = encode

    def __call__(self, s):
        if isinstance(s, bytes):
            s = s.decode("utf-8", errors="replace")
        return list(self._encode(s))


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self, vocab, encode):
        super().__init__()
        llguidance = self.ll = _import_peer("llguidance")
        self._fill = _import_peer("llguidance.numpy").fill_next_token_bitmask
        self._row = _RowView(lambda a: a)
        self.eos = min(vocab.eos_token_ids)
        self.tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Wrapper(vocab, encode)),
                                          n_vocab=vocab.size, eos_token=sorted(vocab.eos_token_ids))

    def version(self) -> str:
        return self.ll.get_version() if hasattr(self.ll, "get_version") else ""

    def compile(self, w):
        if w.kind == "schema":
            grm = self.ll.LLMatcher.grammar_from_json_schema(json.dumps(w.schema))
        else:
            grm = self.ll.LLMatcher.grammar_from_lark(self._lark_text(w.text))
        err = self.ll.LLMatcher.validate_grammar(grm, self.tok)
        if err:
            raise ValueError(" ".join(err.split())[:300])
        m = self.ll.LLMatcher(self.tok, grm, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return grm

    def start(self, h):
        return self.ll.LLMatcher(self.tok, h, log_level=0)

    def mask(self, h, st, buf):
        self._fill(st, self._row(buf), 0)       # row 0 of a (1, words) int32 array

    def commit(self, h, st, tok):
        ok = st.consume_token(tok)
        return bool(ok) and not st.is_error(), st

    def finish(self, h, st):
        return bool(st.consume_token(self.eos)) and not st.is_error()


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self, vocab):
        super().__init__()
        xgr = self.xgr = _import_peer("xgrammar")
        import torch          # xgrammar fills torch tensors (it depends on torch)
        self._row = _RowView(torch.from_numpy)
        self.eos = min(vocab.eos_token_ids)
        toks = [vocab.token_bytes(i) or b"" for i in range(vocab.size)]
        info = xgr.TokenizerInfo(toks, vocab_type=xgr.VocabType.RAW, vocab_size=vocab.size,
                                 stop_token_ids=sorted(vocab.eos_token_ids))
        self.compiler = xgr.GrammarCompiler(info, cache_enabled=False)

    def version(self) -> str:
        return getattr(self.xgr, "__version__", "")

    def compile(self, w):
        if w.kind == "schema":
            return self.compiler.compile_json_schema(json.dumps(w.schema), any_whitespace=True,
                                                     strict_mode=False)
        return self.compiler.compile_grammar(self.xgr.Grammar.from_lark(self._lark_text(w.text)))

    def start(self, h):
        return self.xgr.GrammarMatcher(h)

    def mask(self, h, st, buf):
        st.fill_next_token_bitmask(self._row(buf))

    def commit(self, h, st, tok):
        return bool(st.accept_token(tok)), st

    def finish(self, h, st):
        return bool(st.accept_token(self.eos))


def make_engine(name: str, vocab, encode, **stackmask_kw) -> Engine:
    if name == "stackmask":
        return Stackmask(vocab, **stackmask_kw)
    if name == "glrmask":
        return GLRMask(vocab)
    if name == "llguidance":
        return LLGuidance(vocab, encode)
    if name == "xgrammar":
        return XGrammar(vocab)
    raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")


def clear_special_bits(mask: np.ndarray, ids: np.ndarray, width: int) -> np.ndarray:
    """A copy of ``mask`` with the bits of ``ids`` and of ids >= ``width`` cleared (for
    comparing masks across engines: special tokens and padding are not compared)."""
    m = mask.view(np.uint32).copy()
    if ids.size:
        np.bitwise_and.at(m, ids >> 5, ~(np.uint32(1) << (ids & 31).astype(np.uint32)))
    tail = width & 31
    if tail and width >> 5 < m.size:
        m[width >> 5] &= np.uint32((1 << tail) - 1)
        m[(width >> 5) + 1:] = 0
    return m
