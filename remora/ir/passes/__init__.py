"""Rewrites of the IR: each pass a module with one job and its law stated at its top.

A pass takes a program — its equations and its result — and returns an equivalent one: the same
values, dtypes and shapes, the same run-time checks and guards, and the exactness rules of the
decisions it names (D22 for sums' rounding, D27 for contractions, signed zeros).  The pipeline
(:func:`simplify`) runs them in this order:

1. :mod:`.views` — identity views dropped, chains of views folded into one ``reshape``;
2. :mod:`.fold` — an operation on constants alone is computed once, when the program is made;
3. :mod:`.checks` — a run-time check of a constant is decided once;
4. :mod:`.gathers` — a gather at positions that range over an axis (an index frame, ``(+ i 1)``,
   ``(mod (- i 1) n)``) is the array, a slice of it or a rotation;
5. :mod:`.broadcasts` — a constant operand of an elementwise operation keeps only the axes it
   varies along;
6. :mod:`.views` again, on what the two before made;
7. :mod:`.positions` — a ``select_items`` by a mask known while tracing is a gather at its
   positions, found once;
8. :mod:`.joins` — a reduction of a ``concat`` or ``stack`` is the combination of its parts'
   reductions (exact cases only);
9. :mod:`.hoist` — what a loop's body computes the same at every step is computed before it;
10. :mod:`.contraction` — a sum of a product over a shared axis is one contraction (``einsum``);
11. :mod:`.cse` — an operation made again on the same operands is made once;
12. :mod:`.dce` — an operation nothing reads is dropped (unless it writes, guards a decision
    taken on its shape, or may fail);
13. :mod:`.schedule` — each pure operation is made just before its first reader.

Each pass also rewrites the bodies of loops.  The ``if`` of a frame becomes ``select`` where its
law holds (:mod:`.select`): that decision is taken while tracing, where both ways are at hand.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core import Eqn
from . import broadcasts, checks, contraction, cse, dce, fold, gathers, hoist, joins, positions, schedule, views
from .common import Context


#: the passes in the order they run: each ``run(steps, result, ctx) -> (steps, result)``
PIPELINE: tuple[Callable, ...] = (views.run, fold.run, checks.run, gathers.run, broadcasts.run, views.run,
                                  positions.run, joins.run, hoist.run, contraction.run,
                                  cse.run, dce.run, schedule.run)


def simplify(steps: list[Eqn], result: Any, xp: Any) -> tuple[list[Eqn], Any]:
    """(the equations, the result) after every pass of :data:`PIPELINE` (``xp``: the backend
    the program will be lowered to)."""
    steps, result, _ = rewrite(steps, result, xp)
    return steps, result


def rewrite(steps: list[Eqn], result: Any, xp: Any) -> tuple[list[Eqn], Any, bool]:
    """:func:`simplify`, and whether the program still rounds every value as the trace did."""
    ctx = Context(xp, steps)
    for run in PIPELINE:
        steps, result = run(steps, result, ctx)
    return steps, result, ctx.same_rounding


__all__ = ["simplify", "rewrite", "PIPELINE"]
