"""Sorting (Fig. 5) and kinding (Fig. 6): written indices and types become internal ones.

``Θ`` (index variables with their sorts) and ``Δ`` (type variables with their
kinds) are one :class:`Scope` mapping names to :class:`~remora.statics.indices.Var`
objects; a variable's sort or kind travels with it.  Sorting an index yields its
canonical form; kinding a type yields the internal :class:`~remora.statics.types.Type`.
"""

from __future__ import annotations

from ..records import record
from typing import Optional

from ..front import syntax as S
from ..errors import RemoraTypeError, Span, replace_with
from ..limits import MAX_RANK  # (D29: a written array type with more axes is a type error)
from .indices import Dim, Index, Shape, Var, dim_add, dim_var, show_index
from .spelling import did_you_mean
from .types import BASE_TYPES, TArr, TForall, TFun, TPi, TSigma, TVar, Type, kind_of, show_type

INDEX_SORTS = ("Dim", "Shape")
TYPE_KINDS = ("Atom", "Array", "Numeric", "Floating")


@record(frozen=True)
class Scope:
    """Θ and Δ: the index and type variables in scope, innermost binding last."""

    names: tuple[tuple[str, Var], ...] = ()

    def lookup(self, name: str) -> Optional[Var]:
        for n, v in reversed(self.names):
            if n == name:
                return v
        return None

    def extend(self, vars_: list[Var] | tuple[Var, ...]) -> "Scope":
        return Scope(self.names + tuple((v.name, v) for v in vars_))

    def known_names(self) -> list[str]:
        return [n for n, _ in self.names]


def _unbound(what: str, name: str, span: Span, candidates: list[str]) -> RemoraTypeError:
    close = did_you_mean(name, candidates)
    hint = f"; did you mean `{close}`?" if close else ""
    err = RemoraTypeError(f"unbound {what} `{name}`{hint}", span)
    return err.fixed_by(replace_with(span, close)) if close else err


# ---------------------------------------------------------------------------
# Sorting (Fig. 5)


def sort_of(ix: Index) -> str:
    return "Dim" if isinstance(ix, Dim) else "Shape"


def sort_index(node: S.SIndex, scope: Scope, expected: str | None = None) -> Index:
    """``Θ ⊢ ι :: γ``: the canonical form of ``node``, checked against ``expected`` if given."""
    ix = _sort(node, scope)
    if expected is not None and sort_of(ix) != expected:
        raise RemoraTypeError(
            f"expected an index of sort {expected}, but `{show_index(ix)}` has sort {sort_of(ix)}", node.span
        )
    return ix


def _sort(node: S.SIndex, scope: Scope) -> Index:
    if isinstance(node, S.INat):  # S-NAT
        return Dim(node.value)
    if isinstance(node, S.IName):  # S-VAR
        v = scope.lookup(node.name)
        if v is None:
            names = [n for n, var in scope.names if var.sort in INDEX_SORTS]
            err = _unbound("index variable", node.name, node.span, names)
            if "did you mean" not in err.message:
                err.message += (
                    f"; index variables are bound by Iλ, Pi, Sigma or unbox, e.g. "
                    f"(Iλ (({node.name} Dim)) (λ ((x [Float {node.name}])) …))"
                )
            raise err
        if v.sort not in INDEX_SORTS:
            raise RemoraTypeError(f"`{node.name}` is a type variable (kind {v.sort}), not an index", node.span)
        return dim_var(v) if v.sort == "Dim" else Shape((v,))
    if isinstance(node, S.IShp):  # S-SHAPE
        dims = [_sort(d, scope) for d in node.dims]
        for d, ix in zip(node.dims, dims):
            if not isinstance(ix, Dim):
                raise RemoraTypeError(
                    f"(Shp ι ...) takes dimensions, but `{show_index(ix)}` is a Shape; append shapes with (++ ...)",
                    d.span,
                )
        return Shape(tuple(dims))  # type: ignore[arg-type]
    if isinstance(node, S.IPlus):  # S-PLUS
        dims = [_sort(d, scope) for d in node.args]
        for d, ix in zip(node.args, dims):
            if not isinstance(ix, Dim):
                raise RemoraTypeError(f"(+ ι ...) adds dimensions, but `{show_index(ix)}` is a Shape", d.span)
        return dim_add(*dims)  # type: ignore[arg-type]
    if isinstance(node, S.IAppend):  # S-APPEND
        parts = [_sort(s, scope) for s in node.args]
        for s, ix in zip(node.args, parts):
            if not isinstance(ix, Shape):
                raise RemoraTypeError(
                    f"(++ ι ...) appends shapes, but `{show_index(ix)}` is a Dim; write (Shp {show_index(ix)})", s.span
                )
        return Shape(tuple(item for p in parts for item in p.items))  # type: ignore[union-attr]
    if isinstance(node, S.ISplice):  # the [τ ι ...] sugar: Dims are axes, Shapes are spliced
        items: list = []
        for part in node.args:
            ix = _sort(part, scope)
            items.extend(ix.items if isinstance(ix, Shape) else [ix])
        return Shape(tuple(items))
    raise TypeError(f"not an index node: {node!r}")


# ---------------------------------------------------------------------------
# Kinding (Fig. 6)


def fresh_vars(binders: tuple[S.Binder, ...]) -> list[Var]:
    return [Var(b.name, b.sort) for b in binders]


def kind_type(node: S.SType, scope: Scope, expected: str | None = None) -> Type:
    """``Θ; Δ ⊢ τ :: k``: the internal type of ``node``, checked against ``expected`` if given."""
    t = _kind(node, scope)
    if expected is not None and kind_of(t) != expected:
        raise RemoraTypeError(_kind_mismatch(t, expected), node.span)
    return t


def _kind_mismatch(t: Type, expected: str) -> str:
    if expected == "Array":
        return (
            f"expected an Array type, but `{show_type(t)}` has kind Atom; "
            f"a scalar of it is (Arr {show_type(t)} (Shp)), or [{show_type(t)}]"
        )
    return f"expected an Atom type, but `{show_type(t)}` has kind Array"


def _kind(node: S.SType, scope: Scope) -> Type:
    if isinstance(node, S.STBase):  # K-BASE
        return BASE_TYPES[node.name]
    if isinstance(node, S.STName):  # K-VAR
        v = scope.lookup(node.name)
        if v is None:
            names = [n for n, var in scope.names if var.sort in TYPE_KINDS]
            raise _unbound("type variable", node.name, node.span, names)
        if v.sort not in TYPE_KINDS:
            raise RemoraTypeError(f"`{node.name}` is an index variable (sort {v.sort}), not a type", node.span)
        return TVar(v)
    if isinstance(node, S.STArr):  # K-ARRAY
        atom = _kind(node.atom, scope)
        if kind_of(atom) != "Atom":
            raise RemoraTypeError(
                f"the element type of an Arr must be an Atom type, but `{show_type(atom)}` is an Array type", node.atom.span
            )
        shape = sort_index(node.shape, scope, "Shape")
        axes = sum(1 for item in shape.items if isinstance(item, Dim))  # type: ignore[union-attr]
        if axes > MAX_RANK:
            raise RemoraTypeError(
                f"this array type has {axes} axes; arrays have at most {MAX_RANK} (NumPy's limit)", node.span
            )
        return TArr(atom, shape)  # type: ignore[arg-type]
    if isinstance(node, S.STFun):  # K-FN
        params = tuple(kind_type(p, scope, "Array") for p in node.params)
        return TFun(params, kind_type(node.result, scope, "Array"))
    if isinstance(node, S.STQuant):  # K-UNIV, K-PI, K-SIGMA
        vars_ = fresh_vars(node.binders)
        body = kind_type(node.body, scope.extend(vars_), "Array")
        cls = {"Forall": TForall, "Pi": TPi, "Sigma": TSigma}[node.quantifier]
        return cls(tuple(vars_), body)
    raise TypeError(f"not a type node: {node!r}")


# Fig. 1's values (the body of a Tλ or Iλ must be one)


def require_value(body: S.Expr, form: str) -> None:
    """Fig. 1: the body of a Tλ or Iλ is a value (a variable or an array of atomic values)."""
    if not _is_value(body):
        raise RemoraTypeError(
            f"the body of {'an' if form == 'Iλ' else 'a'} {form} must be a value (a variable or an array literal "
            "of atoms, e.g. a λ)",
            body.span,
        )


def _is_value(e: S.Expr) -> bool:
    if isinstance(e, S.Ref):
        return True
    if isinstance(e, S.ArrayLit):
        return all(_is_atomic_value(a) for a in e.atoms)
    return isinstance(e, S.EmptyArray)


def _is_atomic_value(a: S.Atom) -> bool:
    if isinstance(a, (S.TLam, S.ILam, S.Box)):
        return _is_value(a.body)
    return True
