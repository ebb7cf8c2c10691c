"""``remora.grad``, and a ``remora.function`` under JAX's transformations
(:mod:`remora.backends.jax_transforms`): derivatives of functions the API was given (§11)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..ir.ad.table import zeros_like
from ..ir.ad.tape import TapeBackend
from ..ir.ad.transform import pullback
from ..errors import RemoraTypeError, Span
from ..statics.typed import form_type
from ..statics.types import Type


def derived(session, transform: str, value: Any, t: Type, span: Span) -> tuple[Type, Any]:
    """``(transform f)`` for the function ``value`` of type ``t`` (checked and evaluated in
    ``session``): its type and value.  A type error is located at the function in the
    caller's source (``span``), not in the form written here."""
    session.bind("%derived", value, t)
    try:
        (form,) = session.check_text(f"({transform} %derived)", "<function>")
    except RemoraTypeError as err:
        raise RemoraTypeError(err.message.replace("this function", "the function"), span) from None
    return form_type(form), session.evaluate(form)


def jax_traced():
    """:func:`remora.backends.jax_transforms.is_traced` (JAX is imported only for a function on
    the JAX backend)."""
    from ..backends.jax_transforms import is_traced

    return is_traced


def traced_call(on_numpy, args: tuple, names: list[str]) -> Any:
    """``on_numpy(*args)`` inside a JAX transformation (:mod:`remora.backends.jax_transforms`),
    its derivative Remora's (:func:`pullbacks`)."""
    from ..backends.jax_transforms import traced_call as call

    return call(on_numpy, args, lambda values, ct, which: pullbacks(on_numpy, values, ct, which, names))


def pullbacks(function, args: tuple, ct: Any, which: list[int], names: list[str]) -> list[Any]:
    """The cotangent ``ct`` of ``function(*args)`` (a ``remora.function`` on the NumPy backend)
    pulled back to each argument ``which`` names: Remora's reverse mode over the function's
    own engine, its backend taped (:mod:`remora.ir.ad`); ``names``: what a call binds its
    arguments to."""
    arrays = [np.asarray(a) for a in args]
    app = function._application(arrays)
    engine = copy.copy(function._session.engine)
    tape = engine.xp = TapeBackend(function._session.engine.xp)
    duals = {i: tape.input(arrays[i]) for i in which}
    env = {name: duals.get(i, arrays[i]) for i, name in enumerate(names)}
    out = engine.value(app, env)
    cts = pullback(tape, out, tape.inner.asarray(np.asarray(ct)))
    return [cts[duals[i].node] if duals[i].node in cts else zeros_like(tape.inner, arrays[i]) for i in which]

