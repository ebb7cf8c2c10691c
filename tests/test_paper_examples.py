"""The paper's §2.1 examples check with the types it states (issue 2 acceptance)."""

from conftest import check_error, check_type, check_types

MTX = "(define mtx (array (3 2) 0 1 2 3 4 5))\n"

# §2.1, with the paper's (array () 0) corrected to (array (1) 0): append instantiated with
# m = 1 takes a 1-vector as its first argument.
SUM_TO = """
(λ ((n (Arr Num (Shp))))
  (unbox (len nums ((array () iota/v) n))
    ((t-app (i-app (array () reduce) len (Shp)) Num)
     +
     ((t-app (i-app (array () append) 1 len (Shp)) Num)
      (array ({first}) 0)
      nums))))
"""


def test_mtx_type():
    assert check_types(MTX) == ["(Arr Int (Shp 3 2))"]


def test_head_of_rows():
    assert check_type(MTX + "((t-app (i-app head 2 (Shp 2)) Num) mtx)") == "(Arr Int (Shp 2))"


def test_head_lifted_over_rows():
    assert check_type(MTX + "((t-app (i-app head 1 (Shp)) Num) mtx)") == "(Arr Int (Shp 3))"


def test_instantiated_head_is_a_function_on_2_vectors():
    assert check_type("(t-app (i-app head 1 (Shp)) Num)") == (
        "(Arr (-> ((Arr Int (Shp 2))) (Arr Int (Shp))) (Shp))"
    )


def test_sum_to_corrected():
    assert check_type(SUM_TO.format(first="1")) == "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"


def test_sum_to_as_printed_is_rejected():
    # As printed, (array () 0) is a scalar where append (m = 1) asks for a 1-vector.
    source = SUM_TO.replace("(array ({first}) 0)", "(array () 0)")
    err = check_error(source)
    assert "append" in err.message
    assert "(Shp 1)" in err.message and "suffix" in err.message
    assert err.line == 7


def test_num_prints_as_int():
    assert check_type("(array (2) 1 2)") == "(Arr Int (Shp 2))"
    assert check_type("(λ ((x (Arr Num (Shp 3)))) x)") == "(Arr (-> ((Arr Int (Shp 3))) (Arr Int (Shp 3))) (Shp))"


def test_box_examples_from_the_paper():
    square = "(box 3 (array (3 3) 0 1 2 3 4 5 6 7 8) (Sigma ((n Dim)) (Arr Int (Shp n n))))"
    vectors = "(box 3 (array (3 3) 0 1 2 3 4 5 6 7 8) (Sigma ((n Dim)) (Arr Int (Shp n 3))))"
    assert check_type(square) == "(Arr (Sigma ((n Dim)) (Arr Int (Shp n n))) (Shp))"
    assert check_type(vectors) == "(Arr (Sigma ((n Dim)) (Arr Int (Shp n 3))) (Shp))"
