"""Values printed: the one place where the command line, the REPL and notebooks decide how.

Two formats:

- **exact** — contract §3's one-line format (:func:`remora.interfaces.show.show_value`), which
  reads back as the same value: what the command line writes to a pipe or a file, and the REPL
  without a terminal;
- **for people** — at a terminal and in notebooks, laid out as NumPy and J lay out arrays:

  - an array of rank ≥ 2 prints one row per line, every atom padded to a common width (numbers
    right-aligned, floats on their decimal point), and blocks of rank ≥ 2 separated by blank
    lines;
  - a row wider than the terminal wraps between two atoms, never inside one, the next line
    indented under the row's first atom (rank 1 is aligned then too);
  - a value of more than :data:`LIMIT` atoms is summarised: along each axis longer than
    ``2 × EDGE`` only the first and last :data:`EDGE` items are shown, with ``…`` between (the
    contents of boxes too) — NumPy's ``threshold`` and ``edgeitems``;
  - ``precision`` prints each Float with at most that many digits after the point, as NumPy's
    ``precision`` does (trailing zeros dropped; scientific notation for the whole array when its
    magnitudes call for it, NumPy's rule), instead of the shortest text that reads back.

  Without a precision and a summary the text is still whitespace around contract §3's, so it
  reads back as the same value.

Only the atoms shown are converted to text, so a summary of any array is immediate, and the full
layout of 10⁶ atoms costs about twice what the one-line format does (a join per line, never a
Python call per atom for base atoms).  NumPy's own ``array2string`` lays out the same way, but it
cannot print Remora's atoms without a Python call per atom and builds wrapped rows in time
quadratic in their length (14 s for a wrapped row of 10⁶ atoms, against 1 s here:
decisions.md D52), so the layout is this module's.
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
    number of atoms beyond which a value is summarised (None: never); ``width`` the columns a
    row may take before it wraps (None: never); ``precision`` the digits after a Float's point
    (None: as many as it takes to read back).  The default is the layout for people at 80
    columns; :data:`EXACT` is contract §3's format."""

    rows: bool = True
    limit: int | None = LIMIT
    width: int | None = 80
    precision: int | None = None

    @property
    def exact(self) -> bool:
        """Whether this is contract §3's format: one line, whole, every atom as it reads back."""
        return not self.rows and self.limit is None and self.precision is None


#: contract §3's one-line format: what the command line writes to a pipe or a file
EXACT = Display(rows=False, limit=None, width=None)
#: the one-line format, summarised beyond :data:`LIMIT` atoms (the contents of boxes in rows)
ONE_LINE = Display(rows=False, width=None)


def for_stream(stream: Any, full: bool = False, precision: int | None = None) -> Display:
    """The display for values written to ``stream``: for people at a terminal (as wide as the
    terminal; ``full``: never summarised), else :data:`EXACT` — what a pipe or a file gets must
    read back, whatever was asked for people."""
    isatty = getattr(stream, "isatty", None)
    try:
        terminal = bool(isatty and isatty())
    except ValueError:  # (a closed stream)
        terminal = False
    if not terminal:
        return EXACT
    return Display(limit=None if full else LIMIT, width=terminal_width(stream), precision=precision)


def terminal_width(stream: Any = None) -> int:
    """The columns of the terminal ``stream`` writes to (standard output's by default): what
    the terminal says, else ``$COLUMNS``, else 80 (a terminal that says 0 has not been sized)."""
    import os
    import shutil

    try:
        columns = os.get_terminal_size(stream.fileno()).columns if stream is not None else 0
    except (AttributeError, OSError, ValueError):
        columns = 0
    return columns if columns > 0 else shutil.get_terminal_size().columns


def show(value: Any, typ: Type, display: Display = Display()) -> str:
    """``value`` (of type ``typ``) as ``display`` says."""
    if display.exact:
        return show_value(value, typ)
    xp = backends.of(value)
    rep = xp.rep(value)
    atom = atom_type(value, typ)
    shape = tuple(value.shape)
    if 0 in shape:
        return show_value(value, typ)
    if not shape:
        return _texts(value, atom, display)[0]
    keep = kept_items(shape, display.limit)
    shown = value
    if _gaps(keep):
        for axis, k in enumerate(keep):
            shown = xp.take(shown, xp.asarray([i for i in k if i is not None], "Int"), axis)
    texts = _texts(shown, atom, display)
    if display.rows and (len(shape) >= 2 or _wraps(texts, display.width)):
        texts = aligned(texts, rep)
    return _nest(texts, keep, display.rows, display.width)


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
    rep = xp.rep(value)
    if rep != OBJECT:
        if display.precision is not None and rep.startswith("Float"):
            return float_texts(xp.to_host(xp.reshape(value, (math.prod(value.shape),))), display.precision)
        return atom_texts(value, atom)
    inner = Display(rows=False, limit=display.limit, width=None, precision=display.precision)
    return [
        show_box(x, atom, lambda v, t: show(v, t, inner)) if isinstance(x, BoxValue) else show_atom(x, atom)
        for x in xp.to_host(xp.reshape(value, (math.prod(value.shape),)))
    ]


def float_texts(values: Sequence[float], precision: int) -> list[str]:
    """Floats with at most ``precision`` digits after the point, as NumPy's default printing
    writes them (``floatmode="maxprec"``): rounded, trailing zeros dropped — though one digit
    stays after the point, so the text still reads as a Float.  When the finite non-zero
    magnitudes reach 10⁸, go below 10⁻⁴ or span more than three orders of magnitude (NumPy's
    rule), every atom is in scientific notation with one number of digits (the most any atom
    needs), so the atoms line up.  ``nan``, ``inf`` and ``-inf`` print as always."""
    finite = [x for x in values if math.isfinite(x)]
    magnitudes = [abs(x) for x in finite if x != 0]
    scientific = bool(magnitudes) and (max(magnitudes) >= 1e8 or min(magnitudes) < 1e-4
                                       or max(magnitudes) / min(magnitudes) > 1e3)
    if not scientific:
        return [_trimmed(f"{x:.{precision}f}") if math.isfinite(x) else repr(float(x)) for x in values]
    digits = max((len(_trimmed(f"{x:.{precision}e}".partition("e")[0]).partition(".")[2]) for x in finite), default=1)
    return [f"{x:.{digits}e}" if math.isfinite(x) else repr(float(x)) for x in values]


def _trimmed(number: str) -> str:
    """``1.500`` as ``1.5``, ``2.000`` as ``2.0`` (and ``2`` as ``2.0``): a Float's text."""
    if "." not in number:
        return number + ".0"
    number = number.rstrip("0")
    return number + "0" if number.endswith(".") else number


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


def _wraps(texts: list[str], width: int | None) -> bool:
    """Whether a row of these texts is wider than ``width``."""
    return width is not None and sum(map(len, texts)) + len(texts) + 1 > width


def _nest(texts: list[str], keep: list[list[int | None]], rows: bool, width: int | None = None) -> str:
    """The texts (row-major, the shown atoms only) in nested brackets, ``…`` at the gaps; with
    ``rows``, one row per line, indented under its brackets, blank lines between blocks, and a
    row wider than ``width`` wrapped between atoms."""
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
            if rows and width is not None:
                return "[" + _wrapped(items, axis + 1, width - ndim) + "]"
            return "[" + " ".join(items) + "]"
        parts = [GAP if k is None else block(axis + 1) for k in last]
        sep = "\n" * (ndim - 1 - axis) + " " * (axis + 1) if rows else " "
        return "[" + sep.join(parts) + "]"

    return block(0)


def _wrapped(items: list[str], indent: int, width: int) -> str:
    """``items`` joined by spaces, a line break (and ``indent`` spaces) wherever the next item
    would pass ``width`` columns; a row that fits is one join."""
    if indent + sum(map(len, items)) + len(items) <= width:
        return " ".join(items)
    lengths = set(map(len, items))
    if len(lengths) == 1:  # (aligned atoms, the usual case: so many to a line, one join each)
        per_line = max(1, (width - indent + 1) // (lengths.pop() + 1))
        return ("\n" + " " * indent).join(" ".join(items[i : i + per_line]) for i in range(0, len(items), per_line))
    lines: list[list[str]] = [[]]
    column = indent
    for item in items:
        if lines[-1] and column + 1 + len(item) > width:
            lines.append([])
            column = indent
        column += len(item) + (1 if lines[-1] else 0)
        lines[-1].append(item)
    return ("\n" + " " * indent).join(" ".join(line) for line in lines)
