"""The Pygments lexer (contract §9): registered as `remora` (alias `rem`, files `*.rem`) through
the `pygments.lexers` entry point, so `pygmentize -l remora FILE` works; it classifies every
token as the reader reads it, and finds no error in any example, the prelude, the notebook's
Remora cells or the Remora code blocks of the README and spec/."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import subprocess_env
from pygments.token import Comment, Error, Keyword, Name, Number, Punctuation

from remora.interfaces.lexer import RemoraLexer

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```remora\n(.*?)^```", re.S | re.M)


def _sources() -> list[tuple[str, str]]:
    """(where, text) of every piece of Remora the project ships."""
    out = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples").glob("*.rem"))]
    out += [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "prelude").glob("*.rem"))]
    for doc in [ROOT / "README.md", *sorted((ROOT / "spec").glob("*.md"))]:
        for i, block in enumerate(BLOCK.findall(doc.read_text(encoding="utf-8"))):
            out.append((f"{doc.name} block {i + 1}", block))
    for nb in sorted((ROOT / "examples").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and source.startswith("%%remora"):
                out.append((f"{nb.name} cell {i + 1}", source.split("\n", 1)[1]))
    return out


def _tokens(text: str) -> list[tuple]:
    return [(t, v) for t, v in RemoraLexer().get_tokens(text) if v.strip()]


@pytest.mark.parametrize("where, text", _sources(), ids=[w for w, _ in _sources()])
def test_no_error_tokens_in_what_the_project_ships(where, text):
    bad = [v for t, v in _tokens(text) if t in Error]
    assert not bad, f"{where}: error tokens {bad}"


def test_the_docs_mark_their_remora_code_blocks():
    assert BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert any(BLOCK.findall(d.read_text(encoding="utf-8")) for d in (ROOT / "spec").glob("*.md"))


def test_token_classes():
    text = "; a comment\n(define (f (x [Float 3])) (+ (sum x) 1.5))\n(Iλ ((n Dim)) (λ ((b (Arr Bool (Shp n)))) #t))\n"
    tokens = dict((v, t) for t, v in _tokens(text))
    assert tokens["; a comment"] in Comment
    assert tokens["define"] is Keyword and tokens["Iλ"] is Keyword and tokens["λ"] is Keyword
    assert tokens["f"] is Name.Function  # the name being defined
    assert tokens["x"] is Name
    assert tokens["Float"] is Keyword.Type and tokens["Arr"] is Keyword.Type and tokens["Shp"] is Keyword.Type
    assert tokens["Dim"] is Name.Class  # sorts and kinds
    assert tokens["+"] is Name.Builtin  # a primitive
    assert tokens["sum"] is Name.Builtin.Pseudo  # a prelude function
    assert tokens["1.5"] is Number.Float and tokens["3"] is Number.Integer
    assert tokens["#t"] is Keyword.Constant
    assert tokens["("] is Punctuation and tokens["["] is Punctuation


def test_what_the_reader_rejects_is_an_error_token():
    for bad in ('"text"', "'x", "1.2.3", "#x", "a|b"):
        assert any(t in Error for t, _ in _tokens(f"(f {bad})")), bad


def test_every_primitive_and_prelude_name_is_recognised():
    from remora.interfaces.session import load_prelude
    from remora.primitives import PRIMITIVES

    for name, prim in PRIMITIVES.items():
        if prim.builtin:
            assert _tokens(name)[0][0] is Name.Builtin, name
    for name in load_prelude()[0]:
        assert _tokens(name)[0][0] is Name.Builtin.Pseudo, name


def test_tokens_cover_the_text_exactly():
    text = (ROOT / "examples" / "nbody.rem").read_text(encoding="utf-8")
    assert "".join(v for _, _, v in RemoraLexer().get_tokens_unprocessed(text)) == text


def _entry_point_registered() -> bool:
    return any(ep.name == "remora" and ep.value.startswith("remora.") for ep in metadata.entry_points(group="pygments.lexers"))


def test_pygmentize_finds_the_lexer_by_name():
    assert _entry_point_registered(), (
        "the pygments.lexers entry point `remora` is not registered: the installed remora predates it — "
        "reinstall the checkout (python -m pip install -e '.[test]')"
    )
    exe = Path(sys.executable).parent / "pygmentize"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "pygments"]
    path = ROOT / "examples" / "nbody.rem"
    done = subprocess.run([*command, "-l", "remora", "-f", "html", str(path)], capture_output=True, text=True,
                          env=subprocess_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert '<span class="k">define</span>' in done.stdout and '<span class="err">' not in done.stdout
    done = subprocess.run([*command, "-N", str(path)], capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert done.stdout.strip() == "remora"  # found by its file name pattern
    from pygments.lexers import get_lexer_by_name

    assert isinstance(get_lexer_by_name("rem"), RemoraLexer)
