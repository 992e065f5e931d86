"""stackmask.plain: plain values round-trip; malformed or disallowed input is refused."""

from __future__ import annotations

from dataclasses import dataclass

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackmask.plain import Codec, PlainDataError


@dataclass(frozen=True)
class Point:
    x: int
    y: tuple = ()
    _derived: int = 0          # not stored: recomputed by the class


@dataclass(frozen=True)
class Other:
    a: int


scalars = st.none() | st.booleans() | st.integers(-(1 << 200), 1 << 200) | st.floats(
    allow_nan=False) | st.text(max_size=8) | st.binary(max_size=8)
hashables = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(
    inner.filter(lambda v: not isinstance(v, float)), max_size=3), max_leaves=8)
values = st.recursive(hashables, lambda inner: st.lists(inner, max_size=4).map(tuple)
                      | st.dictionaries(hashables, inner, max_size=4), max_leaves=20)


@given(values)
@settings(max_examples=300, deadline=None)
def test_values_round_trip(v):
    c = Codec()
    assert c.loads(c.dumps(v)) == v


def test_lists_come_back_as_tuples_and_sets_as_sets():
    c = Codec()
    assert c.loads(c.dumps([1, [2, 3]])) == (1, (2, 3))
    out = c.loads(c.dumps({"s": {1, 2}, "f": frozenset({3})}))
    assert type(out["s"]) is set and type(out["f"]) is frozenset


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "float64", "bool"])
def test_arrays_round_trip(dtype):
    c = Codec()
    a = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    b = c.loads(c.dumps(a))
    assert b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)


def test_object_arrays_are_refused():
    with pytest.raises(TypeError):
        Codec().dumps(np.array([object()], dtype=object))
    bad = msgpack.ExtType(4, Codec().dumps(("|O", (1,), b"\0" * 8)))
    with pytest.raises(PlainDataError, match="not allowed"):
        Codec().loads(msgpack.packb(bad))


def test_listed_dataclasses_round_trip_without_derived_fields():
    c = Codec([Point])
    p = Point(3, (1, 2), _derived=9)
    q = c.loads(c.dumps(p))
    assert q == Point(3, (1, 2)) and q._derived == 0


def test_unlisted_classes_are_refused_both_ways():
    with pytest.raises(TypeError, match="cannot store"):
        Codec([Point]).dumps(Other(1))
    data = Codec([Other]).dumps(Other(1))
    with pytest.raises(PlainDataError, match="not allowed"):
        Codec([Point]).loads(data)


@pytest.mark.parametrize("data", [b"\xc1", b"\x92\x01", msgpack.packb(msgpack.ExtType(42, b"")),
                                  msgpack.packb(msgpack.ExtType(5, msgpack.packb(("x",))))])
def test_malformed_input_raises_plain_data_error(data):
    with pytest.raises(PlainDataError):
        Codec([Point]).loads(data)


def test_wrong_field_count_is_refused():
    data = msgpack.packb(msgpack.ExtType(5, msgpack.packb((f"{__name__}.Point", (1, 2, 3)))))
    with pytest.raises(PlainDataError, match="fields"):
        Codec([Point]).loads(data)
