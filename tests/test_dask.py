"""The Dask backend (issue 17, contract §8): the examples and the benchmark workloads give the
NumPy backend's values on a ``distributed`` cluster; inputs are NumPy or Dask arrays, chunked
along frame axes only, and results Dask arrays; errors stay located and a type error comes before
any task runs; an input several times a worker's memory is processed block by block."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import remora  # noqa: E402
from conftest import subprocess_env  # noqa: E402
from remora.dynamics.runtime import RunConfig  # noqa: E402
from remora.errors import RemoraRuntimeError, RemoraTypeError  # noqa: E402
from remora.interfaces import datafiles  # noqa: E402
from remora.interfaces.session import Session  # noqa: E402
from remora.statics.typed import TyExprForm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.rem"))
#: the examples run on the cluster too (every example runs on Dask's local scheduler below; the
#: cluster adds a round trip per computation, and the loop-heavy ones make many)
ON_CLUSTER = ["dot", "histogram", "l1-distances", "matmul", "nbody", "outer", "ragged", "read-nums",
              "scan", "shapes", "softmax"]
#: a worker's memory limit in the cluster of these tests
WORKER_MEMORY = 256 * 2**20
NORM = "(λ ((v [Float 3])) (sqrt (sum (* v v))))"


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on loopback, each with :data:`WORKER_MEMORY`; the client is made the
    default only inside :func:`on_cluster`."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, memory_limit=WORKER_MEMORY) as c:
        with distributed.Client(c, set_as_default=False) as client:
            yield client


class on_cluster:
    """The cluster's client as the default for the duration (what ``--scheduler`` does)."""

    def __init__(self, client) -> None:
        self.client = client

    def __enter__(self):
        self._current = self.client.as_current()
        self._current.__enter__()
        self._config = dask.config.set(scheduler=self.client)
        self._config.__enter__()
        return self.client

    def __exit__(self, *exc) -> None:
        self._config.__exit__(*exc)
        self._current.__exit__(*exc)


def _values(name: str, backend: str) -> list[tuple[str, object]]:
    """(printed value, raw value) of each expression of an example on ``backend``."""
    from remora.interfaces.session import show_result

    stdin = EXAMPLES / f"{name}.in"
    session = Session(run=RunConfig(stdin=io.StringIO(stdin.read_text() if stdin.exists() else "")), backend=backend)
    args = EXAMPLES / f"{name}.args"  # NAME=PATH data files (paths from the repository's root)
    for name_path in (args.read_text(encoding="utf-8").split() if args.exists() else []):
        input_name, _, path = name_path.partition("=")
        session.bind(input_name, session.engine.xp.from_numpy(datafiles.load(str(ROOT / path))))
    source = (EXAMPLES / f"{name}.rem").read_text(encoding="utf-8")
    return [(show_result(f, v), v) for f, v in session.run_text(source, name) if isinstance(f, TyExprForm)]


def _agree(got, want, rtol: float = 1e-9) -> None:
    # (unoptimised, as the engine computes: an optimised graph renames tasks the cluster may still
    # know from the engine's own computations of the same program — D49, Dask issue 9888)
    got = got.compute(optimize_graph=False) if hasattr(got, "compute") else got
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)
    elif want.dtype != object:
        np.testing.assert_array_equal(got, want)


def _example_agrees(name: str) -> None:
    expected = (EXAMPLES / f"{name}.out").read_text(encoding="utf-8").splitlines()
    on_dask = _values(name, "dask")
    assert [p for p, _ in on_dask] == expected
    for (_, got), (_, want) in zip(on_dask, _values(name, "numpy")):
        _agree(got, want)


# --- the examples and the benchmark workloads --------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_example_prints_its_out_file_on_dask(name):
    _example_agrees(name)


@pytest.mark.parametrize("name", ON_CLUSTER)
def test_examples_on_a_two_worker_cluster(cluster, name):
    with on_cluster(cluster):
        _example_agrees(name)


def _workloads():
    sys.path.insert(0, str(ROOT))
    try:
        from bench.programs import WORKLOADS
    finally:
        sys.path.remove(str(ROOT))
    return WORKLOADS


#: workloads that loop over items with a scheduler round trip per step (a check of the running
#: cells, or a step's accumulator persisted): on the cluster at a size that keeps them to seconds
CLUSTER_SIZES = {"Collatz (while)": 8, "fold of a λ": 30}


@pytest.mark.parametrize("workload", _workloads(), ids=lambda w: w.name)
def test_bench_workloads_at_quick_sizes_on_the_cluster(cluster, workload):
    inputs = workload.inputs(CLUSTER_SIZES.get(workload.name, workload.quick))
    with on_cluster(cluster):
        got = remora.evaluate(workload.source, backend="dask", **inputs)
        assert isinstance(got, da.Array)
        _agree(got.compute(), workload.numpy(**inputs), max(workload.rtol, 1e-9))


# --- inputs, results, chunks -----------------------------------------------------------------------


def test_inputs_numpy_or_dask_and_results_are_dask_arrays():
    x = np.arange(12.0).reshape(4, 3)
    for given in (x, da.from_array(x, chunks=(2, 3))):
        out = remora.evaluate("(+ x 1.0)", x=given, backend="dask")
        assert isinstance(out, da.Array)
        np.testing.assert_array_equal(out.compute(), x + 1)
    f = remora.function(NORM, backend="dask")
    out = f(da.from_array(x, chunks=(1, 3)))
    assert isinstance(out, da.Array) and out.chunks == ((1, 1, 1, 1),)
    np.testing.assert_allclose(out.compute(), np.sqrt((x * x).sum(-1)), rtol=1e-15)
    assert isinstance(remora.evaluate("(+ 1 2)", backend="dask"), da.Array)


def test_numpy_inputs_are_chunked_along_frame_axes_never_cell_axes():
    f = remora.function("(λ ((m [Float 50 3])) (sum (sum m)))", backend="dask")
    x = np.random.default_rng(0).random((8, 50, 3))
    with dask.config.set({"array.chunk-size": "1KiB"}):  # less than one cell (150 atoms)
        frame = f(x)
    assert frame.chunks == ((1,) * 8,)  # one cell per block: the cells' axes (50, 3) never cut
    np.testing.assert_allclose(frame.compute(), x.sum(axis=(1, 2)), rtol=1e-12)
    from remora.backends import get

    arr = get("dask").from_numpy(np.zeros((1000, 7)), frame_axes=1)
    assert arr.chunks[1] == (7,)


def test_a_chunked_frame_is_blockwise_and_reductions_cross_chunks():
    """Elementwise work over a chunked frame is one task per block; ``reduce``/``scan`` along the
    chunked axis use Dask's tree reduction and cumulative scan — values as NumPy's (D49)."""
    rng = np.random.default_rng(1)
    v = rng.random(10_000)
    chunked = da.from_array(v, chunks=1000)
    total = remora.evaluate("(reduce + (* v v))", v=chunked, backend="dask")
    np.testing.assert_allclose(total.compute(), remora.evaluate("(reduce + (* v v))", v=v), rtol=1e-12)
    running = remora.evaluate("(scan + 0.0 v)", v=chunked, backend="dask")
    np.testing.assert_allclose(running.compute(), remora.evaluate("(scan + 0.0 v)", v=v), rtol=1e-9)
    assert remora.evaluate("(reduce max v)", v=chunked, backend="dask").compute() == v.max()
    ints = np.arange(10_000) % 7
    for source in ("(scan * 1 (+ 1 (* 0 v)))", "(scan max 0 v)", "(reduce min v)"):
        got = remora.evaluate(source, v=da.from_array(ints, chunks=999), backend="dask")
        np.testing.assert_array_equal(got.compute(), remora.evaluate(source, v=ints))
    rotated = remora.evaluate("(rotate v 3)", v=da.from_array(ints, chunks=999), backend="dask")
    np.testing.assert_array_equal(rotated.compute(), np.roll(ints, -3))
    appended = remora.evaluate("(append v (reverse v))", v=da.from_array(ints, chunks=999), backend="dask")
    np.testing.assert_array_equal(appended.compute(), np.concatenate([ints, ints[::-1]]))


def test_data_dependent_shapes_are_computed_before_use():
    ints = np.arange(1000) % 10
    got = remora.evaluate("(unbox (k xs (filter (< v 3) v)) (sum xs))", v=da.from_array(ints, chunks=100),
                          backend="dask")
    assert got.compute() == ints[ints < 3].sum()


def test_index_lifted_over_a_frame_of_positions_of_any_rank():
    """``index`` of one array at each cell's position is a ``take`` by an n-d array of positions,
    which Dask only does by a vector (it was an internal error)."""
    v = np.arange(7.0) * 1.5
    for source in ("((λ ((i [Int])) (index v [i])) (+ 2 [0 1 2]))", "((λ ((i [Int])) (index v i)) (+ 2 [[0 1 2] [3 4 0]]))"):
        _agree(remora.evaluate(source, v=v, backend="dask"), remora.evaluate(source, v=v))


def test_a_loop_over_a_chunked_frame_keeps_its_blocks():
    """A fold whose step rotates (splitting blocks) keeps the blocks of its first accumulator."""
    grid = (np.arange(64 * 64) % 3 == 0).astype(np.int64).reshape(64, 64)
    source = "(iterate (λ ((g [Int 64 64])) (rotate g 1)) 12 g)"
    out = remora.evaluate(source, g=da.from_array(grid, chunks=(32, 64)), backend="dask")
    assert out.chunks == ((32, 32), (64,))
    np.testing.assert_array_equal(out.compute(), np.roll(grid, -12, axis=0))


def test_a_frame_broadcast_from_small_operands_is_cut_into_bounded_blocks():
    """An outer product's frame is broadcast from two vectors: its blocks stay within the block
    size (Dask would make each stretched axis one block: the whole frame in one task)."""
    x = np.arange(1000.0)
    with dask.config.set({"array.chunk-size": "64KiB"}):
        table = remora.evaluate("(outer * x x)", x=x, backend="dask")
    assert max(table.chunks[0]) * max(table.chunks[1]) * 8 <= 64 * 2**10
    np.testing.assert_array_equal(table.compute(), np.multiply.outer(x, x))


def test_a_matrix_product_on_dask_is_one_matrix_product_as_on_numpy():
    """``inner`` over a matrix product's frame sees, through the broadcast, that rows of one
    operand meet columns of the other (``compact``), and makes NumPy's one matrix product — not
    n³ elementwise products held in one block (the bench's 1024×1024 product took 14 GB)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((96, 80)), rng.standard_normal((80, 64))
    source = "(matmul a b)"
    got = remora.evaluate(source, a=a, b=b, backend="dask")
    largest = max(np.prod([max(c) for c in layer_chunks]) for layer_chunks in _chunks_in_graph(got))
    assert largest <= 96 * 80  # (never a block of 96 × 64 × 80 products)
    np.testing.assert_array_equal(got.compute(), remora.evaluate(source, a=a, b=b))


def _chunks_in_graph(x) -> list:
    """The chunks of every array layer of ``x``'s graph (its intermediate arrays)."""
    graph = x.__dask_graph__()
    out = []
    for layer in graph.layers.values():
        meta = getattr(layer, "collection_annotations", None) or {}
        if "chunks" in meta:
            out.append(meta["chunks"])
    return out or [x.chunks]


def test_the_block_size_is_not_asked_of_the_scheduler_for_every_broadcast(cluster, monkeypatch):
    """The block size depends on the workers' memory, which is a round trip to the scheduler to
    ask: asked at every broadcast, a 20-step loop of stencils made ~0.5 s round trips per step."""
    from remora.backends import dask_blocks

    asked = []
    real = type(cluster).scheduler_info
    monkeypatch.setattr(type(cluster), "scheduler_info", lambda self, *a, **k: asked.append(1) or real(self, *a, **k))
    monkeypatch.setattr(dask_blocks, "_WORKER_MEMORY", {})
    grid = (np.arange(32 * 32) % 3 == 0).astype(np.int64).reshape(32, 32)
    with on_cluster(cluster):
        out = remora.evaluate("(iterate (λ ((g [Int 32 32])) (+ g (* 2 (rotate g 1)))) 10 g)", g=grid, backend="dask")
        assert len(asked) == 1
        want = grid
        for _ in range(10):
            want = want + 2 * np.roll(want, -1, axis=0)
        _agree(out, want)


# --- errors ------------------------------------------------------------------------------------------


def test_a_run_time_check_raises_the_located_error_of_numpy():
    x = np.array([4, 2, 0, 1])
    with pytest.raises(RemoraRuntimeError) as on_numpy:
        remora.evaluate("(mod 8 x)", x=x)
    with pytest.raises(RemoraRuntimeError) as on_dask:
        remora.evaluate("(mod 8 x)", x=da.from_array(x, chunks=2), backend="dask")
    assert on_dask.value.report() == on_numpy.value.report()
    assert on_dask.value.span is not None


def test_a_type_error_is_raised_before_any_task_runs():
    ran = []

    def block(b):
        ran.append(b.shape)
        return b

    x = da.from_array(np.arange(6.0), chunks=3).map_blocks(block, dtype=np.float64)
    ran.clear()  # (Dask called it once on an empty block, to learn what it returns)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(RemoraTypeError):
            remora.evaluate("(+ x [1.0 2.0])", x=x, backend="dask")
        with pytest.raises(RemoraTypeError):
            remora.function("(λ ((v [Float 4])) v)", backend="dask")(x)
        with pytest.raises(RemoraTypeError, match="dtype uint8"):
            remora.evaluate("x", x=da.zeros(3, dtype=np.uint8), backend="dask")
    assert ran == []


# --- out of core ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """A ``.npy`` of 3-vectors four times a worker's memory, and its norms' total (computed here
    block by block)."""
    path = tmp_path_factory.mktemp("dask") / "vectors.npy"
    n = 4 * WORKER_MEMORY // 24 + 1000
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, 3))
    step, total = 1 << 20, 0.0
    for i in range(0, n, step):
        block = np.random.default_rng(i).standard_normal((min(step, n - i), 3))
        out[i:i + step] = block
        total += float(np.sqrt((block * block).sum(-1)).sum())
    out.flush()
    del out
    return path, n, total


def test_an_input_four_times_a_workers_memory_through_the_api(cluster, vectors):
    path, n, total = vectors
    assert path.stat().st_size >= 4 * WORKER_MEMORY
    mapped = np.load(path, mmap_mode="r")
    with on_cluster(cluster):
        norms = remora.function(NORM, backend="dask")(mapped)
        assert isinstance(norms, da.Array) and norms.shape == (n,) and norms.numblocks[0] >= 16
        got = remora.evaluate(f"(sum ({NORM} v))", v=mapped, backend="dask").compute()
        np.testing.assert_allclose(got, total, rtol=1e-9)
        np.testing.assert_allclose(norms.sum().compute(), total, rtol=1e-9)
        for lo in (0, n // 2, n - 5):  # some norms, checked one by one
            np.testing.assert_allclose(norms[lo:lo + 5].compute(), np.sqrt((mapped[lo:lo + 5] ** 2).sum(-1)),
                                       rtol=1e-15)


# --- the command line ------------------------------------------------------------------------------


def _remora(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remora", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=subprocess_env(), timeout=120)


def test_the_command_line_computes_on_the_scheduler_it_is_given(cluster):
    proc = _remora("eval", "--backend=dask", "--scheduler", cluster.scheduler.address,
                   "-e", "(define v (* 10 [1 2 3 4]))\n(reduce + v)\n(reverse v)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["100", "[40 30 20 10]"]
    workers = cluster.run(lambda dask_worker: len(dask_worker.state.log))
    assert workers and all(count > 0 for count in workers.values())  # (tasks did run there)


def test_an_input_four_times_a_workers_memory_on_the_command_line(cluster, vectors, tmp_path):
    """The acceptance case through ``remora eval``: the ``.npy`` is memory-mapped, chunked, and read
    by the workers block by block; the norms' total is printed, and the norms of a slice of it
    written with ``-o``."""
    path, n, total = vectors
    program = tmp_path / "norms.rem"
    program.write_text(f"(define norms ({NORM} v))\n(sum norms)\n((λ ((i [Int])) (index norms [i])) (+ {n // 2} [0 1 2 3 4]))\n", encoding="utf-8")
    proc = _remora("eval", "--backend=dask", "--scheduler", cluster.scheduler.address, str(program), f"v={path}",
                   "-o", str(tmp_path / "some.npy"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed = proc.stdout.splitlines()
    np.testing.assert_allclose(float(printed[0]), total, rtol=1e-9)
    some = np.load(path, mmap_mode="r")[n // 2:n // 2 + 5]
    np.testing.assert_allclose(np.load(tmp_path / "some.npy").reshape(5), np.sqrt((some * some).sum(-1)), rtol=1e-15)


def test_a_type_error_on_the_command_line_comes_before_any_task(cluster, tmp_path):
    """A type error is located, and nothing is sent to the cluster (not even the input's blocks)."""
    np.save(tmp_path / "v.npy", np.zeros((10, 3)))
    before = cluster.run(lambda dask_worker: len(dask_worker.state.log))
    proc = _remora("eval", "--backend=dask", "--scheduler", cluster.scheduler.address, "-e",
                   f"({NORM} (reverse v))\n(+ v [1.0 2.0])", f"v={tmp_path / 'v.npy'}")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("<expr>:2:6: error: the frames of this application are not prefix-compatible") and "Traceback" not in proc.stderr
    assert cluster.run(lambda dask_worker: len(dask_worker.state.log)) == before


def test_the_command_line_scheduler_errors_are_usage_errors():
    proc = _remora("eval", "--scheduler", "tcp://127.0.0.1:1", "-e", "1")
    assert proc.returncode == 2 and "needs --backend=dask" in proc.stderr
    proc = _remora("eval", "--backend=dask", "--scheduler", "tcp://127.0.0.1:1", "-e", "1")
    assert proc.returncode == 2 and "cannot connect to the Dask scheduler at tcp://127.0.0.1:1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_run_time_error_on_the_command_line_is_located():
    proc = _remora("eval", "--backend=dask", "-e", "(mod 1 (- [0 1 2] 1))")
    assert proc.returncode == 1 and proc.stderr.startswith("<expr>:1:1: error:") and "Traceback" not in proc.stderr


# --- results larger than a worker's memory ------------------------------------------------------

#: the workers of :func:`small_cluster`: a result of a few times this is larger than any worker
#: may hold — the scheduler refuses a task whose inputs exceed it
SMALL_WORKER = 4 * 2**20


@pytest.fixture(scope="module")
def small_cluster():
    """Two workers of :data:`SMALL_WORKER`.  A worker process alone takes more than that, so the
    workers' own memory management (spilling, pausing, the nanny's kill) is off while they are
    made; the scheduler's check of each task's inputs against a worker's limit stays on."""
    off = {f"distributed.worker.memory.{k}": False for k in ("target", "spill", "pause", "terminate")}
    with dask.config.set(off):
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                     dashboard_address=None, memory_limit=SMALL_WORKER)
    with c, distributed.Client(c, set_as_default=False) as client:
        yield client


def test_o_writes_a_result_larger_than_a_workers_memory_block_by_block(small_cluster, tmp_path):
    """``-o`` on Dask writes the result block by block (each block by the task that computes it)
    and the printed value is gathered block by block: no task — no worker — holds the whole
    result, which here is twice a worker's memory limit; the file equals NumPy's result."""
    v = np.arange(1100, dtype=np.int64) % 51 - 25
    np.save(tmp_path / "v.npy", v)
    program = tmp_path / "table.rem"
    program.write_text("(outer * v (reverse v))\n", encoding="utf-8")
    want = np.multiply.outer(v, v[::-1])
    assert want.nbytes > 2 * SMALL_WORKER
    proc = _remora("eval", "--backend=dask", "--scheduler", small_cluster.scheduler.address, str(program),
                   f"v={tmp_path / 'v.npy'}", "-o", str(tmp_path / "out.npy"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), want)
    rows = proc.stdout.strip()[2:-2].split("] [")
    assert len(rows) == len(v) and rows[-1].split() == [str(x) for x in want[-1]]
    numpy = _remora("eval", str(program), f"v={tmp_path / 'v.npy'}", "-o", str(tmp_path / "on_numpy.npy"))
    assert numpy.stdout == proc.stdout
    assert (tmp_path / "on_numpy.npy").read_bytes() == (tmp_path / "out.npy").read_bytes()


def test_the_backends_store_writes_what_numpy_saves(tmp_path):
    """``Backend.store`` on Dask (block by block, into a file whose header is written first)
    gives the bytes ``numpy.save`` gives, for every atom type, chunked along any axis; an empty
    or 0-d value is written whole."""
    from remora.backends import get

    dask_backend = get("dask")
    rng = np.random.default_rng(5)
    values = [rng.standard_normal((7, 5, 3)), rng.integers(-9, 9, (11, 4)), rng.random(9) < 0.5,
              np.zeros((0, 3)), np.array(2.5)]
    for i, value in enumerate(values):
        chunks = tuple(max(1, d // 2) for d in value.shape)
        x = da.from_array(value, chunks=chunks) * 1 if value.dtype != bool else da.from_array(value, chunks=chunks)
        dask_backend.store(x, str(tmp_path / f"{i}.npy"))
        np.save(tmp_path / f"want{i}.npy", value * 1 if value.dtype != bool else value)
        assert (tmp_path / f"{i}.npy").read_bytes() == (tmp_path / f"want{i}.npy").read_bytes()


def _computes(run) -> int:
    """How many Dask computations (``compute``/``persist``, on the local scheduler) ``run`` makes."""
    from dask.callbacks import Callback

    count = [0]
    with Callback(start=lambda dsk: count.__setitem__(0, count[0] + 1)):
        run()
    return count[0]


def test_a_small_while_state_lives_in_the_client_so_rounds_cost_no_computation():
    """D49 "Loops": a `while` over a small frame used to compute its flags, checks and state on
    the cluster every round (a round trip each); its state is now brought into the client once,
    so the number of Dask computations does not grow with the number of rounds — nor do the
    running cells' positions, selected every round, stay a lazy graph that grows."""
    source = """(define (step (s [Int 2])) [(- (head s) 1) (+ 1 (tail s))])
                (define (count (k [Int])) (tail (while (λ ((s [Int 2])) (> (head s) 0)) step [k 0])))
                (count n)"""

    def run(rounds):
        n = np.arange(8) * rounds // 7  # (a cell that stops at once: the running ones are selected)
        out = remora.evaluate(source, n=n, backend="dask")
        np.testing.assert_array_equal(out.compute(), n)

    assert _computes(lambda: run(5)) == _computes(lambda: run(40))


def test_a_fold_over_a_small_dask_input_reads_its_items_in_the_client():
    """D49 "Loops": a `fold` of a λ over a small Dask vector took each step's item as a slice
    computed on the cluster (a round trip per step: the bench's 1000 items did not finish in
    8 minutes); the items are now brought into the client once, as a small loop state is."""
    source = "(fold (λ ((x [Float]) (acc [Float])) (+ (* acc 0.5) x)) 0.0 xs)"

    def run(n):
        xs = np.linspace(-1.0, 1.0, n)
        out = remora.evaluate(source, xs=da.from_array(xs), backend="dask")
        np.testing.assert_allclose(np.asarray(out.compute() if hasattr(out, "compute") else out),
                                   remora.evaluate(source, xs=xs), rtol=0, atol=0)

    assert _computes(lambda: run(5)) == _computes(lambda: run(40))


def test_a_fold_reads_the_items_of_a_chunked_dask_input_in_the_client_once():
    """The items of a `fold` come into the client once up to 64 MiB whatever the input's blocks
    (the bench's 10⁶ items: 8 MB in several blocks were a slice computed per step)."""
    source = "(fold (λ ((x [Float]) (acc [Float])) (+ (* acc 0.5) x)) 0.0 xs)"

    def run(n):
        xs = np.linspace(-1.0, 1.0, n)
        out = remora.evaluate(source, xs=da.from_array(xs, chunks=4), backend="dask")
        np.testing.assert_allclose(np.asarray(out.compute() if hasattr(out, "compute") else out),
                                   remora.evaluate(source, xs=xs), rtol=0, atol=0)

    assert _computes(lambda: run(8)) == _computes(lambda: run(40))


def test_a_loop_state_chunked_along_its_frame_stays_on_dask():
    """Only a state whose frame is one block is brought into the client: blocks along the frame
    (the user's, or the chunking rule's) are kept, and so is the state's laziness."""
    grid = da.from_array(np.arange(64 * 8).reshape(64, 8), chunks=(32, 8))
    out = remora.evaluate("(iterate (λ ((g [Int 64 8])) (+ g 1)) 3 g)", g=grid, backend="dask")
    assert out.chunks == ((32, 32), (8,))
    np.testing.assert_array_equal(out.compute(), grid.compute() + 3)


def test_a_numpy_input_is_sent_to_the_cluster_once(cluster):
    """D49: under a `distributed` client a NumPy input's blocks are on the cluster (futures in the
    graph), not data embedded in the graph — which every graph built from it (each step of a
    loop, each check) would ship again."""
    from remora.backends.dask_backend import BACKEND

    with on_cluster(cluster):
        x = BACKEND.from_numpy(np.arange(4096.0).reshape(64, 64), frame_axes=1)
        graph = dict(x.__dask_graph__())
        assert not any(isinstance(v, np.ndarray) for v in graph.values())
        out = remora.evaluate("(iterate (λ ((r [Float 64])) (+ r 1.0)) 3 v)", v=np.ones((64, 64)), backend="dask")
        np.testing.assert_array_equal(out.compute(), np.full((64, 64), 4.0))


JACOBI = """(define jacobi-step
              (Iλ ((n Dim))
                (λ ((x (Arr Float (Shp (+ n 1)))))
                  (let ((left (append [(head x)] (curtail x))) (right (append (behead x) [(tail x)])))
                    (/ (+ left (+ x right)) 3.0)))))
            (iterate jacobi-step 4 xs)"""


def _shipped_per_step(monkeypatch, run) -> list[int]:
    """The bytes of NumPy data each step of a loop embeds in its graph (what the graph carries to
    the cluster besides the keys of what is already there)."""
    from remora.backends import dask_backend

    shipped, bounded = [], dask_backend._bounded

    def counting(acc, init):
        if dask_backend.is_dask(acc):
            graph = dict(acc.__dask_graph__())
            shipped.append(sum(v.nbytes for v in graph.values() if isinstance(v, np.ndarray)))
        return bounded(acc, init)

    monkeypatch.setattr(dask_backend, "_bounded", counting)
    run()
    return shipped


@pytest.mark.parametrize("n", [2**18, 2**20])
def test_a_loop_step_ships_no_numpy_array_the_size_of_its_frame(cluster, monkeypatch, n):
    """D49 "Where work runs": a literal broadcast to a frame (Jacobi's ``3.0`` at the shape of the
    state) was a NumPy view handed to Dask whole — pickled at the frame's size into every step's
    graph (15 MiB a step at 2·10⁶ cells).  A NumPy operand now meets a Dask one as the atoms it
    holds, so a step ships a few bytes whatever the frame's size (the state, above the 1 MiB of a
    state kept in the client, stays on the cluster)."""
    xs = np.random.default_rng(n).random(n)
    out = {}

    def run():
        with on_cluster(cluster):
            out["got"] = remora.evaluate(JACOBI, xs=xs, backend="dask").compute(optimize_graph=False)

    shipped = _shipped_per_step(monkeypatch, run)
    assert len(shipped) == 4 and max(shipped) <= 64
    _agree(out["got"], remora.evaluate(JACOBI, xs=xs))


def _fails_on_dask(source: str, **inputs) -> RemoraRuntimeError:
    with pytest.raises(RemoraRuntimeError) as caught:
        remora.evaluate(source, backend="dask", **inputs)
    return caught.value


def test_a_block_too_large_to_allocate_is_a_located_error_naming_the_backend():
    """D49 "Failures": a failure of the Dask machinery (here a block of 32 TiB, which NumPy cannot
    allocate where the task runs) reached the command line as "internal error"; it is a located
    run-time error naming the backend and the cause — and the input's type is found without
    allocating an array of its shape in the client."""
    err = _fails_on_dask("(/ 1 (sum v))", v=da.arange(2**42, dtype=np.int64, chunks=-1))
    assert (err.line, err.column) == (1, 1)
    assert "dask backend" in err.message and "MemoryError" in err.message
    assert str(err).splitlines()[0].startswith("<source>:1:1: error: the dask backend failed")


def _die(block):
    import os

    os._exit(1)


def test_a_worker_killed_while_computing_is_a_located_error_naming_the_backend():
    """D49 "Failures": a worker that dies computing a value (as one killed for exceeding its memory
    limit does; here its task ends the process) gives ``KilledWorker`` once the scheduler gives up:
    a located run-time error naming the backend and the cause."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, memory_limit=WORKER_MEMORY) as c:
            with distributed.Client(c, set_as_default=False) as client, on_cluster(client):
                v = da.from_array(np.arange(8), chunks=4).map_blocks(_die, meta=np.empty((0,), np.int64))
                err = _fails_on_dask("(+ 1\n   (/ 1 (sum v)))", v=v)
    assert err.line == 1 and "dask backend" in err.message and "KilledWorker" in err.message


@pytest.mark.parametrize("source", [
    "(define (keep (m [Bool 16]) (row [Float 16])) (filter m row)) (unbox (n xs (keep mask data)) (sum xs))",
    "(define (keep (m [Bool 16]) (row [Int 16])) (filter m row)) (unbox (n xs (keep mask (round data))) (sum xs))",
])
def test_a_ragged_layout_costs_a_bounded_number_of_computations(source):
    """D49 "Data-dependent shapes": the boxes of a ragged layout were worked on one distinct length
    at a time, each length's boxes found (and their items gathered) by a computation of its own —
    segmented sums made ~65.  The layout's lengths and offsets are now computed once, into the
    client, and the rest is lazy with known shapes: the count does not grow with the lengths."""

    def computations(distinct):
        rng = np.random.default_rng(distinct)
        keep = (np.arange(64) % distinct)[:, None]
        data, mask = rng.standard_normal((64, 16)) * 8, np.arange(16)[None, :] < keep
        inputs = {"data": da.from_array(data, chunks=(16, 16)), "mask": da.from_array(mask, chunks=(16, 16))}
        out = []
        count = _computes(lambda: out.append(remora.evaluate(source, backend="dask", **inputs)))
        _agree(out[0], remora.evaluate(source, data=data, mask=mask))
        return count

    counts = [computations(distinct) for distinct in (2, 16)]
    assert counts[0] == counts[1] <= 4  # (the filter's mask, the unboxing's check, the layout, an Int sum's)


def test_a_while_state_of_some_megabytes_lives_in_the_client_too():
    """D49 "Loops": a `while` decides on the host every round, so a state left on the cluster costs
    a round trip per round (Collatz over 10⁶ cells, 16 MB: 838 s on 2 workers, against 36 s); one of up
    to 64 MiB is brought into the client once — more than the 1 MiB a `fold`'s or `iterate`'s
    state may be, which decides nothing and stays lazy on the cluster."""
    source = """(define (step (s [Int 2])) [(- (head s) 1) (+ 1 (tail s))])
                (define (count (k [Int])) (tail (while (λ ((s [Int 2])) (> (head s) 0)) step [k 0])))
                (count n)"""

    def run(rounds):
        n = np.arange(2**17) % (rounds + 1)  # (a state of 2 MiB: 2¹⁷ cells of 2 Ints)
        out = remora.evaluate(source, n=da.from_array(n, chunks=-1), backend="dask")
        np.testing.assert_array_equal(out.compute() if hasattr(out, "compute") else out, n)

    assert _computes(lambda: run(3)) == _computes(lambda: run(12))
