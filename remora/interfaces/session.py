"""The pipeline, stage by stage: read → parse → typecheck (→ erase → evaluate).

A :class:`Session` holds what persists between top-level forms — the typing
environment, and the values of definitions — so the command line, the REPL and
the Python API are three front doors to the same functions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterator

from .. import backends
from ..backends import host
from ..erasure import erased as E
from ..front import syntax as S
from ..statics import typed as T
from ..errors import RemoraError, RemoraSyntaxError, Span
from ..front.parse import parse_top
from ..front.reader import read
from . import prelude_cache
from .prelude_cache import Prelude
from .show import show_value
from ..dynamics.engine import Frames
from ..dynamics.rebatch import unbatched
from ..erasure.erase import erase_form
from ..dynamics.runtime import DEFAULT_MAX_BYTES, RunConfig
from ..statics.typecheck import Checker
from ..statics.types import Type
from ..dynamics.values import type_of_array

if TYPE_CHECKING:
    from ..dynamics.reference import Reference

RECURSION_LIMIT = 20000
#: Python's recursion limit while a program runs: room for the engines' nested λ applications up
#: to their own limit (RunConfig.max_depth, 10⁴ by default: some 15 to 30 Python frames each)
EVALUATION_RECURSION_LIMIT = 400_000


class _Room:
    """The recursion limit is one per process: raised while any thread needs the room, restored
    when the last one is done (a thread restoring it early would leave another one short)."""

    lock = threading.Lock()
    users = 0
    saved = 0


@contextlib.contextmanager
def deep_recursion(span: Span | None = None, limit: int = RECURSION_LIMIT) -> Iterator[None]:
    """Room for deeply nested (but bracket-limited) programs; a located error if even that runs out."""
    with _Room.lock:
        if _Room.users == 0:
            _Room.saved = sys.getrecursionlimit()
        _Room.users += 1
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _Room.saved, limit))
    try:
        yield
    except RecursionError:
        raise RemoraSyntaxError("this form is nested too deeply to process", span) from None
    finally:
        with _Room.lock:
            _Room.users -= 1
            if _Room.users == 0:
                sys.setrecursionlimit(_Room.saved)


class Session:
    """Checker and evaluator state across top-level forms.

    ``engine`` is ``"plans"`` (the default: each form specialised to its inputs' shapes and
    replayed, :mod:`remora.plans`), ``"frames"`` (the whole-frame engine, dynamically: the plans'
    fallback, selectable to compare) or ``"reference"`` (the paper's rules one step at a time);
    ``backend`` names the array library it runs on (contract §8: ``"numpy"``, the default, or an
    optional extra's; :func:`engine_on` says which engine runs on it).
    """

    def __init__(self, engine: str = "plans", run: RunConfig | None = None, prelude: bool = True,
                 backend: str = backends.DEFAULT) -> None:
        self.checker = Checker()
        self.run = run or RunConfig()
        engine = engine_on(engine, backend)
        self.engine_name = engine
        self.engine = make_engine(engine, self.run, backend)
        self._prelude = prelude
        #: what this session has defined and bound, in order — each definition's checked form,
        #: each input's key — so the same definitions can be made on another backend
        #: (:class:`~remora.interfaces.backend_switch.OnBackends`)
        self.history: list[T.TyForm | str] = []
        if prelude:
            bindings, _ = load_prelude()
            self.checker.globals.update(bindings)
            self.engine.globals.update(prelude_values("frames" if engine == "plans" else engine, backend))

    # --- inputs: names bound before (or between) the forms that use them -----------------

    def bind(self, name: str, value: Any, t: Type | None = None) -> str:
        """Bind ``name`` to the array ``value`` for the forms checked from now on: its type
        (from dtype and shape, unless ``t`` says) for the checker, its value for the engine,
        under a fresh key — a new binding that shadows, never changes, an earlier one of the
        same name (a prelude function's included: the prelude keeps its own).  The key is
        returned.  This is how inputs enter a session."""
        key = self.declare(name, t if t is not None else type_of_array(value))
        self.supply(key, value)
        self.history.append(key)
        return key

    def declare(self, name: str, t: Type) -> str:
        """The checker's half of :meth:`bind`: ``name`` has type ``t`` from now on; its value
        comes later, by key (:meth:`supply`) — to check once and run with many values."""
        return self.checker.declare(name, t)

    def supply(self, key: str, value: Any) -> None:
        """The engine's half of :meth:`bind`: the value of the global ``key``."""
        self.engine.globals[key] = value

    def tracer(self, trace: IO[str]) -> Reference:
        """A reference engine that prints its steps to ``trace`` and sees every global this
        session has — the prelude's, its definitions, its inputs — with the values it has."""
        from ..dynamics.reference import Reference

        engine = Reference(RunConfig(stdin=self.run.stdin, trace=trace, max_bytes=self.run.max_bytes),
                           self.engine.xp)
        if isinstance(self.engine, Reference):
            engine.globals = self.engine.globals  # (tracing an expression defines nothing)
        else:
            engine.globals = {key: unbatched(v) for key, v in self.engine.globals.items()}
        return engine

    def forms(self, text: str, name: str, first_line: int = 1) -> list[S.TopForm]:
        """Read and parse every top-level form (syntax errors surface before any checking);
        ``first_line`` numbers the text's first line (a REPL input's line in its input stream)."""
        with deep_recursion():
            return [parse_top(node) for node in read(text, name, first_line=first_line)]

    def check_form(self, form: S.TopForm) -> T.TyForm:
        with deep_recursion(form.span):
            return self.checker.check_form(form)

    def check_text(self, text: str, name: str = "<expr>") -> list[T.TyForm]:
        return [self.check_form(f) for f in self.forms(text, name)]

    @property
    def backend(self) -> str:
        """The name of the array library this session runs on."""
        return self.engine.xp.name

    def evaluate(self, form: T.TyForm) -> Any:
        """Erase and run one checked form; a definition's value is remembered."""
        value = self.replay(form)
        if isinstance(form, T.TyDefine):
            self.history.append(form)
        return value

    def replay(self, form: T.TyForm) -> Any:
        """:meth:`evaluate`, leaving the history as it is (a definition made again elsewhere)."""
        erased = self.last_erased = erase_form(form)
        with deep_recursion(form.span, EVALUATION_RECURSION_LIMIT):
            if self.engine.xp.compiles and isinstance(self.engine, Frames):
                return self._compiled(erased)
            return self.engine.eval_form(erased)

    def _compiled(self, form) -> Any:
        """One form through the backend's compiler (contract §8): a function of the arrays this
        session has bound — its inputs and definitions, passed as arguments rather than baked into
        the compiled code — evaluated by the engine over the backend's traced values.  Every
        other global (the prelude's, functions, boxes) is fixed for the session's life: keys
        are never rebound."""
        engine = self.engine
        xp = engine.xp
        shared = prelude_values("frames", xp.name) if self._prelude else {}
        inputs = {key: v for key, v in engine.globals.items()
                  if key not in shared and not host.is_host(v) and xp.owns(v)}
        define = isinstance(form, E.EDefine)

        def run(arrays: dict) -> Any:
            if not xp.tracing():
                return engine.eval_form(form)  # (eagerly: exactly the engine's own evaluation)
            saved = engine.globals
            engine.globals = {**saved, **arrays}
            try:
                return engine.value(form.value if define else form.expr)
            finally:
                engine.globals = saved

        def trace(arrays: dict) -> tuple:
            """The form's plan on host ``arrays`` (what the backend lowers: spec D48)."""
            from ..plans import record
            from ..plans.engine import _form_value

            G = {**engine.globals, **arrays}
            value, plan = record(engine, lambda tracing, env: _form_value(tracing, form), {}, G)
            return value, plan, G, {}

        run.trace = trace  # type: ignore[attr-defined]
        value = xp.compile(form, run, inputs)
        if define and form.key not in engine.globals:
            engine.globals[form.key] = xp.to_numpy(value)  # (what the engine holds between forms)
        return value

    def run_text(self, text: str, name: str = "<expr>") -> Iterator[tuple[T.TyForm, Any]]:
        """Check the whole program, then evaluate its forms in order, yielding each value."""
        typed = self.check_text(text, name)
        for form in typed:
            yield form, self.evaluate(form)


_prelude: Prelude | None = None
_prelude_values: dict[tuple[str, str], dict] = {}
_prelude_lock = threading.Lock()


def _serialised_by(lock: threading.Lock):
    """Decorator: calls of the function take turns."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with lock:
                return fn(*args, **kwargs)

        return wrapper

    return decorate


def prelude_files() -> list[Path]:
    return prelude_cache.prelude_files()


@_serialised_by(_prelude_lock)  # loaded once, even when several threads start at the same time
def load_prelude() -> tuple[dict, list]:
    """The prelude's definitions — their bindings (name → :class:`~remora.statics.typed.Global`) and
    erased forms — loaded once per process (from the cache of :mod:`.prelude_cache`, or checked),
    so their keys are the same in every session."""
    global _prelude
    if _prelude is None:
        _prelude = prelude_cache.load(_check_prelude)
    return _prelude.bindings, _prelude.forms


def prelude_from_cache() -> bool:
    """Whether this process read the prelude from the cache rather than checking it."""
    load_prelude()
    return bool(_prelude and _prelude.from_cache)


def _check_prelude(texts: list[tuple[str, str]]) -> tuple[dict, list]:
    """Check and erase the prelude's texts; each definition gets its own library key."""
    checker = Checker()
    forms = []
    with deep_recursion():
        for file_name, text in texts:
            for node in read(text, f"prelude/{file_name}", library=True):
                form = parse_top(node)
                key = T.library_key(form.name, len(forms)) if isinstance(form, S.Define) else None
                forms.append(erase_form(checker.check_form(form, key=key)))
    return dict(checker.globals), forms


def prelude_values(engine: str, backend: str = backends.DEFAULT) -> dict:
    """The values of the prelude's definitions on ``engine``, by key: evaluated once per process and
    engine, and shared by every session (they are functions, and arrays made read-only, so no
    session can change what another sees; results handed to users are copies anyway)."""
    values = _prelude_values.get((engine, backend))
    if values is not None:  # (the usual case: no lock once they are made)
        return values
    _, forms = load_prelude()
    with _prelude_lock:
        values = _prelude_values.get((engine, backend))
        if values is None:
            evaluator = make_engine(engine, RunConfig(), backend)
            for form in forms:
                evaluator.eval_form(form)
            xp = evaluator.xp
            values = _prelude_values[engine, backend] = {
                key: xp.read_only(value) if xp.owns(value) else value
                for key, value in evaluator.globals.items()
            }
    return values


def engine_on(engine: str, backend: str) -> str:
    """The engine that runs for ``engine`` on ``backend``: plans are NumPy's specialisation; on
    another library ``plans`` means the whole-frame engine, which that library specialises its
    own way (JAX compiles it with ``jax.jit``, Dask makes a task graph; decisions.md D47)."""
    return "frames" if engine == "plans" and backend != backends.DEFAULT else engine


def make_engine(name: str, run: RunConfig, backend: str = backends.DEFAULT):
    """The engine called ``name`` on the backend called ``backend`` (a ValueError naming the known
    ones for an unknown name; :class:`~remora.backends.BackendUnavailable` for a known backend
    whose optional extra is not installed)."""
    xp = backends.get(backend)
    if xp.max_bytes is not None and run.max_bytes == DEFAULT_MAX_BYTES:
        # (a chunking backend's arrays are held a block at a time: its own limit, D49)
        run = dataclasses.replace(run, max_bytes=xp.max_bytes)
    if name == "reference":
        from ..dynamics.reference import Reference  # (imported by the runs that use it)

        return Reference(run, xp)
    if name == "plans":
        from ..plans.engine import Planned

        return Planned(run, xp)
    if name == "frames":
        return Frames(run, xp)
    raise ValueError(f"unknown engine {name!r} (expected 'plans', 'frames' or 'reference')")


def describe_form(form: T.TyForm) -> str:
    """What ``remora check`` prints for a form: ``name : TYPE`` or ``TYPE``."""
    t = T.form_type(form)
    return f"{form.name} : {t}" if isinstance(form, T.TyDefine) else str(t)


def show_result(form: T.TyForm, value: Any) -> str:
    """What ``remora eval`` prints for an expression's value."""
    return show_value(value, T.form_type(form))


__all__ = ["Session", "describe_form", "RemoraError", "deep_recursion"]
