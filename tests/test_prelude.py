"""Every prelude function: its meaning (on both engines), and the rule that each has a test here
and a one-line doc comment in prelude/."""

import re
from pathlib import Path

import pytest

from conftest import check_type, eval_error, eval_value

PRELUDE = Path(__file__).resolve().parent.parent / "prelude"

CASES = {
    "sum": [("(sum [1 2 3])", "6"), ("(sum [[1.5 2.5] [3.0 4.0]])", "[4.0 7.0]"), ("(sum (array (0) Int))", "0")],
    "product": [("(product [1 2 3 4])", "24"), ("(product (array (0) Float))", "1.0")],
    "mean": [("(mean [1.0 2.0 3.0 4.0])", "2.5"), ("(mean [[1.0 3.0] [2.0 2.0]])", "[2.0 2.0]")],
    "maximum": [("(maximum [3 1 4 1 5])", "5"), ("(maximum [[1.5 -2.0] [0.0 -1.0]])", "[1.5 0.0]")],
    "minimum": [("(minimum [3 1 4 1 5])", "1"), ("(minimum [2.5])", "2.5")],
    "dot": [("(dot [1 2 3] [4 5 6])", "32"), ("(dot [[1.0 0.0] [0.0 2.0]] [3.0 4.0])", "[3.0 8.0]")],
    "matmul": [("(matmul [[1 2] [3 4]] [[5 6] [7 8]])", "[[19 22] [43 50]]"), ("(matmul [[1.0 2.0]] [[3.0] [4.0]])", "[[11.0]]")],
    "outer": [("(outer * [1 2] [3 4 5])", "[[3 4 5] [6 8 10]]"), ("(outer < [1 2] [2 1])", "[[#t #f] [#f #f]]")],
    "iterate": [("(iterate (λ ((x [Int])) (* 2 x)) 10 1)", "1024"), ("(iterate (λ ((x [Int])) (+ x 1)) 0 5)", "5")],
    "count": [("(count [#t #f #t])", "2"), ("(count (array (0) Bool))", "0")],
    "any": [("(any [#f #t])", "#t"), ("(any [#f #f])", "#f"), ("(any (array (0) Bool))", "#f")],
    "all": [("(all [#t #t])", "#t"), ("(all [#t #f])", "#f"), ("(all (array (0) Bool))", "#t")],
    "positions": [("(positions [[1 2] [3 4] [5 6]])", "[0 1 2]"), ("(positions (array (0 3) Float))", "(array (0) Int)")],
    "pi": [("pi", "3.141592653589793"), ("(cos pi)", "-1.0")],
    "inf": [("inf", "inf"), ("(< 1e300 inf)", "#t"), ("(* -1.0 inf)", "-inf")],
    "-inf": [("-inf", "-inf"), ("(= -inf (neg inf))", "#t")],
    "nan": [("nan", "nan"), ("(= nan nan)", "#f"), ("(+ 1.0 nan)", "nan")],
}


@pytest.mark.parametrize("name, program, expected", [(n, p, e) for n, cases in CASES.items() for p, e in cases])
def test_prelude_function(name, program, expected):
    assert eval_value(program) == expected


def test_numeric_functions_work_on_int_and_float():
    assert check_type("(sum [1 2])") == "(Arr Int (Shp))"
    assert check_type("(sum [1.0 2.0])") == "(Arr Float (Shp))"
    assert check_type("(dot [1.0] [2.0])") == "(Arr Float (Shp))"


def test_every_prelude_function_has_a_test_and_a_doc_comment():
    for path in PRELUDE.glob("*.rem"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\(define \(?([^\s()]+)", text):
            name = match.group(1)
            assert name in CASES, f"prelude function {name} has no test in tests/test_prelude.py"
            preceding = text[: match.start()].rstrip("\n").splitlines()[-1]
            assert preceding.startswith(f";; {name}: "), f"prelude function {name} lacks a one-line doc comment"


# A run-time error inside a prelude function is the user's call's error (spec D30): located at the
# call in the user's code, its message naming the function called, the prelude's place a note.
PRELUDE_FAILURES = {
    "negative count": ("(iterate (λ ((x [Int])) (+ x 1)) -2 0)", (1, 1), "negative length, -2"),
    "through a user's function": (
        "(define (g (n [Int])) (iterate (λ ((x [Int])) (+ x 1)) n 0))\n(g [1 -2])", (1, 23), "negative length, -2"
    ),
    "size limit": ("(iterate (λ ((x [Int])) (+ x 1)) 100000000000 0)", (1, 1), "over the limit"),
}


@pytest.mark.parametrize("engine", ["frames", "reference"])
@pytest.mark.parametrize("name", sorted(PRELUDE_FAILURES))
def test_prelude_failure_speaks_of_the_users_call(name, engine):
    src, place, detail = PRELUDE_FAILURES[name]
    err = eval_error(src, engine)
    assert (err.file, err.line, err.column) == ("<test>", *place)
    assert err.message.startswith("`iterate` failed: "), err.message
    assert detail in err.message
    assert err.notes[0].startswith("inside the prelude, at prelude/prelude.rem:"), err.notes
    assert err.notes[0].endswith(": (iota/v n)"), err.notes
