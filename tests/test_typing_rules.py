"""One section per rule of Figs. 5-8: positive checks with the exact printed type, and located errors.

Explicit instantiation only (t-app / i-app), in the paper's style.
"""

from __future__ import annotations

import re

import pytest

from conftest import check_error, check_type, check_types
from remora.errors import RemoraSyntaxError, RemoraTypeError

SCALAR_INT = "(Arr Int (Shp))"
INT_TO_INT = "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"
VEC = "(Sigma ((n Dim)) (Arr Int (Shp n)))"


def type_error(source: str) -> RemoraTypeError:
    return check_error(source, RemoraTypeError)  # type: ignore[return-value]


def at(err, line, col):
    assert (err.line, err.column) == (line, col), f"{err.line}:{err.column}: {err.message}"


# ---------------------------------------------------------------------------
# Sorting (Fig. 5): S-NAT, S-VAR, S-SHAPE, S-PLUS, S-APPEND


def test_s_nat_and_s_shape():
    assert check_type("(λ ((x (Arr Int (Shp 2 3)))) x)") == (
        "(Arr (-> ((Arr Int (Shp 2 3))) (Arr Int (Shp 2 3))) (Shp))"
    )


def test_s_var_both_sorts():
    assert check_type("(Iλ ((n Dim) (s Shape)) (λ ((x (Arr Int (++ (Shp n) s)))) x))") == (
        "(Arr (Pi ((n Dim) (s Shape)) (Arr (-> ((Arr Int (++ (Shp n) s))) (Arr Int (++ (Shp n) s))) (Shp))) (Shp))"
    )


def test_s_plus():
    assert check_type("(Iλ ((y Dim) (x Dim)) (λ ((a (Arr Int (Shp (+ y x 1 x 2))))) a))") == (
        "(Arr (Pi ((y Dim) (x Dim)) (Arr (-> ((Arr Int (Shp (+ x x y 3)))) (Arr Int (Shp (+ x x y 3)))) (Shp))) (Shp))"
    )


def test_s_append_prints_canonically():
    assert check_type("(λ ((x (Arr Int (++ (Shp 2) (++) (Shp 3))))) x)") == (
        "(Arr (-> ((Arr Int (Shp 2 3))) (Arr Int (Shp 2 3))) (Shp))"
    )
    assert check_type("(Iλ ((n Dim) (s Shape)) (λ ((x (Arr Int (++ (Shp 2 (+ n 5 n)) (++ s (Shp 3)))))) x))") == (
        "(Arr (Pi ((n Dim) (s Shape)) (Arr (-> ((Arr Int (++ (Shp 2 (+ n n 5)) s (Shp 3))))"
        " (Arr Int (++ (Shp 2 (+ n n 5)) s (Shp 3)))) (Shp))) (Shp))"
    )


def test_s_shape_rejects_a_shape_element():
    err = type_error("(Iλ ((s Shape)) (λ ((x (Arr Int (Shp s)))) x))")
    at(err, 1, 38)
    assert "Shape" in err.message and "++" in err.message


def test_s_plus_rejects_a_shape():
    err = type_error("(Iλ ((s Shape)) (λ ((x (Arr Int (Shp (+ s 1))))) x))")
    at(err, 1, 41)
    assert "Shape" in err.message


def test_s_append_rejects_a_dim():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int (++ n)))) x))")
    at(err, 1, 35)
    assert "Dim" in err.message and "(Shp n)" in err.message


def test_arr_needs_a_shape_not_a_dim():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int n))) x))")
    at(err, 1, 31)
    assert "Shape" in err.message and "Dim" in err.message


def test_s_var_unbound_index_variable():
    err = type_error("(λ ((x (Arr Int (Shp n)))) x)")
    at(err, 1, 22)
    assert "unbound" in err.message and "`n`" in err.message


def test_type_variable_used_as_index():
    err = type_error("(Tλ ((t Atom)) (λ ((x (Arr Int t))) x))")
    at(err, 1, 32)
    assert "`t`" in err.message and "type variable" in err.message and "not an index" in err.message


def test_type_variable_used_as_index_in_i_app():
    err = type_error("(Tλ ((t Atom)) (λ ((z [Int])) (i-app iota/s t)))")
    at(err, 1, 45)
    assert "type variable" in err.message


# ---------------------------------------------------------------------------
# Kinding (Fig. 6): K-BASE, K-VAR, K-ARRAY, K-FN, K-UNIV, K-PI, K-SIGMA


def test_k_base():
    assert check_type("(λ ((b (Arr Bool (Shp))) (f (Arr Float (Shp 1)))) b)") == (
        "(Arr (-> ((Arr Bool (Shp)) (Arr Float (Shp 1))) (Arr Bool (Shp))) (Shp))"
    )


def test_k_var_atom_and_array():
    assert check_type("(Tλ ((t Atom)) (λ ((x (Arr t (Shp 2)))) x))") == (
        "(Arr (Forall ((t Atom)) (Arr (-> ((Arr t (Shp 2))) (Arr t (Shp 2))) (Shp))) (Shp))"
    )
    assert check_type("(Tλ ((T Array)) (λ ((x T)) x))") == "(Arr (Forall ((T Array)) (Arr (-> (T) T) (Shp))) (Shp))"


def test_k_fn_k_univ_k_pi_k_sigma():
    source = (
        "(λ ((f (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp)))"
        " (g (Arr (Forall ((t Atom)) (Arr t (Shp))) (Shp)))"
        " (h (Arr (Pi ((n Dim)) (Arr Int (Shp n))) (Shp)))"
        " (b (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp 2)))) b)"
    )
    assert check_type(source) == (
        "(Arr (-> ((Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp)) (Arr (Forall ((t Atom)) (Arr t (Shp))) (Shp))"
        " (Arr (Pi ((n Dim)) (Arr Int (Shp n))) (Shp)) (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp 2)))"
        " (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp 2))) (Shp))"
    )


def test_lambda_parameter_of_atom_kind_is_a_kind_error():
    err = type_error("(λ ((x Int)) x)")
    at(err, 1, 8)
    assert "Array type" in err.message and "Atom" in err.message
    assert "(Arr Int (Shp))" in err.message


def test_array_of_array_is_a_kind_error():
    err = type_error("(λ ((x (Arr (Arr Int (Shp)) (Shp)))) x)")
    at(err, 1, 13)
    assert "Atom type" in err.message and "Array" in err.message


def test_k_fn_parameter_and_result_must_be_arrays():
    err = type_error("(λ ((x (Arr (-> (Int) (Arr Int (Shp))) (Shp)))) x)")
    at(err, 1, 18)
    assert "Array type" in err.message
    err = type_error("(λ ((x (Arr (-> ((Arr Int (Shp))) Int) (Shp)))) x)")
    at(err, 1, 35)
    assert "Array type" in err.message


@pytest.mark.parametrize(
    "quant,binders,col",
    [("Forall", "((t Atom))", 32), ("Pi", "((n Dim))", 27), ("Sigma", "((n Dim))", 30)],
)
def test_quantifier_bodies_must_be_arrays(quant, binders, col):
    err = type_error(f"(λ ((x (Arr ({quant} {binders} Int) (Shp)))) x)")
    at(err, 1, col)
    assert "Array type" in err.message


def test_atom_type_variable_where_array_needed():
    err = type_error("(Tλ ((t Atom)) (λ ((x t)) x))")
    at(err, 1, 23)
    assert "Array type" in err.message and "`t`" in err.message


def test_array_type_variable_as_element_type():
    err = type_error("(Tλ ((T Array)) (λ ((x (Arr T (Shp)))) x))")
    at(err, 1, 29)
    assert "Atom type" in err.message


def test_index_variable_used_as_type():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr n (Shp)))) x))")
    at(err, 1, 27)
    assert "`n`" in err.message and "index variable" in err.message and "not a type" in err.message


def test_unbound_type_variable():
    err = type_error("(λ ((x (Arr q (Shp)))) x)")
    at(err, 1, 13)
    assert "unbound type variable" in err.message and "`q`" in err.message


def test_type_is_not_an_expression():
    err = type_error("(+ Int 1)")
    at(err, 1, 4)
    assert "type" in err.message


# ---------------------------------------------------------------------------
# T-VAR


def test_t_var_lambda_parameter():
    assert check_type("(λ ((x (Arr Float (Shp 2)))) x)") == (
        "(Arr (-> ((Arr Float (Shp 2))) (Arr Float (Shp 2))) (Shp))"
    )


def test_t_var_top_level_definition():
    assert check_types("(define x [1 2 3])\nx") == ["(Arr Int (Shp 3))", "(Arr Int (Shp 3))"]


def test_t_var_inner_binding_shadows():
    assert check_type("(define x 1)\n((λ ((x (Arr Bool (Shp)))) x) #t)") == "(Arr Bool (Shp))"


def test_t_var_lisp_names_are_ordinary_variables():
    source = "(define t 1)\n(define nil [1 2])\n(define inf 2.5)\n(+ t nil)"
    assert check_types(source) == ["(Arr Int (Shp))", "(Arr Int (Shp 2))", "(Arr Float (Shp))", "(Arr Int (Shp 2))"]


def test_t_var_unbound():
    err = type_error("(+ 1 foo)")
    at(err, 1, 6)
    assert "unbound variable" in err.message and "`foo`" in err.message


def test_t_var_used_before_definition():
    err = type_error("(define y x)\n(define x 1)")
    at(err, 1, 11)
    assert "unbound" in err.message


def test_t_var_out_of_scope_after_lambda():
    err = type_error("(define f (λ ((x [Int])) x))\nx")
    at(err, 2, 1)
    assert "unbound" in err.message


# ---------------------------------------------------------------------------
# T-OP


def test_t_op_monomorphic_primitive():
    assert check_type("sqrt") == "(Arr (-> ((Arr Float (Shp))) (Arr Float (Shp))) (Shp))"
    assert check_type("iota/v") == "(Arr (-> ((Arr Int (Shp))) (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp))) (Shp))"


def test_t_op_polymorphic_primitive_quantifier_order():
    assert check_type("head") == (
        "(Arr (Pi ((d Dim) (s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t (++ (Shp (+ d 1)) s))) (Arr t s))"
        " (Shp))) (Shp))) (Shp))"
    )


@pytest.mark.parametrize(
    "name,printed",
    [
        ("iota", "(Arr (Pi ((d Dim)) (Arr (-> ((Arr Int (Shp d))) (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp))) (Shp))) (Shp))"),
        ("iota/s", "(Arr (Pi ((s Shape)) (Arr (-> () (Arr Int s)) (Shp))) (Shp))"),
        ("iota/w", "(Arr (Pi ((s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t s)) (Arr Int s)) (Shp))) (Shp))) (Shp))"),
        (
            "append",
            "(Arr (Pi ((m Dim) (n Dim) (s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t (++ (Shp m) s))"
            " (Arr t (++ (Shp n) s))) (Arr t (++ (Shp (+ m n)) s))) (Shp))) (Shp))) (Shp))",
        ),
        (
            "fold",
            "(Arr (Pi ((d Dim) (s Shape)) (Arr (Forall ((t Atom) (T Array)) (Arr (-> ((Arr (-> ((Arr t s) T) T) (Shp))"
            " T (Arr t (++ (Shp d) s))) T) (Shp))) (Shp))) (Shp))",
        ),
        ("read-nums", "(Arr (-> () (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp))) (Shp))"),
    ],
)
def test_t_op_primitive_types_follow_the_contract(name, printed):
    assert check_type(name) == printed


def test_t_op_in_array_literal():
    assert check_type("(array (2) sqrt exp)") == "(Arr (-> ((Arr Float (Shp))) (Arr Float (Shp))) (Shp 2))"


def test_overloaded_primitive_defaults_to_int():
    assert check_type("(define f +)") == "(Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp))"
    assert check_type("+") == "(Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp))"


def test_defaulted_definition_stays_int():
    err = type_error("(define f -)\n(f 1.0 2.0)")
    at(err, 2, 4)
    assert "Float" in err.message and "Int" in err.message


def test_overloaded_primitive_resolved_by_arguments():
    assert check_type("(+ 1.0 2.0)") == "(Arr Float (Shp))"
    assert check_type("(+ 1 2)") == SCALAR_INT
    assert check_type("(< 1.0 2.0)") == "(Arr Bool (Shp))"
    assert check_type("(= #t #f)") == "(Arr Bool (Shp))"
    assert check_type("(select [#t #f] [1.0 2.0] 3.0)") == "(Arr Float (Shp 2))"


def test_overloaded_primitive_in_a_frame_of_functions():
    assert check_type("([+ -] 10 [1 2])") == "(Arr Int (Shp 2))"
    assert check_type("([+ -] 1.0 [1.0 2.0])") == "(Arr Float (Shp 2))"
    assert check_type("((array (2 2) + - * /) 1.0 2.0)") == "(Arr Float (Shp 2 2))"


def test_overloaded_primitive_resolved_by_expected_type():
    assert check_type("((t-app (i-app reduce 2 (Shp)) Float) + [1.0 2.0 3.0])") == "(Arr Float (Shp))"
    assert check_type("((t-app (i-app reduce 2 (Shp)) Int) max [1 2 3])") == SCALAR_INT


def test_overloaded_primitive_in_let_takes_type_from_use():
    assert check_type("(let ((f +)) (f 1.0 2.0))") == "(Arr Float (Shp))"


def test_int_float_mismatch_suggests_conversion():
    err = type_error("(+ 1 2.5)")
    at(err, 1, 6)
    assert "int->float" in err.message
    assert re.search(r"\b\d+\.\d+\b", err.message), err.message
    assert "Float" in err.message and "Int" in err.message


def test_float_int_mismatch_suggests_conversion():
    err = type_error("(+ 2.5 1)")
    at(err, 1, 8)
    assert "int->float" in err.message or "1.0" in err.message


def test_monomorphic_primitive_argument_mismatch():
    err = type_error("(sqrt 2)")
    at(err, 1, 7)
    assert "int->float" in err.message
    err = type_error("(not 1)")
    at(err, 1, 6)
    assert "Bool" in err.message


def test_bool_is_not_a_number():
    err = type_error("(+ 1 #t)")
    at(err, 1, 6)
    assert "Bool" in err.message


def test_mod_hint_does_not_suggest_a_float():
    err = type_error("(mod 7 2.0)")
    at(err, 1, 8)
    assert "7.0" not in err.message


@pytest.mark.parametrize("source", ["(< #t #f)", "(t-app + Int)", "(array (2) + sqrt)"])
def test_messages_do_not_show_internal_unknowns(source):
    err = type_error(source)
    assert "?" not in err.message, err.message


# ---------------------------------------------------------------------------
# T-ARRAY and T-EMPTYARRAY


def test_t_array():
    assert check_type("(array (2 3) 1 2 3 4 5 6)") == "(Arr Int (Shp 2 3))"
    assert check_type("(array () 5)") == SCALAR_INT
    assert check_type("(array (1 1) 2.5)") == "(Arr Float (Shp 1 1))"
    assert check_type("[#t #f]") == "(Arr Bool (Shp 2))"
    assert check_type("[[1 2] [3 4] [5 6]]") == "(Arr Int (Shp 3 2))"


def test_t_array_of_functions():
    assert check_type("[(λ ((x [Int])) x) (λ ((y [Int])) (+ y 1))]") == (
        "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp 2))"
    )


def test_t_array_mixed_atom_types():
    err = type_error("[1 2.5]")
    at(err, 1, 4)
    assert "mixed atom types" in err.message and "Int" in err.message and "Float" in err.message


def test_t_array_mixed_atom_types_nested():
    err = type_error("[[1 2] [3.0 4.0]]")
    at(err, 1, 9)
    assert "Int" in err.message and "Float" in err.message


def test_t_array_mixed_function_types():
    err = type_error("(array (2) (λ ((x [Int])) x) (λ ((x [Int 2])) x))")
    at(err, 1, 30)
    assert "atom" in err.message


@pytest.mark.parametrize(
    "source,count,need",
    [("(array (2 2) 1 2 3)", 3, 4), ("(array (2) 1 2 3)", 3, 2), ("(array () 1 2)", 2, 1), ("(array (1 3) 1 2)", 2, 3)],
)
def test_t_array_atom_count(source, count, need):
    err = type_error(source)
    at(err, 1, 1)
    assert f"has {count} atoms" in err.message and str(need) in err.message


def test_t_emptyarray():
    assert check_type("(array (0 3) Int)") == "(Arr Int (Shp 0 3))"
    assert check_type("(array (3 0) Bool)") == "(Arr Bool (Shp 3 0))"
    assert check_type("(array (0) (-> ((Arr Int (Shp))) (Arr Int (Shp))))") == (
        "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp 0))"
    )
    assert check_type("(Tλ ((t Atom)) (array (0) t))") == "(Arr (Forall ((t Atom)) (Arr t (Shp 0))) (Shp))"


def test_t_emptyarray_needs_an_atom_type():
    err = type_error("(array (0) (Arr Int (Shp)))")
    at(err, 1, 12)
    assert "Atom type" in err.message


def test_t_emptyarray_unbound_type():
    err = type_error("(array (0) t)")
    at(err, 1, 12)
    assert "unbound type variable" in err.message


def test_empty_literal_with_nonzero_shape():
    err = check_error("(array (2) Int)", RemoraSyntaxError)
    at(err, 1, 12)
    assert "0" in err.message


# ---------------------------------------------------------------------------
# T-FRAME and T-EMPTYFRAME


def test_t_frame():
    assert check_type("(frame (2) [1 2] [3 4])") == "(Arr Int (Shp 2 2))"
    assert check_type("(frame (3) 1 2 3)") == "(Arr Int (Shp 3))"
    assert check_type("(frame () [1 2])") == "(Arr Int (Shp 2))"
    assert check_type("(frame (1) (frame (1) 1))") == "(Arr Int (Shp 1 1))"
    assert check_type("(define x [1 2])\n(define y [3 4])\n[x y x]") == "(Arr Int (Shp 3 2))"


def test_t_frame_of_computed_cells():
    assert check_type("(frame (2 1) (+ [1 2] 1) [5 6])") == "(Arr Int (Shp 2 1 2))"


def test_t_frame_cell_shapes_differ():
    err = type_error("(frame (2) [1 2] [3 4 5])")
    at(err, 1, 18)
    assert "(Arr Int (Shp 2))" in err.message and "(Arr Int (Shp 3))" in err.message


def test_t_frame_ragged_brackets():
    err = type_error("[[1 2] [3 4] [5]]")
    at(err, 1, 14)
    assert "cell 3" in err.message


def test_t_frame_cell_atom_types_differ():
    err = type_error("(frame (2) [1 2] [3.0 4.0])")
    at(err, 1, 18)
    assert "Float" in err.message


def test_t_frame_cell_count():
    err = type_error("(frame (2 2) [1] [2] [3])")
    at(err, 1, 1)
    assert "3 cells" in err.message and "4" in err.message


def test_t_frame_cells_differ_with_index_variable_counterexample():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n))) (y (Arr Int (Shp 3)))) (frame (2) x y)))")
    at(err, 1, 77)
    assert "(Shp n)" in err.message and "(Shp 3)" in err.message
    assert re.search(r"when n = \d+", err.message)


def test_t_emptyframe():
    assert check_type("(frame (0) (Arr Int (Shp 3)))") == "(Arr Int (Shp 0 3))"
    assert check_type("(frame (0 2) (Arr Float (Shp)))") == "(Arr Float (Shp 0 2))"
    assert check_type("(frame (0) [Int 3])") == "(Arr Int (Shp 0 3))"


def test_t_emptyframe_needs_an_array_type():
    err = type_error("(frame (0) Int)")
    at(err, 1, 12)
    assert "Array type" in err.message


def test_empty_frame_with_nonzero_shape():
    err = check_error("(frame (2) (Arr Int (Shp)))", RemoraSyntaxError)
    at(err, 1, 12)


# ---------------------------------------------------------------------------
# T-LAM


def test_t_lam():
    assert check_type("(λ ((x [Int 2])) [1 2 3])") == "(Arr (-> ((Arr Int (Shp 2))) (Arr Int (Shp 3))) (Shp))"
    assert check_type("(lambda ((x [Int]) (y [Float])) y)") == (
        "(Arr (-> ((Arr Int (Shp)) (Arr Float (Shp))) (Arr Float (Shp))) (Shp))"
    )
    assert check_type("(λ () 1)") == "(Arr (-> () (Arr Int (Shp))) (Shp))"


def test_t_lam_body_sees_parameters():
    assert check_type("(λ ((x [Int 3]) (y [Int])) (+ x y))") == (
        "(Arr (-> ((Arr Int (Shp 3)) (Arr Int (Shp))) (Arr Int (Shp 3))) (Shp))"
    )


def test_t_lam_body_error_is_located_inside():
    err = type_error("(λ ((x [Int]))\n  (+ x 1.5))")
    at(err, 2, 8)


def test_define_function_form():
    assert check_type("(define (f (x [Int 3])) (+ x 1))\n(f [[1 2 3] [4 5 6]])") == "(Arr Int (Shp 2 3))"


# ---------------------------------------------------------------------------
# T-TLAM


def test_t_tlam():
    assert check_type("(Tλ ((t Atom)) (λ ((x (Arr t (Shp)))) x))") == (
        "(Arr (Forall ((t Atom)) (Arr (-> ((Arr t (Shp))) (Arr t (Shp))) (Shp))) (Shp))"
    )
    assert check_type("(t-lambda ((t Atom) (u Atom)) [1 2])") == "(Arr (Forall ((t Atom) (u Atom)) (Arr Int (Shp 2))) (Shp))"
    assert check_type("(Tλ ((t Atom)) (Tλ ((u Atom)) 1))") == (
        "(Arr (Forall ((t Atom)) (Arr (Forall ((u Atom)) (Arr Int (Shp))) (Shp))) (Shp))"
    )


def test_t_tlam_body_may_be_a_variable():
    assert check_type("(define v [1 2])\n(Tλ ((t Atom)) v)") == "(Arr (Forall ((t Atom)) (Arr Int (Shp 2))) (Shp))"


@pytest.mark.parametrize(
    "source,col",
    [
        ("(Tλ ((t Atom)) (+ 1 2))", 16),
        ("(Tλ ((t Atom)) (frame (1) 1))", 16),
        ("(Tλ ((t Atom)) [1 (+ 1 1)])", 16),
        ("(Tλ ((t Atom)) (t-app f Int))", 16),
    ],
)
def test_t_tlam_body_must_be_a_value(source, col):
    err = type_error(source)
    at(err, 1, col)
    assert "value" in err.message and "Tλ" in err.message


# ---------------------------------------------------------------------------
# T-ILAM


def test_t_ilam():
    assert check_type("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x))") == (
        "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Int (Shp n))) (Arr Int (Shp n))) (Shp))) (Shp))"
    )
    assert check_type("(i-lambda ((s Shape)) (λ ((x [Float s])) x))") == (
        "(Arr (Pi ((s Shape)) (Arr (-> ((Arr Float s)) (Arr Float s)) (Shp))) (Shp))"
    )
    assert check_type("(Iλ ((n Dim)) (array (0) Int))") == "(Arr (Pi ((n Dim)) (Arr Int (Shp 0))) (Shp))"


def test_t_ilam_body_may_be_a_box():
    assert check_type(f"(Iλ ((m Dim)) (box 1 [1] {VEC}))") == f"(Arr (Pi ((m Dim)) (Arr {VEC} (Shp))) (Shp))"


def test_t_ilam_body_must_be_a_value():
    err = type_error("(Iλ ((n Dim)) ((λ ((x [Int])) x) 1))")
    at(err, 1, 15)
    assert "value" in err.message and "Iλ" in err.message


def test_t_ilam_box_body_with_computation_is_not_a_value():
    err = type_error("(Iλ ((n Dim)) (box 1 (+ [1] 1) (Sigma ((k Dim)) (Arr Int (Shp k)))))")
    at(err, 1, 15)


# ---------------------------------------------------------------------------
# T-APP


def test_t_app_lifting_scalar_over_matrix():
    assert check_type("(+ [[1 2 3] [4 5 6]] [10 20])") == "(Arr Int (Shp 2 3))"


def test_t_app_simple():
    assert check_type("(+ 1 2)") == SCALAR_INT
    assert check_type("((λ ((x [Int 3])) x) [1 2 3])") == "(Arr Int (Shp 3))"
    assert check_type("((λ () 1))") == SCALAR_INT


def test_t_app_cells_and_frames():
    assert check_type("((λ ((x [Int 3]) (y [Int])) (+ x y)) [[1 2 3] [4 5 6]] [7 8])") == "(Arr Int (Shp 2 3))"
    assert check_type("((t-app (i-app head 2 (Shp 2)) Num) [[[1 2] [3 4] [5 6]] [[1 2] [3 4] [5 6]]])") == (
        "(Arr Int (Shp 2 2))"
    )


def test_t_app_function_frame():
    assert check_type("((array (2) + -) [[1 2] [3 4]] [10 20])") == "(Arr Int (Shp 2 2))"


def test_t_app_frames_not_prefix_compatible():
    err = type_error("(+ [1 2 3] [4 5])")
    at(err, 1, 12)
    assert "(Shp 3)" in err.message and "(Shp 2)" in err.message
    assert "prefix" in err.message


def test_t_app_function_frame_not_prefix_compatible():
    err = type_error("([+ -] 10 [1 2 3])")
    at(err, 1, 11)
    assert "(Shp 2)" in err.message and "(Shp 3)" in err.message


def test_t_app_frames_incompatible_after_cells():
    err = type_error("((λ ((x [Int 3]) (y [Int])) (+ x y)) [[1 2 3] [4 5 6]] [7 8 9])")
    at(err, 1, 56)
    assert "(Shp 2)" in err.message and "(Shp 3)" in err.message


def test_t_app_cell_shape_not_a_suffix():
    err = type_error("((λ ((x [Int 2])) x) [1 2 3])")
    at(err, 1, 22)
    assert "(Shp 2)" in err.message and "(Shp 3)" in err.message and "suffix" in err.message


def test_t_app_cell_of_higher_rank_than_argument():
    err = type_error("((t-app (i-app head 2 (Shp 2)) Int) [1 2 3])")
    at(err, 1, 37)
    assert "(Shp 3 2)" in err.message and "suffix" in err.message and "head" in err.message


def test_t_app_not_a_suffix_with_counterexample():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) ((t-app (i-app head n (Shp)) Int) x)))")
    assert "(Shp (+ n 1))" in err.message and "suffix" in err.message
    assert re.search(r"when n = \d+", err.message)


def test_t_app_non_function_in_function_position():
    err = type_error("(1 2)")
    at(err, 1, 2)
    assert "function" in err.message and "(Arr Int (Shp))" in err.message


def test_t_app_box_in_function_position():
    err = type_error("((iota/v 3) 1)")
    at(err, 1, 2)
    assert "function" in err.message


def test_t_app_wrong_argument_count():
    err = type_error("((λ ((x [Int])) x) 1 2)")
    at(err, 1, 1)
    assert "1 argument" in err.message and "given 2" in err.message
    err = type_error("(+ 1)")
    assert "2 arguments" in err.message


def test_t_app_argument_atom_type_mismatch():
    err = type_error("((λ ((x [Bool 2])) x) [1 2])")
    at(err, 1, 23)
    assert "Int" in err.message and "Bool" in err.message


def test_t_app_array_type_variable_result_cannot_be_lifted():
    err = type_error("(Tλ ((T Array)) (λ ((f (Arr (-> (T) T) (Shp 2))) (x T)) (f x)))")
    at(err, 1, 57)
    assert "T" in err.message


def test_t_app_array_type_variable_parameter():
    assert check_type("(Tλ ((T Array)) (λ ((f (Arr (-> (T) T) (Shp))) (x T)) (f x)))") == (
        "(Arr (Forall ((T Array)) (Arr (-> ((Arr (-> (T) T) (Shp)) T) T) (Shp))) (Shp))"
    )


# ---------------------------------------------------------------------------
# T-TAPP


def test_t_tapp():
    assert check_type("(t-app (Tλ ((t Atom)) (λ ((x (Arr t (Shp)))) x)) Float)") == (
        "(Arr (-> ((Arr Float (Shp))) (Arr Float (Shp))) (Shp))"
    )
    assert check_type("(t-app (Tλ ((T Array)) (λ ((x T)) x)) [Float 2])") == (
        "(Arr (-> ((Arr Float (Shp 2))) (Arr Float (Shp 2))) (Shp))"
    )


def test_t_tapp_primitive_after_i_app():
    assert check_type("(t-app (i-app head 1 (Shp)) Num)") == "(Arr (-> ((Arr Int (Shp 2))) (Arr Int (Shp))) (Shp))"
    assert check_type("(t-app (i-app fold 3 (Shp)) Int (Arr Int (Shp)))") == (
        "(Arr (-> ((Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp)) (Arr Int (Shp))"
        " (Arr Int (Shp 3))) (Arr Int (Shp))) (Shp))"
    )


def test_t_tapp_over_a_frame_of_type_abstractions():
    source = "(t-app (array (2) (Tλ ((t Atom)) (λ ((x (Arr t (Shp)))) x)) (Tλ ((u Atom)) (λ ((x (Arr u (Shp)))) x))) Int)"
    assert check_type(source) == "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp 2))"


def test_t_tapp_wrong_kind():
    err = type_error("(t-app (i-app head 1 (Shp)) (Arr Int (Shp)))")
    at(err, 1, 29)
    assert "kind" in err.message and "Array" in err.message and "Atom" in err.message


def test_t_tapp_atom_for_array_variable():
    err = type_error("(t-app (i-app fold 3 (Shp)) Int Int)")
    at(err, 1, 33)
    assert "`T`" in err.message and "Array" in err.message


@pytest.mark.parametrize("types,given", [("Int Int", 2), ("", 0)])
def test_t_tapp_wrong_number_of_types(types, given):
    err = type_error(f"(t-app (i-app head 1 (Shp)) {types})")
    at(err, 1, 1)
    assert f"supplies {given}" in err.message and "binds 1" in err.message


def test_t_tapp_on_a_non_abstraction():
    err = type_error("(t-app (λ ((x [Int])) x) Int)")
    at(err, 1, 8)
    assert "Forall" in err.message


def test_t_tapp_before_i_app():
    err = type_error("(t-app head Int)")
    at(err, 1, 8)
    assert "i-app" in err.message


def test_t_tapp_unbound_type_argument():
    err = type_error("(t-app (i-app head 1 (Shp)) q)")
    at(err, 1, 29)
    assert "unbound" in err.message


# ---------------------------------------------------------------------------
# T-IAPP


def test_t_iapp():
    assert check_type("(i-app (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x)) 3)") == (
        "(Arr (-> ((Arr Int (Shp 3))) (Arr Int (Shp 3))) (Shp))"
    )
    assert check_type("((i-app (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x)) 3) [1 2 3])") == "(Arr Int (Shp 3))"
    assert check_type("(i-app head (+ 1 1) (Shp))") == (
        "(Arr (Forall ((t Atom)) (Arr (-> ((Arr t (Shp 3))) (Arr t (Shp))) (Shp))) (Shp))"
    )


def test_t_iapp_shape_argument():
    assert check_type("((i-app iota/s (Shp 2 3)))") == "(Arr Int (Shp 2 3))"
    assert check_type("(Iλ ((s Shape)) (λ ((z [Int])) (i-app head 1 s)))") == (
        "(Arr (Pi ((s Shape)) (Arr (-> ((Arr Int (Shp))) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t (++ (Shp 2) s)))"
        " (Arr t s)) (Shp))) (Shp))) (Shp))) (Shp))"
    )


def test_t_iapp_over_a_frame():
    source = "(i-app [(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x)) (Iλ ((m Dim)) (λ ((x (Arr Int (Shp m)))) x))] 4)"
    assert check_type(source) == "(Arr (-> ((Arr Int (Shp 4))) (Arr Int (Shp 4))) (Shp 2))"


def test_t_iapp_then_wrong_argument():
    err = type_error("((i-app (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x)) 3) [1 2])")
    at(err, 1, 57)
    assert "(Shp 3)" in err.message and "(Shp 2)" in err.message


def test_t_iapp_wrong_sort_dim_for_shape():
    err = type_error("(i-app iota/s 3)")
    at(err, 1, 15)
    assert "sort" in err.message and "Dim" in err.message and "Shape" in err.message


def test_t_iapp_wrong_sort_shape_for_dim():
    err = type_error("(i-app head (Shp 1) (Shp))")
    at(err, 1, 13)
    assert "Shape" in err.message and "Dim" in err.message


@pytest.mark.parametrize("indices,given", [("1", 1), ("1 (Shp) 2", 3), ("", 0)])
def test_t_iapp_wrong_number_of_indices(indices, given):
    err = type_error(f"(i-app head {indices})")
    at(err, 1, 1)
    assert f"supplies {given}" in err.message and "binds 2" in err.message


def test_t_iapp_on_a_non_abstraction():
    err = type_error("(i-app + 1)")
    at(err, 1, 8)
    assert "Pi" in err.message


def test_t_iapp_on_a_type_abstraction():
    err = type_error("(i-app (Tλ ((t Atom)) (λ ((x (Arr t (Shp)))) x)) 1)")
    at(err, 1, 8)
    assert "t-app" in err.message


def test_t_iapp_unbound_index():
    err = type_error("(i-app iota/s (Shp n))")
    at(err, 1, 20)
    assert "unbound" in err.message


# ---------------------------------------------------------------------------
# T-BOX


def test_t_box():
    assert check_type(f"(box 3 [1 2 3] {VEC})") == f"(Arr {VEC} (Shp))"
    assert check_type("(box (Shp 2 2) [[1 2] [3 4]] (Sigma ((s Shape)) (Arr Int s)))") == (
        "(Arr (Sigma ((s Shape)) (Arr Int s)) (Shp))"
    )
    assert check_type("(box 2 3 [[1 2 3] [4 5 6]] (Sigma ((p Dim) (q Dim)) (Arr Int (Shp p q))))") == (
        "(Arr (Sigma ((p Dim) (q Dim)) (Arr Int (Shp p q))) (Shp))"
    )


def test_t_box_with_arithmetic_index():
    assert check_type("(box (+ 1 2) [1 2 3] (Sigma ((n Dim)) (Arr Int (Shp n))))") == f"(Arr {VEC} (Shp))"


def test_t_box_array_of_boxes():
    assert check_type(f"[(box 1 [1] {VEC}) (box 2 [1 2] {VEC})]") == f"(Arr {VEC} (Shp 2))"


def test_t_box_with_index_variable():
    assert check_type("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) (box n x (Sigma ((k Dim)) (Arr Int (Shp k))))))") == (
        "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Int (Shp n))) (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp))) (Shp)))"
        " (Shp))"
    )


def test_t_box_body_does_not_match_sigma():
    err = type_error(f"(box 2 [1 2 3] {VEC})")
    at(err, 1, 8)
    assert "(Arr Int (Shp 3))" in err.message and "(Arr Int (Shp 2))" in err.message
    assert "n = 2" in err.message


def test_t_box_body_atom_type_does_not_match_sigma():
    err = type_error(f"(box 2 [1.0 2.0] {VEC})")
    at(err, 1, 8)
    assert "Float" in err.message and "Int" in err.message


def test_t_box_body_mismatch_with_counterexample():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) (box (+ n 1) x (Sigma ((k Dim)) (Arr Int (Shp k))))))")
    at(err, 1, 55)
    assert "(Shp n)" in err.message and "(Shp (+ n 1))" in err.message
    assert re.search(r"when n = \d+", err.message)


def test_t_box_wrong_index_sort():
    err = type_error(f"(box (Shp 2) [1 2] {VEC})")
    at(err, 1, 6)
    assert "Dim" in err.message and "Shape" in err.message


def test_t_box_wrong_number_of_indices():
    err = type_error(f"(box 2 3 [1 2] {VEC})")
    at(err, 1, 1)
    assert "2" in err.message and "1" in err.message


def test_t_box_annotation_must_be_sigma():
    err = type_error("(box 2 [1 2] (Arr Int (Shp 2)))")
    at(err, 1, 14)
    err = type_error("(box [1 2] (-> () (Arr Int (Shp 2))))")
    at(err, 1, 12)
    assert "Sigma" in err.message


# ---------------------------------------------------------------------------
# T-UNBOX


def test_t_unbox():
    assert check_type("(unbox (n x (iota/v 5)) ((t-app (i-app length n (Shp)) Int) x))") == SCALAR_INT


def test_t_unbox_rebox():
    assert check_type("(unbox (n x (iota/v 5)) (box n x (Sigma ((m Dim)) (Arr Int (Shp m)))))") == (
        "(Arr (Sigma ((m Dim)) (Arr Int (Shp m))) (Shp))"
    )


def test_t_unbox_frame_of_boxes():
    assert check_type("(unbox (n x (frame (2) (iota/v 5) (iota/v 3))) ((t-app (i-app length n (Shp)) Int) x))") == (
        "(Arr Int (Shp 2))"
    )
    assert check_type(f"(unbox (n x [(box 1 [1] {VEC}) (box 2 [1 2] {VEC})]) ((t-app (i-app length n (Shp)) Int) x))") == (
        "(Arr Int (Shp 2))"
    )


def test_t_unbox_shape_variable():
    # iota/w's Forall is under its Pi: i-app, then t-app.
    source = "(unbox (s x (box (Shp 2 3) [[1 2 3] [4 5 6]] (Sigma ((s Shape)) (Arr Int s)))) (box s ((t-app (i-app iota/w s) Int) x) (Sigma ((r Shape)) (Arr Int r))))"
    assert check_type(source) == "(Arr (Sigma ((r Shape)) (Arr Int r)) (Shp))"


def test_t_unbox_paper_sum_example():
    source = (
        "(λ ((n (Arr Num (Shp))))\n"
        "  (unbox (len nums (iota/v n))\n"
        "    ((t-app (i-app reduce len (Shp)) Num)\n"
        "     +\n"
        "     ((t-app (i-app append 1 len (Shp)) Num) (array (1) 0) nums))))"
    )
    assert check_type(source) == INT_TO_INT


def test_t_unbox_escaping_existential():
    err = type_error("(unbox (n x (iota/v 5)) x)")
    at(err, 1, 25)
    assert "n" in err.message and "(Arr Int (Shp n))" in err.message


def test_t_unbox_escaping_existential_in_function_type():
    err = type_error("(unbox (n x (iota/v 5)) (λ ((y (Arr Int (Shp n)))) 1))")
    at(err, 1, 25)
    assert "mentions n" in err.message


def test_t_unbox_existential_does_not_escape_through_an_overloaded_primitive():
    source = (
        "(let ((s select))\n"
        "  (let ((u (unbox (n x (iota/v 3))\n"
        "             ((s #t (λ ((y (Arr Int (Shp n)))) 1) (λ ((y (Arr Int (Shp n)))) 2)) x))))\n"
        "    s))"
    )
    # The final type would mention n, bound only inside the unbox.
    type_error(source)


def test_t_unbox_not_a_box():
    err = type_error("(unbox (n x 5) x)")
    at(err, 1, 13)
    assert "box" in err.message and "Sigma" in err.message


def test_t_unbox_wrong_number_of_index_names():
    err = type_error("(unbox (n m x (iota/v 5)) x)")
    at(err, 1, 1)
    assert "2" in err.message and "1" in err.message


def test_t_unbox_index_variable_has_the_sigma_sort():
    err = type_error("(unbox (n x (iota/v 5)) (i-app iota/s n))")
    at(err, 1, 39)
    assert "Dim" in err.message and "Shape" in err.message


# ---------------------------------------------------------------------------
# T-EQV (Fig. 8)


def test_t_eqv_index_arithmetic():
    assert check_type("((λ ((x (Arr Int (Shp (+ 1 5))))) x) (array (6) 1 2 3 4 5 6))") == "(Arr Int (Shp 6))"


def test_t_eqv_append_of_shapes():
    assert check_type("((λ ((x (Arr Int (++ (Shp 2) (Shp 3))))) x) [[1 2 3] [4 5 6]])") == "(Arr Int (Shp 2 3))"


def test_t_eqv_with_variables():
    assert check_type("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp (+ n n))))) ((λ ((y (Arr Int (Shp (+ n 0 n))))) y) x)))") == (
        "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Int (Shp (+ n n)))) (Arr Int (Shp (+ n n)))) (Shp))) (Shp))"
    )


def test_t_eqv_alpha_forall():
    source = (
        "((λ ((f (Arr (Forall ((a Atom)) (Arr (-> ((Arr a (Shp))) (Arr a (Shp))) (Shp))) (Shp)))) f)"
        " (Tλ ((b Atom)) (λ ((x (Arr b (Shp)))) x)))"
    )
    assert check_type(source) == "(Arr (Forall ((a Atom)) (Arr (-> ((Arr a (Shp))) (Arr a (Shp))) (Shp))) (Shp))"


def test_t_eqv_alpha_pi():
    source = (
        "((λ ((f (Arr (Pi ((m Dim)) (Arr (-> ((Arr Int (Shp m))) (Arr Int (Shp m))) (Shp))) (Shp)))) f)"
        " (Iλ ((n Dim)) (λ ((x (Arr Int (Shp n)))) x)))"
    )
    assert check_type(source) == "(Arr (Pi ((m Dim)) (Arr (-> ((Arr Int (Shp m))) (Arr Int (Shp m))) (Shp))) (Shp))"


def test_t_eqv_alpha_sigma():
    assert check_type("((λ ((b (Arr (Sigma ((m Dim)) (Arr Int (Shp m))) (Shp)))) b) (iota/v 5))") == (
        "(Arr (Sigma ((m Dim)) (Arr Int (Shp m))) (Shp))"
    )
    source = (
        "((λ ((b (Arr (Sigma ((p Dim) (q Dim)) (Arr Int (Shp p q))) (Shp)))) b)"
        " (box 2 3 [[1 2 3] [4 5 6]] (Sigma ((x Dim) (y Dim)) (Arr Int (Shp x y)))))"
    )
    assert check_type(source) == "(Arr (Sigma ((p Dim) (q Dim)) (Arr Int (Shp p q))) (Shp))"


def test_t_eqv_frame_cells_alpha_equivalent():
    source = (
        "[(box 1 [1] (Sigma ((a Dim)) (Arr Int (Shp a))))"
        " (box 2 [1 2] (Sigma ((b Dim)) (Arr Int (Shp b))))]"
    )
    assert check_type(source) == "(Arr (Sigma ((a Dim)) (Arr Int (Shp a))) (Shp 2))"


def test_t_eqv_sigma_binder_order_matters():
    source = (
        "((λ ((b (Arr (Sigma ((p Dim) (q Dim)) (Arr Int (Shp p q))) (Shp)))) b)"
        " (box 3 2 [[1 2 3] [4 5 6]] (Sigma ((q Dim) (p Dim)) (Arr Int (Shp p q)))))"
    )
    err = type_error(source)
    at(err, 1, 72)
    assert "Sigma" in err.message


def test_t_eqv_forall_body_differs():
    source = (
        "((λ ((f (Arr (Forall ((a Atom)) (Arr (-> ((Arr a (Shp))) (Arr a (Shp))) (Shp))) (Shp)))) f)"
        " (Tλ ((b Atom)) (λ ((x (Arr Int (Shp)))) x)))"
    )
    err = type_error(source)
    at(err, 1, 93)
    assert "Forall" in err.message


def test_t_eqv_forall_kinds_differ():
    source = "((λ ((f (Arr (Forall ((a Atom)) (Arr Int (Shp))) (Shp)))) f) (Tλ ((b Array)) 1))"
    err = type_error(source)
    at(err, 1, 62)


def test_t_eqv_pi_sorts_differ():
    source = (
        "((λ ((f (Arr (Pi ((m Dim)) (Arr (-> ((Arr Int (Shp m))) (Arr Int (Shp m))) (Shp))) (Shp)))) f)"
        " (Iλ ((n Shape)) (λ ((x (Arr Int n))) x)))"
    )
    err = type_error(source)
    at(err, 1, 96)
    assert "Pi" in err.message


def test_t_eqv_shapes_really_differ():
    err = type_error("((λ ((x (Arr Int (Shp (+ 1 5))))) x) (array (5) 1 2 3 4 5))")
    assert "(Shp 6)" in err.message and "(Shp 5)" in err.message


def test_t_eqv_shape_order_matters_counterexample():
    err = type_error("(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n 3)))) ((λ ((y (Arr Int (Shp 3 n)))) y) x)))")
    at(err, 1, 77)
    assert "(Shp n 3)" in err.message and "(Shp 3 n)" in err.message
    assert re.search(r"when n = \d+", err.message)


# ---------------------------------------------------------------------------
# Printing of bound variables


def test_printed_type_keeps_free_and_bound_variables_apart():
    printed = check_type("(Iλ ((k Dim)) (λ ((z [Int])) (i-app filter 3 (Shp k))))")
    assert "(Shp k k)" not in printed


def test_printed_type_reads_back_equivalently():
    source = "(Iλ ((n Dim)) (λ ((z [Int])) (i-app (Iλ ((m Dim)) (λ ((f (Arr (Sigma ((n Dim)) (Arr Int (Shp n m))) (Shp)))) f)) n)))"
    printed = check_type(source)
    # Feeding the printed type back as an annotation must describe the same function.
    assert check_type(f"((λ ((g {printed})) g) {source})") == printed
