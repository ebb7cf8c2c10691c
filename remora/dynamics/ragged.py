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
- anything else is found by an explicit check, which raises :class:`NeedGrouping`; the pass
  (:func:`unbox`) catches that signal alone and declines, and the engine evaluates the body by
  groups instead.

So this is only ever a faster route to the same values; a real error inside it is an error.

While tracing for compilation the pass runs only over a *padded* layout (``filter`` over a
frame, :mod:`.padded`); when it declines there, the evaluation runs eagerly (spec D48).
"""

from __future__ import annotations

from ..backends import host
from ..backends.base import OBJECT
from . import padded
from .batched import FrameContext, Val, align, plain_val, spread
from .layouts import BoxFrame, NeedGrouping, Ragged, RaggedDim, is_ragged_cell
from .rebatch import detach_closure, restrict_closure, restrict_env
from ..errors import RemoraRuntimeError
from .runtime import ArrayTypeBinding, Closure, IClosure
from .values import BoxValue, PrimFn


def _concrete(shape: tuple, c: int) -> tuple:
    """``shape`` with every ragged dimension replaced by its value for box ``c``."""
    return tuple(int(d.lengths[c]) if type(d) is RaggedDim else d for d in shape)


def _concrete_index(index, c: int):
    """An index argument (a Dim, or a Shape's tuple) as box ``c`` sees it."""
    if type(index) is RaggedDim:
        return int(index.lengths[c])
    if not isinstance(index, tuple) or not is_ragged_cell(index):
        return index  # (as it is: an Array type variable's binding keeps its representation)
    concrete = _concrete(index, c)
    return type(index)(concrete, index.rep) if isinstance(index, ArrayTypeBinding) else concrete


# ---------------------------------------------------------------------------
# unbox


def unbox(engine, e, env, ienv, boxes, tf: tuple, body_shape: tuple):
    """The unbox body over ``boxes`` — a flat object array of boxes, or a BoxFrame — with
    frame ``tf``, evaluated once; None when the pass declines (the boxes are not laid out alike,
    or the body uses something a ragged pass does not cover)."""
    xp = engine.xp
    lanes = boxes.lanes if type(boxes) is BoxFrame else None
    if len(e.index_vars) != 1 or e.index_vars[0].sort != "Dim":
        return _declined(xp, lanes)
    if xp.tracing() and lanes is None:
        return None  # (while compiling, boxes grouped by shape: every group's shapes are static)
    if type(boxes) is BoxFrame:
        data, lengths = boxes.data, boxes.lengths
        n = len(lengths)
    else:
        first: BoxValue = boxes[0]
        if first.value.ndim == 0:
            return None
        rest, rep = first.value.shape[1:], xp.rep(first.value)
        for b in boxes:
            v = b.value
            if v.ndim == 0 or v.shape[1:] != rest or xp.rep(v) != rep or b.indices != (v.shape[0],):
                return None
        n = len(boxes)
        lengths = xp.asarray([b.value.shape[0] for b in boxes], "Int")
        data = xp.concat([b.value for b in boxes]) if n else xp.empty((0,) + rest, rep)
    inner = restrict_env(xp, env, e.free, tf, xp.arange(n))
    contents = Ragged(xp, data, lengths, lanes)
    inner[e.value_name] = Val(contents, 1)
    inner_i = dict(ienv)
    inner_i[e.index_vars[0]] = RaggedDim(contents.lengths)

    def evaluate():
        r = engine.ev(e.body, inner, inner_i, (n,))
        if type(r.arr) is Ragged:
            raise NeedGrouping  # (the body's value is itself ragged: it has no one shape per box)
        return spread(xp, align(xp, plain_val(r), 1, 0, 0), (n,) + body_shape)

    engine.ragged_depth += 1
    try:
        return evaluate() if lanes is None else padded.evaluated(engine, evaluate, contents)
    except NeedGrouping:
        return _declined(xp, lanes)
    finally:
        engine.ragged_depth -= 1


def _declined(xp, lanes) -> None:
    """The pass declines.  Boxes laid out padded (while tracing) have no other route: the
    evaluation runs eagerly instead (spec D48), where every strategy is open."""
    if lanes is not None:
        xp.untraceable("an `unbox` body over boxes made by `filter` that the padded pass does not cover")
        raise NeedGrouping  # (not reached: padded layouts are only made while tracing)
    return None


# ---------------------------------------------------------------------------
# applications inside a ragged body


def app(engine, fn, args, cells, result, rep, span, batch):
    """An application some of whose participants are ragged."""
    xp = engine.xp
    parts = [fn] + list(args)
    cellz = [()] + list(cells)
    ragged = [i for i, p in enumerate(parts) if type(p.arr) is Ragged]
    shape = parts[ragged[0]].arr
    if len(batch) != 1 or batch[0] != shape.boxes:
        raise NeedGrouping
    for i in ragged:
        if parts[i].k != 1 or not shape.same_boxes(parts[i].arr):
            raise NeedGrouping
    consumed = [i for i in ragged if is_ragged_cell(cellz[i])]
    if not consumed:
        return _mapped(engine, parts, cellz, result, rep, span, shape)
    if len(consumed) == len(ragged) and 0 not in ragged:
        return _consumed(engine, parts, cellz, result, rep, span, shape)
    raise NeedGrouping


def _mapped(engine, parts, cellz, result, rep, span, shape: Ragged):
    """The ragged axis is in the frame: run over all items of all boxes as one flat frame."""
    xp = engine.xp
    if not result or type(result[0]) is not RaggedDim or is_ragged_cell(result[1:]):
        raise NeedGrouping
    if shape.padded:
        return padded.mapped(engine, parts, cellz, result, rep, span, shape)
    seg = shape.segment_ids()
    flat = padded.flat_parts(parts, cellz, lambda p: _per_item(xp, p, seg))
    fn = flat[0]
    out = plain_val(engine.apply_vals(fn, flat[1:], tuple(cellz[1:]), result[1:], rep, span, (len(seg),)))
    if out.k:
        data = spread(xp, out.arr, (len(seg),) + out.arr.shape[1:])
    else:
        data = spread(xp, out.arr, (len(seg),) + out.arr.shape)
    return Val(Ragged(xp, xp.contiguous(data), shape.lengths), 1)


def _per_item(xp, p, seg):
    """A value belonging to whole boxes (batched over the boxes, or constant), repeated for each item."""
    p = plain_val(p)
    if p.k == 0:
        return p
    arr = p.arr
    if host.is_host(arr):
        atoms = host.distinct_atoms(arr)
        if any(getattr(x, "level", 0) for x in atoms):
            if len(atoms) != 1:
                raise NeedGrouping
            (f,) = atoms
            if arr.shape[0] > 1:
                g = restrict_closure(xp, f, (len(arr),), seg)
            else:
                g = restrict_closure(xp, f, (1,), seg * 0)
            return Val(spread(xp, host.scalar(g), (len(seg),)), 1)
    if arr.shape[0] == 1:
        return p
    return Val(xp.gather(arr, seg), 1)


def _consumed(engine, parts, cellz, result, rep, span, shape: Ragged):
    """The function takes whole ragged vectors: a λ gets them as they are; a primitive runs
    its segmented implementation, or its ordinary one once per box."""
    xp = engine.xp
    fn = plain_val(parts[0])
    atoms = host.distinct_atoms(fn.arr)
    if len(atoms) != 1:
        raise NeedGrouping
    (f,) = atoms
    for p, cell in zip(parts[1:], cellz[1:]):
        if type(p.arr) is not Ragged and p.arr.ndim - p.k != len(cell):
            raise NeedGrouping  # an argument with a frame of its own
    if isinstance(f, Closure) and not isinstance(f, IClosure):
        env = dict(f.env)
        env.update((name, p) for name, p in zip(f.lam.params, parts[1:]))
        return engine.ev(f.lam.body, env, f.ienv, (shape.boxes,))
    if not isinstance(f, PrimFn) or f.prim.effectful:
        raise NeedGrouping  # (an effect must not run in a pass that may be abandoned)
    ctx = SegmentContext(engine, shape, tuple(cellz[1:]), result, f.indices, span, rep)
    if f.prim.segmented is not None:
        out = f.prim.segmented(ctx, *[p.arr if type(p.arr) is Ragged else _whole_box(xp, p, shape) for p in parts[1:]])
        if out is not NotImplemented:
            if type(out) is Ragged and not shape.same_boxes(out):
                raise NeedGrouping
            return Val(out, 1)
    return Val(_per_box(ctx, f, parts[1:]), 1)


def _whole_box(xp, p, shape: Ragged):
    """A per-box (or constant) argument as an array with one leading entry per box."""
    p = plain_val(p)
    arr = p.arr if p.k else xp.reshape(p.arr, (1,) + p.arr.shape)
    return spread(xp, arr, (shape.boxes,) + arr.shape[1:])


def _per_box(ctx: "SegmentContext", f: PrimFn, args):
    """The primitive's ordinary implementation on each box in turn (exactly the reference δ)."""
    xp, shape = ctx.xp, ctx.shape
    if shape.padded:
        raise NeedGrouping  # (box by box needs each box's length: padded, it is not known yet)
    if is_ragged_cell(ctx.result_cell) and (
        type(ctx.result_cell[0]) is not RaggedDim or is_ragged_cell(ctx.result_cell[1:])
    ):
        raise NeedGrouping  # (a result ragged along an inner axis has no flat layout)
    outs = []
    for c in range(shape.boxes):
        cells = tuple(_concrete(cell, c) for cell in ctx.cells)
        result = _concrete(ctx.result_cell, c)
        indices = tuple(_concrete_index(i, c) for i in f.indices)
        cell_args = [_box_argument(xp, a, shape, c) for a in args]
        pctx = FrameContext(xp, (), cells, result, indices, ctx.span, ctx.engine.run, ctx.rep)
        pctx.engine = ctx.engine
        outs.append(xp.asarray(f.prim.impl(pctx, *cell_args)))
    if is_ragged_cell(ctx.result_cell):
        return Ragged(xp, xp.concat(outs), ctx.result_cell[0].lengths)
    return xp.stack(outs) if outs else xp.empty((0,) + tuple(ctx.result_cell), ctx.rep)


def _box_argument(xp, a: Val, shape: Ragged, c: int):
    """Argument ``a`` as box ``c`` sees it alone: its segment of a ragged value, its entry of a
    per-box (or constant) one — a function as a 0-d frame of the one function box ``c`` applies,
    never the bare atom a plain ``[c]`` of an object array gives."""
    if type(a.arr) is Ragged:
        return a.arr.segment(c)
    whole = _whole_box(xp, a, shape)
    if not host.is_host(whole):
        return whole[c, ...]
    return host.map_atoms(whole[c, ...], lambda f: _box_function(f, c))


def _box_function(f, c: int):
    """The function atom ``f`` as box ``c`` applies it on its own: a closure made in the ragged
    body keeps box ``c``'s captured values and ``c``'s length for each ragged dimension."""
    if not isinstance(f, Closure):
        return f
    if any(type(v.arr) is Ragged for v in f.env.values()):
        raise NeedGrouping  # (it captured a ragged value: box ``c``'s part is not a batch entry)
    g = detach_closure(f, (c,)) if f.level else f
    ienv = {name: _concrete_index(i, c) for name, i in g.ienv.items()}
    return type(g)(g.lam, g.env, ienv, 0)


class SegmentContext:
    """What a segmented implementation sees: its backend, the boxes' lengths, and a way to
    apply functions to the active boxes of a step."""

    def __init__(self, engine, shape: Ragged, cells, result_cell, indices, span, rep: str):
        self.engine, self.xp, self.shape = engine, engine.xp, shape
        self.cells, self.result_cell = cells, result_cell
        self.indices, self.span, self.rep = indices, span, rep

    def apply_boxes(self, fns, boxes, args: list, cells: tuple, result_cell: tuple):
        """Apply each box's function (``fns``: one per box) to the arguments of the boxes ``boxes``
        (one leading entry each, in that order); closures see those boxes' captured values."""
        xp = self.xp
        fns = fns[boxes]
        first = fns[0] if len(fns) else None
        if getattr(first, "level", 0):
            if any(g is not first for g in host.distinct_atoms(fns)):
                raise NeedGrouping
            fns = xp.broadcast_to(host.scalar(restrict_closure(xp, first, (self.shape.boxes,), boxes)), (len(boxes),))
        frame = (len(boxes),)
        return self.engine.apply_frame(fns, args, frame, cells, tuple(result_cell), OBJECT, self.span)

    def error(self, message: str):
        raise RemoraRuntimeError(message, self.span)

    def require(self, ok, message: str, *culprits) -> None:
        self.xp.require(ok, message, culprits, self.error)

    def uniform_function(self, fns):
        return host.uniform_atom(fns)


__all__ = ["app", "unbox"]
