"""Loops planned once: a ``fold``/``reduce``/``scan`` step traced for one item, replayed per item.

The backend's ``loop`` and ``scan`` kernels take a step function ``step(i, acc)``.  The tracer
calls the step once with a symbolic item index (:class:`~.trace.LoopIndex`) and a placeholder for
the accumulator, records what it does into a recording of its own, and checks that the step
keeps the accumulator's dtype and shape (else a step's plan would not fit the next one: the form
is then run dynamically).  The step is compiled to a Python function, the trace-time value is
computed with it through the real backend's kernel — so tracing a million-step fold costs one
traced step and a million compiled ones — and the loop is one step of the enclosing plan.
"""

from __future__ import annotations

from typing import Any, Callable

from ..backends import host
from .codegen import step_function
from ..ir.core import Eqn, LoopIndex, Miss, Recording, Sym, Untraceable, concrete, is_object as _is_object
from .trace import TracingBackend


def trace_loop(tracer: TracingBackend, kind: str, n: int, step: Callable, init: Any, axis: int | None = None):
    """``tracer.loop``/``tracer.scan``: one recorded loop step (see the module docstring)."""
    if kind == "loop" and n == 0:
        return init
    tracer.refuse_while_speculating()
    start = concrete(init)
    if _is_object(start) or _indexes_objects(step):
        raise Untraceable("a loop over frames of functions or boxes")
    counter = f"i{tracer.count + 1}"
    sub, acc, result = _trace_step(tracer, step, start, 0, counter)
    value = concrete(result)
    if getattr(value, "shape", None) != start.shape or value.dtype != start.dtype:
        raise Untraceable("a loop step changes its accumulator's dtype or shape")
    if n > 1:
        # The same step traced for the next item must record the same calls: an item taken from
        # an array by a Python index the tracer cannot see would show up here as a changed constant.
        other, other_acc, other_result = _trace_step(tracer, step, value, 1, counter)
        names = {acc.name: other_acc.name}
        names["%recipes"] = tracer.recipes
        if not _same_steps(sub.steps, other.steps, names) or not _same_arg(result, other_result, names):
            raise Untraceable("a loop step depends on its item other than through the tracer")
    compiled = step_function(sub, counter, acc, result, tracer.inner)
    try:
        if kind == "loop":
            out = tracer.inner.loop(n, compiled, start)
        else:
            out = tracer.inner.scan(n, compiled, start, axis)
    except Miss:
        raise Untraceable("a loop step decides differently from one item to the next") from None
    sym = tracer.fresh(out)
    tracer.rec.steps.append(Eqn("loop", kind, (n, init, axis), sym, extra=(sub, counter, acc, result)))
    return sym


def _indexes_objects(step: Callable) -> bool:
    """Whether the step may take its item from a frame of functions or boxes: the tracer sees no
    such read, and two items that happen to be the same function would hide it."""
    for cell in getattr(step, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if _is_object(value) and getattr(value, "size", 0) > 1 and host.uniform_atom(value) is None:
            return True
    return False


def _trace_step(tracer: TracingBackend, step: Callable, start, at: int, counter: str):
    """The recording of ``step`` for item ``at`` with the accumulator ``start``."""
    sub = Recording(tracer)
    outer = tracer.rec
    tracer.rec = sub
    try:
        acc = tracer.fresh(start)
        result = step(LoopIndex(at, 1, 0, counter), acc)
    finally:
        tracer.rec = outer
    return sub, acc, result


def _same_steps(a: list[Eqn], b: list[Eqn], names: dict) -> bool:
    """Whether two recordings make the same calls (traced arrays matched up as they are made)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.kind != y.kind or x.op != y.op or x.shape_guard != y.shape_guard:
            return False
        if x.kind == "loop":
            return False  # (nested loops: not compared; the outer loop is run dynamically)
        if x.kind == "require":
            if not _same_arg(x.args[:3], y.args[:3], names):  # (the error callbacks differ, but raise alike)
                return False
        elif not _same_arg((x.args, x.kw), (y.args, y.kw), names):
            return False
        if x.kind == "guard" and not _same_arg(x.extra, y.extra, names):
            return False
        xo = x.outs if type(x.outs) is tuple else (x.outs,) if x.outs is not None else ()
        yo = y.outs if type(y.outs) is tuple else (y.outs,) if y.outs is not None else ()
        if len(xo) != len(yo):
            return False
        for o, p in zip(xo, yo):
            if o.value.shape != p.value.shape or o.value.dtype != p.value.dtype:
                return False
            names[o.name] = p.name
    return True


def _same_arg(x, y, names: dict) -> bool:
    tx = type(x)
    if tx is not type(y):
        return False
    if tx is Sym:
        return names.get(x.name, x.name) == y.name
    if tx is LoopIndex:
        return (x.a, x.b) == (y.a, y.b)
    if tx in (tuple, list):
        return len(x) == len(y) and all(_same_arg(p, q, names) for p, q in zip(x, y))
    if x is y:
        return True
    if getattr(x, "shape", None) is not None and getattr(x, "dtype", None) is not None:
        # Arrays as the very same object (the program's literals and globals are), or folded the
        # same way from the same objects; an item taken from a constant by a Python index is
        # made anew, with no recipe — even when its atoms happen to be equal, it may not be for
        # the next item.
        recipes = names.get("%recipes", {})
        rx, ry = recipes.get(id(x)), recipes.get(id(y))
        return rx is not None and ry is not None and rx[0] is x and ry[0] is y and rx[1] == ry[1] \
            and _same_arg(rx[2:], ry[2:], names)
    if callable(x):
        return getattr(x, "__func__", None) is not None and x.__func__ is getattr(y, "__func__", None) \
            and x.__self__ is y.__self__ or x == y
    try:
        return bool(x == y)
    except (ValueError, TypeError):  # (arrays compare elementwise: then they are not one static argument)
        return False


__all__ = ["trace_loop", "Sym"]
