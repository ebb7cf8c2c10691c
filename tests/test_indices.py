"""Index canonical forms (paper §2.2), their printing (contract §3), and z3 counterexamples."""

from __future__ import annotations

import pytest

from remora.statics import smt
from remora.errors import RemoraTypeError
from remora.statics.indices import (
    Dim,
    Shape,
    Var,
    dim,
    dim_add,
    dim_scale,
    dim_var,
    eval_index,
    free_vars,
    shape,
    show_index,
    strip_prefix,
    strip_suffix,
    subst_index,
)
from remora.statics.kinding import Scope, sort_index
from remora.front.parse import parse_index
from remora.front.reader import read

DIMS = "x y q n m a z"
SHAPES = "d s t"


def make_vars():
    vs = {name: Var(name, "Dim") for name in DIMS.split()}
    vs.update({name: Var(name, "Shape") for name in SHAPES.split()})
    return vs


@pytest.fixture
def V():
    return make_vars()


def ix(text: str, vs: dict, expected: str | None = None):
    """Sort ``text`` (index syntax) in a scope holding the variables ``vs``."""
    (node,) = read(text, "<index>")
    return sort_index(parse_index(node), Scope().extend(list(vs.values())), expected)


def sort_error(text: str, vs: dict, expected: str | None = None) -> RemoraTypeError:
    with pytest.raises(RemoraTypeError) as info:
        ix(text, vs, expected)
    assert info.value.span is not None
    return info.value


# ---------------------------------------------------------------------------
# The paper's §2.2 examples


def test_paper_dim_equality(V):
    a = ix("(+ x y 5 x)", V)
    b = ix("(+ (+ x x) 5 y)", V)
    assert a == b
    assert a == Dim(5, ((V["x"], 2), (V["y"], 1)))


def test_paper_dim_inequality(V):
    assert ix("(+ q 5 y)", V) != ix("(+ (+ x x) 5 y)", V)


def test_paper_shape_canonical_form(V):
    s = ix("(++ (Shp 2 (+ x 5 x)) (++ d (Shp 3)))", V)
    assert isinstance(s, Shape)
    x, d = V["x"], V["d"]
    assert s.items == (Dim(2), Dim(5, ((x, 2),)), d, Dim(3))
    assert s == shape(2, dim_add(dim(5), dim_scale(dim_var(x), 2)), d, 3)


def test_paper_shape_prints_merged(V):
    s = ix("(++ (Shp 2 (+ x 5 x)) (++ d (Shp 3)))", V)
    assert show_index(s) == "(++ (Shp 2 (+ x x 5)) d (Shp 3))"
    assert str(s) == "(++ (Shp 2 (+ x x 5)) d (Shp 3))"


def test_append_is_associative_but_not_commutative(V):
    assert ix("(++ (++ d s) t)", V) == ix("(++ d (++ s t))", V) == ix("(++ d s t)", V)
    assert ix("(++ d s)", V) != ix("(++ s d)", V)


def test_append_identity(V):
    assert ix("(++ (Shp) s (Shp))", V) == ix("s", V)
    assert ix("(++)", V) == ix("(Shp)", V) == Shape(())


def test_addition_identity_and_associativity(V):
    assert ix("(+ 0 n)", V) == ix("n", V) == ix("(+ n 0)", V)
    assert ix("(+ (+ 1 2) 3)", V) == ix("(+ 1 (+ 2 3))", V) == Dim(6)
    assert ix("(+)", V) == Dim(0)


def test_shapes_of_equal_dims(V):
    assert ix("(Shp (+ 1 5) (+ n n))", V) == ix("(++ (Shp 6) (Shp (+ n n)))", V)
    assert ix("(++ (Shp 2) (Shp 3))", V) == ix("(Shp 2 3)", V)


def test_different_variables_with_the_same_name_are_different():
    a, b = Var("n", "Dim"), Var("n", "Dim")
    assert dim_var(a) != dim_var(b)
    assert dim_add(dim_var(a), dim_var(b)) != dim_scale(dim_var(a), 2)


def test_rank_and_dims(V):
    assert ix("(Shp 2 3)", V).dims() == (2, 3)
    assert ix("(Shp 2 3)", V).rank == 2
    assert ix("(Shp 2 n)", V).dims() is None
    assert ix("(Shp 2 n)", V).rank == 2
    assert ix("(++ (Shp 2) s)", V).rank is None
    assert ix("(Shp)", V).dims() == ()


# ---------------------------------------------------------------------------
# Printing (contract §3)


@pytest.mark.parametrize(
    "text,printed",
    [
        ("(+ y x 1)", "(+ x y 1)"),
        ("(+ 3 z a)", "(+ a z 3)"),
        ("(+ x x)", "(+ x x)"),
        ("(+ x (+ x x) 2)", "(+ x x x 2)"),
        ("(+ n 0)", "n"),
        ("(+ 0 0)", "0"),
        ("(+)", "0"),
        ("7", "7"),
        ("(+ m n 1)", "(+ m n 1)"),
        ("(+ 1 n m)", "(+ m n 1)"),
        ("(Shp)", "(Shp)"),
        ("(++)", "(Shp)"),
        ("(++ (Shp) (Shp))", "(Shp)"),
        ("(Shp 2 3)", "(Shp 2 3)"),
        ("(++ (Shp 2) (Shp 3))", "(Shp 2 3)"),
        ("(++ (Shp 1) (Shp 2) (Shp) (Shp 3 4))", "(Shp 1 2 3 4)"),
        ("(Shp 2 n)", "(Shp 2 n)"),
        ("(++ (Shp 2) (Shp n) s)", "(++ (Shp 2 n) s)"),
        ("(++ (Shp 1) (Shp 2) s (Shp) (Shp 3) (Shp 4))", "(++ (Shp 1 2) s (Shp 3 4))"),
        ("(++ s (Shp))", "s"),
        ("(++ s t)", "(++ s t)"),
        ("(++ s s)", "(++ s s)"),
        ("(++ s (Shp (+ 1 n)) t)", "(++ s (Shp (+ n 1)) t)"),
        ("(Shp (+ y x) (+ x y))", "(Shp (+ x y) (+ x y))"),
    ],
)
def test_printing(V, text, printed):
    assert show_index(ix(text, V)) == printed


def test_printing_is_canonical(V):
    """Equal indices print the same, however they were written."""
    written = ["(+ x y 5 x)", "(+ (+ x x) 5 y)", "(+ 5 y x x)", "(+ (+ 2 3) (+ x (+ y x)))"]
    assert {show_index(ix(w, V)) for w in written} == {"(+ x x y 5)"}


def test_sort_checks(V):
    assert isinstance(ix("n", V, "Dim"), Dim)
    assert isinstance(ix("s", V, "Shape"), Shape)
    assert isinstance(ix("(Shp)", V, "Shape"), Shape)


@pytest.mark.parametrize(
    "text,col,words",
    [
        ("(Shp s)", 6, ["Shape", "++"]),
        ("(Shp 1 (Shp 2))", 8, ["Shape"]),
        ("(+ s 1)", 4, ["Shape"]),
        ("(++ n)", 5, ["Dim", "(Shp n)"]),
        ("(++ s 3)", 7, ["Dim"]),
        ("(+ w 1)", 4, ["unbound", "`w`"]),
    ],
)
def test_sorting_errors(V, text, col, words):
    err = sort_error(text, V)
    assert (err.line, err.column) == (1, col)
    for w in words:
        assert w in err.message


def test_expected_sort_mismatch(V):
    err = sort_error("(Shp 1)", V, "Dim")
    assert "Dim" in err.message and "Shape" in err.message
    err = sort_error("(+ n 1)", V, "Shape")
    assert "Shape" in err.message


def test_type_variable_is_not_an_index():
    t = Var("t", "Atom")
    (node,) = read("(Shp t)", "<index>")
    with pytest.raises(RemoraTypeError) as info:
        sort_index(parse_index(node), Scope().extend([t]))
    assert "type variable" in info.value.message
    assert (info.value.line, info.value.column) == (1, 6)


def test_innermost_binding_wins():
    outer, inner = Var("n", "Dim"), Var("n", "Shape")
    (node,) = read("n", "<index>")
    assert sort_index(parse_index(node), Scope().extend([outer, inner])) == Shape((inner,))


# ---------------------------------------------------------------------------
# Substitution


def test_substitute_dim(V):
    n, m = V["n"], V["m"]
    d = ix("(+ n n 1)", V)
    out = subst_index(d, {n: ix("(+ m 2)", V)})
    assert out == ix("(+ m m 5)", V)
    assert show_index(out) == "(+ m m 5)"


def test_substitute_dim_by_constant(V):
    assert subst_index(ix("(+ n x 1)", V), {V["n"]: Dim(4), V["x"]: Dim(0)}) == Dim(5)


def test_substitute_shape_variable_splices(V):
    s = ix("(++ (Shp n) s (Shp 1))", V)
    out = subst_index(s, {V["s"]: ix("(Shp 2 3)", V), V["n"]: ix("(+ m 1)", V)})
    assert out == ix("(Shp (+ m 1) 2 3 1)", V)
    assert show_index(out) == "(Shp (+ m 1) 2 3 1)"


def test_substitute_shape_variable_by_empty_and_by_shape(V):
    s = ix("(++ s (Shp 1) t)", V)
    assert subst_index(s, {V["s"]: Shape(())}) == ix("(++ (Shp 1) t)", V)
    assert subst_index(s, {V["s"]: ix("(++ t d)", V)}) == ix("(++ t d (Shp 1) t)", V)


def test_substitution_leaves_other_variables(V):
    d = ix("(+ x y)", V)
    assert subst_index(d, {V["n"]: Dim(1)}) == d
    assert subst_index(d, {}) == d


def test_free_vars(V):
    assert free_vars(ix("(++ (Shp (+ n x) 2) s)", V)) == {V["n"], V["x"], V["s"]}
    assert free_vars(ix("(Shp 1 2)", V)) == set()


def test_eval_index(V):
    env = {V["n"]: 2, V["x"]: 5, V["s"]: (7, 8)}
    assert eval_index(ix("(+ n n x 1)", V), env) == 10
    assert eval_index(ix("(++ (Shp n 3) s (Shp x))", V), env) == (2, 3, 7, 8, 5)


# ---------------------------------------------------------------------------
# Prefix / suffix subtraction


def test_paper_prefix_subtraction(V):
    whole = ix("(Shp 3 4 5 6)", V)
    assert strip_prefix(whole, ix("(Shp 3 4)", V)) == ix("(Shp 5 6)", V)
    assert strip_prefix(whole, ix("(Shp 4)", V)) is None


def test_strip_prefix(V):
    assert strip_prefix(ix("(Shp 2 3)", V), ix("(Shp)", V)) == ix("(Shp 2 3)", V)
    assert strip_prefix(ix("(Shp 2 3)", V), ix("(Shp 2 3)", V)) == ix("(Shp)", V)
    assert strip_prefix(ix("(Shp 2)", V), ix("(Shp 2 3)", V)) is None
    assert strip_prefix(ix("(++ (Shp 2 n) s)", V), ix("(Shp 2)", V)) == ix("(++ (Shp n) s)", V)
    assert strip_prefix(ix("(++ (Shp 2 n) s)", V), ix("(Shp 2 n)", V)) == ix("s", V)
    assert strip_prefix(ix("(++ s (Shp 2))", V), ix("s", V)) == ix("(Shp 2)", V)
    assert strip_prefix(ix("(++ s (Shp 2))", V), ix("(Shp 2)", V)) is None
    assert strip_prefix(ix("(Shp (+ 1 5) 2)", V), ix("(Shp 6)", V)) == ix("(Shp 2)", V)


def test_strip_suffix(V):
    assert strip_suffix(ix("(Shp 2 3)", V), ix("(Shp 3)", V)) == ix("(Shp 2)", V)
    assert strip_suffix(ix("(Shp 2 3)", V), ix("(Shp)", V)) == ix("(Shp 2 3)", V)
    assert strip_suffix(ix("(Shp 2 3)", V), ix("(Shp 2 3)", V)) == ix("(Shp)", V)
    assert strip_suffix(ix("(Shp 2 3)", V), ix("(Shp 2)", V)) is None
    assert strip_suffix(ix("(Shp 3)", V), ix("(Shp 2 3)", V)) is None
    assert strip_suffix(ix("(Shp)", V), ix("(Shp 1)", V)) is None
    assert strip_suffix(ix("(++ s (Shp 3))", V), ix("(Shp 3)", V)) == ix("s", V)
    assert strip_suffix(ix("(++ (Shp n) s)", V), ix("s", V)) == ix("(Shp n)", V)
    assert strip_suffix(ix("(Shp n 3)", V), ix("(Shp 3 n)", V)) is None
    assert strip_suffix(ix("(Shp 2 (+ n n))", V), ix("(Shp (+ n n))", V)) == ix("(Shp 2)", V)


# ---------------------------------------------------------------------------
# z3 counterexamples (remora.statics.smt)


def _is_suffix(cell: tuple, whole: tuple) -> bool:
    return len(cell) <= len(whole) and whole[len(whole) - len(cell):] == cell


def _is_prefix(a: tuple, b: tuple) -> bool:
    return len(a) <= len(b) and b[: len(a)] == a


def _check_domain(assignment, variables):
    assert set(assignment) == set(variables)
    for v, value in assignment.items():
        if v.sort == "Dim":
            assert isinstance(value, int) and value >= 0
        else:
            assert isinstance(value, tuple) and all(isinstance(k, int) and k >= 0 for k in value)


def test_differ_shp_n3_vs_shp_3n(V):
    a, b = ix("(Shp n 3)", V), ix("(Shp 3 n)", V)
    found = smt.differ(a, b)
    assert found is not None
    _check_domain(found, {V["n"]})
    assert found[V["n"]] != 3
    assert eval_index(a, found) != eval_index(b, found)


@pytest.mark.parametrize(
    "left,right",
    [
        ("(+ q 5 y)", "(+ (+ x x) 5 y)"),
        ("n", "(+ n 1)"),
        ("(+ n m)", "(+ n n)"),
        ("(++ d s)", "(++ s d)"),
        ("(++ s (Shp 1))", "(++ (Shp 1) s)"),
        ("(Shp n)", "s"),
        ("s", "(Shp)"),
        ("(++ s t)", "(++ t s)"),
    ],
)
def test_differ_finds_a_real_counterexample(V, left, right):
    a, b = ix(left, V), ix(right, V)
    found = smt.differ(a, b)
    assert found is not None
    _check_domain(found, free_vars(a) | free_vars(b))
    assert eval_index(a, found) != eval_index(b, found)


@pytest.mark.parametrize("left,right", [("(+ x y 5 x)", "(+ (+ x x) 5 y)"), ("(++ d (Shp))", "d")])
def test_differ_finds_nothing_for_valid_equalities(V, left, right):
    assert smt.differ(ix(left, V), ix(right, V)) is None


@pytest.mark.parametrize(
    "cell,whole",
    [("(Shp 3 n)", "(Shp n 3)"), ("(Shp (+ n 1))", "(Shp n)"), ("s", "(Shp 2 3)"), ("(Shp 2)", "(++ s (Shp n))")],
)
def test_not_suffix_counterexample(V, cell, whole):
    c, w = ix(cell, V), ix(whole, V)
    found = smt.not_suffix(c, w)
    assert found is not None
    _check_domain(found, free_vars(c) | free_vars(w))
    assert not _is_suffix(eval_index(c, found), eval_index(w, found))


def test_not_suffix_none_when_always_a_suffix(V):
    assert smt.not_suffix(ix("(Shp n)", V), ix("(++ s (Shp n))", V)) is None


@pytest.mark.parametrize(
    "a,b",
    [("(Shp n)", "(Shp m)"), ("s", "t"), ("(Shp n 1)", "(Shp 2)"), ("(++ (Shp 1) s)", "(Shp n)")],
)
def test_not_prefix_related_counterexample(V, a, b):
    x, y = ix(a, V), ix(b, V)
    found = smt.not_prefix_related(x, y)
    assert found is not None
    _check_domain(found, free_vars(x) | free_vars(y))
    ex, ey = eval_index(x, found), eval_index(y, found)
    assert not _is_prefix(ex, ey) and not _is_prefix(ey, ex)


def test_not_prefix_related_none_when_always_related(V):
    assert smt.not_prefix_related(ix("(Shp 2)", V), ix("(++ (Shp 2) s)", V)) is None
    assert smt.not_prefix_related(ix("(Shp)", V), ix("s", V)) is None


def test_show_assignment_is_sorted_by_name(V):
    text = smt.show_assignment({V["s"]: (1, 2), V["n"]: 0, V["m"]: 3})
    assert text == "m = 3, n = 0, s = (Shp 1 2)"
