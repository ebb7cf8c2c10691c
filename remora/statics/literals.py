"""Weak number literals (contract §10): what a literal's value is at the type its context chose.

A number literal's atom type is an unknown settled by its context (``Int`` or ``Int32`` for an
integer, ``Float`` or ``Float32`` for a floating-point number: :class:`~.types.LiteralMeta`).
Once its top-level form is checked, each literal is checked against the type it got: an
``Int32`` literal must be in ``Int32``'s range and a ``Float32`` literal must round to a finite
``float32`` — else a type error located at the literal.  Erasure then takes each literal's
value at its type (:func:`value_at`): a ``Float32`` literal is the ``float32`` nearest to the
decimal written.
"""

from __future__ import annotations

from ..atoms import int_range, round_to_float32
from ..errors import RemoraTypeError, Span, span_text
from .types import LiteralMeta, TBase, Type, prune


def check_literals(metas: list[LiteralMeta]) -> None:
    """Refuse a literal its type cannot hold (the types are settled: defaults taken)."""
    for meta in metas:
        t = prune(meta)
        if not isinstance(t, TBase) or t.name not in ("Int32", "Float32"):
            continue
        for node in meta.literals:
            if t.name == "Int32":
                low, high = int_range("Int32")
                if not low <= node.value <= high:
                    raise RemoraTypeError(
                        f"the literal {node.value} is an Int32 here (its context asks for one), but Int32 holds "
                        f"{low} … {high}; compute it as an Int, or convert a value in range with int->int32",
                        node.span,
                    )
            elif value_at(node.value, node.span, t) is None:
                raise RemoraTypeError(
                    f"the literal {_written(node.value, node.span)} is a Float32 here (its context asks for one), "
                    "but it is too large for one (at most about 3.4028235e+38); compute it as a Float",
                    node.span,
                )


def value_at(value: int | float | bool, span: Span | None, t: Type) -> int | float | bool | None:
    """The value of a literal written ``value`` (at ``span``) at its atom type ``t``: a ``Float32``
    literal is the ``float32`` nearest to the decimal written (None: too large for one); any
    other literal is its value."""
    t = prune(t)
    if not (isinstance(t, TBase) and t.name == "Float32") or isinstance(value, bool):
        return value
    return round_to_float32(_written(value, span))


def _written(value: float, span: Span | None) -> str:
    """The literal as its source writes it (exactly: ``0.1`` is not the Float nearest to it),
    or the Float's own shortest text when the span shows something else (a literal the sugar
    made)."""
    text = span_text(span, 400) if span is not None else ""
    try:
        if float(text) == value:
            return text
    except ValueError:  # (the span shows no number)
        pass
    return repr(float(value))
