"""The Hessian spectrum at a critical point against the predicted flat directions, and the units' activity.

* :func:`flat_spectrum` — the near-zero eigenvalues of ``∇²L`` against the predicted
  tangents, with rounding bounds (:class:`FlatSpectrum`, ``prop-flat-directions``);
* :func:`rescaling_curvatures` — the relative curvature ``‖Ĥξ‖ / (‖Ĥ‖₂‖ξ‖)`` along every rescaling;
* :func:`rescaling_sweep` — loss and sharpness along a rescaling (:class:`RescalingSweep`);
* :func:`unit_activity`, :func:`nearest_kink` — dead units and inputs on a kink of σ.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from symbreak.dynamics._base import _check_data, _check_layer, _unit_factors
from symbreak.dynamics.floors import gradient_rounding_floor, hessian_rounding_bound, loss_rounding_bound
from symbreak.dynamics.hessian import closed_form_hessian, flat_params, gradient_norm, loss_hessian
from symbreak.dynamics.tangents import pair_tangents, predicted_tangents, rescale, rescaling_is_symmetry
from symbreak.dynamics.training import mse
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.numerics import unit_roundoff


def unit_activity(layer: FeedForward, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per unit: the fraction of inputs with ``h_j(x) ≠ 0``, and its share ``rms_x |h_j(x)| ‖v_j‖ / max_l (…)``.

    A unit is *dead* on ``X`` when the first is 0; a share near 0 means it
    hardly contributes.
    """
    layer = _check_layer(layer)
    with torch.no_grad():
        h = layer.hidden(layer._check_input(X))
        active = (h != 0).to(X.dtype).mean(0)
        size = h.pow(2).mean(0).sqrt() * torch.linalg.vector_norm(layer.V, dim=1)
    return active, size / size.max()


def nearest_kink(layer: FeedForward, X: torch.Tensor) -> float:
    """``min_{i,j} |u_{ij}| / ū_{ij}``: how close any input comes to a kink of σ, relative to the scale of its argument.

    ``u_{ij}`` is the argument of σ for unit ``j`` at ``x_i`` (``x·k_j``, ``x·q_j``
    for the gated form, ``Σ_r (x·q_{j,r})(x·k_{j,r})`` at rank ``R``) and ``ū_{ij}``
    its Cauchy–Schwarz bound (``‖x‖‖k_j‖``, ``‖x‖‖q_j‖``, ``‖x‖² Σ_r ‖q_{j,r}‖‖k_{j,r}‖``).
    For a σ with a kink at 0 (ReLU) the loss is twice differentiable only where
    this is positive; a value at rounding level means a point sits on a kink.
    """
    layer = _check_layer(layer)
    if not isinstance(X, torch.Tensor) or X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected a tensor of shape (n, d = {layer.d}), got {getattr(X, 'shape', X)!r}")
    u = _unit_factors(layer, X)["s"].abs()
    xn = torch.linalg.vector_norm(X, dim=1, keepdim=True)
    with torch.no_grad():
        if isinstance(layer, BilinearMLP):
            weights = (torch.linalg.vector_norm(layer.Q, dim=-1) * torch.linalg.vector_norm(layer.K, dim=-1)).sum(0)
            scale = xn**2 * weights
        elif isinstance(layer, GatedMLP):
            scale = xn * torch.linalg.vector_norm(layer.Q, dim=-1)
        else:
            scale = xn * torch.linalg.vector_norm(layer.K, dim=-1)
    return float((u / scale).min())


@dataclass
class FlatSpectrum:
    """The Hessian spectrum at a (near-)critical point against the predicted flat directions.

    ``eigenvalues`` are sorted by absolute value; ``count`` of them lie in
    ``[−threshold, threshold]``; ``predicted`` is the dimension of the span of the
    predicted tangents; ``next_eigenvalue`` is the smallest ``|λ|`` above the
    threshold; ``tangent_residuals[i] = ‖Ĥ ξ_i‖`` with bound ``tangent_bounds[i]``;
    ``sin_angle`` is the sine of the largest principal angle between the span of
    the tangents and the eigenvectors of the ``predicted`` smallest ``|λ|``, with
    the Davis–Kahan bound ``sin_bound``; ``hessian`` is the symmetrised ``Ĥ``.
    """

    parameters: int
    predicted: int
    count: int
    threshold: float
    eigenvalues: torch.Tensor
    next_eigenvalue: float
    grad_norm: float
    grad_floor: float
    hessian_bound: float
    hessian_norm: float
    tangent_residuals: list[float]
    tangent_bounds: list[float]
    sin_angle: float
    sin_bound: float
    hessian: torch.Tensor

    @property
    def is_minimum(self) -> bool:
        """Whether no eigenvalue lies below ``−τ``: the point is a minimum as far as rounding can tell."""
        return float(self.eigenvalues.min()) >= -self.threshold

    def relative_curvatures(self, tangents: list[torch.Tensor]) -> list[float]:
        """``‖Ĥξ‖ / (‖Ĥ‖₂ ‖ξ‖)`` for each ``ξ`` of ``tangents``: the curvature along ``ξ`` relative to the largest."""
        P = self.hessian.shape[0]
        for xi in tangents:
            if not isinstance(xi, torch.Tensor) or xi.shape != (P,):
                raise ValueError(f"tangents: expected vectors of shape ({P},), got {getattr(xi, 'shape', xi)!r}")
        return [float((self.hessian @ xi).norm()) / (self.hessian_norm * float(xi.norm())) for xi in tangents]


def flat_spectrum(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    tangents: list[torch.Tensor] | None = None,
    hessian: torch.Tensor | None = None,
) -> FlatSpectrum:
    """Count the near-zero eigenvalues of ``Ĥ = loss_hessian`` and compare them with the predicted tangents.

    The exact gradient norm is at most the computed one plus :func:`gradient_rounding_floor`
    ``ε_fl``, hence at most ``ε = max(‖∇L‖, ε_fl) + ε_fl`` — which is ``2 ε_fl`` at a point
    settled to the floor, a bound that does not move with the rounding of the computed norm.  A
    tangent ``ξ = Aθ`` of a symmetry with ``‖A‖₂ = 1`` has ``‖H ξ‖ ≤ ε``.  If the
    ``t`` tangents span ``k`` dimensions with ``k``-th singular value ``s_k``, an
    orthonormal basis ``U`` of their span has ``‖Ĥ U‖₂ ≤ δ = √t ε / s_k + η_H``
    (``η_H`` from :func:`hessian_rounding_bound`), and then ``Ĥ`` has at least
    ``k`` eigenvalues in ``[−2δ, 2δ]`` (Weyl).  The threshold adds the
    eigensolver's backward error ``P u ‖Ĥ‖₂``: ``τ = 2δ + P u ‖Ĥ‖₂``.

    ``tangents`` default to :func:`predicted_tangents`; ``hessian`` to
    :func:`loss_hessian` (pass :func:`closed_form_hessian` to save time).
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    if tangents is None:
        tangents = [xi for vectors in predicted_tangents(layer).values() for xi in vectors]
    H = loss_hessian(layer, X, Y) if hessian is None else hessian
    if H.shape != (flat_params(layer).numel(),) * 2:
        raise ValueError(f"hessian: expected shape (P, P) with P = {flat_params(layer).numel()}, got {tuple(H.shape)}")
    H = (H + H.T) / 2
    P = H.shape[0]
    u = unit_roundoff(H.dtype)
    hnorm = float(torch.linalg.matrix_norm(H, ord=2))
    grad, floor = gradient_norm(layer, X, Y), gradient_rounding_floor(layer, X, Y)
    eps = max(grad, floor) + floor
    eta = hessian_rounding_bound(layer, X, Y)
    evals, evecs = torch.linalg.eigh(H)
    order = evals.abs().argsort()
    evals, evecs = evals[order], evecs[:, order]
    if tangents:
        Xi = torch.stack(tangents, 1)
        Uxi, sv, _ = torch.linalg.svd(Xi, full_matrices=False)
        k = int((sv > max(Xi.shape) * torch.finfo(H.dtype).eps * sv[0]).sum())
        U = Uxi[:, :k]
        delta = len(tangents) ** 0.5 * eps / float(sv[k - 1]) + eta
        residuals = [float((H @ xi).norm()) for xi in tangents]
        bounds = [eps + (eta + P * u * hnorm) * float(xi.norm()) for xi in tangents]
    else:
        k, U, delta, residuals, bounds = 0, H.new_zeros(P, 0), eta, [], []
    tau = 2 * delta + P * u * hnorm
    count = int((evals.abs() <= tau).sum())
    above = evals.abs()[evals.abs() > tau]
    nxt = float(above[0]) if above.numel() else float("inf")
    if k:
        null = evecs[:, :k]
        sin = float(torch.linalg.matrix_norm(null - U @ (U.T @ null), ord=2))
        HU = H @ U
        resid = float(torch.linalg.matrix_norm(HU - U @ (U.T @ HU), ord=2))
        gap = float(evals.abs()[k]) - float(torch.linalg.matrix_norm(HU, ord=2)) if k < P else float("inf")
        # Davis–Kahan, plus the eigensolver's error in the computed eigenvectors (P u ‖Ĥ‖₂ / gap)
        sin_bound = (resid + P * u * hnorm) / gap if gap > 0 else float("inf")
    else:
        sin, sin_bound = 0.0, 0.0
    return FlatSpectrum(
        parameters=P,
        predicted=k,
        count=count,
        threshold=tau,
        eigenvalues=evals,
        next_eigenvalue=nxt,
        grad_norm=grad,
        grad_floor=floor,
        hessian_bound=eta,
        hessian_norm=hnorm,
        tangent_residuals=residuals,
        tangent_bounds=bounds,
        sin_angle=sin,
        sin_bound=sin_bound,
        hessian=H,
    )


def rescaling_curvatures(layer: FeedForward, spectrum: FlatSpectrum) -> dict[str, tuple[bool, list[float]]]:
    """Per rescaling pair: whether it is a symmetry, and ``‖Ĥξ‖ / (‖Ĥ‖₂ ‖ξ‖)`` for the tangent ``ξ`` of each unit.

    The pairs are ``"qk"`` ``(q_j, −k_j)``, ``"kv"`` ``(k_j, −v_j)`` and ``"qv"`` ``(q_j, −v_j)``
    (``"kv"`` only for the key–value memory), with :func:`pair_tangents` at the point where
    ``spectrum`` (:func:`flat_spectrum`) was measured.  By ``prop-flat-directions`` the ratio is at
    rounding level along a symmetry at a critical point.
    """
    layer = _check_layer(layer)
    if not isinstance(spectrum, FlatSpectrum):
        raise TypeError(f"spectrum: expected a FlatSpectrum, got {type(spectrum).__name__}")
    pairs = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    return {
        pair: (rescaling_is_symmetry(layer, pair), spectrum.relative_curvatures(pair_tangents(layer, pair)))
        for pair in pairs
    }


@dataclass
class RescalingSweep:
    """A layer moved along a rescaling by each ``α``: the loss, the largest Hessian eigenvalue, and a verdict.

    ``loss_unchanged``: whether ``|L(α) − L(1)| ≤ β_L(1) + β_L(α)`` at every ``α``, with ``β_L`` the
    loss's rounding bound (at ``α`` including a relative rounding ``u`` of the rescaled parameters).
    """

    pair: str
    alphas: list[float]
    losses: list[float]
    top_eigenvalues: list[float]
    loss_unchanged: bool

    @property
    def sharpness_ratio(self) -> float:
        """``max_α λ_max / min_α λ_max``: how much the sharpness changes along the sweep."""
        return max(self.top_eigenvalues) / min(self.top_eigenvalues)

    @property
    def loss_ratio(self) -> float:
        """``max_α L / min_α L``: how much the loss changes along the sweep."""
        return max(self.losses) / min(self.losses)


def rescaling_sweep(
    layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, pair: str, alphas: Iterable[float]
) -> RescalingSweep:
    """Move ``layer`` by :func:`rescale` ``(pair, α)`` for each ``α`` of ``alphas``; record ``L`` and ``λ_max(H)``.

    ``H`` is :func:`closed_form_hessian` at the moved point.  Along a symmetry the loss is constant
    and ``H`` transforms as ``D⁻¹ H D⁻¹`` (``D`` the diagonal rescaling), so the sharpness is
    not (Dinh et al., 2017).
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    alphas = [float(a) for a in alphas]
    if not alphas:
        raise ValueError("alphas: expected at least one rescaling factor, got none")
    u = unit_roundoff(flat_params(layer).dtype)
    with torch.no_grad():
        base_loss = float(mse(layer, X, Y))
    base_bound = loss_rounding_bound(layer, X, Y)
    losses, tops, unchanged = [], [], True
    for alpha in alphas:
        moved = rescale(layer, pair, alpha)
        with torch.no_grad():
            loss = float(mse(moved, X, Y))
        losses.append(loss)
        tops.append(float(torch.linalg.eigvalsh(closed_form_hessian(moved, X, Y))[-1]))
        unchanged &= abs(loss - base_loss) <= base_bound + loss_rounding_bound(moved, X, Y, param_rel_error=u)
    return RescalingSweep(pair, alphas, losses, tops, unchanged)
