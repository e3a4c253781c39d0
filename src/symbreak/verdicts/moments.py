"""How badly a symmetry is broken: Gaussian moments of the exchange and inverse-scaling defects."""

from __future__ import annotations

import numpy as np
import sympy as sp

from symbreak.activations import Activation, resolve

#: The number of Gauss–Hermite nodes of every quadrature of this module.
GH_POINTS = 160
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(GH_POINTS)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)  # weights for the standard normal density


def gaussian_moment(expr: sp.Expr, z: sp.Symbol) -> tuple[float, sp.Expr | None]:
    """``E[expr(z)]`` for ``z ~ N(0, 1)``: ``(value, closed form or None)``.

    Where ``expr`` is a polynomial on each half-line (piecewise-linear σ), sympy
    integrates it against the density on each half-line, exactly.  Otherwise the
    value comes from :data:`GH_POINTS`-point Gauss–Hermite quadrature of the even part of
    ``expr`` (the registered activations are smooth away from 0, their only
    kink), and the closed form is ``None``.
    """
    t = sp.Symbol("t", positive=True)
    density = sp.exp(-(t**2) / 2) / sp.sqrt(2 * sp.pi)
    halves = [sp.simplify(expr.subs(z, sgn * t)) for sgn in (1, -1)]
    # a closed form is attempted where it is guaranteed to exist and be fast: on each
    # half-line the integrand is a polynomial in t times the density
    if all(h.is_polynomial(t) for h in halves):
        closed = sp.simplify(sum(sp.integrate(h * density, (t, 0, sp.oo)) for h in halves))
        return float(closed), closed
    f = sp.lambdify(z, expr, modules=["scipy", "numpy"])
    # E[f(z)] = ∫₀^∞ (f(t) + f(−t)) φ(t) dt = ½ E[f(|z|) + f(−|z|)]; quadrature on the even extension
    g = lambda u: 0.5 * (np.asarray(f(np.abs(u)), float) + np.asarray(f(-np.abs(u)), float))  # noqa: E731
    return float(np.sum(_GH_WEIGHTS * g(_GH_NODES))), None


def exchange_defect(activation: str | Activation) -> tuple[float, sp.Expr | None]:
    """``E[(σ(a) b − σ(b) a)²]`` for ``a, b ~ N(0, 1)`` independent, ``= 2(E[σ(z)²] − E[z σ(z)]²)``.

    Returns ``(value, closed form or None)``.
    """
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    m2, c2 = gaussian_moment(sigma.sym(z) ** 2, z)
    m1, c1 = gaussian_moment(z * sigma.sym(z), z)
    closed = sp.simplify(2 * (c2 - c1**2)) if c2 is not None and c1 is not None else None
    return 2 * (m2 - m1**2), closed


def inverse_scaling_defect(activation: str | Activation, alpha: float) -> float:
    """``E[(σ(α a) b / α − σ(a) b)²] = E[(σ(α z)/α − σ(z))²]`` for ``a, b, z ~ N(0, 1)``, by quadrature.

    The quadrature has :data:`GH_POINTS` nodes.
    """
    if alpha == 0:
        raise ValueError("alpha: expected a non-zero real number, got 0")
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    f = sp.lambdify(z, sigma.sym(z), modules=["scipy", "numpy"])
    g = lambda u: (np.asarray(f(alpha * u), float) / alpha - np.asarray(f(u), float)) ** 2  # noqa: E731
    # split at the kink: the even extension of g on |u|
    return float(np.sum(_GH_WEIGHTS * 0.5 * (g(np.abs(_GH_NODES)) + g(-np.abs(_GH_NODES)))))
