"""What both engines share at run time: index environments, closures, limits, and the
context a primitive's implementation is called with.

Index variables are bound at run time by ``Iλ`` application and by ``unbox``:
a ``Dim`` to an ``int``, a ``Shape`` to a tuple, an ``Atom`` type variable (from
an erased ``Tλ``) to the representation of its atoms (``"Int"``, …), and an ``Array``
type variable to its shape tuple carrying that representation along (:class:`ArrayTypeBinding`).
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Mapping

from ..backends import Backend, host
from ..backends.base import OBJECT
from ..erasure.erased import EIApp, EVar, Rep, TypeArg
from ..errors import RemoraRuntimeError, Span
from ..limits import MAX_ATOMS, MAX_RANK, atom_bytes, shape_problem
from ..statics.indices import Dim, Index, Shape, Var, eval_dim, eval_shape
from .layouts import RaggedDim
from .values import PrimFn

DEFAULT_MAX_BYTES = 10**9
#: How deeply λ applications may nest by default (contract §6: recursion deeper is an error).
DEFAULT_MAX_DEPTH = 10_000


@dataclass
class RunConfig:
    """Per-run settings: standard input, the trace stream (or None), the size limit."""

    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    trace: IO[str] | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    #: how many λ applications may be nested (recursion deeper is a located error, never Python's)
    max_depth: int = DEFAULT_MAX_DEPTH


class ArrayTypeBinding(tuple):
    """The run-time value of an Array-kinded type variable: its shape, and its atoms' representation."""

    rep: str

    def __new__(cls, dims, rep: str):
        obj = super().__new__(cls, dims)
        obj.rep = rep
        return obj


def shape_value(s: Shape, ienv: Mapping[Var, Any]) -> tuple[int, ...]:
    return eval_shape(s, ienv) if s.items else ()


def index_value(ix: Index, ienv: Mapping[Var, Any]):
    return eval_dim(ix, ienv) if isinstance(ix, Dim) else shape_value(ix, ienv)


def rep_value(rep: Rep, ienv: Mapping[Var, Any]) -> str:
    """The representation an erased annotation stands for (a variable's, as bound)."""
    if isinstance(rep, Var):
        bound = ienv.get(rep)
        if isinstance(bound, str):
            return bound
        return getattr(bound, "rep", OBJECT)
    return rep


def callee_name(fn) -> str | None:
    """The name an application's function is written as (through ``i-app``/``t-app``), if any:
    how an error inside a prelude function names the function the user called."""
    while isinstance(fn, EIApp):
        fn = fn.fn
    return fn.name if isinstance(fn, EVar) else None


def function_name(fns) -> str:
    """How size-limit messages name a function array: `iota/s`, or "this application"."""
    first = host.first(fns) if fns.size else None  # (no reshape: it would copy a broadcast array)
    return f"`{first.prim.name}`" if isinstance(first, PrimFn) else "this application"


def iapp_arg_value(arg, ienv: Mapping[Var, Any]):
    """The run-time value of one ``i-app`` argument: an index, or an erased type argument."""
    if isinstance(arg, TypeArg):
        rep = rep_value(arg.rep, ienv)
        if arg.shape is None:
            return rep
        return ArrayTypeBinding(shape_value(arg.shape, ienv), rep)
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
    """What a primitive's implementation sees: its backend (``xp``), the frame it is applied
    over, the cell shapes of its arguments, its result cell shape and representation, its index
    arguments; and services (applying functions, run-time checks, errors).

    Subclassed by each engine for :meth:`apply`.
    """

    __slots__ = ("xp", "frame", "cells", "result_cell", "indices", "span", "run", "result_rep")

    def __init__(self, xp: Backend, frame, cells, result_cell, indices, span: Span | None, run: RunConfig,
                 result_rep: str = OBJECT):
        self.xp = xp
        self.frame = tuple(frame)
        self.cells = cells
        self.result_cell = result_cell
        self.indices = indices
        self.span = span
        self.run = run
        #: the representation the application's static type gives its result (object when unknown)
        self.result_rep = result_rep

    @property
    def stdin(self) -> IO[str]:
        return self.run.stdin

    def error(self, message: str):
        raise RemoraRuntimeError(message, self.span)

    def require(self, ok, message: str, *culprits) -> None:
        """A run-time check on data: every atom of the Bool array ``ok`` holds, or the located
        error ``message`` (its ``{}`` filled with the ``culprits``' atoms where the first one
        fails).  Never a Python ``if`` on the data: a tracing backend can carry it out later."""
        self.xp.require(ok, message, culprits, self.error)

    def check_size(self, atoms: int, what: str, rep: str | None = None) -> None:
        """Refuse to build an array of more than the configured number of bytes (``what``: the
        primitive; ``rep``: its atoms' representation, by default the result's)."""
        check_size(atoms, atom_bytes(rep or self.result_rep), f"`{what}`", self.span, self.run)

    def check_total(self, counts, what: str, rep: str | None = None) -> int:
        """The sum of the non-negative Int vector ``counts`` (the lengths of the parts of one
        array), refused past the size limit.  Summed as Ints, huge counts would wrap around to a
        small or negative total that the check lets through: exactly, as Python ints, then."""
        xp, n = self.xp, counts.shape[0]
        if n and int(xp.max(counts)) > (2**63 - 1) // n:
            total = sum(int(c) for c in xp.to_host(counts))
        else:  # (no partial sum can wrap)
            total = int(xp.sum(counts)) if n else 0
        self.check_size(total, what, rep)
        return total

    def check_shape(self, shape: tuple, what: str, rep: str | None = None) -> None:
        """Refuse to build an array of a shape NumPy cannot hold, or over the size limit (its atoms
        of representation ``rep``, by default the result's)."""
        check_shape(shape, atom_bytes(rep or self.result_rep), f"`{what}`", self.span, self.run)

    def apply(self, fns, args: list, cells: tuple, result_cell: tuple):
        """Apply the frame of functions ``fns`` (over this context's frame) to ``args``."""
        raise NotImplementedError

    def uniform_function(self, fns):
        """The function atom if every cell of ``fns`` holds the same one, else None."""
        return host.uniform_atom(fns)


def check_size(atoms: int, itemsize: int, what: str, span: Span | None, run: RunConfig) -> None:
    """Refuse ``atoms`` atoms of ``itemsize`` bytes each (the representation's real size,
    :func:`~remora.limits.atom_bytes`) past the size limit."""
    check_bytes(atoms, atoms * itemsize, what, span, run)


def check_bytes(atoms: int, nbytes: int, what: str, span: Span | None, run: RunConfig) -> None:
    """Refuse ``atoms`` atoms taking ``nbytes`` bytes in all past the size limit."""
    if nbytes > run.max_bytes:
        raise RemoraRuntimeError(
            f"{what} would build an array of {atoms} atoms ({nbytes:,} bytes), over the limit of "
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
    if type(nonzero) is RaggedDim:
        return  # a ragged dimension (one length per box, in a ragged unbox): checked box by box
    if nonzero <= MAX_ATOMS and len(shape) <= MAX_RANK and (empty or nonzero * itemsize <= run.max_bytes):
        return  # (the usual case, quickly: this is on every application's path)
    problem = shape_problem(shape)
    if problem is not None:
        raise RemoraRuntimeError(f"{what} would build an array {problem}", span)
    check_size(math.prod(shape), itemsize, what, span, run)


def too_deep(run: RunConfig, span: Span | None) -> RemoraRuntimeError:
    """The error for recursion past the depth limit, at the application that went too deep."""
    return RemoraRuntimeError(
        f"recursion deeper than {run.max_depth:,} nested calls (the limit): a recursive function that never "
        "reaches its base case, or one to write as a loop with `while`",
        span,
    )


def positions(shape: tuple):
    """Every index of an array of ``shape``, row-major, and nothing at once for an empty shape
    (listing every position of every axis first, ``(0, 2^32)`` would take gigabytes to produce
    nothing)."""
    return itertools.product(*map(range, shape)) if math.prod(shape) else iter(())
