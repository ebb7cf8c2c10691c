"""Hoisting: what a loop's body computes the same way at every step is computed once, before it.

**Law.**  A loop's body runs once per item with the item's counter and the accumulator; an
operation of the body whose arguments depend on neither — only on values defined before the
loop, and on other such operations — gives the same value at every step, so computing it once
before the loop changes no value.  (A transposition of an input read at every step of a
gradient descent, the ``length`` of an input turned into a ``Float``.)  It also runs when the
loop has no items, which is unobservable: the operations moved are pure and cannot fail.

**Keeps** in the body: guards, checks, writes, nested loops and sites, an operation whose shape
the trace decided something on, a fresh buffer where the body writes, and anything reading the
counter (an item) or the accumulator.
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, LoopIndex, Recording, names, outs_of
from .common import Context, writes

_FRESH = {"empty", "full", "scatter"}


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    out: list[Eqn] = []
    for step in steps:
        if step.kind != "loop":
            out.append(step)
            continue
        sub, counter, acc, res = step.extra
        body, res = run(sub.steps, res, ctx)  # (inner loops first: their invariants join this body)
        moved, kept = _split(body, acc.name, writes(body))
        out.extend(moved)
        inner = Recording(sub.tracer, sub.params)
        inner.steps = kept
        out.append(step.replace(extra=(inner, counter, acc, res)))
    return out, result


def _split(body: list[Eqn], acc: str, writing: bool) -> tuple[list[Eqn], list[Eqn]]:
    varying = {acc}
    moved: list[Eqn] = []
    kept: list[Eqn] = []
    for step in body:
        reads = names(step.args) | names(step.kw)
        invariant = (step.kind == "call" and not step.shape_guard and not (writing and step.op in _FRESH)
                     and not _has_counter(step.args) and not (reads & varying))
        if invariant:
            moved.append(step)
        else:
            kept.append(step)
            varying.update(o.name for o in outs_of(step))
    return moved, kept


def _has_counter(x: Any) -> bool:
    t = type(x)
    if t is LoopIndex:
        return True
    if t in (tuple, list):
        return any(_has_counter(y) for y in x)
    if t is slice:
        return _has_counter((x.start, x.stop, x.step))
    return False
