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
