"""A compiled evaluation of the JAX backend: one ``jax.jit`` function per input signature, and
the kept call that replays its executable (spec D48, "A compiled call").  Separate from
:mod:`.jax_backend` (the operations and tracing) because the calls' fast path is its own
concern: what a call costs around XLA's own work."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import jax
import numpy as np

from .jax_width import NeedsX64, _x64, evaluation_width

if TYPE_CHECKING:
    from .jax_backend import JaxBackend

class _Compiled:
    """One evaluation (a key at one input signature) as a compiled function: ``entry(run, inputs)``
    is ``run(inputs)``.  The first call traces ``run`` into a ``jax.jit`` function of the input
    arrays in the order of ``names``; where that cannot be, ``run`` runs eagerly on the host
    from then on (see :class:`JaxBackend`).  A caller that has seen a signature may keep its
    entry and call it directly, or better, keep its :meth:`replay` (spec D48, "A compiled call")."""

    __slots__ = ("backend", "names", "jitted", "executable", "eager", "wide")

    def __init__(self, backend: JaxBackend, names: tuple, wide: bool = True) -> None:
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

    def __call__(self, run: Callable[[dict], Any], inputs: dict) -> Any:
        with evaluation_width(self.wide):
            try:
                return self._call(run, inputs)
            except NeedsX64:  # (a narrow trace asked for 64 bits: the evaluation is wide)
                self.wide, self.jitted, self.executable = True, None, None
        return self(run, inputs)

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
        except NeedsX64:
            raise
        except Exception as err:  # noqa: BLE001 — whatever stops the trace, the eager run decides
            # A shape that depends on data, an effect, a result holding boxes (JAXTypeError,
            # Untraceable), or a located error found on shapes alone: the same evaluation,
            # eagerly, from now on — which computes the value, or raises the error, exactly
            # as the NumPy backend does.
            self.eager = True
            backend.fallbacks.append(f"{type(err).__name__}: {err}"[:300])
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
            # (a failed check: the eager run raises it, located)
            return out if np.asarray(ok) else to_user(self.backend._eager(run, dict(zip(order, arrays))))

        return replayed_checked
