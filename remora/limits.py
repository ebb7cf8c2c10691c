"""The limits of the array representation, which every stage checks against (D29).

A shape the program writes or computes must be one an array can have: the statics refuse a
type of more than :data:`MAX_RANK` axes, erasure precomputes no literal NumPy cannot hold, and
the engines refuse, with a located error, any shape :func:`shape_problem` objects to.  Kept
apart from every stage (and free of imports) so that each can ask without depending on another.
"""

from __future__ import annotations

#: NumPy's limit on the number of axes of an array.
MAX_RANK = 64
#: NumPy refuses an array whose non-zero dimensions multiply to more than this many 8-byte atoms
#: (its byte count must fit in an ``intp``) -- even an empty one, where a 0 makes the size 0.
MAX_ATOMS = (2**63 - 1) // 8
#: Bytes per atom of each base representation (NumPy's itemsize for its dtype), which the size
#: limit counts: a Bool array of n atoms takes n bytes, not 8n (issue 29.4).
REP_BYTES = {"Bool": 1, "Int32": 4, "Float32": 4, "Int": 8, "Float": 8}
#: Bytes per atom of an array of functions or boxes: one reference each.
REFERENCE_BYTES = 8


def atom_bytes(rep: str) -> int:
    """Bytes per atom of an array of representation ``rep`` (``"object"``: functions, boxes)."""
    return REP_BYTES.get(rep, REFERENCE_BYTES)


def show_dims(dims) -> str:
    """A concrete shape as Remora text: ``(Shp 2 4)``."""
    return "(Shp" + "".join(f" {d}" for d in dims) + ")"


def shape_problem(shape: tuple) -> str | None:
    """Why NumPy cannot hold an array of ``shape`` (whatever its dtype), or None if it can.

    An empty shape is no exception: NumPy multiplies the non-zero dimensions (``(Shp 0 2^32
    2^32)`` overflows) and refuses a dimension past ``intp``, so such a shape must be refused
    before it reaches NumPy -- its empty value cannot be represented."""
    if len(shape) > MAX_RANK:
        return f"of {len(shape)} axes; arrays have at most {MAX_RANK} (NumPy's limit)"
    nonzero = 1
    for d in shape:
        if d:
            nonzero *= d
    if nonzero > MAX_ATOMS:
        return (
            f"of shape {show_dims(shape)}, which NumPy cannot hold, even empty: its non-zero dimensions "
            f"multiply to {nonzero:,} (at most {MAX_ATOMS:,})"
        )
    return None
