"""What the Python API hands back: results as their caller's own arrays, and the refusal of a
result that holds functions (only arrays go back to Python)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dynamics.values import BoxValue
from ..errors import RemoraTypeError, Span
from ..statics.types import TArr, TForall, TFun, TPi, TSigma, Type, prune


def _output(xp, value) -> Any:
    """What the API returns for a result (``xp.to_user``): on NumPy a fresh, writeable array the
    caller owns, boxes included: engine results may be views or broadcasts of inputs, of
    definitions, of literal constants or of cached values, and boxes hold such arrays too.
    Nothing the caller does to the result may reach any of those."""
    if not (isinstance(value, np.ndarray) and value.dtype.hasobject):  # (the usual case, quickly)
        return xp.to_user(value)
    out = np.array(value, copy=True)
    if out.dtype == object:
        atoms = out.reshape(-1)  # a view: writing to it writes into ``out``
        for i, atom in enumerate(atoms):
            if isinstance(atom, BoxValue):
                atoms[i] = BoxValue(atom.indices, _output(xp, atom.value))
    return out


def _refuse_functions(t: Type, span: Span, what: str, hint: str) -> None:
    """A result is returned to Python as an array: one holding functions is refused, located."""
    t = prune(t)
    atom = prune(t.atom) if isinstance(t, TArr) else t
    if isinstance(atom, (TFun, TForall, TPi)):
        shape = t.shape.dims() if isinstance(t, TArr) else None
        kind = "a function" if shape == () else "an array of functions"
        raise RemoraTypeError(f"{what} is {kind}, of type {t}: only arrays can be returned to Python; {hint}", span)
    if _holds_functions(atom):
        raise RemoraTypeError(
            f"{what} has type {t}, with functions inside its boxes: only arrays of Int, Float or Bool "
            "(and boxes of them) can be returned to Python", span
        )


def _holds_functions(t: Type) -> bool:
    t = prune(t)
    if isinstance(t, TArr):
        return _holds_functions(t.atom)
    if isinstance(t, TSigma):
        return _holds_functions(t.body)
    return isinstance(t, (TFun, TForall, TPi))
