"""The Parser DWA as plain data (artifacts), and the digests of its item sets.

:meth:`ParserDWA.to_data <stackmask.compile.parser_dwa.ParserDWA.to_data>` and
``from_data`` call :func:`to_data` and :func:`load_data`: edges as CSR arrays, the state
index as 16-byte digests (:func:`state_digest`), the item sets of states not compiled
yet packed apart (:func:`pack_items`). No pickle: loading builds plain values only.
"""

from __future__ import annotations

import hashlib
import marshal

import numpy as np

from .. import native
from ..plain import Codec


def to_data(dwa, digests: dict) -> dict:
    """The automaton as plain data (:mod:`stackmask.plain`: arrays, bytes, ints):
    edges as CSR arrays, the state index as 16-byte digests, the item sets of states
    not compiled yet each packed apart (decoded when a mask first needs one), the
    token sets as one blob (:meth:`WeightTable.to_data`). Memos are not kept.
    ``digests``: the state index keyed by :func:`state_digest`. Take it under the lock
    when other threads may use the automaton."""
    n = len(dwa.items)
    lens = np.fromiter((len(t) if t else 0 for t in dwa.trans), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    sym = np.empty(int(offsets[-1]), dtype=np.int32)
    dst = np.empty_like(sym)
    wid = np.empty_like(sym)
    k = 0
    for t in dwa.trans:
        for s, (d, w) in (t or {}).items():
            sym[k], dst[k], wid[k] = s, d, w
            k += 1
    has_default = np.fromiter((d is not None for d in dwa.default), dtype=bool, count=n)
    ddst = np.array([d[0] if d is not None else 0 for d in dwa.default], dtype=np.int32)
    dwid = np.array([d[1] if d is not None else 0 for d in dwa.default], dtype=np.int32)
    items = tuple(it if it is None or type(it) is bytes else pack_items(dwa.state_items(q))
                  for q, it in enumerate(dwa.items))
    init_keys = sorted(dwa.init)
    routed_keys = sorted(dwa.routed, key=lambda k: k if type(k) is tuple else (k, 0, -1))
    pair_keys = sorted(dwa.pair_init)
    # (a counted configuration whose deep ones a budget left uncompiled is not kept: it is
    # then compiled on first use, as any other not compiled)
    split = {c: terms for c, terms in dwa.count_split.items()
             if all(r in dwa.init for r, _, _, _ in terms)}
    return {
        "n_states": n, "offsets": offsets, "sym": sym, "dst": dst, "wid": wid,
        "has_default": has_default, "default_dst": ddst, "default_wid": dwid,
        "complete": np.array(dwa.complete, dtype=bool), "items": items,
        "digests": b"".join(digests), "digest_states": np.fromiter(digests.values(), dtype=np.int32,
                                                                    count=len(digests)),
        "init": np.array([(c, *dwa.init[c]) for c in init_keys], dtype=np.int64).reshape(-1, 3),
        "pair_init": np.array([(*key, *dwa.pair_init[key]) for key in pair_keys],
                              dtype=np.int64).reshape(-1, 5),
        "init_base": np.array([(c, *dwa.init_base[c]) for c in sorted(dwa.init_base)],
                              dtype=np.int64).reshape(-1, 3),
        "init_restrict": np.array(sorted((c, w) for c, w in dwa.init_restrict.items()
                                         if c in dwa.init), dtype=np.int64).reshape(-1, 2),
        # (an alias whose representative a budget left uncompiled is not kept: the
        # configuration is then compiled on first use, as any other not compiled)
        "alias": np.array([(c, a) for c, a in sorted(dwa.alias.items())
                           if a in dwa.init or a in split],
                          dtype=np.int64).reshape(-1, 2),
        "count_split": np.array([(c, *term) for c in sorted(split) for term in split[c]],
                                dtype=np.int64).reshape(-1, 5),
        "count_tables": tuple(dwa.count_tables),
        "route_min": -1 if dwa.route_min is None else int(dwa.route_min),
        # held-out start items (``ParserDWA.routed``): a configuration's key as (cfg, 0, -1)
        "routed_keys": np.array([k if type(k) is tuple else (k, 0, -1) for k in routed_keys],
                                dtype=np.int64).reshape(-1, 3),
        "routed_items": tuple(pack_items(dwa.routed[k]) for k in routed_keys),
        "eos_weight": dwa.eos_weight, "hot_weights": tuple(dwa.hot_weights),
        "special_weights": dwa.special_weights, "special_check": dwa.special_check,
        "budget_exhausted": bool(dwa.budget_exhausted),
        "budget_used_up": dwa.budget_used_up,
        "weights": dwa.weights.to_data(),
    }


def load_data(dwa, data: dict) -> dict:
    """Fill ``dwa`` (new, over the LR tables it was saved with and the token sets of
    ``data["weights"]``) with the automaton of :func:`to_data` (a malformed ``data``
    raises ``ValueError``, ``KeyError`` or ``TypeError``). Returns the state index
    (item-set digest -> state) for the automaton to keep."""
    n = int(data["n_states"])
    arrays = check_edge_arrays(n, data["offsets"], data["sym"], data["dst"], data["wid"])
    dd, dw = data["default_dst"].tolist(), data["default_wid"].tolist()
    dwa.default = [(d, w) if h else None
                   for h, d, w in zip(data["has_default"].tolist(), dd, dw)]
    dwa.complete = data["complete"].tolist()
    dwa.items = list(data["items"])
    if not (len(dwa.default) == len(dwa.complete) == len(dwa.items) == n):
        raise ValueError("automaton arrays of different lengths")
    # complete states keep their edges in the arrays until a walk first reads them
    # (ParserDWA.state_edges): a large automaton's millions of edges are not all made
    # into dicts at load; states not complete get theirs now (first uses add to them)
    edges = edge_arrays(*arrays)
    dwa.trans = [None if done else edges.state(q) for q, done in enumerate(dwa.complete)]
    dwa.edge_arrays = edges
    digests = data["digests"]
    index = dict(zip([digests[i:i + 16] for i in range(0, len(digests), 16)],
                     data["digest_states"].tolist()))
    dwa.init = {c: (q, w) for c, q, w in data["init"].tolist()}
    dwa.pair_init = {(a, b, c): (q, w) for a, b, c, q, w in data["pair_init"].tolist()}
    dwa.init_base = {c: (b, w) for c, b, w in data["init_base"].tolist()}
    if any(c not in dwa.init or b in dwa.init_base for c, (b, _) in dwa.init_base.items()):
        raise ValueError("a configuration started on a base that is not started, "
                         "or on a base with a base")
    dwa.init_restrict = {c: w for c, w in data["init_restrict"].tolist()}
    n_sets = len(dwa.weights)
    if any(c not in dwa.init or not 0 <= w < n_sets for c, w in dwa.init_restrict.items()):
        raise ValueError("a restricted start of a configuration that is not started, or "
                         "an unknown token set")
    split: dict = {}
    for c, *term in data["count_split"].tolist():
        split.setdefault(c, []).append(tuple(term))
    dwa.count_split = {c: tuple(t) for c, t in split.items()}
    dwa.count_tables = [np.asarray(t) for t in data["count_tables"]]
    n_ids = dwa.weights.n_tokens
    if any(t.ndim != 1 or len(t) != n_ids or t.dtype.kind != "u" for t in dwa.count_tables):
        raise ValueError("a count table of the wrong shape or kind")
    if any(c in dwa.init or r not in dwa.init or not -1 <= t < len(dwa.count_tables)
           for c, terms in dwa.count_split.items() for r, t, _, _ in terms):
        raise ValueError("a counted configuration that is started itself, on one that is "
                         "not started, or an unknown count table")
    dwa.alias = {c: a for c, a in data["alias"].tolist()}
    if any(a not in dwa.init and a not in dwa.count_split or c in dwa.init
           for c, a in dwa.alias.items()):
        raise ValueError("an alias of a configuration that is not started, or of one "
                         "that is started itself")
    rmin = int(data["route_min"])
    dwa.route_min = None if rmin < 0 else rmin
    keys = data["routed_keys"].tolist()
    held = data["routed_items"]
    if len(keys) != len(held):
        raise ValueError("held-out start items of different lengths")
    dwa.set_routed({(a if c < 0 else (a, b, c)): unpack_items(h)
                    for (a, b, c), h in zip(keys, held)})
    n_terms = dwa.templates.n_terminals
    if any(k not in dwa.init and k not in dwa.pair_init for k in dwa.routed) or not all(
            type(w) is int and 0 <= w < n_sets and _item_ok(it, n_terms)
            for r in dwa.routed.values() for it, w in r):
        raise ValueError("held-out start items of a start that is not made, malformed, "
                         "or of an unknown token set")
    dwa.eos_weight = data["eos_weight"]
    dwa.hot_weights = tuple(data["hot_weights"])
    sw = data["special_weights"]
    dwa.special_weights = None if sw is None else tuple((int(t), int(w)) for t, w in sw)
    dwa.special_check = int(data["special_check"])
    dwa.budget_exhausted = bool(data["budget_exhausted"])
    dwa.budget_used_up = data["budget_used_up"]
    return index


def _item_ok(it, n_terms: int) -> bool:
    """Whether ``it`` is a start item as :mod:`.templates` makes them: ``(skip, -1,
    terms, F)``, ``terms`` a tuple of terminals, ``F`` None or a bitmask of terminals."""
    if type(it) is not tuple or len(it) != 4:
        return False
    skip, lhs, terms, F = it
    return (type(skip) is int and 0 <= skip and lhs == -1 and type(terms) is tuple
            and all(type(t) is int and 0 <= t < n_terms for t in terms)
            and (F is None or type(F) is int and 0 <= F < 1 << n_terms))


def check_edge_arrays(n: int, offsets, sym, dst, wid) -> tuple:
    """``(offsets, sym, dst, wid)`` of :func:`to_data` for ``n`` states, checked: of the
    kinds written (int64 offsets, int32 edges), C-contiguous, offsets ascending from 0
    to the number of edges. Anything else raises ``ValueError`` or ``TypeError``."""
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in (offsets, sym, dst, wid)):
        raise TypeError("automaton edge arrays of the wrong kind")
    if offsets.dtype != np.int64 or any(a.dtype != np.int32 for a in (sym, dst, wid)):
        raise TypeError("automaton edge arrays of the wrong kind")
    m = len(sym)
    if len(offsets) != n + 1 or len(dst) != m or len(wid) != m or offsets[0] != 0 \
            or offsets[-1] != m or (np.diff(offsets) < 0).any():
        raise ValueError("bad automaton edge offsets")
    return tuple(np.ascontiguousarray(a) for a in (offsets, sym, dst, wid))


class EdgeArrays:
    """An automaton's edges as :func:`to_data` stores them, read one state at a time:
    ``state(q)`` is a new dict ``{stack state: (next state, token set id)}``. The
    reference of the compiled ``_native.EdgeArrays`` (its pairs and dicts are not
    tracked by the garbage collector)."""

    __slots__ = ("offsets", "sym", "dst", "wid", "n_states")

    def __init__(self, offsets, sym, dst, wid):
        self.offsets, self.sym, self.dst, self.wid = offsets, sym, dst, wid
        self.n_states = len(offsets) - 1

    def state(self, q: int) -> dict:
        if not 0 <= q < self.n_states:
            raise IndexError(q)
        a, b = int(self.offsets[q]), int(self.offsets[q + 1])
        return dict(zip(self.sym[a:b].tolist(), zip(self.dst[a:b].tolist(),
                                                     self.wid[a:b].tolist())))


def edge_arrays(offsets, sym, dst, wid):
    """The edges of checked arrays (:func:`check_edge_arrays`): compiled where the
    extension is available, else :class:`EdgeArrays`."""
    nat = native.module()
    cls = EdgeArrays if nat is None else nat.EdgeArrays
    return cls(offsets, sym, dst, wid)


_ITEMS = Codec()


def pack_items(items: tuple) -> bytes:
    """A state's ``((item, weight id), ...)`` as plain data (:func:`unpack_items`)."""
    return _ITEMS.dumps(items)


def unpack_items(data: bytes) -> tuple:
    """The items :func:`pack_items` packed (tuples of ints, ``F`` None or an int)."""
    return _ITEMS.loads(data)


def state_digest(key) -> bytes:
    """128-bit digest (SHA-256's first half, as token sets') of a state's distinct
    ``(item, weight)`` pairs (any iterable of them), independent of their order: each pair
    in marshal format 2 (no shared references, so equal pairs give equal bytes;
    self-delimiting, so the sorted concatenation identifies the set)."""
    return hashlib.sha256(b"".join(sorted([marshal.dumps(p, 2) for p in key]))).digest()[:16]


def digest_index(ids: dict) -> dict:
    """A state index keyed by item sets, keyed by their digests instead."""
    return {state_digest(k): q for k, q in ids.items()}
