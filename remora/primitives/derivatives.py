"""``grad``, ``jvp``, ``vjp``: derivatives (contract §11, spec/derivatives.md).

Each evaluates the function it differentiates on the engine that applied it — the same engine,
with its backend wrapped in a taping backend (:class:`remora.ir.ad.tape.TapeBackend`) — and
transposes the taped program with the rules of :mod:`remora.ir.ad.rules`.  Over a frame the
function is applied once to the whole frame, as any application; cells are independent, so the
cotangent 1 at every cell gives every cell's gradient at once (per-example gradients by lifting).

``(grad f)`` is a function: a :class:`DerivFn` atom per function atom of ``f``'s frame.
Its type (T-GRAD, remora/statics/derivatives.py) keeps all of ``f``'s parameters; the gradient
is with respect to the first, the others held fixed.
"""

from __future__ import annotations

import copy

from ..atoms import FLOATING
from ..backends import host
from ..errors import RemoraRuntimeError
from ..ir.ad import grad_of, jvp_of, vjp_of
from ..ir.ad.tape import Refused
from ..dynamics.values import PrimFn
from .registry import Primitive, primitive

_GRAD = "(-> ((Arr (-> ((Arr x s)) (Arr x (Shp))) (Shp))) (Arr (-> ((Arr x s)) (Arr x s)) (Shp)))"
_JVP = "(-> ((Arr (-> ((Arr x s)) (Arr x r)) (Shp)) (Arr x s) (Arr x s)) (Arr x r))"
_VJP = "(-> ((Arr (-> ((Arr x s)) (Arr x r)) (Shp)) (Arr x s) (Arr x r)) (Arr x s))"


def _taped(ctx, tape):
    """``ctx``'s context and engine with the backend ``tape`` in place of ``ctx.xp``."""
    engine = copy.copy(ctx.engine)
    engine.xp = tape
    if hasattr(engine, "global_value"):  # (a plan's trace: globals are its inputs, as the engine's)
        engine.global_value = ctx.engine.global_value
        tape.app_stack = ctx.xp.app_stack
    inner = copy.copy(ctx)
    inner.xp = tape
    inner.engine = engine
    return inner


def _applying(ctx, fns, others, cells, result_cell):
    """``run(tape, x)``: ``fns`` applied over ``ctx``'s frame to ``x`` and ``others``."""

    def run(tape, x):
        return _taped(ctx, tape).apply(fns, [x] + list(others), cells, result_cell)

    return run


def _differentiating(ctx, compute):
    """``compute()``, with what the derivative cannot follow a located error."""
    try:
        return compute()
    except Refused as err:
        raise RemoraRuntimeError(f"cannot differentiate this: {err}", ctx.span) from None


class DerivFn(PrimFn):
    """``(grad f)`` for one function atom ``f``: a function of ``f``'s parameters."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        super().__init__(Primitive("grad", _GRAD, {}, "", self._apply, builtin=False))
        self.fn = fn
        self.identity = ("grad", id(fn))

    def _apply(self, ctx, x, *others):
        run = _applying(ctx, host.scalar(self.fn), others, tuple(ctx.cells), ())
        return _differentiating(ctx, lambda: grad_of(ctx.xp, run, x))


@primitive(
    "grad", _GRAD, "s:Shape", overload=FLOATING,
    doc="(grad f): the gradient of f (Float scalar result) with respect to its first argument, "
        "a function of f's parameters; the others are held fixed. Lifts: ((grad f) xs) is each cell's gradient.",
)
def _grad(ctx, fns):
    return host.map_atoms(fns, DerivFn)


@primitive(
    "jvp", _JVP, "s:Shape r:Shape", overload=FLOATING,
    doc="(jvp f x dx): the derivative of f at x in the direction dx (forward mode), of f's result type.",
)
def _jvp(ctx, fns, x, dx):
    cell, result = tuple(ctx.cells[1]), tuple(ctx.result_cell)
    run = _applying(ctx, fns, (), (cell,), result)
    shape = tuple(ctx.frame) + result

    def zeros(xp):
        return xp.full(shape, 0, xp.rep(x))

    return _differentiating(ctx, lambda: jvp_of(ctx.xp, run, x, dx, zeros))


@primitive(
    "vjp", _VJP, "s:Shape r:Shape", overload=FLOATING,
    doc="(vjp f x ct): the cotangent ct of f's result pulled back to x (reverse mode), of x's type.",
)
def _vjp(ctx, fns, x, ct):
    run = _applying(ctx, fns, (), (tuple(ctx.cells[1]),), tuple(ctx.result_cell))
    return _differentiating(ctx, lambda: vjp_of(ctx.xp, run, x, ct)[1])

