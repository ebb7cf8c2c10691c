"""The benchmark runner's quick modes run in CI as smoke tests: every workload's Remora program
agrees with its NumPy version (no timing is asserted — these machines are shared and noisy)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import workloads  # noqa: E402
from bench.programs import WORKLOADS  # noqa: E402


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_workload_agrees_with_numpy_at_quick_size(workload):
    row = workloads.measure(workload, workload.quick, timing=False)
    assert row["ok"]


def test_quick_mode_runs(capsys):
    assert workloads.main(["--quick", "--only", "dot products"]) == 0
    assert "dot products" in capsys.readouterr().out


def test_every_workload_has_a_sweep_ending_at_its_large_size():
    for w in WORKLOADS:
        assert w.sweep == tuple(sorted(w.sweep)) and w.sweep[-1] == w.large, w.name


def test_the_checker_bench_checks_every_example_with_its_inputs():
    """``python -m bench check`` checks the examples; one reading a data file (kmeans) needs its
    NAME=PATH input bound, as on the command line — it crashed on an unbound variable."""
    from bench import checker

    examples = sorted((checker.ROOT / "examples").glob("*.rem"))
    assert any(checker.example_inputs(p) for p in examples)
    assert checker.examples_check_time(examples, repeat=1) > 0


# --- single precision (python -m bench --dtype=float32, issue 26) ------------------------------------

from bench import precision  # noqa: E402


@pytest.mark.parametrize("workload", precision.SINGLE, ids=lambda w: w.name)
def test_single_precision_workload_agrees_with_numpy_in_float32(workload):
    """Each workload in Float32 (Int32 data where it has integers) gives what the NumPy version
    computes from float32 arrays — in float32: ``precision.agree`` compares dtypes too."""
    inputs = workload.inputs(workload.quick)
    assert any(np.asarray(v).dtype in (np.float32, np.int32) for v in inputs.values()) or workload.name == "Collatz (while)"
    row = workloads.measure(workload, workload.quick, timing=False, same=precision.agree)
    assert row["ok"]


def test_single_precision_quick_mode_runs_on_numpy_and_jax(capsys):
    assert workloads.main(["--quick", "--dtype=float32", "--only", "batched softmax", "Game of Life"]) == 0
    pytest.importorskip("jax")
    assert workloads.main(["--quick", "--dtype=float32", "--backend=jax", "--only", "dot products"]) == 0
    out = capsys.readouterr().out
    assert "batched softmax" in out and "Game of Life" in out and "/Float" in out


def test_the_single_precision_programs_are_float32_programs():
    import remora

    for w in precision.SINGLE:
        if w.name != "Collatz (while)":
            assert "Float32" in str(remora.check(w.source, **w.inputs(w.quick))) or "Int32" in str(
                remora.check(w.source, **w.inputs(w.quick))), w.name
