"""Scalar primitives (contract §2): each consumes and produces scalar cells.

Every implementation is one backend call over the whole frame (``ctx.xp``, the array-API
elementwise functions): the engine hands it arrays whose leading ``ctx.frame`` axes are the
(lifted) frame and whose cells are scalars, so the same function serves one cell (the
reference engine's δ) and a million (the whole-frame engine).  The backend's elementwise
functions are frame independent, so both give each cell the same atoms.  Run-time checks are
``ctx.require`` on a Bool array, never a Python ``if`` on the data.
"""

from __future__ import annotations

from .registry import ANY_ATOM, Primitive, define

NUM = frozenset({"Int", "Float"})
EQ = frozenset({"Int", "Float", "Bool"})


def _sig(params: list[str], result: str) -> str:
    return "(-> (" + " ".join(f"(Arr {p} (Shp))" for p in params) + f") (Arr {result} (Shp)))"


def scalar(name: str, params: list[str], result: str, impl, doc: str, over=None, op=None) -> None:
    """Define a scalar primitive; ``x`` in ``params``/``result`` is the overloaded atom type; ``op``
    names the associative operation it is (for one-call reductions)."""
    define(Primitive(name, _sig(params, result), {}, doc, impl, overload=over, op=op))


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


scalar("+", ["x", "x"], "x", _elementwise("add"), "Addition (Int wraps around on overflow).", NUM, "add")
scalar("-", ["x", "x"], "x", _elementwise("subtract"), "Subtraction.", NUM)
scalar("*", ["x", "x"], "x", _elementwise("multiply"), "Multiplication.", NUM, "multiply")
scalar("/", ["x", "x"], "x", _divide, "Division: floor division on Int (by zero is an error), IEEE on Float.", NUM)
scalar("mod", ["Int", "Int"], "Int", _mod, "Floor modulus: the result has the sign of the divisor.")
scalar("min", ["x", "x"], "x", _elementwise("minimum"), "The smaller of two numbers.", NUM, "minimum")
scalar("max", ["x", "x"], "x", _elementwise("maximum"), "The larger of two numbers.", NUM, "maximum")
scalar("neg", ["x"], "x", _elementwise("negative"), "Negation.", NUM)
scalar("abs", ["x"], "x", _elementwise("abs"), "Absolute value.", NUM)
scalar("expt", ["x", "x"], "x", _expt, "Power a^b; on Int a negative exponent is an error.", NUM)

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
    scalar(_name, ["Float"], "Float", _elementwise(_op), _doc)


def _to_int(rounding: str, what: str):
    limit = 2.0**63

    def impl(ctx, a):
        xp = ctx.xp
        r = getattr(xp, rounding)(a)
        ok = xp.isfinite(r) & (r >= -limit) & (r < limit)
        ctx.require(ok, f"{what} of {{!r}} has no Int value", r)
        return xp.astype(r, "Int")

    return impl


scalar("floor", ["Float"], "Int", _to_int("floor", "floor"), "Largest Int not above.")
scalar("ceiling", ["Float"], "Int", _to_int("ceil", "ceiling"), "Smallest Int not below.")
scalar("round", ["Float"], "Int", _to_int("round", "round"), "Nearest Int, halves to even.")
scalar("truncate", ["Float"], "Int", _to_int("trunc", "truncate"), "Int part, rounding toward zero.")
scalar("int->float", ["Int"], "Float", lambda ctx, a: ctx.xp.astype(a, "Float"), "The Int as a Float.")
scalar(
    "from-int", ["Int"], "x", lambda ctx, a: ctx.xp.astype(a, ctx.result_rep),
    "The Int as the numeric type its context asks for: (fold + (from-int 0) xs) sums Ints or Floats.", NUM,
)
scalar("bool->int", ["Bool"], "Int", lambda ctx, a: ctx.xp.astype(a, "Int"), "#t is 1, #f is 0.")

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
