"""Types (paper Fig. 1), substitution and printing.

Types are immutable trees whose indices are already canonical
(:mod:`remora.statics.indices`), so TEQV-ARRAY's ``VALID [ι ≡ ι']`` is structural equality
of canonical forms, and type equivalence (Fig. 8) is α-equivalence on top of that: it is
:func:`remora.statics.unknowns.u_types`.

:class:`AtomMeta` is an atom type not yet known: an occurrence of an overloaded
primitive (``+`` on ``Int`` or ``Float``) or an instantiation being inferred.
It is solved by unification (:mod:`remora.statics.unify`).
"""

from __future__ import annotations

import itertools
from ..records import record
from typing import Mapping, Union

from ..atoms import RESTRICTED_KINDS, in_order
from .indices import Dim, Index, Shape, Var, free_vars as index_free_vars, show_shape, subst_shape


_UNKNOWN = object()


class Type:
    """Base class of internal (resolved, well-kinded) types.

    ``str`` and ``repr`` are both the canonical text (contract §3): a type is what users see of
    the checker (``remora.check``), and the text is what they can read and write back.

    ``_ground`` and ``_free`` remember what :func:`is_ground` and :func:`ground_free` found out
    about the type (it never changes)."""

    _ground: object = _UNKNOWN
    _free: object = _UNKNOWN

    def __str__(self) -> str:
        return show_type(self)

    def __repr__(self) -> str:
        return show_type(self)


@record(frozen=True, eq=True, repr=False)
class TBase(Type):
    name: str  # Int, Float, Bool


@record(frozen=True, eq=True, repr=False)
class TVar(Type):
    var: Var


@record(frozen=True, eq=True, repr=False)
class TArr(Type):
    atom: Type
    shape: Shape


@record(frozen=True, eq=True, repr=False)
class TFun(Type):
    params: tuple[Type, ...]
    result: Type


@record(frozen=True, eq=True, repr=False)
class TForall(Type):
    vars: tuple[Var, ...]
    body: Type


@record(frozen=True, eq=True, repr=False)
class TPi(Type):
    vars: tuple[Var, ...]
    body: Type


@record(frozen=True, eq=True, repr=False)
class TSigma(Type):
    vars: tuple[Var, ...]
    body: Type


_meta_ids = itertools.count(1)


class AtomMeta(Type):
    """An unknown atom type, optionally restricted to ``allowed`` base types.

    ``origin`` names what introduced it (``+``), for messages.  Solved in place.  ``default``
    is what it becomes if nothing settles it by the end of its top-level form (see
    :func:`remora.statics.unify.default_metas`): a base type (a literal's ``Int`` or
    ``Float``), another unknown whose floating-point type it takes the width of (``floor``'s
    result), or None (``Int`` where allowed).
    """

    __slots__ = ("id", "allowed", "solution", "origin", "display", "default")
    _ground = False  # (what it stands for is decided later)
    _free = None

    def __init__(self, allowed: frozenset[str] | None, origin: str, display: str | None = None,
                 default: "Type | None" = None):
        self.id = next(_meta_ids)
        self.allowed = allowed
        self.solution: Type | None = None
        self.origin = origin
        self.display = display
        self.default = default

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"?{self.id}"


class LiteralMeta(AtomMeta):
    """The atom type of the number literals of one array literal (contract §10: literals are
    *weak*): an integer literal is ``Int`` or ``Int32``, a floating-point one ``Float`` or
    ``Float32`` (or a ``Floating`` type variable), as its context asks, and ``Int``/``Float``
    when nothing does.  ``literals`` are its typed literal atoms, checked against the type it
    settles to once the form is checked (an ``Int32`` literal out of range is a type error)."""

    __slots__ = ("literals",)

    def __init__(self, allowed: frozenset[str], default: "TBase"):
        super().__init__(allowed, "this literal", display=default.name, default=default)
        self.literals: list = []


Binder = Union[TForall, TPi, TSigma]
INT, FLOAT, BOOL = TBase("Int"), TBase("Float"), TBase("Bool")
INT32, FLOAT32 = TBase("Int32"), TBase("Float32")
BASE_TYPES = {"Int": INT, "Float": FLOAT, "Int32": INT32, "Float32": FLOAT32, "Bool": BOOL, "Num": INT}


def scalar(atom: Type) -> TArr:
    return TArr(atom, Shape(()))


def prune(t: Type) -> Type:
    """Follow solved metas to the representative type."""
    while isinstance(t, AtomMeta) and t.solution is not None:
        t = t.solution
    return t


def is_ground(t: Type) -> bool:
    """Whether ``t`` holds no unknown atom type, so that what it means can never change.
    Remembered on each type (types are immutable), so that zonking, substitution and walking
    skip ground parts they would only copy."""
    ground = t._ground
    if ground is not _UNKNOWN:
        return ground  # type: ignore[return-value]
    if isinstance(t, TArr):
        ground = is_ground(t.atom)
    elif isinstance(t, TFun):
        ground = is_ground(t.result) and all(is_ground(p) for p in t.params)
    elif isinstance(t, (TForall, TPi, TSigma)):
        ground = is_ground(t.body)
    else:
        ground = True
    t._ground = ground
    return ground


def ground_free(t: Type) -> frozenset[Var] | None:
    """The free variables of ``t`` if it is ground (:func:`is_ground`), else None; remembered."""
    free = t._free
    if free is not _UNKNOWN:
        return free  # type: ignore[return-value]
    if not is_ground(t):
        free = None
    elif isinstance(t, TVar):
        free = frozenset((t.var,))
    elif isinstance(t, TArr):
        free = ground_free(t.atom) | index_free_vars(t.shape)  # type: ignore[operator]
    elif isinstance(t, TFun):
        free = frozenset().union(*(ground_free(p) for p in (*t.params, t.result)))  # type: ignore[arg-type]
    elif isinstance(t, (TForall, TPi, TSigma)):
        free = ground_free(t.body).difference(t.vars)  # type: ignore[union-attr]
    else:
        free = frozenset()
    t._free = free
    return free


def zonk(t: Type) -> Type:
    """The type with every solved meta replaced by its solution, recursively."""
    if is_ground(t):
        return t
    t = prune(t)
    if isinstance(t, TArr):
        return TArr(zonk(t.atom), t.shape)
    if isinstance(t, TFun):
        return TFun(tuple(zonk(p) for p in t.params), zonk(t.result))
    if isinstance(t, (TForall, TPi, TSigma)):
        return type(t)(t.vars, zonk(t.body))
    return t


def kind_of(t: Type) -> str:
    """Atom or Array (Fig. 6); assumes ``t`` is well-kinded."""
    t = prune(t)
    if isinstance(t, TArr):
        return "Array"
    if isinstance(t, TVar):
        return "Array" if t.var.sort == "Array" else "Atom"  # a Numeric or Floating variable is an Atom type
    return "Atom"


# ---------------------------------------------------------------------------
# Free variables and capture-avoiding substitution

def free_vars(t: Type) -> set[Var]:
    """Free index and type variables of ``t``."""
    free = ground_free(t)
    if free is not None:
        return set(free)
    t = prune(t)
    if isinstance(t, TVar):
        return {t.var}
    if isinstance(t, TArr):
        return free_vars(t.atom) | index_free_vars(t.shape)
    if isinstance(t, TFun):
        out = free_vars(t.result)
        for p in t.params:
            out |= free_vars(p)
        return out
    if isinstance(t, (TForall, TPi, TSigma)):
        return free_vars(t.body) - set(t.vars)
    return set()


def metas(t: Type) -> set[AtomMeta]:
    if is_ground(t):
        return set()
    t = prune(t)
    if isinstance(t, AtomMeta):
        return {t}
    if isinstance(t, TArr):
        return metas(t.atom)
    if isinstance(t, TFun):
        out = metas(t.result)
        for p in t.params:
            out |= metas(p)
        return out
    if isinstance(t, (TForall, TPi, TSigma)):
        return metas(t.body)
    return set()


Replacement = Union[Type, Index]


def subst(t: Type, m: Mapping[Var, Replacement]) -> Type:
    """``t[x ↦ r, …]``: type variables map to types, index variables to canonical indices.

    An Array-kinded type variable inside ``(Arr …)`` cannot occur (kinding forbids
    it), so a type replacement only ever lands in a type position.
    """
    if not m:
        return t
    free = ground_free(t)
    if free is not None and free.isdisjoint(m):
        return t
    return _subst(t, m, [])


def _subst(t: Type, m: Mapping[Var, Replacement], incoming: list) -> Type:
    """:func:`subst` below its checks; ``incoming`` holds the free variables of ``m``'s
    replacements once a binder has needed them (computed at most once per ``m``)."""
    t = prune(t)
    if isinstance(t, TArr):
        return TArr(_subst(t.atom, m, incoming), subst_shape(t.shape, m))  # type: ignore[arg-type]
    if isinstance(t, TVar):
        rep = m.get(t.var)
        return rep if isinstance(rep, Type) else t
    if isinstance(t, TFun):
        return TFun(tuple(_subst(p, m, incoming) for p in t.params), _subst(t.result, m, incoming))
    if isinstance(t, (TForall, TPi, TSigma)):
        if any(v in m for v in t.vars):
            inner = {v: r for v, r in m.items() if v not in t.vars}
            if not inner:
                return t
            m, incoming = inner, []
        if not incoming:
            incoming.append(_incoming(m))
        clash = [v for v in t.vars if v in incoming[0]]
        vars_, body = t.vars, t.body
        if clash:  # (rare: identity-compared variables make capture unlikely)
            renaming = {v: v.fresh() for v in clash}
            body = subst(body, {v: _var_as(v, w) for v, w in renaming.items()})
            vars_ = tuple(renaming.get(v, v) for v in vars_)
        return type(t)(vars_, _subst(body, m, incoming))
    return t


def _incoming(m: Mapping[Var, Replacement]) -> set[Var]:
    """The free variables of the replacements (a binder among them must be renamed)."""
    incoming: set[Var] = set()
    for r in m.values():
        incoming |= free_vars(r) if isinstance(r, Type) else index_free_vars(r)
    return incoming


def _var_as(old: Var, new: Var) -> Replacement:
    """The replacement that renames ``old`` to ``new`` at ``old``'s sort."""
    if old.sort == "Dim":
        return Dim(0, ((new, 1),))
    if old.sort == "Shape":
        return Shape((new,))
    return TVar(new)


def var_replacement(v: Var) -> Replacement:
    """``v`` itself as a replacement (a type or an index, by its sort)."""
    return _var_as(v, v)


# ---------------------------------------------------------------------------
# Printing in the paper's syntax

def show_type(t: Type, names: dict[Var, str] | None = None) -> str:
    """``t`` in the paper's syntax; a bound variable is renamed (``k.1``) where its source name
    would capture a different, free variable of the same name."""
    names = names if names is not None else {}
    t = prune(t)
    if isinstance(t, TBase):
        return t.name
    if isinstance(t, TVar):
        return names.get(t.var, t.var.name)
    if isinstance(t, AtomMeta):
        return _show_meta(t)
    if isinstance(t, TArr):
        return f"(Arr {show_type(t.atom, names)} {show_shape(t.shape, names)})"
    if isinstance(t, TFun):
        return "(-> (" + " ".join(show_type(p, names) for p in t.params) + f") {show_type(t.result, names)})"
    if isinstance(t, (TForall, TPi, TSigma)):
        head = {TForall: "Forall", TPi: "Pi", TSigma: "Sigma"}[type(t)]
        inner = dict(names)
        taken = {names.get(v, v.name) for v in free_vars(t.body) - set(t.vars)}
        for v in t.vars:
            shown, k = v.name, 0
            while shown in taken:
                k += 1
                shown = f"{v.name}.{k}"
            inner[v] = shown
            taken.add(shown)
        binders = " ".join(f"({inner[v]} {v.sort})" for v in t.vars)
        return f"({head} ({binders}) {show_type(t.body, inner)})"
    return object.__repr__(t)


def _show_meta(m: AtomMeta) -> str:
    """An atom type not yet known: its variable's name, or ``x`` as the primitive tables write it."""
    return m.display or "x"


def describe_allowed(m: AtomMeta) -> str:
    """What an unknown atom type may still be, in words: ``Int or Float``."""
    if m.allowed is None:
        return "any atom type"
    return " or ".join(in_order(m.allowed))
