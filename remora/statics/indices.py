"""Type indices in canonical form (paper §2.2).

Internally an index is always kept in the canonical form the paper uses to
decide equality, so that index equality is plain structural equality:

* a ``Dim`` is a linear sum: a constant plus a coefficient for each variable
  (``(+ x y 5 x)`` and ``(+ (+ x x) 5 y)`` both become ``2x + y + 5``);
* a ``Shape`` is the flattened sequence of its components — single ``Dim`` s and
  ``Shape`` variables — with nested ``++`` collapsed away.  Order is kept: ``++``
  is not commutative.

Variables are :class:`Var` objects compared by identity, so binders never need
renaming to stay apart; the name is only for printing.
"""

from __future__ import annotations

import itertools
import operator
from ..records import record
from typing import Mapping, Union

_serial = itertools.count()

SORTS = ("Dim", "Shape")
KINDS = ("Atom", "Array")


class Var:
    """A bound index or type variable.  ``sort`` is ``Dim``/``Shape`` (index) or ``Atom``/``Array`` (type)."""

    __slots__ = ("name", "sort", "serial")

    def __init__(self, name: str, sort: str):
        self.name = name
        self.sort = sort
        self.serial = next(_serial)

    def fresh(self) -> "Var":
        """A new variable with the same name and sort (for renaming a binder)."""
        return Var(self.name, self.sort)

    def __repr__(self) -> str:
        return f"{self.name}#{self.serial}"


def fresh_serial() -> int:
    """A serial no variable of this process has had or will have (for one revived from a cache)."""
    return next(_serial)


@record(frozen=True)
class Dim:
    """``const + Σ coeff·var`` with coefficients > 0, terms sorted by variable name."""

    const: int
    terms: tuple[tuple[Var, int], ...] = ()

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __str__(self) -> str:
        return show_dim(self)


@record(frozen=True)
class Shape:
    """A sequence of components: each a :class:`Dim` or a ``Shape``-sorted :class:`Var`."""

    items: tuple[Union[Dim, Var], ...] = ()

    @property
    def rank(self) -> int | None:
        """The number of axes, if no shape variable makes it unknown."""
        return None if any(isinstance(i, Var) for i in self.items) else len(self.items)

    def dims(self) -> tuple[int, ...] | None:
        """The concrete dimensions, if the shape is fully known."""
        out = []
        for item in self.items:
            if isinstance(item, Var) or not item.is_const:
                return None
            out.append(item.const)
        return tuple(out)

    def __add__(self, other: "Shape") -> "Shape":
        return Shape(self.items + other.items)

    def __len__(self) -> int:
        return len(self.items)

    def __str__(self) -> str:
        return show_shape(self)


Index = Union[Dim, Shape]
SCALAR = Shape(())


def dim(n: int) -> Dim:
    return Dim(n)


def dim_var(v: Var) -> Dim:
    return Dim(0, ((v, 1),))


def dim_add(*ds: Dim) -> Dim:
    """The canonical form of ``(+ d ...)``."""
    const = 0
    coeffs: dict[Var, int] = {}
    for d in ds:
        const += d.const
        for v, c in d.terms:
            coeffs[v] = coeffs.get(v, 0) + c
    return _canonical(const, coeffs)


def _canonical(const: int, coeffs: dict[Var, int]) -> Dim:
    """``const + Σ c·v`` with the zero terms left out and the others sorted by variable."""
    terms = [(v, c) for v, c in coeffs.items() if c]
    if len(terms) > 1:
        terms.sort(key=_term_key)
    return Dim(const, tuple(terms))


def _term_key(term: tuple[Var, int]) -> tuple[str, int]:
    return (term[0].name, term[0].serial)


def dim_scale(d: Dim, k: int) -> Dim:
    """``k·d`` (``d`` is canonical, so scaling its coefficients keeps it so)."""
    if k == 1:
        return d
    if k <= 0:
        return Dim(0)
    return Dim(d.const * k, tuple((v, c * k) for v, c in d.terms))


def shape(*items: Union[int, Dim, Var, "Shape"]) -> Shape:
    """Build a canonical shape; ints and Dims are single axes, Shapes and Shape vars are spliced."""
    out: list[Union[Dim, Var]] = []
    for item in items:
        if isinstance(item, int):
            out.append(Dim(item))
        elif isinstance(item, Shape):
            out.extend(item.items)
        else:
            out.append(item)
    return Shape(tuple(out))


def concrete_shape(dims) -> Shape:
    return Shape(tuple(Dim(int(d)) for d in dims))


def strip_prefix(whole: Shape, prefix: Shape) -> Shape | None:
    """``whole ÷ prefix`` (the paper's prefix subtraction), or None when not a prefix."""
    n = len(prefix.items)
    if whole.items[:n] == prefix.items:
        return Shape(whole.items[n:])
    return None


def strip_suffix(whole: Shape, suffix: Shape) -> Shape | None:
    """The frame left when ``suffix`` is removed from the end of ``whole``, or None."""
    n = len(suffix.items)
    if n == 0:
        return whole
    if len(whole.items) >= n and whole.items[-n:] == suffix.items:
        return Shape(whole.items[:-n])
    return None


# ---------------------------------------------------------------------------
# Free variables and substitution

def free_vars(ix: Index) -> set[Var]:
    if isinstance(ix, Dim):
        return {v for v, _ in ix.terms}
    out: set[Var] = set()
    for item in ix.items:
        out |= {item} if isinstance(item, Var) else free_vars(item)
    return out


def subst_dim(d: Dim, m: Mapping[Var, Index]) -> Dim:
    if not any(v in m for v, _ in d.terms):
        return d
    const = d.const
    coeffs: dict[Var, int] = {}
    for v, c in d.terms:
        rep = m.get(v)
        if rep is None:
            coeffs[v] = coeffs.get(v, 0) + c
        else:
            assert isinstance(rep, Dim), f"Dim variable {v} replaced by a Shape"
            const += rep.const * c
            for w, k in rep.terms:
                coeffs[w] = coeffs.get(w, 0) + k * c
    return _canonical(const, coeffs)


def subst_shape(s: Shape, m: Mapping[Var, Index]) -> Shape:
    out: list[Union[Dim, Var]] = []
    changed = False
    for item in s.items:
        if isinstance(item, Var):
            rep = m.get(item)
            if rep is None:
                out.append(item)
            else:
                assert isinstance(rep, Shape), f"Shape variable {item} replaced by a Dim"
                out.extend(rep.items)
                changed = True
        else:
            new = subst_dim(item, m)
            changed = changed or new is not item
            out.append(new)
    return Shape(tuple(out)) if changed else s


def subst_index(ix: Index, m: Mapping[Var, Index]) -> Index:
    return subst_dim(ix, m) if isinstance(ix, Dim) else subst_shape(ix, m)


# ---------------------------------------------------------------------------
# Printing (contract §3: sums sorted by name, constant last; Shp runs merged)

def show_dim(d: Dim, names: Mapping[Var, str] | None = None) -> str:
    shown = sorted((names or {}).get(v, v.name) for v, c in d.terms for _ in range(c))
    names_ = shown
    if not names_:
        return str(d.const)
    parts = names_ + ([str(d.const)] if d.const else [])
    return parts[0] if len(parts) == 1 else "(+ " + " ".join(parts) + ")"


def show_shape(s: Shape, names: Mapping[Var, str] | None = None) -> str:
    groups: list[str] = []
    run: list[str] = []
    for item in s.items:
        if isinstance(item, Var):
            if run:
                groups.append("(Shp " + " ".join(run) + ")")
                run = []
            groups.append((names or {}).get(item, item.name))
        else:
            run.append(show_dim(item, names))
    if run or not groups:
        groups.append("(Shp" + "".join(" " + r for r in run) + ")")
    return groups[0] if len(groups) == 1 else "(++ " + " ".join(groups) + ")"


def show_index(ix: Index, names: Mapping[Var, str] | None = None) -> str:
    return show_dim(ix, names) if isinstance(ix, Dim) else show_shape(ix, names)


# ---------------------------------------------------------------------------
# Evaluation under an assignment (run time, counterexamples)

def eval_dim(d: Dim, env: Mapping[Var, object]):
    """The value of ``d``; a variable's value may also be a per-box length vector (ragged evaluation)."""
    return d.const + sum(c * _dim_value(env[v]) for v, c in d.terms)


def _dim_value(x):
    try:
        return operator.index(x)  # type: ignore[arg-type]
    except TypeError:
        return x


def eval_shape(s: Shape, env: Mapping[Var, object]) -> tuple[int, ...]:
    out: list[int] = []
    for item in s.items:
        if isinstance(item, Var):
            out.extend(env[item])  # type: ignore[arg-type]
        else:
            out.append(eval_dim(item, env))
    return tuple(out)


def eval_index(ix: Index, env: Mapping[Var, object]):
    return eval_dim(ix, env) if isinstance(ix, Dim) else eval_shape(ix, env)


def show_value_of_index(value) -> str:
    """A concrete index value as Remora text: ``3`` or ``(Shp 2 4)``."""
    if isinstance(value, tuple):
        return "(Shp" + "".join(f" {v}" for v in value) + ")"
    return str(value)
