"""``python -m bench [check|startup|engines|api|printing|recursion|grad|workloads] [...]`` — see each module's
docstring (``--variants``: bench/variants.py; ``--pointful``: bench/pointful.py; ``--plot``: bench/plot.py)."""

from __future__ import annotations

import sys


def main() -> int:
    args = sys.argv[1:]
    mode = args[0] if args and not args[0].startswith("-") else "workloads"
    rest = args[1:] if args and not args[0].startswith("-") else args
    if mode == "check":
        from .checker import main as run
    elif mode == "startup":
        from .startup import main as run
    elif mode == "engines":
        from .engines import main as run
    elif mode == "api":
        from .api_overhead import main as run
    elif mode == "printing":
        from .printing import main as run
    elif mode == "recursion":
        from .dask_recursion import main as run
    elif mode == "grad":
        from .grad import main as run
    elif mode == "workloads" and "--plot" in rest:
        from .plot import main as run
    elif mode == "workloads" and "--pointful" in rest:
        from .pointful import main as run
    elif mode == "workloads" and "--variants" in rest:
        from .variants import main as run
    elif mode == "workloads" and any(a == "--backend=dask" or a == "--backend" for a in rest):
        from .dask_workers import main as run
    elif mode == "workloads":
        from .workloads import main as run
    else:
        print(__doc__)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
