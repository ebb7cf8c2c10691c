"""The typing rules of the control forms beyond Fig. 7 (contract §6): ``if``, and definitions
with a declared type (which may recurse).

Kept apart from :mod:`.typecheck` (which reaches these through its rule table): each rule takes
the checker and its environment, and uses only the checker's public ``synth``.
"""

from __future__ import annotations

from typing import Any

from ..errors import RemoraTypeError
from ..front import syntax as S
from . import typed as T
from .conversions import arrays_differ
from .indices import SCALAR
from .kinding import kind_type
from .types import BOOL, TArr, TBase, TForall, TFun, TPi, Type, prune, show_type
from .unify import unify

#: the type of a condition: a Bool scalar
BOOL_SCALAR = TArr(BOOL, SCALAR)


def t_if(checker: Any, e: S.If, env: Any) -> T.TyExpr:  # T-IF
    """``c : (Arr Bool (Shp))``, both branches of one type τ (T-EQV), the result τ.  A frame of
    conditions would choose per cell, which only a λ lifted over that frame (or ``select``) means."""
    cond = checker.synth(e.cond, env)
    _check_condition(cond.type, e.cond)
    then = checker.synth(e.then, env)
    orelse = checker.synth(e.orelse, env)
    if not unify(then.type, orelse.type):
        raise RemoraTypeError(
            f"the branches of `if` must have one type: the then branch has type {show_type(then.type)}, "
            f"but the else branch has type {show_type(orelse.type)}" + arrays_differ(then.type, orelse.type),
            e.orelse.span,
        )
    return T.TyIf(then.type, e.span, cond, then, orelse)


def _check_condition(t: Type, node: S.Expr) -> None:
    t = prune(t)
    atom = prune(t.atom) if isinstance(t, TArr) else None
    if isinstance(t, TArr) and isinstance(atom, TBase) and atom.name == "Bool" and t.shape != SCALAR:
        raise RemoraTypeError(
            f"the condition of `if` must be one Bool, (Arr Bool (Shp)), but it has type {show_type(t)}: "
            "to choose element by element use (select c a b), which evaluates both sides, or put the "
            "if in a λ and apply it over the frame, which evaluates each branch only where it is chosen",
            node.span,
        )
    if not unify(t, BOOL_SCALAR):
        raise RemoraTypeError(
            f"the condition of `if` must be a Bool scalar, (Arr Bool (Shp)), but it has type {show_type(t)}",
            node.span,
        )


def define_value(checker: Any, form: S.Define, env: Any, key: str) -> T.TyExpr:
    """A definition's value; a declared one (contract §6) sees itself at its declared type, as
    the global ``key`` (so the engines find it, by key, when the body runs)."""
    if form.declared is None:
        return checker.synth(form.value, env)
    declared = declared_type(form, env)
    before = checker.globals.get(form.name)
    checker.globals[form.name] = T.Global(key, declared)
    try:
        return check_declared(checker, form, env, declared)
    except BaseException:
        checker.globals.pop(form.name)
        if before is not None:
            checker.globals[form.name] = before
        raise


def declared_type(form: S.Define, env: Any) -> Type:
    """The type a definition declares (``(define f : τ e)``): an array type whose atom is a
    function or an abstraction, so that the definition may refer to itself."""
    t = kind_type(form.declared, env.scope, "Array")
    atom = prune(t.atom) if isinstance(t, TArr) else None
    if not isinstance(atom, (TFun, TForall, TPi)):
        raise RemoraTypeError(
            f"a declared definition is a function or an abstraction (λ, Tλ, Iλ), with a type such as "
            f"(Arr (-> (τ ...) τ_r) (Shp)); `{form.name}` is declared {show_type(t)}",
            form.declared.span,  # type: ignore[union-attr]
        )
    return t


def check_declared(checker: Any, form: S.Define, env: Any, declared: Type) -> T.TyExpr:
    """The value of a declared definition, checked with the name in scope at its declared type
    (already bound by the caller); the value must have that type."""
    value = form.value
    lam = _single_lambda(value)
    if lam is not None and isinstance(form.declared, S.STArr) and isinstance(form.declared.atom, S.STFun):
        result = prune(prune(declared).atom).result  # type: ignore[union-attr]
        typed = checker.synth(value, env)
        body_type = prune(typed.atoms[0].type).result  # type: ignore[attr-defined]
        if not unify(body_type, result):
            raise RemoraTypeError(
                f"the body of `{form.name}` has type {show_type(body_type)}, but its declared result type is "
                f"{show_type(result)}",
                lam.body.span,
            )
    else:
        typed = checker.synth(value, env)
    if not unify(typed.type, declared):
        raise RemoraTypeError(
            f"`{form.name}` is declared {show_type(declared)}, but its definition has type {show_type(typed.type)}",
            value.span,
        )
    typed.type = declared
    return typed


def _single_lambda(e: S.Expr) -> S.Lam | None:
    if isinstance(e, S.ArrayLit) and not e.dims and isinstance(e.atoms[0], S.Lam):
        return e.atoms[0]
    return None


def undeclared_hint(name: str, form_name: str | None) -> str:
    """What the error for a definition's reference to itself adds: how to declare one."""
    if name != form_name:
        return ""
    return (
        f"; a definition is not in scope in its own body unless its type is declared: write "
        f"(define ({name} (x τ) ...) : τ_r body) or (define {name} : τ value) to let `{name}` recurse"
    )
