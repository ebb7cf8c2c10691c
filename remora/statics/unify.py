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
    """Unknown atom types nothing settled become ``Int`` (contract §2: ``(define f +)``)."""
    for m in ms:
        m = prune(m)  # type: ignore[assignment]
        if isinstance(m, AtomMeta):
            if m.allowed is None or "Int" in m.allowed:
                m.solution = INT
            elif "Float" in m.allowed:
                m.solution = FLOAT
            else:
                m.solution = TBase(sorted(m.allowed)[0])
