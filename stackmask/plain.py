"""Plain-data codec: built-in values, numpy arrays and listed dataclasses as msgpack.

What it encodes: None, bool, int (any size), float, str, bytes, tuples and lists (both
decode as tuples), dicts (any hashable keys), sets and frozensets, numeric numpy arrays,
and instances of the dataclasses the caller lists. Decoding builds only those values:
a dataclass is rebuilt by calling its own constructor with its ``init`` fields, and only
classes in the caller's list are accepted, so loading a file runs no code the file
chooses (unlike pickle). Malformed input raises :class:`PlainDataError`.

Dataclass fields whose name starts with ``_`` are derived state (recomputed by the
class's ``__post_init__``) and are not stored.
"""

from __future__ import annotations

import dataclasses

import msgpack
import numpy as np

_FROZENSET, _SET, _BIGINT, _ARRAY, _RECORD = 1, 2, 3, 4, 5

#: numpy dtypes an array may have (no object or structured dtypes)
_DTYPES = frozenset(np.dtype(t).str for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))


class PlainDataError(ValueError):
    """The bytes are not a valid plain-data encoding (or name a class not allowed)."""


def _fields(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_"))


class Codec:
    """Encoder/decoder for one set of allowed dataclasses (by qualified name)."""

    def __init__(self, classes=()):
        self._classes = {}
        for cls in classes:
            if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
                raise TypeError(f"{cls!r} is not a dataclass")
            self._classes[f"{cls.__module__}.{cls.__qualname__}"] = (cls, _fields(cls))

    # -- encoding ----------------------------------------------------------------------
    def dumps(self, obj) -> bytes:
        return msgpack.packb(obj, default=self._default, use_bin_type=True, strict_types=False)

    def _default(self, obj):
        if isinstance(obj, frozenset):
            return msgpack.ExtType(_FROZENSET, self.dumps(tuple(obj)))
        if isinstance(obj, set):
            return msgpack.ExtType(_SET, self.dumps(tuple(obj)))
        if isinstance(obj, int):                      # beyond 64 bits
            n = (obj.bit_length() + 8) // 8
            return msgpack.ExtType(_BIGINT, obj.to_bytes(n, "little", signed=True))
        if isinstance(obj, np.ndarray):
            if obj.dtype.str not in _DTYPES:
                raise TypeError(f"cannot store a numpy array of dtype {obj.dtype}")
            a = np.ascontiguousarray(obj)
            return msgpack.ExtType(_ARRAY, self.dumps((a.dtype.str, a.shape, a.tobytes())))
        if isinstance(obj, np.generic):
            return obj.item()
        name = f"{type(obj).__module__}.{type(obj).__qualname__}"
        entry = self._classes.get(name)
        if entry is None or type(obj) is not entry[0]:
            raise TypeError(f"cannot store a {name} as plain data")
        return msgpack.ExtType(_RECORD, self.dumps((name, tuple(getattr(obj, f) for f in entry[1]))))

    # -- decoding ----------------------------------------------------------------------
    def loads(self, data: bytes):
        try:
            return msgpack.unpackb(data, ext_hook=self._ext, raw=False, use_list=False,
                                   strict_map_key=False)
        except PlainDataError:
            raise
        except Exception as e:          # noqa: BLE001 - any malformed input
            raise PlainDataError(f"malformed plain data ({type(e).__name__}: {e})") from None

    def _ext(self, code: int, data: bytes):
        if code == _FROZENSET:
            return frozenset(self.loads(data))
        if code == _SET:
            return set(self.loads(data))
        if code == _BIGINT:
            return int.from_bytes(data, "little", signed=True)
        if code == _ARRAY:
            dtype, shape, raw = self.loads(data)
            if dtype not in _DTYPES:
                raise PlainDataError(f"numpy dtype {dtype!r} is not allowed")
            a = np.frombuffer(raw, dtype=np.dtype(dtype))
            try:
                return a.reshape(shape)
            except (TypeError, ValueError) as e:
                raise PlainDataError(f"bad array shape {shape!r}: {e}") from None
        if code == _RECORD:
            name, values = self.loads(data)
            entry = self._classes.get(name)
            if entry is None:
                raise PlainDataError(f"class {name!r} is not allowed in this data")
            cls, fields = entry
            if not isinstance(values, tuple) or len(values) != len(fields):
                raise PlainDataError(f"{name}: expected {len(fields)} fields")
            return cls(**dict(zip(fields, values)))
        raise PlainDataError(f"unknown extension type {code}")


__all__ = ["Codec", "PlainDataError"]
