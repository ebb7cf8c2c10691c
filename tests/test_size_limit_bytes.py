"""The size limit counts each representation's real bytes (issue 29, item 4).

A result of Bool atoms takes one byte each, Int32 and Float32 four, Int and Float eight; the
limit counted eight for all, so ``(= data b)`` lifted over 64 bins of 2,000,000 data (128 MB of
Bool) was refused as 1,024,000,000 bytes.  Each case here sits exactly at the boundary: accepted
at a limit of its real byte count, refused one byte below with a message naming that count —
on every engine, and compiled by JAX.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from remora.dynamics.runtime import RunConfig
from remora.errors import RemoraRuntimeError
from remora.interfaces.session import Session, show_result
from remora.statics.typed import TyExprForm

ENGINES = [("plans", "numpy"), ("frames", "numpy"), ("reference", "numpy"), ("plans", "jax")]

#: name: (program, inputs, atoms of its result, bytes per atom)
CASES = {
    "Bool": ("((λ ((b [Int])) (= data b)) bins)", {"data": np.arange(100), "bins": np.arange(10)}, 1000, 1),
    "Int32": ("((λ ((b [Int32])) (+ data b)) bins)",
              {"data": np.arange(100, dtype=np.int32), "bins": np.arange(10, dtype=np.int32)}, 1000, 4),
    "Float32": ("((λ ((b [Float32])) (* data b)) bins)",
                {"data": np.linspace(0, 1, 50, dtype=np.float32), "bins": np.ones(4, dtype=np.float32)}, 200, 4),
    "Int": ("((λ ((b [Int])) (+ data b)) bins)", {"data": np.arange(100), "bins": np.arange(10)}, 1000, 8),
    # a box's contents: reshape counts the atoms it is given
    "Bool reshape": ("(reshape [10 100] data)", {"data": np.arange(7) % 2 == 0}, 1000, 1),
    "Float32 reshape": ("(reshape [4 50] data)", {"data": np.linspace(0, 1, 3, dtype=np.float32)}, 200, 4),
    "Int iota": ("(iota [10 10])", {}, 100, 8),
}


def _run(engine: str, backend: str, source: str, inputs: dict, max_bytes: int) -> list[str]:
    session = Session(engine=engine, backend=backend, run=RunConfig(stdin=io.StringIO(""), max_bytes=max_bytes))
    for key, value in inputs.items():
        session.bind(key, value)
    return [show_result(f, v) for f, v in session.run_text(source, "<test>") if isinstance(f, TyExprForm)]


def test_each_representation_counts_its_own_bytes():
    from remora.limits import atom_bytes

    assert [atom_bytes(r) for r in ("Bool", "Int32", "Float32", "Int", "Float", "object")] == [1, 4, 4, 8, 8, 8]


@pytest.mark.parametrize("engine,backend", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_result_at_the_limit_runs_and_one_byte_less_is_refused_naming_its_bytes(name, engine, backend):
    if backend != "numpy":
        pytest.importorskip(backend)
    source, inputs, atoms, size = CASES[name]
    nbytes = atoms * size
    assert _run(engine, backend, source, inputs, nbytes)  # exactly at the limit: no refusal
    with pytest.raises(RemoraRuntimeError) as info:
        _run(engine, backend, source, inputs, nbytes - 1)
    assert f"{atoms} atoms ({nbytes:,} bytes)" in info.value.message, info.value.message
    assert info.value.span is not None


def test_the_boxes_a_reference_map_makes_count_their_atoms_and_bytes():
    """The reference engine's running count of what the boxes it made hold: two boxes of six
    Int32 atoms are 12 atoms in 48 bytes (not 48 // 8 = 6 atoms); every other array is 24 bytes."""
    source = "((λ ((x [Int32 3])) (filter (> (append x x) (int->int32 0)) (append x x))) data)"
    inputs = {"data": np.arange(1, 7, dtype=np.int32).reshape(2, 3)}
    assert _run("reference", "numpy", source, inputs, 48)
    with pytest.raises(RemoraRuntimeError) as info:
        _run("reference", "numpy", source, inputs, 47)
    assert "the boxes made by" in info.value.message and "12 atoms (48 bytes)" in info.value.message, info.value.message


@pytest.mark.parametrize("engine,backend", ENGINES)
def test_counting_a_frame_of_comparisons_builds_only_the_bools(engine, backend):
    """``count`` sums the flags themselves: the issue's histogram, scaled down, runs at a limit of
    its Bool frame's bytes (an Int copy of the flags would be eight times that)."""
    if backend != "numpy":
        pytest.importorskip(backend)
    data, bins = np.arange(1000) % 10, np.arange(10)
    source = "((λ ((b [Int])) (count (= data b))) bins)"
    assert _run(engine, backend, source, {"data": data, "bins": bins}, 10_000) == ["[100 100 100 100 100 100 100 100 100 100]"]


def test_the_histogram_of_two_million_data_in_64_bins_runs():
    """The issue's program at its size: 128 MB of Bool, under the default limit."""
    data = np.random.default_rng(0).integers(0, 64, 2_000_000)
    session = Session(run=RunConfig(stdin=io.StringIO("")))
    session.bind("data", data)
    session.bind("bins", np.arange(64))
    ((_, value),) = session.run_text("((λ ((b [Int])) (count (= data b))) bins)", "<test>")
    assert np.array_equal(np.asarray(value), (data == np.arange(64)[:, None]).sum(axis=1))


@pytest.mark.parametrize("engine,backend", ENGINES + [("plans", "dask")])
@pytest.mark.parametrize("source,expected", [
    ("(count [#t #f #t #t])", "3"),
    ("(count (filter [#t #f] [#t #t]))", None),  # a type error: a box is not a vector
    ("((λ ((m [Bool 3])) (unbox (k xs (filter m [#t #t #f])) (count xs))) [[#t #f #t] [#t #t #t] [#f #f #f]])", "[1 2 0]"),
    ("(count [[#t #f #t] [#f #f #f]])", "[2 0]"),
])
def test_count_of_vectors_frames_and_boxes(engine, backend, source, expected):
    if backend != "numpy":
        pytest.importorskip(backend)
    if expected is None:
        from remora.errors import RemoraError

        with pytest.raises(RemoraError):
            _run(engine, backend, source, {}, 10**9)
        return
    assert _run(engine, backend, source, {}, 10**9) == [expected]
