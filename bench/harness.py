"""Timing helpers shared by the benchmarks (method of ../shared/notes.md §6).

A Remora program is checked and erased once (:func:`prepare`); timing covers
evaluation only.  Each measurement is the minimum over several runs with the
garbage collector off, and the Remora and NumPy versions are timed side by
side in the same process.
"""

from __future__ import annotations

import gc
import io
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

#: Benchmarks deliberately build large arrays: allow more than the default 10⁹ bytes.
BENCH_MAX_BYTES = 16 * 2**30


@dataclass
class Prepared:
    """A checked, erased program ready to run on either engine with its inputs bound."""

    forms: list
    inputs: dict[str, np.ndarray]  # by the key each input was declared under
    check_seconds: float

    def engine(self, name: str = "plans"):
        """A fresh engine with the prelude and the inputs loaded (not part of any timing)."""
        from remora.interfaces.session import load_prelude, make_engine
        from remora.dynamics.runtime import RunConfig

        eng = make_engine(name, RunConfig(stdin=io.StringIO(""), max_bytes=BENCH_MAX_BYTES))
        for form in load_prelude()[1]:
            eng.eval_form(form)
        eng.globals.update(self.inputs)
        return eng

    def runner(self, name: str = "plans") -> Callable[[], np.ndarray]:
        """A function evaluating the program's forms (what the benchmarks time)."""
        eng = self.engine(name)

        def run() -> np.ndarray:
            value = None
            for form in self.forms:
                value = eng.eval_form(form)
            return value

        return run

    def run(self, name: str = "plans") -> np.ndarray:
        return self.runner(name)()


def prepare(source: str, **inputs: Any) -> Prepared:
    from remora.interfaces.api import as_remora_array, type_of_array
    from remora.interfaces.session import Session
    from remora.erasure.erase import erase_form

    arrays = {k: as_remora_array(k, v) for k, v in inputs.items()}
    start = time.perf_counter()
    session = Session()
    keys = {name: session.declare(name, type_of_array(a)) for name, a in arrays.items()}
    forms = [erase_form(f) for f in session.check_text(source, "<bench>")]
    return Prepared(forms, {keys[name]: a for name, a in arrays.items()}, time.perf_counter() - start)


def best_time(fn: Callable[[], Any], repeat: int = 5, budget: float = 30.0) -> float:
    """Minimum wall time of ``fn()`` over ``repeat`` runs (fewer if a run exceeds the budget)."""
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
            if sum(times) > budget:
                break
    finally:
        gc.enable()
    return min(times)


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (Python and NumPy, via tracemalloc) while running ``fn()`` once."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
