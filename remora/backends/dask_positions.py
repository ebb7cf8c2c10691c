"""Arrays the Dask backend makes from their positions alone (spec D49 "Size limit"): ``iota``'s
numbers, ``reshape``'s cyclic fill.

The engine builds such an array as a vector (``arange(n)``, ``resize(x, n)``) and then reshapes it.
Made in the client, a vector of 10¹² atoms is a ``MemoryError`` however lazy the rest of the
program is — though the Dask backend lifts the size limit because it never holds an array whole.
Past one block, the vector is lazy instead: each block computes its atoms from its positions where
the task runs.  Reshaped, it is made again at the new shape, block by block (Dask's own reshape of
a vector into a matrix plans a rechunk through every block: 7 s for 10¹² atoms, before any task).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import dask.array as da
import numpy as np


def _identity(positions: np.ndarray) -> np.ndarray:
    return positions


def _cyclic(atoms: np.ndarray, positions: np.ndarray) -> np.ndarray:
    return atoms[positions % atoms.shape[0]]


def _block(fn: Callable, shape: tuple, dtype, block_info: dict | None = None) -> np.ndarray:
    """The block of the array ``fn(flat position)`` of ``shape`` that Dask asks for."""
    where = block_info[None]["array-location"]
    flat = np.zeros((1,) * len(shape), dtype=np.int64)
    stride = 1
    for axis in reversed(range(len(shape))):
        lo, hi = where[axis]
        span = np.arange(lo, hi, dtype=np.int64) * stride
        flat = flat + span.reshape((1,) * axis + (hi - lo,) + (1,) * (len(shape) - axis - 1))
        stride *= shape[axis]
    return np.asarray(fn(flat), dtype=dtype)


def by_position(fn: Callable, shape: tuple, dtype, chunks: tuple) -> da.Array:
    """The lazy array of ``shape`` whose atom at flat (row-major) position ``p`` is ``fn(p)`` (``fn``
    maps an Int array of positions to the atoms there), cut into ``chunks``; it remembers ``fn``,
    so :func:`reshaped` can make it again at another shape."""
    chunks = da.core.normalize_chunks(chunks, tuple(shape), dtype=np.dtype(dtype))
    out = da.map_blocks(partial(_block, fn, tuple(shape), np.dtype(dtype)), chunks=chunks, dtype=dtype,
                        meta=np.empty((0,) * len(shape), dtype))
    out._remora_by_position = fn
    return out


def arange(n: int, block: int) -> da.Array:
    """0 … n−1, in blocks of ``block`` atoms."""
    return by_position(_identity, (n,), np.int64, (block,))


def cyclic(atoms: np.ndarray, n: int, block: int) -> da.Array:
    """The vector ``atoms`` repeated cyclically to ``n`` atoms, in blocks of ``block`` atoms (each
    task holds ``atoms``: the fill of a ``reshape``, which the program wrote or computed small)."""
    return by_position(partial(_cyclic, np.ascontiguousarray(atoms)), (n,), atoms.dtype, (block,))


def reshaped(x: Any, shape: tuple, chunks: Callable[[tuple, int], tuple]) -> da.Array | None:
    """``x`` made again at ``shape`` if it is an array made by :func:`by_position` (None otherwise);
    ``chunks(shape, itemsize)`` cuts the new shape."""
    fn = getattr(x, "_remora_by_position", None)
    if fn is None or int(np.prod(shape)) != x.size:
        return None
    return by_position(fn, tuple(shape), x.dtype, chunks(tuple(shape), x.dtype.itemsize))
