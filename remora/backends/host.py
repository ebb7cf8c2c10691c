"""Host-side object arrays: frames of functions and boxes, on every backend.

A frame of functions or of boxes is a NumPy object array whose elements are atom values
(primitive operators, closures, boxes); no array library computes on them, so they stay here,
in the host's memory, whichever backend holds the atom data.  This module is the only place
that makes or takes them apart: creation that never lets NumPy look inside an atom, mapping
over the atoms, and the uniform-atom tests the engines use to apply one function to a whole
frame.  The structural functions of every backend (``reshape``, ``broadcast_to``, …) also
accept these arrays.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

OBJECT_DTYPE = np.dtype(object)


def is_host(x: Any) -> bool:
    """Whether ``x`` is a host object array (a frame of functions or boxes)."""
    return isinstance(x, np.ndarray) and x.dtype == OBJECT_DTYPE


def empty(shape: tuple) -> np.ndarray:
    """An object array of ``shape`` (elements ``None`` until set)."""
    return np.empty(shape, dtype=OBJECT_DTYPE)


def scalar(x: Any) -> np.ndarray:
    """A 0-d object array holding ``x`` (never letting NumPy look inside it)."""
    a = np.empty((), dtype=OBJECT_DTYPE)
    a[()] = x
    return a


def from_atoms(atoms: Iterable[Any], shape: tuple) -> np.ndarray:
    """An object array of ``shape`` holding ``atoms`` row-major."""
    atoms = list(atoms)
    out = np.empty(len(atoms), dtype=OBJECT_DTYPE)
    for i, x in enumerate(atoms):
        out[i] = x
    return out.reshape(shape)


def atoms(arr: np.ndarray) -> np.ndarray:
    """The atoms of ``arr`` as a flat array, row-major (not ``.flat``: it stops at 32 axes)."""
    return arr.reshape(-1)


def first(arr: np.ndarray) -> Any:
    """The first atom of a non-empty array (without copying a broadcast one)."""
    return arr[(0,) * arr.ndim]


def compact(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` with every broadcast (stride-0) axis cut down to length 1."""
    if not any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
        return arr
    return arr[tuple(slice(0, 1) if s == 0 and n > 1 else slice(None) for s, n in zip(arr.strides, arr.shape))]


def uniform_atom(fns: np.ndarray) -> Any:
    """The atom every cell of the object array ``fns`` holds, or None if they differ (or there are none)."""
    if fns.size == 0:
        return None
    head = fns.reshape(-1)[0]
    if fns.size == 1 or all(s == 0 for s in fns.strides):
        return head
    for x in compact(fns).reshape(-1):
        if x is not head:
            return None
    return head


def distinct_atoms(arr: np.ndarray) -> list[Any]:
    """The distinct atoms (by identity) of ``arr``, in order of first appearance."""
    seen: dict[int, Any] = {}
    for x in compact(arr).reshape(-1):
        seen.setdefault(id(x), x)
    return list(seen.values())


def map_atoms(arr: np.ndarray, fn: Callable[[Any], Any]) -> np.ndarray:
    """A new object array of ``arr``'s shape holding ``fn`` of each atom."""
    out = np.empty(arr.size, dtype=OBJECT_DTYPE)
    for i, x in enumerate(arr.reshape(-1)):
        out[i] = fn(x)
    return out.reshape(arr.shape)


def copy(arr: np.ndarray) -> np.ndarray:
    """A fresh object array holding the same atoms (a broadcast view made writeable)."""
    return np.array(arr, dtype=OBJECT_DTYPE)


def groups(arr: np.ndarray, key: Callable[[Any], Any]) -> list[tuple[Any, Any, np.ndarray]]:
    """The positions of the atoms of ``arr`` (flat, row-major) grouped by ``key`` of the atom:
    ``(key, first atom, positions)`` per group, in order of first appearance."""
    found: dict[Any, tuple[Any, list[int]]] = {}
    for pos, x in enumerate(arr.reshape(-1)):
        found.setdefault(key(x), (x, []))[1].append(pos)
    return [(k, x, np.array(ps, dtype=np.int64)) for k, (x, ps) in found.items()]
