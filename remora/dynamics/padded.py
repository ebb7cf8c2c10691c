"""Padded ragged values: ``filter`` over a frame, traced for compilation (spec D48).

A compiled function cannot have a shape that depends on data, and ``filter``'s result does:
each box holds however many items its flags keep.  While tracing, ``filter`` over a frame of
rows of static length ``L`` therefore keeps every row where it is — ``L`` lanes per box, a
Bool per lane saying whether it holds an item (the flags themselves), and the counts as the
boxes' lengths (a padded :class:`~.layouts.Ragged`).  Nothing is compacted: the kept items
stay in their lanes, in order, with the lanes between them not taken.

An ``unbox`` body runs over that layout in the ragged pass (:mod:`.ragged`):

- elementwise work runs on every lane (:func:`mapped`) under a *lane mask* (:mod:`.masks`:
  in the mapped application the batch is the flat buffer, whose leading axis the mask is),
  so a run-time check made for a lane not taken — a division by zero, an ``index`` out of
  range in the padding — is excused and never fails the evaluation; a real failure re-runs
  the evaluation eagerly, which raises the located error;
- whole-box consumers use the padded layout where their segmented implementation knows it
  (:func:`reduce_lanes`: ``length`` is the counts, ``sum``/``inner``/``reduce`` with an
  associative primitive reduce each row with the operation's identity in the lanes not taken;
  :func:`ranks`: ``iota/w`` of a box numbers its lanes taken, 0, 1, …);
- anything else (``fold`` with a user function, ``reverse``, ``index`` into the box, a box
  of rank > 1 in ``iota/w``, …) raises :class:`~.layouts.NeedGrouping` and the unbox makes
  the evaluation ``Untraceable``: it runs eagerly, exactly as before.  Never a wrong value.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

from ..atoms import int_range, is_float
from ..backends import host
from . import masks
from .batched import Val, plain_val, spread
from .layouts import NeedGrouping, Ragged


def mapped(engine, parts, cellz, result, rep, span, shape: Ragged) -> Val:
    """An application whose frame contains the padded axis: once over every lane of every box,
    under the lane mask; values belonging to whole boxes are repeated along their lanes."""
    xp = engine.xp
    lanes = shape.boxes * shape.width
    flat = flat_parts(parts, cellz, lambda p: _per_lane(xp, p, shape))
    with masks.masked(engine, shape.lanes):
        out = engine.apply_vals(flat[0], flat[1:], tuple(cellz[1:]), result[1:], rep, span, (lanes,))
    out = plain_val(out)
    data = spread(xp, out.arr, (lanes,) + (out.arr.shape[1:] if out.k else out.arr.shape))
    return Val(Ragged(xp, xp.contiguous(data), shape.lengths, shape.lanes), 1)


def flat_parts(parts, cellz, per_box) -> list:
    """The participants of an application whose frame contains a ragged axis (compact or
    padded), each as one flat frame of items: a ragged value as its buffer, a value belonging
    to whole boxes repeated by ``per_box``; NeedGrouping for what has no such layout."""
    flat = []
    for p, cell in zip(parts, cellz):
        if type(p.arr) is Ragged:
            if len(cell) > p.arr.data.ndim - 1:
                raise NeedGrouping
            flat.append(Val(p.arr.data, 1))
        elif p.arr.ndim - p.k != len(cell):
            raise NeedGrouping  # a whole-box value with a frame of its own
        else:
            flat.append(per_box(p))
    return flat


def _per_lane(xp, p: Val, shape: Ragged) -> Val:
    """A value batched over the boxes (or constant), repeated along each box's lanes."""
    p = plain_val(p)
    if p.k == 0 or p.arr.shape[0] == 1:
        return p
    if host.is_host(p.arr):
        raise NeedGrouping  # (a frame of functions or closures per box: not on the device)
    rest = tuple(p.arr.shape[1:])
    rows = xp.broadcast_to(xp.reshape(p.arr, (shape.boxes, 1) + rest), (shape.boxes, shape.width) + rest)
    return Val(xp.reshape(rows, (shape.boxes * shape.width,) + rest), 1)


#: each associative operation's identity by atom type: what the lanes not taken hold in a reduce
_IDENTITY = {
    "add": {"Int": 0, "Float": 0.0, "Int32": 0, "Float32": 0.0},
    "multiply": {"Int": 1, "Float": 1.0, "Int32": 1, "Float32": 1.0},
    "maximum": {"Int": int_range("Int")[0], "Float": -math.inf, "Int32": int_range("Int32")[0], "Float32": -math.inf},
    "minimum": {"Int": int_range("Int")[1], "Float": math.inf, "Int32": int_range("Int32")[1], "Float32": math.inf},
    "logical_and": {"Bool": True},
    "logical_or": {"Bool": False},
    "logical_xor": {"Bool": False},
}


def reduce_lanes(xp, op: str, xs: Ragged):
    """Each box's ``op`` reduce: its row of lanes, the operation's identity where not taken;
    NotImplemented for an operation without one here."""
    rep = xp.rep(xs.data)
    identity = _IDENTITY.get(op, {}).get(rep)
    if identity is None:
        return NotImplemented
    rows = xs.rows(xs.data)
    taken = xp.reshape(xs.rows(xs.lanes), (xs.boxes, xs.width) + (1,) * (rows.ndim - 2))
    factored = xp.tiled_factor(xs.data, xs.width) if op == "add" else None
    if factored is not None:
        # (each row of ``a * tile(v)`` summed is a matrix–vector product: XLA hands the masked
        # ``a`` to a dot, which reads it once, where a sum would read a product written out)
        a, v = factored

        def taken_here():  # (flags the compiled function makes: made again where they are read)
            return xp.reshape(xs.rows(xp.remade(xs.lanes)), (xs.boxes, xs.width))

        dot = lambda: xp.matmul(xp.where(taken_here(), xs.rows(a), xp.asarray(identity, rep)), v)  # noqa: E731
        if not is_float(rep):
            return dot()
        # (a lane not taken is a 0 of the masked factor, and 0 × inf is NaN where the sum of the
        # lanes taken is not: a vector with an infinity or a NaN is summed lane by lane — the
        # product and the flags made again in each branch: made before the cond, they would be
        # written out in full as its operands)
        return xp.cond(xp.reduce("logical_and", xp.isfinite(v), 0), dot,
                       lambda: _masked_sum(xp, op, xp.multiply(xs.rows(a), v), taken_here(), identity, rep))
    return _masked_sum(xp, op, rows, taken, identity, rep)


def _masked_sum(xp, op, rows, taken, identity, rep):
    return xp.reduce(op, xp.where(taken, rows, xp.asarray(identity, rep)), 1)


def ranks(xp, xs: Ragged) -> Ragged:
    """Each lane taken numbered 0, 1, … along its box (a lane not taken: any number below the
    width; masked) — known to be positions of a row, so ``index`` by them into an array of at
    least that many items checks nothing."""
    hint = _HINTS.of(xs.lanes)
    if hint is not None:
        hint.ranked = True
    # (every row's lanes taken known to lead it: numbered by their positions)
    rows = xp.lane_ranks(xs.rows(xs.lanes), lead=None if hint is None or hint.prefix is None else bool(hint.prefix))
    flat = xp.reshape(rows, (-1,))
    return Ragged(xp, xp.bounded(flat, 0, max(xs.width - 1, 0)), xs.lengths, xs.lanes)


class _Hint:
    """What an unbox body over one padded layout has asked (``ranked``: the positions of its
    items) and may assume (``prefix``: every row's lanes taken lead it; None: nothing)."""

    __slots__ = ("lanes", "ranked", "prefix")

    def __init__(self, lanes):
        self.lanes, self.ranked, self.prefix = lanes, False, None


class _Hints(threading.local):
    by_lanes: dict = {}

    def of(self, lanes):
        hint = self.by_lanes.get(id(lanes))
        return hint if hint is not None and hint.lanes is lanes else None

    @contextmanager
    def given(self, hint: _Hint):
        self.by_lanes = {**self.by_lanes, id(hint.lanes): hint}
        try:
            yield
        finally:
            self.by_lanes = {k: v for k, v in self.by_lanes.items() if v is not hint}


_HINTS = _Hints()


def evaluated(engine, evaluate, contents: Ragged):
    """``evaluate()``, the unbox body over the padded ``contents``.  When it numbers the items of
    its boxes (``iota/w``), the outermost such body is evaluated again twice, under a ``cond`` on
    whether every row's lanes taken lead it: then their positions are the lanes' own (an iota
    XLA fuses into what reads it — a triangle's rows), else a cumulative sum; a ``cond`` around
    the positions alone leaves them in a buffer that is written and read back, which cost as
    much as the rest of the triangular product.  (The first evaluation is dead code unless it
    made checks, which then stay.)"""
    xp = engine.xp
    hint = _Hint(contents.lanes)
    rows = contents.rows(contents.lanes)
    # (flags known while tracing — a triangle's, computed from known positions: decided once,
    # with no cond, which would take the flags as an operand written out in full)
    hint.prefix = xp.known_lead(rows) if xp.tracing() else None
    with _HINTS.given(hint):
        out = evaluate()
        if not hint.ranked or hint.prefix is not None or engine.ragged_depth > 1 or not xp.tracing():
            return out
        prefix = xp.reduce("logical_and", xp.reshape(xp.less_equal(rows[:, 1:], rows[:, :-1]), (-1,)), 0)

        def again(lead: bool):
            hint.prefix = lead
            return evaluate()

        return xp.cond(prefix, lambda: again(True), lambda: again(False))


__all__ = ["mapped", "ranks", "reduce_lanes"]
