"""``while``: a loop, lifted per cell (contract §6).

``(while continue? step init)`` is ``x := init; while (continue? x): x := (step x)``.  Over a
frame of initial values every cell iterates until its own condition fails: the cells still
running are kept together (their positions and values, compacted), so each step applies
``continue?`` and ``step`` to exactly those cells — a finished cell is never stepped again — and
the loop ends when none continues.  A Python loop, never Python recursion.
"""

from __future__ import annotations

import math

from ..backends import host
from ..dynamics.control import apply_cells
from .registry import primitive

_SIGNATURE = "(-> ((Arr (-> (T) (Arr Bool (Shp))) (Shp)) (Arr (-> (T) T) (Shp)) T) T)"


@primitive(
    "while", _SIGNATURE, "T:Array",
    doc="(while continue? step init): x := init; while (continue? x): x := (step x). Lifted over a frame "
        "of initial values, each cell iterates until its own condition is false; only running cells are stepped.",
)
def _while(ctx, cond, step, init):
    xp = ctx.xp
    if xp.tracing():  # compiling: one loop over the whole frame, masked (spec D48)
        return _while_masked(ctx, cond, step, init)
    cell = tuple(ctx.cells[2])
    planned = _planned(ctx, cond, step, init, cell)
    if planned is not None:
        return planned
    if not ctx.frame:  # one value: the loop as written
        x = init
        while bool(xp.to_host(ctx.apply(cond, [x], (cell,), ()))):
            x = ctx.apply(step, [x], (cell,), cell)
        return x
    n = math.prod(ctx.frame)
    current = xp.reshape(init, (n,) + cell)
    out = host.empty((n,) + cell) if host.is_host(current) else xp.empty((n,) + cell, xp.rep(current))
    running = xp.arange(n)
    not_ = xp.elementwise("logical_not")
    while True:
        flags = xp.reshape(apply_cells(ctx, cond, running, [current], (cell,), ()), (len(running),))
        stopped = not_(flags)
        if xp.any(stopped):  # (boolean masks: compaction costs one pass over the running cells)
            out = xp.settle(xp.scatter(out, xp.select_items(running, stopped), xp.select_items(current, stopped)), out)
            if not xp.any(flags):
                break
            running, current = xp.select_items(running, flags), xp.select_items(current, flags)
        current = xp.settle(apply_cells(ctx, step, running, [current], (cell,), cell))
    return xp.reshape(out, ctx.frame + cell)


def _planned(ctx, cond, step, init, cell: tuple):
    """The loop as a plan's kernel runs it (``xp.while_cells``, a tracing backend's: the
    condition and the step are functions of the running cells' positions and values, planned
    once per bucket of their number — plans/control.py), or None on other backends."""
    xp = ctx.xp
    kernel = getattr(xp, "while_cells", None)
    if kernel is None:
        return None
    if ctx.frame:
        def on_cells(fns, result_cell):
            return lambda positions, cells: apply_cells(ctx, fns, positions, [cells], (cell,), result_cell)

        test, advance = on_cells(cond, ()), on_cells(step, cell)
        n = math.prod(ctx.frame)
    else:  # one value: a frame of one cell
        def test(positions, cells):
            return ctx.apply(cond, [xp.reshape(cells, cell)], (cell,), ())

        def advance(positions, cells):
            return ctx.apply(step, [xp.reshape(cells, cell)], (cell,), cell)

        n = 1

    def flat(fn, shape):
        return lambda positions, cells: xp.reshape(fn(positions, cells), (len(positions),) + shape)

    out = kernel(ctx.engine, flat(test, ()), flat(advance, cell), xp.reshape(init, (n,) + cell))
    return None if out is None else xp.reshape(out, ctx.frame + cell)


def _while_masked(ctx, cond, step, init):
    """``while`` as one loop of fixed shape, for a backend that compiles it: every cell has its
    state and a running flag; a step computes every cell but keeps the new state only where the
    cell runs (the step's checks excused elsewhere: ``ctx.masked``), so a stopped cell never
    changes — contract §6's meaning — and the loop ends when no cell runs."""
    xp = ctx.xp
    cell = tuple(ctx.cells[2])
    spread = (1,) * len(cell)

    def flags(x):
        return xp.reshape(ctx.apply(cond, [x], (cell,), ()), ctx.frame)

    def advance(state):
        x, running = state
        with ctx.masked(running):
            new = xp.where(xp.reshape(running, ctx.frame + spread), ctx.apply(step, [x], (cell,), cell), x)
            return new, xp.logical_and(running, flags(new))

    x, _ = xp.while_loop(lambda state: state[1], advance, (init, ctx.live(flags(init))))
    return x
