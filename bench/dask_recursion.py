"""``python -m bench recursion [--depths 200 400 800] [--numpy-depth 2000]`` — a declared recursion
under ``if`` over a frame on the Dask backend, at several depths (issue 29, item 9; spec D49 "Loops").

The program is ``(define (g (n [Int])) : [Int] (if (<= n 0) 0 (+ 1 (g (- n 1))))) (g v)`` with ``v``
holding ``[d d/2 3 0]`` twice.  Three runs per depth:

- ``cli .npy``: ``remora eval --backend=dask rec.rem v=FILE.npy`` as a user runs it (a small
  input: one block, which the engine brings into the client), wall-clock time of the process;
- ``api chunked``: ``remora.evaluate`` with ``v`` a Dask array cut into blocks of 2 cells (a state
  that stays on Dask), building the value and computing it;
- with it, how many Dask computations that run made and the tasks in the largest one: linear
  recursion shows a constant largest graph and computations proportional to the depth.

The NumPy backend's time at ``--numpy-depth`` (on the command line) is the reference.  One run
each (these are seconds, and the machine is shared); the point is how time grows with depth.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SOURCE = "(define (g (n [Int])) : [Int] (if (<= n 0) 0 (+ 1 (g (- n 1))))) (g v)\n"


def _depths(d: int) -> np.ndarray:
    return np.array([d, d // 2, 3, 0] * 2, dtype=np.int64)


def _cli(folder: str, d: int, backend: str) -> float:
    program, data = os.path.join(folder, "rec.rem"), os.path.join(folder, f"v{d}.npy")
    with open(program, "w", encoding="utf-8") as f:
        f.write(SOURCE)
    np.save(data, _depths(d))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "remora", "eval", f"--backend={backend}", program, f"v={data}"],
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    want = "[" + " ".join(str(x) for x in _depths(d)) + "]"
    if done.returncode != 0 or done.stdout.strip() != want:
        raise SystemExit(f"depth {d} on {backend}: {done.stdout.strip()[:80]} {done.stderr.strip()[-300:]}")
    return took


def _api_chunked(d: int) -> tuple[float, int, int]:
    import dask.array as da
    from dask.callbacks import Callback

    import remora

    graphs: list[int] = []
    start = time.perf_counter()
    with Callback(start=lambda dsk: graphs.append(len(dsk))):
        out = remora.evaluate(SOURCE, v=da.from_array(_depths(d), chunks=2), backend="dask")
        got = out.compute(optimize_graph=False)
    took = time.perf_counter() - start
    np.testing.assert_array_equal(got, _depths(d))
    return took, len(graphs), max(graphs)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench recursion")
    parser.add_argument("--depths", type=int, nargs="+", default=[200, 400, 800])
    parser.add_argument("--numpy-depth", type=int, default=2000)
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}  {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'depth':>6} {'cli .npy s':>11} {'api chunked s':>14} {'computations':>13} {'largest graph':>14}")
    with tempfile.TemporaryDirectory() as folder:
        for d in args.depths:
            cli = _cli(folder, d, "dask")
            api, count, largest = _api_chunked(d)
            print(f"{d:>6} {cli:>11.2f} {api:>14.2f} {count:>13} {largest:>14}", flush=True)
        print(f"NumPy backend, depth {args.numpy_depth}: {_cli(folder, args.numpy_depth, 'numpy'):.2f} s (cli .npy)")
    return 0
