"""``count``: how many items of a Bool vector are ``#t`` (issue 29.4).

A primitive rather than the prelude's ``(sum (bool->int bs))`` so that counting a frame of
flags never builds the Int copy of the flags: the backend sums the Bools themselves (NumPy adds
a byte per flag into an Int accumulator; its ``sum`` counts set bits a word at a time).  A frame
of 2·10⁶ × 64 comparisons is then 128 MB of Bool and no more, as NumPy's own
``(data == bins[:, None]).sum(axis=1)`` is — the size limit (D60) counts what is really built.
"""

from __future__ import annotations

from ..dynamics.layouts import Ragged
from .arrays import _axis, _total_segmented
from .registry import primitive


def _count_segmented(ctx, bs):
    """Each box's count: its flags as Ints (the boxes' own items, no more), summed by ``total``'s
    segmented sum, which is exact for Ints in any order."""
    if type(bs) is not Ragged:
        return NotImplemented
    xp = ctx.xp
    ints = Ragged(xp, xp.astype(bs.data, "Int"), bs.lengths, bs.lanes)
    return _total_segmented(ctx, ints)


@primitive(
    "count", "(-> ((Arr Bool (Shp n))) (Arr Int (Shp)))", "n:Dim",
    segmented=_count_segmented,
    doc="(count bs) is how many items of the Bool vector bs are #t (0 for an empty one).",
)
def _count(ctx, bs):
    xp = ctx.xp
    return xp.astype(xp.sum(bs, axis=_axis(ctx)), "Int")
