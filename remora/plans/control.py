"""``while`` and ``if`` over a frame in a plan: the data-dependent part sizes, bucketed.

Over a frame, ``while`` applies its condition and step to the cells still running, and ``if``
each branch to the cells that choose it: how many cells that is depends on the data, round by
round.  Traced straight, every round would be guarded by its count and a plan would replay only
the very data it was made for.  Instead (decisions.md D50) each sub-computation — ``while``'s
condition and step, each branch of ``if`` — is a *site* traced once per **bucket** of part size:
a part of ``k`` cells (of ``n``) is padded to :func:`bucket` ``(k, n)`` cells — ``k`` up to 4,
then one of 4 sizes per octave (5 6 7 8 10 12 14 16 20 …), at most ``n`` — by repeating its
first cell.  A repeated cell is a real cell that runs anyway, so padding never runs a stopped
cell or an untaken branch, and an error it raises is raised first by the cell it copies (which
comes before the copies).  Only the first ``k`` results are kept.  So a frame of ``n`` cells
meets at most ~4·log₂ n sizes, each traced once, whatever the data.

The plan holds the site as one call (``while_7(free…, init)``); the site keeps a compiled
function per (sub-computation, bucket) and, for a bucket it has not met yet, traces it *when
the plan is replayed*: the trace-time engine runs again with the traced arrays it captured
(``syms``) set to the replay's values, so the new bucket is traced on the real data.  A
bucket's recording that still depends on data (a guard: a scalar ``if`` inside a step) gets up
to :data:`VARIANTS` variants, like a plan; past that the replay misses.  The round loop itself
(count the running cells, write out the stopped ones, compact and pad) is a few backend calls
per round in :func:`while_rounds`, not a trace.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .codegen import Source, emit_steps, literal
from ..errors import RemoraError
from ..ir.passes import rewrite
from ..ir.core import Eqn, Miss, Recording, Sym, Untraceable, concrete, defined as _defined, free_vars as _free_syms
from ..ir.core import is_object as _is_object
from .trace import TracingBackend

#: compiled variants kept per sub-computation and bucket (each for one outcome of its guards)
VARIANTS = 4

#: how many parts have been traced (tests count them: a bounded number per site, whatever the data)
STATS = {"traced": 0}

#: tracing at replay runs the trace-time engine with its traced arrays' values swapped: one at a time
_TRACING = threading.RLock()


class GiveUp(Miss):
    """At replay: a site cannot go on with this plan (a part it cannot trace now): the enclosing
    plan misses at once, without tracing other variants of the parts around it."""


class Decline(Exception):
    """The site cannot be planned this way (its parts are frames of functions or boxes): the
    caller runs its own dynamic code instead."""


def bucket(k: int, n: int) -> int:
    """The size a part of ``k`` cells out of ``n`` is padded to (see the module docstring)."""
    if k <= 4:
        return k
    q = 1 << (k.bit_length() - 3)  # k in [4q, 8q): sizes 4q 5q 6q 7q 8q
    return min(-(-k // q) * q, n)


class Site:
    """One ``while`` or ``if`` of a plan: its sub-computations ``fns`` (Python functions of
    traced arrays, driving the trace-time engine), compiled per bucket and replayed."""

    def __init__(self, tracer: TracingBackend, engine, fns: tuple, label: str, kernel: Callable):
        self.tracer = tracer
        self.engine = engine
        self.fns = fns
        self.label = label
        self.kernel = kernel  # kernel(site, F, *inputs): the value, calling ``site.call``
        self.syms: dict[str, Sym] = {}  # traced arrays of the enclosing plan the fns read
        self.names: tuple = ()
        self.table: dict[tuple, list] = {}
        self.app_stack = tuple(tracer.app_stack)
        self.depth = engine._running.depth

    # --- running -------------------------------------------------------------------------------

    def replay(self, free: tuple, *inputs):
        """What the plan calls: the site's value for these inputs (``free``: the values of
        :attr:`names` at replay)."""
        try:
            return self.kernel(self, dict(zip(self.names, free)), *inputs)
        except RecursionError:  # (recursion under `if` deeper than Python's limit at replay)
            raise GiveUp from None

    def call(self, which: int, F: dict | None, args: tuple):
        """``fns[which]`` on ``args`` (concrete arrays, the first one's length the bucket): a
        compiled variant that fits, or a new trace.  ``F`` is None while the plan is traced."""
        key = (which, args[0].shape[0])  # (the other arguments' shapes follow from the bucket)
        variants = self.table.get(key)
        if variants is None:
            variants = self.table.setdefault(key, [])
        free = F if F is not None else {name: s.value for name, s in self.syms.items()}
        for fn in variants:
            try:
                return fn(free, *args)
            except GiveUp:
                raise
            except Miss:  # (a guard of this variant: another outcome of a data-dependent decision)
                continue
        if len(variants) >= VARIANTS:
            if F is None:
                raise Untraceable(f"a `{self.label}` decides differently from one part to the next")
            raise GiveUp
        fn, value = self._trace(which, F, args)
        variants.append(fn)
        return value

    # --- tracing a bucket -------------------------------------------------------------------------

    def _trace(self, which: int, F: dict | None, args: tuple):
        with _TRACING:
            STATS["traced"] += 1
            swapped = []
            if F is not None:  # at replay: the captured traced arrays hold the replay's values
                for name, value in F.items():
                    sym = self.syms[name]
                    swapped.append((sym, sym.value))
                    sym.value = value
            tracer, running = self.tracer, self.engine._running
            saved = (tracer.rec, tracer.held, tracer.app_stack, running.depth, tracer.owners)
            sub = Recording(tracer)
            tracer.rec, tracer.app_stack, running.depth = sub, list(self.app_stack), self.depth
            tracer.owners = dict(tracer.owners)  # (what this part counts is let go with it)
            try:
                params = [tracer.fresh(a) for a in args]
                try:
                    result = self.fns[which](*params)
                except (Untraceable, RecursionError, Miss) as why:
                    if F is not None:
                        raise GiveUp from why  # (at replay: the enclosing plan misses and is traced again)
                    if isinstance(why, Miss):
                        raise Untraceable(f"a `{self.label}` part decides differently from its trace") from None
                    raise
                except RemoraError:  # (a run-time check failed while tracing this bucket)
                    if F is not None and not self._reads_known(sub, params, F):
                        raise GiveUp from None  # (computed with values not the replay's: not to be trusted)
                    raise
                if _is_object(result) or (type(result) is Sym and _is_object(result.value)):
                    raise Decline
                free: dict[str, Sym] = {}
                _free_syms(sub.steps, {p.name for p in params}, free)
                if type(result) is Sym and result.name not in _defined(sub.steps) | {p.name for p in params}:
                    free.setdefault(result.name, result)
                if F is not None and not set(free) <= set(F):
                    raise GiveUp
                fn, same = _compile(sub, params, free, result, tracer.inner)
                value = concrete(result) if same else fn(F if F is not None else {k: v.value for k, v in free.items()},
                                                         *args)
            finally:
                tracer.rec, tracer.held, tracer.app_stack, running.depth, tracer.owners = saved
                for sym, value_ in swapped:
                    sym.value = value_
            self.syms.update(free)
            return fn, value

    def _reads_known(self, sub: Recording, params: list, F: dict) -> bool:
        free: dict[str, Sym] = {}
        _free_syms(sub.steps, {p.name for p in params}, free)
        return set(free) <= set(F)

    def record(self, value, inputs: tuple) -> Sym:
        """The site as one step of the enclosing recording, its value ``value``."""
        tracer = self.tracer
        self.names = tuple(self.syms)
        out = tracer.fresh(value)
        tracer.rec.steps.append(Eqn("site", self.label, (tuple(self.syms.values()),) + inputs, out, extra=self))
        tracer._hold(value)
        return out


def _compile(sub: Recording, params: list, free: dict, result, xp) -> tuple[Callable, bool]:
    """A bucket's recording as ``bucket(F, *params)``, its free traced arrays read from ``F``.
    Simplified as a plan is (the IR passes): it runs once per round, so each identity ``reshape`` the
    engine made costs a call per round, and its temporaries may take later results (``out=``)."""
    src = Source(xp)
    src.emit(0, f"def bucket(F, {', '.join(p.name for p in params)}):")
    steps, result, same = rewrite(sub.steps, result, xp)
    used: dict[str, Sym] = {}
    _free_syms(steps, {p.name for p in params}, used)
    for name in free:
        if name in used or (type(result) is Sym and result.name == name):
            src.emit(1, f"{name} = F[{name!r}]")
    scope = set(free) | {p.name for p in params}
    emit_steps(steps, src, 1, scope, keep=result)
    src.emit(1, f"return xp.asarray({literal(result, src, scope)})")
    namespace = dict(src.ns)
    exec(compile(src.text(), "<remora plan bucket>", "exec"), namespace)
    return namespace["bucket"], same


# ---------------------------------------------------------------------------------------------
# the kernels: the same code at trace time (F None) and at replay


def while_rounds(site: Site, F: dict | None, init):
    """``init``'s cells (items) iterated, each until its condition (``fns[0]``) fails, by the
    step (``fns[1]``) — both applied to the running cells only, padded to their bucket.

    A round in which some cells stop gathers once: one index (the running cells, their padding,
    then the stopped cells) takes the positions and the states; the first part runs on, the rest
    is written out with one ``scatter``.  What does not change from round to round (the backend's
    functions, the padding's source) is looked up once per ``while``, not per round."""
    xp = site.tracer.inner
    n = init.shape[0]
    positions, current, m = xp.arange(n), init, n
    out = xp.empty(init.shape, xp.rep(init))
    nonzero, take, scatter, concat = xp.nonzero, xp.take, xp.scatter, xp.concat
    not_ = zeros = None
    while True:
        flags = site.call(0, F, (positions, current))
        if m < flags.shape[0]:
            flags = flags[:m]  # (the padding's flags are its first cell's)
        running = nonzero(flags)[0]
        k = running.shape[0]
        if k < m:
            if not_ is None:
                not_ = xp.specialise("logical_not", (flags,))
            stopped = nonzero(not_(flags))[0]
            if k == 0:
                return scatter(out, take(positions, stopped, 0), _take(xp, current, stopped))
            size = bucket(k, n)
            if size == k:
                order = concat([running, stopped])
            else:  # padded with copies of the first running cell: a gather by a slice of zeros
                if zeros is None or zeros.shape[0] < size - k:
                    zeros = xp.full((1 << (size - k).bit_length(),), 0, "Int")
                order = concat([running, take(running, zeros[: size - k], 0), stopped])
            positions, current = take(positions, order, 0), _take(xp, current, order)
            out = scatter(out, positions[size:], current[size:])
            positions, current, m = positions[:size], current[:size], k
        current = site.call(1, F, (positions, current))


def if_parts(site: Site, F: dict | None, flags):
    """Each branch (``fns[0]`` where ``flags``, ``fns[1]`` elsewhere) on its own cells, padded
    to their bucket; the results in frame order."""
    xp = site.tracer.inner
    n = flags.shape[0]
    out = None
    for which, mask in ((0, flags), (1, xp.elementwise("logical_not")(flags))):
        chosen = xp.nonzero(mask)[0]
        k = chosen.shape[0]
        if k == 0:
            continue  # no cell chooses this branch: nothing of it runs
        part = site.call(which, F, (_pad(xp, chosen, bucket(k, n)),))
        if k == n:
            return part
        if out is None:
            out = xp.empty((n,) + tuple(part.shape[1:]), xp.rep(part))
        out = xp.scatter(out, chosen, part[:k])
    return out


def _take(xp, x, items):
    """``x``'s items at ``items``, keeping ``x``'s layout: a state the step builds as a frame
    (``[n steps]``: its columns stacked, then moved behind the frame axis) stays one column after
    another, so the step reads each column contiguously and the gather moves columns, not rows
    (NumPy's row gather of such a view is an order of magnitude slower)."""
    strides = getattr(x, "strides", None)
    if x.ndim > 1 and strides is not None and strides[0] == x.itemsize and min(strides) == x.itemsize:
        last = x.ndim - 1
        columns = xp.take(xp.permute_dims(x, tuple(range(1, x.ndim)) + (0,)), items, last)
        return xp.permute_dims(columns, (last,) + tuple(range(last)))
    return xp.take(x, items, 0)


def _pad(xp, positions, size: int):
    """``positions`` followed by copies of its first one, ``size`` in all."""
    k = positions.shape[0]
    if size == k:
        return positions
    return xp.concat([positions, xp.full((size - k,), positions[0], "Int")])


# ---------------------------------------------------------------------------------------------
# entry points (TracingBackend.while_cells / if_cells)


def trace_while(tracer: TracingBackend, engine, cond: Callable, step: Callable, init):
    """The traced ``while`` over the cells of ``init``, or None where the caller's own loop must
    run (frames of functions or boxes as the state, a ragged pass under way)."""
    start = concrete(init)
    if _is_object(start) or engine.ragged_depth:
        return None
    tracer.refuse_while_speculating()
    site = Site(tracer, engine, (cond, step), "while_cells", while_rounds)
    try:
        value = while_rounds(site, None, start)
    except Decline:
        return None
    return site.record(value, (init,))


def trace_if(tracer: TracingBackend, engine, flags, branches: tuple):
    """The traced ``if`` over a frame of ``flags``: each of ``branches`` (a function of the
    positions of its cells) on its part; None where the caller's own code must run."""
    if engine.ragged_depth:
        return None
    tracer.refuse_while_speculating()
    site = Site(tracer, engine, branches, "if_cells", if_parts)
    try:
        value = if_parts(site, None, concrete(flags))
    except Decline:
        return None
    return site.record(value, (flags,))


__all__ = ["bucket", "trace_while", "trace_if", "Site", "VARIANTS"]
