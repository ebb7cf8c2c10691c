"""Scalar primitives (contract §2): each consumes and produces scalar cells.

Every implementation is one NumPy call over the whole frame: the engine hands
it arrays whose leading ``ctx.frame`` axes are the (lifted) frame and whose cells
are scalars, so the same function serves one cell (the reference engine's δ)
and a million (the whole-frame engine).
"""

from __future__ import annotations

import numpy as np

from .registry import ANY_ATOM, Primitive, define

NUM = frozenset({"Int", "Float"})
EQ = frozenset({"Int", "Float", "Bool"})


def _sig(params: list[str], result: str) -> str:
    return "(-> (" + " ".join(f"(Arr {p} (Shp))" for p in params) + f") (Arr {result} (Shp)))"


def scalar(name: str, params: list[str], result: str, impl, doc: str, over=None, ufunc=None) -> None:
    """Define a scalar primitive; ``x`` in ``params``/``result`` is the overloaded atom type."""
    define(Primitive(name, _sig(params, result), {}, doc, impl, overload=over, ufunc=ufunc))


def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu"


# --- arithmetic ---------------------------------------------------------------


def _divide(ctx, a, b):
    if _is_int(a):
        if np.any(b == 0):
            ctx.error("Int division by zero")
        return np.floor_divide(a, b)
    return np.true_divide(a, b)


def _mod(ctx, a, b):
    if np.any(b == 0):
        ctx.error("mod by zero")
    return np.mod(a, b)


def _expt(ctx, a, b):
    if _is_int(a):
        if np.any(b < 0):
            ctx.error("Int expt with a negative exponent (use Float for fractional results)")
        return np.power(a, b)
    # NumPy squares instead of calling pow when the exponent is a broadcast 2.0: give every cell
    # the same computation whatever the frame (the engines must agree exactly).
    if 0 in b.strides:
        b = np.array(b, copy=True)
    return _same_path(np.power, a, b)


def _same_path(fn, *args):
    """``fn(*args)``, computed on arrays of at least one axis: NumPy's 0-d (scalar) path for
    Float functions can round differently from its array path, and one cell alone (the
    reference engine's δ) must get exactly what it gets inside a frame."""
    if args and all(a.ndim == 0 for a in args) and any(a.dtype.kind == "f" for a in args):
        return fn(*(a.reshape(1) for a in args)).reshape(())
    return fn(*args)


def _ufunc_impl(ufunc):
    def impl(ctx, *args):
        return _same_path(ufunc, *args)

    impl.__name__ = getattr(ufunc, "__name__", "impl")
    return impl


scalar("+", ["x", "x"], "x", _ufunc_impl(np.add), "Addition (Int wraps around on overflow).", NUM, np.add)
scalar("-", ["x", "x"], "x", _ufunc_impl(np.subtract), "Subtraction.", NUM)
scalar("*", ["x", "x"], "x", _ufunc_impl(np.multiply), "Multiplication.", NUM, np.multiply)
scalar("/", ["x", "x"], "x", _divide, "Division: floor division on Int (by zero is an error), IEEE on Float.", NUM)
scalar("mod", ["Int", "Int"], "Int", _mod, "Floor modulus: the result has the sign of the divisor.")
scalar("min", ["x", "x"], "x", _ufunc_impl(np.minimum), "The smaller of two numbers.", NUM, np.minimum)
scalar("max", ["x", "x"], "x", _ufunc_impl(np.maximum), "The larger of two numbers.", NUM, np.maximum)
scalar("neg", ["x"], "x", _ufunc_impl(np.negative), "Negation.", NUM)
scalar("abs", ["x"], "x", _ufunc_impl(np.abs), "Absolute value.", NUM)
scalar("expt", ["x", "x"], "x", _expt, "Power a^b; on Int a negative exponent is an error.", NUM)

# --- floating point -----------------------------------------------------------

for _name, _fn, _doc in [
    ("sqrt", np.sqrt, "Square root (nan below 0)."),
    ("exp", np.exp, "e to the power."),
    ("log", np.log, "Natural logarithm (-inf at 0, nan below)."),
    ("sin", np.sin, "Sine (radians)."),
    ("cos", np.cos, "Cosine (radians)."),
    ("tan", np.tan, "Tangent (radians)."),
    ("atan", np.arctan, "Arc tangent (radians)."),
]:
    scalar(_name, ["Float"], "Float", _ufunc_impl(_fn), _doc)


def _to_int(rounding, what: str):
    limit = 2.0**63

    def impl(ctx, a):
        r = rounding(a)
        if not np.all(np.isfinite(r)) or np.any((r < -limit) | (r >= limit)):
            bad = r[~np.isfinite(r) | (r < -limit) | (r >= limit)].ravel()[0]
            ctx.error(f"{what} of {float(bad)!r} has no Int value")
        return r.astype(np.int64)

    return impl


scalar("floor", ["Float"], "Int", _to_int(np.floor, "floor"), "Largest Int not above.")
scalar("ceiling", ["Float"], "Int", _to_int(np.ceil, "ceiling"), "Smallest Int not below.")
scalar("round", ["Float"], "Int", _to_int(np.rint, "round"), "Nearest Int, halves to even.")
scalar("truncate", ["Float"], "Int", _to_int(np.trunc, "truncate"), "Int part, rounding toward zero.")
scalar("int->float", ["Int"], "Float", lambda ctx, a: a.astype(np.float64), "The Int as a Float.")
scalar(
    "from-int", ["Int"], "x", lambda ctx, a: a.astype(ctx.result_dtype),
    "The Int as the numeric type its context asks for: (fold + (from-int 0) xs) sums Ints or Floats.", NUM,
)
scalar("bool->int", ["Bool"], "Int", lambda ctx, a: a.astype(np.int64), "#t is 1, #f is 0.")

# --- comparison and logic -----------------------------------------------------

scalar("=", ["x", "x"], "Bool", _ufunc_impl(np.equal), "Equality (also on Bool).", EQ)
scalar("!=", ["x", "x"], "Bool", _ufunc_impl(np.not_equal), "Inequality (also on Bool).", EQ)
scalar("<", ["x", "x"], "Bool", _ufunc_impl(np.less), "Less than.", NUM)
scalar("<=", ["x", "x"], "Bool", _ufunc_impl(np.less_equal), "Less than or equal.", NUM)
scalar(">", ["x", "x"], "Bool", _ufunc_impl(np.greater), "Greater than.", NUM)
scalar(">=", ["x", "x"], "Bool", _ufunc_impl(np.greater_equal), "Greater than or equal.", NUM)
scalar("and", ["Bool", "Bool"], "Bool", _ufunc_impl(np.logical_and), "Logical and (strict).", ufunc=np.logical_and)
scalar("or", ["Bool", "Bool"], "Bool", _ufunc_impl(np.logical_or), "Logical or (strict).", ufunc=np.logical_or)
scalar("xor", ["Bool", "Bool"], "Bool", _ufunc_impl(np.logical_xor), "Exclusive or.", ufunc=np.logical_xor)
scalar("not", ["Bool"], "Bool", _ufunc_impl(np.logical_not), "Negation.")


def _select(ctx, c, a, b):
    return np.where(c, a, b)


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
