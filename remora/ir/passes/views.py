"""Views: what only re-describes an array's axes is its operand, or one ``reshape`` of it.

**Laws.**  (1) A ``reshape`` or ``broadcast_to`` to the operand's own shape, a ``permute_dims``
by the identity, a ``moveaxis`` of an axis to where it is, a ``roll`` by a whole number of turns
(when nothing writes in place: the roll's copy becomes the operand itself) and a ``compact`` of
an array with no broadcast axis (at trace time) *are* the operand.  (2) A ``permute_dims`` that moves only axes of length 1 is a ``reshape``.  (3) A
chain of such views (``reshape`` of ``reshape``; unit-axis permutations) is one ``reshape`` of
the chain's source — when nothing in the program writes in place, since a folded chain may
share memory where the chain made a copy.  (4) ``compact(broadcast_to(v, S))`` that keeps all
of ``v``'s items is ``v`` with unit axes added: the data-dependent shape guard the ``compact``
needed (its result's shape follows strides) is gone.

Values, dtypes and shapes are unchanged; no rounding is involved.  The engine is written for
every shape, and once shapes are fixed these calls do nothing: each would cost a Python call
per replay (at the smallest sizes most of a plan's time).
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, Sym, subst
from .common import Context, in_bodies


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    alias: dict[str, Sym] = {}
    steps = _rewrite(steps, alias, {}, ctx)
    return steps, subst(result, alias)


def _rewrite(steps: list[Eqn], alias: dict, views: dict, ctx: Context) -> list[Eqn]:
    """``views``: name → (source, permutation, unit-only) such that the array is
    ``reshape(permute_dims(source, permutation), its shape)`` — a view when unit-only, or
    ("broadcast", operand) for a ``broadcast_to``."""
    out: list[Eqn] = []
    for step in steps:
        step = step.replace(args=subst(step.args, alias), kw=subst(step.kw, alias))
        if step.kind == "loop":
            inner = dict(views)
            step = in_bodies(step, lambda body, res: (_rewrite(body, alias, inner, ctx), subst(res, alias)))
            out.append(step)
            continue
        if step.kind == "call" and type(step.outs) is Sym and step.args and type(step.args[0]) is Sym \
                and (not step.kw or step.op == "roll"):
            new = _view(step, views, ctx)
            if type(new) is Sym:
                alias[step.outs.name] = new
                continue
            step = new
        out.append(step)
    return out


def _view(step: Eqn, views: dict, ctx: Context) -> Sym | Eqn:
    """``step``, or the operand it gives back unchanged (a Sym), or a cheaper step to its value."""
    op, x, out = step.op, step.args[0], step.outs
    shape = tuple(out.value.shape)
    if op in ("reshape", "broadcast_to", "compact") and tuple(x.value.shape) == shape:
        return x  # (a compact with no broadcast axis at trace time: the later steps expect this shape)
    if op == "loop_items" and out.value is x.value:
        return x  # (the backend's items are its arrays' own)
    if op == "moveaxis" and len(step.args) == 3 and x.ndim and step.args[1] % x.ndim == step.args[2] % x.ndim:
        return x
    if op == "roll" and ctx.pure and _rolls_nothing(step, x):
        return x
    if op == "broadcast_to":
        views[out.name] = ("broadcast", x)
        return step
    if op == "compact":
        made = views.get(x.name)
        if made is not None and type(made[0]) is str and made[1].value.size == out.value.size:
            return _as_view(step, _form(views, made[1]), views, ctx, view=True)
        return step
    if op == "permute_dims":
        axes = tuple(step.args[1])
        if axes == tuple(range(len(axes))):
            return x
        src, perm, unit = _form(views, x)
        if not (unit and ctx.pure):
            src, perm = x, tuple(range(x.ndim))
        # x's axes longer than 1 are, in order, those of permute_dims(src, perm)
        long_src = [a for a in perm if src.value.shape[a] != 1]
        where = dict(zip([k for k in range(x.ndim) if x.value.shape[k] != 1], long_src))
        order = [where[k] for k in axes if x.value.shape[k] != 1]
        perm = tuple(order + [a for a in range(src.ndim) if src.value.shape[a] == 1])
        return _as_view(step, (src, perm, True), views, ctx, view=src is x)
    if op == "reshape":
        src, perm, unit = _form(views, x)
        if not ctx.pure:
            src, perm, unit = x, tuple(range(x.ndim)), True
        return _as_view(step, (src, perm, unit and _long(x.value.shape) == _long(shape)), views, ctx)
    return step


def _rolls_nothing(step: Eqn, x: Sym) -> bool:
    """Whether a ``roll`` shifts by a whole number of turns (its copy is the operand's atoms)."""
    shift = step.args[1] if len(step.args) > 1 else dict(step.kw).get("shift")
    axis = step.args[2] if len(step.args) > 2 else dict(step.kw).get("axis")
    if type(shift) is not int or type(axis) is not int or not x.ndim:
        return False
    length = x.value.shape[axis]
    return length == 0 or shift % length == 0


def _form(views: dict, x: Sym) -> tuple:
    made = views.get(x.name)
    if made is None or type(made[0]) is str:
        return x, tuple(range(x.ndim)), True
    return made


def _as_view(step: Eqn, form: tuple, views: dict, ctx: Context, view: bool = False) -> Sym | Eqn:
    """``step``'s value as ``form`` says: its source itself, or one reshape of it (when chains
    may be folded, or ``view``: the reshape only adds or drops unit axes of a view), or ``step``
    itself — remembered as ``form`` for the views made from it next."""
    src, perm, _ = form
    shape = tuple(step.outs.value.shape)
    views[step.outs.name] = form
    if perm == tuple(range(len(perm))) and (ctx.pure or view):
        if tuple(src.value.shape) == shape:
            return src
        return Eqn("call", "reshape", (src, shape), step.outs)
    return step


def _long(shape: tuple) -> list:
    return [d for d in shape if d != 1]
