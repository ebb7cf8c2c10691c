"""Dead code: an operation whose result nothing reads is not made.

**Law.**  Backend operations are pure, so an equation whose outputs are read by no later
equation (at any depth) and are not the program's result can be dropped without changing any
value.

**Keeps** all the same: guards, run-time checks, loops, writes (``scatter``, ``__setitem__``)
and the ``while``/``if`` sites (whose cells' run-time checks may fail); and an operation whose
shape the trace decided something on — its shape guard must run even if the value is not used
again (but a ``compact``'s shape follows strides, not values: whatever the trace decided from it
is the same for every value, so a ``compact`` nothing reads goes).
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, names, outs_of, uses
from .common import WRITES, Context, in_bodies


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    return live(steps, names(result)), result


def live(steps: list[Eqn], needed: set) -> list[Eqn]:
    """``steps`` without the pure operations whose results nothing in ``needed`` or later reads."""
    kept: list[Eqn] = []
    needed = set(needed)
    for step in reversed(steps):
        if step.kind == "call" and not kept_anyway(step) and not ({o.name for o in outs_of(step)} & needed):
            continue
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: (live(body, names(res)), res))
            needed |= uses(step.extra[0].steps) | names(step.extra[3])
        needed |= names(step.args) | names(step.kw)
        kept.append(step)
    kept.reverse()
    return kept


def kept_anyway(step: Eqn) -> bool:
    """Whether an operation stays even when nothing reads its value."""
    return step.op in WRITES or (step.shape_guard and step.op != "compact")
