"""Array primitives: the paper's Fig. 2 with the contract's meanings, and a few extras.

"Items" are the cells along the major axis of an argument's cell.  Each
implementation receives whole frames: with ``r = len(ctx.frame)``, the items
axis of an argument is axis ``r``.  Primitives returning boxes build one box per
frame cell (the contents of boxes may differ in shape, so they cannot share an
axis).  Signatures are written as in Fig. 2; the registry adds the quantifiers.

Every operation on atom data goes through the backend ``ctx.xp``; run-time checks on data are
``ctx.require``; loops over items are the backend's ``loop``/``scan`` kernels; associative
primitives are recognised by their operation's name (``Primitive.op``).
"""

from __future__ import annotations

import math
import re

from ..atoms import NUMERIC, is_float
from ..backends import host
from ..dynamics import padded
from ..dynamics.layouts import BoxFrame, Ragged, is_ragged_cell
from ..dynamics.runtime import positions
from ..dynamics.values import BoxValue, PrimFn
from . import pairwise
from .registry import primitive

INT64_MAX = 2**63 - 1


def _axis(ctx) -> int:
    return len(ctx.frame)


def _item(xs, r: int, i):
    """Item(s) ``i`` along the items axis ``r`` — always an array, even a 0-d one of boxes."""
    return xs[(slice(None),) * r + (i, Ellipsis)]


def per_cell(ctx, make):
    """An object array over the frame whose cell at ``idx`` is ``make(idx)`` (for boxes)."""
    out = host.empty(ctx.frame)
    for idx in positions(ctx.frame):
        out[idx] = make(idx)
    return out


def _vector(dims) -> str:
    return "[" + " ".join(map(str, dims)) + "]"


def _checked_dims(ctx, values, what: str, rep: str) -> tuple[int, ...]:
    """The dimensions ``values`` gives, refused if negative or past the size limit for atoms of ``rep``."""
    dims = tuple(ctx.xp.to_host(ctx.xp.reshape(values, (-1,))))
    if any(d < 0 for d in dims):
        ctx.error(f"{what}: negative dimension in the shape {_vector(dims)}")
    ctx.check_shape(dims, what, rep)
    return dims


# --- items ------------------------------------------------------------------------


@primitive("head", "(-> ((Arr t (++ (Shp (+ 1 d)) s))) (Arr t s))", "d:Dim s:Shape t:Atom", doc="The first item.")
def _head(ctx, xs):
    return _item(xs, _axis(ctx), 0)


@primitive("tail", "(-> ((Arr t (++ (Shp (+ 1 d)) s))) (Arr t s))", "d:Dim s:Shape t:Atom", doc="The last item.")
def _tail(ctx, xs):
    return _item(xs, _axis(ctx), -1)


@primitive(
    "behead", "(-> ((Arr t (++ (Shp (+ 1 d)) s))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="All items but the first.",
)
def _behead(ctx, xs):
    return ctx.xp.slice_items(xs, _axis(ctx), 1, None)


@primitive(
    "curtail", "(-> ((Arr t (++ (Shp (+ 1 d)) s))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="All items but the last.",
)
def _curtail(ctx, xs):
    return ctx.xp.slice_items(xs, _axis(ctx), None, -1)


def _length_segmented(ctx, xs):
    return ctx.xp.astype(ctx.shape.lengths, "Int") if type(xs) is Ragged else NotImplemented


@primitive(
    "length", "(-> ((Arr t (++ (Shp d) s))) (Arr Int (Shp)))", "d:Dim s:Shape t:Atom", doc="The number of items.",
    segmented=_length_segmented,
)
def _length(ctx, xs):
    return ctx.xp.full(ctx.frame, xs.shape[_axis(ctx)], "Int")


@primitive(
    "index", "(-> ((Arr t (++ (Shp d) s)) (Arr Int (Shp))) (Arr t s))", "d:Dim s:Shape t:Atom",
    doc="(index xs i) is item i of xs, counting from 0; out of range is a run-time error.",
)
def _index(ctx, xs, i):
    xp = ctx.xp
    r = _axis(ctx)
    d = xs.shape[r]
    small = xp.compact(i)  # one entry where every cell uses the same index
    known = xp.bounds(i) if xp.tracing() else None  # (a padded box's positions: in range if d ≥ the width)
    in_range = known is not None and 0 <= known[0] <= known[1] < d
    if not in_range:
        ctx.require((small >= 0) & (small < d), f"index {{}} is out of range for {d} items", small)
    if xp.tracing() and d and not in_range:  # (a lane not taken, compiled, may hold any index: masks.py)
        lo, hi = xp.asarray(0, "Int"), xp.asarray(d - 1, "Int")
        small, i = xp.minimum(xp.maximum(small, lo), hi), xp.minimum(xp.maximum(i, lo), hi)
    if small.size == 1:
        return _item(xs, r, int(xp.reshape(small, (-1,))[0]))
    whole = xp.compact(xs)
    if r and all(n == 1 for n in whole.shape[:r]):  # one array indexed at each cell's position
        items = xs[(0,) * r]  # (the items themselves as stored: they may be broadcast too)
        return xp.take(items, i, axis=0)
    idx = xp.reshape(i, i.shape + (1,) * (xs.ndim - r))
    return xp.take_along_axis(xs, xp.broadcast_to(idx, xs.shape[:r] + (1,) + xs.shape[r + 1:]), axis=r)[
        (slice(None),) * r + (0,)
    ]


@primitive(
    "append", "(-> ((Arr t (++ (Shp m) s)) (Arr t (++ (Shp n) s))) (Arr t (++ (Shp (+ m n)) s)))",
    "m:Dim n:Dim s:Shape t:Atom", doc="The items of the first argument, then those of the second.",
)
def _append(ctx, a, b):
    return ctx.xp.concat([a, b], axis=_axis(ctx))


@primitive(
    "reverse", "(-> ((Arr t (++ (Shp d) s))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="The items in reverse order.",
)
def _reverse(ctx, xs):
    return ctx.xp.flip(xs, axis=_axis(ctx))


@primitive(
    "rotate", "(-> ((Arr t (++ (Shp d) s)) (Arr Int (Shp))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="(rotate xs n): items rotated left by n (right if negative), n taken modulo the length.",
)
def _rotate(ctx, xs, n):
    xp = ctx.xp
    r = _axis(ctx)
    d = xs.shape[r]
    if d == 0 or n.size == 0:
        return xs
    small = xp.compact(n)
    lo, hi = int(xp.min(small)), int(xp.max(small))
    if lo == hi:
        return xp.roll(xs, -(lo % d), axis=r)
    idx = (xp.arange(d) + xp.expand_dims(n % d, -1)) % d  # (n % d first: no overflow for huge counts)
    idx = xp.reshape(idx, idx.shape + (1,) * (xs.ndim - r - 1))
    return xp.take_along_axis(xs, xp.broadcast_to(idx, xs.shape), axis=r)


@primitive(
    "transpose", "(-> ((Arr t (++ (Shp m n) s))) (Arr t (++ (Shp n m) s)))", "m:Dim n:Dim s:Shape t:Atom",
    doc="Swap the two major axes: rows become columns.",
)
def _transpose(ctx, xs):
    r = _axis(ctx)
    axes = list(range(xs.ndim))
    axes[r], axes[r + 1] = r + 1, r
    return ctx.xp.permute_dims(xs, axes)


# --- inner product -----------------------------------------------------------------------

#: Float contractions with at least this many multiply-adds may use BLAS (see _inner).
BLAS_WORK = 1 << 12


def _inner_segmented(ctx, a, b):
    """Exact Int inner products of ragged vectors in one pass (Floats go box by box)."""
    xp = ctx.xp
    if type(a) is not Ragged or type(b) is not Ragged:
        return NotImplemented
    if a.padded:
        if not a.same_boxes(b):
            return NotImplemented
        return padded.reduce_lanes(xp, "add", Ragged(xp, xp.multiply(a.data, b.data), a.lengths, a.lanes))
    if is_float(xp.rep(a.data)):
        return NotImplemented
    sums = xp.cumulative_sum(a.data * b.data, include_initial=True)
    return xp.gather(sums, a.offsets[1:]) - xp.gather(sums, a.offsets[:-1])


@primitive(
    "inner", "(-> ((Arr x (Shp n)) (Arr x (Shp n))) (Arr x (Shp)))", "n:Dim", overload=NUMERIC,
    doc="(inner a b) is the sum of the products of corresponding items; like reduce, it may reassociate.",
    segmented=_inner_segmented,
)
def _inner(ctx, a, b):
    xp = ctx.xp
    r = _axis(ctx)
    if r and is_float(xp.rep(a)) and math.prod(ctx.frame) * a.shape[-1] >= BLAS_WORK:
        out = _as_matrix_product(xp, a, b, r)
        if out is not None:
            return xp.broadcast_to(out, ctx.frame)
    # Each cell's sum in the same order whatever the frame and however the operands are stored:
    # both engines agree exactly (D27).
    return xp.vecdot(a, b)


def _as_matrix_product(xp, a, b, r: int):
    """Inner products over a frame along whose axes one operand varies and the other is
    broadcast (the shape of a matrix product, e.g. rows of one matrix against columns of
    another) as one BLAS matrix product; None when the frame has no such structure."""
    ca, cb = xp.compact(a), xp.compact(b)
    va = [ca.shape[j] > 1 for j in range(r)]
    vb = [cb.shape[j] > 1 for j in range(r)]
    rows = [j for j in range(r) if va[j] and not vb[j]]
    cols = [j for j in range(r) if vb[j] and not va[j]]
    both = [j for j in range(r) if va[j] and vb[j]]
    if not rows or not cols:
        return None
    rest = [j for j in range(r) if not va[j] and not vb[j]]
    size = lambda axes: math.prod(a.shape[j] if va[j] else b.shape[j] for j in axes)  # noqa: E731
    # (the other operand's axes have length 1 here and vanish in the reshape)
    left = xp.reshape(xp.permute_dims(ca, both + rows + cols + rest + [r]), (size(both), size(rows), ca.shape[r]))
    right = xp.reshape(xp.permute_dims(cb, both + cols + rows + rest + [r]), (size(both), size(cols), cb.shape[r]))
    product = xp.matmul(left, xp.permute_dims(right, (0, 2, 1)))
    dims = [max(a.shape[j], b.shape[j]) for j in range(r)]
    product = xp.reshape(product, tuple(dims[j] for j in both + rows + cols))
    order = both + rows + cols
    product = xp.permute_dims(product, [order.index(j) for j in sorted(order)])
    shape = tuple(dims[j] if j in order else 1 for j in range(r))
    return xp.reshape(product, shape)


def _total_segmented(ctx, xs):
    xp = ctx.xp
    if type(xs) is not Ragged:
        return NotImplemented
    if xs.padded:
        return padded.reduce_lanes(xp, "add", xs)
    if not is_float(xp.rep(xs.data)):  # exact in any order: one call
        sums = xp.cumulative_sum(xs.data, axis=0, include_initial=True)
        return xp.gather(sums, xs.offsets[1:]) - xp.gather(sums, xs.offsets[:-1])
    return _float_reduce(xp, "add", xs)


def _float_reduce(xp, op: str, xs: Ragged):
    """Each box's Float sum or product as NumPy's reduce rounds it alone: vectors all at once, the
    lengths as data (:mod:`.pairwise`); boxes of larger cells by groups of one length."""
    if pairwise.applies(xs):
        return pairwise.ragged_reduce(xp, op, xs)
    return _by_length(xp, xs, lambda rows: xp.reduce(op, rows, 1))


@primitive(
    "total", "(-> ((Arr x (Shp n))) (Arr x (Shp)))", "n:Dim", overload=NUMERIC,
    segmented=_total_segmented,
    doc="(total xs) is the sum of the items of a vector, 0 for an empty one; like reduce, it may reassociate.",
)
def _total(ctx, xs):
    return ctx.xp.reduce("add", xs, _axis(ctx))


# --- folds --------------------------------------------------------------------------


def _by_length(xp, xs: Ragged, reduce_rows, lengths=None):
    """``reduce_rows`` (on a (boxes, length, …) block) for every ragged box, boxes of one length
    together: each box is reduced exactly as it would be alone (``lengths``: the distinct ones,
    if known)."""
    out = None
    for length in xp.to_host(xp.unique(xs.lengths)) if lengths is None else lengths:
        boxes = xp.nonzero(xs.lengths == length)[0]
        rows = xp.gather(xs.data, xp.reshape(xp.gather(xs.offsets, boxes), (-1, 1)) + xp.arange(length))
        part = reduce_rows(rows)
        if out is None:
            out = xp.empty((xs.boxes,) + part.shape[1:], xp.rep(part))
        out = xp.scatter(out, boxes, part)
    return out


def _op_of(ctx, f) -> str | None:
    """The associative operation ``f`` is, by name, when every function in the frame is one
    associative primitive — possibly lifted over a frame by inference, which keeps it elementwise."""
    fn = ctx.uniform_function(f)
    if isinstance(fn, PrimFn):
        return fn.prim.op
    lifted = getattr(getattr(fn, "lam", None), "lifts", None)
    if lifted is not None:
        from . import PRIMITIVES

        return PRIMITIVES[lifted].op
    return None


def _fold_segmented(ctx, f, z, xs):
    """The right fold of every ragged vector at once: step t folds in each box's t-th item from the
    end, so each box sees exactly the sequence of operations it would alone."""
    xp = ctx.xp
    item_cell, acc_cell = ctx.cells[2][1:], ctx.cells[1]
    if type(xs) is not Ragged or is_ragged_cell(item_cell) or is_ragged_cell(acc_cell):
        return NotImplemented
    op = _op_of(ctx, f) if tuple(acc_cell) == tuple(item_cell) else None
    if xs.padded:  # an associative primitive, reassociated as _fold does; else each length is needed
        if op is None or (is_float(xp.rep(xs.data)) and op not in ("add", "multiply")):
            return NotImplemented
        folded = padded.reduce_lanes(xp, op, xs)
        return NotImplemented if folded is NotImplemented else xp.elementwise(op)(folded, z)
    # Longest boxes first, so the boxes still folding at step t are a prefix.
    order = xp.argsort(xs.lengths, descending=True)
    descending = -xp.gather(xs.lengths, order)
    last = xp.gather(xs.offsets[:-1], order) - descending - 1  # each box's last item
    acc = xp.gather(z, order)
    for t in range(-int(descending[0]) if len(descending) else 0):
        live = xp.searchsorted(descending, -t, side="left")  # boxes with more than t items
        items = xp.gather(xs.data, last[:live] - t)
        if op is not None:
            step = xp.elementwise(op)(items, acc[:live])  # (f item acc), as the fold is written
        else:
            step = ctx.apply_boxes(f, order[:live], [items, acc[:live]], (item_cell, acc_cell), acc_cell)
        acc = xp.scatter(acc, slice(0, live), step)
    return xp.scatter(xp.empty(acc.shape, xp.rep(acc)), order, acc)


def _reduce_segmented(ctx, f, xs):
    """Exact (Int, Bool) reductions in one call; other functions as left folds stepped together."""
    xp = ctx.xp
    cell = ctx.cells[1][1:]
    if type(xs) is not Ragged or is_ragged_cell(cell):
        return NotImplemented
    op = _op_of(ctx, f)
    if xs.padded:  # (an associative primitive only: a user function's steps would need each length)
        return NotImplemented if op is None else padded.reduce_lanes(xp, op, xs)
    if op is not None:
        if is_float(xp.rep(xs.data)) and op in ("add", "multiply"):
            return _float_reduce(xp, op, xs)  # each box as it is reduced alone
        return xp.segment_reduce(op, xs.data, xs.offsets[:-1])
    lengths, offsets = xs.lengths, xs.offsets
    acc = xp.gather(xs.data, offsets[:-1])
    for j in range(1, int(xp.max(lengths)) if len(lengths) else 0):
        active = xp.nonzero(lengths > j)[0]
        items = xp.gather(xs.data, xp.gather(offsets, active) + j)
        step = ctx.apply_boxes(f, active, [xp.gather(acc, active), items], (cell, cell), cell)
        acc = xp.scatter(acc, active, step)
    return acc


@primitive(
    "fold", "(-> ((Arr (-> ((Arr t s) T) T) (Shp)) T (Arr t (++ (Shp d) s))) T)", "d:Dim s:Shape t:Atom T:Array",
    segmented=_fold_segmented,
    doc="(fold f z xs) is the right fold (f x1 (f x2 … (f xn z))); f takes (item, accumulator).",
)
def _fold(ctx, f, z, xs):
    xp = ctx.xp
    r = _axis(ctx)
    n = xs.shape[r]
    item_cell, acc_cell = ctx.cells[2][1:], ctx.cells[1]
    op = _op_of(ctx, f)
    if op is not None and tuple(acc_cell) == tuple(item_cell) and n:
        # Every associative primitive is commutative, so the right fold is a left fold of the
        # reversed items from z: exact for Int and Bool; strictly in order (fold_items) for Float + and *.
        combine = xp.elementwise(op)
        if not is_float(xp.rep(xs)):
            return combine(xp.reduce(op, xs, r), z)
        if op in ("add", "multiply"):
            return xp.fold_items(op, z, xp.flip(xs, axis=r), r)
        # Float max and min are not commutative on signed zeros: (f item acc), as written
        xs = xp.loop_items(xs)
        return xp.loop(n, lambda i, acc: combine(_item(xs, r, n - 1 - i), acc), z)
    xs = xp.loop_items(xs)
    return xp.loop(n, lambda i, acc: ctx.apply(f, [_item(xs, r, n - 1 - i), acc], (item_cell, acc_cell), acc_cell), z)


@primitive(
    "reduce", "(-> ((Arr (-> ((Arr t s) (Arr t s)) (Arr t s)) (Shp)) (Arr t (++ (Shp (+ 1 d)) s))) (Arr t s))",
    "d:Dim s:Shape t:Atom", segmented=_reduce_segmented,
    doc="(reduce f xs) combines the items left to right, (f (f x1 x2) x3) …; may reassociate.",
)
def _reduce(ctx, f, xs):
    xp = ctx.xp
    r = _axis(ctx)
    op = _op_of(ctx, f)
    if op is not None:
        return xp.reduce(op, xs, r)
    cell = ctx.cells[1][1:]
    xs = xp.loop_items(xs)
    step = lambda i, acc: ctx.apply(f, [acc, _item(xs, r, i + 1)], (cell, cell), cell)  # noqa: E731
    return xp.loop(xs.shape[r] - 1, step, _item(xs, r, 0))


@primitive(
    "scan", "(-> ((Arr (-> ((Arr u r) (Arr t s)) (Arr u r)) (Shp)) (Arr u r) (Arr t (++ (Shp d) s))) (Arr u (++ (Shp d) r)))",
    "d:Dim r:Shape s:Shape u:Atom t:Atom",
    doc="(scan f z xs): the running left fold, one result per item, z excluded; f takes (accumulator, item).",
)
def _scan(ctx, f, z, xs):
    xp = ctx.xp
    r = _axis(ctx)
    n = xs.shape[r]
    acc_cell, item_cell = ctx.cells[1], ctx.cells[2][1:]
    op = _op_of(ctx, f)
    if op is not None and acc_cell == item_cell:
        if is_float(xp.rep(xs)):  # exactly the left scan: z first, then each item in turn
            steps = xp.concat([xp.expand_dims(z, r), xs], axis=r)
            return _item(xp.accumulate(op, steps, axis=r), r, slice(1, None))
        running = xp.accumulate(op, xs, axis=r) if n else xs
        return xp.elementwise(op)(xp.expand_dims(z, r), running)
    if not n:
        return xp.empty(ctx.frame + (0,) + tuple(acc_cell), xp.rep(z))
    xs = xp.loop_items(xs)
    step = lambda i, acc: ctx.apply(f, [acc, _item(xs, r, i)], (acc_cell, item_cell), acc_cell)  # noqa: E731
    return xp.scan(n, step, z, axis=r)


# --- boxed results --------------------------------------------------------------------


@primitive(
    "shape", "(-> ((Arr t s)) (Arr (Sigma ((d Dim)) (Arr Int (Shp d))) (Shp)))", "s:Shape t:Atom",
    doc="A box holding the dimensions of the argument as an Int vector.",
)
def _shape(ctx, xs):
    cell = xs.shape[_axis(ctx):]
    box = BoxValue((len(cell),), ctx.xp.asarray(list(cell), "Int"))
    return per_cell(ctx, lambda idx: box)


@primitive(
    "ravel", "(-> ((Arr t s)) (Arr (Sigma ((d Dim)) (Arr t (Shp d))) (Shp)))", "s:Shape t:Atom",
    doc="A box holding all atoms of the argument as a vector, row-major.",
)
def _ravel(ctx, xs):
    def make(idx):
        flat = ctx.xp.reshape(xs[idx], (-1,))
        return BoxValue((flat.shape[0],), flat)

    return per_cell(ctx, make)


@primitive(
    "filter", "(-> ((Arr Bool (Shp d)) (Arr t (++ (Shp d) s))) (Arr (Sigma ((k Dim)) (Arr t (++ (Shp k) s))) (Shp)))",
    "d:Dim s:Shape t:Atom",
    doc="(filter bs xs): a box holding the items of xs whose flag in bs is #t.",
)
def _filter(ctx, bs, xs):
    xp = ctx.xp
    if ctx.frame and not host.is_host(xs) and xp.tracing():
        # Compiled, the kept items may not be known: each row stays in its lanes (dynamics/padded.py).
        n, lanes = math.prod(ctx.frame), math.prod(bs.shape[len(ctx.frame):])
        rest = xs.shape[len(bs.shape):]
        data = xp.reshape(xp.broadcast_to(xs, ctx.frame + xs.shape[len(ctx.frame):]), (n * lanes,) + rest)
        flags = xp.staged(xp.reshape(xp.broadcast_to(bs, ctx.frame + bs.shape[len(ctx.frame):]), (n * lanes,)))
        return BoxFrame(xp, ctx.frame, data, xp.astype(xp.sum(bs, axis=-1), "Int"), flags)
    if ctx.frame and not host.is_host(xs):  # all the frame's boxes in one flat buffer
        return BoxFrame(xp, ctx.frame, xp.select_items(xs, bs), xp.sum(bs, axis=-1))

    def make(idx):
        kept = xp.select_items(xs[idx], bs[idx])
        return BoxValue((kept.shape[0],), kept)

    return per_cell(ctx, make)


@primitive(
    "iota", "(-> ((Arr Int (Shp d))) (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp)))", "d:Dim",
    doc="(iota shp): a box holding an array of shape shp filled with 0, 1, 2, … row-major.",
)
def _iota(ctx, shp):
    def make(idx):
        dims = _checked_dims(ctx, shp[idx], "iota", "Int")
        return BoxValue((dims,), ctx.xp.reshape(ctx.xp.arange(math.prod(dims)), dims))

    return per_cell(ctx, make)


@primitive(
    "iota/v", "(-> ((Arr Int (Shp))) (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp)))",
    doc="(iota/v n): a box holding the vector 0 … n-1.",
)
def _iota_v(ctx, n):
    xp = ctx.xp
    ctx.require(n >= 0, "iota/v of a negative length, {}", n)
    if ctx.frame:  # all the frame's vectors 0 … k-1 in one flat buffer
        lengths = xp.reshape(xp.contiguous(n), (-1,))
        total = ctx.check_total(lengths, "iota/v", "Int")
        starts = xp.repeat(xp.cumulative_sum(lengths) - lengths, lengths)
        return BoxFrame(xp, ctx.frame, xp.arange(total) - starts, lengths)

    def make(idx):
        k = int(n[idx])
        ctx.check_size(k, "iota/v", "Int")
        return BoxValue((k,), xp.arange(k))

    return per_cell(ctx, make)


def _iota_of_shape(ctx, dims: tuple[int, ...], what: str):
    ctx.check_shape(ctx.frame + dims, what)
    cell = ctx.xp.reshape(ctx.xp.arange(math.prod(dims)), dims)
    return ctx.xp.broadcast_to(cell, ctx.frame + dims)


@primitive(
    "iota/s", "(-> () (Arr Int s))", "s:Shape",
    doc="((i-app iota/s (Shp 2 3))) is [[0 1 2] [3 4 5]]: 0, 1, 2, … in the shape given as an index.",
)
def _iota_s(ctx):
    return _iota_of_shape(ctx, tuple(ctx.indices[0]), "iota/s")


def _iota_w_segmented(ctx, xs):
    """0 … k-1 for every ragged vector at once."""
    xp = ctx.xp
    if type(xs) is not Ragged or xs.data.ndim != 1:
        return NotImplemented
    if xs.padded:
        return padded.ranks(xp, xs)
    starts = xp.repeat(xs.offsets[:-1], xs.lengths)
    return Ragged(xp, xp.arange(len(xs.data)) - starts, xs.lengths)


@primitive(
    "iota/w", "(-> ((Arr t s)) (Arr Int s))", "s:Shape t:Atom", segmented=_iota_w_segmented,
    doc="(iota/w xs): 0, 1, 2, … in the shape of xs (a shape witness).",
)
def _iota_w(ctx, xs):
    return _iota_of_shape(ctx, tuple(xs.shape[_axis(ctx):]), "iota/w")


@primitive(
    "reshape", "(-> ((Arr Int (Shp d)) (Arr t r)) (Arr (Sigma ((s Shape)) (Arr t s)) (Shp)))", "d:Dim r:Shape t:Atom",
    doc="(reshape shp xs): a box of shape shp filled with the atoms of xs, repeated cyclically.",
)
def _reshape(ctx, shp, xs):
    def make(idx):
        dims = _checked_dims(ctx, shp[idx], "reshape", ctx.xp.rep(xs))
        flat = ctx.xp.reshape(xs[idx], (-1,))
        n = math.prod(dims)
        if flat.size == 0 and n:
            ctx.error(f"reshape of an empty array to the shape {_vector(dims)}, which has atoms")
        return BoxValue((dims,), ctx.xp.reshape(ctx.xp.resize(flat, n), dims))

    return per_cell(ctx, make)


_INT_TOKEN = re.compile(r"[-+]?[0-9]+\Z")


@primitive(
    "read-nums", "(-> () (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp)))", effectful=True,
    doc="(read-nums) reads whitespace-separated integers from standard input to its end, as a boxed vector.",
)
def _read_nums(ctx):
    def make(idx):
        values = []
        for w in _standard_input(ctx).split():
            if not _INT_TOKEN.match(w):
                ctx.error(f"read-nums: `{w[:40]}` in the input is not an integer")
            value = _int64(w)
            if value is None:
                ctx.error(f"read-nums: `{_abridged(w)}` in the input does not fit in a 64-bit Int")
            values.append(value)
        return BoxValue((len(values),), ctx.xp.asarray(values, "Int"))

    return per_cell(ctx, make)


def _standard_input(ctx) -> str:
    """All of standard input, or a located error saying why it cannot be read (it may be closed:
    Python then has no ``sys.stdin`` at all; or unreadable, or not text)."""
    stdin = ctx.stdin
    if stdin is None:
        ctx.error("read-nums: standard input is closed")
    try:
        return stdin.read()
    except UnicodeDecodeError:
        ctx.error("read-nums: standard input is not UTF-8 text")
    except (OSError, ValueError) as exc:  # (ValueError: a closed or detached stream)
        ctx.error(f"read-nums: cannot read standard input: {getattr(exc, 'strerror', None) or exc}")


def _int64(word: str) -> int | None:
    """The value of an integer token (``_INT_TOKEN``), or None if it does not fit in an Int.  Its
    length is looked at first: Python refuses to convert more than a few thousand digits."""
    digits = word.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:  # 2^63 has 19 digits
        return None
    value = -int(digits) if word.startswith("-") else int(digits)
    return value if -INT64_MAX - 1 <= value <= INT64_MAX else None


def _abridged(word: str) -> str:
    return word if len(word) <= 40 else f"{word[:20]}…{word[-10:]} ({len(word)} characters)"
