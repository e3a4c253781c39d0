"""Best low-rank bilinear approximations of a unit's quadratic form."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import seeds
from symbreak.approximation import best_error_curve, best_rank_R, rank_one_eigenvalues, relative_error, sym
from symbreak.layers import BilinearMLP
from symbreak.numerics import unit_roundoff

F64 = torch.float64
U = unit_roundoff(F64)


def _theory_error(S: torch.Tensor, R: int) -> float:
    """Keep the R largest positive and R most negative eigenvalues; the rest is the error."""
    lam = torch.linalg.eigvalsh(S)
    pos = lam[lam > 0].sort(descending=True).values[:R]
    neg = lam[lam < 0].sort().values[:R]
    rest = (lam**2).sum() - (pos**2).sum() - (neg**2).sum()
    return float(rest.clamp(min=0).sqrt() / (lam**2).sum().sqrt())


@given(seed=seeds, d=st.integers(1, 7), R=st.integers(1, 8))
def test_best_rank_R_attains_the_eigenvalue_bound(seed, d, R):
    W = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    Q, K = best_rank_R(W, R)
    assert Q.shape == (R, d) and K.shape == (R, d)
    # eigh is backward stable: errors of order d·u·‖S‖ in the reconstruction (Higham §8)
    assert abs(float(relative_error(W, Q, K)) - _theory_error(sym(W), R)) <= 64 * d * U + 1e-7


@given(seed=seeds, d=st.integers(2, 6))
def test_no_rank_one_pair_beats_the_best(seed, d):
    """Random (q, k) pairs never beat the eigenvalue construction (a check of optimality)."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(d, d, generator=g, dtype=F64)
    Q, K = best_rank_R(W, 1)
    best = float(relative_error(W, Q, K))
    q = torch.randn(2000, d, generator=g, dtype=F64)
    k = torch.randn(2000, d, generator=g, dtype=F64)
    S = sym(W)
    approx = (q.unsqueeze(-1) * k.unsqueeze(-2) + k.unsqueeze(-1) * q.unsqueeze(-2)) / 2
    # the optimal scale of each candidate: <S, A>/‖A‖²
    scale = (approx * S).sum((-1, -2)) / (approx**2).sum((-1, -2))
    errs = torch.linalg.matrix_norm(S - scale[:, None, None] * approx) / torch.linalg.matrix_norm(S)
    assert float(errs.min()) >= best - 1e-12


@given(seed=seeds, d=st.integers(1, 6))
def test_rank_d_is_exact_and_feeds_a_layer(seed, d):
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(3, d, d, generator=g, dtype=F64)
    Q, K = best_rank_R(W, d)
    assert float(relative_error(W, Q, K).max()) <= 64 * d * U
    layer = BilinearMLP.from_weights(Q, K, torch.randn(3, 2, generator=g, dtype=F64), activation="identity")
    torch.testing.assert_close(sym(layer.unit_forms().detach()), sym(W), rtol=0, atol=64 * d * U * 10)


@given(seed=seeds, d=st.integers(2, 8))
def test_rank_one_eigenvalues_opposite_signs(seed, d):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, dtype=F64), torch.randn(d, generator=g, dtype=F64)
    lp, lm = rank_one_eigenvalues(q, k)
    assert float(lp) >= 0 >= float(lm)  # Cauchy–Schwarz: |q·k| ≤ ‖q‖‖k‖
    eig = torch.linalg.eigvalsh(sym(torch.outer(q, k)))
    scale = float(q.norm() * k.norm())
    torch.testing.assert_close(eig[0], lm, rtol=0, atol=64 * d * U * scale)
    torch.testing.assert_close(eig[-1], lp, rtol=0, atol=64 * d * U * scale)
    # q ∥ k: one eigenvalue vanishes
    lp2, lm2 = rank_one_eigenvalues(q, 2 * q)
    assert abs(float(lm2)) <= 8 * U * float(lp2)


def test_bad_input():
    with pytest.raises(ValueError, match=r"W: expected \(\.\.\., d, d\) square matrices, got shape \(2, 3\)"):
        sym(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="rank: expected an int >= 1, got 0"):
        best_rank_R(torch.eye(2), 0)
    with pytest.raises(TypeError, match="W: expected a torch.Tensor"):
        best_rank_R([[1.0]], 1)


def test_best_error_curve_is_the_error_of_the_built_factors():
    """prop-rank-R-reach: the eigenvalue formula equals the relative error of best_rank_R's factors, for every R."""
    g = torch.Generator().manual_seed(3)
    d = 6
    W = torch.randn(3, d, d, generator=g, dtype=torch.float64)
    curve = best_error_curve(sym(W))
    assert curve.shape == (3, d)
    tolerance = 64 * d * unit_roundoff(torch.float64)  # a convention: eigh's backward error is a modest multiple of d·u
    for R in range(1, d + 1):
        built = relative_error(W, *best_rank_R(W, R))
        # squares, since the error cancels to rounding once R reaches the inertia
        assert bool(((curve[:, R - 1] ** 2 - built**2).abs() <= tolerance).all())
    assert bool((curve[:, 1:] <= curve[:, :-1]).all()) and bool((curve[:, -1] ** 2 <= tolerance).all())
    with pytest.raises(ValueError, match="S: expected"):
        best_error_curve(torch.zeros(2, 3))
