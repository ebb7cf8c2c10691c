"""Every pointful program (`for`, contract §12) agrees with its point-free version and with
NumPy on every engine (reference, frames, plans) and every backend (NumPy, JAX, Dask): the
workloads of ``python -m bench --pointful`` at small sizes, with random inputs."""

from __future__ import annotations

import io

import numpy as np
import pytest

from bench.pointful import WORKLOADS, sources
from remora.dynamics.runtime import RunConfig
from remora.interfaces.session import Session

SIZE = 5

ENGINES = [("reference", "numpy"), ("frames", "numpy"), ("plans", "numpy"), ("plans", "jax"), ("plans", "dask")]


def _run(source: str, inputs: dict, engine: str, backend: str):
    if backend != "numpy":
        pytest.importorskip(backend)
    session = Session(engine=engine, run=RunConfig(stdin=io.StringIO("")), backend=backend)
    for name, value in inputs.items():
        session.bind(name, value)
    *_, (_, value) = session.run_text(source, "<test>")
    return np.asarray(value)


@pytest.mark.parametrize("engine, backend", ENGINES)
@pytest.mark.parametrize("w", WORKLOADS, ids=lambda w: w.name)
def test_pointful_agrees_with_point_free_and_numpy(w, engine, backend):
    inputs = w.inputs(SIZE)
    pointful, pointfree = sources(w, SIZE)
    got = _run(pointful, inputs, engine, backend)
    want = w.numpy(**inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)
    assert np.allclose(got, _run(pointfree, inputs, engine, backend), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("engine, backend", ENGINES)
def test_index_arithmetic_out_of_range_is_the_same_located_error(engine, backend):
    """(index xs (+ i 1)) past the end is index's run-time error on every engine and backend."""
    from remora.errors import RemoraRuntimeError

    with pytest.raises(RemoraRuntimeError) as info:
        _run("(for ((i 4)) (index xs (+ i 1)))", {"xs": np.arange(4.0)}, engine, backend).tolist()
    assert info.value.span is not None and (info.value.span.line, info.value.span.col) == (1, 14)


def test_the_pointful_bench_runs_at_its_smallest_size(capsys):
    """``python -m bench --pointful --smallest`` (a smoke test: no timing is asserted)."""
    import subprocess
    import sys

    from bench import pointful
    from conftest import ROOT, subprocess_env

    assert pointful.main(["--pointful", "--smallest", "--repeat", "1", "--only", "matrix", "softmax"]) == 0
    out = capsys.readouterr().out
    assert "matrix product" in out and "softmax" in out and "stencil" not in out
    done = subprocess.run([sys.executable, "-m", "bench", "--pointful", "--smallest", "--repeat", "1", "--only", "L1"],
                          capture_output=True, text=True, cwd=ROOT, env=subprocess_env(), timeout=300)
    assert done.returncode == 0 and "pairwise L1" in done.stdout, done.stderr
