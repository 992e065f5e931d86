"""Number languages: digit-range and decimal-comparison regexes, exact ``multipleOf``
residue automata, number spellings."""

from __future__ import annotations

import json
import math
from decimal import Decimal

from .. import ecma_regex as R
from ..ecma_regex import EPS, NONE, TooComplex, alt, ch, lit, rep, seq
from .common import num


D = ch([(0x30, 0x39)])
D19 = ch([(0x31, 0x39)])
DSTAR = rep(D, 0, None)
DPLUS = rep(D, 1, None)


def _dig(a: int, b: int):
    return ch([(0x30 + a, 0x30 + b)])


UINT = alt(lit("0"), seq(D19, DSTAR))
FRAC = seq(lit("."), DPLUS)
EXP = seq(ch([(0x45, 0x45), (0x65, 0x65)]), rep(ch([(0x2B, 0x2B), (0x2D, 0x2D)]), 0, 1), DPLUS)
MINUS = lit("-")
NUMBER = seq(rep(MINUS, 0, 1), UINT, rep(FRAC, 0, 1), rep(EXP, 0, 1))
DEC = seq(UINT, rep(FRAC, 0, 1))                  # unsigned plain decimal
UNS_EXP = seq(UINT, rep(FRAC, 0, 1), rep(EXP, 0, 1))
ZERO_EXP = seq(lit("0"), rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1), rep(EXP, 0, 1))
POS_EXP = seq(alt(seq(lit("0."), DSTAR, D19, DSTAR), seq(D19, DSTAR, rep(FRAC, 0, 1))), rep(EXP, 0, 1))


def _fixed_width(a: str, b: str):
    """Digit strings of len(a) between a and b (same length)."""
    if a == b:
        return lit(a)
    if len(a) == 1:
        return _dig(int(a), int(b))
    if a[0] == b[0]:
        return seq(lit(a[0]), _fixed_width(a[1:], b[1:]))
    k = len(a) - 1
    parts = []
    lo_d, hi_d = int(a[0]), int(b[0])
    if a[1:] != "0" * k:
        parts.append(seq(lit(a[0]), _fixed_width(a[1:], "9" * k)))
        lo_d += 1
    tail = None
    if b[1:] != "9" * k:
        tail = seq(lit(b[0]), _fixed_width("0" * k, b[1:]))
        hi_d -= 1
    if lo_d <= hi_d:
        parts.append(seq(_dig(lo_d, hi_d), rep(D, k, k)))
    if tail is not None:
        parts.append(tail)
    return alt(*parts)


def nat_range(lo: int, hi):
    """Canonical decimal spellings of the naturals in [lo, hi] (hi None = inf)."""
    lo = max(lo, 0)
    if hi is not None and hi < lo:
        return NONE
    alts = []
    if lo == 0:
        alts.append(lit("0"))
        lo = 1
        if hi is not None and hi < 1:
            return alt(*alts)
    dlo = len(str(lo))
    dhi = len(str(hi)) if hi is not None else dlo
    for d in range(dlo, dhi + 1):
        a = max(lo, 10 ** (d - 1))
        b = 10 ** d - 1 if hi is None else min(hi, 10 ** d - 1)
        if a <= b:
            alts.append(_fixed_width(str(a), str(b)))
    if hi is None:
        alts.append(seq(D19, rep(D, dlo, None)))
    return alt(*alts)


def int_range(lo, hi):
    """Integer literals (``-0`` included) with value in [lo, hi] (None = unbounded)."""
    alts = []
    if hi is None or hi >= 0:
        alts.append(nat_range(max(lo, 0) if lo is not None else 0, hi))
    if lo is None or lo < 0:
        top = None if lo is None else -lo          # |x| <= top
        bottom = 1 if hi is None or hi >= 0 else -hi
        alts.append(seq(MINUS, nat_range(bottom, top)))
    if (lo is None or lo <= 0) and (hi is None or hi >= 0):
        alts.append(lit("-0"))
    return alt(*alts)


def _f_ge(F: str):
    if not F:
        return DSTAR
    d = int(F[0])
    a = [seq(_dig(d + 1, 9), DSTAR)] if d < 9 else []
    return alt(*a, seq(lit(F[0]), _f_ge(F[1:])))


def _f_gt(F: str):
    if not F:
        return seq(DSTAR, D19, DSTAR)
    d = int(F[0])
    a = [seq(_dig(d + 1, 9), DSTAR)] if d < 9 else []
    return alt(*a, seq(lit(F[0]), _f_gt(F[1:])))


def _f_le(F: str):
    if not F:
        return rep(lit("0"), 0, None)
    d = int(F[0])
    a = [seq(_dig(0, d - 1), DSTAR)] if d > 0 else []
    return alt(*a, seq(lit(F[0]), _f_le(F[1:])))


def _f_lt(F: str):
    if not F:
        return NONE
    d = int(F[0])
    a = [seq(_dig(0, d - 1), DSTAR)] if d > 0 else []
    return alt(*a, seq(lit(F[0]), _f_lt(F[1:])))


def _split_dec(a: Decimal) -> tuple[int, str]:
    s = format(a, "f")
    if "." in s:
        i, f = s.split(".")
    else:
        i, f = s, ""
    return int(i), f.rstrip("0")


def pos_cmp(a: Decimal, op: str):
    """Unsigned plain decimals x with ``x op a`` (a >= 0)."""
    I, F = _split_dec(a)
    fracopt = rep(FRAC, 0, 1)
    dot = lit(".")
    if op in (">=", ">"):
        if op == ">=":
            suffix = fracopt if not F else seq(dot, _f_ge(F))
        else:
            suffix = seq(dot, _f_gt(F))
        return alt(seq(nat_range(I + 1, None), fracopt), seq(lit(str(I)), suffix))
    zeros = seq(dot, rep(lit("0"), 1, None))
    if op == "<=":
        suffix = alt(EPS, zeros) if not F else alt(EPS, seq(dot, _f_le(F)))
    else:
        suffix = NONE if not F else alt(EPS, seq(dot, _f_lt(F)))
    low = seq(nat_range(0, I - 1), fracopt) if I >= 1 else NONE
    return alt(low, seq(lit(str(I)), suffix))


def dec_cmp(a: Decimal, op: str):
    """Signed plain decimals x with ``x op a``."""
    neg = lambda x: seq(MINUS, x)  # noqa: E731
    if op == ">=":
        return pos_cmp(a, ">=") if a > 0 else alt(DEC, neg(pos_cmp(-a, "<=")))
    if op == ">":
        return pos_cmp(a, ">") if a >= 0 else alt(DEC, neg(pos_cmp(-a, "<")))
    if op == "<=":
        return alt(pos_cmp(a, "<="), neg(DEC)) if a >= 0 else neg(pos_cmp(-a, ">="))
    return alt(pos_cmp(a, "<"), neg(DEC)) if a > 0 else neg(pos_cmp(-a, ">"))


def zero_cmp(op: str):
    """Numbers (exponents allowed) compared with 0."""
    return {">=": alt(UNS_EXP, seq(MINUS, ZERO_EXP)), ">": POS_EXP,
            "<=": alt(ZERO_EXP, seq(MINUS, UNS_EXP)), "<": seq(MINUS, POS_EXP)}[op]


def _decimal_parts(m: Decimal) -> tuple[int, int]:
    """``(a, k)`` with ``m == a / 10**k``, ``a`` a positive integer, ``k >= 0`` minimal."""
    m = m.normalize()
    k = max(0, -m.as_tuple().exponent)
    return int(m.scaleb(k)), k


def lcm_multiple(x, y):
    """The least common multiple of two positive multipleOf values (a number is a
    multiple of both iff it is a multiple of it), or None if either is not positive."""
    a, b = num(x), num(y)
    if a is None or b is None or a <= 0 or b <= 0:
        return None
    (p, k1), (q, k2) = _decimal_parts(a), _decimal_parts(b)
    k = max(k1, k2)
    p, q = p * 10 ** (k - k1), q * 10 ** (k - k2)
    v = Decimal(p * q // math.gcd(p, q)).scaleb(-k).normalize()
    return int(v) if v == v.to_integral_value() else float(str(v))


#: plain decimal numbers (no exponent) and every plain spelling of an integer value
PLAIN = seq(rep(MINUS, 0, 1), DEC)
INT_SPELLINGS = seq(rep(MINUS, 0, 1), UINT, rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1))
#: every integer literal (the "integer" type's spellings), and the zero fraction that
#: spells the same value (1 -> 1.0, 1.00)
INT_LITERALS = int_range(None, None)
INT_ZEROS = rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1)


def value_spellings(v):
    """Every plain decimal spelling of the number ``v`` (``1``, ``1.0``, ``1.00``; ``0``,
    ``-0``, ``-0.0``...), to remove a value from a number language exactly."""
    x = num(v)
    zeros = rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1)
    if x == 0:
        return seq(rep(MINUS, 0, 1), lit("0"), zeros)
    text = format(abs(x).normalize(), "f")
    sign = rep(MINUS, 1, 1) if x < 0 else EPS
    if "." in text:
        return seq(sign, lit(text), rep(lit("0"), 0, None))
    return seq(sign, lit(text), zeros)


def number_literal(v):
    """Spellings accepted for an enum/const number."""
    if isinstance(v, int):
        return lit(str(v))
    s = json.dumps(v)
    if v.is_integer():
        return alt(lit(s), lit(str(int(v))))
    return lit(s)


class NumbersMixin:
    """Methods of the converter (:class:`..converter.Converter`) for numbers."""

    def number_cap(self, ast):
        """``max_number_digits``: at most N digits in the integer part, the
        fraction and the exponent of an unbounded number (for other number
        languages every unbounded digit run is capped at N)."""
        cap = self.opts["max_number_digits"]
        if cap is None:
            return ast
        if ast == NUMBER:
            n = max(1, int(cap))
            uint = alt(lit("0"), seq(D19, rep(D, 0, n - 1)))
            return seq(rep(MINUS, 0, 1), uint, rep(seq(lit("."), rep(D, 1, n)), 0, 1),
                       rep(seq(ch([(0x45, 0x45), (0x65, 0x65)]), rep(ch([(0x2B, 0x2B), (0x2D, 0x2D)]), 0, 1),
                               rep(D, 1, n)), 0, 1))
        return R.cap_repeats(ast, cap)

    # -- numbers --------------------------------------------------------------------------
    def bounds(self, d):
        lo = hi = None
        lo_x = hi_x = False
        if num(d.get("minimum")) is not None:
            lo = num(d["minimum"])
            if d.get("exclusiveMinimum") is True:
                lo_x = True
        if num(d.get("maximum")) is not None:
            hi = num(d["maximum"])
            if d.get("exclusiveMaximum") is True:
                hi_x = True
        em = num(d.get("exclusiveMinimum"))
        if em is not None and (lo is None or em >= lo):
            lo, lo_x = em, True
        eM = num(d.get("exclusiveMaximum"))
        if eM is not None and (hi is None or eM <= hi):
            hi, hi_x = eM, True
        return lo, lo_x, hi, hi_x

    def number_lang(self, d, ptr, integer: bool):
        lo, lo_x, hi, hi_x = self.bounds(d)
        mult = d.get("multipleOf")
        m = num(mult)
        if mult is not None and (m is None or m <= 0):
            self.problem("multipleOf", ptr + "/multipleOf", "must be a positive number")
            m = None
        if integer or (m is not None and m == m.to_integral_value() and m >= 1):
            ilo = None if lo is None else (int(math.floor(lo)) + 1 if lo_x and lo == lo.to_integral_value()
                                           else int(math.ceil(lo)))
            ihi = None if hi is None else (int(math.ceil(hi)) - 1 if hi_x and hi == hi.to_integral_value()
                                           else int(math.floor(hi)))
            ast = int_range(ilo, ihi)
            if m is not None:
                a, k = _decimal_parts(m)
                step = a // math.gcd(a, 10 ** k)     # the integers that are multiples of a/10^k
                if step > 1:
                    ast = self.multiple_of(ast, step, 0, ptr)
            if not integer:
                # integral numbers may carry a zero fraction
                ast = seq(ast, rep(seq(lit("."), rep(lit("0"), 1, None)), 0, 1))
            return self.number_cap(ast)
        if lo is None and hi is None and m is None:
            return self.number_cap(NUMBER)
        try:
            if m is None and (lo is None or lo == 0) and (hi is None or hi == 0):
                parts = []
                if lo is not None:
                    parts.append(zero_cmp(">" if lo_x else ">="))
                if hi is not None:
                    parts.append(zero_cmp("<" if hi_x else "<="))
                ast = R.intersect(*parts, limit=20000)
            else:
                parts = []
                if lo is not None:
                    parts.append(dec_cmp(lo, ">" if lo_x else ">="))
                if hi is not None:
                    parts.append(dec_cmp(hi, "<" if hi_x else "<="))
                if not parts:
                    parts.append(seq(rep(MINUS, 0, 1), DEC))
                ast = R.intersect(*parts, limit=20000) if len(parts) > 1 else parts[0]
        except TooComplex:
            self.problem("minimum", ptr, "number bounds too complex")
            return self.number_cap(NUMBER)
        if m is not None:
            ast = self.multiple_of(ast, *_decimal_parts(m), ptr)
        return self.number_cap(ast)

    def multiple_of(self, ast, a: int, k: int, ptr):
        """Intersect an AST of plain number literals (``-?int(.digits)?``, no exponent)
        with the multiples of ``a / 10**k``: ``x`` is one iff ``x * 10**k`` is an integer
        divisible by ``a``, a regular property of the digits (a residue automaton)."""
        if a == 1 and k == 0:
            return ast
        dead = 2 + a * (k + 2)
        if dead > 20000:
            self.problem("multipleOf", ptr + "/multipleOf", "divisor too large")
            return ast
        digits = [lit(str(i)) for i in range(10)]
        atoms = R.atom_partition(ast, *digits, MINUS, lit("."))
        idx = {}
        for i, (x, y) in enumerate(atoms):
            if x == y and 0x30 <= x <= 0x39:
                idx[i] = ("d", x - 0x30)
            elif x == y == 0x2D:
                idx[i] = ("-", 0)
            elif x == y == 0x2E:
                idx[i] = (".", 0)
        pw = [pow(10, e, a) for e in range(k + 1)]
        # states: 0 start, 1 after '-', 2 + r: integer part = r (mod a),
        # 2 + a + j*a + r: j fraction digits read, x * 10**k = r (mod a) so far; dead
        trans, final = [], []
        for s in range(dead + 1):
            row = [dead] * len(atoms)
            for i, (kind, v) in idx.items():
                if s == 0 and kind == "-":
                    row[i] = 1
                elif kind == "d" and s in (0, 1):
                    row[i] = 2 + v % a
                elif 2 <= s < 2 + a:
                    r = s - 2
                    if kind == "d":
                        row[i] = 2 + (r * 10 + v) % a
                    elif kind == ".":
                        row[i] = 2 + a + r * pw[k] % a
                elif 2 + a <= s < dead and kind == "d":
                    j, r = divmod(s - 2 - a, a)
                    if j < k:
                        row[i] = 2 + a + (j + 1) * a + (r + v * pw[k - j - 1]) % a
                    elif v == 0:
                        row[i] = s          # digits past 10**-k must be 0
            trans.append(row)
            final.append((2 <= s < 2 + a and (s - 2) * pw[k] % a == 0)
                         or (2 + a <= s < dead and (s - 2 - a) % a == 0))
        div = R.Dfa(atoms, trans, final).minimize()
        base = R.Dfa.from_ast(ast, atoms)
        try:
            return base.product(div, lambda x, y: x and y).to_ast(20000)
        except TooComplex:
            self.problem("multipleOf", ptr + "/multipleOf", "divisibility regex too large")
            return ast
