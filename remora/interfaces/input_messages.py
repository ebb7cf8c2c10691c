"""Why a Python value is refused as a Remora array, and what to pass instead (the messages of
``remora.interfaces.api.as_remora_array``, which has NumPy look at the value)."""

from __future__ import annotations

from typing import Any


def conversion_hint(dtype: Any) -> str:
    """How to make an array of ``dtype`` a Remora array, when there is an obvious way: the
    narrowest Remora dtype that holds every value of it (``uint8`` and ``float16`` fit in 32 bits)."""
    if dtype.kind == "f":
        wanted = "float32" if dtype.itemsize <= 4 else "float64"
        loss = " (it has more precision than a Float: the conversion rounds)" if dtype.itemsize > 8 else ""
        return f"convert it explicitly, e.g. with .astype(numpy.{wanted}){loss}"
    if dtype.kind in "iu":
        wanted = "int32" if dtype.itemsize < 4 or (dtype.kind == "i" and dtype.itemsize == 4) else "int64"
        loss = " (values past 2**63 - 1 wrap around)" if dtype.kind == "u" and dtype.itemsize == 8 else ""
        return f"convert it explicitly, e.g. with .astype(numpy.{wanted}){loss}"
    if dtype.kind == "b":
        return "convert it explicitly, e.g. with .astype(numpy.bool_)"
    if dtype.kind == "c":
        return "Remora has no complex numbers: pass the real and imaginary parts (.real, .imag) as two Float arrays"
    return "convert it to one of these explicitly"


def subclass_message(what: str, value: Any, masked: bool) -> str:
    """Why an ndarray subclass (``masked``: a masked array) is refused: its data alone would not
    mean what the array means."""
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if masked:
        return (f"{what} is a masked array ({kind}): Remora arrays have no mask, and using the data without it "
                "would change what it means; pass .filled(value) with the value masked entries should have")
    return (f"{what} is a {kind}, a subclass of numpy.ndarray whose meaning a plain array may not keep; "
            "pass numpy.asarray(...) of it if its plain data is what you mean")
