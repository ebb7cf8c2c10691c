"""The files the Dask backend reads and writes block by block (spec D49): a memory-mapped
``.npy`` input read by the tasks, and the ``.npy`` that ``-o`` writes — each task maps the file,
touches its own block and unmaps it, so the graph carries a file name, never the data."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np


class MappedFile:
    """A memory-mapped ``.npy`` as Dask reads it: each task maps the file, copies out its block and
    unmaps it again, so the graph carries the file's name, not its data, and a worker holds only
    the blocks it is working on (pages it has read are not left mapped, counted as its memory)."""

    def __init__(self, filename: str, offset: int, dtype: np.dtype, shape: tuple, order: str) -> None:
        self.filename, self.offset, self.order = filename, offset, order
        self.dtype, self.shape, self.ndim = dtype, shape, len(shape)

    def __getitem__(self, index):
        mapped = np.memmap(self.filename, self.dtype, "r", self.offset, self.shape, self.order)
        try:
            return np.array(mapped[index])
        finally:
            mapped._mmap.close()
            del mapped


class FileBlocks:
    """The ``.npy`` file ``-o`` writes, as ``da.store`` writes it: each task maps the file (its
    header already written), writes its block and unmaps it, so the target is a file name — what a
    worker process can reach on a shared file system — and no process holds the whole result."""

    def __init__(self, filename: str, offset: int, dtype: np.dtype, shape: tuple) -> None:
        self.filename, self.offset, self.dtype, self.shape = filename, offset, dtype, shape

    def __setitem__(self, index, value) -> None:
        mapped = np.memmap(self.filename, self.dtype, "r+", self.offset, self.shape, "C")
        try:
            mapped[index] = value
            mapped.flush()
        finally:
            mapped._mmap.close()
            del mapped


def file_source(x: np.ndarray) -> Any:
    """What ``da.from_array`` reads ``x`` from: the file, for a whole memory-mapped file (or a
    plain view of all of one, as ``numpy.asarray`` makes of it)."""
    mapped = x
    while not isinstance(mapped, np.memmap) and isinstance(mapped, np.ndarray) and mapped.base is not None:
        mapped = mapped.base
    if not (isinstance(mapped, np.memmap) and isinstance(mapped.base, mmap.mmap) and mapped.filename):
        return x
    same = (mapped.shape == x.shape and mapped.strides == x.strides and mapped.dtype == x.dtype
            and mapped.__array_interface__["data"][0] == x.__array_interface__["data"][0])
    order = "C" if x.flags.c_contiguous else ("F" if x.flags.f_contiguous else None)
    if not same or order is None:
        return x
    return MappedFile(mapped.filename, mapped.offset, x.dtype, x.shape, order)
