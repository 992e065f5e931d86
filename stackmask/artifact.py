"""Compiled constraints on disk: zstd-compressed, keyed, verified, written atomically.

An artifact holds everything the runtime needs (grammar tables, the lexer
configuration ids, the Parser DWA and its interned token sets) as plain data
(:mod:`stackmask.plain`: arrays, serialized bitmaps, built-in values and the
grammar's own dataclasses), never a pickle: loading a file runs no code it
chooses, so a cache directory can be shared. It is keyed
by the grammar, the ``ambiguous`` flag, the vocabulary fingerprint,
:data:`FORMAT_VERSION` and :func:`code_fingerprint` (the library's own sources: an
artifact built by other code, whose lexer or compiler may read the same grammar
otherwise, is never found); the file name is the key's hash, and the header
repeats the key and a checksum of the payload, so a truncated, corrupted,
stale or foreign file is detected (and rebuilt with a warning by the caller),
never loaded into wrong masks. Files are written to a temporary name in the
same directory and renamed, so a reader never sees a partial file and two
processes compiling the same grammar at once each leave a complete artifact.

Cache directory: the ``cache_dir`` argument, else ``$STACKMASK_CACHE_DIR``,
else ``$XDG_CACHE_HOME/stackmask``, else ``~/.cache/stackmask``. Pass
``cache_dir=False`` (or set ``STACKMASK_CACHE_DIR=off``) to disable caching.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

import zstandard

# 9: a budget-stopped compile is explored (stackmask.compile.explore) before it is saved;
#    the layout is 8's, but an 8 artifact of SQL/Java/Go would keep its slow first uses
# 10: token sets and automaton states are indexed by SHA-256 digests (were BLAKE2b)
# 11: plain data (stackmask.plain) instead of a pickle
# 18: a counted chain met with a lookahead's other side (a length beside a pattern) keeps
#     the counts that side needs as positions (stackmask.lexer.counted.reach_for): a 17
#     artifact of such a string masks too few tokens from a stall
# 20: grammar gaps (Grammar.gaps, GrammarTables.gap_starts): one more field in each
FORMAT_VERSION = 20
MAGIC = b"STACKMSK"
log = logging.getLogger("stackmask")
_HEADER = struct.Struct("<8sI32s32sQ")    # magic, format version, key, payload sha256, payload size


class StaleArtifactWarning(UserWarning):
    """A cached artifact could not be used and is being rebuilt (or could not be written)."""


def default_cache_dir(cache_dir=None) -> Path | None:
    if cache_dir is False:
        return None
    if cache_dir is not None and cache_dir is not True:
        return Path(cache_dir)
    env = os.environ.get("STACKMASK_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "0", "false", "none"):
            return None
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "stackmask"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the package's sources (every ``.py``, ``.pyx``, ``.pxi`` and ``.lark``
    file under ``stackmask/``, with its path), read once per process (about 1.5 MB, a few
    ms). In the cache keys: a change to what the lexer or the compiler builds for the
    same grammar text must not find the artifacts of the code before it (they would
    mask by the old rules); :data:`FORMAT_VERSION` marks the layout."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".pyx", ".pxi", ".lark") and path.is_file():
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def artifact_key(grammar_text: str, ambiguous: bool, vocab_fingerprint: str) -> bytes:
    h = hashlib.sha256()
    h.update(f"stackmask-artifact:{FORMAT_VERSION}:{code_fingerprint()}\0".encode())
    h.update(b"ambiguous" if ambiguous else b"deterministic")
    h.update(b"\0" + vocab_fingerprint.encode() + b"\0")
    h.update(grammar_text.encode("utf-8", "surrogatepass"))
    return h.digest()


def artifact_path(directory: Path, key: bytes) -> Path:
    return directory / f"{key.hex()[:40]}.smk"


def save(path: Path, key: bytes, data: bytes) -> None:
    """Write the encoded artifact ``data`` (bytes) for ``key`` at ``path`` atomically."""
    payload = zstandard.ZstdCompressor(level=3).compress(data)
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, key, hashlib.sha256(payload).digest(), len(payload))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(header)
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _remove_stale_temps(path)
    _evict(path.parent, path)


#: the cache directory's artifacts and vocabulary indexes are held to this many bytes
#: (``$STACKMASK_CACHE_MAX_BYTES``; 0 or ``off``: no limit): each save removes the least
#: recently used files past it (a load marks a file used)
CACHE_MAX_BYTES = 4 << 30


def cache_max_bytes() -> int | None:
    """The cache's size limit in bytes, None for none (:data:`CACHE_MAX_BYTES`)."""
    env = os.environ.get("STACKMASK_CACHE_MAX_BYTES")
    if env is None:
        return CACHE_MAX_BYTES
    if env.strip().lower() in ("", "0", "off", "none"):
        return None
    return int(env)


def _evict(directory: Path, keep: Path) -> None:
    """Remove the least recently used artifacts and indexes of ``directory`` (files of
    this library only: ``.smk``/``.smv`` that begin with :data:`MAGIC`) while they hold
    more than :func:`cache_max_bytes`, never ``keep`` (the file just written). Files of
    earlier versions of the library, whose keys no longer match, go first as they are
    not used any more."""
    limit = cache_max_bytes()
    if limit is None:
        return
    files = []
    try:
        for p in directory.iterdir():
            if p.suffix not in (".smk", ".smv") or p == keep:
                continue
            try:
                st = p.stat()
                with open(p, "rb") as f:
                    if f.read(len(MAGIC)) != MAGIC:
                        continue
            except OSError:
                continue
            files.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in files) + keep.stat().st_size
    except OSError:
        return
    if total <= limit:
        return
    removed = freed = 0
    for _, size, p in sorted(files):
        if total <= limit:
            break
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
        removed += 1
        freed += size
    if removed:
        log.info("stackmask: artifact cache %s over %d bytes: removed the %d least recently "
                 "used files (%.1f MB)", directory, limit, removed, freed / 1e6)


#: a temporary file older than this was left by a writer that died (writing takes seconds)
STALE_TEMP_S = 3600.0


def _remove_stale_temps(path: Path) -> None:
    """Delete temporary files of ``path`` left behind by writers that were killed."""
    import time
    cutoff = time.time() - STALE_TEMP_S
    try:
        for p in path.parent.glob(path.name + ".*.tmp"):
            try:
                if p.stat().st_mtime < cutoff:
                    p.unlink()
            except OSError:
                pass
    except OSError:
        pass


def try_save(path: Path, key: bytes, data: bytes) -> bool:
    """:func:`save`, but a cache that cannot be written (read-only, full, not a
    directory) only warns: the compiled constraint is still returned."""
    try:
        save(path, key, data)
        return True
    except OSError as e:
        warnings.warn(f"stackmask: cannot write the artifact cache {path}: {e}; "
                      f"continuing without caching", StaleArtifactWarning, stacklevel=3)
        return False


def load(path: Path, key: bytes, decode=lambda body: body):
    """``decode(payload bytes)`` of the artifact at ``path`` for ``key``, or None if absent;
    a file that exists but cannot be used (truncated, corrupted, other version or key,
    or ``decode`` raises) warns and returns None."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        warnings.warn(f"stackmask: cannot read cached artifact {path}: {e}; recompiling",
                      StaleArtifactWarning, stacklevel=3)
        return None
    try:
        os.utime(path)                 # used now: the cache's size limit removes it last
    except OSError:
        pass
    problem = _check(data, key)
    if problem is None:
        try:
            body = zstandard.ZstdDecompressor().decompress(data[_HEADER.size:])
            return decode(body)
        except Exception as e:     # noqa: BLE001 - any decoding failure means: rebuild
            problem = f"cannot decode ({type(e).__name__}: {e})"
    warnings.warn(f"stackmask: cached artifact {path} is {problem}; recompiling",
                  StaleArtifactWarning, stacklevel=3)
    return None


def _check(data: bytes, key: bytes) -> str | None:
    if len(data) < _HEADER.size:
        return "truncated (no header)"
    magic, version, k, digest, size = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return "not a stackmask artifact"
    if version != FORMAT_VERSION:
        return f"of format version {version} (this stackmask reads {FORMAT_VERSION})"
    if k != key:
        return "for another grammar or vocabulary"
    if len(data) - _HEADER.size < size:
        return f"truncated ({len(data) - _HEADER.size} of {size} payload bytes)"
    if len(data) - _HEADER.size > size:
        return f"followed by {len(data) - _HEADER.size - size} unexpected bytes after its payload"
    if hashlib.sha256(memoryview(data)[_HEADER.size:]).digest() != digest:
        return "corrupted (checksum mismatch)"
    return None
