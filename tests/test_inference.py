"""Automatic instantiation (spec/inference.md, D18–D19): what function-argument lifting may and
may not decide, and what the errors say when no instantiation fits."""

from __future__ import annotations

import pytest
from conftest import check_error, check_type, eval_value

# A parameter whose function type mentions `s`, and nothing else that fixes `s`.
APP1 = "(define app1 (Iλ ((s Shape)) (λ ((f (Arr (-> ((Arr Int s)) (Arr Int s)) (Shp)))) (f ((i-app iota/s s))))))\n"
APPN = "(define appn (Iλ ((n Dim)) (λ ((f (Arr (-> ((Arr Int (Shp n))) (Arr Int (Shp n))) (Shp)))) (f ((i-app iota/s (Shp n)))))))\n"
INC = "(λ ((x (Arr Int (Shp)))) (+ x 1))"


def test_a_shape_only_the_lifting_frame_would_fix_is_ambiguous():
    """Every `s` fits (the scalar λ lifted over `s`), with different results: once `s = (Shp)` was
    chosen silently."""
    err = check_error(APP1 + f"(app1 {INC})")
    assert err.message == (
        "ambiguous application of `app1`: both (i-app app1 (Shp)) and (i-app app1 (Shp 1)) fit with the "
        "smallest argument frames (argument 1 is a function that can be lifted over any frame, and "
        "nothing else decides which); write the i-app that picks one"
    )
    assert (err.line, err.column) == (2, 1)


def test_a_dim_only_the_lifting_frame_would_fix_is_ambiguous():
    err = check_error(APPN + f"(appn {INC})")
    assert err.message.startswith("ambiguous application of `appn`: both (i-app appn 0) and (i-app appn 1) fit")


@pytest.mark.parametrize("shape,value", [("(Shp)", "1"), ("(Shp 3)", "[1 2 3]"), ("(Shp 2 2)", "[[1 2] [3 4]]")])
def test_the_i_app_the_ambiguity_asks_for_works(shape, value):
    assert eval_value(APP1 + f"((i-app app1 {shape}) {INC})") == value


def test_a_polymorphic_function_argument_left_free_is_ambiguous_too():
    assert check_error(APP1 + "(app1 reverse)").message.startswith("ambiguous application of `app1`")


@pytest.mark.parametrize(
    "source,value",
    [
        # the non-function arguments fix every variable; the lifting frame follows
        ("(reduce + [[1 2] [3 4] [5 6]])", "[9 12]"),  # column sums: + lifted over (Shp 2)
        ("(reduce + [1 2 3])", "6"),
        ("(fold (λ ((x [Int]) (acc [Int 2])) (+ x acc)) [0 0] [1 2 3])", "[6 6]"),
        ("(fold + 0 [[1 2] [3 4]])", "[3 7]"),  # a scalar z: fold lifted over the rows
        ("(scan + 0 [1 2 3])", "[1 3 6]"),
        ("(scan + [0 0] [[1 2] [3 4]])", "[[1 2] [4 6]]"),
        ("(iterate (λ ((x [Int])) (* 2 x)) 3 [1 2 3])", "[8 16 24]"),
        ("(iterate neg 3 [1 2 3])", "[-1 -2 -3]"),
        ("(iterate (λ ((x [Float])) (* 2.0 x)) 1 [[1.0] [2.0]])", "[[2.0] [4.0]]"),
        ("(outer + [1 2] [10 20 30])", "[[11 21 31] [12 22 32]]"),
        # two lifting frames fit a polymorphic argument: the smaller one (reverse the matrix)
        ("(iterate reverse 1 [[1 2] [3 4]])", "[[3 4] [1 2]]"),
        ("(define (g (f (Arr (-> ([Int 3]) [Int 3]) (Shp)))) (f [1 2 3]))\n(g (λ ((x [Int])) (* x x)))", "[1 4 9]"),
    ],
)
def test_common_lifted_function_arguments_stay_unambiguous(source, value):
    assert eval_value(source) == value


def test_lifting_frame_fixed_by_the_function_array_itself():
    # The expected function type is fully known: the frame of the lifted λ follows from it.
    assert check_type("(define (g (f (Arr (-> ([Int 2 3]) [Int 2 3]) (Shp)))) f)\n(g neg)") == (
        "(Arr (-> ((Arr Int (Shp 2 3))) (Arr Int (Shp 2 3))) (Shp))"
    )


# --- when no instantiation fits: the binding that conflicts -------------------------------


@pytest.mark.parametrize(
    "source,says,column",
    [
        (
            "(define (f (v [Float 2])) (* v 2.0))\n(iterate f 3 [1.0 2.0 3.0])",
            "argument 1 forces s = (Shp 2), but argument 3 gives s = (Shp 3)",
            14,
        ),
        (
            "(define (g (x [Int 2]) (acc [Int 2])) (+ x acc))\n(fold g [0 0 0] [[1 2] [3 4]])",
            "argument 1 forces T = (Arr Int (Shp 2)), but argument 2 gives T = (Arr Int (Shp 3))",
            9,
        ),
        ("(reduce append [[1 2] [3 4]])", "argument 1 forces s = (Shp 0), but argument 2 gives s = (Shp 2)", 16),
        ("(outer + [1 2] [1.0])", "arguments 1 and 2 force u = Int, but argument 3 gives u = Float", 16),
        ("(append [1 2] [#t #f])", "argument 1 forces t = Int, but argument 2 gives t = Bool", 15),
        ("(filter [#t #f] [1 2 3])", "argument 1 forces d = 2, but argument 2 gives d = 3", 17),
    ],
)
def test_no_fit_names_the_conflicting_binding(source, says, column):
    err = check_error(source)
    assert err.message.startswith("no instantiation of `")
    assert f"fits all its arguments at once: {says} (" in err.message
    assert err.column == column  # under the argument that cannot join the ones before it


def test_no_fit_lists_what_the_function_takes_with_array_variables_by_name():
    message = check_error("(define (g (x [Int 2]) (acc [Int 2])) (+ x acc))\n(fold g [0 0 0] [[1 2] [3 4]])").message
    assert message.endswith("(`fold` takes argument 1 as (Arr (-> ((Arr t s) T) T) (Shp)), argument 2 as T)")


def test_a_misfit_names_an_array_variable_not_its_parts():
    # `T` once printed as (Arr T T)
    assert "but `fold` takes (Arr (-> ((Arr t s) T) T) (Shp))" in check_error("(fold 5 0 [1])").message


def test_no_fit_over_frames_that_are_not_prefix_compatible():
    message = check_error("(append [[1 2] [3 4]] [[1 2 3] [4 5 6] [7 8 9]])").message
    assert "over frames (Shp) and (Shp), argument 1 gives s = (Shp 2) but argument 2 gives s = (Shp 3)" in message
    assert "over frames (Shp 2) and (Shp 3) they agree, but those frames are not prefix-compatible" in message


def test_no_fit_suggests_a_conversion_between_int_and_float():
    assert check_error("(outer + [1 2] [1.0])").message.endswith("use int->float (or floor, round, …) on one of them")
