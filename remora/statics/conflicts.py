"""Why no instantiation fits: the binding (or the frames) on which the arguments disagree.

Used by :meth:`remora.statics.infer.Application._no_fit` once every argument fits its parameter on its
own. Arguments are added in order until one, ``j``, cannot join those before it; then the fewest
earlier arguments that already exclude it are found, and what separates them is named:

- a variable whose value they force differs from every value ``j`` gives — "argument 1 forces
  s = (Shp 2), but argument 3 gives s = (Shp 3)";
- otherwise, per choice of argument frames, the variable they disagree on, or that the frames
  where they agree are not prefix-compatible.

That names what to fix, where "these disagree" left the user to find it.
"""

from __future__ import annotations

import itertools
from ..records import record
from typing import TYPE_CHECKING, Iterator, Optional

from ..errors import RemoraTypeError
from .conversions import on_one_of_them
from .indices import Dim, Shape, Var, show_index
from .types import TArr, Type, prune, show_type
from .unknowns import (
    Sol, frames_fit, index_unknowns, least_value, settle_pending, u_shapes, u_types, walk, walk_index, walk_shape,
)

if TYPE_CHECKING:  # (the explanation is asked for by an Application, which imports this module)
    from .infer import Application


@record
class Fit:
    """One way some arguments fit at once: the solution and each argument's frame."""

    sol: Sol
    frames: list[Shape]
    ordered: bool  # whether the frames (with the function array's) are prefix-ordered


def explain_conflict(app: Application) -> Optional[RemoraTypeError]:
    """The error naming the conflict, or None if none of the explanations applies."""
    for j in range(1, len(app.args)):
        if _fits(app, list(range(j + 1))):
            continue
        for size in range(1, j + 1):
            for subset in itertools.combinations(range(j), size):
                if not _fits(app, [*subset, j]):
                    return _conflict(app, list(subset), j)
        return None
    return None


def _fits(app: Application, indices: list[int]) -> list[Fit]:
    return [f for f in _combine(app, indices, Sol(), []) if f.ordered]


def _combine(app: Application, indices: list[int], sol: Sol, frames: list) -> Iterator[Fit]:
    """Each way the arguments ``indices`` unify at once, smallest frames first for each."""
    if not indices:
        for s in settle_pending(sol):
            walked = [walk_shape(f, s) for f in frames]
            yield Fit(s, walked, frames_fit([walk_shape(app.callee.shape, s)] + walked))
        return
    for s, frame, _ in app.match_arg(indices[0], sol, 10**6):
        yield from _combine(app, indices[1:], s, frames + [frame])


def _conflict(app: Application, subset: list[int], j: int) -> Optional[RemoraTypeError]:
    forcing, given = _fits(app, subset), [Fit(s, [f], True) for s, f, _ in app.match_arg(j, Sol(), 10**6)]
    head = f"no instantiation of {app.name} fits all its arguments at once: "
    takes = " (" + app.name + " takes " + ", ".join(
        f"argument {i + 1} as {app.show(app.fun.params[i])}" for i in [*subset, j]
    ) + ")"
    for v, u in _variables(app):
        if all(not _unifiable(_value(u, a.sol), _value(u, b.sol)) for a in forcing for b in given):
            forced = list(dict.fromkeys(_shown(u, a.sol) for a in forcing))
            verb = ("force" if len(subset) > 1 else "forces") if len(forced) == 1 else "gives"
            other = _shown(u, given[0].sol)
            return RemoraTypeError(
                head + f"{_who(subset)} {verb} {v.name} = {forced[0]}, but argument {j + 1} gives "
                f"{v.name} = {other}" + takes + on_one_of_them(forced[0], other),
                app.args[j].span,
            )
    # No one variable explains it: at the smallest frames where the values clash, and at the
    # smallest where they agree (the frames must then be the problem), say what goes wrong.
    unordered = {_frames_key(f.frames) for f in _combine(app, [*subset, j], Sol(), []) if not f.ordered}
    clash_reason = frame_reason = None
    for a in forcing:
        for b in given:
            frames = a.frames + b.frames
            where = "over frames " + " and ".join(map(str, frames))
            clash = _first_clash(app, a.sol, b.sol)
            if _frames_key(frames) in unordered:
                frame_reason = frame_reason or f"{where} they agree, but those frames are not prefix-compatible"
            elif clash is not None and clash_reason is None:
                v, x, y = clash
                gives = "give" if len(subset) > 1 else "gives"
                clash_reason = f"{where}, {_who(subset)} {gives} {v.name} = {x} but argument {j + 1} gives {v.name} = {y}"
    reasons = [r for r in (clash_reason, frame_reason) if r is not None]
    if not reasons:
        return None
    return RemoraTypeError(head + "; ".join(reasons) + takes, app.args[j].span)


def _frames_key(frames: list[Shape]) -> tuple[str, ...]:
    return tuple(map(str, frames))


def _first_clash(app: Application, a: Sol, b: Sol) -> Optional[tuple[Var, str, str]]:
    for v, u in _variables(app):
        if not _unifiable(_value(u, a), _value(u, b)):
            return v, _shown(u, a), _shown(u, b)
    return None


def _variables(app: Application) -> Iterator[tuple[Var, object]]:
    """The function's own quantified variables first, then those of polymorphic arguments."""
    for level in app.levels + [lv for lvs in app.arg_levels for lv in lvs]:
        yield from zip(level.vars, level.unknowns)


def _value(u, sol: Sol):
    if isinstance(u, (Dim, Shape)):
        return walk_index(u, sol)
    return walk(u, sol)


def _unifiable(a, b) -> bool:
    if isinstance(a, Dim) and isinstance(b, Dim):
        a, b = Shape((a,)), Shape((b,))
    if isinstance(a, Shape) and isinstance(b, Shape):
        return next(u_shapes(a, b, Sol()), None) is not None
    if isinstance(a, Type) and isinstance(b, Type):
        return next(u_types(a, b, Sol()), None) is not None
    return True


def _shown(u, sol: Sol) -> str:
    """The value of ``u`` with the unknown indices still in it at their least — a lifting frame
    empty, as the rule prefers, so ``(++ F (Shp 2))`` reads ``(Shp 2)``."""
    value = _value(u, sol)
    if isinstance(value, (Dim, Shape)):
        metas = index_unknowns(Shape((value,)) if isinstance(value, Dim) else value)
    elif isinstance(prune(value), TArr):
        metas = index_unknowns(walk_shape(prune(value).shape, sol))
    else:
        metas = []
    for m in metas:
        sol = sol.with_index(m, least_value(m, False))
    value = _value(u, sol)
    if isinstance(value, (Dim, Shape)):
        return show_index(value)
    t = prune(value)
    if isinstance(t, TArr):
        return show_type(TArr(t.atom, walk_shape(t.shape, sol)))
    return show_type(t)


def _who(subset: list[int]) -> str:
    if len(subset) == 1:
        return f"argument {subset[0] + 1}"
    numbers = [str(i + 1) for i in subset]
    return f"arguments {', '.join(numbers[:-1])} and {numbers[-1]}"


