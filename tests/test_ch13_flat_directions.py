"""Chapter 13 (flat directions): prop-flat-directions and the helpers the chapter adds.

The facts asserted here are the chapter's claim and the tools that measure it:

* ``prop-flat-directions`` — a tangent ``ξ = Aθ`` of a one-parameter symmetry
  satisfies ``H ξ = −Aᵀ∇L`` (symbolically, for one unit), so at a critical
  point the Hessian has at least as many null directions as the tangents span:
  ``m`` per layer for the symmetric rank-1 form ``(q_j, −k_j)`` and for the
  gated form ``(k_j, −v_j)``, one more per unit for a positively homogeneous σ,
  ``R(2R−1)`` per unit at rank ``R`` (the ``GL(R)`` gauge and ``R(R−1)``
  generators from the transpose symmetry), none for a plain GELU MLP;
* the closed-form Jacobian and Hessian agree with automatic differentiation
  within their derived rounding bounds, and the damped Newton iteration
  ``settle`` reaches the gradient's rounding floor;
* moving along a symmetry leaves the loss unchanged (within the loss's rounding
  bound) and changes the largest Hessian eigenvalue.
"""

from __future__ import annotations

import copy
import dataclasses

import matplotlib
import numpy as np
import pytest
import sympy as sp
import torch

from helpers import equal_within_rounding, exceeds_rounding
from symbreak import BilinearMLP, GatedMLP, KeyValueMLP, symbolic
from symbreak import dynamics as D
from symbreak.decide import decide_zero
from symbreak.dynamics.settling import make_layer, perturbed_copy, settle_in_halves
from symbreak.dynamics.spectrum import rescaling_curvatures, rescaling_sweep
from symbreak.dynamics.tangents import net_parameters, predicted_span, quadratic_map_dimension, random_alignment
from symbreak.numerics import gamma, unit_roundoff
from symbreak.plotting import figure, scientific, spectra_strip
from symbreak.symmetry import inverse_scale

F64 = torch.float64
U64 = unit_roundoff(F64)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one thread is faster on a shared machine; restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _layer(form: str, act: str, d: int = 4, m: int = 3, d_out: int = 2, rank: int = 1):
    if form == "key-value":
        return KeyValueMLP(d, m, d_out, activation=act, dtype=F64)
    if form == "gated":
        return GatedMLP(d, m, d_out, activation=act, dtype=F64)
    return BilinearMLP(d, m, d_out, rank=rank, activation=act, dtype=F64)


LAYERS = [
    ("key-value", "relu", 1),
    ("key-value", "gelu", 1),
    ("symmetric", "silu", 1),
    ("symmetric", "relu", 1),
    ("symmetric", "gelu", 2),
    ("gated", "silu", 1),
    ("gated", "relu", 1),
    ("gated", "identity", 1),
]


def _data(layer, n: int = 40, seed: int = 0):
    X = torch.randn(n, layer.d, generator=torch.Generator().manual_seed(seed), dtype=F64)
    Y = torch.randn(n, layer.d_out, generator=torch.Generator().manual_seed(seed + 1), dtype=F64)
    return X, Y


def _settled(form: str, act: str, *, m: int = 3, rank: int = 1, noise: float = 0.0, seed: int = 0):
    """A layer settled at a critical point of a teacher of its own form (plus optional label noise)."""
    torch.manual_seed(seed)
    teacher = _layer(form, act, m=m, rank=rank)
    X, Y = D.teacher_data(teacher, teacher.d, 150, seed=seed + 1)
    if noise:
        Y = Y + noise * torch.randn(Y.shape, generator=torch.Generator().manual_seed(seed + 2), dtype=F64)
    layer = copy.deepcopy(teacher)
    theta = D.flat_params(teacher)
    D.set_flat_params(layer, theta + 0.05 * torch.randn(theta.shape, dtype=F64))
    norms = D.settle(layer, X, Y, steps=40)
    assert norms[-1] <= D.gradient_rounding_floor(layer, X, Y), "did not settle: choose another seed"
    return layer, X, Y, norms


# ---------------------------------------------------------------------------
# closed forms against automatic differentiation


@pytest.mark.parametrize(("form", "act", "rank"), LAYERS)
def test_prop_flat_directions_residual_jacobian_matches_autograd(form, act, rank):
    """prop-flat-directions (tool): the closed-form Jacobian is autograd's, within 2 γ_M |J|."""
    torch.manual_seed(3)
    layer = _layer(form, act, rank=rank)
    X, _ = _data(layer)
    theta = D.flat_params(layer)
    auto = torch.autograd.functional.jacobian(
        lambda t: D.functional_call(layer, D._unflatten(layer, t), (X,)).reshape(-1), theta
    )
    closed = D.residual_jacobian(layer, X)
    bound = 2 * gamma(D._derivative_terms(layer, X.shape[0]), F64) * D.residual_jacobian(layer, X, absolute=True)
    assert closed.shape == (X.shape[0] * layer.d_out, theta.numel())
    assert bool(((closed - auto).abs() <= bound).all())


@pytest.mark.parametrize(("form", "act", "rank"), LAYERS)
def test_prop_flat_directions_closed_form_hessian_matches_loss_hessian(form, act, rank):
    """prop-flat-directions (tool): ‖H_closed − H_autograd‖₂ ≤ 2 η_H, and the absolute majorant bounds |H|."""
    torch.manual_seed(4)
    layer = _layer(form, act, rank=rank)
    X, Y = _data(layer, seed=2)
    closed = D.closed_form_hessian(layer, X, Y)
    auto = D.loss_hessian(layer, X, Y)
    eta = D.hessian_rounding_bound(layer, X, Y)
    assert float(torch.linalg.matrix_norm(closed - auto, ord=2)) <= 2 * eta
    majorant = D.closed_form_hessian(layer, X, Y, absolute=True)
    assert bool((closed.abs() <= majorant * (1 + 4 * U64) + eta).all())


@pytest.mark.parametrize(("form", "act", "rank"), LAYERS)
def test_closed_form_hessian_second_order_part_and_residuals(form, act, rank):
    """prop-flat-directions (tool): H = JᵀJ/n + (second-order part), and ``residuals`` replaces f(X) − Y."""
    torch.manual_seed(7)
    layer = _layer(form, act, rank=rank)
    X, Y = _data(layer, seed=6)
    full = D.closed_form_hessian(layer, X, Y)
    second = D.closed_form_hessian(layer, X, Y, gauss_newton=False)
    J = D.residual_jacobian(layer, X)
    eta = D.hessian_rounding_bound(layer, X, Y)
    assert float(torch.linalg.matrix_norm(full - (J.T @ J / X.shape[0] + second), ord=2)) <= 2 * eta
    with torch.no_grad():
        r = layer(X) - Y
    assert torch.equal(D.closed_form_hessian(layer, X, Y, gauss_newton=False, residuals=r), second)
    with pytest.raises(ValueError):
        D.closed_form_hessian(layer, X, Y, residuals=r[:-1])


@pytest.mark.parametrize(("form", "act"), [("symmetric", "silu"), ("gated", "gelu")])
def test_rounding_bounds_do_not_move_with_the_last_bits(form, act):
    """η_H and τ are derived from the data, not from rounding: a one-ulp change of the point barely moves them.

    (A difference of two Hessians would carry the rounding of their Gauss–Newton parts into η_H, and the
    computed ‖∇L‖ below its floor would carry its own rounding into τ; both are computed without them.)
    """
    layer, X, Y, _ = _settled(form, act, seed=1)
    spec = D.flat_spectrum(layer, X, Y, hessian=D.closed_form_hessian(layer, X, Y))
    moved = copy.deepcopy(layer)
    theta = D.flat_params(layer)
    signs = torch.randint(0, 3, theta.shape, generator=torch.Generator().manual_seed(0)).to(F64) - 1
    D.set_flat_params(moved, theta * (1 + signs * 2.0**-52))
    other = D.flat_spectrum(moved, X, Y, hessian=D.closed_form_hessian(moved, X, Y))
    assert spec.grad_norm <= spec.grad_floor and other.grad_norm <= other.grad_floor
    for a, b in [(spec.hessian_bound, other.hessian_bound), (spec.threshold, other.threshold)]:
        assert abs(a - b) <= 1e-9 * a


@pytest.mark.parametrize(("form", "act", "rank"), LAYERS)
def test_gradient_rounding_floor_bounds_two_computations(form, act, rank):
    """The autograd gradient and Jᵀr/n are two computations of ∇L: they differ by at most twice the floor."""
    torch.manual_seed(5)
    layer = _layer(form, act, rank=rank)
    X, Y = _data(layer, seed=4)
    with torch.no_grad():
        r = (layer(X) - Y).reshape(-1)
    closed = D.residual_jacobian(layer, X).T @ r / X.shape[0]
    theta = D.flat_params(layer).requires_grad_(True)
    (auto,) = torch.autograd.grad(D._loss_of_theta(layer, X, Y)(theta), theta)
    floor = D.gradient_rounding_floor(layer, X, Y)
    assert floor > 0
    assert float((closed - auto).norm()) <= 2 * floor


# ---------------------------------------------------------------------------
# settling at a critical point


@pytest.mark.parametrize(("form", "act"), [("symmetric", "silu"), ("gated", "gelu"), ("key-value", "relu")])
def test_settle_reaches_the_rounding_floor_near_a_realisable_teacher(form, act):
    """Damped Newton from a perturbed teacher: ‖∇L‖ at its rounding floor within a few dozen steps."""
    layer, X, Y, norms = _settled(form, act)
    assert norms[-1] <= D.gradient_rounding_floor(layer, X, Y)
    assert D.gradient_norm(layer, X, Y) <= 2 * D.gradient_rounding_floor(layer, X, Y)


def test_settle_gauss_newton_and_arguments():
    torch.manual_seed(6)
    layer = _layer("gated", "silu")
    X, Y = _data(layer)
    before = D.flat_params(layer)
    norms = D.settle(layer, X, Y, steps=3, curvature="gauss-newton")
    assert len(norms) == 4 and norms[-1] < norms[0]
    assert not torch.equal(before, D.flat_params(layer))
    with pytest.raises(ValueError, match="curvature: expected 'newton' or 'gauss-newton'"):
        D.settle(layer, X, Y, curvature="bfgs")
    with pytest.raises(ValueError, match="steps: expected an int >= 0"):
        D.settle(layer, X, Y, steps=-1)
    with pytest.raises(ValueError, match="damping: expected a positive number"):
        D.settle(layer, X, Y, damping=0.0)
    with pytest.raises(ValueError, match=r"Y: expected shape \(n = 40, d_out = 2\)"):
        D.settle(layer, X, Y[:, :1])
    with pytest.raises(ValueError, match=r"X: expected shape \(n, d = 4\)"):
        D.closed_form_hessian(layer, X[:, :3], Y)


# ---------------------------------------------------------------------------
# the prediction: which directions, how many


@pytest.mark.parametrize(
    ("form", "act", "rank", "per_unit"),
    [
        ("key-value", "relu", 1, 1),
        ("key-value", "gelu", 1, 0),
        ("key-value", "silu", 1, 0),
        ("symmetric", "silu", 1, 1),
        ("symmetric", "gelu", 1, 1),
        ("symmetric", "relu", 1, 2),
        ("symmetric", "identity", 1, 2),
        ("gated", "silu", 1, 1),
        ("gated", "gelu", 1, 1),
        ("gated", "relu", 1, 2),
        ("gated", "identity", 1, 2),
        ("symmetric", "silu", 2, 6),
        ("symmetric", "relu", 2, 7),
        ("symmetric", "silu", 3, 15),
    ],
)
def test_prop_flat_directions_predicted_count(form, act, rank, per_unit):
    """prop-flat-directions: the tangents span m·c dimensions, c = 0 / 1 / R(2R−1), +1 for homogeneous σ."""
    torch.manual_seed(7)
    layer = _layer(form, act, d=2 * rank + 1, m=3, rank=rank)
    tangents = [xi for vs in D.predicted_tangents(layer).values() for xi in vs]
    span = int(torch.linalg.matrix_rank(torch.stack(tangents, 1))) if tangents else 0
    assert D.predicted_flat_count(layer) == 3 * per_unit == span


def test_prop_flat_directions_transpose_tangents_are_exact_symmetries():
    """prop-flat-directions: θ + t ξ for a transpose generator (A² = 0) leaves the rank-R layer unchanged.

    Integer weights, inputs and shift keep every product and sum exact in float64,
    so the two outputs are equal bit for bit.
    """
    g = torch.Generator().manual_seed(8)
    R, m, d = 2, 2, 4
    Q = torch.randint(-3, 4, (R, m, d), generator=g).to(F64)
    K = torch.randint(-3, 4, (R, m, d), generator=g).to(F64)
    V = torch.randint(-3, 4, (m, 2), generator=g).to(F64)
    layer = BilinearMLP.from_weights(Q, K, V, activation="identity")
    X = torch.randint(-3, 4, (20, d), generator=g).to(F64)
    tangents = D.transpose_tangents(layer)
    assert len(tangents) == m * R * (R - 1)
    for xi in tangents:
        moved = copy.deepcopy(layer)
        D.set_flat_params(moved, D.flat_params(layer) + 2 * xi)
        with torch.no_grad():
            assert torch.equal(moved(X), layer(X))
    assert D.transpose_tangents(_layer("symmetric", "silu")) == []
    with pytest.raises(TypeError, match="layer: expected a BilinearMLP"):
        D.transpose_tangents(_layer("gated", "silu"))


@pytest.mark.parametrize(("form", "act", "rank"), LAYERS)
def test_prop_flat_directions_gradient_orthogonal_to_predicted_tangents(form, act, rank):
    """prop-flat-directions: ∇L·ξ = 0 exactly, so |ĝ·ξ| ≤ (ε_fl + γ_P ‖ĝ‖) ‖ξ‖ for the computed ĝ."""
    torch.manual_seed(9)
    layer = _layer(form, act, d=5, rank=rank)
    X, Y = _data(layer, seed=6)
    theta = D.flat_params(layer).requires_grad_(True)
    (g,) = torch.autograd.grad(D._loss_of_theta(layer, X, Y)(theta), theta)
    floor = D.gradient_rounding_floor(layer, X, Y)
    for xi in (v for vs in D.predicted_tangents(layer).values() for v in vs):
        bound = (floor + gamma(theta.numel(), F64) * float(g.norm())) * float(xi.norm())
        assert abs(float(g @ xi)) <= bound


def test_prop_flat_directions_hessian_at_a_critical_point():
    """prop-flat-directions: at a settled point the count equals the prediction and ‖Ĥξ‖ is within its bound."""
    layer, X, Y, _ = _settled("symmetric", "silu", noise=0.1)
    spec = D.flat_spectrum(layer, X, Y)
    assert spec.predicted == spec.count == 3
    assert all(r <= b for r, b in zip(spec.tangent_residuals, spec.tangent_bounds, strict=True))
    assert spec.sin_angle <= spec.sin_bound
    assert spec.next_eigenvalue > 1e3 * spec.threshold  # a wide gap, not a borderline count
    # the same with the closed-form Hessian
    closed = D.flat_spectrum(layer, X, Y, hessian=D.closed_form_hessian(layer, X, Y))
    assert closed.count == 3
    with pytest.raises(ValueError, match="hessian: expected shape"):
        D.flat_spectrum(layer, X, Y, hessian=torch.eye(3, dtype=F64))


def test_prop_flat_directions_gated_placement_removes_the_query_key_direction():
    """prop-flat-directions: for SwiGLU at a critical point (k_j, −v_j) is flat and (q_j, −k_j) is not."""
    layer, X, Y, _ = _settled("gated", "silu", noise=0.1)
    spec = D.flat_spectrum(layer, X, Y)
    assert spec.count == spec.predicted == 3
    H = spec.hessian
    for xi in D.pair_tangents(layer, "kv"):
        assert float((H @ xi).norm()) <= max(spec.tangent_bounds)
    for xi in D.pair_tangents(layer, "qk"):
        assert float((H @ xi).norm()) > 1e3 * max(spec.tangent_bounds)


# ---------------------------------------------------------------------------
# rescaling, the loss and sharpness


RESCALINGS = [
    (form, act, rank, pair)
    for form, rank in [("key-value", 1), ("symmetric", 1), ("symmetric", 2), ("gated", 1)]
    for act in ["relu", "gelu", "silu", "identity"]
    if not (form == "key-value" and act == "identity")
    for pair in (["kv"] if form == "key-value" else ["qk", "kv", "qv"])
]


@pytest.mark.parametrize(("form", "act", "rank", "pair"), RESCALINGS)
def test_prop_flat_directions_rescaling_is_symmetry_matches_the_layer(form, act, rank, pair):
    """prop-flat-directions, part 2: rescale(α) keeps the function within rounding iff rescaling_is_symmetry says so."""
    torch.manual_seed(10)
    layer = _layer(form, act, rank=rank)
    X, _ = _data(layer)
    moved = D.rescale(layer, pair, 2.5)
    check = equal_within_rounding if D.rescaling_is_symmetry(layer, pair) else exceeds_rounding
    assert check(layer, moved, X, param_rel_error=U64)


def test_rescale_qk_is_inverse_scale_and_arguments():
    torch.manual_seed(11)
    layer = _layer("symmetric", "gelu", rank=2)
    assert torch.equal(
        D.flat_params(D.rescale(layer, "qk", -1.5, units=[1])), D.flat_params(inverse_scale(layer, -1.5, units=[1]))
    )
    with pytest.raises(ValueError, match=r"pair: expected one of \['kv'\] for KeyValueMLP"):
        D.rescale(_layer("key-value", "relu"), "qk", 2.0)
    with pytest.raises(ValueError, match="alpha: expected a non-zero real number"):
        D.rescale(layer, "qk", 0.0)
    with pytest.raises(ValueError, match=r"units: expected indices in \[0, 3\)"):
        D.rescale(layer, "kv", 2.0, units=[3])


def test_prop_flat_directions_sharpness_changes_but_loss_does_not():
    """prop-flat-directions (Dinh et al.): along q → αq, k → k/α the loss is unchanged, the top eigenvalue is not."""
    layer, X, Y, _ = _settled("symmetric", "silu", noise=0.1)
    top = {}
    for alpha in (1.0, 4.0):
        moved = D.rescale(layer, "qk", alpha)
        top[alpha] = (
            float(torch.linalg.eigvalsh(D.closed_form_hessian(moved, X, Y))[-1]),
            D.hessian_rounding_bound(moved, X, Y),
            float(D.mse(moved, X, Y).detach()),
            D.loss_rounding_bound(moved, X, Y, param_rel_error=U64),
        )
    (l1, e1, f1, b1), (l4, e4, f4, b4) = top[1.0], top[4.0]
    assert abs(f4 - f1) <= b1 + b4
    assert abs(l4 - l1) > e1 + e4 + 2 * layer.V.numel() * U64 * max(l1, l4)
    assert l4 > 2 * l1


def test_pair_tangents_and_rescaling_tangents():
    torch.manual_seed(12)
    layer = _layer("gated", "silu")
    assert all(
        torch.equal(a, b) for a, b in zip(D.pair_tangents(layer, "kv"), D.symmetry_tangents(layer)["kv"], strict=True)
    )
    assert len(D.rescaling_tangents(layer)) == 9
    assert len(D.rescaling_tangents(_layer("key-value", "gelu"))) == 3
    with pytest.raises(ValueError, match=r"pair: expected one of \['qk', 'kv', 'qv'\]"):
        D.pair_tangents(layer, "vq")


def test_drift_alignment():
    xi = [torch.tensor([1.0, 0.0, 0.0], dtype=F64), torch.tensor([0.0, 2.0, 0.0], dtype=F64)]
    zero = torch.zeros(3, dtype=F64)
    assert D.drift_alignment(zero, torch.tensor([3.0, -1.0, 0.0], dtype=F64), xi) == pytest.approx(1.0, abs=4 * U64)
    assert D.drift_alignment(zero, torch.tensor([0.0, 0.0, 5.0], dtype=F64), xi) == 0.0
    with pytest.raises(ValueError, match="after: equals before"):
        D.drift_alignment(zero, zero, xi)
    with pytest.raises(ValueError, match="tangents: expected at least one"):
        D.drift_alignment(zero, zero + 1, [])
    with pytest.raises(TypeError, match="before: expected a 1-d tensor"):
        D.drift_alignment(torch.zeros(2, 2), zero, xi)


def test_unit_activity_finds_a_dead_unit():
    torch.manual_seed(13)
    layer = _layer("key-value", "relu")
    X = torch.randn(50, 4, dtype=F64).abs()  # positive inputs
    with torch.no_grad():
        layer.K[0] = -1.0  # x·k_0 < 0 for every input: unit 0 is dead
    active, share = D.unit_activity(layer, X)
    assert float(active[0]) == 0.0 and float(share[0]) == 0.0
    assert float(share.max()) == 1.0 and bool((active[1:] > 0).all())


def test_settle_from_starts_records_runs():
    torch.manual_seed(14)
    teacher = _layer("gated", "silu")
    X, Y = D.teacher_data(teacher, 4, 60, seed=3)
    runs = D.settle_from_starts(lambda: _layer("gated", "silu"), X, Y, [1, 2], steps=6, tail=3)
    assert [r.seed for r in runs] == [1, 2]
    for r in runs:
        assert len(r.norms) <= 7 and len(r.theta_norms) == 3
        assert r.alignment is None or not r.settled
    with pytest.raises(ValueError, match="tail: expected 0 < tail <= steps"):
        D.settle_from_starts(lambda: _layer("gated", "silu"), X, Y, [1], steps=3, tail=4)


# ---------------------------------------------------------------------------
# symbolic: H ξ = −Aᵀ∇ℓ for one unit


@pytest.mark.parametrize(
    ("form", "generator", "kwargs"),
    [
        ("symmetric", "qk", {}),
        ("gated", "kv", {}),
        ("key-value", "kv", {"piece": True}),
        ("symmetric", "qv", {"piece": True}),
        ("gated", "qv", {"piece": True}),
        ("gated", "qk", {"piece": True}),
        ("symmetric", "gauge-1-2", {"rank": 2}),
        ("symmetric", "tq-1-2", {"rank": 2}),
        ("symmetric", "tk-1-2", {"rank": 2}),
    ],
)
def test_prop_flat_directions_symbolic_identity(form, generator, kwargs):
    """prop-flat-directions: the invariance defect ∇ℓ·ξ and ∇²ℓ ξ + Aᵀ∇ℓ are identically zero."""
    defect, identity = symbolic.flat_direction_identity(form, generator, **kwargs)
    assert defect == 0
    assert identity == sp.zeros(*identity.shape)


@pytest.mark.parametrize(
    ("form", "generator", "activation"),
    [("gated", "qk", "silu"), ("key-value", "kv", "gelu"), ("symmetric", "kv", "silu")],
)
def test_prop_flat_directions_broken_rescalings_symbolic(form, generator, activation):
    """prop-flat-directions: these rescalings are not symmetries; decide_zero finds a rational counterexample."""
    expr, variables = symbolic.invariance_defect(form, generator, activation)
    decision = decide_zero(expr, variables)
    assert decision.holds is False and decision.method == "counterexample"


def test_flat_direction_identity_arguments():
    with pytest.raises(ValueError, match="form: expected one of"):
        symbolic.flat_direction_identity("full", "qk")
    with pytest.raises(ValueError, match="generator: expected"):
        symbolic.flat_direction_identity("symmetric", "vk")
    with pytest.raises(ValueError, match="generator: 'qk' needs blocks q and k"):
        symbolic.flat_direction_identity("key-value", "qk")
    with pytest.raises(ValueError, match="rank: expected 1 for the gated form"):
        symbolic.flat_direction_identity("gated", "kv", rank=2)
    with pytest.raises(ValueError, match=r"generator: expected 1 <= r, s <= rank = 2 \(r < s for tq, tk\)"):
        symbolic.flat_direction_identity("symmetric", "tq-2-1", rank=2)


def test_spectra_strip():
    fig, axes = figure()
    spectra_strip(axes[0], {"a": (np.array([0.0, -1e-16, 1e-3, 2.0]), 1e-12), "b": (np.array([1.0, 3.0]), 1e-12)})
    assert axes[0].get_xscale() == "log" and [t.get_text() for t in axes[0].get_yticklabels()] == ["a", "b"]
    with pytest.raises(ValueError, match=r"spectra\['a'\]: expected a positive threshold"):
        spectra_strip(axes[0], {"a": (np.array([1.0]), 0.0)})
    with pytest.raises(ValueError, match="spectra: expected at least one"):
        spectra_strip(axes[0], {})
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize(("form", "rank"), [("key-value", 1), ("gated", 1), ("symmetric", 1), ("symmetric", 2)])
def test_nearest_kink(form, rank):
    """A point placed on the kink of unit 0 gives a distance at rounding level; random points do not."""
    torch.manual_seed(15)
    layer = _layer(form, "relu", rank=rank)
    X, _ = _data(layer)
    assert 0 < D.nearest_kink(layer, X) <= 1
    W = (layer.Q[:, 0] if form == "symmetric" else layer.Q[:1] if form == "gated" else layer.K[:1]).detach()
    on_kink = X[0] - W.T @ torch.linalg.solve(W @ W.T, W @ X[0])  # orthogonal to the queries (keys) of unit 0
    assert D.nearest_kink(layer, torch.cat([X, on_kink[None]])) <= 8 * U64
    with pytest.raises(ValueError, match=r"X: expected a tensor of shape \(n, d = 4\)"):
        D.nearest_kink(layer, X[:, :2])


def test_scientific():
    assert scientific(3.2e-16) == "3e-16" and scientific(2.4e8) == "2e+08" and scientific(0.0) == "0"
    assert scientific(2.4e8, latex=True) == r"$2 \times 10^{8}$"
    assert scientific(-3e-3, latex=True) == r"$-3 \times 10^{-3}$"
    with pytest.raises(ValueError, match="value: expected a finite number"):
        scientific(float("inf"))
    with pytest.raises(TypeError, match="value: expected a real number"):
        scientific("1")


# ---------------------------------------------------------------------------
# the chapter's experiments as package calls: layers, perturbed copies, halves, sweeps


def test_make_layer_builds_each_form_from_the_global_generator():
    """make_layer: "gated" is (σ(x Qᵀ) ⊙ (x Kᵀ)) V, "symmetric" σ(Σ_r (x Q_rᵀ)(x K_rᵀ)) V, "key-value" σ(x Kᵀ) V."""
    x = torch.randn(7, 4, generator=torch.Generator().manual_seed(30), dtype=F64)
    torch.manual_seed(31)
    gated = make_layer("gated", "silu", 4, 3, 2)
    symmetric = make_layer("symmetric", "gelu", 4, 3, 2, rank=2)
    plain = make_layer("key-value", "relu", 4, 3, 2)
    with torch.no_grad():
        Q, K, V = gated.Q, gated.K, gated.V
        expected = (torch.nn.functional.silu(x @ Q.T) * (x @ K.T)) @ V
        assert torch.allclose(gated(x), expected, rtol=1e-12, atol=1e-12)
        score = sum((x @ symmetric.Q[r].T) * (x @ symmetric.K[r].T) for r in range(2))
        expected = torch.nn.functional.gelu(score) @ symmetric.V
        assert torch.allclose(symmetric(x), expected, rtol=1e-12, atol=1e-12)
        assert torch.allclose(plain(x), torch.relu(x @ plain.K.T) @ plain.V, rtol=1e-12, atol=1e-12)
    assert (gated.d, gated.m, gated.d_out, symmetric.rank) == (4, 3, 2, 2) and gated.V.dtype == F64
    torch.manual_seed(31)
    again = make_layer("gated", "silu", 4, 3, 2)
    assert torch.equal(D.flat_params(again), D.flat_params(gated))  # drawn from torch's global generator
    with pytest.raises(ValueError, match="form: expected one of"):
        make_layer("full", "silu", 4, 3, 2)
    with pytest.raises(ValueError, match="rank: expected 1 for the gated form"):
        make_layer("gated", "silu", 4, 3, 2, rank=2)


def test_perturbed_copy_adds_gaussian_noise_of_the_stated_scale():
    """perturbed_copy: θ' − θ is N(0, scale²) entry by entry, drawn from the generator given; θ is kept."""
    torch.manual_seed(32)
    layer = make_layer("gated", "silu", 40, 30, 10)  # P = 2700 entries
    theta = D.flat_params(layer)
    generator = torch.Generator().manual_seed(33)
    moved = perturbed_copy(layer, 0.05, generator)
    noise = (D.flat_params(moved) - theta) / 0.05
    assert torch.equal(D.flat_params(layer), theta)
    # the sample mean and standard deviation of 2700 N(0, 1) draws: within 5 standard errors
    assert abs(float(noise.mean())) < 5 / noise.numel() ** 0.5
    assert abs(float(noise.std()) - 1) < 5 / (2 * noise.numel()) ** 0.5
    # the generator advanced by one draw per entry
    fresh = torch.Generator().manual_seed(33)
    torch.randn(theta.numel(), generator=fresh, dtype=F64)
    assert torch.equal(torch.randn(1, generator=generator, dtype=F64), torch.randn(1, generator=fresh, dtype=F64))
    assert torch.equal(D.flat_params(perturbed_copy(layer, 0.0, generator)), theta)
    with pytest.raises(ValueError, match="scale: expected a real number >= 0"):
        perturbed_copy(layer, -1.0, generator)
    with pytest.raises(TypeError, match="generator: expected a torch.Generator"):
        perturbed_copy(layer, 0.1, 3)


def test_settle_in_halves_settles_a_copy_and_records_the_kinks():
    """settle_in_halves: the copy settles to its floor; the loss and the kink at the end are those of the copy."""
    torch.manual_seed(34)
    teacher = _layer("key-value", "relu")
    X, Y = D.teacher_data(teacher, teacher.d, 150, seed=35)
    start = perturbed_copy(teacher, 0.05, torch.Generator().manual_seed(36))
    theta = D.flat_params(start)
    run = settle_in_halves(start, X, Y, steps=40)
    assert torch.equal(D.flat_params(start), theta) and run.layer is not start
    assert run.settled and run.norms[-1] <= run.floor == D.gradient_rounding_floor(run.layer, X, Y)
    with torch.no_grad():
        residual = run.layer.V.T @ torch.relu(run.layer.K @ X.T) - Y.T
    assert run.loss == pytest.approx(float((residual**2).sum()) / (2 * X.shape[0]), rel=1e-9, abs=1e-30)
    assert run.kinks[1] == D.nearest_kink(run.layer, X) and 0 < run.kinks[0] <= 1
    assert len(run.norms) <= 42
    with pytest.raises(ValueError, match="steps: expected an int >= 2"):
        settle_in_halves(start, X, Y, steps=1)


@pytest.mark.parametrize(
    ("form", "act", "rank", "count"),
    [("key-value", "gelu", 1, 0), ("key-value", "relu", 1, 3), ("gated", "silu", 1, 3), ("symmetric", "relu", 1, 6),
     ("gated", "identity", 1, 6), ("symmetric", "silu", 2, 18)],
)  # fmt: skip
def test_predicted_span_is_the_count_of_the_proposition(form, act, rank, count):
    """prop-flat-directions: m·c with c = 0 (plain GELU), 1, 2 (positively homogeneous σ), R(2R−1) = 6 at R = 2."""
    torch.manual_seed(37)
    assert predicted_span(_layer(form, act, d=5, rank=rank)) == count


def test_net_parameters_and_quadratic_map_dimension():
    """Three identity units at d = 4, d_out = 2: 3(2·4 + 2) − 3·2 = 24 > d_out d(d+1)/2 = 20."""
    torch.manual_seed(38)
    assert net_parameters(_layer("symmetric", "identity")) == 24
    assert net_parameters(_layer("key-value", "gelu")) == 3 * (4 + 2)
    assert quadratic_map_dimension(4, 2) == 20 and quadratic_map_dimension(1, 1) == 1
    with pytest.raises(ValueError, match="d: expected an int >= 1"):
        quadratic_map_dimension(0, 2)
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        net_parameters(torch.nn.Linear(2, 2))


def test_random_alignment_is_the_share_of_a_random_move():
    """random_alignment: √(k/P); a Monte Carlo mean of ‖Π z‖² / ‖z‖² over random z gives k/P within 5 %."""
    torch.manual_seed(39)
    layer = _layer("symmetric", "silu")  # k = 2m = 6 rescaling directions in P = 30 parameters
    assert random_alignment(layer) == pytest.approx((6 / 30) ** 0.5, rel=1e-15)
    before = D.flat_params(layer)
    g = torch.Generator().manual_seed(40)
    shares = [
        D.drift_alignment(
            before, before + torch.randn(before.shape, generator=g, dtype=F64), D.rescaling_tangents(layer)
        )
        ** 2
        for _ in range(2000)
    ]
    assert float(np.mean(shares)) == pytest.approx(6 / 30, rel=0.05)
    assert random_alignment(_layer("key-value", "relu")) == pytest.approx((3 / 18) ** 0.5, rel=1e-15)


def test_relative_curvatures_and_minimum_of_a_known_spectrum():
    """FlatSpectrum.relative_curvatures: ‖Hξ‖ / (‖H‖₂ ‖ξ‖) on H = diag(−1, 2, 4); is_minimum: no eigenvalue below −τ."""
    layer, X, Y, _ = _settled("symmetric", "silu", noise=0.1)
    spec = D.flat_spectrum(layer, X, Y, hessian=D.closed_form_hessian(layer, X, Y))
    assert spec.is_minimum
    H = torch.diag(torch.tensor([-1.0, 2.0, 4.0], dtype=F64))
    known = dataclasses.replace(spec, hessian=H, hessian_norm=4.0, eigenvalues=torch.tensor([-1.0, 2.0, 4.0]))
    xi = [torch.tensor([0.0, 3.0, 0.0], dtype=F64), torch.tensor([1.0, 0.0, 1.0], dtype=F64)]
    assert known.relative_curvatures(xi) == pytest.approx([0.5, (17 / 2) ** 0.5 / 4], rel=1e-15)
    assert not known.is_minimum and dataclasses.replace(known, threshold=1.0).is_minimum
    with pytest.raises(ValueError, match=r"tangents: expected vectors of shape \(3,\)"):
        known.relative_curvatures([torch.zeros(4, dtype=F64)])


def test_rescaling_curvatures_separate_symmetries_from_other_rescalings():
    """prop-flat-directions: at a SwiGLU critical point (k_j, −v_j) is flat to rounding and (q_j, −k_j) is curved."""
    layer, X, Y, _ = _settled("gated", "silu", noise=0.1)
    spec = D.flat_spectrum(layer, X, Y, hessian=D.closed_form_hessian(layer, X, Y))
    curvatures = rescaling_curvatures(layer, spec)
    assert list(curvatures) == ["qk", "kv", "qv"] and [s for s, _ in curvatures.values()] == [False, True, False]
    assert max(curvatures["kv"][1]) < 1e-12 and min(curvatures["qk"][1]) > 1e-6
    assert all(len(r) == layer.m for _, r in curvatures.values())
    H, xi = spec.hessian, D.pair_tangents(layer, "qk")[1]  # by hand, for one unit
    assert curvatures["qk"][1][1] == pytest.approx(float((H @ xi).norm() / (torch.linalg.norm(H, 2) * xi.norm())))
    plain, Xp, Yp, _ = _settled("key-value", "relu")
    assert list(rescaling_curvatures(plain, D.flat_spectrum(plain, Xp, Yp))) == ["kv"]
    with pytest.raises(TypeError, match="spectrum: expected a FlatSpectrum"):
        rescaling_curvatures(layer, H)


def test_rescaling_sweep_transforms_the_hessian_and_keeps_the_loss():
    """Along a symmetry L(Dθ) = L(θ) for all θ, so H(Dθ) = D⁻¹ H(θ) D⁻¹: the top eigenvalue follows, the loss stays."""
    layer, X, Y, _ = _settled("symmetric", "silu", noise=0.1)
    alphas = [0.5, 1.0, 3.0]
    sweep = rescaling_sweep(layer, X, Y, "qk", np.array(alphas))
    assert sweep.loss_unchanged and sweep.alphas == alphas and sweep.pair == "qk"
    H = D.loss_hessian(layer, X, Y)
    theta = D.flat_params(layer)
    for alpha, top in zip(alphas, sweep.top_eigenvalues, strict=True):
        scale = D.flat_params(D.rescale(layer, "qk", alpha)) / theta  # D, read off the moved parameters
        moved = H / scale[:, None] / scale[None, :]
        assert top == pytest.approx(float(torch.linalg.eigvalsh(moved)[-1]), rel=1e-8)
    assert sweep.sharpness_ratio == max(sweep.top_eigenvalues) / min(sweep.top_eigenvalues) > 2
    gated, Xg, Yg, _ = _settled("gated", "silu", noise=0.1)
    control = rescaling_sweep(gated, Xg, Yg, "qk", [0.5, 2.0])
    assert not control.loss_unchanged and control.loss_ratio > 1 + 1e-6
    with pytest.raises(ValueError, match="alphas: expected at least one"):
        rescaling_sweep(layer, X, Y, "qk", [])
