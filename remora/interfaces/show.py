"""How run-time values print as Remora text that reads back as the same value (contract §3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dynamics.values import BASE_OF_DTYPE, BoxValue
from ..statics.indices import show_value_of_index
from ..statics.types import TArr, TBase, TSigma, Type, prune, subst, var_replacement


def show_value(value: np.ndarray, typ: Type) -> str:
    """The value as Remora text that reads back as the same value (contract §3)."""
    t = prune(typ)
    value = np.asarray(value)
    if isinstance(t, TArr):
        atom = prune(t.atom)
    else:  # an Array-kinded type variable's value: print by its dtype
        atom = TBase(BASE_OF_DTYPE.get(value.dtype, "Int"))
    if 0 in value.shape:
        dims = " ".join(str(d) for d in value.shape)
        return f"(array ({dims}) {show_atom_type(atom)})"
    return _show_nested(value, atom)


def show_atom_type(t: Type) -> str:
    from ..statics.types import show_type

    return show_type(t)


def _show_nested(value: np.ndarray, atom: Type) -> str:
    if value.ndim == 0:
        return show_atom(value[()], atom)
    return "[" + " ".join(_show_nested(value[i, ...], atom) for i in range(value.shape[0])) + "]"


def show_atom(x: Any, atom: Type) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "#t" if x else "#f"
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, BoxValue):
        return show_box(x, atom)
    return "#<function>"


def show_box(box: BoxValue, atom: Type) -> str:
    t = prune(atom)
    inner: Type
    if isinstance(t, TSigma):
        inner = subst(t.body, {v: _index_value_as_index(v, i) for v, i in zip(t.vars, box.indices)})
    else:
        inner = TArr(TBase(BASE_OF_DTYPE.get(box.value.dtype, "Int")), _shape_of_dims(box.value.shape))
    parts = [show_value_of_index(i) for i in box.indices] + [show_value(box.value, inner)]
    return "(box " + " ".join(parts) + ")"


def _index_value_as_index(v, value):
    from ..statics.indices import Dim, concrete_shape

    if isinstance(value, tuple):
        return concrete_shape(value)
    if isinstance(value, (int, np.integer)):
        return Dim(int(value))
    return var_replacement(v)


def _shape_of_dims(dims):
    from ..statics.indices import concrete_shape

    return concrete_shape(dims)
