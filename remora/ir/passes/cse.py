"""Common subexpressions: an operation made again on the same operands is made once.

**Law.**  Backend operations are pure functions of their operands (the only ones that are not —
``scatter``, ``__setitem__`` — write into an array): two equations with one operation and the
same arguments compute the same value, dtype and shape, so the second is the first's result
(the program's ``(* x x)`` written twice, a λ applied twice to the same values).

**Declines** where the program writes in place anywhere (a value computed twice may be two
buffers on purpose), for operations that make a fresh buffer each time (``empty``, ``full``,
``scatter``), and for an equation whose shape the trace decided something on (its guard runs).
Arguments are compared exactly: variables by name, numbers by their exact spelling (``-0.0`` is
not ``0.0``), 0-d constants by dtype and bytes, other constants by identity.
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, LoopIndex, Sym, outs_of, subst
from .common import Context, in_bodies

#: operations that make a new buffer each time (two are never the same array)
FRESH = {"empty", "full", "scatter"}


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    if not ctx.pure:
        return steps, result
    alias: dict[str, Sym] = {}
    steps = _rewrite(steps, alias, {})
    return steps, subst(result, alias)


def _rewrite(steps: list[Eqn], alias: dict, made: dict) -> list[Eqn]:
    out: list[Eqn] = []
    for step in steps:
        step = step.replace(args=subst(step.args, alias), kw=subst(step.kw, alias))
        if step.kind == "loop":
            inner = dict(made)
            out.append(in_bodies(step, lambda body, res: (_rewrite(body, alias, inner), subst(res, alias))))
            continue
        if step.kind == "call" and step.op not in FRESH and not step.shape_guard:
            key = key_of((step.op, step.args, step.kw))
            if key is not None:
                first = made.get(key)
                if first is not None and _same_kind(first, step.outs):
                    for a, b in zip(outs_of(step), _tuple(first)):
                        alias[a.name] = b
                    continue
                made[key] = step.outs
        out.append(step)
    return out


def _tuple(outs) -> tuple:
    return outs if type(outs) is tuple else (outs,)


def _same_kind(a, b) -> bool:
    return len(_tuple(a)) == len(_tuple(b)) and all(
        x.value.shape == y.value.shape and x.value.dtype == y.value.dtype for x, y in zip(_tuple(a), _tuple(b)))


def key_of(x: Any):
    """What an equation's arguments compute, hashable — or None if unsure."""
    t = type(x)
    if t is Sym:
        return ("s", x.name)
    if t in (tuple, list):
        parts = tuple(key_of(y) for y in x)
        return None if any(p is None for p in parts) else (t.__name__, parts)
    if t is slice:
        return key_of(("slice", x.start, x.stop, x.step))
    if t in (int, bool, str) or x is None or x is Ellipsis:
        return (t.__name__, x)
    if t is float:
        return ("float", repr(x))
    if t is LoopIndex:
        return ("i", x.loop, x.a, x.b)
    if getattr(x, "shape", None) == () and getattr(x, "dtype", None) is not None and hasattr(x, "tobytes"):
        return ("0d", x.dtype.str, x.tobytes())
    strides = getattr(x, "strides", None)
    if strides is not None and getattr(x, "size", 0) and getattr(x, "dtype", None) is not None \
            and x.dtype.kind in "fiub" and all(st == 0 for st in strides):
        return ("one atom", x.dtype.str, tuple(x.shape), x[(0,) * x.ndim].tobytes())  # (a scalar, broadcast)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return ("o", x)
