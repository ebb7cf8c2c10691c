"""Rank-polymorphic lifting (paper §2.1, §2.4; Figs. 10 and 12), on both engines.

Every value is computed by the whole-frame engine and by the step-by-step
reference engine; ``eval_value`` checks they agree and that each result's shape and
dtype are exactly what its static type says.
"""

from __future__ import annotations

import pytest
from conftest import eval_value, eval_values, run_program

MTX = "(define mtx (array (3 2) 0 1 2 3 4 5))\n"


def inst(prim: str, indices: str, types: str = "Int") -> str:
    return f"(t-app (i-app {prim} {indices}) {types})"


# The paper's §2.1 function, with (array () 0) corrected to (array (1) 0) (see test_paper_examples).
SUM_TO = """
(define sum-to
  (λ ((n (Arr Num (Shp))))
    (unbox (len nums ((array () iota/v) n))
      ((t-app (i-app (array () reduce) len (Shp)) Num)
       +
       ((t-app (i-app (array () append) 1 len (Shp)) Num)
        (array (1) 0)
        nums)))))
"""

# sum of a box's contents, for a frame of boxes
SUM_BOX = f"(unbox (n xs {{boxes}}) ({inst('reduce', 'n (Shp)')} + ({inst('append', '1 n (Shp)')} [0] xs)))"


# ---------------------------------------------------------------------------
# The paper's examples


def test_paper_matrix_plus_vector():
    assert eval_value("(+ [[1 2 3] [4 5 6]] [10 20])") == "[[11 12 13] [24 25 26]]"


def test_paper_vector_plus_matrix():
    assert eval_value("(+ [10 20] [[1 2 3] [4 5 6]])") == "[[11 12 13] [24 25 26]]"


def test_paper_head_of_rows():
    assert eval_value(MTX + "((t-app (i-app head 2 (Shp 2)) Num) mtx)") == "[0 1]"


def test_paper_head_lifted_over_rows():
    assert eval_value(MTX + "((t-app (i-app head 1 (Shp)) Num) mtx)") == "[0 2 4]"


def test_paper_head_lifted_with_explicit_array_forms():
    src = MTX + "((t-app (i-app (array () head) 1 (Shp)) Num) mtx)"
    assert eval_value(src) == "[0 2 4]"


def test_frame_of_functions():
    assert eval_value("([+ -] 10 [1 2])") == "[11 8]"


def test_frame_of_functions_is_principal():
    # the function frame (2) is the longest: each function applied to the whole scalar pair
    assert eval_value("([+ - * max] 6 2)") == "[8 4 12 6]"


def test_frame_of_functions_lifts_over_larger_argument_frames():
    assert eval_value("([+ -] [[1 2] [3 4]] 10)") == "[[11 12] [-7 -6]]"


def test_frame_of_lambdas():
    src = "([(λ ((x (Arr Int (Shp)))) x) (λ ((x (Arr Int (Shp)))) (neg x))] [5 6])"
    assert eval_value(src) == "[5 -6]"


def test_paper_sum_to():
    assert eval_value(SUM_TO + "(sum-to 5)") == "10"


def test_paper_sum_to_lifted():
    assert eval_value(SUM_TO + "(sum-to [3 4 5])") == "[3 6 10]"


def test_paper_sum_to_lifted_over_a_matrix():
    assert eval_value(SUM_TO + "(sum-to [[0 1] [2 6]])") == "[[0 0] [1 15]]"


def test_paper_sum_to_over_an_empty_frame():
    assert eval_value(SUM_TO + "(sum-to (array (0) Int))") == "(array (0) Int)"


def test_paper_iota_lifted_over_shapes():
    # §2.1: iota on (array (2 2) 3 3 4 4) gives a 3x3 and a 4x4 matrix as its two cells
    out = eval_value("((i-app iota 2) (array (2 2) 3 3 4 4))")
    assert out.startswith("[(box (Shp 3 3) [[0 1 2] [3 4 5] [6 7 8]]) (box (Shp 4 4) [[0 1 2 3] ")
    assert out.endswith("[12 13 14 15]])]")


# ---------------------------------------------------------------------------
# Lifting of scalar primitives


@pytest.mark.parametrize(
    "src, out",
    [
        ("(+ 1 [1 2 3])", "[2 3 4]"),
        ("(+ [1 2 3] 1)", "[2 3 4]"),
        ("(+ [[1 2] [3 4]] [[10 20] [30 40]])", "[[11 22] [33 44]]"),
        ("(* [[[1 2]] [[3 4]]] [10 100])", "[[[10 20]] [[300 400]]]"),
        ("(neg [[1 2] [3 4]])", "[[-1 -2] [-3 -4]]"),
        ("(select [[#t #f] [#f #t]] [1 2] 0)", "[[1 0] [0 2]]"),
        ("(< [[1 5] [3 3]] [2 4])", "[[#t #f] [#t #t]]"),
    ],
)
def test_scalar_lifting(src, out):
    assert eval_value(src) == out


def test_lifting_follows_the_paper_lift_map_collapse():
    # lift replicates [10 20] to [[10 10 10] [20 20 20]], map applies + to each pair of scalars
    assert eval_values("(define a [[1 2 3] [4 5 6]])\n(- a [10 20])\n(- [10 20] a)") == [
        "[[-9 -8 -7] [-16 -15 -14]]",
        "[[9 8 7] [16 15 14]]",
    ]


# ---------------------------------------------------------------------------
# Empty frames keep their shapes


@pytest.mark.parametrize(
    "src, out",
    [
        ("((λ ((x (Arr Int (Shp)))) [x x]) (array (0) Int))", "(array (0 2) Int)"),
        ("(+ (array (0 3) Int) 1)", "(array (0 3) Int)"),
        ("(+ (array (0 3) Int) (array (0) Int))", "(array (0 3) Int)"),
        ("(+ (array (2 0) Int) [1 2])", "(array (2 0) Int)"),
        ("(+ (array (0) Float) 1.0)", "(array (0) Float)"),
        ("(< (array (0 3) Int) 1)", "(array (0 3) Bool)"),
        ("(int->float (array (0 2) Int))", "(array (0 2) Float)"),
        ("((λ ((x (Arr Int (Shp 2)))) x) (frame (0) (Arr Int (Shp 2))))", "(array (0 2) Int)"),
        ("((λ ((x (Arr Int (Shp 2)))) ((t-app (i-app head 1 (Shp)) Int) x)) (array (0 2) Int))", "(array (0) Int)"),
        ("((array (0) (-> ((Arr Int (Shp))) (Arr Int (Shp 3)))) 5)", "(array (0 3) Int)"),
        ("((λ ((x (Arr Int (Shp)))) (iota/v x)) (array (0) Int))", "(array (0) (Sigma ((k Dim)) (Arr Int (Shp k))))"),
        ("((λ ((x (Arr Int (Shp)))) (λ ((y (Arr Int (Shp)))) y)) (array (0) Int))",
         "(array (0) (-> ((Arr Int (Shp))) (Arr Int (Shp))))"),
        ("(frame (0) (Arr Int (Shp 2)))", "(array (0 2) Int)"),
        ("(frame (2) (array (0) Int) (array (0) Int))", "(array (2 0) Int)"),
        (f"({inst('reduce', '1 (Shp)')} + (array (0 2) Int))", "(array (0) Int)"),
    ],
)
def test_empty_frames(src, out):
    assert eval_value(src) == out


def test_lambda_body_is_not_run_over_an_empty_frame():
    # the body would divide by zero; with no cells it never runs
    src = "((λ ((x (Arr Int (Shp)))) (/ x 0)) (array (0) Int))"
    assert eval_value(src) == "(array (0) Int)"


# ---------------------------------------------------------------------------
# Boxes and unbox


def test_frame_of_boxes_of_different_sizes():
    assert eval_value("(iota/v [1 2 3])") == "[(box 1 [0]) (box 2 [0 1]) (box 3 [0 1 2])]"


def test_matrix_of_boxes():
    assert eval_value("(iota/v [[0 1] [2 1]])") == (
        "[[(box 0 (array (0) Int)) (box 1 [0])] [(box 2 [0 1]) (box 1 [0])]]"
    )


def test_unbox_over_a_frame_of_boxes():
    # the frame (3) appears once in the result: one sum per box
    assert eval_value(SUM_BOX.format(boxes="(iota/v [1 2 3])")) == "[0 1 3]"


def test_unbox_over_a_matrix_of_boxes():
    assert eval_value(SUM_BOX.format(boxes="(iota/v [[1 2] [3 4]])")) == "[[0 1] [3 6]]"


def test_unbox_over_boxes_of_equal_sizes():
    assert eval_value(SUM_BOX.format(boxes="(iota/v [3 3])")) == "[3 3]"


def test_unbox_over_an_empty_frame_of_boxes():
    assert eval_value(SUM_BOX.format(boxes="(iota/v (array (0 2) Int))")) == "(array (0 2) Int)"


def test_unbox_length_of_each_box():
    src = f"(unbox (n xs (iota/v [4 0 2])) ({inst('length', 'n (Shp)')} xs))"
    assert eval_value(src) == "[4 0 2]"


def test_unbox_body_with_a_frame_of_its_own():
    # each body has shape (3) (from k); the box frame (3) comes first
    src = f"(define k [10 20 30])\n(unbox (n xs (iota/v [1 2 3])) (+ k ({inst('length', 'n (Shp)')} xs)))"
    assert eval_value(src) == "[[11 21 31] [12 22 32] [13 23 33]]"


def test_unbox_inside_a_lambda_mapped_over_a_frame():
    src = f"((λ ((m (Arr Int (Shp)))) (unbox (n xs (iota/v [1 2])) (+ m ({inst('length', 'n (Shp)')} xs)))) [10 20 30])"
    assert eval_value(src) == "[[11 12] [21 22] [31 32]]"


def test_unbox_of_boxes_made_from_a_captured_lifted_variable():
    # boxes of different sizes, grouped by size, each body still sees its own m
    body = SUM_BOX.format(boxes="(iota/v m)")
    src = f"((λ ((m (Arr Int (Shp)))) (+ m {body})) [1 2 3 3 2])"
    assert eval_value(src) == "[1 3 6 6 3]"


def test_unbox_of_an_explicit_box():
    src = ("(unbox (n xs (box 3 [[0 1 2] [3 4 5] [6 7 8]] (Sigma ((n Dim)) (Arr Int (Shp n n))))) "
           f"({inst('length', 'n (Shp n)')} xs))")
    assert eval_value(src) == "3"


def test_boxes_created_inside_a_lambda_mapped_over_a_frame():
    src = ("((λ ((x (Arr Int (Shp)))) (unbox (k v (iota/v x)) "
           "(box k (* v x) (Sigma ((m Dim)) (Arr Int (Shp m)))))) [1 2 3])")
    assert eval_value(src) == "[(box 1 [0]) (box 2 [0 2]) (box 3 [0 3 6])]"


def test_boxes_created_inside_a_lambda_over_an_empty_frame():
    src = ("((λ ((x (Arr Int (Shp)))) (unbox (k v (iota/v x)) "
           "(box k (* v x) (Sigma ((m Dim)) (Arr Int (Shp m)))))) (array (0) Int))")
    assert eval_value(src) == "(array (0) (Sigma ((m Dim)) (Arr Int (Shp m))))"


def test_shape_box_prints_its_shape_index():
    src = "(box (Shp 2 2) [[0 1] [2 3]] (Sigma ((s Shape)) (Arr Int s)))"
    assert eval_value(src) == "(box (Shp 2 2) [[0 1] [2 3]])"


def test_frame_of_boxes_built_by_a_frame_form():
    src = ("(frame (2) (box 1 [5] (Sigma ((n Dim)) (Arr Int (Shp n)))) "
           "(box 2 [6 7] (Sigma ((n Dim)) (Arr Int (Shp n)))))")
    assert eval_value(src) == "[(box 1 [5]) (box 2 [6 7])]"


# ---------------------------------------------------------------------------
# λ: captured variables, nesting, closures in frames


def test_lambda_over_a_frame_with_a_captured_variable():
    assert eval_value("(define k 10)\n((λ ((x (Arr Int (Shp)))) (+ x k)) [1 2 3])") == "[11 12 13]"


def test_lambda_captures_a_frame():
    src = "(define k [10 20])\n((λ ((x (Arr Int (Shp)))) (+ x k)) [1 2 3])"
    assert eval_value(src) == "[[11 21] [12 22] [13 23]]"


def test_lambda_with_vector_cells_over_a_matrix():
    src = MTX + f"((λ ((row (Arr Int (Shp 2)))) ({inst('reduce', '1 (Shp)')} - row)) mtx)"
    assert eval_value(src) == "[-1 -1 -1]"


def test_define_function_sugar_lifted():
    src = "(define (f (x (Arr Int (Shp))) (y (Arr Int (Shp)))) (- x y))\n(f [[1 2] [3 4]] [10 20])"
    assert eval_value(src) == "[[-9 -8] [-17 -16]]"


def test_nested_lambda_sees_the_outer_parameter():
    src = "((λ ((x (Arr Int (Shp)))) ((λ ((y (Arr Int (Shp)))) (+ x y)) [10 20])) [1 2 3])"
    assert eval_value(src) == "[[11 21] [12 22] [13 23]]"


def test_curried_lambda():
    src = "(((λ ((a (Arr Int (Shp)))) (λ ((b (Arr Int (Shp)))) (- a b))) 10) [1 2])"
    assert eval_value(src) == "[9 8]"


def test_frame_of_closures_from_a_lifted_lambda():
    # (f [1 2 3]) is a 3-frame of closures, each with its own x
    src = "(define (f (x (Arr Int (Shp)))) (λ ((y (Arr Int (Shp)))) (* x y)))\n"
    assert eval_values(src + "(f [1 2 3])\n((f [1 2 3]) 10)\n((f [1 2 3]) [[1 2] [3 4] [5 6]])") == [
        "[#<function> #<function> #<function>]",
        "[10 20 30]",
        "[[1 2] [6 8] [15 18]]",
    ]


def test_closures_escaping_a_lambda_body_keep_their_environment():
    src = ("(define (adders (x (Arr Int (Shp)))) [(λ ((y (Arr Int (Shp)))) (+ x y)) "
           "(λ ((y (Arr Int (Shp)))) (- x y))])\n((adders [10 20]) 1)")
    assert eval_value(src) == "[[11 9] [21 19]]"


def test_lambda_as_argument_to_a_lambda():
    src = ("(define (twice (f (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))) (x (Arr Int (Shp)))) (f (f x)))\n"
           "(twice (λ ((y (Arr Int (Shp)))) (* y 3)) [1 2])\n"
           "(twice [neg (λ ((y (Arr Int (Shp)))) (* y 3))] 2)")
    assert eval_values(src) == ["[9 18]", "[2 18]"]


LX = "(λ ((x (Arr Int (Shp)))) {body})"
F_AX = "(λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (- a (* b x)))"


@pytest.mark.parametrize(
    "body, arg, out",
    [
        # a function argument that varies over the frame (captures x)
        (f"({inst('reduce', '2 (Shp)')} {F_AX} [1 2 3])", "[1 2]", "[-4 -9]"),
        (f"({inst('scan', '3 (Shp) (Shp)', 'Int Int')} {F_AX} x [1 2 3])", "[1 2]", "[[0 -2 -5] [0 -4 -10]]"),
        (f"({inst('fold', '3 (Shp)', 'Int (Arr Int (Shp))')} {F_AX} x [1 2 3])", "[1 2]", "[1 -7]"),
        (f"({inst('reduce', '3 (Shp)')} (select (< x 2) + *) [1 2 3 4])", "[1 2]", "[10 24]"),
        ("((select (< x 2) neg abs) (- 0 x))", "[1 2 3]", "[1 2 3]"),
        # array primitives whose non-array arguments vary over the frame
        (f"({inst('rotate', '3 (Shp)')} [1 2 3] x)", "[0 1 -1 5]", "[[1 2 3] [2 3 1] [3 1 2] [3 1 2]]"),
        (f"({inst('index', '3 (Shp)')} [10 20 30] x)", "[0 2]", "[10 30]"),
        (f"({inst('filter', '3 (Shp)')} (< [1 2 3] x) [1 2 3])", "[1 3 4]",
         "[(box 0 (array (0) Int)) (box 2 [1 2]) (box 3 [1 2 3])]"),
        (f"({inst('reshape', '1 (Shp)')} [x] x)", "[1 2 3]", "[(box (Shp 1) [1]) (box (Shp 2) [2 2]) (box (Shp 3) [3 3 3])]"),
        ("((i-app iota 1) [x])", "[2 0]", "[(box (Shp 2) [0 1]) (box (Shp 0) (array (0) Int))]"),
        # nested unbox whose inner boxes depend on the outer box and on x
        (f"(unbox (n xs (iota/v x)) (unbox (k ys (iota/v (+ x ({inst('length', 'n (Shp)')} xs)))) "
         f"({inst('length', 'k (Shp)')} ys)))", "[1 2]", "[2 4]"),
        ("((λ ((g (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp)))) (g x)) (λ ((z (Arr Int (Shp)))) (* z x)))",
         "[2 3]", "[4 9]"),
    ],
)
def test_lifted_lambda_bodies(body, arg, out):
    assert eval_value(f"({LX.format(body=body)} {arg})") == out


# ---------------------------------------------------------------------------
# Tλ / Iλ user abstractions


ID = "(define id (Tλ ((t Atom)) (λ ((x (Arr t (Shp)))) x)))\n"
FIRST = ("(define first (Iλ ((n Dim)) (λ ((v (Arr Int (Shp (+ n 1))))) "
         "((t-app (i-app head n (Shp)) Int) v))))\n")


def test_type_abstraction_at_two_types():
    assert eval_values(ID + "((t-app id Int) [3 4])\n((t-app id Bool) #t)\n((t-app id Float) 2.5)") == [
        "[3 4]", "#t", "2.5",
    ]


def test_type_abstraction_with_polymorphic_body():
    src = "((t-app (Tλ ((t Atom)) (λ ((x (Arr t (Shp 2)))) ((t-app (i-app head 1 (Shp)) t) x))) Bool) [#t #f])"
    assert eval_value(src) == "#t"


def test_type_abstraction_over_array_kind():
    twice = "(Tλ ((T Array)) (λ ((f (Arr (-> (T) T) (Shp))) (x T)) (f (f x))))"
    src = f"((t-app {twice} (Arr Int (Shp 2))) (λ ((v (Arr Int (Shp 2)))) (* v [2 3])) [1 2])"
    assert eval_value(src) == "[4 18]"


def test_index_abstraction():
    assert eval_value(FIRST + "((i-app first 2) [[1 2 3] [4 5 6]])") == "[1 4]"


def test_index_abstraction_with_reverse():
    src = "((i-app (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) ((t-app (i-app reverse n (Shp)) Int) x))) 3) [[1 2 3] [4 5 6]])"
    assert eval_value(src) == "[[3 2 1] [6 5 4]]"


def test_shape_index_abstraction():
    src = ("((i-app (Iλ ((s Shape)) (λ ((x (Arr Int s))) (+ x ((i-app iota/s s))))) (Shp 2 2)) "
           "[[10 10] [20 20]])")
    assert eval_value(src) == "[[10 11] [22 23]]"


def test_frame_of_the_same_type_abstraction():
    assert eval_value(ID + "((t-app [id id] Int) [4 5])") == "[4 5]"


def test_frame_of_the_same_index_abstraction():
    assert eval_value(FIRST + "((i-app [first first] 1) [[7 8] [9 10]])") == "[7 9]"


TWO_TLAMS = ("(array (2) (Tλ ((t Atom)) (λ ((x (Arr t (Shp 2)))) ((t-app (i-app head 1 (Shp)) t) x))) "
             "(Tλ ((t Atom)) (λ ((x (Arr t (Shp 2)))) ((t-app (i-app tail 1 (Shp)) t) x))))")
TWO_ILAMS = ("(array (2) (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) "
             f"({inst('reduce', 'n (Shp)')} + ({inst('append', '1 n (Shp)')} [0] x)))) "
             f"(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) ({inst('length', 'n (Shp)')} x))))")


def test_frame_of_different_type_abstractions_instantiated():
    assert eval_value(f"(t-app {TWO_TLAMS} Int)") == "[#<function> #<function>]"


def test_frame_of_different_type_abstractions_on_the_reference_engine():
    assert [p for p, _ in run_program(f"((t-app {TWO_TLAMS} Int) [5 6])", "reference")] == ["[5 6]"]


def test_frame_of_different_type_abstractions_applied():
    assert eval_value(f"((t-app {TWO_TLAMS} Int) [5 6])") == "[5 6]"


def test_frame_of_different_index_abstractions_applied():
    assert eval_value(f"((i-app {TWO_ILAMS} 3) [7 8 9])") == "[24 3]"


def test_frame_of_different_index_abstractions_on_the_reference_engine():
    assert [p for p, _ in run_program(f"((i-app {TWO_ILAMS} 3) [7 8 9])", "reference")] == ["[24 3]"]


# ---------------------------------------------------------------------------
# let


@pytest.mark.parametrize(
    "src, out",
    [
        ("(let ((x 1) (y (+ x 1))) (* x y))", "2"),
        ("(let ((x [1 2]) (y (+ x 10)) (x (* y 2))) x)", "[22 24]"),
        ("(let () 5)", "5"),
        ("(let ((f (λ ((x (Arr Int (Shp)))) (* x x)))) (f [1 2 3]))", "[1 4 9]"),
        ("(let ((b (iota/v [1 2]))) b)", "[(box 1 [0]) (box 2 [0 1])]"),
        ("((λ ((n (Arr Int (Shp)))) (let ((m (* n n))) (+ m 1))) [1 2 3])", "[2 5 10]"),
    ],
)
def test_let(src, out):
    assert eval_value(src) == out


# ---------------------------------------------------------------------------
# Side effects inside lifted λs


def test_read_nums_inside_a_lifted_lambda():
    src = "((λ ((x (Arr Int (Shp)))) (read-nums)) [1 2])"
    assert eval_value(src, stdin="5 6") == "[(box 2 [5 6]) (box 0 (array (0) Int))]"
