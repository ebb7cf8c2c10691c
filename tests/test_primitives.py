"""Every primitive means exactly what contract §2 says (both engines, checked to agree).

Polymorphic primitives are instantiated explicitly, in the paper's style: ``i-app``
with the ``Pi`` arguments first, then ``t-app`` with the ``Forall`` arguments, in the
order of each primitive's printed type.  Scalar primitives need no instantiation.
"""

from __future__ import annotations

import warnings

import pytest
from conftest import eval_error, eval_value, eval_values

from remora.errors import RemoraRuntimeError
from remora.primitives import PRIMITIVES
from remora.statics.primitive_types import primitive_type

ENGINES = ["frames", "reference"]


def inst(prim: str, indices: str, types: str = "Int") -> str:
    """``(t-app (i-app prim indices) types)``."""
    return f"(t-app (i-app {prim} {indices}) {types})"


def runtime_error(src: str, stdin: str = "") -> list[RemoraRuntimeError]:
    """The run-time error of ``src`` on both engines (each must be located)."""
    errors = []
    for engine in ENGINES:
        err = eval_error(src, engine, stdin=stdin)
        assert isinstance(err, RemoraRuntimeError), f"{engine}: {type(err).__name__}: {err.message}"
        errors.append(err)
    return errors


def quiet_value(src: str) -> str:
    """Like eval_value, and asserts that NumPy emitted no warning on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = eval_value(src)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    return out


# ---------------------------------------------------------------------------
# The primitive table is what the contract lists


CONTRACT_PRIMITIVES = (
    "+ - * / mod min max neg abs expt sqrt exp log sin cos tan atan floor ceiling round truncate "
    "int->float bool->int = != < <= > >= and or xor not select "
    "head tail behead curtail length shape ravel append reverse rotate fold reduce scan filter "
    "read-nums iota iota/v iota/s iota/w reshape"
).split()


@pytest.mark.parametrize("name", CONTRACT_PRIMITIVES)
def test_contract_primitive_exists(name):
    assert name in PRIMITIVES


@pytest.mark.parametrize(
    "name, text",
    [
        ("head", "(Pi ((d Dim) (s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t (++ (Shp (+ d 1)) s))) (Arr t s)) (Shp))) (Shp)))"),
        ("append", "(Pi ((m Dim) (n Dim) (s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t (++ (Shp m) s)) (Arr t (++ (Shp n) s))) (Arr t (++ (Shp (+ m n)) s))) (Shp))) (Shp)))"),
        ("fold", "(Pi ((d Dim) (s Shape)) (Arr (Forall ((t Atom) (T Array)) (Arr (-> ((Arr (-> ((Arr t s) T) T) (Shp)) T (Arr t (++ (Shp d) s))) T) (Shp))) (Shp)))"),
        ("iota", "(Pi ((d Dim)) (Arr (-> ((Arr Int (Shp d))) (Arr (Sigma ((s Shape)) (Arr Int s)) (Shp))) (Shp)))"),
        ("iota/s", "(Pi ((s Shape)) (Arr (-> () (Arr Int s)) (Shp)))"),
        ("iota/w", "(Pi ((s Shape)) (Arr (Forall ((t Atom)) (Arr (-> ((Arr t s)) (Arr Int s)) (Shp))) (Shp)))"),
        ("read-nums", "(-> () (Arr (Sigma ((k Dim)) (Arr Int (Shp k))) (Shp)))"),
        ("+", "(-> ((Arr x (Shp)) (Arr x (Shp))) (Arr x (Shp)))"),
    ],
)
def test_quantifier_order(name, text):
    assert str(primitive_type(PRIMITIVES[name])) == text


# ---------------------------------------------------------------------------
# Int arithmetic


@pytest.mark.parametrize(
    "src, out",
    [
        ("(+ 1 2)", "3"),
        ("(- 5 7)", "-2"),
        ("(* -3 4)", "-12"),
        ("(+ [1 2 3] [10 20 30])", "[11 22 33]"),
        ("(min [1 5] [3 2])", "[1 2]"),
        ("(max [1 5] [3 2])", "[3 5]"),
        ("(neg [1 -2 0])", "[-1 2 0]"),
        ("(abs [-3 3 0])", "[3 3 0]"),
        ("(expt 2 10)", "1024"),
        ("(expt -2 3)", "-8"),
        ("(expt 7 0)", "1"),
        ("(expt 0 0)", "1"),
    ],
)
def test_int_arithmetic(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(/ 7 2)", "3"),
        ("(/ -7 2)", "-4"),
        ("(/ 7 -2)", "-4"),
        ("(/ -7 -2)", "3"),
        ("(/ 6 3)", "2"),
        ("(/ -6 3)", "-2"),
        ("(/ 0 -5)", "0"),
        ("(/ [7 -7 7 -7] [3 3 -3 -3])", "[2 -3 -3 2]"),
    ],
)
def test_int_division_is_floor_division(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(mod 7 3)", "1"),
        ("(mod -7 3)", "2"),
        ("(mod 7 -3)", "-2"),
        ("(mod -7 -3)", "-1"),
        ("(mod -7 2)", "1"),
        ("(mod 7 -2)", "-1"),
        ("(mod 6 -3)", "0"),
        ("(mod [7 -7 7 -7] [3 3 -3 -3])", "[1 2 -2 -1]"),
    ],
)
def test_mod_is_floor_modulus(src, out):
    assert eval_value(src) == out


def test_div_and_mod_agree():
    # a = b * (a / b) + (mod a b) for every sign combination
    src = "(define a [7 -7 7 -7 13 -13])\n(define b [3 3 -3 -3 5 -5])\n(+ (* b (/ a b)) (mod a b))"
    assert eval_value(src) == "[7 -7 7 -7 13 -13]"


@pytest.mark.parametrize(
    "src, out",
    [
        ("(+ 9223372036854775807 1)", "-9223372036854775808"),
        ("(- -9223372036854775808 1)", "9223372036854775807"),
        ("(* 4611686018427387904 2)", "-9223372036854775808"),
        ("(* 9223372036854775807 2)", "-2"),
        ("(neg -9223372036854775808)", "-9223372036854775808"),
        ("(abs -9223372036854775808)", "-9223372036854775808"),
        ("(expt 2 63)", "-9223372036854775808"),
        ("(expt 2 64)", "0"),
        ("(+ [9223372036854775807 1] [1 1])", "[-9223372036854775808 2]"),
        (f"({inst('reduce', '2 (Shp)')} + [9223372036854775807 1 0])", "-9223372036854775808"),
    ],
)
def test_int_overflow_wraps(src, out):
    assert quiet_value(src) == out


@pytest.mark.parametrize(
    "src, words",
    [
        ("(/ 1 0)", "division by zero"),
        ("(/ [1 2 3] [1 0 1])", "division by zero"),
        ("(mod 1 0)", "mod"),
        ("(mod [1 2 3] [1 0 1])", "mod"),
        ("(expt 2 -1)", "expt"),
        ("(expt [2 2] [1 -1])", "expt"),
    ],
)
def test_int_arithmetic_errors(src, words):
    for err in runtime_error(src):
        assert words in err.message
        assert err.line == 1 and err.column == 1


def test_error_is_located_at_the_failing_application():
    src = "(define a 1)\n(+ a\n   (/ 1 0))"
    for err in runtime_error(src):
        assert (err.line, err.column) == (3, 4)


def test_division_by_zero_over_an_empty_frame_is_no_error():
    assert eval_value("(/ (array (0) Int) 0)") == "(array (0) Int)"
    assert eval_value("(mod (array (0) Int) 0)") == "(array (0) Int)"


# ---------------------------------------------------------------------------
# Float arithmetic and printing


@pytest.mark.parametrize(
    "src, out",
    [
        ("(+ 1.0 1.5)", "2.5"),
        ("(- 1.0 1.5)", "-0.5"),
        ("(* 2.0 1.25)", "2.5"),
        ("(/ 7.0 2.0)", "3.5"),
        ("(/ -7.0 2.0)", "-3.5"),
        ("(/ 1.0 3.0)", "0.3333333333333333"),
        ("(+ 0.1 0.2)", "0.30000000000000004"),
        ("(/ 1.0 100000.0)", "1e-05"),
        ("(+ 1e-05 0.0)", "1e-05"),
        ("(* 1.0 1e16)", "1e+16"),
        ("(+ 1.5e3 0.0)", "1500.0"),
        ("(min -1.5 2.5)", "-1.5"),
        ("(max -1.5 2.5)", "2.5"),
        ("(neg 2.5)", "-2.5"),
        ("(neg 0.0)", "-0.0"),
        ("(abs -2.5)", "2.5"),
        ("(abs -0.0)", "0.0"),
        ("(expt 2.0 0.5)", "1.4142135623730951"),
        ("(expt 2.0 -1.0)", "0.5"),
        ("(expt 2.0 10.0)", "1024.0"),
        ("(* -1.0 0.0)", "-0.0"),
        ("[1.0 2.5]", "[1.0 2.5]"),
    ],
)
def test_float_arithmetic_and_repr(src, out):
    assert quiet_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(/ 1.0 0.0)", "inf"),
        ("(/ -1.0 0.0)", "-inf"),
        ("(/ 1.0 -0.0)", "-inf"),
        ("(/ 0.0 0.0)", "nan"),
        ("(/ [1.0 -1.0 0.0] 0.0)", "[inf -inf nan]"),
        ("(sqrt -1.0)", "nan"),
        ("(log 0.0)", "-inf"),
        ("(log -1.0)", "nan"),
        ("(exp 1000.0)", "inf"),
        ("(* 1e308 10.0)", "inf"),
        ("(- (/ 1.0 0.0) (/ 1.0 0.0))", "nan"),
    ],
)
def test_float_ieee_results_print_without_warning(src, out):
    assert quiet_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(sqrt 4.0)", "2.0"),
        ("(sqrt 2.0)", "1.4142135623730951"),
        ("(exp 0.0)", "1.0"),
        ("(exp 1.0)", "2.718281828459045"),
        ("(log 1.0)", "0.0"),
        ("(log (exp 2.0))", "2.0"),
        ("(sin 0.0)", "0.0"),
        ("(cos 0.0)", "1.0"),
        ("(tan 0.0)", "0.0"),
        ("(tan 1.0)", "1.5574077246549023"),
        ("(atan 1.0)", "0.7853981633974483"),
        ("(atan (/ 1.0 0.0))", "1.5707963267948966"),
        ("(sin [0.0 0.0])", "[0.0 0.0]"),
    ],
)
def test_float_functions(src, out):
    assert quiet_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(floor 2.5)", "2"),
        ("(floor -2.5)", "-3"),
        ("(floor -0.0)", "0"),
        ("(ceiling 2.5)", "3"),
        ("(ceiling -2.5)", "-2"),
        ("(ceiling 2.0)", "2"),
        ("(truncate 2.7)", "2"),
        ("(truncate -2.7)", "-2"),
        ("(round 2.4)", "2"),
        ("(round 2.6)", "3"),
        ("(round -2.6)", "-3"),
        # half to even
        ("(round 0.5)", "0"),
        ("(round 1.5)", "2"),
        ("(round 2.5)", "2"),
        ("(round 3.5)", "4"),
        ("(round -0.5)", "0"),
        ("(round -1.5)", "-2"),
        ("(round -2.5)", "-2"),
        ("(round [0.5 1.5 2.5 3.5 -0.5 -1.5])", "[0 2 2 4 0 -2]"),
    ],
)
def test_float_to_int(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src",
    ["(floor (/ 0.0 0.0))", "(floor (/ 1.0 0.0))", "(ceiling (/ -1.0 0.0))", "(round (sqrt -1.0))",
     "(truncate 1e19)", "(floor [1.0 (/ 0.0 0.0)])"],
)
def test_float_to_int_without_int_value_is_a_runtime_error(src):
    runtime_error(src)


@pytest.mark.parametrize(
    "src, out",
    [
        ("(int->float 3)", "3.0"),
        ("(int->float -3)", "-3.0"),
        ("(int->float [0 1])", "[0.0 1.0]"),
        ("(int->float 9007199254740993)", "9007199254740992.0"),
        ("(bool->int #t)", "1"),
        ("(bool->int [#t #f])", "[1 0]"),
    ],
)
def test_conversions(src, out):
    assert eval_value(src) == out


# ---------------------------------------------------------------------------
# Comparison, logic, select


@pytest.mark.parametrize(
    "src, out",
    [
        ("[(< 1 2) (< 2 2) (< 3 2)]", "[#t #f #f]"),
        ("[(<= 1 2) (<= 2 2) (<= 3 2)]", "[#t #t #f]"),
        ("[(> 1 2) (> 2 2) (> 3 2)]", "[#f #f #t]"),
        ("[(>= 1 2) (>= 2 2) (>= 3 2)]", "[#f #t #t]"),
        ("[(= 1 2) (= 2 2)]", "[#f #t]"),
        ("[(!= 1 2) (!= 2 2)]", "[#t #f]"),
        ("(< [1 2 3] 2)", "[#t #f #f]"),
        ("[(< 1.5 2.5) (= 0.0 -0.0) (= (/ 0.0 0.0) (/ 0.0 0.0)) (!= (/ 0.0 0.0) (/ 0.0 0.0))]", "[#t #t #f #t]"),
        ("[(= #t #f) (= #t #t) (!= #t #f) (!= #f #f)]", "[#f #t #t #f]"),
        ("(< -9223372036854775808 9223372036854775807)", "#t"),
    ],
)
def test_comparisons(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(and [#t #t #f #f] [#t #f #t #f])", "[#t #f #f #f]"),
        ("(or [#t #t #f #f] [#t #f #t #f])", "[#t #t #t #f]"),
        ("(xor [#t #t #f #f] [#t #f #t #f])", "[#f #t #t #f]"),
        ("(not [#t #f])", "[#f #t]"),
        ("(not #t)", "#f"),
    ],
)
def test_logic(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(select #t 1 2)", "1"),
        ("(select #f 1 2)", "2"),
        ("(select #t 1.5 2.5)", "1.5"),
        ("(select #f #t #f)", "#f"),
        ("(select [#t #f] [1 2] [3 4])", "[1 4]"),
        ("(select [#t #f #t] 0 [1 2 3])", "[0 2 0]"),
        ("(select [#t #f] #f #t)", "[#f #t]"),
        ("(select [[#t #f] [#f #t]] [1 2] [[10 20] [30 40]])", "[[1 20] [30 2]]"),
        ("(select (< [1 5 3] 3) [1 5 3] 3)", "[1 3 3]"),
    ],
)
def test_select(src, out):
    assert eval_value(src) == out


def test_select_on_functions():
    # select's atom type may be a function type: choose neg or abs element-wise, then apply
    assert eval_value("((select [#t #f] neg abs) -3)") == "[3 3]"


def test_select_evaluates_both_branches():
    runtime_error("(select #t 1 (/ 1 0))")


# ---------------------------------------------------------------------------
# head / tail / behead / curtail / length / index

MTX = "(array (3 2) 0 1 2 3 4 5)"


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('head', '2 (Shp 2)')} {MTX})", "[0 1]"),
        (f"({inst('tail', '2 (Shp 2)')} {MTX})", "[4 5]"),
        (f"({inst('head', '2 (Shp)')} [7 8 9])", "7"),
        (f"({inst('tail', '2 (Shp)')} [7 8 9])", "9"),
        (f"({inst('head', '0 (Shp)')} [7])", "7"),
        (f"({inst('tail', '0 (Shp)')} [7])", "7"),
        (f"({inst('head', '1 (Shp)', 'Float')} [1.5 2.5])", "1.5"),
        (f"({inst('tail', '1 (Shp)', 'Bool')} [#t #f])", "#f"),
        (f"({inst('head', '1 (Shp 2 2)')} [[[1 2] [3 4]] [[5 6] [7 8]]])", "[[1 2] [3 4]]"),
        (f"({inst('head', '1 (Shp 0)')} (array (2 0) Int))", "(array (0) Int)"),
    ],
)
def test_head_tail(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('behead', '2 (Shp)')} [1 2 3])", "[2 3]"),
        (f"({inst('curtail', '2 (Shp)')} [1 2 3])", "[1 2]"),
        (f"({inst('behead', '0 (Shp)')} [1])", "(array (0) Int)"),
        (f"({inst('curtail', '0 (Shp)')} [1])", "(array (0) Int)"),
        (f"({inst('behead', '2 (Shp 2)')} {MTX})", "[[2 3] [4 5]]"),
        (f"({inst('curtail', '2 (Shp 2)')} {MTX})", "[[0 1] [2 3]]"),
        (f"({inst('behead', '0 (Shp 2)', 'Bool')} [[#t #f]])", "(array (0 2) Bool)"),
    ],
)
def test_behead_curtail(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('length', '3 (Shp 2)')} {MTX})", "3"),
        (f"({inst('length', '3 (Shp)')} [1 2 3])", "3"),
        (f"({inst('length', '0 (Shp)')} (array (0) Int))", "0"),
        (f"({inst('length', '0 (Shp 5)', 'Float')} (array (0 5) Float))", "0"),
        (f"({inst('length', '2 (Shp)')} {MTX})", "[2 2 2]"),
    ],
)
def test_length(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('index', '3 (Shp)')} [10 20 30] 0)", "10"),
        (f"({inst('index', '3 (Shp)')} [10 20 30] 2)", "30"),
        (f"({inst('index', '3 (Shp)')} [10 20 30] [2 0 1])", "[30 10 20]"),
        (f"({inst('index', '3 (Shp 2)')} {MTX} 1)", "[2 3]"),
        (f"({inst('index', '2 (Shp)')} {MTX} [1 0 1])", "[1 2 5]"),
    ],
)
def test_index(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize("i", ["3", "-1"])
def test_index_out_of_range_is_a_runtime_error(i):
    runtime_error(f"({inst('index', '3 (Shp)')} [10 20 30] {i})")


# ---------------------------------------------------------------------------
# append / reverse / rotate / transpose


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('append', '2 3 (Shp)')} [1 2] [3 4 5])", "[1 2 3 4 5]"),
        (f"({inst('append', '0 2 (Shp)')} (array (0) Int) [3 4])", "[3 4]"),
        (f"({inst('append', '2 0 (Shp)')} [1 2] (array (0) Int))", "[1 2]"),
        (f"({inst('append', '0 0 (Shp)')} (array (0) Int) (array (0) Int))", "(array (0) Int)"),
        (f"({inst('append', '1 2 (Shp 2)')} [[1 2]] [[3 4] [5 6]])", "[[1 2] [3 4] [5 6]]"),
        (f"({inst('append', '1 1 (Shp)', 'Bool')} [#t] [#f])", "[#t #f]"),
        # lifted: rows appended one by one
        (f"({inst('append', '2 1 (Shp)')} [[1 2] [3 4]] [[5] [6]])", "[[1 2 5] [3 4 6]]"),
    ],
)
def test_append(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('reverse', '3 (Shp)')} [1 2 3])", "[3 2 1]"),
        (f"({inst('reverse', '0 (Shp)')} (array (0) Int))", "(array (0) Int)"),
        (f"({inst('reverse', '3 (Shp 2)')} {MTX})", "[[4 5] [2 3] [0 1]]"),
        (f"({inst('reverse', '2 (Shp)')} {MTX})", "[[1 0] [3 2] [5 4]]"),
    ],
)
def test_reverse(src, out):
    assert eval_value(src) == out


ROT4 = inst("rotate", "4 (Shp)")


@pytest.mark.parametrize(
    "n, out",
    [
        ("0", "[1 2 3 4]"),
        ("1", "[2 3 4 1]"),
        ("3", "[4 1 2 3]"),
        ("4", "[1 2 3 4]"),
        ("6", "[3 4 1 2]"),
        ("-1", "[4 1 2 3]"),
        ("-5", "[4 1 2 3]"),
        ("-4", "[1 2 3 4]"),
        ("9223372036854775807", "[4 1 2 3]"),
        ("-9223372036854775808", "[1 2 3 4]"),
    ],
)
def test_rotate_vector(n, out):
    assert eval_value(f"({ROT4} [1 2 3 4] {n})") == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('rotate', '0 (Shp)')} (array (0) Int) 3)", "(array (0) Int)"),
        (f"({inst('rotate', '0 (Shp)')} (array (0) Int) -3)", "(array (0) Int)"),
        (f"({inst('rotate', '0 (Shp 2)')} (array (0 2) Int) 1)", "(array (0 2) Int)"),
        (f"({inst('rotate', '3 (Shp 2)')} {MTX} 1)", "[[2 3] [4 5] [0 1]]"),
        (f"({inst('rotate', '3 (Shp 2)')} {MTX} -4)", "[[4 5] [0 1] [2 3]]"),
        # lifted over the amounts: each copy rotated by its own n
        (f"({ROT4} [1 2 3 4] [-1 6 0 1])", "[[4 1 2 3] [3 4 1 2] [1 2 3 4] [2 3 4 1]]"),
        (f"({ROT4} [[1 2 3 4] [5 6 7 8]] [1 -1])", "[[2 3 4 1] [8 5 6 7]]"),
        (f"({inst('rotate', '3 (Shp 2)')} [{MTX} {MTX}] [1 -1])", "[[[2 3] [4 5] [0 1]] [[4 5] [0 1] [2 3]]]"),
        (f"({inst('rotate', '2 (Shp)')} {MTX} 1)", "[[1 0] [3 2] [5 4]]"),
    ],
)
def test_rotate_more(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('transpose', '2 3 (Shp)')} [[1 2 3] [4 5 6]])", "[[1 4] [2 5] [3 6]]"),
        (f"({inst('transpose', '3 2 (Shp)')} {MTX})", "[[0 2 4] [1 3 5]]"),
        (f"({inst('transpose', '2 2 (Shp 1)')} [[[1] [2]] [[3] [4]]])", "[[[1] [3]] [[2] [4]]]"),
        (f"({inst('transpose', '0 2 (Shp)')} (array (0 2) Int))", "(array (2 0) Int)"),
    ],
)
def test_transpose(src, out):
    assert eval_value(src) == out


# ---------------------------------------------------------------------------
# fold / reduce / scan

FOLD3 = inst("fold", "3 (Shp)", "Int (Arr Int (Shp))")


@pytest.mark.parametrize(
    "src, out",
    [
        # right fold, f takes (item, accumulator): 1 - (2 - (3 - 0)) = 2
        (f"({FOLD3} - 0 [1 2 3])", "2"),
        # 1 - (2 - (3 - 10)) = -8 ; a left fold would give ((10-1)-2)-3 = 4
        (f"({FOLD3} - 10 [1 2 3])", "-8"),
        (f"({FOLD3} + 0 [1 2 3])", "6"),
        (f"({inst('fold', '0 (Shp)', 'Int (Arr Int (Shp))')} - 7 (array (0) Int))", "7"),
        (f"({FOLD3} [+ -] 0 [1 2 3])", "[6 2]"),
        (f"({FOLD3} - [0 10] [1 2 3])", "[2 -8]"),
        (f"({inst('fold', '3 (Shp)', 'Float (Arr Float (Shp))')} / 1.0 [8.0 4.0 2.0])", "4.0"),
    ],
)
def test_fold(src, out):
    assert eval_value(src) == out


def test_fold_takes_item_then_accumulator():
    # f x acc = [x - acc[0], acc[1] + 1]: a right fold from [0 0] over [1 2 3]
    f = ("(λ ((x (Arr Int (Shp))) (acc (Arr Int (Shp 2)))) "
         f"[(- x ({inst('head', '1 (Shp)')} acc)) (+ 1 ({inst('tail', '1 (Shp)')} acc))])")
    src = f"({inst('fold', '3 (Shp)', 'Int (Arr Int (Shp 2))')} {f} [0 0] [1 2 3])"
    assert eval_value(src) == "[2 3]"


def test_fold_over_rows():
    # T is a 2-vector, the items are 2-vectors: sum of rows, right to left
    f = "(λ ((row (Arr Int (Shp 2))) (acc (Arr Int (Shp 2)))) (- row acc))"
    src = f"({inst('fold', '3 (Shp 2)', 'Int (Arr Int (Shp 2))')} {f} [0 0] {MTX})"
    # [0 1] - ([2 3] - ([4 5] - [0 0])) = [2 3]
    assert eval_value(src) == "[2 3]"


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('reduce', '2 (Shp)')} + [1 2 3])", "6"),
        # left-associated: ((1 - 2) - 3) - 4 = -8
        (f"({inst('reduce', '3 (Shp)')} - [1 2 3 4])", "-8"),
        (f"({inst('reduce', '2 (Shp)', 'Float')} / [64.0 4.0 2.0])", "8.0"),
        (f"({inst('reduce', '0 (Shp)')} - [42])", "42"),
        (f"({inst('reduce', '3 (Shp)')} * [1 2 3 4])", "24"),
        (f"({inst('reduce', '2 (Shp)')} max [3 9 4])", "9"),
        (f"({inst('reduce', '2 (Shp)', 'Float')} min [1.5 -2.0 0.5])", "-2.0"),
        (f"({inst('reduce', '2 (Shp)', 'Bool')} and [#t #t #f])", "#f"),
        (f"({inst('reduce', '2 (Shp)', 'Bool')} or [#f #f #t])", "#t"),
        # a frame of functions: each reduces the whole vector
        (f"({inst('reduce', '3 (Shp)')} [+ *] [1 2 3 4])", "[10 24]"),
        (f"({inst('reduce', '2 (Shp)')} [+ -] [1 2 3])", "[6 -4]"),
        # lifted over the rows of a matrix
        (f"({inst('reduce', '1 (Shp)')} - {MTX})", "[-1 -1 -1]"),
        (f"({inst('reduce', '1 (Shp)')} + {MTX})", "[1 5 9]"),
    ],
)
def test_reduce(src, out):
    assert eval_value(src) == out


def test_reduce_with_a_lambda_is_left_associated():
    f = "(λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (+ (* 10 a) b))"
    assert eval_value(f"({inst('reduce', '3 (Shp)')} {f} [1 2 3 4])") == "1234"


def test_reduce_over_rows():
    f = "(λ ((a (Arr Int (Shp 2))) (b (Arr Int (Shp 2)))) (- a b))"
    assert eval_value(f"({inst('reduce', '2 (Shp 2)')} {f} {MTX})") == "[-6 -7]"


SCAN = inst("scan", "3 (Shp) (Shp)", "Int Int")


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({SCAN} + 0 [1 2 3])", "[1 3 6]"),
        (f"({SCAN} + 10 [1 2 3])", "[11 13 16]"),
        # f takes (accumulator, item): 10-1, 9-2, 7-3
        (f"({SCAN} - 10 [1 2 3])", "[9 7 4]"),
        (f"({SCAN} - 0 [1 2 3])", "[-1 -3 -6]"),
        (f"({SCAN} * 1 [2 3 4])", "[2 6 24]"),
        (f"({SCAN} max 0 [3 1 4])", "[3 3 4]"),
        (f"({inst('scan', '0 (Shp) (Shp)', 'Int Int')} + 5 (array (0) Int))", "(array (0) Int)"),
        (f"({inst('scan', '3 (Shp) (Shp)', 'Float Float')} / 1.0 [2.0 2.0 2.0])", "[0.5 0.25 0.125]"),
        (f"({SCAN} + [0 100] [1 2 3])", "[[1 3 6] [101 103 106]]"),
        (f"({SCAN} [+ -] 0 [1 2 3])", "[[1 3 6] [-1 -3 -6]]"),
        (f"({SCAN} + 0 [[1 2 3] [4 5 6]])", "[[1 3 6] [4 9 15]]"),
    ],
)
def test_scan(src, out):
    assert eval_value(src) == out


def test_scan_with_different_accumulator_and_item_types():
    # u = Int with r = (Shp 2), t = Bool with s = (Shp): count #t and #f
    f = "(λ ((acc (Arr Int (Shp 2))) (b (Arr Bool (Shp)))) (+ acc (select b [1 0] [0 1])))"
    src = f"({inst('scan', '3 (Shp 2) (Shp)', 'Int Bool')} {f} [0 0] [#t #f #t])"
    assert eval_value(src) == "[[1 0] [1 1] [2 1]]"


def test_scan_accumulator_vector_minus_item():
    f = "(λ ((a (Arr Int (Shp 2))) (b (Arr Int (Shp)))) (- a b))"
    src = f"({inst('scan', '3 (Shp 2) (Shp)', 'Int Int')} {f} [0 10] [1 2 3])"
    assert eval_value(src) == "[[-1 9] [-3 7] [-6 4]]"


def test_scan_float_accumulator_int_items():
    f = "(λ ((a (Arr Float (Shp))) (b (Arr Int (Shp)))) (+ a (int->float b)))"
    src = f"({inst('scan', '2 (Shp) (Shp)', 'Float Int')} {f} 0.5 [1 2])"
    assert eval_value(src) == "[1.5 3.5]"


# ---------------------------------------------------------------------------
# Boxed results: shape / ravel / filter / iota / reshape / read-nums


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('shape', '(Shp 3 2)')} {MTX})", "(box 2 [3 2])"),
        (f"({inst('shape', '(Shp)')} 5)", "(box 0 (array (0) Int))"),
        (f"({inst('shape', '(Shp 0 4)', 'Float')} (array (0 4) Float))", "(box 2 [0 4])"),
        (f"({inst('shape', '(Shp 2)')} {MTX})", "[(box 1 [2]) (box 1 [2]) (box 1 [2])]"),
        (f"({inst('shape', '(Shp 3)', '(Sigma ((k Dim)) (Arr Int (Shp k)))')} (iota/v [1 2 3]))", "(box 1 [3])"),
    ],
)
def test_shape(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('ravel', '(Shp 3 2)')} {MTX})", "(box 6 [0 1 2 3 4 5])"),
        (f"({inst('ravel', '(Shp 2 3)', 'Float')} [[1.0 2.0 3.0] [4.0 5.0 6.0]])", "(box 6 [1.0 2.0 3.0 4.0 5.0 6.0])"),
        (f"({inst('ravel', '(Shp)', 'Bool')} #t)", "(box 1 [#t])"),
        (f"({inst('ravel', '(Shp 2 0)')} (array (2 0) Int))", "(box 0 (array (0) Int))"),
        (f"({inst('ravel', '(Shp 2)')} {MTX})", "[(box 2 [0 1]) (box 2 [2 3]) (box 2 [4 5])]"),
        (f"({inst('ravel', '(Shp 2)', '(-> ((Arr Int (Shp))) (Arr Int (Shp)))')} (array (2) neg abs))",
         "(box 2 [#<function> #<function>])"),
    ],
)
def test_ravel(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('filter', '4 (Shp)')} [#t #f #f #t] [1 2 3 4])", "(box 2 [1 4])"),
        (f"({inst('filter', '2 (Shp)')} [#f #f] [1 2])", "(box 0 (array (0) Int))"),
        (f"({inst('filter', '2 (Shp)')} [#t #t] [1 2])", "(box 2 [1 2])"),
        (f"({inst('filter', '0 (Shp)')} (array (0) Bool) (array (0) Int))", "(box 0 (array (0) Int))"),
        (f"({inst('filter', '3 (Shp 2)')} [#f #t #t] {MTX})", "(box 2 [[2 3] [4 5]])"),
        (f"({inst('filter', '3 (Shp 2)')} [#f #f #f] {MTX})", "(box 0 (array (0 2) Int))"),
        (f"({inst('filter', '2 (Shp)', 'Float')} [#t #f] [1.5 2.5])", "(box 1 [1.5])"),
        # lifted over a frame of flag vectors: one box per row
        (f"({inst('filter', '3 (Shp)')} [[#t #f #t] [#f #f #t]] [1 2 3])", "[(box 2 [1 3]) (box 1 [3])]"),
    ],
)
def test_filter(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("((i-app iota 2) [2 3])", "(box (Shp 2 3) [[0 1 2] [3 4 5]])"),
        ("((i-app iota 1) [4])", "(box (Shp 4) [0 1 2 3])"),
        ("((i-app iota 0) (array (0) Int))", "(box (Shp) 0)"),
        ("((i-app iota 2) [0 3])", "(box (Shp 0 3) (array (0 3) Int))"),
        ("((i-app iota 3) [2 1 2])", "(box (Shp 2 1 2) [[[0 1]] [[2 3]]])"),
        ("((i-app iota 2) [[2 2] [1 3]])", "[(box (Shp 2 2) [[0 1] [2 3]]) (box (Shp 1 3) [[0 1 2]])]"),
    ],
)
def test_iota(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        ("(iota/v 3)", "(box 3 [0 1 2])"),
        ("(iota/v 1)", "(box 1 [0])"),
        ("(iota/v 0)", "(box 0 (array (0) Int))"),
        ("(iota/v [1 2 3])", "[(box 1 [0]) (box 2 [0 1]) (box 3 [0 1 2])]"),
        ("(iota/v (array (0) Int))", "(array (0) (Sigma ((k Dim)) (Arr Int (Shp k))))"),
    ],
)
def test_iota_v(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize("src", ["(iota/v -1)", "((i-app iota 2) [2 -1])", "(iota/v 100000000000)",
                                 "((i-app iota 2) [100000 100000])"])
def test_iota_bad_sizes_are_runtime_errors(src):
    runtime_error(src)


@pytest.mark.parametrize(
    "src, out",
    [
        ("((i-app iota/s (Shp 2 3)))", "[[0 1 2] [3 4 5]]"),
        ("((i-app iota/s (Shp 4)))", "[0 1 2 3]"),
        ("((i-app iota/s (Shp)))", "0"),
        ("((i-app iota/s (Shp 0 2)))", "(array (0 2) Int)"),
        ("((i-app iota/s (Shp 2 0)))", "(array (2 0) Int)"),
    ],
)
def test_iota_s(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        (f"({inst('iota/w', '(Shp 2 2)', 'Bool')} [[#t #t] [#f #f]])", "[[0 1] [2 3]]"),
        (f"({inst('iota/w', '(Shp 3 2)')} {MTX})", "[[0 1] [2 3] [4 5]]"),
        (f"({inst('iota/w', '(Shp 3)', 'Float')} [9.0 9.0 9.0])", "[0 1 2]"),
        (f"({inst('iota/w', '(Shp)')} 7)", "0"),
        (f"({inst('iota/w', '(Shp 0)')} (array (0) Int))", "(array (0) Int)"),
        # lifted: the witness cell is a 2-vector, the frame has 3 rows
        (f"({inst('iota/w', '(Shp 2)')} {MTX})", "[[0 1] [0 1] [0 1]]"),
    ],
)
def test_iota_w(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src, out",
    [
        # the paper's example
        (f"({inst('reshape', '2 (Shp 5)')} [3 2] [1 2 3 4 5])", "(box (Shp 3 2) [[1 2] [3 4] [5 1]])"),
        (f"({inst('reshape', '1 (Shp 2 2)')} [3] [[1 2] [3 4]])", "(box (Shp 3) [1 2 3])"),
        (f"({inst('reshape', '1 (Shp 2)')} [5] [1 2])", "(box (Shp 5) [1 2 1 2 1])"),
        (f"({inst('reshape', '2 (Shp)')} [2 2] 7)", "(box (Shp 2 2) [[7 7] [7 7]])"),
        (f"({inst('reshape', '0 (Shp 2)')} (array (0) Int) [7 8])", "(box (Shp) 7)"),
        (f"({inst('reshape', '1 (Shp 0)')} [0] (array (0) Int))", "(box (Shp 0) (array (0) Int))"),
        (f"({inst('reshape', '2 (Shp 0)')} [0 3] (array (0) Int))", "(box (Shp 0 3) (array (0 3) Int))"),
        (f"({inst('reshape', '2 (Shp 3)', 'Bool')} [1 4] [#t #f #f])", "(box (Shp 1 4) [[#t #f #f #t]])"),
        (f"({inst('reshape', '1 (Shp 3)')} [[2] [4]] [1 2 3])", "[(box (Shp 2) [1 2]) (box (Shp 4) [1 2 3 1])]"),
    ],
)
def test_reshape(src, out):
    assert eval_value(src) == out


@pytest.mark.parametrize(
    "src",
    [
        f"({inst('reshape', '1 (Shp 0)')} [2] (array (0) Int))",
        f"({inst('reshape', '0 (Shp 0)')} (array (0) Int) (array (0) Int))",
        f"({inst('reshape', '1 (Shp 2)')} [-1] [1 2])",
    ],
)
def test_reshape_errors(src):
    runtime_error(src)


@pytest.mark.parametrize(
    "stdin, out",
    [
        ("1 2 3", "(box 3 [1 2 3])"),
        ("1 2\n -3\t+4\n", "(box 4 [1 2 -3 4])"),
        ("", "(box 0 (array (0) Int))"),
        ("  \n\n ", "(box 0 (array (0) Int))"),
        ("9223372036854775807", "(box 1 [9223372036854775807])"),
        ("007", "(box 1 [7])"),
    ],
)
def test_read_nums(stdin, out):
    assert eval_value("(read-nums)", stdin=stdin) == out


def test_read_nums_numbers_longer_than_python_converts():
    """Past 4300 digits Python refuses to convert a digit string: such a number is out of range,
    and one that is long only with leading zeros is an ordinary number."""
    zeros = "0" * 5000
    assert eval_value("(read-nums)", stdin=f"{zeros}12 -{zeros}9223372036854775808") == (
        "(box 2 [12 -9223372036854775808])"
    )
    for err in runtime_error("(read-nums)", stdin="1 " + "7" * 5000):
        assert "does not fit in a 64-bit Int" in err.message and "(5000 characters)" in err.message


def test_read_nums_int64_min():
    assert eval_value("(read-nums)", stdin="-9223372036854775808") == "(box 1 [-9223372036854775808])"


def test_read_nums_reads_to_end_of_file():
    assert eval_values("(read-nums)\n(read-nums)", stdin="5 6\n7") == ["(box 3 [5 6 7])", "(box 0 (array (0) Int))"]


def test_read_nums_sum():
    src = (f"(unbox (n xs (read-nums)) ({inst('reduce', 'n (Shp)')} + "
           f"({inst('append', '1 n (Shp)')} [0] xs)))")
    assert eval_value(src, stdin="1 2 3 4") == "10"


@pytest.mark.parametrize("stdin", ["1 2.5", "x", "1,2", "0x10", "99999999999999999999", "1e3"])
def test_read_nums_rejects_non_integers(stdin):
    for err in runtime_error("(read-nums)", stdin=stdin):
        assert "read-nums" in err.message
