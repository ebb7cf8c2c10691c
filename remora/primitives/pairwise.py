"""The Float sums of many ragged vectors at once, each rounded as NumPy rounds it alone (D28).

``np.add.reduce`` sums a contiguous row of ``n ≤ 128`` Floats as ``0.0 + s`` where ``s`` is its
pairwise sum: eight running sums over the first ``n − n mod 8`` items (``r[j]`` adds items
``j, j+8, …`` in turn), combined as ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``, then the last
``n mod 8`` items added one by one (for ``n < 8``: the items one by one).  Laid out as a matrix
with one row per vector, zero-padded, every step of that is one array operation over all rows:
so the sums of vectors of *different* lengths cost a fixed number of calls, with the lengths as
data — where summing the vectors of each length together (``_by_length``) makes a few calls per
distinct length (a triangular matrix's rows: one per row).

Padding with ``+0.0`` changes no sum: ``x + 0.0`` is ``x`` for every ``x`` but ``−0.0``, and a
zero's sign cannot reach a non-zero sum and is lost in the final ``0.0 + s`` anyway.
Rows longer than 128 (NumPy splits them in halves) are left to the caller.
"""

from __future__ import annotations

from ..dynamics.layouts import Ragged

#: NumPy's pairwise block (``PW_BLOCKSIZE``): up to this length a row is summed without splitting
BLOCK = 128


def worth_it(xs: Ragged, distinct: int, longest: int) -> bool:
    """Whether the matrix of rows is the quicker layout: rows no longer than :data:`BLOCK`, a
    flat Float vector per box, and mostly lengths of their own (few boxes per length)."""
    return (0 < longest <= BLOCK and xs.data.ndim == 1 and getattr(xs.data, "size", 0) > 0
            and distinct * 4 > xs.boxes and distinct > 8)


def pairwise_sums(xp, xs: Ragged, longest: int):
    """Each box's ``np.add.reduce``, bit for bit, as whole-matrix operations (``longest`` ≤ 128)."""
    width = 8
    while width < longest:
        width *= 2
    cols = xp.arange(width)
    lengths = xp.reshape(xs.lengths, (-1, 1))
    valid = cols < lengths
    index = xp.where(valid, xp.reshape(xs.offsets[:-1], (-1, 1)) + cols, 0)
    rows = xp.where(valid, xp.gather(xs.data, index), 0.0)  # (boxes, width), zero-padded
    main = lengths - lengths % 8  # the items the eight running sums take (0 below 8 items)
    blocks = xp.where(cols < main, rows, 0.0)
    r = blocks[:, 0:8]
    for k in range(1, width // 8):
        r = r + blocks[:, 8 * k:8 * k + 8]
    p = r[:, 0::2] + r[:, 1::2]
    q = p[:, 0::2] + p[:, 1::2]
    s = q[:, 0] + q[:, 1]
    tail = main + xp.arange(7)
    rest = xp.where(tail < lengths, xp.take_along_axis(rows, xp.minimum(tail, width - 1), 1), 0.0)
    for i in range(7):
        s = s + rest[:, i]
    return 0.0 + s
