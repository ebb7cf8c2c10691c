"""The reference engine: erased Remora's reduction rules (paper Fig. 12), one at a time.

Nothing clever happens here.  An application whose frames differ is *lifted*
by replicating cells (``Concat ∘ Rep ∘ Split``, a real copy); an application
over a non-scalar frame is *mapped* into one application per cell; each of
those is a β (λ) or δ (primitive, on one cell) step; a frame of results
*collapses* into one array, its shape taken from the annotation when there are
no cells.  ``iβ`` and ``unbox`` step through each abstraction or box in turn.

Redexes are found by recursion rather than by re-scanning the whole term after
every step (the same steps in the same order, without the quadratic search),
and β binds parameters in an environment rather than substituting — the usual
equivalent implementation.  With a trace stream, every step is printed with the
shapes involved.  The whole-frame engine must agree with this one everywhere.
"""

from __future__ import annotations

import math

from .. import backends
from ..backends import Backend, host
from ..backends.base import OBJECT
from ..erasure import erased as E
from ..errors import RemoraRuntimeError, located_at, relocate_library_error
from ..limits import atom_bytes, show_dims
from ..primitives import PRIMITIVES
from .runtime import (
    Closure,
    IClosure,
    PrimContext,
    RunConfig,
    callee_name,
    check_shape,
    check_bytes,
    function_name,
    iapp_arg_value,
    positions,
    index_value,
    rep_value,
    shape_value,
    too_deep,
)
from .values import BoxValue, PrimFn


def _show_arg(value) -> str:
    """An i-app argument as Remora text: a Dim, a Shape, or an atom type's representation."""
    if isinstance(value, str):
        return E.show_rep(value)
    if isinstance(value, tuple):
        return show_dims(value)
    return str(value)


class ReferenceContext(PrimContext):
    """δ's view of the reference engine: a primitive that applies functions asks for them here."""

    __slots__ = ("engine",)

    def apply(self, fns, args, cells, result_cell):
        return self.engine.apply(fns, list(args), tuple(cells), tuple(result_cell), OBJECT, self.span)


class Reference:
    """Evaluates erased forms one after another; definitions persist in ``globals``."""

    def __init__(self, run: RunConfig | None = None, backend: Backend | None = None):
        self.run = run or RunConfig()
        self.xp: Backend = backend or backends.get()
        self.globals: dict[str, object] = {}
        #: how many λ bodies are under way, nested (the recursion limit counts them)
        self.depth = 0

    def step(self, rule: str, detail: str) -> None:
        if self.run.trace is not None:
            print(f"{rule:<9}{detail}", file=self.run.trace)

    def eval_form(self, form: E.EForm):
        with located_at(form.span), self.xp.quiet():  # (a failure the backend names, located here)
            if isinstance(form, E.EDefine):
                self.globals[form.key] = self.ev(form.value, {}, {})
                return self.globals[form.key]
            return self.ev(form.expr, {}, {})

    # --- expressions ------------------------------------------------------------

    def ev(self, e: E.EExpr, env: dict, ienv: dict):
        if isinstance(e, E.EVar):
            return env[e.name] if e.key is None else self.globals[e.key]
        if isinstance(e, E.EArray):
            return self.array(e, env, ienv)
        if isinstance(e, E.EFrame):
            cells = [self.ev(c, env, ienv) for c in e.cells]
            return self.collapse(cells, shape_value(e.shape, ienv), rep_value(e.rep, ienv), e.span)
        if isinstance(e, E.EApp):
            try:
                fns = self.ev(e.fn, env, ienv)
                args = [self.ev(a, env, ienv) for a in e.args]
                cells = tuple(shape_value(c, ienv) for c in e.cells)
                return self.apply(fns, args, cells, shape_value(e.result, ienv), rep_value(e.rep, ienv), e.span)
            except RemoraRuntimeError as err:
                relocate_library_error(err, e.span, callee_name(e.fn))
                raise
        if isinstance(e, E.EIApp):
            return self.iapp(e, env, ienv)
        if isinstance(e, E.EUnbox):
            return self.unbox(e, env, ienv)
        if isinstance(e, E.ELet):
            return self.let(e, env, ienv)
        if isinstance(e, E.EIf):
            cond = self.ev(e.cond, env, ienv)
            chosen = bool(self.xp.to_host(cond))
            self.step("if", "#t: the then branch" if chosen else "#f: the else branch")
            return self.ev(e.then if chosen else e.orelse, env, ienv)
        raise TypeError(f"not an erased expression: {e!r}")

    def let(self, e: E.ELet, env: dict, ienv: dict):
        """The β-redexes a let abbreviates, one binding at a time: evaluate the argument, then
        β (no lift or map: the parameter's cell is the whole value).  One environment of the
        let's own is filled in place, so n bindings cost n steps (closures copy what they use)."""
        local = {x: env[x] for x in e.free if x in env}
        for name, value in e.bindings:
            local[name] = self.ev(value, local, ienv)
            self.step("β", f"λ ({name})")
        return self.ev(e.body, local, ienv)

    def array(self, e: E.EArray, env: dict, ienv: dict):
        if e.const is not None:
            return self.xp.constant(e, e.const, e.rep, e.dims)
        rep = rep_value(e.rep, ienv)
        if not e.atoms:  # an empty literal: its shape is the program's
            check_shape(e.dims, atom_bytes(rep), "this array literal", e.span, self.run)
        out = self.xp.empty((len(e.atoms),), rep)
        for i, a in enumerate(e.atoms):
            out[i] = self.atom(a, env, ienv)
        return self.xp.reshape(out, e.dims)

    def atom(self, a: E.EAtom, env: dict, ienv: dict):
        if isinstance(a, E.ELit):
            return a.value
        if isinstance(a, E.EPrim):
            return PrimFn(PRIMITIVES[a.name])
        if isinstance(a, (E.ELam, E.EILam)):
            # just the locals it uses, in a dictionary of its own (a let's may be filled further)
            cls = IClosure if isinstance(a, E.EILam) else Closure
            return cls(a, {x: env[x] for x in a.free if x in env}, ienv)
        if isinstance(a, E.EBox):
            return BoxValue(tuple(index_value(i, ienv) for i in a.indices), self.ev(a.body, env, ienv))
        raise TypeError(f"not an erased atom: {a!r}")

    # --- the reduction rules ------------------------------------------------------

    def collapse(self, cells: list, shape: tuple[int, ...], rep: str, span=None):
        """collapse: a frame of array values becomes one array; its shape comes from the annotation."""
        self.step("collapse", f"{len(cells)} cells into {show_dims(shape)}")
        check_shape(shape, atom_bytes(rep), "this frame", span, self.run)
        xp = self.xp
        if not cells:
            return xp.empty(shape, rep)
        flat = xp.concat([xp.reshape(c, (-1,)) for c in cells])
        return xp.reshape(flat, shape)

    def apply(self, fns, args, cells, result, rep: str, span):
        """An application of the function array ``fns``: lift, then map — or, over the scalar
        frame, β or δ at once."""
        check_shape(result, atom_bytes(rep), function_name(fns), span, self.run)
        fns, args = self.lift(fns, args, cells, span)
        if not fns.shape:
            return self.reduce_scalar(fns[()], args, cells, result, span, rep)
        return self.map(fns, args, cells, result, rep, span)

    def lift(self, fns, args, cells, span) -> tuple:
        """lift: the function array and every argument replicated up to the principal frame (the
        longest; the type system made every other frame a prefix of it).  Nothing to do when the
        frames are already equal."""
        frames = [fns.shape] + [a.shape[: a.ndim - len(c)] for a, c in zip(args, cells)]
        principal = max(frames, key=len)
        if all(f == principal for f in frames):
            return fns, args
        self.step("lift", " ".join(show_dims(f) for f in frames) + f" → {show_dims(principal)}")
        for a, c in zip(args, cells):
            check_shape(principal + tuple(c), self.xp.itemsize(a), "lifting this argument", span, self.run)
        fns = self._replicate(fns, fns.shape, principal, ())
        return fns, [self._replicate(a, f, principal, c) for a, f, c in zip(args, frames[1:], cells)]

    def map(self, fns, args, cells, result, rep: str, span):
        """map: over a non-scalar frame that every participant shares, one application per cell
        (each a β or δ step), whose results collapse into the application's result."""
        frame = fns.shape
        cell_result = result[len(frame):]
        n = math.prod(frame)
        self.step("map", f"frame {show_dims(frame)}: {n} applications on cells " + " ".join(show_dims(c) for c in cells))
        out = []
        boxed = atoms = 0  # bytes (and atoms) held in boxes made so far: each is small, all together need not be
        for idx in positions(frame):
            cell = self.reduce_scalar(fns[idx], [a[idx + (Ellipsis,)] for a in args], cells, cell_result, span, rep)
            if host.is_host(cell):
                contents = [b.value for b in host.atoms(cell) if isinstance(b, BoxValue)]
                boxed += sum(v.nbytes for v in contents)
                atoms += sum(v.size for v in contents)
                check_bytes(atoms, boxed, f"the boxes made by {function_name(fns)}", span, self.run)
            out.append(cell)
        return self.collapse(out, result, rep, span)

    def reduce_scalar(self, fn, args, cells, result, span, rep: str = OBJECT):
        """β or δ: a single function applied to exactly its cells."""
        if isinstance(fn, PrimFn):
            self.step("δ", f"{fn.prim.name} on " + " ".join(show_dims(a.shape) for a in args))
            check_shape(result, atom_bytes(rep), fn.prim.name, span, self.run)
            ctx = ReferenceContext(self.xp, (), cells, result, fn.indices, span, self.run, rep)
            ctx.engine = self
            return self.xp.asarray(fn.prim.impl(ctx, *args))
        if isinstance(fn, Closure) and not isinstance(fn, IClosure):
            lam = fn.lam
            self.step("β", f"λ ({' '.join(lam.params)})")
            env = dict(fn.env)
            env.update(zip(lam.params, args))
            if self.depth >= self.run.max_depth:
                raise too_deep(self.run, span)
            self.depth += 1
            try:
                return self.ev(lam.body, env, fn.ienv)
            finally:
                self.depth -= 1
        raise RemoraRuntimeError("internal error: applied a value that is not a function", span)

    def _replicate(self, a, frame: tuple, principal: tuple, cell: tuple):
        """lift's ``Concat ⟦Rep_n ⟦Split_c ⟦atoms⟧⟧⟧``: each cell copied for every new frame position."""
        xp = self.xp
        cells = xp.reshape(a, (math.prod(frame), math.prod(cell)))
        copies = math.prod(principal[len(frame):])
        return xp.reshape(xp.repeat(cells, copies, axis=0), principal + tuple(cell))

    def iapp(self, e: E.EIApp, env: dict, ienv: dict):
        """iβ: every index abstraction of the array receives the index arguments."""
        fns = self.ev(e.fn, env, ienv)
        values = tuple(iapp_arg_value(a, ienv) for a in e.args)
        result = shape_value(e.result, ienv)
        check_shape(result, atom_bytes(rep_value(e.rep, ienv)), "this index application", e.span, self.run)
        cell_result = result[fns.ndim:]
        out = []
        for idx in positions(fns.shape):
            fn = fns[idx]
            if isinstance(fn, PrimFn):
                self.step("iβ", f"{fn.prim.name} at " + " ".join(map(_show_arg, values)))
                out.append(host.scalar(PrimFn(fn.prim, fn.indices + values)))
            else:
                self.step("iβ", f"Iλ ({' '.join(v.name for v in fn.lam.vars)}) at " + " ".join(map(_show_arg, values)))
                inner = dict(fn.ienv)
                inner.update(zip(fn.lam.vars, values))
                out.append(self.ev(fn.lam.body, fn.env, inner))
            assert out[-1].shape == cell_result
        return self.collapse(out, result, rep_value(e.rep, ienv), e.span)

    def unbox(self, e: E.EUnbox, env: dict, ienv: dict):
        """unbox: the body runs once per box, with that box's indices and contents bound."""
        boxes = self.ev(e.boxed, env, ienv)
        body_shape = shape_value(e.body_shape, ienv)
        check_shape(boxes.shape + body_shape, atom_bytes(rep_value(e.rep, ienv)), "this unbox", e.span, self.run)
        out = []
        for idx in positions(boxes.shape):
            box: BoxValue = boxes[idx]
            self.step("unbox", "indices " + " ".join(map(str, box.indices)) + f", contents {show_dims(box.value.shape)}")
            inner_i = dict(ienv)
            inner_i.update(zip(e.index_vars, box.indices))
            inner = {x: env[x] for x in e.free if x in env}
            inner[e.value_name] = box.value
            out.append(self.ev(e.body, inner, inner_i))
        return self.collapse(out, boxes.shape + body_shape, rep_value(e.rep, ienv), e.span)
