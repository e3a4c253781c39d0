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

:func:`descend_to_form` searches for the minimum by gradient descent instead,
:func:`terms_needed` counts the terms an exact representation needs, and
:func:`random_forms` draws the three families of matrices of chapter 9.
"""

from __future__ import annotations

import torch

from symbreak.layers import BilinearMLP

__all__ = [
    "sym",
    "best_rank_R",
    "relative_error",
    "rank_one_eigenvalues",
    "best_error_curve",
    "terms_needed",
    "descend_to_form",
    "random_forms",
]


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


def terms_needed(S: torch.Tensor, tol: torch.Tensor | float) -> torch.Tensor:
    """``max(p, n)``: the number of terms ``sym(q_rᵀ k_r)`` that represent the symmetric ``S`` exactly.

    ``p`` and ``n`` count the eigenvalues of ``S`` above ``tol`` and below
    ``−tol`` (``prop-rank-R-reach``: ``R`` terms reach ``S`` iff ``R ≥ max(p, n)``);
    ``tol`` is one number or one per matrix of the batch ``S (..., d, d)``, and
    eigenvalues within it count as zero.  Raises ``ValueError`` for a negative ``tol``.
    """
    S = _check_square("S", S)
    tol = torch.as_tensor(tol, dtype=S.dtype)
    if bool((tol < 0).any()):
        raise ValueError(f"tol: expected numbers >= 0, got a minimum of {float(tol.min())}")
    mu = torch.linalg.eigvalsh(S)
    tol = tol[..., None]
    return torch.maximum((mu > tol).sum(-1), (mu < -tol).sum(-1))


def descend_to_form(starts: BilinearMLP, W: torch.Tensor, *, lr: float, steps: int) -> torch.Tensor:
    """Plain gradient descent of every unit of ``starts`` towards ``sym(W)``; the units' relative errors after it.

    The loss ``Σ_j ‖sym(W) − sym(W_j)‖_F²``, with ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``
    the unit forms of ``starts``, separates over the units, so each of the ``m``
    units is an independent start of ``R`` terms.  ``steps`` steps of SGD with
    step ``lr`` on ``Q`` and ``K`` change ``starts`` in place; the result is
    :func:`relative_error` of each unit, shape ``(m,)``.  Raises ``TypeError`` or
    ``ValueError`` for a ``starts`` that is not a ``BilinearMLP`` or a ``W`` not of
    shape ``(d, d)``, and for a non-positive ``lr`` or ``steps``.
    """
    if not isinstance(starts, BilinearMLP):
        raise TypeError(f"starts: expected a BilinearMLP, got {type(starts).__name__}")
    W = _check_square("W", W)
    if W.shape != (starts.d, starts.d):
        raise ValueError(f"W: expected shape (d, d) = ({starts.d}, {starts.d}), got {tuple(W.shape)}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr: expected a real number > 0, got {lr!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps!r}")
    optimiser = torch.optim.SGD([starts.Q, starts.K], lr=lr)
    for _ in range(steps):
        loss = ((sym(W) - sym(starts.unit_forms())) ** 2).sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        return relative_error(W.expand(starts.m, starts.d, starts.d), starts.Q, starts.K)


def random_forms(
    d: int, draws: int, generator: torch.Generator, *, dtype: torch.dtype = torch.float64
) -> dict[str, torch.Tensor]:
    """Three families of ``draws`` matrices ``W ∈ R^{d×d}`` each, drawn from ``generator``.

    * ``"Gaussian"``: independent standard normal entries;
    * ``"positive definite"``: ``W = GᵀG / (2d)`` with a Gaussian ``G ∈ R^{2d×d}``;
    * ``"planted rank 4 + noise"``: ``W = Σ_{i=1}^{4} a_iᵀ b_i + N`` with Gaussian
      rows ``a_i, b_i`` and ``N = sym(Gaussian)`` scaled so that ``‖N‖_F`` is a
      tenth of ``‖sym(Σ_i a_iᵀ b_i)‖_F`` (the planted part is stored as its ``sym``).

    The draws come in the order ``G``, ``a``, ``b``, ``N``, then the Gaussian
    family.  Raises ``TypeError``/``ValueError`` for sizes that are not ints ≥ 1
    or a ``generator`` that is not a ``torch.Generator``.
    """
    for name, value in (("d", d), ("draws", draws)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")

    def gaussian(*shape: int) -> torch.Tensor:
        return torch.randn(draws, *shape, generator=generator, dtype=dtype)

    G, a, b = gaussian(2 * d, d), gaussian(4, d), gaussian(4, d)
    planted = sym(torch.einsum("nri,nrj->nij", a, b))
    noise = sym(gaussian(d, d))
    noise = noise * (0.1 * torch.linalg.matrix_norm(planted) / torch.linalg.matrix_norm(noise))[:, None, None]
    return {
        "Gaussian": gaussian(d, d),
        "positive definite": G.mT @ G / (2 * d),
        "planted rank 4 + noise": planted + noise,
    }
