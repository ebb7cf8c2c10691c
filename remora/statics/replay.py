"""Writing an instantiation into the typed tree, and remembering it (decisions.md D41).

Inference (:mod:`remora.statics.infer`) finds how to instantiate an application — the values of
each quantifier layer of the function and of polymorphic arguments, and the frame over which a
function argument is lifted — as an :class:`Outcome`.  Written into the typed tree it becomes
ordinary (``implicit``) ``i-app``/``t-app`` nodes and lifting wrappers.  Whenever the types of
the function and the arguments are ground, the outcome depends on nothing else, so a checker
keeps it under those types (:func:`problem_key`) and replays it for the same problem.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from . import typed as T
from .builders import index_application, type_application
from .indices import SCALAR, Dim, Shape
from ..records import record
from .types import AtomMeta, LiteralMeta, TArr, TForall, TFun, TPi, TSigma, Type, is_ground, metas, prune, zonk
from .unknowns import has_index_unknowns


class Layer:
    """One quantifier layer's instantiation: ``i-app`` (kind ``i``) or ``t-app`` (``t``) with
    ``values``; ``type`` is the node's type, once it has been built (the same every time)."""

    __slots__ = ("kind", "values", "type")

    def __init__(self, kind: str, values: tuple):
        self.kind, self.values = kind, values
        self.type: Optional[Type] = None


class Outcome(NamedTuple):
    """How an application is instantiated: the layers of the function and of each argument,
    and each argument's lifting frame."""

    fn: tuple[Layer, ...]
    args: tuple[tuple[Layer, ...], ...]
    lifts: tuple[Optional[Shape], ...]

    def replayable(self) -> bool:
        """Whether nothing in it can change later (no unknown index or atom type left)."""
        values = [v for layers in (self.fn, *self.args) for layer in layers for v in layer.values]
        return all(
            is_ground(v) if isinstance(v, Type) else not has_index_unknowns(Shape((v,)) if isinstance(v, Dim) else v)
            for v in values
        ) and not any(f is not None and has_index_unknowns(f) for f in self.lifts)


    def generic(self, weak: tuple[AtomMeta, ...]) -> "Outcome":
        """The outcome with the literals' unknown atom types of its problem (``weak``, in the order
        of :func:`problem_key`) written as their slots, to be remembered."""
        if not weak:
            return self
        table = {prune(m): WeakSlot(i, m.allowed) for i, m in enumerate(weak)}
        return self._mapped(lambda t: table.get(t))

    def concrete(self, weak: tuple[AtomMeta, ...]) -> "Outcome":
        """A remembered outcome for a problem whose literals' unknowns are ``weak``."""
        if not weak:
            return self
        return self._mapped(lambda t: weak[t.index] if isinstance(t, WeakSlot) else None)

    def _mapped(self, swap) -> "Outcome":
        def layers(ls: tuple[Layer, ...]) -> tuple[Layer, ...]:
            return tuple(Layer(layer.kind, tuple(_swapped(v, swap) if isinstance(v, Type) else v for v in layer.values))
                         for layer in ls)

        return Outcome(layers(self.fn), tuple(layers(a) for a in self.args), self.lifts)


@record(frozen=True, eq=True, repr=False)
class WeakSlot(Type):
    """Stands for the ``index``-th distinct unknown atom type of number literals (contract §10)
    in a problem's key and in a remembered outcome, with what it may be: an instantiation does
    not depend on which literal an unknown belongs to, only on where in the types it appears."""

    index: int
    allowed: frozenset


def problem_key(fn: T.TyExpr, args: tuple[T.TyExpr, ...]) -> Optional[tuple[tuple, tuple[AtomMeta, ...]]]:
    """The problem's key — the types of the function and the arguments, if all are ground but
    for literals' unknown atom types, which are written as their slots — and those unknowns, in
    order of appearance."""
    types, weak = [], {}  # type: ignore[var-annotated]
    for t in (fn.type, *(a.type for a in args)):
        if not is_ground(t):
            t = zonk(t)
            if not is_ground(t):
                t = _slotted(t, weak)
                if t is None:
                    return None
        types.append(t)
    return tuple(types), tuple(weak)


def _slotted(t: Type, weak: dict) -> Optional[Type]:
    """``t`` with each literal's unknown atom type as its slot (numbered in ``weak`` as met);
    None if another unknown is left."""
    unknowns = metas(t)
    if not all(isinstance(m, LiteralMeta) for m in unknowns):
        return None
    for m in _in_order(t):
        if m not in weak:
            weak[m] = WeakSlot(len(weak), m.allowed)
    return _swapped(t, weak.get)


def _in_order(t: Type) -> list[AtomMeta]:
    t = prune(t)
    if isinstance(t, AtomMeta):
        return [t]
    if isinstance(t, TArr):
        return _in_order(t.atom)
    if isinstance(t, TFun):
        return [m for p in (*t.params, t.result) for m in _in_order(p)]
    if isinstance(t, (TForall, TPi, TSigma)):
        return _in_order(t.body)
    return []


def _swapped(t: Type, swap) -> Type:
    """``t`` with each atom type ``swap`` gives a replacement for replaced (None: kept)."""
    t = prune(t)
    if isinstance(t, (AtomMeta, WeakSlot)):
        return swap(t) or t
    if isinstance(t, TArr):
        return TArr(_swapped(t.atom, swap), t.shape)
    if isinstance(t, TFun):
        return TFun(tuple(_swapped(p, swap) for p in t.params), _swapped(t.result, swap))
    if isinstance(t, (TForall, TPi, TSigma)):
        return type(t)(t.vars, _swapped(t.body, swap))
    return t


def replay(fn: T.TyExpr, args: tuple[T.TyExpr, ...], outcome: Outcome) -> tuple[T.TyExpr, tuple[T.TyExpr, ...]]:
    """Write an outcome into the typed tree: the instantiations, and the lifting wrappers."""
    out = []
    for arg, layers, lift in zip(args, outcome.args, outcome.lifts):
        arg = instantiate(arg, layers)
        if lift is not None and lift.items:
            arg = lift_function(arg, lift)
        out.append(arg)
    return instantiate(fn, outcome.fn), tuple(out)


def instantiate(node: T.TyExpr, layers: tuple[Layer, ...]) -> T.TyExpr:
    """``node`` with each layer applied (T-IAPP, T-TAPP): the type as the rule builds it the
    first time, as it was built after that."""
    for layer in layers:
        if layer.type is not None:
            make = T.TyIApp if layer.kind == "i" else T.TyTApp
            node = make(layer.type, node.span, node, layer.values, True)  # type: ignore[arg-type]
            continue
        if layer.kind == "i":
            node = index_application(node, layer.values, node.span, implicit=True)
        else:
            node = type_application(node, layer.values, node.span, implicit=True)
        built = zonk(node.type)
        layer.type = built if is_ground(built) else None
    return node


def lift_function(g: T.TyExpr, frame: Shape) -> T.TyExpr:
    """The function array ``g`` applied over the extra frame ``frame``:
    ``((λ ((%f (Arr G (Shp)))) (λ ((%x1 (Arr t (++ F c1))) …) (%f %x1 …))) g)``."""
    gt = prune(g.type)
    fun = prune(gt.atom)  # type: ignore[union-attr]
    assert isinstance(gt, TArr) and isinstance(fun, TFun)
    span = g.span
    params = tuple((f"%x{i + 1}", TArr(prune(p).atom, frame + prune(p).shape)) for i, p in enumerate(fun.params))  # type: ignore[union-attr]
    result = prune(fun.result)
    lifted_result = TArr(result.atom, frame + result.shape)  # type: ignore[union-attr]
    lifted = TFun(tuple(t for _, t in params), lifted_result)
    inline = isinstance(g, T.TyRef) or (isinstance(g, T.TyArray) and not g.dims and isinstance(g.atoms[0], T.TyPrim))
    callee: T.TyExpr = g if inline and not gt.shape.items else T.TyRef(TArr(fun, SCALAR), span, "%f")
    call = T.TyApp(lifted_result, span, callee, tuple(T.TyRef(t, span, x) for x, t in params))
    prim = g.atoms[0].name if callee is g and isinstance(g, T.TyArray) else None
    lam = T.TyArray(TArr(lifted, SCALAR), span, (), (T.TyLam(lifted, span, params, call, prim),))
    if callee is g:
        return lam
    outer_type = TFun((TArr(fun, SCALAR),), TArr(lifted, SCALAR))
    outer = T.TyArray(TArr(outer_type, SCALAR), span, (), (T.TyLam(outer_type, span, (("%f", TArr(fun, SCALAR)),), lam),))
    return T.TyApp(TArr(lifted, gt.shape), span, outer, (g,))
