"""Settling a layer to a critical point: damped Newton and Levenberg–Marquardt steps, from one or many starts.

* :func:`levenberg_marquardt` — damped Gauss–Newton steps by autograd;
* :func:`settle` — damped Newton steps until ``‖∇L‖`` reaches its rounding floor;
* :func:`settle_from_starts` — :func:`settle` from several seeds (:class:`SettleRun`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call

from symbreak.dynamics._base import _check_data, _check_layer
from symbreak.dynamics.floors import gradient_rounding_floor, loss_rounding_bound
from symbreak.dynamics.hessian import (
    _unflatten,
    closed_form_hessian,
    flat_params,
    gradient_norm,
    residual_jacobian,
    set_flat_params,
)
from symbreak.dynamics.tangents import drift_alignment, rescaling_tangents
from symbreak.dynamics.training import mse
from symbreak.layers import FeedForward


def levenberg_marquardt(
    layer: nn.Module, X: torch.Tensor, Y: torch.Tensor, *, steps: int = 50, damping: float = 1e-3
) -> list[float]:
    """Damped Gauss–Newton steps on the residuals ``r = f(X) − Y``; returns the gradient norm after each step.

    ``θ ← θ − (JᵀJ + μ I)⁻¹ Jᵀ r / n`` with ``J = ∂r/∂θ``; ``μ`` is multiplied by
    10 after a step that raises the loss (which is then undone) and divided
    by 10 after one that lowers it.  ``layer`` is updated in place.
    """
    n = X.shape[0]

    def residuals(theta: torch.Tensor) -> torch.Tensor:
        return (functional_call(layer, _unflatten(layer, theta), (X,)) - Y).reshape(-1)

    theta = flat_params(layer)
    loss = float(0.5 * (residuals(theta) ** 2).sum() / n)
    mu = damping
    norms = []
    for _ in range(steps):
        J = torch.autograd.functional.jacobian(residuals, theta)
        r = residuals(theta).detach()
        JtJ = J.T @ J / n
        g = J.T @ r / n
        # μ is kept above 10⁻¹⁰ ‖JᵀJ‖: the symmetry directions make JᵀJ singular, and an
        # undamped solve would amplify rounding along them into large, useless steps
        floor = 1e-10 * float(torch.linalg.matrix_norm(JtJ, ord=2))
        step = torch.linalg.solve(JtJ + max(mu, floor) * torch.eye(JtJ.shape[0], dtype=JtJ.dtype), g)
        candidate = theta - step
        new_loss = float(0.5 * (residuals(candidate) ** 2).sum() / n)
        if new_loss <= loss:
            theta, loss, mu = candidate, new_loss, max(mu / 10, 1e-15)
        else:
            mu *= 10
        set_flat_params(layer, theta)
        norms.append(gradient_norm(layer, X, Y))
    return norms


def settle(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    steps: int = 200,
    damping: float = 1e-3,
    curvature: str = "newton",
) -> list[float]:
    """Damped Newton steps until the gradient reaches its rounding floor; returns ``‖∇L‖`` along the way.

    ``θ ← θ − (C + μ I)⁻¹ ∇L`` with ``C`` the exact Hessian :func:`closed_form_hessian`
    (``curvature="newton"``) or the Gauss–Newton matrix ``JᵀJ/n``
    (``"gauss-newton"``: the iteration of :func:`levenberg_marquardt`, with the
    closed-form Jacobian).  ``μ`` is divided by 10 after a step that lowers the
    loss — or lowers ``‖∇L‖`` while raising the loss by at most twice
    :func:`loss_rounding_bound`, since near a critical point the decrease of
    the loss is below its rounding — and multiplied by 10 after any other step
    (which is undone), or when ``C + μ I`` is not positive definite;
    ``μ ≥ 10⁻¹⁰ ‖C‖₂``.  The
    Gauss–Newton matrix ignores the residual term ``Σ r ∇²f / n`` of the
    Hessian, so at a critical point with non-zero loss it converges only
    linearly, if at all; the exact Hessian converges quadratically.

    Stops once ``‖∇L‖ = ‖Jᵀ r‖ / n`` is at most :func:`gradient_rounding_floor`,
    or after ``steps`` steps.  Returns ``‖∇L‖`` before each step and at the end;
    ``layer`` is updated in place.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps: expected an int >= 0, got {steps!r}")
    if not damping > 0:
        raise ValueError(f"damping: expected a positive number, got {damping!r}")
    if curvature not in ("newton", "gauss-newton"):
        raise ValueError(f"curvature: expected 'newton' or 'gauss-newton', got {curvature!r}")
    n = X.shape[0]
    theta = flat_params(layer)
    mu = damping
    norms: list[float] = []

    def state() -> tuple[float, torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            r = (layer(X) - Y).reshape(-1)
        J = residual_jacobian(layer, X)
        return float(0.5 * (r**2).sum() / n), J.T @ r / n, J

    loss, g, J = state()
    floor = gradient_rounding_floor(layer, X, Y)
    while True:
        norms.append(float(g.norm()))
        if norms[-1] <= 100 * floor:  # near the floor: recompute it at the current θ
            floor = gradient_rounding_floor(layer, X, Y)
        if norms[-1] <= floor or len(norms) > steps:
            break
        C = closed_form_hessian(layer, X, Y) if curvature == "newton" else J.T @ J / n
        mu_min = 1e-10 * float(torch.linalg.matrix_norm(C, ord=2))
        eye = torch.eye(C.shape[0], dtype=C.dtype)
        factor, info = torch.linalg.cholesky_ex(C + max(mu, mu_min) * eye)
        if int(info) != 0:  # not positive definite: more damping, same point
            mu = max(mu, mu_min) * 10
            continue
        step = torch.cholesky_solve(g.unsqueeze(1), factor).squeeze(1)
        set_flat_params(layer, theta - step)
        new_loss, new_g, new_J = state()
        # near a critical point the decrease of the loss drops below its rounding: then a step
        # that lowers the gradient norm and raises the loss by no more than rounding is taken too
        accept = new_loss <= loss or (
            float(new_g.norm()) < norms[-1] and new_loss - loss <= 2 * loss_rounding_bound(layer, X, Y)
        )
        if accept:
            theta, loss, g, J, mu = theta - step, new_loss, new_g, new_J, max(mu / 10, 1e-15)
        else:
            set_flat_params(layer, theta)
            mu = max(mu, mu_min) * 10
    return norms


@dataclass
class SettleRun:
    """One start of :func:`settle_from_starts`.

    ``norms``: ``‖∇L‖`` along the whole run; ``floor``: the rounding floor at the
    end; ``theta_norms``: ``‖θ‖`` at the start, where the last ``tail`` steps
    began, and at the end; ``alignment``: :func:`drift_alignment` of the move
    made in those last steps with :func:`rescaling_tangents` (None if the run
    settled, or if every one of those steps was rejected).
    """

    seed: int
    layer: FeedForward
    norms: list[float]
    floor: float
    loss: float
    theta_norms: tuple[float, float, float]
    alignment: float | None

    @property
    def settled(self) -> bool:
        """Whether ``‖∇L‖`` reached its rounding floor."""
        return self.norms[-1] <= self.floor


def settle_from_starts(
    build: Callable[[], FeedForward],
    X: torch.Tensor,
    Y: torch.Tensor,
    seeds: list[int],
    *,
    steps: int = 120,
    tail: int = 40,
) -> list[SettleRun]:
    """For each seed: ``torch.manual_seed(seed)``, ``layer = build()``, then :func:`settle` for ``steps`` steps.

    The run is split in two calls, ``steps − tail`` and ``tail`` steps (each
    starting with the initial damping), so that the move made in the last
    ``tail`` steps can be compared with the rescaling directions.
    """
    if not 0 < tail <= steps:
        raise ValueError(f"tail: expected 0 < tail <= steps = {steps}, got {tail}")
    runs = []
    for seed in seeds:
        torch.manual_seed(seed)
        layer = _check_layer(build())
        start = float(flat_params(layer).norm())
        norms = settle(layer, X, Y, steps=steps - tail)
        before = flat_params(layer)
        floor = gradient_rounding_floor(layer, X, Y)
        alignment = None
        if norms[-1] > floor:
            norms = norms[:-1] + settle(layer, X, Y, steps=tail)
            floor = gradient_rounding_floor(layer, X, Y)
            after = flat_params(layer)
            if norms[-1] > floor and not torch.equal(before, after):
                alignment = drift_alignment(before, after, rescaling_tangents(layer))
        with torch.no_grad():
            loss = float(mse(layer, X, Y))
        theta = (start, float(before.norm()), float(flat_params(layer).norm()))
        runs.append(SettleRun(seed, layer, norms, floor, loss, theta, alignment))
    return runs
