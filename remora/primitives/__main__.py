"""``python -m remora.primitives`` prints the primitive table of ``spec/primitives.md``.

A tool above the table, not part of it: it asks the statics for each primitive's type.
"""

from ..atoms import in_order
from ..statics.primitive_types import primitive_type
from . import PRIMITIVES


def table() -> str:
    """Every primitive with its type and meaning, as Markdown (the spec's table is this text)."""
    lines = [
        "# Primitives",
        "",
        "Generated from the primitive table in `remora/primitives/` by `python -m remora.primitives`",
        "(a test checks that this file is current). Types are printed as the checker prints them;",
        "in an overloaded scalar primitive, `x` is the atom type an occurrence takes from its",
        "context (see *Overloading* in `statics.md`).",
        "",
        "| name | type | meaning |",
        "|---|---|---|",
    ]
    for name, prim in PRIMITIVES.items():
        if not prim.builtin:
            continue
        note = prim.doc
        if prim.overload == "any":
            note += " (x: any atom type)"
        elif prim.result_overload and not prim.overload:
            note += " (y: " + " or ".join(in_order(prim.result_overload)) + ", by default Int)"
        elif prim.overload:
            note += " (x: " + " or ".join(in_order(prim.overload))
            if prim.result_overload:
                note += "; y: " + " or ".join(in_order(prim.result_overload)) + ", by default as wide as x"
            note += ")"
        lines.append(f"| `{name}` | `{primitive_type(prim)}` | {note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
