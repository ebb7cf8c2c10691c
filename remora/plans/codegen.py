"""A recording as Python source: straight-line backend calls, one line per array operation.

The plan of a form is a generated function ``plan(G, L)`` (``G``: the globals by key, ``L``: the
locals a call binds) whose body loads and checks its inputs — dtype and shape of every array,
identity of every function it was specialised to — then makes each recorded backend call on
Python locals, with the result's dtype and shape in a comment.  It is ``exec``'d once and cached,
so a call costs one Python call plus the array calls; ``remora eval --plan`` prints this source.
A loop's step is a nested function the backend's loop kernel calls once per item.

Everything that is not a traced array, a small literal or a loop index is a constant of the
plan's namespace (``c1``, ``c2``, …): folded arrays, the functions of closures specialised to,
the error callbacks of run-time checks.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from ..ir.passes import simplify
from ..ir.core import Eqn as Step, LoopIndex, Miss, Recording, Sym, Untraceable, concrete, defined as _defined
from ..ir.core import free_vars as _free_syms, mentions as _mentions, outs_of
from .trace import READS

_INFIX = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
          "__mod__": "%", "__pow__": "**", "__and__": "&", "__or__": "|", "__xor__": "^", "__lt__": "<",
          "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==", "__ne__": "!="}
_PREFIX = {"__neg__": "-", "__invert__": "~", "__abs__": "abs"}


class Source:
    """The lines of a plan being written, and the namespace its constants live in."""

    def __init__(self, xp) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {"xp": xp, "Miss": Miss}
        self._constants: dict[int, str] = {}

    def constant(self, value: Any, hint: str = "c") -> str:
        name = self._constants.get(id(value))
        if name is None or self.ns.get(name) is not value:
            name = f"{hint}{len(self.ns)}"
            self.ns[name] = value
            self._constants[id(value)] = name
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def describe(value: Any) -> str:
    """A value's dtype and shape, for a comment."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None:
        return type(value).__name__
    return f"{dtype} {tuple(shape)}"


def literal(x: Any, src: Source, scope: set) -> str:
    """``x`` as a Python expression in the plan (a traced array must be in ``scope``)."""
    t = type(x)
    if t is Sym:
        if x.name not in scope:
            raise Untraceable("a value of a loop step escaped it")
        return x.name
    if t is LoopIndex:
        return x.code()
    if x is None or t in (bool, int, str):
        return repr(x)
    if t is float and math.isfinite(x):
        return repr(x)
    if x is Ellipsis:
        return "..."
    if t is slice:
        return f"slice({literal(x.start, src, scope)}, {literal(x.stop, src, scope)}, {literal(x.step, src, scope)})"
    if t is tuple:
        inner = ", ".join(literal(y, src, scope) for y in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if t is list:
        return "[" + ", ".join(literal(y, src, scope) for y in x) + "]"
    return src.constant(x)


def subscript(key: Any, src: Source, scope: set) -> str:
    """An indexing key as NumPy subscript syntax (``[:, 3, ...]``)."""
    parts = key if type(key) is tuple else (key,)

    def one(k):
        if type(k) is slice:
            bits = ["" if b is None else literal(b, src, scope) for b in (k.start, k.stop, k.step)]
            return ":".join(bits[:2]) + (":" + bits[2] if bits[2] else "")
        return literal(k, src, scope)

    if not parts:
        return "()"
    if type(key) is tuple and len(parts) == 1 and type(parts[0]) in (int, LoopIndex):
        return one(parts[0])  # (``a[i]`` is ``a[(i,)]``, and quicker)
    text = ", ".join(one(k) for k in parts)
    return text + ("," if type(key) is tuple and len(parts) == 1 else "")


#: the array-API names of the operators a plan writes infix
_UFUNC_OF = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "divide",
             "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
             "__eq__": "equal", "__ne__": "not_equal", "__neg__": "negative", "__abs__": "abs"}


def spare_temporaries(steps: list[Step], keep: Any) -> set:
    """The arrays made by an elementwise call of ``steps`` that exactly one later call of the same
    steps reads (not a view of them, not a loop, not ``keep``): that call may write its result
    into one, as NumPy's ``out=`` — a temporary fewer, the same atoms."""
    uses: dict[str, int] = {}
    _count(keep, uses, 2)
    made = set()
    for step in steps:
        if step.kind == "loop":
            _count(step.args, uses, 1)
            _count_inside(step, uses)  # (read once per item)
            continue
        _count(step.args, uses, 1)
        if step.kind == "call" and type(step.outs) is Sym and (step.op in _UFUNC_OF or step.op in _INFIX
                                                               or step.op in _ELEMENTWISE) \
                and getattr(step.outs.value, "ndim", 0) >= 1:
            made.add(step.outs.name)
    return {name for name in made if uses.get(name, 0) == 1}


_ELEMENTWISE = {"add", "subtract", "multiply", "divide", "minimum", "maximum", "negative", "abs", "sqrt", "exp",
                "log", "sin", "cos", "tan", "atan", "floor", "ceil", "round", "trunc", "equal", "not_equal",
                "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
                "logical_not", "where"}


def _count_inside(loop: Step, uses: dict) -> None:
    """Every traced array a loop's step reads (at any depth), counted as read more than once."""
    for st in loop.extra[0].steps:
        _count(st.args, uses, 2)
        if st.kind == "loop":
            _count_inside(st, uses)
    _count(loop.extra[3], uses, 2)


def _count(x: Any, uses: dict, weight: int) -> None:
    t = type(x)
    if t is Sym:
        uses[x.name] = uses.get(x.name, 0) + weight
    elif t in (tuple, list):
        for y in x:
            _count(y, uses, weight)
    elif t is slice:
        _count((x.start, x.stop, x.step), uses, weight)


def _into(step: Step, callee: Any, args: tuple, spare: set, src: Source) -> str | None:
    """The temporary ``callee(*args)`` may write into (see :func:`spare_temporaries`), or None."""
    if not spare or not src.ns["xp"].writes_into(callee):
        return None
    out = step.outs.value
    for a in args:
        if type(a) is Sym and a.name in spare and a.value.shape == out.shape and a.value.dtype == out.dtype:
            spare.discard(a.name)
            return a.name
    return None


def call_text(step: Step, src: Source, scope: set, spare: set = frozenset()) -> str:
    """The expression that makes ``step``'s call: an operator written as Python writes it, a
    backend operation as the backend's function (specialised to the program's fixed arguments)."""
    op, args = step.op, step.args
    if spare and type(step.outs) is Sym and op in _UFUNC_OF:
        special = src.ns["xp"].specialise(_UFUNC_OF[op], concrete(args))
        target = _into(step, special, args, spare, src)
        if target is not None:
            callee = src.constant(special, f"{_UFUNC_OF[op]}_")
            return f"{callee}(" + ", ".join(literal(a, src, scope) for a in args) + f", out={target})"
    if op == "__getitem__":
        key = args[1]
        if _scalar_item(args[0], key, step.outs):
            key = key[:-1]  # an atom as a NumPy scalar, which the scalar arithmetic below takes fastest
        return f"{literal(args[0], src, scope)}[{subscript(key, src, scope)}]"
    if op in _INFIX:
        return f"({literal(args[0], src, scope)} {_INFIX[op]} {literal(args[1], src, scope)})"
    if op in _PREFIX:
        return f"{_PREFIX[op]}({literal(args[0], src, scope)})"
    xp = src.ns["xp"]
    keywords = "".join(f", {k}={literal(v, src, scope)}" for k, v in step.kw)
    if not step.kw:
        special = xp.specialise(op, concrete(args))
        fn = getattr(xp, op)
        callee = f"xp.{op}" if special == fn else src.constant(special, f"{op}_")
        target = _into(step, special, args, spare, src) if type(step.outs) is Sym else None
        if target is not None:
            return f"{callee}(" + ", ".join(literal(a, src, scope) for a in args) + f", out={target})"
        if getattr(special, "scalars", False):
            args = tuple(_as_scalar(a) for a in args)
            sym = special.operator
            if len(args) == 2:
                return f"({literal(args[0], src, scope)} {sym} {literal(args[1], src, scope)})"
            return f"({sym}{literal(args[0], src, scope)})"
    else:
        callee = f"xp.{op}"
    return f"{callee}(" + ", ".join(literal(a, src, scope) for a in args) + keywords + ")"


def _scalar_item(source: Any, key: Any, out: Any) -> bool:
    """Whether ``source[key]`` takes one atom of a numeric array, with a trailing ``...``."""
    return (type(source) is Sym and type(key) is tuple and len(key) == source.ndim + 1 and key[-1] is Ellipsis
            and all(type(k) in (int, LoopIndex) for k in key[:-1]) and type(out) is Sym
            and getattr(out.value, "ndim", None) == 0 and out.value.dtype.kind in "fiub")


def _as_scalar(a: Any) -> Any:
    """A 0-d constant as the NumPy scalar it holds (for the scalar arithmetic of a plan)."""
    if type(a) is not Sym and getattr(a, "ndim", None) == 0 and getattr(a, "dtype", None) is not None \
            and a.dtype.kind in "fiub" and hasattr(a, "__array__") and not hasattr(a, "is_integer"):
        return a[()]
    return a


def emit_steps(steps: list[Step], src: Source, depth: int, scope: set, keep: Any = None,
               spare: set | None = None) -> None:
    """Each step as one line (a loop as its step function, then the kernel call).  ``keep``: what
    the lines compute for later (the plan's or the loop step's result) — given, the temporaries
    nothing reads after a call may take its result (:func:`spare`)."""
    if spare is None:
        spare = set() if keep is None else spare_temporaries(steps, keep)
    dead = last_uses(steps, keep) if keep is not None else {}
    for i, step in enumerate(steps):
        _emit_step(step, src, depth, scope, spare)
        if i in dead:
            src.emit(depth, f"del {', '.join(dead[i])}  # (last read: their memory goes now)")
            scope.difference_update(dead[i])


#: arrays of at least this many bytes are let go right after their last read (``del``): a
#: plan's locals otherwise live until the plan returns (or the loop step ends), so its peak
#: memory would hold every temporary at once where NumPy's own expressions free them as they go
RELEASE_BYTES = 1 << 16


def last_uses(steps: list[Step], keep: Any) -> dict[int, list[str]]:
    """For each step, the large temporaries the steps make whose last reader it is (never what
    ``keep`` holds: the lines' result)."""
    kept = _names_in(keep)
    made: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, step in enumerate(steps):
        for name in _read_by(step):
            last[name] = i
        if step.kind in ("call", "site", "loop"):
            for o in outs_of(step):
                if getattr(o.value, "size", 0) * getattr(getattr(o.value, "dtype", None), "itemsize", 0) \
                        >= RELEASE_BYTES:
                    made[o.name] = i
    out: dict[int, list[str]] = {}
    for name, at in made.items():
        if name in kept:
            continue
        end = last.get(name, at)
        out.setdefault(max(end, at), []).append(name)
    return out


def _read_by(step: Step) -> set:
    names = _names_in(step.args) | _names_in(step.kw)
    if step.kind == "loop":
        sub, _, acc, result = step.extra
        inner: dict = {}
        _free_syms(sub.steps, {acc.name}, inner)
        names |= set(inner) | (_names_in(result) - _defined(sub.steps) - {acc.name})
    return names


def _names_in(x: Any) -> set:
    t = type(x)
    if t is Sym:
        return {x.name}
    if t in (tuple, list):
        return set().union(*(_names_in(y) for y in x)) if x else set()
    if t is slice:
        return _names_in((x.start, x.stop, x.step))
    return set()


def _emit_step(step: Step, src: Source, depth: int, scope: set, spare: set) -> None:
    if True:
        if step.kind == "call":
            outs = step.outs if type(step.outs) is tuple else (step.outs,)
            text = call_text(step, src, scope, spare)
            names = ", ".join(o.name for o in outs) + ("," if len(outs) == 1 and type(step.outs) is tuple else "")
            src.emit(depth, f"{names} = {text}  # {'; '.join(describe(o.value) for o in outs)}")
            scope.update(o.name for o in outs)
            if step.shape_guard:
                for o in outs:
                    src.emit(depth, f"if {o.name}.shape != {tuple(o.value.shape)!r}: raise Miss  # shape from data")
        elif step.kind == "guard":
            fn = src.constant(READS[step.op], step.op + "_") if step.op in READS else f"xp.{step.op}"
            args = ", ".join(literal(a, src, scope) for a in step.args)
            expected = literal(step.extra, src, scope) if type(step.extra) in (bool, int) else src.constant(step.extra, "c")
            src.emit(depth, f"if {fn}({args}) != {expected}: raise Miss  # {step.op} of data")
        elif step.kind == "setitem":
            target, key, value = step.args
            src.emit(depth, f"{literal(target, src, scope)}[{subscript(key, src, scope)}] = {literal(value, src, scope)}")
        elif step.kind == "site":
            outs = step.outs
            text = f"{src.constant(step.extra.replay, step.op + '_')}(" + ", ".join(literal(a, src, scope) for a in step.args) + ")"
            src.emit(depth, f"{outs.name} = {text}  # {describe(outs.value)}")
            scope.add(outs.name)
        elif step.kind == "require":
            ok, message, culprits, fail = step.args
            src.emit(depth, f"xp.require({literal(ok, src, scope)}, {message!r}, "
                            f"{literal(tuple(culprits), src, scope)}, {src.constant(fail, 'fail')})  # run-time check")
        elif step.kind == "loop":
            emit_loop(step, src, depth, scope)
        else:  # pragma: no cover - every kind is above
            raise AssertionError(step.kind)


def emit_loop(step: Step, src: Source, depth: int, scope: set) -> None:
    sub, counter, acc, result = step.extra
    n, init, axis = step.args
    if _python_loop(src.ns["xp"], step.op):
        emit_inline_loop(step, src, depth, scope)
        return
    name = f"step_{counter}"
    src.emit(depth, f"def {name}({counter}, {acc.name}):  # one item; the accumulator is {describe(acc.value)}")
    inner = set(scope) | {acc.name}
    emit_steps(sub.steps, src, depth + 1, inner, keep=result)
    src.emit(depth + 1, f"return {literal(result, src, inner)}")
    out = step.outs
    tail = f", axis={axis}" if step.op == "scan" else ""
    src.emit(depth, f"{out.name} = xp.{step.op}({n}, {name}, {literal(init, src, scope)}{tail})  # {describe(out.value)}")
    scope.add(out.name)


def _python_loop(xp, kind: str) -> bool:
    """Whether the backend's ``loop``/``scan`` kernel is the plain Python loop of
    :class:`~remora.backends.base.Backend`: the plan may then write the loop out itself, saving a
    Python call per item (a JAX backend's kernel compiles the step instead)."""
    from ..backends.base import Backend

    return getattr(type(xp), kind, None) is getattr(Backend, kind)


def emit_inline_loop(step: Step, src: Source, depth: int, scope: set) -> None:
    """The loop written out in the plan: what ``Backend.loop``/``scan`` do, without a call per item."""
    sub, counter, acc, result = step.extra
    n, init, axis = step.args
    out = step.outs
    parts = _unstacked(step) if step.op == "loop" else None
    if parts is not None:
        emit_unstacked_loop(step, parts, src, depth, scope)
        return
    src.emit(depth, f"{acc.name} = {literal(init, src, scope)}  # the accumulator: {describe(acc.value)}")
    if step.op == "scan":
        src.emit(depth, f"{out.name} = []")
    src.emit(depth, f"for {counter} in range({n}):")
    inner = set(scope) | {acc.name}
    emit_steps(sub.steps, src, depth + 1, inner, keep=result)
    src.emit(depth + 1, f"{acc.name} = {literal(result, src, inner)}")
    if step.op == "scan":
        src.emit(depth + 1, f"{out.name}.append({acc.name})")
        src.emit(depth, f"{out.name} = xp.stack({out.name}, axis={axis})  # {describe(out.value)}")
    else:
        src.emit(depth, f"{out.name} = {acc.name}  # {describe(out.value)}")
    scope.add(out.name)


def _unstacked(step: Step):
    """An accumulator made of parts: each step stacks its new parts along an axis ``k``
    (``moveaxis(stack(parts, 0), 0, k)``, as a frame literal is built) and the next step only
    takes them apart again (``acc[:, …, j, ...]``).  Then the loop can carry the parts and stack
    them once, after the last step — the same atoms without a copy of the state per item.
    Returns (k, the parts' Syms, {name of a part read: j}, the steps to leave out), or None."""
    sub, counter, acc, result = step.extra
    steps = sub.steps
    made = {o.name: st for st in steps if st.kind == "call" for o in outs_of(st)}
    last = made.get(result.name) if type(result) is Sym else None
    if last is None or last.op != "moveaxis" or last.args[1] != 0 or type(last.args[0]) is not Sym:
        return None
    k = last.args[2]
    stacked = made.get(last.args[0].name)
    if stacked is None or stacked.op != "stack" or len(stacked.args) != 2 or stacked.args[1] != 0 \
            or type(stacked.args[0]) is not list:
        return None
    parts = stacked.args[0]
    reads: dict[str, int] = {}
    for st in steps:
        if st.kind != "call" or st.op in ("matmul", "scatter"):
            return None  # (a guard, a check, a write, a nested loop; BLAS rounds by layout)
        if st is stacked or st is last:
            continue
        if st.op == "__getitem__" and st.args[0] is acc:
            j = _part_index(st.args[1], k, len(parts))
            if j is None or getattr(st.outs.value, "ndim", 0) == 0:
                return None
            reads[st.outs.name] = j
        elif _mentions(st.args, acc.name) or _mentions(st.args, last.args[0].name) \
                or _mentions(st.args, result.name):
            return None
    if _mentions(parts, acc.name):
        return None
    return k, parts, reads, (stacked, last)


def _part_index(key, k: int, m: int):
    """``j`` if ``key`` is ``(:, …, :, j, ...)`` with ``k`` slices and ``0 ≤ j < m``."""
    if type(key) is not tuple:
        return None
    body = key[:-1] if key and key[-1] is Ellipsis else key
    if len(body) != k + 1 or any(type(x) is not slice or x != slice(None) for x in body[:k]):
        return None
    j = body[k]
    return j if type(j) is int and 0 <= j < m else None


def emit_unstacked_loop(step: Step, found, src: Source, depth: int, scope: set) -> None:
    """The loop carrying its accumulator's parts (see :func:`_unstacked`), stacked after it."""
    sub, counter, acc, result = step.extra
    n, init, _ = step.args
    k, parts, reads, skip = found
    stacked, last = skip
    names = [f"{acc.name}_{j}" for j in range(len(parts))]
    lead = ":, " * k
    whole = literal(init, src, scope)
    src.emit(depth, f"{', '.join(names)}, = " + ", ".join(f"{whole}[{lead}{j}, ...]" for j in range(len(parts)))
             + f"  # the accumulator {describe(acc.value)}, by its parts along axis {k}")
    src.emit(depth, f"for {counter} in range({n}):")
    inner = set(scope) | set(names)
    body = [st for st in sub.steps if st is not stacked and st is not last]
    spare = spare_temporaries(body, parts)
    dead = last_uses(body, parts)
    for i, st in enumerate(body):
        if st.op == "__getitem__" and st.outs.name in reads:
            src.emit(depth + 1, f"{st.outs.name} = {names[reads[st.outs.name]]}")
            inner.add(st.outs.name)
        else:
            _emit_step(st, src, depth + 1, inner, spare)
        if i in dead:
            src.emit(depth + 1, f"del {', '.join(dead[i])}  # (last read: their memory goes now)")
    src.emit(depth + 1, f"{', '.join(names)}, = " + ", ".join(literal(p, src, inner) for p in parts))
    fn = "xp.stack"
    out = step.outs
    src.emit(depth, f"{out.name} = xp.moveaxis({fn}([{', '.join(names)}], 0), 0, {k})  # {describe(out.value)}")
    scope.add(out.name)


def step_function(sub: Recording, counter: str, acc: Sym, result: Any, xp) -> Any:
    """A loop's step as a callable at trace time: its free traced arrays bound to their values."""
    src = Source(xp)
    steps, result = simplify(sub.steps, result, xp)
    free: dict[str, Sym] = {}
    _free_syms(steps, {acc.name}, free)
    if type(result) is Sym and result.name not in _defined(steps) | {acc.name}:
        free.setdefault(result.name, result)
    scope = set(free) | {acc.name}
    src.emit(0, f"def make({', '.join(free)}):")
    src.emit(1, f"def step({counter}, {acc.name}):")
    emit_steps(steps, src, 2, scope, keep=result)
    src.emit(2, f"return {literal(result, src, scope)}")
    src.emit(1, "return step")
    namespace = dict(src.ns)
    exec(compile(src.text(), "<remora loop step>", "exec"), namespace)
    return namespace["make"](*(s.value for s in free.values()))


