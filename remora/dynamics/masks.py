"""Masked control flow, for a backend that is tracing an evaluation for compilation (spec D48).

Eagerly, ``if`` over a frame splits the frame by its flags and ``while`` keeps only its running
cells (:mod:`.control`, :mod:`remora.primitives.control`): shapes then depend on data, which a
compiled function cannot have.  While tracing, both run over the *whole* frame instead: ``if``
computes both branches and selects by the flags, ``while`` steps every cell and keeps the new
state only where the cell is still running.  The meaning stays contract §6's — a cell that does
not take a branch, or has stopped, never changes the result — and so must the errors: a check
made for a lane that is not taken must not fail.  So the engine keeps a *mask* while it
evaluates such a part: a Bool array over the leading axes of the current batch (an axis may
have length 1 where the flags do not vary), true where the cell is live.  A run-time check
(:meth:`FrameContext.require`) is excused where the mask is false.

Soundness rests on one invariant: the mask's axes are the current batch's leading axes.
Entering an application narrows the mask to the batch axes the application keeps (its ``m``);
wherever the cells are regrouped (a frame of different functions, boxes grouped by shape, the
ragged pass) it is narrowed to no axes at all — "some cell is live" — which can only excuse
less.  A check excused too little is never wrong: a failed check re-runs the evaluation eagerly,
which raises the error only if it is real.
"""

from __future__ import annotations

from contextlib import contextmanager

#: How many masked ``if`` s may be nested while tracing: beyond, the conditional is recursion
#: (both branches of a recursive function's base case would be traced forever) and the
#: evaluation runs eagerly instead.
MAX_MASKED_DEPTH = 32


def narrow(xp, mask, axes: int):
    """``mask`` over its first ``axes`` axes only: live where some cell below is live."""
    if mask.ndim <= axes:
        return mask
    flat = xp.reshape(mask, mask.shape[:axes] + (-1,))
    return xp.reduce("logical_or", flat, axes)


def narrowed_call(engine, axes: int, fn, *args):
    """``fn(*args)`` with the engine's mask narrowed to ``axes`` batch axes (restored after)."""
    running = engine._running
    outer = running.mask
    running.mask = narrow(engine.xp, outer, axes)
    try:
        return fn(*args)
    finally:
        running.mask = outer


def _with_axes(xp, x, n: int):
    return xp.reshape(x, x.shape + (1,) * (n - x.ndim)) if x.ndim < n else x


@contextmanager
def masked(engine, flags):
    """Evaluate under ``flags`` (a Bool array over the current batch's leading axes) as well as
    the mask already in force."""
    running = engine._running
    outer = running.mask
    if outer is None:
        running.mask = flags
    else:
        n = max(outer.ndim, flags.ndim)
        running.mask = engine.xp.logical_and(_with_axes(engine.xp, outer, n), _with_axes(engine.xp, flags, n))
    try:
        yield
    finally:
        running.mask = outer


def excuse(xp, ok, mask):
    """The check ``ok`` (its leading axes the batch's) holding wherever ``mask`` is false."""
    if xp.known(ok) and xp.all(ok):
        return ok  # (known to hold already, as most checks on constants are: nothing to compile)
    if ok.ndim < mask.ndim:  # (not lined up with the batch: only "no cell is live" excuses)
        mask = narrow(xp, mask, 0)
    live = _with_axes(xp, mask, ok.ndim)
    return xp.logical_or(ok, xp.logical_not(live))
