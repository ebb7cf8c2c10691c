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

from typing import Any, Callable

from .tape import Refused, copy_of

Rule = Callable[..., list]


def wanted(need, i: int) -> bool:
    """Whether the cotangent of argument ``i`` is wanted (``need``: a flag per argument, from the
    transformation: only a differentiated array's is; None: every one).  A rule computes only
    those — what it does not compute it does not read, so the forward values it would have read
    can go (in a plan: the lowering frees them after their last read)."""
    return need is None or need[i]
TRANSPOSE: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            TRANSPOSE[name] = fn
        return fn

    return register


# --- helpers ---------------------------------------------------------------------------------


def shape_of(x) -> tuple:
    return tuple(getattr(x, "shape", ()))


def is_array(x) -> bool:
    return getattr(x, "shape", None) is not None


def unbroadcast(xp, ct, x):
    """``ct`` summed down to ``x``'s shape (the transpose of NumPy broadcasting); None for a
    Python scalar ``x`` (a constant)."""
    if not is_array(x):
        return None
    shape = shape_of(x)
    if shape_of(ct) == shape:
        return ct
    lead = ct.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1)
    if axes:  # (one axis as an int: the contraction pass reads a sum of a product over it, D27)
        ct = xp.sum(ct, axes[0] if len(axes) == 1 else axes)  # (positional: the pass reads no keywords)
    return xp.reshape(ct, shape)


def arg(args, kw, i: int, name: str, default=None):
    """The operation's argument ``i`` (or, given by keyword, ``name``)."""
    return args[i] if len(args) > i else dict(kw).get(name, default)


def mul(xp, a, b):
    """``a·b`` by the backend's function: never an operator between two arrays, since an inner
    backend's array on the left of a taped one would take the operation for itself."""
    return xp.multiply(a, b)


def const(xp, value, like):
    """The scalar ``value`` as a 0-d array of ``like``'s representation (backend functions take arrays)."""
    return xp.full((), value, xp.rep(like))


def zeros_like(xp, x):
    return xp.full(shape_of(x), 0, xp.rep(x))


def keep_axis(xp, small, x, axis: int):
    """``small`` (``x`` reduced along ``axis``) seen at ``x``'s shape."""
    shape = list(shape_of(x))
    shape[axis] = 1
    return xp.broadcast_to(xp.reshape(small, tuple(shape)), shape_of(x))


def axes_of(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if type(axis) in (tuple, list):
        return tuple(a % ndim for a in axis)
    return (axis % ndim,)


def spread_back(xp, ct, x, axis):
    """``ct`` of a reduction of ``x`` over ``axis`` at ``x``'s shape."""
    axes = axes_of(axis, x.ndim)
    shape = tuple(1 if i in axes else d for i, d in enumerate(shape_of(x)))
    return xp.broadcast_to(xp.reshape(ct, shape), shape_of(x))


def chooser(xp, ct, out, x, axis):
    """The transpose of ``max``/``min`` over ``axis``: the cotangent shared equally by the
    atoms equal to the result (``jax.grad``'s choice at a tie)."""
    hit = xp.astype(xp.equal(x, spread_back(xp, out, x, axis)), xp.rep(x))
    count = spread_back(xp, xp.sum(hit, axes_of(axis, x.ndim)), x, axis)
    return xp.divide(xp.multiply(hit, spread_back(xp, ct, x, axis)), count)


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


# --- reductions and scans ------------------------------------------------------------------------


@rule("sum")
def _sum(xp, ct, out, args, kw, need=None):
    x = args[0]
    axis = args[1] if len(args) > 1 else dict(kw).get("axis")
    return [spread_back(xp, ct, x, axis)] + [None] * (len(args) - 1)


@rule("max", "min")
def _max(xp, ct, out, args, kw, need=None):
    x = args[0]
    axis = args[1] if len(args) > 1 else dict(kw).get("axis")
    return [chooser(xp, ct, out, x, axis)] + [None] * (len(args) - 1)


@rule("reduce")
def _reduce(xp, ct, out, args, kw, need=None):
    op, x, axis = args[0], args[1], arg(args, kw, 2, "axis")
    if op == "add":
        return [None, spread_back(xp, ct, x, axis), None]
    if op in ("maximum", "minimum"):
        return [None, chooser(xp, ct, out, x, axis), None]
    if op == "multiply":  # the product of the other items: exclusive products from both ends
        return [None, mul(xp, spread_back(xp, ct, x, axis), _others_product(xp, x, axis % x.ndim)), None]
    return [None, None, None]


@rule("fold_items")
def _fold_items(xp, ct, out, args, kw, need=None):
    """``z`` combined in order with ``x``'s items: a sum's cotangent reaches ``z`` and every item
    as it is; a product's, each factor times the product of the others (exact at zeros)."""
    op, z, x, axis = args[0], args[1], args[2], arg(args, kw, 3, "axis")
    axis %= x.ndim
    if op == "add":
        return [None, ct, spread_back(xp, ct, x, axis), None]
    if op == "multiply":
        to_items = mul(xp, spread_back(xp, mul(xp, ct, z), x, axis), _others_product(xp, x, axis))
        return [None, mul(xp, ct, xp.reduce("multiply", x, axis)), to_items, None]
    refuse(f"fold_items {op}")


def _others_product(xp, x, axis: int):
    ones = xp.full(shape_of(x)[:axis] + (1,) + shape_of(x)[axis + 1:], 1, xp.rep(x))
    n = shape_of(x)[axis]
    before = xp.concat([ones, xp.accumulate("multiply", x, axis)], axis)
    after = xp.flip(xp.concat([ones, xp.accumulate("multiply", xp.flip(x, axis), axis)], axis), axis)
    cut = (slice(None),) * axis
    return before[cut + (slice(0, n),)] * after[cut + (slice(1, n + 1),)]


@rule("accumulate")
def _accumulate(xp, ct, out, args, kw, need=None):
    op, x, axis = args[0], args[1], arg(args, kw, 2, "axis")
    axis %= x.ndim
    if op == "add":
        return [None, xp.flip(xp.accumulate("add", xp.flip(ct, axis), axis), axis), None]
    if op == "multiply":
        return [None, _running_product(xp, ct, out, x, axis), None]
    refuse(f"accumulate {op}")


def _running_product(xp, ct, out, x, axis: int):
    """The transpose of a running product, exact at zeros: ``r_j = ct_j + x_{j+1}·r_{j+1}`` from
    the end, times the product of the items before ``j``."""
    n = shape_of(x)[axis]
    cut = (slice(None),) * axis
    r = ct[cut + (n - 1,)]
    rs = [r]
    for j in range(n - 2, -1, -1):
        r = xp.add(ct[cut + (j,)], mul(xp, x[cut + (j + 1,)], r))
        rs.append(r)
    ones = xp.full(shape_of(x)[:axis] + (1,) + shape_of(x)[axis + 1:], 1, xp.rep(x))
    before = xp.concat([ones, out[cut + (slice(0, n - 1),)]], axis)
    return mul(xp, xp.stack(rs[::-1], axis), before)


@rule("cumulative_sum")
def _cumulative_sum(xp, ct, out, args, kw, need=None):
    x = args[0]
    options = dict(kw)
    axis = args[1] if len(args) > 1 else options.get("axis", 0)
    initial = args[2] if len(args) > 2 else options.get("include_initial", False)
    axis %= x.ndim
    if initial:
        ct = ct[(slice(None),) * axis + (slice(1, None),)]
    return [xp.flip(xp.cumulative_sum(xp.flip(ct, axis), axis), axis)] + [None] * (len(args) - 1)


@rule("segment_reduce")
def _segment_reduce(xp, ct, out, args, kw, need=None):
    op, data, offsets = args
    if op != "add":
        refuse(f"segment_reduce {op}")
    n = shape_of(data)[0]
    starts = xp.scatter(xp.full((n,), 0, "Int"), offsets, 1)
    segment = xp.cumulative_sum(starts) - 1
    return [None, xp.gather(ct, segment), None]


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


def refuse(what: str):
    raise Refused(f"the derivative of `{what}`")
