"""Chapter 4, the rank-1 approximation: ``prop-rank-one`` and ``prop-rank-one-reach``.

Tolerances: layer comparisons use the rounding bound ``β(x)`` of
:func:`symbreak.numerics.forward_error_bound`; comparisons that go through a
symmetric eigendecomposition use ``EIGH = 64 d u`` relative to the matrix norm, a
convention: LAPACK's symmetric eigensolvers have a backward error of ``p(d)·u·‖A‖`` with
a modest, unspecified ``p(d)`` (LAPACK Users' Guide, §4.7), and ``64 d`` stands in for it.
Sampling tolerances (the Monte Carlo check of ``lem-gaussian-quadratic-moments``) are
conventions too, stated where they are used.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, equal_within_rounding, inputs, seeds, sizes
from symbreak import costs, symbolic
from symbreak.approximation import best_rank_R, rank_one_eigenvalues, relative_error, sym
from symbreak.layers import BilinearMLP, GatedMLP
from symbreak.numerics import forward_error_bound, gamma, unit_roundoff
from symbreak.plotting import figure, mean_band
from symbreak.symbolic import rank_one as symbolic_rank_one

F64 = torch.float64
U = unit_roundoff(F64)


def _eigh_tol(d: int) -> float:
    return 64 * d * U


def _layer(d: int, m: int, act: str, seed: int, rank: int = 1) -> BilinearMLP:
    torch.manual_seed(seed)
    return BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)


# --------------------------------------------------------------------------- prop-rank-one


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_rank_one_layer_is_the_explicit_unit_sum(d, m, seed, act):
    """prop-rank-one: BilinearMLP(rank=1) = Σ_j σ(x q_jᵀ k_j xᵀ) v_j with explicit W_j = q_jᵀ k_j.

    The explicit score rounds each term at most 2d + 1 times, inside the
    layer's score bound (1 + γ_d)²(1 + γ_2) − 1, so both computations are
    within β(x) and the tolerance is 2β(x).
    """
    assert gamma(2 * d + 1, F64) <= (1 + gamma(d, F64)) ** 2 * (1 + gamma(2, F64)) - 1
    layer = _layer(d, m, act, seed)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        q, k = layer.Q[0], layer.K[0]
        unit_sum = sum(
            layer.activation(((x @ torch.outer(q[j], k[j])) * x).sum(-1)).unsqueeze(-1) * layer.V[j] for j in range(m)
        )
        assert bool(((layer(x) - unit_sum).abs() <= 2 * forward_error_bound(layer, x)).all())


def test_prop_rank_one_symbolic():
    """prop-rank-one: the score factorises and the layer is σ((x Qᵀ) ⊙ (x Kᵀ)) V, for an undefined σ."""
    assert symbolic.rank_one_score_identity(3) == 0
    assert symbolic.rank_one_layer_identity(2, 3, 2) == sp.zeros(1, 2)


@given(d=sizes, m=sizes, d_out=sizes)
def test_prop_rank_one_parameter_count(d, m, d_out):
    """prop-rank-one: 2md + m d_out parameters (costs formula = the layer); the full form's maps, counted on
    BilinearMLP(rank=d), hold d times the numbers of the rank-1 layer's q_j, k_j."""
    layer = BilinearMLP(d, m, d_out, rank=1)
    assert sum(p.numel() for p in layer.parameters()) == costs.evaluate(
        costs.parameters("rank1"), d=d, m=m, d_out=d_out
    )
    full = BilinearMLP(d, m, d_out, rank=d)  # the full form's maps, counted on its layer
    assert full.Q.numel() + full.K.numel() == d * (layer.Q.numel() + layer.K.numel())


# --------------------------------------------------------------------------- prop-rank-one-reach


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_prop_rank_one_reach_symbolic(d):
    """prop-rank-one-reach: trace/Frobenius of sym(qᵀk) against λ±, polarization, and the norm expansion are exact."""
    assert symbolic.sym_rank_one_spectrum_identity(d) == (0, 0)
    matrix_part, score_part = symbolic.rank_one_polarization_identity(d)
    assert matrix_part == sp.zeros(d, d) and score_part == 0
    if d <= 3:
        assert symbolic.rank_one_truncation_identity(d) == 0


@pytest.mark.parametrize(
    "func", ["sym_rank_one_spectrum_identity", "rank_one_polarization_identity", "rank_one_truncation_identity"]
)
@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_prop_rank_one_reach_symbolic_bad_input(func, bad):
    with pytest.raises(ValueError, match=r"d: expected an int >= 1, got"):
        getattr(symbolic, func)(bad)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_rank_one_reach_split_on_layers(d, m, seed, act):
    """prop-rank-one-reach: a rank-1 unit (q, k) = the rank-2 unit with terms (a, a), (b, −b), a, b = (q ± k)/2.

    For every σ; a and b carry a relative error ≤ u (one addition, exact halving).
    """
    layer = _layer(d, m, act, seed)
    with torch.no_grad():
        a, b = (layer.Q + layer.K) / 2, (layer.Q - layer.K) / 2
        split = BilinearMLP.from_weights(torch.cat([a, b]), torch.cat([a, -b]), layer.V, activation=act)
    assert equal_within_rounding(layer, split, inputs(seed, 7, d), param_rel_error=U)


@given(seed=seeds, d=st.integers(2, 9))
def test_prop_rank_one_reach_spectrum(seed, d):
    """prop-rank-one-reach: sym(qᵀk) has eigenvalues λ± and d − 2 zeros; λ+ ≥ 0 ≥ λ−."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, dtype=F64), torch.randn(d, generator=g, dtype=F64)
    eig = torch.linalg.eigvalsh(sym(torch.outer(q, k)))
    lp, lm = rank_one_eigenvalues(q, k)
    scale = float(q.norm() * k.norm())
    assert float(lp) >= 0 >= float(lm)
    assert abs(float(eig[-1] - lp)) <= _eigh_tol(d) * scale
    assert abs(float(eig[0] - lm)) <= _eigh_tol(d) * scale
    assert float(eig[1:-1].abs().sum()) <= _eigh_tol(d) * scale


@given(seed=seeds, d=st.integers(2, 9), signs=st.sampled_from([(1, -1), (1, 0), (0, -1)]))
def test_prop_rank_one_reach_converse(seed, d, signs):
    """prop-rank-one-reach: S with ≤ 1 positive and ≤ 1 negative eigenvalue is sym(qᵀk), q, k = √μ₊u ± √(−μ₋)w."""
    g = torch.Generator().manual_seed(seed)
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64))
    u, w = basis[:, 0], basis[:, 1]
    mu_plus, mu_minus = (
        signs[0] * (0.5 + torch.rand((), generator=g, dtype=F64)),
        signs[1] * (0.5 + torch.rand((), generator=g, dtype=F64)),
    )
    S = mu_plus * torch.outer(u, u) + mu_minus * torch.outer(w, w)
    q = mu_plus.sqrt() * u + (-mu_minus).sqrt() * w
    k = mu_plus.sqrt() * u - (-mu_minus).sqrt() * w
    scale = float(torch.linalg.matrix_norm(S))
    assert float(torch.linalg.matrix_norm(sym(torch.outer(q, k)) - S)) <= _eigh_tol(d) * scale
    # best_rank_R reaches it exactly (up to the eigensolver's backward error)
    Q, K = best_rank_R(S, 1)
    assert float(relative_error(S, Q, K)) <= _eigh_tol(d)


def _eigen_errors(W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Relative errors of eq-rank-one-best: free (q, k), parallel q ∥ k, diagonal q = k, from the eigenvalues."""
    mu = torch.linalg.eigvalsh(sym(W))
    total = (mu**2).sum(-1)
    top, bottom = mu[..., -1], mu[..., 0]
    free = (1 - (top.clamp(min=0) ** 2 + bottom.clamp(max=0) ** 2) / total).clamp(min=0).sqrt()
    parallel = (1 - torch.maximum(top**2, bottom**2) / total).clamp(min=0).sqrt()
    diagonal = (1 - top.clamp(min=0) ** 2 / total).clamp(min=0).sqrt()
    return free, parallel, diagonal


@given(seed=seeds, d=st.integers(2, 8))
def test_prop_rank_one_reach_best_errors(seed, d):
    """prop-rank-one-reach: best_rank_R(W, 1) and its halves (a, a), (b, −b) attain the three minima.

    The minima are those of eq-rank-one-best (free, q ∥ k, q = k), computed from the eigenvalues.
    """
    W = torch.randn(4, d, d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    Q, K = best_rank_R(W, 1)
    a, b = (Q + K) / 2, (Q - K) / 2
    free, parallel, diagonal = _eigen_errors(W)
    diag_attained = relative_error(W, a, a)
    par_attained = torch.minimum(diag_attained, relative_error(W, b, -b))
    for attained, formula in [(relative_error(W, Q, K), free), (par_attained, parallel), (diag_attained, diagonal)]:
        # ε² is what the eigensolver gets to O(d u); ε itself then to O(d u)/ε, so compare squares
        assert float((attained**2 - formula**2).abs().max()) <= 4 * _eigh_tol(d)


@given(seed=seeds, d=st.integers(2, 6))
def test_prop_rank_one_reach_no_candidate_beats_the_minima(seed, d):
    """prop-rank-one-reach: random candidates on each class (free, q ∥ k, q = k) never beat its eigenvalue minimum."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(d, d, generator=g, dtype=F64)
    S = sym(W)
    free, parallel, diagonal = (float(e) for e in _eigen_errors(W))
    q = torch.randn(1000, d, generator=g, dtype=F64)
    k = torch.randn(1000, d, generator=g, dtype=F64)
    for cand, bound, signed in [
        (sym(q[:, :, None] * k[:, None, :]), free, True),
        (q[:, :, None] * q[:, None, :], parallel, True),
        (q[:, :, None] * q[:, None, :], diagonal, False),
    ]:
        # optimal scale of each candidate A: <S, A>/‖A‖² (kept ≥ 0 for the diagonal class, where the scale is ‖k‖²)
        scale = (cand * S).sum((-1, -2)) / (cand**2).sum((-1, -2))
        if not signed:
            scale = scale.clamp(min=0)
        err = torch.linalg.matrix_norm(S - scale[:, None, None] * cand) / torch.linalg.matrix_norm(S)
        assert float(err.min()) >= bound - _eigh_tol(d)


@given(seed=seeds, eta=st.floats(0.05, 3.0))
def test_prop_rank_one_reach_planted_term(seed, eta):
    """prop-rank-one-reach: W = aᵀb + N: the best term is no worse than the planted one; exact without noise."""
    g = torch.Generator().manual_seed(seed)
    d = 6
    a, b = torch.randn(1, d, generator=g, dtype=F64), torch.randn(1, d, generator=g, dtype=F64)
    signal = torch.outer(a[0], b[0])
    noise = torch.randn(d, d, generator=g, dtype=F64)
    noise = noise * (eta * torch.linalg.matrix_norm(sym(signal)) / torch.linalg.matrix_norm(sym(noise)))
    Q, K = best_rank_R(signal, 1)
    assert float(relative_error(signal, Q, K)) <= _eigh_tol(d)
    W = signal + noise
    Q, K = best_rank_R(W, 1)
    assert float(relative_error(W, Q, K)) <= float(relative_error(W, a, b)) + _eigh_tol(d)


# --------------------------------------------------------------------------- relatives (σ = identity)


@given(d=sizes, m=sizes, seed=seeds)
def test_prop_rank_one_identity_is_the_bilinear_layer(d, m, seed):
    """prop-rank-one: at σ = id the symmetric rank-1 form is the gated MLP (the bilinear layer).

    It is also the difference of 2m diagonal units (a_j, a_j, v_j) and (b_j, b_j, −v_j).
    """
    layer = _layer(d, m, "identity", seed)
    x = inputs(seed, 7, d)
    Q, K, V = layer.Q[0].detach(), layer.K[0].detach(), layer.V.detach()
    assert equal_within_rounding(layer, GatedMLP.from_weights(Q, K, V, activation="identity"), x)
    a, b = (Q + K) / 2, (Q - K) / 2
    diagonal = BilinearMLP.from_weights(torch.cat([a, b]), torch.cat([a, b]), torch.cat([V, -V]), activation="identity")
    assert equal_within_rounding(layer, diagonal, x, param_rel_error=U)


# --------------------------------------------------------------------------- plotting helper


def test_mean_band_draws_mean_and_band():
    fig, axes = figure()
    samples = np.arange(12, dtype=float).reshape(3, 4)
    mean_band(axes[0], [1, 2, 3], samples, label="curve")
    line = axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), samples.mean(axis=1))
    assert line.get_label() == "curve"
    assert len(axes[0].collections) == 1  # the band
    plt.close(fig)


def test_mean_band_bad_input():
    fig, axes = figure()
    with pytest.raises(ValueError, match=r"samples: expected shape \(3, n\) with n >= 1 draws, got \(2, 4\)"):
        mean_band(axes[0], [1, 2, 3], np.zeros((2, 4)), label="x")
    with pytest.raises(ValueError, match=r"x: expected a non-empty 1-d sequence, got shape \(0,\)"):
        mean_band(axes[0], [], np.zeros((0, 4)), label="x")
    with pytest.raises(ValueError, match=r"band: expected percentiles 0 <= low < high <= 100, got \(90, 10\)"):
        mean_band(axes[0], [1, 2, 3], np.zeros((3, 4)), label="x", band=(90, 10))
    plt.close(fig)


@given(d=st.integers(2, 6), seed=seeds, c=st.sampled_from([-2.0, -0.5, 0.5, 3.0]))
def test_prop_rank_one_reach_parallel_case(d, seed, c):
    """prop-rank-one-reach, item 1 for q = c k: S = c kᵀk has the eigenvalues q·k (eigenvector k) and 0, so
    {λ+, λ−} = {q·k, 0}, and one of g± = q/‖q‖ ± k/‖k‖ is zero.  Tolerance: EIGH, relative to ‖S‖."""
    k = torch.randn(d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    q = c * k
    S = sym(torch.outer(q, k))
    spectrum = torch.linalg.eigvalsh(S)
    scale = float(torch.linalg.matrix_norm(S))
    qk = float(q @ k)
    extreme = spectrum[-1] if qk > 0 else spectrum[0]
    assert abs(float(extreme) - qk) <= _eigh_tol(d) * scale
    others = spectrum[:-1] if qk > 0 else spectrum[1:]
    assert float(others.abs().max()) <= _eigh_tol(d) * scale
    assert torch.allclose(S @ k, qk * k, rtol=0, atol=8 * d * U * scale * float(k.norm()))  # convention: 8du
    lam_plus, lam_minus = (float(v) for v in rank_one_eigenvalues(q, k))
    assert sorted([lam_plus, lam_minus]) == pytest.approx(sorted([qk, 0.0]), abs=4 * U * abs(qk))
    g = [q / q.norm() + k / k.norm(), q / q.norm() - k / k.norm()]
    assert min(float(v.norm()) for v in g) <= 4 * U


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_lem_gaussian_quadratic_moments_symbolic(d):
    """lem-gaussian-quadratic-moments: E[(xAxᵀ)(xBxᵀ)] = 2⟨sym A, sym B⟩ + tr A tr B, from the normal moments."""
    assert symbolic_rank_one.gaussian_quadratic_moment_identity(d) == 0


def test_lem_gaussian_quadratic_moments_monte_carlo():
    """lem-gaussian-quadratic-moments on samples: the mean of (xAxᵀ)(xBxᵀ) over 2·10⁵ Gaussian tokens (a stream
    independent of A and B) is within 6 standard errors of the formula (a convention for a sampling tolerance)."""
    gen_w, gen_x = torch.Generator().manual_seed(11), torch.Generator().manual_seed(12)
    d = 4
    A, B = torch.randn(2, d, d, generator=gen_w, dtype=F64)
    x = torch.randn(200_000, d, generator=gen_x, dtype=F64)
    samples = ((x @ A) * x).sum(-1) * ((x @ B) * x).sum(-1)
    formula = 2 * (sym(A) * sym(B)).sum() + A.trace() * B.trace()
    standard_error = samples.std() / samples.numel() ** 0.5
    assert float((samples.mean() - formula).abs()) <= 6 * float(standard_error)
    with pytest.raises(ValueError, match=r"d: expected an int >= 1, got 0"):
        symbolic_rank_one.gaussian_quadratic_moment_identity(0)
