"""T-GRAD: the type of ``(grad f)`` for a function ``f`` of any number of parameters.

``grad``'s type in the primitive table (spec/primitives.md) is Fig. 2's style for one
parameter, ``(Pi ((s Shape)) (Arr (-> ((Arr (-> ((Arr x s)) (Arr x (Shp))) (Shp))) (Arr (-> ((Arr x s)) (Arr x s)) (Shp))) (Shp)))``
with ``x`` one of the float types.  Applied to a function of more parameters — a loss of the
weights and the data — the rule is

    Γ ⊢ f : (Arr (-> ((Arr x s) τ ...) (Arr x (Shp))) F)     x ∈ {Float, Float32}
    ─────────────────────────────────────────────────────────────────────  T-GRAD
    Γ ⊢ (grad f) : (Arr (-> ((Arr x s) τ ...) (Arr x s)) F)

the gradient with respect to the first parameter, the others held fixed; over a frame ``F`` of
functions, a frame of gradients.  Anything else is a located error naming what is wrong.
"""

from __future__ import annotations

from typing import Optional

from ..atoms import FLOATING
from ..errors import RemoraTypeError
from ..front import syntax as S
from . import typed as T
from .indices import SCALAR
from .types import FLOAT, TArr, TBase, TForall, TFun, TPi, prune, show_type
from .unify import unify


def t_grad(checker, e: S.App, env) -> Optional[T.TyExpr]:
    """``(grad f)`` by T-GRAD, or None where ``e`` is not an application of the primitive ``grad``
    to one argument (a local binding named ``grad`` shadows it)."""
    fn = e.fn
    if not (isinstance(fn, S.Ref) and fn.name == "grad" and len(e.args) == 1 and env.gamma.lookup("grad") is None):
        return None
    f = checker.synth(e.args[0], env)
    fun, frame = _function(f)
    first = prune(fun.params[0]) if fun.params else None
    if isinstance(first, TArr) and not isinstance(prune(first.atom), TBase):
        unify(first.atom, FLOAT)  # (an overloaded primitive, ``(grad sin)``: Float unless said otherwise)
    if not (isinstance(first, TArr) and isinstance(prune(first.atom), TBase) and prune(first.atom).name in FLOATING):
        what = "has no parameters" if first is None else f"has first parameter of type {show_type(first)}"
        raise RemoraTypeError(
            f"grad differentiates with respect to a function's first parameter, which must be an array of "
            f"Float or Float32, but this function {what}", f.span)
    result = prune(fun.result)
    if not (isinstance(result, TArr) and result.shape == SCALAR and unify(result.atom, first.atom)):
        raise RemoraTypeError(
            f"grad needs a function whose result is a {show_type(first.atom)} scalar "
            f"(Arr {show_type(first.atom)} (Shp)), but this function returns {show_type(result)}; "
            "for a function with an array result use jvp or vjp", f.span)
    gradient = TFun(fun.params, TArr(first.atom, first.shape))
    prim_type = TFun((TArr(fun, SCALAR),), TArr(gradient, SCALAR))
    prim = T.TyPrim(prim_type, fn.span, "grad")
    head = T.TyArray(TArr(prim_type, SCALAR), fn.span, (), (prim,))
    return T.TyApp(TArr(gradient, frame), e.span, head, (f,))


def _function(f: T.TyExpr) -> tuple[TFun, object]:
    t = prune(f.type)
    atom = prune(t.atom) if isinstance(t, TArr) else None
    if isinstance(atom, (TPi, TForall)):
        raise RemoraTypeError(
            f"grad needs a function whose parameter types are known, but this one has the polymorphic type "
            f"{show_type(t)}; instantiate it first (i-app / t-app) or wrap it in a λ with typed parameters", f.span)
    if not isinstance(atom, TFun):
        raise RemoraTypeError(f"grad takes a function, but this has type {show_type(t)}", f.span)
    return atom, t.shape
