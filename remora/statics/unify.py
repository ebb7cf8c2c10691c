"""Type equivalence for the checker: T-EQV (Fig. 8), settling unknown atom types on the way.

There is one equivalence: :func:`remora.statics.unknowns.u_types` yields every way to make two
types equivalent given tentative solutions, without changing anything (inference backtracks
over those).  The checker's ``unify(a, b)`` is its special case with nothing tentative: the
first way, committed — ``+`` meets an ``Int`` argument, so this ``+`` is the ``Int`` one.
Without unknown indices (only inference makes those) there is at most one way.

A commit changes only the unknowns of the form being checked, which belong to the thread
checking it; nothing is committed unless the whole equivalence holds, so there is nothing to
undo.
"""

from __future__ import annotations

from ..atoms import FLOATING, in_order, integral_like
from .types import FLOAT, INT, AtomMeta, TBase, Type, prune
from .unknowns import Sol, u_types, walk

_NOTHING_TENTATIVE = Sol()


def unify(a: Type, b: Type) -> bool:
    """Whether ``a ≅ b``, solving unknown atom types to make it so; on failure nothing is solved."""
    a, b = prune(a), prune(b)
    if a is b or (type(a) is TBase and a == b):  # (the common case: nothing to solve)
        return True
    sol = next(u_types(a, b, _NOTHING_TENTATIVE), None)
    if sol is None:
        return False
    commit(sol)
    return True


def commit(sol: Sol) -> None:
    """Make a solution's atom types the unknowns' own (and narrow what the others may be).

    An unknown solved to another unknown stays a link to it (messages about overloading follow
    the chain, :func:`remora.statics.typecheck._original_allowed`); any other solution is
    written with the solution's unknown indices replaced."""
    for meta, value in sol.atoms.items():
        meta.solution = value if isinstance(value, AtomMeta) else walk(value, sol)
    for meta, allowed in sol.allowed.items():
        if isinstance(prune(meta), AtomMeta):
            restrict(prune(meta), allowed)  # type: ignore[arg-type]


def restrict(meta: AtomMeta, allowed) -> None:
    """Narrow what an unknown atom type may be."""
    meta.allowed = allowed


def default_metas(ms: list[AtomMeta]) -> None:
    """Unknown atom types nothing settled take their defaults (contract §2: ``(define f +)`` is
    the ``Int`` one; §10: a literal is ``Int`` or ``Float``).  Unknowns made equal form one class,
    solved together: as wide as the floating-point type it was taken from if one of them is a
    ``floor`` result (``(+ (floor x) 1)`` is ``Int32`` for a ``Float32`` ``x``), else a literal's
    default, else ``Int`` — or ``Float``, or the first type allowed — where allowed."""
    classes: dict[AtomMeta, list[AtomMeta]] = {}
    for m in ms:
        rep = prune(m)
        if isinstance(rep, AtomMeta):
            classes.setdefault(rep, []).append(m)
    widths = []
    for rep, members in classes.items():
        if any(isinstance(m.default, AtomMeta) for m in members):
            widths.append((rep, members))  # (after the others: its argument's type may be one of them)
        else:
            rep.solution = _default(rep, members)
    for rep, members in widths:
        rep.solution = _width_default(rep, members) or _default(rep, members)


def _default(rep: AtomMeta, members: list[AtomMeta]) -> Type:
    allowed = rep.allowed
    for m in members:
        d = m.default
        if isinstance(d, TBase) and (allowed is None or d.name in allowed):
            return d
    if allowed is None or "Int" in allowed:
        return INT
    if "Float" in allowed:
        return FLOAT
    return TBase(in_order(allowed)[0])


def _width_default(rep: AtomMeta, members: list[AtomMeta]) -> Type | None:
    """The integer type as wide as the floating-point type a ``floor`` result was made from."""
    for m in members:
        source = prune(m.default) if isinstance(m.default, AtomMeta) else None
        if isinstance(source, TBase) and source.name in FLOATING:
            wanted = integral_like(source.name)
            if rep.allowed is None or wanted in rep.allowed:
                return TBase(wanted)
    return None
