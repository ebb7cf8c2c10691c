"""Data on the command line (contract §7): NAME=PATH inputs, -o PATH.npy, `remora eval -`.

In-process through the CLI's main (one subprocess checks `remora eval -` end to end)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from remora.interfaces.cli import main
from conftest import subprocess_env


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path):
    (tmp_path / "m.csv").write_text("1,2,3\n4,5,6\n")
    (tmp_path / "f.txt").write_text("1.5 2\n\n3 4\n")
    (tmp_path / "col.txt").write_text("1\n2\n3\n")
    (tmp_path / "ragged.txt").write_text("1 2\n3\n")
    (tmp_path / "word.csv").write_text("1,2\n3,x4\n")
    (tmp_path / "big.txt").write_text("99999999999999999999\n")
    np.save(tmp_path / "v.npy", np.arange(4, dtype=np.int64))
    np.save(tmp_path / "b.npy", np.array([True, False]))
    np.save(tmp_path / "u8.npy", np.arange(3, dtype=np.uint8))
    return tmp_path


def test_csv_matrix_of_ints(capsys, data):
    assert run(capsys, "eval", "-e", "(+ m 1)", f"m={data}/m.csv") == (0, "[[2 3 4] [5 6 7]]\n", "")
    assert run(capsys, "check", "-e", "m", f"m={data}/m.csv") == (0, "(Arr Int (Shp 2 3))\n", "")


def test_txt_floats_and_one_column(capsys, data):
    assert run(capsys, "check", "-e", "f", f"f={data}/f.txt")[1] == "(Arr Float (Shp 2 2))\n"
    assert run(capsys, "eval", "-e", "c", f"c={data}/col.txt")[1] == "[1 2 3]\n"


def test_npy_inputs(capsys, data):
    code, out, _ = run(capsys, "eval", "-e", "(sum v)", f"v={data}/v.npy", f"b={data}/b.npy")
    assert (code, out) == (0, "6\n")
    assert run(capsys, "check", "-e", "b", f"b={data}/b.npy")[1] == "(Arr Bool (Shp 2))\n"


def test_inputs_with_a_program_file(capsys, data):
    (data / "p.rem").write_text("(define t (sum m))\nt\n")
    assert run(capsys, "eval", str(data / "p.rem"), f"m={data}/m.csv") == (0, "[6 15]\n", "")


def test_ragged_file_is_located_in_the_data_file(capsys, data):
    code, out, err = run(capsys, "eval", "-e", "r", f"r={data}/ragged.txt")
    assert code == 1 and out == ""
    assert err.startswith(f"{data}/ragged.txt:2:1: error: this row has 1 number, but the first row (line 1) has 2")


def test_non_numeric_file_is_located_at_the_token(capsys, data):
    code, _, err = run(capsys, "eval", "-e", "r", f"r={data}/word.csv")
    assert code == 1 and err.startswith(f"{data}/word.csv:2:3: error: `x4` is not a number")
    code, _, err = run(capsys, "eval", "-e", "r", f"r={data}/big.txt")
    assert code == 1 and "does not fit in an Int" in err


# A CSV field with nothing in it was dropped: `1,,3` was [1 3], and `1,,3` over `4,5,6` blamed the
# second row's length (issue 29.3).  Located at the empty field: (file text, line, column).
EMPTY_FIELDS = {
    "between two commas": ("1,,3\n", 1, 3),
    "in the first row of two": ("1,,3\n4,5,6\n", 1, 3),
    "in every row": ("1,,3\n4,,6\n", 1, 3),
    "in a later row": ("1,2,3\n4,5,\n", 2, 5),
    "first": (",1,2\n", 1, 1),
    "only spaces": ("1, ,3\n", 1, 3),
    "a line of commas": ("1,2\n,\n", 2, 1),
}


@pytest.mark.parametrize("case", sorted(EMPTY_FIELDS))
def test_an_empty_csv_field_is_an_error_at_the_field(capsys, tmp_path, case):
    text, line, col = EMPTY_FIELDS[case]
    (tmp_path / "e.csv").write_text(text)
    code, out, err = run(capsys, "eval", "-e", "x", f"x={tmp_path}/e.csv")
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}/e.csv:{line}:{col}: error: this field is empty"), err
    assert "Traceback" not in err


def test_an_empty_field_is_a_located_error_through_the_reader_itself(tmp_path):
    from remora.errors import RemoraError
    from remora.interfaces.datafiles import load

    (tmp_path / "e.csv").write_text("1,2,3\n4,,6\n")
    with pytest.raises(RemoraError) as info:
        load(str(tmp_path / "e.csv"))
    span = info.value.span
    assert (span.source.name, span.line, span.col) == (f"{tmp_path}/e.csv", 2, 3)


# Only ASCII numerals are numbers (Python's float() takes underscores, other scripts' digits and
# full-width digits); a number past the largest Float is an error, as the literal is in a program.
NOT_NUMBERS = {"1_2_3": "`1_2_3` is not a number", "\u0661\u0662\u0663": "is not a number",
               "\uff11\uff12": "is not a number", "1e400": "`1e400` is too large for a 64-bit Float",
               "-1e400": "`-1e400` is too large for a 64-bit Float", "0x10": "`0x10` is not a number",
               "1.5.2": "is not a number", "infinityx": "is not a number"}


@pytest.mark.parametrize("token", sorted(NOT_NUMBERS))
def test_only_ascii_numerals_that_fit_are_numbers(capsys, tmp_path, token):
    (tmp_path / "n.txt").write_text(f"1 {token}\n", encoding="utf-8")
    code, out, err = run(capsys, "eval", "-e", "x", f"x={tmp_path}/n.txt")
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}/n.txt:1:3: error: ") and NOT_NUMBERS[token] in err, err


def test_a_too_large_float_is_the_same_error_in_a_program(capsys):
    code, _, err = run(capsys, "eval", "-e", "1e400")
    assert code == 1 and "too large for a 64-bit Float" in err


def test_the_numbers_a_data_file_may_hold(capsys, tmp_path):
    (tmp_path / "ok.csv").write_text("+1.5e3, .5 ,1.\ninf,-Inf,NaN\n1e-400,-0.0,2E2\n")
    assert run(capsys, "eval", "-e", "x", f"x={tmp_path}/ok.csv") == (
        0, "[[1500.0 0.5 1.0] [inf -inf nan] [0.0 -0.0 200.0]]\n", "")
    (tmp_path / "ints.txt").write_text("+1 -2\n3 4\n")
    assert run(capsys, "eval", "-e", "x", f"x={tmp_path}/ints.txt") == (0, "[[1 -2] [3 4]]\n", "")


def test_an_npy_of_python_objects_names_its_dtype(capsys, tmp_path):
    np.save(tmp_path / "o.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    code, out, err = run(capsys, "eval", "-e", "x", f"x={tmp_path}/o.npy")
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}/o.npy:1:1: error: the array in this file has dtype object;"), err


def test_npy_of_another_dtype_names_it(capsys, data):
    code, _, err = run(capsys, "eval", "-e", "r", f"r={data}/u8.npy")
    assert code == 1 and "dtype uint8" in err and err.startswith(f"{data}/u8.npy:1:1: error:")
    assert ".astype(numpy.int32)" in err


def test_missing_file_is_an_io_error(capsys, data):
    code, _, err = run(capsys, "eval", "-e", "r", f"r={data}/nothing.csv")
    assert code == 2 and err.startswith(f"remora: cannot read {data}/nothing.csv")


def test_not_an_input_is_a_usage_error(capsys, data):
    with pytest.raises(SystemExit) as info:
        main(["eval", "-e", "1", "x=a.csv", "nonsense"])
    assert info.value.code == 2
    assert "`nonsense` is not an input: write nonsense=PATH to bind the data name" in capsys.readouterr().err


def test_output_npy(capsys, data):
    out = data / "out.npy"
    code, printed, _ = run(capsys, "eval", "-e", "(* 2 v) (* 1.5 (int->float v))", f"v={data}/v.npy", "-o", str(out))
    assert code == 0 and printed == "[0 2 4 6]\n[0.0 1.5 3.0 4.5]\n"
    saved = np.load(out)
    assert saved.dtype == np.float64 and saved.tolist() == [0.0, 1.5, 3.0, 4.5]


def test_output_of_boxes_is_refused(capsys, data):
    code, _, err = run(capsys, "eval", "-e", "(iota/v 3)", "-o", str(data / "x.npy"))
    assert code == 2 and "boxes or functions" in err


def test_program_from_standard_input():
    r = subprocess.run([sys.executable, "-m", "remora", "eval", "-"], input="(define x 3)\n(+ x 1)\n",
                       capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert (r.returncode, r.stdout) == (0, "4\n")
