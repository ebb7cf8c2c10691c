"""The typing of the pointful ``for`` (contract §12): its ranges are checked where they are
written, then its elaboration (:func:`remora.front.pointful.elaborate`) is typed as any core
form — so ``for`` has exactly the type its core form has, ``(Arr t (++ (Shp n ...) s))``.

The ranges are checked first, at each binding, because the core form would report a bad
range deep inside an ``i-app`` of ``iota/s`` the user never wrote.
"""

from __future__ import annotations

from typing import Any

from ..errors import RemoraTypeError
from ..front import syntax as S
from ..front.pointful import elaborate
from . import typed as T
from .indices import Dim
from .kinding import sort_index, sort_of
from .types import show_type


def t_for(checker: Any, e: S.For, env: Any) -> T.TyExpr:
    """Each range a ``Dim`` in scope, then the type of the nested β-redexes ``e`` abbreviates."""
    for b in e.bindings:
        _check_range(b, env)
    return checker.synth(elaborate(e), env)


def _check_range(b: S.ForBinding, env: Any) -> None:
    rng = b.range
    if isinstance(rng, S.IName) and env.scope.lookup(rng.name) is None:
        term = env.gamma.lookup(rng.name)
        if term is not None:
            shown = show_type(getattr(term, "type", term))
            raise RemoraTypeError(
                f"the range of `{b.name}` must be a Dim index, but `{rng.name}` is a term of type {shown}: "
                "a for ranges over a size the types know (a natural, or an index variable bound by Iλ, "
                "Pi or unbox); for a length known only at run time, unbox (iota/v n) instead",
                rng.span,
            )
    ix = sort_index(rng, env.scope)
    if not isinstance(ix, Dim):
        raise RemoraTypeError(
            f"the range of `{b.name}` must be a Dim index, but `{_text(rng)}` is a {sort_of(ix)}: "
            "a for binds one index per axis, so write one binding per dimension",
            rng.span,
        )


def _text(node: S.SIndex) -> str:
    from ..errors import span_text

    return span_text(node.span)


__all__ = ["t_for"]
