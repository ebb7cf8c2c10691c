"""Type equivalence (T-EQV, Fig. 8) with unknown indices and atom types, with backtracking.

The one implementation of ``≅``: inference (:mod:`remora.statics.infer`) searches over its
solutions; the checker (:func:`remora.statics.unify.unify`) commits the first.

A :class:`Sol` is an immutable set of tentative solutions: unknown indices
(:class:`IMeta`) to canonical indices, unknown atom types to types.  Every
``u_*`` function yields each way to extend a solution so that two things are
equal; a generator that yields nothing means "impossible here".  Without
unknowns, ``u_types`` is TEQV-ARRAY/FN/UNIV/PI/SIGMA exactly: α-equivalence with
canonical index equality.

Shapes are unified as sequences of canonical components: a shape unknown may
stand for any run of consecutive components (so several splits can be
possible), a dimension unknown is solved from a linear equation whose solution
must be a natural-valued index (``(+ 1 d) = (+ 1 len)`` gives ``d = len``, but
``(+ 1 d) = n`` has no solution valid for every ``n``).  Equations with several
unknowns wait until others have determined them; failing that, z3 enumerates
their natural solutions (when no rigid variable is involved).
"""

from __future__ import annotations

from ..records import factory, record
from typing import Iterator, Optional

from ..atoms import RESTRICTED_KINDS
from .frames import prefix_ordered
from .indices import Dim, Index, Shape, Var, dim_add, free_vars as index_free_vars, subst_dim
from .types import (
    AtomMeta,
    LiteralMeta,
    TArr,
    TBase,
    TForall,
    TFun,
    TPi,
    TSigma,
    TVar,
    Type,
    free_vars,
    ground_free,
    subst,
    var_replacement,
)


class IMeta(Var):
    """An unknown index (of sort Dim or Shape) being solved for; printed with its variable's name."""

    __slots__ = ()


@record(frozen=True)
class Sol:
    """Tentative solutions; extended by copying, so alternatives never interfere."""

    idx: dict = factory(dict)  # IMeta -> Index
    atoms: dict = factory(dict)  # AtomMeta -> Type
    allowed: dict = factory(dict)  # AtomMeta -> narrowed allowed set
    pending: tuple = ()  # (Dim, Dim) equations with several unknowns

    def with_index(self, m: IMeta, value: Index) -> "Sol":
        idx = dict(self.idx)
        idx[m] = value
        return Sol(idx, self.atoms, self.allowed, self.pending)

    def with_atom(self, m: AtomMeta, value: Type, allowed_update=None) -> "Sol":
        atoms = dict(self.atoms)
        atoms[m] = value
        allowed = self.allowed
        if allowed_update is not None:
            allowed = dict(allowed)
            allowed.update(allowed_update)
        return Sol(self.idx, atoms, allowed, self.pending)

    def with_pending(self, pending: tuple) -> "Sol":
        return Sol(self.idx, self.atoms, self.allowed, pending)


# ---------------------------------------------------------------------------
# Looking through solutions


def walk_dim(d: Dim, sol: Sol) -> Dim:
    idx = sol.idx
    if not idx:
        return d
    while True:
        m = {v: idx[v] for v, _ in d.terms if v in idx}
        if not m:
            return d
        d = subst_dim(d, m)


def walk_items(items, sol: Sol) -> list:
    if not sol.idx:
        return list(items)
    out: list = []
    for item in items:
        if isinstance(item, IMeta) and item in sol.idx:
            out.extend(walk_items(sol.idx[item].items, sol))
        elif isinstance(item, Dim):
            out.append(walk_dim(item, sol))
        else:
            out.append(item)
    return out


def walk_shape(s: Shape, sol: Sol) -> Shape:
    if not sol.idx:
        return s
    return Shape(tuple(walk_items(s.items, sol)))


def walk_index(ix: Index, sol: Sol) -> Index:
    return walk_dim(ix, sol) if isinstance(ix, Dim) else walk_shape(ix, sol)


def head(t: Type, sol: Sol) -> Type:
    """``t`` with solved unknown atom types followed (committed and tentative)."""
    while isinstance(t, AtomMeta):
        if t.solution is not None:
            t = t.solution
        elif t in sol.atoms:
            t = sol.atoms[t]
        else:
            return t
    return t


def walk(t: Type, sol: Sol) -> Type:
    """``t`` with every solved unknown replaced, recursively."""
    free = ground_free(t)
    if free is not None and (not sol.idx or free.isdisjoint(sol.idx)):
        return t
    t = head(t, sol)
    if isinstance(t, TArr):
        return TArr(walk(t.atom, sol), walk_shape(t.shape, sol))
    if isinstance(t, TFun):
        return TFun(tuple(walk(p, sol) for p in t.params), walk(t.result, sol))
    if isinstance(t, (TForall, TPi, TSigma)):
        return type(t)(t.vars, walk(t.body, sol))
    return t


def allowed_of(m: AtomMeta, sol: Sol):
    return sol.allowed.get(m, m.allowed)


def index_unknowns(s: Shape) -> list[IMeta]:
    """The unknowns in ``s``, in order of appearance."""
    out: list[IMeta] = []
    for item in s.items:
        for v in [item] if isinstance(item, Var) else [v for v, _ in item.terms]:
            if isinstance(v, IMeta) and v not in out:
                out.append(v)
    return out


def has_index_unknowns(s: Shape) -> bool:
    return any(isinstance(v, IMeta) for v in index_free_vars(s))


def least_value(m: IMeta, bumped: bool = False) -> Dim | Shape:
    """An unknown index's least value (a Dim 0, a Shape empty), or one step larger (1, ``(Shp 1)``)."""
    if m.sort == "Shape":
        return Shape((Dim(1),)) if bumped else Shape(())
    return Dim(1 if bumped else 0)


def frames_fit(frames: list[Shape]) -> bool:
    """T-APP's condition on a solution's frames: known (no unknowns left) and prefix-ordered."""
    return not any(has_index_unknowns(f) for f in frames) and prefix_ordered(frames)


# ---------------------------------------------------------------------------
# Unification


def u_types(a: Type, b: Type, sol: Sol) -> Iterator[Sol]:
    """Every extension of ``sol`` making ``a ≅ b``."""
    a, b = head(a, sol), head(b, sol)
    if a is b:
        yield sol
        return
    if isinstance(a, AtomMeta):
        yield from _bind_atom(a, b, sol)
        return
    if isinstance(b, AtomMeta):
        yield from _bind_atom(b, a, sol)
        return
    if type(a) is not type(b):
        return
    if isinstance(a, TBase):
        if a == b:
            yield sol
    elif isinstance(a, TVar):
        if a.var is b.var:  # type: ignore[union-attr]
            yield sol
    elif isinstance(a, TArr):
        for s in u_types(a.atom, b.atom, sol):  # type: ignore[union-attr]
            yield from u_shapes(a.shape, b.shape, s)  # type: ignore[union-attr]
    elif isinstance(a, TFun):
        if len(a.params) == len(b.params):  # type: ignore[union-attr]
            yield from u_pairs(list(zip(a.params + (a.result,), b.params + (b.result,))), sol)  # type: ignore[union-attr]
    elif isinstance(a, (TForall, TPi, TSigma)):
        yield from _u_binders(a, b, sol)  # type: ignore[arg-type]


def u_pairs(pairs: list[tuple[Type, Type]], sol: Sol) -> Iterator[Sol]:
    if not pairs:
        yield sol
        return
    (x, y), rest = pairs[0], pairs[1:]
    for s in u_types(x, y, sol):
        yield from u_pairs(rest, s)


def _u_binders(a, b, sol: Sol) -> Iterator[Sol]:
    """TEQV-UNIV/PI/SIGMA: both bodies with the binders replaced by the same fresh variables."""
    if len(a.vars) != len(b.vars) or any(x.sort != y.sort for x, y in zip(a.vars, b.vars)):
        return
    fresh = [Var(v.name, v.sort) for v in a.vars]
    body_a = subst(a.body, {v: var_replacement(f) for v, f in zip(a.vars, fresh)})
    body_b = subst(b.body, {v: var_replacement(f) for v, f in zip(b.vars, fresh)})
    for s in u_types(body_a, body_b, sol):
        if not _mentions(s, set(fresh)):
            yield s


def _mentions(sol: Sol, vars_: set[Var]) -> bool:
    """Whether some solution would carry a bound variable out of its binder."""
    for value in sol.idx.values():
        if index_free_vars(value) & vars_:
            return True
    return any(free_vars(t) & vars_ for t in sol.atoms.values())


def _bind_atom(m: AtomMeta, t: Type, sol: Sol) -> Iterator[Sol]:
    allowed = allowed_of(m, sol)
    if isinstance(t, AtomMeta):
        other = allowed_of(t, sol)
        both = other if allowed is None else allowed if other is None else allowed & other
        if both is not None and not both:
            return
        if isinstance(m, LiteralMeta) and not isinstance(t, LiteralMeta):
            m, t = t, m  # (a literal's stays the one unknown that stands for both: messages show it)
        yield sol.with_atom(m, t, {t: both})
        return
    if allowed is not None and not fits_allowed(t, allowed):
        return
    if _occurs(m, t, sol):
        return
    yield sol.with_atom(m, t)


def fits_allowed(t: Type, allowed: frozenset[str]) -> bool:
    """Whether ``t`` is one of the atom types an overloaded unknown may be."""
    if isinstance(t, TBase):
        return t.name in allowed
    return isinstance(t, TVar) and t.var.sort in RESTRICTED_KINDS and RESTRICTED_KINDS[t.var.sort] <= allowed


def _occurs(m: AtomMeta, t: Type, sol: Sol) -> bool:
    from .types import metas

    return m in metas(walk(t, sol))


def u_shapes(a: Shape, b: Shape, sol: Sol) -> Iterator[Sol]:
    """Every extension of ``sol`` making two shapes equal, as sequences of components."""
    yield from _seq(a.items, b.items, sol, False)


def _seq(ps, qs, sol: Sol, walked: bool) -> Iterator[Sol]:
    """``walked``: the sequences are already walked in ``sol`` (walking again would change nothing)."""
    if not walked:
        ps, qs = walk_items(ps, sol), walk_items(qs, sol)
    if not ps and not qs:
        yield sol
        return
    if ps and isinstance(ps[0], IMeta):
        meta = ps[0]
        if qs and qs[0] is meta:
            yield from _seq(ps[1:], qs[1:], sol, True)
            return
        for j in range(len(qs) + 1):  # the unknown shape takes the next j components
            taken = qs[:j]
            if meta in taken:
                break
            yield from _seq(ps[1:], qs[j:], sol.with_index(meta, Shape(tuple(taken))), False)
        return
    if qs and isinstance(qs[0], IMeta):
        yield from _seq(qs, ps, sol, True)
        return
    if not ps or not qs:
        return
    p, q = ps[0], qs[0]
    if isinstance(p, Dim) and isinstance(q, Dim):
        for s in u_dims(p, q, sol):
            yield from _seq(ps[1:], qs[1:], s, s is sol)
    elif p is q:
        yield from _seq(ps[1:], qs[1:], sol, True)


def _difference(a: Dim, b: Dim) -> tuple[int, dict[Var, int]]:
    coeffs: dict[Var, int] = {}
    for v, c in a.terms:
        coeffs[v] = coeffs.get(v, 0) + c
    for v, c in b.terms:
        coeffs[v] = coeffs.get(v, 0) - c
    return a.const - b.const, {v: c for v, c in coeffs.items() if c}


def u_dims(a: Dim, b: Dim, sol: Sol) -> Iterator[Sol]:
    """Every extension of ``sol`` making two dimensions equal."""
    a, b = walk_dim(a, sol), walk_dim(b, sol)
    const, coeffs = _difference(a, b)
    unknowns = [v for v in coeffs if isinstance(v, IMeta)]
    if not unknowns:
        if const == 0 and not coeffs:
            yield sol
        return
    if len(unknowns) > 1:
        yield sol.with_pending(sol.pending + ((a, b),))
        return
    (u,) = unknowns
    value = solve_linear(u, const, coeffs)
    if value is not None:
        yield sol.with_index(u, value)


def solve_linear(u: Var, const: int, coeffs: dict[Var, int]) -> Optional[Dim]:
    """``u`` from ``const + Σ c·v = 0``, if the solution is a natural-valued index."""
    c = coeffs[u]
    rest_const = -const
    rest = {v: -k for v, k in coeffs.items() if v is not u}
    if c < 0:
        c, rest_const, rest = -c, -rest_const, {v: -k for v, k in rest.items()}
    if rest_const < 0 or rest_const % c or any(k < 0 or k % c for k in rest.values()):
        return None
    terms = [Dim(rest_const // c)] + [Dim(0, ((v, k // c),)) for v, k in rest.items()]
    return dim_add(*terms)


def settle_pending(sol: Sol) -> Iterator[Sol]:
    """Resolve the equations that waited for other unknowns; z3 for any still underdetermined."""
    while sol.pending:
        waiting = sol.pending
        sol = sol.with_pending(())
        for a, b in waiting:
            options = list(u_dims(a, b, sol))  # at most one: solved, deferred again, or impossible
            if not options:
                return
            sol = options[0]
        if len(sol.pending) == len(waiting):  # no progress: they need each other
            yield from _enumerate_pending(sol)
            return
    yield sol


def _enumerate_pending(sol: Sol) -> Iterator[Sol]:
    """Natural solutions of the remaining linear equations (at most two: enough to see ambiguity)."""
    from . import smt

    equations = [(walk_dim(a, sol), walk_dim(b, sol)) for a, b in sol.pending]
    variables = set()
    for a, b in equations:
        variables |= index_free_vars(a) | index_free_vars(b)
    if any(not isinstance(v, IMeta) for v in variables):
        return  # would need an index expression in rigid variables: not inferable
    for assignment in smt.natural_solutions(equations, variables, limit=2):
        s = sol.with_pending(())
        for v, value in assignment.items():
            s = s.with_index(v, Dim(value))
        yield s
