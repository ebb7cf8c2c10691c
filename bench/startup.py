"""Start-up: the CPU time of ``remora eval -e '(+ 1 2)'`` against ``python -c 'import numpy'``.

``python -m bench startup [RUNS]`` starts each command RUNS times (default 20), alternating
them so that both see the same machine, and reports the user + system CPU time of each process
(``os.wait4``'s resource usage: the threads NumPy starts count too) — minimum and median — and
the ratio (issue 13's goal: at most 1.3×).

Both run as installed code runs: with compiled bytecode (remora's is written to a temporary
``PYTHONPYCACHEPREFIX`` by a first, uncounted run; NumPy's came with it), and with the prelude
cache warm (in a temporary ``REMORA_CACHE_DIR``, filled by that first run). remora runs as
``python -m remora`` from this checkout.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = "(+ 1 2)"


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.stdout.close(), proc.stderr.close()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {err.decode(errors='replace')}")
    if argv[-1] == PROGRAM and out != b"3\n":
        raise RuntimeError(f"unexpected output {out!r}")
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    runs = int(argv[0]) if argv else 20
    with tempfile.TemporaryDirectory(prefix="remora-bench-startup-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "REMORA_DEBUG")}
        env.update(PYTHONPATH=str(ROOT), REMORA_CACHE_DIR=str(Path(tmp) / "cache"),
                   PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        numpy_cmd = [sys.executable, "-c", "import numpy"]
        remora_cmd = [sys.executable, "-m", "remora", "eval", "-e", PROGRAM]
        cpu_seconds(remora_cmd, env)  # (compiles remora's bytecode and fills the prelude cache)
        times: dict[str, list[float]] = {"numpy": [], "remora": []}
        for _ in range(runs):
            times["numpy"].append(cpu_seconds(numpy_cmd, env))
            times["remora"].append(cpu_seconds(remora_cmd, env))
    print(f"CPU time (user + system) of {runs} runs each, alternating; bytecode compiled, prelude cache warm")
    for name, label in (("numpy", "python -c 'import numpy'"), ("remora", f"remora eval -e '{PROGRAM}'")):
        ts = times[name]
        print(f"{label:32} min {min(ts) * 1000:6.1f} ms   median {statistics.median(ts) * 1000:6.1f} ms")
    print(f"ratio: {min(times['remora']) / min(times['numpy']):.2f}x (min), "
          f"{statistics.median(times['remora']) / statistics.median(times['numpy']):.2f}x (median)")
    return 0
