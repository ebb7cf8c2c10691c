"""Plans: a form specialised once to its inputs' dtypes and shapes, then replayed.

Pipeline: erase → **plan** → run.  :func:`record` runs a form on the whole-frame engine over a
:class:`~.trace.TracingBackend` and turns what it did into a generated Python function of backend
calls (:mod:`.codegen`); :class:`PlanCache` keeps plans per key (a form and the signature its
caller checked) — several variants per key where data decided something (a guard) — and runs
the first that fits, tracing a new one when none does.  A form the tracer cannot follow runs
on the dynamic engine (:class:`~remora.dynamics.engine.Frames`), which stays the plans'
fallback for what depends on data; spec/dynamics.md ("Plans") says what is planned.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable

from ..backends.base import OBJECT
from ..backends import host
from ..dynamics.batched import Val
from ..dynamics.layouts import BoxFrame
from ..dynamics.engine import Frames
from ..dynamics.runtime import Closure, RunConfig, callee_name
from ..dynamics.values import BoxValue, PrimFn
from ..erasure import erased as E
from ..errors import RemoraError
from .codegen import Source, emit_steps, literal, describe
from .control import trace_if, trace_while
from .loops import trace_loop
from ..ir.passes import rewrite
from ..ir.core import Miss, Recording, Sym, Untraceable, concrete
from ..ir.program import Program, freeze
from .trace import TracingBackend

__all__ = ["Plan", "PlanCache", "PLANS", "Miss", "Untraceable", "record"]


class TracingFrames(Frames):
    """The whole-frame engine over a tracing backend: globals it reads become the plan's inputs
    (arrays, checked by dtype and shape) or its assumptions (functions, checked by identity)."""

    def __init__(self, run: RunConfig, tracer: TracingBackend, globals_: dict):
        super().__init__(run, tracer)
        self.globals = globals_
        self.loads: dict[str, Any] = {}  # key → Sym (an array input) or the function value assumed
        self.defined: set[str] = set()

    def ev(self, e, env, ienv, batch):
        if type(e) is E.EVar and e.key is not None:
            return Val(self.global_value(e.key), 0)
        return Frames.ev(self, e, env, ienv, batch)

    def global_value(self, key: str):
        if key in self.defined:
            return self.globals[key]
        hit = self.loads.get(key)
        if hit is not None:
            return hit
        value = self.globals[key]
        if type(value) is not Sym and getattr(value, "dtype", None) is not None and value.dtype.kind != "O":
            value = self.xp.input(value)
        self.loads[key] = value
        return value

    def eval_form(self, form):
        if isinstance(form, E.EDefine):
            self.defined.add(form.key)
        return Frames.eval_form(self, form)

    def app(self, e, env, ienv, batch):
        stack = self.xp.app_stack
        stack.append((e.span, callee_name(e.fn)))
        try:
            return Frames.app(self, e, env, ienv, batch)
        finally:
            stack.pop()

    def apply_one(self, fn, args, tf, cells, result_cell, span, rep: str = OBJECT):
        if isinstance(fn, PrimFn) and fn.prim.effectful:
            raise Untraceable(f"`{fn.prim.name}` has an effect")  # (before it happens)
        return Frames.apply_one(self, fn, args, tf, cells, result_cell, span, rep)


class Plan:
    """A generated function ``run(G, L)`` and its source (what ``remora eval --plan`` prints).
    The source is written when the plan is made; it is compiled when first replayed (a form
    evaluated once, as most of a script's are, never pays for compiling)."""

    __slots__ = ("source", "ir", "same_rounding", "_namespace", "_fn")

    def __init__(self, source: str, namespace: dict, ir: Program | None = None):
        self.source = source
        self.ir = ir  # (the simplified IR the source lowers: remora.ir.program.Program)
        self.same_rounding = True  # (whether it rounds every value as its trace did)
        self._namespace = namespace
        self._fn = None

    def run(self, G: dict, L: dict):
        fn = self._fn
        if fn is None:
            fn = self._fn = self._compile()
        return fn(G, L)

    def _compile(self) -> Callable:
        namespace = dict(self._namespace)
        # (a plan the lowering wrote wrong is a bug: its SyntaxError reaches the tests)
        exec(compile(self.source, "<remora plan>", "exec"), namespace)
        return namespace["plan"]


def record(engine: Frames, body: Callable[[Frames, dict], Any], locals_: dict, globals_: dict | None = None):
    """Run ``body(tracing_engine, env)`` once, traced: (its value, the :class:`Plan` of it — or
    None if the value is right but cannot be replayed, such as boxes holding computed arrays).

    ``locals_`` are the arrays the call binds by name (they become ``L[name]``); the globals are
    ``globals_`` (``engine.globals`` if None), read by key at replay.  Raises :class:`Untraceable`
    if the form cannot be planned — before any effect has happened."""
    tracer = TracingBackend(engine.xp, trace_loop)
    tracer.control = (trace_while, trace_if)
    tracing = TracingFrames(engine.run, tracer, engine.globals if globals_ is None else globals_)
    env = {name: tracer.input(arr) for name, arr in locals_.items()}
    value = body(tracing, env)
    settled, changed = settle(value, {})
    if changed and type(value) is not Sym:
        return settled, None
    plan = _generate(tracer, tracing, env, value)
    if not plan.same_rounding and type(value) is Sym:
        # (a pass rounds otherwise than the trace, as its law allows: the first value is the
        # plan's, so that every evaluation of the form gives the same atoms)
        settled = plan.run(tracing.globals, locals_)
    # The plan may keep the tracer (a `while`/`if` site traces new buckets at replay): not the
    # recording, whose steps hold every intermediate array of the trace.
    tracer.rec, tracer.recipes, tracer.owners = Recording(tracer), {}, {}
    return settled, plan


def settle(value: Any, seen: dict) -> tuple[Any, bool]:
    """``value`` with every traced array inside it (in boxes, in closures' environments, in flat
    frames of boxes) replaced by its value: what may outlive the trace.  (The same object when
    nothing inside it was traced, so functions keep their identity.)"""
    t = type(value)
    if t is Sym:
        return value.value, True
    if t is BoxFrame:
        value = value.materialize()
        t = type(value)
    hit = seen.get(id(value))
    if hit is not None:
        return hit
    result = (value, False)
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "O":
        atoms = [settle(x, seen) for x in value.reshape(-1)]
        if any(c for _, c in atoms):
            result = (host.from_atoms([a for a, _ in atoms], value.shape), True)
    elif t is BoxValue:
        inner, changed = settle(value.value, seen)
        if changed:
            result = (BoxValue(value.indices, inner), True)
    elif isinstance(value, Closure):
        env = {k: (settle(v.arr, seen), v.k) for k, v in value.env.items()}
        if any(c for (_, c), _ in env.values()):
            result = (t(value.lam, {k: Val(a, k_) for k, ((a, _), k_) in env.items()}, value.ienv, value.level), True)
    seen[id(value)] = result
    return result


def _generate(tracer: TracingBackend, tracing: TracingFrames, env: dict, value: Any) -> Plan:
    src = Source(tracer.inner)
    src.emit(0, "def plan(G, L):")
    scope: set = set()
    inputs = []
    for name, sym in env.items():
        _load(src, sym, f"L[{name!r}]", f"argument {name}", scope)
        inputs.append((sym, f"argument {name}"))
    for key, loaded in tracing.loads.items():
        if type(loaded) is Sym:
            _load(src, loaded, f"G[{key!r}]", f"global {key}", scope)
            inputs.append((loaded, f"global {key}"))
        else:
            src.emit(1, f"if G[{key!r}] is not {src.constant(loaded, 'g')}: raise Miss  # {_what(loaded)} {key}")
    steps, value, same = rewrite(tracer.rec.steps, value, tracer.inner)
    emit_steps(steps, src, 1, scope, keep=value)
    result = literal(value, src, scope)
    if type(value) is Sym and tracer.inner.owns(value.value) and getattr(value.value, "ndim", 0) == 0:
        result = f"xp.asarray({result})"  # (a plan may hold an atom as a scalar; it returns arrays)
    src.emit(1, f"return {result}  # {describe(concrete(value))}")
    plan = Plan(src.text(), src.ns, freeze(inputs, steps, value))
    plan.same_rounding = same
    return plan


def _load(src: Source, sym: Sym, where: str, what: str, scope: set) -> None:
    dtype = src.constant(sym.value.dtype, "dt")
    src.emit(1, f"{sym.name} = {where}")
    src.emit(1, f"if {sym.name}.shape != {tuple(sym.value.shape)!r} or {sym.name}.dtype != {dtype}: raise Miss"
                f"  # {what}: {describe(sym.value)}")
    scope.add(sym.name)


def _what(value: Any) -> str:
    return "the function" if getattr(value, "dtype", None) is not None else "the value"


class PlanCache:
    """Plans by key — a form, a Function's application, a program seen by ``remora.evaluate`` —
    the most recently used ``maxsize`` kept.  A key is held weakly (a REPL or a long-lived Function
    makes new forms forever: what is gone is forgotten with its plans).  Safe to share between
    threads: two threads may trace the same key at once; each plan is correct, and both are kept."""

    VARIANTS = 8  # plans per key (one per outcome of the data-dependent decisions)

    def __init__(self, maxsize: int = 1024) -> None:
        self.maxsize = maxsize
        self._plans: OrderedDict[int, tuple[weakref.ref, list | None]] = OrderedDict()
        self._lock = threading.RLock()  # (a key's collection may remove its entry while it is held)
        #: counters: ``traced`` plans made, ``replayed`` calls served by a plan, ``dynamic`` calls
        #: run on the dynamic engine (not plannable), ``missed`` replays a guard refused
        self.stats = {"traced": 0, "replayed": 0, "dynamic": 0, "missed": 0}
        self.last_refusal = ""
        #: why each form that runs dynamically does (by the key's id, as the plans)
        self.refusals: dict[int, str] = {}

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()
            self.refusals.clear()

    def __len__(self) -> int:
        return len(self._plans)

    def _variants(self, key: Any):
        entry = self._plans.get(id(key))
        if entry is not None and entry[0]() is key:
            return entry[1]
        return ()

    def plans(self, key: Any) -> list[Plan]:
        """The plans kept for ``key`` (for ``--plan`` and tests)."""
        return list(self._variants(key) or ())

    def run(self, key: Any, G: dict, L: dict, trace: Callable[[], tuple], dynamic: Callable[[], Any]):
        """The value of the form ``key`` stands for: replayed from a plan that fits, or traced
        (``trace()`` gives (value, plan)), or — if it cannot be planned — ``dynamic()``.  With
        ``REMORA_EXPLAIN=1`` in the environment, each call says on standard error which way it
        went (and why a form runs dynamically)."""
        value, how = self._run(key, G, L, trace, dynamic)
        if EXPLAIN:
            explain(key, how)
        return value

    def _run(self, key: Any, G: dict, L: dict, trace: Callable[[], tuple], dynamic: Callable[[], Any]):
        entry = self._plans.get(id(key))
        variants = entry[1] if entry is not None and entry[0]() is key else ()
        if variants is None:
            self.stats["dynamic"] += 1
            return dynamic(), f"evaluated dynamically ({self.refusals.get(id(key), 'not plannable')})"
        for plan in variants:
            try:
                value = plan.run(G, L)
            except Miss:
                self.stats["missed"] += 1
                continue
            self.stats["replayed"] += 1
            return value, "plan replayed"
        if len(variants) >= self.VARIANTS:  # its decisions follow the data: not worth planning
            self._refuse(key, f"the data decided differently {self.VARIANTS} times")
            self.stats["dynamic"] += 1
            return dynamic(), f"evaluated dynamically ({self.last_refusal})"
        try:
            value, plan = trace()
        except (Untraceable, RecursionError) as why:  # (tracing takes more stack than evaluating)
            self._refuse(key, str(why) if isinstance(why, Untraceable) else "too deep to trace")
            self.stats["dynamic"] += 1
            return dynamic(), f"evaluated dynamically ({self.last_refusal})"
        except RemoraError:
            return dynamic(), "evaluated dynamically (to report its error)"  # (the dynamic engine's error)
        self.stats["traced"] += 1
        if plan is None:
            self._refuse(key, "the value holds computed arrays in boxes or functions")
            return value, f"traced; {self.last_refusal}: evaluated dynamically from now on"
        self._store(key, plan)
        return value, "traced (a plan made)" if not variants else "traced again (a guard missed)"

    def _refuse(self, key: Any, why: str) -> None:
        self.last_refusal = why
        self.refusals[id(key)] = why
        self._store(key, None)

    def _store(self, key: Any, plan: Plan | None) -> None:
        with self._lock:
            k = id(key)
            variants = self._variants(key)
            if plan is None:
                variants = None
            elif variants is not None and len(variants) < self.VARIANTS:
                variants = list(variants) + [plan]
            entry = self._plans.get(k)
            ref = entry[0] if entry is not None and entry[0]() is key else weakref.ref(key, self._forget(k))
            self._plans[k] = (ref, variants)
            self._plans.move_to_end(k)
            while len(self._plans) > self.maxsize:
                self._plans.popitem(last=False)

    def _forget(self, k: int) -> Callable:
        def forget(ref: weakref.ref) -> None:
            with self._lock:
                entry = self._plans.get(k)
                if entry is not None and entry[0] is ref:  # (not a newer key that took the same id)
                    del self._plans[k]
                    self.refusals.pop(k, None)

        return forget


#: whether every plan-cache call says which way it went (``REMORA_EXPLAIN=1``)
EXPLAIN = os.environ.get("REMORA_EXPLAIN", "") not in ("", "0")


def explain(key: Any, how: str) -> None:
    """One line on standard error: where the form ``key`` comes from (or ``key`` itself, a
    string :func:`origin` made) and how it was evaluated."""
    where = key if type(key) is str else origin(key)
    print(f"remora: {where}: {how}", file=sys.stderr)


def origin(key: Any) -> str:
    """Where the form ``key`` comes from: ``file:line:col``, or "a program"."""
    span = getattr(key, "span", None)
    if span is None and getattr(key, "forms", None):  # (a whole program given to remora.evaluate)
        span = getattr(key.forms[-1], "span", None)
    return f"{span.source.name}:{span.line}:{span.col}" if span is not None else "a program"


#: The plans of this process.
PLANS = PlanCache()
