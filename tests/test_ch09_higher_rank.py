"""Chapter 9, the rank-R form: ``prop-higher-rank``, ``prop-rank-R-reach``, ``rem-rank-R-hidden-symmetry``
and ``prop-gated-rank-R``.

Tolerances: layer comparisons use the rounding bound ``β(x)`` of
:func:`symbreak.numerics.forward_error_bound`; eigenvalue counts treat as zero
what lies within ``γ_{R+1}‖T_j‖_F + η ‖S_j‖_F`` (rounding of the computed
form plus, by Weyl's theorem, the eigensolver's backward error ``η = 64 d u``, a
stated convention: :func:`symbreak.numerics.eigh_backward_error`); relative errors of
best terms use ``δ`` and ``δ²`` of :func:`symbreak.numerics.low_rank_error_tolerance`
(squares where the error cancels), as in ``tests/test_approximation.py``.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, equal_within_rounding, exceeds_rounding, inputs, seeds
from symbreak import costs, symbolic
from symbreak.approximation import best_error_curve, best_rank_R, relative_error, sym
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, rank_R_charges
from symbreak.numerics import eigh_backward_error, forward_error_bound, gamma, low_rank_error_tolerance, unit_roundoff
from symbreak.symbolic.higher_rank import gated_unit_gauge_change, gauge_commutation_defect, rank_R_charge_rates
from symbreak.symmetry import compare_outputs, exchange, gauge

F64 = torch.float64
U = unit_roundoff(F64)
ZERO_AT_ORIGIN = [a for a in ACTIVATIONS if a not in ("sigmoid", "softplus")]


def _layer(d: int, m: int, rank: int, act: str, seed: int) -> BilinearMLP:
    torch.manual_seed(seed)
    return BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)


def _wide_gated(layer: BilinearMLP, act: str) -> GatedMLP:
    """The gated rank-R layer with the factors of ``layer``: ``GatedMLP.from_terms`` (checked term by term below)."""
    return GatedMLP.from_terms(layer.Q, layer.K, layer.V, act)


# --------------------------------------------------------------------------- prop-higher-rank


@pytest.mark.parametrize("R", [1, 2, 3])
def test_prop_higher_rank_symbolic(R):
    """prop-higher-rank: Σ_j σ(x W_j xᵀ) v_j with W_j = Σ_r q_{j,r}ᵀ k_{j,r} is the stacked rank-R layer."""
    assert symbolic.rank_R_layer_identity(3, 2, 2, R) == sp.zeros(1, 2)


def test_prop_higher_rank_rank_d_is_the_full_form_symbolic():
    """prop-higher-rank: at R = d, q_{j,r} = e_r and k_{j,r} = W_j[r] give every W_j (symbolic, any σ)."""
    assert symbolic.rank_d_full_form_identity(3, 2, 2) == sp.zeros(1, 2)
    assert symbolic.rank_d_full_form_identity(2, 1, 1, "silu") == sp.zeros(1, 1)


def test_prop_higher_rank_parameter_count():
    """prop-higher-rank: 2Rmd + m d_out parameters; R = 1 is the rank-1 form, R = d the full form."""
    rank_R = costs.parameters("rankR")
    assert sp.simplify(rank_R.subs(costs.R, 1) - costs.parameters("rank1")) == 0
    assert sp.simplify(rank_R.subs(costs.R, costs.d) - costs.parameters("full")) == 0
    layer = _layer(5, 4, 3, "silu", 0)
    assert sum(p.numel() for p in layer.parameters()) == costs.evaluate(rank_R, d=5, m=4, R=3)


@given(d=st.integers(1, 6), m=st.integers(1, 5), R=st.integers(1, 4), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_higher_rank_layer_is_the_sum_over_terms(d, m, R, seed, act):
    """prop-higher-rank: BilinearMLP(rank=R) = σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V evaluated term by term, within 2β(x)."""
    layer = _layer(d, m, R, act, seed)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        scores = sum((x @ layer.Q[r].T) * (x @ layer.K[r].T) for r in range(R))
        term_sum = layer.activation(scores) @ layer.V
        assert bool(((layer(x) - term_sum).abs() <= 2 * forward_error_bound(layer, x)).all())


@given(
    d=st.integers(2, 5),
    R=st.integers(1, 4),
    seed=seeds,
    act=st.sampled_from(ZERO_AT_ORIGIN),
    packed=st.booleans(),
)
def test_prop_higher_rank_equals_the_full_form(d, R, seed, act, packed):
    """prop-higher-rank: FullBilinearMLP.from_bilinear computes the rank-R layer.

    The full form's score error γ_{d²+R+1}|x|T_j|x|ᵀ is covered by the layer's
    bound with a parameter error e = γ_{d²} (needs σ(0) = 0 and e ≥ γ_m).
    """
    m, R = d * d, min(R, d)  # the largest m with γ_m ≤ γ_{d²}; R ≤ d keeps d² ≥ R + 2
    layer = _layer(d, m, R, act, seed)
    e = gamma(d * d, F64)
    assert 2 * e + e * e >= gamma(d * d + R + 1, F64) and e >= gamma(m, F64)
    x = inputs(seed, 7, d)
    full = FullBilinearMLP.from_bilinear(layer, packed=packed)
    with torch.no_grad():
        bound = forward_error_bound(layer, x) + forward_error_bound(layer, x, param_rel_error=e)
        assert bool(((full(x) - layer(x)).abs() <= bound).all())


@given(d=st.integers(1, 6), seed=seeds)
def test_prop_higher_rank_rank_d_reaches_every_W(d, seed):
    """prop-higher-rank: with q_{j,r} = e_r and k_{j,r} = W_j[r], the unit forms are exactly W_j."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(3, d, d, generator=g, dtype=F64)
    Q = torch.eye(d, dtype=F64)[:, None, :].expand(d, 3, d).contiguous()
    layer = BilinearMLP.from_weights(Q, W.permute(1, 0, 2).contiguous(), torch.randn(3, 2, generator=g, dtype=F64))
    assert torch.equal(layer.unit_forms(), W)


# --------------------------------------------------------------------------- prop-rank-R-reach


@pytest.mark.parametrize(("d", "R"), [(3, 1), (4, 2), (4, 3), (3, 4)])
def test_prop_rank_R_reach_split(d, R):
    """prop-rank-R-reach: Σ_r sym(q_rᵀ k_r) = AᵀA − BᵀB with a_r = (q_r + k_r)/2, b_r = (q_r − k_r)/2."""
    assert symbolic.rank_R_polarization_identity(d, R) == sp.zeros(d, d)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("R", [1, 2, 3, 4, 6])
def test_prop_rank_R_reach_inertia_exact(R, seed):
    """prop-rank-R-reach, item 1, exactly: a sum of R integer terms has at most R eigenvalues of each sign."""
    Q = symbolic.integer_matrix(R, 6, seed=3 * seed)
    K = symbolic.integer_matrix(R, 6, seed=3 * seed + 1)
    p, n, z = symbolic.inertia(symbolic.sym(Q.T * K))
    assert p <= R and n <= R and p + n + z == 6


def test_inertia_counts_exactly():
    """inertia: Descartes' rule on the characteristic polynomial of a symmetric matrix."""
    assert symbolic.inertia(sp.diag(3, -1, 0, 2, 0)) == (2, 1, 2)
    assert symbolic.inertia(sp.eye(4)) == (4, 0, 0)
    assert symbolic.inertia(sp.zeros(2, 2)) == (0, 0, 2)
    assert symbolic.inertia(sp.Matrix([[0, 1], [1, 0]])) == (1, 1, 0)
    assert symbolic.inertia(sp.Matrix([[sp.Rational(1, 3), 1], [1, 3]])) == (1, 0, 1)
    G = symbolic.integer_matrix(5, 5, seed=1)
    assert symbolic.inertia(-(G * G.T) - sp.eye(5)) == (0, 5, 0)


def test_inertia_bad_input():
    with pytest.raises(TypeError, match="S: expected a sympy Matrix, got list"):
        symbolic.inertia([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match=r"S: expected a non-empty square matrix, got shape \(2, 3\)"):
        symbolic.inertia(sp.zeros(2, 3))
    with pytest.raises(ValueError, match="S: expected rational entries"):
        symbolic.inertia(sp.Matrix([[sp.Symbol("a"), 0], [0, 1]]))
    with pytest.raises(ValueError, match="S: expected a symmetric matrix"):
        symbolic.inertia(sp.Matrix([[1, 2], [0, 1]]))


@given(R=st.integers(1, 4), seed=seeds)
def test_prop_rank_R_reach_counts_on_layers(R, seed):
    """prop-rank-R-reach: sym(W_j) of BilinearMLP(rank=R) has at most R eigenvalues of each sign (= R generically)."""
    d = 2 * R + 1
    layer = _layer(d, 6, R, "silu", seed)
    with torch.no_grad():
        S = sym(layer.unit_forms())
        T = torch.einsum("rjd,rje->jde", layer.Q.abs(), layer.K.abs())
        tau = gamma(R + 1, F64) * torch.linalg.matrix_norm(T) + eigh_backward_error(d, F64) * torch.linalg.matrix_norm(
            S
        )
        mu = torch.linalg.eigvalsh(S)
    p, n = (mu > tau[:, None]).sum(-1), (mu < -tau[:, None]).sum(-1)
    assert bool((p <= R).all() and (n <= R).all())


@given(d=st.integers(2, 7), R=st.integers(1, 8), seed=seeds)
def test_prop_rank_R_reach_best_error(d, R, seed):
    """prop-rank-R-reach, item 3: best_rank_R attains the eigenvalue formula, and random R-term sums never beat it."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(d, d, generator=g, dtype=F64)
    best = relative_error(W, *best_rank_R(W, R))
    formula = float(best_error_curve(sym(W))[min(R, d) - 1])  # R ≥ d keeps every eigenvalue
    delta, tol_sq = low_rank_error_tolerance(d, F64)
    assert abs(float(best) ** 2 - formula**2) <= 2 * tol_sq  # squares: the error cancels once R reaches the inertia
    # random candidates, each with its optimal overall scale <S, A>/‖A‖²
    Q = torch.randn(R, 500, d, generator=g, dtype=F64)
    K = torch.randn(R, 500, d, generator=g, dtype=F64)
    A = sym(torch.einsum("rni,rnj->nij", Q, K))
    S = sym(W)
    scale = (A * S).sum((-1, -2)) / (A**2).sum((-1, -2))
    errors = torch.linalg.matrix_norm(S - scale[:, None, None] * A) / torch.linalg.matrix_norm(S)
    # best is within δ of the optimum; a candidate's ratio is computed to 6γ_{2d²+2} (tests/test_approximation.py)
    assert float(errors.min()) >= float(best) - delta - 6 * gamma(2 * d * d + 2, F64)


def test_prop_rank_R_reach_definite_needs_d_terms():
    """prop-rank-R-reach: a positive definite form keeps an error until R = d; a balanced one is exact at ⌈d/2⌉."""
    g = torch.Generator().manual_seed(3)
    d = 6
    G = torch.randn(2 * d, d, generator=g, dtype=F64)
    definite = G.T @ G / (2 * d)
    errors = [float(relative_error(definite, *best_rank_R(definite, R))) for R in range(1, d + 1)]
    delta, _ = low_rank_error_tolerance(d, F64)  # an exact representation's computed error is at most δ
    assert min(errors[:-1]) > 1e-3 and errors[-1] <= delta
    O = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64)).Q
    balanced = O @ torch.diag(torch.tensor([3.0, -2.0, 1.5, -1.0, 0.5, -0.25], dtype=F64)) @ O.T
    assert float(relative_error(balanced, *best_rank_R(balanced, 3))) <= delta
    assert float(relative_error(balanced, *best_rank_R(balanced, 2))) > 0.1


# --------------------------------------------------------------------------- rem-rank-R-hidden-symmetry


@pytest.mark.parametrize(("d", "R"), [(2, 1), (3, 1), (4, 1), (4, 2), (5, 2), (4, 3), (5, 3), (3, 3)])
def test_rem_rank_R_hidden_symmetry_dimension(d, R):
    """rem-rank-R-hidden-symmetry: rank of (Q, K) ↦ sym(Σ_r q_rᵀ k_r) is R(2d − 2R + 1) (2R ≤ d), else d(d+1)/2."""
    J = symbolic.rank_R_form_jacobian(d, R, seed=0)
    assert J.shape == (d * (d + 1) // 2, 2 * R * d)
    assert J.rank() == symbolic.rank_R_form_dimension(d, R)
    if 2 * R <= d:
        assert 2 * R * d - J.rank() == R * (2 * R - 1)  # dim O(R, R)


def test_rank_R_form_dimension_values_and_errors():
    assert symbolic.rank_R_form_dimension(8, 1) == 15
    assert symbolic.rank_R_form_dimension(8, 4) == 36 == 8 * 9 // 2
    assert symbolic.rank_R_form_dimension(8, 7) == 36
    with pytest.raises(ValueError, match="R: expected an int >= 1, got 0"):
        symbolic.rank_R_form_dimension(3, 0)
    with pytest.raises(ValueError, match="seed: expected an int >= 0, got -1"):
        symbolic.rank_R_form_jacobian(3, 1, seed=-1)


@pytest.mark.parametrize(("d", "R"), [(2, 1), (3, 2), (2, 2)])
def test_rem_rank_R_hidden_symmetry_charges_symbolic(d, R):
    """rem-rank-R-hidden-symmetry: along gradient flow of any loss F(sym W), QᵀQ − KᵀK and q_r·k_s − q_s·k_r stay."""
    rate_C, rate_D = rank_R_charge_rates(d, R)
    assert rate_C.shape == rate_D.shape == (R, R)
    assert rate_C.is_zero_matrix and rate_D.is_zero_matrix


@pytest.mark.parametrize("seed", range(3))
def test_rem_rank_R_hidden_symmetry_charges_torch(seed):
    """rem-rank-R-hidden-symmetry: jvp of rank_R_charges along −∇L vanishes for a layer's loss, not for another loss.

    Threshold 10⁻¹² of the rate of QᵀQ alone: a convention (the rates are sums of a few hundred products of
    order-1 numbers; their rounding is of order 10⁻¹⁵).  The control loss ‖Q‖² + (q·k)-free terms does not see
    only sym(W_j), and its rate of C is of the order of the rate of QᵀQ.
    """
    layer = _layer(6, 5, 3, "silu", seed)
    x, y = inputs(seed, 32, 6), inputs(seed + 1, 32, layer.d_out)
    Q, K = layer.Q.detach(), layer.K.detach()

    def rates(loss):
        flow = tuple(
            -g for g in torch.autograd.grad(loss, [layer.Q, layer.K], allow_unused=True, materialize_grads=True)
        )
        _, (rate_C, rate_D) = torch.func.jvp(rank_R_charges, (Q, K), flow)
        _, rate_QQ = torch.func.jvp(lambda A: torch.einsum("rjd,sjd->jrs", A, A), (Q,), (flow[0],))
        return rate_C, rate_D, rate_QQ.abs().max()

    rate_C, rate_D, scale = rates(((layer(x) - y) ** 2).mean())
    assert float(scale) > 1e-3
    assert float(rate_C.abs().max() / scale) < 1e-12 and float(rate_D.abs().max() / scale) < 1e-12
    control_C, _, control_scale = rates((layer.Q**2).sum())
    assert float(control_C.abs().max() / control_scale) > 0.5


def test_rank_R_charges_are_the_parts_of_4ABt():
    """rem-rank-R-hidden-symmetry: rank_R_charges = (sym, −antisym) parts of 4 A Bᵀ, a = (q+k)/2, b = (q−k)/2.

    Integer factors, so both sides are computed exactly.
    """
    g = torch.Generator().manual_seed(2)
    Q = torch.randint(-4, 5, (3, 4, 5), generator=g).to(F64)
    K = torch.randint(-4, 5, (3, 4, 5), generator=g).to(F64)
    C, D = rank_R_charges(Q, K)
    a, b = (Q + K) / 2, (Q - K) / 2
    four_ABt = 4 * torch.einsum("rjd,sjd->jrs", a, b)
    assert torch.equal(C, (four_ABt + four_ABt.mT) / 2) and torch.equal(D, -(four_ABt - four_ABt.mT) / 2)
    assert torch.equal(C[:, 0, 0], (Q[0] ** 2).sum(-1) - (K[0] ** 2).sum(-1))
    with pytest.raises(ValueError):
        rank_R_charges(Q, K[:, :, :4])


@pytest.mark.parametrize("seed", range(4))
def test_rem_rank_R_hidden_symmetry_boost_keeps_the_layer(seed):
    """rem-rank-R-hidden-symmetry: an exact O(2,2) boost changes W_j but not sym(W_j), nor the output."""
    g = torch.Generator().manual_seed(seed)
    Q = torch.randint(-3, 4, (2, 5, 6), generator=g).to(F64)
    K = torch.randint(-3, 4, (2, 5, 6), generator=g).to(F64)
    layer = BilinearMLP.from_weights(Q, K, torch.randn(5, 3, generator=g, dtype=F64), activation="gelu")
    a, b = (Q + K) / 2, (Q - K) / 2
    a2, b2 = a.clone(), b.clone()
    a2[0], b2[1] = 1.25 * a[0] + 0.75 * b[1], 0.75 * a[0] + 1.25 * b[1]
    boosted = BilinearMLP.from_weights(a2 + b2, a2 - b2, layer.V, activation="gelu")
    with torch.no_grad():
        assert torch.equal(sym(boosted.unit_forms()), sym(layer.unit_forms()))
        assert not torch.equal(boosted.unit_forms(), layer.unit_forms())
    assert equal_within_rounding(layer, boosted, inputs(seed, 7, 6))


# --------------------------------------------------------------------------- prop-gated-rank-R


@pytest.mark.parametrize(("d", "m", "R", "act"), [(3, 2, 2, None), (2, 2, 3, "silu"), (3, 1, 2, "relu")])
def test_prop_gated_rank_R_symbolic(d, m, R, act):
    """prop-gated-rank-R: Σ_j σ(x Q_j)·(x K_j) v_j is the gated MLP with Rm units and values tied."""
    assert symbolic.gated_rank_R_identity(d, m, 2, R, act) == sp.zeros(1, 2)


@given(d=st.integers(1, 6), m=st.integers(1, 5), R=st.integers(1, 4), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_gated_rank_R_is_a_wide_gated_mlp(d, m, R, seed, act):
    """prop-gated-rank-R: term-by-term Σ_r σ(x·q_{j,r})(x·k_{j,r}) v_j equals the wide tied GatedMLP within 2β."""
    layer = _layer(d, m, R, act, seed)
    wide = _wide_gated(layer, act)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        terms = sum((wide.activation(x @ layer.Q[r].T) * (x @ layer.K[r].T)) @ layer.V for r in range(R))
        assert bool(((wide(x) - terms).abs() <= 2 * forward_error_bound(wide, x)).all())
    assert sum(p.numel() for p in layer.parameters()) == 2 * R * m * d + m * layer.d_out


@given(seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_gated_rank_R_permutations_keep_it(seed, act):
    """prop-gated-rank-R: a permutation of the R terms keeps the gated rank-R layer, for every σ."""
    layer = _layer(7, 4, 3, act, seed)
    P = torch.eye(3, dtype=F64)[[2, 0, 1]]
    assert equal_within_rounding(_wide_gated(layer, act), _wide_gated(gauge(layer, P), act), inputs(seed, 7, 7))


@pytest.mark.parametrize("seed", range(4))
def test_prop_gated_rank_R_gauge_broken_to_permutations(seed):
    """prop-gated-rank-R: A = 2I keeps the gated layer for ReLU and identity, not SiLU or GELU (symmetric: always)."""
    x = inputs(seed, 16, 7)
    for act, kept in (("relu", True), ("identity", True), ("silu", False), ("gelu", False)):
        layer = _layer(7, 4, 3, act, seed)
        moved = gauge(layer, 2 * torch.eye(3, dtype=F64))
        assert equal_within_rounding(_wide_gated(layer, act), _wide_gated(moved, act), x) is kept
        assert equal_within_rounding(layer, moved, x)


@pytest.mark.parametrize("seed", range(4))
def test_prop_gated_rank_R_exchange(seed):
    """prop-gated-rank-R with thm-exchange: the symmetric rank-R form keeps q ↔ k, the gated one breaks it (SiLU)."""
    x = inputs(seed, 16, 7)
    layer = _layer(7, 4, 3, "silu", seed)
    assert equal_within_rounding(layer, exchange(layer), x)
    wide = _wide_gated(layer, "silu")
    assert exceeds_rounding(wide, exchange(wide), x)


def test_new_symbolic_functions_reject_bad_sizes():
    with pytest.raises(ValueError, match="R: expected an int >= 1, got 0"):
        symbolic.rank_R_layer_identity(2, 1, 1, 0)
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.rank_d_full_form_identity(0, 1, 1)
    with pytest.raises(ValueError, match="R: expected an int >= 1, got -2"):
        symbolic.rank_R_polarization_identity(3, -2)
    with pytest.raises(ValueError, match="m: expected an int >= 1, got 0"):
        symbolic.gated_rank_R_identity(2, 0, 1, 1)


# --------------------------------------------------------------------------- rem-gated-rank-R-hypotheses


def test_rem_gated_rank_R_hypotheses_independence_symbolic():
    """rem-gated-rank-R-hypotheses, item 1 (prop-gated-rank-R needs independent columns, so 2R ≤ d).

    d = R = 2, q_1 = k_1 = e_1, q_2 = e_2, k_2 = 0, shear A: h_j kept for an undefined σ, yet σ(zA) ≠ σ(z)A for SiLU.
    """
    Q, K, A = sp.eye(2), sp.Matrix([[1, 0], [0, 0]]), sp.Matrix([[1, 2], [0, 1]])
    assert gated_unit_gauge_change(Q, K, A, None) == 0
    assert gated_unit_gauge_change(Q, K, A, "silu") == 0
    defect = gauge_commutation_defect(A, sp.Matrix([[1, 0]]), "silu")
    assert defect[0] == 0 and sp.simplify(defect[1] - (2 / (1 + sp.exp(-2)) - 2 / (1 + sp.exp(-1)))) == 0
    assert defect[1] != 0
    # with independent columns (d = 4) the same shear changes the unit: the equivalence bites
    assert gated_unit_gauge_change(symbolic.matrix("q", 4, 2), symbolic.matrix("k", 4, 2), A, "relu") != 0


@pytest.mark.parametrize("seed", range(3))
def test_rem_gated_rank_R_hypotheses_independence_torch(seed):
    """rem-gated-rank-R-hypotheses, item 1, on layers: the degenerate unit keeps its output, a generic one does not."""
    shear = torch.tensor([[1.0, 2.0], [0.0, 1.0]], dtype=F64)
    degenerate = BilinearMLP.from_weights(
        torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]]], dtype=F64),
        torch.tensor([[[1.0, 0.0]], [[0.0, 0.0]]], dtype=F64),
        torch.ones(1, 2, dtype=F64),
        "silu",
    )
    generic = _layer(4, 1, 2, "silu", seed)
    for unit, kept in ((degenerate, True), (generic, False)):
        moved = gauge(unit, shear)
        before = GatedMLP.from_terms(unit.Q, unit.K, unit.V, "silu")
        after = GatedMLP.from_terms(moved.Q, moved.K, moved.V, "silu")
        assert compare_outputs(before, after, inputs(seed, 32, unit.d)).within is kept


def test_rem_gated_rank_R_hypotheses_sigma_at_zero():
    """rem-gated-rank-R-hypotheses, item 2: σ(t) = 1 + t keeps exactly the gauges whose columns sum to 1."""
    Q, K = symbolic.matrix("q", 4, 2), symbolic.matrix("k", 4, 2)
    affine = lambda t: 1 + t  # noqa: E731
    assert gated_unit_gauge_change(Q, K, sp.Matrix([[2, 0], [-1, 1]]), affine) == 0
    assert gated_unit_gauge_change(Q, K, sp.Matrix([[3, -1], [-2, 2]]), affine) == 0
    assert gated_unit_gauge_change(Q, K, 2 * sp.eye(2), affine) != 0
    assert gated_unit_gauge_change(Q, K, sp.Matrix([[1, 1], [0, 1]]), affine) != 0
    z = symbolic.row("z", 2)
    A = sp.Matrix([[2, 0], [-1, 1]])
    assert gauge_commutation_defect(A, z, affine) == sp.zeros(1, 2)
    assert gauge_commutation_defect(A, sp.Matrix([[1, 0]]), "silu") != sp.zeros(1, 2)  # not monomial: SiLU breaks it


def test_gated_unit_gauge_change_bad_input():
    with pytest.raises(ValueError, match=r"A: expected shape \(2, 2\)"):
        gated_unit_gauge_change(sp.eye(2), sp.eye(2), sp.eye(3))
    with pytest.raises(ValueError, match="A: expected an invertible matrix"):
        gated_unit_gauge_change(sp.eye(2), sp.eye(2), sp.zeros(2, 2))
