"""What the checker reuses instead of doing again (issue 13, checker speed), and that reusing it
changes nothing: inference replayed for a problem it has solved (decisions.md D41), ground types
returned as they are by zonk, substitution and walks, each distinct token classified once."""

from __future__ import annotations

import pytest

from remora.errors import RemoraTypeError
from remora.interfaces.session import Session, load_prelude
from remora.statics import infer
from remora.statics.indices import Shape, Var, dim, dim_var
from remora.statics.typed import show_form
from remora.statics.types import INT, AtomMeta, TArr, TFun, TVar, is_ground, subst, zonk
from remora.statics.unknowns import IMeta, Sol, walk, walk_shape


@pytest.fixture
def searches(monkeypatch):
    """How many times inference searched (Application.solve ran) — in the tests' programs."""
    load_prelude()  # (checking the prelude, in a process without its cache, searches too)
    count = [0]
    solve = infer.Application.solve

    def counted(self):
        count[0] += 1
        return solve(self)

    monkeypatch.setattr(infer.Application, "solve", counted)
    return count


def explicit(source: str, session: Session | None = None) -> list[str]:
    session = session or Session()
    return [show_form(session.check_form(f)) for f in session.forms(source, "<test>")]


def test_a_solved_problem_is_replayed_not_searched_again(searches):
    forms = explicit("(define a (append [1 2] [[1 2] [3 4]]))\n(define b (append [5 6] [[7 8] [9 0]]))")
    assert searches[0] == 1
    assert forms == [
        "(define a ((t-app (i-app append 2 2 (Shp)) Int) (array (2) 1 2) (array (2 2) 1 2 3 4)))",
        "(define b ((t-app (i-app append 2 2 (Shp)) Int) (array (2) 5 6) (array (2 2) 7 8 9 0)))",
    ]


def test_replayed_forms_are_exactly_what_searching_makes(searches):
    program = "\n".join(f"(define e{i} (rotate (reverse (iota/w [[1 2] [3 4]])) {i}))" for i in range(3))
    replayed = explicit(program)
    assert searches[0] == 3  # (rotate, reverse and iota/w once each; the next two forms replay all three)
    one_by_one = [explicit(line)[0] for line in program.splitlines()]  # (a new session for each)
    assert replayed == one_by_one
    assert searches[0] == 3 + 3 * 3


def test_problems_with_unknown_atom_types_are_searched_every_time(searches):
    explicit("(define a (reduce + [1 2 3]))\n(define b (reduce + [4 5 6]))")
    assert searches[0] == 2  # (`+` passed as an argument: its atom type is settled by each search)


def test_each_session_starts_afresh(searches):
    explicit("(define a (append [1] [2]))")
    explicit("(define a (append [1] [2]))")
    assert searches[0] == 2


def test_errors_are_not_remembered(searches):
    session = Session()
    explicit("(define split (Iλ ((m Dim) (n Dim)) (λ ((x [Int (+ m n)])) x)))", session)
    for _ in range(2):
        with pytest.raises(RemoraTypeError, match="ambiguous application of `split`"):
            explicit("(split [1 2 3])", session)
    assert searches[0] == 2


# --- ground types are returned as they are -------------------------------------------------------


def test_ground_types_are_not_copied_by_zonk_subst_or_walk():
    n = Var("n", "Dim")
    t = TArr(TFun((TArr(INT, Shape((dim_var(n),))),), TArr(INT, Shape(()))), Shape((dim(2),)))
    assert is_ground(t)
    assert zonk(t) is t
    assert subst(t, {Var("m", "Dim"): dim(3)}) is t  # (m does not occur)
    assert subst(t, {n: dim(3)}) == TArr(TFun((TArr(INT, Shape((dim(3),))),), TArr(INT, Shape(()))), Shape((dim(2),)))
    assert walk(t, Sol()) is t
    s = Shape((dim_var(n), dim(1)))
    assert walk_shape(s, Sol()) is s
    hole = IMeta("s", "Shape")
    assert walk_shape(Shape((hole,)), Sol().with_index(hole, s)) == s


def test_a_type_with_an_unknown_atom_type_is_not_ground_even_once_solved():
    meta = AtomMeta(None, "test")
    t = TArr(meta, Shape(()))
    assert not is_ground(t)
    meta.solution = INT
    assert not is_ground(t) and zonk(t) == TArr(INT, Shape(())) and is_ground(zonk(t))
    assert is_ground(TArr(TVar(Var("t", "Atom")), Shape(())))  # (a type variable is not an unknown)


# --- the reader classifies each distinct token once ----------------------------------------------


def test_each_distinct_token_is_classified_once(monkeypatch):
    from remora.front import reader

    seen: list[str] = []
    classify = reader.classify_atom

    def counted(token):
        seen.append(token)
        return classify(token)

    monkeypatch.setattr(reader, "classify_atom", counted)
    forms = reader.read("(f 1 2.5 x) (f 1 2.5 x) [x x x]")
    assert sorted(seen) == sorted(["f", "1", "2.5", "x"])
    assert [a.value for a in forms[1].items] == ["f", 1, 2.5, "x"]
