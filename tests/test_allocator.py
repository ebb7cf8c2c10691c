"""The NumPy backend keeps freed array blocks for reuse (D75), unless the user chose otherwise."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from remora.backends import allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

PROBE = "import remora.backends.numpy_backend, remora.backends.allocator as a; print(a._done)"


def _run(env_extra: dict) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | env_extra
    code = ("import remora.backends.allocator as a; a._done = False; "
            "print(a.keep_freed_blocks())")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_importing_the_numpy_backend_sets_the_thresholds_once():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert _run({}).stdout.strip() == "True"
    import remora.backends.numpy_backend  # noqa: F401  (sets them, if no test did before)

    assert allocator.keep_freed_blocks() is False  # (already done in this process)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
@pytest.mark.parametrize("name", ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"])
def test_a_users_own_malloc_setting_is_kept(name):
    assert _run({name: "131072"}).stdout.strip() == "False"
