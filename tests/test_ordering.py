"""sort, grade, take, drop (contract §6): types, meaning on both engines, lifting, errors."""

from __future__ import annotations

import pytest

from remora.errors import RemoraRuntimeError, RemoraTypeError
from conftest import check_error, check_type, eval_error, eval_value, eval_values, run_program

NAN = "(sqrt -1.0)"


def test_types():
    assert check_type("(sort [3 1 2])") == "(Arr Int (Shp 3))"
    assert check_type("(grade [3.0 1.0])") == "(Arr Int (Shp 2))"
    assert check_type("(take 2 [[1 2] [3 4] [5 6]])") == "(Arr (Sigma ((k Dim)) (Arr Int (Shp k 2))) (Shp))"
    assert check_type("(drop 1 [1.0 2.0])") == "(Arr (Sigma ((k Dim)) (Arr Float (Shp k))) (Shp))"


def test_sort_and_grade():
    assert eval_value("(sort [3 1 2 1])") == "[1 1 2 3]"
    assert eval_value("(grade [3 1 2 1])") == "[1 3 2 0]"
    assert eval_value(f"(sort [3.0 {NAN} 1.0 -2.5])") == "[-2.5 1.0 3.0 nan]"
    assert eval_value(f"(grade [3.0 {NAN} 1.0 -2.5])") == "[3 2 0 1]"


def test_sort_lifts_over_rows():
    assert eval_value("(sort [[3 1 2] [9 8 7]])") == "[[1 2 3] [7 8 9]]"
    assert eval_value("(sort (array (0) Float))") == "(array (0) Float)"


def test_index_by_grade_is_sort():
    source = "((λ ((xs [Int 4])) (index xs (grade xs))) [[4 2 3 1] [0 -1 5 5]])"
    assert eval_value(source) == eval_value("(sort [[4 2 3 1] [0 -1 5 5]])") == "[[1 2 3 4] [-1 0 5 5]]"


def test_sort_refuses_bool():
    err = check_error("(sort [#t #f])", RemoraTypeError)
    assert "`sort`" in err.message and "Bool" in err.message


def test_take_and_drop():
    assert eval_value("(take 2 [1 2 3 4])") == "(box 2 [1 2])"
    assert eval_value("(take -2 [1 2 3 4])") == "(box 2 [3 4])"
    assert eval_value("(drop 1 [[1 2] [3 4] [5 6]])") == "(box 2 [[3 4] [5 6]])"
    assert eval_value("(drop -1 [1 2 3])") == "(box 2 [1 2])"
    assert eval_value("(take 0 [1 2 3])") == "(box 0 (array (0) Int))"
    assert eval_value("(drop 3 [1 2 3])") == "(box 0 (array (0) Int))"


def test_take_lifted_over_counts():
    assert eval_value("(take [1 3] [5 6 7])") == "[(box 1 [5]) (box 3 [5 6 7])]"
    source = "(unbox (k v (take [1 3] [5 6 7])) (total v))"
    assert eval_value(source) == "[5 18]"


def test_take_past_the_length_is_a_runtime_error():
    for engine in ("frames", "reference"):
        err = eval_error("(take 5 [1 2 3])", engine)
        assert isinstance(err, RemoraRuntimeError) and "take of 5 items from an array of 3 items" in err.message
        err = eval_error("(drop -4 [1 2 3])", engine)
        assert "drop of -4 items" in err.message


def test_pi():
    assert eval_value("pi") == "3.141592653589793"


def test_take_and_drop_over_a_frame_cut_every_cell_at_once(monkeypatch):
    """Over a frame, the boxes are made as filter's are — one mask, one flat buffer — not one
    Python call per cell; the values are the reference engine's."""
    from remora.primitives import ordering

    program = ("(define m [[0 1 2 3] [4 5 6 7] [8 9 10 11]])"
               " (take [1 -2 0] m) (drop [1 -2 3] m) ((λ ((r [Int 4])) (take -3 r)) m)")
    expected = eval_values(program)
    monkeypatch.setattr(ordering, "per_cell", lambda ctx, make: pytest.fail("a cell at a time"))
    assert [p for p, _ in run_program(program, "frames")] == expected
    assert expected[2] == "[(box 3 [1 2 3]) (box 3 [5 6 7]) (box 3 [9 10 11])]"
