"""The IR as text (``remora eval --plan``): one line per equation, each variable with its type.

::

    v1: float64[3] = input global xs#2
    v2: float64[3] = multiply v1 v1
    return v2

A loop prints its body indented under it, with its counter and accumulator; a constant prints as
its value when it is small, else as its type; a guard as the value the program was made for.
"""

from __future__ import annotations

from typing import Any

from .core import Eqn, LoopIndex, Sym, outs_of


def typed(v: Any) -> str:
    """A variable's name and type: ``v3: float64[400000,64]``."""
    value = v.value
    return f"{v.name}: {value.dtype}[{','.join(str(d) for d in value.shape)}]"


def operand(x: Any) -> str:
    """An argument as the text shows it."""
    t = type(x)
    if t is Sym:
        return x.name
    if t is LoopIndex:
        return x.code()
    if t in (tuple, list):
        inner = " ".join(operand(y) for y in x)
        return f"({inner})" if t is tuple else f"[{inner}]"
    if t is slice:
        parts = ["" if b is None else operand(b) for b in (x.start, x.stop, x.step)]
        return ":".join(parts[:2]) + (":" + parts[2] if parts[2] else "")
    if x is Ellipsis:
        return "..."
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        size = 1
        for d in shape:
            size *= d
        if size <= 4 and dtype.kind in "biuf":
            return f"{dtype}{list(shape)}" + repr(x.tolist()).replace(" ", "")
        return f"<const {dtype}[{','.join(str(d) for d in shape)}]>"
    if callable(x):
        return f"<{getattr(x, '__name__', type(x).__name__)}>"
    return repr(x)


def format_eqns(steps: list[Eqn], result: Any, depth: int = 0) -> list[str]:
    lines: list[str] = []
    pad = "  " * depth
    for step in steps:
        lines.extend(pad + line for line in _format(step, depth))
    lines.append(f"{pad}return {operand(result)}")
    return lines


def _format(step: Eqn, depth: int) -> list[str]:
    args = " ".join(operand(a) for a in step.args)
    kw = "".join(f" {k}={operand(v)}" for k, v in step.kw)
    if step.kind == "guard":
        return [f"guard {step.op} {args} == {operand(step.extra)}"]
    if step.kind == "require":
        ok, message, culprits, _ = step.args
        return [f"require {operand(ok)} {message!r} {operand(tuple(culprits))}"]
    if step.kind == "setitem":
        target, key, value = step.args
        return [f"{operand(target)}[{operand(key)}] = {operand(value)}"]
    outs = ", ".join(typed(o) for o in outs_of(step))
    if step.kind == "loop":
        sub, counter, acc, result = step.extra
        n, init, axis = step.args
        head = f"{outs} = {step.op} {n} from {operand(init)}" + (f" axis={axis}" if step.op == "scan" else "")
        body = format_eqns(sub.steps, result, depth + 1)
        return [f"{head} with {counter}, {typed(acc)}:"] + [line[2 * depth:] for line in body]
    guard = "  ; shape from data" if step.shape_guard else ""
    return [f"{outs} = {step.op} {args}{kw}".rstrip() + guard]


def format_program(inputs: list[tuple[Sym, str]], steps: list[Eqn], result: Any) -> str:
    """The whole program: its inputs (each with where it is read from), equations and result."""
    lines = [f"{typed(v)} = input {where}" for v, where in inputs]
    return "\n".join(lines + format_eqns(steps, result)) + "\n"
