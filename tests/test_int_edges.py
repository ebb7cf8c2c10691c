"""Counts at the edge of ``Int`` (issue 29, item 6; contract §6).

``take``/``drop`` checked ``abs(n) <= length``; the absolute value of −2⁶³ wraps to −2⁶³ itself,
so the most negative Int passed as a small count (``(take -9223372036854775808 [1 2 3])`` gave
all three items).  A lifted ``iota/v`` summed its lengths as Ints before its size check, so huge
lengths wrapped to a small or negative total (an internal ``ValueError``).  Each case is a located
run-time error on every engine and backend, lifted or not; ``rotate`` and ``index`` take such a
count right.
"""

from __future__ import annotations

import io

import pytest

from remora.dynamics.runtime import RunConfig
from remora.errors import RemoraRuntimeError, RemoraTypeError
from remora.interfaces.session import Session, show_result
from remora.statics.typed import TyExprForm

MIN = -(2**63)
MIN32 = -(2**31)

ENGINES = [("plans", "numpy"), ("frames", "numpy"), ("reference", "numpy"), ("plans", "jax"), ("plans", "dask")]

#: program: the start of its located run-time error
ERRORS = {
    f"(take {MIN} [1 2 3])": f"take of {MIN} items from an array of 3 items",
    f"(drop {MIN} [1 2 3])": f"drop of {MIN} items from an array of 3 items",
    f"(drop [1 {MIN} 0] [1 2 3])": f"drop of {MIN} items from an array of 3 items",
    f"(take [{MIN} 1] [[1 2 3] [4 5 6]])": f"take of {MIN} items from an array of 2 items",
    f"((λ ((n [Int])) (take n [1 2 3])) [1 {MIN}])": f"take of {MIN} items from an array of 3 items",
    f"((λ ((n [Int])) (drop n [[1 2] [3 4]])) [[0 {MIN}] [1 2]])": f"drop of {MIN} items from an array of 2 items",
    f"(take (int32->int (int->int32 {MIN32})) [1 2 3])": f"take of {MIN32} items from an array of 3 items",
    "(take -4 [1 2 3])": "take of -4 items from an array of 3 items",
    f"(index [1 2 3] {MIN})": f"index {MIN} is out of range for 3 items",
    f"(iota/v [{2**63 - 1} {2**63 - 1}])": "`iota/v` would build an array of",
    # (lifted, the lengths' sum, 2⁶⁴ + 5, wrapped to 5; the reference engine refuses the first box)
    f"(iota/v [{2**62} {2**62} {2**62} {2**62} 5])": "`iota/v` would build an array of",
}

#: program: its value (the edges that are not errors)
VALUES = {
    "(take [-3 3] [1 2 3])": "[(box 3 [1 2 3]) (box 3 [1 2 3])]",
    "(drop [-3 3 0] [1 2 3])": "[(box 0 (array (0) Int)) (box 0 (array (0) Int)) (box 3 [1 2 3])]",
    # −2⁶³ modulo 3 is 1 (2⁶³ ≡ 2): rotated left by one
    f"(rotate [1 2 3] {MIN})": "[2 3 1]",
    f"(rotate [[1 2 3] [4 5 6]] [1 {MIN}])": "[[[4 5 6] [1 2 3]] [[1 2 3] [4 5 6]]]",
    f"((λ ((n [Int])) (rotate [1 2 3] n)) [{MIN} {2**63 - 1}])": "[[2 3 1] [2 3 1]]",
}


def _shown(source: str, engine: str, backend: str) -> list[str]:
    session = Session(engine=engine, backend=backend, run=RunConfig(stdin=io.StringIO("")))
    return [show_result(f, v) for f, v in session.run_text(source, "<test>") if isinstance(f, TyExprForm)]


def _skip_without(backend: str) -> None:
    if backend != "numpy":
        pytest.importorskip(backend)


@pytest.mark.parametrize("engine,backend", ENGINES)
@pytest.mark.parametrize("source", sorted(ERRORS))
def test_a_count_past_the_length_is_a_located_error_even_at_the_edge_of_int(source, engine, backend):
    _skip_without(backend)
    with pytest.raises(RemoraRuntimeError) as info:
        _shown(source, engine, backend)
    assert info.value.message.startswith(ERRORS[source]), info.value.message
    assert info.value.span is not None and info.value.span.line == 1


@pytest.mark.parametrize("engine,backend", ENGINES)
@pytest.mark.parametrize("source", sorted(VALUES))
def test_counts_at_the_edges_that_fit_give_their_values(source, engine, backend):
    _skip_without(backend)
    assert _shown(source, engine, backend) == [VALUES[source]]


def test_an_int32_count_is_a_type_error_that_names_the_conversion():
    with pytest.raises(RemoraTypeError) as info:
        _shown(f"(take (int->int32 {MIN32}) [1 2 3])", "plans", "numpy")
    assert "int32->int" in info.value.message


@pytest.mark.parametrize("backend", ["numpy", "jax", "dask"])
@pytest.mark.parametrize("source", ["(drop n [1 2 3])", "((λ ((m [Int])) (take m [1 2 3])) n)"])
def test_the_most_negative_int_as_input_data_is_a_located_error(source, backend):
    """The counts come in as data (compiled by JAX as an argument, not a constant)."""
    import numpy as np

    import remora

    _skip_without(backend)
    with pytest.raises(RemoraRuntimeError) as info:
        remora.evaluate(source, n=np.array([[1, MIN], [0, 2]]), backend=backend)
    assert f"of {MIN} items from an array of 3 items" in info.value.message
    assert info.value.span is not None
