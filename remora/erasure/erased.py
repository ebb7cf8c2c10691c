"""Erased Remora (paper Fig. 11): terms with shapes instead of types.

Every application carries the cell shape of each argument and its result
shape; every frame its full shape; ``t-app`` has become ``i-app`` over shapes.
That is exactly the information the dynamic semantics needs when a frame is
empty.  Shapes are canonical indices whose variables are bound at run time by
``Iλ`` application and ``unbox``.

One addition to the paper's erased forms, recorded in ``spec/``: each
expression also keeps the *representation* of its atoms (an atom type's name —
``Int``, ``Float``, ``Bool`` — or ``object`` for functions and boxes, or the atom
type variable it will be), because an array has a dtype even when it has no
atoms; each backend maps representations to its own dtypes.  A ``t-app`` passes
an atom type's representation along with its (scalar) shape.
"""

from __future__ import annotations

from ..records import factory, record
from typing import Union

from ..atoms import BASE_ORDER
from ..errors import Span
from ..statics.indices import Index, Shape, Var, show_index

#: How the atoms of an array are stored: a representation's name (``backends.REPS``: ``"Int"``,
#: ``"Float"``, ``"Int32"``, ``"Float32"``, ``"Bool"``, ``"object"``), or an Atom type variable
#: bound at run time.
Rep = Union[str, Var]


@record(eq=False)
class ENode:
    span: Span


@record(eq=False)
class EVar(ENode):
    """A variable: a local (``key`` None, looked up in the environment) or the global whose
    key the checker resolved it to (looked up in the engine's globals by that key alone)."""

    name: str
    key: str | None = None


@record(eq=False)
class EArray(ENode):
    """``(array (n ...) â ...)``; ``const`` holds the atoms' values (row-major) when every atom is
    a literal: each backend makes the array of them once, at run time."""

    dims: tuple[int, ...]
    atoms: tuple["EAtom", ...]
    rep: Rep
    const: tuple | None = None


@record(eq=False)
class EFrame(ENode):
    """``(frame ι ê ...)`` with ι the frame's full result shape."""

    shape: Shape
    cells: tuple["EExpr", ...]
    rep: Rep


@record(eq=False)
class EApp(ENode):
    """``(ê_f (ê_a ι_a) ... ι_r)``."""

    fn: "EExpr"
    args: tuple["EExpr", ...]
    cells: tuple[Shape, ...]
    result: Shape
    rep: Rep


@record(frozen=True)
class TypeArg:
    """An erased type argument: the shape 𝒯⟦τ⟧ (for Array kinds) and the atoms' representation."""

    shape: Shape | None
    rep: Rep

    def __str__(self) -> str:
        return str(self.shape) if self.shape is not None else show_rep(self.rep)


@record(eq=False)
class EIApp(ENode):
    """``(i-app ê_f ι_a ... ι_r)``; an argument is an index, or an erased type argument."""

    fn: "EExpr"
    args: tuple[Union[Index, TypeArg], ...]
    result: Shape
    rep: Rep


@record(eq=False)
class EUnbox(ENode):
    """``(unbox (x_i ... x_e ê_s) ê_b ι_b)``."""

    index_vars: tuple[Var, ...]
    value_name: str
    boxed: "EExpr"
    body: "EExpr"
    body_shape: Shape
    rep: Rep
    #: the locals the body uses from outside (an unbox body starts from just these)
    free: frozenset[str] = factory(frozenset)


@record(eq=False)
class ELet(ENode):
    """``(let ((x ê) ...) ê_b)``: sequential bindings, each value seeing the ones before it.

    It abbreviates the nested β-redexes ``((λ (x) ((λ (y) …) ê_y)) ê_x)`` (each λ's parameter
    cell is its argument's whole shape, so no lifting happens), but is evaluated as one loop:
    n bindings cost n steps, not n nested applications with n growing environments.
    ``free`` lists the locals the whole form uses from outside.
    """

    bindings: tuple[tuple[str, "EExpr"], ...]
    body: "EExpr"
    free: frozenset[str] = factory(frozenset)


@record(eq=False)
class EIf(ENode):
    """``(if ê_c ê_t ê_e ι)``: ι is the result's shape (cells chosen by a frame of conditions are
    put back into it); ``free`` lists the locals the branches use from outside."""

    cond: "EExpr"
    then: "EExpr"
    orelse: "EExpr"
    shape: Shape
    rep: Rep
    free: frozenset[str] = factory(frozenset)


EExpr = Union[EVar, EArray, EFrame, EApp, EIApp, EUnbox, ELet, EIf]


@record(eq=False)
class ELit(ENode):
    value: Union[int, float, bool]


@record(eq=False)
class EPrim(ENode):
    name: str


@record(eq=False)
class ELam(ENode):
    """``(λ (x ...) ê)``; ``free`` lists the term variables the body uses from outside."""

    params: tuple[str, ...]
    body: EExpr
    free: frozenset[str] = factory(frozenset)
    #: the primitive this λ applies over a frame, when it is inference's lifting wrapper
    lifts: str | None = None


@record(eq=False)
class EILam(ENode):
    """``(Iλ (x ...) v̂)`` — also what a ``Tλ`` erases to."""

    vars: tuple[Var, ...]
    body: EExpr
    free: frozenset[str] = factory(frozenset)


@record(eq=False)
class EBox(ENode):
    """``(box ι ... ê)``."""

    indices: tuple[Index, ...]
    body: EExpr


EAtom = Union[ELit, EPrim, ELam, EILam, EBox]


@record(eq=False)
class EDefine:
    name: str
    value: EExpr
    span: Span
    #: the definition's identity (its references' key): engines store the value under it
    key: str = ""


@record(eq=False)
class EExprForm:
    expr: EExpr
    span: Span


EForm = Union[EDefine, EExprForm]

# ---------------------------------------------------------------------------
# Printing (remora eval --erased)


def show_rep(rep: Rep) -> str:
    """An atom representation as its Remora type name (``*`` for boxes and functions)."""
    if isinstance(rep, Var):
        return rep.name
    return rep if rep in BASE_ORDER else "*"


def show_erased(node) -> str:
    if isinstance(node, EDefine):
        return f"(define {node.name} {show_erased(node.value)})"
    if isinstance(node, EExprForm):
        return show_erased(node.expr)
    if isinstance(node, EVar):
        return node.name
    if isinstance(node, EArray):
        dims = " ".join(map(str, node.dims))
        atoms = "".join(" " + show_erased(a) for a in node.atoms)
        return f"(array ({dims}){atoms})"
    if isinstance(node, EFrame):
        return f"(frame {node.shape}" + "".join(" " + show_erased(c) for c in node.cells) + ")"
    if isinstance(node, EApp):
        args = "".join(f" ({show_erased(a)} {c})" for a, c in zip(node.args, node.cells))
        return f"({show_erased(node.fn)}{args} {node.result})"
    if isinstance(node, EIApp):
        args = "".join(" " + str(a) for a in node.args)
        return f"(i-app {show_erased(node.fn)}{args} {node.result})"
    if isinstance(node, EUnbox):
        names = " ".join([v.name for v in node.index_vars] + [node.value_name])
        return f"(unbox ({names} {show_erased(node.boxed)}) {show_erased(node.body)} {node.body_shape})"
    if isinstance(node, ELet):
        binds = " ".join(f"({x} {show_erased(v)})" for x, v in node.bindings)
        return f"(let ({binds}) {show_erased(node.body)})"
    if isinstance(node, EIf):
        return f"(if {show_erased(node.cond)} {show_erased(node.then)} {show_erased(node.orelse)} {node.shape})"
    if isinstance(node, ELit):
        v = node.value
        return "#t" if v is True else "#f" if v is False else repr(v) if isinstance(v, float) else str(v)
    if isinstance(node, EPrim):
        return node.name
    if isinstance(node, ELam):
        return f"(λ ({' '.join(node.params)}) {show_erased(node.body)})"
    if isinstance(node, EILam):
        return f"(Iλ ({' '.join(v.name for v in node.vars)}) {show_erased(node.body)})"
    if isinstance(node, EBox):
        return "(box" + "".join(" " + show_index(i) for i in node.indices) + f" {show_erased(node.body)})"
    raise TypeError(f"not an erased node: {node!r}")
