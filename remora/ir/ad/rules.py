"""Transpose (vector–Jacobian) rules, one per IR operation name.

``TRANSPOSE[op](xp, ct, out, args, kw)`` is, for the equation ``out = op(*args, **kw)`` and the
cotangent ``ct`` of ``out``, the cotangent of each argument (a list aligned with ``args``; a list
inside it for an argument that is a list of arrays, ``None`` where nothing flows).  ``args`` and
``out`` are the values the forward pass computed (the inner backend's arrays); every rule is
written with the inner backend's operations ``xp`` and the arrays' operators only, so the
derivative is a program of the same IR, run by whatever backend ``xp`` is — and itself taped
where ``xp`` is a taping backend (a derivative of a derivative).

Where an operation is not differentiable, the rule gives what ``jax.grad`` gives
(spec/derivatives.md lists each point): ``abs`` at 0 has slope 1, ``max``/``min`` of a tie
split the cotangent equally, ``sqrt`` at 0 is ``inf``, and ``floor``/``ceiling``/``round``/
``truncate``, comparisons and everything ``Int`` or ``Bool`` carry no derivative.
"""

from __future__ import annotations

from typing import Any

from .table import const, is_array, mul, refuse, rule, shape_of, unbroadcast, wanted
from .tape import copy_of


# --- elementwise -----------------------------------------------------------------------------


@rule("add", "__add__")
def _add(xp, ct, out, args, kw, need=None):
    a, b = args
    return [unbroadcast(xp, ct, a), unbroadcast(xp, ct, b)]


@rule("subtract", "__sub__")
def _subtract(xp, ct, out, args, kw, need=None):
    a, b = args
    return [unbroadcast(xp, ct, a), unbroadcast(xp, xp.negative(ct), b) if wanted(need, 1) else None]


@rule("multiply", "__mul__")
def _multiply(xp, ct, out, args, kw, need=None):
    a, b = args
    return [unbroadcast(xp, mul(xp, ct, b), a) if wanted(need, 0) else None,
            unbroadcast(xp, mul(xp, ct, a), b) if wanted(need, 1) else None]


@rule("divide", "__truediv__")
def _divide(xp, ct, out, args, kw, need=None):
    a, b = args
    return [unbroadcast(xp, xp.divide(ct, b), a) if wanted(need, 0) else None,
            unbroadcast(xp, xp.negative(xp.divide(mul(xp, ct, out), b)), b) if wanted(need, 1) else None]


@rule("negative", "__neg__")
def _negative(xp, ct, out, args, kw, need=None):
    return [xp.negative(ct)]


@rule("abs", "__abs__")
def _abs(xp, ct, out, args, kw, need=None):
    (a,) = args
    return [xp.where(xp.greater_equal(a, const(xp, 0, a)), ct, xp.negative(ct))]  # (slope 1 at 0, as jax.grad)


def _tie_split(xp, ct, a, b, wins):
    """The cotangent of ``max``/``min``: to the operand that wins, half to each at a tie."""
    half, zero = mul(xp, ct, const(xp, 0.5, ct)), mul(xp, ct, const(xp, 0, ct))
    to_a = xp.where(wins(a, b), ct, xp.where(xp.equal(a, b), half, zero))
    to_b = xp.where(wins(b, a), ct, xp.where(xp.equal(a, b), half, zero))
    return [unbroadcast(xp, to_a, a), unbroadcast(xp, to_b, b)]


@rule("maximum")
def _maximum(xp, ct, out, args, kw, need=None):
    return _tie_split(xp, ct, args[0], args[1], xp.greater)


@rule("minimum")
def _minimum(xp, ct, out, args, kw, need=None):
    return _tie_split(xp, ct, args[0], args[1], xp.less)


@rule("pow", "__pow__")
def _pow(xp, ct, out, args, kw, need=None):
    a, b = args
    to_a = mul(xp, mul(xp, ct, b), xp.pow(a, xp.subtract(b, const(xp, 1, b)))) if wanted(need, 0) else None
    to_b = None
    if is_array(b) and wanted(need, 1):  # (log of 0 taken as 0 there: jax.grad's 0 ** y)
        safe = xp.where(xp.equal(a, const(xp, 0, a)), const(xp, 1, a), a)
        to_b = mul(xp, mul(xp, ct, xp.log(safe)), out)
    return [unbroadcast(xp, to_a, a) if to_a is not None else None, unbroadcast(xp, to_b, b) if to_b is not None else None]


@rule("sqrt")
def _sqrt(xp, ct, out, args, kw, need=None):
    return [xp.divide(mul(xp, ct, const(xp, 0.5, ct)), out)]


@rule("exp")
def _exp(xp, ct, out, args, kw, need=None):
    return [mul(xp, ct, out)]


@rule("log")
def _log(xp, ct, out, args, kw, need=None):
    return [xp.divide(ct, args[0])]


@rule("sin")
def _sin(xp, ct, out, args, kw, need=None):
    return [mul(xp, ct, xp.cos(args[0]))]


@rule("cos")
def _cos(xp, ct, out, args, kw, need=None):
    return [xp.negative(mul(xp, ct, xp.sin(args[0])))]


@rule("tan")
def _tan(xp, ct, out, args, kw, need=None):
    return [mul(xp, ct, xp.add(const(xp, 1, out), mul(xp, out, out)))]


@rule("atan")
def _atan(xp, ct, out, args, kw, need=None):
    a = args[0]
    return [xp.divide(ct, xp.add(const(xp, 1, a), mul(xp, a, a)))]


@rule("floor", "ceil", "round", "trunc", "floor_divide", "__floordiv__", "remainder", "__mod__")
def _flat(xp, ct, out, args, kw, need=None):
    return [None] * len(args)  # (piecewise constant: no derivative, as jax.grad)


@rule("where")
def _where(xp, ct, out, args, kw, need=None):
    c, a, b = args
    zero = mul(xp, ct, const(xp, 0, ct))
    return [None, unbroadcast(xp, xp.where(c, ct, zero), a) if wanted(need, 1) else None,
            unbroadcast(xp, xp.where(c, zero, ct), b) if wanted(need, 2) else None]


@rule("astype", "asarray")
def _astype(xp, ct, out, args, kw, need=None):
    x = args[0]
    if not is_array(x):
        return [None] * len(args)
    return [xp.astype(ct, xp.rep(x)) if ct.dtype != x.dtype else ct] + [None] * (len(args) - 1)


@rule("copy", "contiguous", "settle", "staged", "read_only", "remade", "bounded")
def _identity(xp, ct, out, args, kw, need=None):
    return [ct] + [None] * (len(args) - 1)


# --- structure -------------------------------------------------------------------------------


@rule("reshape", "expand_dims")
def _reshape(xp, ct, out, args, kw, need=None):
    return [xp.reshape(ct, shape_of(args[0])), None]


@rule("broadcast_to")
def _broadcast_to(xp, ct, out, args, kw, need=None):
    return [unbroadcast(xp, ct, args[0]), None]


@rule("moveaxis")
def _moveaxis(xp, ct, out, args, kw, need=None):
    x, source, destination = args
    return [xp.moveaxis(ct, destination, source), None, None]


@rule("permute_dims")
def _permute_dims(xp, ct, out, args, kw, need=None):
    axes = [a % len(args[1]) for a in args[1]]
    inverse = tuple(axes.index(i) for i in range(len(axes)))
    return [xp.permute_dims(ct, inverse), None]


@rule("flip")
def _flip(xp, ct, out, args, kw, need=None):
    return [xp.flip(ct, args[1]), None]


@rule("roll")
def _roll(xp, ct, out, args, kw, need=None):
    return [xp.roll(ct, -args[1], args[2]), None, None]


@rule("concat")
def _concat(xp, ct, out, args, kw, need=None):
    xs, axis = args[0], (args[1] if len(args) > 1 else 0)
    axis %= ct.ndim
    parts, start = [], 0
    for x in xs:
        n = shape_of(x)[axis]
        parts.append(ct[(slice(None),) * axis + (slice(start, start + n),)])
        start += n
    return [parts, None]


@rule("stack")
def _stack(xp, ct, out, args, kw, need=None):
    xs, axis = args[0], (args[1] if len(args) > 1 else 0)
    axis %= ct.ndim
    return [[ct[(slice(None),) * axis + (i,)] for i in range(len(xs))], None]


@rule("compact")
def _compact(xp, ct, out, args, kw, need=None):
    x = args[0]
    if shape_of(out) == shape_of(x):
        return [ct]
    return [xp.index_add(shape_of(x), tuple(slice(0, d) for d in shape_of(out)), ct)]


# --- positions -------------------------------------------------------------------------------


class Sparse:
    """A cotangent that is zero but at ``key``: ``values`` there (the transpose of reading
    ``x[key]``).  The transformation gathers a variable's sparse cotangents and makes them one
    array once, when the variable's own equation is transposed: a loop reading its items one by
    one gets one ``index_add`` of all of them, not a zero array the input's size per step."""

    __slots__ = ("shape", "key", "values")

    def __init__(self, shape: tuple, key, values):
        self.shape, self.key, self.values = shape, key, values


@rule("__getitem__")
def _getitem(xp, ct, out, args, kw, need=None):
    x, key = args
    return [Sparse(shape_of(x), key, ct), None]


def dense(xp, shape: tuple, rep: str, whole, parts: list):
    """The array of a cotangent ``whole`` (an array or None) plus the :class:`Sparse` ``parts``:
    the parts that read one item along one axis (a loop's steps) are added by one ``index_add``
    of their items stacked; any other part by an ``index_add`` of its own."""
    items: dict[int, list] = {}
    out = whole
    for part in parts:
        axis = _item_axis(part.key)
        if axis is None:
            out = _plus(xp, out, xp.index_add(shape, part.key, part.values))
        else:
            items.setdefault(axis, []).append(part)
    for axis, group in items.items():
        n = shape[axis]
        at = [part.key[axis] % n for part in group]
        cell = shape[:axis] + shape[axis + 1:]
        if sorted(at) == list(range(n)):  # (every item read once, as a loop over them does: their stack)
            by_item = sorted(zip(at, group), key=lambda pair: pair[0])
            out = _plus(xp, out, xp.stack([xp.broadcast_to(p.values, cell) for _, p in by_item], axis))
            continue
        values = xp.stack([xp.broadcast_to(p.values, cell) for p in group], axis)
        out = _plus(xp, out, xp.index_add(shape, (slice(None),) * axis + (xp.asarray(at, "Int"),), values))
    return out if out is not None else xp.full(shape, 0, rep)


def _plus(xp, a, b):
    return b if a is None else xp.add(a, b)


def _item_axis(key):
    """``a`` for a key ``(:, …, :, i)`` or ``(:, …, :, i, ...)`` (``a`` whole axes, then one
    item ``i``); None for any other key."""
    if type(key) is not tuple:
        key = (key,)
    if key and key[-1] is Ellipsis:
        key = key[:-1]
    if not key or type(key[-1]) is not int:
        return None
    if any(type(k) is not slice or k != slice(None) for k in key[:-1]):
        return None
    return len(key) - 1


@rule("gather")
def _gather(xp, ct, out, args, kw, need=None):
    x, indices = args
    return [xp.index_add(shape_of(x), (indices,), ct), None]


@rule("take")
def _take(xp, ct, out, args, kw, need=None):
    x, indices, axis = args
    axis %= x.ndim
    return [xp.index_add(shape_of(x), (slice(None),) * axis + (indices,), ct), None, None]


@rule("take_along_axis")
def _take_along_axis(xp, ct, out, args, kw, need=None):
    x, indices, axis = args
    axis %= x.ndim
    key = []
    for d in range(x.ndim):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * x.ndim
            shape[d] = shape_of(indices)[d]
            key.append(xp.reshape(xp.arange(shape_of(indices)[d]), tuple(shape)))
    return [xp.index_add(shape_of(x), tuple(key), ct), None, None]


@rule("select_items")
def _select_items(xp, ct, out, args, kw, need=None):
    x, mask = args
    return [xp.index_add(shape_of(x), tuple(xp.nonzero(mask)), ct), None]


@rule("scatter")
def _scatter(xp, ct, out, args, kw, need=None):
    x, indices, values = args
    to_x = None
    if is_array(x):
        to_x = xp.scatter(copy_of(xp, ct), indices, const(xp, 0, ct))
    to_values = None
    if is_array(values):
        to_values = unbroadcast(xp, xp.gather(ct, indices), values)
    return [to_x, None, to_values]


@rule("index_add")
def _index_add(xp, ct, out, args, kw, need=None):
    shape, key, values = args
    return [None, None, unbroadcast(xp, ct[key], values)]


@rule("repeat")
def _repeat(xp, ct, out, args, kw, need=None):
    x, counts = args[0], args[1]
    axis = (args[2] if len(args) > 2 else dict(kw).get("axis", 0)) % x.ndim
    positions = xp.repeat(xp.arange(shape_of(x)[axis]), counts, 0)
    return [xp.index_add(shape_of(x), (slice(None),) * axis + (positions,), ct)] + [None] * (len(args) - 1)


@rule("resize")
def _resize(xp, ct, out, args, kw, need=None):
    x, n = args
    positions = xp.remainder(xp.arange(n), xp.full((), max(x.size, 1), "Int"))
    return [xp.index_add(shape_of(x), (positions,), ct), None]


# --- contractions ----------------------------------------------------------------------------------


@rule("vecdot")
def _vecdot(xp, ct, out, args, kw, need=None):
    a, b = args
    return [_dot_part(xp, ct, b, a) if wanted(need, 0) else None, _dot_part(xp, ct, a, b) if wanted(need, 1) else None]


def _dot_part(xp, ct, other, x):
    """The cotangent of ``x`` in ``vecdot(x, other)`` (either order): ``ct`` times ``other``
    along the last axis, summed down to ``x``'s shape — one contraction where ``x`` is a vector
    the batch shares (a model's weights), as the forward pass's."""
    if x.ndim == 1 and other.ndim == ct.ndim + 1 and shape_of(other)[:-1] == shape_of(ct):
        batch = "abcdefghijklmnopqrstuvwxy"[:ct.ndim]
        return xp.einsum(f"{batch}z,{batch}->z", other, ct)
    return unbroadcast(xp, mul(xp, xp.expand_dims(ct, -1), other), x)


@rule("matmul")
def _matmul(xp, ct, out, args, kw, need=None):
    a, b = args
    if a.ndim == 1 and b.ndim == 1:
        return [mul(xp, ct, b), mul(xp, ct, a)]
    if b.ndim == 1:
        c = xp.expand_dims(ct, -1)
        return [unbroadcast(xp, mul(xp, c, b), a), unbroadcast(xp, mul(xp, c, a), b)]
    if a.ndim == 1:
        c = xp.expand_dims(ct, -2)
        return [unbroadcast(xp, xp.sum(mul(xp, b, c), -1), a), unbroadcast(xp, mul(xp, xp.expand_dims(a, -1), c), b)]
    return [unbroadcast(xp, xp.matmul(ct, xp.moveaxis(b, -1, -2)), a),
            unbroadcast(xp, xp.matmul(xp.moveaxis(a, -1, -2), ct), b)]


@rule("einsum")
def _einsum(xp, ct, out, args, kw, need=None):
    subscripts, operands = args[0], args[1:]
    ins, result = subscripts.replace(" ", "").split("->")
    letters = ins.split(",")
    cts: list[Any] = [None]
    for k, x in enumerate(operands):
        if not is_array(x) or x.dtype.kind != "f" or not wanted(need, k + 1):
            cts.append(None)
            continue
        mine = letters[k]
        if len(set(mine)) != len(mine):
            refuse("einsum with a repeated index")
        others = [letters[j] for j in range(len(operands)) if j != k] + [result]
        known = set("".join(others))
        present = "".join(ch for ch in mine if ch in known)
        spec = ",".join(others) + "->" + present
        part = xp.einsum(spec, *[operands[j] for j in range(len(operands)) if j != k], ct)
        if present != mine:  # letters only this operand has: the sum over them is a broadcast
            shape = tuple(shape_of(x)[i] if ch in known else 1 for i, ch in enumerate(mine))
            part = xp.broadcast_to(xp.reshape(part, shape), shape_of(x))
        cts.append(part)
    return cts


from . import rules_reductions  # noqa: E402,F401  (registers the reductions' rules)
