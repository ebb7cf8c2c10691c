"""Gathers at known positions: reading an array at an index frame that ranges over its axis is a
view of the array (a slice, or a rotation where the positions wrap), not a gather.

This is what makes pointful programs (``for``, contract §12) run as their point-free versions:
``(for ((i n)) (index xs i))`` applies ``index`` over the frame ``iota/s (Shp n)``, and the
engine's lifting records ``take(xs, 0 … n−1)``; a nested index is a ``take_along_axis`` of a
broadcast.  The positions are constants of the program (they follow from shapes alone), so
what they select is known when the program is made.

**Laws.**  Let ``c`` be a constant array of positions into an axis of length ``N`` that is, for
some axis ``d`` of ``c`` and integers ``s``, ``m = c.shape[d]``, ``c[ι] = (s + ι[d]) mod N`` for
every position ``ι`` (constant along its other axes; an ``c`` of one repeated value is the case
``m = 1``).  Write ``f(x)`` for ``x[s : s+m]`` along the axis when ``s + m ≤ N`` (a slice: a
view) and for ``roll(x, −s)`` when the positions wrap and ``m = N`` (a rotation); then

1. ``take(x, c, axis)`` is ``f(x)`` with its axis reshaped to ``c``'s shape (``m`` at ``d``,
   ones elsewhere) and broadcast to ``c``'s shape — for ``s = 0, m = N`` the array itself;
2. ``take_along_axis(x, c, axis)`` with ``d`` the axis itself (or ``m = 1``) is ``f(x)``
   broadcast to the result's shape;
3. ``take_along_axis(x, c, axis)`` with ``d ≠ axis`` and ``c.shape[axis] = 1`` is, when ``x``
   does not vary along ``d`` (``x.shape[d] = 1``, or ``x`` is a ``broadcast_to`` of a ``y`` with
   ``y.shape[d] = 1``), ``f`` of that source with axes ``d`` and ``axis`` swapped, broadcast to
   the result's shape: the position along ``d`` is the position read along ``axis``.
4. ``x[k …]`` reading, by integers, axes of ``x`` along which it does not vary (axes of length
   1, or broadcast axes of a ``broadcast_to``) is the source without those axes (a reshape, then
   broadcast to the result's shape): the engine broadcasts an argument shared by a frame of
   indices, then reads its first cell.

Exact: the same atoms, selected without arithmetic.  **Declines** (the gather stays): positions
that are not such a progression (``(index xs (* 2 i))``, a permutation), positions that wrap
while covering less than the whole axis, a diagonal (law 3 where ``x`` varies along ``d``),
positions that are not constants (they follow data), and positions the backend does not hold.
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, Sym, outs_of
from .common import Context, argument, in_bodies

#: the positions a progression is looked for in: larger constants stay gathers (a look costs a
#: pass over the constant, once per plan)
MAX_POSITIONS = 1 << 27


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    made: dict[str, Eqn] = {}
    return _rewrite(steps, made, ctx), result


def _rewrite(steps: list[Eqn], made: dict, ctx: Context) -> list[Eqn]:
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: (_rewrite(body, dict(made), ctx), res))
        elif step.kind == "call" and type(step.outs) is Sym and step.args and type(step.args[0]) is Sym:
            new = _as_views(step, made, ctx)
            if new is not None:
                for eqn in new:
                    made[eqn.outs.name] = eqn
                out.extend(new)
                continue
        for o in outs_of(step):
            made[o.name] = step
        out.append(step)
    return out


def _as_views(step: Eqn, made: dict, ctx: Context) -> list[Eqn] | None:
    if step.op == "take":
        return _take(step, ctx)
    if step.op == "take_along_axis":
        return _take_along_axis(step, made, ctx)
    if step.op == "__getitem__" and len(step.args) == 2 and not step.kw:
        return _item_of_constant_axes(step, made, ctx)
    return None


# --- the positions ---------------------------------------------------------------------------


def progression(c: Any, n: int, xp: Any) -> tuple[int | None, int, int] | None:
    """``(d, s, m)`` such that ``c[ι] = (s + ι[d]) mod n`` for every position ``ι`` (``d`` None:
    every position holds ``s``, ``m = 1``); None when ``c`` is no such progression."""
    if type(c) is Sym or not xp.owns(c) or getattr(c, "dtype", None) is None or c.dtype.kind not in "iu":
        return None
    if c.size == 0 or c.size > MAX_POSITIONS or n <= 0:
        return None
    s = xp.to_host(xp.reshape(c, (-1,))[0:1])[0]
    if not 0 <= s < n:
        return None
    shape = tuple(c.shape)
    if xp.array_equal(c, xp.broadcast_to(xp.reshape(xp.asarray(s, "Int"), (1,) * len(shape)), shape)):
        return None, s, 1
    for d, m in enumerate(shape):
        if m <= 1:
            continue
        unit = tuple(m if k == d else 1 for k in range(len(shape)))
        expected = xp.broadcast_to(xp.reshape((xp.arange(m) + s) % n, unit), shape)
        if xp.array_equal(c, expected):
            return d, s, m
    return None


def _along(x: Sym, axis: int, s: int, m: int, ctx: Context) -> tuple[Sym, list[Eqn]] | None:
    """``f(x)`` of the laws: ``x`` itself, a slice of it or a rotation, along ``axis``."""
    n = x.value.shape[axis]
    if s == 0 and m == n:
        return x, []
    shape = tuple(m if k == axis else d for k, d in enumerate(x.value.shape))
    out = ctx.fresh(x.value.dtype, shape)
    if s + m <= n:
        key = (slice(None),) * axis + (slice(s, s + m),)
        return out, [Eqn("call", "__getitem__", (x, key), out)]
    if m == n:
        return out, [Eqn("call", "roll", (x, -s, axis), out)]
    return None


def _seen_as(x: Sym, target: Sym, steps: list[Eqn], ctx: Context) -> list[Eqn] | None:
    """Equations making ``target`` from ``x``: a reshape to its shape with x's atoms in order,
    then a broadcast; None when ``x`` does not broadcast to it."""
    shape = tuple(target.value.shape)
    have = tuple(x.value.shape)
    if have == shape:
        if steps and steps[-1].outs is x:
            return steps[:-1] + [steps[-1].replace(outs=target)]
        return steps + [Eqn("call", "reshape", (x, shape), target)]
    if len(have) != len(shape) or any(h not in (1, t) for h, t in zip(have, shape)):
        return None
    return steps + [Eqn("call", "broadcast_to", (x, shape), target)]


def _reshaped(x: Sym, shape: tuple, ctx: Context) -> tuple[Sym, list[Eqn]]:
    if tuple(x.value.shape) == shape:
        return x, []
    out = ctx.fresh(x.value.dtype, shape)
    return out, [Eqn("call", "reshape", (x, shape), out)]


# --- the laws --------------------------------------------------------------------------------


def _positions(step: Eqn, ctx: Context, same_rank: bool) -> tuple | None:
    """(x, c, axis, (d, s, m)) of a gather ``op(x, c, axis)`` whose positions ``c`` are a
    progression (:func:`progression`); None otherwise."""
    x, c, axis = step.args[0], argument(step, 1, "indices"), argument(step, 2, "axis")
    if type(axis) is not int or not x.ndim or (same_rank and getattr(c, "ndim", None) != x.ndim):
        return None
    axis %= x.ndim
    found = progression(c, x.value.shape[axis], ctx.xp)
    return None if found is None else (x, c, axis, found)


def _take(step: Eqn, ctx: Context) -> list[Eqn] | None:
    """Law 1."""
    gather = _positions(step, ctx, same_rank=False)
    if gather is None:
        return None
    x, c, axis, (d, s, m) = gather
    along = _along(x, axis, s, m, ctx)
    if along is None:
        return None
    z, steps = along
    unit = tuple(m if k == d else 1 for k in range(c.ndim))
    shape = tuple(x.value.shape[:axis]) + unit + tuple(x.value.shape[axis + 1:])
    z, more = _reshaped(z, shape, ctx)
    return _seen_as(z, step.outs, steps + more, ctx)


def _take_along_axis(step: Eqn, made: dict, ctx: Context) -> list[Eqn] | None:
    """Laws 2 and 3."""
    gather = _positions(step, ctx, same_rank=True)
    if gather is None:
        return None
    x, c, axis, (d, s, m) = gather
    if d is None or d == axis:  # law 2
        along = _along(x, axis, s, m, ctx)
        return None if along is None else _seen_as(along[0], step.outs, along[1], ctx)
    if c.shape[axis] != 1:
        return None
    source = _constant_along(x, d, made)
    if source is None:
        return None  # (a diagonal)
    along = _along(source, axis, s, m, ctx)
    if along is None:
        return None
    z, steps = along
    perm = list(range(x.ndim))
    perm[d], perm[axis] = axis, d
    shape = tuple(z.value.shape[k] for k in perm)
    swapped = ctx.fresh(z.value.dtype, shape)
    long = [k for k in perm if z.value.shape[k] != 1]
    op, arg = ("reshape", shape) if long == sorted(long) else ("permute_dims", tuple(perm))  # (a unit axis moved)
    return _seen_as(swapped, step.outs, steps + [Eqn("call", op, (z, arg), swapped)], ctx)


def _constant_along(x: Sym, d: int, made: dict) -> Sym | None:
    """An array of ``x``'s rank with length 1 along ``d`` that broadcasts to ``x``, or None."""
    return x if x.value.shape[d] == 1 else _broadcast_source(x, [d], made)


def _broadcast_source(x: Sym, axes: list, made: dict) -> Sym | None:
    """The ``y`` of ``x = broadcast_to(y, …)`` (of ``x``'s rank) when ``y`` has length 1 along every
    one of ``axes``; None otherwise."""
    eqn = made.get(x.name)
    if eqn is None or eqn.kind != "call" or eqn.op != "broadcast_to" or eqn.kw or type(eqn.args[0]) is not Sym:
        return None
    y = eqn.args[0]
    return y if y.ndim == x.ndim and all(y.value.shape[a] == 1 for a in axes) else None


def _item_of_constant_axes(step: Eqn, made: dict, ctx: Context) -> list[Eqn] | None:
    """Law 4."""
    x, key = step.args
    key = key if type(key) is tuple else (key,)
    if len(key) > x.ndim or not all(type(k) is int or _whole(k) for k in key):
        return None
    picked = [a for a, k in enumerate(key) if type(k) is int]
    if not picked:
        return None
    source = x if all(x.value.shape[a] == 1 for a in picked) else _broadcast_source(x, picked, made)
    if source is None:
        return None
    kept = tuple(dim for a, dim in enumerate(source.value.shape) if a not in picked)
    z, steps = _reshaped(source, kept, ctx)
    return _seen_as(z, step.outs, steps, ctx)


def _whole(k: Any) -> bool:
    return type(k) is slice and k.start is None and k.stop is None and k.step is None
