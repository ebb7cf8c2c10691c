"""Positions in the typed tree: the innermost typed node under a cursor, and nodes by span.

The checker's typed tree (:mod:`remora.statics.typed`) carries a span and a type on every node;
an editor's hover is the type of the innermost node containing the cursor.  Inference adds
nodes that share the span of what they wrap (an implicit ``t-app``/``i-app``, a lifting
wrapper): of those, the outermost is the expression as used here — instantiated, lifted —
and the innermost is what was written (a primitive, a variable).
"""

from __future__ import annotations

from typing import Iterator

from ..statics import typed as T
from ..errors import Span


def contains(span: Span, line: int, col: int) -> bool:
    """Whether the position (1-based line and column) lies within ``span`` (its end included,
    so a cursor just after a name still points at it)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def root(form: T.TyForm) -> T.TyNode:
    return form.value if isinstance(form, T.TyDefine) else form.expr


def chain_at(form: T.TyForm, line: int, col: int) -> list[T.TyNode]:
    """The typed nodes containing the position, outermost first."""
    node = root(form)
    if not contains(node.span, line, col):
        return []
    chain = [node]
    while True:
        inner = [c for c in T.children(node) if contains(c.span, line, col)]
        if not inner:
            return chain
        node = min(inner, key=lambda c: _size(c.span))  # (adjacent nodes may share an end)
        chain.append(node)


def _size(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_col - span.col if span.end_line == span.line else span.end_col)


def innermost(form: T.TyForm, line: int, col: int) -> tuple[T.TyNode, T.TyNode] | None:
    """(as used, as written): the outermost and innermost of the nodes that share the span of
    the innermost node under the position; None when the position is outside the form."""
    chain = chain_at(form, line, col)
    if not chain:
        return None
    written = chain[-1]
    used = next(n for n in chain if _same(n.span, written.span))
    return used, written


def _same(a: Span, b: Span) -> bool:
    return (a.line, a.col, a.end_line, a.end_col) == (b.line, b.col, b.end_line, b.end_col)


def walk(node: T.TyNode) -> Iterator[T.TyNode]:
    """Every node of the tree, depth first."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(T.children(n)))


def node_with_span(form: T.TyForm, span: Span, cls: type) -> T.TyNode | None:
    """The outermost node of class ``cls`` written at ``span`` (a λ, a let …)."""
    for n in walk(root(form)):
        if isinstance(n, cls) and _same(n.span, span):
            return n
    return None


def referenced_keys(form: T.TyForm) -> set[str]:
    """The keys of the globals a checked form refers to (what its value may hold on to)."""
    return {n.key for n in walk(root(form)) if isinstance(n, T.TyRef) and n.key is not None}
