"""Select: an ``if`` over a frame whose branches cannot fail and do not recurse is a ``where``.

**Law.**  Over a frame of flags ``c``, ``(if c t e)`` gives each cell the value of the branch it
chooses (contract §6).  When neither branch can fail (it makes no run-time check), reads no data
to decide anything (no guard), has no effect, and does not loop or recurse, evaluating a branch
for the cells that do not choose it is unobservable — so the ``if`` is
``where(c, t', e')`` with ``t'`` and ``e'`` the branches evaluated over the *whole* frame: the
same atoms, dtype and shape.  No rounding changes (each cell's branch computes as it would alone).

**Cheaper?**  Partitioning (the site: ``nonzero`` of the flags, a gather of everything the
branches read for each part, a ``scatter`` of the results) costs a few passes over the frame
plus per-call overhead; both branches over the whole frame cost their operations on every
cell.  For branches of a few elementwise operations (Mandelbrot's step under ``if``, Life's
rule, a clamp) the ``where`` wins at every size, so the law is applied when both branches
together make at most :data:`MAX_OPERATIONS` operations, none of them a contraction, a sort
or a selection (work that grows faster than the frame, or whose size follows data).

**Where it is decided.**  While a plan is traced (plans/trace.py, ``TracingBackend.if_select``):
the branches are evaluated over the whole frame under the ``if``'s flags (the masked form of
:mod:`remora.dynamics.masks`) into the recording, and :func:`holds` reads what they recorded.
If the law does not hold, what they recorded is taken back and the ``if`` is a site
(plans/control.py).  Nesting is followed three ``if`` s deep; a loop or a ``while``/``if`` site
inside a branch stops it at once (a recursive function's branches would nest forever).
"""

from __future__ import annotations

from ..core import Eqn

#: the most operations both branches together may make for the ``if`` to be a ``where``
MAX_OPERATIONS = 64
#: how many ``if`` s deep the branches are followed (a recursion stops there)
MAX_DEPTH = 3
#: operations that make a branch too costly to run on cells that do not choose it, or whose
#: result's size follows data
COSTLY = {"matmul", "einsum", "vecdot", "argsort", "unique", "nonzero", "select_items", "repeat", "scatter",
          "segment_reduce", "searchsorted", "insert_items", "resize"}


def holds(steps: list[Eqn]) -> bool:
    """Whether the branches that recorded ``steps`` (both, over the whole frame) satisfy the law."""
    if len(steps) > MAX_OPERATIONS:
        return False
    return all(step.kind == "call" and not step.shape_guard and step.op not in COSTLY for step in steps)
