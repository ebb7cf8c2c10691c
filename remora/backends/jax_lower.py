"""JAX's lowering of the IR (spec/dynamics.md, "The IR"): a plan's program as one ``jax.jit`` function.

A plan's :class:`~remora.ir.program.Program` (after the passes) is evaluated equation by equation
on JAX's traced values: each operation's *name* looked up in an implementation table — the
operators by their dunder names, every other operation the JAX half of the backend
(:class:`~.jax_ops.JaxOps`, ``jax.numpy``/``lax`` calls) — and ``loop``/``scan`` as
``lax.fori_loop``/``lax.scan`` over their bodies.  Nothing of the engine runs inside: the
decisions it made while tracing are the program.  What the program decided on data (``guard``)
and its run-time checks (``require``) are computed inside and returned as one Bool with the
result; when it is false the caller replays the same plan on the host (NumPy), which raises
the located error or misses (then a new plan is made, as on NumPy).

A program this lowering cannot express raises :class:`Unlowerable` (the documented "cannot be
compiled" condition, D48): a shape that follows data (``filter``, ``nonzero``: a ``shape_guard``),
boxes of different shapes in NumPy's flat layout (``segment_reduce``: on JAX they compile padded),
a ``while``/``if`` site (its parts are planned per bucket of running cells), a write into an
array (``setitem``), a frame of functions or boxes, a slice by a loop's counter.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..ir.core import OPERATORS, Eqn, LoopIndex, Sym
from ..ir.program import Program
from jax.extend.core import Var

from .jax_ops import MAX_COLUMNS, JaxOps
from .jax_width import WIDE_DTYPES

__all__ = ["Unlowerable", "Lowered", "lower"]


class Unlowerable(Exception):
    """The program cannot be one compiled function (the reason is the message)."""


#: the operations whose result's shape follows the data (a trace guards it: never lowered)
_SHAPE_FROM_DATA = frozenset({"compact", "select_items", "nonzero", "unique", "repeat"})


#: the operations of the flat layout of ragged boxes (one buffer and offsets): NumPy's layout.
#: On JAX boxes of ``filter`` compile *padded* (each row kept in its lanes: D48), which the
#: whole-frame path does; a segmented scatter-add is what XLA does worst on the CPU.
_RAGGED = frozenset({"segment_reduce", "insert_items", "ragged_layout"})


#: the implementation table of every backend operation: the JAX half of the backend (``jnp``/``lax``
#: calls; an instance of its own, never tracing, so no table of the whole-frame trace is consulted)
_OPS = JaxOps()


def _ops() -> JaxOps:
    return _OPS


class Lowered:
    """One plan's program as a function of its input arrays (in the order of ``params``: the
    names of the program's input variables), made by :func:`lower`; ``checks`` says whether it
    returns ``(result, ok)`` — ``ok`` false where a guard or a run-time check did not hold."""

    __slots__ = ("program", "params", "constants", "checks", "wide", "fn")

    def __init__(self, program: Program, params: tuple, constants: dict, wide: bool):
        self.program = program
        self.params = params
        self.constants = constants  # (input variables bound to arrays fixed for the evaluation's life)
        self.wide = wide
        self.checks = any(e.kind in ("guard", "require") for e in program.eqns())
        self.fn = self._function()

    def _function(self) -> Callable[..., Any]:
        program, params, constants, checks = self.program, self.params, self.constants, self.checks

        def run(*arrays):
            env: dict[str, Any] = {name: _staged(a) for name, a in constants.items()}
            env.update(zip(params, arrays))
            oks: list = []
            _run_steps(program.steps, env, oks)
            out = _value(program.result, env)
            if not isinstance(out, jax.Array):
                out = jnp.asarray(out, dtype=program.result.dtype)
            return (out, _all(oks)) if checks else out

        return run


def lower(program: Program, params: tuple, constants: dict) -> Lowered:
    """The :class:`Lowered` function of ``program``, whose input variables named in ``params``
    are its arguments and those in ``constants`` (name → host array) are fixed; raises
    :class:`Unlowerable` where the program cannot be compiled as one function."""
    _check(program.steps)
    result = program.result
    if type(result) is not Sym and not (getattr(result, "dtype", None) is not None and result.dtype.kind != "O"):
        raise Unlowerable("its value is not an array of atoms")
    return Lowered(program, tuple(params), dict(constants), _wide(program, constants))


def _check(steps: list[Eqn]) -> None:
    for e in steps:
        if e.kind == "site":
            raise Unlowerable(f"a `{'while' if e.op == 'while_cells' else 'if'}` over a frame is planned per "
                              "bucket of running cells")
        if e.kind == "setitem":
            raise Unlowerable("it writes into an array")
        if e.kind == "call":
            if e.op in _SHAPE_FROM_DATA or (e.shape_guard and _bool_key(e)):
                raise Unlowerable(f"the shape of `{e.op}`'s result follows the data")
            if e.op in _RAGGED or (e.op == "gather" and type(e.args[1]) is np.ndarray):
                # (a gather at constant positions: the positions pass's selection by a mask known
                # while tracing — a `filter` of a triangle's rows)
                raise Unlowerable("it holds boxes of `filter` in NumPy's flat layout (on JAX they compile padded)")
            if _has_object(e.args):
                raise Unlowerable("it computes with a frame of functions or boxes")
            if _slice_by_counter(e.args):
                raise Unlowerable("it slices by a loop's counter")
        if e.kind == "loop":
            _check(e.extra[0].steps)


def _bool_key(e: Eqn) -> bool:
    """Whether an indexing's key holds a Bool array (a mask: the result's shape is the data's)."""
    return e.op != "__getitem__" or any(type(k) is Sym and k.dtype == np.bool_ for k in _flat(e.args[1]))


def _flat(x: Any):
    if type(x) in (tuple, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def _has_object(x: Any) -> bool:
    return any(getattr(y, "dtype", None) is not None and type(y) is not Sym and y.dtype == object for y in _flat(x))


def _slice_by_counter(x: Any) -> bool:
    return any(type(y) is slice and LoopIndex in (type(y.start), type(y.stop), type(y.step)) for y in _flat(x))


def _wide(program: Program, constants: dict) -> bool:
    """Whether the program makes or reads a 64-bit array (then it runs in JAX's 64-bit mode, D56):
    its variables' dtypes and its constants' decide, once."""
    def wide(x: Any) -> bool:
        dtype = getattr(x, "dtype", None)
        return dtype is not None and not isinstance(dtype, type) and np.dtype(dtype) in WIDE_DTYPES

    if wide(program.result) or any(wide(v) for v, _ in program.inputs):
        return True
    if any(wide(c) for c in constants.values()):
        return True
    for e in program.eqns():
        outs = e.outs if type(e.outs) is tuple else (e.outs,) if e.outs is not None else ()
        if any(wide(o) for o in outs) or any(wide(a) for a in _flat((e.args, e.kw))):
            return True
        if e.kind == "loop" and wide(e.extra[2]):
            return True
    return False


# --- evaluating equations on traced values -----------------------------------------------------


def _value(x: Any, env: dict) -> Any:
    t = type(x)
    if t is Sym:
        return env[x.name]
    if t is LoopIndex:
        i = env[x.loop]
        return i * x.a + x.b if x.a != 1 else (i + x.b if x.b else i)
    if t is tuple:
        return tuple(_value(y, env) for y in x)
    if t is list:
        return [_value(y, env) for y in x]
    if t is slice:
        return slice(_value(x.start, env), _value(x.stop, env), _value(x.step, env))
    if t is np.ndarray:
        return _staged(x)
    return x


def _staged(a: Any) -> Any:
    """A host constant as the compiled code should see it: one atom a literal (XLA divides by the
    literal 2 with a shift), a broadcast a broadcast of its small array (not a constant of the
    frame's size, read again at every step of a loop)."""
    if not isinstance(a, np.ndarray) or a.ndim == 0 or a.dtype == object:
        return a
    if 0 in a.strides and a.size:
        a_small = a[tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)]
        if a_small.size > 1:
            return jnp.broadcast_to(np.ascontiguousarray(a_small), a.shape)
    if a.size == 1 or (0 in a.strides and a.size):
        return lax.full(a.shape, a.reshape(-1)[0], a.dtype)
    return a


def _impl(op: str) -> Callable:
    fn = _LOWERED.get(op) or OPERATORS.get(op)
    return fn if fn is not None else getattr(_ops(), op)


def _einsum(subscripts: str, *operands):
    """The contraction pass's ``einsum``: a ``dot_general`` for a matrix product (each operand
    keeps an axis of its own), a GEMV (no batch axis) and batched dots of at least 16 atoms;
    otherwise — batches with a short sum (n-body's ``'abc,abc->ab'``) or a batched product
    keeping a short axis of one operand (``'ab,abc->ac'``) — the product summed, which XLA
    fuses (as ``dot_general`` s, n-body ran 2–4× slower than the hand-written product summed)."""
    inputs, out = subscripts.split("->")
    parts = inputs.split(",")
    if len(parts) != 2 or any(len(set(p)) != len(p) for p in parts):
        return jnp.einsum(subscripts, *operands)
    a, b = parts
    own = any(c not in b and c in out for c in a), any(c not in a and c in out for c in b)
    batch = [c for c in a if c in b and c in out]
    summed = 1
    for c in set(a + b) - set(out):
        summed *= (operands[0].shape[a.index(c)] if c in a else operands[1].shape[b.index(c)])
    if all(own) or not batch or (not any(own) and summed >= 16):
        return jnp.einsum(subscripts, *operands)  # (a matrix product, a GEMV, long batched dots)
    letters = out + "".join(sorted(set(a + b) - set(out)))
    product = _spread(operands[0], a, letters) * _spread(operands[1], b, letters)
    return jnp.sum(product, axis=tuple(range(len(out), len(letters)))) if len(letters) > len(out) else product


def _spread(x, have: str, letters: str):
    """``x`` (axes ``have``) with its axes in the order of ``letters``, unit axes for the others."""
    order = [have.index(c) for c in letters if c in have]
    if order != sorted(order):
        x = jnp.transpose(x, order)
    return jnp.reshape(x, tuple(x.shape[[c for c in letters if c in have].index(c)] if c in have else 1
                                for c in letters))


#: operations whose JAX lowering is not the backend's own method
_LOWERED: dict[str, Callable] = {"einsum": _einsum}


def _run_steps(steps: list[Eqn], env: dict, oks: list) -> None:
    for e in steps:
        kind = e.kind
        if kind == "call":
            if e.op == "slice_items":
                _window(e, env)
            elif e.op == "__getitem__" and type(e.args[0]) is Sym and e.args[0].name in env.get(_WINDOWS, {}):
                e = _from_whole(e, env[_WINDOWS][e.args[0].name])
            args = _value(e.args, env)
            if e.op == "__getitem__":
                args = (jnp.asarray(args[0]),) + args[1:] if isinstance(args[0], np.ndarray) else args
            fn = _impl(e.op)
            out = fn(*args, **{k: _value(v, env) for k, v in e.kw}) if e.kw else fn(*args)
            if type(e.outs) is tuple:
                for o, r in zip(e.outs, out):
                    env[o.name] = _typed(r, o)
            else:
                env[e.outs.name] = _typed(out, e.outs)
        elif kind == "require":
            oks.append(jnp.all(_value(e.args[0], env)))
        elif kind == "guard":
            oks.append(_guard(e, env))
        elif kind == "loop":
            _loop(e, env, oks)
        else:  # pragma: no cover - _check refuses every other kind
            raise AssertionError(kind)


#: (in a lowering's environment) the slices of items made so far: name → (the whole array, axis, start)
_WINDOWS = "%windows"


def _window(e: Eqn, env: dict) -> None:
    """Remember where a slice of items (``behead``/``curtail``) comes from: a loop reading its
    items by the counter reads them from the whole array — XLA copies a slice a compiled loop
    reads from (all but one row of Pathfinder's input); a hand-written loop indexes the input."""
    x, axis, start, stop = e.args
    if type(x) is Sym and type(axis) is int and (start is None or type(start) is int):
        begin = slice(start, stop).indices(x.shape[axis])[0]
        env.setdefault(_WINDOWS, {})[e.outs.name] = (x, axis, begin)


def _from_whole(e: Eqn, window: tuple) -> Eqn:
    """``slice[key]`` as ``whole[key']`` where ``key`` takes one item by a loop's counter."""
    whole, axis, begin = window
    key = e.args[1]
    if (type(key) is tuple and len(key) == axis + 2 and key[-1] is Ellipsis and type(key[axis]) is LoopIndex
            and all(type(k) is slice and k == slice(None) for k in key[:axis])):
        i, n = key[axis], e.args[0].shape[axis]
        # (a counter counting up from, or down to, an item within the slice: never a negative
        # position, which would count from the end of another array)
        if (i.a == 1 and i.b >= 0) or (i.a == -1 and i.b >= n - 1):
            return e.replace(args=(whole, key[:axis] + (i + begin, Ellipsis)) + e.args[2:])
    return e


def _typed(r: Any, var: Sym) -> Any:
    """``r`` with its variable's dtype (JAX may weaken or widen a result the trace typed)."""
    r = jnp.asarray(r)
    if r.dtype != var.dtype:
        r = r.astype(var.dtype)
    if r.shape != tuple(var.shape):
        raise AssertionError(f"the lowering made {r.shape} where the program has {var.shape} ({var.name})")
    return r


def _all(oks: list):
    ok = jnp.bool_(True)
    for c in oks:
        ok = ok & c
    return ok


# --- guards: what the trace read from data, recomputed and compared ------------------------------


def _guard(e: Eqn, env: dict):
    op, expected = e.op, e.extra
    args = _value(e.args, env)
    if op in ("bool", "int", "index", "float", "item"):
        x = jnp.reshape(args[0], ())
        if op == "bool":
            return (x != 0) == bool(expected)
        if op in ("int", "index") and jnp.issubdtype(x.dtype, jnp.floating):
            x = jnp.trunc(x)
        if isinstance(expected, float) and expected != expected:
            return jnp.isnan(x)
        return x == expected
    if op in ("tolist", "to_host"):
        want = np.asarray(expected)
        x = args[0]
        return jnp.bool_(True) if want.shape != x.shape else jnp.all(x == want)
    if op in ("any", "all"):
        return (jnp.any(args[0]) if op == "any" else jnp.all(args[0])) == bool(expected)
    if op == "array_equal":
        a, b = args
        if getattr(a, "shape", ()) != getattr(b, "shape", ()):
            return jnp.bool_(not expected)
        return jnp.all(a == b) == bool(expected)
    if op == "searchsorted":
        x, value, side = (list(args) + ["left"])[:3]
        return jnp.searchsorted(x, value, side=side) == expected
    raise Unlowerable(f"it decides on data by `{op}`")


# --- loops ---------------------------------------------------------------------------------------


def _loop(e: Eqn, env: dict, oks: list) -> None:
    """``loop``/``scan``: its body run per item by ``lax``; a step's checks carried out with the
    accumulator.  An accumulator the body stacks from parts and reads back by part (Mandelbrot's
    ``[x y count]``) is carried as its parts (:func:`~remora.plans.codegen._unstacked`): stacked
    whole, XLA interleaves the columns and rebuilds them at every step."""
    from ..plans.codegen import _unstacked  # (the same law as the NumPy lowering's)

    sub, counter, acc, result = e.extra
    n, init, axis = e.args
    start = jnp.asarray(_value(init, env)).astype(acc.dtype)
    parts = _unstacked(e) if e.op == "loop" else None
    if parts is not None:
        k, pieces, reads, skip = parts
        body_steps = [s for s in sub.steps if s is not skip[0] and s is not skip[1]]
        lead = (slice(None),) * k
        carry0 = tuple(start[lead + (j, Ellipsis)] for j in range(len(pieces)))

        def step_parts(i, carry):
            *cols, ok = carry
            inner = dict(env)
            inner[counter] = i
            for name, j in reads.items():
                inner[name] = cols[j]
            inner_oks: list = []
            _run_steps([s for s in body_steps if not (s.op == "__getitem__" and type(s.outs) is Sym
                                                       and s.outs.name in reads)], inner, inner_oks)
            new = tuple(jnp.broadcast_to(jnp.asarray(_value(p, inner)), c.shape).astype(c.dtype)
                        for p, c in zip(pieces, cols))
            return (*new, ok & _all(inner_oks))

        carry = (*carry0, jnp.bool_(True))
        *cols, ok = lax.fori_loop(0, n, _columns_hoisted(step_parts, carry), carry)
        if _checks(body_steps):
            oks.append(ok)
        env[e.outs.name] = jnp.moveaxis(jnp.stack(cols, 0), 0, k)
        return

    def body(i, acc_value):
        inner = dict(env)
        inner[counter] = i
        inner[acc.name] = acc_value
        inner_oks: list = []
        _run_steps(sub.steps, inner, inner_oks)
        out = jnp.broadcast_to(jnp.asarray(_value(result, inner)), start.shape).astype(start.dtype)
        return out, _all(inner_oks)

    checks = _checks(sub.steps)
    if e.op == "loop" and not checks:
        env[e.outs.name] = lax.fori_loop(0, n, _columns_hoisted(lambda i, a: body(i, a)[0], start), start)
        return
    if e.op == "loop":
        def fori_body(i, carry):
            out, ok = body(i, carry[0])
            return out, carry[1] & ok

        out, ok = lax.fori_loop(0, n, fori_body, (start, jnp.bool_(True)))
        env[e.outs.name] = out
    else:
        def scan_body(carry, i):
            out, ok = body(i, carry[0])
            return (out, carry[1] & ok), out

        (_, ok), ys = lax.scan(scan_body, (start, jnp.bool_(True)), jnp.arange(n))
        env[e.outs.name] = jnp.moveaxis(ys, 0, axis)
    if checks:
        oks.append(ok)


def _checks(steps: list[Eqn]) -> bool:
    """Whether the equations decide on data or check anything (then a loop carries a flag out)."""
    return any(s.kind in ("guard", "require") for s in steps)



def _columns_hoisted(body: Callable, carry: tuple) -> Callable:
    """``body(i, carry)`` of a ``fori_loop``, traced once here, with each array it reads from
    outside the loop (Mandelbrot's points ``c``) only as its columns (``(index c 0)``) read as
    those columns, sliced once before the loop: sliced in the body, XLA reads the strided
    columns again at every step, where a hand-written loop slices them first (spec D48)."""
    closed = jax.make_jaxpr(body)(jnp.asarray(0), carry)
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    uses: dict = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if isinstance(v, Var):
                uses.setdefault(v, []).append(eqn)
    hoisted = {}
    for k, (v, c) in enumerate(zip(jaxpr.constvars, consts)):
        m = c.shape[-1] if getattr(c, "ndim", 0) >= 2 else 0
        if 1 < m <= MAX_COLUMNS and all(o is not v for o in jaxpr.outvars) and uses.get(v) and all(
                e.primitive.name == "slice" and e.params["strides"] is None
                and e.params["limit_indices"][-1] - e.params["start_indices"][-1] == 1 for e in uses[v]):
            hoisted[k] = [lax.slice_in_dim(jnp.asarray(c), j, j + 1, axis=-1) for j in range(m)]
    if not hoisted:
        return body

    def hoisted_body(i, carry):
        # (a slice of the concatenate is the column itself: XLA keeps the column, drops the rest)
        inside = [jnp.concatenate(hoisted[k], axis=-1) if k in hoisted else c for k, c in enumerate(consts)]
        flat, tree = jax.tree_util.tree_flatten((i, carry))
        out = jax.core.eval_jaxpr(jaxpr, inside, *flat)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(carry), out)

    return hoisted_body
