"""A whole program of the IR, as a plan keeps it: to print (``--plan``) and to test."""

from __future__ import annotations

from typing import Any

from .core import Abstract, Eqn, Recording, Sym
from .printer import format_program


class Program:
    """A whole program of the IR: its inputs (each variable with where it is read from), its
    equations and its result.  What a plan keeps to show (``--plan``) and to test: its variables
    hold only their types (:func:`freeze`), never the arrays the trace computed."""

    __slots__ = ("inputs", "steps", "result")

    def __init__(self, inputs: list, steps: list[Eqn], result: Any):
        self.inputs = inputs
        self.steps = steps
        self.result = result

    def eqns(self, deep: bool = True) -> list[Eqn]:
        """Every equation, those of loop bodies too (after their loop) when ``deep``."""
        out: list[Eqn] = []

        def walk(steps: list[Eqn]) -> None:
            for step in steps:
                out.append(step)
                if deep and step.kind == "loop":
                    walk(step.extra[0].steps)

        walk(self.steps)
        return out

    def ops(self) -> list[str]:
        """The operation of every equation, in order (loop bodies included)."""
        return [e.op for e in self.eqns()]

    def text(self) -> str:
        return format_program(self.inputs, self.steps, self.result)


def freeze(inputs: list, steps: list[Eqn], result: Any) -> Program:
    """The program with every variable replaced by one that holds only its type."""
    memo: dict[str, Sym] = {}

    def var(x: Sym) -> Sym:
        hit = memo.get(x.name)
        if hit is None:
            value = x.value
            hit = memo[x.name] = Sym(Abstract(value.dtype, value.shape), x.name, None)  # type: ignore[arg-type]
        return hit

    def tree(x: Any) -> Any:
        t = type(x)
        if t is Sym:
            return var(x)
        if t in (tuple, list):
            return t(tree(y) for y in x)
        if t is slice:
            return slice(tree(x.start), tree(x.stop), tree(x.step))
        return x

    def eqns(steps: list[Eqn]) -> list[Eqn]:
        out = []
        for step in steps:
            extra = step.extra
            if step.kind == "loop":
                sub, counter, acc, res = extra
                body = Recording(None, sub.params)
                body.steps = eqns(sub.steps)
                extra = (body, counter, var(acc), tree(res))
            out.append(step.replace(args=tree(step.args), kw=tree(step.kw), outs=tree(step.outs), extra=extra))
        return out

    return Program([(var(v), where) for v, where in inputs], eqns(steps), tree(result))
