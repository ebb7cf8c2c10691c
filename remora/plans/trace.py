"""Recording a plan: the whole-frame engine run once over traced arrays.

A plan is what the whole-frame engine (:mod:`remora.dynamics.engine`) decides for one form and
one input signature — principal frames, lifts, reshapes, cells, primitive paths, groupings of
frames of functions — with every decision taken once.  We get it by *tracing*: the engine runs
as usual, eagerly, on a :class:`TracingBackend` whose arrays are :class:`Sym` s (a concrete
array plus its place in the recording).  Every backend call on a traced array is carried out
and appended to a :class:`Recording`; a call on constants alone is carried out and its result
is a constant (constant folding).  What the engine decides in Python from shapes costs nothing
at replay; what it decides from *data* (a Python ``bool``/``int`` of an array, ``any``, the
shape of a ``filter`` result) becomes a **guard**: the replay recomputes it and, if it differs,
gives up (:class:`Miss`) so that the caller runs the form dynamically and may specialise again.

Anything the tracer cannot follow — a traced array handed to NumPy outside the backend, its
strides read, an effectful primitive — raises :class:`Untraceable` *before* any effect, and the
form runs on the dynamic engine instead (never a silently wrong value).

Loops (``Backend.loop``/``scan``: the bodies of ``fold``, ``reduce``, ``scan`` with a function)
are traced once for their step, with the item index symbolic (:class:`LoopIndex`), and replayed
per step by the backend's own loop kernel.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from ..backends.base import OBJECT, Backend
from ..errors import RemoraError, RemoraRuntimeError, relocate_library_error
from ..ir.passes import select
from ..ir.core import (OPERATORS, Eqn, LoopIndex, Miss, Recording, Sym, Untraceable, concrete, has_loop_index,
                       has_sym, is_object)


#: the most bytes of intermediate arrays one trace may keep alive before the form is evaluated
#: dynamically instead (decisions.md D47)
TRACE_BYTES = 1 << 31


# (the IR's variables, equations and recordings: remora/ir/core.py)


def _owner(x):
    """The array whose memory ``x`` uses: ``x`` itself, or the array it is a view of (NumPy's
    ``base``; an array over another object's buffer is its own owner)."""
    while True:
        base = getattr(x, "base", None)
        if base is None or getattr(base, "nbytes", None) is None:
            return x
        x = base


class TracingBackend(Backend):
    """A backend that carries out every call on ``inner`` and records those on traced arrays."""

    name = "tracing"

    def __init__(self, inner: Backend, trace_loop: Callable):
        super().__init__()
        self.inner = inner
        self.trace_loop = trace_loop  # (loops.trace_loop: the loop kernels, traced)
        self.count = 0
        self.held = 0  # bytes of the recorded steps' values (see _hold)
        #: the arrays whose memory ``held`` counts, or the inputs' (by id, kept referenced so that
        #: an id is not reused meanwhile): a view holds no memory of its own (see _hold)
        self.owners: dict[int, Any] = {}
        self.rec = Recording(self)
        self.app_stack: list[tuple] = []  # (span, callee) of the applications under way
        #: each folded constant's making, by id: (the constant, the operation, its arguments)
        self.recipes: dict[int, tuple] = {}
        #: how many ``if`` s deep the branches are being evaluated over whole frames (if_select)
        self.speculating = 0

    # --- making names and steps ---------------------------------------------------------------

    def fresh(self, value, rec: Recording | None = None) -> Sym:
        self.count += 1
        return Sym(value, f"v{self.count}", rec or self.rec)

    def input(self, value) -> Sym:
        owner = _owner(value)
        self.owners[id(owner)] = owner  # (the caller's memory: a view of it holds nothing new)
        return self.fresh(value)

    def impl(self, op: str) -> Callable:
        """The function that carries out the operation ``op`` at trace time (on the inner backend)."""
        fn = OPERATORS.get(op)
        return fn if fn is not None else getattr(self.inner, op)

    def call(self, op: str, args: tuple, shape_guard: bool = False, fresh: bool = False, kw: tuple = ()):
        """Carry out the operation ``op`` on ``args`` (and the keyword arguments ``kw``: pairs);
        record it if a traced array takes part (or it makes a fresh array)."""
        if has_loop_index(args):
            if op != "__getitem__":
                raise Untraceable("a loop's item index was passed to a backend function")
        fn = self.impl(op)
        result = fn(*concrete(args), **dict(concrete(kw))) if kw else fn(*concrete(args))
        if not (fresh or has_sym(args) or has_sym(kw)):
            if getattr(result, "shape", None) is not None and not any(a is result for a in args):
                self.recipes.setdefault(id(result), (result, op, args, kw))  # (how a folded constant was made)
            return result
        if is_object(result):
            if has_sym(args) or has_sym(kw):
                raise Untraceable("a traced array became part of a frame of functions or boxes")
            return result
        if type(result) is tuple:
            outs = tuple(self.fresh(r) for r in result)
        else:
            outs = self.fresh(result)
        self.rec.steps.append(Eqn("call", op, args, outs, shape_guard, kw=kw))
        self._hold(result)
        return outs

    def _hold(self, result) -> None:
        """Count what a trace keeps alive: every recorded step's value stays referenced until the
        plan is made, so a long data-dependent loop (a ``while`` over 10⁶ cells for hundreds of
        steps) would hold all its intermediate arrays at once — gigabytes.  Past
        :data:`TRACE_BYTES` the form is evaluated dynamically instead (which frees them as it goes).
        A view (``tail``, ``curtail``, a transposition of an input or of an earlier result) is
        counted as the memory it shares, once: a fold over the rows of a large input must not
        count the whole input again for each view of it."""
        for r in result if type(result) is tuple else (result,):
            owner = _owner(r)
            if id(owner) not in self.owners:
                self.owners[id(owner)] = owner
                self.held += getattr(owner, "nbytes", 0)
        if self.held > TRACE_BYTES:
            raise Untraceable(f"its trace would hold more than {TRACE_BYTES >> 20} MiB of intermediate arrays")

    def read(self, op: str, *args):
        """A Python value read from traced data (``op``: one of :data:`READS`, or a backend
        function): a guard the program checks when it runs."""
        if has_loop_index(args):
            raise Untraceable("a loop's item index was read as a Python value")
        fn = READS.get(op) or getattr(self.inner, op)
        value = fn(*concrete(args))
        self.rec.steps.append(Eqn("guard", op, args, None, extra=value))
        return value

    def setitem(self, target, key, value) -> None:
        if type(target) is not Sym or target.rec is not self.rec:
            raise Untraceable("an array made outside the plan would be written to")
        if has_loop_index(key):
            raise Untraceable("a loop's item index was used to write")
        target.value[concrete(key)] = concrete(value)
        self.rec.steps.append(Eqn("setitem", "__setitem__", (target, key, value), None))

    # --- the backend's functions -------------------------------------------------------------

    def dtype(self, rep):
        return self.inner.dtype(rep)

    def rep(self, x):
        return self.inner.rep(concrete(x))

    def itemsize(self, x):
        return self.inner.itemsize(concrete(x))

    def owns(self, x):
        return type(x) is Sym or self.inner.owns(x)

    def constant(self, key, values, rep, shape):
        return self.inner.constant(key, values, rep, shape)

    def read_only(self, x):
        return x if type(x) is Sym else self.inner.read_only(x)

    def to_host(self, x):
        return self.read("to_host", x) if has_sym(x) else self.inner.to_host(x)

    def to_numpy(self, x):
        if has_sym(x):
            raise Untraceable("a traced array was handed out as a NumPy array (a registered primitive)")
        return self.inner.to_numpy(x)

    def from_numpy(self, x):
        return self.inner.from_numpy(x)

    def quiet(self):
        return self.inner.quiet()

    def asarray(self, x, rep=None):
        if type(x) is Sym and self.inner.owns(x.value) and (rep is None or x.value.dtype == self.inner.dtype(rep)):
            return x  # (already an array of this backend: nothing to record)
        return self.call("asarray", (x, rep))

    def empty(self, shape, rep):
        if rep == OBJECT:
            return self.inner.empty(shape, rep)
        return self.call("empty", (shape, rep), fresh=True)

    def full(self, shape, value, rep):
        if rep == OBJECT:
            return self.inner.full(shape, value, rep)
        return self.call("full", (shape, value, rep), fresh=True)

    def scatter(self, x, indices, values):
        if type(x) is not Sym:
            if has_sym((indices, values)) and not is_object(x):
                raise Untraceable("an array made outside the plan would be written to")
            return self.call("scatter", (x, indices, values))
        return self.call("scatter", (x, indices, values))

    def any(self, x):
        return self.read("any", x) if has_sym(x) else self.inner.any(x)

    def all(self, x):
        return self.read("all", x) if has_sym(x) else self.inner.all(x)

    def array_equal(self, a, b):
        return self.read("array_equal", a, b) if has_sym((a, b)) else self.inner.array_equal(a, b)

    def same_atoms(self, a, b):
        return self.read("same_atoms", a, b) if has_sym((a, b)) else self.inner.same_atoms(a, b)

    def searchsorted(self, x, value, side="left"):
        args = (x, value, side)
        return self.read("searchsorted", *args) if has_sym(args) else self.inner.searchsorted(*args)

    def require(self, ok, message, culprits, fail) -> None:
        culprits = tuple(culprits)
        if not has_sym((ok,) + culprits):
            return self.inner.require(ok, message, culprits, fail)
        if self.speculating:  # (a branch that can fail is not evaluated where it is not chosen)
            raise Speculation("a run-time check in a branch")
        self.inner.require(concrete(ok), message, tuple(concrete(c) for c in culprits), fail)
        located = _relocating(_failing_at(fail), tuple(self.app_stack))
        self.rec.steps.append(Eqn("require", "require", (ok, message, culprits, located), None))

    def stack(self, xs, axis=0):
        return self.call("stack", (xs, axis))  # (positional: plans specialise it)

    def loop(self, n, step, init):
        return self.trace_loop(self, "loop", n, step, init)

    #: control.trace_while / control.trace_if (set by ``record``, as ``trace_loop`` is given)
    control: tuple | None = None

    def while_cells(self, engine, cond, step, init):
        """``while`` over the cells of ``init`` (items): its condition and step planned per
        bucket of running cells (:mod:`.control`); None where the caller's loop must run."""
        return self.control[0](self, engine, cond, step, init) if self.control else None

    def if_cells(self, engine, flags, branches):
        """``if`` over a frame of ``flags``: each branch planned per bucket of its part's size
        (:mod:`.control`); None where the caller's own code must run."""
        return self.control[1](self, engine, flags, branches) if self.control else None

    def scan(self, n, step, init, axis):
        return self.trace_loop(self, "scan", n, step, init, axis)

    def if_select(self, engine, flags, both: Callable):
        """``if`` over a frame of ``flags`` as a ``where`` of its branches over the whole frame, when
        the law of :mod:`remora.ir.passes.select` holds: ``both()`` evaluates them (masked) and
        selects; what it records is kept if the branches cannot fail, decide nothing on data and
        are cheap — else taken back, and None (the caller makes a site).  Flags known while tracing
        are not the data's: the site partitions by them once, for good."""
        if type(flags) is not Sym:
            if self.speculating:
                raise Speculation("an `if` by flags known while tracing")
            return None
        if self.speculating:  # (nested: any failure is the outermost one's, which takes all back)
            if self.speculating >= select.MAX_DEPTH:
                raise Speculation("too deep")
            self.speculating += 1
            try:
                return both()
            finally:
                self.speculating -= 1
        rec = self.rec
        mark, held, owners, count = len(rec.steps), self.held, dict(self.owners), self.count
        self.speculating = 1
        try:
            with self.inner.quiet():
                out = both()
            kept = select.holds(rec.steps[mark:])
        except (Speculation, RemoraError, Untraceable, Miss, RecursionError):
            kept = False
        finally:
            self.speculating = 0
            self.rec = rec
        if kept:
            return out
        del rec.steps[mark:]
        self.held, self.owners, self.count = held, owners, count
        return None

    def refuse_while_speculating(self) -> None:
        """A loop or a site is not followed in a branch evaluated over the whole frame."""
        if self.speculating:
            raise Speculation("a loop or a site in a branch")


class Speculation(Exception):
    """A branch evaluated over the whole frame (``if_select``) went where the law does not follow."""


def _failing_at(fail: Callable) -> Callable:
    """``fail`` as a function of the span alone when it is a primitive context's ``error`` (a plan
    keeps it: it must not keep the context's engine, and the program with it, alive)."""
    owner = getattr(fail, "__self__", None)
    span = getattr(owner, "span", None)
    if span is None or getattr(fail, "__name__", "") != "error":
        return fail

    def error(message: str):
        raise RemoraRuntimeError(message, span)

    return error


def _relocating(fail: Callable, stack: tuple) -> Callable:
    """``fail``, with its error placed as the engine places it: at the outermost application of a
    library function it happened inside (what the whole-frame engine's ``app`` does as it unwinds)."""
    if not stack:
        return fail

    def located(message: str):
        try:
            fail(message)
        except RemoraRuntimeError as err:
            for span, callee in reversed(stack):
                relocate_library_error(err, span, callee)
            raise

    return located




# Every other function of the backend: carried out, recorded when a traced array takes part.
_SHAPE_FROM_DATA = {"compact", "select_items", "nonzero", "unique", "repeat"}
_HANDLED = set(vars(TracingBackend)) | {"elementwise", "loop", "scan", "if_select", "refuse_while_speculating"}


def _forwarder(name: str):
    guard = name in _SHAPE_FROM_DATA

    def forward(self, *args, **kwargs):
        return self.call(name, args, shape_guard=guard, kw=tuple(kwargs.items()))

    forward.__name__ = name
    return forward


#: the Python values a trace may read from data (a guard), by name; other reads are a backend's
READS: dict[str, Callable] = {"bool": bool, "int": int, "index": operator.index, "float": float,
                              "item": lambda x: x.item(), "tolist": lambda x: x.tolist()}


for _name, _value in list(vars(Backend).items()):
    if callable(_value) and not _name.startswith("_") and _name not in _HANDLED:
        setattr(TracingBackend, _name, _forwarder(_name))
for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "minimum", "maximum",
              "negative", "abs", "pow", "sqrt", "exp", "log", "sin", "cos", "tan", "atan", "floor", "ceil",
              "round", "trunc", "isfinite", "equal", "not_equal", "less", "less_equal", "greater",
              "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not"):
    setattr(TracingBackend, _name, _forwarder(_name))
