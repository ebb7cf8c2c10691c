"""Remora: the typed rank-polymorphic array language of Slepak, Shivers and Manolios, on NumPy."""

from .errors import RemoraError, RemoraRuntimeError, RemoraSyntaxError, RemoraTypeError

__all__ = ["RemoraError", "RemoraSyntaxError", "RemoraTypeError", "RemoraRuntimeError"]
__version__ = "0.1.0"
