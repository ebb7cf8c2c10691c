"""Data on the command line (contract §7): arrays read from ``.npy``, ``.csv`` and ``.txt`` files
for ``NAME=PATH`` inputs, and the value written by ``-o PATH.npy``.

A boundary module, like :mod:`.api`: it turns files into NumPy arrays (which the session binds
as inputs, their type from dtype and shape) and back.  A mistake *in* a data file is a
:class:`~remora.errors.RemoraError` located in that file (``PATH:LINE:COL``); a file that cannot
be read or written at all is a :class:`DataIOError` (the command's I/O error, exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..atoms import NUMBERS
from ..errors import RemoraError, Source, Span
from .input_messages import conversion_hint

#: dtypes an ``.npy`` input may have, and the Remora atom type each is
NPY_DTYPES = {**{np.dtype(n.dtype): name for name, n in NUMBERS.items()}, np.dtype(np.bool_): "Bool"}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_TOKEN = re.compile(r"[^\s,]+")
_NAME = re.compile(r"[^\s()\[\];\"'#=,0-9][^\s()\[\];\"'=,]*\Z")
INT64 = (-(2**63), 2**63 - 1)


class DataIOError(Exception):
    """A data file that cannot be read or written; the message says why."""


def parse_binding(text: str) -> tuple[str, str] | None:
    """``NAME=PATH`` split into its parts, or None when it is not of that form."""
    name, eq, path = text.partition("=")
    if not eq or not path or not _NAME.match(name):
        return None
    return name, path


def load(path: str) -> np.ndarray:
    """The array in the file ``path``, by its suffix: ``.npy``, else numbers as text."""
    if path.lower().endswith(".npy"):
        return _load_npy(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataIOError(f"cannot read {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return parse_numbers(text.replace("\r\n", "\n").replace("\r", "\n"), path)


def _load_npy(path: str) -> np.ndarray:
    """The array in a ``.npy`` file, memory-mapped (read-only) when it can be used as it is: an
    input larger than memory is then read block by block by a backend that chunks it (Dask,
    contract §8), and only the parts a computation touches are read on NumPy."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as exc:
        raise DataIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DataIOError(f"cannot read {path}: not a NumPy array file ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise DataIOError(f"cannot read {path}: not a single NumPy array")
    dtype = array.dtype.newbyteorder("=") if array.dtype.byteorder not in "=|" else array.dtype
    if dtype not in NPY_DTYPES:
        held = ", ".join(f"{d} ({t})" for d, t in NPY_DTYPES.items())
        raise RemoraError(
            f"the array in this file has dtype {array.dtype}; an input is {held}: {conversion_hint(dtype)}",
            _span(Source(path, ""), 1, 1, 1),
        )
    if array.dtype == dtype and array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array, dtype=dtype)


def parse_numbers(text: str, path: str) -> np.ndarray:
    """Numbers separated by commas or whitespace, one row per line (blank lines are skipped): a
    matrix, or a vector for one row or one column; Int when every number is an integer."""
    source = Source(path, text)
    rows: list[list] = []
    first_line = 0
    for n, line in enumerate(text.split("\n"), start=1):
        row = [_number(m.group(), source, n, m.start() + 1) for m in _TOKEN.finditer(line)]
        if not row:
            continue
        if rows and len(row) != len(rows[0]):
            raise RemoraError(
                f"this row has {len(row)} number{'s' * (len(row) != 1)}, but the first row (line {first_line}) "
                f"has {len(rows[0])}: a data file is a rectangle of numbers",
                _span(source, n, 1, len(line) + 1),
            )
        if not rows:
            first_line = n
        rows.append(row)
    if not rows:
        raise RemoraError("this data file holds no numbers", _span(source, 1, 1, 1))
    is_int = all(isinstance(x, int) for row in rows for x in row)
    array = np.array(rows, dtype=np.int64 if is_int else np.float64)
    if array.shape[0] == 1 or array.shape[1] == 1:
        array = array.reshape(-1)
    return array


def _number(token: str, source: Source, line: int, col: int):
    if _INT.match(token):
        value = int(token)
        if not INT64[0] <= value <= INT64[1]:
            raise RemoraError(f"`{token}` does not fit in an Int (64 bits)", _span(source, line, col, col + len(token)))
        return value
    try:
        return float(token)
    except ValueError:
        raise RemoraError(
            f"`{token}` is not a number: a data file holds numbers separated by commas or whitespace",
            _span(source, line, col, col + len(token)),
        ) from None


def _span(source: Source, line: int, col: int, end_col: int) -> Span:
    return Span(source, line, col, line, max(end_col, col + 1))


def save(path: str, value, xp=None) -> None:
    """Write ``value`` (an array of numbers or Bools, of its own dtype) to the ``.npy`` file ``path``, through
    its backend ``xp`` (NumPy's when not given): a backend that holds arrays a block at a time
    writes it block by block (``Backend.store``), so the result is never held whole."""
    if xp is None:
        from ..backends import get

        xp = get("numpy")
    array = value if xp.owns(value) else np.asarray(xp.to_numpy(value))
    if np.dtype(array.dtype) not in NPY_DTYPES:
        raise DataIOError(f"cannot write {path}: the value holds boxes or functions, and a .npy file holds "
                          "arrays of numbers or Bools")
    try:
        xp.store(array, path)
    except OSError as exc:
        raise DataIOError(f"cannot write {path}: {exc.strerror or exc}") from None
