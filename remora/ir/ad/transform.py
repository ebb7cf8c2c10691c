"""The transformations: a taped program's pullback (reverse mode), and forward mode from it.

``pullback(tape, out, ct)`` walks the taped equations last first; each equation whose result
received a cotangent hands it to its arguments by the equation's transpose rule
(:data:`.rules.TRANSPOSE`, by the operation's name); cotangents that meet at one variable are
added.  The walk keeps, per variable, only the cotangent not yet handed on; the tape holds the
forward values the rules read (what reverse mode must store, and no more than the forward
program computed: a small constant times the program, spec/derivatives.md).

``vjp_of``/``jvp_of``/``grad_of`` take a *function of one traced array* (``run(xp, x)``: the
caller's evaluation of the Remora function on the backend ``xp`` at ``x``) so that this module
needs nothing of the engines.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ...backends.base import Backend
from .rules import Sparse, dense
from .table import TRANSPOSE, refuse, zeros_like
from .tape import Dual, TapeBackend

Run = Callable[[Backend, Any], Any]


def pullback(tape: TapeBackend, out: Any, ct: Any) -> dict[int, Any]:
    """The cotangents of the taped variables (by their numbers) when ``out`` (a Dual of ``tape``) has
    cotangent ``ct``."""
    xp = tape.inner
    cts: dict[int, Any] = {}
    if type(out) is Dual and out.tape is tape:
        cts[out.node] = ct
    for eqn in reversed(tape.steps):
        got = _dense(xp, cts.pop(eqn.outs.node, None), eqn.outs)
        if got is None:
            continue
        transpose = TRANSPOSE.get(eqn.op)
        if transpose is None:
            refuse(eqn.op)
        args, kw = positional(eqn.op, eqn.args, eqn.kw)
        need = tuple(tape.mine(a) for a in args)
        given = transpose(xp, got, eqn.outs.value, tape.unwrap(args), tape.unwrap(kw), need)
        _hand_on(tape, xp, args, given, cts)
    return {node: _dense(xp, ct, None) for node, ct in cts.items()}


class _Pending:
    """A variable's cotangent while sparse parts are still arriving: its dense part and its
    :class:`~.rules.Sparse` parts."""

    __slots__ = ("whole", "parts")

    def __init__(self, whole, parts: list):
        self.whole, self.parts = whole, parts


def _dense(xp: Backend, ct: Any, var: Any) -> Any:
    if type(ct) is not _Pending:
        return ct
    shape = ct.parts[0].shape
    return dense(xp, shape, xp.rep(ct.parts[0].values), ct.whole, ct.parts)


_SIGNATURES: dict[str, Any] = {}


def positional(op: str, args: tuple, kw: tuple) -> tuple[tuple, tuple]:
    """The equation's arguments in the order :class:`Backend` declares them, defaults filled in,
    so that each rule reads its arguments by position whatever way the engine passed them."""
    if not kw and op in _SIGNATURES:
        return args, kw
    method = getattr(Backend, op, None)
    if method is None or not callable(method):
        return args, kw
    sig = _SIGNATURES.get(op)
    if sig is None:
        sig = _SIGNATURES[op] = inspect.signature(method)
    bound = sig.bind(None, *args, **dict(kw))
    bound.apply_defaults()
    return tuple(bound.arguments.values())[1:], ()


def _hand_on(tape: TapeBackend, xp: Backend, args: tuple, given: list, cts: dict) -> None:
    for arg, ct in zip(args, given):
        if ct is None:
            continue
        if type(arg) is list:
            _hand_on(tape, xp, tuple(arg), ct, cts)
        elif type(arg) is Dual and arg.tape is tape:
            before = cts.get(arg.node)
            if type(ct) is Sparse:
                if type(before) is _Pending:
                    before.parts.append(ct)
                else:
                    cts[arg.node] = _Pending(before, [ct])
                continue
            if ct.shape != arg.shape:  # (a rule's result seen at the variable's shape)
                ct = xp.broadcast_to(ct, arg.shape)
            if type(before) is _Pending:
                before.whole = ct if before.whole is None else xp.add(before.whole, ct)
            else:
                cts[arg.node] = ct if before is None else xp.add(before, ct)


def vjp_of(xp: Backend, run: Run, x: Any, ct: Any) -> tuple[Any, Any]:
    """``run``'s value at ``x`` and the cotangent ``ct`` of it pulled back to ``x``."""
    tape = TapeBackend(xp)
    dx = tape.input(x)
    out = run(tape, dx)
    value = tape.unwrap(out)
    found = pullback(tape, out, ct).get(dx.node)
    return value, (zeros_like(xp, x) if found is None else _like(xp, found, x))


def grad_of(xp: Backend, run: Run, x: Any) -> Any:
    """The gradient at ``x`` of ``run``, whose value is a frame of scalars: each cell's gradient
    (the cotangent 1 at every cell; cells are independent, so each gets its own)."""
    tape = TapeBackend(xp)
    dx = tape.input(x)
    out = run(tape, dx)
    value = tape.unwrap(out)
    ones = xp.full(tuple(value.shape), 1, xp.rep(x))
    found = pullback(tape, out, ones).get(dx.node)
    return zeros_like(xp, x) if found is None else _like(xp, found, x)


def jvp_of(xp: Backend, run: Run, x: Any, dx: Any, out_like: Callable[[Backend], Any]) -> Any:
    """``J·dx``, the derivative of ``run`` at ``x`` in the direction ``dx``: the pullback is
    linear in its cotangent ``u``; taped on an outer tape, its own pullback of ``dx`` is ``J·dx``
    (the transpose of the transpose).  ``out_like(xp)``: zeros of ``run``'s result's shape."""
    outer = TapeBackend(xp)
    u = outer.input(out_like(xp))
    _, pulled = vjp_of(outer, run, x, u)
    found = pullback(outer, pulled, dx).get(u.node)
    return out_like(xp) if found is None else found


def _like(xp: Backend, ct: Any, x: Any) -> Any:
    """The cotangent as an array of ``x``'s type (a Python scalar ``0`` never reaches a user)."""
    if tuple(ct.shape) != tuple(x.shape):
        ct = xp.broadcast_to(ct, tuple(x.shape))
    return ct if xp.rep(ct) == xp.rep(x) else xp.astype(ct, xp.rep(x))
