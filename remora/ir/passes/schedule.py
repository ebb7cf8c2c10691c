"""Schedule: each pure operation is made just before its first reader.

**Law.**  Backend operations are pure, so a ``call`` may run at any point after its operands are
made and before its first reader without changing any value.  Placing each one as late as that
(in the order its readers need them) makes no value earlier than it must be: fewer large
temporaries are alive at once (peak memory), and a value is read while it is still in cache.
A frame of eight shifted copies summed (``(reduce + [(shift 1 1) … (shift -1 -1)])``) then
makes each shift just before the sum that reads it, as NumPy written by hand does, instead of all
eight first.

**Keeps** in their order, and every operation's operands before them: guards, run-time checks,
writes (``scatter``, item assignment), loops and the ``while``/``if`` sites — and before a
write, a loop or a site every operation still pending is made first (a write changes an array
in place; a loop or a site may read anything).  An operation whose shape the trace decided
something on stays where it is (its guard is a decision).  It changes no rounding (the same
operations on the same operands) and relies on no exactness rule.
"""

from __future__ import annotations

from typing import Any

from ..core import Eqn, names, outs_of
from .common import WRITES, Context, in_bodies


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    return schedule(steps, result), result


def schedule(steps: list[Eqn], result: Any) -> list[Eqn]:
    """``steps`` with each movable operation just before its first reader (loop bodies too)."""
    out: list[Eqn] = []
    pending: dict[str, Eqn] = {}  # a movable operation not made yet, by each of its outputs
    order: dict[int, int] = {}  # (an operation's place in ``steps``)

    def make(wanted: set) -> None:
        """Make the pending operations that produce ``wanted`` (and their own operands)."""
        due = {id(pending[n]): pending[n] for n in wanted if n in pending}
        # the latest-recorded first: it is usually the longer chain, so the operands made after
        # it (often a leaf such as a shift) are alive for the shortest time
        for step in sorted(due.values(), key=lambda s: -order[id(s)]):
            if outs_of(step) and outs_of(step)[0].name in pending:
                for o in outs_of(step):
                    pending.pop(o.name, None)
                make(names(step.args) | names(step.kw))
                out.append(step)

    for i, step in enumerate(steps):
        order[id(step)] = i
        if step.kind == "loop":
            step = in_bodies(step, lambda body, res: (schedule(body, res), res))
        if _movable(step):
            for o in outs_of(step):
                pending[o.name] = step
            continue
        if step.kind in ("loop", "site", "setitem") or step.op in WRITES:
            make(set(pending))
        else:
            make(names(step.args) | names(step.kw))
        out.append(step)
    make(names(result))
    make(set(pending))  # (what nothing reads: dead code's pass has dropped what it may)
    return out


def _movable(step: Eqn) -> bool:
    return step.kind == "call" and step.op not in WRITES and not step.shape_guard and bool(outs_of(step))
