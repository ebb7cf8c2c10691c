"""How run-time values print as Remora text that reads back as the same value (contract §3).

The backend hands over host values (Python scalars, boxes and functions) in one call, and the
text is built from those, one join per row — never a Python call per atom for base atoms: no
array library is needed here, and a million atoms print in a fraction of a second.
:mod:`remora.interfaces.layout` lays the same texts out for people (rows, summaries).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import backends
from ..atoms import BASE_ORDER
from ..dynamics.values import BoxValue
from ..statics.indices import show_value_of_index
from ..statics.types import TArr, TBase, TSigma, Type, prune, subst, var_replacement

BASE = BASE_ORDER


def show_value(value, typ: Type) -> str:
    """The value as Remora text that reads back as the same value (contract §3)."""
    atom = atom_type(value, typ)
    shape = tuple(value.shape)
    if 0 in shape:
        dims = " ".join(str(d) for d in shape)
        return f"(array ({dims}) {show_atom_type(atom)})"
    texts = atom_texts(value, atom)
    return nest(texts, shape) if shape else texts[0]


def atom_type(value, typ: Type) -> Type:
    """The atom type of a value of type ``typ`` (by its representation for an Array type variable)."""
    t = prune(typ)
    if isinstance(t, TArr):
        return prune(t.atom)
    rep = backends.of(value).rep(value)
    return TBase(rep if rep in BASE else "Int")


def show_atom_type(t: Type) -> str:
    from ..statics.types import show_type

    return show_type(t)


def atom_texts(value, atom: Type) -> list[str]:
    """The text of every atom of ``value``, row-major, as :func:`show_atom` writes each one; a
    ``Float32`` as the shortest decimal that reads back as the same ``float32`` (contract §10),
    which the backend writes."""
    xp = backends.of(value)
    flat = xp.reshape(value, (math.prod(value.shape),))
    rep = xp.rep(value)
    if rep == "Float32":
        return xp.float32_texts(flat)
    return list(map(atom_printer(rep, atom), xp.to_host(flat)))


def atom_printer(rep: str, atom: Type) -> Callable[[Any], str]:
    """How each atom of an array of representation ``rep`` prints."""
    if rep == "Float":
        return repr  # (Python's repr of a float: 2.5, 1e-05, inf, nan, -0.0)
    if rep in ("Int", "Int32"):
        return str
    if rep == "Bool":
        return _show_bool
    return lambda x: show_atom(x, atom)


def _show_bool(x: bool) -> str:
    return "#t" if x else "#f"


def nest(texts: list[str], shape: tuple[int, ...], sep: str = " ") -> str:
    """``texts`` (row-major, one per atom of a non-empty ``shape``) in nested brackets."""
    for d in reversed(shape):
        texts = ["[" + sep.join(texts[i : i + d]) + "]" for i in range(0, len(texts), d)]
    return texts[0]


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
    rep = backends.of(box.value).rep(box.value)
    return TArr(TBase(rep if rep in BASE else "Int"), _shape_of_dims(box.value.shape))


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
