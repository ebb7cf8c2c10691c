"""Where the Dask backend's blocks come from and go (spec D49 "Chunking rule", "Results larger
than a worker's memory"): how large a block may be, how an input or a broadcast frame is cut, and
a result fetched from a cluster block by block."""

from __future__ import annotations

import time
from typing import Any

import dask
import numpy as np

#: the largest block an input is cut into when nothing smaller is asked for
_DEFAULT_BLOCK = 128 * 2**20


def distributed_client() -> Any:
    """The ``distributed`` client computations run on (a Client given as the scheduler, or the
    current default one), or None when they run on a local scheduler."""
    client = dask.config.get("scheduler", None)
    if hasattr(client, "scheduler_info"):
        return client
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


#: each client's smallest worker memory, and when it was asked (:func:`_smallest_worker_memory`)
_WORKER_MEMORY: dict[str, tuple[float, int | None]] = {}
#: how long a client's worker memory is taken as known, in seconds
_WORKER_MEMORY_TTL = 10.0


def _smallest_worker_memory(client) -> int | None:
    """The smallest memory limit of the client's workers (None: no limits).  Asking is a round
    trip to the scheduler, and :func:`block_bytes` is asked for every broadcast, so the answer
    is kept for :data:`_WORKER_MEMORY_TTL` seconds (workers come and go more slowly)."""
    now = time.monotonic()
    hit = _WORKER_MEMORY.get(client.id)
    if hit is not None and now - hit[0] < _WORKER_MEMORY_TTL:
        return hit[1]
    workers = client.scheduler_info().get("workers", {})
    memories = [m for m in (w.get("memory_limit") or 0 for w in workers.values()) if m > 0]
    _WORKER_MEMORY[client.id] = (now, min(memories, default=None))
    return _WORKER_MEMORY[client.id][1]


def block_bytes() -> int:
    """The most bytes one block of an input holds: Dask's ``array.chunk-size`` setting, and at most
    a sixteenth of the smallest worker's memory when a ``distributed`` client is active (a worker
    holds a few blocks per thread at once, and an input may be many times its memory)."""
    limit = dask.utils.parse_bytes(dask.config.get("array.chunk-size", _DEFAULT_BLOCK))
    client = distributed_client()
    memory = None if client is None else _smallest_worker_memory(client)
    return limit if memory is None else min(limit, memory // 16)


def frame_chunks(shape: tuple, itemsize: int, frame_axes: int) -> tuple:
    """Chunks for an array of ``shape``: its first ``frame_axes`` axes cut into blocks of at most
    :func:`block_bytes`, the leading axes first; the cell axes whole."""
    budget = max(1, block_bytes() // max(1, itemsize))
    cell = 1
    for d in shape[frame_axes:]:
        cell *= d
    budget = max(1, budget // max(1, cell))
    chunks: list[int] = []
    for d in reversed(shape[:frame_axes]):  # the trailing frame axes whole while they fit
        take = max(1, min(d, budget))
        chunks.append(take)
        budget = max(1, budget // max(1, d))
    return tuple(reversed(chunks)) + tuple(shape[frame_axes:])


def broadcast_chunks(x, shape: tuple) -> tuple:
    """Chunks for ``x`` broadcast to ``shape``, at most :func:`block_bytes` a block: the axes
    ``x`` is already cut along keep their blocks; every other axis — stretched (new leading
    ones, length-1 ones) or one block in ``x`` — is cut by ``shape`` alone, the leading axes
    first, so that operands broadcast to one frame get the same blocks (Dask would make each
    stretched axis one block: an outer product's whole frame in one task)."""
    lead = len(shape) - x.ndim
    kept = [None] * lead + [c if len(c) > 1 and n == d else None for n, d, c in zip(x.shape, shape[lead:], x.chunks)]
    budget = max(1, block_bytes() // max(1, x.dtype.itemsize))
    for c in kept:
        if c is not None:
            budget = max(1, budget // max(c))
    chunks: list = []
    for d, c in zip(reversed(shape), reversed(kept)):  # the trailing axes whole while they fit
        if c is None:
            c = max(1, min(d, budget))
            budget = max(1, budget // c)
        chunks.append(c)
    return tuple(reversed(chunks))


def _gathered(client, x) -> np.ndarray:
    """``x`` computed on a ``distributed`` cluster into this process, block by block: each block is
    fetched (and released on the cluster) as soon as it is done.  ``x.compute()`` would join the
    blocks in one task on one worker — a result larger than a worker's memory could not be
    printed — and fetching them all in one message would need as much on each worker."""
    from distributed import as_completed

    blocks = x.to_delayed(optimize_graph=False).ravel()
    where = list(np.ndindex(x.numblocks))
    starts = [np.cumsum((0,) + c) for c in x.chunks]
    futures = client.compute(list(blocks), optimize_graph=False)
    index = {f.key: i for i, f in enumerate(futures)}
    out = np.empty(x.shape, x.dtype)
    for future in as_completed(futures):
        block = where[index[future.key]]
        out[tuple(slice(s[b], s[b + 1]) for s, b in zip(starts, block))] = future.result()
        future.release()
    return out
