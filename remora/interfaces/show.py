"""How run-time values print as Remora text that reads back as the same value (contract §3).

The backend hands over host values (nested lists of Python scalars, boxes and functions) in one
call, and the text is built from those: no array library is needed here, and a million atoms
print in a fraction of a second.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import backends
from ..dynamics.values import BoxValue
from ..statics.indices import show_value_of_index
from ..statics.types import TArr, TBase, TSigma, Type, prune, subst, var_replacement

BASE = ("Int", "Float", "Bool")


def show_value(value, typ: Type) -> str:
    """The value as Remora text that reads back as the same value (contract §3)."""
    t = prune(typ)
    xp = backends.of(value)
    rep = xp.rep(value)
    if isinstance(t, TArr):
        atom = prune(t.atom)
    else:  # an Array-kinded type variable's value: print by its representation
        atom = TBase(rep if rep in BASE else "Int")
    shape = tuple(value.shape)
    if 0 in shape:
        dims = " ".join(str(d) for d in shape)
        return f"(array ({dims}) {show_atom_type(atom)})"
    return _show_nested(xp.to_host(value), len(shape), _atom_printer(rep, atom))


def show_atom_type(t: Type) -> str:
    from ..statics.types import show_type

    return show_type(t)


def _atom_printer(rep: str, atom: Type) -> Callable[[Any], str]:
    """How each atom of an array of representation ``rep`` prints."""
    if rep == "Float":
        return repr  # (Python's repr of a float: 2.5, 1e-05, inf, nan, -0.0)
    if rep == "Int":
        return str
    if rep == "Bool":
        return _show_bool
    return lambda x: show_atom(x, atom)


def _show_bool(x: bool) -> str:
    return "#t" if x else "#f"


def _show_nested(value: Any, depth: int, show: Callable[[Any], str]) -> str:
    """Nested lists ``depth`` deep as brackets, each atom printed by ``show``."""
    if depth == 0:
        return show(value)
    if depth == 1:
        return "[" + " ".join(map(show, value)) + "]"
    return "[" + " ".join(_show_nested(item, depth - 1, show) for item in value) + "]"


def show_atom(x: Any, atom: Type) -> str:
    if isinstance(x, bool):
        return "#t" if x else "#f"
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, BoxValue):
        return show_box(x, atom)
    return "#<function>"


def show_box(box: BoxValue, atom: Type) -> str:
    t = prune(atom)
    inner: Type
    if isinstance(t, TSigma):
        inner = subst(t.body, {v: _index_value_as_index(v, i) for v, i in zip(t.vars, box.indices)})
    else:
        rep = backends.of(box.value).rep(box.value)
        inner = TArr(TBase(rep if rep in BASE else "Int"), _shape_of_dims(box.value.shape))
    parts = [show_value_of_index(i) for i in box.indices] + [show_value(box.value, inner)]
    return "(box " + " ".join(parts) + ")"


def _index_value_as_index(v, value):
    from ..statics.indices import Dim, concrete_shape

    if isinstance(value, tuple):
        return concrete_shape(value)
    if hasattr(value, "__index__"):
        return Dim(value.__index__())
    return var_replacement(v)


def _shape_of_dims(dims):
    from ..statics.indices import concrete_shape

    return concrete_shape(dims)
