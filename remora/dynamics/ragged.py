"""Ragged evaluation: an ``unbox`` body run once over boxes of *different* lengths.

When the boxes of a frame differ in the length of their leading axis (the rows of a
triangular matrix, the survivors of ``filter``), grouping boxes by shape would evaluate the
body once per distinct length.  Instead, the contents are laid out as one flat buffer along
that axis (a :class:`Ragged` value: data, plus one length per box), the existential
dimension is bound to the vector of lengths (a :class:`RaggedDim`), and the body is
evaluated once, over the batch of boxes:

- an application whose frame *contains* the ragged axis (elementwise arithmetic, a λ mapped
  over the items) runs on the flat buffer as if the items of all boxes were one frame; values
  that belong to a whole box are repeated per item;
- an application whose function *consumes* the ragged axis (``sum``, ``fold``, ``length``, a
  λ taking the whole vector) binds the ragged value to the λ's parameter, or calls the
  primitive's segmented implementation, or else the primitive's ordinary implementation once
  per box — so every box gets exactly the result it gets alone;
- anything else raises :class:`NeedGrouping`, and the engine evaluates the body by groups.

So this is only ever a faster route to the same values.
"""

from __future__ import annotations

import numpy as np

from .batched import FrameContext, Val, align, obj_scalar, plain_val, restrict_closure, restrict_env, spread
from .layouts import BoxFrame, NeedGrouping, Ragged, RaggedDim, is_ragged_cell
from .runtime import Closure, IClosure, PrimContext, compact, shape_value
from .values import BoxValue, PrimFn


def _concrete(shape: tuple, c: int) -> tuple:
    """``shape`` with every ragged dimension replaced by its value for box ``c``."""
    return tuple(int(d.lengths[c]) if isinstance(d, RaggedDim) else d for d in shape)


# ---------------------------------------------------------------------------
# unbox


def unbox(engine, e, env, ienv, boxes, tf: tuple, body_shape: tuple, dtype) -> np.ndarray:
    """The unbox body over ``boxes`` — a flat object array of boxes, or a BoxFrame — with
    frame ``tf``, evaluated once; or NeedGrouping."""
    if len(e.index_vars) != 1 or e.index_vars[0].sort != "Dim":
        raise NeedGrouping
    if type(boxes) is BoxFrame:
        data, lengths = boxes.data, boxes.lengths
        n = len(lengths)
    else:
        first: BoxValue = boxes[0]
        rest, kind = first.value.shape[1:], first.value.dtype
        for b in boxes:
            v = b.value
            if v.ndim == 0 or v.shape[1:] != rest or v.dtype != kind or b.indices != (v.shape[0],):
                raise NeedGrouping
        n = len(boxes)
        lengths = np.fromiter((b.value.shape[0] for b in boxes), dtype=np.int64, count=n)
        data = np.concatenate([b.value for b in boxes]) if n else np.empty((0,) + rest, kind)
    inner = restrict_env(env, engine._free_of(e), tf, np.arange(n))
    inner[e.value_name] = Val(Ragged(data, lengths), 1)
    inner_i = dict(ienv)
    inner_i[e.index_vars[0]] = RaggedDim(lengths)
    engine.ragged_depth += 1
    try:
        r = engine.ev(e.body, inner, inner_i, (n,))
    finally:
        engine.ragged_depth -= 1
    if type(r.arr) is Ragged:
        raise NeedGrouping
    return spread(align(plain_val(r), 1, 0, 0), (n,) + body_shape)


# ---------------------------------------------------------------------------
# applications inside a ragged body


def app(engine, fn, args, cells, result, dtype, span, batch):
    """An application some of whose participants are ragged."""
    parts = [fn] + list(args)
    cellz = [()] + list(cells)
    ragged = [i for i, p in enumerate(parts) if type(p.arr) is Ragged]
    shape = parts[ragged[0]].arr
    if len(batch) != 1 or batch[0] != shape.boxes:
        raise NeedGrouping
    for i in ragged:
        r = parts[i].arr
        if parts[i].k != 1 or (r is not shape and not np.array_equal(r.lengths, shape.lengths)):
            raise NeedGrouping
    consumed = [i for i in ragged if is_ragged_cell(cellz[i])]
    if not consumed:
        return _mapped(engine, parts, cellz, result, dtype, span, shape)
    if len(consumed) == len(ragged) and 0 not in ragged:
        return _consumed(engine, parts, cellz, result, dtype, span, shape)
    raise NeedGrouping


def _mapped(engine, parts, cellz, result, dtype, span, shape: Ragged):
    """The ragged axis is in the frame: run over all items of all boxes as one flat frame."""
    if not result or not isinstance(result[0], RaggedDim) or is_ragged_cell(result[1:]):
        raise NeedGrouping
    seg = shape.segment_ids()
    flat = []
    for p, cell in zip(parts, cellz):
        if type(p.arr) is Ragged:
            if len(cell) > p.arr.data.ndim - 1:
                raise NeedGrouping
            flat.append(Val(p.arr.data, 1))
        elif p.arr.ndim - p.k != len(cell):
            raise NeedGrouping  # a whole-box value with a frame of its own
        else:
            flat.append(_per_item(p, seg))
    fn = flat[0]
    out = plain_val(engine.apply_vals(fn, flat[1:], tuple(cellz[1:]), result[1:], dtype, span, (len(seg),)))
    data = spread(out.arr, (len(seg),) + out.arr.shape[1:]) if out.k else spread(
        out.arr, (len(seg),) + out.arr.shape
    )
    return Val(Ragged(np.ascontiguousarray(data), shape.lengths), 1)


def _per_item(p, seg: np.ndarray):
    """A value belonging to whole boxes (batched over the boxes, or constant), repeated for each item."""
    if p.k == 0:
        return p
    arr = p.arr
    if arr.dtype == object:
        atoms = {id(x): x for x in compact(arr).reshape(-1)}
        if any(getattr(x, "level", 0) for x in atoms.values()):
            if len(atoms) != 1:
                raise NeedGrouping
            (f,) = atoms.values()
            g = restrict_closure(f, (len(arr),) if arr.shape[0] > 1 else (1,), seg if arr.shape[0] > 1 else seg * 0)
            return Val(spread(obj_scalar(g), (len(seg),)), 1)
    if arr.shape[0] == 1:
        return p
    return Val(arr[seg], 1)


def _consumed(engine, parts, cellz, result, dtype, span, shape: Ragged):
    """The function takes whole ragged vectors: a λ gets them as they are; a primitive runs
    its segmented implementation, or its ordinary one once per box."""
    fn = parts[0]
    atoms = {id(x): x for x in compact(fn.arr).reshape(-1)}
    if len(atoms) != 1:
        raise NeedGrouping
    (f,) = atoms.values()
    for p, cell in zip(parts[1:], cellz[1:]):
        if type(p.arr) is not Ragged and p.arr.ndim - p.k != len(cell):
            raise NeedGrouping  # an argument with a frame of its own
    if isinstance(f, Closure) and not isinstance(f, IClosure):
        env = dict(f.env)
        env.update((name, p) for name, p in zip(f.lam.params, parts[1:]))
        return engine.ev(f.lam.body, env, f.ienv, (shape.boxes,))
    if not isinstance(f, PrimFn) or f.prim.effectful:
        raise NeedGrouping  # (an effect must not run in a pass that may be abandoned)
    seg_impl = getattr(f.prim, "segmented", None)
    ctx = SegmentContext(engine, shape, tuple(cellz[1:]), result, f.indices, span, dtype)
    if seg_impl is not None:
        out = seg_impl(ctx, *[p.arr if type(p.arr) is Ragged else _whole_box(p, shape) for p in parts[1:]])
        if out is not NotImplemented:
            if type(out) is Ragged and not np.array_equal(out.lengths, shape.lengths):
                raise NeedGrouping
            return Val(out, 1)
    return Val(_per_box(ctx, f, parts[1:]), 1)


def _whole_box(p, shape: Ragged) -> np.ndarray:
    """A per-box (or constant) argument as an array with one leading entry per box."""
    arr = p.arr if p.k else p.arr.reshape((1,) + p.arr.shape)
    return spread(arr, (shape.boxes,) + arr.shape[1:])


def _per_box(ctx: "SegmentContext", f: PrimFn, args) -> np.ndarray | Ragged:
    """The primitive's ordinary implementation on each box in turn (exactly the reference δ)."""
    shape = ctx.shape
    outs = []
    for c in range(shape.boxes):
        cells = tuple(_concrete(cell, c) for cell in ctx.cells)
        result = _concrete(ctx.result_cell, c)
        indices = tuple(int(i.lengths[c]) if isinstance(i, RaggedDim) else i for i in f.indices)
        cell_args = [a.arr.segment(c) if type(a.arr) is Ragged else _whole_box(a, shape)[c] for a in args]
        pctx = _cell_context(ctx, cells, result, indices)
        outs.append(np.asarray(f.prim.impl(pctx, *cell_args)))
    if is_ragged_cell(ctx.result_cell):
        if not isinstance(ctx.result_cell[0], RaggedDim) or is_ragged_cell(ctx.result_cell[1:]):
            raise NeedGrouping
        return Ragged(np.concatenate(outs), ctx.result_cell[0].lengths)
    return np.stack(outs) if outs else np.empty((0,) + tuple(ctx.result_cell), dtype=ctx.dtype)


def _cell_context(ctx: "SegmentContext", cells, result, indices) -> PrimContext:
    pctx = FrameContext((), cells, result, indices, ctx.span, ctx.engine.run, ctx.dtype)
    pctx.engine = ctx.engine
    return pctx


class SegmentContext:
    """What a segmented implementation sees: the boxes' lengths and a way to apply functions
    to the active boxes of a step."""

    def __init__(self, engine, shape: Ragged, cells, result_cell, indices, span, dtype):
        self.engine, self.shape, self.cells, self.result_cell = engine, shape, cells, result_cell
        self.indices, self.span, self.dtype = indices, span, dtype

    def apply_boxes(self, fns: np.ndarray, boxes: np.ndarray, args: list, cells: tuple, result_cell: tuple):
        """Apply each box's function (``fns``: one per box) to the arguments of the boxes ``boxes``
        (one leading entry each, in that order); closures see those boxes' captured values."""
        fns = fns[boxes]
        first = fns[0] if len(fns) else None
        if getattr(first, "level", 0):
            if any(g is not first for g in compact(fns).reshape(-1)):
                raise NeedGrouping
            fns = np.broadcast_to(obj_scalar(restrict_closure(first, (self.shape.boxes,), boxes)), (len(boxes),))
        frame = (len(boxes),)
        return self.engine.apply_frame(fns, args, frame, cells, tuple(result_cell), np.dtype(object), self.span)

    def error(self, message: str):
        from ..errors import RemoraRuntimeError

        raise RemoraRuntimeError(message, self.span)

    def uniform_function(self, fns: np.ndarray):
        return PrimContext.uniform_function(self, fns)


__all__ = ["NeedGrouping", "Ragged", "RaggedDim", "app", "unbox", "shape_value"]
