"""Training identities: thm-conservation (exact GD identity), thm-invariant-diagonal, prop-flat-directions."""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import CONSERVATION_CASES, equal_within_rounding, exceeds_rounding, seeds, small_layer
from symbreak import dynamics as D
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import gamma, unit_roundoff

F64 = torch.float64


def _data(seed: int, d: int = 4, d_out: int = 2, n: int = 64):
    torch.manual_seed(seed + 1)
    teacher = KeyValueMLP(d, 6, d_out, activation="gelu", dtype=F64)
    return D.teacher_data(teacher, d, n, seed=seed)


def _rel_residual(actual: torch.Tensor, predicted: torch.Tensor, layer) -> float:
    scale = sum(float((p.detach() ** 2).sum()) for p in layer.parameters())
    return float((actual - predicted).abs().max()) / scale


CASES = CONSERVATION_CASES


_layer = small_layer


@pytest.mark.parametrize(("form", "act", "laws"), CASES)
@settings(max_examples=8)
@given(seed=seeds, lr=st.floats(1e-3, 0.3), wd=st.sampled_from([0.0, 1e-3, 0.05]))
def test_thm_conservation_exact_gd_identity(form, act, laws, seed, lr, wd):
    """thm-conservation: c_{t+1} = (1 − ηλ)² c_t + η²(‖g_a‖² − ‖g_b‖²) exactly where the symmetry holds.

    "Exactly" means to float64 rounding: the residual, relative to ‖θ‖², is below
    64 u (a handful of roundings in each norm); where the symmetry is broken
    the residual is the cross term 2η(1 − ηλ)(a·g_a − b·g_b), far above it.
    """
    torch.manual_seed(seed)
    layer = _layer(form, act)
    X, Y = _data(seed)
    for pair, holds in laws.items():
        actual, predicted = D.gd_identity(layer, X, Y, lr=lr, weight_decay=wd, pair=pair)
        residual = _rel_residual(actual, predicted, layer)
        if holds:
            assert residual <= 64 * 2.0**-53
        else:
            assert residual > 1e-9


@pytest.mark.parametrize(
    ("form", "act", "stays"),
    [
        ("rank1", "silu", True),
        ("rank1", "gelu", True),
        ("gated", "relu", True),
        ("gated", "identity", True),
        ("gated", "silu", False),
        ("gated", "gelu", False),
    ],
)
def test_thm_invariant_diagonal(form, act, stays):
    """thm-invariant-diagonal: from q_j = k_j the symmetric form and ReGLU stay; SwiGLU and GEGLU leave.

    "Stay" is exact in real arithmetic; in float64 the computed g_q and g_k may
    differ by rounding (they come from different columns of one matmul), so per
    step the gap can grow by at most 2u‖θ‖_∞ (the two subtractions) plus
    2η γ_N ‖g‖_∞ with N = n·d the length of the gradient's sums.
    """
    torch.manual_seed(0)
    layer = _layer(form, act)
    with torch.no_grad():
        layer.K.copy_(layer.Q)
    X, Y = _data(0)
    steps, lr = 50, 0.05
    history = D.train(layer, X, Y, lr=lr, steps=steps)
    assert history.gap[0] == 0.0
    if stays:
        theta = max(float(p.detach().abs().max()) for p in layer.parameters())
        grad = max(history.grad_norm)
        per_step = 2 * 2.0**-53 * theta + 2 * lr * gamma(X.shape[0] * X.shape[1], F64) * grad
        assert max(history.gap) <= steps * per_step
    else:
        assert history.gap[-1] > 1e-6


@pytest.mark.parametrize(("form", "act"), [(f, a) for f, a, _ in CASES])
def test_prop_flat_directions_gradient_orthogonal_to_tangents(form, act):
    """prop-flat-directions: every predicted tangent ξ satisfies ∇L·ξ = 0 at any point (invariance)."""
    torch.manual_seed(1)
    layer = _layer(form, act)
    X, Y = _data(1)
    theta = D.flat_params(layer).requires_grad_(True)
    (g,) = torch.autograd.grad(D._loss_of_theta(layer, X, Y)(theta), theta)
    tangents = D.symmetry_tangents(layer)
    for vectors in tangents.values():
        for xi in vectors:
            assert abs(float(g @ xi)) <= 1e-13 * float(g.norm() * xi.norm()) + 1e-15


def test_prop_flat_directions_predicted_kinds():
    """Which rescalings each form has (prop-flat-directions)."""
    kinds = lambda form, act: set(D.symmetry_tangents(_layer(form, act)))  # noqa: E731
    assert kinds("rank1", "silu") == {"qk"}
    assert kinds("rank1", "relu") == {"qk", "qv"}
    assert kinds("gated", "silu") == {"kv"}
    assert kinds("gated", "relu") == {"kv", "qv"}
    assert kinds("kv", "gelu") == set()
    assert kinds("kv", "relu") == {"kv"}
    assert len(D.symmetry_tangents(BilinearMLP(3, 2, rank=2, dtype=F64))["gauge"]) == 2 * 4


def test_hessian_annihilates_tangents_at_a_critical_point():
    """prop-flat-directions: at a critical point, H ξ = 0 for every symmetry tangent ξ.

    Differentiating the invariance ∇L(θ)·ξ(θ) = 0 gives H ξ = −(∂ξ/∂θ)ᵀ ∇L, and
    ξ(θ) = Pθ with P diagonal with entries in {1, 0, −1}, so ‖H ξ‖ ≤ ‖∇L‖ (plus
    the rounding of the float64 Hessian, far below 10⁻¹⁰ ‖H‖‖ξ‖).  The critical
    point is the global minimum of a realisable teacher of the same form,
    reached by Levenberg–Marquardt from a small perturbation of the teacher.
    """
    torch.manual_seed(4)
    teacher = BilinearMLP(3, 2, 2, rank=1, activation="silu", dtype=F64)
    X, Y = D.teacher_data(teacher, 3, 200, seed=2)
    layer = copy.deepcopy(teacher)
    D.set_flat_params(layer, D.flat_params(teacher) + 0.05 * torch.randn(D.flat_params(teacher).shape, dtype=F64))
    norms = D.levenberg_marquardt(layer, X, Y, steps=30)
    grad = norms[-1]
    assert grad < 1e-10
    H = D.loss_hessian(layer, X, Y)
    for xi in D.symmetry_tangents(layer)["qk"]:
        assert float((H @ xi).norm()) <= grad * float(xi.norm()) / float(xi.abs().max()) + 1e-10 * float(
            H.norm() * xi.norm()
        )


def test_training_is_deterministic():
    X, Y = _data(3)
    runs = []
    for _ in range(2):
        torch.manual_seed(5)
        layer = _layer("gated", "silu")
        D.train(layer, X, Y, lr=0.05, steps=20)
        runs.append(D.flat_params(layer))
    assert torch.equal(runs[0], runs[1])


def test_optimizers_and_history():
    X, Y = _data(4)
    for opt in ("gd", "momentum", "adam"):
        torch.manual_seed(0)
        layer = _layer("rank1", "silu")
        start = copy.deepcopy(layer)
        h = D.train(layer, X, Y, lr=0.01, steps=10, optimizer=opt, record_every=5)
        assert h.steps == [0, 5, 10] and h.as_tensor("qk").shape == (3, 3)
        assert h.loss[-1] < h.loss[0]
        assert not torch.equal(D.flat_params(start), D.flat_params(layer))


def test_bad_arguments():
    X, Y = _data(0)
    layer = _layer("gated", "silu")
    with pytest.raises(ValueError, match="optimizer: expected one of"):
        D.train(layer, X, Y, lr=0.1, steps=1, optimizer="sgd")
    with pytest.raises(ValueError, match="lr: expected a positive learning rate, got 0"):
        D.train(layer, X, Y, lr=0, steps=1)
    with pytest.raises(ValueError, match="steps: expected an int >= 0"):
        D.train(layer, X, Y, lr=0.1, steps=-1)
    with pytest.raises(ValueError, match="pair: expected 'qk' or 'kv'"):
        D.gd_identity(layer, X, Y, lr=0.1, pair="qv")
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        D.train(torch.nn.Linear(4, 2), X, Y, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="name: expected 'qk' or 'kv'"):
        D.History().as_tensor("qv")


@pytest.mark.parametrize("act", ["relu", "abs", "identity", "gelu", "tanh"])
@pytest.mark.parametrize("form", [KeyValueMLP, BilinearMLP, "rank2", GatedMLP])
def test_kept_rescalings_table_matches_the_layer_output(form, act):
    """Each pair KEPT_RESCALINGS keeps leaves a random float64 layer's output within rounding; each other changes it."""
    torch.manual_seed(12)
    if form == "rank2":
        layer = BilinearMLP(4, 3, 2, rank=2, activation=act, dtype=F64)
    else:
        layer = form(4, 3, 2, activation=act, dtype=F64)
    X = torch.randn(40, 4, generator=torch.Generator().manual_seed(13), dtype=F64)
    table = D.KEPT_RESCALINGS[type(layer)]
    assert sorted(table) == (["kv"] if isinstance(layer, KeyValueMLP) else ["kv", "qk", "qv"])
    for pair, condition in table.items():
        kept = condition is None or getattr(layer.activation, condition)
        moved = D.rescale(layer, pair, 2.5)
        check = equal_within_rounding if kept else exceeds_rounding
        assert check(layer, moved, X, param_rel_error=unit_roundoff(F64)), (pair, kept)
