"""The prelude is checked once and cached on disk (decisions.md D40): the next process reads it;
a changed prelude or a changed remora is checked afresh; a cache that cannot be read or written
changes nothing but speed.  And a run imports only what it needs.

Every test here points ``REMORA_CACHE_DIR`` (and, where the prelude changes, ``REMORA_PRELUDE``)
at a temporary directory of its own; conftest.py points the rest of the suite at another one, so
no test touches the user's real cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, subprocess_env

PRELUDE = ROOT / "prelude"

#: what a process reports about its prelude: where it came from, and a value that uses it
REPORT = textwrap.dedent(
    """
    import json, sys
    import remora
    from remora.interfaces import session
    value = remora.evaluate(sys.argv[1]).tolist()
    print(json.dumps({"from_cache": session.prelude_from_cache(), "value": value}))
    """
)


def run_report(cache: Path, program: str = "(sum [1 2 3])", prelude: Path | None = None) -> dict:
    env = {**subprocess_env(), "REMORA_CACHE_DIR": str(cache)}
    if prelude is not None:
        env["REMORA_PRELUDE"] = str(prelude)
    proc = subprocess.run([sys.executable, "-c", REPORT, program], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout)


def run_cli(cache: Path, *argv: str, prelude: Path | None = None) -> subprocess.CompletedProcess:
    env = {**subprocess_env(), "REMORA_CACHE_DIR": str(cache)}
    if prelude is not None:
        env["REMORA_PRELUDE"] = str(prelude)
    return subprocess.run([sys.executable, "-m", "remora", *argv], capture_output=True, text=True, env=env, timeout=120)


def cache_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("prelude-*.pickle"))


def test_the_second_process_reads_the_prelude_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    first = run_report(cache)
    assert first == {"from_cache": False, "value": 6}
    assert len(cache_files(cache)) == 1
    second = run_report(cache)
    assert second == {"from_cache": True, "value": 6}
    assert os.listdir(cache) == [cache_files(cache)[0].name]  # (no temporary file left behind)


def test_a_changed_prelude_is_checked_again_and_means_what_it_now_says(tmp_path):
    cache, prelude = tmp_path / "cache", tmp_path / "prelude"
    shutil.copytree(PRELUDE, prelude)
    assert run_report(cache, prelude=prelude) == {"from_cache": False, "value": 6}
    assert run_report(cache, prelude=prelude) == {"from_cache": True, "value": 6}
    source = prelude / "prelude.rem"
    text = source.read_text(encoding="utf-8")
    assert "(total xs)" in text
    source.write_text(text.replace("(total xs)", "(+ (from-int 100) (total xs))", 1), encoding="utf-8")
    assert run_report(cache, prelude=prelude) == {"from_cache": False, "value": 106}
    assert run_report(cache, prelude=prelude) == {"from_cache": True, "value": 106}
    # Both versions have their own entry: going back to the shipped prelude reads its own.
    assert len(cache_files(cache)) == 2
    assert run_report(cache) == {"from_cache": True, "value": 6}


def test_a_changed_definition_changes_what_depends_on_it(tmp_path):
    """`mean` is defined with `sum`: its cached erased form must follow the new `sum`, and an
    ill-typed change is reported where it is, as any prelude error would be."""
    cache, prelude = tmp_path / "cache", tmp_path / "prelude"
    shutil.copytree(PRELUDE, prelude)
    assert run_report(cache, "(mean [1.0 2.0 3.0])", prelude) == {"from_cache": False, "value": 2.0}
    source = prelude / "prelude.rem"
    source.write_text(source.read_text(encoding="utf-8").replace("(total xs)", "(* (from-int 2) (total xs))", 1),
                      encoding="utf-8")
    assert run_report(cache, "(mean [1.0 2.0 3.0])", prelude) == {"from_cache": False, "value": 4.0}


def test_a_changed_remora_source_changes_the_key(tmp_path, monkeypatch):
    from remora.interfaces import prelude_cache

    package = tmp_path / "remora"
    shutil.copytree(ROOT / "remora", package, ignore=shutil.ignore_patterns("__pycache__"))
    texts = [("prelude.rem", (PRELUDE / "prelude.rem").read_text(encoding="utf-8"))]
    monkeypatch.setattr(prelude_cache, "_PACKAGE", package)
    before = prelude_cache.cache_key(texts)
    assert prelude_cache.cache_key(texts) == before
    engine = package / "dynamics" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\n# a change\n", encoding="utf-8")
    assert prelude_cache.cache_key(texts) != before
    (package / "statics" / "new_module.py").write_text("", encoding="utf-8")
    changed = prelude_cache.cache_key(texts)
    engine.write_text(engine.read_text(encoding="utf-8").replace("# a change", "# a chance"), encoding="utf-8")
    assert prelude_cache.cache_key(texts) != changed  # (same size, different text)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "wrong payload"])
def test_a_corrupt_cache_file_is_ignored_and_replaced(tmp_path, damage):
    import pickle

    cache = tmp_path / "cache"
    run_report(cache)
    (path,) = cache_files(cache)
    data = path.read_bytes()
    path.write_bytes({
        "truncated": data[: len(data) // 2],
        "garbage": b"\x80\x05not a pickle at all" * 10,
        "empty": b"",
        "wrong payload": pickle.dumps({"sum": 1}),
    }[damage])
    assert run_report(cache) == {"from_cache": False, "value": 6}
    assert run_report(cache) == {"from_cache": True, "value": 6}
    proc = run_cli(cache, "eval", "-e", "(mean [1.0 3.0])")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2.0\n", "")


def test_a_cache_directory_that_cannot_be_made_is_no_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cache = blocker / "cache"  # (cannot be created: its parent is a file — even for root)
    assert run_report(cache) == {"from_cache": False, "value": 6}
    assert run_report(cache) == {"from_cache": False, "value": 6}
    proc = run_cli(cache, "eval", "-e", "(sum [1 2 3])")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "6\n", "")


def test_processes_starting_together_all_work_and_leave_one_cache_file(tmp_path):
    cache = tmp_path / "cache"
    env = {**subprocess_env(), "REMORA_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "remora", "eval", "-e", f"(sum [{i} 1])"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(6)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs)] == [
        (0, f"{i + 1}\n", "") for i in range(6)
    ]
    assert [p.name for p in cache.iterdir()] == [cache_files(cache)[0].name]
    assert run_report(cache)["from_cache"] is True


def test_old_cache_files_are_pruned(tmp_path):
    from remora.interfaces import prelude_cache

    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(prelude_cache.KEEP + 3):
        old = cache / f"prelude-old{i}.pickle"
        old.write_bytes(b"")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    run_report(cache)
    kept = {p.name for p in cache_files(cache)}
    assert len(kept) == prelude_cache.KEEP
    assert "prelude-old0.pickle" not in kept and f"prelude-old{prelude_cache.KEEP + 2}.pickle" in kept


# --- what a cached prelude is made of -----------------------------------------------------------


def test_revived_variables_are_new_keep_their_order_and_their_identity():
    """Variables are compared by identity and ordered by serial: a variable from the cache must be
    one new variable wherever it occurs, with a serial no other variable has, in the old order."""
    from remora.interfaces import prelude_cache
    from remora.statics.indices import Dim, Shape, Var, dim_add, dim_var

    a, b = Var("n", "Dim"), Var("n", "Dim")  # same name: ordered by serial alone
    d = dim_add(dim_var(b), dim_var(a))
    payload = ({"x": (a, d)}, [Shape((d, Dim(3)))])
    data = prelude_cache._dumps(*payload)
    before = Var("m", "Dim")
    bindings, forms = prelude_cache._Unpickler(__import__("io").BytesIO(data)).load()
    a2, d2 = bindings["x"]
    b2 = d2.terms[1][0]
    assert a2 is not a and d2.terms[0][0] is a2 and forms[0].items[0].terms[0][0] is a2
    assert a2.serial > before.serial and b2.serial > a2.serial  # fresh, and in the old order
    assert Var("m", "Dim").serial > b2.serial
    assert dim_add(dim_var(b2), dim_var(a2)) == d2  # still canonical


def test_prelude_keys_are_their_own():
    """The prelude's definitions have keys no session definition can get (they are cached)."""
    from remora.interfaces.session import Session, load_prelude

    bindings, forms = load_prelude()
    keys = {g.key for g in bindings.values()}
    assert keys and all("#prelude" in k for k in keys)
    assert {f.key for f in forms if hasattr(f, "key")} >= keys
    session = Session()
    session.check_text("(define sum 1) (define mean 2)")
    mine = {session.checker.globals[n].key for n in ("sum", "mean")}
    assert not mine & keys


def test_sessions_share_the_prelude_values_and_cannot_change_them():
    import numpy as np

    from remora.interfaces.session import Session, load_prelude

    bindings, _ = load_prelude()
    key = bindings["sum"].key
    for engine in ("frames", "reference"):
        one, two = Session(engine=engine), Session(engine=engine)
        assert one.engine.globals[key] is two.engine.globals[key]
        value = one.engine.globals[key]
        assert isinstance(value, np.ndarray) and not value.flags.writeable
        one.check_text("(define sum 1)")  # a session's own definitions are its own
        assert two.engine.globals[key] is value
    assert [v for _, v in Session().run_text("(sum [1 2])")][0] == 3


# --- what a run imports, and the collector at start-up ------------------------------------------

#: modules a well-typed `remora eval` needs none of: z3 (only for counterexamples), the reference
#: engine (only for --engine=reference and --trace), the explanation of inference failures, the
#: REPL and what it may use, and the writing side of the prelude cache
NOT_NEEDED = ["z3", "remora.dynamics.reference", "remora.statics.conflicts", "remora.interfaces.repl",
              "prompt_toolkit", "pygments", "readline", "hashlib"]

IMPORTS = textwrap.dedent(
    """
    import gc, json, sys
    from remora.interfaces import cli
    sys.argv = ["remora", "eval", "-e", sys.argv[1]]
    try:
        cli.entry()
    except SystemExit as exit:
        collector = [gc.isenabled(), gc.get_freeze_count()]
        sys.stderr.write(json.dumps([exit.code, sorted(sys.modules), collector]))
    """
)


def test_a_simple_run_imports_only_what_it_needs(tmp_path):
    env = {**subprocess_env(), "REMORA_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # (the second run reads the cached prelude)
        proc = subprocess.run([sys.executable, "-c", IMPORTS, "(sum (+ [1 2] 3))"], capture_output=True, text=True,
                              env=env, timeout=120)
        code, modules, (collecting, frozen) = json.loads(proc.stderr)
        assert (code, proc.stdout) == (0, "9\n")
        assert not set(NOT_NEEDED) & set(modules), set(NOT_NEEDED) & set(modules)
        # What start-up made is frozen out of the collector's way; collection goes on for the rest.
        assert collecting and frozen > 10_000
