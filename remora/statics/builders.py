"""Typed-tree nodes whose types the rules compute, shared by the checker and inference.

T-TAPP and T-IAPP once their arguments are known, and the framing of a result type by the
frame it is lifted over (T-APP, T-UNBOX, T-TAPP, T-IAPP).  Inference records its outcome as
ordinary (``implicit``) ``t-app``/``i-app`` nodes built here, so it produces exactly what
explicit instantiation would have meant — and neither module needs the other to do so.
"""

from __future__ import annotations

from . import typed as T
from ..errors import RemoraTypeError, Span
from ..limits import MAX_RANK
from .indices import Index, Shape
from .types import TArr, Type, prune, show_type, subst


def type_application(fn: T.TyExpr, types: tuple[Type, ...], span: Span, implicit: bool = False) -> T.TyTApp:
    """``(t-app fn τ ...)``: substitute into the Forall body and frame it by fn's frame."""
    fn_type = prune(fn.type)
    univ = prune(fn_type.atom)  # type: ignore[union-attr]
    body = subst(univ.body, dict(zip(univ.vars, types)))  # type: ignore[union-attr]
    result = framed(body, fn_type.shape, "the result of this t-app", span)  # type: ignore[union-attr]
    return T.TyTApp(result, span, fn, types, implicit)


def index_application(fn: T.TyExpr, indices: tuple[Index, ...], span: Span, implicit: bool = False) -> T.TyIApp:
    """``(i-app fn ι ...)``: substitute into the Pi body and frame it by fn's frame."""
    fn_type = prune(fn.type)
    pi = prune(fn_type.atom)  # type: ignore[union-attr]
    body = subst(pi.body, dict(zip(pi.vars, indices)))  # type: ignore[union-attr]
    result = framed(body, fn_type.shape, "the result of this i-app", span)  # type: ignore[union-attr]
    return T.TyIApp(result, span, fn, indices, implicit)


def ranked(t: TArr, span: Span) -> TArr:
    """``t``, unless it has more axes than an array can have (a located error, not a NumPy crash)."""
    if len(t.shape.items) > MAX_RANK:
        raise RemoraTypeError(
            f"this array would have {len(t.shape.items)} axes; arrays have at most {MAX_RANK} (NumPy's limit)", span
        )
    return t


def framed(t: Type, frame: Shape, what: str, span: Span) -> Type:
    """``(Arr τ (++ frame ι))`` for ``t = (Arr τ ι)`` — the result type of a lifted application."""
    t = prune(t)
    if isinstance(t, TArr):
        return ranked(TArr(t.atom, frame + t.shape), span)
    if not frame.items:
        return t
    raise RemoraTypeError(
        f"{what} would be the Array type variable {show_type(t)} lifted over the frame {frame}, "
        "which no type can say; instantiate it first",
        span,
    )
