"""How a ``remora.function`` call runs its checked application: traced into a plan, or
evaluated dynamically; and the names its arguments are bound to."""

from __future__ import annotations

from ..plans import record
from .session import EVALUATION_RECURSION_LIMIT, deep_recursion


def _traced(engine, app, env: dict):
    """(value, plan) of the application ``app`` (see :mod:`remora.plans`)."""
    with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
        return record(engine, lambda tracing, symbols: tracing.value(app, symbols), env)


def _dynamic(engine, app, env: dict):
    """The application ``app`` evaluated by the dynamic engine (what cannot be planned)."""
    with deep_recursion(limit=EVALUATION_RECURSION_LIMIT):
        return engine.value(app, env)


def _argument_names(count: int) -> list[str]:
    """The names a call's arguments are bound to (``%`` keeps them apart from any Remora name)."""
    return [f"%argument{i + 1}" for i in range(count)]


#: the names of a call's arguments, in order (``zip`` takes as many as there are arguments)
_ARGUMENTS = tuple(_argument_names(256))
