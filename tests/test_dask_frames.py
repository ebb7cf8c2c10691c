"""The Dask backend over frames of several axes, recursion, and errors with a place (issue 29, items
8 and 9; spec D49).

``if`` over a frame of two or more axes hands each branch its cells by n-d fancy indexing, which
Dask does not have (an internal ``NotImplementedError`` through the API and the command line); so
did recursion and ``while`` inside a λ over such a frame.  A failure of the Dask machinery raised
while a form was being built had no place (``<unknown>:0:0``), and ``iota`` of a shape past the
client's memory was one although Dask lifts the size limit.  A recursion under ``if`` recomputed
every level above it at every level: quadratic in its depth."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import dask  # noqa: E402

import remora  # noqa: E402
from conftest import subprocess_env  # noqa: E402
from remora.backends import get  # noqa: E402
from remora.dynamics.runtime import RunConfig  # noqa: E402
from remora.errors import RemoraBackendError  # noqa: E402
from remora.interfaces.session import Session, show_result  # noqa: E402
from remora.statics.typed import TyExprForm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
M = np.array([[1, -2], [0, 3]], dtype=np.int64)
CUBE = np.arange(-6, 6, dtype=np.int64).reshape(2, 3, 2)
REC = "(define (g (n [Int])) : [Int] (if (<= n 0) 0 (+ 1 (g (- n 1)))))\n"

#: programs over ``m`` (a frame of two or three axes) whose cells split between the branches of an
#: ``if``, recurse, or run a ``while`` that captures a batched value
PROGRAMS = {
    "if": "(define (f (a [Int])) (if (> a 0) (* a 10) (neg a))) (f m)",
    "if capturing a second argument": "(define (f (a [Int]) (b [Int])) (if (> a 0) (* b 10) (neg a))) (f m (+ 1 m))",
    "if over cells of a vector": "(define (f (a [Int 2])) (if (> (head a) 0) (* a 10) (neg a))) (f (abs m))",
    "recursion": REC + "(g (abs m))",
    "while capturing an argument": "((λ ((k [Int]) (d [Int])) (while (λ ((s [Int])) (> s 0)) (λ ((s [Int])) (- s d)) k))"
                                   " (* 3 (abs m)) (+ 1 (abs m)))",
    "a branch's closure": "(define (f (a [Int])) ((if (> a 0) (λ ((x [Int])) (+ x a)) (λ ((x [Int])) (- x a))) 1)) (f m)",
    "boxes from the branches": "(define (f (a [Int])) (if (> a 0) (iota/v a) (iota/v 1))) (f m)",
    "unbox grouped by length": "(define (f (a [Int])) (unbox (k v (iota/v (abs a))) (reduce + (append [0] v)))) (f m)",
}


def _printed(source: str, backend: str, m) -> list[str]:
    session = Session(run=RunConfig(stdin=io.StringIO("")), backend=backend)
    session.bind("m", m)
    return [show_result(f, v) for f, v in session.run_text(source, "<test>") if isinstance(f, TyExprForm)]


@pytest.mark.parametrize("frame", [M, CUBE], ids=["2 axes", "3 axes"])
@pytest.mark.parametrize("given", ["numpy", "dask in blocks of one"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_if_recursion_and_while_over_a_frame_of_several_axes_agree_with_numpy(name, given, frame):
    """A NumPy input (brought into the client, where it is small) and a Dask one cut into blocks of
    one cell (which stays on Dask: the branches' cells are Dask's ``vindex``) — as on NumPy."""
    m = frame if given == "numpy" else da.from_array(frame, chunks=1)
    on_dask = _printed(PROGRAMS[name], "dask", m if given != "numpy" else get("dask").from_numpy(frame))
    assert on_dask == _printed(PROGRAMS[name], "numpy", frame)


def test_the_issues_program_on_the_command_line(tmp_path):
    np.save(tmp_path / "M.npy", M)
    (tmp_path / "p.rem").write_text("(define (f (a [Int])) (if (> a 0) (* a 10) (neg a))) (f m)\n")
    proc = subprocess.run([sys.executable, "-m", "remora", "eval", "--backend=dask", str(tmp_path / "p.rem"),
                           f"m={tmp_path / 'M.npy'}"], capture_output=True, text=True, env=subprocess_env(),
                          cwd=ROOT, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "[[10 2] [0 30]]\n", "")


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 2, 2)])
def test_gathers_and_scatters_by_positions_of_any_rank_agree_with_numpy(shape):
    """The backend's kernels on positions take positions of any rank on Dask as on NumPy (Dask's
    own indexing takes one vector of positions, and n-d fancy indexing not at all)."""
    xp, np_ = get("dask"), get("numpy")
    rng = np.random.default_rng(len(shape))
    x = rng.integers(0, 100, (8, 4, 3))
    dx = da.from_array(x, chunks=(2, 2, 3))
    at = rng.permutation(8)[: int(np.prod(shape))].reshape(shape)  # (distinct: a scatter's positions)
    np.testing.assert_array_equal(xp.gather(dx, at).compute(), np_.gather(x, at))
    coords = np.unravel_index(at.reshape(-1), (4, 2))
    cells = rng.integers(0, 100, (4, 2, 4))
    np.testing.assert_array_equal(np.asarray(xp.gather_cells(da.from_array(cells, chunks=1), coords)),
                                  np_.gather_cells(cells, coords))
    values = rng.integers(0, 100, shape + (4, 3))
    got = xp.scatter(dx, at, da.from_array(values))
    np.testing.assert_array_equal(got.compute(), np_.scatter(x.copy(), at, values))
    np.testing.assert_array_equal(xp.scatter(dx, at, 7).compute(), np_.scatter(x.copy(), at, 7))


def test_an_operation_dask_does_not_have_is_a_located_error_naming_the_backend(monkeypatch):
    """Dask's own ``NotImplementedError`` (here the n-d fancy indexing the backend now avoids, put
    back) is a located ``RemoraBackendError``, never a bare exception through the API."""
    from remora.backends.dask_backend import DaskBackend

    monkeypatch.setattr(DaskBackend, "gather_cells", lambda self, x, coords: x[tuple(coords)])
    with pytest.raises(RemoraBackendError) as caught:
        remora.evaluate("(define (f (a [Int])) (if (> a 0) (* a 10) (neg a)))\n(f m)",
                        m=da.from_array(M, chunks=1), backend="dask")
    assert (caught.value.line, caught.value.column) == (2, 1)
    assert "dask backend cannot run this" in caught.value.message and "nd fancy indexing" in caught.value.message


def test_remoras_own_not_implemented_error_is_not_taken_for_daskss():
    from remora.backends.dask_failures import failure

    try:
        raise NotImplementedError("a bug of remora's")
    except NotImplementedError as exc:
        assert failure(exc) is None
