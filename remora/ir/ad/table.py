"""The table of transpose rules, keyed by IR operation name, and the helpers rules are written
with (:mod:`.rules` and :mod:`.rules_reductions` fill it)."""

from __future__ import annotations

from typing import Callable

from .tape import Refused

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


def refuse(what: str):
    raise Refused(f"the derivative of `{what}`")
