"""The taping backend: a function run once, its differentiable operations recorded as IR.

:class:`TapeBackend` wraps the backend the evaluation runs on (``inner``).  Its arrays of the
differentiated computation are :class:`Dual` s: the inner backend's array (``value``) and the
tape that made it.  Every backend operation carries out the inner backend's operation on the
values and, when a ``Dual`` of this tape takes part and the result is a ``Float``/``Float32``
array, appends the equation ``outs = op(args…)`` (:class:`~remora.ir.core.Eqn`) to the tape.
``Int`` and ``Bool`` results carry no derivative (contract §11): they are returned as the inner
backend's arrays, so positions, flags and counts are constants of the derivative.

What the engine decides in Python from data (a ``while`` cell's condition, an ``if``'s flags,
a ``filter``'s count) is read from the values at once: the tape holds the operations each cell
actually ran — the branch each cell took, the iterations each cell made — and nothing else.
"""

from __future__ import annotations

from typing import Any, Callable

from ...backends.base import OBJECT, Backend
from ..core import OPERATORS, Abstract, Eqn

#: the atom representations that carry derivatives
DIFFERENTIABLE = ("Float", "Float32")


class Dual:
    """An array of the differentiated computation: the inner backend's array and its tape."""

    __slots__ = ("value", "tape", "node")
    __array_ufunc__ = None  # (``ndarray + Dual`` defers to Dual's reflected operator)

    def __init__(self, value: Any, tape: "TapeBackend", node: int | None = None):
        self.value = value
        self.tape = tape
        #: the variable's number on its tape (cotangents are kept by it)
        self.node = tape.fresh() if node is None else node

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)

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
        return f"<dual {self.value.dtype} {tuple(self.value.shape)}>"

    def reshape(self, *shape):
        return self.tape.reshape(self, shape[0] if len(shape) == 1 and type(shape[0]) is tuple else shape)

    def __getitem__(self, key):
        return self.tape.call("__getitem__", (self, key))

    def __setitem__(self, key, value) -> None:
        self.tape.refuse("writing into an array in place")

    # Python values read from data: the values' (the derivative holds them fixed)
    def __bool__(self) -> bool:
        return bool(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __float__(self) -> float:
        return float(self.value)

    def item(self):
        return self.value.item()

    def tolist(self):
        return self.value.tolist()

    def __array__(self, *args, **kwargs):
        self.tape.refuse("handing an array to NumPy outside the backend")

    def __iter__(self):
        self.tape.refuse("iterating over an array in Python")

    __hash__ = None  # type: ignore[assignment]


def _operator(name: str) -> tuple[Callable, Callable]:
    def forward(self, *other):
        return self.tape.call(name, (self,) + other)

    def reflected(self, other):
        return self.tape.call(name, (other, self))

    return forward, reflected


for _op in OPERATORS:
    if _op == "__getitem__":
        continue
    _fwd, _ref = _operator(_op)
    setattr(Dual, _op, _fwd)
    setattr(Dual, "__r" + _op[2:], _ref)


class Refused(Exception):
    """The computation did something a derivative cannot follow (the message says what)."""


class TapeBackend(Backend):
    """A backend that carries out every call on ``inner`` and tapes the differentiable ones."""

    name = "tape"

    def __init__(self, inner: Backend):
        super().__init__()
        self.inner = inner
        self.ns = getattr(inner, "ns", None)
        self.steps: list[Eqn] = []
        self.count = 0

    def fresh(self) -> int:
        self.count += 1
        return self.count

    # --- the tape -------------------------------------------------------------------------

    def input(self, value) -> Dual:
        """A differentiated input: ``value`` (an array of the inner backend) as this tape's."""
        return Dual(value, self)

    def refuse(self, what: str):
        raise Refused(what)

    def unwrap(self, x):
        """``x`` (an argument tree) with this tape's arrays replaced by their values."""
        t = type(x)
        if t is Dual and x.tape is self:
            return x.value
        if t is tuple or t is list:
            return t(self.unwrap(y) for y in x)
        if t is slice:
            return slice(self.unwrap(x.start), self.unwrap(x.stop), self.unwrap(x.step))
        if t is dict:
            return {k: self.unwrap(v) for k, v in x.items()}
        return x

    def mine(self, x) -> bool:
        """Whether a Dual of this tape is in ``x`` (an argument tree)."""
        t = type(x)
        if t is Dual:
            return x.tape is self
        if t is tuple or t is list:
            return any(self.mine(y) for y in x)
        if t is slice:
            return self.mine((x.start, x.stop, x.step))
        return False

    def call(self, op: str, args: tuple, kw: tuple = ()):
        """Carry out ``op`` on the inner backend; tape it if it reads this tape's arrays and
        makes a differentiable array."""
        fn = OPERATORS.get(op) or (self._copy if op == "copy" else getattr(self.inner, op))
        plain = self.unwrap(args)
        result = fn(*plain, **dict(self.unwrap(kw))) if kw else fn(*plain)
        if not (self.mine(args) or self.mine(kw)) or type(result) is tuple or not self.differentiable(result):
            return result
        out = Dual(result, self)
        self.steps.append(self._residual(op, args, out, kw))
        return out

    def _residual(self, op: str, args: tuple, out: Dual, kw: tuple) -> Eqn:
        """The equation as the tape keeps it: the forward values its transpose rule reads
        (:data:`.rules.READS`), and of every other variable only its number, dtype and shape —
        so an intermediate no rule needs is freed as the forward pass drops it."""
        reads = READS.get(op)
        if reads is None:
            return Eqn("call", op, args, out, kw=kw)
        kept, keep_out = reads(tuple(self.mine(a) for a in args), self.unwrap(args))
        args = tuple(a if i in kept else self._hollow(a) for i, a in enumerate(args))
        return Eqn("call", op, args, out if keep_out else self._hollow(out), kw=kw)

    def _hollow(self, x):
        t = type(x)
        if t is Dual and x.tape is self:
            return Dual(Abstract(x.value.dtype, tuple(x.value.shape)), self, x.node)
        if t is list or t is tuple:
            return t(self._hollow(y) for y in x)
        return x

    def _copy(self, x):
        return copy_of(self.inner, x)

    def differentiable(self, x) -> bool:
        dtype = getattr(x, "dtype", None)
        return dtype is not None and getattr(dtype, "kind", None) == "f"

    # --- the backend's functions that are not operations on the data ------------------------

    def dtype(self, rep):
        return self.inner.dtype(rep)

    def rep(self, x):
        return self.inner.rep(self.unwrap(x))

    def itemsize(self, x):
        return self.inner.itemsize(self.unwrap(x))

    def owns(self, x):
        return (type(x) is Dual and x.tape is self) or self.inner.owns(x)

    def constant(self, key, values, rep, shape):
        return self.inner.constant(key, values, rep, shape)

    def read_only(self, x):
        return x if type(x) is Dual else self.inner.read_only(x)

    def to_host(self, x):
        return self.inner.to_host(self.unwrap(x))

    def to_numpy(self, x):
        return self.inner.to_numpy(self.unwrap(x))

    def float32_texts(self, x):
        return self.inner.float32_texts(self.unwrap(x))

    def from_numpy(self, x, frame_axes=None):
        return self.inner.from_numpy(x)

    def quiet(self):
        return self.inner.quiet()

    def tracing(self) -> bool:
        return False  # (the primitives take their eager paths: loops run step by step, taped)

    def untraceable(self, construct: str) -> None:
        self.inner.untraceable(construct)

    def known(self, x) -> bool:
        return True

    def staged(self, x):
        return x

    def settle(self, x, like=None):
        return x if type(x) is Dual else self.inner.settle(x, self.unwrap(like))

    def empty(self, shape, rep):
        return self.inner.empty(shape, rep)

    def full(self, shape, value, rep):
        return self.inner.full(shape, self.unwrap(value), rep)

    def arange(self, n):
        return self.inner.arange(n)

    def any(self, x):
        return self.inner.any(self.unwrap(x))

    def all(self, x):
        return self.inner.all(self.unwrap(x))

    def array_equal(self, a, b):
        return self.inner.array_equal(self.unwrap(a), self.unwrap(b))

    def same_atoms(self, a, b):
        return self.inner.same_atoms(self.unwrap(a), self.unwrap(b))

    def searchsorted(self, x, value, side="left"):
        return self.inner.searchsorted(self.unwrap(x), self.unwrap(value), side)

    def require(self, ok, message, culprits, fail) -> None:
        self.inner.require(self.unwrap(ok), message, tuple(self.unwrap(c) for c in culprits), fail)

    def asarray(self, x, rep=None):
        if type(x) is Dual and x.tape is self and (rep is None or self.inner.rep(x.value) == rep):
            return x
        return self.call("asarray", (x, rep))

    def scatter(self, x, indices, values):
        if type(x) is Dual and x.tape is self:  # (the inner backend may write into x: the tape reads it)
            x = self.call("copy", (x,))
        elif self.mine(values) and not self.differentiable(x):
            return self.inner.scatter(x, self.unwrap(indices), self.unwrap(values))
        return self.call("scatter", (x, indices, values))

    def stack(self, xs, axis=0):
        return self.call("stack", (list(xs), axis))

    def concat(self, xs, axis=0):
        return self.call("concat", (list(xs), axis))

    # loops, the insertion of items and views by position run here, step by step, so that
    # what they do is taped as the operations it is made of
    loop = Backend.loop
    scan = Backend.scan
    while_loop = Backend.while_loop
    insert_items = Backend.insert_items
    slice_items = Backend.slice_items
    gather_cells = Backend.gather_cells
    loop_items = Backend.loop_items
    elementwise = Backend.elementwise
    compile = Backend.compile
    compiled = Backend.compiled


def copy_of(inner: Backend, x):
    """A fresh array holding ``x``'s atoms (one the inner backend may write into)."""
    return inner.where(inner.asarray(True), x, x)


_HANDLED = set(vars(TapeBackend)) | {"copy"}


def _forwarder(name: str):
    def forward(self, *args, **kwargs):
        return self.call(name, args, kw=tuple(kwargs.items()))

    forward.__name__ = name
    return forward


for _name, _value in list(vars(Backend).items()):
    if callable(_value) and not _name.startswith("_") and _name not in _HANDLED:
        setattr(TapeBackend, _name, _forwarder(_name))
for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "minimum", "maximum",
              "negative", "abs", "pow", "sqrt", "exp", "log", "sin", "cos", "tan", "atan", "floor", "ceil",
              "round", "trunc", "isfinite", "equal", "not_equal", "less", "less_equal", "greater",
              "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "index_add"):
    setattr(TapeBackend, _name, _forwarder(_name))


from .reads import READS  # noqa: E402  (the table of what each transpose rule reads)
