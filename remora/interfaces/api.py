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

This is where NumPy meets the backend seam: inputs are checked as NumPy arrays and handed to
the engine's backend (``from_numpy``), results come back as fresh NumPy arrays (``to_numpy``),
and a registered NumPy function gets NumPy arrays whatever backend runs the program.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from .. import backends
from ..backends.base import OBJECT, Backend
from ..backends.numpy_backend import REP_OF_DTYPE, NumpyBackend
from ..front import syntax as S
from .api_register import ON_NEW_PRIMITIVE, register
from .api_calls import _ARGUMENTS, _argument_names, _dynamic, _traced
from .api_derivatives import derived, jax_traced, traced_call
from .api_results import _output, _refuse_functions
from .compiled_calls import CompiledCalls, through
from .input_messages import conversion_hint as _conversion_hint, subclass_message as _subclass_message
from .session import EVALUATION_RECURSION_LIMIT, Session, deep_recursion, engine_on, make_engine, prelude_values
from ..erasure.erase import erase, erase_form
from ..errors import RemoraTypeError, Source, Span
from ..dynamics.runtime import RunConfig
from ..statics.typed import TyDefine, form_type
from ..statics.types import Type
from ..dynamics.values import BoxValue, type_of_array
from ..plans import PLANS, Miss, record

__all__ = ["check", "evaluate", "function", "grad", "register", "Function", "BoxValue"]

#: the dtypes of Remora's base atoms, and each one's atom type
BASE_OF_DTYPE = {dtype: rep for dtype, rep in REP_OF_DTYPE.items() if rep != OBJECT}
_SUPPORTED = ", ".join(BASE_OF_DTYPE[d] + f" ({d})" for d in BASE_OF_DTYPE)


# ---------------------------------------------------------------------------
# Arguments: the program text, and the inputs — NumPy arrays and Python scalars, exactly
# int64 / float64 / bool


def source_text(source: Any, caller: str) -> str:
    """``source`` if it is program text; else a TypeError saying what to pass."""
    if isinstance(source, str):
        return source
    if isinstance(source, (bytes, bytearray)):
        raise TypeError(f"{caller}: the program must be a str, not {type(source).__name__}; decode it first, "
                        "e.g. source.decode('utf-8')")
    raise TypeError(f"{caller}: the program must be a str of Remora source text, not {type(source).__name__}")


def as_remora_array(name: str, value: Any, what: str | None = None, xp: Backend | None = None) -> Any:
    """``value`` as a Remora array, or a RemoraTypeError — never a silent conversion.

    ``what`` is how messages call the value (``input `x```, ``argument 2``); the error is
    reported as concerning the input (``input x: error: …``) since no source text is at fault.  A NumPy array (or
    Python scalar) comes back as a NumPy array; an array of the library of the backend ``xp``
    (a JAX or Dask array) comes back as that backend's array, neither copied nor computed."""
    what = what or f"input `{name}`"
    origin = what.replace("`", "")  # (``input x``, ``argument 2``: what the report names)
    own = xp.from_user(value) if xp is not None else None
    if own is not None:
        dtype = np.dtype(own.dtype)
        if dtype in BASE_OF_DTYPE:
            return own
        raise RemoraTypeError(
            f"{what} has dtype {dtype}; Remora arrays hold {_SUPPORTED}: {_conversion_hint(dtype)}", origin=origin
        )
    if isinstance(value, bool):
        return np.asarray(value, dtype=np.bool_)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise RemoraTypeError(f"{what} = {value} does not fit in a 64-bit Int", origin=origin)
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, np.ndarray) and type(value) not in (np.ndarray, np.memmap):
        raise RemoraTypeError(_subclass_message(what, value, isinstance(value, np.ma.MaskedArray)), origin=origin)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype in BASE_OF_DTYPE:
            return array
        raise RemoraTypeError(
            f"{what} has dtype {array.dtype}; Remora arrays hold {_SUPPORTED}: {_conversion_hint(array.dtype)}",
            origin=origin,
        )
    library = f", a {xp.name} array" if xp is not None and xp.name != "numpy" else ""
    raise RemoraTypeError(
        f"{what} is a {type(value).__name__}; pass a NumPy array{library} or a Python int, float or bool",
        origin=origin,
    )


def _signature(arrays: Sequence[Any]) -> tuple:
    return tuple((np.dtype(a.dtype).char, tuple(a.shape)) for a in arrays)


def _engine_array(xp: Backend, array: Any, frame_axes: int | None = None) -> Any:
    """An input (see :func:`as_remora_array`) as an array of the engine's backend; ``frame_axes``
    (when known: an argument's axes beyond its parameter's cell) is where a chunking backend may
    cut it."""
    if not isinstance(array, np.ndarray):
        return array
    return xp.from_numpy(array) if frame_axes is None else xp.from_numpy(array, frame_axes=frame_axes)


# ---------------------------------------------------------------------------
# check / evaluate


def check(source: str, **inputs: Any) -> Type:
    """The type of the last top-level form of ``source``, without running anything.

    Parameters
    ----------
    source : str
        A Remora program: top-level forms, definitions and expressions.
    **inputs : numpy.ndarray, or a Python or NumPy int, float or bool
        Bound before the first form, typed by dtype and shape (``int64`` is ``Int``,
        ``float64`` ``Float``, ``bool`` ``Bool``); their values are not looked at.

    Returns
    -------
    remora.statics.types.Type
        Its ``str`` (and ``repr``) is the canonical type text ``remora check`` prints.

    Raises
    ------
    RemoraSyntaxError, RemoraTypeError
        The program does not read or check (located in ``source``, reported as ``<source>``;
        ``str(err)`` is the command line's report), or an input has a dtype Remora has no
        atom type for (``input x: error: …``).
    TypeError
        ``source`` is not a ``str``.

    Examples
    --------
    >>> import numpy as np, remora
    >>> remora.check("(+ [1 2 3] 1)")
    (Arr Int (Shp 3))
    >>> remora.check("(reduce + m)", m=np.ones((4, 2)))
    (Arr Float (Shp 2))
    >>> remora.check("(+ 1 2.5)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    remora.errors.RemoraTypeError: <source>:1:6: error: argument 2 of `+` has atom type Float, but `+` expects Int here ...
    """
    source = source_text(source, "remora.check")
    arrays = {k: as_remora_array(k, v) for k, v in inputs.items()}
    return _checked(source, tuple(sorted((k, a.dtype.char, a.shape) for k, a in arrays.items())))[1]


@lru_cache(maxsize=256)
def _checked(source: str, signature: tuple):
    """Parse, check and erase ``source`` once per input signature: (erased forms, last type,
    the key each input is declared under — a run supplies the inputs' values by these)."""
    session = Session(run=RunConfig(stdin=io.StringIO("")))
    keys = tuple(  # (one atom seen at the shape: an input may be larger than this process's memory)
        (name, session.declare(name, type_of_array(np.broadcast_to(np.empty((), np.dtype(char)), shape))))
        for name, char, shape in signature
    )
    typed = session.check_text(source, "<source>")
    if not typed:
        raise RemoraTypeError("the program has no forms", Span(Source("<source>", source), 1, 1, 1, 2))
    return [erase_form(f) for f in typed], form_type(typed[-1]), keys


def evaluate(source: str, *, stdin: str = "", backend: str = backends.DEFAULT, **inputs: Any) -> Any:
    """Run ``source`` with ``inputs`` bound as variables: the value of its last form.

    Checked (once per source and input signature: dtypes and shapes) before anything runs,
    and planned once per signature, so running it again on such inputs replays the plan.

    Parameters
    ----------
    source : str
        A Remora program; the value of its last form is returned.
    stdin : str, optional
        The text ``read-nums`` reads.
    backend : str, optional
        ``"numpy"`` (the default), ``"jax"`` (``pip install 'remora[jax]'``) or ``"dask"``.
    **inputs : numpy.ndarray, a Python or NumPy int, float or bool, or the backend's array
        Bound before the first form, typed by dtype and shape (``int64``, ``float64`` or
        ``bool``; anything else is refused, naming it, never converted).

    Returns
    -------
    numpy.ndarray
        A fresh array the caller owns (0-d for a scalar; boxes as :class:`remora.BoxValue`
        with ``.indices`` and ``.value``); a ``jax.Array`` on JAX, a Dask array on Dask.

    Raises
    ------
    RemoraSyntaxError, RemoraTypeError
        The program does not read or check, or its value holds functions (see
        :func:`function`): located in ``source``, before anything runs.  Or an input Remora
        cannot take (``input x: error: input `x` has dtype float32; …``).
    RemoraRuntimeError
        A run-time error (division by zero, an index out of range, a size limit), located.
    TypeError, ValueError, ImportError
        ``source`` or ``stdin`` is not a ``str``; an unknown backend; one not installed.

    Examples
    --------
    >>> import numpy as np, remora
    >>> remora.evaluate("(+ x 1)", x=np.arange(3))
    array([1, 2, 3])
    >>> box = remora.evaluate("(iota/v n)", n=3)[()]
    >>> box.indices, box.value
    ((3,), array([0, 1, 2]))
    >>> remora.evaluate("(/ 1 x)", x=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    remora.errors.RemoraRuntimeError: <source>:1:1: error: ...division by zero...
    """
    if type(source) is str and type(stdin) is str and type(backend) is str:
        call = _COMPILED_CALLS.get((source, stdin, backend), inputs.items())
        if call is not None:  # (these inputs' types, dtypes and shapes were checked before)
            return call(inputs.values())
    source = source_text(source, "remora.evaluate")
    if not isinstance(stdin, str):
        raise TypeError(f"remora.evaluate: stdin must be a str (the text read-nums reads), not {type(stdin).__name__}")
    xp = _backend(backend, "remora.evaluate")
    arrays = {k: as_remora_array(k, v, xp=xp) for k, v in inputs.items()}
    signature = tuple(sorted((k, *_signature([a])[0]) for k, a in arrays.items()))
    forms, last_type, keys = _checked(source, signature)
    if engine_on("plans", backend) != "plans":  # (another library specialises its own way)
        return _evaluate_on(backend, forms, last_type, keys, arrays, stdin, ((source, stdin, backend), list(inputs.items())))
    program = _Program.of(source, signature, forms, last_type)
    inputs_by_key = {key: program.xp.from_numpy(arrays[name]) for name, key in keys}
    return _output(program.xp, program.run(forms, inputs_by_key, stdin))


def _evaluate_on(backend: str, forms: list, last_type: Type, keys: tuple, arrays: dict, stdin: str,
                 kept: tuple) -> Any:
    """``remora.evaluate`` on a backend that is not planned: the forms run in a session of their
    own (on a compiling backend, the call is kept as ``kept`` says: see :func:`through`)."""
    _refuse_functions(last_type, forms[-1].span, "the value of this program",
                      "remora.function(source) gives a Python callable for a function")
    xp, shared = backends.get(backend), prelude_values("frames", backend)  # (the prelude: never made in a trace)

    def run(values: dict) -> Any:
        """The whole program as a function of its inputs (compiled as one, on a compiling backend:
        room for deep recursion is made when it runs, not on every call of the compiled function)."""
        engine = make_engine("frames", RunConfig(stdin=io.StringIO(stdin)), backend)
        engine.globals.update(shared)
        for name, key in keys:
            engine.globals[key] = values[name]
        value = None
        with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
            for form in forms:
                value = engine.eval_form(form)
        return value

    def trace(values: dict) -> tuple:
        """The program's plan on host ``values`` (what the backend lowers: spec D48)."""
        G = {**shared, **{key: values[name] for name, key in keys}}
        with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
            engine = make_engine("frames", RunConfig(stdin=io.StringIO(stdin)), backend)
            return (*record(engine, lambda tracing, env: [tracing.eval_form(f) for f in forms][-1], {}, G), G, {})

    run.trace = trace  # type: ignore[attr-defined]
    handed = {name: _engine_array(xp, a) for name, a in arrays.items()}
    key, given = kept
    return through(_COMPILED_CALLS, key, given, xp, forms[-1], run, handed, _output)


#: the compiled calls :func:`evaluate` keeps, by (source, stdin, backend)
_COMPILED_CALLS = CompiledCalls()


class _Globals(dict):
    """A program's inputs by key, then the prelude's values (read, never copied, per run)."""

    __slots__ = ("prelude",)
    prelude: dict

    def __missing__(self, key: str):
        return self.prelude[key]


class _Program:
    """What ``remora.evaluate`` keeps of a program it has seen, per input signature: the plan
    of the whole program (every form, traced as one), keyed by this object.  An evaluation
    then costs the plan's array calls, the inputs' conversion and the result's copy."""

    _seen: dict[tuple, "_Program"] = {}
    _lock = threading.Lock()

    def __init__(self, forms: list, last_type: Type) -> None:
        _refuse_functions(last_type, forms[-1].span, "the value of this program",
                          "remora.function(source) gives a Python callable for a function")
        self.forms = forms
        self.engine = make_engine("frames", RunConfig(stdin=io.StringIO("")))
        self.xp = self.engine.xp

    @classmethod
    def of(cls, source: str, signature: tuple, forms: list, last_type: Type) -> "_Program":
        """The program of these checked ``forms`` (a plan reads inputs by the keys they were
        declared under: forms checked again — by another thread, after the check cache forgot
        them — are another program)."""
        key = (source, signature)
        program = cls._seen.get(key)
        if program is None or program.forms is not forms:
            with cls._lock:
                program = cls._seen.get(key)
                if program is None or program.forms is not forms:
                    if len(cls._seen) > 256:
                        cls._seen.clear()
                    program = cls._seen[key] = cls(forms, last_type)
        return program

    def run(self, forms: list, inputs: dict, stdin: str):
        """The value of the last form: replayed, traced, or (effects, …) evaluated dynamically."""
        G = _Globals(inputs)
        G.prelude = prelude_values("frames")
        with self.xp.quiet():
            return PLANS.run(self, G, {}, lambda: self._trace(forms, G), lambda: self._dynamic(forms, inputs, stdin))

    def _trace(self, forms: list, G: _Globals):
        def body(tracing, env):
            value = None
            for form in forms:
                value = tracing.eval_form(form)
            return value

        with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
            return record(self.engine, body, {}, {**G.prelude, **G})

    @staticmethod
    def _dynamic(forms: list, inputs: dict, stdin: str):
        session = Session(engine="frames", run=RunConfig(stdin=io.StringIO(stdin)))
        for key, value in inputs.items():
            session.supply(key, value)
        value = None
        with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
            for form in forms:
                value = session.engine.eval_form(form)
        return value


def _backend(name: Any, caller: str) -> Backend:
    """The backend called ``name``: a ValueError naming the known ones, or an ImportError saying
    which extra to install."""
    if not isinstance(name, str):
        raise TypeError(f"{caller}: backend must be a str naming a backend ({', '.join(backends.KNOWN)}), "
                        f"not {type(name).__name__}")
    return backends.get(name)


# ---------------------------------------------------------------------------
# function


class Function:
    """A Remora function as a Python callable (made by :func:`function`).

    Each call checks the arguments' dtypes and shapes against the function's type — an
    application, so extra leading axes become a frame the function is lifted over — and
    runs it.  Each distinct argument signature is checked once (the most recent
    :attr:`SIGNATURES` are kept).  Calls may come from several threads at once.

    Attributes
    ----------
    type : remora.statics.types.Type
        The function's type, as ``remora check`` prints it.
    source : str
        The source it was made from.
    backend : str
        The backend it runs on.

    See :func:`function` for examples.
    """

    def __init__(self, source: str, backend: str = backends.DEFAULT, *, derive: str | None = None):
        self.source = source = source_text(source, "remora.function")
        self.backend = backend
        self._derive = derive  # (remora.grad)
        self._on_numpy: Function | None = None  # (the NumPy twin JAX's transformations call)
        self._xp = _backend(backend, "remora.function")
        self._traced = jax_traced() if backend == "jax" else None  # (api_jax.is_traced)
        self._session = Session(run=RunConfig(stdin=io.StringIO("")), backend=backend)
        self._planned = self._session.engine_name == "plans"
        #: whether NumPy arrays are this backend's own (arguments need no conversion once seen)
        self._replays = self._planned and type(self._xp).from_numpy is NumpyBackend.from_numpy
        typed = self._session.check_text(source, "<function>")
        if not typed:
            raise RemoraTypeError("the function source has no forms", Span(Source("<function>", source), 1, 1, 1, 2))
        for form in typed[:-1]:
            self._session.evaluate(form)
        last = typed[-1]
        self.type = form_type(last)
        self._value = self._session.evaluate(last)
        self._source = Source("<function>", source)
        self._span = last.span if not isinstance(last, TyDefine) else last.value.span
        if derive is not None:  # (remora.grad: the derivative of the function the source denotes)
            self.type, self._value = derived(self._session, derive, self._value, self.type, self._span)
        self._session.bind("%function", self._value, self.type)
        #: by argument signature, the most recently used :attr:`SIGNATURES` kept: [the checked
        #: application, each argument's frame axes, the plan that ran last (tried first)]
        self._calls: OrderedDict[tuple, list] = OrderedDict()
        #: on a compiling backend, the compiled calls kept by the arguments' fast signature
        self._compiled_calls = CompiledCalls(self.SIGNATURES)
        #: the checker is one per Function: new signatures are checked one at a time
        self._checking = threading.Lock()

    def __repr__(self) -> str:
        backend = "" if self.backend == backends.DEFAULT else f", backend={self.backend!r}"
        return f"remora.function({self.source!r}{backend}) : {self.type}"

    def __call__(self, *args: Any) -> Any:
        """The function applied to ``args`` (NumPy arrays, Python or NumPy scalars, or arrays
        of the backend's library; one per parameter): a fresh array, as :func:`evaluate`
        returns.  A ``RemoraTypeError`` for arguments whose types do not fit (located in the
        function's source), a ``RemoraRuntimeError`` for an error while it runs."""
        xp = self._xp  # (NumPy arrays of a signature met before: nothing to convert, check or decide)
        if self._traced is not None and self._traced(args):  # (inside jax.grad, jax.jit, jax.vmap: D70)
            return self._under_jax(args)
        if self._compiled_calls:
            call = self._compiled_calls.get(None, enumerate(args))
            if call is not None:  # (these arguments' types, dtypes and shapes were checked before)
                return call(args)
        arrays: Sequence[Any] = args
        entry = self._calls.get(key := tuple([(a.dtype, a.shape) if type(a) is np.ndarray else None
                                              for a in args])) if self._replays else None
        if entry is None:
            arrays = [a if type(a) is np.ndarray and a.dtype in BASE_OF_DTYPE
                      else as_remora_array(f"argument {i + 1}", a, f"argument {i + 1}", xp) for i, a in enumerate(args)]
            key = tuple([(a.dtype, a.shape) for a in arrays]) if self._planned else _signature(arrays)
            entry = self._calls.get(key) or self._signature(key, arrays)
        try:
            self._calls.move_to_end(key)
        except KeyError:  # (another thread let it go meanwhile: it is still this call's)
            pass
        app = entry[0]
        # The arguments are this call's own environment: the engine is shared by every call.
        engine = self._session.engine
        if not self._planned:
            env = {name: _engine_array(xp, a, k) for name, a, k in zip(_ARGUMENTS, arrays, entry[1])}

            def run(values: dict) -> Any:
                with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
                    return engine.value(app, values)

            def trace(values: dict) -> tuple:
                """The application's plan on host ``values`` (what the backend lowers: spec D48)."""
                value, plan = _traced(engine, app, values)
                return value, plan, engine.globals, values

            run.trace = trace  # type: ignore[attr-defined]

            # (one compiled function per argument signature on a compiling backend: ``app`` is
            # this signature's own node)
            return through(self._compiled_calls, None, list(enumerate(args)), xp, app, run, env, _output)
        env = dict(zip(_ARGUMENTS, arrays if self._replays else map(xp.from_numpy, arrays)))
        plan = entry[2]
        if plan is not None:  # the plan that fitted last time: straight to it
            try:
                value = plan.run(engine.globals, env)
            except Miss:
                pass
            else:
                PLANS.stats["replayed"] += 1
                return _output(xp, value)
        value = PLANS.run(app, engine.globals, env, lambda: _traced(engine, app, env), lambda: _dynamic(engine, app, env))
        kept = PLANS.plans(app)
        entry[2] = kept[-1] if kept else None
        return _output(xp, value)

    def _under_jax(self, args: tuple) -> Any:
        """The call as JAX's transformations see it (:mod:`.api_jax`)."""
        self._on_numpy = self._on_numpy or Function(self.source, derive=self._derive)
        return traced_call(self._on_numpy, args, _argument_names(len(args)))

    #: argument signatures a Function keeps (their checked applications and plans), the most
    #: recently used first: a Function called on ever new shapes does not grow without bound
    SIGNATURES = 256

    def _signature(self, key: tuple, arrays: Sequence[Any]) -> list:
        """The entry of a new argument signature: checked once (one at a time), its frame axes
        computed once, the least recently used signature let go past :attr:`SIGNATURES`."""
        with self._checking:
            entry = self._calls.get(key)
            if entry is None:
                app = self._application(arrays)
                entry = self._calls[key] = [app, _frame_axes(app, arrays), None]
                while len(self._calls) > self.SIGNATURES:
                    self._calls.popitem(last=False)
            return entry

    def _application(self, arrays: Sequence[Any]):
        """The erased application of this function to arguments of these types (checked once)."""
        names = _argument_names(len(arrays))
        span = self._span
        node = S.App(S.Ref("%function", span), tuple(S.Ref(n, span) for n in names), span)
        # The arguments are locals of the application (each call binds them in its own
        # environment); the function is the session's global %function.
        arguments = {name: type_of_array(a) for name, a in zip(names, arrays)}
        with deep_recursion(span):
            typed = self._session.checker.check_form(S.ExprForm(node, span), arguments)
        _refuse_functions(form_type(typed), span, "the result of this function",
                          "apply the functions it returns inside the Remora source")
        return erase(typed.expr)  # type: ignore[union-attr]


def _frame_axes(app: Any, arrays: Sequence[Any]) -> list[int | None]:
    """How many leading axes of each argument are frame axes (its rank beyond the parameter's
    cell), where the checked application says so."""
    cells = getattr(app, "cells", ())
    out: list[int | None] = []
    for i, a in enumerate(arrays):
        dims = cells[i].dims() if i < len(cells) and hasattr(cells[i], "dims") else None
        out.append(a.ndim - len(dims) if dims is not None and len(dims) <= a.ndim else None)
    return out


def function(source: str, backend: str = backends.DEFAULT) -> Function:
    """A Python callable for the Remora function ``source`` denotes (its last form).

    Parameters
    ----------
    source : str
        A Remora program whose last form is a function (a ``λ``, a name of one, a definition
        of one, or a polymorphic one: its type and index arguments are inferred per call).
    backend : str, optional
        ``"numpy"`` (the default), ``"jax"`` or ``"dask"``, as for :func:`evaluate`.

    Returns
    -------
    Function
        Called with arrays, it applies the function to them exactly as a Remora application
        would: extra leading axes are a frame the function is lifted over.  Each argument
        signature (dtypes and shapes) is checked once, then replayed.

    Raises
    ------
    RemoraSyntaxError, RemoraTypeError
        ``source`` does not read or check (located in it, reported as ``<function>``).

    Examples
    --------
    >>> import numpy as np, remora
    >>> total = remora.function("(λ ((x [Float 3])) (sum x))")
    >>> total(np.ones(3))
    array(3.)
    >>> total(np.ones((2, 3)))  # a frame of two cells: lifted
    array([3., 3.])
    >>> total(np.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    remora.errors.RemoraTypeError: <function>:1:1: error: argument 1 of the function has shape (Shp 2), but ...
    """
    return Function(source, backend)


def grad(source: str, backend: str = backends.DEFAULT) -> Function:
    """A Python callable for ``(grad f)``, ``f`` the Remora function ``source`` denotes (its
    last form): called with ``f``'s arguments, the gradient of ``f`` (a ``Float`` scalar) with
    respect to the first, the others held fixed; over extra leading axes, each cell's gradient."""
    return Function(source, backend, derive="grad")


# ---------------------------------------------------------------------------
# register (:mod:`.api_register`): what it checked and compiled, the API forgets


def _forget_checked_programs() -> None:
    """What was checked and compiled before a new primitive may mean something else now."""
    _checked.cache_clear()
    _Program._seen.clear()
    _COMPILED_CALLS.clear()


ON_NEW_PRIMITIVE.append(_forget_checked_programs)
