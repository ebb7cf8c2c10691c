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
    """Nested brackets, built bottom-up from the atoms' texts: one join per row of each axis,
    never a Python call per atom for base atoms (a million atoms print in a fraction of a
    second: the CLI's and the REPL's path alike)."""
    texts = atom_texts(value, atom)
    if value.ndim == 0:
        return texts[0]
    return nest(texts, value.shape)


def nest(texts: list[str], shape: tuple[int, ...], sep: str = " ") -> str:
    """``texts`` (row-major, one per atom of a non-empty ``shape``) in nested brackets."""
    for d in reversed(shape):
        texts = ["[" + sep.join(texts[i : i + d]) + "]" for i in range(0, len(texts), d)]
    return texts[0]


_BOOL_TEXTS = ("#f", "#t")


def atom_texts(value: np.ndarray, atom: Type) -> list[str]:
    """The text of every atom of ``value``, row-major — as :func:`show_atom` writes each one,
    with the whole-array conversions NumPy offers for base atoms."""
    flat = value.reshape(-1)
    if flat.dtype == np.bool_:
        return [_BOOL_TEXTS[b] for b in flat.tolist()]
    if flat.dtype == np.float64:
        return list(map(repr, flat.tolist()))  # (tolist gives Python floats: repr as contract §3 says)
    if flat.dtype == np.int64:
        return list(map(str, flat.tolist()))
    return [show_atom(x, atom) for x in flat]


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


def show_box(box: BoxValue, atom: Type, show=None) -> str:
    """``(box IDX ... VALUE)``; ``show(value, type)`` writes the contents (:func:`show_value`
    unless a display for people says otherwise)."""
    parts = [show_value_of_index(i) for i in box.indices]
    return "(box " + " ".join(parts + [(show or show_value)(box.value, box_contents_type(box, atom))]) + ")"


def box_contents_type(box: BoxValue, atom: Type) -> Type:
    """The type of what ``box`` holds: its Sigma type's body at the box's own indices."""
    t = prune(atom)
    if isinstance(t, TSigma):
        return subst(t.body, {v: _index_value_as_index(v, i) for v, i in zip(t.vars, box.indices)})
    return TArr(TBase(BASE_OF_DTYPE.get(box.value.dtype, "Int")), _shape_of_dims(box.value.shape))


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
