"""Where the JAX backend needs JAX's 64-bit mode (spec D56): small functions, apart from the
operations (:mod:`.jax_ops`) and the compiled calls (:mod:`.jax_compiled`) that ask them.

``Int`` and ``Float`` are ``int64`` and ``float64``, which JAX makes only in its 64-bit mode;
``Int32``, ``Float32`` and ``Bool`` need no mode.  An evaluation whose inputs are all 32-bit is
first traced *narrow* — with no 64-bit scope entered anywhere, so a program whose values are all
32-bit runs in JAX's default configuration — and whatever in it asks for a 64-bit dtype raises
:class:`NeedsX64`: the evaluation is then traced again, wide, in the scope.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import jax
import numpy as np

from ..atoms import NUMBERS, WIDE
from .numpy_backend import DTYPES


def x64():
    """Remora's own 64-bit scope (never the user's global configuration): ``jax.enable_x64``,
    or before JAX had it, ``jax.experimental.enable_x64``."""
    scoped = getattr(jax, "enable_x64", None)
    if scoped is not None:
        return scoped(True)
    from jax.experimental import enable_x64

    return enable_x64()


# --- 64 bits only where needed (spec D56) -----------------------------------------------------
#
# ``Int`` and ``Float`` are ``int64`` and ``float64``, which JAX makes only in its 64-bit mode;
# ``Int32``, ``Float32`` and ``Bool`` need no mode at all.  An evaluation whose inputs are all
# 32-bit is first traced *narrow* — with no 64-bit scope entered anywhere, so a program whose
# types are all 32-bit runs in JAX's default configuration — and whatever in it asks for a
# 64-bit dtype raises :class:`NeedsX64`: the evaluation is then traced again, wide, in the scope.


class NeedsX64(Exception):
    """Raised while a narrow evaluation is traced, when it asks for a 64-bit dtype."""


class _Width(threading.local):
    """Whether the evaluation this thread runs now may make 64-bit arrays (False: narrow)."""

    wide = True


WIDTH = _Width()
#: the 64-bit dtypes (those that need JAX's 64-bit mode)
WIDE_DTYPES = frozenset(np.dtype(NUMBERS[n].dtype) for n in WIDE)


def wide_inputs(arrays) -> bool:
    """Whether an evaluation of these input arrays is wide from the start: one of them is 64-bit."""
    return any(np.dtype(a.dtype) in WIDE_DTYPES for a in arrays)


@contextlib.contextmanager
def evaluation_width(wide: bool):
    """Run an evaluation wide (in the 64-bit scope where it makes arrays) or narrow (never)."""
    outer, WIDTH.wide = WIDTH.wide, wide
    try:
        yield
    finally:
        WIDTH.wide = outer


def _x64():
    """The 64-bit scope where the evaluation running now is wide; no scope at all where it is narrow."""
    return x64() if WIDTH.wide else contextlib.nullcontext()


def x64_for(dtype) -> Any:
    """The 64-bit scope to hand a host array of ``dtype`` to JAX in (a 64-bit one outside it
    would become 32-bit), no scope for any other."""
    return x64() if np.dtype(dtype) in WIDE_DTYPES else contextlib.nullcontext()


def require_wide(what: Any) -> None:
    """Refuse, in a narrow evaluation, what needs 64 bits (the evaluation is then traced wide)."""
    if not WIDTH.wide:
        raise NeedsX64(what)


def dtype_of(rep: str):
    """The dtype of ``rep`` for the evaluation running now (a 64-bit one only in a wide one)."""
    if rep in WIDE:
        require_wide(rep)
    return DTYPES[rep]


def index_dtype():
    """The dtype of the engine's own positions and counts (``Int``: 64-bit, so a wide evaluation's)."""
    return dtype_of("Int")


#: the operations that make an array of the representation they are given (checked by ``dtype_of``)
_MADE_AS_ASKED = frozenset({"asarray", "empty", "full", "astype"})
#: 32-bit dtypes JAX gives where its 64-bit mode gives 64-bit ones
_NARROWED = frozenset({np.dtype(np.int32), np.dtype(np.float32)})


def check_narrow(name: str, args: tuple, out: Any, positional: bool) -> None:
    """In a narrow evaluation, refuse an operation that would differ in the wide one: a 64-bit
    operand or result (an ``Int`` computed on the host: JAX would make it 32-bit), or a 32-bit
    result none of its operands has (positions from ``argsort``, a count of flags: JAX's 64-bit
    mode makes those 64-bit).  ``positional``: the operation's later operands are positions."""
    arrays = [a for a in args if hasattr(a, "dtype")]
    arrays += [b for a in args if type(a) in (list, tuple) for b in a if hasattr(b, "dtype")]
    operands = arrays[:1] if positional else arrays
    dtype = getattr(out, "dtype", None)
    if any(np.dtype(a.dtype) in WIDE_DTYPES for a in operands) or (dtype is not None and np.dtype(dtype) in WIDE_DTYPES):
        raise NeedsX64(name)
    if (dtype is not None and name not in _MADE_AS_ASKED and np.dtype(dtype) in _NARROWED
            and all(np.dtype(a.dtype) != dtype for a in arrays)):
        raise NeedsX64(name)
