"""How the whole-frame engine lays out frames of boxes flat.

A frame of boxes whose contents differ only in the length of their leading axis is held as
one buffer plus one length per box: :class:`BoxFrame` as primitives make it (``iota``,
``filter`` over a frame), :class:`Ragged` as an ``unbox`` body sees it, with the existential
dimension bound to a :class:`RaggedDim`.  The data structures only; evaluating over them is
:mod:`remora.dynamics.ragged`.
"""

from __future__ import annotations

import numpy as np

from .values import BoxValue


class NeedGrouping(Exception):
    """This body uses something ragged evaluation does not cover: evaluate it by groups instead."""


class RaggedDim:
    """A dimension whose value differs from box to box: one length per box."""

    __slots__ = ("lengths",)

    def __init__(self, lengths: np.ndarray):
        self.lengths = lengths

    def __add__(self, other):
        if isinstance(other, RaggedDim):
            return RaggedDim(self.lengths + other.lengths)
        return RaggedDim(self.lengths + other)

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, RaggedDim):
            raise NeedGrouping
        return RaggedDim(self.lengths * other)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"RaggedDim({self.lengths!r})"


class Ragged:
    """The contents of N boxes of one shape but for their leading axis, concatenated along it."""

    __slots__ = ("data", "lengths", "offsets")

    def __init__(self, data: np.ndarray, lengths: np.ndarray):
        self.data = data
        self.lengths = lengths
        self.offsets = np.concatenate([[0], np.cumsum(lengths)])

    @property
    def boxes(self) -> int:
        return len(self.lengths)

    def segment(self, c: int) -> np.ndarray:
        return self.data[self.offsets[c] : self.offsets[c + 1]]

    def segment_ids(self) -> np.ndarray:
        return np.repeat(np.arange(self.boxes), self.lengths)


class BoxFrame:
    """A frame of boxes laid out flat, as a primitive over a whole frame makes them: each box
    holds a vector (or array) of its own length along its leading axis, and the contents of
    all of them are one buffer.  Only the whole-frame engine makes these; anything but
    ``unbox`` sees the ordinary object array of boxes (:meth:`materialize`)."""

    __slots__ = ("shape", "data", "lengths", "_boxes")

    dtype = np.dtype(object)

    def __init__(self, shape: tuple, data: np.ndarray, lengths: np.ndarray):
        self.shape = tuple(shape)
        self.data = data
        self.lengths = lengths.reshape(-1)
        self._boxes: np.ndarray | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def ragged(self) -> Ragged:
        return Ragged(self.data, self.lengths)

    def materialize(self) -> np.ndarray:
        """The object array of :class:`BoxValue` s (made once, on first need)."""
        if self._boxes is None:
            out = np.empty(len(self.lengths), dtype=object)
            ends = np.cumsum(self.lengths)
            for c, (end, k) in enumerate(zip(ends.tolist(), self.lengths.tolist())):
                out[c] = BoxValue((k,), self.data[end - k : end])
            self._boxes = out.reshape(self.shape)
        return self._boxes


def plain(arr):
    """An engine value's array, with a flat frame of boxes turned into ordinary boxes."""
    return arr.materialize() if type(arr) is BoxFrame else arr


def is_ragged_cell(cell: tuple) -> bool:
    """Whether a cell shape has a dimension that differs from box to box."""
    return any(isinstance(d, RaggedDim) for d in cell)
