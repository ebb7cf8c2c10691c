"""Name resolution for the editor and the notebook (remora/interfaces/scopes.py): which binder
each name refers to, lexically, as the checker sees it (D32) — and which names are free."""

from __future__ import annotations

import dataclasses

from remora.front import syntax as S
from remora.interfaces.session import Session
from remora.interfaces import scopes as sc


def _resolve(text: str) -> sc.Scopes:
    return sc.resolve(Session().forms(text, "<test>"))


def test_free_terms_leave_out_every_local_and_earlier_definition():
    s = _resolve("(define k 2)\n(let ((a (+ x k))) ((λ ((b [Int])) (* a b y)) a))\n"
                 "(unbox (n v (iota/v m)) (length v))\n(+ later 1)\n(define later 3)\n")
    assert s.free_terms() == {"+", "*", "x", "y", "iota/v", "m", "length", "later"}


def test_uses_resolve_to_their_binders():
    text = "(define id (Iλ ((n Dim)) (Tλ ((t Atom)) (λ ((xs (Arr t (Shp n)))) xs))))\n(id 1)\n"
    s = _resolve(text)
    by_name = {(u.name, u.span.line, u.span.col): u.binding for u in s.uses}
    assert by_name[("n", 1, 61)].kind == sc.INDEX_VARIABLE and by_name[("n", 1, 61)].span.col == 18
    assert by_name[("t", 1, 54)].kind == sc.TYPE_VARIABLE and by_name[("t", 1, 54)].sort == "Atom"
    assert by_name[("xs", 1, 67)].kind == sc.PARAMETER and by_name[("xs", 1, 67)].span.col == 46
    assert by_name[("id", 2, 2)].kind == sc.DEFINE and by_name[("id", 2, 2)].span.col == 9


def test_a_definition_is_not_in_scope_in_its_own_body():
    s = _resolve("(define f 1)\n(define f (+ f 1))\n(f)\n")
    uses = [u for u in s.uses if u.name == "f"]
    assert [u.binding.span.line for u in uses] == [1, 2]  # the body's f is the first definition


def test_a_declared_definition_is_in_scope_in_its_own_body():
    s = _resolve("(define (f (x [Int])) : [Int] (if (= x 0) 0 (f (- x 1))))\n(f 3)\n")
    uses = [u for u in s.uses if u.name == "f"]
    assert [(u.span.line, u.binding.span.line, u.binding.span.col) for u in uses] == [(1, 1, 10), (2, 1, 10)]


def test_forms_the_resolver_has_no_rule_for_still_have_their_names_found():
    """A syntax extension (a new expression node) does not hide the names inside it."""

    @dataclasses.dataclass(frozen=True, eq=False)
    class Choose:
        cond: object
        then: object
        other: object
        span: object

    first, second = (f.expr for f in Session().forms("(f x)\n(g y)", "<test>"))
    s = sc.resolve([S.ExprForm(Choose(first, second, first, first.span), first.span)])
    assert s.free_terms() == {"f", "x", "g", "y"}


def test_rename_refuses_a_name_that_would_take_uses():
    import pytest

    from remora.errors import RemoraError
    from remora.interfaces.document import Document

    doc = Document("(define (f (x [Int])) (let ((y 1)) (+ x y)))\n(f 2)\n")
    with pytest.raises(RemoraError, match="a `y` bound at line 1 would take some of its uses"):
        doc.rename(1, 13, "y")  # x → y: the let's y would take x's use
    assert [(s.line, s.col) for s in doc.rename(1, 13, "z")] == [(1, 13), (1, 39)]
    assert [(s.line, s.col) for s in doc.rename(2, 2, "g")] == [(1, 10), (2, 2)]
    with pytest.raises(RemoraError, match="`sum` is not defined in this document"):
        Document("(sum [1 2])\n").rename(1, 2, "total2")


def test_skipped_forms_are_still_resolved():
    """A form that uses a failed definition is not checked, but its names are known: renaming
    the definition renames its uses there too."""
    from remora.interfaces.document import Document

    doc = Document("(define bad (+ 1 #t))\n(define other (+ bad 1))\n")
    assert len(doc.errors) == 1
    assert [(s.line, s.col) for s in doc.rename(1, 9, "good")] == [(1, 9), (2, 18)]
