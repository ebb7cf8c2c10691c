"""Array primitives: the paper's Fig. 2 with the contract's meanings, and a few extras.

"Items" are the cells along the major axis of an argument's cell.  Each
implementation receives whole frames: with ``r = len(ctx.frame)``, the items
axis of an argument is axis ``r``.  Primitives returning boxes build one box per
frame cell (the contents of boxes may differ in shape, so they cannot share an
axis).  Signatures are written as in Fig. 2; the registry adds the quantifiers.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..dynamics.layouts import BoxFrame, Ragged, is_ragged_cell
from ..dynamics.runtime import compact
from ..dynamics.values import BoxValue, PrimFn
from .registry import primitive

INT64_MAX = 2**63 - 1


def _axis(ctx) -> int:
    return len(ctx.frame)


def _item(xs: np.ndarray, r: int, i) -> np.ndarray:
    """Item(s) ``i`` along the items axis ``r`` — always an array, even a 0-d one of boxes."""
    return xs[(slice(None),) * r + (i, Ellipsis)]


def per_cell(ctx, make) -> np.ndarray:
    """An object array over the frame whose cell at ``idx`` is ``make(idx)`` (for boxes)."""
    out = np.empty(ctx.frame, dtype=object)
    for idx in np.ndindex(*ctx.frame):
        out[idx] = make(idx)
    return out


def _vector(dims) -> str:
    return "[" + " ".join(map(str, dims)) + "]"


def _checked_dims(ctx, values, what: str) -> tuple[int, ...]:
    dims = tuple(int(v) for v in np.asarray(values).ravel())
    if any(d < 0 for d in dims):
        ctx.error(f"{what}: negative dimension in the shape {_vector(dims)}")
    ctx.check_shape(dims, what)
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
    return _item(xs, _axis(ctx), slice(1, None))


@primitive(
    "curtail", "(-> ((Arr t (++ (Shp (+ 1 d)) s))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="All items but the last.",
)
def _curtail(ctx, xs):
    return _item(xs, _axis(ctx), slice(None, -1))


def _length_segmented(ctx, xs):
    return ctx.shape.lengths.copy() if type(xs) is Ragged else NotImplemented


@primitive(
    "length", "(-> ((Arr t (++ (Shp d) s))) (Arr Int (Shp)))", "d:Dim s:Shape t:Atom", doc="The number of items.",
    segmented=_length_segmented,
)
def _length(ctx, xs):
    return np.full(ctx.frame, xs.shape[_axis(ctx)], dtype=np.int64)


@primitive(
    "index", "(-> ((Arr t (++ (Shp d) s)) (Arr Int (Shp))) (Arr t s))", "d:Dim s:Shape t:Atom",
    doc="(index xs i) is item i of xs, counting from 0; out of range is a run-time error.",
)
def _index(ctx, xs, i):
    r = _axis(ctx)
    d = xs.shape[r]
    small = compact(i)  # one entry where every cell uses the same index
    if small.size and (np.min(small) < 0 or np.max(small) >= d):
        bad = int(small.ravel()[np.argmax((small.ravel() < 0) | (small.ravel() >= d))])
        ctx.error(f"index {bad} is out of range for {d} items")
    if small.size == 1:
        return _item(xs, r, int(small.ravel()[0]))
    whole = compact(xs)
    if r and all(n == 1 for n in whole.shape[:r]):  # one array indexed at each cell's position
        items = xs[(0,) * r]  # (the items themselves as stored: they may be broadcast too)
        return np.take(items, i, axis=0)
    idx = i.reshape(i.shape + (1,) * (xs.ndim - r))
    return np.take_along_axis(xs, np.broadcast_to(idx, xs.shape[:r] + (1,) + xs.shape[r + 1:]), axis=r)[
        (slice(None),) * r + (0,)
    ]


@primitive(
    "append", "(-> ((Arr t (++ (Shp m) s)) (Arr t (++ (Shp n) s))) (Arr t (++ (Shp (+ m n)) s)))",
    "m:Dim n:Dim s:Shape t:Atom", doc="The items of the first argument, then those of the second.",
)
def _append(ctx, a, b):
    return np.concatenate([a, b], axis=_axis(ctx))


@primitive(
    "reverse", "(-> ((Arr t (++ (Shp d) s))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="The items in reverse order.",
)
def _reverse(ctx, xs):
    return np.flip(xs, axis=_axis(ctx))


@primitive(
    "rotate", "(-> ((Arr t (++ (Shp d) s)) (Arr Int (Shp))) (Arr t (++ (Shp d) s)))", "d:Dim s:Shape t:Atom",
    doc="(rotate xs n): items rotated left by n (right if negative), n taken modulo the length.",
)
def _rotate(ctx, xs, n):
    r = _axis(ctx)
    d = xs.shape[r]
    if d == 0 or n.size == 0:
        return xs
    small = compact(n)
    lo, hi = int(np.min(small)), int(np.max(small))
    if lo == hi:
        return np.roll(xs, -(lo % d), axis=r)
    idx = (np.arange(d) + (n % d)[..., None]) % d  # (n % d first: no overflow for huge counts)
    idx = idx.reshape(idx.shape + (1,) * (xs.ndim - r - 1))
    return np.take_along_axis(xs, np.broadcast_to(idx, xs.shape), axis=r)


@primitive(
    "transpose", "(-> ((Arr t (++ (Shp m n) s))) (Arr t (++ (Shp n m) s)))", "m:Dim n:Dim s:Shape t:Atom",
    doc="Swap the two major axes: rows become columns.",
)
def _transpose(ctx, xs):
    r = _axis(ctx)
    return np.swapaxes(xs, r, r + 1)


# --- inner product -----------------------------------------------------------------------

#: Float contractions with at least this many multiply-adds may use BLAS (see _inner).
BLAS_WORK = 1 << 20


def _inner_segmented(ctx, a, b):
    """Exact Int inner products of ragged vectors in one pass (Floats go box by box)."""
    if type(a) is not Ragged or type(b) is not Ragged or a.data.dtype.kind == "f":
        return NotImplemented
    sums = np.concatenate([[0], np.cumsum(a.data * b.data)])
    return sums[a.offsets[1:]] - sums[a.offsets[:-1]]


@primitive(
    "inner", "(-> ((Arr x (Shp n)) (Arr x (Shp n))) (Arr x (Shp)))", "n:Dim", overload=frozenset({"Int", "Float"}),
    doc="(inner a b) is the sum of the products of corresponding items; like reduce, it may reassociate.",
    segmented=_inner_segmented,
)
def _inner(ctx, a, b):
    r = _axis(ctx)
    if r and a.dtype.kind == "f" and math.prod(ctx.frame) * a.shape[-1] >= BLAS_WORK:
        out = _as_matrix_product(a, b, r)
        if out is not None:
            return np.broadcast_to(out, ctx.frame)
    # Each cell's sum in the same order whatever the frame: both engines agree exactly (einsum
    # would factor out an operand that is constant along the items, so give it real items).
    return np.einsum("...i,...i->...", _real_items(a), _real_items(b))


def _real_items(x: np.ndarray) -> np.ndarray:
    """``x`` with its last (items) axis stored, not broadcast; other axes may stay broadcast."""
    if x.ndim == 0 or x.strides[-1] != 0 or x.shape[-1] <= 1:
        return x
    small = compact(x)
    return np.broadcast_to(np.repeat(small, x.shape[-1], axis=-1), x.shape)


def _as_matrix_product(a, b, r: int):
    """Inner products over a frame along whose axes one operand varies and the other is
    broadcast (the shape of a matrix product, e.g. rows of one matrix against columns of
    another) as one BLAS matrix product; None when the frame has no such structure."""
    ca, cb = compact(a), compact(b)
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
    left = ca.transpose(both + rows + cols + rest + [r]).reshape(size(both), size(rows), ca.shape[r])
    right = cb.transpose(both + cols + rows + rest + [r]).reshape(size(both), size(cols), cb.shape[r])
    product = np.matmul(left, right.transpose(0, 2, 1))
    dims = [max(a.shape[j], b.shape[j]) for j in range(r)]
    product = product.reshape([dims[j] for j in both + rows + cols])
    order = both + rows + cols
    product = product.transpose([order.index(j) for j in sorted(order)])
    shape = [dims[j] if j in order else 1 for j in range(r)]
    return product.reshape(shape)


def _total_segmented(ctx, xs):
    if type(xs) is not Ragged:
        return NotImplemented
    if xs.data.dtype.kind != "f":  # exact in any order: one call
        sums = np.concatenate([np.zeros((1,) + xs.data.shape[1:], xs.data.dtype), np.cumsum(xs.data, axis=0)])
        return sums[xs.offsets[1:]] - sums[xs.offsets[:-1]]
    return _by_length(xs, lambda rows: assoc_reduce(np.add, rows, 1))


@primitive(
    "total", "(-> ((Arr x (Shp n))) (Arr x (Shp)))", "n:Dim", overload=frozenset({"Int", "Float"}),
    segmented=_total_segmented,
    doc="(total xs) is the sum of the items of a vector, 0 for an empty one; like reduce, it may reassociate.",
)
def _total(ctx, xs):
    return assoc_reduce(np.add, xs, _axis(ctx))


# --- folds --------------------------------------------------------------------------


def assoc_reduce(ufunc, xs: np.ndarray, axis: int) -> np.ndarray:
    """``ufunc`` folded over ``axis`` in one call.  Float sums and products are reduced along a
    contiguous last axis, so each cell's rounding is the same whatever frame surrounds it (both
    engines agree); everything else (Int, Bool, min, max) is exact in any order."""
    if xs.dtype.kind == "f" and ufunc in (np.add, np.multiply):
        return ufunc.reduce(np.ascontiguousarray(np.moveaxis(xs, axis, -1)), axis=-1)
    return ufunc.reduce(xs, axis=axis)


def _by_length(xs: Ragged, reduce_rows) -> np.ndarray:
    """``reduce_rows`` (on a (boxes, length, …) block) for every ragged box, boxes of one length
    together: each box is reduced exactly as it would be alone."""
    out = None
    for length in np.unique(xs.lengths):
        boxes = np.nonzero(xs.lengths == length)[0]
        rows = xs.data[xs.offsets[boxes][:, None] + np.arange(length)]
        part = reduce_rows(rows)
        if out is None:
            out = np.empty((xs.boxes,) + part.shape[1:], dtype=part.dtype)
        out[boxes] = part
    return out


def _ufunc_of(ctx, f):
    """The NumPy ufunc equal to ``f`` when every function in the frame is one associative
    primitive — possibly lifted over a frame by inference, which keeps it elementwise."""
    fn = ctx.uniform_function(f)
    if isinstance(fn, PrimFn):
        return fn.prim.ufunc
    lifted = getattr(getattr(fn, "lam", None), "lifts", None)
    if lifted is not None:
        from . import PRIMITIVES

        return PRIMITIVES[lifted].ufunc
    return None


def _fold_segmented(ctx, f, z, xs):
    """The right fold of every ragged vector at once: step t folds in each box's t-th item from the
    end, so each box sees exactly the sequence of operations it would alone."""
    item_cell, acc_cell = ctx.cells[2][1:], ctx.cells[1]
    if type(xs) is not Ragged or is_ragged_cell(item_cell) or is_ragged_cell(acc_cell):
        return NotImplemented
    ufunc = _ufunc_of(ctx, f) if tuple(acc_cell) == tuple(item_cell) else None
    # Longest boxes first, so the boxes still folding at step t are a prefix.
    order = np.argsort(-xs.lengths, kind="stable")
    descending = -xs.lengths[order]
    last = xs.offsets[:-1][order] - descending - 1  # each box's last item
    acc = np.array(z)[order]
    fns = f if ufunc is None else None
    for t in range(int(-descending[0]) if len(descending) else 0):
        live = int(np.searchsorted(descending, -t, side="left"))  # boxes with more than t items
        items = xs.data[last[:live] - t]
        if ufunc is not None:
            ufunc(items, acc[:live], out=acc[:live])  # (f item acc), as the fold is written
        else:
            acc[:live] = ctx.apply_boxes(fns, order[:live], [items, acc[:live]], (item_cell, acc_cell), acc_cell)
    out = np.empty_like(acc)
    out[order] = acc
    return out


def _reduce_segmented(ctx, f, xs):
    """Exact (Int, Bool) reductions in one call; other functions as left folds stepped together."""
    cell = ctx.cells[1][1:]
    if type(xs) is not Ragged or is_ragged_cell(cell):
        return NotImplemented
    ufunc = _ufunc_of(ctx, f)
    if ufunc is not None:
        if xs.data.dtype.kind == "f" and ufunc in (np.add, np.multiply):
            return _by_length(xs, lambda rows: assoc_reduce(ufunc, rows, 1))  # pairwise, box by box
        return ufunc.reduceat(xs.data, xs.offsets[:-1], axis=0)
    lengths, offsets = xs.lengths, xs.offsets
    acc = np.array(xs.data[offsets[:-1]])
    for j in range(1, int(lengths.max()) if len(lengths) else 0):
        active = np.nonzero(lengths > j)[0]
        items = xs.data[offsets[active] + j]
        acc[active] = ctx.apply_boxes(f, active, [acc[active], items], (cell, cell), cell)
    return acc


@primitive(
    "fold", "(-> ((Arr (-> ((Arr t s) T) T) (Shp)) T (Arr t (++ (Shp d) s))) T)", "d:Dim s:Shape t:Atom T:Array",
    segmented=_fold_segmented,
    doc="(fold f z xs) is the right fold (f x1 (f x2 … (f xn z))); f takes (item, accumulator).",
)
def _fold(ctx, f, z, xs):
    r = _axis(ctx)
    item_cell, acc_cell = ctx.cells[2][1:], ctx.cells[1]
    ufunc = _ufunc_of(ctx, f)
    if ufunc is not None and tuple(acc_cell) == tuple(item_cell) and xs.shape[r]:
        # Every primitive with a ufunc is commutative, so the right fold is a left fold of the
        # reversed items from z: exact for Int and Bool; sequential (accumulate) for Float + and *.
        if xs.dtype.kind != "f":
            return ufunc(assoc_reduce(ufunc, xs, r), z)
        if ufunc in (np.add, np.multiply):
            steps = np.concatenate([np.expand_dims(z, r), np.flip(xs, axis=r)], axis=r)
            return _item(ufunc.accumulate(steps, axis=r), r, -1)
        acc = z  # Float max and min are not commutative on signed zeros: (f item acc), as written
        for i in reversed(range(xs.shape[r])):
            acc = ufunc(_item(xs, r, i), acc)
        return acc
    acc = z
    for i in reversed(range(xs.shape[r])):
        acc = ctx.apply(f, [_item(xs, r, i), acc], (item_cell, acc_cell), acc_cell)
    return acc


@primitive(
    "reduce", "(-> ((Arr (-> ((Arr t s) (Arr t s)) (Arr t s)) (Shp)) (Arr t (++ (Shp (+ 1 d)) s))) (Arr t s))",
    "d:Dim s:Shape t:Atom", segmented=_reduce_segmented,
    doc="(reduce f xs) combines the items left to right, (f (f x1 x2) x3) …; may reassociate.",
)
def _reduce(ctx, f, xs):
    r = _axis(ctx)
    ufunc = _ufunc_of(ctx, f)
    if ufunc is not None:
        return assoc_reduce(ufunc, xs, r)
    cell = ctx.cells[1][1:]
    acc = _item(xs, r, 0)
    for i in range(1, xs.shape[r]):
        acc = ctx.apply(f, [acc, _item(xs, r, i)], (cell, cell), cell)
    return acc


@primitive(
    "scan", "(-> ((Arr (-> ((Arr u r) (Arr t s)) (Arr u r)) (Shp)) (Arr u r) (Arr t (++ (Shp d) s))) (Arr u (++ (Shp d) r)))",
    "d:Dim r:Shape s:Shape u:Atom t:Atom",
    doc="(scan f z xs): the running left fold, one result per item, z excluded; f takes (accumulator, item).",
)
def _scan(ctx, f, z, xs):
    r = _axis(ctx)
    acc_cell, item_cell = ctx.cells[1], ctx.cells[2][1:]
    ufunc = _ufunc_of(ctx, f)
    if ufunc is not None and acc_cell == item_cell:
        if xs.dtype.kind == "f":  # exactly the left scan: z first, then each item in turn
            steps = np.concatenate([np.expand_dims(z, r), xs], axis=r)
            return _item(ufunc.accumulate(steps, axis=r), r, slice(1, None))
        running = ufunc.accumulate(xs, axis=r) if xs.shape[r] else xs
        return ufunc(np.expand_dims(z, r), running)
    results = []
    acc = z
    for i in range(xs.shape[r]):
        acc = ctx.apply(f, [acc, _item(xs, r, i)], (acc_cell, item_cell), acc_cell)
        results.append(acc)
    if not results:
        return np.empty(ctx.frame + (0,) + tuple(acc_cell), dtype=z.dtype)
    return np.stack(results, axis=r)


# --- boxed results --------------------------------------------------------------------


@primitive(
    "shape", "(-> ((Arr t s)) (Arr (Sigma ((d Dim)) (Arr Int (Shp d))) (Shp)))", "s:Shape t:Atom",
    doc="A box holding the dimensions of the argument as an Int vector.",
)
def _shape(ctx, xs):
    cell = xs.shape[_axis(ctx):]
    box = BoxValue((len(cell),), np.array(cell, dtype=np.int64))
    return per_cell(ctx, lambda idx: box)


@primitive(
    "ravel", "(-> ((Arr t s)) (Arr (Sigma ((d Dim)) (Arr t (Shp d))) (Shp)))", "s:Shape t:Atom",
    doc="A box holding all atoms of the argument as a vector, row-major.",
)
def _ravel(ctx, xs):
    def make(idx):
        flat = xs[idx].reshape(-1)
        return BoxValue((flat.shape[0],), flat)

    return per_cell(ctx, make)


def _kept_items(xs: np.ndarray, bs: np.ndarray, lead: int) -> np.ndarray:
    """The items of ``xs`` flagged in ``bs`` (its first ``lead`` axes), in row-major order."""
    rest = xs.shape[lead:]
    if 0 < math.prod(rest) <= 8:  # narrow items: select each component (faster on strided views)
        parts = [xs[(Ellipsis,) + idx][bs] for idx in np.ndindex(*rest)]
        return np.stack(parts, axis=-1).reshape((-1,) + rest)
    return xs[np.nonzero(bs)]


@primitive(
    "filter", "(-> ((Arr Bool (Shp d)) (Arr t (++ (Shp d) s))) (Arr (Sigma ((k Dim)) (Arr t (++ (Shp k) s))) (Shp)))",
    "d:Dim s:Shape t:Atom",
    doc="(filter bs xs): a box holding the items of xs whose flag in bs is #t.",
)
def _filter(ctx, bs, xs):
    if ctx.frame and xs.dtype != object:  # all the frame's boxes in one flat buffer
        return BoxFrame(ctx.frame, _kept_items(xs, bs, len(ctx.frame) + 1), bs.sum(axis=-1))

    def make(idx):
        kept = xs[idx][bs[idx]]
        return BoxValue((kept.shape[0],), kept)

    return per_cell(ctx, make)


@primitive(
    "iota", "(-> ((Arr Int (Shp d))) (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp)))", "d:Dim",
    doc="(iota shp): a box holding an array of shape shp filled with 0, 1, 2, … row-major.",
)
def _iota(ctx, shp):
    def make(idx):
        dims = _checked_dims(ctx, shp[idx], "iota")
        return BoxValue((dims,), np.arange(int(np.prod(dims, dtype=np.int64)), dtype=np.int64).reshape(dims))

    return per_cell(ctx, make)


@primitive(
    "iota/v", "(-> ((Arr Int (Shp))) (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp)))",
    doc="(iota/v n): a box holding the vector 0 … n-1.",
)
def _iota_v(ctx, n):
    if ctx.frame:  # all the frame's vectors 0 … k-1 in one flat buffer
        lengths = np.ascontiguousarray(n, dtype=np.int64).reshape(-1)
        if lengths.size and lengths.min() < 0:
            ctx.error(f"iota/v of a negative length, {int(lengths.min())}")
        total = int(lengths.sum())
        ctx.check_size(total, "iota/v")
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        return BoxFrame(ctx.frame, np.arange(total, dtype=np.int64) - starts, lengths)

    def make(idx):
        k = int(n[idx])
        if k < 0:
            ctx.error(f"iota/v of a negative length, {k}")
        ctx.check_size(k, "iota/v")
        return BoxValue((k,), np.arange(k, dtype=np.int64))

    return per_cell(ctx, make)


def _iota_of_shape(ctx, dims: tuple[int, ...], what: str) -> np.ndarray:
    ctx.check_shape(ctx.frame + dims, what)
    cell = np.arange(int(np.prod(dims, dtype=np.int64)), dtype=np.int64).reshape(dims)
    return np.broadcast_to(cell, ctx.frame + dims)


@primitive(
    "iota/s", "(-> () (Arr Int s))", "s:Shape",
    doc="((i-app iota/s (Shp 2 3))) is [[0 1 2] [3 4 5]]: 0, 1, 2, … in the shape given as an index.",
)
def _iota_s(ctx):
    return _iota_of_shape(ctx, tuple(ctx.indices[0]), "iota/s")


def _iota_w_segmented(ctx, xs):
    """0 … k-1 for every ragged vector at once."""
    if type(xs) is not Ragged or xs.data.ndim != 1:
        return NotImplemented
    starts = np.repeat(xs.offsets[:-1], xs.lengths)
    return Ragged(np.arange(len(xs.data), dtype=np.int64) - starts, xs.lengths)


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
        dims = _checked_dims(ctx, shp[idx], "reshape")
        flat = xs[idx].reshape(-1)
        n = int(np.prod(dims, dtype=np.int64))
        if flat.size == 0 and n:
            ctx.error(f"reshape of an empty array to the shape {_vector(dims)}, which has atoms")
        return BoxValue((dims,), np.resize(flat, n).reshape(dims))

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
        return BoxValue((len(values),), np.array(values, dtype=np.int64))

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
