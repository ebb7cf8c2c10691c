"""The typed tree: the typechecker's output and the input of erasure.

This is the paper's fully annotated Remora (§2.4: "every atom or expression has
been tagged with its type"): every node carries its type, every variable is
resolved, sugar is gone except ``let``, and inferred instantiations appear as
ordinary ``t-app``/``i-app`` nodes marked ``implicit``.  :func:`show_term`
prints it back as Remora source, which is what ``remora check --explicit`` shows.
"""

from __future__ import annotations

import itertools
from ..records import record
from typing import Union

from ..errors import Span
from .indices import Index, Var, show_index
from .types import Type, show_type, zonk


@record(eq=False)
class TyNode:
    type: Type
    span: Span


# --- expressions -----------------------------------------------------------


@record(eq=False)
class TyRef(TyNode):
    """A variable reference, resolved: ``key`` is None for a local (a λ, ``let`` or ``unbox``
    binder, found in the run-time environment) and otherwise the identity of the top-level
    definition (or input) the checker found in force here — so the engines look up exactly
    that binding, whatever is defined under the same name later (lexical scope)."""

    name: str
    key: str | None = None


@record(eq=False)
class TyArray(TyNode):
    """``(array (n ...) 𝔞 ...)``; no atoms when some n is 0 (the type gives the atom type)."""

    dims: tuple[int, ...]
    atoms: tuple["TyAtom", ...]


@record(eq=False)
class TyFrame(TyNode):
    """``(frame (n ...) e ...)``; no cells when some n is 0 (the type gives the cell type)."""

    dims: tuple[int, ...]
    cells: tuple["TyExpr", ...]


@record(eq=False)
class TyApp(TyNode):
    fn: "TyExpr"
    args: tuple["TyExpr", ...]


@record(eq=False)
class TyTApp(TyNode):
    fn: "TyExpr"
    types: tuple[Type, ...]
    implicit: bool = False


@record(eq=False)
class TyIApp(TyNode):
    fn: "TyExpr"
    indices: tuple[Index, ...]
    implicit: bool = False


@record(eq=False)
class TyUnbox(TyNode):
    index_vars: tuple[Var, ...]
    value_name: str
    boxed: "TyExpr"
    body: "TyExpr"


@record(eq=False)
class TyLet(TyNode):
    bindings: tuple[tuple[str, "TyExpr"], ...]
    body: "TyExpr"


@record(eq=False)
class TyIf(TyNode):
    """``(if c e_then e_else)``; its type is both branches' (contract §6)."""

    cond: "TyExpr"
    then: "TyExpr"
    orelse: "TyExpr"


TyExpr = Union[TyRef, TyArray, TyFrame, TyApp, TyTApp, TyIApp, TyUnbox, TyLet, TyIf]

# --- atoms -------------------------------------------------------------------


@record(eq=False)
class TyLit(TyNode):
    value: Union[int, float, bool]


@record(eq=False)
class TyPrim(TyNode):
    """A primitive; its type is the occurrence's (overloading settled)."""

    name: str


@record(eq=False)
class TyLam(TyNode):
    params: tuple[tuple[str, Type], ...]
    body: TyExpr
    #: set on the wrapper inference makes to lift a primitive over a frame (that primitive's name)
    lifts: str | None = None


@record(eq=False)
class TyTLam(TyNode):
    vars: tuple[Var, ...]
    body: TyExpr


@record(eq=False)
class TyILam(TyNode):
    vars: tuple[Var, ...]
    body: TyExpr


@record(eq=False)
class TyBox(TyNode):
    indices: tuple[Index, ...]
    body: TyExpr


TyAtom = Union[TyLit, TyPrim, TyLam, TyTLam, TyILam, TyBox]

# --- top level ---------------------------------------------------------------


@record(eq=False)
class TyDefine:
    name: str
    value: TyExpr
    span: Span
    #: this definition's identity: references to it carry the same key (see :class:`Global`)
    key: str = ""
    #: whether its type was declared (``(define f : τ e)``: it may refer to itself)
    declared: bool = False


@record(eq=False)
class TyExprForm:
    expr: TyExpr
    span: Span


TyForm = Union[TyDefine, TyExprForm]


@record(frozen=True)
class Global:
    """A top-level binding as the checker sees it: its type, and its key — the identity that
    references to it carry into the erased program and that the engines store its value under.

    Every definition (and every input, and each prelude definition) gets a key of its own, so
    a later definition of the same name is a different global: what a reference denotes is
    decided once, where it is checked, and never changes at run time.
    """

    key: str
    type: Type


_keys = itertools.count(1)


def fresh_key(name: str) -> str:
    """A key no other binding in this process has: the prelude's definitions, checked once
    and shared by every session, and each session's own definitions never collide."""
    return f"{name}#{next(_keys)}"


def library_key(name: str, ordinal: int) -> str:
    """The key of the prelude's ``ordinal``-th definition: the same in every process, so the
    prelude can be checked once and cached (see :mod:`remora.interfaces.prelude_cache`), and
    never one :func:`fresh_key` makes."""
    return f"{name}#prelude{ordinal}"


def form_type(form: TyForm) -> Type:
    return form.value.type if isinstance(form, TyDefine) else form.expr.type


# ---------------------------------------------------------------------------
# Walking


def children(node: TyNode) -> list[TyNode]:
    """The direct sub-terms of a node, in source order."""
    if isinstance(node, TyArray):
        return list(node.atoms)
    if isinstance(node, TyFrame):
        return list(node.cells)
    if isinstance(node, TyApp):
        return [node.fn, *node.args]
    if isinstance(node, (TyTApp, TyIApp)):
        return [node.fn]
    if isinstance(node, TyUnbox):
        return [node.boxed, node.body]
    if isinstance(node, TyLet):
        return [e for _, e in node.bindings] + [node.body]
    if isinstance(node, TyIf):
        return [node.cond, node.then, node.orelse]
    if isinstance(node, (TyLam, TyTLam, TyILam, TyBox)):
        return [node.body]
    return []


def zonk_tree(node: TyNode) -> None:
    """Replace solved unknowns in every type of the tree (in place), once checking is done."""
    stack = [node]
    while stack:
        n = stack.pop()
        n.type = zonk(n.type)
        if isinstance(n, TyTApp):
            n.types = tuple(zonk(t) for t in n.types)
        elif isinstance(n, TyLam):
            n.params = tuple((x, zonk(t)) for x, t in n.params)
        stack.extend(children(n))


# ---------------------------------------------------------------------------
# Printing as Remora source (remora check --explicit)


def show_form(form: TyForm) -> str:
    if isinstance(form, TyDefine):
        declared = f" : {show_type(form.value.type)}" if form.declared else ""
        return f"(define {form.name}{declared} {show_term(form.value)})"
    return show_term(form.expr)


def show_term(node: TyNode) -> str:
    if isinstance(node, TyRef):
        return node.name
    if isinstance(node, TyArray):
        dims = " ".join(map(str, node.dims))
        if not node.atoms:
            from .types import TArr

            atom = node.type.atom if isinstance(node.type, TArr) else node.type
            return f"(array ({dims}) {show_type(atom)})"
        if not node.dims:
            return show_term(node.atoms[0])
        return f"(array ({dims}) " + " ".join(show_term(a) for a in node.atoms) + ")"
    if isinstance(node, TyFrame):
        dims = " ".join(map(str, node.dims))
        if not node.cells:
            return f"(frame ({dims}) {show_type(_cell_type(node))})"
        return f"(frame ({dims}) " + " ".join(show_term(c) for c in node.cells) + ")"
    if isinstance(node, TyApp):
        return "(" + " ".join(show_term(x) for x in [node.fn, *node.args]) + ")"
    if isinstance(node, TyTApp):
        return f"(t-app {show_term(node.fn)}" + "".join(" " + show_type(t) for t in node.types) + ")"
    if isinstance(node, TyIApp):
        return f"(i-app {show_term(node.fn)}" + "".join(" " + show_index(i) for i in node.indices) + ")"
    if isinstance(node, TyUnbox):
        names = " ".join([v.name for v in node.index_vars] + [node.value_name])
        return f"(unbox ({names} {show_term(node.boxed)}) {show_term(node.body)})"
    if isinstance(node, TyLet):
        binds = " ".join(f"({x} {show_term(e)})" for x, e in node.bindings)
        return f"(let ({binds}) {show_term(node.body)})"
    if isinstance(node, TyIf):
        return f"(if {show_term(node.cond)} {show_term(node.then)} {show_term(node.orelse)})"
    if isinstance(node, TyLit):
        v = node.value
        return "#t" if v is True else "#f" if v is False else repr(v) if isinstance(v, float) else str(v)
    if isinstance(node, TyPrim):
        return node.name
    if isinstance(node, TyLam):
        params = " ".join(f"({x} {show_type(t)})" for x, t in node.params)
        return f"(λ ({params}) {show_term(node.body)})"
    if isinstance(node, (TyTLam, TyILam)):
        head = "Tλ" if isinstance(node, TyTLam) else "Iλ"
        binders = " ".join(f"({v.name} {v.sort})" for v in node.vars)
        return f"({head} ({binders}) {show_term(node.body)})"
    if isinstance(node, TyBox):
        idx = "".join(show_index(i) + " " for i in node.indices)
        return f"(box {idx}{show_term(node.body)} {show_type(node.type)})"
    raise TypeError(f"not a typed node: {node!r}")


def _cell_type(node: TyFrame) -> Type:
    from .indices import Shape
    from .types import TArr

    t = node.type
    assert isinstance(t, TArr)
    return TArr(t.atom, Shape(t.shape.items[len(node.dims):]))

