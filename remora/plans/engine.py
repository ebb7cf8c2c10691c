"""The default engine: every top-level form run from its plan.

:class:`Planned` is the whole-frame engine whose forms go through the plan cache: a form is
traced the first time (its value is the trace's own, computed eagerly as it is recorded), and
replayed whenever it is evaluated again with inputs of the same signature — a loop inside it is
planned once and replayed per item even the first time.  A form the tracer cannot follow (an
effect, boxes whose shapes come from data at the top level, …) runs on
:class:`~remora.dynamics.engine.Frames`, the dynamic path, which this class is.
"""

from __future__ import annotations

from typing import Any

from ..dynamics.engine import Frames
from ..dynamics.layouts import plain
from ..erasure import erased as E
from . import PLANS, record, settle


class Planned(Frames):
    """Forms run from plans (:mod:`remora.plans`); the whole-frame engine is their fallback."""

    def eval_form(self, form: E.EForm):
        with self.xp.quiet():
            value = PLANS.run(form, self.globals, {}, lambda: self._trace(form), lambda: Frames.eval_form(self, form))
        if isinstance(form, E.EDefine):
            self.globals[form.key] = value
            return plain(value)
        return value

    def _trace(self, form: E.EForm) -> tuple[Any, Any]:
        """(value, plan) of ``form``; a definition's value is stored settled — no traced array in it."""
        value, plan = record(self, lambda tracing, env: _form_value(tracing, form), {})
        return value, plan

    def value(self, e: E.EExpr, env: dict | None = None):
        return Frames.value(self, e, env)


def _form_value(tracing: Frames, form: E.EForm):
    """What the form evaluates to (a definition: its value, as the engine stores it, unmaterialised)."""
    if isinstance(form, E.EDefine):
        # Evaluated into the tracing engine's scratch, never into the globals: the caller stores it.
        return tracing.ev(form.value, {}, {}, ()).arr
    return tracing.value(form.expr)


__all__ = ["Planned", "settle"]
