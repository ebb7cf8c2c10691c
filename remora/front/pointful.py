"""The pointful ``for`` (contract §12) as the core form it abbreviates.

``(for ((i n)) e)`` is ``((λ ((i (Arr Int (Shp)))) e) ((i-app iota/s (Shp n))))``: the λ is
applied to the index frame ``0 … n−1``, so rank polymorphism evaluates ``e`` once over that whole
frame (not once per index), and the result's frame is ``(Shp n)``.  Several bindings nest in
order, the first outermost, so the first index is the result's leading axis.

The elaboration is syntax to syntax, so the typechecker, the language server's scopes and every
engine see only core forms: ``for`` can neither mean something a core form does not, nor make an
ill-formed core form well-formed.  ``iota/s`` is named as a primitive atom, not a variable, so a
program's own ``iota/s`` cannot capture it.
"""

from __future__ import annotations

from . import syntax as S
from ..errors import Span


def elaborate(e: S.For) -> S.Expr:
    """The nested β-redexes ``e`` abbreviates, each located at its binding ``(i n)``."""
    body = e.body
    for b in reversed(e.bindings):
        body = _bind(b, body, e.span)
    return body


def _bind(b: S.ForBinding, body: S.Expr, span: Span) -> S.Expr:
    """``((λ ((i (Arr Int (Shp)))) body) ((i-app iota/s (Shp n))))`` for the binding ``(i n)``."""
    scalar_int = S.STArr(S.STBase("Int", b.span), S.IShp((), b.span), b.span)
    lam = S.Lam((S.Param(b.name, scalar_int, b.span),), body, span)
    at = b.range.span
    # the primitive is not the user's text: an empty span (ending before it starts) holds no
    # position, so hovering over the range shows the index frame, not iota/s's documentation
    hidden = Span(at.source, at.line, at.col, at.line, at.col - 1)
    iota = S.ArrayLit((), (S.Prim("iota/s", hidden),), hidden, sugar=True)
    frame = S.App(S.IApp(iota, (S.IShp((b.range,), at),), at), (), at)
    return S.App(S.ArrayLit((), (lam,), span, sugar=True), (frame,), span)


__all__ = ["elaborate"]
