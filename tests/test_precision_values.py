"""`Float32` and `Int32` values (contract §10, decisions.md D56): every scalar primitive on them
gives NumPy's own `float32`/`int32` results bit for bit on every engine, `Int32` wraps around,
nothing is widened to 64 bits and back, and every backend agrees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import remora
from conftest import eval_error, eval_value
from remora.backends.numpy_backend import NumpyBackend
from remora.dynamics.engine import Frames
from remora.interfaces.session import Session

ENGINES = ("plans", "frames", "reference")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def run(source: str, engine: str = "plans", backend: str = "numpy", **inputs) -> np.ndarray:
    """The value of the last form of ``source`` with ``inputs`` bound, as a NumPy array."""
    session = Session(engine=engine, backend=backend)
    for name, value in inputs.items():
        session.bind(name, session.engine.xp.from_numpy(np.asarray(value)))
    value = None
    for _, value in session.run_text(source, "<test>"):
        pass
    return np.asarray(session.engine.xp.to_numpy(value))


def identical(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit for bit, but any NaN is any NaN (a NaN's payload is not a value)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    nan = np.isnan(got) & np.isnan(want)
    bits = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    return bool(np.all(nan | bits))


def float32s(n: int = 6):
    return hnp.arrays(np.float32, n, elements=st.floats(width=32, allow_nan=True, allow_infinity=True))


def int32s(n: int = 6, lo: int = -(2**31), hi: int = 2**31 - 1):
    return hnp.arrays(np.int32, n, elements=st.integers(lo, hi))


def on_every_engine(source: str, want: np.ndarray, **inputs) -> None:
    for engine in ENGINES:
        got = run(source, engine, **inputs)
        assert identical(got, want), f"{engine}: {source} gave {got!r}, NumPy {want!r}"


# --- every scalar primitive, bit for bit against NumPy's own results ------------------------------

FLOAT_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "min": np.minimum,
                "max": np.maximum, "expt": np.power, "=": np.equal, "!=": np.not_equal, "<": np.less,
                "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
FLOAT_UNARY = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin,
               "cos": np.cos, "tan": np.tan, "atan": np.arctan, "float32->float": lambda x: x.astype(np.float64)}


@pytest.mark.parametrize("name", FLOAT_BINARY)
@SETTINGS
@given(x=float32s(), y=float32s())
def test_float32_binary_primitives_are_numpys_float32_operations(name, x, y):
    with np.errstate(all="ignore"):
        want = FLOAT_BINARY[name](x, y)
    on_every_engine(f"({name} x y)", want, x=x, y=y)


@pytest.mark.parametrize("name", FLOAT_UNARY)
@SETTINGS
@given(x=float32s())
def test_float32_unary_primitives_are_numpys_float32_operations(name, x):
    with np.errstate(all="ignore"):
        want = FLOAT_UNARY[name](x)
    on_every_engine(f"({name} x)", want, x=x)


INT_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "min": np.minimum, "max": np.maximum,
              "=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
              ">=": np.greater_equal}
INT_UNARY = {"neg": np.negative, "abs": np.abs, "int32->int": lambda x: x.astype(np.int64),
             "int32->float": lambda x: x.astype(np.float64), "int32->float32": lambda x: x.astype(np.float32)}


@pytest.mark.parametrize("name", INT_BINARY)
@SETTINGS
@given(x=int32s(), y=int32s())
def test_int32_binary_primitives_wrap_as_numpys_int32(name, x, y):
    with np.errstate(all="ignore"):
        want = INT_BINARY[name](x, y)
    on_every_engine(f"({name} x y)", want, x=x, y=y)


@pytest.mark.parametrize("name", INT_UNARY)
@SETTINGS
@given(x=int32s())
def test_int32_unary_primitives_and_conversions(name, x):
    with np.errstate(all="ignore"):
        want = INT_UNARY[name](x)
    on_every_engine(f"({name} x)", want, x=x)


@SETTINGS
@given(x=int32s(), y=int32s().filter(lambda y: bool(np.all(y != 0))))
def test_int32_division_and_mod_are_numpys_floor_division_and_modulus(x, y):
    with np.errstate(all="ignore"):
        on_every_engine("(/ x y)", np.floor_divide(x, y), x=x, y=y)
        on_every_engine("(mod x y)", np.mod(x, y), x=x, y=y)


@SETTINGS
@given(x=int32s(), y=int32s(lo=0, hi=40))
def test_int32_expt_wraps_as_numpys(x, y):
    on_every_engine("(expt x y)", np.power(x, y), x=x, y=y)


@SETTINGS
@given(x=hnp.arrays(np.float64, 6, elements=st.floats(allow_nan=True, allow_infinity=True)),
       n=hnp.arrays(np.int64, 6, elements=st.integers(-(2**63), 2**63 - 1)))
def test_conversions_from_64_bits_are_numpys_astype(x, n):
    with np.errstate(all="ignore"):
        on_every_engine("(float->float32 x)", x.astype(np.float32), x=x)
        on_every_engine("(int->int32 n)", n.astype(np.int32), n=n)  # (wraps around)
        on_every_engine("(int->float32 n)", n.astype(np.float32), n=n)


@pytest.mark.parametrize("name, fn", [("floor", np.floor), ("ceiling", np.ceil), ("round", np.rint),
                                      ("truncate", np.trunc)])
@SETTINGS
@given(x=hnp.arrays(np.float32, 6, elements=st.floats(-2.0**31, 2.0**31 - 256, width=32)))
def test_rounding_a_float32_makes_an_int32(name, fn, x):
    on_every_engine(f"({name} x)", fn(x).astype(np.int32), x=x)
    on_every_engine(f"(int32->int ({name} x))", fn(x).astype(np.int64), x=x)


def test_rounding_out_of_the_result_types_range_is_a_run_time_error():
    assert eval_error("(floor (float->float32 3e9))").message.startswith("floor of 3000000000.0 has no Int32 value")
    assert eval_error("(round (float->float32 (/ 0.0 0.0)))").message.startswith("round of nan has no Int32 value")
    assert eval_value("(int->int32 (floor 3e9))") == "-1294967296"  # (a Float's floor is an Int, then wrapped)
    # the context may ask for an Int: then the range is Int's
    assert eval_value("(+ 1 (int32->int (floor (float->float32 -2147483648.0))))") == "-2147483647"
    assert eval_value("(index [10 20 30] (floor (float->float32 2.5)))") == "30"


# --- Int32 wraps around; reductions keep 32 bits ----------------------------------------------------


def test_int32_arithmetic_wraps_around():
    assert eval_value("(+ (int->int32 2147483647) 1)") == "-2147483648"
    assert eval_value("(* (int->int32 65536) 65536)") == "0"
    assert eval_value("(neg (int->int32 -2147483648))") == "-2147483648"
    assert eval_value("(- (int->int32 -2147483648) 1)") == "2147483647"
    assert eval_value("(int->int32 [2147483648 4294967297 -2147483649])") == "[-2147483648 1 2147483647]"


@SETTINGS
@given(x=hnp.arrays(np.int32, (3, 5), elements=st.integers(-(2**31), 2**31 - 1)))
def test_int32_sums_and_products_wrap_as_int32_not_widened(x):
    for source, want in [("(sum x)", np.add.reduce(x, axis=-1, dtype=np.int32)),
                         ("(reduce + x)", np.add.reduce(x, axis=0, dtype=np.int32)),
                         ("(product x)", np.multiply.reduce(x, axis=-1, dtype=np.int32)),
                         ("(dot x x)", np.einsum("ij,ij->i", x, x)),
                         ("(scan + (int->int32 0) x)", np.add.accumulate(x, axis=1, dtype=np.int32))]:
        on_every_engine(source, want, x=x)


@SETTINGS
@given(x=hnp.arrays(np.float32, (3, 7), elements=st.floats(-1e6, 1e6, width=32)))
def test_float32_reductions_are_numpys_float32_reductions(x):
    on_every_engine("(sum x)", np.add.reduce(x, axis=-1), x=x)
    on_every_engine("(maximum x)", np.maximum.reduce(x, axis=-1), x=x)
    on_every_engine("(reduce + x)", np.add.reduce(np.ascontiguousarray(x.T), axis=-1), x=x)
    on_every_engine("(dot x x)", np.einsum("ij,ij->i", x, x), x=x)
    for engine in ENGINES:
        got = run("(mean x)", engine, x=x)
        assert got.dtype == np.float32 and identical(got, np.add.reduce(x, axis=-1) / np.float32(7))
        got = run("(matmul x (transpose x))", engine, x=x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, x @ x.T, rtol=2e-6, atol=1e-3)


# --- single precision throughout: nothing widened and rounded back ---------------------------------


class Recording(NumpyBackend):
    """A NumPy backend that remembers the dtype of every array its operations make."""

    def __init__(self) -> None:
        super().__init__()
        self.dtypes: set = set()

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if name.startswith("_") or not callable(attr) or name in ("dtypes", "rep", "dtype", "owns", "itemsize"):
            return attr
        dtypes = super().__getattribute__("dtypes")

        def recorded(*args, **kwargs):
            out = attr(*args, **kwargs)
            if isinstance(out, np.ndarray) and out.dtype != object:
                dtypes.add(out.dtype)
            return out

        return recorded


@pytest.mark.parametrize("source", [
    "(define (softmax (v [Float32 4])) (let ((e (exp (- v (maximum v))))) (/ e (sum e)))) (softmax x)",
    "(matmul x (transpose x))",
    "(sqrt (+ (* x x) 1.0))",
    "(reduce + (scan + 0.5 x))",
])
def test_a_float32_program_makes_no_float64_array(source):
    backend = Recording()
    session = Session(engine="frames")
    session.engine = Frames(backend=backend)
    session.engine.globals.update(Session(engine="frames").engine.globals)
    session.bind("x", np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4))
    values = [v for _, v in session.run_text(source, "<test>")]
    assert values[-1].dtype == np.float32
    assert np.dtype(np.float64) not in backend.dtypes, backend.dtypes


def test_float32_is_computed_in_single_precision():
    # in float64 then rounded back, 1e8 + 1 - 1e8 would be 1
    assert eval_value("(let ((a (float->float32 1e8))) (- (+ a 1.0) a))") == "0.0"
    assert eval_value("(let ((a 1e8)) (- (+ a 1.0) a))") == "1.0"


# --- printing ------------------------------------------------------------------------------------


@SETTINGS
@given(x=hnp.arrays(np.float32, 5, elements=st.floats(width=32)))
def test_a_float32_prints_as_the_shortest_decimal_that_reads_back(x):
    texts = run("x", x=x)  # (the value itself)
    shown = remora.evaluate("x", x=x)
    assert shown.dtype == np.float32 and identical(shown, x) and identical(texts, x)
    from remora.interfaces.session import Session as S

    session = S()
    session.bind("x", x)
    (form, value), = list(session.run_text("x", "<test>"))
    from remora.interfaces.session import show_result

    printed = show_result(form, value)
    assert printed == "[" + " ".join(repr(np.float32(v))[len("np.float32("):-1] for v in x) + "]"
    if np.all(np.isfinite(x)):  # reads back: as a Float32 literal, the same float32s
        back = run(f"((λ ((v [Float32 5])) v) {printed})")
        assert identical(back, x)


def test_float32_and_int32_print_as_the_contract_says():
    assert eval_value("(float->float32 [0.1 2.5 1e-05 -0.0])") == "[0.1 2.5 1e-05 -0.0]"
    assert eval_value("(float->float32 [16777216.0 (/ 1.0 0.0) (/ 0.0 0.0)])") == "[1.6777216e+07 inf nan]"
    assert eval_value("(int->int32 [1 -2])") == "[1 -2]"
    assert eval_value("(array (0 2) Float32)") == "(array (0 2) Float32)"


# --- every backend agrees -------------------------------------------------------------------------

AGREE = [
    "(define (softmax (v [Float32 4])) (let ((e (exp (- v (maximum v))))) (/ e (sum e)))) (softmax x)",
    "(matmul x (transpose x))",
    "(mean x)",
    "(reduce max (* x 2.0))",
    "(scan + 0.0 x)",
    "(sort (reverse x))",
    "(floor (* x 3.0))",
    "(+ (floor (* x 3.0)) (int->int32 7))",
    "(select (> x 0.0) x (neg x))",
    "(unbox (k v (filter (> (head x) 0.0) (head x))) (sum v))",
    "(while (λ ((v [Float32 4])) (< (sum v) 100.0)) (λ ((v [Float32 4])) (* v 2.0)) (+ (abs x) 1.0))",
]


@pytest.mark.parametrize("source", AGREE)
@pytest.mark.parametrize("backend", ["jax", "dask"])
def test_every_backend_agrees_on_float32(source, backend):
    pytest.importorskip(backend)
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    want = run(source, x=x)
    got = run(source, backend=backend, x=x)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        assert np.array_equal(got, want)


# --- JAX in its default configuration --------------------------------------------------------------

JAX_DEFAULT = r'''
import sys, numpy as np, jax, jax.numpy as jnp
assert not jax.config.jax_enable_x64
calls = []

def spy(name, real):
    def spied(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)
    return spied

jax.enable_x64 = spy("jax.enable_x64", jax.enable_x64)
import jax.experimental
if hasattr(jax.experimental, "enable_x64"):
    jax.experimental.enable_x64 = spy("jax.experimental.enable_x64", jax.experimental.enable_x64)
jax.config.update = spy("jax.config.update", jax.config.update)

import remora
from remora.interfaces.cli import main

x = jnp.linspace(-3, 3, 12).reshape(3, 4)  # (float32: JAX's default)
assert x.dtype == jnp.float32
softmax = ("(define (softmax (v [Float32 4])) (let ((e (exp (- v (maximum v))))) (/ e (sum e))))"
           "(softmax x)")
results = [
    remora.evaluate(softmax, x=x, backend="jax"),
    remora.evaluate(softmax, x=x, backend="jax"),  # (the kept call)
    remora.evaluate("(matmul x (transpose x))", x=x, backend="jax"),
    remora.evaluate("(reduce + (* x 0.5))", x=np.asarray(x), backend="jax"),  # (a NumPy float32 input)
    remora.evaluate("(* n (+ n 1))", n=jnp.arange(5), backend="jax"),  # (int32: JAX's default)
]
f = remora.function("(λ ((v [Float32 4])) (/ v (sum v)))", backend="jax")
results += [f(x), f(x), f(x[0])]
np.save(sys.argv[1] + "/x.npy", np.asarray(x))
with open(sys.argv[1] + "/p.rem", "w") as out:
    out.write(softmax)
assert main(["eval", "--backend=jax", sys.argv[1] + "/p.rem", "x=" + sys.argv[1] + "/x.npy",
             "-o", sys.argv[1] + "/out.npy"]) == 0
assert np.load(sys.argv[1] + "/out.npy").dtype == np.float32
assert calls == [], calls
assert not jax.config.jax_enable_x64
assert [str(r.dtype) for r in results] == ["float32"] * 4 + ["int32"] + ["float32"] * 3, [r.dtype for r in results]
assert all(isinstance(r, jax.Array) for r in results)
np.testing.assert_allclose(np.asarray(results[0]).sum(-1), 1.0, rtol=1e-6)

# A program that uses Float or Int still computes in 64 bits (in Remora's own scope).
wide = remora.evaluate("(* 2.0 (float32->float x))", x=x, backend="jax")
count = remora.evaluate("(length x)", x=x, backend="jax")
assert wide.dtype == jnp.float64 and count.dtype == jnp.int64, (wide.dtype, count.dtype)
assert calls and not jax.config.jax_enable_x64  # (scoped: the user's configuration is untouched)
print("ok")
'''


def test_jax_in_its_default_configuration_runs_an_all_32_bit_program_without_64_bit_mode(tmp_path):
    """In a process of its own: JAX's configuration is the default one (32-bit), and nothing
    switches 64-bit mode on — not globally, not in a scope — for programs whose values are all
    32-bit; results are float32 (contract §10)."""
    pytest.importorskip("jax")
    import subprocess
    import sys

    from conftest import subprocess_env

    env = subprocess_env()
    env.pop("JAX_ENABLE_X64", None)
    proc = subprocess.run([sys.executable, "-c", JAX_DEFAULT, str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


# --- random programs with the new types, on every backend ---------------------------------------

NUMBER = __import__("re").compile(r"-?(?:\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|inf|nan)")


def _printed(source: str, backend: str) -> list[str]:
    from remora.interfaces.session import show_result

    session = Session(backend=backend)
    return [show_result(form, value) for form, value in session.run_text(source, "<test>")
            if type(form).__name__ == "TyExprForm"]


def _close(got: str, want: str) -> bool:
    """The same printed values but for floating-point atoms within a float32's few last bits
    (XLA may fuse, reassociate, or multiply by a reciprocal)."""
    a, b = NUMBER.findall(got), NUMBER.findall(want)
    if NUMBER.sub("F", got) != NUMBER.sub("F", want) or len(a) != len(b):
        return False
    return bool(np.allclose(np.array(a, float), np.array(b, float), rtol=1e-5, atol=1e-6, equal_nan=True))


@pytest.mark.parametrize("backend", ["jax", "dask"])
def test_generated_programs_with_the_new_types_agree_on_every_backend(backend):
    pytest.importorskip(backend)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from gen_programs import random_program

    tried = 0
    for seed in range(200):
        source = random_program(seed).source
        if not ("Float32" in source or "Int32" in source) or "read-nums" in source or len(source) > 1500:
            continue
        want = _printed(source, "numpy")
        got = _printed(source, backend)
        assert len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want)), (source, got, want)
        tried += 1
        if tried == 6:
            break
    assert tried == 6
