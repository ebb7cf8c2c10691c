"""What the command line and the REPL read and write: program files, standard output, standard error.

Kept apart from the rest (and free of heavy imports) because these are the failures that are
not the program's: a file too big or not text, a full disk behind standard output, a reader of
standard error that went away.  Each has its own outcome (interfaces.md): an unreadable program
is an I/O error (exit 2); so is output that cannot be written; a report that cannot be written
is lost, but the exit status still says an error happened.
"""

from __future__ import annotations

import os
import sys
from typing import IO

#: The largest program file read (bytes).  Generous — the reader takes about a second per MB —
#: but finite, so ``remora eval /dev/zero`` fails at once instead of exhausting memory.
MAX_SOURCE_BYTES = 32 * 2**20


class SourceError(Exception):
    """A program file that cannot be read; the message says why (it follows ``cannot read PATH: ``)."""


class OutputError(Exception):
    """Standard output cannot be written (no space, an I/O error): the command's I/O error.
    (A reader that went away is a ``BrokenPipeError`` instead: the output is simply not wanted.)"""

    def __init__(self, cause: OSError | str):
        reason = cause if isinstance(cause, str) else cause.strerror or str(cause)
        super().__init__(reason)
        self.reason = reason


def read_source(path: str) -> str:
    """The text of a program file: UTF-8, at most :data:`MAX_SOURCE_BYTES`, newlines as ``\\n``."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)  # (a device like /dev/zero never ends: read no more)
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(f"larger than {MAX_SOURCE_BYTES:,} bytes, the limit for a program")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as reading in text mode would


def emit(text: str, stream: IO[str] | None = None) -> None:
    """Print a line of the program's output, at once (so it stays in order with error reports)."""
    stream = stream if stream is not None else sys.stdout
    if stream is None:  # (closed before Python started, `>&-`: print would write nowhere, silently)
        raise OutputError("it is closed")
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc) from None


def report(text: str, stream: IO[str] | None = None) -> None:
    """Print an error report on standard error.  If it cannot be written (standard error closed,
    or a pipe nobody reads), it is lost: the caller's exit status must still say what happened."""
    stream = stream if stream is not None else sys.stderr
    if stream is None:  # standard error was closed before Python started
        return
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        quiet(stream)


def flush(stream: IO[str] | None = None) -> None:
    """Flush standard output now, where a failure can still be reported (not at interpreter exit)."""
    stream = stream if stream is not None else sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc) from None


def quiet(stream: IO[str] | None) -> None:
    """Send what is left of a failed stream to the null device, so Python does not fail again (and
    change the exit status) when it flushes the stream at exit."""
    try:
        fd = stream.fileno()  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError):  # not a real file (a test's StringIO)
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass
