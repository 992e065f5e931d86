"""What the report replays: a grammar, a vocabulary, and token traces.

* Grammar: a bundled name (``json``: stackmask's RFC 8259 grammar), a
  benchmark grammar name (``json-outlines``, ``c``, ``calc``, ``sql``,
  ``java``, ``go``: the Lark files in ``$STACKMASK_BENCH/grammars``, by default
  ``../shared/bench`` next to the repository, named by
  :func:`bench_grammar_path`; ``sql``, ``java`` and ``go`` are parsed with
  ``ambiguous=True``), a ``.lark`` file, or a ``.json`` file holding a JSON
  Schema.
* Vocabulary: ``qwen2.5`` (bundled, the default), a ``tokenizer.json`` file or
  a Hugging Face tokenizer directory (loaded offline), or a ``.tiktoken`` rank
  file (texts tokenized by tiktoken with Qwen2.5's pre-tokenizer pattern; its
  EOS id given with ``--eos-id``).
* Corpus: JSONL files (one object per line with ``"text"``, and optionally
  ``"tokens"``: token ids, used as given when the vocabulary is ``qwen2.5``)
  or plain files (each file one document). Without ``--corpus``: the bundled
  JSON corpus for ``json``, ``benchmarks/traces/<name>.jsonl`` (generated
  from the grammar by ``benchmarks/mask_latency.py``) for the benchmark
  grammars.

Token ids are computed once, in the parent process, so every engine replays
identical ids.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
#: The benchmark grammars, by name. Each is the file ``<name>.lark`` of
#: ``bench_dir()/grammars``, except ``json-outlines``: that directory's ``json.lark``
#: (adapted from outlines, a third-party file kept under its own name), which is not
#: the bundled ``json`` grammar; see :func:`bench_grammar_path`.
BENCH_GRAMMARS = ("json-outlines", "c", "calc", "sql", "java", "go")
_BENCH_FILES = {"json-outlines": "json.lark"}
AMBIGUOUS = {"sql", "java", "go"}
DEFAULT_VOCAB = "qwen2.5"


class WorkloadError(Exception):
    """A grammar, vocabulary or corpus argument that cannot be used."""


@dataclass
class Workload:
    name: str
    kind: str                       # "lark" | "schema"
    text: str = ""
    schema: Any = None
    ambiguous: bool = False
    source: str = ""


@dataclass
class Traces:
    texts: list[str]
    tokens: list[list[int]]
    source: str
    notes: list[str] = field(default_factory=list)

    @property
    def n_tokens(self) -> int:
        return sum(len(t) for t in self.tokens)


def bench_dir() -> Path:
    return Path(os.environ.get("STACKMASK_BENCH", REPO.parent / "shared" / "bench"))


def bench_grammar_file(name: str) -> str:
    """The file name of benchmark grammar ``name`` in ``bench_dir()/grammars``."""
    if name not in BENCH_GRAMMARS:
        hint = (" ('json' is the bundled grammar; the benchmark directory's json.lark is "
                "'json-outlines')" if name == "json" else "")
        raise WorkloadError(f"{name!r} is not a benchmark grammar "
                            f"({', '.join(BENCH_GRAMMARS)}){hint}")
    return _BENCH_FILES.get(name, f"{name}.lark")


def bench_grammar_path(name: str, directory: Path | str | None = None) -> Path:
    """The Lark file of benchmark grammar ``name``: in ``directory`` (a benchmark data
    folder holding ``grammars/``), by default :func:`bench_dir`."""
    root = bench_dir() if directory is None else Path(directory)
    return root / "grammars" / bench_grammar_file(name)


def load_workload(spec: str, ambiguous: bool | None = None) -> Workload:
    from ..grammars import BUNDLED, load
    if spec in BUNDLED:
        return Workload(spec, "lark", text=load(spec), ambiguous=bool(ambiguous),
                        source=f"bundled grammar {spec!r}")
    if spec in BENCH_GRAMMARS:
        path = bench_grammar_path(spec)
        if not path.exists():
            raise WorkloadError(f"benchmark grammar {spec!r} not found at {path} "
                                "(set $STACKMASK_BENCH to the directory holding grammars/)")
        amb = spec in AMBIGUOUS if ambiguous is None else ambiguous
        return Workload(spec, "lark", text=path.read_text(encoding="utf-8"), ambiguous=amb,
                        source=str(path))
    path = Path(spec)
    if not path.exists():
        raise WorkloadError(f"--grammar {spec!r}: not a bundled grammar ({', '.join(BUNDLED)}), "
                            f"a benchmark grammar ({', '.join(BENCH_GRAMMARS)}) or an existing file")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            schema = json.loads(text)
        except ValueError as e:
            raise WorkloadError(f"{path}: not valid JSON ({e})") from None
        return Workload(path.stem, "schema", schema=schema, source=str(path))
    return Workload(path.stem, "lark", text=text, ambiguous=bool(ambiguous), source=str(path))


def load_vocab(spec: str, eos_id: int | None = None) -> tuple[Any, Callable[[str], list[int]]]:
    """(Vocab, encode: text -> token ids) for a vocabulary spec."""
    from ..vocab import Vocab, qwen2_5_encoding
    if spec in ("qwen2.5", "qwen2_5", "qwen"):
        enc = qwen2_5_encoding()
        return Vocab.qwen2_5(), lambda s: enc.encode(s, disallowed_special=())
    path = Path(spec)
    if not path.exists():
        raise WorkloadError(f"--vocab {spec!r}: not 'qwen2.5' nor an existing tokenizer.json, "
                            "tokenizer directory or .tiktoken file (nothing is downloaded)")
    if path.suffix == ".tiktoken":
        import tiktoken
        if eos_id is None:
            raise WorkloadError("a .tiktoken vocabulary needs --eos-id")
        vocab = Vocab.from_tiktoken(path, eos_tokens=[eos_id], vocab_size=None)
        ranks = {b: i for i, b in enumerate(vocab.tokens) if b is not None}
        enc = tiktoken.Encoding(path.stem, pat_str=qwen2_5_encoding()._pat_str,
                                mergeable_ranks=ranks, special_tokens={})
        return vocab, lambda s: enc.encode(s, disallowed_special=())
    from ..vocab import load_tokenizer
    tok, _ = load_tokenizer(path)
    vocab = Vocab.from_pretrained(tok, eos_token_ids=None if eos_id is None else [eos_id])
    if not vocab.eos_token_ids:
        raise WorkloadError(f"{path}: the tokenizer names no EOS token; give --eos-id")
    return vocab, lambda s: list(tok.encode(s, add_special_tokens=False))


def _read_corpus_file(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        out = []
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise WorkloadError(f"{path}:{n}: not JSON ({e})") from None
                if isinstance(obj, str):
                    obj = {"text": obj}
                if not isinstance(obj, dict) or not isinstance(obj.get("text", obj.get("tokens")),
                                                               (str, list)):
                    raise WorkloadError(f'{path}:{n}: expected {{"text": ...}} or {{"tokens": [...]}}')
                out.append(obj)
        return out
    return [{"text": path.read_text(encoding="utf-8")}]


def default_corpus(w: Workload) -> list[dict] | None:
    if w.kind == "lark" and w.name == "json" and w.source.startswith("bundled"):
        text = resources.files("stackmask.grammars").joinpath("json_corpus.jsonl").read_text("utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if w.name in BENCH_GRAMMARS:
        path = REPO / "benchmarks" / "traces" / f"{w.name}.jsonl"
        if path.exists():
            return _read_corpus_file(path)
    return None


def load_traces(w: Workload, corpus: list[str], vocab_spec: str, vocab,
                encode: Callable[[str], list[int]], limit: int | None = None) -> Traces:
    if corpus:
        docs: list[dict] = []
        for c in corpus:
            p = Path(c)
            if not p.exists():
                raise WorkloadError(f"--corpus {c!r}: no such file")
            docs.extend(_read_corpus_file(p))
        source = ", ".join(corpus)
    else:
        docs = default_corpus(w)
        if docs is None:
            raise WorkloadError(f"no default corpus for grammar {w.name!r}: give --corpus FILE...")
        source = "bundled JSON corpus" if w.name == "json" else f"benchmarks/traces/{w.name}.jsonl"
    if limit is not None:
        docs = docs[:limit]
    texts, tokens, notes = [], [], []
    given = 0
    for d in docs:
        text = d.get("text", "")
        if "tokens" in d and vocab_spec == DEFAULT_VOCAB:
            ids = [int(t) for t in d["tokens"]]
            given += 1
        elif isinstance(text, str) and text:
            ids = list(encode(text))
        else:
            raise WorkloadError("a corpus entry has token ids but the vocabulary is not qwen2.5, "
                                "and no text to tokenize")
        bad = [t for t in ids if not 0 <= t < vocab.size]
        if bad:
            raise WorkloadError(f"token id {bad[0]} is outside the vocabulary (size {vocab.size})")
        texts.append(text)
        tokens.append(ids)
    if given:
        notes.append(f"{given} documents replayed with their stored token ids")
    if not tokens:
        raise WorkloadError("the corpus is empty")
    return Traces(texts, tokens, source, notes)
