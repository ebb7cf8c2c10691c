"""Values inside a batch, as the whole-frame engine and its ragged path both hold them.

Inside a λ body evaluated over a whole frame, every value carries how many of its leading
axes belong to the enclosing batch (:class:`Val`); these are the operations both
:mod:`remora.dynamics.engine` and :mod:`remora.dynamics.ragged` need on such values —
lining them up with an application's frame, and restricting an environment (and the
closures in it) to some cells of the batch — and the context a primitive sees there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .layouts import BoxFrame, plain
from .runtime import Closure, PrimContext, positions


class Val(NamedTuple):
    """A value inside a batch: ``arr.shape[:k]`` are batch axes (each the batch's length or 1)."""

    arr: np.ndarray
    k: int


def obj_scalar(x) -> np.ndarray:
    """A 0-d object array holding ``x`` (never letting NumPy look inside it)."""
    a = np.empty((), dtype=object)
    a[()] = x
    return a


def spread(arr: np.ndarray, shape: tuple) -> np.ndarray:
    """``numpy.broadcast_to``, without its cost when nothing needs to change."""
    return arr if arr.shape == shape else np.broadcast_to(arr, shape)


def plain_val(v: Val) -> Val:
    """``v`` with a flat frame of boxes turned into ordinary boxes (for anything but unbox)."""
    return Val(v.arr.materialize(), v.k) if type(v.arr) is BoxFrame else v


def align(v: Val, m: int, frame_len: int, total_len: int) -> np.ndarray:
    """``v``'s array with unit axes inserted to line up with an application's frame — ``m``
    batch axes, then ``total_len`` principal-frame axes, then the cell — without broadcasting:
    where the value does not vary, its axis stays of length 1."""
    arr, k = v.arr, v.k
    shape = arr.shape
    new = shape[:k] + (1,) * (m - k) + shape[k : k + frame_len] + (1,) * (total_len - frame_len) + shape[k + frame_len :]
    return arr if new == shape else plain(arr).reshape(new)


def restrict_env(env: dict, names, tf: tuple, sel: np.ndarray) -> dict:
    """The environment seen by the cells ``sel`` (flat positions in ``tf``) as a batch of their own."""
    coords = np.unravel_index(sel, tf) if len(sel) else ()
    out = {x: env[x] for x in names if x in env}
    for x in names:
        v = env.get(x)
        if v is not None and type(v.arr) is BoxFrame:
            v = plain_val(v)
        if v is not None and v.k:
            ix = tuple(np.zeros_like(coords[j]) if v.arr.shape[j] == 1 else coords[j] for j in range(v.k))
            arr = v.arr[ix]
            if arr.dtype == object:  # closures in it see those cells too (each restricted once)
                done: dict[int, object] = {}

                def restricted(f):
                    if not getattr(f, "level", 0):
                        return f
                    if id(f) not in done:
                        done[id(f)] = restrict_closure(f, tf, sel)
                    return done[id(f)]

                arr = map_objects(arr, restricted)
            out[x] = Val(arr, 1)
    return out


def restrict_closure(f: Closure, tf: tuple, sel: np.ndarray) -> Closure:
    env = restrict_env(f.env, f.lam.free, tf, sel)
    return type(f)(f.lam, env, f.ienv, 1)


def map_objects(arr: np.ndarray, fn) -> np.ndarray:
    out = np.empty(arr.shape, dtype=object)
    for idx in positions(arr.shape):
        out[idx] = fn(arr[idx])
    return out


class FrameContext(PrimContext):
    """A primitive's view of the whole-frame engine."""

    __slots__ = ("engine",)

    def apply(self, fns, args, cells, result_cell):
        return self.engine.apply_frame(fns, list(args), self.frame, tuple(cells), tuple(result_cell), np.dtype(object), self.span)
