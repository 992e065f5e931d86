"""The regex IR (:mod:`stackmask.lexer.ir`) written out as Python regexes: over the decoded
text (:func:`to_python`), or over the *JSON text* of a string (:func:`to_json_string`),
where every character may be written raw (where JSON allows it), as a short escape
(``\\n``, ``\\"``, ``\\/``...) or as ``\\uXXXX`` (any hex case; characters beyond
U+FFFF as a surrogate pair): the emitted regex matches exactly the JSON spellings of the
strings the IR accepts. With ``escape_beyond_ascii=False`` the characters beyond ASCII and
``/`` are spelled raw only, as ``json.dumps(..., ensure_ascii=False)`` writes them (a policy
for strings whose escape spellings are too large to lex).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...lexer.ir import ANY, MAX_CP, iv_contains, iv_intersect
from ...lexer.ir import normalize_intervals as iv_norm
from . import match as _match

__all__ = ["to_python", "fullmatch", "re_fullmatch", "json_char_class", "to_json_string", "ESCAPABLE",
           "ESCAPABLE_ASCII", "RAW_OK"]


def _cp_text(c: int) -> str:
    if c < 0x80 and (chr(c).isalnum()):
        return chr(c)
    if c < 0x100:
        return "\\x%02x" % c
    if c < 0x10000:
        return "\\u%04x" % c
    return "\\U%08x" % c


def _class_text(ivs) -> str:
    if len(ivs) == 1 and ivs[0][0] == ivs[0][1]:
        return _cp_text(ivs[0][0])
    parts = []
    for lo, hi in ivs:
        if lo == hi:
            parts.append(_cp_text(lo))
        elif hi == lo + 1:
            parts.append(_cp_text(lo) + _cp_text(hi))
        else:
            parts.append(_cp_text(lo) + "-" + _cp_text(hi))
    return "[" + "".join(parts) + "]"


def _emit(x, leaf) -> str:
    k = x[0]
    if k == "c":
        return leaf(x[1])
    if k == "s":
        if not x[1]:
            return "(?:)"
        return "".join(_group(y, leaf, in_seq=True) for y in x[1])
    if k == "a":
        if not x[1]:
            return "[^\\x00-\\U0010ffff]"     # matches nothing
        return "|".join(_emit(y, leaf) for y in x[1])
    if k in ("L", "X"):
        raise ValueError("a length-limited node or one with lookaheads below the top of a "
                         "regex has no spelling (resolve_limits writes it out)")
    _, y, lo, hi = x
    inner = _group(y, leaf, in_seq=False, atom=True)
    if lo == 0 and hi is None:
        q = "*"
    elif lo == 1 and hi is None:
        q = "+"
    elif lo == 0 and hi == 1:
        q = "?"
    elif hi is None:
        q = "{%d,}" % lo
    elif lo == hi:
        q = "{%d}" % lo
    else:
        q = "{%d,%d}" % (lo, hi)
    return inner + q


def _group(y, leaf, in_seq: bool, atom: bool = False) -> str:
    s = _emit(y, leaf)
    k = y[0]
    if k == "a" or (atom and (k in ("s", "r") or (k == "c" and not _is_atomic_leaf(s)))):
        return "(?:" + s + ")"
    return s


def _is_atomic_leaf(s: str) -> bool:
    return (s.startswith("[") and s.endswith("]") and s.count("[") == 1) or \
        len(s) == 1 or re.fullmatch(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})", s) is not None


def to_python(x) -> str:
    """Python ``re`` pattern (over decoded text) for the AST; a length-limited AST
    (``("L", y, lo, hi)``) as a lookahead on the length, one with lookaheads
    (``("X", y, looks)``) as lookaheads to the end (``re.fullmatch`` semantics)."""
    if x[0] == "X":
        return "".join(("(?=" if pos else "(?!") + "(?:" + _emit(y, _class_text) + r")\Z)"
                       for pos, y in x[2]) + "(?:" + to_python(x[1]) + ")"
    if x[0] == "L":
        return _length_lookahead(x, "(?s:.)", r"\Z") + "(?:" + _emit(x[1], _class_text) + ")"
    return _emit(x, _class_text)


def _length_lookahead(x, char: str, end: str) -> str:
    _, _, lo, hi = x
    q = "{%d,}" % lo if hi is None else "{%d,%d}" % (lo, hi)
    return "(?=(?:" + char + ")" + q + end + ")"


def fullmatch(x, s: str) -> bool:
    """Whether the IR ``x`` matches the whole of ``s``, read off the IR (:mod:`.match`)."""
    return _match.fullmatch(x, s)


def re_fullmatch(x, s: str) -> bool:
    """:func:`fullmatch` through Python's ``re`` (:func:`to_python`): the reference."""
    return _compiled(x).fullmatch(s) is not None


@lru_cache(maxsize=1024)
def _compiled(x):
    return re.compile(to_python(x), re.S)


# -- JSON string spelling -------------------------------------------------------

_SHORT = {0x22: '"', 0x5C: "\\\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
RAW_OK = iv_norm([(0x20, 0x21), (0x23, 0x5B), (0x5D, MAX_CP)])
_BMP = iv_norm([(0, 0xFFFF)])
_ASTRAL = ((0x10000, MAX_CP),)
_HEX = "0123456789abcdef"


def _hex_digit_class(a: int, b: int) -> str:
    chars = set()
    for v in range(a, b + 1):
        chars.add(_HEX[v])
        chars.add(_HEX[v].upper())
    if len(chars) == 1:
        return next(iter(chars))
    cs = sorted(chars)
    parts, i = [], 0
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and ord(cs[j + 1]) == ord(cs[j]) + 1:
            j += 1
        parts.append(cs[i] if i == j else (cs[i] + cs[j] if j == i + 1 else cs[i] + "-" + cs[j]))
        i = j + 1
    return "[" + "".join(parts) + "]"


def _hex_range(lo: int, hi: int, width: int) -> list[str]:
    """Alternatives (regex texts) for the ``width``-digit hex spellings of lo..hi."""
    if width == 0:
        return [""]
    base = 16 ** (width - 1)
    dlo, rlo = divmod(lo, base)
    dhi, rhi = divmod(hi, base)
    full_rest = "" if width == 1 else ("[0-9a-fA-F]" + ("{%d}" % (width - 1) if width > 2 else ""))
    if dlo == dhi:
        return [_hex_digit_class(dlo, dlo) + r for r in _hex_range(rlo, rhi, width - 1)]
    out = []
    first, last = dlo, dhi
    if rlo != 0:
        out += [_hex_digit_class(dlo, dlo) + r for r in _hex_range(rlo, base - 1, width - 1)]
        first = dlo + 1
    tail = []
    if rhi != base - 1:
        tail = [_hex_digit_class(dhi, dhi) + r for r in _hex_range(0, rhi, width - 1)]
        last = dhi - 1
    if first <= last:
        out.append(_hex_digit_class(first, last) + full_rest)
    return out + tail


def _hex_set(ivs) -> str:
    alts = []
    for lo, hi in ivs:
        alts.extend(_hex_range(lo, hi, 4))
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _pair_alts(astral) -> list[str]:
    """Surrogate-pair spellings (after the first ``\\u``) of astral code points."""
    out = []
    for lo, hi in astral:
        hlo, llo = 0xD800 + ((lo - 0x10000) >> 10), 0xDC00 + ((lo - 0x10000) & 0x3FF)
        hhi, lhi = 0xD800 + ((hi - 0x10000) >> 10), 0xDC00 + ((hi - 0x10000) & 0x3FF)
        if hlo == hhi:
            out.append(_hex_set(((hlo, hlo),)) + "\\\\u" + _hex_set(((llo, lhi),)))
            continue
        first, last = hlo, hhi
        if llo != 0xDC00:
            out.append(_hex_set(((hlo, hlo),)) + "\\\\u" + _hex_set(((llo, 0xDFFF),)))
            first = hlo + 1
        tail = None
        if lhi != 0xDFFF:
            tail = _hex_set(((hhi, hhi),)) + "\\\\u" + _hex_set(((0xDC00, lhi),))
            last = hhi - 1
        if first <= last:
            out.append(_hex_set(((first, last),)) + "\\\\u" + _hex_set(((0xDC00, 0xDFFF),)))
        if tail:
            out.append(tail)
    return out


#: the characters a string may write escaped: all but the printable ASCII ones that JSON
#: lets be written raw (``"``, ``\\`` and ``/`` stay escapable). JSON writers escape
#: nothing else (``json.dumps`` with or without ``ensure_ascii`` included): a ``\\u0061``
#: for ``a`` is refused (policy). Each spelling of a character is a lexer state of its own,
#: so this keeps every key and string terminal small, and alike (keys and values share
#: their escape states).
ESCAPABLE = iv_norm([(0, 0x1F), (0x22, 0x22), (0x2F, 0x2F), (0x5C, 0x5C), (0x7F, MAX_CP)])

#: the escapable characters of a string spelled raw (``to_json_string(x,
#: escape_beyond_ascii=False)``): as ``json.dumps(..., ensure_ascii=False)`` writes them,
#: characters beyond ASCII and ``/`` raw. One character of a wide class such as
#: ``[\p{L}\p{N}]`` is hundreds of lexer states in its ``\uXXXX`` spellings; the
#: ``\/``, ``\u002f`` spellings of ``/`` are five states at each position of an ARN's
#: counted segments, times each count of a length beside it.
ESCAPABLE_ASCII = iv_norm([(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0x7F, 0x7F)])


@lru_cache(maxsize=8192)
def json_char_class(ivs: tuple, escape_beyond_ascii: bool = True) -> str:
    """Regex (over JSON text) for one character from ``ivs``, spelled as JSON
    writers spell it: raw (not ``"``, ``\\`` or a control character), or, for
    the characters of :data:`ESCAPABLE` (:data:`ESCAPABLE_ASCII` when not
    ``escape_beyond_ascii``), a short escape, ``\\uXXXX`` in any hex case, or a
    surrogate pair of escapes."""
    raw = iv_intersect(ivs, RAW_OK)
    ivs = iv_intersect(ivs, ESCAPABLE if escape_beyond_ascii else ESCAPABLE_ASCII)
    esc = []
    shorts = [s for c, s in sorted(_SHORT.items()) if iv_contains(ivs, c)]
    if shorts:
        esc.append(shorts[0] if len(shorts) == 1 else "[" + "".join(shorts) + "]")
    u = []
    bmp = iv_intersect(ivs, _BMP)
    if bmp:
        u.append(_hex_set(bmp))
    astral = iv_intersect(ivs, _ASTRAL)
    if astral:
        u.extend(_pair_alts(astral))
    if u:
        esc.append("u" + (u[0] if len(u) == 1 else "(?:" + "|".join(u) + ")"))
    alts = []
    if raw:
        alts.append(_class_text(raw))
    if esc:
        alts.append("\\\\" + (esc[0] if len(esc) == 1 else "(?:" + "|".join(esc) + ")"))
    if len(alts) == 1:
        return alts[0] if raw else "(?:" + alts[0] + ")"
    return "(?:" + "|".join(alts) + ")"


def to_json_string(x, escape_beyond_ascii: bool = True) -> str:
    """Python regex over the JSON text *between the quotes* of the strings in
    the AST's language (every spelling :func:`json_char_class` allows; characters
    beyond ASCII and ``/`` raw only where not ``escape_beyond_ascii``). A length-limited AST
    (``("L", y, lo, hi)``) starts with a lookahead that counts the characters up to
    the closing quote, ``(?=(?:CHAR){lo,hi}")``: the regex is meant to stand between
    the quotes of a terminal (the lexer reads a lookahead at a terminal's top level as
    an intersection); an AST with lookaheads (``("X", y, looks)``) starts with one
    lookahead (negative: ``(?!...")``) per entry of ``looks``."""
    def leaf(ivs):
        return json_char_class(ivs, escape_beyond_ascii)
    if x[0] == "X":
        # each lookahead reads to the closing quote: the lexer intersects (subtracts) the
        # automata of a terminal's lookaheads at its top level
        return "".join(("(?=" if pos else "(?!") + "(?:" + _emit(y, leaf) + ')")'
                       for pos, y in x[2]) + "(?:" + to_json_string(x[1], escape_beyond_ascii) + ")"
    if x[0] == "L":
        # the length side counts characters in every spelling (the pattern side allows
        # the spellings): then all length sides read one body, and the combined lexer
        # counts them on one chain (``stackmask.lexer.combined``)
        return (_length_lookahead(x, json_char_class(ANY[1]), '"') + "(?:" + _emit(x[1], leaf) + ")")
    return _emit(x, leaf)

