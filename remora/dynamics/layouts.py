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
    """The contents of N boxes of one shape but for their leading axis, concatenated along it.

    *Padded* (``lanes`` given; only while tracing, :mod:`.padded`): each box owns ``width``
    lanes of the buffer, in place — box ``c`` is lanes ``c·width … (c+1)·width - 1`` — and
    ``lanes`` (a Bool per lane) says which hold its items, in order; ``lengths`` counts them.
    A compiled function cannot have shapes that depend on data; this layout's shapes follow
    from the frame's alone, so ``filter`` over a frame keeps its rows where they are."""

    __slots__ = ("xp", "data", "lengths", "offsets", "lanes")

    def __init__(self, xp: Backend, data, lengths, lanes=None):
        self.xp = xp
        self.data = data
        self.lanes = lanes
        if lanes is None:
            self.lengths, self.offsets = xp.ragged_layout(lengths)
        else:  # (no offsets: a box's items are not contiguous)
            self.lengths, self.offsets = lengths, None

    @property
    def boxes(self) -> int:
        return len(self.lengths)

    @property
    def padded(self) -> bool:
        return self.lanes is not None

    @property
    def width(self) -> int:
        """The lanes of each box of a padded layout."""
        return self.lanes.shape[0] // self.boxes if self.boxes else 0

    def rows(self, x):
        """A padded layout's flat ``x`` (data, or lanes) as one row of lanes per box."""
        return self.xp.reshape(x, (self.boxes, self.width) + tuple(x.shape[1:]))

    def same_boxes(self, other: "Ragged") -> bool:
        """Whether ``other`` holds its items in the same boxes (and lanes) as this one."""
        if self.padded or other.padded:  # (traced counts: only the very same lanes are known equal)
            return other.lanes is self.lanes
        return other is self or self.xp.array_equal(other.lengths, self.lengths)

    def segment(self, c: int):
        if self.padded:
            raise NeedGrouping  # (a box of a padded layout is not a slice of the buffer)
        return self.data[int(self.offsets[c]) : int(self.offsets[c + 1])]

    def segment_ids(self):
        """The box each item of the flat buffer belongs to."""
        return self.xp.repeat(self.xp.arange(self.boxes), self.lengths)


class BoxFrame:
    """A frame of boxes laid out flat, as a primitive over a whole frame makes them: each box
    holds a vector (or array) of its own length along its leading axis, and the contents of
    all of them are one buffer.  Only the whole-frame engine makes these; anything but
    ``unbox`` sees the ordinary object array of boxes (:meth:`materialize`)."""

    __slots__ = ("xp", "shape", "data", "lengths", "lanes", "_boxes")

    dtype = host.OBJECT_DTYPE

    def __init__(self, xp: Backend, shape: tuple, data, lengths, lanes=None):
        self.xp = xp
        self.shape = tuple(shape)
        self.data = data
        self.lengths = xp.reshape(lengths, (-1,))
        #: a padded layout's Bool per lane (see :class:`Ragged`), None for a compact one
        self.lanes = lanes
        self._boxes = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def ragged(self) -> Ragged:
        return Ragged(self.xp, self.data, self.lengths, self.lanes)

    def materialize(self):
        """The object array of :class:`BoxValue` s (made once, on first need)."""
        if self.lanes is not None:  # (padded while tracing: its boxes' shapes are not known yet)
            self.xp.untraceable("boxes made by `filter` over a frame, used but by `unbox`")
            raise NeedGrouping
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
