"""Data on the command line (contract §7): arrays read from ``.npy``, ``.csv`` and ``.txt`` files
for ``NAME=PATH`` inputs, and the value written by ``-o PATH.npy``.

A boundary module, like :mod:`.api`: it turns files into NumPy arrays (which the session binds
as inputs, their type from dtype and shape) and back.  A mistake *in* a data file is a
:class:`~remora.errors.RemoraError` located in that file (``PATH:LINE:COL``); a file that cannot
be read or written at all is a :class:`DataIOError` (the command's I/O error, exit 2).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np

from ..atoms import NUMBERS
from ..errors import RemoraError, Source, Span
from ..front.reader import visible
from .input_messages import conversion_hint

#: dtypes an ``.npy`` input may have, and the Remora atom type each is
NPY_DTYPES = {**{np.dtype(n.dtype): name for name, n in NUMBERS.items()}, np.dtype(np.bool_): "Bool"}
_INT = re.compile(r"[-+]?[0-9]+\Z")
#: a Float in a data file: ASCII digits as in a program's literals (with an optional sign), or
#: inf/nan (the names they print as, any case) — not the underscores, non-ASCII digits and spaces
#: Python's ``float()`` accepts
_FLOAT = re.compile(r"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf|infinity|nan)\Z", re.ASCII | re.IGNORECASE)
_SPELLED_INFINITE = re.compile(r"[-+]?inf", re.ASCII | re.IGNORECASE)
_WORD = re.compile(r"[^\s,]+")
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
    contract §8), and only the parts a computation touches are read on NumPy.  The dtype is
    judged from the header first, so one that cannot be loaded at all (Python objects) is named
    like any other that Remora does not take."""
    stated = _header_dtype(path)
    if stated is not None:
        _check_dtype(stated, path)
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as exc:
        raise DataIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DataIOError(f"cannot read {path}: not a NumPy array file ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise DataIOError(f"cannot read {path}: not a single NumPy array")
    dtype = _check_dtype(array.dtype, path)
    if array.dtype == dtype and array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array, dtype=dtype)


def _check_dtype(dtype: np.dtype, path: str) -> np.dtype:
    """``dtype`` in native byte order, or a located error naming it when no input has it."""
    native = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype
    if native not in NPY_DTYPES:
        held = ", ".join(f"{d} ({t})" for d, t in NPY_DTYPES.items())
        raise RemoraError(
            f"the array in this file has dtype {dtype}; an input is {held}: {conversion_hint(native)}",
            _span(Source(path, ""), 1, 1, 1),
        )
    return native


def _header_dtype(path: str) -> np.dtype | None:
    """The dtype a ``.npy`` file's header states, or None where the header is not one NumPy's
    public readers take (``np.load`` then says what is wrong with the file)."""
    fmt = np.lib.format
    readers = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
    try:
        with open(path, "rb") as f:
            reader = readers.get(fmt.read_magic(f))
            return None if reader is None else reader(f)[2]
    except (OSError, ValueError):
        return None


def parse_numbers(text: str, path: str) -> np.ndarray:
    """Numbers separated by commas or whitespace, one row per line (blank lines are skipped): a
    matrix, or a vector for one row or one column; Int when every number is an integer.  A field
    between commas that holds nothing is an error, never a number dropped (``1,,3`` is not
    ``[1 3]``; interfaces.md)."""
    source = Source(path, text)
    rows: list[list] = []
    first_line = 0
    for n, line in enumerate(text.split("\n"), start=1):
        row = [_number(token, source, n, col) for token, col in _tokens(line, source, n)]
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


def _tokens(line: str, source: Source, n: int) -> list[tuple[str, int]]:
    """The words of line ``n`` with their columns; a line with commas must hold a word in every
    field between them (else a located error at the empty field)."""
    if "," in line:
        start = 0
        for field in line.split(","):
            if not field.strip():
                col = start + 1
                raise RemoraError(
                    "this field is empty: a data file holds a number in every field between commas "
                    "(nothing is dropped or made up; a missing Float can be written nan)",
                    _span(source, n, col, col + 1),
                )
            start += len(field) + 1
    return [(m.group(), m.start() + 1) for m in _WORD.finditer(line)]


def _number(token: str, source: Source, line: int, col: int):
    where = _span(source, line, col, col + len(token))
    if _INT.match(token):
        value = int(token)
        if not INT64[0] <= value <= INT64[1]:
            raise RemoraError(f"`{token}` does not fit in an Int (64 bits)", where)
        return value
    if not _FLOAT.match(token):
        raise RemoraError(
            f"`{visible(token)}` is not a number: a data file holds numbers (ASCII digits, or inf and nan) "
            "separated by commas or whitespace",
            where,
        )
    value = float(token)
    if math.isinf(value) and not _SPELLED_INFINITE.match(token):  # (as a program's literal: not inf)
        raise RemoraError(f"`{token}` is too large for a 64-bit Float, as in a program (the largest magnitude is {sys.float_info.max!r}; "
                          "infinity is written inf)", where)
    return value


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
