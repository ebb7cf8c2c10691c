"""A compiled evaluation of the JAX backend: one ``jax.jit`` function per input signature, and
the kept call that replays its executable (spec D48, "A compiled call").  Separate from
:mod:`.jax_backend` (the operations and tracing) because the calls' fast path is its own
concern: what a call costs around XLA's own work."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable

import jax
import numpy as np

from ..errors import RemoraError
from ..ir.core import Miss, Untraceable as PlanUntraceable
from .jax_lower import Lowered, Unlowerable, lower
from .jax_ops import Untraceable
from .jax_width import NeedsX64, _x64, evaluation_width, x64

if TYPE_CHECKING:
    from .jax_backend import JaxBackend

#: What stops the whole-frame engine's trace for ``jax.jit`` (spec D48, "What cannot be traced"):
#: a shape that follows data (JAX refuses a traced value where a concrete one is needed), an
#: effect or a result holding boxes (``Untraceable``), or a located error found on shapes alone.
#: Only these make an evaluation run eagerly; any other exception is a bug and is raised.
CANNOT_COMPILE = (Untraceable, PlanUntraceable, jax.errors.ConcretizationTypeError,
                  jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError,
                  jax.errors.NonConcreteBooleanIndexError, RemoraError)

#: plans (variants) kept per compiled evaluation, one per outcome of its guards (as on NumPy)
VARIANTS = 8


class _Variant:
    """One plan of an evaluation lowered to JAX: the plan (replayed on the host where the
    compiled function says a guard or a check failed), the globals and locals it was traced
    with, how each of the evaluation's inputs binds to them, the lowered function, and its
    jitted function and executable."""

    __slots__ = ("plan", "G", "L", "binds", "lowered", "jitted", "executable")

    def __init__(self, plan: Any, G: dict, L: dict, binds: dict, lowered: Lowered):
        self.plan, self.G, self.L, self.binds, self.lowered = plan, G, L, binds, lowered
        self.jitted: Any = None
        self.executable: Any = None

    def scope(self):
        return x64() if self.lowered.wide else contextlib.nullcontext()

    def on_host(self, host: dict) -> Any:
        """The plan replayed on the host with ``host`` (inputs by name): its value, its located
        error, or :class:`Miss`."""
        G, L = dict(self.G), dict(self.L)
        for name, (kind, key) in self.binds.items():
            (L if kind == "argument" else G)[key] = host[name]
        return self.plan.run(G, L)


class _Compiled:
    """One evaluation (a key at one input signature) as a compiled function: ``entry(run, inputs)``
    is ``run(inputs)``.  The first call makes the evaluation's plan (``run.trace``, where the
    caller gives one) and lowers its IR to one ``jax.jit`` function (:mod:`.jax_lower`); where
    no plan can be made or its program cannot be lowered (the documented condition: spec D48),
    it traces ``run`` itself — the whole-frame engine on JAX's tracers — and where even that
    cannot be, ``run`` runs eagerly on the host from then on.  A caller that has seen a
    signature may keep its entry and call it directly, or better, keep its :meth:`replay`
    (spec D48, "A compiled call")."""

    __slots__ = ("backend", "names", "jitted", "executable", "eager", "wide", "variants", "why", "label")

    def __init__(self, backend: JaxBackend, names: tuple, wide: bool = True, label: str = "") -> None:
        self.backend = backend
        #: the inputs' names, in the order the compiled function takes their arrays
        self.names = names
        self.jitted: Any = None  # (made by the first call)
        #: the ahead-of-time compiled executable of ``jitted`` (made by the first call too)
        self.executable: Any = None
        #: whether the evaluation cannot be traced: it runs eagerly, on the host
        self.eager = False
        #: whether it needs JAX's 64-bit mode (False: traced narrow, in no 64-bit scope; spec D56)
        self.wide = wide
        #: the evaluation's plans lowered to JAX (None: not tried yet; empty: none, see ``why``)
        self.variants: list[_Variant] | None = None
        #: why the evaluation is not compiled from its plan ("" while it is)
        self.why = ""
        self.label = label  # (where the evaluation comes from, for REMORA_EXPLAIN)

    def __call__(self, run: Callable[[dict], Any], inputs: dict) -> Any:
        if self.variants is None and getattr(run, "trace", None) is not None:
            self._plan(run, inputs)
        if self.variants:
            return self._lowered(run, inputs)
        with evaluation_width(self.wide):
            try:
                return self._call(run, inputs)
            except NeedsX64:  # (a narrow trace asked for 64 bits: the evaluation is wide)
                self.wide, self.jitted, self.executable = True, None, None
        return self(run, inputs)

    # --- compiled from the plan's IR ---------------------------------------------------------

    def _plan(self, run: Callable[[dict], Any], inputs: dict) -> _Variant | None:
        """Make a plan of the evaluation on these inputs and lower it (a variant); None, with
        ``why`` said, where it cannot be."""
        from ..plans import explain

        if self.variants is None:
            self.variants = []
        host = {name: np.asarray(a) if isinstance(a, jax.Array) else a for name, a in inputs.items()}
        try:
            _, plan, G, L = run.trace(host)  # type: ignore[attr-defined]
        except (PlanUntraceable, RecursionError) as why:
            return self._refuse(str(why) if isinstance(why, PlanUntraceable) else "too deep to trace")
        except RemoraError:
            return None  # (its error: the evaluation runs, and raises it, as without a plan)
        if plan is None:
            return self._refuse("its value holds computed arrays in boxes or functions")
        binds, params, constants = self._bindings(plan.ir, host, G, L)
        try:
            lowered = lower(plan.ir, params, constants)
        except Unlowerable as why:
            return self._refuse(str(why))
        variant = _Variant(plan, G, L, binds, lowered)
        self.variants.append(variant)
        self.why = ""
        if _explaining():
            explain(self.label, "compiled from its plan (the IR lowered to one jax.jit function)")
        return variant

    def _refuse(self, why: str) -> None:
        from ..plans import explain

        if not self.variants:
            self.why = why
            self.backend.fallbacks.append(f"not compiled from a plan: {why}"[:300])
            if _explaining():
                explain(self.label, f"cannot be compiled from a plan ({why}): the whole-frame engine is traced")
        return None

    def _bindings(self, program: Any, host: dict, G: dict, L: dict) -> tuple[dict, tuple, dict]:
        """How the program's input variables bind: to the evaluation's inputs (by position, as
        the jitted function takes them) or to arrays fixed for its life (its constants)."""
        position = {id(a): name for name, a in host.items()}
        binds: dict = {}
        by_name: dict = {}
        constants: dict = {}
        for var, where in program.inputs:
            kind, key = where.split(" ", 1)
            source = (L if kind == "argument" else G)[key]
            name = position.get(id(source))
            if name is None:
                constants[var.name] = source
            else:
                binds[name] = (kind, key)
                by_name[name] = var.name
        params = tuple(by_name.get(name, f"%unused {name}") for name in self.names)
        return binds, params, constants

    def _lowered(self, run: Callable[[dict], Any], inputs: dict) -> Any:
        """The value through the variants' compiled functions: the first whose guards and checks
        hold (it is tried first from then on); where none does, each plan replayed on the host
        says why — a located error, or a miss; all missing makes a new variant (as a plan cache
        does on NumPy)."""
        args = [inputs[name] for name in self.names]
        failed = []
        for k, variant in enumerate(list(self.variants)):
            got = self._run_variant(variant, args)
            if not variant.lowered.checks:
                return got
            out, ok = got
            if np.asarray(ok):
                if k:
                    self.variants.remove(variant)
                    self.variants.insert(0, variant)
                    self.jitted, self.executable = variant.jitted, variant.executable
                return out
            failed.append(variant)
        host = {name: np.asarray(a) if isinstance(a, jax.Array) else a for name, a in inputs.items()}
        for variant in failed:
            self.backend.eager_runs += 1
            try:
                with self.backend.quiet():
                    return self.backend.to_user(variant.on_host(host))  # (or its located error, raised)
            except Miss:
                continue
        if len(self.variants) < VARIANTS and self._plan(run, inputs) is not None:
            return self._lowered(run, inputs)
        return self.backend._eager(run, inputs)

    def _run_variant(self, variant: _Variant, args: list) -> Any:
        with variant.scope(), evaluation_width(variant.lowered.wide):
            if variant.jitted is not None:
                return variant.jitted(*args)
            self.backend.traces += 1
            jitted = jax.jit(variant.lowered.fn)
            variant.executable = jitted.lower(*args).compile()
            variant.jitted = jitted
            if variant is self.variants[0]:
                self.jitted, self.executable = jitted, variant.executable
            return variant.executable(*args)

    # --- the whole-frame engine traced (what has no lowerable plan) ---------------------------

    def _call(self, run: Callable[[dict], Any], inputs: dict) -> Any:
        backend = self.backend
        if self.eager:
            return backend._eager(run, inputs)
        args = [inputs[name] for name in self.names]
        try:
            with _x64():
                if self.jitted is not None:
                    got = self.jitted(*args)
                else:  # (traced and compiled once: the jitted function's later calls find it compiled)
                    jitted = jax.jit(backend._traced(run, self.names))
                    executable = jitted.lower(*args).compile()
                    got = executable(*args)
                    self.executable, self.jitted = executable, jitted
        except CANNOT_COMPILE as err:
            # A shape that depends on data, an effect, a result holding boxes, or a located
            # error found on shapes alone: the same evaluation, eagerly, from now on — which
            # computes the value, or raises the error, exactly as the NumPy backend does.
            self.eager = True
            backend.fallbacks.append(f"{type(err).__name__}: {err}"[:300])
            if _explaining():
                from ..plans import explain

                explain(self.label, f"evaluated eagerly on the host ({type(err).__name__}: {err})"[:300])
            return backend._eager(run, inputs)
        return self._checked(got, run, inputs)

    def _checked(self, got: Any, run: Callable[[dict], Any], inputs: dict) -> Any:
        """The result of a call that returned ``got``: with a flag of checks, the result when
        it holds; a failed check runs the evaluation again eagerly, which raises it, located."""
        if type(got) is not tuple:
            return got
        out, ok = got
        # (``np.asarray``: one read of the flag; ``bool`` of a JAX array costs twice as much)
        return out if np.asarray(ok) else self.backend._eager(run, inputs)

    def replay(self, run: Callable[[dict], Any], inputs: dict) -> Callable[[Any], Any] | None:
        """For a caller that keeps this entry for inputs like ``inputs`` (after a call with them):
        ``replay(arrays)`` — the input arrays in ``inputs``' order, any iterable — is
        ``self(run, inputs)`` through the executable compiled ahead of time, called as it is:
        no 64-bit scope to enter (an executable's input types are fixed: the scope would change
        nothing but the cost of the call, the jitted call's cache key included), no dict of
        inputs, no look-up.  Only for JAX arrays (NumPy's ``float64`` would be made ``float32``
        outside the scope) of an evaluation that compiles; None otherwise.  An input the
        executable refuses (one on another device) takes the jitted call instead."""
        executable = self.executable
        if self.eager or executable is None or not all(isinstance(a, jax.Array) for a in inputs.values()):
            return None
        order = tuple(inputs)
        # (the C++ call a ``jax.stages.Compiled`` makes once called: one Python frame less per call)
        call = getattr(executable, "_call", None) or executable
        at = None if order == self.names else [order.index(name) for name in self.names]
        to_user = self.backend.to_user

        def again(arrays: tuple) -> Any:
            """The call through :meth:`__call__`: the jitted function, in the 64-bit scope."""
            return to_user(self(run, dict(zip(order, arrays))))

        if at is None and executable.out_tree.num_leaves == 1:  # (no checks: the result as it is)
            def replayed(arrays):
                try:
                    return call(*arrays)
                except (TypeError, ValueError):  # (not an array this executable was made for)
                    return again(tuple(arrays))
            return replayed

        def replayed_checked(arrays):
            arrays = tuple(arrays)
            try:
                got = call(*arrays) if at is None else call(*[arrays[i] for i in at])
            except (TypeError, ValueError):  # (not an array this executable was made for)
                return again(arrays)
            if type(got) is not tuple:
                return got
            out, ok = got
            # (a failed check or guard: the call through __call__ raises it, located, or replans)
            return out if np.asarray(ok) else again(arrays)

        return replayed_checked


def _explaining() -> bool:
    from .. import plans

    return plans.EXPLAIN
