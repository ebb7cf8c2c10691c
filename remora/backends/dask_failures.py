"""Failures of the Dask machinery as located run-time errors (spec D49 "Failures").

A computation on a cluster can fail for reasons that are not the program's: a worker killed for
going over its memory limit (``KilledWorker``), a block too large to allocate (``MemoryError``),
the connection to the scheduler lost, a computation cancelled.  These reached the command line
as "internal error" — as if remora had a bug.  They are raised instead as a
:class:`~remora.errors.RemoraBackendError` naming the backend and the cause; ``errors.located_at`` locates
it at the form whose value was being computed (a Dask value has no finer source position: its
tasks run long after the expression that built them).
"""

from __future__ import annotations

import concurrent.futures
from ..errors import RemoraBackendError

#: what each kind of failure means, for the message
_CAUSES = {
    "KilledWorker": "a worker died while computing it (over its memory limit?)",
    "MemoryError": "out of memory",
    "CommClosedError": "the connection to the cluster was lost",
    "TimeoutError": "the cluster did not answer in time",
    "CancelledError": "the computation was cancelled on the cluster",
    "FutureCancelledError": "the computation was cancelled on the cluster",
}


def _kinds() -> tuple[type, ...]:
    kinds: list[type] = [MemoryError, TimeoutError, concurrent.futures.CancelledError]
    try:
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError

        kinds += [KilledWorker, CommClosedError]
    except ImportError:  # (Dask without distributed: its local schedulers fail as MemoryError)
        pass
    return tuple(kinds)


def _raised_by_dask(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside Dask itself (its innermost frame is in a ``dask`` module)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    return module == "dask" or module.startswith("dask.")


def failure(exc: BaseException) -> RemoraBackendError | None:
    """The located-to-be error for ``exc`` if it is a failure of the Dask machinery, or an operation
    Dask does not have (its own ``NotImplementedError``, as n-d fancy indexing was: the API raised
    it bare), else None.  A ``NotImplementedError`` of remora's own is a bug and stays one."""
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 160 else detail[:157] + "..."
    cause = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    if isinstance(exc, NotImplementedError) and _raised_by_dask(exc):
        return RemoraBackendError(f"the dask backend cannot run this: Dask does not support an operation it needs ({cause})")
    if not isinstance(exc, _kinds()):
        return None
    kind = next((_CAUSES[c.__name__] for c in type(exc).__mro__ if c.__name__ in _CAUSES), "")
    return RemoraBackendError(f"the dask backend failed computing this value: {kind} ({cause})")

