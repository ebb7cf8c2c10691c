"""The inner primitive (and so the prelude's dot and matmul): small frames are computed cell by
cell in a fixed order (the engines agree exactly); large Float frames shaped like a matrix
product use one BLAS product, whose results equal NumPy's up to rounding."""

import numpy as np
import pytest

import remora
from conftest import eval_value
from remora.primitives.arrays import BLAS_WORK


def test_small_dot_and_matmul_agree_exactly_on_both_engines():
    assert eval_value("(dot [1.5 2.5] [2.0 4.0])") == "13.0"
    assert eval_value("(matmul [[1 2] [3 4]] [[5 6] [7 8]])") == "[[19 22] [43 50]]"
    assert eval_value("((λ ((p [Float 2])) (dot p [[1.0 0.0] [0.0 1.0] [1.0 1.0]])) [[1.0 2.0] [3.0 4.0]])") == (
        "[[1.0 2.0 3.0] [3.0 4.0 7.0]]"
    )


@pytest.mark.parametrize(
    "program, numpy_version",
    [
        ("(matmul a b)", lambda a, b: a @ b),
        ("((λ ((row [Float 64])) (dot row b)) a)", lambda a, b: a @ b.T),  # rows against rows
        ("((λ ((row [Float 64])) (dot b row)) a)", lambda a, b: a @ b.T),
        ("(dot a b)", lambda a, b: np.einsum("ij,ij->i", a, b)),  # batched: both vary
    ],
)
def test_large_float_contractions(program, numpy_version):
    rng = np.random.default_rng(0)
    n = int((BLAS_WORK / 64) ** 0.5) + 8
    a, b = rng.standard_normal((n, 64)), rng.standard_normal((n, 64))
    if program == "(matmul a b)":
        b = rng.standard_normal((64, n))
    got = remora.evaluate(program, a=a, b=b)
    assert np.allclose(got, numpy_version(a, b), rtol=1e-12, atol=1e-12)


def test_int_contractions_are_exact():
    rng = np.random.default_rng(1)
    a, b = rng.integers(-100, 100, (300, 200)), rng.integers(-100, 100, (200, 300))
    assert np.array_equal(remora.evaluate("(matmul a b)", a=a, b=b), a @ b)
