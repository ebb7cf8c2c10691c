"""Printing values: the command line's one-line format (contract §3), now built a row at a
time, is exactly what the former per-atom printer wrote; and the layout for people (the REPL
at a terminal, notebooks: decisions.md D35) — rows, alignment, summaries — reads back."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import remora
from remora.statics.indices import concrete_shape
from remora.interfaces.layout import Display, show
from remora.statics.types import BASE_TYPES, TArr
from remora.interfaces.show import show_atom, show_value


def _type(a: np.ndarray) -> TArr:
    name = {np.dtype(np.int64): "Int", np.dtype(np.float64): "Float", np.dtype(np.bool_): "Bool"}[a.dtype]
    return TArr(BASE_TYPES[name], concrete_shape(a.shape))


def _former(value: np.ndarray, atom) -> str:
    """The printer this project had: a Python call per atom (the specification of the format)."""
    if value.ndim == 0:
        return show_atom(value.tolist(), atom)  # (a Python atom, as the backend hands them over)
    return "[" + " ".join(_former(value[i, ...], atom) for i in range(value.shape[0])) + "]"


SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4)
ARRAYS = st.one_of(
    hnp.arrays(np.int64, SHAPES),
    hnp.arrays(np.float64, SHAPES, elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.bool_, SHAPES),
)


@settings(max_examples=200, deadline=None)
@given(ARRAYS)
def test_one_line_format_is_the_former_printers(a):
    assert show_value(a, _type(a)) == _former(a, _type(a).atom)
    assert show(a, _type(a), Display(rows=False, limit=None)) == show_value(a, _type(a))


def test_one_line_format_of_boxes_functions_and_empty_arrays():
    from conftest import eval_value

    assert eval_value("(iota/v [1 2 3])") == "[(box 1 [0]) (box 2 [0 1]) (box 3 [0 1 2])]"
    assert eval_value("[+ -]") == "[#<function> #<function>]"
    assert eval_value("(array (0 3) Int)") == "(array (0 3) Int)"
    assert eval_value("[[-0.0 1e-05] [2.5 1e+16]]") == "[[-0.0 1e-05] [2.5 1e+16]]"


def test_rows_are_aligned_as_numpy_aligns_them():
    ints = np.array([[1, 2, 3], [40, 50, -6]])
    assert show(ints, _type(ints)) == "[[ 1  2  3]\n [40 50 -6]]"
    floats = np.array([[1.5, -0.25], [10.0, 2.0]])
    assert show(floats, _type(floats)) == "[[ 1.5  -0.25]\n [10.0   2.0 ]]"
    cube = np.arange(8).reshape(2, 2, 2)
    assert show(cube, _type(cube)) == "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"
    vector = np.array([1, 20, 300])
    assert show(vector, _type(vector)) == "[1 20 300]"  # rank 1: one line, as written


def test_more_than_a_thousand_atoms_are_summarised():
    exactly = np.arange(1000)
    assert "…" not in show(exactly, _type(exactly))
    one_more = np.arange(1001)
    assert show(one_more, _type(one_more)) == "[0 1 2 … 998 999 1000]"
    matrix = np.arange(2000).reshape(400, 5)  # the short axis is kept whole
    assert show(matrix, _type(matrix)) == (
        "[[   0    1    2    3    4]\n [   5    6    7    8    9]\n [  10   11   12   13   14]\n …\n"
        " [1985 1986 1987 1988 1989]\n [1990 1991 1992 1993 1994]\n [1995 1996 1997 1998 1999]]"
    )
    assert "…" not in show(matrix, _type(matrix), Display(limit=None))


def test_box_contents_are_summarised_too():
    from remora.interfaces.session import Session

    session = Session()
    form = session.check_text("(iota/v 5000)", "<test>")[0]
    value = session.evaluate(form)
    assert show(value, form.expr.type) == "(box 5000 [0 1 2 … 4997 4998 4999])"


@settings(max_examples=50, deadline=None)
@given(st.one_of(hnp.arrays(np.int64, SHAPES, elements=st.integers(-10**6, 10**6)),
                 hnp.arrays(np.float64, SHAPES, elements=st.floats(-1e6, 1e6)),
                 hnp.arrays(np.bool_, SHAPES)))
def test_rows_read_back_as_the_same_value(a):
    text = show(a, _type(a), Display(rows=True, limit=None))
    back = remora.evaluate(text)
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.array_equal(back, a)
