"""A ``remora.function`` under JAX's transformations (contract §11): ``jax.grad``, ``jax.jit``,
``jax.vmap``.

Called with JAX tracers (inside a transformation), a function on the JAX backend is a
``jax.custom_vjp`` whose primal is the function on the NumPy backend and whose rule is Remora's
own reverse mode (:func:`remora.interfaces.api_derivatives.pullbacks`), each entered from the
traced program as a ``jax.pure_callback`` — so it composes with every transformation
(``vmap`` hands the callback the batch as a leading frame, which the function lifts over) and
JAX never needs to see inside it.  Decisions D70.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np



def is_traced(args) -> bool:
    """Whether a JAX transformation is tracing any of ``args``."""
    return any(isinstance(a, jax.core.Tracer) for a in args)


def traced_call(on_numpy, args: tuple, pullbacks: Callable) -> Any:
    """``on_numpy(*args)`` (a ``remora.function`` on the NumPy backend) for traced ``args``;
    ``pullbacks(values, ct, which)``: Remora's cotangents of the arguments ``which`` names."""
    args = tuple(jax.numpy.asarray(a) for a in args)
    zeros = [np.zeros(a.shape, a.dtype) for a in args]
    result = np.asarray(on_numpy(*zeros))  # (the result's dtype and shape: once per trace)
    out = jax.ShapeDtypeStruct(result.shape, result.dtype)
    floats = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]

    def primal(*xs):
        return np.asarray(on_numpy(*map(np.asarray, xs)), dtype=out.dtype)

    @jax.custom_vjp
    def call(*xs):
        return jax.pure_callback(primal, out, *xs, vmap_method="broadcast_all")

    def forward(*xs):
        return call(*xs), xs

    def backward(xs, ct):
        wanted = tuple(jax.ShapeDtypeStruct(xs[i].shape, xs[i].dtype) for i in floats)

        def pulled(*values):
            values = [np.asarray(v) for v in values]
            got = pullbacks(values[:-1], values[-1], floats)
            return tuple(np.asarray(g, dtype=w.dtype) for g, w in zip(got, wanted))

        cts = jax.pure_callback(pulled, wanted, *xs, ct, vmap_method="broadcast_all") if floats else ()
        given = dict(zip(floats, cts))
        return tuple(given[i] if i in given else np.zeros(x.shape, jax.dtypes.float0) for i, x in enumerate(xs))

    call.defvjp(forward, backward)
    return call(*args)

