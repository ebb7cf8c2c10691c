"""Constant folding: an operation on constants alone is computed once, when the program is made.

**Law.**  A backend operation is a function of its arguments: an equation none of whose
arguments is a variable computes the same value on every run, so it is that value — a constant
of the program — and what reads it reads the constant.  The trace folds most such operations as
it goes (an operation on constants is carried out, not recorded); what reaches the IR is what
made a *fresh* buffer (``full``, ``empty``: recorded because a buffer may be written to) and
what the other passes leave with constant arguments (a ``reshape`` of a folded constant).

**Declines** a fresh buffer where the program writes in place (the buffer is the program's own
to write), one of more than :data:`MAX_FRESH` atoms (a constant is kept for the program's life),
and guards, checks, loops and sites (they are kept as they are).  Exact: the operation is the
backend's own, carried out once instead of on every run.
"""

from __future__ import annotations

from typing import Any

from ..core import OPERATORS, Eqn, Sym, has_sym, outs_of
from .common import Context, in_bodies

#: the most atoms of a fresh buffer folded into a constant
MAX_FRESH = 1 << 16
_FRESH = {"empty", "full"}
#: operations whose results' sizes or values follow data: never run at plan time
_KEPT = {"scatter", "loop_items"}


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    folded: dict[str, Any] = {}
    steps = _fold(steps, folded, ctx)
    return steps, _constants(result, folded)


def _fold(steps: list[Eqn], folded: dict, ctx: Context) -> list[Eqn]:
    out: list[Eqn] = []
    for step in steps:
        step = step.replace(args=_constants(step.args, folded), kw=_constants(step.kw, folded))
        if step.kind == "loop":
            out.append(in_bodies(step, lambda body, res: (_fold(body, folded, ctx), _constants(res, folded))))
            continue
        if step.kind == "call" and not has_sym(step.args) and not has_sym(step.kw) and _foldable(step, ctx):
            fn = OPERATORS.get(step.op) or getattr(ctx.xp, step.op)
            value = fn(*step.args, **dict(step.kw))
            outs = outs_of(step)
            values = value if type(step.outs) is tuple else (value,)
            if all(ctx.xp.owns(v) and v.shape == o.value.shape and v.dtype == o.value.dtype
                   for v, o in zip(values, outs)):
                for o, v in zip(outs, values):
                    folded[o.name] = ctx.xp.read_only(v)
                continue
        out.append(step)
    return out


def _foldable(step: Eqn, ctx: Context) -> bool:
    if step.op in _KEPT or step.shape_guard or step.op.startswith("_") and step.op not in OPERATORS:
        return False
    if step.op in _FRESH:
        return ctx.pure and all(o.value.size <= MAX_FRESH for o in outs_of(step))
    return True


def _constants(x: Any, folded: dict) -> Any:
    """``x`` with each folded variable replaced by its constant."""
    if not folded:
        return x
    t = type(x)
    if t is Sym:
        return folded.get(x.name, x)
    if t in (tuple, list):
        return t(_constants(y, folded) for y in x)
    if t is slice:
        return slice(_constants(x.start, folded), _constants(x.stop, folded), _constants(x.step, folded))
    return x

