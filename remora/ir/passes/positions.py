"""Positions: selecting by a mask known while tracing is gathering at its positions, found once.

**Law.**  ``select_items(x, mask)`` with ``mask`` a constant of the program (it follows from
shapes alone — a triangle's rows) is ``gather(reshape(x, (mask.size,) + cells), p)`` with ``p``
the positions of ``mask``'s true atoms, row-major: the same cells in the same order.  The
result's shape no longer depends on data, so its shape guard goes.

Exact (a selection).  Selecting by a mask finds the positions again on every call: NumPy's
``compress`` is a ``nonzero`` then a ``take`` (79 ms of the triangular workload's 148 at
n = 4000, the take alone 20 ms).
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, Sym
from .common import Context, in_bodies


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: run(body, res, ctx))
        elif step.kind == "call" and step.op == "select_items" and _constant_mask(step.args):
            out.extend(_at_positions(step, ctx))
            continue
        out.append(step)
    return out, result


def _constant_mask(args: tuple) -> bool:
    return (len(args) == 2 and type(args[0]) is Sym and type(args[1]) is not Sym
            and getattr(getattr(args[1], "dtype", None), "kind", "") == "b")


def _at_positions(step: Eqn, ctx: Context) -> list[Eqn]:
    x, mask = step.args
    xp = ctx.xp
    cells = (mask.size,) + tuple(x.value.shape[mask.ndim:])
    positions = xp.nonzero(xp.reshape(mask, (-1,)))[0]
    flat = ctx.fresh(x.value.dtype, cells)
    return [Eqn("call", "reshape", (x, cells), flat), Eqn("call", "gather", (flat, positions), step.outs)]
