"""Control flow in the whole-frame engine: ``if`` over a frame of conditions, and applying a
function to some cells of a frame only (what ``while`` steps with).

The meaning is the reference engine's — each cell evaluates the branch it chooses, and only
that one — but a frame of cells is split by its flags into two batches of their own, each
branch evaluated once over its part (never over an empty one), and the results put back in
frame order.  So a run-time error in a branch a cell does not take never happens, and a
recursive call under a branch runs only for the cells still recursing.
"""

from __future__ import annotations

import math

from ..backends import host
from ..erasure import erased as E
from .batched import Val, align, extent, joint, plain_val, spread
from . import masks
from .layouts import plain
from .rebatch import restrict_closure, restrict_env, settle


def if_(engine, e: E.EIf, env: dict, ienv: dict, batch: tuple) -> Val:
    xp = engine.xp
    settle = getattr(xp, "settle_branch", None)  # (a lazy backend's: Dask's)
    if settle is not None:
        env = _settled(settle, env, e.free)
    cond = plain_val(engine.ev(e.cond, env, ienv, batch))
    if xp.tracing() and (cond.arr.size != 1 or not xp.known(cond.arr)):  # compiling: masked, no split
        return if_masked(engine, e, env, ienv, batch, cond)
    if cond.arr.size == 1:  # one condition for every cell: one branch, as it is
        chosen = bool(xp.to_host(xp.reshape(cond.arr, ())))
        return engine.ev(e.then if chosen else e.orelse, env, ienv, batch)
    seen = [env[x] for x in e.free if x in env]
    m = max([cond.k] + [v.k for v in seen])
    flags = xp.reshape(cond.arr, cond.arr.shape + (1,) * (m - cond.k))
    tf = joint(flags.shape, extent(seen, m))
    n = math.prod(tf)
    flags = xp.reshape(spread(xp, flags, tf), (n,))
    cell = engine.flat_shape(e, "shape", ienv)
    kernel = getattr(xp, "if_cells", None)  # (a tracing backend's: each branch planned per part size)
    if kernel is not None:
        # (a tracing backend's: both branches over the whole frame, selected — when its law holds)
        chosen = xp.if_select(engine, cond.arr, lambda: if_masked(engine, e, env, ienv, batch, cond))
        if chosen is not None:
            return chosen
        def branch(arm):
            return lambda sel: _on_cells(engine, arm, env, ienv, e.free, tf, sel, cell)

        out = kernel(engine, flags, (branch(e.then), branch(e.orelse)))
        if out is not None:
            return Val(xp.reshape(out, tf + cell), m)
    out = None
    for branch, mask in ((e.then, flags), (e.orelse, xp.elementwise("logical_not")(flags))):
        sel = xp.nonzero(mask)[0]
        if len(sel) == 0:
            continue  # no cell chooses this branch: nothing of it runs
        if len(sel) == n:
            return engine.ev(branch, env, ienv, batch)  # every cell chooses it: the batch as it is
        part = _on_cells(engine, branch, env, ienv, e.free, tf, sel, cell)
        if out is None:
            out = host.empty((n,) + cell) if host.is_host(part) else xp.empty((n,) + cell, xp.rep(part))
        out = xp.scatter(out, sel, part)
    return Val(xp.reshape(out, tf + cell), m)


def _settled(settle, env: dict, free) -> dict:
    """``env`` with the values the branches use from outside settled: the flags are read on the
    host now, and in a recursion under the ``if`` each level's cells are computed from these — a
    lazy backend bounds their graph here, or level ``d`` would compute levels ``1 … d−1`` again
    (a recursion of depth ``d`` would cost ``d²``)."""
    out = dict(env)
    for x in free:
        v = env.get(x)
        if v is not None:
            out[x] = Val(settle(v.arr), v.k)
    return out


def _on_cells(engine, branch, env, ienv, free, tf, sel, cell):
    """``branch`` evaluated for the cells ``sel`` (flat positions in ``tf``) only, as a batch of
    their own: ``(len(sel),) + cell``."""
    xp = engine.xp
    sub_env = restrict_env(xp, env, free, tf, sel)
    r = plain_val(engine.ev(branch, sub_env, ienv, (len(sel),)))
    part = spread(xp, align(xp, r, 1, 0, 0), (len(sel),) + cell)
    if host.is_host(part):
        part = settle(host.copy(part), 0)  # closures made for those cells keep their own values
    return part


def apply_cells(ctx, fns, sel, args: list, cells: tuple, result_cell: tuple):
    """Apply the frame of functions ``fns`` (over ``ctx.frame``) at the flat positions ``sel``
    only, to ``args`` that hold those cells' arguments (one leading axis of ``len(sel)``)."""
    engine, xp = ctx.engine, ctx.xp
    tf = ctx.frame
    fn = host.uniform_atom(fns)
    frame = (len(sel),)
    if fn is not None:
        if getattr(fn, "level", 0):
            fn = restrict_closure(xp, fn, tf, sel)
        return engine.apply_one(fn, args, frame, cells, tuple(result_cell), ctx.span)
    flat = xp.reshape(spread(xp, fns, tf), (math.prod(tf),))
    chosen = host.from_atoms([flat[int(i)] for i in xp.to_host(sel)], frame)
    out = None
    for _, f, part_sel in host.groups(chosen, id):
        positions = xp.gather(sel, part_sel)
        if getattr(f, "level", 0):
            f = restrict_closure(xp, f, tf, positions)
        part = plain(engine.apply_one(f, [xp.gather(a, part_sel) for a in args], (len(part_sel),), cells,
                                      tuple(result_cell), ctx.span))
        if out is None:
            out = xp.empty(frame + tuple(result_cell), xp.rep(part))
        out = xp.scatter(out, part_sel, part)
    return out


def if_masked(engine, e, env: dict, ienv: dict, batch: tuple, cond):
    """``if`` while tracing, its flags ``cond`` (a Val) a frame or not yet known: both branches
    over the whole frame, each under its flags, the results selected cell by cell."""
    xp, running = engine.xp, engine._running
    if running.masked_ifs >= masks.MAX_MASKED_DEPTH:
        xp.untraceable("a recursive function whose `if` depends on data")
    flags = cond.arr
    running.masked_ifs += 1
    try:
        with masks.masked(engine, flags):
            then = plain_val(engine.ev(e.then, env, ienv, batch))
        with masks.masked(engine, xp.logical_not(flags)):
            orelse = plain_val(engine.ev(e.orelse, env, ienv, batch))
    finally:
        running.masked_ifs -= 1
    m = max(cond.k, then.k, orelse.k)
    a, b = align(xp, then, m, 0, 0), align(xp, orelse, m, 0, 0)
    cell_rank = a.ndim - m
    chosen = xp.reshape(flags, flags.shape + (1,) * (m - cond.k + cell_rank))
    return Val(xp.where(chosen, a, b), m)
