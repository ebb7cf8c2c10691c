"""The array IR: typed, first-order equations over named arrays (spec/dynamics.md, "The IR").

A form, specialised to one input signature, is a list of **equations** ``outs = op[params](ins)``
over **variables** that each have one dtype and one shape (:class:`Sym`: the variable's name and
an example value whose dtype and shape are the variable's type).  An equation's operation is a
*name* — never a library's function — so that every backend can lower the same program:

- the backend operations of :class:`~remora.backends.base.Backend` by their array-API names
  (``add``, ``reshape``, ``broadcast_to``, ``reduce``, ``vecdot``, ``einsum``, ``gather``, …),
  their static arguments (axes, shapes, operation names) kept among the arguments;
- Python's array operators by their dunder names (``__add__``, ``__getitem__``, …), as the
  array-API standard names them; ``__setitem__`` is the one that writes;
- control: ``loop`` and ``scan`` (a body: an equation list of its own, run per item, with an
  accumulator), and the *sites* ``while_cells`` / ``if_cells`` (``while`` and ``if`` over a
  frame, whose parts are traced per bucket of part size: plans/control.py);
- ``guard`` (a Python value read from data — the trace decided something on it; where it differs
  at run time the program does not apply: :class:`Miss`) and ``require`` (a run-time check that
  raises the program's located error).

Equations are produced by tracing the whole-frame engine (plans/trace.py), rewritten by the passes
of :mod:`remora.ir.passes` (each a module stating its law), and lowered by a backend (Python
source of backend calls for NumPy and Dask: :mod:`remora.ir.lower`).  ``remora eval --plan``
prints them (:mod:`remora.ir.printer`).
"""

from __future__ import annotations

import operator
from typing import Any


class Untraceable(Exception):
    """The form cannot be planned (the reason is the message): it is evaluated dynamically."""


class Miss(Exception):
    """At run time: a guard found other data than the program was made for."""


# ---------------------------------------------------------------------------
# variables


class Sym:
    """A variable of the IR: its name, and a value of its dtype and shape (while tracing, the
    value the traced computation had; for a variable a pass makes, an :class:`Abstract` one).

    While a program is being traced the operators on a Sym are recorded (see ``rec``)."""

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
        return self.rec.tracer.call("__getitem__", (self, key), shape_guard=has_sym(key))

    def __setitem__(self, key, value) -> None:
        self.rec.tracer.setitem(self, key, value)

    # data reads: guards
    def __bool__(self) -> bool:
        return self.rec.tracer.read("bool", self)

    def __int__(self) -> int:
        return self.rec.tracer.read("int", self)

    def __index__(self) -> int:
        return self.rec.tracer.read("index", self)

    def __float__(self) -> float:
        return self.rec.tracer.read("float", self)

    def item(self):
        return self.rec.tracer.read("item", self)

    def tolist(self):
        return self.rec.tracer.read("tolist", self)

    # escapes: never followed
    def __array__(self, *args, **kwargs):
        raise Untraceable("a traced array was handed to NumPy outside the backend")

    def __iter__(self):
        raise Untraceable("a traced array was iterated over in Python")

    def __getattr__(self, name: str):
        raise Untraceable(f"the attribute {name!r} of a traced array was read")

    __hash__ = None  # type: ignore[assignment]


class Abstract:
    """The value of a variable a pass makes: its dtype and shape, no atoms (a pass never computes)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: Any, shape: tuple):
        self.dtype = dtype
        self.shape = tuple(shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"<{self.dtype} {self.shape}>"


#: Python's operators on arrays, by the IR's names for them (the array API's dunder names)
OPERATORS: dict[str, Any] = {
    f"__{name}__": getattr(operator, name if name not in ("and", "or") else name + "_")
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                 "lt", "le", "gt", "ge", "eq", "ne", "neg", "invert", "abs", "getitem")
}
#: the binary operators whose reflected form a Sym also records
_REFLECTED = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor")


def _binary(name: str):
    def forward(self, other):
        return self.rec.tracer.call(name, (self, other))

    def reflected(self, other):
        return self.rec.tracer.call(name, (other, self))

    return forward, reflected


for _op in OPERATORS:
    if _op == "__getitem__":
        continue
    _short = _op.strip("_")
    if _short in ("neg", "invert", "abs"):
        setattr(Sym, _op, (lambda n: lambda self: self.rec.tracer.call(n, (self,)))(_op))
        continue
    _fwd, _ref = _binary(_op)
    setattr(Sym, _op, _fwd)
    if _short in _REFLECTED:
        setattr(Sym, f"__r{_short}__", _ref)


class LoopIndex(int):
    """The item index of a traced loop step, ``a·i + b`` for the loop's counter ``i`` (named
    ``loop`` in the program; ``counter`` at trace time): indexing a traced array with it is
    recorded with the formula; any other use of it is refused."""

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


# ---------------------------------------------------------------------------
# equations


class Eqn:
    """One equation: ``outs = op(*args, **dict(kw))``.

    ``kind`` says how it runs: ``"call"`` (an operation: a backend's by its name, or an
    operator), ``"guard"`` (``op`` names the read — ``bool``, ``int``, ``item``, ``any``,
    ``array_equal``, …; ``extra`` is the value the program was made for), ``"require"`` (a
    run-time check: ``args`` = ok, message, culprits, the failure callback), ``"setitem"``,
    ``"loop"`` (``op`` ``loop`` or ``scan``; ``args`` = n, init, axis; ``extra`` = the body's
    :class:`Recording`, its counter's name, its accumulator and its result) and ``"site"``
    (``op`` ``while_cells`` or ``if_cells``; ``extra`` the site, which runs it).
    ``shape_guard``: the trace decided something on the shape of this call's result (the
    operation's result shape follows its data), so it is checked when the program runs."""

    __slots__ = ("kind", "op", "args", "outs", "shape_guard", "extra", "kw")

    def __init__(self, kind: str, op: str, args: tuple, outs, shape_guard: bool = False, extra=None,
                 kw: tuple = ()):
        self.kind = kind
        self.op = op
        self.args = args
        self.outs = outs
        self.shape_guard = shape_guard
        self.extra = extra
        self.kw = kw

    def replace(self, **changes) -> "Eqn":
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Eqn(**fields)

    def __repr__(self) -> str:
        return f"<eqn {self.kind} {self.op}>"


class Recording:
    """The equations of one straight-line program (a loop's body has a recording of its own)."""

    def __init__(self, tracer: Any, params: tuple = ()):
        self.tracer = tracer
        self.steps: list[Eqn] = []
        self.params = params  # names bound on entry (inputs; a loop body's counter and accumulator)


# ---------------------------------------------------------------------------
# walking the arguments of equations


def outs_of(eqn: Eqn) -> tuple:
    """An equation's output variables, as a tuple."""
    outs = eqn.outs
    return outs if type(outs) is tuple else (outs,) if outs is not None else ()


def has_sym(x) -> bool:
    if type(x) is Sym:
        return True
    if type(x) in (tuple, list):
        return any(has_sym(y) for y in x)
    return False


def has_loop_index(x) -> bool:
    if type(x) is LoopIndex:
        return True
    if type(x) in (tuple, list):
        return any(has_loop_index(y) for y in x)
    if type(x) is dict:
        return any(has_loop_index(y) for y in x.values())
    return False


def concrete(x):
    """``x`` with every variable replaced by its value (and loop indices by ints)."""
    t = type(x)
    if t is Sym:
        return x.value
    if t is LoopIndex:
        return int.__int__(x)
    if t is tuple:
        return tuple(concrete(y) for y in x)
    if t is list:
        return [concrete(y) for y in x]
    return x


def names(x: Any) -> set:
    """The names of the variables in ``x`` (an argument tree)."""
    t = type(x)
    if t is Sym:
        return {x.name}
    if t in (tuple, list):
        return set().union(*(names(y) for y in x)) if x else set()
    if t is slice:
        return names((x.start, x.stop, x.step))
    return set()


def subst(x: Any, alias: dict) -> Any:
    """``x`` with each variable named in ``alias`` replaced by the variable it maps to."""
    if not alias:
        return x
    t = type(x)
    if t is Sym:
        return alias.get(x.name, x)
    if t is tuple:
        return tuple(subst(y, alias) for y in x)
    if t is list:
        return [subst(y, alias) for y in x]
    if t is slice:
        return slice(subst(x.start, alias), subst(x.stop, alias), subst(x.step, alias))
    return x


def mentions(x: Any, name: str) -> bool:
    t = type(x)
    if t is Sym:
        return x.name == name
    if t in (tuple, list):
        return any(mentions(y, name) for y in x)
    if t is slice:
        return mentions((x.start, x.stop, x.step), name)
    return False


def defined(steps: list[Eqn]) -> set:
    """The names the equations define."""
    out: set = set()
    for step in steps:
        out.update(o.name for o in outs_of(step))
    return out


def uses(steps: list[Eqn]) -> set:
    """Every name the equations read (inside loop bodies too)."""
    out: set = set()
    for step in steps:
        out |= names(step.args) | names(step.kw)
        if step.kind == "loop":
            out |= uses(step.extra[0].steps) | names(step.extra[3])
    return out


def free_vars(steps: list[Eqn], bound: set, free: dict) -> None:
    """Add to ``free`` the variables the equations read that neither ``bound`` nor an earlier
    equation defines (by name)."""
    bound = set(bound)
    for step in steps:
        if step.kind == "loop":
            sub, _, acc, result = step.extra
            _walk(step.args, bound, free)
            free_vars(sub.steps, bound | {acc.name}, free)
            _walk(result, bound | {acc.name} | defined(sub.steps), free)
        else:
            _walk(step.args, bound, free)
            _walk(step.kw, bound, free)
        bound.update(o.name for o in outs_of(step))


def _walk(x: Any, bound: set, free: dict) -> None:
    t = type(x)
    if t is Sym:
        if x.name not in bound:
            free.setdefault(x.name, x)
    elif t in (tuple, list):
        for y in x:
            _walk(y, bound, free)
    elif t is slice:
        _walk((x.start, x.stop, x.step), bound, free)


def is_object(x) -> bool:
    """Whether ``x`` is a host object array (functions, boxes)."""
    return getattr(x, "dtype", None) is not None and type(x) is not Sym and x.dtype.kind == "O"

