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
from ..errors import RemoraRuntimeError, relocate_library_error


#: the most bytes of intermediate arrays one trace may keep alive before the form is evaluated
#: dynamically instead (decisions.md D47)
TRACE_BYTES = 1 << 31


class Untraceable(Exception):
    """The form cannot be planned (the reason is the message): it is evaluated dynamically."""


class Miss(Exception):
    """At replay: a guard found other data than the plan was made for."""


# ---------------------------------------------------------------------------
# traced values


class Sym:
    """A traced array: its value at trace time, and its name in the recording."""

    __slots__ = ("value", "name", "rec")
    __array_ufunc__ = None  # ``ndarray + Sym`` defers to Sym's reflected operator

    def __init__(self, value: Any, name: str, rec: "Recording"):
        self.value = value
        self.name = name
        self.rec = rec

    # static facts: they depend on the signature alone
    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim

    @property
    def size(self) -> int:
        return self.value.size

    @property
    def dtype(self):
        return self.value.dtype

    def __len__(self) -> int:
        return len(self.value)

    def __repr__(self) -> str:
        return f"<traced {self.name} {self.value.dtype} {self.value.shape}>"

    # recorded operations
    def __getitem__(self, key):
        return self.rec.tracer.call("getitem", operator.getitem, (self, key), shape_guard=_has_sym(key))

    def __setitem__(self, key, value) -> None:
        self.rec.tracer.setitem(self, key, value)

    # data reads: guards
    def __bool__(self) -> bool:
        return self.rec.tracer.read(bool, self)

    def __int__(self) -> int:
        return self.rec.tracer.read(int, self)

    def __index__(self) -> int:
        return self.rec.tracer.read(operator.index, self)

    def __float__(self) -> float:
        return self.rec.tracer.read(float, self)

    def item(self):
        return self.rec.tracer.read(_item, self)

    def tolist(self):
        return self.rec.tracer.read(_tolist, self)

    # escapes: never followed
    def __array__(self, *args, **kwargs):
        raise Untraceable("a traced array was handed to NumPy outside the backend")

    def __iter__(self):
        raise Untraceable("a traced array was iterated over in Python")

    def __getattr__(self, name: str):
        raise Untraceable(f"the attribute {name!r} of a traced array was read")

    __hash__ = None  # type: ignore[assignment]


def _item(x):
    return x.item()


def _tolist(x):
    return x.tolist()


def _binary(op: Callable, name: str):
    def forward(self, other):
        return self.rec.tracer.call(name, op, (self, other))

    def reflected(self, other):
        return self.rec.tracer.call(name, op, (other, self))

    return forward, reflected


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lt", "le", "gt", "ge", "eq", "ne"):
    _op = getattr(operator, _name if _name not in ("and", "or") else _name + "_")
    _fwd, _ref = _binary(_op, _name)
    setattr(Sym, f"__{_name}__", _fwd)
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(Sym, f"__r{_name}__", _ref)
for _name in ("neg", "invert", "abs"):
    setattr(Sym, f"__{_name}__", (lambda op, n: lambda self: self.rec.tracer.call(n, op, (self,)))(getattr(operator, _name), _name))


class LoopIndex(int):
    """The item index of a traced loop step, ``a·i + b`` for the loop's counter ``i`` (named
    ``loop`` in the plan; ``counter`` at trace time): indexing a traced array with it is recorded
    with the formula; any other use of it is refused."""

    def __new__(cls, counter: int, a: int, b: int, loop: str):
        obj = super().__new__(cls, a * counter + b)
        obj.counter, obj.a, obj.b, obj.loop = counter, a, b, loop
        return obj

    def _affine(self, a: int, b: int) -> "LoopIndex":
        return LoopIndex(self.counter, a, b, self.loop)

    def __add__(self, other):
        if type(other) is not int:
            return NotImplemented
        return self._affine(self.a, self.b + other)

    __radd__ = __add__

    def __sub__(self, other):
        if type(other) is not int:
            return NotImplemented
        return self._affine(self.a, self.b - other)

    def __rsub__(self, other):
        if type(other) is not int:
            return NotImplemented
        return self._affine(-self.a, other - self.b)

    def __neg__(self):
        return self._affine(-self.a, -self.b)

    def code(self) -> str:
        if self.a == 1:
            return self.loop if self.b == 0 else f"({self.loop} + {self.b})"
        if self.a == -1:
            return f"({self.b} - {self.loop})"
        return f"({self.a} * {self.loop} + {self.b})"

    def _refuse(self, *args):
        raise Untraceable("a loop's item index was used other than to index an array")

    __mul__ = __rmul__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __bool__ = __index__ = __int__ = _refuse
    __hash__ = int.__hash__


def _concrete_index(i: LoopIndex) -> int:
    return int.__int__(i)


def _has_sym(x) -> bool:
    if type(x) is Sym:
        return True
    if type(x) in (tuple, list):
        return any(_has_sym(y) for y in x)
    return False


def _has_loop_index(x) -> bool:
    if type(x) is LoopIndex:
        return True
    if type(x) in (tuple, list):
        return any(_has_loop_index(y) for y in x)
    if type(x) is dict:
        return any(_has_loop_index(y) for y in x.values())
    return False


def concrete(x):
    """``x`` with every traced array replaced by its trace-time value (and loop indices by ints)."""
    t = type(x)
    if t is Sym:
        return x.value
    if t is LoopIndex:
        return _concrete_index(x)
    if t is tuple:
        return tuple(concrete(y) for y in x)
    if t is list:
        return [concrete(y) for y in x]
    return x


# ---------------------------------------------------------------------------
# the recording


class Step:
    """One recorded operation: ``outs = fn(*args)`` (or a guard, a check, a loop)."""

    __slots__ = ("kind", "label", "fn", "args", "outs", "shape_guard", "extra")

    def __init__(self, kind: str, label: str, fn, args, outs, shape_guard: bool = False, extra=None):
        self.kind = kind
        self.label = label
        self.fn = fn
        self.args = args
        self.outs = outs
        self.shape_guard = shape_guard
        self.extra = extra


class Recording:
    """The steps of one straight-line plan (a loop's step has a recording of its own)."""

    def __init__(self, tracer: "TracingBackend", params: tuple = ()):
        self.tracer = tracer
        self.steps: list[Step] = []
        self.params = params  # names bound on entry (inputs; a loop step's counter and accumulator)


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
        #: each folded constant's making, by id: (the constant, the function, its arguments)
        self.recipes: dict[int, tuple] = {}

    # --- making names and steps ---------------------------------------------------------------

    def fresh(self, value, rec: Recording | None = None) -> Sym:
        self.count += 1
        return Sym(value, f"v{self.count}", rec or self.rec)

    def input(self, value) -> Sym:
        owner = _owner(value)
        self.owners[id(owner)] = owner  # (the caller's memory: a view of it holds nothing new)
        return self.fresh(value)

    def call(self, label: str, fn: Callable, args: tuple, shape_guard: bool = False, fresh: bool = False):
        """Carry out ``fn(*args)``; record it if a traced array takes part (or it makes a fresh array)."""
        if _has_loop_index(args):
            if label != "getitem":
                raise Untraceable("a loop's item index was passed to a backend function")
        result = fn(*concrete(args))
        if not (fresh or _has_sym(args)):
            if getattr(result, "shape", None) is not None and not any(a is result for a in args):
                self.recipes.setdefault(id(result), (result, fn, args))  # (how a folded constant was made)
            return result
        if _is_object(result):
            if _has_sym(args):
                raise Untraceable("a traced array became part of a frame of functions or boxes")
            return result
        if type(result) is tuple:
            outs = tuple(self.fresh(r) for r in result)
        else:
            outs = self.fresh(result)
        self.rec.steps.append(Step("call", label, fn, args, outs, shape_guard))
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

    def read(self, fn: Callable, *args):
        """A Python value read from traced data: a guard the replay re-checks."""
        if _has_loop_index(args):
            raise Untraceable("a loop's item index was read as a Python value")
        value = fn(*concrete(args))
        self.rec.steps.append(Step("guard", fn.__name__, fn, args, None, extra=value))
        return value

    def setitem(self, target, key, value) -> None:
        if type(target) is not Sym or target.rec is not self.rec:
            raise Untraceable("an array made outside the plan would be written to")
        if _has_loop_index(key):
            raise Untraceable("a loop's item index was used to write")
        target.value[concrete(key)] = concrete(value)
        self.rec.steps.append(Step("setitem", "setitem", None, (target, key, value), None))

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
        return self.read(self.inner.to_host, x) if _has_sym(x) else self.inner.to_host(x)

    def to_numpy(self, x):
        if _has_sym(x):
            raise Untraceable("a traced array was handed out as a NumPy array (a registered primitive)")
        return self.inner.to_numpy(x)

    def from_numpy(self, x):
        return self.inner.from_numpy(x)

    def quiet(self):
        return self.inner.quiet()

    def asarray(self, x, rep=None):
        if type(x) is Sym and self.inner.owns(x.value) and (rep is None or x.value.dtype == self.inner.dtype(rep)):
            return x  # (already an array of this backend: nothing to record)
        return self.call("asarray", self.inner.asarray, (x, rep))

    def empty(self, shape, rep):
        if rep == OBJECT:
            return self.inner.empty(shape, rep)
        return self.call("empty", self.inner.empty, (shape, rep), fresh=True)

    def full(self, shape, value, rep):
        if rep == OBJECT:
            return self.inner.full(shape, value, rep)
        return self.call("full", self.inner.full, (shape, value, rep), fresh=True)

    def scatter(self, x, indices, values):
        if type(x) is not Sym:
            if _has_sym((indices, values)) and not _is_object(x):
                raise Untraceable("an array made outside the plan would be written to")
            return self.call("scatter", self.inner.scatter, (x, indices, values))
        return self.call("scatter", self.inner.scatter, (x, indices, values))

    def any(self, x):
        return self.read(self.inner.any, x) if _has_sym(x) else self.inner.any(x)

    def all(self, x):
        return self.read(self.inner.all, x) if _has_sym(x) else self.inner.all(x)

    def array_equal(self, a, b):
        return self.read(self.inner.array_equal, a, b) if _has_sym((a, b)) else self.inner.array_equal(a, b)

    def same_atoms(self, a, b):
        return self.read(self.inner.same_atoms, a, b) if _has_sym((a, b)) else self.inner.same_atoms(a, b)

    def searchsorted(self, x, value, side="left"):
        args = (x, value, side)
        return self.read(self.inner.searchsorted, *args) if _has_sym(args) else self.inner.searchsorted(*args)

    def require(self, ok, message, culprits, fail) -> None:
        culprits = tuple(culprits)
        if not _has_sym((ok,) + culprits):
            return self.inner.require(ok, message, culprits, fail)
        self.inner.require(concrete(ok), message, tuple(concrete(c) for c in culprits), fail)
        located = _relocating(_failing_at(fail), tuple(self.app_stack))
        self.rec.steps.append(Step("require", "require", self.inner.require, (ok, message, culprits, located), None))

    def stack(self, xs, axis=0):
        return self.call("stack", self.inner.stack, (xs, axis))  # (positional: plans specialise it)

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


def _is_object(x) -> bool:
    return getattr(x, "dtype", None) is not None and type(x) is not Sym and x.dtype.kind == "O"


# Every other function of the backend: carried out, recorded when a traced array takes part.
_SHAPE_FROM_DATA = {"compact", "select_items", "nonzero", "unique", "repeat"}
_HANDLED = set(vars(TracingBackend)) | {"elementwise", "loop", "scan"}


_KEYWORD_CALLS: dict[tuple, Callable] = {}


def _with_keywords(fn: Callable, keys: tuple) -> Callable:
    """``fn`` taking its keyword arguments ``keys`` last, positionally (one function per ``fn`` and
    ``keys``: recordings of the same calls compare equal)."""
    call = _KEYWORD_CALLS.get((fn, keys))
    if call is None:
        def call(*a):
            cut = len(a) - len(keys)
            return fn(*a[:cut], **dict(zip(keys, a[cut:])))

        call.__name__ = getattr(fn, "__name__", "call")
        _KEYWORD_CALLS[(fn, keys)] = call
    return call


def _forwarder(name: str):
    guard = name in _SHAPE_FROM_DATA

    def forward(self, *args, **kwargs):
        fn = getattr(self.inner, name)
        if kwargs:
            call = _with_keywords(fn, tuple(kwargs))
            return self.call(name, call, args + tuple(kwargs.values()), shape_guard=guard)
        return self.call(name, fn, args, shape_guard=guard)

    forward.__name__ = name
    return forward


for _name, _value in list(vars(Backend).items()):
    if callable(_value) and not _name.startswith("_") and _name not in _HANDLED:
        setattr(TracingBackend, _name, _forwarder(_name))
for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "minimum", "maximum",
              "negative", "abs", "pow", "sqrt", "exp", "log", "sin", "cos", "tan", "atan", "floor", "ceil",
              "round", "trunc", "isfinite", "equal", "not_equal", "less", "less_equal", "greater",
              "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not"):
    setattr(TracingBackend, _name, _forwarder(_name))
