"""Scalar primitives (contract §2): each consumes and produces scalar cells.

Every implementation is one backend call over the whole frame (``ctx.xp``, the array-API
elementwise functions): the engine hands it arrays whose leading ``ctx.frame`` axes are the
(lifted) frame and whose cells are scalars, so the same function serves one cell (the
reference engine's δ) and a million (the whole-frame engine).  The backend's elementwise
functions are frame independent, so both give each cell the same atoms.  Run-time checks are
``ctx.require`` on a Bool array, never a Python ``if`` on the data.
"""

from __future__ import annotations

from ..atoms import FLOATING, INTEGRAL, NUMBERS, NUMERIC, conversions, int_range
from .registry import ANY_ATOM, Primitive, define

NUM = NUMERIC
EQ = NUMERIC | {"Bool"}


def _sig(params: list[str], result: str) -> str:
    return "(-> (" + " ".join(f"(Arr {p} (Shp))" for p in params) + f") (Arr {result} (Shp)))"


def scalar(name: str, params: list[str], result: str, impl, doc: str, over=None, op=None, result_over=None) -> None:
    """Define a scalar primitive; ``x`` in ``params``/``result`` is the overloaded atom type
    (``over``: what it may be), ``y`` a result's own (``result_over``); ``op`` names the
    associative operation it is (for one-call reductions)."""
    define(Primitive(name, _sig(params, result), {}, doc, impl, overload=over, op=op, result_overload=result_over))


def _is_int(a) -> bool:
    return a.dtype.kind in "iu"


def _elementwise(name: str):
    """The implementation that is the backend's elementwise function ``name``."""

    def impl(ctx, *args):
        return getattr(ctx.xp, name)(*args)

    impl.__name__ = name
    return impl


# --- arithmetic ---------------------------------------------------------------


def _divide(ctx, a, b):
    if _is_int(a):
        ctx.require(b != 0, "Int division by zero")
        return ctx.xp.floor_divide(a, b)
    return ctx.xp.divide(a, b)


def _mod(ctx, a, b):
    ctx.require(b != 0, "mod by zero")
    return ctx.xp.remainder(a, b)


def _expt(ctx, a, b):
    if _is_int(a):
        ctx.require(b >= 0, "Int expt with a negative exponent (use Float for fractional results)")
    return ctx.xp.pow(a, b)


scalar("+", ["x", "x"], "x", _elementwise("add"), "Addition (Int and Int32 wrap around on overflow).", NUM, "add")
scalar("-", ["x", "x"], "x", _elementwise("subtract"), "Subtraction.", NUM)
scalar("*", ["x", "x"], "x", _elementwise("multiply"), "Multiplication.", NUM, "multiply")
scalar("/", ["x", "x"], "x", _divide, "Division: floor division on Int and Int32 (by zero is an error), IEEE on Float and Float32.", NUM)
scalar("mod", ["x", "x"], "x", _mod, "Floor modulus: the result has the sign of the divisor.", INTEGRAL)
scalar("min", ["x", "x"], "x", _elementwise("minimum"), "The smaller of two numbers.", NUM, "minimum")
scalar("max", ["x", "x"], "x", _elementwise("maximum"), "The larger of two numbers.", NUM, "maximum")
scalar("neg", ["x"], "x", _elementwise("negative"), "Negation.", NUM)
scalar("abs", ["x"], "x", _elementwise("abs"), "Absolute value.", NUM)
scalar("expt", ["x", "x"], "x", _expt, "Power a^b; on Int and Int32 a negative exponent is an error.", NUM)

# --- floating point -----------------------------------------------------------

for _name, _op, _doc in [
    ("sqrt", "sqrt", "Square root (nan below 0)."),
    ("exp", "exp", "e to the power."),
    ("log", "log", "Natural logarithm (-inf at 0, nan below)."),
    ("sin", "sin", "Sine (radians)."),
    ("cos", "cos", "Cosine (radians)."),
    ("tan", "tan", "Tangent (radians)."),
    ("atan", "atan", "Arc tangent (radians)."),
]:
    scalar(_name, ["x"], "x", _elementwise(_op), _doc, FLOATING)


def _to_int(rounding: str, what: str):
    """``floor`` and its kin: round, then convert to the integer type the context chose
    (``ctx.result_rep``); a value that type cannot hold (``nan``, infinite, out of range) is a
    run-time error (D24), never the wrapped-around integer NumPy would give."""

    def impl(ctx, a):
        xp = ctx.xp
        target = ctx.result_rep
        low, high = int_range(target)
        r = getattr(xp, rounding)(a)
        ok = xp.isfinite(r) & (r >= float(low)) & (r < -float(low))
        wider = (f" (past Int32's range, {what} of a Float32 makes an Int where one is expected: an Int "
                 "parameter, index's position)") if target == "Int32" else ""
        ctx.require(ok, f"{what} of {{!r}} has no {target} value{wider}", r)
        return xp.astype(r, target)

    return impl


scalar("floor", ["x"], "y", _to_int("floor", "floor"), "Largest integer not above.", FLOATING, result_over=INTEGRAL)
scalar("ceiling", ["x"], "y", _to_int("ceil", "ceiling"), "Smallest integer not below.", FLOATING, result_over=INTEGRAL)
scalar("round", ["x"], "y", _to_int("round", "round"), "Nearest integer, halves to even.", FLOATING, result_over=INTEGRAL)
scalar("truncate", ["x"], "y", _to_int("trunc", "truncate"), "Integer part, rounding toward zero.", FLOATING,
       result_over=INTEGRAL)


def _converter(target: str):
    def impl(ctx, a):
        return ctx.xp.astype(a, target)

    return impl


_CONVERSION_DOCS = {
    ("Int", "Float"): "The Int as a Float.",
    ("Int", "Int32"): "The Int as an Int32, wrapping around outside its range (as NumPy's astype).",
    ("Float", "Float32"): "The Float rounded to the nearest Float32 (±inf beyond its range).",
    ("Float32", "Float"): "The Float32 as a Float (exactly).",
    ("Int32", "Int"): "The Int32 as an Int (exactly).",
}
for _given, _wanted in conversions():  # every pair of numeric types but a float to an integer (floor …)
    _name = f"{NUMBERS[_given].spelling}->{NUMBERS[_wanted].spelling}"
    _doc = _CONVERSION_DOCS.get((_given, _wanted), f"The {_given} as the nearest {_wanted}.")
    scalar(_name, [_given], _wanted, _converter(_wanted), _doc)
scalar(
    "from-int", ["Int"], "x", lambda ctx, a: ctx.xp.astype(a, ctx.result_rep),
    "The Int as the numeric type its context asks for: (fold + (from-int 0) xs) sums Ints or Floats.", NUM,
)
scalar("bool->int", ["Bool"], "y", lambda ctx, a: ctx.xp.astype(a, ctx.result_rep), "#t is 1, #f is 0.",
       result_over=INTEGRAL)

# --- comparison and logic -----------------------------------------------------

scalar("=", ["x", "x"], "Bool", _elementwise("equal"), "Equality (also on Bool).", EQ)
scalar("!=", ["x", "x"], "Bool", _elementwise("not_equal"), "Inequality (also on Bool).", EQ)
scalar("<", ["x", "x"], "Bool", _elementwise("less"), "Less than.", NUM)
scalar("<=", ["x", "x"], "Bool", _elementwise("less_equal"), "Less than or equal.", NUM)
scalar(">", ["x", "x"], "Bool", _elementwise("greater"), "Greater than.", NUM)
scalar(">=", ["x", "x"], "Bool", _elementwise("greater_equal"), "Greater than or equal.", NUM)
scalar("and", ["Bool", "Bool"], "Bool", _elementwise("logical_and"), "Logical and (strict).", op="logical_and")
scalar("or", ["Bool", "Bool"], "Bool", _elementwise("logical_or"), "Logical or (strict).", op="logical_or")
scalar("xor", ["Bool", "Bool"], "Bool", _elementwise("logical_xor"), "Exclusive or.", op="logical_xor")
scalar("not", ["Bool"], "Bool", _elementwise("logical_not"), "Negation.")


def _select(ctx, c, a, b):
    return ctx.xp.where(c, a, b)


define(
    Primitive(
        "select",
        _sig(["Bool", "x", "x"], "x"),
        {},
        "(select c a b) is a where c is #t, else b; both are evaluated.",
        _select,
        overload=ANY_ATOM,
    )
)
