"""Remora in IPython and Jupyter (contract §9): the magics driven through IPython's
InteractiveShell, and the example notebook executed by nbclient on a real kernel."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("IPython", reason="the notebook extra (IPython) is not installed")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "remora.ipynb"


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """A fresh InteractiveShell with `%load_ext remora` done (no history written anywhere)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.enabled = False
    sh = InteractiveShell.instance(config=config)
    sh.run_line_magic("load_ext", "remora")
    yield sh
    InteractiveShell.clear_instance()


def run(shell, cell: str):
    result = shell.run_cell(cell, store_history=False)
    return result


def test_cell_magic_takes_arrays_from_the_namespace_and_stores_the_value(shell):
    shell.user_ns["x"] = np.arange(6).reshape(2, 3)
    shell.user_ns["k"] = 10
    result = run(shell, "%%remora -o y\n(+ x k)\n")
    assert result.success
    assert repr(result.result) == "[[10 11 12]\n [13 14 15]]"  # displayed: one row per line
    y = shell.user_ns["y"]
    assert isinstance(y, np.ndarray) and y.dtype == np.int64
    assert np.array_equal(y, np.arange(6).reshape(2, 3) + 10)
    # the stored array is the caller's: changing it changes nothing in the session
    y[0, 0] = 99
    assert run(shell, "%%remora\n(+ x k)\n").result.value[0, 0] == 10


def test_type_option_shows_the_type_without_running(shell):
    shell.user_ns["v"] = np.array([1.0, 2.0, 3.0])
    result = run(shell, "%%remora --type\n(/ 1 0)\n(sum v)\n")  # (/ 1 0) would fail if it ran
    assert result.success
    assert repr(result.result) == "(Arr Float (Shp))"
    result = run(shell, "%%remora --type -o t\n(define (f (a [Int])) a)\n")
    assert str(shell.user_ns["t"]) == "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"
    # a checked-only definition does not stay
    assert not run(shell, "%%remora\n(f 1)\n").success


def test_line_magic_returns_the_value(shell):
    shell.user_ns["m"] = np.array([[1, 2], [3, 4]])
    value = shell.run_line_magic("remora", "(reduce + m)")
    assert isinstance(value, np.ndarray) and value.tolist() == [4, 6]
    assert shell.run_line_magic("remora", "(+ 1 2)") == 3
    box = shell.run_line_magic("remora", "(iota/v 3)")[()]
    assert box.indices == (3,) and box.value.tolist() == [0, 1, 2]


def test_definitions_stay_for_later_cells_and_python_names_shadow_them(shell):
    assert run(shell, "%%remora\n(define (twice (a [Int])) (* 2 a))\n(define base 5)\n").success
    assert repr(run(shell, "%%remora\n(twice base)\n").result) == "10"
    shell.user_ns["base"] = np.array([1, 2])
    assert repr(run(shell, "%%remora\n(twice base)\n").result) == "[2 4]"
    del shell.user_ns["base"]
    assert repr(run(shell, "%%remora\n(twice base)\n").result) == "10"


def test_local_names_are_not_inputs(shell):
    shell.user_ns["x"] = np.array([1.0, 2.0])  # a Float vector: would not fit the λ's Int parameter
    result = run(shell, "%%remora\n((λ ((x [Int])) (+ x 1)) 41)\n")
    assert result.success and repr(result.result) == "42"


def test_names_the_language_binds_are_not_inputs(shell):
    shell.user_ns["count"] = 10  # the prelude's count
    shell.user_ns["length"] = 3  # a primitive
    result = run(shell, "%%remora\n(+ (count [#t #f #t]) (length [1 2]))\n")
    assert result.success and repr(result.result) == "4"


def test_errors_show_as_the_cli_shows_them_without_a_traceback(shell, capsys):
    result = run(shell, "%%remora\n(define a 1)\n\n(+ a 2.5)\n")
    assert not result.success
    from remora import RemoraTypeError

    assert isinstance(result.error_in_exec, RemoraTypeError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "<cell>:3:6: error: argument 2 of `+` has atom type Float" in text
    assert "    (+ a 2.5)\n         ^^^" in text
    assert "Traceback" not in text and "File " not in text
    # the line magic raises the error itself
    with pytest.raises(RemoraTypeError) as info:
        shell.run_line_magic("remora", "(+ 1 #t)")
    assert info.value.report().startswith("<cell>:1:6: error:")


def test_run_time_errors_and_bad_inputs(shell, capsys):
    assert not run(shell, "%%remora\n(/ 1 0)\n").success
    shell.user_ns["f16"] = np.zeros(3, dtype=np.float16)
    assert not run(shell, "%%remora\n(+ f16 1.0)\n").success
    text = capsys.readouterr().out
    assert "<cell>:1:1: error:" in text
    assert "input f16: error: input `f16` has dtype float16" in text and ".astype(numpy.float32)" in text
    assert "Traceback" not in text


def test_storing_a_function_is_refused(shell, capsys):
    result = run(shell, "%%remora -o g\n(λ ((a [Int])) a)\n")
    assert not result.success and "g" not in shell.user_ns
    assert "only arrays can be returned to Python" in capsys.readouterr().out


def test_bad_options_are_usage_errors(shell, capsys):
    for line in ("%%remora -o 3x\n1\n", "%%remora --what\n1\n"):
        assert not run(shell, line).success
    assert "UsageError" in capsys.readouterr().err


def test_rich_display(shell):
    shell.user_ns["m"] = np.arange(6).reshape(2, 3)
    value = run(shell, "%%remora\n(* m 2)\n").result
    page = value._repr_html_()
    assert page.count("<tr>") == 2 and page.count("<td>") == 6 and "(Arr Int (Shp 2 3))" in page
    big = run(shell, "%%remora\n((i-app iota/s (Shp 100 3)))\n").result
    assert big._repr_html_().count("<tr>") == 21  # 10 rows, a ⋮ row, 10 rows
    boxes = run(shell, "%%remora\n(iota/v [1 2])\n").result
    assert repr(boxes) == "[(box 1 [0]) (box 2 [0 1])]"
    assert boxes._repr_html_().count('class="remora-box"') == 2
    cube = run(shell, "%%remora\n((i-app iota/s (Shp 2 2 2)))\n").result
    assert repr(cube) == "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"


def _text_outputs(nb) -> list[list[tuple]]:
    """What each code cell showed: output type with its text, HTML or error report."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        shown = []
        for o in cell.outputs:
            if o.output_type == "error":
                shown.append(("error", o.ename, tuple(o.traceback)))
            elif o.output_type == "stream":
                shown.append(("stream", o.name, o.text))
            else:
                data = o.get("data", {})
                shown.append((o.output_type, data.get("text/plain"), data.get("text/html")))
        out.append(shown)
    return out


def test_the_example_notebook_runs_on_a_real_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.delenv("REMORA_DEBUG", raising=False)
    stored = nbformat.read(NOTEBOOK, as_version=4)
    nb = copy.deepcopy(stored)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(ROOT / "examples")}})
    client.execute()  # (a cell that fails without its raises-exception tag fails the test)
    # the outputs are the ones saved in the notebook, which a reader sees without running it
    assert _text_outputs(nb) == _text_outputs(stored)
    outputs = _text_outputs(nb)
    flat = [o for cell in outputs for o in cell]
    tables = [o for o in flat if o[0] == "execute_result" and o[2] and "<table" in o[2]]
    assert tables, "arrays display as HTML tables"
    errors = [o for o in flat if o[0] == "error"]
    assert len(errors) == 1
    report = "\n".join(errors[0][2])
    assert report.startswith("<cell>:2:12: error: the frames of this application are not prefix-compatible")
    assert "Traceback" not in report
    assert any(o[1] == "230.0" for o in flat), "-o stored the value in Python"


def test_lists_and_scalars_in_the_namespace_are_inputs(shell, capsys):
    """Issue 27: a Python list was reported as an unbound variable; it is the array its bracket
    literal would be (one atom type, rectangular), refused as a literal would be refused."""
    shell.user_ns.update(xs=[1, 2, 3], m=[[1.5, 2.0], [3.0, 4.0]], flags=[True, False], k=2)
    assert repr(run(shell, "%%remora\n(* k xs)\n").result) == "[2 4 6]"
    assert repr(run(shell, "%%remora\n(sum m)\n").result) == "[3.5 7.0]"
    assert repr(run(shell, "%%remora\n(not flags)\n").result) == "[#f #t]"
    for value, message in [([1, 2.5], "mixing Float and Int atoms"), ([[1], [2, 3]], "ragged list"),
                           ([], "empty list"), (["a"], "holding a str")]:
        shell.user_ns["bad"] = value
        assert not run(shell, "%%remora\n(+ bad 1)\n").success
        text = capsys.readouterr().out
        assert f"input bad: error: input `bad` is a" in text and message in text, text


def test_jax_and_dask_arrays_with_backend(shell, capsys):
    """Issue 27: a JAX or Dask array in the namespace was an unbound variable; with --backend
    of its library it is an input, and without, the error says which option to give."""
    jnp = pytest.importorskip("jax.numpy")
    da = pytest.importorskip("dask.array")
    import jax

    assert run(shell, "%%remora\n(define (twice (a [Int])) (* 2 a))\n").success  # (on NumPy)
    with jax.enable_x64(True):
        shell.user_ns["j"] = jnp.arange(3, dtype=jnp.int64)
    result = run(shell, "%%remora --backend jax -o out\n(twice j)\n")
    assert result.success and repr(result.result) == "[0 2 4]"
    assert isinstance(shell.user_ns["out"], jax.Array)
    assert not run(shell, "%%remora\n(twice j)\n").success  # (on NumPy again: the option is per cell)
    assert "input j: error: input `j` is a jax array: run the cell with --backend jax" in capsys.readouterr().out
    shell.user_ns["d"] = da.from_array(np.arange(4), chunks=2)
    assert run(shell, "%%remora --backend dask\n(define doubled (twice d))\n").success
    assert repr(run(shell, "%%remora --backend dask\n(+ doubled 1)\n").result) == "[1 3 5 7]"
    assert repr(run(shell, "%%remora\n(twice 21)\n").result) == "42"
    assert not run(shell, "%%remora --backend nope\n1\n").success
    assert "unknown backend 'nope'" in capsys.readouterr().err
