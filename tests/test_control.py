"""Control flow (contract §6): `if`, declared recursion, `while` — typing, meaning on both
engines, and laziness over frames (a branch or step runs only for the cells that take it)."""

from __future__ import annotations

import pytest

from remora.errors import RemoraRuntimeError, RemoraSyntaxError, RemoraTypeError

from conftest import check_error, check_type, eval_error, eval_value, eval_values

# --- if -------------------------------------------------------------------------------------


def test_if_chooses_one_branch():
    assert eval_values("(if #t 1 2) (if (< 2 1) 1 2) (if #f [1 2] [3 4])") == ["1", "2", "[3 4]"]


def test_if_type_is_the_branches_type():
    assert check_type("(if #t [1.5 2.0] [0.0 1.0])") == "(Arr Float (Shp 2))"


def test_if_evaluates_only_the_chosen_branch():
    assert eval_value("(if (= 0 0) 7 (/ 1 0))") == "7"
    assert eval_value("(if #f (index [1 2 3] 10) 0)") == "0"


def test_if_lazy_over_a_frame_of_conditions():
    """The safe division: over a frame with zeros in b, the division never sees them."""
    source = "(define (safe-div (a [Int]) (b [Int])) (if (= b 0) 0 (/ a b)))\n(safe-div [10 20 30 40] [2 0 5 0])"
    assert eval_value(source) == "[5 0 6 0]"


def test_if_untaken_branch_out_of_range_over_a_frame():
    source = "((λ ((c [Bool]) (xs [Int 3])) (if c (index xs 10) (index xs 1))) [#f #f] [[1 2 3] [4 5 6]])"
    assert eval_value(source) == "[2 5]"


def test_if_branches_of_cells_put_back_in_frame_order():
    source = "((λ ((x [Float])) (if (> x 0.0) [x x] [0.0 1.0])) [[1.5 -2.0] [-3.0 4.0]])"
    assert eval_value(source) == "[[[1.5 1.5] [0.0 1.0]] [[0.0 1.0] [4.0 4.0]]]"


def test_if_with_captured_values_of_several_batch_depths():
    source = """
    ((λ ((x [Int])) ((λ ((y [Int])) (if (< x y) (- y x) (* 10 (- x y)))) [1 5 9])) [2 6])
    """
    assert eval_value(source) == "[[10 3 7] [50 10 3]]"


def test_if_returning_functions_over_a_frame():
    source = """
    ((λ ((x [Int])) ((if (> x 0) (λ ((y [Int])) (+ x y)) (λ ((y [Int])) (- y x))) 100)) [1 -2 3])
    """
    assert eval_value(source) == "[101 102 103]"


def test_if_non_scalar_condition_points_to_select_and_lambda():
    err = check_error("(if [#t #f] 1 2)", RemoraTypeError)
    assert "select" in err.message and "λ" in err.message and "(Arr Bool (Shp 2))" in err.message
    assert err.span.col == 5


def test_if_condition_must_be_bool():
    err = check_error("(if 1 1 2)", RemoraTypeError)
    assert "condition of `if` must be a Bool scalar" in err.message


def test_if_branches_of_different_types():
    err = check_error("(if #t 1 2.0)", RemoraTypeError)
    assert "branches of `if`" in err.message and "(Arr Float (Shp))" in err.message
    err = check_error("(if #t [1 2] [1 2 3])", RemoraTypeError)
    assert "(Arr Int (Shp 3))" in err.message


def test_if_is_a_form():
    with pytest.raises(RemoraSyntaxError):
        check_type("(if #t 1)")
    with pytest.raises(RemoraSyntaxError):
        check_type("(define if 3)")


# --- declared recursion -------------------------------------------------------------------

GCD = "(define (gcd (a [Int]) (b [Int])) : [Int] (if (= b 0) a (gcd b (mod a b))))\n"


def test_recursion_with_declared_result_type():
    assert check_type(GCD + "gcd") == "(Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp))"
    assert eval_value(GCD + "(gcd 12 18)") == "6"


def test_recursion_over_a_frame_of_different_depths():
    assert eval_value(GCD + "(gcd [12 100 7 81 0] [18 75 13 27 5])") == "[6 25 1 27 5]"
    fact = "(define (fact (n [Int])) : [Int] (if (= n 0) 1 (* n (fact (- n 1)))))\n"
    assert eval_value(fact + "(fact [0 1 5 10 3])") == "[1 1 120 3628800 6]"


def test_recursion_declared_with_the_whole_type():
    source = """
    (define count-down : (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))
      (λ ((n (Arr Int (Shp)))) (if (<= n 0) 0 (+ 1 (count-down (- n 2))))))
    (count-down [0 1 7 10])
    """
    assert eval_value(source) == "[0 1 4 5]"


def test_polymorphic_recursion_declared():
    source = """
    (define my-length : [(Pi ((n Dim)) [(-> ([Int n]) [Int])])]
      (Iλ ((n Dim)) (λ ((xs [Int n])) (length xs))))
    (my-length [1 2 3])
    """
    assert eval_value(source) == "3"


def test_undeclared_self_reference_says_how_to_declare():
    err = check_error("(define (f (x [Int])) (if (= x 0) 0 (f (- x 1))))", RemoraTypeError)
    assert "unbound variable `f`" in err.message and "(define (f (x τ) ...) : τ_r body)" in err.message


def test_recursive_call_with_a_wrong_argument_type():
    err = check_error("(define (f (x [Int])) : [Int] (if (= x 0) 0 (f 1.5)))", RemoraTypeError)
    assert "argument 1 of `f`" in err.message


def test_body_without_the_declared_type():
    err = check_error("(define (f (x [Int])) : [Float] (+ x 1))", RemoraTypeError)
    assert "declared result type is (Arr Float (Shp))" in err.message
    err = check_error("(define f : [(-> ([Int]) [Int])] (λ ((x [Float])) 1))", RemoraTypeError)
    assert "declared" in err.message


def test_declared_type_must_be_a_function():
    err = check_error("(define x : [Int] 3)", RemoraTypeError)
    assert "function or an abstraction" in err.message


def test_failed_declaration_leaves_no_binding():
    err = check_error("(define (f (x [Int])) : [Float] (+ x 1))\n(f 1)", RemoraTypeError)
    assert err.span.line == 1


def test_recursion_past_the_limit_is_a_located_error():
    source = "(define (f (x [Int])) : [Int] (+ 1 (f x)))\n(f 1)"
    for engine in ("frames", "reference"):
        err = eval_error(source, engine)
        assert isinstance(err, RemoraRuntimeError)
        assert "recursion deeper than 10,000 nested calls" in err.message
        assert err.span.line == 1


def test_deep_recursion_within_the_limit():
    source = "(define (f (x [Int])) : [Int] (if (= x 0) 0 (+ 1 (f (- x 1)))))\n(f [9000 3])"
    assert eval_value(source) == "[9000 3]"


# --- while -----------------------------------------------------------------------------------


def test_while_type():
    assert check_type("while") == (
        "(Arr (Forall ((T Array)) (Arr (-> ((Arr (-> (T) (Arr Bool (Shp))) (Shp)) (Arr (-> (T) T) (Shp)) T) T) (Shp))) (Shp))"
    )


def test_while_on_one_value():
    assert eval_value("(while (λ ((x [Int])) (< x 100)) (λ ((x [Int])) (* x 2)) 1)") == "128"
    assert eval_value("(while (λ ((x [Int])) #f) (λ ((x [Int])) (/ x 0)) 1)") == "1"


def test_while_lifted_cells_with_different_iteration_counts():
    source = "(while (λ ((x [Int])) (< x 100)) (λ ((x [Int])) (* x 2)) [1 3 50 200])"
    assert eval_value(source) == "[128 192 100 200]"


def test_while_never_steps_a_finished_cell():
    """A finished cell stepped again would divide by zero."""
    source = "(while (λ ((x [Int])) (> x 0)) (λ ((x [Int])) (- x (+ 1 (/ 0 x)))) [[1 5] [0 3]])"
    assert eval_value(source) == "[[0 0] [0 0]]"


def test_while_over_vector_cells_counts_iterations():
    source = """
    (define (collatz (n [Int]))
      (index (while (λ ((s [Int 2])) (> (head s) 1))
                    (λ ((s [Int 2])) [(if (= 0 (mod (head s) 2)) (/ (head s) 2) (+ 1 (* 3 (head s)))) (+ 1 (tail s))])
                    [n 0]) 1))
    (collatz [1 2 3 6 7 27])
    """
    assert eval_value(source) == "[0 1 7 8 16 111]"


def test_while_many_iterations_without_python_recursion():
    assert eval_value("(while (λ ((x [Int])) (< x 12000)) (λ ((x [Int])) (+ x 1)) 0)") == "12000"


def test_while_condition_not_a_bool_scalar():
    err = check_error("(while (λ ((x [Int])) x) (λ ((x [Int])) x) 1)", RemoraTypeError)
    assert "argument 1 of `while`" in err.message and "(Arr Bool (Shp))" in err.message
    err = check_error("(while (λ ((x [Int 2])) (> x 0)) (λ ((x [Int 2])) x) [1 2])", RemoraTypeError)
    assert "argument 1 of `while`" in err.message


def test_while_with_captured_values_in_a_batch():
    source = "((λ ((lim [Int])) (while (λ ((x [Int])) (< x lim)) (λ ((x [Int])) (+ x 3)) 0)) [5 10 0])"
    assert eval_value(source) == "[6 12 0]"


def test_if_and_while_over_empty_frames():
    assert eval_value("((λ ((x [Int])) (if (> x 0) x (- 0 x))) (array (0) Int))") == "(array (0) Int)"
    assert eval_value("(while (λ ((x [Int])) (< x 5)) (λ ((x [Int])) (+ x 1)) (array (0 3) Int))") == "(array (0 3) Int)"


def test_if_branches_making_boxes_over_a_frame():
    source = "((λ ((x [Int])) (if (> x 1) (iota/v x) (iota/v 0))) [3 0 2])"
    assert eval_value(source) == "[(box 3 [0 1 2]) (box 0 (array (0) Int)) (box 2 [0 1])]"


def test_while_over_a_frame_of_boxes():
    source = """
    (while (λ ((b [(Sigma ((k Dim)) [Int k])])) (unbox (k v b) (< (length v) 3)))
           (λ ((b [(Sigma ((k Dim)) [Int k])])) (unbox (k v b) (box (+ k 1) (append v [(length v)]) (Sigma ((k Dim)) [Int k]))))
           (iota/v [0 2 5]))
    """
    assert eval_value(source) == "[(box 3 [0 1 2]) (box 3 [0 1 2]) (box 5 [0 1 2 3 4])]"


def test_recursion_over_a_matrix_of_depths():
    source = "(define (depth (n [Int])) : [Int] (if (<= n 0) 0 (+ 1 (depth (/ n 2)))))\n(depth [[0 1 1000] [7 8 1000000]])"
    assert eval_value(source) == "[[0 1 10] [3 4 20]]"
