"""Derivatives (contract §11, issue 25): grad, jvp, vjp through every differentiable primitive,
against central finite differences and against jax.grad of the same computation written in
JAX; engines and backends agree; lifting, nesting; located type errors."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import remora
from conftest import check_error, run_program
from gen_programs import float_losses

# Each program: (name, the Remora function of x : [Float n] (its text, n filled in), the same
# computation in JAX (a function of jnp and x, given x's NumPy value for what the program
# decides on data), kinks its values must keep away from).
PROGRAMS = [
    ("arith", "(λ ((x [Float {n}])) (sum (- (* x x) (/ x (+ 2.0 (* x x))))))",
     lambda j, x, v: j.sum(x * x - x / (2.0 + x * x)), ()),
    ("neg-abs", "(λ ((x [Float {n}])) (sum (* (abs x) (neg (sin x)))))",
     lambda j, x, v: j.sum(j.abs(x) * -j.sin(x)), (0.0,)),
    ("expt", "(λ ((x [Float {n}])) (sum (expt (+ 2.0 (* x x)) 1.5)))",
     lambda j, x, v: j.sum((2.0 + x * x) ** 1.5), ()),
    ("sqrt-exp-log", "(λ ((x [Float {n}])) (sum (+ (sqrt (+ 1.0 (* x x))) (* (exp (cos x)) (log (+ 3.0 x))))))",
     lambda j, x, v: j.sum(j.sqrt(1.0 + x * x) + j.exp(j.cos(x)) * j.log(3.0 + x)), ()),
    ("tan-atan", "(λ ((x [Float {n}])) (sum (* (tan (* 0.3 x)) (atan x))))",
     lambda j, x, v: j.sum(j.tan(0.3 * x) * j.arctan(x)), ()),
    ("min-max", "(λ ((x [Float {n}])) (sum (* (max x 0.5) (min x -0.5))))",
     lambda j, x, v: j.sum(j.maximum(x, 0.5) * j.minimum(x, -0.5)), (0.5, -0.5)),
    ("reduce-max", "(λ ((x [Float {n}])) (* (reduce max x) (reduce * x)))",
     lambda j, x, v: j.max(x) * j.prod(x), ()),
    ("fold", "(λ ((x [Float {n}])) (fold (λ ((a [Float]) (acc [Float])) (+ (* acc 0.9) (sin a))) 0.5 x))",
     lambda j, x, v: _fold(x), ()),
    ("scan", "(λ ((x [Float {n}])) (sum (scan (λ ((acc [Float]) (a [Float])) (* 0.5 (+ acc (* a a)))) 1.0 x)))",
     lambda j, x, v: _scan(x), ()),
    ("append-rotate", "(λ ((x [Float {n}])) (sum (* (append x (reverse x)) (rotate (append x (sin x)) 1))))",
     lambda j, x, v: j.sum(j.concatenate([x, x[::-1]]) * j.roll(j.concatenate([x, j.sin(x)]), -1)), ()),
    ("index", "(λ ((x [Float {n}])) (* (index x 0) (exp (index x 1))))",
     lambda j, x, v: x[0] * j.exp(x[1]), ()),
    ("reshape", "(λ ((x [Float {n}])) (unbox (sh m (reshape [2 {n}] x)) (unbox (k v (ravel m)) (fold + 0.0 (* v (sin v))))))",
     lambda j, x, v: 2 * j.sum(x * j.sin(x)), ()),
    ("transpose", "(λ ((x [Float {n}])) (let ((m (transpose [x (* x x)]))) (sum (* (head m) (tail m)))))",
     lambda j, x, v: j.sum(j.stack([x[0], x[0] ** 2]) * j.stack([x[-1], x[-1] ** 2])), ()),
    ("take-drop", "(λ ((x [Float {n}])) (+ (unbox (k t (take 1 x)) (fold + 0.0 (* t t))) (unbox (k t (drop 1 x)) (fold + 0.0 (sin t)))))",
     lambda j, x, v: j.sum(x[:1] ** 2) + j.sum(j.sin(x[1:])), ()),
    ("filter", "(λ ((x [Float {n}])) (unbox (k t (filter (> x 0.0) x)) (fold + 0.0 (* t (exp t)))))",
     lambda j, x, v: j.sum(j.where(v > 0, x * j.exp(x), 0.0)), (0.0,)),
    ("sort", "(λ ((x [Float {n}])) (* (head (sort x)) (tail (sort (* x x)))))",
     lambda j, x, v: j.sort(x)[0] * j.sort(x * x)[-1], ()),
    ("let-lambda-frame", "(λ ((x [Float {n}])) (let ((sq (λ ((v [Float])) (* v (cos v))))) (sum (sq x))))",
     lambda j, x, v: j.sum(x * j.cos(x)), ()),
    ("if", "(λ ((x [Float {n}])) (sum ((λ ((v [Float])) (if (> v 0.0) (* v v) (sin v))) x)))",
     lambda j, x, v: j.sum(j.where(v > 0, x * x, j.sin(x))), (0.0,)),
    ("while", "(λ ((x [Float {n}])) (sum ((λ ((v [Float])) (while (λ ((y [Float])) (< (abs y) 4.0)) "
              "(λ ((y [Float])) (* y 1.7)) v)) x)))",
     lambda j, x, v: j.sum(x * 1.7 ** _trips(v)), ()),
]
RECURSION = ("(define (pw (v [Float]) (k [Int])) : [Float] (if (= k 0) 1.0 (* v (pw v (- k 1)))))\n"
             "(λ ((x [Float {n}])) (sum (pw (sin x) 3)))")


def _fold(x):
    acc = 0.5
    for a in x[::-1]:
        acc = acc * 0.9 + _jnp().sin(a)
    return acc


def _scan(x):
    acc, total = 1.0, 0.0
    for a in x:
        acc = 0.5 * (acc + a * a)
        total = total + acc
    return total


def _trips(v):
    out = []
    for y in v:
        k = 0
        while abs(y) < 4.0:
            y, k = y * 1.7, k + 1
        out.append(k)
    return np.array(out)


def _jnp():
    import jax.numpy as jnp

    return jnp


@contextlib.contextmanager
def x64():
    """JAX in 64-bit mode for the comparison, its configuration restored after (later tests
    rely on JAX's default, 32-bit)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


def _values(seed: int, n: int, kinks: tuple) -> np.ndarray:
    """``n`` distinct values in ±[0.2, 1.8], away from ``kinks`` and from each other (so no
    finite difference steps over a point where the program is not differentiable)."""
    rng = np.random.default_rng(seed)
    while True:
        x = rng.uniform(0.2, 1.8, n) * rng.choice([-1.0, 1.0], n)
        gaps = np.abs(x[:, None] - x[None, :]) + np.eye(n)
        if gaps.min() > 0.05 and all(np.abs(x - k).min() > 0.05 for k in kinks):
            # (for ``while``: no value's trip ends within a step of the bound)
            if all(abs(abs(y) * 1.7 ** t - 4.0) > 0.05 for y, t in zip(x, _trips(x))):
                return x


def central_differences(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return out


def _close(a, b, rel: float) -> None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.abs(b).max()))
    assert np.abs(a - b).max() <= rel * scale, f"{a} vs {b}"


@pytest.mark.parametrize("name,source,_,kinks", PROGRAMS, ids=[p[0] for p in PROGRAMS])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), n=st.integers(2, 5))
def test_gradient_agrees_with_central_differences(name, source, _, kinks, seed, n):
    x = _values(seed, n, kinks)
    text = source.format(n=n)
    f, g = remora.function(text), remora.grad(text)
    # (central differences: error h² f''' from the formula, ε/h from rounding; 1e-6 relative)
    _close(g(x), central_differences(f, x), 1e-6)


def test_gradient_through_declared_recursion_agrees_with_central_differences():
    x = _values(3, 4, ())
    text = RECURSION.format(n=4)
    _close(remora.grad(text)(x), central_differences(remora.function(text), x), 1e-6)
    _close(remora.grad(text)(x), 3 * np.sin(x) ** 2 * np.cos(x), 1e-12)


@pytest.mark.parametrize("name,source,jax_fn,kinks", PROGRAMS, ids=[p[0] for p in PROGRAMS])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 5))
def test_gradient_agrees_with_jax_grad(name, source, jax_fn, kinks, seed, n):
    with x64() as jax:
        x = _values(seed, n, kinks)
        want = np.asarray(jax.grad(lambda y: jax_fn(_jnp(), y, x))(_jnp().asarray(x)))
    _close(remora.grad(source.format(n=n))(x), want, 1e-9)


@pytest.mark.parametrize("name,source", [(p[0], p[1]) for p in PROGRAMS], ids=[p[0] for p in PROGRAMS])
def test_every_engine_gives_the_same_derivative(name, source):
    x = _values(11, 3, (0.0, 0.5, -0.5))
    literal = "[" + " ".join(repr(float(v)) for v in x) + "]"
    program = f"(define f {source.format(n=3)})\n((grad f) {literal})\n(jvp f {literal} [1.0 0.5 -1.0])"
    runs = {engine: [v for _, v in run_program(program, engine)] for engine in ("plans", "frames", "reference")}
    for engine, values in runs.items():
        for got, want in zip(values, runs["plans"]):
            _close(got, want, 1e-12)


@pytest.mark.parametrize("name,source", [(p[0], p[1]) for p in PROGRAMS], ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("backend", ["jax", "dask"])
def test_every_backend_gives_the_same_derivative(name, source, backend):
    pytest.importorskip(backend)
    x = _values(5, 4, (0.0, 0.5, -0.5))
    text = source.format(n=4)
    _close(np.asarray(remora.grad(text, backend=backend)(x)), remora.grad(text)(x), 1e-12)


def test_jvp_and_vjp_are_the_jacobian_times_a_vector_and_its_transpose():
    f = "(λ ((x [Float 3])) (* (sin x) (reverse x)))"
    x, dx, ct = np.array([0.3, -1.2, 0.7]), np.array([1.0, -0.5, 2.0]), np.array([0.2, 1.0, -1.0])
    jac = np.diag(np.cos(x) * x[::-1]) + np.diag(np.sin(x))[:, ::-1] * 1.0
    [jvp] = remora.evaluate(f"(jvp {f} x dx)", x=x, dx=dx).reshape(1, -1)
    [vjp] = remora.evaluate(f"(vjp {f} x ct)", x=x, ct=ct).reshape(1, -1)
    _close(jvp, jac @ dx, 1e-12)
    _close(vjp, jac.T @ ct, 1e-12)


def test_grad_lifts_over_a_frame_of_cells_and_over_a_frame_of_functions():
    g = remora.grad("(λ ((x [Float 2])) (sum (* x (* x x))))")
    xs = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])
    _close(g(xs), 3 * xs ** 2, 1e-12)  # (per-example gradients: one per cell)
    both = remora.evaluate("(([(grad sin) (grad cos)]) x)".replace("(([", "([").replace("]) x)", "] x)"),
                           x=np.array([0.5, 0.25]))
    _close(both, [np.cos(0.5), -np.sin(0.25)], 1e-12)


def test_the_other_arguments_are_held_fixed():
    g = remora.grad("(λ ((w [Float 2]) (x [Float 3 2]) (y [Float 3])) "
                    "(sum (* (- ((λ ((r [Float 2])) (sum (* w r))) x) y) (- ((λ ((r [Float 2])) (sum (* w r))) x) y))))")
    w, x, y = np.array([0.5, -1.0]), np.arange(6.0).reshape(3, 2), np.array([1.0, 0.0, 2.0])
    _close(g(w, x, y), 2 * x.T @ (x @ w - y), 1e-12)


def test_grad_of_grad_is_the_second_derivative():
    assert float(remora.evaluate("((grad (grad sin)) 1.0)")) == pytest.approx(-np.sin(1.0), rel=1e-14)
    d2 = remora.evaluate("((grad (grad (λ ((x [Float])) (* x (* x (exp x)))))) [0.5 2.0])")
    x = np.array([0.5, 2.0])
    _close(d2, (2 + 4 * x + x * x) * np.exp(x), 1e-12)


def test_non_differentiable_points_give_what_jax_grad_gives():
    value = remora.evaluate("[((grad abs) 0.0) ((grad (λ ((x [Float])) (max x 1.0))) 1.0) "
                            "((grad sqrt) 0.0) ((grad (λ ((x [Float])) (int->float (floor x)))) 1.5)]")
    assert value.tolist() == [1.0, 0.5, float("inf"), 0.0]
    ties = remora.evaluate("((grad (λ ((x [Float 3])) (reduce max x))) [1.0 1.0 0.5])")
    assert ties.tolist() == [0.5, 0.5, 0.0]
    zero = remora.evaluate("((grad (λ ((x [Float 3])) (reduce * x))) [0.0 2.0 3.0])")
    assert zero.tolist() == [6.0, 0.0, 0.0]


def test_float32_gradients_stay_single_precision():
    g = remora.grad("(λ ((x [Float32 3])) (sum (* x x)))")
    out = g(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    assert out.dtype == np.float32 and out.tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("source,needle", [
    ("(grad (λ ((x [Int])) 1.0))", "first parameter of type (Arr Int (Shp))"),
    ("(grad (λ ((x [Float 2])) x))", "whose result is a Float scalar"),
    ("(grad (λ ((x [Float])) (> x 0.0)))", "returns (Arr Bool (Shp))"),
    ("(grad 1.0)", "grad takes a function"),
    ("(grad (λ () 1.0))", "has no parameters"),
    ("(grad head)", "polymorphic type"),
    ("(jvp sin [1.0 2.0] [1.0 2.0 3.0])", "frames"),
    ("(vjp (λ ((x [Float 2])) x) [1.0 2.0] 1)", "vjp"),
])
def test_located_type_errors(source, needle):
    err = check_error(source)
    assert needle in err.message and err.line == 1 and err.column > 1


def test_remora_grad_locates_its_type_error_in_the_callers_source():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.grad("(define k 2.0)\n(λ ((x [Float 2])) (* k x))")
    assert info.value.line == 2 and "Float scalar" in info.value.message


def test_a_jax_backend_function_composes_with_jax_grad_jit_and_vmap():
    with x64() as jax:
        _composes(jax, _jnp())


def _composes(jax, jnp):
    f = remora.function("(λ ((w [Float 3]) (x [Float 3])) (sum (* (sin w) (* x x))))", backend="jax")
    w, x = jnp.array([0.1, 0.2, 0.3]), jnp.array([1.0, 2.0, 3.0])
    _close(jax.grad(f)(w, x), jnp.cos(w) * x * x, 1e-12)
    gw, gx = jax.jit(jax.grad(f, argnums=(0, 1)))(w, x)
    _close(gx, 2 * jnp.sin(w) * x, 1e-12)
    _close(jax.vmap(f, in_axes=(0, None))(jnp.stack([w, 2 * w]), x), [f(w, x), f(2 * w, x)], 1e-12)
    per = jax.vmap(jax.grad(f), in_axes=(0, None))(jnp.stack([w, 2 * w]), x)
    _close(per, jnp.stack([jnp.cos(w), jnp.cos(2 * w)]) * x * x, 1e-12)
    g = remora.function("(λ ((n [Int]) (x [Float])) (* (int->float n) x))", backend="jax")
    assert float(jax.grad(g, argnums=1)(3, 2.0)) == 3.0


@settings(max_examples=30, deadline=None)
@given(program=float_losses(), seed=st.integers(0, 2**16))
def test_random_float_programs_have_the_gradients_of_central_differences(program, seed):
    """The program generator's Float losses: the gradient agrees with central differences, and
    the reference engine gives the plans' gradient."""
    source, n = program
    x = _values(seed, n, (0.0,))
    f, g = remora.function(source), remora.grad(source)
    assume(np.isfinite(float(f(x))))
    got = g(x)
    _close(got, central_differences(f, x), 1e-6)
    literal = "[" + " ".join(repr(float(v)) for v in x) + "]"
    [(_, slow)] = run_program(f"((grad {source}) {literal})", "reference")
    _close(slow, got, 1e-12)
