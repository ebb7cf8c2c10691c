"""Joins: a reduction of parts joined along its axis is the combination of the parts' reductions.

**Laws.**  For an operation ``op`` that is associative and commutative *exactly* on the atoms
(Int and Bool ``add``, ``multiply``, ``minimum``, ``maximum``, ``logical_and``/``or``/``xor``):

- ``reduce(op, concat([x1 … xk], a), a) = op(reduce(op, x1, a), …, reduce(op, xk, a))`` over
  the parts with at least one item along ``a`` (an ``append`` of an identity row, as a
  histogram's zero row before a 10⁶-row one-hot matrix: the 512 MB joined copy is never made);
- ``reduce(op, stack([x1 … xk], a), a) = op(…op(x1, x2)…, xk)`` — a frame of ``k`` arrays
  reduced along its frame axis is ``k − 1`` elementwise operations (Life's eight shifted grids
  summed: no 8-deep stack).

**Declines** for Float (D22: a Float sum's rounding follows its items' order and grouping,
which the backend's pairwise reduction fixes), for parts of another dtype, and for any other
axis.
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, Sym
from .common import Context, argument, in_bodies

#: operations whose reduction is the same in any grouping and order, on Int and Bool
EXACT = {"add", "multiply", "minimum", "maximum", "logical_and", "logical_or", "logical_xor"}


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    for _ in range(4):  # (a part's reduction may be of a join itself: an append of frames)
        count = len(steps)
        steps, result = _once(steps, result, ctx)
        if len(steps) == count:
            break
    return steps, result


def _once(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    joined: dict[str, tuple] = {}  # a concat's or stack's name → (kind, its parts, its axis)
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            out.append(in_bodies(step, lambda body, res: _once(body, res, ctx)))
            continue
        if step.kind == "call" and step.op in ("concat", "stack") and type(step.outs) is Sym \
                and type(argument(step, 1, "axis", 0)) is int and type(step.args[0]) in (list, tuple):
            joined[step.outs.name] = (step.op, step.args[0], argument(step, 1, "axis", 0))
        elif step.kind == "call" and step.op == "reduce" and not step.kw:
            parts = _parts(step, joined)
            if parts is not None:
                out.extend(_combined(step, parts, ctx))
                continue
        out.append(step)
    return out, result


def _parts(step: Eqn, joined: dict):
    """(kind, the parts to combine) when ``step`` reduces a join along its axis exactly."""
    if len(step.args) != 3 or type(step.args[1]) is not Sym or step.args[1].name not in joined:
        return None
    op, x, axis = step.args
    kind, parts, along = joined[x.name]
    dtype = x.value.dtype
    if op not in EXACT or dtype.kind not in "iub" or along % x.ndim != axis % x.ndim \
            or not all(type(p) is Sym and p.value.dtype == dtype for p in parts):
        return None
    if kind == "concat":
        parts = tuple(p for p in parts if p.value.shape[axis] > 0)
        if not parts or len(parts) == 1 and parts[0].value.shape == x.value.shape:
            return None
    elif not parts:
        return None
    return kind, tuple(parts)


def _combined(step: Eqn, found: tuple, ctx: Context) -> list[Eqn]:
    kind, parts = found
    op, x, axis = step.args
    out_shape, dtype = tuple(step.outs.value.shape), step.outs.value.dtype
    eqns: list[Eqn] = []
    values: list[Sym] = []
    for part in parts:
        if kind == "concat":
            reduced = ctx.fresh(dtype, out_shape)
            eqns.append(Eqn("call", "reduce", (op, part, axis), reduced))
            values.append(reduced)
        else:
            values.append(part)
    value = values[0]
    if len(values) == 1:  # (one part: the reduction of a one-item stack is the item)
        eqns.append(Eqn("call", "reshape", (value, out_shape), step.outs))
        return eqns
    for i, part in enumerate(values[1:], 1):
        target = step.outs if i == len(values) - 1 else ctx.fresh(dtype, out_shape)
        eqns.append(Eqn("call", op, (value, part), target))
        value = target
    return eqns
