"""``python -m bench [--quick | --sweep | --smallest] [--engine plans|frames] [--reference] [--only NAME ...] [--write FILE]``

For each workload of ``bench/programs.py``: run the Remora program (plans, by default) and
the idiomatic NumPy version side by side in this process, check that they agree, and print
the Remora evaluation time, the check+erase time, the NumPy time, their ratio, and the peak
memory of each.  Method as in ../shared/notes.md §6: minimum of at least 5 runs with the
garbage collector off; memory by tracemalloc in a separate run.

- default: the large size of each workload (NumPy ≈ 0.1–1 s);
- ``--quick``: the small sizes, correctness only (well under a minute; CI runs it);
- ``--sweep``: every size of each workload's geometric sweep, to see the ratio as size grows;
- ``--smallest``: the smallest size of each sweep (where interpretation overhead shows most);
- ``--engine frames``: time the whole-frame engine without plans (the default is plans);
- ``--reference``: also time the reference engine against the default engine, each workload at
  the size where the frame it maps over has about 10⁵ cells;
- ``--backend=jax``: Remora on the JAX backend (``remora.evaluate(..., backend="jax")``, inputs
  already JAX arrays, results waited for) against the idiomatic NumPy version and against the
  same computation written by hand with ``jax.jit`` (``bench/jax_versions.py``); compile time
  (the first call's, less a compiled call's) reported apart, excluded from the ratios;
- ``--dtype=float32``: every workload in single precision (``bench/precision.py``): ``Float32``
  (and ``Int32`` integer data) against the same NumPy / ``jax.jit`` versions given ``float32``
  arrays; with ``--backend=jax`` also Remora on JAX in ``Float32`` against Remora on JAX in
  ``Float`` (the ``/Float`` column), and the hand-written versions run in JAX's default 32-bit
  configuration, as a JAX user runs them.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np

from .harness import best_time, peak_memory, prepare
from .programs import WORKLOADS, Workload


def agree(got, want, rtol: float) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        return bool(np.allclose(got, want, rtol=rtol, atol=1e-9))
    return bool(np.array_equal(got, want))


def measure(w: Workload, n: int, timing: bool, repeat: int = 5, engine: str = "plans", same=agree) -> dict:
    """``same``: how results are compared (``precision.agree`` in single precision)."""
    inputs = w.inputs(n)
    start = time.perf_counter()
    prepared = prepare(w.source, **inputs)
    check = time.perf_counter() - start
    run = prepared.runner(engine)
    got, want = run(), w.numpy(**inputs)
    if not same(got, want, w.rtol):
        raise AssertionError(f"{w.name} at n={n}: Remora and NumPy disagree")
    row = {"name": w.name, "n": n, "check": check, "ok": True}
    if timing:
        row["remora"] = best_time(run, repeat)
        row["numpy"] = best_time(lambda: w.numpy(**inputs), repeat)
        row["ratio"] = row["remora"] / row["numpy"]
        row["mem_remora"] = peak_memory(run)
        row["mem_numpy"] = peak_memory(lambda: w.numpy(**inputs))
    return row


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f}"


def _fine_ms(seconds: float) -> str:
    """Milliseconds, to the microsecond below 1 ms (the JAX table's smallest sizes)."""
    return f"{seconds * 1e3:9.3f}" if seconds < 1e-3 else _ms(seconds)


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:8.1f}"


HEADER = (
    f"{'workload':<20}{'size':>10}{'remora ms':>11}{'check ms':>10}{'numpy ms':>10}{'ratio':>8}"
    f"{'remora MB':>11}{'numpy MB':>10}"
)


def format_row(r: dict) -> str:
    if "remora" not in r:
        return f"{r['name']:<20}{r['n']:>10}{'ok':>11}{_ms(r['check']):>10}"
    return (
        f"{r['name']:<20}{r['n']:>10}{_ms(r['remora']):>11}{_ms(r['check']):>10}{_ms(r['numpy']):>10}"
        f"{r['ratio']:>7.2f}×{_mb(r['mem_remora']):>11}{_mb(r['mem_numpy']):>10}"
    )


REFERENCE_BUDGET = 120.0  # seconds for one reference-engine run; beyond it, report a lower bound


def reference_rows(selected: list[Workload], budget: float = REFERENCE_BUDGET) -> list[str]:
    """Default engine against the reference engine, each workload at the size nearest 10⁵ cells.

    The reference engine runs once, in a forked child, for at most ``budget`` seconds; when it
    takes longer, the speed-up is reported as at least budget / default time.
    """
    lines = [f"{'workload':<20}{'size':>10}{'default ms':>12}{'reference ms':>14}{'speed-up':>11}"]
    print(lines[0], flush=True)
    for w in selected:
        n = w.ref
        prepared = prepare(w.source, **w.inputs(n))
        fast = best_time(prepared.runner("plans"), 3)
        slow = _timed_in_child(prepared.runner("reference"), budget)
        if slow is None:
            ref, speed = f"> {budget * 1e3:.0f}", f"> {budget / fast:.0f}×"
        else:
            ref, speed = f"{slow * 1e3:.0f}", f"{slow / fast:.0f}×"
        lines.append(f"{w.name:<20}{n:>10}{_ms(fast):>12}{ref:>14}{speed:>11}")
        print(lines[-1], flush=True)
    return lines


def _timed_in_child(run, budget: float) -> float | None:
    """Seconds one call of ``run`` takes in a forked child; None if it exceeds ``budget``."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        start = time.perf_counter()
        run()
        send.send(time.perf_counter() - start)

    proc = ctx.Process(target=child)
    proc.start()
    ready = receive.poll(budget)
    result = receive.recv() if ready else None
    proc.kill() if not ready else None
    proc.join()
    return result


def machine() -> str:
    cpus = os.cpu_count()
    return f"{platform.machine()}, {cpus} cores, Python {platform.python_version()}, NumPy {np.__version__}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes, correctness only")
    mode.add_argument("--sweep", action="store_true", help="every size of each workload's sweep")
    mode.add_argument("--smallest", action="store_true", help="each workload at the smallest size of its sweep")
    parser.add_argument("--engine", default="plans", choices=["plans", "frames"],
                        help="plans (default) or the whole-frame engine without plans, to compare")
    parser.add_argument("--reference", action="store_true", help="also compare with the reference engine")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    parser.add_argument("--write", metavar="FILE", help="also write the tables as Markdown to FILE")
    parser.add_argument("--backend", choices=["numpy", "jax"], default="numpy",
                        help="jax: Remora on the JAX backend against NumPy and hand-written jax.jit")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="float32: every workload in Float32 (and Int32 data) against float32 versions")
    args = parser.parse_args(argv)
    selected = [w for w in WORKLOADS if not args.only or w.name in args.only]
    same = agree
    if args.dtype == "float32":
        from . import precision

        selected, same = [precision.single(w) for w in selected], precision.agree
    if args.backend == "jax":
        return jax_main(argv, args, selected)
    lines = [f"# {datetime.date.today()}  {machine()}", f"# python -m bench {' '.join(argv)}".rstrip(), HEADER]
    print("\n".join(lines), flush=True)
    rows = []
    for w in selected:
        sizes = [w.quick] if args.quick else list(w.sweep) if args.sweep else [min(w.sweep)] if args.smallest \
            else [w.large]
        for n in sizes:
            row = measure(w, n, timing=not args.quick, engine=args.engine, same=same)
            rows.append(row)
            lines.append(format_row(row))
            print(lines[-1], flush=True)
    if not args.quick:
        ratios = [r["ratio"] for r in rows if "ratio" in r and (args.sweep is False or r["n"] == _largest(r["name"]))]
        if args.smallest:
            ratios = [r["ratio"] for r in rows if "ratio" in r]
        if ratios:
            summary = f"median ratio {statistics.median(ratios):.2f}×, largest {max(ratios):.2f}×"
            lines.append(summary)
            print(summary)
    if args.reference:
        print()
        lines += [""] + reference_rows(selected)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write("```\n" + "\n".join(lines) + "\n```\n")
    return 0


JAX_HEADER = (
    f"{'workload':<20}{'size':>10}{'remora-jax ms':>15}{'compile ms':>12}{'numpy ms':>10}{'jax.jit ms':>12}"
    f"{'/numpy':>8}{'/jax.jit':>10}"
)


def measure_jax(w: Workload, n: int, timing: bool, repeat: int = 5, same=agree, wide: Workload | None = None) -> dict:
    """Remora on the JAX backend at size ``n`` against NumPy and the hand-written ``jax.jit``;
    ``wide``: the same workload in 64 bits, whose Remora time on JAX the ``/Float`` column divides by."""
    import contextlib

    import jax

    import remora
    from remora.backends.jax_backend import x64

    from .jax_versions import VERSIONS

    inputs = w.inputs(n)
    # (64-bit arrays are made in JAX's 64-bit scope; a single-precision workload's hand-written
    # version runs in JAX's default configuration, as its user would run it)
    scope = x64 if any(np.asarray(v).dtype.itemsize == 8 for v in inputs.values()) else contextlib.nullcontext
    with scope():
        device = {k: jax.device_put(v) for k, v in inputs.items()}
    by_hand = VERSIONS[w.name]

    def remora_jax():
        return remora.evaluate(w.source, backend="jax", **device).block_until_ready()

    def jitted():
        with scope():
            return by_hand(**device).block_until_ready()

    start = time.perf_counter()
    got = remora_jax()
    first = time.perf_counter() - start
    start = time.perf_counter()
    hand = jitted()
    hand_first = time.perf_counter() - start
    want = w.numpy(**inputs)
    if not (same(got, want, max(w.rtol, 1e-9)) and same(hand, want, max(w.rtol, 1e-9))):
        raise AssertionError(f"{w.name} at n={n}: Remora on JAX, jax.jit and NumPy disagree")
    row = {"name": w.name, "n": n, "ok": True}
    if timing:
        # (a call of a fraction of a millisecond: the best of more runs, the same for all three)
        start = time.perf_counter()
        remora_jax()
        repeat = max(repeat, min(200, int(0.05 / max(time.perf_counter() - start, 1e-6))))
        row["remora"] = best_time(remora_jax, repeat)
        row["compile"] = max(first - row["remora"], 0.0)
        row["numpy"] = best_time(lambda: w.numpy(**inputs), repeat)
        row["jit"] = best_time(jitted, repeat)
        row["jit_compile"] = max(hand_first - row["jit"], 0.0)
        row["ratio"] = row["remora"] / row["numpy"]
        row["vs_jit"] = row["remora"] / row["jit"]
        if wide is not None:
            with x64():
                wide_inputs = {k: jax.device_put(v) for k, v in wide.inputs(n).items()}
            remora.evaluate(wide.source, backend="jax", **wide_inputs).block_until_ready()
            row["float"] = best_time(lambda: remora.evaluate(wide.source, backend="jax", **wide_inputs)
                                     .block_until_ready(), repeat)
            row["vs_float"] = row["remora"] / row["float"]
    return row


def format_jax_row(r: dict) -> str:
    if "remora" not in r:
        return f"{r['name']:<20}{r['n']:>10}{'ok':>15}"
    return (
        f"{r['name']:<20}{r['n']:>10}{_fine_ms(r['remora']):>15}{_ms(r['compile']):>12}{_fine_ms(r['numpy']):>10}"
        f"{_fine_ms(r['jit']):>12}{r['ratio']:>7.2f}×{r['vs_jit']:>9.2f}×"
        + (f"{_fine_ms(r['float']):>12}{r['vs_float']:>7.2f}×" if "float" in r else "")
    )


def jax_main(argv: list[str], args, selected: list[Workload]) -> int:
    """``--backend=jax``: the JAX table, at the quick, large or every sweep size (with
    ``--dtype=float32``, Remora on JAX in ``Float`` too: the ``/Float`` column)."""
    import jax

    single = args.dtype == "float32"
    header = JAX_HEADER + (f"{'Float ms':>12}{'/Float':>8}" if single else "")
    lines = [f"# {datetime.date.today()}  {machine()}, JAX {jax.__version__} ({jax.default_backend()})",
             f"# python -m bench {' '.join(argv)}".rstrip(), header]
    print("\n".join(lines), flush=True)
    if single:
        from . import precision

        same, wide = precision.agree, {w.name: w for w in WORKLOADS}
    else:
        same, wide = agree, {}
    rows = []
    for w in selected:
        sizes = [w.quick] if args.quick else list(w.sweep) if args.sweep else [min(w.sweep)] if args.smallest \
            else [w.large]
        for n in sizes:
            rows.append(measure_jax(w, n, timing=not args.quick, same=same, wide=wide.get(w.name)))
            lines.append(format_jax_row(rows[-1]))
            print(lines[-1], flush=True)
    timed = [r for r in rows if "ratio" in r]
    if timed:
        one_size = len({r["name"] for r in timed}) == len(timed)  # (then one summary line, not two alike)
        picks = ((("smallest" if args.smallest else "largest"), max),) if one_size else (("largest", max), ("smallest", min))
        for label, pick in picks:
            at = [r for r in timed if r["n"] == pick(x["n"] for x in timed if x["name"] == r["name"])]
            lines.append(f"{label} sizes: median ratio to NumPy {statistics.median(r['ratio'] for r in at):.2f}×, "
                         f"to jax.jit median {statistics.median(r['vs_jit'] for r in at):.2f}×, "
                         f"largest {max(r['vs_jit'] for r in at):.2f}×")
            print(lines[-1])
            bound = [r["vs_float"] for r in at if "vs_float" in r and r["name"] in precision.MEMORY_BOUND] \
                if single else []
            if bound:
                lines.append(f"{label} sizes, memory-bound workloads: Float32 / Float on JAX median "
                             f"{statistics.median(bound):.2f}×, largest {max(bound):.2f}×")
                print(lines[-1])
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write("```\n" + "\n".join(lines) + "\n```\n")
    return 0


def _largest(name: str) -> int:
    return max(next(w for w in WORKLOADS if w.name == name).sweep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
