"""The syntax tree of Core Remora as written (paper Fig. 1), plus the surface sugar.

Names are still names here: the sorting and kinding judgments
(:mod:`remora.statics.kinding`) resolve them to variables, and the typechecker
(:mod:`remora.statics.typecheck`) turns expressions into the typed tree of
:mod:`remora.statics.typed`.  Every node keeps the span it was read from.
"""

from __future__ import annotations

from ..records import factory, record
from typing import Optional, Union

from ..errors import Span

# ---------------------------------------------------------------------------
# Indices (ι) as written


@record(frozen=True, eq=False)
class INat:
    value: int
    span: Span


@record(frozen=True, eq=False)
class IName:
    name: str
    span: Span


@record(frozen=True, eq=False)
class IShp:
    """``(Shp ι ...)``: a shape made of dimensions."""

    dims: tuple["SIndex", ...]
    span: Span


@record(frozen=True, eq=False)
class IPlus:
    """``(+ ι ...)``: a sum of dimensions."""

    args: tuple["SIndex", ...]
    span: Span


@record(frozen=True, eq=False)
class IAppend:
    """``(++ ι ...)``: shapes appended."""

    args: tuple["SIndex", ...]
    span: Span


@record(frozen=True, eq=False)
class ISplice:
    """The shape part of the ``[τ ι ...]`` type sugar: each Dim is one axis, each Shape is spliced in."""

    args: tuple["SIndex", ...]
    span: Span


SIndex = Union[INat, IName, IShp, IPlus, IAppend, ISplice]

# ---------------------------------------------------------------------------
# Types (τ), kinds and sorts as written


@record(frozen=True, eq=False)
class Binder:
    """``(x k)`` or ``(x γ)``: a name with its kind (Atom/Array) or sort (Dim/Shape)."""

    name: str
    sort: str
    span: Span


@record(frozen=True, eq=False)
class STBase:
    name: str  # Int, Float, Bool (Num is read as Int)
    span: Span


@record(frozen=True, eq=False)
class STName:
    name: str
    span: Span


@record(frozen=True, eq=False)
class STArr:
    atom: "SType"
    shape: SIndex
    span: Span


@record(frozen=True, eq=False)
class STFun:
    params: tuple["SType", ...]
    result: "SType"
    span: Span


@record(frozen=True, eq=False)
class STQuant:
    """``(Forall ((x k) ...) τ)``, ``(Pi ((x γ) ...) τ)`` or ``(Sigma ((x γ) ...) τ)``."""

    quantifier: str  # Forall, Pi, Sigma
    binders: tuple[Binder, ...]
    body: "SType"
    span: Span


SType = Union[STBase, STName, STArr, STFun, STQuant]

# ---------------------------------------------------------------------------
# Atoms (𝔞)


@record(frozen=True, eq=False)
class Lit:
    """A base value: an Int, Float or Bool literal."""

    value: Union[int, float, bool]
    span: Span


@record(frozen=True, eq=False)
class Prim:
    """A primitive operator named in atom position, e.g. inside ``(array (2) + -)``."""

    name: str
    span: Span


@record(frozen=True, eq=False)
class Param:
    name: str
    type: SType
    span: Span


@record(frozen=True, eq=False)
class Lam:
    """``(λ ((x τ) ...) e)``."""

    params: tuple[Param, ...]
    body: "Expr"
    span: Span


@record(frozen=True, eq=False)
class TLam:
    """``(Tλ ((x k) ...) v)``."""

    binders: tuple[Binder, ...]
    body: "Expr"
    span: Span


@record(frozen=True, eq=False)
class ILam:
    """``(Iλ ((x γ) ...) v)``."""

    binders: tuple[Binder, ...]
    body: "Expr"
    span: Span


@record(frozen=True, eq=False)
class Box:
    """``(box ι ... e τ)`` with τ a Sigma type."""

    indices: tuple[SIndex, ...]
    body: "Expr"
    type: SType
    span: Span


Atom = Union[Lit, Prim, Lam, TLam, ILam, Box]

# ---------------------------------------------------------------------------
# Expressions (e)


@record(frozen=True, eq=False)
class Ref:
    """A variable reference (or a primitive used as an expression: a scalar array of it)."""

    name: str
    span: Span


@record(frozen=True, eq=False)
class ArrayLit:
    """``(array (n ...) 𝔞 ...)``; ``sugar`` marks a bare atom or a ``[…]`` of literals."""

    dims: tuple[int, ...]
    atoms: tuple[Atom, ...]
    span: Span
    sugar: bool = False


@record(frozen=True, eq=False)
class EmptyArray:
    """``(array (n ...) τ)`` with some n = 0 and τ the atom type."""

    dims: tuple[int, ...]
    atom_type: SType
    span: Span


@record(frozen=True, eq=False)
class Frame:
    """``(frame (n ...) e ...)``; ``sugar`` marks a ``[…]`` frame."""

    dims: tuple[int, ...]
    cells: tuple["Expr", ...]
    span: Span
    sugar: bool = False


@record(frozen=True, eq=False)
class EmptyFrame:
    """``(frame (n ...) τ)`` with some n = 0 and τ the cell type."""

    dims: tuple[int, ...]
    cell_type: SType
    span: Span


@record(frozen=True, eq=False)
class App:
    fn: "Expr"
    args: tuple["Expr", ...]
    span: Span


@record(frozen=True, eq=False)
class TApp:
    fn: "Expr"
    types: tuple[SType, ...]
    span: Span


@record(frozen=True, eq=False)
class IApp:
    fn: "Expr"
    indices: tuple[SIndex, ...]
    span: Span


@record(frozen=True, eq=False)
class Unbox:
    """``(unbox (x_i ... x_e e_s) e_b)``."""

    index_names: tuple[IName, ...]  # sorts come from the Sigma type of the box
    value_name: str
    boxed: "Expr"
    body: "Expr"
    span: Span
    value_span: Optional[Span] = None


@record(frozen=True, eq=False)
class Let:
    """``(let ((x e) ...) body)``: sequential bindings with inferred types."""

    bindings: tuple[tuple[str, "Expr", Span], ...]
    body: "Expr"
    span: Span


@record(frozen=True, eq=False)
class If:
    """``(if c e_then e_else)``: only the branch ``c`` chooses is evaluated (contract §6)."""

    cond: "Expr"
    then: "Expr"
    orelse: "Expr"
    span: Span


@record(frozen=True, eq=False)
class ForBinding:
    """``(i n)`` in a ``for``: the name bound to each index and its range, a ``Dim``."""

    name: str
    range: SIndex
    span: Span


@record(frozen=True, eq=False)
class For:
    """``(for ((i n) ...) e)``: pointful sugar (contract §12), the array of ``e`` over every
    combination of the indices; :func:`remora.front.pointful.elaborate` gives its core form."""

    bindings: tuple[ForBinding, ...]
    body: "Expr"
    span: Span


Expr = Union[Ref, ArrayLit, EmptyArray, Frame, EmptyFrame, App, TApp, IApp, Unbox, Let, If, For]

# ---------------------------------------------------------------------------
# Top level


@record(frozen=True, eq=False)
class Define:
    """``(define x e)``; ``(define (f (x τ) ...) e)`` arrives here already as a λ."""

    name: str
    value: Expr
    span: Span
    name_span: Span
    #: the declared type, ``(define f : τ e)`` or ``(define (f (x τ) ...) : τ_r e)`` (as a
    #: function type): a declared definition is in scope in its own body, so it may recurse
    declared: Optional[SType] = None


@record(frozen=True, eq=False)
class ExprForm:
    expr: Expr
    span: Span


TopForm = Union[Define, ExprForm]


@record
class Program:
    forms: list[TopForm] = factory(list)
