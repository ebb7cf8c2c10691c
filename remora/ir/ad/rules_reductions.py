"""Transpose rules of the reductions and scans (``sum``, ``max``/``min``, ``reduce``,
``fold_items``, ``accumulate``): split from :mod:`.rules`, whose table they join on import."""

from __future__ import annotations

from .table import arg, chooser, mul, refuse, rule, shape_of, spread_back


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
    """``z``, then ``x``'s items in order: a sum's cotangent reaches each as it is; a product's,
    each factor times the product of the others (exact at zeros)."""
    op, z, x = args[0], args[1], args[2]
    axis = arg(args, kw, 3, "axis") % x.ndim
    if op != "add" and op != "multiply":
        refuse(f"fold_items {op}")
    if op == "add":
        return [None, ct, spread_back(xp, ct, x, axis), None]
    to_items = mul(xp, spread_back(xp, mul(xp, ct, z), x, axis), _others_product(xp, x, axis))
    return [None, mul(xp, ct, xp.reduce("multiply", x, axis)), to_items, None]


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
