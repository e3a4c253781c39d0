"""Flat parameter vectors and the loss's derivatives in them: autograd Hessian, closed-form Jacobian and Hessian.

* :func:`flat_params`, :func:`set_flat_params` — all parameters as one vector ``θ``;
* :func:`loss_hessian`, :func:`gradient_norm` — ``∇²L(θ)`` and ``‖∇L(θ)‖`` by autograd;
* :func:`residual_jacobian`, :func:`closed_form_hessian` — ``J`` and ``∇²L`` in closed form
  (``prop-flat-directions``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call

from symbreak.dynamics._base import _check_data, _check_layer, _unit_factors
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP


def flat_params(layer: nn.Module) -> torch.Tensor:
    """All parameters concatenated in ``named_parameters`` order (a detached copy)."""
    return torch.cat([p.detach().reshape(-1) for p in layer.parameters()])


def _unflatten(layer: nn.Module, theta: torch.Tensor) -> dict[str, torch.Tensor]:
    out, i = {}, 0
    for name, p in layer.named_parameters():
        out[name] = theta[i : i + p.numel()].view_as(p)
        i += p.numel()
    if i != theta.numel():
        raise ValueError(f"theta: expected {i} entries, got {theta.numel()}")
    return out


def set_flat_params(layer: nn.Module, theta: torch.Tensor) -> None:
    """Write ``theta`` (as from :func:`flat_params`) into ``layer``'s parameters."""
    with torch.no_grad():
        for name, value in _unflatten(layer, theta).items():
            layer.get_parameter(name).copy_(value)


def _loss_of_theta(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    def loss(theta: torch.Tensor) -> torch.Tensor:
        out = functional_call(layer, _unflatten(layer, theta), (X,))
        return 0.5 * ((out - Y) ** 2).sum() / X.shape[0]

    return loss


def loss_hessian(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """The full Hessian ``∇²L(θ)`` of the MSE loss in the flat parameters, ``(P, P)``."""
    return torch.autograd.functional.hessian(_loss_of_theta(layer, X, Y), flat_params(layer))


def gradient_norm(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``‖∇L(θ)‖₂``."""
    theta = flat_params(layer).requires_grad_(True)
    (g,) = torch.autograd.grad(_loss_of_theta(layer, X, Y)(theta), theta)
    return float(g.norm())


def _sigma_derivatives(layer: FeedForward, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(σ(s), σ'(s), σ''(s))`` elementwise, by automatic differentiation of the layer's activation."""
    s = s.detach().requires_grad_(True)
    with torch.enable_grad():
        s0 = layer.activation(s)
        (s1,) = torch.autograd.grad(s0.sum(), s, create_graph=True)
        if s1.requires_grad:
            (s2,) = torch.autograd.grad(s1.sum(), s, allow_unused=True)
            s2 = torch.zeros_like(s) if s2 is None else s2
        else:  # σ' does not depend on s (identity, or a piecewise-linear σ): σ'' = 0
            s2 = torch.zeros_like(s)
    return s0.detach(), s1.detach(), s2.detach()


def residual_jacobian(layer: FeedForward, X: torch.Tensor, *, absolute: bool = False) -> torch.Tensor:
    """``J = ∂ vec f(X) / ∂θ`` in closed form, ``(n·d_out, P)``, rows ``(i, o)``, columns as :func:`flat_params`.

    With ``u_{ij}`` the σ argument of unit ``j`` at ``x_i``:

    * key–value memory: ``∂f_o/∂k_{j} = σ'(x·k_j) v_{jo} x``, ``∂f_o/∂v_{jo'} = σ(x·k_j) δ_{oo'}``;
    * rank ``R`` (``s_j = Σ_r a_{jr} b_{jr}``): ``∂f_o/∂q_{j,r} = σ'(s_j) b_{jr} v_{jo} x``,
      ``∂f_o/∂k_{j,r} = σ'(s_j) a_{jr} v_{jo} x``, ``∂f_o/∂v_{jo'} = σ(s_j) δ_{oo'}``;
    * gated: ``∂f_o/∂q_j = σ'(a_j) b_j v_{jo} x``, ``∂f_o/∂k_j = σ(a_j) v_{jo} x``,
      ``∂f_o/∂v_{jo'} = σ(a_j) b_j δ_{oo'}``.

    With ``absolute=True`` every factor is replaced by its absolute value: the
    matrix ``|J|`` that bounds the rounding of computed derivatives.
    """
    layer = _check_layer(layer)
    if not isinstance(X, torch.Tensor) or X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected a tensor of shape (n, d = {layer.d}), got {getattr(X, 'shape', X)!r}")
    f = _unit_factors(layer, X)
    s0, s1, _ = _sigma_derivatives(layer, f["s"])
    mag = torch.abs if absolute else (lambda t: t)
    V = mag(layer.V.detach())
    x = mag(X)
    n, d_out = X.shape[0], layer.d_out
    eye = torch.eye(d_out, dtype=X.dtype)
    # every block is (coefficient per sample and unit) × v_{jo} × x_l, formed by broadcasting
    Vt = V.T  # (d_out, m)
    blocks = []
    if isinstance(layer, BilinearMLP):
        g = mag(s1).unsqueeze(1)  # (n, 1, m)
        for factor in (mag(f["b"]), mag(f["a"])):  # Q then K: (n, R, m)
            coef = (g * factor)[:, None, :, :, None]  # (n, 1, R, m, 1)
            blocks.append(coef * Vt[None, :, None, :, None] * x[:, None, None, None, :])
        coeff = mag(s0)
    elif isinstance(layer, GatedMLP):
        for c in (mag(s1 * f["b"]), mag(s0)):  # Q then K: (n, m)
            blocks.append(c[:, None, :, None] * Vt[None, :, :, None] * x[:, None, None, :])
        coeff = mag(s0 * f["b"])
    else:
        blocks.append(mag(s1)[:, None, :, None] * Vt[None, :, :, None] * x[:, None, None, :])
        coeff = mag(s0)
    blocks.append(coeff[:, None, :, None] * eye[None, :, None, :])  # V: (n, d_out, m, d_out)
    return torch.cat([blk.reshape(n * d_out, -1) for blk in blocks], dim=1)


def _place_diagonal_units(block: torch.Tensor, unit_axes: tuple[int, int]) -> torch.Tensor:
    """Embed ``block`` (unit index ``j`` on the first axis) into a tensor with ``j`` on both ``unit_axes``."""
    m = block.shape[0]
    rest = list(block.shape[1:])
    shape = rest[:]
    shape.insert(unit_axes[0], m)
    shape.insert(unit_axes[1], m)
    out = block.new_zeros(shape)
    idx = torch.arange(m)
    index: list[object] = [slice(None)] * len(shape)
    index[unit_axes[0]] = idx
    index[unit_axes[1]] = idx
    out[tuple(index)] = block
    return out


def closed_form_hessian(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    absolute: bool = False,
    gauss_newton: bool = True,
    residuals: torch.Tensor | None = None,
) -> torch.Tensor:
    """The Hessian of ``L = (1/2n) Σ_i ‖f(x_i) − y_i‖²`` in closed form: ``H = (JᵀJ + Σ_{i,o} r_{io} ∇²f_o(x_i)) / n``.

    ``J`` is :func:`residual_jacobian` and ``r = f(X) − Y``; the second-order
    part couples only parameters of the same unit ``j``.  With ``c_{ij} =
    Σ_o r_{io} v_{jo}`` and ``s_j`` the σ argument, its non-zero blocks are

    * rank ``R``: ``(q_{j,r}, q_{j,r'})``: ``Σ_i c_{ij} σ''(s_j) b_{jr} b_{jr'} xᵀx``;
      ``(k, k)`` alike with ``a``; ``(q_{j,r}, k_{j,r'})``:
      ``Σ_i c_{ij} (σ''(s_j) b_{jr} a_{jr'} + σ'(s_j) δ_{rr'}) xᵀx``;
      ``(q_{j,r}, v_{jo})``: ``Σ_i r_{io} σ'(s_j) b_{jr} x``, ``(k_{j,r}, v_{jo})`` alike with ``a``;
    * gated: ``(q_j, q_j)``: ``Σ_i c_{ij} σ''(a_j) b_j xᵀx``; ``(q_j, k_j)``: ``Σ_i c_{ij} σ'(a_j) xᵀx``;
      ``(q_j, v_{jo})``: ``Σ_i r_{io} σ'(a_j) b_j x``; ``(k_j, v_{jo})``: ``Σ_i r_{io} σ(a_j) x``;
    * key–value memory: ``(k_j, k_j)``: ``Σ_i c_{ij} σ''(x·k_j) xᵀx``; ``(k_j, v_{jo})``: ``Σ_i r_{io} σ'(x·k_j) x``.

    With ``absolute=True`` every product (and each of the two terms of the
    ``(q, k)`` block) is taken in absolute value: the majorant
    ``(|J|ᵀ|J| + Σ |r_{io}| |∇²f_o(x_i)|) / n`` that bounds the rounding of a computed Hessian.
    With ``gauss_newton=False`` only the second-order part ``Σ_{i,o} r_{io} ∇²f_o(x_i) / n`` is
    returned (computed directly, not as a difference of two Hessians); ``residuals`` (shape
    ``(n, d_out)``) replaces ``r = f(X) − Y`` in it.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    n = X.shape[0]
    if residuals is not None and (not isinstance(residuals, torch.Tensor) or residuals.shape != Y.shape):
        raise ValueError(
            f"residuals: expected a tensor of shape {tuple(Y.shape)}, got {getattr(residuals, 'shape', residuals)!r}"
        )
    mag = torch.abs if absolute else (lambda t: t)
    with torch.no_grad():
        r = mag(layer(X) - Y if residuals is None else residuals)
    f = _unit_factors(layer, X)
    s0, s1, s2 = _sigma_derivatives(layer, f["s"])
    V = layer.V.detach()
    c = r @ mag(V).T if absolute else r @ V.T  # (n, m)
    x = mag(X)
    xx = x[:, :, None] * x[:, None, :]
    m, d, d_out = layer.m, layer.d, layer.d_out
    if isinstance(layer, BilinearMLP):
        R = layer.rank
        a, b = mag(f["a"]), mag(f["b"])
        w2, w1 = c * mag(s2), c * mag(s1)
        # Z_b[i, j, (r, l)] = b_{irj} x_{il}, Z_a alike: every block is a weighted sum over i of outer products
        Zb = (b.permute(0, 2, 1)[..., None] * x[:, None, None, :]).reshape(n, m, R * d)
        Za = (a.permute(0, 2, 1)[..., None] * x[:, None, None, :]).reshape(n, m, R * d)
        qq = torch.einsum("ija,ijb->jab", Zb * w2[..., None], Zb).reshape(m, R, d, R, d)
        kk = torch.einsum("ija,ijb->jab", Za * w2[..., None], Za).reshape(m, R, d, R, d)
        eye_r = torch.eye(R, dtype=X.dtype)
        xwx = torch.einsum("ij,ilk->jlk", w1, xx)
        qk = torch.einsum("ija,ijb->jab", Zb * w2[..., None], Za).reshape(m, R, d, R, d)
        qk = qk + eye_r[None, :, None, :, None] * xwx[:, None, :, None, :]
        qv = torch.einsum("ija,io->jao", Zb * mag(s1)[..., None], r).reshape(m, R, d, d_out)
        kv = torch.einsum("ija,io->jao", Za * mag(s1)[..., None], r).reshape(m, R, d, d_out)
        # place unit-diagonal blocks: parameter layout (r, j, l) for Q and K, (j, o) for V
        QQ = _place_diagonal_units(qq, (1, 4)).reshape(R * m * d, R * m * d)
        KK = _place_diagonal_units(kk, (1, 4)).reshape(R * m * d, R * m * d)
        QK = _place_diagonal_units(qk, (1, 4)).reshape(R * m * d, R * m * d)
        QV = _place_diagonal_units(qv, (1, 3)).reshape(R * m * d, m * d_out)
        KV = _place_diagonal_units(kv, (1, 3)).reshape(R * m * d, m * d_out)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat(
            [
                torch.cat([QQ, QK, QV], 1),
                torch.cat([QK.T, KK, KV], 1),
                torch.cat([QV.T, KV.T, VV], 1),
            ]
        )
    elif isinstance(layer, GatedMLP):
        a, b = f["a"], f["b"]
        qq = torch.einsum("ij,ilk->jlk", c * mag(s2 * b), xx)
        qk = torch.einsum("ij,ilk->jlk", c * mag(s1), xx)
        qv = torch.einsum("ijl,io->jlo", mag(s1 * b)[..., None] * x[:, None, :], r)
        kv = torch.einsum("ijl,io->jlo", mag(s0)[..., None] * x[:, None, :], r)
        QQ = _place_diagonal_units(qq, (0, 2)).reshape(m * d, m * d)
        QK = _place_diagonal_units(qk, (0, 2)).reshape(m * d, m * d)
        QV = _place_diagonal_units(qv, (0, 2)).reshape(m * d, m * d_out)
        KV = _place_diagonal_units(kv, (0, 2)).reshape(m * d, m * d_out)
        KK = X.new_zeros(m * d, m * d)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat(
            [
                torch.cat([QQ, QK, QV], 1),
                torch.cat([QK.T, KK, KV], 1),
                torch.cat([QV.T, KV.T, VV], 1),
            ]
        )
    else:
        kk = torch.einsum("ij,ilk->jlk", c * mag(s2), xx)
        kv = torch.einsum("ijl,io->jlo", mag(s1)[..., None] * x[:, None, :], r)
        KK = _place_diagonal_units(kk, (0, 2)).reshape(m * d, m * d)
        KV = _place_diagonal_units(kv, (0, 2)).reshape(m * d, m * d_out)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat([torch.cat([KK, KV], 1), torch.cat([KV.T, VV], 1)])
    if not gauss_newton:
        return S / n
    J = residual_jacobian(layer, X, absolute=absolute)
    return (J.T @ J + S) / n
