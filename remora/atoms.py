"""The numeric atom types (contract §2 and §10): one table that every stage reads.

``Int`` and ``Float`` are 64-bit; ``Int32`` and ``Float32`` are their single-width
counterparts.  The checker reads which types an overloaded primitive or a restricted kind may
stand for, and how to convert one type into another (for messages); the backends read each
type's width and NumPy dtype name; the printers read how a value of each type is written.
Kept apart from every stage (and free of imports) so that each can ask without depending on
another -- as :mod:`remora.limits` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Number:
    """One numeric atom type: its name, whether it is an integer or a floating-point type, its
    width in bits, the NumPy dtype that holds it (by name: no stage but the backends imports
    NumPy), and how conversion primitives spell it (``int32`` in ``int->int32``)."""

    name: str
    integral: bool
    bits: int
    dtype: str
    spelling: str


NUMBERS: dict[str, Number] = {
    n.name: n
    for n in (
        Number("Int", True, 64, "int64", "int"),
        Number("Float", False, 64, "float64", "float"),
        Number("Int32", True, 32, "int32", "int32"),
        Number("Float32", False, 32, "float32", "float32"),
    )
}
#: every numeric atom type, every integer one, every floating-point one
NUMERIC = frozenset(NUMBERS)
INTEGRAL = frozenset(n for n, t in NUMBERS.items() if t.integral)
FLOATING = frozenset(n for n, t in NUMBERS.items() if not t.integral)
#: the base atom types, in the order messages list them
BASE_ORDER = ("Int", "Float", "Int32", "Float32", "Bool")
#: the kinds of type variables restricted to some numeric types (spec D12, D56): a variable of
#: such a kind is an ``Atom`` type that can only be one of these
RESTRICTED_KINDS: dict[str, frozenset[str]] = {"Numeric": NUMERIC, "Floating": FLOATING}
#: the 64-bit representations (what needs JAX's 64-bit mode)
WIDE = frozenset(n for n, t in NUMBERS.items() if t.bits == 64)


def in_order(names) -> list[str]:
    """Base type names in the order messages list them."""
    return sorted(names, key=lambda n: BASE_ORDER.index(n) if n in BASE_ORDER else len(BASE_ORDER))


def is_float(rep: object) -> bool:
    """Whether ``rep`` (a representation's name) is a floating-point type."""
    return rep in FLOATING


def is_integral(rep: object) -> bool:
    """Whether ``rep`` (a representation's name) is an integer type."""
    return rep in INTEGRAL


def integral_like(name: str) -> str:
    """The integer type as wide as the floating-point type ``name`` (what ``floor`` makes of it
    when its context does not say): ``Int`` for ``Float``, ``Int32`` for ``Float32``."""
    bits = NUMBERS[name].bits
    return next(n for n in INTEGRAL if NUMBERS[n].bits == bits)


def int_range(name: str) -> tuple[int, int]:
    """The least and greatest value of the integer type ``name``."""
    bits = NUMBERS[name].bits
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def conversion_name(given: str, wanted: str) -> str:
    """The primitive that converts ``given`` atoms to ``wanted`` ones, as a message names it:
    ``int->float32``; a floating-point value becomes an integer by one of the four roundings."""
    if NUMBERS[wanted].integral and not NUMBERS[given].integral:
        return "floor, ceiling, round or truncate"
    return f"{NUMBERS[given].spelling}->{NUMBERS[wanted].spelling}"


def conversions() -> list[tuple[str, str]]:
    """Every (from, to) pair of numeric types that a conversion primitive named ``from->to``
    converts: all ordered pairs but a floating-point type to an integer one (which is
    ``floor``/``ceiling``/``round``/``truncate``, saying how to round)."""
    return [(a, b) for a in NUMBERS for b in NUMBERS
            if a != b and not (NUMBERS[b].integral and not NUMBERS[a].integral)]


# ---------------------------------------------------------------------------
# Float32 literals


_F32_MANTISSA = 24
_F32_MIN_EXP = -149  # the exponent of the least subnormal, 2**-149
_F32_MAX = (2 - Fraction(1, 2**23)) * 2**127


def round_to_float32(text: str) -> float | None:
    """The ``float32`` nearest to the decimal number ``text`` (ties to even), as a Python float
    (which holds every ``float32`` exactly), or None when it is too large for one.  Rounded
    from the decimal itself: rounding it to a 64-bit float first and then to 32 bits can round
    twice in the same direction and miss the nearest."""
    exact = Fraction(text)
    if exact == 0:
        return -0.0 if text.lstrip().startswith("-") else 0.0
    sign = -1 if exact < 0 else 1
    exact = abs(exact)
    exponent = exact.numerator.bit_length() - exact.denominator.bit_length()
    if Fraction(2) ** exponent > exact:
        exponent -= 1  # now 2**exponent <= exact < 2**(exponent + 1)
    step = Fraction(2) ** max(exponent - (_F32_MANTISSA - 1), _F32_MIN_EXP)
    units, rest = divmod(exact, step)
    if rest > step / 2 or (rest == step / 2 and units % 2):
        units += 1
    value = units * step
    if value > _F32_MAX:
        return None
    return sign * float(value)
