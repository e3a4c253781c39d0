"""Settling a layer to a critical point: the layers settled, damped Newton and Levenberg–Marquardt steps, many starts.

* :func:`make_layer`, :func:`perturbed_copy` — a small layer of a named form, and a copy moved off it;
* :func:`settle` — damped Newton steps until ``‖∇L‖`` reaches its rounding floor;
* :func:`settle_in_halves` — :func:`settle` in two halves, watching the nearest kink (:class:`HalvedRun`);
* :func:`settle_from_starts` — :func:`settle` from several seeds (:class:`SettleRun`).
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass

import torch

from symbreak.dynamics._base import _check_data, _check_layer
from symbreak.dynamics.floors import gradient_rounding_floor, loss_rounding_bound
from symbreak.dynamics.hessian import (
    closed_form_hessian,
    flat_params,
    residual_jacobian,
    set_flat_params,
)
from symbreak.dynamics.spectrum import nearest_kink
from symbreak.dynamics.tangents import drift_alignment, rescaling_tangents
from symbreak.dynamics.training import mse
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.symbolic import FLAT_FORMS

#: The forms :func:`make_layer` builds, by name: the names of :data:`symbreak.symbolic.FLAT_FORMS`, so that a
#: chapter's symbolic count and its layer name a form alike.
LAYER_FORMS = dict(zip(FLAT_FORMS, (KeyValueMLP, BilinearMLP, GatedMLP), strict=True))


def make_layer(
    form: str, activation: str, d: int, m: int, d_out: int, *, rank: int = 1, dtype: torch.dtype = torch.float64
) -> FeedForward:
    """A fresh layer of ``form`` with weights from the global torch generator.

    ``"key-value"``: ``σ(x Kᵀ) V`` (:class:`~symbreak.layers.KeyValueMLP`); ``"symmetric"``:
    ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` at ``rank`` R (:class:`~symbreak.layers.BilinearMLP`);
    ``"gated"``: ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V`` (:class:`~symbreak.layers.GatedMLP`); ``d`` inputs,
    ``m`` units, ``d_out`` outputs.
    """
    if form not in LAYER_FORMS:
        raise ValueError(f"form: expected one of {list(LAYER_FORMS)}, got {form!r}")
    if rank != 1 and form != "symmetric":
        raise ValueError(f"rank: expected 1 for the {form} form (rank R is a symmetric form), got {rank!r}")
    if form == "symmetric":
        return BilinearMLP(d, m, d_out, rank=rank, activation=activation, dtype=dtype)
    return LAYER_FORMS[form](d, m, d_out, activation=activation, dtype=dtype)


def perturbed_copy(layer: FeedForward, scale: float, generator: torch.Generator) -> FeedForward:
    """A copy of ``layer`` with parameters ``θ + scale · z``, ``z`` i.i.d. ``N(0, 1)`` drawn from ``generator``.

    ``θ`` is :func:`flat_params` of ``layer``, which is left unchanged.
    """
    layer = _check_layer(layer)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale >= 0:
        raise ValueError(f"scale: expected a real number >= 0, got {scale!r}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
    copy = deepcopy(layer)
    theta = flat_params(layer)
    set_flat_params(copy, theta + scale * torch.randn(theta.shape, generator=generator, dtype=theta.dtype))
    return copy


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
    (``"gauss-newton"``: Levenberg–Marquardt, with the closed-form Jacobian).
    ``μ`` is divided by 10 after a step that lowers the loss —
    or lowers ``‖∇L‖`` while raising the loss by at most twice
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
class HalvedRun:
    """A run of :func:`settle_in_halves`.

    ``layer``: the settled copy; ``norms``: ``‖∇L‖`` along the whole run; ``floor``: the
    rounding floor at the end; ``loss``: ``L`` at the end; ``kinks``: :func:`nearest_kink`
    after the first half and at the end.
    """

    layer: FeedForward
    norms: list[float]
    floor: float
    loss: float
    kinks: tuple[float, float]

    @property
    def settled(self) -> bool:
        """Whether ``‖∇L‖`` reached its rounding floor."""
        return self.norms[-1] <= self.floor


def settle_in_halves(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, *, steps: int) -> HalvedRun:
    """:func:`settle` a copy of ``layer`` for ``steps // 2`` steps, twice, and record :func:`nearest_kink` after each.

    Each half starts with the initial damping.  Where the loss is only piecewise smooth (ReLU),
    a run that stalls instead of settling shows whether it is running towards a kink, where
    ``min_{i,j} |u_{ij}| / ū_{ij}`` falls towards 0.  ``layer`` itself is left unchanged.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 2:
        raise ValueError(f"steps: expected an int >= 2, got {steps!r}")
    layer = deepcopy(layer)
    norms = settle(layer, X, Y, steps=steps // 2)
    halfway = nearest_kink(layer, X)
    norms = norms[:-1] + settle(layer, X, Y, steps=steps // 2)
    floor = gradient_rounding_floor(layer, X, Y)
    with torch.no_grad():
        loss = float(mse(layer, X, Y))
    return HalvedRun(layer, norms, floor, loss, (halfway, nearest_kink(layer, X)))


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
