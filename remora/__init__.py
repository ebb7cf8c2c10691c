"""Remora: the typed rank-polymorphic array language of Slepak, Shivers and Manolios, on NumPy.

>>> import numpy, remora
>>> remora.evaluate("(+ x 1)", x=numpy.arange(3))
array([1, 2, 3])

The API is imported on first use (PEP 562): ``import remora`` alone loads no NumPy, so the
``remora`` command can catch Ctrl-C from its very start (see :mod:`remora.interfaces.cli`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interfaces.api import BoxValue, Function, check, evaluate, function, grad, register
    from .errors import RemoraError, RemoraRuntimeError, RemoraSyntaxError, RemoraTypeError

__all__ = [
    "check",
    "evaluate",
    "function",
    "grad",
    "register",
    "Function",
    "BoxValue",
    "RemoraError",
    "RemoraSyntaxError",
    "RemoraTypeError",
    "RemoraRuntimeError",
]
__version__ = "0.1.0"

#: where each public name lives
_HOMES = {name: "interfaces.api" for name in ("check", "evaluate", "function", "grad", "register", "Function",
                                                      "BoxValue")}
_HOMES.update((name, "errors") for name in __all__ if name.startswith("Remora"))


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'remora' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value  # (looked up here once)
    return value


def load_ipython_extension(ipython) -> None:
    """``%load_ext remora``: the ``%%remora`` and ``%remora`` magics (see
    :mod:`remora.interfaces.notebook`, imported only now)."""
    from .interfaces.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .interfaces.notebook import unload_ipython_extension as unload

    unload(ipython)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
