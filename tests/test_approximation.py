"""Best low-rank bilinear approximations of a unit's quadratic form.

Tolerances.  The eigensolver's backward error is the stated convention
``η = 64 d u`` of :func:`symbreak.numerics.eigh_backward_error` (LAPACK Users'
Guide §4.7 gives no constant); from it :func:`symbreak.numerics.low_rank_error_tolerance`
derives ``δ`` (for a relative error computed from factors) and ``δ²`` (for its
square).  Where an error cancels to rounding (the eigenvalue formula once ``R``
reaches the inertia) squares are compared, since ``√(rounding)`` has no useful bound.
A random candidate's relative error is computed to within :func:`_candidate_rounding`.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import seeds
from symbreak.approximation import (
    best_error_curve,
    best_rank_R,
    descend_to_form,
    random_forms,
    rank_one_eigenvalues,
    relative_error,
    sym,
    terms_needed,
)
from symbreak.layers import BilinearMLP
from symbreak.numerics import eigh_backward_error, gamma, low_rank_error_tolerance, unit_roundoff

F64 = torch.float64
U = unit_roundoff(F64)


def _theory_error(S: torch.Tensor, R: int) -> float:
    """Keep the R largest positive and R most negative eigenvalues; the rest is the error."""
    lam = torch.linalg.eigvalsh(S)
    pos = lam[lam > 0].sort(descending=True).values[:R]
    neg = lam[lam < 0].sort().values[:R]
    rest = (lam**2).sum() - (pos**2).sum() - (neg**2).sum()
    return float(rest.clamp(min=0).sqrt() / (lam**2).sum().sqrt())


def _candidate_rounding(d: int) -> float:
    """Bound (first order in u) on the rounding of ``‖S − c A‖_F / ‖S‖_F`` for one candidate ``A`` of size ``d × d``.

    ``c = ⟨S, A⟩ / ‖A‖²_F`` (two sums of ``d²`` products and a division) carries a
    relative error ``≤ γ_{2d²+1}``; ``A = sym(qᵀk)`` one of ``γ_2`` per entry; the
    subtraction ``u``.  As ``c A`` is the orthogonal projection of ``S``,
    ``‖c A‖_F ≤ ‖S‖_F`` and ``‖S − c A‖_F ≤ ‖S‖_F``, so the residual is off by at most
    ``(γ_{2d²+1} + γ_2 + u) ‖S‖_F``; the two norms add ``γ_{d²}`` each.  6 ``γ_{2d²+2}`` covers the sum.
    """
    return 6 * gamma(2 * d * d + 2, F64)


@given(seed=seeds, d=st.integers(1, 7), R=st.integers(1, 8))
def test_best_rank_R_attains_the_eigenvalue_bound(seed, d, R):
    W = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    Q, K = best_rank_R(W, R)
    assert Q.shape == (R, d) and K.shape == (R, d)
    # both are exact, to first order, for some S + E with ‖E‖₂ ≤ η‖S‖₂ (eigh's backward error, LAPACK UG §4.7);
    # squares, because the formula's error cancels to rounding once R reaches the inertia
    _, tol_sq = low_rank_error_tolerance(d, F64)
    assert abs(float(relative_error(W, Q, K)) ** 2 - _theory_error(sym(W), R) ** 2) <= 2 * tol_sq


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
    delta, _ = low_rank_error_tolerance(d, F64)  # best is at most δ above the exact optimum
    assert float(errs.min()) >= best - delta - _candidate_rounding(d)


@given(seed=seeds, d=st.integers(1, 6))
def test_rank_d_is_exact_and_feeds_a_layer(seed, d):
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(3, d, d, generator=g, dtype=F64)
    Q, K = best_rank_R(W, d)
    delta, _ = low_rank_error_tolerance(d, F64)
    assert float(relative_error(W, Q, K).max()) <= delta  # the exact error is 0; the computed one at most δ
    layer = BilinearMLP.from_weights(Q, K, torch.randn(3, 2, generator=g, dtype=F64), activation="identity")
    # entrywise ≤ Frobenius: δ‖S‖_F from the eigensolver, plus the einsum's γ_d Σ_r ‖q_r‖‖k_r‖ ≤ γ_d √d ‖S‖_F
    # (‖q_r‖ = ‖k_r‖ = (λ⁺_r + |λ⁻_r|)^½, and Σ|λ| ≤ √d ‖S‖_F)
    S = sym(W)
    tol = (delta + gamma(d, F64) * d**0.5) * torch.linalg.matrix_norm(S)
    assert bool(((sym(layer.unit_forms().detach()) - S).abs() <= tol[:, None, None]).all())


@given(seed=seeds, d=st.integers(2, 8))
def test_rank_one_eigenvalues_opposite_signs(seed, d):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, dtype=F64), torch.randn(d, generator=g, dtype=F64)
    lp, lm = rank_one_eigenvalues(q, k)
    assert float(lp) >= 0 >= float(lm)  # Cauchy–Schwarz: |q·k| ≤ ‖q‖‖k‖
    eig = torch.linalg.eigvalsh(sym(torch.outer(q, k)))
    scale = float(q.norm() * k.norm())  # ≥ ‖sym(qᵀk)‖₂ = max|λ±|
    # Weyl: eigvalsh within η‖S‖₂; the formula: a dot product and two norms of length d, γ_{d+2} of ‖q‖‖k‖
    tol = (eigh_backward_error(d, F64) + gamma(d + 2, F64)) * scale
    torch.testing.assert_close(eig[0], lm, rtol=0, atol=tol)
    torch.testing.assert_close(eig[-1], lp, rtol=0, atol=tol)
    # q ∥ k: one eigenvalue vanishes; q·2q and ‖q‖‖2q‖ each carry ≤ γ_{d+1} of 2‖q‖² = λ₊, so |λ₋| ≤ γ_{d+1} λ₊
    lp2, lm2 = rank_one_eigenvalues(q, 2 * q)
    assert abs(float(lm2)) <= gamma(d + 1, F64) * float(lp2)


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
    tolerance = 2 * low_rank_error_tolerance(d, torch.float64)[1]  # from the convention η = 64 d u (see above)
    for R in range(1, d + 1):
        built = relative_error(W, *best_rank_R(W, R))
        # squares, since the error cancels to rounding once R reaches the inertia
        assert bool(((curve[:, R - 1] ** 2 - built**2).abs() <= tolerance).all())
    assert bool((curve[:, 1:] <= curve[:, :-1]).all()) and bool((curve[:, -1] ** 2 <= tolerance / 2).all())
    with pytest.raises(ValueError, match="S: expected"):
        best_error_curve(torch.zeros(2, 3))


# ---------------------------------------------------------------------------
# terms_needed, descend_to_form, random_forms (chapter 9)


def _orthogonal(d: int, seed: int) -> torch.Tensor:
    G = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    return torch.linalg.qr(G).Q


def test_terms_needed_is_max_of_the_sign_counts():
    """prop-rank-R-reach: ``max(p, n)`` of ``U diag(μ) Uᵀ`` for chosen eigenvalues, zeros below the threshold."""
    O = _orthogonal(6, 0)
    spectra = [[3.0, 2.0, -1.0, 0.0, 0.0, 0.0], [-1.0, -2.0, -3.0, 1.0, 0.0, 0.0], [1.0, 1e-14, -1e-14, 0, 0, 0]]
    S = torch.stack([O @ torch.diag(torch.tensor(mu, dtype=F64)) @ O.T for mu in spectra])
    tol = eigh_backward_error(6, F64) * torch.linalg.matrix_norm(S)  # Weyl: η‖S‖₂ ≤ η‖S‖_F
    assert terms_needed(S, tol).tolist() == [2, 3, 1]
    assert terms_needed(S[0], 0.5).item() == 2 and terms_needed(S[0], 2.5).item() == 1
    with pytest.raises(ValueError, match="tol: expected numbers >= 0"):
        terms_needed(S, -1.0)
    with pytest.raises(ValueError, match="S: expected"):
        terms_needed(torch.zeros(2, 3), 0.0)


def test_descend_to_form_reaches_but_never_beats_the_best_terms():
    """prop-rank-R-reach, item 3: gradient descent from 16 starts of two terms ends at the minimum, none below it.

    The minimum is the eigenvalue formula (computed from the spectrum, not from the
    descent); the returned errors are checked against ``‖sym(W) − sym(W_j)‖_F / ‖sym(W)‖_F``
    of the moved starts, to the rounding of that ratio (:func:`_candidate_rounding`: ``S − sym(W_j)``
    and two norms).  Below the minimum: squares within ``2δ²`` (the formula's error cancels);
    above it ``10⁻⁶``, a convention for 600 steps of step 0.05 (as in chapter 9), not a bound.
    """
    W = torch.randn(8, 8, generator=torch.Generator().manual_seed(4), dtype=F64)
    torch.manual_seed(5)
    starts = BilinearMLP(8, 16, rank=2, dtype=F64)
    before = starts.Q.detach().clone()
    errors = descend_to_form(starts, W, lr=0.05, steps=600)
    minimum = float(_theory_error(sym(W), 2))
    assert errors.shape == (16,) and not torch.equal(starts.Q.detach(), before)
    with torch.no_grad():
        direct = torch.linalg.matrix_norm(sym(W) - sym(starts.unit_forms())) / torch.linalg.matrix_norm(sym(W))
    assert bool(((errors - direct).abs() <= 2 * _candidate_rounding(8)).all())
    _, tol_sq = low_rank_error_tolerance(8, F64)
    assert bool((errors**2 >= minimum**2 - 2 * tol_sq).all()) and bool((errors <= minimum + 1e-6).all())


def test_descend_to_form_bad_input():
    starts = BilinearMLP(3, 2, rank=1, dtype=F64)
    with pytest.raises(TypeError, match="starts: expected a BilinearMLP, got str"):
        descend_to_form("layer", torch.eye(3), lr=0.1, steps=1)
    with pytest.raises(ValueError, match=r"W: expected shape \(d, d\) = \(3, 3\), got \(2, 2\)"):
        descend_to_form(starts, torch.eye(2, dtype=F64), lr=0.1, steps=1)
    with pytest.raises(ValueError, match="lr: expected a real number > 0, got 0"):
        descend_to_form(starts, torch.eye(3, dtype=F64), lr=0, steps=1)
    with pytest.raises(ValueError, match="steps: expected an int >= 1, got 0"):
        descend_to_form(starts, torch.eye(3, dtype=F64), lr=0.1, steps=0)


def test_random_forms_families_have_their_spectra():
    """The three families of chapter 9: shapes, a positive definite family, and a planted part four terms reach.

    For the planted family ``W = P + N`` with ``p(P), n(P) ≤ 4`` and ``‖N‖_F = ‖sym P‖_F / 10``, the best four
    terms are at most ``‖N‖`` away, so their relative error is at most ``0.1 / (1 − 0.1)``.
    """
    forms = random_forms(10, 6, torch.Generator().manual_seed(7))
    assert list(forms) == ["Gaussian", "positive definite", "planted rank 4 + noise"]
    assert all(W.shape == (6, 10, 10) and W.dtype == F64 for W in forms.values())
    assert bool((torch.linalg.eigvalsh(sym(forms["positive definite"])) > 0).all())
    assert bool((best_error_curve(sym(forms["planted rank 4 + noise"]))[:, 3] <= 0.1 / 0.9).all())
    again = random_forms(10, 6, torch.Generator().manual_seed(7))
    assert all(torch.equal(forms[k], again[k]) for k in forms)
    with pytest.raises(ValueError, match="draws: expected an int >= 1, got 0"):
        random_forms(3, 0, torch.Generator())
    with pytest.raises(TypeError, match="generator: expected a torch.Generator, got int"):
        random_forms(3, 2, 7)


def test_half_d_terms_suffice_when_the_sign_counts_differ_by_at_most_one():
    """prop-rank-R-reach, "in particular" (round 9): ``R = ⌈d/2⌉`` terms represent every ``S`` whose numbers of
    positive and negative eigenvalues differ by at most one.  Counted over every admissible ``(p, n)`` for
    ``d ≤ 40`` (exact integers, not the proof's inequality), then built in float64: ``S = O diag(μ) Oᵀ`` with such
    signs is reproduced by ``best_rank_R`` at ``⌈d/2⌉`` terms to the tolerance of the test above, and not at one
    term fewer where ``max(p, n) = ⌈d/2⌉``."""
    for d in range(1, 41):
        for p in range(d + 1):
            for n in range(d + 1 - p):
                if abs(p - n) <= 1:
                    assert max(p, n) <= -(-d // 2), (d, p, n)
    for d, (p, n) in [(5, (3, 2)), (6, (3, 3)), (7, (4, 3)), (7, (3, 3)), (8, (4, 4)), (8, (4, 3))]:
        mu = torch.tensor([1.0 + i for i in range(p)] + [-1.0 - i for i in range(n)] + [0.0] * (d - p - n), dtype=F64)
        O = _orthogonal(d, d + 10 * p)
        S = O @ torch.diag(mu) @ O.T
        tolerance = 2 * low_rank_error_tolerance(d, F64)[1]  # squares of relative errors, as above
        half = -(-d // 2)
        assert relative_error(S, *best_rank_R(S, half)).item() ** 2 <= tolerance, (d, p, n)
        if max(p, n) == half:
            assert relative_error(S, *best_rank_R(S, half - 1)).item() ** 2 > tolerance, (d, p, n)
