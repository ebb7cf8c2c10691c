"""``python -m bench --backend=dask [--quick | --large] [--only NAME ...] [--repeat N] [--out-of-core]``
— the Dask backend (issue 17) against the NumPy backend, per workload of ``bench/programs.py``.

For each workload (the large size, except the few in :data:`DASK_SIZES` — ``--large`` runs those at
the large size too; ``--quick``: the small sizes) the program runs through ``remora.evaluate`` on
the NumPy backend, then on the Dask backend on a ``distributed`` LocalCluster on loopback with 1
and then 2 worker processes (one thread each, :data:`WORKER_MEMORY` each); each Dask run builds the
graph and computes the result (``optimize_graph=False``, as the engine computes — spec D49).
Values are checked against NumPy's (the workload's tolerance); times are the minimum of
``--repeat`` runs.  Columns: NumPy, Dask on 1 and 2 workers, Dask(2)/NumPy, and the change from 1
to 2 workers (Dask(1)/Dask(2): above 1 is a speed-up).  A workload that fails on Dask gets a row
saying why, and the run goes on.

``--out-of-core`` adds the acceptance case: the norms of the 3-vectors of a memory-mapped ``.npy``
four times a worker's memory limit (:data:`SMALL_WORKER` workers) and their total, through
``remora.evaluate``, with the time and each worker's peak memory (its process's resident size).
"""

from __future__ import annotations

import argparse
import datetime
import os
import tempfile
import time

import numpy as np

from .harness import best_time
from .programs import WORKLOADS
from .workloads import agree, machine

#: each worker's memory limit in the timed runs: a workload that would hold more (a broadcast
#: held whole) fails as a row instead of taking the shared machine's memory
WORKER_MEMORY = 4 * 2**30
#: workloads run at a smaller size than their large one, and why (Collatz and Pathfinder run at
#: their large size since a `while` state of up to 64 MiB lives in the client and a NumPy input
#: is sent to the cluster once — D49; measured 2026-11-24)
DASK_SIZES: dict[str, tuple[int, str]] = {}  # (none since a fold's items up to 64 MiB come into the client once)
#: the out-of-core case: workers of this much memory, a file four times as large
SMALL_WORKER = 256 * 2**20
NORMS = "(sum ((λ ((v [Float 3])) (sqrt (sum (* v v)))) v))"


def _runner(w, inputs, backend: str):
    import remora

    def run():
        out = remora.evaluate(w.source, backend=backend, **inputs)
        return out.compute(optimize_graph=False) if hasattr(out, "compute") else out

    return run


def _cluster(workers: int, memory: int):
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=None, memory_limit=memory)


def _row(w, n: int, clusters: dict, repeat: int) -> str:
    from distributed import Client

    inputs = w.inputs(n)
    want = w.numpy(**inputs)
    numpy_time = best_time(_runner(w, inputs, "numpy"), repeat)
    times = {}
    for workers, cluster in clusters.items():
        with Client(cluster) as client, client.as_current():
            run = _runner(w, inputs, "dask")
            try:
                start = time.perf_counter()  # (the run that checks the value is timed too)
                got = run()
                first = time.perf_counter() - start
                if not agree(got, want, max(w.rtol, 1e-9)):
                    return f"| {w.name} | {n} | {numpy_time * 1e3:.1f} ms | Dask and NumPy disagree | | | |"
            except Exception as exc:  # (a row saying why; the other workloads still run)
                reason = " ".join(str(exc).split())[:120]
                return f"| {w.name} | {n} | {numpy_time * 1e3:.1f} ms | failed: {type(exc).__name__}: {reason} | | | |"
            times[workers] = min([first] + ([best_time(run, repeat - 1)] if repeat > 1 else []))
    return (f"| {w.name} | {n} | {numpy_time * 1e3:.1f} ms | {times[1] * 1e3:.1f} ms | "
            f"{times[2] * 1e3:.1f} ms | {times[2] / numpy_time:.1f}× | {times[1] / times[2]:.2f}× |")


def out_of_core(workers: int = 2) -> str:
    """The acceptance case as a table row: a memory-mapped ``.npy`` of 3-vectors four times a
    worker's memory limit, its norms' total on ``workers`` workers of :data:`SMALL_WORKER`."""
    import remora
    from distributed import Client

    n = 4 * SMALL_WORKER // 24
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vectors.npy")
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, 3))
        total, step = 0.0, 1 << 20
        for i in range(0, n, step):
            block = np.random.default_rng(i).standard_normal((min(step, n - i), 3))
            out[i:i + step] = block
            total += float(np.sqrt((block * block).sum(-1)).sum())
        out.flush()
        del out
        size = os.path.getsize(path)
        with _cluster(workers, SMALL_WORKER) as cluster, Client(cluster) as client, client.as_current():
            start = time.perf_counter()
            got = remora.evaluate(NORMS, v=np.load(path, mmap_mode="r"), backend="dask").compute(optimize_graph=False)
            seconds = time.perf_counter() - start
            peaks = client.run(lambda dask_worker: max(dask_worker.monitor.quantities["memory"]))
        ok = np.isclose(got, total, rtol=1e-9)
    peak = " / ".join(f"{p / 2**20:.0f} MB" for p in peaks.values())
    return (f"| norms' total of a .npy of {n} 3-vectors ({size / 2**20:.0f} MB) | {workers} workers of "
            f"{SMALL_WORKER / 2**20:.0f} MB | {seconds:.1f} s | {peak} | {'right' if ok else 'WRONG'} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --backend=dask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["dask"], default="dask")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the small sizes")
    size.add_argument("--large", action="store_true", help="the large size for every workload (hours)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out-of-core", action="store_true", help="also the out-of-core acceptance case")
    args = parser.parse_args(argv)

    selected = [w for w in WORKLOADS if not args.only or w.name in args.only]
    print(f"# {datetime.date.today()}  {machine()}")
    if selected:
        print("| workload | n | NumPy | Dask, 1 worker | Dask, 2 workers | Dask(2)/NumPy | 1→2 workers |")
        print("|---|---|---|---|---|---|---|", flush=True)
    clusters = {}
    try:
        for workers in (1, 2) if selected else ():
            clusters[workers] = _cluster(workers, WORKER_MEMORY)
        for w in selected:
            n = w.quick if args.quick else (w.large if args.large else DASK_SIZES.get(w.name, (w.large,))[0])
            print(_row(w, n, clusters, args.repeat), flush=True)
    finally:
        for cluster in clusters.values():
            cluster.close()
    if args.out_of_core:
        print("\n| out of core | cluster | time | peak memory per worker | total |")
        print("|---|---|---|---|---|")
        print(out_of_core(), flush=True)
    return 0
