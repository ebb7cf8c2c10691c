"""The default engine: erased Remora evaluated a whole frame at a time.

The meaning is the reference engine's (:mod:`remora.dynamics.reference`); only the map
step differs.  Instead of one application per cell, a function is applied to
the whole frame at once: a primitive is one NumPy call over all cells, and a
λ's body is evaluated *once* with its parameters bound to frame-shaped arrays.

So inside a λ body every value carries how many of its leading axes belong to
the enclosing *batch* frame (``k``, a prefix of the current batch shape ``B``;
an axis may have length 1 where the value does not vary).  Values captured from
outside carry fewer batch axes and are lifted — by a zero-copy broadcast view —
only where they meet batch-carrying values.  Because Remora frames are always
leading axes, no axis ever has to move.

Where cells cannot share one evaluation — a frame of *different* functions, boxes
whose index components differ, an ``Iλ`` array of different abstractions — the
frame is split into groups that can, each evaluated whole, and the results are
scattered back.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from ..erasure import erased as E
from ..errors import RemoraRuntimeError, relocate_library_error
from ..primitives import PRIMITIVES
from .batched import FrameContext, Val, align, map_objects as _map_objects, obj_scalar, plain_val as _plain
from .batched import restrict_closure, restrict_env, spread
from .layouts import BoxFrame, NeedGrouping, Ragged, plain
from .ragged import app as ragged_app
from .ragged import unbox as ragged_unbox
from .runtime import (
    Closure,
    compact,
    IClosure,
    RunConfig,
    callee_name,
    check_shape,
    function_name,
    iapp_arg_value,
    positions,
    index_value,
    rep_value,
    uniform_atom,
    shape_value,
)
from .values import BoxValue, PrimFn


#: What makes ragged evaluation give up (it then groups): its own signal, or a ragged length
#: reaching code that needs one number.
RAGGED_FALLBACK = (NeedGrouping, TypeError, ValueError, IndexError, AttributeError)


def joint(*shapes: tuple) -> tuple:
    """The broadcast of equally long shapes (each axis: its length, or 1 where nothing varies)."""
    out = list(shapes[0])
    for other in shapes[1:]:
        for j, n in enumerate(other):
            if n != 1:
                out[j] = n
    return tuple(out)


def lift(v: Val, m: int, batch: tuple, frame_len: int, total: tuple, cell: tuple) -> np.ndarray:
    """View ``v`` (logical frame of ``frame_len`` axes, then ``cell``) at ``batch[:m] + total + cell``."""
    arr = v.arr
    target = tuple(batch[:m]) + total + cell
    if arr.shape == target:  # already in place (the common case): no view needed
        return arr
    frame = arr.shape[v.k : v.k + frame_len]
    shaped = arr.reshape(arr.shape[: v.k] + (1,) * (m - v.k) + frame + (1,) * (len(total) - frame_len) + cell)
    return spread(shaped, target)


def extent(values, m: int) -> tuple:
    """The batch shape over which some of ``values`` vary (1 where none does), over ``m`` axes."""
    shapes = [v.arr.shape[: v.k] + (1,) * (m - v.k) for v in values if v.k]
    return joint(*shapes) if shapes else (1,) * m


class _Running(threading.local):
    """Per-thread state of the evaluations an engine has under way."""

    ragged_depth = 0


class Frames:
    """Evaluates erased forms one after another; definitions persist in ``globals``."""

    def __init__(self, run: RunConfig | None = None):
        self.run = run or RunConfig()
        self.globals: dict[str, np.ndarray] = {}
        #: i-app results of unbatched abstractions, by (node, abstraction, index values)
        self._instances: dict[tuple, tuple] = {}
        #: what describes an evaluation under way is its thread's (a Function may run in several
        #: threads at once); the caches above hold values that depend only on their keys
        self._running = _Running()

    @property
    def ragged_depth(self) -> int:
        """How many ragged unbox evaluations this thread has under way (they may be abandoned)."""
        return self._running.ragged_depth

    @ragged_depth.setter
    def ragged_depth(self, value: int) -> None:
        self._running.ragged_depth = value

    def eval_form(self, form: E.EForm) -> np.ndarray:
        with np.errstate(all="ignore"):
            if isinstance(form, E.EDefine):
                self.globals[form.key] = self.ev(form.value, {}, {}, ()).arr  # a BoxFrame stays flat
                return plain(self.globals[form.key])
            return self.value(form.expr)

    def value(self, e: E.EExpr, env: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """The value of ``e``; ``env`` binds names for this evaluation only (a Function's
        arguments: each call has its own, so calls in several threads never see each other's)."""
        local = {name: Val(arr, 0) for name, arr in env.items()} if env else {}
        return plain(self.ev(e, local, {}, ()).arr)

    # --- expressions ------------------------------------------------------------

    def ev(self, e: E.EExpr, env: dict, ienv: dict, batch: tuple) -> Val:
        if isinstance(e, E.EVar):
            return env[e.name] if e.key is None else Val(self.globals[e.key], 0)
        if isinstance(e, E.EApp):
            return self.app(e, env, ienv, batch)
        if isinstance(e, E.EArray):
            return self.array(e, env, ienv, batch)
        if isinstance(e, E.EFrame):
            return self.frame(e, env, ienv, batch)
        if isinstance(e, E.EIApp):
            return self.iapp(e, env, ienv, batch)
        if isinstance(e, E.EUnbox):
            return self.unbox(e, env, ienv, batch)
        if isinstance(e, E.ELet):
            return self.let(e, env, ienv, batch)
        raise TypeError(f"not an erased expression: {e!r}")

    def let(self, e: E.ELet, env, ienv, batch) -> Val:
        """Sequential bindings, each value evaluated over the current batch and bound as it is
        (what the β-redex the let abbreviates does: its parameter's cell is the whole value).
        One environment of the let's own is filled in place — closures made by a binding keep
        their own copy of what they capture — so n bindings cost n steps."""
        local = {x: env[x] for x in e.free if x in env}
        for name, value in e.bindings:
            local[name] = self.ev(value, local, ienv, batch)
        return self.ev(e.body, local, ienv, batch)

    def array(self, e: E.EArray, env, ienv, batch) -> Val:
        if e.const is not None:
            return Val(e.const, 0)
        atoms = [self.atom(a, env, ienv, batch) for a in e.atoms]
        if not e.dims:  # a scalar: the atom's own (possibly broadcast) array
            return atoms[0]
        if not atoms:  # an empty literal: its shape is the program's
            check_shape(e.dims, 8, "this array literal", e.span, self.run)
        k = max((a.k for a in atoms), default=0)
        if k == 0:
            out = np.empty(len(atoms), dtype=rep_value(e.rep, ienv))
            for i, a in enumerate(atoms):
                out[i] = a.arr[()]
            return Val(out.reshape(e.dims), 0)
        bshape = extent(atoms, k)
        out = np.empty(bshape + (len(atoms),), dtype=object)
        for i, a in enumerate(atoms):
            out[..., i] = a.arr.reshape(a.arr.shape + (1,) * (k - a.k))
        return Val(out.reshape(bshape + e.dims), k)

    def atom(self, a: E.EAtom, env, ienv, batch) -> Val:
        """An atom as a (batch-shaped, usually 0-d) object or literal array."""
        if isinstance(a, E.ELit):
            return Val(np.asarray(a.value), 0)
        if isinstance(a, E.EPrim):
            return Val(obj_scalar(PrimFn(PRIMITIVES[a.name])), 0)
        if isinstance(a, (E.ELam, E.EILam)):
            # A closure keeps just the locals it uses (its own dictionary: environments it was
            # made in may be filled further, as a let's is, without it seeing that).
            captured = {x: env[x] for x in a.free if x in env}
            level = max((v.k for v in captured.values()), default=0)
            cls = IClosure if isinstance(a, E.EILam) else Closure
            # One closure; as a value it varies wherever what it captured varies.
            return Val(spread(obj_scalar(cls(a, captured, ienv, level)), extent(list(captured.values()), level)), level)
        if isinstance(a, E.EBox):
            indices = tuple(index_value(i, ienv) for i in a.indices)
            body = _plain(self.ev(a.body, env, ienv, batch))
            if body.k == 0:
                return Val(obj_scalar(BoxValue(indices, body.arr)), 0)
            small = Val(compact(body.arr), body.k)
            bshape = small.arr.shape[: body.k]
            out = np.empty(bshape, dtype=object)
            for idx in np.ndindex(*bshape):
                out[idx] = BoxValue(indices, detach(small, idx))
            return Val(out, body.k)
        raise TypeError(f"not an erased atom: {a!r}")

    def frame(self, e: E.EFrame, env, ienv, batch) -> Val:
        shape = _shape(e, "shape", ienv)
        check_shape(shape, max(rep_value(e.rep, ienv).itemsize, 8), "this frame", e.span, self.run)
        if not e.cells:
            return Val(np.empty(shape, dtype=rep_value(e.rep, ienv)), 0)
        cells = [_plain(self.ev(c, env, ienv, batch)) for c in e.cells]
        k = max(c.k for c in cells)
        dims = len(shape) - (cells[0].arr.ndim - cells[0].k)
        cell_shape = shape[dims:]
        bshape = extent(cells, k)
        if len(cells) == 1:  # [e]: one more axis, no copy
            one = spread(align(cells[0], k, 0, 0), bshape + cell_shape)
            return Val(one.reshape(bshape + shape), k)
        lifted = [spread(align(c, k, 0, 0), bshape + cell_shape) for c in cells]
        # Each cell stays one contiguous block (the frame axis outermost in memory, a view puts
        # it after the batch axes): copying is cheaper than interleaving, and taking a cell back
        # out — (index z 0) of a frame [x y c] — gives a contiguous array, not a strided one.
        stacked = np.moveaxis(np.stack(lifted, axis=0), 0, k)
        return Val(stacked.reshape(bshape + shape), k)

    def app(self, e: E.EApp, env, ienv, batch) -> Val:
        try:
            return self._app(e, env, ienv, batch)
        except RemoraRuntimeError as err:
            relocate_library_error(err, e.span, callee_name(e.fn))
            raise

    def _app(self, e: E.EApp, env, ienv, batch) -> Val:
        fn = self.ev(e.fn, env, ienv, batch)
        args = [self.ev(a, env, ienv, batch) for a in e.args]  # flat frames of boxes stay flat, for λs
        cells = _cells(e, ienv)
        result = _shape(e, "result", ienv)
        if any(type(p.arr) is Ragged for p in args) or type(fn.arr) is Ragged:
            args = [_plain(a) for a in args]
            return ragged_app(self, fn, args, cells, result, rep_value(e.rep, ienv), e.span, batch)
        return self.apply_vals(fn, args, cells, result, rep_value(e.rep, ienv), e.span, batch)

    def apply_vals(self, fn: Val, args: list[Val], cells, result, dtype, span, batch) -> Val:
        """An application once its function array and arguments are evaluated: lift, then apply."""
        frames = [fn.arr.ndim - fn.k] + [a.arr.ndim - a.k - len(c) for a, c in zip(args, cells)]
        parts = [fn] + args
        widest = max(range(len(parts)), key=lambda i: frames[i])
        total = parts[widest].arr.shape[parts[widest].k : parts[widest].k + frames[widest]]
        effectful = _effectful(fn)
        m = len(batch) if effectful else max(p.k for p in parts)
        if 0 in total and not effectful:  # nothing to apply: the same empty value in every batch cell
            cell = result[len(total):]
            check_shape(total + cell, max(dtype.itemsize, 8), function_name(fn.arr), span, self.run)
            return Val(np.empty((1,) * m + total + cell, dtype=dtype), m)
        aligned = [align(p, m, f, len(total)) for p, f in zip(parts, frames)]
        # The application runs over the batch axes where some participant varies (and, for an
        # effect, over all of them: once per cell), then the principal frame.
        bshape = tuple(batch[:m]) if effectful else joint(*(a.shape[:m] for a in aligned))
        tf = bshape + total
        # One function (the usual case) need not be spread over the frame: apply_frame only asks which it is.
        fns = aligned[0] if aligned[0].size == 1 else spread(aligned[0], tf)
        out = self.apply_frame(fns, aligned[1:], tf, cells, result[len(total):], dtype, span)
        if out.dtype == object and len(tf) > m and type(out) is not BoxFrame:
            out = settle(out, m)
        return Val(out, m)

    # --- applying functions to whole frames ------------------------------------------

    def apply_frame(self, fns, args, tf, cells, result_cell, dtype, span) -> np.ndarray:
        """Apply the function array ``fns`` (shape ``tf``) to frame-shaped ``args``: ``tf + result_cell``."""
        n = math.prod(tf)
        check_shape(tf + result_cell, max(dtype.itemsize, 8), function_name(fns), span, self.run)
        if n == 0:
            return np.empty(tf + result_cell, dtype=dtype)
        fn = uniform_atom(fns)
        if fn is not None:
            return self.apply_one(fn, args, tf, cells, result_cell, span, dtype)
        # A frame of different functions: each applied to the cells it owns.
        groups: dict[int, tuple[object, list[int]]] = {}
        for pos, f in enumerate(fns.reshape(-1)):
            groups.setdefault(id(f), (f, []))[1].append(pos)
        out = None
        for f, positions in groups.values():
            sel = np.array(positions)
            sub_args = [spread(plain(a), tf + c).reshape((n,) + c)[sel] for a, c in zip(args, cells)]
            if getattr(f, "level", 0):
                f = restrict_closure(f, tf, sel)
            part = plain(self.apply_one(f, sub_args, (len(sel),), cells, result_cell, span, dtype))
            if out is None:
                out = np.empty((n,) + result_cell, dtype=part.dtype)
            out[sel] = part
        return out.reshape(tf + result_cell)

    def apply_one(self, fn, args, tf, cells, result_cell, span, dtype=None) -> np.ndarray:
        """One function over the whole frame ``tf``: one primitive call, or one evaluation of a λ body."""
        expected = tf + result_cell
        if isinstance(fn, PrimFn):
            if fn.prim.effectful and self.ragged_depth:
                raise NeedGrouping  # an effect must not run in a pass that may be abandoned
            ctx = FrameContext(tf, cells, result_cell, fn.indices, span, self.run, dtype)
            ctx.engine = self
            full = [spread(plain(a), tf + c) for a, c in zip(args, cells)]
            out = fn.prim.impl(ctx, *full)
            if type(out) is BoxFrame:
                return out
            out = np.asarray(out)
        elif isinstance(fn, Closure) and not isinstance(fn, IClosure):
            # The body runs once over the whole frame; parameters keep their unit axes.
            env = dict(fn.env)
            env.update((p, Val(a, len(tf))) for p, a in zip(fn.lam.params, args))
            r = self.ev(fn.lam.body, env, fn.ienv, tf)
            if r.arr.shape == expected:
                return r.arr  # (a BoxFrame passes through whole)
            out = spread(align(_plain(r), len(tf), 0, 0), expected)
        else:
            raise RemoraRuntimeError("internal error: applied a value that is not a function", span)
        if out.shape != expected:
            out = spread(out, expected)
        return out

    # --- index application and unboxing -------------------------------------------------

    def iapp(self, e: E.EIApp, env, ienv, batch) -> Val:
        fn = self.ev(e.fn, env, ienv, batch)
        values = _iapp_values(e, ienv)
        result = _shape(e, "result", ienv)
        check_shape(result, 8, "this index application", e.span, self.run)
        frame = fn.arr.shape[fn.k :]
        cell = result[len(frame) :]
        atoms = fn.arr.reshape(-1)
        first = atoms[0] if atoms.size else None
        if atoms.size and all(a is first for a in atoms):
            # Instantiating the same unbatched abstraction at the same indices always gives the
            # same value (a polymorphic function used in a loop or called again): remember it.
            key = (id(e), id(first), _values_key(values)) if not fn.k and not getattr(first, "level", 0) else None
            hit = self._instances.get(key) if key else None
            if hit is not None and hit[0] is first:
                return hit[1]
            if isinstance(first, PrimFn):
                inst = obj_scalar(PrimFn(first.prim, first.indices + values))
                result = Val(spread(inst, fn.arr.shape), fn.k)
            else:
                body = _plain(self.instantiate(first, values, batch))
                m = max(fn.k, body.k)
                result = Val(lift(body, m, batch, 0, frame, cell), m)
            if key and not result.k:
                if len(self._instances) > 10_000:
                    self._instances.clear()
                self._instances[key] = (first, result)
            return result
        # Different abstractions (or none): instantiate each cell on its own.
        shape = tuple(batch[: fn.k]) + frame
        check_shape(shape + cell, 8, "this index application", e.span, self.run)
        full = spread(fn.arr, shape)
        out = np.empty(shape + cell, dtype=rep_value(e.rep, ienv))
        for idx in positions(shape):
            f = full[idx]
            if isinstance(f, PrimFn):
                out[idx] = PrimFn(f.prim, f.indices + values)
            else:
                f = detach_closure(f, idx) if f.level else f
                out[idx + (Ellipsis,)] = plain(self.instantiate(f, values, ()).arr)
        return Val(out, fn.k)

    def instantiate(self, f: IClosure, values: tuple, batch: tuple) -> Val:
        """iβ: the body of ``Iλ`` with its index variables bound."""
        ienv = dict(f.ienv)
        ienv.update(zip(f.lam.vars, values))
        return self.ev(f.lam.body, f.env, ienv, batch)

    def unbox(self, e: E.EUnbox, env, ienv, batch) -> Val:
        boxed = self.ev(e.boxed, env, ienv, batch)
        body_shape = _shape(e, "body_shape", ienv)
        check_shape(boxed.arr.shape[boxed.k :] + body_shape, 8, "this unbox", e.span, self.run)
        seen = [env[x] for x in self._free_of(e) if x in env]
        if type(boxed.arr) is BoxFrame:
            done = self._unbox_flat(e, env, ienv, boxed, seen, body_shape)
            if done is not None:
                return done
            boxed = _plain(boxed)
        # The body runs over the boxes' frame, below every batch axis it (or a box) varies over.
        m = max([boxed.k] + [v.k for v in seen])
        frame = boxed.arr.shape[boxed.k :]
        boxes = align(boxed, m, len(frame), len(frame))
        boxes = compact(boxes[(slice(None),) * m]) if m else boxes  # batch axes the boxes don't vary over: 1
        bshape = joint(boxes.shape[:m], extent(seen, m))
        tf = bshape + frame
        dtype = rep_value(e.rep, ienv)
        if math.prod(frame) == 0:  # no boxes: the same empty value in every batch cell
            return Val(np.empty((1,) * m + frame + body_shape, dtype=dtype), m)
        if math.prod(tf) == 0:
            return Val(np.empty(tf + body_shape, dtype=dtype), m)
        own = boxes.reshape(-1)
        first = own[0].indices
        if all(b.indices == first for b in own):
            return Val(self.unbox_group(e, env, ienv, first, boxes, tf, body_shape), m)
        flat = spread(boxes, tf).reshape(-1)
        try:  # boxes whose leading axes differ: the body once over all of them, laid out flat
            return Val(ragged_unbox(self, e, env, ienv, flat, tf, body_shape, dtype).reshape(tf + body_shape), m)
        except RAGGED_FALLBACK:
            if os.environ.get("REMORA_DEBUG_RAGGED"):
                raise
        # Otherwise evaluate the body once per group of boxes with equal index components.
        groups: dict[tuple, list[int]] = {}
        for pos, box in enumerate(flat):
            groups.setdefault(box.indices, []).append(pos)
        out = None
        names = self._free_of(e)
        for indices, positions in groups.items():
            sel = np.array(positions)
            group_env = restrict_env(env, names, tf, sel)
            part = self.unbox_group(e, group_env, ienv, indices, flat[sel], (len(sel),), body_shape)
            if out is None:
                out = np.empty((flat.size,) + body_shape, dtype=part.dtype if dtype == object else dtype)
            out[sel] = part
        return Val(out.reshape(tf + body_shape), m)

    def _unbox_flat(self, e: E.EUnbox, env, ienv, boxed: Val, seen, body_shape):
        """unbox straight from a flat frame of boxes, when no broadcasting is needed; else None."""
        frame = boxed.arr.shape
        m = max([boxed.k] + [v.k for v in seen])
        around = extent(seen, m)
        if m != boxed.k or around not in ((1,) * m, frame[:m]):
            return None
        flat: BoxFrame = boxed.arr
        lengths = flat.lengths
        if lengths.size and (lengths == lengths[0]).all():  # one shape for all: an ordinary batch
            k = int(lengths[0])
            contents = flat.data.reshape(frame + (k,) + flat.data.shape[1:])
            return Val(self.unbox_body(e, env, ienv, (k,), contents, frame, body_shape), m)
        try:
            out = ragged_unbox(self, e, env, ienv, flat, frame, body_shape, rep_value(e.rep, ienv))
            return Val(out.reshape(frame + body_shape), m)
        except RAGGED_FALLBACK:
            if os.environ.get("REMORA_DEBUG_RAGGED"):
                raise
            return None

    def unbox_group(self, e: E.EUnbox, env, ienv, indices, boxes: np.ndarray, tf, body_shape) -> np.ndarray:
        """The unbox body over ``boxes`` (an array lining up with the frame ``tf``, possibly with
        unit axes) that all share their index components."""
        own = boxes.reshape(-1)
        contents = np.stack([b.value for b in own]).reshape(boxes.shape + own[0].value.shape)
        return self.unbox_body(e, env, ienv, indices, contents, tf, body_shape)

    def unbox_body(self, e: E.EUnbox, env, ienv, indices, contents: np.ndarray, tf, body_shape) -> np.ndarray:
        """The unbox body once over the frame ``tf``, its index variables bound to ``indices``
        and its value variable to ``contents`` (the boxes' values, batched over ``tf``)."""
        inner_i = dict(ienv)
        inner_i.update(zip(e.index_vars, indices))
        inner = {x: env[x] for x in e.free if x in env}
        inner[e.value_name] = Val(contents, len(tf))
        r = _plain(self.ev(e.body, inner, inner_i, tf))
        return spread(align(r, len(tf), 0, 0), tf + body_shape)

    def _free_of(self, e: E.EUnbox) -> frozenset[str]:
        return e.free


# Shapes in erased annotations: computed once per node and index environment (an environment
# is never changed once made, so the same dictionary means the same values: a loop's body
# evaluates its annotations once).  Evaluations in other threads share the nodes but never an
# environment, and a hit must be the very same environment object: they cannot see each other's.

_MEMO = "_memo"


def _memo(e, key: str, ienv, compute):
    cache = e.__dict__.setdefault(_MEMO, {})
    hit = cache.get(key)
    if hit is not None and hit[0] is ienv:
        return hit[1]
    value = compute()
    cache[key] = (ienv, value)
    return value


def _shape(e, field: str, ienv) -> tuple:
    return _memo(e, field, ienv, lambda: shape_value(getattr(e, field), ienv))


def _cells(e: E.EApp, ienv) -> tuple:
    return _memo(e, "cells", ienv, lambda: tuple(shape_value(c, ienv) for c in e.cells))


def _iapp_values(e: E.EIApp, ienv) -> tuple:
    return _memo(e, "values", ienv, lambda: tuple(iapp_arg_value(a, ienv) for a in e.args))


def _values_key(values: tuple) -> tuple:
    """A hashable key for i-app arguments (an Array type's binding carries its dtype too)."""
    return tuple((v, v.rep) if hasattr(v, "rep") else v for v in values)


def _effectful(fn: Val) -> bool:
    """Whether ``fn`` is an effectful primitive, which must run once per cell of the batch."""
    return fn.arr.size == 1 and getattr(getattr(fn.arr.reshape(-1)[0], "prim", None), "effectful", False)


# ---------------------------------------------------------------------------
# Moving values between batches


def _batch_index(arr: np.ndarray, k: int, idx: tuple) -> tuple:
    """``idx``'s first ``k`` coordinates, as indices into an array whose batch axes may be 1."""
    return tuple(0 if arr.shape[j] == 1 else idx[j] for j in range(k))


def detach(v: Val, idx: tuple) -> np.ndarray:
    """The plain (unbatched) value of ``v`` at batch position ``idx``."""
    v = _plain(v)
    cell = v.arr[_batch_index(v.arr, v.k, idx) + (Ellipsis,)]
    if cell.dtype == object:
        cell = _map_objects(cell, lambda f: detach_closure(f, idx) if getattr(f, "level", 0) else f)
    return cell


def detach_closure(f: Closure, idx: tuple) -> Closure:
    """A closure whose environment varies over the batch, fixed at batch position ``idx``."""
    env = {x: Val(detach(f.env[x], idx), 0) for x in f.lam.free if x in f.env}
    return type(f)(f.lam, env, f.ienv, 0)


def settle(out: np.ndarray, m: int) -> np.ndarray:
    """Closures created inside a batch that escape into a result lose their batch: fix them per cell."""
    if not any(getattr(f, "level", 0) > m for f in out.reshape(-1)):
        return out
    out = np.array(out)
    for idx in positions(out.shape):
        f = out[idx]
        if getattr(f, "level", 0) > m:
            out[idx] = detach_closure(f, idx)
    return out


def unbatched(arr) -> np.ndarray:
    """A global's value as the reference engine holds values (for ``:trace``): boxes as
    objects, closures whose environments hold plain arrays instead of batched values.  A
    global carries no batch axes, and neither do the closures in it (escaping ones are
    settled), so nothing is lost; each distinct closure is converted once."""
    return _unbatched(arr, {})


def _unbatched(arr, done: dict) -> np.ndarray:
    arr = plain(arr)
    if arr.dtype != object:
        return arr
    return _map_objects(arr, lambda x: _unbatched_atom(x, done))


def _unbatched_atom(x, done: dict):
    if isinstance(x, BoxValue):
        return BoxValue(x.indices, _unbatched(x.value, done))
    if not isinstance(x, Closure):
        return x
    if id(x) not in done:
        env = {name: _unbatched(v.arr, done) for name, v in x.env.items()}
        done[id(x)] = (x, type(x)(x.lam, env, x.ienv))  # (x kept alive: its id stays its own)
    return done[id(x)][1]
