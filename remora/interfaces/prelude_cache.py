"""The prelude, checked and erased once, and kept on disk for the next process (decisions.md D40).

Checking the prelude costs more than everything else a one-line ``remora eval`` does after
its imports, and its outcome — the bindings the checker starts from and the erased forms the
engines run — is the same every time.  So it is pickled into a cache file whose *name* is a
hash of everything that outcome depends on: the prelude's text, the text of every source file
of remora itself (and its version), the Python version and the pickle protocol.  A changed prelude or
remora looks for a different file, so a stale cache is never read; a cache that cannot be read,
written or unpickled is ignored and the prelude is checked instead — never an error.  Writers
write a temporary file and rename it, so concurrent processes never see half a cache.

Where: ``$REMORA_CACHE_DIR`` if set (the tests point it at a temporary directory), else
``$XDG_CACHE_HOME/remora``, else ``~/.cache/remora``.  Which prelude: the ``.rem`` files of
``$REMORA_PRELUDE`` (a directory) if set, else the prelude shipped with remora: the package
``remora.prelude``, read with :mod:`importlib.resources` (decisions.md D57) — the repository's
top-level ``prelude/`` folder, which ``pyproject.toml`` maps to that package, so a wheel carries it
as package data and an editable install finds it where it is.

Index and type variables are compared by identity and ordered by serial number
(:class:`~remora.statics.indices.Var`), so they cannot simply be unpickled as they were: each
variable of the cache becomes one new variable, with a serial taken from this process's counter
in the order of the old serials — canonical forms stay canonical, and no variable made before or
after shares a serial with one from the cache.  Definition keys need no such care: the prelude's
are its own (:func:`~remora.statics.typed.library_key`), never made by the process's counter.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
from importlib import resources
from pathlib import Path
from typing import Callable, NamedTuple

from ..statics import indices
from ..statics.typed import Global

PRELUDE_ENV = "REMORA_PRELUDE"
CACHE_ENV = "REMORA_CACHE_DIR"
PROTOCOL = pickle.HIGHEST_PROTOCOL
#: cache files kept in the directory (one per prelude and remora version): older ones are removed
KEEP = 8
_PACKAGE = Path(__file__).resolve().parents[1]
#: the package whose data files are the shipped prelude (the repository's ``prelude/``, D57)
SHIPPED_PACKAGE = "remora.prelude"


class Prelude(NamedTuple):
    """The checked prelude: name → :class:`~remora.statics.typed.Global`, and the erased forms."""

    bindings: dict[str, Global]
    forms: list
    #: whether it was read from the cache (False: this process checked it)
    from_cache: bool = False


#: checks the prelude's texts ((file name, text) pairs): its bindings and erased forms
Check = Callable[[list[tuple[str, str]]], tuple[dict, list]]


def prelude_files() -> list[Path]:
    """The prelude's ``.rem`` files, in the order they are checked."""
    override = os.environ.get(PRELUDE_ENV)
    directory = Path(override) if override else shipped_dir()
    if not directory.is_dir():
        raise FileNotFoundError(f"the Remora prelude is missing (looked in: {directory})")
    return sorted(directory.glob("*.rem"))


def shipped_dir() -> Path:
    """The folder of the prelude installed with remora: the package ``remora.prelude``'s files.

    A path, not only a :mod:`importlib.resources` traversable, because the language server and
    error messages name the file a definition is in; remora is installed as files (a wheel,
    unpacked, or editable), never run from a zip."""
    try:
        folder = resources.files(SHIPPED_PACKAGE)
    except ModuleNotFoundError:
        raise FileNotFoundError(f"the Remora prelude is missing: no package {SHIPPED_PACKAGE} is installed") from None
    if not isinstance(folder, Path):
        raise FileNotFoundError(f"the Remora prelude is missing: {SHIPPED_PACKAGE} is not a folder of files ({folder})")
    return folder


def cache_dir() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "remora"


def load(check: Check) -> Prelude:
    """The prelude: from the cache when it holds this very prelude, else ``check``-ed (and cached)."""
    texts = [(path.name, path.read_text(encoding="utf-8")) for path in prelude_files()]
    try:
        path: Path | None = cache_dir() / f"prelude-{cache_key(texts)}.pickle"
    except (OSError, RuntimeError):  # (no home directory, unreadable sources: no cache)
        path = None
    if path is not None:
        cached = _read(path)
        if cached is not None:
            return cached
    bindings, forms = check(texts)
    if path is not None:
        _write(path, bindings, forms)
    return Prelude(bindings, forms)


def cache_key(texts: list[tuple[str, str]]) -> str:
    """A hash of everything the checked, erased prelude depends on.

    remora's sources are hashed by content, not by modification time: reading and hashing them
    all costs about 2 ms, and no copy, checkout or reinstall that keeps times and sizes can
    then fool it."""
    from .. import __version__

    h = _blake2b(digest_size=20)
    h.update(f"{sys.version}\0{PROTOCOL}\0{__version__}\0".encode())
    for name, text in texts:
        h.update(f"prelude/{name}\0{len(text)}\0".encode())
        h.update(text.encode("utf-8"))
    for relative, path in _sources():
        with open(path, "rb") as f:
            data = f.read()
        h.update(f"{relative}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _sources() -> list[tuple[str, str]]:
    """Every Python source file of remora: (path relative to the package, path)."""
    found = []
    root = str(_PACKAGE)
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        relative = os.path.relpath(directory, root).replace(os.sep, "/")
        found += [(f"{relative}/{n}", os.path.join(directory, n)) for n in sorted(names) if n.endswith(".py")]
    return found


try:  # hashlib's own BLAKE2, without the few ms hashlib spends loading OpenSSL
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - (a Python built without it)
    from hashlib import blake2b as _blake2b


# ---------------------------------------------------------------------------
# Reading and writing


#: bytes of the digest that starts a cache file: the payload is unpickled only when it matches, so a
#: truncated or damaged file is a cache miss, and an error unpickling an intact one is a bug (raised)
DIGEST_BYTES = 16


def _digest(data: bytes) -> bytes:
    return _blake2b(data, digest_size=DIGEST_BYTES).digest()


def _read(path: Path) -> Prelude | None:
    """The cached prelude, or None if there is none or its file is damaged."""
    try:
        raw = path.read_bytes()
    except OSError:  # (missing or unreadable: no cache)
        return None
    digest, data = raw[:DIGEST_BYTES], raw[DIGEST_BYTES:]
    if len(raw) < DIGEST_BYTES or _digest(data) != digest:
        return None  # (truncated, damaged, or not written by :func:`_write`)
    try:
        bindings, forms = _Unpickler(io.BytesIO(data)).load()
    except _Incompatible:  # (an object of another NumPy, say, that this installation cannot revive: D40)
        return None
    return Prelude(bindings, forms, from_cache=True)


def _write(path: Path, bindings: dict, forms: list) -> None:
    """Write the cache file atomically (a temporary file renamed), or not at all."""
    data = _dumps(bindings, forms)  # (a prelude that cannot be pickled is a bug: it is raised)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.{id(data):x}.tmp")
        try:
            temp.write_bytes(_digest(data) + data)
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        _prune(path.parent)
    except OSError:  # (an unwritable directory, a full disk: the next process checks the prelude again)
        pass


def _prune(directory: Path) -> None:
    """Keep the ``KEEP`` newest cache files (each remora or prelude version makes its own)."""
    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    for old in sorted(directory.glob("prelude-*.pickle"), key=age, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)


def _dumps(bindings: dict, forms: list) -> bytes:
    """Pickle with every variable written as its rank among the payload's variable serials."""
    finder = _VarFinder(io.BytesIO(), PROTOCOL)
    finder.dump((bindings, forms))
    ranks = {serial: i for i, serial in enumerate(sorted(finder.found))}
    out = io.BytesIO()
    _Pickler(out, PROTOCOL, ranks).dump((bindings, forms))
    return out.getvalue()


class _VarFinder(pickle.Pickler):
    """A first pass that only collects the serials of the variables in the payload."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.found: dict[int, indices.Var] = {}

    def persistent_id(self, obj):
        if isinstance(obj, indices.Var):
            other = self.found.setdefault(obj.serial, obj)
            if other is not obj:
                raise ValueError("two variables share a serial")  # (never: serials are unique)
            return obj.serial
        return None


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol, ranks: dict[int, int]):
        super().__init__(file, protocol)
        self.ranks = ranks

    def persistent_id(self, obj):
        if isinstance(obj, indices.Var):
            return (type(obj).__name__, obj.name, obj.sort, self.ranks[obj.serial])
        return None


class _Incompatible(Exception):
    """The cache names a class or function this installation does not have (NumPy's version is
    not in the key, D40): the file is of no use here."""


class _Unpickler(pickle.Unpickler):
    """Revives each cached variable once, as a new variable with a serial from this process."""

    def find_class(self, module: str, name: str):
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError) as err:
            raise _Incompatible(f"{module}.{name}") from err

    def __init__(self, file):
        super().__init__(file)
        self.vars: dict[int, indices.Var] = {}
        self.serials: list[int] = []

    def persistent_load(self, pid):
        kind, name, sort, rank = pid
        var = self.vars.get(rank)
        if var is None:
            cls = _VAR_CLASSES[kind]
            var = cls.__new__(cls)
            var.name, var.sort, var.serial = name, sort, self._serial(rank)
            self.vars[rank] = var
        return var

    def _serial(self, rank: int) -> int:
        """The serial of the ``rank``-th cached variable: fresh from the counter, in rank order."""
        while len(self.serials) <= rank:
            self.serials.append(indices.fresh_serial())
        return self.serials[rank]


def _var_classes() -> dict[str, type]:
    from ..statics.unknowns import IMeta

    return {"Var": indices.Var, "IMeta": IMeta}


_VAR_CLASSES = _var_classes()
