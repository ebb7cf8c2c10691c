"""Broadcasts: a constant operand of an elementwise operation is kept at the axes it varies
along, and broadcast along the others.

An index frame is a constant of the program (``iota/s``), and the engine lifts it to the frame
of the arrays it meets: ``(for ((i n) (j m)) (* j (index (index a i) j)))`` multiplies ``a`` by
an ``n × m`` array whose rows are all ``0 … m−1``, and a literal like the ``0.25`` of a stencil
or the ``-1e9`` of a mask is lifted to a whole frame of copies the same way.  Made once while
tracing, such a constant is kept for the program's life and read in full on every run.

**Law.**  For an elementwise operation ``op(x1, …, xk)`` (NumPy broadcasting) whose operand
``xi`` is a constant that does not vary along an axis ``a`` (every slice along ``a`` is the
first), and some other operand has the result's full length along ``a``, ``xi`` may be replaced
by its first slice along ``a`` (length 1 there): broadcasting gives each atom of the result the
same operand atoms, so the values, the dtype (the operand keeps its rank and dtype) and the
result's shape are unchanged.  The constant kept is a view of the one made, at the size of the
axes it varies along — ``(Shp 1 m)`` for the ``j`` above, ``(Shp 1 1)`` for a lifted literal.

Exact.  **Declines** operands that are variables, constants with an axis the rest of the
operation does not span (the result would shrink), and non-elementwise operations.
"""

from __future__ import annotations

from typing import Any

from ..core import OPERATORS, Eqn, Sym
from .common import Context, in_bodies

#: the elementwise operations, by the IR's names (the backend's array-API names and the operators)
ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "minimum", "maximum", "pow",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "where",
} | {op for op in OPERATORS if op != "__getitem__"})


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: run(body, res, ctx))
        elif step.kind == "call" and step.op in ELEMENTWISE and not step.kw and type(step.outs) is Sym \
                and len(step.args) >= 2:
            step = _narrowed(step, ctx)
        out.append(step)
    return out, result


def _narrowed(step: Eqn, ctx: Context) -> Eqn:
    args = list(step.args)
    shape = tuple(step.outs.value.shape)
    for i, x in enumerate(args):
        if type(x) is Sym or not ctx.xp.owns(x) or getattr(x, "ndim", 0) != len(shape) or x.size <= 1:
            continue
        others = [tuple(y.shape) for j, y in enumerate(args) if j != i and hasattr(y, "shape")]
        narrow = x
        for a, length in enumerate(shape):
            if narrow.shape[a] == 1 or not any(len(o) == len(shape) and o[a] == length for o in others):
                continue
            first = narrow[(slice(None),) * a + (slice(0, 1),)]
            if ctx.xp.array_equal(narrow, ctx.xp.broadcast_to(first, narrow.shape)):
                narrow = first
        if narrow is not x:
            args[i] = ctx.xp.read_only(narrow)
    return step.replace(args=tuple(args)) if any(a is not b for a, b in zip(args, step.args)) else step
