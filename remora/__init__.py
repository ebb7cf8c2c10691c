"""Remora: the typed rank-polymorphic array language of Slepak, Shivers and Manolios, on NumPy.

>>> import numpy, remora
>>> remora.evaluate("(+ x 1)", x=numpy.arange(3))
array([1, 2, 3])
"""

from .api import BoxValue, Function, check, evaluate, function, register
from .errors import RemoraError, RemoraRuntimeError, RemoraSyntaxError, RemoraTypeError

__all__ = [
    "check",
    "evaluate",
    "function",
    "register",
    "Function",
    "BoxValue",
    "RemoraError",
    "RemoraSyntaxError",
    "RemoraTypeError",
    "RemoraRuntimeError",
]
__version__ = "0.1.0"
