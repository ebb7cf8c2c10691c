"""Type erasure (paper Fig. 13): the typed tree becomes erased Remora.

``ℰ⟦·⟧`` erases expressions, ``𝒜⟦·⟧`` atoms and ``𝒯⟦·⟧`` types: an array type
becomes its shape, an Array-kinded type variable the shape it will stand for,
and every other type the scalar shape.  ``Tλ`` becomes ``Iλ`` and ``t-app``
becomes ``i-app``.  ``let`` stays one sequential node (it abbreviates nested β-redexes,
which the engines would evaluate with one level of recursion per binding).  A reference
keeps the key of the global the checker resolved it to.
"""

from __future__ import annotations


from . import erased as E
from ..backends.base import OBJECT
from ..statics import typed as T
from ..statics.indices import SCALAR, Shape
from ..statics.literals import value_at
from ..statics.types import TArr, TVar, Type, kind_of, prune
from ..dynamics.values import rep_of
from ..limits import shape_problem
from .eta import primitive_of


def erase_type(t: Type) -> Shape:
    """𝒯⟦τ⟧."""
    t = prune(t)
    if isinstance(t, TArr):
        return t.shape
    if isinstance(t, TVar) and t.var.sort == "Array":
        return Shape((t.var,))
    return SCALAR


def atom_rep(atom: Type) -> E.Rep:
    """How atoms of this type are stored: a representation's name, or the type variable standing for it."""
    atom = prune(atom)
    if isinstance(atom, TVar):
        return atom.var
    return rep_of(atom)


def rep(t: Type) -> E.Rep:
    """The atom representation of an Array type's values."""
    t = prune(t)
    if isinstance(t, TArr):
        return atom_rep(t.atom)
    if isinstance(t, TVar):
        return t.var
    return OBJECT


def erase_form(form: T.TyForm) -> E.EForm:
    if isinstance(form, T.TyDefine):
        return E.EDefine(form.name, erase(form.value), form.span, form.key)
    return E.EExprForm(erase(form.expr), form.span)


def erase(e: T.TyExpr) -> E.EExpr:
    """ℰ⟦e⟧."""
    if isinstance(e, T.TyRef):
        return E.EVar(e.span, e.name, e.key)
    if isinstance(e, T.TyArray):
        atoms = tuple(erase_atom(a) for a in e.atoms)
        r = rep(e.type)
        const = None
        # (An empty literal whose shape NumPy cannot hold is left to the engines' located error.)
        if all(isinstance(a, E.ELit) for a in atoms) and isinstance(r, str) and shape_problem(e.dims) is None:
            const = tuple(a.value for a in atoms)  # (the engines make the array, once per backend)
        return E.EArray(e.span, e.dims, atoms, r, const)
    if isinstance(e, T.TyFrame):
        return E.EFrame(e.span, erase_type(e.type), tuple(erase(c) for c in e.cells), rep(e.type))
    if isinstance(e, T.TyApp):
        fn_type = prune(e.fn.type)
        assert isinstance(fn_type, TArr)
        params = prune(fn_type.atom).params  # type: ignore[union-attr]
        cells = tuple(erase_type(p) for p in params)
        return E.EApp(e.span, erase(e.fn), tuple(erase(a) for a in e.args), cells, erase_type(e.type), rep(e.type))
    if isinstance(e, T.TyTApp):
        args = tuple(_type_arg(t) for t in e.types)
        return E.EIApp(e.span, erase(e.fn), args, erase_type(e.type), rep(e.type))
    if isinstance(e, T.TyIApp):
        return E.EIApp(e.span, erase(e.fn), tuple(e.indices), erase_type(e.type), rep(e.type))
    if isinstance(e, T.TyUnbox):
        body = erase(e.body)
        return E.EUnbox(
            e.span, e.index_vars, e.value_name, erase(e.boxed), body, erase_type(e.body.type), rep(e.type),
            frozenset(free_terms(body) - {e.value_name}),
        )
    if isinstance(e, T.TyLet):
        let = E.ELet(e.span, tuple((x, erase(v)) for x, v in e.bindings), erase(e.body))
        let.free = frozenset(_let_free(let))
        return let
    if isinstance(e, T.TyIf):
        then, orelse = erase(e.then), erase(e.orelse)
        return E.EIf(e.span, erase(e.cond), then, orelse, erase_type(e.type), rep(e.type),
                     frozenset(free_terms(then) | free_terms(orelse)))
    raise TypeError(f"not a typed expression: {e!r}")


def _type_arg(t: Type) -> E.TypeArg:
    if kind_of(t) == "Array":
        return E.TypeArg(erase_type(t), rep(t))
    return E.TypeArg(None, atom_rep(t))


def erase_atom(a: T.TyAtom) -> E.EAtom:
    """𝒜⟦𝔞⟧."""
    if isinstance(a, T.TyLit):  # (a Float32 literal: the float32 nearest to the decimal written)
        return E.ELit(a.span, value_at(a.value, a.span, a.type))
    if isinstance(a, T.TyPrim):
        return E.EPrim(a.span, a.name)
    if isinstance(a, T.TyLam):
        body = erase(a.body)
        names = tuple(x for x, _ in a.params)
        return E.ELam(a.span, names, body, frozenset(free_terms(body) - set(names)), primitive_of(a))
    if isinstance(a, (T.TyTLam, T.TyILam)):
        body = erase(a.body)
        return E.EILam(a.span, a.vars, body, frozenset(free_terms(body)))
    if isinstance(a, T.TyBox):
        return E.EBox(a.span, a.indices, erase(a.body))
    raise TypeError(f"not a typed atom: {a!r}")


def free_terms(e) -> set[str]:
    """The local variables an erased term uses from its surroundings (globals are found by key,
    never in an environment)."""
    if isinstance(e, E.EVar):
        return {e.name} if e.key is None else set()
    if isinstance(e, E.EArray):
        out: set[str] = set()
        for a in e.atoms:
            out |= free_terms(a)
        return out
    if isinstance(e, E.EFrame):
        return set().union(*(free_terms(c) for c in e.cells)) if e.cells else set()
    if isinstance(e, E.EApp):
        return free_terms(e.fn).union(*(free_terms(a) for a in e.args))
    if isinstance(e, E.EIApp):
        return free_terms(e.fn)
    if isinstance(e, E.EUnbox):
        return free_terms(e.boxed) | e.free
    if isinstance(e, (E.ELam, E.EILam)):
        return set(e.free)
    if isinstance(e, E.EBox):
        return free_terms(e.body)
    if isinstance(e, E.ELet):
        return set(e.free)
    if isinstance(e, E.EIf):
        return free_terms(e.cond) | e.free
    return set()


def _let_free(e: E.ELet) -> set[str]:
    """Each value's free locals but those bound before it, then the body's but all bound:
    one pass, linear in the number of bindings."""
    out: set[str] = set()
    bound: set[str] = set()
    for name, value in e.bindings:
        out |= free_terms(value) - bound
        bound.add(name)
    return out | (free_terms(e.body) - bound)

