"""Run-time values (contract §3); how they print is :mod:`remora.interfaces.show`.

An array of base atoms is one ``numpy.ndarray`` of ``int64``, ``float64`` or
``bool``; an array of functions or boxes is an object array of atom values.
Every array keeps its full shape, including a 0 anywhere in it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..statics.types import TArr, TBase, Type, prune

DTYPES = {"Int": np.dtype(np.int64), "Float": np.dtype(np.float64), "Bool": np.dtype(np.bool_)}
BASE_OF_DTYPE = {v: k for k, v in DTYPES.items()}


def dtype_of(atom_type: Type) -> np.dtype:
    """The NumPy dtype that holds atoms of ``atom_type``: a base dtype, or ``object``."""
    t = prune(atom_type)
    if isinstance(t, TBase):
        return DTYPES[t.name]
    return np.dtype(object)


def type_of_array(array: np.ndarray) -> Type:
    """The Remora type of an input array of base atoms: its dtype's atom type, its shape."""
    from ..statics.indices import concrete_shape
    from ..statics.types import BASE_TYPES

    return TArr(BASE_TYPES[BASE_OF_DTYPE[array.dtype]], concrete_shape(array.shape))


class BoxValue:
    """A box: its index components (ints for Dims, tuples for Shapes) and the array it holds."""

    __slots__ = ("indices", "value")

    def __init__(self, indices: tuple, value: np.ndarray):
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
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype == object or b.dtype == object:
        if a.dtype != b.dtype:
            return False
        return all(_atoms_equal(x, y) for x, y in zip(a.ravel(), b.ravel()))
    if a.dtype != b.dtype:
        return False
    if a.dtype == np.float64:
        return bool(np.array_equal(a, b, equal_nan=True)) and bool(np.all(np.signbit(a) == np.signbit(b)))
    return bool(np.array_equal(a, b))


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
