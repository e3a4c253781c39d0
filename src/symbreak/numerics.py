"""Rounding-error bounds, so that numerical checks use derived tolerances.

With unit roundoff ``u`` (``2^-24`` in float32, ``2^-53`` in float64) and
``γ_n = n u / (1 − n u)`` (Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1), a computed dot product of length ``n`` obeys
``|fl(x·y) − x·y| ≤ γ_n |x|·|y|``.  Propagating this bound through a layer gives
an elementwise bound ``β(x)`` on ``|fl(f(x)) − f(x)|``; two computations of
the same exact function then differ by at most ``β_f(x) + β_g(x)``.

:func:`within_bound` and :func:`margin` compare a measured difference with such a bound.

Two modelling assumptions enter and are stated here once:

* σ is Lipschitz with constant ``L = sup|σ'|`` (:attr:`Activation.lipschitz`);
* torch evaluates σ to within :data:`ELEMENTWISE_ULPS` units of roundoff of
  ``max(|σ(s)|, L |s|)``.
"""

from __future__ import annotations

import math

import torch

from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, GlobalQueryMLP, KeyValueMLP

__all__ = ["unit_roundoff", "gamma", "forward_error_bound", "ELEMENTWISE_ULPS", "real_tensor", "within_bound", "margin"]

#: Accuracy assumed of torch's elementwise activation functions, in units of roundoff.
ELEMENTWISE_ULPS = 8


def unit_roundoff(dtype: torch.dtype) -> float:
    """``u = eps / 2`` of a floating dtype."""
    if not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point dtype, got {dtype}")
    return torch.finfo(dtype).eps / 2


def gamma(n: int, dtype: torch.dtype) -> float:
    """``γ_n = n u / (1 − n u)``."""
    u = unit_roundoff(dtype)
    if n * u >= 1:
        raise ValueError(f"n: expected n·u < 1 for {dtype}, got n = {n}")
    return n * u / (1 - n * u)


def _activation_bound(layer: FeedForward, s_abs: torch.Tensor, ds: torch.Tensor, sigma_abs: torch.Tensor):
    """Bound on ``|fl(σ(ŝ)) − σ(s)|`` given ``|s|``, ``|ŝ − s|`` and ``|σ(ŝ)|``."""
    L = layer.activation.lipschitz
    if L is None:
        raise ValueError(f"layer: activation {layer.activation.name!r} has no Lipschitz constant; register it")
    u = unit_roundoff(s_abs.dtype)
    return L * ds + ELEMENTWISE_ULPS * u * torch.maximum(sigma_abs, L * (s_abs + ds))


@torch.no_grad()
def forward_error_bound(layer: FeedForward, x: torch.Tensor, param_rel_error: float = 0.0) -> torch.Tensor:
    """Elementwise bound on ``|fl(layer(x)) − layer(x)|`` for the exact layer.

    ``param_rel_error`` adds a relative error on every stored parameter (for a
    layer whose parameters were themselves computed, e.g. ``α q_j``).
    """
    x = layer._check_input(x)
    dt = x.dtype
    u = unit_roundoff(dt)
    e = param_rel_error
    xa = x.abs()

    def dot(n: int) -> float:  # relative bound of a dot product with perturbed parameters
        g = gamma(n, dt)
        return g + e + g * e  # (1 + γ_n)(1 + e) − 1, written so that nothing is lost to 1 + tiny

    if isinstance(layer, KeyValueMLP):
        S = xa @ layer.K.abs().T
        ds = dot(layer.d) * S
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, GlobalQueryMLP):
        S = (xa @ layer.Q.abs()) @ layer.K.abs().T
        p = dot(layer.d)
        ds = (2 * p + p * p) * S  # two chained products: (1 + p)² − 1
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, BilinearMLP):
        R, m, d = layer.Q.shape
        A = xa @ layer.Q.abs().reshape(R * m, d).T
        B = xa @ layer.K.abs().reshape(R * m, d).T
        S = (A * B).unflatten(-1, (R, m)).sum(-2)
        p, g = dot(d), gamma(R + 1, dt)
        ds = (2 * p + p * p + g * (1 + p) ** 2) * S  # (1 + p)²(1 + γ_{R+1}) − 1
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, GatedMLP):
        A = xa @ layer.Q.abs().T
        B = xa @ layer.K.abs().T
        a, _ = layer.factors(x)
        sa = layer.activation(a).abs()
        dsig = _activation_bound(layer, A, dot(layer.d) * A, sa)
        h = layer.hidden(x)
        dh = dsig * B * (1 + dot(layer.d)) + (sa + dsig) * dot(layer.d) * B + u * h.abs()
    else:
        raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")
    Va = layer.V.abs()
    m = layer.m
    g = gamma(m, dt)
    return (dh @ Va) * (1 + e) + (g + e + g * e) * ((h.abs() + dh) @ Va)


def real_tensor(name: str, value) -> torch.Tensor:
    """``value`` as a tensor (a real number becomes a float64 scalar); ``TypeError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (torch.Tensor, int, float)):
        raise TypeError(f"{name}: expected a tensor or a real number, got {type(value).__name__}")
    return torch.as_tensor(value, dtype=torch.float64) if not isinstance(value, torch.Tensor) else value.detach()


def within_bound(difference, bound) -> bool:
    """``True`` iff ``|difference| ≤ bound`` entry by entry (shapes broadcast)."""
    difference, bound = real_tensor("difference", difference), real_tensor("bound", bound)
    if bool((bound < 0).any()):
        raise ValueError("bound: expected non-negative entries, got a negative one")
    return bool((difference.abs() <= bound).all())


def margin(difference, bound) -> float:
    """The largest share ``|difference| / bound`` over the entries (``0/0`` counts as ``0``, ``x/0`` as ``inf``)."""
    difference, bound = real_tensor("difference", difference), real_tensor("bound", bound)
    d, b = torch.broadcast_tensors(difference.abs().double(), bound.double())
    ratio = torch.where(b > 0, d / b.clamp_min(torch.finfo(torch.float64).tiny), torch.where(d > 0, math.inf, 0.0))
    return float(ratio.max()) if ratio.numel() else 0.0
