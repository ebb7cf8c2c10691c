"""Derivatives of Remora programs (contract §11, spec/derivatives.md).

Autodidax's design on the project's IR: a function is run once on a *taping* backend
(:class:`~.tape.TapeBackend`) that carries out every backend operation on its inner backend
and records each one that reads a differentiated ``Float`` array as an IR equation
(:class:`~remora.ir.core.Eqn`, its ``op`` the backend operation's name).  The recorded program
is then transposed equation by equation, last first, with one **transpose rule per operation
name** (:mod:`.rules`): each rule is written with the inner backend's own operations, so the
derivative program is a program of the same IR that the inner backend runs — NumPy, JAX,
Dask, or the tracing backend of a plan (then the whole derivative is one planned IR program
that every backend lowers), or another taping backend (``(grad (grad f))``).

Forward mode (``jvp``) is the transpose of the transpose: the backward pass of ``f`` is a
linear function of its cotangent, recorded on a second tape, and pulling ``dx`` back through
it gives ``J·dx`` (decisions.md D68).
"""

from .transform import grad_of, jvp_of, vjp_of

__all__ = ["grad_of", "jvp_of", "vjp_of"]
