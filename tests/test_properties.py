"""Properties of random well-typed programs (the type-directed generator in tests/gen_programs.py).

The generator picks a type first and builds a program of exactly that type (literals and
frames of random shapes, empty ones included; lifted scalar primitives; frames of functions;
λ, let, define, redefinitions of names and of prelude names; the array primitives and the
prelude under automatic instantiation — written
explicitly where the smallest-frames rule of spec/inference.md would choose differently —;
reduce/fold/scan; boxes, unbox over frames of boxes, index variables in types). For every
generated program:

1. it type-checks, and the type printed for each top-level form is the type it was built to
   have (up to the names of bound variables);
2. every value has exactly the shape and atom type of its static type (``run_program``);
3. the default engine (plans, each planned expression replayed once more) and the reference
   engine give identical values (``eval_values``);
4. ``remora check --explicit`` prints a program that checks to the same types and evaluates to
   the same values.

One more property aims at inference alone: a first-order polymorphic function (a primitive or
a prelude function) applied to arguments of random shapes, well-typed or not, checks exactly
when the generator's model of the smallest-frames rule finds one instantiation, to the type
that instantiation gives.

Each property runs a fixed, derandomized budget (the whole file takes well under a minute).
The long run puts at least 10,000 programs through all four properties; run it with either of::

    REMORA_LONG=1 python -m pytest -q -s tests/test_properties.py
    python -m pytest -q -s -m slow tests/test_properties.py

(``-s`` shows how many programs ran and how long it took; ``REMORA_PROPERTY_SEED`` picks
another seed.)  Below the properties: regression tests — counterexamples found by the
properties, as literal programs. ``test_bug_*`` are the ones that showed bugs of remora (all
fixed now); while such a bug is open, its test is a strict xfail and ``gen_programs.AVOID``
keeps the generator away from it (drop both when it is fixed).
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import re
import time

import pytest
from hypothesis import HealthCheck, given, seed, settings

from conftest import check_error, check_type, check_types, eval_values, run_program
from gen_programs import SIGS, Program, applications, canonical_type, infer, programs, random_program
from remora.interfaces.cli import main as cli_main
from remora.errors import RemoraTypeError

LONG = os.environ.get("REMORA_LONG") == "1"
LONG_PROGRAMS = 10_000
LONG_SEED = int(os.environ.get("REMORA_PROPERTY_SEED", "20260"))


def budget(examples: int):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


# ---------------------------------------------------------------------------------------
# The four properties, for one program


def explicit_text(source: str) -> str:
    """What ``remora check --explicit -e SOURCE`` prints (run in-process)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["check", "--explicit", "-e", source])
    assert code == 0, f"remora check --explicit failed:\n{err.getvalue()}"
    return out.getvalue()


def has_intended_types(prog: Program) -> list[str]:
    """Property 1; returns the printed types."""
    types = check_types(prog.source)
    assert len(types) == len(prog.forms)
    for (text, want), got in zip(prog.forms, types):
        assert canonical_type(got) == canonical_type(want), (
            f"\nform: {text}\nchecks to: {got}\nbuilt for: {want}")
    return types


def values_agree_with_types(prog: Program) -> None:
    """Property 2, on the default engine (run_program compares each value with its type)."""
    run_program(prog.source, "plans")


def engines_agree(prog: Program) -> list[str]:
    """Properties 2 and 3: both engines, each value against its type, and against each other."""
    return eval_values(prog.source)


def explicit_round_trip(prog: Program, types: list[str] | None = None, values: list[str] | None = None) -> None:
    """Property 4."""
    if types is None:
        types = check_types(prog.source)
    explicit = explicit_text(prog.source)
    assert check_types(explicit) == types, f"\nexplicit text:\n{explicit}"
    if values is None:
        values = [p for p, _ in run_program(prog.source, "frames")]
    assert eval_values(explicit) == values, f"\nexplicit text:\n{explicit}"


def all_properties(prog: Program) -> None:
    types = has_intended_types(prog)
    values = engines_agree(prog)
    explicit_round_trip(prog, types, values)


# ---------------------------------------------------------------------------------------
# The properties under a fixed budget


@budget(400)
@given(programs())
def test_generated_programs_check_to_their_intended_types(prog):
    has_intended_types(prog)


@budget(250)
@given(programs())
def test_values_have_the_shape_and_atom_type_of_their_static_type(prog):
    values_agree_with_types(prog)


@budget(300)
@given(programs())
def test_both_engines_give_identical_values(prog):
    engines_agree(prog)


@budget(200)
@given(programs())
def test_explicit_form_rechecks_and_evaluates_the_same(prog):
    explicit_round_trip(prog)


@budget(400)
@given(applications())
def test_automatic_instantiation_follows_the_smallest_frames_rule(case):
    """A first-order polymorphic function applied to arguments of random shapes checks exactly
    when the rule of spec/inference.md finds one instantiation, to the type that one gives
    (the generator's own model of the rule: gen_programs.infer)."""
    source, want = case
    if want is None:
        check_error(source, RemoraTypeError)
    else:
        assert canonical_type(check_type(source)) == canonical_type(want), source


# ---------------------------------------------------------------------------------------
# The long run


@pytest.mark.slow
def test_long_run_of_all_properties(request):
    if not (LONG or "slow" in (request.config.getoption("markexpr") or "")):
        pytest.skip("long property run: set REMORA_LONG=1 or run pytest -m slow")
    count = 0
    start = time.perf_counter()

    @seed(LONG_SEED)
    @settings(
        max_examples=LONG_PROGRAMS,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs())
    def run(prog):
        nonlocal count
        count += 1
        all_properties(prog)

    run()
    elapsed = time.perf_counter() - start
    print(f"\nproperties 1-4 held for {count} generated programs in {elapsed:.0f} s (seed {LONG_SEED})")
    assert count >= LONG_PROGRAMS


# ---------------------------------------------------------------------------------------
# The generator itself


def test_inference_oracle_agrees_with_the_table_in_spec_inference():
    """The generator's model of the smallest-frames rule, on spec/inference.md's examples."""
    assert infer("head", [(2, 2)]) == [{"d": 1, "s": (2,)}]
    assert infer("append", [(2,), (2, 2)]) == [{"m": 2, "n": 2, "s": ()}]
    assert infer("length", [(2, 3)]) == [{"d": 2, "s": (3,)}]
    assert infer("head", [(0, 3)]) == [{"d": 2, "s": ()}]  # a frame of 0 rows
    assert infer("sum", [(2, 2)]) == [{"n": 2}]
    assert infer("maximum", [(0,)]) == []
    assert set(SIGS) >= {"head", "append", "filter", "reshape", "dot", "outer"}


def test_generator_covers_the_language():
    """A sample of programs uses every construct the generator is meant to produce."""
    text = "\n".join(random_program(s).source for s in range(300))
    counts = collections.Counter()
    wanted = {
        "empty array": r"\(array \([\d ]*\b0\b",
        "empty frame": r"\(frame \([\d ]*\b0\b",
        "frame": r"\(frame \(\d",
        "bracket": r"\[\[",
        "λ": r"\(λ \(\(",
        "let": r"\(let \(\(",
        "define value": r"\(define d\d",
        "define function": r"\(define \(fun",
        "unbox": r"\(unbox \(n\d",
        "unbox of a shape": r"\(unbox \(s\d",
        "box": r"\(box ",
        "frame of primitives": r"\(\[[-+*a-z]+ [-+*a-z]+",
        "array of λs": r"\(\[\(λ|\(\(array \(\d+\) \(λ",
        "t-app": r"\(t-app \(i-app",
        "i-app only": r"\(\(i-app (iota|count|any|all|mean)",
        "iota/s with a variable": r"iota/s \(Shp n\d|iota/s \(\+\+",
        "iota/v": r"\(iota/v ",
        "iota": r"\(iota ",
        "filter": r"\(filter |i-app filter",
        "reshape": r"\(reshape |i-app reshape",
        "ravel": r"\(ravel |i-app ravel",
        "shape": r"\(shape |i-app shape ",
        "reduce": r"\(reduce |i-app reduce",
        "fold": r"\(fold |i-app fold",
        "scan": r"\(scan |i-app scan",
        "iterate": r"\(iterate |i-app iterate",
        "outer": r"\(outer |i-app outer",
        "sum": r"\(sum |i-app sum",
        "append": r"\(append |i-app append",
        "transpose": r"\(transpose |i-app transpose",
        "index": r"\(index |i-app index",
        "select": r"\(select ",
        "from-int": r"\(from-int ",
        "Iλ define": r"\(define poly\d+ \((Iλ|i-lambda) \(\(",
        "Tλ define": r"\(define tpoly\d+ \((Iλ|i-lambda|Tλ|t-lambda) \(\(",
        "call of a Pi function": r"\(poly\d+ ",
        "i-app of a user function": r"\(\(i-app poly\d+ ",
        "call of a Forall function": r"\(tpoly\d+ ",
        "t-app of a user function": r"\(\(t-app (\(i-app )?tpoly\d+",
        "frame of closures": r"\(\(\((λ|lambda) \(\(x\d+ [^()]*(\([^()]*\))*[^()]*\)\) \((λ|lambda) ",
        "function redefined in terms of itself": r"^\(define \((fun\d+) .*\(let \(\(r\d+ \(\1 ",
        "value redefined in terms of itself": r"^\(define (d\d+|fun\d+|t?poly\d+) \(let \(\(o\d+ \1\)",
        "prelude name redefined": r"^\(define \(?(sum|dot|product|maximum|any)\b",
        "sum in terms of the prelude's": r"^\(define \(sum .*\(let \(\(r\d+ \(sum ",
        "mean or count after sum redefined": r"^\(define \(?sum\b.*\n\(\(?(i-app )?(mean|count)\b",
        "matmul after dot redefined": r"^\(define \(?dot\b.*\n\((\(t-app \(i-app )?matmul\b",
        "if": r"\(if ",
        "while": r"\(while ",
        "declared recursion": r"^\(define \((rec\d+) .*\) : .*\(\1 \(- \(min ",
        "call of a recursive function": r"\(rec\d+ ",
        "Float32": r"Float32",
        "Int32": r"Int32",
        "a weak literal taking a declared Float32": r"\(\((λ|lambda) \(\(c\d+ (\[Float32|\(Arr Float32)",
        "a weak literal taking a declared Int32": r"\(\((λ|lambda) \(\(c\d+ (\[Int32|\(Arr Int32)",
        "a conversion between widths": r"\((float->float32|float32->float|int->int32|int32->int) ",
        "Int32 at its edge": r"2147483647|-2147483648",
    }
    for name, pattern in wanted.items():
        counts[name] = len(re.findall(pattern, text, re.M))
    missing = [n for n, c in counts.items() if c == 0]
    assert not missing, f"never generated: {missing}"


# ---------------------------------------------------------------------------------------
# Regression tests: shrunk counterexamples


def test_bug_float_expt_engines_agree():
    # frames engine [0.01], reference engine [0.010000000000000002] (the correctly rounded 0.1²)
    eval_values("(expt [0.1] 2.0)")


def test_bug_float_dot_of_a_broadcast_engines_agree():
    # frames engine -5.999970000000001 (NumPy's einsum on a stride-0 operand factors the 3.0 out),
    # reference engine -5.999970000000005, as (dot [-10.09999 8.1] [3.0 3.0]) on both
    eval_values("(dot [-10.09999 8.1] ((λ ((x [Int])) 3.0) [1 1]))")


def test_bug_scan_of_float_plus_is_the_left_scan():
    # the contract: a left scan, ((7.0 + -3.0) + -2.5) + -2.9 = -1.4; remora gives
    # -1.4000000000000004 = 7.0 + (-3.0 + -2.5 + -2.9), on both engines, while the same scan with
    # a λ (what `remora check --explicit` prints when + is lifted) gives -1.4
    assert eval_values("(scan + 7.0 [-3.0 -2.5 -2.9])") == ["[4.0 1.5 -1.4]"]


def test_bug_scan_of_lifted_float_plus_explicit_form_agrees():
    source = "(scan + [0.0 7.0] [[1.0 -3.0] [1.0 -2.5] [1.0 -2.9]])"
    explicit_round_trip(Program([(source, "(Arr Float (Shp 3 2))")]))


def test_bug_fold_of_float_max_is_the_right_fold():
    # (fold max 0.0 [-0.0]) is (max -0.0 0.0), which is 0.0; remora's accumulation computes
    # (max 0.0 -0.0) = -0.0 (the λ version gives 0.0)
    assert eval_values("(fold max 0.0 [-0.0])") == eval_values("(max -0.0 0.0)") == ["0.0"]


def test_bug_lifted_rotate_by_a_huge_count():
    # 9223372036854775807 = 1 (mod 3): both rows are [2 3 1]; the frames engine computes
    # (arange(d) + n) % d in int64, which wraps, and gives [[2 2 3] [2 3 1]]
    assert eval_values("(rotate [1 2 3] [9223372036854775807 1])") == ["[[2 3 1] [2 3 1]]"]


def test_bug_index_of_a_constant_frame_by_a_lifted_index():
    assert eval_values("(index ((λ ((x [Int])) [5 7]) [1 2]) [0 1])") == ["[[5 7] [5 7]]"]


def test_bug_index_in_a_lambda_by_its_parameter():
    # the index is a scalar in the program, but the λ runs once over the frame [0 1]
    assert eval_values("((λ ((i [Int])) (index ((λ ((y [Bool])) -4) [#t #t]) i)) [0 1])") == ["[-4 -4]"]


def test_bug_explicit_index_of_a_constant_frame_by_per_cell_indices():
    # no lifting here (both frames are (Shp 2)); the λ's result does not vary along the 4 items
    source = "((t-app (i-app index 4 (Shp 3)) Bool) ((λ ((x [Int])) (scan and #f [#f #f #t])) [[1 2 3 4] [1 2 3 4]]) [0 1])"
    assert eval_values(source) == ["[[#f #f #f] [#f #f #f]]"]


def test_bug_closure_over_a_cell_called_in_a_ragged_unbox():
    # iterate unboxes (iota/v n): with n = [1 2] the boxes have different lengths, and f captures acc
    assert eval_values("((λ ((acc [Int])) (iterate (λ ((y [Int])) acc) acc 0)) [1 2])") == ["[1 2]"]


def test_bug_let_bound_closure_called_in_a_ragged_unbox():
    source = """
    ((λ ((n [Int]))
       (let ((f (λ ((y [Int])) n)))
         (unbox (k s (iota/v n)) (fold (λ ((i [Int]) (a [Int])) (f a)) 0 s))))
     [1 2])"""
    assert eval_values(source) == ["[1 2]"]


# Neighbours of those counterexamples that work (so a fix cannot break them unnoticed)


def test_regression_index_of_a_constant_frame_by_one_index():
    assert eval_values("(index ((λ ((x [Int])) [5 7]) [1 2]) 1)") == ["[5 7]"]
    assert eval_values("((λ ((i [Int])) (index [-4 -4] i)) [0 1])") == ["[-4 -4]"]


def test_regression_lifted_rotate_by_big_counts():
    assert eval_values("(rotate [1 2 3] [4611686018427387904 -9223372036854775808 1])") == [
        "[[2 3 1] [2 3 1] [2 3 1]]"]


def test_regression_closure_without_captures_in_a_ragged_unbox():
    assert eval_values("((λ ((acc [Int])) (iterate (λ ((y [Int])) (+ y 1)) acc 0)) [1 2])") == ["[1 2]"]


def test_regression_lifted_primitive_in_fold_and_scan_explicit_forms_agree():
    for source, typ in [("(fold + [0 7] [[1 -3] [1 -2] [1 -2]])", "(Arr Int (Shp 2))"),
                        ("(scan - [0.5 7.0] [[1.0 -3.0] [1.0 -2.5]])", "(Arr Float (Shp 2 2))"),
                        ("(reduce + [[1.5 -1.0] [0.1 2.0] [0.2 0.3]])", "(Arr Float (Shp 2))")]:
        prog = Program([(source, typ)])
        has_intended_types(prog)
        explicit_round_trip(prog)


def test_regression_float_expt_of_a_scalar_engines_agree():
    # (eval_values checks that the engines agree exactly; NumPy's pow may be one ulp from the
    # correctly rounded 0.010000000000000002, and a lone cell must round as it does in a frame)
    [value] = eval_values("(expt 0.1 2.0)")
    assert abs(float(value) - 0.1**2) <= 2e-18


def test_regression_dot_of_equal_float_vectors_engines_agree():
    assert eval_values("(dot [-10.09999 8.1] [3.0 3.0])") == ["-5.999970000000005"]


def test_regression_scan_of_float_lambda_is_the_left_scan():
    assert eval_values("(scan (λ ((a [Float]) (x [Float])) (+ a x)) 7.0 [-3.0 -2.5 -2.9])") == ["[4.0 1.5 -1.4]"]


# Generated programs on which the engines disagreed (tests/gen_programs.py seeds 1546 and 3048):
# both take a Float matmul where an operand is broadcast along the frame (a constant matrix in a
# fold's λ; a scan's constant rows), and NumPy's einsum summed those cells in another order than
# one cell alone.  Each inner product is now summed in one order whatever its frame (D27).


def test_regression_seed_1546_float_matmul_in_a_fold_engines_agree():
    source = (
        "(fold (λ ((x1 [Bool 1]) (acc2 (Arr Float (Shp 4 2)))) (matmul [[-1.5 2.25 1e-05] [0.0 0.5 3.0] "
        "[2.25 -0.0 -7.0] [10.0 -7.0 -0.25]] (append [[1e-05] [0.1] [0.0]] (int->float (bool->int x1))))) "
        "((λ ((x3 (Arr Bool (Shp 0))) (x4 [Float 3 4])) (reduce min (int->float ((i-app iota/s (Shp 3 4 2)))))) "
        "(= (let ((x5 (frame (0) (Arr Float (Shp))))) (frame (2 0) [Float])) (append (array (1 0) Float) "
        "(array (1 0) Float))) ((t-app (i-app head 0 (Shp 4)) Float) [[[[0.0 10.0 10.0 10.0]] [[-1.5 -0.0 -1.5 "
        "0.5]] [[10.0 -7.0 0.0 -1.5]]] [[[-0.25 1.0 0.0 0.5]] [[10.0 0.1 -7.0 0.5]] [[-0.0 0.5 -0.0 -0.0]]]])) "
        "(iterate (λ ((x6 [Bool])) (unbox (s8 x7 (box (Shp 2) [5 -13] (Sigma ((s Shape)) (Arr Int s)))) #t)) "
        "(array (4 2) 2 1 0 1 2 2 1 1) [#f]))"
    )
    all_properties(Program([(source, "(Arr Float (Shp 2 4 2))")]))


def test_regression_seed_3048_float_matmul_of_a_scan_engines_agree():
    source = (
        "([neg abs neg neg] (product (matmul (scan (lambda ((acc2 (Arr Float (Shp 3))) (x1 [Bool 4])) "
        "[0.5 -0.25 -1.5]) [-0.25 -0.0 0.5] (array (4 4) #f #f #f #t #t #t #f #t #t #t #f #f #t #f #t #t)) "
        "(cos (array (3 2) 0.5 -7.0 -1.5 10.0 0.0 -0.0)))))"
    )
    all_properties(Program([(source, "(Arr Float (Shp 4))")]))
