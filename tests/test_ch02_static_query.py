"""Chapter 2 (a query computed from the token): thm-query-absorbed, its remarks, thm-static-query, rem-static-key.

The remarks ``rem-query-redundancy`` and ``rem-singular-query`` belong to
``thm-query-absorbed``; the package functions they use are tested here.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, inputs, seeds, sizes
from symbreak import costs, plotting, symbolic
from symbreak.layers import BilinearMLP, GlobalQueryMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound
from symbreak.symbolic.memory import static_key_identity


def _torch(M: sp.Matrix) -> torch.Tensor:
    return torch.tensor(np.array(M.tolist(), dtype=float), dtype=torch.float64)


# --- thm-query-absorbed: costs --------------------------------------------------------------


@pytest.mark.parametrize(("d", "m", "d_out"), [(1, 1, 1), (3, 5, 2), (8, 16, 8)])
def test_thm_query_absorbed_extra_parameters_and_flops(d, m, d_out):
    """thm-query-absorbed: the global query's extra parameters and FLOPs, against real layers.

    The parameters are counted with ``numel`` on ``GlobalQueryMLP`` and ``KeyValueMLP``; the FLOPs of the
    matrix products with torch's ``FlopCounterMode`` on a batch of tokens.  Both differences must equal the
    cost formulas' ``d²`` and ``2 d²``.
    """
    from torch.utils.flop_counter import FlopCounterMode

    query, memory = GlobalQueryMLP(d, m, d_out), KeyValueMLP(d, m, d_out)
    extra = costs.overhead("global_query", base="kv")
    counted = sum(p.numel() for p in query.parameters()) - sum(p.numel() for p in memory.parameters())
    assert counted == costs.evaluate(extra["parameters"], d=d, m=m, d_out=d_out) == d * d
    x = torch.randn(7, d, dtype=torch.float64)
    flops = []
    for layer in (query, memory):
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            layer.double()(x)
        flops.append(counter.get_total_flops() // 7)
    assert flops[0] - flops[1] == costs.evaluate(extra["flops"], d=d, m=m, d_out=d_out) == 2 * d * d


def test_thm_query_absorbed_parameter_count_matches_layer():
    """thm-query-absorbed: GlobalQueryMLP has d² + m d + m d_out parameters."""
    layer = GlobalQueryMLP(5, 7, 3)
    assert sum(p.numel() for p in layer.parameters()) == costs.evaluate(
        costs.parameters("global_query"), d=5, m=7, d_out=3
    )


# --- rem-query-redundancy ---------------------------------------------------------------------


@pytest.mark.parametrize(("d", "m"), [(1, 1), (2, 3), (3, 2)])
def test_rem_query_redundancy_gauge_identity(d, m):
    """rem-query-redundancy: (Q, K) → (Q A, K A^{-T}) leaves K' = K Qᵀ unchanged."""
    assert symbolic.query_gauge_identity(d, m) == sp.zeros(m, d)


@pytest.mark.parametrize(("d", "m", "seed"), [(1, 1, 0), (2, 5, 1), (3, 2, 2), (3, 4, 3), (4, 3, 4)])
def test_rem_query_redundancy_jacobian_rank(d, m, seed):
    """rem-query-redundancy: at an invertible Q the Jacobian of (Q, K) ↦ K Qᵀ has rank m d, nullity d²."""
    Q, N = symbolic.singular_query(d, d, seed)
    assert N.shape == (0, d) and Q.rank() == d
    J = symbolic.absorption_jacobian(Q, symbolic.integer_matrix(m, d, seed + 100))
    assert J.shape == (m * d, d * d + m * d)
    assert J.rank() == m * d
    assert J.shape[1] - J.rank() == d * d


@pytest.mark.parametrize(("d", "m", "seed"), [(2, 3, 0), (3, 2, 1), (3, 5, 2)])
def test_rem_query_redundancy_only_gauge_among_invertible(d, m, seed):
    """rem-query-redundancy, item 2: the keys K̂ that give an invertible Q̂ the absorbed keys K Qᵀ are K A^{-T}.

    K̂ is found by solving the linear equations K̂ Q̂ᵀ = K Qᵀ for unknown entries (sympy's ``linsolve``),
    not by the formula of the proof; the unique solution must be K A^{-T} with A = Q⁻¹ Q̂, and Q A = Q̂.
    """
    Q, _ = symbolic.singular_query(d, d, seed)
    Q_hat, _ = symbolic.singular_query(d, d, seed + 50)
    K = symbolic.integer_matrix(m, d, seed + 100)
    unknowns = sp.symbols(f"khat0:{m * d}")
    K_hat = sp.Matrix(m, d, unknowns)
    solutions = sp.linsolve(list(K_hat * Q_hat.T - K * Q.T), unknowns)
    assert len(solutions) == 1
    (solution,) = solutions
    assert all(value.is_Rational for value in solution)  # unique: no free unknowns remain
    K_solved = sp.Matrix(m, d, list(solution))
    A = Q.inv() * Q_hat
    assert Q * A == Q_hat
    assert K_solved == K * A.inv().T


def test_rem_query_redundancy_gauge_tangents_in_kernel():
    """rem-query-redundancy: the gauge tangents (Q E, −K Eᵀ) span the Jacobian's kernel at invertible Q."""
    d, m = 3, 4
    Q, _ = symbolic.singular_query(d, d, 7)
    K = symbolic.integer_matrix(m, d, 8)
    J = symbolic.absorption_jacobian(Q, K)
    tangents = []
    for a in range(d):
        for b in range(d):
            E = sp.zeros(d, d)
            E[a, b] = 1
            tangents.append(list(Q * E) + list(-K * E.T))
    T = sp.Matrix(tangents).T
    assert J * T == sp.zeros(m * d, d * d)
    assert T.rank() == d * d


def test_absorption_jacobian_bad_input():
    with pytest.raises(TypeError, match="Q: expected a sympy Matrix, got ndarray"):
        symbolic.absorption_jacobian(np.eye(2), sp.eye(2))
    with pytest.raises(ValueError, match=r"Q: expected a non-empty square matrix, got shape \(2, 3\)"):
        symbolic.absorption_jacobian(sp.ones(2, 3), sp.ones(2, 3))
    with pytest.raises(ValueError, match=r"K: expected shape \(m, d = 2\) with m >= 1, got \(2, 3\)"):
        symbolic.absorption_jacobian(sp.eye(2), sp.ones(2, 3))


# --- rem-singular-query -----------------------------------------------------------------------


@pytest.mark.parametrize(("d", "r", "seed"), [(2, 1, 0), (4, 2, 1), (5, 3, 2), (6, 1, 3), (8, 4, 4), (3, 3, 5)])
def test_rem_singular_query_construction(d, r, seed):
    """rem-singular-query: Q has rank exactly r and the d − r integer rows of N span {n : n Q = 0}."""
    Q, N = symbolic.singular_query(d, r, seed)
    assert Q.shape == (d, d) and Q.rank() == r
    assert N.shape == (d - r, d)
    assert (N * Q).is_zero_matrix
    if r < d:
        assert N.rank() == d - r
        assert all(e.is_integer for e in N) and all(e.is_integer for e in Q)


@pytest.mark.parametrize(("d", "r", "m"), [(2, 1, 1), (4, 2, 3), (5, 4, 2)])
def test_rem_singular_query_keys_in_subspace(d, r, m):
    """rem-singular-query: the absorbed keys K Qᵀ are orthogonal to the left null space of a rank-r Q."""
    assert symbolic.singular_query_identity(d, r, m) == sp.zeros(m, d - r)


@given(seed=seeds, r=st.integers(1, 4), act=st.sampled_from(ACTIVATIONS))
def test_rem_singular_query_layer_is_blind(seed, r, act):
    """rem-singular-query: σ(x Q Kᵀ) V does not change along the left null space of Q (n Q = 0)."""
    d, m = 5, 6
    Q, N = symbolic.singular_query(d, r, seed % 1000)
    torch.manual_seed(seed)
    layer = GlobalQueryMLP.from_weights(
        _torch(Q) / 8, torch.randn(m, d, dtype=torch.float64), torch.randn(m, 2, dtype=torch.float64), act
    )
    # dyadic inputs and integer shifts: x + z is exact in float64, so x and x + z are the intended points
    x = torch.round(8 * inputs(seed, 4, d)) / 8
    coefficients = torch.randint(-2, 3, (4, d - r), generator=torch.Generator().manual_seed(seed), dtype=torch.int64)
    z = coefficients.to(torch.float64) @ _torch(N)
    with torch.no_grad():
        diff = (layer(x + z) - layer(x)).abs()
        bound = forward_error_bound(layer, x + z) + forward_error_bound(layer, x)
    assert bool((diff <= bound).all())


def test_rem_singular_query_control_direction_is_seen():
    """rem-singular-query (control): a shift with z Q ≠ 0 changes the output by more than rounding."""
    d, m, r = 5, 6, 2
    Q, N = symbolic.singular_query(d, r, 3)
    torch.manual_seed(0)
    layer = GlobalQueryMLP.from_weights(
        _torch(Q) / 8, torch.randn(m, d, dtype=torch.float64), torch.randn(m, 2, dtype=torch.float64), "gelu"
    )
    x = torch.round(8 * inputs(0, 4, d)) / 8
    i = next(i for i in range(d) if any(Q.row(i)))
    seen = torch.zeros(d, dtype=torch.float64)
    seen[i] = 1  # e_i Q is row i of Q, which is not zero: the query sees this shift
    with torch.no_grad():
        diff = (layer(x + seen) - layer(x)).abs()
        bound = forward_error_bound(layer, x + seen) + forward_error_bound(layer, x)
    assert bool((diff > bound).any())


def test_singular_query_bad_input():
    with pytest.raises(ValueError, match="r: expected a rank 1 <= r <= d = 3, got 4"):
        symbolic.singular_query(3, 4)
    with pytest.raises(ValueError, match="r: expected an int >= 1, got 0"):
        symbolic.singular_query(3, 0)
    with pytest.raises(ValueError, match=r"r: expected a rank 1 <= r < d = 3 \(Q singular\), got 3"):
        symbolic.singular_query_identity(3, 3, 2)
    with pytest.raises(ValueError, match="seed: expected an int >= 0, got -1"):
        symbolic.integer_matrix(2, 2, -1)
    with pytest.raises(ValueError, match="bound: expected an int >= 1, got 0"):
        symbolic.integer_matrix(2, 2, 0, bound=0)


def test_integer_matrix_is_deterministic():
    A = symbolic.integer_matrix(3, 4, 11, bound=2)
    assert A == symbolic.integer_matrix(3, 4, 11, bound=2)
    assert A.shape == (3, 4) and all(e.is_integer and abs(e) <= 2 for e in A)


# --- thm-static-query -------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3])
def test_thm_static_query_affine_symbolic(d):
    """thm-static-query: a query map reading only x̃_0 = 1 gives a constant query and an affine score b + x·k."""
    query_difference, score_difference = symbolic.static_query_affine_identity(d)
    assert query_difference == sp.zeros(1, d + 1)
    assert score_difference == 0


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_static_query_with_bias(d, m, seed, act):
    """thm-static-query: rank-1 form on x̃ with q_j = e₀, k̃_j = (b_j, k_j) is the key–value memory with bias b_j."""
    torch.manual_seed(seed)
    keys = torch.randn(m, d + 1, dtype=torch.float64)  # (b_j, k_j) as rows
    V = torch.randn(m, 3, dtype=torch.float64)
    e0 = torch.zeros(m, d + 1, dtype=torch.float64)
    e0[:, 0] = 1
    bil = BilinearMLP.from_weights(e0, keys, V, activation=act)
    kv = KeyValueMLP.from_weights(keys, V, activation=act)  # σ(x̃ K̃ᵀ) V = σ(b + x Kᵀ) V
    x = inputs(seed, 5, d)
    x_aug = torch.cat([torch.ones(5, 1, dtype=torch.float64), x], dim=1)
    with torch.no_grad():
        diff = (bil(x_aug) - kv(x_aug)).abs()
        bound = forward_error_bound(bil, x_aug) + forward_error_bound(kv, x_aug)
    assert bool((diff <= bound).all())


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
def test_rem_static_key_symbolic(activation):
    """rem-static-key: static query → symmetric unit σ(b + x·k), gated unit σ(1)(b + x·k); static key → σ(b + x·k)."""
    assert static_key_identity(3, activation) == (0, 0, 0)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(["relu", "gelu", "silu", "tanh"]))
def test_rem_static_key_torch(d, m, seed, act):
    """rem-static-key: on x̃ = (1, x) the gated layer with static keys e₀ is the MLP, with static queries it is not."""
    from symbreak.layers import GatedMLP
    from symbreak.numerics import unit_roundoff

    torch.manual_seed(seed)
    keys, V = torch.randn(m, d + 1, dtype=torch.float64), torch.randn(m, 2, dtype=torch.float64)
    e0 = torch.zeros(m, d + 1, dtype=torch.float64)
    e0[:, 0] = 1
    x_tilde = torch.cat([torch.ones(6, 1, dtype=torch.float64), inputs(seed + 1, 6, d)], 1)
    memory = KeyValueMLP.from_weights(keys, V, act)
    static_key = GatedMLP.from_weights(keys, e0, V, act)
    static_query = GatedMLP.from_weights(e0, keys, V, act)
    sigma_one = float(symbolic.sigma_function(act)(sp.Integer(1)))  # σ(1) from the sympy expression, rounded once
    affine = KeyValueMLP.from_weights(keys, sigma_one * V, "identity")
    u = unit_roundoff(torch.float64)
    with torch.no_grad():
        beta = forward_error_bound(static_key, x_tilde) + forward_error_bound(memory, x_tilde)
        assert bool(((static_key(x_tilde) - memory(x_tilde)).abs() <= beta).all())
        # σ(1) V is rounded twice: relative error (1 + u)² − 1 < 3u
        beta_affine = forward_error_bound(affine, x_tilde, param_rel_error=3 * u)
        beta = forward_error_bound(static_query, x_tilde) + beta_affine
        assert bool(((static_query(x_tilde) - affine(x_tilde)).abs() <= beta).all())


def test_static_key_identity_rejects_bad_size():
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        static_key_identity(0)


def test_thm_static_query_unit_form_is_rank_one():
    """thm-static-query: the static-query unit's W_j = e₀ᵀ (b_j, k_j) has rank one, and its query factor is 1."""
    keys = torch.randn(4, 6, dtype=torch.float64)
    e0 = torch.zeros(4, 6, dtype=torch.float64)
    e0[:, 0] = 1
    W = BilinearMLP.from_weights(e0, keys, torch.randn(4, 2, dtype=torch.float64)).unit_forms()
    assert torch.equal(W[:, 0, :], keys) and torch.equal(W[:, 1:, :], torch.zeros(4, 5, 6, dtype=torch.float64))


# --- plotting helpers used by the chapter ------------------------------------------------------


def test_agreement_scatter_and_annotated_points():
    fig, axes = plotting.figure(ncols=2)
    plotting.agreement_scatter(axes[0], [(np.arange(3), np.arange(3))], ["same"], xlabel="a", ylabel="b")
    assert len(axes[0].collections) == 1 and len(axes[0].lines) == 1
    plotting.annotated_points(axes[1], [1.0, 2.0], [3.0, 4.0], ["p", "q"], offsets=[(0, 5), (0, -5)])
    assert [t.get_text() for t in axes[1].texts] == ["p", "q"]
    matplotlib.pyplot.close(fig)


def test_plotting_helpers_bad_input():
    fig, axes = plotting.figure()
    with pytest.raises(ValueError, match=r"labels: expected one label per pair \(1\), got 2"):
        plotting.agreement_scatter(axes[0], [(np.arange(3), np.arange(3))], ["a", "b"], xlabel="", ylabel="")
    with pytest.raises(ValueError, match="pairs: expected arrays of equal size in each pair, got 3 and 2"):
        plotting.agreement_scatter(axes[0], [(np.arange(3), np.arange(2))], ["a"], xlabel="", ylabel="")
    with pytest.raises(ValueError, match="ys, labels: expected 2 entries like xs, got 1 and 2"):
        plotting.annotated_points(axes[0], [1.0, 2.0], [1.0], ["a", "b"])
    with pytest.raises(ValueError, match="offsets: expected 2 entries like xs, got 1"):
        plotting.annotated_points(axes[0], [1.0, 2.0], [1.0, 2.0], ["a", "b"], offsets=[(0, 0)])
    with pytest.raises(
        ValueError, match=r"aligns: expected 2 entries, each 'left' or 'right', got \['centre', 'left'\]"
    ):
        plotting.annotated_points(axes[0], [1.0, 2.0], [1.0, 2.0], ["a", "b"], aligns=["centre", "left"])
    matplotlib.pyplot.close(fig)
