"""What the passes share: the context a pass rewrites in, and a few walks over equations."""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from ..core import Abstract, Eqn, Recording, Sym, names, uses


class Context:
    """What a pass may ask about the program it rewrites: the backend it will be lowered to
    (its dtypes and the few facts its laws depend on), whether some operation writes in place
    (then chains of views and repeated calls are left alone: they may share memory), and how to
    make a new variable."""

    _names = itertools.count(1)
    _lock = threading.Lock()

    def __init__(self, xp: Any, steps: list[Eqn]):
        self.xp = xp
        self.pure = not writes(steps)
        #: whether every value is still rounded as the trace rounded it (a pass that relies on an
        #: allowance to round otherwise — D27 — says so here: the program's first value is then
        #: the rewritten program's, not the trace's, so that every call gives the same atoms)
        self.same_rounding = True

    def fresh(self, dtype: Any, shape: tuple) -> Sym:
        """A new variable of ``dtype`` and ``shape`` (named ``pN``: never a trace's ``vN``)."""
        with self._lock:
            n = next(self._names)
        return Sym(Abstract(dtype, shape), f"p{n}", None)  # type: ignore[arg-type]


#: backend operations that write into an argument
WRITES = {"scatter"}


def writes(steps: list[Eqn]) -> bool:
    """Whether some equation (at any depth) writes into an array."""
    for step in steps:
        if step.kind == "setitem" or step.op in WRITES:
            return True
        if step.kind == "loop" and writes(step.extra[0].steps):
            return True
    return False


def read_counts(steps: list[Eqn], result: Any) -> dict:
    """How many times each variable is read (by the equations — a loop body's reads count twice,
    as it runs many times — and by the result)."""
    counts: dict[str, int] = {}

    def count(x: Any, weight: int) -> None:
        for name in _occurrences(x):
            counts[name] = counts.get(name, 0) + weight

    for step in steps:
        count(step.args, 1)
        count(step.kw, 1)
        if step.kind == "loop":
            for name in uses(step.extra[0].steps) | names(step.extra[3]):
                counts[name] = counts.get(name, 0) + 2
    count(result, 2)
    return counts


def _occurrences(x: Any) -> list:
    t = type(x)
    if t is Sym:
        return [x.name]
    if t in (tuple, list):
        return [n for y in x for n in _occurrences(y)]
    if t is slice:
        return _occurrences((x.start, x.stop, x.step))
    return []


def in_bodies(step: Eqn, rewrite: Callable[[list[Eqn], Any], tuple[list[Eqn], Any]]) -> Eqn:
    """``step`` (a loop) with its body rewritten by ``rewrite(steps, result)``."""
    sub, counter, acc, result = step.extra
    body = Recording(sub.tracer, sub.params)
    body.steps, result = rewrite(sub.steps, result)
    return step.replace(extra=(body, counter, acc, result))


def argument(step: Eqn, position: int, name: str, default: Any = None) -> Any:
    """An operation's argument given by position or by keyword (the engine writes both)."""
    if len(step.args) > position:
        return step.args[position]
    return dict(step.kw).get(name, default)
