"""Chapter 12 (the invariant diagonal): thm-invariant-diagonal, and the helpers the chapter adds.

The facts asserted here are the chapter's claims, on the package's layers and
symbolic identities:

* ``thm-invariant-diagonal`` — on ``{q_j = k_j}`` the symmetric rank-1 form
  has ``g_{q_j} = g_{k_j}`` for every σ, so gradient descent (with coupled weight
  decay, and also heavy ball and Adam, which act coordinatewise) keeps a model
  started there on it; the gated form has
  ``g_q − g_k = ((f − y)·v)(z σ'(z) − σ(z)) x`` at ``z = x·q``, so it keeps the
  diagonal iff σ is positively homogeneous of degree 1 (Euler): ReGLU and the
  bilinear layer stay, SwiGLU and GEGLU leave.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from helpers import gelu_teacher_data
from symbreak import REGISTRY, symbolic
from symbreak import dynamics as D
from symbreak.decide import decide_zero
from symbreak.layers import BilinearMLP, GatedMLP
from symbreak.symbolic.conservation import euler_decision

F64 = torch.float64


pytestmark = pytest.mark.usefixtures("one_thread")


def _on_diagonal(form: str, act: str, seed: int = 0):
    torch.manual_seed(seed)
    if form == "rank1":
        layer = BilinearMLP(4, 3, 2, rank=1, activation=act, dtype=F64)
    else:
        layer = GatedMLP(4, 3, 2, activation=act, dtype=F64)
    with torch.no_grad():
        layer.K.copy_(layer.Q)
    return layer


# ---------------------------------------------------------------------------
# symbolic: the gradient difference on the diagonal and Euler's identity


@pytest.mark.parametrize(
    ("form", "act"), [("rank1", None), ("rank1", "silu"), ("rank1", "relu"), ("gated", None), ("gated", "gelu")]
)
def test_thm_invariant_diagonal_gradient_difference(form, act):
    """thm-invariant-diagonal: g_q − g_k at q = k is 0 (symmetric) or ((f − y)·v) E(x·q) x (gated)."""
    difference, predicted = symbolic.diagonal_gradient_difference(form, 2, 1, act)
    assert sp.expand(difference - predicted) == sp.zeros(1, 2)
    if form == "rank1":
        assert difference == sp.zeros(1, 2)


@pytest.mark.parametrize("act", ["relu", "identity", "leaky_relu"])
def test_thm_invariant_diagonal_gated_homogeneous_zero(act):
    """thm-invariant-diagonal, rem-reglu-diagonal: for positively homogeneous σ (ReLU among them) the gated gradients
    agree on the diagonal."""
    difference, _ = symbolic.diagonal_gradient_difference("gated", 2, 1, act)
    assert difference == sp.zeros(1, 2)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_thm_invariant_diagonal_euler_iff_homogeneous(name):
    """thm-invariant-diagonal: z σ'(z) = σ(z) for all z iff σ is positively homogeneous (decided, every σ)."""
    defect, z = symbolic.euler_defect(name)
    assert decide_zero(defect, (z,)).holds == REGISTRY[name].is_positively_homogeneous


@pytest.mark.parametrize("name", ["relu", "silu", "gelu", "identity"])
def test_thm_invariant_diagonal_euler_decision(name):
    """thm-invariant-diagonal: euler_decision proves E ≡ 0 for ReLU and the identity, refutes it for SiLU and GELU."""
    decision = euler_decision(name)
    assert decision.holds == (name in ("relu", "identity"))
    if not decision.holds:
        defect, z = symbolic.euler_defect(name)
        (point,) = decision.witness.values()
        assert defect.subs(z, point).evalf() != 0  # the counterexample is one


# ---------------------------------------------------------------------------
# torch: started on the diagonal


@pytest.mark.parametrize(
    ("form", "act"),
    [("rank1", "silu"), ("rank1", "gelu"), ("rank1", "relu"), ("gated", "relu"), ("gated", "identity")],
)
@pytest.mark.parametrize(("optimizer", "lr", "wd"), [("gd", 0.05, 0.0), ("gd", 0.05, 0.01), ("momentum", 0.02, 0.0)])
def test_thm_invariant_diagonal_stays(form, act, optimizer, lr, wd):
    """thm-invariant-diagonal: the symmetric form and ReGLU stay on q = k within the rounding allowance."""
    layer = _on_diagonal(form, act)
    X, Y = gelu_teacher_data(0)
    history = D.train(layer, X, Y, lr=lr, steps=40, weight_decay=wd, optimizer=optimizer)
    assert history.gap[0] == 0.0
    assert max(history.gap) <= D.diagonal_gap_bound(layer, X, history, lr=lr)


def test_thm_invariant_diagonal_adam_stays():
    """thm-invariant-diagonal: Adam, acting on each coordinate alike, keeps the symmetric form on the diagonal."""
    layer = _on_diagonal("rank1", "silu")
    X, Y = gelu_teacher_data(1)
    history = D.train(layer, X, Y, lr=0.01, steps=40, optimizer="adam")
    assert max(history.gap) <= D.diagonal_gap_bound(layer, X, history, lr=0.01)


@pytest.mark.parametrize("act", ["silu", "gelu", "sigmoid", "tanh"])
def test_thm_invariant_diagonal_leaves(act):
    """thm-invariant-diagonal: SwiGLU, GEGLU (and GLU, tanh gating) leave the diagonal at the first step."""
    layer = _on_diagonal("gated", act)
    X, Y = gelu_teacher_data(0)
    history = D.train(layer, X, Y, lr=0.05, steps=5)
    assert history.gap[1] > 1e-6
    assert history.gap[-1] > D.diagonal_gap_bound(layer, X, history, lr=0.05)


@pytest.mark.parametrize("act", ["silu", "gelu"])
def test_thm_invariant_diagonal_converse_one_unit(act):
    """thm-invariant-diagonal (converse): d = m = 1, x = 1, q = k = z: one step opens a gap η|r v E(z)|."""
    z, v, y, lr = 1.0, 1.0, 0.0, 0.1
    layer = GatedMLP.from_weights(
        torch.tensor([[z]], dtype=F64), torch.tensor([[z]], dtype=F64), torch.tensor([[v]], dtype=F64), act
    )
    X, Y = torch.ones(1, 1, dtype=F64), torch.full((1, 1), y, dtype=F64)
    sigma = layer.activation(torch.tensor(z, dtype=F64))
    zz = torch.tensor(z, dtype=F64, requires_grad=True)
    (slope,) = torch.autograd.grad(layer.activation(zz), zz)
    residual = float(sigma) * z * v - y
    expected = lr * abs(residual * v * (z * float(slope) - float(sigma)))
    history = D.train(layer, X, Y, lr=lr, steps=1)
    assert abs(history.gap[1] - expected) <= 1e-12 * expected
    assert expected > 0


def test_diagonal_gap_bound_arguments():
    X, _ = gelu_teacher_data(0)
    layer = _on_diagonal("rank1", "silu")
    with pytest.raises(ValueError, match="history: expected a recorded run"):
        D.diagonal_gap_bound(layer, X, D.History(), lr=0.1)
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        D.diagonal_gap_bound(torch.nn.Linear(2, 2), X, D.History(), lr=0.1)
    with pytest.raises(ValueError, match="form: expected 'rank1' or 'gated'"):
        symbolic.diagonal_gradient_difference("kv", 2, 1)
