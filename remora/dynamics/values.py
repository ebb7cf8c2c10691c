"""Run-time values (contract §3); how they print is :mod:`remora.interfaces.show`.

An array of base atoms is one array of its backend (``int64``, ``float64`` or ``bool`` atoms:
the representations ``Int``, ``Float``, ``Bool``); an array of functions or boxes is a host
object array of atom values (:mod:`remora.backends.host`).  Every array keeps its full shape,
including a 0 anywhere in it.
"""

from __future__ import annotations

from typing import Any

from .. import backends
from ..backends import host
from ..backends.base import OBJECT
from ..statics.types import TArr, TBase, Type, prune


def rep_of(atom_type: Type) -> str:
    """The representation of atoms of ``atom_type``: its name for a base type, else ``object``."""
    t = prune(atom_type)
    if isinstance(t, TBase):
        return t.name
    return OBJECT


def type_of_array(array) -> Type:
    """The Remora type of an input array of base atoms: its representation's atom type, its shape."""
    from ..statics.indices import concrete_shape
    from ..statics.types import BASE_TYPES

    return TArr(BASE_TYPES[backends.of(array).rep(array)], concrete_shape(array.shape))


class BoxValue:
    """A box: its index components (ints for Dims, tuples for Shapes) and the array it holds."""

    __slots__ = ("indices", "value")

    def __init__(self, indices: tuple, value):
        self.indices = indices
        self.value = value

    def __repr__(self) -> str:
        return f"BoxValue({self.indices!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoxValue)
            and self.indices == other.indices
            and arrays_equal(self.value, other.value)
        )

    __hash__ = None  # type: ignore[assignment]


def arrays_equal(a: Any, b: Any) -> bool:
    """Exact equality of two values, NaNs equal to NaNs, boxes compared by content."""
    if host.is_host(a) or host.is_host(b):
        if not (host.is_host(a) and host.is_host(b)) or a.shape != b.shape:
            return False
        return all(_atoms_equal(x, y) for x, y in zip(host.atoms(a), host.atoms(b)))
    return backends.of(a).same_atoms(a, b)


def _atoms_equal(x: Any, y: Any) -> bool:
    if isinstance(x, BoxValue) or isinstance(y, BoxValue):
        return x == y
    return x is y or _same_function(x, y)


def _same_function(x: Any, y: Any) -> bool:
    key = getattr(x, "identity", None)
    return key is not None and key == getattr(y, "identity", None)


class PrimFn:
    """A primitive operator as a run-time atom, with the index arguments it was given (``i-app``)."""

    __slots__ = ("prim", "indices", "identity")

    def __init__(self, prim, indices: tuple = ()):
        self.prim = prim
        self.indices = indices
        self.identity = ("prim", prim.name, indices)

    def __repr__(self) -> str:
        return f"PrimFn({self.prim.name}{''.join(' ' + repr(i) for i in self.indices)})"
