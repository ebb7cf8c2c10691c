"""``python -m bench --backend=dask [--quick] [--only NAME ...] [--repeat N]`` — the Dask backend
(issue 17) against the NumPy backend, per workload of ``bench/programs.py``.

For each workload (the large size; ``--quick``: the small one) the program runs through
``remora.evaluate`` on the NumPy backend, then on the Dask backend on a ``distributed``
LocalCluster on loopback with 1 and then 2 worker processes (one thread each); each Dask run
builds the graph and computes the result (``optimize_graph=False``, as the engine computes —
spec D49).  Values are checked against NumPy's (the workload's tolerance); times are the minimum
of ``--repeat`` runs.  Columns: NumPy, Dask on 1 and 2 workers, Dask(2)/NumPy, and the change
from 1 to 2 workers (Dask(1)/Dask(2): above 1 is a speed-up).
"""

from __future__ import annotations

import argparse
import datetime

from .harness import best_time
from .programs import WORKLOADS
from .workloads import agree, machine


def _runner(w, inputs, backend: str):
    import remora

    def run():
        out = remora.evaluate(w.source, backend=backend, **inputs)
        return out.compute(optimize_graph=False) if hasattr(out, "compute") else out

    return run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --backend=dask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["dask"], default="dask")
    parser.add_argument("--quick", action="store_true", help="the small sizes")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    selected = [w for w in WORKLOADS if not args.only or w.name in args.only]
    print(f"# {datetime.date.today()}  {machine()}")
    print("| workload | n | NumPy | Dask, 1 worker | Dask, 2 workers | Dask(2)/NumPy | 1→2 workers |")
    print("|---|---|---|---|---|---|---|", flush=True)
    clusters = {}
    try:
        for workers in (1, 2):
            clusters[workers] = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None)
        for w in selected:
            n = w.quick if args.quick else w.large
            inputs = w.inputs(n)
            want = w.numpy(**inputs)
            numpy_time = best_time(_runner(w, inputs, "numpy"), args.repeat)
            times = {}
            for workers, cluster in clusters.items():
                with Client(cluster) as client, client.as_current():
                    run = _runner(w, inputs, "dask")
                    if not agree(run(), want, max(w.rtol, 1e-9)):
                        raise AssertionError(f"{w.name} at n={n}: Dask and NumPy disagree")
                    times[workers] = best_time(run, args.repeat)
            print(f"| {w.name} | {n} | {numpy_time * 1e3:.1f} ms | {times[1] * 1e3:.1f} ms | "
                  f"{times[2] * 1e3:.1f} ms | {times[2] / numpy_time:.1f}× | {times[1] / times[2]:.2f}× |",
                  flush=True)
    finally:
        for cluster in clusters.values():
            cluster.close()
    return 0
