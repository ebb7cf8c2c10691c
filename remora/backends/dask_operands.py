"""NumPy operands meeting Dask ones (spec D49 "Where work runs"): a NumPy array is sent as what it
holds, never as the frame it is seen at.

A literal or a scratch value the engine broadcast to a frame (``(/ x 3.0)``: the ``3.0`` seen at
the shape of ``x``) is a NumPy view with stride-0 axes.  Handed to Dask as it is, it becomes a
constant of the frame's size embedded in the task graph — pickling a broadcast view copies every
element — so every graph built from it ships the whole frame again: 1-D Jacobi over 2·10⁶ cells
sent 15 MiB with each of its 50 steps.  Cut down to its distinct atoms first
(:func:`host.compact`: each broadcast axis to length 1), it is a few bytes, and Dask broadcasts
it block by block where the tasks run.
"""

from __future__ import annotations

from typing import Any, Callable

import dask.array as da
import numpy as np

from . import host

#: the elementwise functions of the backend interface (base.py), all NumPy ufuncs on the NumPy
#: backend (NumPy dispatches them to Dask when an operand is a Dask array)
ELEMENTWISE = ("add subtract multiply divide floor_divide remainder minimum maximum negative abs sqrt exp "
               "log sin cos tan atan floor ceil round trunc isfinite equal not_equal less less_equal "
               "greater greater_equal logical_and logical_or logical_xor logical_not where").split()


def compacted(args: tuple, keep: int | None = None) -> tuple:
    """``args`` with each NumPy array's broadcast axes cut to length 1 when some operand is a Dask
    array (``args`` itself otherwise: NumPy's own work keeps its views as they are); the axis
    ``keep`` (one an operation reads along, as ``take_along_axis`` does) keeps its length."""
    if not any(isinstance(a, da.Array) for a in args):
        return args
    return tuple(_compact(a, keep) if isinstance(a, np.ndarray) else a for a in args)


def _compact(a: np.ndarray, keep: int | None) -> np.ndarray:
    small = host.compact(a)
    if keep is None or small.shape[keep] == a.shape[keep]:
        return small
    # (made dense: a pickled view is as large as the shape it is seen at anyway)
    return np.ascontiguousarray(np.broadcast_to(small, small.shape[:keep] + (a.shape[keep],) + small.shape[keep + 1:]))


def mixed(fn: Callable, broadcast: Callable) -> Callable:
    """``fn`` (elementwise) with NumPy operands :func:`compacted` when it meets a Dask one; its
    result ``broadcast`` back to the operands' shape in the rare case that every operand at the
    full shape was such a NumPy view."""

    def op(*args: Any):
        small = compacted(args)
        if small is args:
            return fn(*args)
        out = fn(*small)
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        return out if out.shape == shape else broadcast(out, shape)

    op.__name__ = getattr(fn, "__name__", "op")
    return op
