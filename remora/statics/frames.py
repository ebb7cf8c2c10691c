"""Frames and cells: the shape reasoning of T-APP, and how to explain its failures.

An argument of shape ``ι_a`` given to a function expecting cells of shape ``ι``
has frame ``ι_a ÷ ι`` when ``ι`` is a suffix of ``ι_a``.  The frames of the
function array and of every argument must be totally ordered by prefix; the
principal frame is the largest (paper §2.2's lattice join).  All of this is
structural on canonical forms; z3 is consulted only to explain a failure with a
concrete counterexample.
"""

from __future__ import annotations

from ..records import record
from typing import Optional, Sequence

from . import smt
from ..errors import RemoraTypeError, Span
from .indices import Index, Shape, free_vars, show_index, strip_prefix, strip_suffix


@record(frozen=True)
class FramePart:
    """One participant of an application: who it is, its frame, and where it is written."""

    who: str  # "the function", "argument 2"
    frame: Shape
    span: Span
    shape: Shape | None = None  # the full shape (for arguments), for messages
    cell: Shape | None = None


def cell_frame(arg_shape: Shape, cell: Shape) -> Shape | None:
    """The frame of an argument of shape ``arg_shape`` split into cells of shape ``cell``."""
    return strip_suffix(arg_shape, cell)


def join(frames: Sequence[Shape]) -> tuple[int, Optional[int]]:
    """The principal frame: the position of the largest frame, every other a prefix of it (the
    join in the prefix order) — or, if the frames are not totally ordered, the position of the
    largest so far and of the first frame that is neither its prefix nor extends it."""
    best = 0
    for i in range(1, len(frames)):
        if strip_prefix(frames[i], frames[best]) is not None:
            best = i
        elif strip_prefix(frames[best], frames[i]) is None:
            return best, i
    return best, None


def prefix_ordered(frames: Sequence[Shape]) -> bool:
    """Whether the frames are totally ordered by prefix (so they have a principal frame)."""
    return join(frames)[1] is None


def principal_frame(parts: list[FramePart], where: Span) -> Shape:
    """The join of the frames (prefix order), or a type error naming two incompatible ones."""
    best, clash = join([p.frame for p in parts])
    if clash is not None:
        raise _incompatible(parts[best], parts[clash], where)
    return parts[best].frame


def _describe(part: FramePart) -> str:
    if part.shape is not None and part.cell is not None:
        return f"{part.who} has frame {part.frame} (shape {part.shape}, cells {part.cell})"
    return f"{part.who} has frame {part.frame}"


def _incompatible(a: FramePart, b: FramePart, where: Span) -> RemoraTypeError:
    message = (
        f"the frames of this application are not prefix-compatible: {_describe(a)}, "
        f"but {_describe(b)}"
    )
    message += counterexample_clause(a.frame, b.frame, "prefix")
    return RemoraTypeError(message, b.span if b.span is not None else where)


def counterexample_clause(a: Index, b: Index, relation: str) -> str:
    """``" (they differ when n = 0)"`` when the indices have variables and z3 finds a witness.

    ``relation`` is ``equal`` (a = b), ``suffix`` (a is a suffix of b) or ``prefix``
    (one of a, b is a prefix of the other).
    """
    if not (free_vars(a) or free_vars(b)):
        return ""
    if relation == "equal":
        found = smt.differ(a, b)
        text = "they differ"
    elif relation == "suffix":
        found = smt.not_suffix(a, b)  # type: ignore[arg-type]
        text = "it is not a suffix"
    else:
        found = smt.not_prefix_related(a, b)  # type: ignore[arg-type]
        text = "neither is a prefix of the other"
    if not found:
        return ""
    return f" ({text} when {smt.show_assignment(found)})"


def shapes_differ_message(a: Index, b: Index) -> str:
    return f"{show_index(a)} and {show_index(b)}" + counterexample_clause(a, b, "equal")
