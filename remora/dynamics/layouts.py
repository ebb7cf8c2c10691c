"""How the whole-frame engine lays out frames of boxes flat.

A frame of boxes whose contents differ only in the length of their leading axis is held as
one buffer plus one length per box: :class:`BoxFrame` as primitives make it (``iota/v``,
``filter`` over a frame), :class:`Ragged` as an ``unbox`` body sees it, with the existential
dimension bound to a :class:`RaggedDim`.  The data structures only; evaluating over them is
:mod:`remora.dynamics.ragged`.
"""

from __future__ import annotations

from ..backends import Backend, host
from .values import BoxValue


class NeedGrouping(Exception):
    """The one signal of the ragged path: this body uses something ragged evaluation does not
    cover, found by an explicit check.  The unbox strategy that started the pass catches it
    (and nothing else) and declines; the boxes are then evaluated in groups."""


class RaggedDim:
    """A dimension whose value differs from box to box: one length per box."""

    __slots__ = ("lengths",)

    def __init__(self, lengths):
        self.lengths = lengths

    def __add__(self, other):
        if isinstance(other, RaggedDim):
            return RaggedDim(self.lengths + other.lengths)
        return RaggedDim(self.lengths + other)

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, RaggedDim):
            raise NeedGrouping  # (a product of two ragged lengths has no flat layout here)
        return RaggedDim(self.lengths * other)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"RaggedDim({self.lengths!r})"


class Ragged:
    """The contents of N boxes of one shape but for their leading axis, concatenated along it."""

    __slots__ = ("xp", "data", "lengths", "offsets")

    def __init__(self, xp: Backend, data, lengths):
        self.xp = xp
        self.data = data
        self.lengths, self.offsets = xp.ragged_layout(lengths)

    @property
    def boxes(self) -> int:
        return len(self.lengths)

    def segment(self, c: int):
        return self.data[int(self.offsets[c]) : int(self.offsets[c + 1])]

    def segment_ids(self):
        """The box each item of the flat buffer belongs to."""
        return self.xp.repeat(self.xp.arange(self.boxes), self.lengths)


class BoxFrame:
    """A frame of boxes laid out flat, as a primitive over a whole frame makes them: each box
    holds a vector (or array) of its own length along its leading axis, and the contents of
    all of them are one buffer.  Only the whole-frame engine makes these; anything but
    ``unbox`` sees the ordinary object array of boxes (:meth:`materialize`)."""

    __slots__ = ("xp", "shape", "data", "lengths", "_boxes")

    dtype = host.OBJECT_DTYPE

    def __init__(self, xp: Backend, shape: tuple, data, lengths):
        self.xp = xp
        self.shape = tuple(shape)
        self.data = data
        self.lengths = xp.reshape(lengths, (-1,))
        self._boxes = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def ragged(self) -> Ragged:
        return Ragged(self.xp, self.data, self.lengths)

    def materialize(self):
        """The object array of :class:`BoxValue` s (made once, on first need)."""
        if self._boxes is None:
            lengths = self.xp.to_host(self.lengths)
            boxes, end = [], 0
            for k in lengths:
                boxes.append(BoxValue((k,), self.data[end : end + k]))
                end += k
            self._boxes = host.from_atoms(boxes, self.shape)
        return self._boxes


def plain(arr):
    """An engine value's array, with a flat frame of boxes turned into ordinary boxes."""
    return arr.materialize() if type(arr) is BoxFrame else arr


def is_ragged_cell(cell: tuple) -> bool:
    """Whether a cell shape has a dimension that differs from box to box."""
    return any(type(d) is RaggedDim for d in cell)
