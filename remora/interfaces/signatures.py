"""Signature help: which function an editor's cursor is inside an application of, which argument
it is at, and that function's parameters.

The application is found in the text itself, not the syntax tree: while an argument is being
typed the application is not closed yet, so the form does not read.  The text is scanned with
the reader's own tokens up to the cursor; the innermost ``(`` still open there whose first item
is a name is the application, and the items after the name before the cursor say which argument
the cursor is at.  The parameters come from the name's type — the function type under its
``Pi``/``Forall`` quantifiers — with the parameter names a ``λ`` gives them where there is one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..front import syntax as S
from ..front.reader import _TOKEN
from ..statics.types import TArr, TForall, TFun, TPi, Type, prune, show_type


@dataclass
class Call:
    """The application around a position: the function's name and the argument (0-based) the
    position is at."""

    name: str
    argument: int


@dataclass
class Signature:
    """What signature help shows: ``label`` (``(f (x : [Int]) (y : [Float])) → [Float]``), the
    offsets of each parameter in it, and documentation."""

    label: str
    parameters: list[tuple[int, int]]
    documentation: str | None = None


def call_at(text: str, line: int, col: int) -> Call | None:
    """The application whose arguments the (1-based) position is among, if any."""
    lines = text.split("\n")
    before = "\n".join(lines[: line - 1] + [lines[line - 1][: col - 1] if line <= len(lines) else ""])
    stack: list[list] = []  # per open bracket: [bracket, first item (a name or None), items so far]
    last = None
    for m in _TOKEN.finditer(before):
        kind = m.lastgroup
        last = kind
        if kind in ("nl", "ws", "comment"):
            continue
        if kind == "open":
            if stack:
                stack[-1][2] += 1
            stack.append([m.group(), None, 0])
        elif kind == "close":
            if stack:
                stack.pop()
        elif stack:
            if stack[-1][2] == 0 and kind == "atom":
                stack[-1][1] = m.group()
            stack[-1][2] += 1
    for depth, (bracket, name, items) in enumerate(reversed(stack)):
        if depth == 0:  # the cursor ends the last item (right after it), or starts the next one
            argument = items - 1 - (1 if last in ("atom", "close") else 0)
        else:  # the cursor is inside the last item: a bracket still open
            argument = items - 2
        if bracket == "(" and name is not None:
            return Call(name, argument) if argument >= 0 else None
    return None


def signature(name: str, t: Type, names: list[str] | None = None, documentation: str | None = None) -> Signature | None:
    """The signature of the function ``name`` of type ``t`` (None if ``t`` is not a function's):
    its parameter types, named by ``names`` where given, and its result type."""
    fun = function_type(t)
    if fun is None:
        return None
    label = "(" + name
    parameters = []
    for i, p in enumerate(fun.params):
        text = show_type(p)
        if names is not None and i < len(names):
            text = f"({names[i]} : {text})"
        label += " "
        parameters.append((len(label), len(label) + len(text)))
        label += text
    label += ") → " + show_type(fun.result)
    return Signature(label, parameters, documentation)


def function_type(t: Type) -> TFun | None:
    """The function type inside ``t``: a scalar array of it, under any ``Pi``/``Forall``."""
    t = prune(t)
    while True:
        if isinstance(t, TArr) and t.shape.dims() == ():
            t = prune(t.atom)
        elif isinstance(t, (TPi, TForall)):
            t = prune(t.body)
        else:
            return t if isinstance(t, TFun) else None


def parameter_names(value: S.Expr) -> list[str] | None:
    """The parameter names of the ``λ`` a definition's value is (under any ``Iλ``/``Tλ``)."""
    node: object = value
    while True:
        if isinstance(node, S.ArrayLit) and not node.dims and len(node.atoms) == 1:
            node = node.atoms[0]
        elif isinstance(node, (S.ILam, S.TLam)):
            node = node.body
        elif isinstance(node, S.Lam):
            return [p.name for p in node.params]
        else:
            return None
