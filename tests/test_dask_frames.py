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


# --- errors with a place, and shapes past the client's memory -------------------------------------

#: ``iota/v`` over a frame lays its boxes out in one buffer of 10¹² atoms, made in the client
HUGE_IOTA_V = "(unbox (k v (iota/v [500000000000 500000000000])) 0)"


def test_a_failure_while_a_form_is_built_is_located_through_every_entry_point():
    """A ``MemoryError`` raised in the client while the graph is built (not while a task runs) was
    converted to the backend's error after the form's location had been given: ``<unknown>:0:0``."""
    proc = subprocess.run([sys.executable, "-m", "remora", "eval", "--backend=dask", "-e", HUGE_IOTA_V],
                          capture_output=True, text=True, env=subprocess_env(), cwd=ROOT, timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("<expr>:1:1: error: the dask backend failed"), proc.stderr
    assert "MemoryError" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(RemoraBackendError) as caught:
        remora.evaluate(HUGE_IOTA_V, backend="dask")
    assert (caught.value.line, caught.value.column) == (1, 1)
    f = remora.function("(λ ((n [Int])) (unbox (k v (iota/v [n n])) 0))", backend="dask")
    with pytest.raises(RemoraBackendError) as caught:
        f(500000000000)
    assert caught.value.span is not None and "MemoryError" in caught.value.message


def test_a_failure_on_the_reference_engine_is_located_at_its_form():
    """The reference engine on Dask gave no place to any failure of the machinery (a block of 32 TiB
    here, too large to allocate where its task runs)."""
    session = Session(engine="reference", backend="dask")
    session.bind("v", da.arange(2**42, dtype=np.int64, chunks=-1))
    with pytest.raises(RemoraBackendError) as caught:
        list(session.run_text("(+ 1 2)\n(/ 1 (sum v))", "<test>"))
    assert (caught.value.line, caught.value.column) == (2, 1) and "MemoryError" in caught.value.message


def test_iota_and_reshape_past_one_block_are_lazy_and_made_at_their_shape():
    """Dask lifts the size limit because no array is held whole: ``iota`` of 10¹² atoms was a
    ``MemoryError`` in the client.  Past one block such an array is made block by block where its
    tasks run, at its own shape."""
    assert remora.evaluate("(unbox (s v (iota [1000000 1000000])) 0)", backend="dask").compute() == 0
    with dask.config.set({"array.chunk-size": "1KiB"}):  # (128 atoms a block)
        for source in ("(unbox (s v (iota [30 7 5])) (unbox (k w (ravel v)) (sum (* w w))))",
                       "(unbox (s v (reshape [40 9] [1 -2 3 5])) (unbox (k w (ravel v)) (sum (scan + 0 w))))",
                       "(unbox (k v (iota/v [300 7 200])) (reduce + (append [0] v)))"):
            got = remora.evaluate(source, backend="dask")
            np.testing.assert_array_equal(got.compute(), remora.evaluate(source))
        boxed = remora.evaluate("(iota [30 7 5])", backend="dask")[()]
        assert boxed.value.chunks == ((3,) * 10, (7,), (5,))  # (made at its shape, the trailing axes whole)
        np.testing.assert_array_equal(boxed.value.compute(), np.arange(1050).reshape(30, 7, 5))


# --- recursion -------------------------------------------------------------------------------------


def _graphs(source: str, **inputs) -> list[int]:
    """The number of tasks of each Dask computation evaluating ``source`` makes."""
    from dask.callbacks import Callback

    graphs: list[int] = []
    with Callback(start=lambda dsk: graphs.append(len(dsk))):
        out = remora.evaluate(source, backend="dask", **inputs)
        out.compute(optimize_graph=False)
    return graphs


def test_a_recursion_under_if_computes_bounded_graphs_whatever_its_depth():
    """Each level of a recursion over a frame computes its flags on the host; its cells were a
    lazy graph of every level above, computed again at every level (depth 200/400/800: 5.5/16/56 s,
    `python -m bench recursion`).  What the branches start from is settled at each ``if``: the
    largest graph no longer grows with the depth, and the computations grow linearly with it."""

    def run(depth):
        v = np.array([depth, depth // 2, 3, 0] * 2)
        return _graphs(REC + "(g v)", v=da.from_array(v, chunks=2))  # (a state that stays on Dask)

    shallow, deep = run(40), run(160)
    assert max(deep) < 1.5 * max(shallow)  # (bounded: persisted past 32 tasks a block; it was 1.5 per level)
    assert len(deep) <= 4 * len(shallow) + 8
