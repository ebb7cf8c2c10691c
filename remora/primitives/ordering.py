"""Sorting and cutting: ``sort``, ``grade``, ``take``, ``drop`` (contract §6).

``grade`` is APL's ⍋, the stable permutation that sorts a vector (``nan`` last); ``sort`` is
the items in that order.  ``take``/``drop`` cut a run-time number of items, so their result is
a box, like ``filter``'s.  Implementations receive whole frames (the items axis of a vector
cell is the last axis); array work goes through the backend ``ctx.xp``.
"""

from __future__ import annotations

from ..atoms import NUMERIC
from ..backends import host
from ..dynamics.layouts import BoxFrame
from ..dynamics.values import BoxValue
from .arrays import per_cell
from .registry import primitive



@primitive(
    "grade", "(-> ((Arr x (Shp n))) (Arr Int (Shp n)))", "n:Dim", overload=NUMERIC,
    doc="(grade xs): the stable permutation that sorts the vector xs ascending (APL's ⍋; nan last).",
)
def _grade(ctx, xs):
    return ctx.xp.argsort(xs)


@primitive(
    "sort", "(-> ((Arr x (Shp n))) (Arr x (Shp n)))", "n:Dim", overload=NUMERIC,
    doc="(sort xs): the items of the vector xs in ascending order (nan last).",
)
def _sort(ctx, xs):
    xp = ctx.xp
    return xp.take_along_axis(xs, xp.argsort(xs), axis=len(ctx.frame))


_CUT = "(-> ((Arr Int (Shp)) (Arr t (++ (Shp d) s))) (Arr (Sigma ((k Dim)) (Arr t (++ (Shp k) s))) (Shp)))"


def _cut(ctx, n, xs, what: str, keep_taken: bool):
    """The items ``take`` keeps (``keep_taken``) or ``drop`` keeps, one box per frame cell."""
    xp = ctx.xp
    r = len(ctx.frame)
    d = xs.shape[r]
    # |n| <= d as two comparisons: the absolute value of the most negative Int is itself (it
    # wraps), so a test on ``abs(n)`` would let it through as a small count.
    within = xp.elementwise("logical_and")(n >= -d, n <= d)
    ctx.require(within, f"{what} of {{}} items from an array of {d} items", n)
    if ctx.frame and not host.is_host(xs):  # all the frame's boxes in one flat buffer, as filter's
        mask = _kept_items(xp, n, d, keep_taken, ctx.frame)
        return BoxFrame(xp, ctx.frame, xp.select_items(xs, mask), xp.sum(mask, axis=-1))

    def make(idx):
        k = int(xp.to_host(n[idx]))
        cell = xs[idx]
        taken = slice(0, k) if k >= 0 else slice(d + k, d)
        rest = slice(k, d) if k >= 0 else slice(0, d + k)
        part = cell[taken if keep_taken else rest]
        return BoxValue((part.shape[0],), part)

    return per_cell(ctx, make)


def _kept_items(xp, n, d: int, keep_taken: bool, frame: tuple):
    """For each frame cell, which of its ``d`` items the cut keeps: the first ``n`` (the last
    ``-n`` when negative) for ``take``, the others for ``drop``."""
    position = xp.arange(d)
    count = xp.expand_dims(n, -1)
    taken = xp.where(count >= 0, position < count, position >= count + d)
    return xp.broadcast_to(taken if keep_taken else xp.elementwise("logical_not")(taken), frame + (d,))


@primitive(
    "take", _CUT, "d:Dim s:Shape t:Atom",
    doc="(take n xs): a box holding the first n items of xs (the last -n when n is negative); |n| past the "
        "length is a run-time error.",
)
def _take(ctx, n, xs):
    return _cut(ctx, n, xs, "take", True)


@primitive(
    "drop", _CUT, "d:Dim s:Shape t:Atom",
    doc="(drop n xs): a box holding all items of xs but the first n (the last -n when n is negative); |n| past "
        "the length is a run-time error.",
)
def _drop(ctx, n, xs):
    return _cut(ctx, n, xs, "drop", False)
