"""The Float sums (and products) of many ragged vectors at once, each rounded as NumPy rounds it
alone (D28), in a fixed number of calls whatever the lengths.

``np.add.reduce`` of a contiguous vector is ``0.0 + pairwise(items)`` (the identity, then
NumPy's pairwise sum of all ``n`` items: eight running sums per block of at most 128 items,
longer rows split in halves recursively).  ``np.add.reduceat`` of a segment is
``first + pairwise(the rest)`` — the same loop, started with the segment's first item.  So with
the identity *inserted* before each box, one ``reduceat`` (the seam's ``segment_reduce``) runs
NumPy's own loop over each box exactly as a reduce of that box alone would, for every length
(0: the segment is the identity alone; 1 000 000: split as the reduce splits it).  Products
likewise with 1.0 (NumPy multiplies sequentially, from the identity).

This replaced two kernels: boxes of one length reduced together, a few calls per distinct length
(a triangle of 4000 rows: 4000 groups, and a plan guarded on every group's size), and a
zero-padded matrix of rows replaying the pairwise steps as array operations, which stopped at
128 items and cost several passes over the padded matrix.  Inserting the identities costs one
copy of the items (``np.insert``); measured in bench/RESULTS.md.
"""

from __future__ import annotations

from ..dynamics.layouts import Ragged

#: each operation's identity: what a reduce starts from, inserted before each box
IDENTITY = {"add": 0.0, "multiply": 1.0}


def applies(xs: Ragged) -> bool:
    """Whether the boxes are vectors (a cell of more axes is reduced column by column, along a
    moved axis: the caller groups those by length)."""
    return xs.data.ndim == 1


def ragged_reduce(xp, op: str, xs: Ragged):
    """Each box's ``op`` reduce (``"add"`` or ``"multiply"``), bit for bit as the library's reduce
    of that box alone: the identity inserted before each box, then one segmented reduce."""
    if xs.boxes == 0:
        return xp.empty((0,), xp.rep(xs.data))
    starts = xs.offsets[:-1]
    padded = xp.insert_items(xs.data, starts, IDENTITY[op])
    return xp.segment_reduce(op, padded, starts + xp.arange(xs.boxes))
