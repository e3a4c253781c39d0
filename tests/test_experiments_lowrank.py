"""thm-lowrank-floor: the low-rank task, its floor and least squares, against numpy and Monte Carlo references."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from symbreak.experiments import make_model, width_for_budget
from symbreak.experiments.lowrank import (
    LOWRANK_TASKS,
    block_floor,
    least_squares_error,
    make_lowrank_task,
    make_target,
    rank_floor,
    second_chaos,
    span_floor,
    tanh_second_moment,
)
from symbreak.experiments.sweep import projections

SHAPE = {"d": 6, "d_out": 3, "n_train": 200, "n_val": 50, "n_test": 300}


def _target(seed: int, odd: float = 0.0, d: int = 6, d_out: int = 3):
    return make_target(d, d_out, odd, torch.Generator().manual_seed(seed))


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.integers(0, 6))
def test_rank_floor_is_eckart_young_by_numpy_svd(seed, rank):
    """thm-lowrank-floor, first term: the best rank-k approximation's error from numpy's SVD."""
    t = _target(seed)
    expected = []
    for A, s in zip(t.A.numpy(), t.s.numpy(), strict=True):
        U, sv, Vt = np.linalg.svd(A / s)
        best = (U[:, :rank] * sv[:rank]) @ Vt[:rank]
        expected.append(2 * ((A / s - best) ** 2).sum())
    assert rank_floor(t, rank) == pytest.approx(np.mean(expected), rel=1e-9, abs=1e-12)  # tolerance: rounding


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.integers(0, 3))
def test_span_floor_is_the_distance_to_the_best_subspace_by_numpy_lstsq(seed, units):
    """thm-lowrank-floor, second term: the residual of projecting the forms onto their top principal directions."""
    t = _target(seed)
    F = (t.A / t.s[:, None, None]).flatten(1).numpy()
    basis = np.linalg.svd(F, full_matrices=False)[2][:units].T  # d² × units
    residual = F.T - basis @ np.linalg.lstsq(basis, F.T, rcond=None)[0] if units else F.T
    assert span_floor(t, units) == pytest.approx(2 * (residual**2).sum() / F.shape[0], rel=1e-9, abs=1e-12)


def test_block_floor_is_the_larger_term_and_falls_with_rank():
    t = _target(3)
    assert block_floor(t, 2, 2) == max(rank_floor(t, 4), span_floor(t, 2))
    assert rank_floor(t, 0) == pytest.approx(1.0)  # the whole variance: s is the exact standard deviation
    assert rank_floor(t, 6) == pytest.approx(0.0, abs=1e-12) and span_floor(t, 3) == pytest.approx(0.0, abs=1e-12)


def test_the_target_is_standardised_exactly_in_the_population():
    """Var y_o = 1 for x ~ N(0, I): Monte Carlo on 400 000 tokens, within 5 standard errors (stated)."""
    for odd in LOWRANK_TASKS.values():
        t = _target(7, odd)
        X = torch.randn(400_000, 6, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
        Y = t(X)
        se = (Y**2).std(0) / 400_000**0.5
        assert ((Y**2).mean(0) - 1).abs().max() < 5 * se.max()
        assert Y.mean(0).abs().max() < 5 * (Y.std(0) / 400_000**0.5).max()


def test_tanh_second_moment_against_monte_carlo():
    z = torch.randn(1_000_000, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    for scale in (0.3, 1.0, 2.5):
        values = torch.tanh(scale * z) ** 2
        assert abs(tanh_second_moment(scale) - float(values.mean())) < 5 * float(values.std()) / 1000
    with pytest.raises(ValueError, match="scale"):
        tanh_second_moment(-1.0)


def test_second_chaos_of_a_gated_unit_lies_in_the_span_of_its_projections():
    """thm-lowrank-floor, the rank step: C_h of h(x) = GELU(x·q)(x·k) is supported on span(q, k)."""
    weights, tokens = torch.Generator().manual_seed(10), torch.Generator().manual_seed(11)
    q, k = torch.randn(2, 5, generator=weights, dtype=torch.float64)
    X = torch.randn(300_000, 5, generator=tokens, dtype=torch.float64)
    h = (torch.nn.functional.gelu(X @ q) * (X @ k))[:, None]
    C = second_chaos(h, X)[0]
    P = torch.linalg.qr(torch.stack([q, k], 1)).Q
    inside = P @ P.T @ C @ P @ P.T
    terms = 0.5 * h * (X[:, :, None] * X[:, None, :] - torch.eye(5, dtype=torch.float64)).flatten(1)
    noise = float(torch.sqrt((terms.var(0) / X.shape[0]).sum()))
    assert float(torch.linalg.norm(C - inside)) < 4 * noise < float(torch.linalg.norm(inside))


def test_second_chaos_of_a_quadratic_form_is_the_form():
    A = _target(12).A[0]
    X = torch.randn(400_000, 6, generator=torch.Generator().manual_seed(13), dtype=torch.float64)
    h = (torch.einsum("nd,de,ne->n", X, A, X) - A.trace())[:, None]
    assert torch.allclose(second_chaos(h, X)[0], A, atol=0.05)  # stated: ~5 Monte Carlo errors at this n


def test_the_bilinear_block_is_a_quadratic_form_of_rank_at_most_2m():
    """thm-lowrank-floor for σ = id: f_o(x) = x B_o xᵀ with B_o = Σ_j V_jo sym(q_j k_jᵀ), rank ≤ 2m (eigenvalues)."""
    d, d_out, budget = 8, 4, 3 * (2 * 8 + 4)
    model = make_model("bilinear (σ = id)", d, d_out, budget, seed=4)
    m = width_for_budget("bilinear (σ = id)", d, d_out, budget)
    block = model.block
    X = torch.randn(50, d, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    Q, K, V = block.Q.detach(), block.K.detach(), block.V.detach()
    B = torch.einsum("jo,jd,je->ode", V, Q, K)
    B = (B + B.transpose(1, 2)) / 2
    with torch.no_grad():
        assert torch.allclose(block(X), torch.einsum("nd,ode,ne->no", X, B, X), rtol=1e-10, atol=1e-12)
    lam = torch.linalg.eigvalsh(B).abs().sort(-1, descending=True).values
    assert (lam[:, 2 * m :] < 1e-12 * lam[:, :1]).all() and projections("bilinear (σ = id)") == 2


def test_least_squares_recovers_a_quadratic_target_and_matches_numpy():
    test, _, _ = make_lowrank_task("full-rank quadratic", seed=0, **SHAPE)
    assert least_squares_error(test) < 1e-20
    ones = np.ones((test.X_train.shape[0], 1))
    Xa = np.hstack([ones, test.X_train.numpy()])
    coef = np.linalg.lstsq(Xa, test.Y_train.numpy(), rcond=None)[0]
    pred = np.hstack([np.ones((test.X_test.shape[0], 1)), test.X_test.numpy()]) @ coef
    expected = ((pred - test.Y_test.numpy()) ** 2).mean() / test.Y_test.var().item()
    assert least_squares_error(test, quadratic=False) == pytest.approx(expected, rel=1e-9)


def test_the_seed_varies_the_teacher_and_the_data_and_the_splits_are_disjoint():
    a, va, ta = make_lowrank_task("full-rank quadratic", seed=0, **SHAPE)
    b, _, tb = make_lowrank_task("full-rank quadratic", seed=1, **SHAPE)
    assert not torch.equal(ta.A, tb.A) and not torch.equal(a.X_train, b.X_train)
    assert torch.equal(a.X_train, va.X_train) and a.X_test.shape[0] == 300 and va.X_test.shape[0] == 50
    assert not torch.isin(va.X_test[:, 0], a.X_test[:, 0]).any()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="name"):
        make_lowrank_task("nope", seed=0, **SHAPE)
    with pytest.raises(ValueError, match="rank"):
        rank_floor(_target(0), -1)
    with pytest.raises(ValueError, match="units"):
        span_floor(_target(0), 1.5)
    with pytest.raises(TypeError, match="generator"):
        make_target(3, 2, 0.0, 5)
    with pytest.raises(ValueError, match="values, X"):
        second_chaos(torch.zeros(3, 1), torch.zeros(4, 2))


def test_the_odd_part_of_the_second_task_has_no_second_chaos():
    """thm-lowrank-floor with an odd e_o: the projection of y_o onto H_2 is (x A_o xᵀ − tr A_o)/s_o, so the floor
    of the quadratic + odd task is computed from A_o / s_o alone (Monte Carlo, within 5 of its errors: stated)."""
    t = _target(14, odd=LOWRANK_TASKS["quadratic + odd"], d=4, d_out=2)
    X = torch.randn(400_000, 4, generator=torch.Generator().manual_seed(15), dtype=torch.float64)
    odd = torch.tanh(X @ t.U) / t.s  # the odd part alone
    C = second_chaos(odd, X)
    outer = (X[:, :, None] * X[:, None, :] - torch.eye(4, dtype=torch.float64)).flatten(1)
    terms = 0.5 * odd[:, :, None] * outer[:, None, :]  # (tokens, outputs, 16)
    noise = torch.sqrt((terms.var(0) / X.shape[0]).sum(-1))  # rms Monte Carlo error per output
    assert (torch.linalg.norm(C.flatten(1), dim=1) < 5 * noise).all()
    C_full = second_chaos(t(X), X)
    assert torch.allclose(C_full, t.A / t.s[:, None, None], atol=0.05)  # stated: ~5 Monte Carlo errors at this n
