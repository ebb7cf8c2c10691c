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
