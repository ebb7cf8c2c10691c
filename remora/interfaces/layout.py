"""Values laid out for people: the REPL at a terminal and notebooks.

The command line keeps contract §3's one-line format (``remora.interfaces.show.show_value``), which
reads back as the same value.  A person at a prompt is better served as NumPy and J serve
them:

- an array of rank ≥ 2 prints one row per line, every atom padded to a common width (numbers
  right-aligned, floats on their decimal point), and blocks of rank ≥ 2 separated by blank
  lines — whitespace only, so the text still reads back as the same value;
- a value of more than :data:`LIMIT` atoms is summarised: along each axis longer than
  ``2 × EDGE`` only the first and last :data:`EDGE` items are shown, with ``…`` between
  (the contents of boxes too).

Only the atoms shown are converted to text, so a summary of any array is immediate, and the
full layout of 10⁶ atoms costs what the one-line format does (a join per row, never a Python
call per atom for base atoms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import math

from .. import backends
from ..backends import OBJECT
from ..dynamics.values import BoxValue
from ..statics.types import Type
from .show import atom_texts, atom_type, show_atom, show_box, show_value

#: Values with more atoms than this are summarised (NumPy's threshold).
LIMIT = 1000
#: Items shown at each end of a summarised axis (NumPy's ``edgeitems``).
EDGE = 3
#: What stands for the items left out.
GAP = "…"


@dataclass(frozen=True)
class Display:
    """How values are shown: ``rows`` lays rank ≥ 2 out one row per line; ``limit`` is the
    number of atoms beyond which a value is summarised (None: never)."""

    rows: bool = True
    limit: int | None = LIMIT


#: The one-line format of contract §3, summarised beyond :data:`LIMIT` atoms.
ONE_LINE = Display(rows=False)


def show(value: Any, typ: Type, display: Display = Display()) -> str:
    """``value`` (of type ``typ``) as ``display`` says."""
    xp = backends.of(value)
    rep = xp.rep(value)
    atom = atom_type(value, typ)
    shape = tuple(value.shape)
    if 0 in shape or (display.limit is None and not display.rows and rep != OBJECT):
        return show_value(value, typ)
    if not shape:
        return _texts(value, atom, display)[0]
    keep = kept_items(shape, display.limit)
    shown = value
    if _gaps(keep):
        for axis, k in enumerate(keep):
            shown = xp.take(shown, xp.asarray([i for i in k if i is not None], "Int"), axis)
    texts = _texts(shown, atom, display)
    if display.rows and len(shape) >= 2:
        texts = aligned(texts, rep)
    return _nest(texts, keep, display.rows)


def kept_items(shape: Sequence[int], limit: int | None) -> list[list[int | None]]:
    """For each axis, the items shown, in order, with None where ``…`` stands for the rest."""
    size = math.prod(shape)
    out: list[list[int | None]] = []
    for n in shape:
        if limit is not None and size > limit and n > 2 * EDGE:
            out.append([*range(EDGE), None, *range(n - EDGE, n)])
        else:
            out.append(list(range(n)))
    return out


def _gaps(keep: list[list[int | None]]) -> bool:
    return any(None in k for k in keep)


def _texts(value, atom: Type, display: Display) -> list[str]:
    """The text of each atom; a box's contents shown on one line, summarised like the value."""
    xp = backends.of(value)
    if xp.rep(value) != OBJECT:
        return atom_texts(value, atom)
    inner = Display(rows=False, limit=display.limit)
    return [
        show_box(x, atom, lambda v, t: show(v, t, inner)) if isinstance(x, BoxValue) else show_atom(x, atom)
        for x in xp.to_host(xp.reshape(value, (math.prod(value.shape),)))
    ]


def aligned(texts: list[str], rep: str) -> list[str]:
    """The texts padded to one width: numbers right-aligned (floats on their decimal point,
    as NumPy prints them), anything else (boxes, functions) left-aligned."""
    width = max(map(len, texts))
    if rep in ("Float", "Float32"):
        dots = [t.find(".") for t in texts]
        dots = [d if d >= 0 else len(t) for d, t in zip(dots, texts)]
        left = max(dots)
        right = max(len(t) - d for t, d in zip(texts, dots))
        if left + right == width and all(d == left for d in dots):
            return texts  # (already aligned: every atom as wide, its point in the same place)
        return [(" " * (left - d) + t).ljust(left + right) for t, d in zip(texts, dots)]
    if all(len(t) == width for t in texts):
        return texts
    if rep == OBJECT:
        return [t.ljust(width) for t in texts]
    return [t.rjust(width) for t in texts]


def _nest(texts: list[str], keep: list[list[int | None]], rows: bool) -> str:
    """The texts (row-major, the shown atoms only) in nested brackets, ``…`` at the gaps; with
    ``rows``, one row per line, indented under its brackets, blank lines between blocks."""
    ndim = len(keep)
    position = 0

    def block(axis: int) -> str:
        nonlocal position
        last = keep[axis]
        if axis == ndim - 1:
            if None not in last:
                items = texts[position : position + len(last)]
                position += len(last)
            else:
                items = []
                for k in last:
                    if k is None:
                        items.append(GAP)
                    else:
                        items.append(texts[position])
                        position += 1
            return "[" + " ".join(items) + "]"
        parts = [GAP if k is None else block(axis + 1) for k in last]
        sep = "\n" * (ndim - 1 - axis) + " " * (axis + 1) if rows else " "
        return "[" + sep.join(parts) + "]"

    return block(0)
