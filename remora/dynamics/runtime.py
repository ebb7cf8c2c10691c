"""What both engines share at run time: index environments, closures, limits, and the
context a primitive's implementation is called with.

Index variables are bound at run time by ``Iλ`` application and by ``unbox``:
a ``Dim`` to an ``int``, a ``Shape`` to a tuple, an ``Atom`` type variable (from
an erased ``Tλ``) to the dtype of its atoms, and an ``Array`` type variable to
its shape tuple carrying that dtype along (:class:`ArrayTypeBinding`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Mapping

import numpy as np

from ..erasure.erased import EIApp, EVar, Rep, TypeArg
from ..errors import RemoraRuntimeError, Span
from ..limits import MAX_ATOMS, MAX_RANK, shape_problem
from ..statics.indices import Dim, Index, Shape, Var, eval_dim, eval_shape
from .values import PrimFn

DEFAULT_MAX_BYTES = 10**9


@dataclass
class RunConfig:
    """Per-run settings: standard input, the trace stream (or None), the size limit."""

    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    trace: IO[str] | None = None
    max_bytes: int = DEFAULT_MAX_BYTES


class ArrayTypeBinding(tuple):
    """The run-time value of an Array-kinded type variable: its shape, and its atoms' dtype."""

    rep: np.dtype

    def __new__(cls, dims, rep: np.dtype):
        obj = super().__new__(cls, dims)
        obj.rep = rep
        return obj


def shape_value(s: Shape, ienv: Mapping[Var, Any]) -> tuple[int, ...]:
    return eval_shape(s, ienv) if s.items else ()


def index_value(ix: Index, ienv: Mapping[Var, Any]):
    return eval_dim(ix, ienv) if isinstance(ix, Dim) else shape_value(ix, ienv)


def rep_value(rep: Rep, ienv: Mapping[Var, Any]) -> np.dtype:
    """The concrete dtype of an erased representation annotation."""
    if isinstance(rep, Var):
        bound = ienv.get(rep)
        if isinstance(bound, np.dtype):
            return bound
        return getattr(bound, "rep", np.dtype(object))
    return rep


def callee_name(fn) -> str | None:
    """The name an application's function is written as (through ``i-app``/``t-app``), if any:
    how an error inside a prelude function names the function the user called."""
    while isinstance(fn, EIApp):
        fn = fn.fn
    return fn.name if isinstance(fn, EVar) else None


def function_name(fns: np.ndarray) -> str:
    """How size-limit messages name a function array: `iota/s`, or "this application"."""
    first = fns[(0,) * fns.ndim] if fns.size else None  # (no reshape: it would copy a broadcast array)
    return f"`{first.prim.name}`" if isinstance(first, PrimFn) else "this application"


def iapp_arg_value(arg, ienv: Mapping[Var, Any]):
    """The run-time value of one ``i-app`` argument: an index, or an erased type argument."""
    if isinstance(arg, TypeArg):
        dtype = rep_value(arg.rep, ienv)
        if arg.shape is None:
            return dtype
        return ArrayTypeBinding(shape_value(arg.shape, ienv), dtype)
    return index_value(arg, ienv)


class Closure:
    """A λ with its environment.  ``level`` is how many batch axes its environment has
    (always 0 in the reference engine)."""

    __slots__ = ("lam", "env", "ienv", "level", "identity")

    def __init__(self, lam, env, ienv, level: int = 0):
        self.lam = lam
        self.env = env
        self.ienv = ienv
        self.level = level
        self.identity = None


class IClosure(Closure):
    """An ``Iλ`` (or erased ``Tλ``) with its environment."""

    __slots__ = ()


class PrimContext:
    """What a primitive's implementation sees: the frame it is applied over, the cell shapes
    of its arguments, its result cell shape, its index arguments; and services.

    Subclassed by each engine for :meth:`apply` and :meth:`uniform_function`.
    """

    __slots__ = ("frame", "cells", "result_cell", "indices", "span", "run", "result_dtype")

    def __init__(self, frame, cells, result_cell, indices, span: Span | None, run: RunConfig, result_dtype=None):
        self.frame = tuple(frame)
        self.cells = cells
        self.result_cell = result_cell
        self.indices = indices
        self.span = span
        self.run = run
        #: the dtype the application's static type gives its result (object when unknown)
        self.result_dtype = result_dtype if result_dtype is not None else np.dtype(object)

    @property
    def stdin(self) -> IO[str]:
        return self.run.stdin

    def error(self, message: str):
        raise RemoraRuntimeError(message, self.span)

    def check_size(self, atoms: int, what: str) -> None:
        """Refuse to build an array of more than the configured number of bytes (``what``: the primitive)."""
        check_size(atoms, 8, f"`{what}`", self.span, self.run)

    def check_shape(self, shape: tuple, what: str) -> None:
        """Refuse to build an array of a shape NumPy cannot hold, or over the size limit."""
        check_shape(shape, 8, f"`{what}`", self.span, self.run)

    def apply(self, fns: np.ndarray, args: list, cells: tuple, result_cell: tuple) -> np.ndarray:
        raise NotImplementedError

    def uniform_function(self, fns: np.ndarray):
        """The function atom if every cell of ``fns`` holds the same one, else None."""
        return uniform_atom(fns)


def uniform_atom(fns: np.ndarray):
    """The atom every cell of the object array ``fns`` holds, or None if they differ (or there are none)."""
    if fns.size == 0:
        return None
    first = fns.reshape(-1)[0]  # (not .flat: it stops at 32 axes)
    if fns.size == 1 or all(s == 0 for s in fns.strides):
        return first
    for x in compact(fns).reshape(-1):
        if x is not first:
            return None
    return first


def compact(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` with every broadcast (stride-0) axis cut down to length 1."""
    if not any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
        return arr
    return arr[tuple(slice(0, 1) if s == 0 and n > 1 else slice(None) for s, n in zip(arr.strides, arr.shape))]


def check_size(atoms: int, itemsize: int, what: str, span: Span | None, run: RunConfig) -> None:
    if atoms * itemsize > run.max_bytes:
        raise RemoraRuntimeError(
            f"{what} would build an array of {atoms} atoms ({atoms * itemsize:,} bytes), over the limit of "
            f"{run.max_bytes:,} bytes",
            span,
        )


def check_shape(shape: tuple, itemsize: int, what: str, span: Span | None, run: RunConfig) -> None:
    """The one check before an engine or primitive gives NumPy a shape that came from the program or
    its data: a located error if NumPy cannot represent it, or if it is over the size limit."""
    nonzero, empty = 1, False
    for d in shape:
        if d:
            nonzero *= d
        else:
            empty = True
    try:
        fits = nonzero <= MAX_ATOMS
    except TypeError:
        return  # a ragged dimension (one length per box, in a ragged unbox): checked box by box
    if fits and len(shape) <= MAX_RANK and (empty or nonzero * itemsize <= run.max_bytes):
        return  # (the usual case, quickly: this is on every application's path)
    problem = shape_problem(shape)
    if problem is not None:
        raise RemoraRuntimeError(f"{what} would build an array {problem}", span)
    check_size(math.prod(shape), itemsize, what, span, run)


def positions(shape: tuple):
    """Every index of an array of ``shape``, row-major (``numpy.ndindex``), and nothing at once for
    an empty shape: ``ndindex`` first lists every position of every axis, so ``(0, 2^32)`` would
    take gigabytes to produce nothing."""
    return np.ndindex(*shape) if math.prod(shape) else iter(())
