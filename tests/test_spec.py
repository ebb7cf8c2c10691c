"""spec/ stays true: the primitive table is the code's, and the spec names what the code does."""

from pathlib import Path

from remora.primitives import PRIMITIVES
from remora.primitives.__main__ import table

SPEC = Path(__file__).resolve().parent.parent / "spec"


def test_primitive_table_is_current():
    assert (SPEC / "primitives.md").read_text(encoding="utf-8") == table(), (
        "spec/primitives.md is stale: regenerate it with `python -m remora.primitives > spec/primitives.md`"
    )


def test_every_primitive_is_documented():
    for name, prim in PRIMITIVES.items():
        assert prim.doc.strip(), f"primitive {name} has no documentation"


def test_spec_files_exist_and_are_linked():
    index = (SPEC / "README.md").read_text(encoding="utf-8")
    for path in SPEC.glob("*.md"):
        if path.name != "README.md":
            assert f"({path.name})" in index, f"spec/README.md does not link {path.name}"
