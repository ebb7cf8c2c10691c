"""`remora check PATH...` (issue 27): every error of every program, form by form, a closing
`Found N errors in M files` line, `--output-format=json` valid against the schema in
spec/interfaces.md, and usage mistakes explained.  In-process through the CLI's main."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from remora.interfaces.cli import main

ROOT = Path(__file__).resolve().parents[1]
ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")


def run(capsys, *argv, cwd: Path = ROOT):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return code, out, err


def schema() -> dict:
    """The JSON Schema of spec/interfaces.md (the ```json block of the check command)."""
    text = (ROOT / "spec" / "interfaces.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", text, re.S)
    assert block, "spec/interfaces.md has no ```json block"
    return json.loads(block.group(1))


def validate(data) -> None:
    jsonschema = pytest.importorskip("jsonschema")  # (installed with nbformat, in the test extra)
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.Draft202012Validator(schema()).validate(data)


def test_every_error_of_examples_prelude_and_bad_input_with_one_summary(capsys):
    """The acceptance check: every static error of tests/bad_input (each program's recorded
    first line) is listed, and one closing line counts them."""
    code, out, err = run(capsys, "check", "examples/", "prelude/", "tests/bad_input/")
    assert code == 1 and out == ""
    lines = err.rstrip("\n").split("\n")
    reported = [line for line in lines if ERROR_LINE.match(line)]
    summaries = [line for line in lines if line.startswith("Found ")]
    assert summaries == [lines[-1]]
    files = sum(1 for p in ("examples", "prelude", "tests/bad_input") for _ in (ROOT / p).rglob("*.rem"))
    with_errors = {ERROR_LINE.match(line)["file"] for line in reported}
    assert lines[-1] == f"Found {len(reported)} errors in {len(with_errors)} files (checked {files} files)"
    for expected in (ROOT / "tests" / "bad_input").glob("*.err"):
        if not expected.stem.startswith("run-"):  # (run-time errors: check has nothing to say)
            assert expected.read_text(encoding="utf-8").rstrip("\n") in reported, expected.stem
    assert "Traceback" not in err and "internal error" not in err

    code, out, err = run(capsys, "check", "examples/", "prelude/", "tests/bad_input/", "--output-format=json")
    assert code == 1 and err == ""
    diagnostics = json.loads(out)
    validate(diagnostics)
    assert len(diagnostics) == len(reported)
    first = ERROR_LINE.match(reported[0])
    assert (diagnostics[0]["filename"], diagnostics[0]["location"]["row"], diagnostics[0]["location"]["column"],
            diagnostics[0]["message"]) == (first["file"], int(first["line"]), int(first["col"]), first["msg"])


PROGRAM = """\
(define x [1 2 3])
(+ x 2.5)
(define y (+ x 1))
(f "str")
(tann 1.0)
(define z (undefined 1))
(+ z 1)
(* y 2)
"""


def test_one_file_every_error_in_place_among_the_types(capsys, tmp_path):
    (tmp_path / "p.rem").write_text(PROGRAM, encoding="utf-8")
    code, out, err = run(capsys, "check", "p.rem", cwd=tmp_path)
    assert code == 1
    assert out.splitlines() == ["x : (Arr Int (Shp 3))", "y : (Arr Int (Shp 3))", "(Arr Int (Shp 3))"]
    firsts = [line for line in err.splitlines() if ERROR_LINE.match(line)]
    assert [tuple(ERROR_LINE.match(f).group("line", "col")) for f in firsts] == [
        ("2", "6"), ("4", "4"), ("5", "2"), ("6", "12")]  # (+ z 1) is skipped: z failed
    assert "did you mean `tan`?" in firsts[2]
    assert err.rstrip("\n").split("\n")[-1] == "Found 4 errors in 1 file"
    assert "    (f \"str\")" in err  # the line is quoted as written


def test_json_lists_the_fixes_the_messages_suggest(capsys, tmp_path):
    (tmp_path / "p.rem").write_text("(+ 1 2.5)\n(tann 1.0)\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--output-format=json", "p.rem", cwd=tmp_path)
    assert code == 1 and err == ""
    data = json.loads(out)
    validate(data)
    assert [d["code"] for d in data] == ["type-error", "type-error"]
    promote, spell = data
    assert promote["location"] == {"row": 1, "column": 6} and promote["end_location"] == {"row": 1, "column": 9}
    assert [f["message"] for f in promote["fixes"]] == ["apply `int->float`", "write `1.0`"]
    assert promote["fixes"][0]["edits"] == [
        {"content": "(int->float ", "location": {"row": 1, "column": 4}, "end_location": {"row": 1, "column": 4}},
        {"content": ")", "location": {"row": 1, "column": 5}, "end_location": {"row": 1, "column": 5}},
    ]
    assert spell["fixes"] == [{"message": "write `tan`", "edits": [
        {"content": "tan", "location": {"row": 2, "column": 2}, "end_location": {"row": 2, "column": 6}}]}]


def test_clean_programs(capsys, tmp_path):
    (tmp_path / "a.rem").write_text("(+ 1 2)\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.rem").write_text("(define v [1.5])\n", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.rem").write_text("(+ 1 2.5)\n", encoding="utf-8")
    assert run(capsys, "check", "a.rem", cwd=tmp_path) == (0, "(Arr Int (Shp))\n", "")
    assert run(capsys, "check", "a.rem", "sub/b.rem", cwd=tmp_path) == (0, "", "No errors in 2 files\n")
    assert run(capsys, "check", ".", cwd=tmp_path) == (0, "", "No errors in 2 files\n")
    assert run(capsys, "check", "--output-format=json", ".", cwd=tmp_path) == (0, "[]\n", "")
    code, out, err = run(capsys, "check", "-e", "(+ 1 #t)")
    assert code == 1 and err.rstrip("\n").split("\n")[-1] == "Found 1 error"


def test_an_unreadable_file_among_several(capsys, tmp_path):
    (tmp_path / "bad.rem").write_text("(+ 1 2.5)\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "missing.rem", "bad.rem", cwd=tmp_path)
    assert code == 2
    assert err.startswith("remora: cannot read missing.rem: ")
    assert "bad.rem:1:6: error:" in err and err.endswith("Found 1 error in 1 file (checked 1 file)\n")


def test_inputs_are_bound_in_every_program(capsys, tmp_path):
    (tmp_path / "m.csv").write_text("1,2\n3,4\n", encoding="utf-8")
    (tmp_path / "a.rem").write_text("(+ m 1)\n", encoding="utf-8")
    (tmp_path / "b.rem").write_text("(+ m 1.5)\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "a.rem", "b.rem", "m=m.csv", cwd=tmp_path)
    assert code == 1 and err.startswith("b.rem:1:6: error:")


@pytest.mark.parametrize("argv, message", [
    (["eval", "a.rem", "b.rem"], "eval runs one program: `b.rem` comes after the program `a.rem` (to check several "
                                 "programs, remora check a.rem b.rem; to bind data, NAME=PATH)"),
    (["eval", "a.rem", "x"], "`x` is not an input: write x=PATH to bind the data name x to the array in PATH"),
    (["check", "a.rem", "x"], "`x` is not an input: write x=PATH to bind the data name x to the array in PATH"),
    (["eval", "-e", "x", "x"], "`x` is not an input: write x=PATH"),
    (["eval", "a.rem", "x="], "`x=` gives no file: write x=PATH to bind x to the array in PATH"),
    (["check", "-e", "1", "a.rem"], "give a program FILE or -e EXPR, not both"),
    (["check", "--explicit", "--output-format=json", "a.rem"], "--explicit prints a program; it has no JSON form"),
])
def test_usage_mistakes_say_what_was_meant(capsys, tmp_path, argv, message):
    (tmp_path / "a.rem").write_text("(+ 1 2)\n", encoding="utf-8")
    (tmp_path / "b.rem").write_text("(+ 1 2)\n", encoding="utf-8")
    code, out, err = run(capsys, *argv, cwd=tmp_path)
    assert code == 2 and out == ""
    assert message in err


def test_several_programs_are_checked_where_eval_refused_them(capsys, tmp_path):
    (tmp_path / "a.rem").write_text("(+ 1 2)\n", encoding="utf-8")
    (tmp_path / "b.rem").write_text("(+ 1 #f)\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "a.rem", "b.rem", cwd=tmp_path)
    assert code == 1 and out == "" and err.startswith("b.rem:1:6: error:")
    assert run(capsys, "check", "empty/", cwd=tmp_path)[0] == 2  # (no such directory: an I/O error)
    (tmp_path / "empty").mkdir()
    assert run(capsys, "check", "empty/", cwd=tmp_path) == (2, "", "remora: no .rem files in empty/\n")
    code, _, err = run(capsys, "check", "--explicit", "a.rem", "b.rem", cwd=tmp_path)
    assert code == 2 and "--explicit prints one program" in err


@pytest.mark.parametrize("argv", [["--trace", "--backend=jax"], ["--engine=reference", "--backend=dask"]])
def test_trace_does_not_silently_ignore_the_backend(capsys, argv):
    """Issue 27: `--trace --backend=jax` computed on NumPy without a word."""
    code, out, err = run(capsys, "eval", *argv, "-e", "(+ 1 2)")
    assert code == 2 and out == ""
    assert "computes on NumPy only: it cannot run on --backend=" in err


def test_backend_help_names_the_backends_and_their_extras(capsys):
    code, out, err = run(capsys, "eval", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "numpy (the default), jax (needs pip install 'remora[jax]') or dask (needs pip install 'remora[dask]')" in text
    assert "contract" not in text
