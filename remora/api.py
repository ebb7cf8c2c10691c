"""The Python API (contract §5): shape-checked Remora inside NumPy code.

* :func:`check` — the type of a program's last form;
* :func:`evaluate` — run a program with NumPy arrays bound as variables;
* :func:`function` — a Python callable from a Remora function, checked against its
  type on every call and lifted over extra leading axes like a Remora application;
* :func:`register` — a NumPy function as a typed primitive, lifting like any other.

Checking is cached: a program is parsed and checked once per distinct source and
input signature (dtypes and shapes), and a :class:`Function` checks each new
argument signature once, so calling it in a loop costs a dictionary lookup and
the evaluation itself.

Every entry point may be called from several threads at once: a call's inputs live in its own
session or its own evaluation environment, never in state another call reads.
"""

from __future__ import annotations

import io
import threading
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from . import syntax as S
from .driver import Session, deep_recursion
from .erase import erase
from .errors import RemoraError, RemoraTypeError, Source, Span
from .indices import concrete_shape
from .primitives.registry import PRIMITIVES, Primitive, _parse_sorts, define
from .runtime import RunConfig
from .typed import TyDefine, form_type
from .types import Type
from .values import BASE_OF_DTYPE, BoxValue, dtype_of

__all__ = ["check", "evaluate", "function", "register", "Function", "BoxValue"]

_SUPPORTED = ", ".join(BASE_OF_DTYPE[d] + f" ({d})" for d in BASE_OF_DTYPE)


# ---------------------------------------------------------------------------
# Inputs: NumPy arrays and Python scalars, exactly int64 / float64 / bool


def as_remora_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a Remora array, or a RemoraTypeError — never a silent conversion."""
    if isinstance(value, bool):
        return np.asarray(value, dtype=np.bool_)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise RemoraTypeError(f"input `{name}` = {value} does not fit in a 64-bit Int")
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype in BASE_OF_DTYPE:
            return array
        raise RemoraTypeError(
            f"input `{name}` has dtype {array.dtype}; Remora arrays hold {_SUPPORTED}: convert it explicitly, "
            f"e.g. with .astype(numpy.int64)"
        )
    raise RemoraTypeError(
        f"input `{name}` is a {type(value).__name__}; pass a NumPy array or a Python int, float or bool"
    )


def type_of_array(array: np.ndarray) -> Type:
    from .types import BASE_TYPES, TArr

    return TArr(BASE_TYPES[BASE_OF_DTYPE[array.dtype]], concrete_shape(array.shape))


def _signature(arrays: list[np.ndarray]) -> tuple:
    return tuple((a.dtype.char, a.shape) for a in arrays)


def _output(value: np.ndarray) -> np.ndarray:
    """A fresh, writeable array the caller owns, boxes included: engine results may be views or
    broadcasts of inputs, of definitions, of literal constants or of cached values, and boxes
    hold such arrays too.  Nothing the caller does to the result may reach any of those."""
    out = np.array(value, copy=True)
    if out.dtype == object:
        atoms = out.reshape(-1)  # a view: writing to it writes into ``out``
        for i, atom in enumerate(atoms):
            if isinstance(atom, BoxValue):
                atoms[i] = BoxValue(atom.indices, _output(atom.value))
    return out


# ---------------------------------------------------------------------------
# check / evaluate


def check(source: str, **inputs: Any) -> Type:
    """The type of the last top-level form of ``source`` (inputs, if given, are typed by dtype and shape)."""
    arrays = {k: as_remora_array(k, v) for k, v in inputs.items()}
    return _checked(source, tuple(sorted((k, a.dtype.char, a.shape) for k, a in arrays.items())))[1]


@lru_cache(maxsize=256)
def _checked(source: str, signature: tuple):
    """Parse, check and erase ``source`` once per input signature: (erased forms, last type)."""
    session = Session(run=RunConfig(stdin=io.StringIO("")))
    for name, char, shape in signature:
        session.checker.globals[name] = type_of_array(np.empty(shape, dtype=np.dtype(char)))
    typed = session.check_text(source, "<source>")
    if not typed:
        raise RemoraTypeError("the program has no forms", Span(Source("<source>", source), 1, 1, 1, 2))
    return [erase_form_cached(f) for f in typed], form_type(typed[-1])


def erase_form_cached(form):
    from .erase import erase_form

    return erase_form(form)


def evaluate(source: str, *, stdin: str = "", **inputs: Any) -> np.ndarray:
    """Run ``source`` with ``inputs`` bound as variables; the value of its last form."""
    arrays = {k: as_remora_array(k, v) for k, v in inputs.items()}
    forms, _ = _checked(source, tuple(sorted((k, a.dtype.char, a.shape) for k, a in arrays.items())))
    session = Session(run=RunConfig(stdin=io.StringIO(stdin)))
    session.engine.globals.update(arrays)
    value = None
    with deep_recursion():
        for form in forms:
            value = session.engine.eval_form(form)
    return _output(value)


# ---------------------------------------------------------------------------
# function


class Function:
    """A Remora function as a Python callable.

    Each call checks the arguments' dtypes and shapes against the function's type — an
    application, so extra leading axes become a frame the function is lifted over — and
    runs it.  Each distinct argument signature is checked once.
    """

    def __init__(self, source: str):
        self.source = source
        self._session = Session(run=RunConfig(stdin=io.StringIO("")))
        typed = self._session.check_text(source, "<function>")
        if not typed:
            raise RemoraTypeError("the function source has no forms")
        for form in typed[:-1]:
            self._session.evaluate(form)
        last = typed[-1]
        self.type = form_type(last)
        self._value = self._session.evaluate(last)
        self._source = Source("<function>", source)
        self._span = last.span if not isinstance(last, TyDefine) else last.value.span
        self._calls: dict[tuple, Any] = {}
        #: the checker is one per Function: new signatures are checked one at a time
        self._checking = threading.Lock()
        self._session.engine.globals["%function"] = self._value

    def __repr__(self) -> str:
        return f"remora.function({self.source!r}) : {self.type}"

    def __call__(self, *args: Any) -> np.ndarray:
        arrays = [as_remora_array(f"argument {i + 1}", a) for i, a in enumerate(args)]
        key = _signature(arrays)
        app = self._calls.get(key)
        if app is None:
            with self._checking:
                app = self._calls.get(key)
                if app is None:
                    app = self._calls[key] = self._application(arrays)
        # The arguments are this call's own environment: the engine is shared by every call.
        env = dict(zip(_argument_names(len(arrays)), arrays))
        with deep_recursion():
            return _output(self._session.engine.value(app, env))

    def _application(self, arrays: list[np.ndarray]):
        """The erased application of this function to arguments of these types (checked once)."""
        checker = self._session.checker
        checker.globals["%function"] = self.type
        names = _argument_names(len(arrays))
        for name, a in zip(names, arrays):
            checker.globals[name] = type_of_array(a)
        span = self._span
        node = S.App(S.Ref("%function", span), tuple(S.Ref(n, span) for n in names), span)
        with deep_recursion(span):
            typed = checker.check_form(S.ExprForm(node, span))
        return erase(typed.expr)  # type: ignore[union-attr]


def _argument_names(count: int) -> list[str]:
    """The names a call's arguments are bound to (``%`` keeps them apart from any Remora name)."""
    return [f"%argument{i + 1}" for i in range(count)]


def function(source: str) -> Function:
    """A callable for the Remora function ``source`` (its last form): see :class:`Function`."""
    return Function(source)


# ---------------------------------------------------------------------------
# register


def register(name: str, signature: str, fn: Callable[..., Any], variables: str = "", doc: str = "") -> None:
    """Make the NumPy function ``fn`` the Remora primitive ``name`` of the given type.

    ``signature`` is a function type as in the paper's Fig. 2 (``(-> ((Arr Float (Shp))) (Arr Float (Shp)))``),
    ``variables`` the sorts of its variables (``"n:Dim s:Shape t:Atom"``); quantifiers are added as for
    every primitive.  ``fn`` receives arrays whose leading axes are the frame and whose trailing axes are
    the argument cells, and must return the result cells behind the same leading axes — as a NumPy ufunc,
    or a function reducing over ``axis=-1``, does.
    """
    from .driver import load_prelude

    with _REGISTERING:  # the name is free and then taken in one step, whatever other threads do
        if name in PRIMITIVES:
            raise RemoraTypeError(f"a primitive named `{name}` already exists")
        if name in load_prelude()[0]:
            raise RemoraTypeError(f"`{name}` is defined by the prelude; choose another name")
        _define(name, signature, fn, variables, doc)
        _checked.cache_clear()


_REGISTERING = threading.Lock()


def _define(name: str, signature: str, fn: Callable[..., Any], variables: str, doc: str) -> None:
    """Add ``fn`` to the table of primitives as ``name`` (its signature kind-checked first)."""

    def impl(ctx, *args):
        try:
            out = np.asarray(fn(*args))
        except Exception as exc:  # the user's function failed: a located run-time error
            ctx.error(f"registered primitive `{name}` raised {type(exc).__name__}: {exc}")
        expected = tuple(ctx.frame) + tuple(ctx.result_cell)
        if out.shape != expected:
            ctx.error(f"registered primitive `{name}` returned an array of shape {out.shape}; its type says {expected}")
        if ctx.result_dtype != object and out.dtype != ctx.result_dtype:
            ctx.error(f"registered primitive `{name}` returned {out.dtype} atoms; its type says {ctx.result_dtype}")
        return out

    prim = Primitive(
        name, signature, _parse_sorts(variables), doc or f"Registered from Python: {fn!r}.", impl, builtin=False
    )
    prim.type  # kind-check the signature now, not at first use
    define(prim)


def _dtype_name(t: Type) -> str:
    return str(dtype_of(t))
