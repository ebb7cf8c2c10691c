"""The README's examples are executed, so the README cannot drift from what remora does.

* ```python blocks are doctests;
* ```console blocks list ``$ remora …`` commands, each followed by its exact output
  (standard output and standard error together);
* ```repl blocks are REPL transcripts: lines after ``remora>``/``...`` prompts are fed to
  ``remora repl`` through a pipe, and the other lines are the expected output.
"""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README.read_text(encoding="utf-8")) if lang == kind]


def _remora(args: list[str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "remora", *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    return done.stdout + done.stderr


def test_python_examples_run_as_doctests():
    failures, tests = doctest.testfile(str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tests > 5
    assert failures == 0


def _console_cases() -> list[tuple[str, str]]:
    cases = []
    for body in _blocks("console"):
        command, output = None, []
        for line in body.splitlines():
            if line.startswith("$ "):
                if command:
                    cases.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            cases.append((command, "\n".join(output)))
    return cases


@pytest.mark.parametrize("command, expected", _console_cases())
def test_console_examples(command, expected):
    args = shlex.split(command)
    assert args[0] == "remora"
    assert _remora(args[1:]).rstrip("\n") == expected


def test_setup_commands_name_a_real_example():
    setup = _blocks("sh")
    assert len(setup) == 2, "the README has exactly two setup commands"
    example = re.search(r"remora eval (\S+)", setup[0]).group(1)
    assert (ROOT / example).is_file()
    assert "pytest" in setup[1]


@pytest.mark.parametrize("transcript", _blocks("repl"))
def test_repl_transcripts(transcript):
    inputs, expected = [], []
    for line in transcript.splitlines():
        if line.startswith("remora> "):
            inputs.append(line[len("remora> "):])
        elif line.startswith("...     "):
            inputs.append(line[len("...     "):])
        else:
            expected.append(line)
    assert _remora(["repl"], "\n".join(inputs) + "\n").splitlines() == expected
