"""``python -m bench --plot [--backend numpy jax] [--only NAME ...] [--out FILE.png]``

The ratio of Remora's time to the hand-written version's, against the size, for every workload
of ``bench/programs.py`` over its whole sweep: one panel per backend (NumPy: against hand-written
NumPy; JAX: against hand-written ``jax.jit``), one line per workload, written to a PNG
(``bench/ratio.png`` by default) with matplotlib (``pip install matplotlib``: only this command
needs it).  The figures behind it are printed as they are measured, in the tables' format.
"""

from __future__ import annotations

import argparse
import sys

from .programs import WORKLOADS


def sweep(backend: str, names: list[str] | None) -> dict[str, list[tuple[int, float]]]:
    """(size, ratio) for every size of every selected workload's sweep on ``backend``."""
    from .workloads import format_jax_row, format_row, measure, measure_jax

    out: dict[str, list[tuple[int, float]]] = {}
    for w in WORKLOADS:
        if names and w.name not in names:
            continue
        for n in w.sweep:
            if backend == "jax":
                row = measure_jax(w, n, timing=True)
                print(format_jax_row(row), flush=True)
                out.setdefault(w.name, []).append((n, row["vs_jit"]))
            else:
                row = measure(w, n, timing=True)
                print(format_row(row), flush=True)
                out.setdefault(w.name, []).append((n, row["ratio"]))
    return out


def draw(panels: dict[str, dict[str, list[tuple[int, float]]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), squeeze=False)
    against = {"numpy": "hand-written NumPy", "jax": "hand-written jax.jit"}
    for ax, (backend, series) in zip(axes[0], panels.items()):
        for name, points in series.items():
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            # (the sizes are each workload's own: plotted against the position in its sweep)
            ax.plot(range(len(xs)), ys, marker="o", label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("size (each workload's sweep, smallest to largest)")
        ax.set_ylabel(f"Remora time / {against[backend]} time")
        ax.set_title(f"Remora on {backend}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --plot")
    parser.add_argument("--plot", action="store_true")
    parser.add_argument("--backend", nargs="+", default=["numpy"], choices=["numpy", "jax"])
    parser.add_argument("--only", nargs="+", metavar="NAME")
    parser.add_argument("--out", default="bench/ratio.png")
    args = parser.parse_args(argv)
    panels = {backend: sweep(backend, args.only) for backend in args.backend}
    draw(panels, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
