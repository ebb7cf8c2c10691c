"""Type equivalence with unknown atom types (T-EQV, Fig. 8, plus :class:`AtomMeta`).

``unify(a, b)`` decides ``a ≅ b`` — α-equivalence with canonical index
equality — while solving unknown atom types on the way (``+`` meets an ``Int``
argument, so this ``+`` is the ``Int`` one).  Solutions are recorded on a trail
so a failed attempt can be undone (needed when inference tries alternatives).

The trail belongs to the thread: a check records and undoes only its own solutions, so checks
running in other threads (the Python API may be called from several) never undo each other's.
"""

from __future__ import annotations

import threading

from .indices import Var
from .types import (
    AtomMeta,
    TArr,
    TBase,
    TForall,
    TFun,
    TPi,
    TSigma,
    TVar,
    Type,
    _rename_shape,
    free_vars,
    metas,
    prune,
)

class _Trail(threading.local):
    """This thread's record of solutions: (unknown, its previous solution, its previous ``allowed``)."""

    def __init__(self) -> None:
        self.entries: list[tuple[AtomMeta, object, object]] = []


_trail = _Trail()


def snapshot() -> int:
    return len(_trail.entries)


def rollback(mark: int) -> None:
    """Undo every solution recorded since ``mark`` (by this thread)."""
    entries = _trail.entries
    while len(entries) > mark:
        meta, solution, allowed = entries.pop()
        meta.solution = solution  # type: ignore[assignment]
        meta.allowed = allowed  # type: ignore[assignment]


def _set(meta: AtomMeta, solution: Type | None, allowed) -> None:
    _trail.entries.append((meta, meta.solution, meta.allowed))
    meta.solution = solution
    meta.allowed = allowed


def unify(a: Type, b: Type) -> bool:
    """Whether ``a ≅ b``, solving unknowns to make it so; on failure nothing stays solved."""
    mark = snapshot()
    if _unify(a, b, {}):
        return True
    rollback(mark)
    return False


def _unify(a: Type, b: Type, ren: dict[Var, Var]) -> bool:
    a, b = prune(a), prune(b)
    if a is b:
        return True
    if isinstance(a, AtomMeta):
        return _solve(a, b, ren)
    if isinstance(b, AtomMeta):
        return _solve(b, a, ren)
    if type(a) is not type(b):
        return False
    if isinstance(a, TBase):
        return a == b
    if isinstance(a, TVar):
        return ren.get(a.var, a.var) is b.var  # type: ignore[union-attr]
    if isinstance(a, TArr):
        assert isinstance(b, TArr)
        return _unify(a.atom, b.atom, ren) and _rename_shape(a.shape, ren) == b.shape
    if isinstance(a, TFun):
        assert isinstance(b, TFun)
        return (
            len(a.params) == len(b.params)
            and all(_unify(p, q, ren) for p, q in zip(a.params, b.params))
            and _unify(a.result, b.result, ren)
        )
    if isinstance(a, (TForall, TPi, TSigma)):
        assert isinstance(b, (TForall, TPi, TSigma))
        if len(a.vars) != len(b.vars) or any(x.sort != y.sort for x, y in zip(a.vars, b.vars)):
            return False
        inner = dict(ren)
        inner.update(zip(a.vars, b.vars))
        return _unify(a.body, b.body, inner)
    return False


def _solve(meta: AtomMeta, t: Type, ren: dict[Var, Var]) -> bool:
    if isinstance(t, AtomMeta):
        if meta.allowed is None:
            allowed = t.allowed
        elif t.allowed is None:
            allowed = meta.allowed
        else:
            allowed = meta.allowed & t.allowed
            if not allowed:
                return False
        _set(t, None, allowed)
        _set(meta, t, meta.allowed)
        return True
    if meta.allowed is not None and not fits_allowed(t, meta.allowed):
        return False
    if meta in metas(t):
        return False
    bound = set(ren) | set(ren.values())
    if free_vars(t) & bound:  # would let a bound variable escape its binder
        return False
    _set(meta, t, meta.allowed)
    return True


def fits_allowed(t: Type, allowed: frozenset[str]) -> bool:
    """Whether ``t`` is one of the atom types an overloaded unknown may be."""
    if isinstance(t, TBase):
        return t.name in allowed
    return isinstance(t, TVar) and t.var.sort == "Numeric" and {"Int", "Float"} <= allowed


def restrict(meta: AtomMeta, allowed) -> None:
    """Narrow what an unknown atom type may be (undone by :func:`rollback`)."""
    _set(meta, meta.solution, allowed)


def default_metas(ms: list[AtomMeta]) -> None:
    """Unknown atom types nothing settled become ``Int`` (contract §2: ``(define f +)``)."""
    from .types import INT, FLOAT

    for m in ms:
        m = prune(m)  # type: ignore[assignment]
        if isinstance(m, AtomMeta):
            if m.allowed is None or "Int" in m.allowed:
                _set(m, INT, m.allowed)
            elif "Float" in m.allowed:
                _set(m, FLOAT, m.allowed)
            else:
                _set(m, TBase(sorted(m.allowed)[0]), m.allowed)
