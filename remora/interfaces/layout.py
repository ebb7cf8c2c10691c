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

import numpy as np

from ..statics.types import TArr, TBase, Type, prune
from .show import BASE_OF_DTYPE, BoxValue, atom_texts, show_atom, show_box, show_value

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
    value = np.asarray(value)
    atom = atom_type(value, typ)
    if 0 in value.shape or (display.limit is None and not display.rows and value.dtype != object):
        return show_value(value, typ)
    if value.ndim == 0:
        return _texts(value, atom, display)[0]
    keep = kept_items(value.shape, display.limit)
    shown = value[np.ix_(*[[i for i in k if i is not None] for k in keep])] if _gaps(keep) else value
    texts = _texts(shown, atom, display)
    if display.rows and value.ndim >= 2:
        texts = aligned(texts, value.dtype)
    return _nest(texts, keep, display.rows)


def atom_type(value: np.ndarray, typ: Type) -> Type:
    """The atom type of a value of type ``typ`` (by its dtype for an Array type variable)."""
    t = prune(typ)
    return prune(t.atom) if isinstance(t, TArr) else TBase(BASE_OF_DTYPE.get(value.dtype, "Int"))


def kept_items(shape: Sequence[int], limit: int | None) -> list[list[int | None]]:
    """For each axis, the items shown, in order, with None where ``…`` stands for the rest."""
    size = int(np.prod(shape, dtype=object))
    out: list[list[int | None]] = []
    for n in shape:
        if limit is not None and size > limit and n > 2 * EDGE:
            out.append([*range(EDGE), None, *range(n - EDGE, n)])
        else:
            out.append(list(range(n)))
    return out


def _gaps(keep: list[list[int | None]]) -> bool:
    return any(None in k for k in keep)


def _texts(value: np.ndarray, atom: Type, display: Display) -> list[str]:
    """The text of each atom; a box's contents shown on one line, summarised like the value."""
    if value.dtype != object:
        return atom_texts(value, atom)
    inner = Display(rows=False, limit=display.limit)
    return [
        show_box(x, atom, lambda v, t: show(v, t, inner)) if isinstance(x, BoxValue) else show_atom(x, atom)
        for x in value.reshape(-1)
    ]


def aligned(texts: list[str], dtype: np.dtype) -> list[str]:
    """The texts padded to one width: numbers right-aligned (floats on their decimal point,
    as NumPy prints them), anything else (boxes, functions) left-aligned."""
    width = max(map(len, texts))
    if dtype == np.float64:
        dots = [t.find(".") for t in texts]
        dots = [d if d >= 0 else len(t) for d, t in zip(dots, texts)]
        left = max(dots)
        right = max(len(t) - d for t, d in zip(texts, dots))
        if left + right == width and all(d == left for d in dots):
            return texts  # (already aligned: every atom as wide, its point in the same place)
        return [(" " * (left - d) + t).ljust(left + right) for t, d in zip(texts, dots)]
    if all(len(t) == width for t in texts):
        return texts
    if dtype == object:
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
