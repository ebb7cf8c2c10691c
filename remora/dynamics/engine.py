"""The default engine: erased Remora evaluated a whole frame at a time.

The meaning is the reference engine's (:mod:`remora.dynamics.reference`); only the map
step differs.  Instead of one application per cell, a function is applied to
the whole frame at once: a primitive is one backend call over all cells, and a
λ's body is evaluated *once* with its parameters bound to frame-shaped arrays.

So inside a λ body every value carries how many of its leading axes belong to
the enclosing *batch* frame (``k``, a prefix of the current batch shape ``B``;
an axis may have length 1 where the value does not vary).  Values captured from
outside carry fewer batch axes and are lifted — by a zero-copy broadcast view —
only where they meet batch-carrying values (:mod:`.batched`).  Because Remora
frames are always leading axes, no axis ever has to move.

Where cells cannot share one evaluation — a frame of *different* functions, boxes
whose index components differ, an ``Iλ`` array of different abstractions — the
frame is split into groups that can, each evaluated whole, and the results are
scattered back (closures made in a batch are re-batched for them: :mod:`.rebatch`).
``unbox`` chooses among explicit strategies (:mod:`.unboxing`).

This module is evaluation and dispatch; every operation on atom data goes through the
backend ``self.xp``.
"""

from __future__ import annotations

import math
import threading

from .. import backends
from ..backends import Backend, host
from ..backends.base import OBJECT, NodeTable
from ..erasure import erased as E
from ..errors import RemoraRuntimeError, located_at, relocate_library_error
from ..limits import atom_bytes
from ..primitives import PRIMITIVES
from . import control, masks, unboxing
from .batched import FrameContext, Val, align, extent, joint, lift, plain_val, spread
from .layouts import BoxFrame, NeedGrouping, Ragged, is_ragged_cell, plain
from .ragged import app as ragged_app
from .rebatch import detach, detach_closure, restrict_closure, settle
from .runtime import (
    Closure,
    IClosure,
    RunConfig,
    callee_name,
    check_shape,
    function_name,
    iapp_arg_value,
    index_value,
    positions,
    rep_value,
    shape_value,
    too_deep,
)
from .values import BoxValue, PrimFn


class _Running(threading.local):
    """Per-thread state of the evaluations an engine has under way."""

    ragged_depth = 0
    #: how many λ bodies are under way, nested (the recursion limit counts them)
    depth = 0
    #: while tracing, the cells of the batch that are live (masks.py): None when all are
    mask = None
    #: how many masked ``if`` s are under way, nested (masks.py)
    masked_ifs = 0


class Frames:
    """Evaluates erased forms one after another; definitions persist in ``globals``."""

    def __init__(self, run: RunConfig | None = None, backend: Backend | None = None):
        self.run = run or RunConfig()
        self.xp: Backend = backend or backends.get()
        self.globals: dict[str, object] = {}
        #: i-app results of unbatched abstractions, by (node, abstraction, index values)
        self._instances: dict[tuple, tuple] = {}
        #: the shapes in erased annotations, by node and field: see :meth:`annotation`
        self._memo = NodeTable()
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

    def eval_form(self, form: E.EForm):
        with located_at(form.span), self.xp.quiet():  # (a failure the backend names, located here)
            if isinstance(form, E.EDefine):
                self.globals[form.key] = self.ev(form.value, {}, {}, ()).arr  # a BoxFrame stays flat
                return plain(self.globals[form.key])
            return self.value(form.expr)

    def value(self, e: E.EExpr, env: dict | None = None):
        """The value of ``e``; ``env`` binds names for this evaluation only (a Function's
        arguments: each call has its own, so calls in several threads never see each other's)."""
        local = {name: Val(arr, 0) for name, arr in env.items()} if env else {}
        with located_at(e.span), self.xp.quiet():
            return plain(self.ev(e, local, {}, ()).arr)

    # --- annotations: computed once per node and index environment -------------------------
    # (An environment is never changed once made, so the same dictionary means the same values:
    # a loop's body evaluates its annotations once.  Evaluations in other threads share the
    # nodes but never an environment, and a hit must be the very same environment object.)

    def annotation(self, e, field: str, ienv, compute):
        fields = self._memo.get(e)
        if fields is None:
            fields = {}
            self._memo.set(e, fields)
        hit = fields.get(field)
        if hit is not None and hit[0] is ienv:
            return hit[1]
        value = compute()
        fields[field] = (ienv, value)
        return value

    def shape(self, e, field: str, ienv) -> tuple:
        return self.annotation(e, field, ienv, lambda: shape_value(getattr(e, field), ienv))

    def cells(self, e: E.EApp, ienv) -> tuple:
        return self.annotation(e, "cells", ienv, lambda: tuple(shape_value(c, ienv) for c in e.cells))

    def flat_shape(self, e, field: str, ienv) -> tuple:
        """An annotation's shape where a ragged dimension cannot be used: declines a ragged pass."""
        shape = self.shape(e, field, ienv)
        if self._running.ragged_depth and is_ragged_cell(shape):
            raise NeedGrouping
        return shape

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
            return unboxing.unbox(self, e, env, ienv, batch)
        if isinstance(e, E.ELet):
            return self.let(e, env, ienv, batch)
        if isinstance(e, E.EIf):
            return control.if_(self, e, env, ienv, batch)
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
        xp = self.xp
        if e.const is not None:
            return Val(xp.constant(e, e.const, e.rep, e.dims), 0)
        atoms = [self.atom(a, env, ienv, batch) for a in e.atoms]
        if not e.dims:  # a scalar: the atom's own (possibly broadcast) array
            return atoms[0]
        if not atoms:  # an empty literal: its shape is the program's
            check_shape(e.dims, atom_bytes(rep_value(e.rep, ienv)), "this array literal", e.span, self.run)
        k = max((a.k for a in atoms), default=0)
        if k == 0:
            out = xp.empty((len(atoms),), rep_value(e.rep, ienv))
            for i, a in enumerate(atoms):
                out[i] = a.arr[()]
            return Val(xp.reshape(out, e.dims), 0)
        bshape = extent(atoms, k)
        out = host.empty(bshape + (len(atoms),))
        for i, a in enumerate(atoms):
            out[..., i] = xp.reshape(a.arr, a.arr.shape + (1,) * (k - a.k))
        return Val(xp.reshape(out, bshape + e.dims), k)

    def atom(self, a: E.EAtom, env, ienv, batch) -> Val:
        """An atom as a (batch-shaped, usually 0-d) object or literal array."""
        if isinstance(a, E.ELit):
            return Val(self.xp.constant(a, a.value, None, ()), 0)
        if isinstance(a, E.EPrim):
            return Val(host.scalar(PrimFn(PRIMITIVES[a.name])), 0)
        if isinstance(a, (E.ELam, E.EILam)):
            # A closure keeps just the locals it uses (its own dictionary: environments it was
            # made in may be filled further, as a let's is, without it seeing that).
            captured = {x: env[x] for x in a.free if x in env}
            level = max((v.k for v in captured.values()), default=0)
            cls = IClosure if isinstance(a, E.EILam) else Closure
            # One closure; as a value it varies wherever what it captured varies.
            closure = host.scalar(cls(a, captured, ienv, level))
            return Val(spread(self.xp, closure, extent(list(captured.values()), level)), level)
        if isinstance(a, E.EBox):
            indices = tuple(index_value(i, ienv) for i in a.indices)
            body = plain_val(self.ev(a.body, env, ienv, batch))
            if body.k == 0:
                return Val(host.scalar(BoxValue(indices, body.arr)), 0)
            small = Val(self.xp.compact(body.arr), body.k)
            bshape = small.arr.shape[: body.k]
            out = host.empty(bshape)
            for idx in positions(bshape):
                out[idx] = BoxValue(indices, detach(small, idx))
            return Val(out, body.k)
        raise TypeError(f"not an erased atom: {a!r}")

    def frame(self, e: E.EFrame, env, ienv, batch) -> Val:
        xp = self.xp
        shape = self.flat_shape(e, "shape", ienv)
        check_shape(shape, atom_bytes(rep_value(e.rep, ienv)), "this frame", e.span, self.run)
        if not e.cells:
            return Val(xp.empty(shape, rep_value(e.rep, ienv)), 0)
        cells = [plain_val(self.ev(c, env, ienv, batch)) for c in e.cells]
        k = max(c.k for c in cells)
        dims = len(shape) - (cells[0].arr.ndim - cells[0].k)
        cell_shape = shape[dims:]
        bshape = extent(cells, k)
        if len(cells) == 1:  # [e]: one more axis, no copy
            one = spread(xp, align(xp, cells[0], k, 0, 0), bshape + cell_shape)
            return Val(xp.reshape(one, bshape + shape), k)
        lifted = [spread(xp, align(xp, c, k, 0, 0), bshape + cell_shape) for c in cells]
        # Each cell stays one contiguous block (the frame axis outermost in memory, a view puts
        # it after the batch axes): copying is cheaper than interleaving, and taking a cell back
        # out — (index z 0) of a frame [x y c] — gives a contiguous array, not a strided one.
        stacked = xp.moveaxis(xp.stack(lifted, axis=0), 0, k)
        return Val(xp.reshape(stacked, bshape + shape), k)

    def app(self, e: E.EApp, env, ienv, batch) -> Val:
        try:
            return self._app(e, env, ienv, batch)
        except RemoraRuntimeError as err:
            relocate_library_error(err, e.span, callee_name(e.fn))
            raise

    def _app(self, e: E.EApp, env, ienv, batch) -> Val:
        fn = self.ev(e.fn, env, ienv, batch)
        args = [self.ev(a, env, ienv, batch) for a in e.args]  # flat frames of boxes stay flat, for λs
        cells = self.cells(e, ienv)
        result = self.shape(e, "result", ienv)
        rep = rep_value(e.rep, ienv)
        if type(fn.arr) is Ragged or any(type(p.arr) is Ragged for p in args):
            args = [plain_val(a) if type(a.arr) is BoxFrame else a for a in args]
            if self._running.mask is not None:  # (boxes laid out flat: the mask cannot follow)
                return masks.narrowed_call(self, 0, ragged_app, self, fn, args, cells, result, rep, e.span, batch)
            return ragged_app(self, fn, args, cells, result, rep, e.span, batch)
        if self._running.ragged_depth and (is_ragged_cell(result) or any(is_ragged_cell(c) for c in cells)):
            raise NeedGrouping  # (shapes that differ per box, but no ragged value to run over)
        return self.apply_vals(fn, args, cells, result, rep, e.span, batch)

    def apply_vals(self, fn: Val, args: list[Val], cells, result, rep: str, span, batch) -> Val:
        """An application once its function array and arguments are evaluated: lift, then apply."""
        xp = self.xp
        frames = [fn.arr.ndim - fn.k] + [a.arr.ndim - a.k - len(c) for a, c in zip(args, cells)]
        parts = [fn] + args
        widest = max(range(len(parts)), key=lambda i: frames[i])
        total = parts[widest].arr.shape[parts[widest].k : parts[widest].k + frames[widest]]
        effectful = _effectful(fn)
        m = len(batch) if effectful else max(p.k for p in parts)
        if 0 in total and not effectful:  # nothing to apply: the same empty value in every batch cell
            cell = result[len(total):]
            check_shape(total + cell, atom_bytes(rep), function_name(fn.arr), span, self.run)
            return Val(xp.empty((1,) * m + total + cell, rep), m)
        aligned = [align(xp, p, m, f, len(total)) for p, f in zip(parts, frames)]
        # The application runs over the batch axes where some participant varies (and, for an
        # effect, over all of them: once per cell), then the principal frame.
        bshape = tuple(batch[:m]) if effectful else joint(*(a.shape[:m] for a in aligned))
        tf = bshape + total
        # One function (the usual case) need not be spread over the frame: apply_frame only asks which it is.
        fns = aligned[0] if aligned[0].size == 1 else spread(xp, aligned[0], tf)
        if self._running.mask is None:
            out = self.apply_frame(fns, aligned[1:], tf, cells, result[len(total):], rep, span)
        else:  # (the application keeps m of the batch's axes: so does the mask)
            out = masks.narrowed_call(self, m, self.apply_frame, fns, aligned[1:], tf, cells, result[len(total):],
                                      rep, span)
        if len(tf) > m and host.is_host(out):
            out = settle(out, m)
        return Val(out, m)

    # --- applying functions to whole frames ------------------------------------------

    def apply_frame(self, fns, args, tf, cells, result_cell, rep: str, span):
        """Apply the function array ``fns`` (shape ``tf``) to frame-shaped ``args``: ``tf + result_cell``."""
        xp = self.xp
        n = math.prod(tf)
        check_shape(tf + result_cell, atom_bytes(rep), function_name(fns), span, self.run)
        if n == 0:
            return xp.empty(tf + result_cell, rep)
        fn = host.uniform_atom(fns)
        if fn is not None:
            return self.apply_one(fn, args, tf, cells, result_cell, span, rep)
        # A frame of different functions: each applied to the cells it owns.
        mask = self._running.mask
        if mask is not None and mask.ndim:  # (cells regrouped: the mask keeps only "some cell is live")
            return masks.narrowed_call(self, 0, self.apply_frame, fns, args, tf, cells, result_cell, rep, span)
        out = None
        for _, f, sel in host.groups(fns, id):
            sub_args = [xp.gather(xp.reshape(spread(xp, plain(a), tf + c), (n,) + c), sel) for a, c in zip(args, cells)]
            if getattr(f, "level", 0):
                f = restrict_closure(xp, f, tf, sel)
            part = plain(self.apply_one(f, sub_args, (len(sel),), cells, result_cell, span, rep))
            if out is None:
                out = xp.empty((n,) + result_cell, xp.rep(part))
            out = xp.scatter(out, sel, part)
        return xp.reshape(out, tf + result_cell)

    def apply_one(self, fn, args, tf, cells, result_cell, span, rep: str = OBJECT):
        """One function over the whole frame ``tf``: one primitive call, or one evaluation of a λ body."""
        xp = self.xp
        expected = tf + result_cell
        if isinstance(fn, PrimFn):
            if fn.prim.effectful:
                if self.ragged_depth:
                    raise NeedGrouping  # an effect must not run in a pass that may be abandoned
                xp.untraceable(f"`{fn.prim.name}`")  # nor in a trace (a compiled function would not repeat it)
            ctx = FrameContext(xp, tf, cells, result_cell, fn.indices, span, self.run, rep)
            ctx.engine = self
            full = [spread(xp, plain(a), tf + c) for a, c in zip(args, cells)]
            out = fn.prim.impl(ctx, *full)
            if type(out) is BoxFrame:
                return out
            out = xp.asarray(out)
        elif isinstance(fn, Closure) and not isinstance(fn, IClosure):
            # The body runs once over the whole frame; parameters keep their unit axes.
            env = dict(fn.env)
            env.update((p, Val(a, len(tf))) for p, a in zip(fn.lam.params, args))
            running = self._running
            if running.depth >= self.run.max_depth:
                raise too_deep(self.run, span)
            running.depth += 1
            try:
                r = self.ev(fn.lam.body, env, fn.ienv, tf)
            finally:
                running.depth -= 1
            if type(r.arr) is BoxFrame and r.arr.shape == expected:
                return r.arr  # (a BoxFrame passes through whole)
            r = plain_val(r)
            if r.arr.shape == expected:
                return r.arr
            out = spread(xp, align(xp, r, len(tf), 0, 0), expected)
        else:
            raise RemoraRuntimeError("internal error: applied a value that is not a function", span)
        if out.shape != expected:
            out = spread(xp, out, expected)
        return out

    # --- index application --------------------------------------------------------------

    def iapp(self, e: E.EIApp, env, ienv, batch) -> Val:
        xp = self.xp
        fn = plain_val(self.ev(e.fn, env, ienv, batch))
        values = self.annotation(e, "values", ienv, lambda: tuple(iapp_arg_value(a, ienv) for a in e.args))
        result = self.flat_shape(e, "result", ienv)
        check_shape(result, atom_bytes(rep_value(e.rep, ienv)), "this index application", e.span, self.run)
        frame = fn.arr.shape[fn.k :]
        cell = result[len(frame) :]
        first = host.uniform_atom(fn.arr)
        if first is not None:
            # Instantiating the same unbatched abstraction at the same indices always gives the
            # same value (a polymorphic function used in a loop or called again): remember it.
            key = (id(e), id(first), _values_key(values)) if not fn.k and not getattr(first, "level", 0) else None
            if xp.tracing():
                key = None  # (a value made while tracing must not outlive the trace)
            hit = self._instances.get(key) if key else None
            if hit is not None and hit[0] is first:
                return hit[1]
            if isinstance(first, PrimFn):
                inst = host.scalar(PrimFn(first.prim, first.indices + values))
                result = Val(spread(xp, inst, fn.arr.shape), fn.k)
            else:
                body = plain_val(self.instantiate(first, values, batch))
                m = max(fn.k, body.k)
                result = Val(lift(xp, body, m, batch, 0, frame, cell), m)
            if key and not result.k:
                if len(self._instances) > 10_000:
                    self._instances.clear()
                self._instances[key] = (first, result)
            return result
        # Different abstractions (or none): instantiate each cell on its own.
        shape = tuple(batch[: fn.k]) + frame
        check_shape(shape + cell, atom_bytes(rep_value(e.rep, ienv)), "this index application", e.span, self.run)
        full = spread(xp, fn.arr, shape)
        out = xp.empty(shape + cell, rep_value(e.rep, ienv))
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

    # --- the body of an unbox, once its boxes are chosen (strategies: unboxing.py) ---------

    def unbox_group(self, e: E.EUnbox, env, ienv, indices, boxes, tf, body_shape):
        """The unbox body over ``boxes`` (an array lining up with the frame ``tf``, possibly with
        unit axes) that all share their index components."""
        own = host.atoms(boxes)
        contents = self.xp.reshape(self.xp.stack([b.value for b in own]), boxes.shape + own[0].value.shape)
        return self.unbox_body(e, env, ienv, indices, contents, tf, body_shape)

    def unbox_body(self, e: E.EUnbox, env, ienv, indices, contents, tf, body_shape):
        """The unbox body once over the frame ``tf``, its index variables bound to ``indices``
        and its value variable to ``contents`` (the boxes' values, batched over ``tf``)."""
        inner_i = dict(ienv)
        inner_i.update(zip(e.index_vars, indices))
        inner = {x: env[x] for x in e.free if x in env}
        inner[e.value_name] = Val(contents, len(tf))
        r = plain_val(self.ev(e.body, inner, inner_i, tf))
        return spread(self.xp, align(self.xp, r, len(tf), 0, 0), tf + body_shape)


def _values_key(values: tuple) -> tuple:
    """A hashable key for i-app arguments (an Array type's binding carries its representation too)."""
    return tuple((v, v.rep) if hasattr(v, "rep") else v for v in values)


def _effectful(fn: Val) -> bool:
    """Whether ``fn`` is an effectful primitive, which must run once per cell of the batch."""
    return fn.arr.size == 1 and getattr(getattr(host.first(fn.arr), "prim", None), "effectful", False)
