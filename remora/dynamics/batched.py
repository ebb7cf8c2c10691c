"""Values inside a batch, and lining them up with an application's frame.

Inside a λ body evaluated over a whole frame, every value carries how many of its leading
axes belong to the enclosing batch (:class:`Val`); an axis may have length 1 where the value
does not vary.  These helpers insert unit axes and broadcast (zero-copy views) so that
values of different batch depths meet at one shape — everything both
:mod:`remora.dynamics.engine` and :mod:`remora.dynamics.ragged` do to line values up — and
the context a primitive sees in the whole-frame engine.  Array work goes through the
backend ``xp``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..backends import Backend
from ..backends.base import OBJECT
from . import masks
from .layouts import BoxFrame, NeedGrouping, Ragged, plain
from .runtime import PrimContext


class Val(NamedTuple):
    """A value inside a batch: ``arr.shape[:k]`` are batch axes (each the batch's length or 1)."""

    arr: Any
    k: int


def spread(xp: Backend, arr, shape: tuple):
    """``arr`` seen at ``shape`` by broadcasting, without its cost when nothing needs to change."""
    return arr if arr.shape == shape else xp.broadcast_to(arr, shape)


def plain_val(v: Val) -> Val:
    """``v`` as an ordinary array: a flat frame of boxes turned into box objects.  A ragged value
    has no one shape, so code that needs one declines the ragged pass here."""
    arr = v.arr
    if type(arr) is BoxFrame:
        return Val(arr.materialize(), v.k)
    if type(arr) is Ragged:
        raise NeedGrouping
    return v


def joint(*shapes: tuple) -> tuple:
    """The broadcast of equally long shapes (each axis: its length, or 1 where nothing varies)."""
    out = list(shapes[0])
    for other in shapes[1:]:
        for j, n in enumerate(other):
            if n != 1:
                out[j] = n
    return tuple(out)


def extent(values, m: int) -> tuple:
    """The batch shape over which some of ``values`` vary (1 where none does), over ``m`` axes."""
    shapes = []
    for v in values:
        if v.k:
            if type(v.arr) is Ragged:
                raise NeedGrouping  # (a ragged value has no batch shape of its own)
            shapes.append(v.arr.shape[: v.k] + (1,) * (m - v.k))
    return joint(*shapes) if shapes else (1,) * m


def lift(xp: Backend, v: Val, m: int, batch: tuple, frame_len: int, total: tuple, cell: tuple):
    """View ``v`` (logical frame of ``frame_len`` axes, then ``cell``) at ``batch[:m] + total + cell``."""
    arr = v.arr
    target = tuple(batch[:m]) + total + cell
    if arr.shape == target:  # already in place (the common case): no view needed
        return arr
    frame = arr.shape[v.k : v.k + frame_len]
    shaped = xp.reshape(arr, arr.shape[: v.k] + (1,) * (m - v.k) + frame + (1,) * (len(total) - frame_len) + cell)
    return spread(xp, shaped, target)


def align(xp: Backend, v: Val, m: int, frame_len: int, total_len: int):
    """``v``'s array with unit axes inserted to line up with an application's frame — ``m``
    batch axes, then ``total_len`` principal-frame axes, then the cell — without broadcasting:
    where the value does not vary, its axis stays of length 1."""
    arr, k = v.arr, v.k
    shape = arr.shape
    new = shape[:k] + (1,) * (m - k) + shape[k : k + frame_len] + (1,) * (total_len - frame_len) + shape[k + frame_len :]
    return arr if new == shape else xp.reshape(plain(arr), new)


def batch_index(arr, k: int, idx: tuple) -> tuple:
    """``idx``'s first ``k`` coordinates, as indices into an array whose batch axes may be 1."""
    return tuple(0 if arr.shape[j] == 1 else idx[j] for j in range(k))


class FrameContext(PrimContext):
    """A primitive's view of the whole-frame engine."""

    __slots__ = ("engine",)

    def apply(self, fns, args, cells, result_cell):
        return self.engine.apply_frame(fns, list(args), self.frame, tuple(cells), tuple(result_cell), OBJECT, self.span)

    def require(self, ok, message: str, *culprits) -> None:
        mask = self.engine._running.mask if hasattr(self, "engine") else None
        if mask is not None:  # (compiling a masked part: a lane that is not live cannot fail, masks.py)
            ok = masks.excuse(self.xp, ok, mask)
        self.xp.require(ok, message, culprits, self.error)

    def live(self, flags):
        """``flags`` (a Bool array over this frame) where the cell is live, false elsewhere: a
        loop that starts in a lane not taken must not run there (masks.py)."""
        mask = self.engine._running.mask
        if mask is None:
            return flags
        return self.xp.logical_and(flags, self.xp.reshape(mask, mask.shape + (1,) * (len(self.frame) - mask.ndim)))

    def masked(self, flags):
        """A context in which :meth:`apply` and :meth:`require` treat only the cells of this
        frame where ``flags`` (a Bool array over it) holds as live (masks.py)."""
        return masks.masked(self.engine, self.xp.reshape(flags, self.frame))
