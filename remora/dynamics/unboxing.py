"""``unbox`` in the whole-frame engine: an explicit, ordered list of strategies.

The meaning is the reference engine's — the body once per box, with that box's index
components and contents bound — but boxes are opened a whole frame at a time.  Each strategy
either evaluates the unbox or *declines* (returns None) after checking the condition it
needs; the first that accepts gives the value:

1. :func:`uniform_indices` — every box has the same index components: one ordinary batch
   (not tried for a padded frame of boxes, whose lengths are not known while tracing);
2. :func:`flat_frame_of_boxes` — a flat frame of boxes (a :class:`BoxFrame`, as ``filter``
   and ``iota/v`` make them) whose lengths differ: the body once over its buffer (ragged);
3. :func:`ragged_boxes` — boxes whose leading axes differ: laid out flat, the body once (ragged);
4. :func:`grouped` — the body once per group of boxes with equal index components (never declines).

A ragged pass declines when its body uses something it does not cover; any other exception
is a real error and propagates.
"""

from __future__ import annotations

import math
from functools import cached_property

from ..backends import host
from ..backends.base import OBJECT
from . import masks, ragged
from .batched import Val, align, extent, joint, plain_val, spread
from .layouts import BoxFrame, NeedGrouping, Ragged
from .rebatch import restrict_env
from ..limits import atom_bytes
from .runtime import check_shape, rep_value


class Unboxing:
    """One unbox under way: its node and environments, the boxes, and what follows from them."""

    def __init__(self, engine, e, env: dict, ienv: dict, boxed: Val, body_shape: tuple):
        self.engine, self.xp = engine, engine.xp
        self.e, self.env, self.ienv = e, env, ienv
        self.boxed, self.body_shape = boxed, body_shape
        #: the values the body uses from outside (they may vary over the batch too)
        self.seen = [env[x] for x in e.free if x in env]
        #: the body runs over the boxes' frame, below every batch axis it (or a box) varies over
        self.m = max([boxed.k] + [v.k for v in self.seen])
        self.frame = boxed.arr.shape[boxed.k :]
        self.rep = rep_value(e.rep, ienv)
        #: whether a ragged pass was tried (and declined): a second one would decline the same way
        self.tried_ragged = False

    @cached_property
    def in_place(self) -> bool:
        """A flat frame of boxes can be used as it is: nothing the body sees varies along batch
        axes the boxes do not have."""
        boxed, m = self.boxed, self.m
        return (type(boxed.arr) is BoxFrame and m == boxed.k
                and extent(self.seen, m) in ((1,) * m, boxed.arr.shape[:m]))

    @cached_property
    def boxes(self):
        """The boxes as an object array lined up with the frame, batch axes they do not vary over cut to 1."""
        boxed, m = plain_val(self.boxed), self.m
        boxes = align(self.xp, boxed, m, len(self.frame), len(self.frame))
        return self.xp.compact(boxes) if m else boxes

    @cached_property
    def tf(self) -> tuple:
        """The frame the body runs over: the batch axes where something varies, then the boxes' frame."""
        if self.in_place:
            return self.boxed.arr.shape
        return joint(self.boxes.shape[: self.m], extent(self.seen, self.m)) + self.frame

    def result(self, out) -> Val:
        return Val(self.xp.reshape(out, self.tf + self.body_shape), self.m)


def unbox(engine, e, env: dict, ienv: dict, batch: tuple) -> Val:
    boxed = engine.ev(e.boxed, env, ienv, batch)
    if type(boxed.arr) is Ragged:
        raise NeedGrouping  # (a ragged frame of boxes: its boxes have no one frame)
    body_shape = engine.flat_shape(e, "body_shape", ienv)
    check_shape(boxed.arr.shape[boxed.k :] + body_shape, atom_bytes(rep_value(e.rep, ienv)), "this unbox", e.span, engine.run)
    u = Unboxing(engine, e, env, ienv, boxed, body_shape)
    if math.prod(u.frame) == 0:  # no boxes: the same empty value in every batch cell
        return Val(engine.xp.empty((1,) * u.m + u.frame + body_shape, u.rep), u.m)
    if math.prod(u.tf) == 0:
        return Val(engine.xp.empty(u.tf + body_shape, u.rep), u.m)
    for strategy in STRATEGIES:
        if engine._running.mask is None:
            out = strategy(u)
        else:  # (boxes regrouped or laid out flat: the mask keeps only "some cell is live")
            out = masks.narrowed_call(engine, u.m if strategy is uniform_indices else 0, strategy, u)
        if out is not None:
            return out
    raise AssertionError("the grouped strategy never declines")


def uniform_indices(u: Unboxing) -> Val | None:
    """Every box has the same index components: the body once, over all of their contents."""
    xp, arr = u.xp, u.boxed.arr
    if u.in_place:  # a flat frame of boxes: one length for all is an ordinary batch
        if arr.lanes is not None:
            return None  # (padded while tracing: the lengths are not known yet; the ragged pass)
        lengths = arr.lengths
        if not xp.all(lengths == lengths[0]):
            return None
        k = int(lengths[0])
        contents = xp.reshape(arr.data, u.tf + (k,) + arr.data.shape[1:])
        return Val(u.engine.unbox_body(u.e, u.env, u.ienv, (k,), contents, u.tf, u.body_shape), u.m)
    own = host.atoms(u.boxes)
    first = own[0].indices
    if any(b.indices != first for b in own):
        return None
    return Val(u.engine.unbox_group(u.e, u.env, u.ienv, first, u.boxes, u.tf, u.body_shape), u.m)


def flat_frame_of_boxes(u: Unboxing) -> Val | None:
    """A flat frame of boxes of different lengths, used in place: the body once over its buffer."""
    if not u.in_place:
        return None
    u.tried_ragged = True
    out = ragged.unbox(u.engine, u.e, u.env, u.ienv, u.boxed.arr, u.tf, u.body_shape)
    return None if out is None else u.result(out)


def ragged_boxes(u: Unboxing) -> Val | None:
    """Boxes whose leading axes differ: their contents laid out flat, the body once over all."""
    if u.tried_ragged:
        return None
    flat = host.atoms(spread(u.xp, u.boxes, u.tf))
    out = ragged.unbox(u.engine, u.e, u.env, u.ienv, flat, u.tf, u.body_shape)
    return None if out is None else u.result(out)


def grouped(u: Unboxing) -> Val:
    """The body once per group of boxes with equal index components, the results scattered back."""
    xp, engine, e = u.xp, u.engine, u.e
    flat = host.atoms(spread(xp, u.boxes, u.tf))
    out = None
    for indices, _, sel in host.groups(flat, lambda box: box.indices):
        group_env = restrict_env(xp, u.env, e.free, u.tf, sel)
        part = engine.unbox_group(e, group_env, u.ienv, indices, flat[sel], (len(sel),), u.body_shape)
        if out is None:
            out = xp.empty((flat.size,) + u.body_shape, xp.rep(part) if u.rep == OBJECT else u.rep)
        out = xp.scatter(out, sel, part)
    return u.result(out)


#: The strategies, in the order they are tried.
STRATEGIES = (uniform_indices, flat_frame_of_boxes, ragged_boxes, grouped)
