"""How well low-rank bilinear units approximate a unit's quadratic form.

A score ``x W xᵀ`` sees only ``S = sym(W)`` (``thm-transpose``).  One rank-1
term contributes ``sym(qᵀk)``, a symmetric matrix with at most one positive
and one negative eigenvalue, ``λ± = ½(q·k ± ‖q‖‖k‖)``; conversely every
such matrix is a ``sym(qᵀk)``.  A sum of ``R`` terms reaches exactly the
symmetric matrices with at most ``R`` positive and ``R`` negative eigenvalues.
The best approximation in Frobenius norm therefore keeps the ``R`` largest
positive and the ``R`` most negative eigenvalues of ``S`` (Eckart–Young for the
symmetric eigendecomposition), and :func:`best_rank_R` builds the factors
``q_r, k_r`` that realise it:
``q_r = √λ⁺_r u_r + √(−λ⁻_r) w_r``, ``k_r = √λ⁺_r u_r − √(−λ⁻_r) w_r``.
"""

from __future__ import annotations

import torch

__all__ = ["sym", "best_rank_R", "relative_error", "rank_one_eigenvalues", "best_error_curve"]


def _check_square(name: str, W: object) -> torch.Tensor:
    if not isinstance(W, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(W).__name__}")
    if W.ndim < 2 or W.shape[-1] != W.shape[-2]:
        raise ValueError(f"{name}: expected (..., d, d) square matrices, got shape {tuple(W.shape)}")
    return W


def sym(W: torch.Tensor) -> torch.Tensor:
    """``sym(W) = (W + Wᵀ)/2`` over the last two dimensions."""
    W = _check_square("W", W)
    return (W + W.transpose(-1, -2)) / 2


def rank_one_eigenvalues(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``λ± = ½(q·k ± ‖q‖‖k‖)``, the non-zero eigenvalues of ``sym(qᵀk)`` (rows over the last dimension)."""
    if q.shape != k.shape:
        raise ValueError(f"k: expected the shape of q {tuple(q.shape)}, got {tuple(k.shape)}")
    dot = (q * k).sum(-1)
    norms = torch.linalg.vector_norm(q, dim=-1) * torch.linalg.vector_norm(k, dim=-1)
    return (dot + norms) / 2, (dot - norms) / 2


def best_rank_R(W: torch.Tensor, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Factors ``(Q, K)`` of shape ``(rank, ..., d)`` with ``Σ_r sym(q_rᵀ k_r)`` the best approximation of ``sym(W)``.

    Best in Frobenius norm among all sums of ``rank`` rank-1 terms; with
    ``rank ≥ d`` it is exact.  Missing eigenvalues (fewer than ``rank`` of one
    sign) give zero factors.
    """
    W = _check_square("W", W)
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"rank: expected an int >= 1, got {rank!r}")
    lam, U = torch.linalg.eigh(sym(W))  # ascending; columns of U are eigenvectors
    d = W.shape[-1]
    r = min(rank, d)
    pos_lam = lam[..., -r:].flip(-1).clamp(min=0)  # largest first
    pos_vec = U[..., :, -r:].flip(-1)
    neg_lam = lam[..., :r].clamp(max=0)  # most negative first
    neg_vec = U[..., :, :r]
    a = pos_lam.sqrt().unsqueeze(-2) * pos_vec
    b = (-neg_lam).sqrt().unsqueeze(-2) * neg_vec
    # when 2r > d an eigenvalue may sit in both lists; the clamps give it to exactly one
    Q = (a + b).movedim(-1, 0)
    K = (a - b).movedim(-1, 0)
    if rank > r:
        pad = torch.zeros((rank - r, *Q.shape[1:]), dtype=Q.dtype)
        Q, K = torch.cat([Q, pad]), torch.cat([K, pad])
    return Q, K


def relative_error(W: torch.Tensor, Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """``‖sym(W) − Σ_r sym(q_rᵀ k_r)‖_F / ‖sym(W)‖_F`` for factors of shape ``(R, ..., d)``."""
    S = sym(W)
    approx = sym(torch.einsum("r...i,r...j->...ij", Q, K))
    return torch.linalg.matrix_norm(S - approx) / torch.linalg.matrix_norm(S)


def best_error_curve(S: torch.Tensor) -> torch.Tensor:
    """The relative error ``‖S − S_R‖_F / ‖S‖_F`` of the best sum of ``R`` terms, for ``R = 1, …, d`` (last axis).

    From the eigenvalues ``μ`` of the symmetric ``S`` alone (eq-rank-R-best): ``S_R`` keeps the ``R``
    largest positive and the ``R`` most negative of them, so the squared error is ``Σμ²`` minus their
    squares (clamped at 0 against rounding).  :func:`best_rank_R` builds the factors; this is the
    formula they are checked against.
    """
    S = _check_square("S", S)
    mu = torch.linalg.eigvalsh(S)  # ascending
    total = (mu**2).sum(-1, keepdim=True)
    kept = (mu.flip(-1).clamp(min=0) ** 2).cumsum(-1) + (mu.clamp(max=0) ** 2).cumsum(-1)
    return ((total - kept).clamp(min=0) / total).sqrt()
