"""`Float32` and `Int32` at the front doors (contract §10, decisions.md D56): the Python API, the
notebook magic, `NAME=PATH` data files and `-o`, the REPL, the language server's hover and the
Pygments lexer.  Arrays of `float32`/`int32` come in as `Float32`/`Int32` and results keep their
precision; any other dtype is an error naming it and the conversion to make."""

from __future__ import annotations

import io

import numpy as np
import pytest

import remora
from remora.interfaces.cli import main

F32 = np.array([[0.1, 2.5], [3.0, 1e-05]], dtype=np.float32)


# --- the Python API -------------------------------------------------------------------------------


def test_the_api_binds_float32_and_int32_arrays_and_results_keep_their_precision():
    assert str(remora.check("x", x=F32)) == "(Arr Float32 (Shp 2 2))"
    assert str(remora.check("(+ n 1)", n=np.arange(3, dtype=np.int32))) == "(Arr Int32 (Shp 3))"
    out = remora.evaluate("(* x 2.0)", x=F32)
    assert out.dtype == np.float32 and np.array_equal(out, F32 * np.float32(2))
    out = remora.evaluate("(sum n)", n=np.arange(10, dtype=np.int32))
    assert out.dtype == np.int32 and out[()] == 45
    f = remora.function("(λ ((v [Float32 2])) (/ v (sum v)))")
    out = f(F32)  # (lifted over the rows)
    assert out.dtype == np.float32 and out.shape == (2, 2)
    assert out.tolist() == (F32 / F32.sum(-1, keepdims=True)).tolist()


def test_a_float_program_given_float32_says_how_to_convert():
    f = remora.function("(λ ((v [Float 2])) (sum v))")
    with pytest.raises(remora.RemoraTypeError) as info:
        f(F32)
    assert "Float32" in info.value.message and "float32->float" in info.value.message


@pytest.mark.parametrize("dtype, fix", [(np.uint8, "int32"), (np.float16, "float32"), (np.int8, "int32"),
                                        (np.complex128, ".real")])
def test_other_dtypes_are_errors_naming_the_dtype_and_the_conversion(dtype, fix):
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=np.zeros(3, dtype=dtype))
    assert np.dtype(dtype).name in info.value.message and fix in info.value.message


def test_dask_arrays_of_float32_come_in_and_go_out_as_float32():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.linspace(0, 1, 12, dtype=np.float32).reshape(6, 2), chunks=3)
    out = remora.evaluate("(sum x)", x=x, backend="dask")
    assert out.dtype == np.float32 and np.array_equal(out.compute(), np.add.reduce(np.asarray(x), axis=-1))
    with pytest.raises(remora.RemoraTypeError, match="float16"):
        remora.evaluate("x", x=da.zeros(3, dtype=np.float16), backend="dask")


# --- the command line: NAME=PATH and -o ----------------------------------------------------------------


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_float32_npy_is_a_float32_input_and_o_writes_float32(capsys, tmp_path):
    np.save(tmp_path / "x.npy", F32)
    np.save(tmp_path / "n.npy", np.array([1, 2], dtype=np.int32))
    out = tmp_path / "out.npy"
    code, printed, err = _run(capsys, "eval", "-e", "(* x 2.0) (+ n 1)", f"x={tmp_path}/x.npy",
                              f"n={tmp_path}/n.npy", "-o", str(out))
    assert code == 0, err
    assert printed == "[[0.2 5.0] [6.0 2e-05]]\n[2 3]\n"
    assert np.load(out).dtype == np.int32
    code, _, err = _run(capsys, "eval", "-e", "(* x 2.0)", f"x={tmp_path}/x.npy", "-o", str(out))
    assert code == 0 and np.load(out).dtype == np.float32 and np.array_equal(np.load(out), F32 * np.float32(2))
    code, printed, _ = _run(capsys, "check", "-e", "x", f"x={tmp_path}/x.npy")
    assert printed == "(Arr Float32 (Shp 2 2))\n"


def test_a_npy_of_another_dtype_names_it_and_the_conversion(capsys, tmp_path):
    np.save(tmp_path / "h.npy", np.zeros(3, dtype=np.float16))
    code, _, err = _run(capsys, "eval", "-e", "h", f"h={tmp_path}/h.npy")
    assert code == 1 and err.startswith(f"{tmp_path}/h.npy:1:1: error:")
    assert "float16" in err and ".astype(numpy.float32)" in err


def test_a_type_error_names_the_conversion_on_the_command_line(capsys):
    code, _, err = _run(capsys, "check", "-e", "(λ ((a [Float32]) (b [Float])) (+ a b))")
    assert code == 1 and "float->float32" in err and "<expr>:1:" in err


# --- the notebook magic -------------------------------------------------------------------------------


@pytest.fixture
def shell(tmp_path, monkeypatch):
    pytest.importorskip("IPython")
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


def test_the_magic_binds_float32_arrays_and_keeps_their_precision(shell):
    shell.user_ns["img"] = F32
    result = shell.run_cell("%%remora -o out\n(* img 2.0)\n", store_history=False)
    assert result.success
    shell.user_ns["img64"] = np.array([[0.1, 2.5], [3.0, 1e-05]])
    float64 = shell.run_cell("%%remora\n(* img64 2.0)\n", store_history=False).result
    assert repr(result.result) == repr(float64)  # (laid out as a Float's, each atom its shortest text)
    assert "0.2" in repr(result.result) and "2e-05" in repr(result.result) and "000" not in repr(result.result)
    assert "<code>2e-05</code>" in result.result._repr_html_() and "Float32" in result.result._repr_html_()
    assert shell.user_ns["out"].dtype == np.float32
    assert str(shell.run_cell("%%remora --type\n(* img 2.0)\n", store_history=False).result) == "(Arr Float32 (Shp 2 2))"


def test_the_magic_takes_a_jax_array_as_jax_makes_it(shell):
    jnp = pytest.importorskip("jax.numpy")
    shell.user_ns["v"] = jnp.ones(3)  # (float32: JAX's default)
    result = shell.run_cell("%%remora -o s --backend jax\n(sum v)\n", store_history=False)
    s = np.asarray(shell.user_ns["s"])
    assert result.success and s.dtype == np.float32 and s[()] == 3.0


# --- the REPL, the language server, the lexer ------------------------------------------------------


def test_the_repl_prints_and_types_float32():
    from remora.interfaces.repl import Repl

    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO("(define x (float->float32 [0.1 2.5]))\n(* x 3.0)\n:type (* x 3.0)\n(+ x 1)\n")
    code = Repl(stdin, out, err, interactive=False).run()
    assert out.getvalue().splitlines() == ["[0.3 7.5]", "(Arr Float32 (Shp 2))"]
    assert code == 1 and "write 1.0" in err.getvalue()


def test_hover_shows_what_a_literal_became():
    from remora.interfaces.document import Document

    text = "(define (f (x [Float32 3])) (+ x 1.5))"
    doc = Document(text)
    assert "(Arr Float32 (Shp))" in doc.hover(1, text.index("1.5") + 1)
    hover = doc.hover(1, text.index("(+") + 2)
    assert "+ : (Arr (-> ((Arr Float32 (Shp)) (Arr Float32 (Shp))) (Arr Float32 (Shp))) (Shp))" in hover
    assert "(Arr Float32 (Shp 3))" in Document("(float->float32 [1.0 2.0 3.0])").hover(1, 1)


def test_the_lexer_knows_the_new_types_kinds_and_conversions():
    from pygments.token import Keyword, Name

    from remora.interfaces.lexer import RemoraLexer

    tokens = {v: t for t, v in RemoraLexer().get_tokens("(Tλ ((t Floating)) (λ ((x [Float32 3]) (n [Int32])) "
                                                         "(int32->float32 (floor (float->float32 x)))))")}
    assert tokens["Float32"] in Keyword.Type and tokens["Int32"] in Keyword.Type
    assert tokens["Floating"] in Name.Class
    assert tokens["int32->float32"] in Name.Builtin and tokens["float->float32"] in Name.Builtin
