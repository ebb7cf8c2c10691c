"""A progress indicator on standard error while long work runs — at a terminal, and only there.

How long a form will run is not known before it runs (a ``while`` loop's steps, a JAX
compilation, a Dask graph), so the indicator waits: only work still running after
:data:`DELAY` seconds (``REMORA_PROGRESS_DELAY``) shows one, and short work shows nothing.  Then:

- on Dask's local scheduler, Dask's own progress bar (the share of the graph's tasks done);
- otherwise one line, drawn by tqdm, naming the form and how long it has run, redrawn a few
  times a second and erased when the form is done, before its value prints.

Nothing is ever written where standard error is not a terminal (a pipe, a file, the tests'
capture): output there is the program's and its errors', nothing else.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import IO, Any, Iterator

#: seconds a form runs before an indicator appears
DELAY = 2.0
#: seconds between redraws of the line
REFRESH = 0.25


def delay() -> float:
    """:data:`DELAY`, or the seconds ``REMORA_PROGRESS_DELAY`` says (a number ≥ 0)."""
    text = os.environ.get("REMORA_PROGRESS_DELAY", "")
    try:
        seconds = float(text)
    except ValueError:
        return DELAY
    return seconds if seconds >= 0 else DELAY


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # (no isatty, or a closed stream)
        return False


@contextlib.contextmanager
def running(what: str, stream: IO[str] | None, xp: Any = None) -> Iterator[None]:
    """A context for work described by ``what`` (a form's place, ``p.rem:3:1``): at a terminal,
    an indicator on ``stream`` once the work has run :func:`delay` seconds (the backend ``xp``'s
    own, if it has one)."""
    if not is_terminal(stream):
        yield
        return
    wait = delay()
    own = xp.progress(stream, wait) if xp is not None else None
    if own is not None:
        with own:
            yield
        return
    line = _Line(what, stream, wait)
    line.start()
    try:
        yield
    finally:
        line.stop()


class _Line(threading.Thread):
    """The indicator's thread: waits, then draws ``running WHAT 00:03`` until stopped."""

    def __init__(self, what: str, stream: IO[str], wait: float):
        super().__init__(name="remora-progress", daemon=True)
        self.what, self.stream, self.wait = what, stream, wait
        self.started = time.time()  # (tqdm's clock)
        self.done = threading.Event()

    def run(self) -> None:
        if self.done.wait(self.wait):
            return
        from tqdm import tqdm

        bar = tqdm(total=None, desc=f"remora: running {self.what}", file=self.stream, leave=False,
                   bar_format="{desc} {elapsed}", dynamic_ncols=True)
        bar.start_t = self.started  # (the time shown is the work's, not the indicator's)
        try:
            while not self.done.wait(REFRESH):
                bar.refresh()
        finally:
            bar.close()  # (leave=False: the line is erased)

    def stop(self) -> None:
        self.done.set()
        if self.is_alive():
            self.join()
