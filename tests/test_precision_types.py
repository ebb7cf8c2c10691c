"""`Float32` and `Int32` in the checker (contract §10, decisions.md D56): kinding, overloading,
weak literals, conversions, the `Numeric`/`Floating` kinds, and the messages that name a
conversion.  Values are tested in test_precision_values.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import check_error, check_type, check_types
from remora.atoms import NUMBERS, conversions, round_to_float32
from remora.errors import RemoraTypeError
from remora.interfaces.session import Session
from remora.statics import infer
from remora.statics.typed import show_form

F32 = "(Arr (-> ((Arr Float32 (Shp 3))) (Arr Float32 (Shp 3))) (Shp))"


def type_error(source: str) -> RemoraTypeError:
    return check_error(source, RemoraTypeError)  # type: ignore[return-value]


def at(err, line, col):
    assert (err.line, err.column) == (line, col), f"{err.line}:{err.column}: {err.message}"


# --- kinding and base types -------------------------------------------------------------------


def test_the_new_base_types_are_atoms_and_print_as_written():
    assert check_type("(λ ((x [Float32 3])) x)") == F32
    assert check_type("(λ ((x (Arr Int32 (Shp 2)))) x)") == "(Arr (-> ((Arr Int32 (Shp 2))) (Arr Int32 (Shp 2))) (Shp))"
    assert check_type("(array (0) Float32)") == "(Arr Float32 (Shp 0))"
    err = type_error("(λ ((x Float32)) x)")  # (a bare atom type is not an array type)
    assert "Array type" in err.message


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "min", "max", "expt"])
@pytest.mark.parametrize("atom", ["Int32", "Float32"])
def test_every_overloaded_arithmetic_primitive_takes_them(op, atom):
    assert check_type(f"(λ ((a [{atom}]) (b [{atom}])) ({op} a b))").endswith(f"(Arr {atom} (Shp))) (Shp))")


@pytest.mark.parametrize("op", ["sqrt", "exp", "log", "sin", "cos", "tan", "atan", "neg", "abs"])
def test_the_floating_point_functions_take_float32(op):
    assert check_type(f"(λ ((a [Float32 4])) ({op} a))") == (
        "(Arr (-> ((Arr Float32 (Shp 4))) (Arr Float32 (Shp 4))) (Shp))"
    )


def test_mod_takes_int32_and_comparisons_give_bool():
    assert check_type("(λ ((a [Int32]) (b [Int32])) (mod a b))").endswith("(Arr Int32 (Shp))) (Shp))")
    assert check_type("(λ ((a [Float32]) (b [Float32])) (< a b))").endswith("(Arr Bool (Shp))) (Shp))")
    assert check_type("(λ ((a [Int32]) (b [Int32])) (= a b))").endswith("(Arr Bool (Shp))) (Shp))")
    assert "works on Int or Int32" in type_error("(λ ((a [Float32])) (mod a a))").message


def test_array_primitives_take_them_like_any_atom_type():
    assert check_types(
        "(define (f (x [Float32 4])) (sort (reverse x)))\n(define (g (x [Int32 2 3])) (reduce + x))"
    ) == [
        "(Arr (-> ((Arr Float32 (Shp 4))) (Arr Float32 (Shp 4))) (Shp))",
        "(Arr (-> ((Arr Int32 (Shp 2 3))) (Arr Int32 (Shp 3))) (Shp))",
    ]


# --- weak literals ------------------------------------------------------------------------------


def test_a_literal_takes_its_type_from_the_other_operands():
    assert check_type("(λ ((x [Float32 3])) (+ x 1.5))") == F32
    assert check_type("(λ ((x [Float32 3])) (+ 1.5 x))") == F32
    assert check_type("(λ ((x [Int32 3])) (* 2 (- x 1)))") == (
        "(Arr (-> ((Arr Int32 (Shp 3))) (Arr Int32 (Shp 3))) (Shp))"
    )


def test_a_literal_takes_its_type_from_what_is_expected_of_it():
    assert check_type("((λ ((x [Float32 3])) x) [1.0 2.0 3.0])") == "(Arr Float32 (Shp 3))"
    assert check_type("((t-app (i-app head 1 (Shp)) Int32) [7 8])") == "(Arr Int32 (Shp))"
    assert check_type("(λ ((x [Float32])) (if (> x 0.0) x 0.5))").endswith("(Arr Float32 (Shp))) (Shp))")
    assert check_type("(λ ((x [Float32])) (let ((half 0.5)) (* x half)))").endswith("(Arr Float32 (Shp))) (Shp))")


def test_a_bracket_literal_is_one_weak_type():
    assert check_type("(λ ((m [Float32 2 2])) (+ m [[1.0 2.0] [3.0 4.0]]))").endswith("(Arr Float32 (Shp 2 2))) (Shp))")


def test_a_literal_nothing_asks_for_is_int_or_float():
    assert check_types("1\n2.5\n(define x 1.5)\n[1 2]") == ["(Arr Int (Shp))", "(Arr Float (Shp))", "(Arr Float (Shp))",
                                                            "(Arr Int (Shp 2))"]
    err = type_error("(define x 1.5)\n(λ ((y [Float32])) (+ y x))")  # (settled at the end of its own form)
    assert "float->float32" in err.message


def test_an_integer_literal_is_never_a_float_type():
    err = type_error("(λ ((x [Float32 3])) (+ x 1))")
    at(err, 1, 27)
    assert "Float32" in err.message and "write 1.0" in err.message
    err = type_error("[1 2.5]")
    assert "mixed atom types" in err.message and "Int" in err.message and "Float" in err.message


def test_an_int32_literal_out_of_range_is_a_located_type_error():
    assert check_type("(λ ((x [Int32])) (+ x 2147483647))").endswith("(Arr Int32 (Shp))) (Shp))")
    assert check_type("(λ ((x [Int32])) (+ x -2147483648))").endswith("(Arr Int32 (Shp))) (Shp))")
    err = type_error("(λ ((x [Int32])) (+ x 2147483648))")
    at(err, 1, 23)
    assert "2147483648" in err.message and "Int32" in err.message and "int->int32" in err.message
    err = type_error("(λ ((x [Int32 3])) (+ x [1 2 -3000000000]))")
    at(err, 1, 30)


def test_a_float32_literal_too_large_is_a_located_type_error():
    assert check_type("(λ ((x [Float32])) (+ x 3.4028234e38))").endswith("(Arr Float32 (Shp))) (Shp))")
    err = type_error("(λ ((x [Float32])) (+ x 1e39))")
    at(err, 1, 25)
    assert "1e39" in err.message and "Float32" in err.message


def test_messages_show_an_unsettled_literal_as_its_default():
    err = type_error("(+ 1 2.5)")
    assert "has atom type Float, but `+` expects Int here" in err.message and "write 1.0" in err.message


# --- Float meeting Float32 names the conversion ------------------------------------------------


@pytest.mark.parametrize("a, b, fix", [
    ("Float32", "Float", "float->float32"), ("Float", "Float32", "float32->float"),
    ("Int32", "Int", "int->int32"), ("Int", "Int32", "int32->int"),
    ("Float32", "Int32", "int32->float32"), ("Int32", "Float32", "floor, ceiling, round or truncate"),
])
def test_two_numeric_types_meeting_is_an_error_naming_the_conversion(a, b, fix):
    err = type_error(f"(λ ((x [{a}]) (y [{b}])) (+ x y))")
    at(err, 1, len(f"(λ ((x [{a}]) (y [{b}])) (+ x ") + 1)
    assert f"has atom type {b}, but `+` expects {a} here" in err.message
    assert fix in err.message and "never converts implicitly" in err.message


def test_a_mismatch_found_by_inference_names_the_conversion():
    err = type_error("(λ ((x [Float32 3]) (y [Float 3])) (dot x y))")
    assert "float->float32" in err.message or "float32->float" in err.message


def test_a_function_expecting_float_given_float32_names_the_conversion():
    err = type_error("(define (f (x [Float 3])) x)\n(λ ((y [Float32 3])) (f y))")
    assert "Float32" in err.message and "float32->float" in err.message


# --- conversions -----------------------------------------------------------------------------


def test_every_conversion_primitive_has_its_type():
    for given, wanted in conversions():
        name = f"{NUMBERS[given].spelling}->{NUMBERS[wanted].spelling}"
        assert check_type(f"({name} (array (0) {given}))") == f"(Arr {wanted} (Shp 0))", name
    assert len(conversions()) == 8


def test_floor_family_result_is_as_wide_as_the_argument_unless_the_context_says():
    for op in ("floor", "ceiling", "round", "truncate"):
        assert check_type(f"(λ ((x [Float32])) ({op} x))").endswith("(Arr Int32 (Shp))) (Shp))")
        assert check_type(f"(λ ((x [Float])) ({op} x))").endswith("(Arr Int (Shp))) (Shp))")
    assert check_type("(floor 2.5)") == "(Arr Int (Shp))"
    assert check_type("(λ ((x [Float32])) (index [1 2 3] (floor x)))").endswith("(Arr Int (Shp))) (Shp))")
    assert check_type("(λ ((x [Float])) (+ (floor x) (int->int32 1)))").endswith("(Arr Int32 (Shp))) (Shp))")
    assert check_type("(λ ((x [Float32])) (+ 1 (floor x)))").endswith("(Arr Int32 (Shp))) (Shp))")


# --- Numeric and Floating: the prelude on the new types -----------------------------------------


@pytest.mark.parametrize("atom", ["Float32", "Int32"])
def test_the_numeric_prelude_works_on_the_new_types(atom):
    assert check_types(
        f"(define (f (v [{atom} 3]) (m [{atom} 3 3])) (+ (sum v) (+ (product v) (+ (maximum v) (dot v v)))))\n"
        f"(define (g (m [{atom} 3 3])) (matmul m m))"
    ) == [
        f"(Arr (-> ((Arr {atom} (Shp 3)) (Arr {atom} (Shp 3 3))) (Arr {atom} (Shp))) (Shp))",
        f"(Arr (-> ((Arr {atom} (Shp 3 3))) (Arr {atom} (Shp 3 3))) (Shp))",
    ]


def test_mean_is_floating():
    assert check_type("(λ ((v [Float32 3])) (mean v))").endswith("(Arr Float32 (Shp))) (Shp))")
    assert check_type("(mean [1.0 2.0])") == "(Arr Float (Shp))"
    assert "t is Float or Float32" in type_error("(mean [1 2])").message


def test_the_floating_kind():
    assert check_type("(Tλ ((t Floating)) (λ ((x [t])) (sqrt (* x 0.5))))") == (
        "(Arr (Forall ((t Floating)) (Arr (-> ((Arr t (Shp))) (Arr t (Shp))) (Shp))) (Shp))"
    )
    assert check_type("(t-app (Tλ ((t Floating)) (λ ((x [t])) x)) Float32)") == (
        "(Arr (-> ((Arr Float32 (Shp))) (Arr Float32 (Shp))) (Shp))"
    )
    for bad in ("Int", "Int32", "Bool"):
        err = type_error(f"(t-app (Tλ ((t Floating)) (λ ((x [t])) x)) {bad})")
        assert "kind Floating" in err.message
    # a Floating variable fits a Numeric one, not the other way round
    assert check_type("(Tλ ((t Floating)) (λ ((x [t 3])) (sum x)))").startswith("(Arr (Forall ((t Floating))")
    assert "sqrt" in type_error("(Tλ ((t Numeric)) (λ ((x [t])) (sqrt x)))").message


def test_numeric_takes_the_new_types():
    assert check_type("(t-app (Tλ ((t Numeric)) (λ ((x [t])) (+ x x))) Int32)") == (
        "(Arr (-> ((Arr Int32 (Shp))) (Arr Int32 (Shp))) (Shp))"
    )


# --- inference replays problems whose only unknowns are literals' (D41, D56) -------------------


@pytest.fixture
def searches(monkeypatch):
    from remora.interfaces.session import load_prelude

    load_prelude()
    count = [0]
    solve = infer.Application.solve

    def counted(self):
        count[0] += 1
        return solve(self)

    monkeypatch.setattr(infer.Application, "solve", counted)
    return count


def test_applications_to_literals_are_replayed_and_stay_weak(searches):
    session = Session()

    def explicit(source: str) -> str:
        return show_form(session.check_form(session.forms(source, "<test>")[0]))

    explicit("(define a (append [1 2] [[1 2] [3 4]]))")
    assert explicit("(define b (append [5 6] [[7 8] [9 0]]))") == (
        "(define b ((t-app (i-app append 2 2 (Shp)) Int) (array (2) 5 6) (array (2 2) 7 8 9 0)))"
    )
    assert searches[0] == 1  # (the second is the first replayed)
    c = explicit("(define (c (x [Int32 2 4])) (+ x (append [5 6] [[7 8] [9 0]])))")
    assert searches[0] == 1 and "((t-app (i-app append 2 2 (Shp)) Int32) (array (2) 5 6)" in c
    assert str(session.checker.globals["c"].type) == "(Arr (-> ((Arr Int32 (Shp 2 4))) (Arr Int32 (Shp 2 4))) (Shp))"


# --- Float32 literals round from the decimal written ---------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32), st.integers(-3, 3))
def test_a_float32_literal_is_the_nearest_float32(x, shift):
    assert round_to_float32(repr(float(x))) == x  # (a float32's own shortest text reads back as it)
    value = float(x) * (1 + shift * 2.0**-26)  # (mostly between two float32s)
    if abs(value) < 3.4e38:  # NumPy rounds a float64 (an exact rational) to the nearest float32
        assert round_to_float32(str(Fraction(value))) == float(np.float32(value))


def test_a_float32_literal_is_rounded_once_from_its_decimal():
    # 1 + 2**-24 + 2**-60: its nearest float64 is the midpoint 1 + 2**-24, which rounds to 1.0 (ties to
    # even); the number itself is above the midpoint, so its nearest float32 is 1 + 2**-23
    exact = Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**60)
    text = f"{exact.numerator * 10**60 // exact.denominator}e-60"
    assert float(np.float32(float(text))) == 1.0
    assert round_to_float32(text) == 1 + 2**-23
    assert round_to_float32("1e39") is None and round_to_float32("-0.0") == 0.0


def test_bool_to_int_makes_an_int32_where_its_context_asks_for_one():
    assert check_type("(bool->int #t)") == "(Arr Int (Shp))"
    assert check_type("(λ ((x [Int32])) (+ x (bool->int (> x 0))))").endswith("(Arr Int32 (Shp))) (Shp))")
    assert check_type("(count [#t #f])") == "(Arr Int (Shp))"  # (the prelude's count stays an Int)
    assert check_types("(define f bool->int)") == ["(Arr (-> ((Arr Bool (Shp))) (Arr Int (Shp))) (Shp))"]


def test_branches_and_cells_of_two_precisions_name_the_conversion():
    for source in ("(λ ((a [Float32]) (b [Float])) (if #t a b))", "(λ ((a [Float32]) (b [Float])) [a b])"):
        message = type_error(source).message
        assert "float32->float or float->float32 on one of them" in message, message
