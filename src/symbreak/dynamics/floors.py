"""Rounding floors of computed derivatives and losses: how far a computed ``∇L``, ``∇²L`` or ``L`` can be off.

* :func:`gradient_rounding_floor` — ``ε_fl``, below which a computed ``‖∇L‖`` is zero;
* :func:`hessian_rounding_bound` — ``η_H ≥ ‖Ĥ − H‖₂``;
* :func:`loss_rounding_bound` — a bound on ``|L̂ − L|``.
"""

from __future__ import annotations

import torch

from symbreak.dynamics._base import _check_data, _check_layer
from symbreak.dynamics.hessian import closed_form_hessian, residual_jacobian
from symbreak.layers import FeedForward


def _derivative_terms(layer: FeedForward, n: int) -> int:
    """``M = n·d_out + 6(R·d + m) + 3·ELEMENTWISE_ULPS``: the length that ``γ_M`` charges a computed derivative.

    Every entry of ``∇L`` and of ``∇²L`` is a sum over the ``n·d_out``
    residual indices of products of at most six computed factors (entries of
    ``x``, ``σ``, ``σ'`` or ``σ''`` at a score, value entries, residuals); each
    factor is a dot product of length at most ``R·d`` (a score) or ``m`` (an
    output), and σ and its derivatives are taken as accurate to
    ``ELEMENTWISE_ULPS`` units of roundoff, the assumption of
    :mod:`symbreak.numerics`.
    """
    from symbreak.numerics import ELEMENTWISE_ULPS

    R = getattr(layer, "rank", 1)
    return n * layer.d_out + 6 * (R * layer.d + layer.m) + 3 * ELEMENTWISE_ULPS


def gradient_rounding_floor(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``ε_fl = ‖ |J|ᵀ (β + γ_M |r|) ‖₂ / n``: how far a computed ``‖∇L‖`` can be from the exact one.

    ``∇L = Jᵀ r / n``; ``β`` is :func:`symbreak.numerics.forward_error_bound`
    (the rounding of ``f(X)``, hence of ``r``), and ``γ_M`` with ``M`` from
    :func:`_derivative_terms` covers the rounding of the products and of the sum
    (a first-order bound).  A computed gradient norm below ``ε_fl`` is zero to
    working precision.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    g = gamma(_derivative_terms(layer, n), X.dtype)
    with torch.no_grad():
        r = (layer(X) - Y).abs()
        beta = forward_error_bound(layer, X)
    Ja = residual_jacobian(layer, X, absolute=True)
    return float(torch.linalg.vector_norm(Ja.T @ (beta + g * r).reshape(-1)) / n)


def hessian_rounding_bound(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``η_H = γ_M ‖H_abs‖₂ + ‖S_β‖₂``: a bound on ``‖Ĥ − H‖₂`` for a computed Hessian ``Ĥ``.

    ``H_abs`` is :func:`closed_form_hessian` with ``absolute=True`` (every
    product in absolute value), so each computed entry is within ``γ_M`` of its
    exact value relative to it; ``S_β = Σ_{i,o} β_{io} |∇²f_o(x_i)| / n`` adds
    the rounding ``β`` of the residuals (:func:`symbreak.numerics.forward_error_bound`)
    in the second-order part.  A first-order bound, like :func:`gradient_rounding_floor`.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    g = gamma(_derivative_terms(layer, n), X.dtype)
    with torch.no_grad():
        beta = forward_error_bound(layer, X)
    H_abs = closed_form_hessian(layer, X, Y, absolute=True)
    # the second-order part with the residuals replaced by β, computed directly: a difference of two
    # Hessians would leave the rounding of their Gauss–Newton parts in it
    S_beta = closed_form_hessian(layer, X, Y, absolute=True, gauss_newton=False, residuals=beta)
    return g * float(torch.linalg.matrix_norm(H_abs, ord=2)) + float(torch.linalg.matrix_norm(S_beta, ord=2))


def loss_rounding_bound(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, param_rel_error: float = 0.0) -> float:
    """A bound on ``|L̂ − L|`` for the computed loss: ``Σ (|r| β + β²/2) / n + γ_{N+2} L̂``, ``N = n·d_out``.

    ``β`` is :func:`symbreak.numerics.forward_error_bound` (with
    ``param_rel_error`` for parameters that were themselves computed), so the
    exact residuals are within ``β`` of the computed ones; ``γ_{N+2}`` covers
    squaring, summing and the division by ``2n``.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    with torch.no_grad():
        r = (layer(X) - Y).abs()
        beta = forward_error_bound(layer, X, param_rel_error)
        loss = float(0.5 * (r**2).sum() / n)
        spread = float((r * beta + beta**2 / 2).sum() / n)
    return spread + gamma(n * layer.d_out + 2, X.dtype) * loss
