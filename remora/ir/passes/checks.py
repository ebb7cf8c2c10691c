"""Checks on constants: a run-time check whose condition is a constant of the program is decided
once, when the program is made.

**Law.**  ``require(ok, …)`` raises the program's located error where ``ok`` has a false atom.
When ``ok`` is a constant (after :mod:`.fold`: it follows from shapes alone — ``mod`` by a
length, ``index`` at positions ``(+ i 1)`` of an index frame), it is the same on every run as
when the trace checked it, and the trace only made a program because it held: the check holds
on every run, and is dropped.

Exact (no value changes).  Pointful programs make many: every ``index`` at an index frame
checks its positions, every ``mod`` its divisor — a Python call and a pass over the positions
on every run.  **Declines** a condition that is a variable (it follows data) or a constant
that has a false atom (kept: it raises, as it must).
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, has_sym
from .common import Context, in_bodies


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: run(body, res, ctx))
        elif step.kind == "require" and _holds(step.args[0], ctx):
            continue
        out.append(step)
    return out, result


def _holds(ok: Any, ctx: Context) -> bool:
    if has_sym(ok):
        return False
    if isinstance(ok, bool):
        return ok
    return ctx.xp.owns(ok) and getattr(ok, "dtype", None) is not None and ok.dtype.kind == "b" and bool(ctx.xp.all(ok))
