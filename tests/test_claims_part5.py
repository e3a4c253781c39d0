"""Unit tests for statements of chapters 11–16 that had none of their own (the claims-to-evidence index).

Each test names the label it asserts.  Reference formulas are written here, independently of the package; weights
and inputs come from separate seeded generators; every tolerance is stated where it is used.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
import torch

from symbreak import experiments as E
from symbreak.experiments.runner import exchanged
from symbreak.language import model as lm
from symbreak.language import protocol as lp
from symbreak.language.training import learning_rate_at
from symbreak.layers import BilinearMLP, GatedMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

F64 = torch.float64

pytestmark = pytest.mark.usefixtures("one_thread")


def _streams(weights_seed: int, data_seed: int) -> tuple[torch.Generator, torch.Generator]:
    return torch.Generator().manual_seed(weights_seed), torch.Generator().manual_seed(data_seed)


# ---------------------------------------------------------------------------
# rem-momentum-charge (chapter 11)


def _unit_loss(form: str):
    """MSE loss ``1/(2n) Σ‖f(x_i) − y_i‖²`` of a layer written out here: ``form`` "symmetric" is
    ``Σ_j silu((x·q_j)(x·k_j)) v_j``, "swiglu" is ``Σ_j silu(x·q_j)(x·k_j) v_j``."""

    def loss(Q, K, V, X, Y):
        a, b = X @ Q.T, X @ K.T
        h = torch.nn.functional.silu(a * b) if form == "symmetric" else torch.nn.functional.silu(a) * b
        return 0.5 * ((h @ V - Y) ** 2).sum(1).mean()

    return loss


def _momentum_setup(form: str):
    weights, data = _streams(501, 502)
    d, m, d_out, n = 3, 2, 2, 40
    Q, K = (torch.randn(m, d, generator=weights, dtype=F64) for _ in range(2))
    V = torch.randn(m, d_out, generator=weights, dtype=F64)
    X = torch.randn(n, d, generator=data, dtype=F64)
    Y = torch.randn(n, d_out, generator=data, dtype=F64)
    return _unit_loss(form), (Q, K, V), X, Y


def _grad(loss, params, X, Y):
    params = [p.detach().clone().requires_grad_(True) for p in params]
    return [g.detach() for g in torch.autograd.grad(loss(*params, X, Y), params)]


@pytest.mark.parametrize(("form", "holds"), [("symmetric", True), ("swiglu", False)])
def test_rem_momentum_charge_rate_of_J(form, holds):
    """rem-momentum-charge: along ``θ̈ = −γθ̇ − ∇L`` the pair's ``J = a·ȧ − b·ḃ`` has
    ``J̇ = ‖ȧ‖² − ‖ḃ‖² + a·ä − b·b̈ = −γJ + ‖ȧ‖² − ‖ḃ‖²`` where the scaling of ``(q_j, k_j)`` is a symmetry
    (symmetric SiLU form), and not where it is none (SwiGLU), at a random point and velocity."""
    loss, params, X, Y = _momentum_setup(form)
    velocity = torch.Generator().manual_seed(503)
    U = [torch.randn(p.shape, generator=velocity, dtype=F64) for p in params]
    gamma = 0.7
    G = _grad(loss, params, X, Y)
    acc = [-gamma * u - g for u, g in zip(U, G, strict=True)]  # θ̈ of the momentum flow
    (Q, K, _), (uQ, uK, _), (aQ, aK, _) = params, U, acc
    for j in range(Q.shape[0]):
        J = Q[j] @ uQ[j] - K[j] @ uK[j]
        kinetic = uQ[j] @ uQ[j] - uK[j] @ uK[j]
        J_dot = kinetic + Q[j] @ aQ[j] - K[j] @ aK[j]  # the product rule
        predicted = -gamma * J + kinetic
        scale = float(abs(kinetic) + gamma * abs(J) + (Q[j] @ G[0][j]).abs() + (K[j] @ G[1][j]).abs())
        gap = float(abs(J_dot - predicted))
        if holds:
            assert gap <= 1e-12 * scale  # rounding of a few dot products of length ≤ 3·40
        else:
            assert gap > 1e-3 * scale  # the Noether identity fails: −(a·g_a − b·g_b) is left over


def test_rem_momentum_charge_not_conserved_from_rest():
    """rem-momentum-charge: heavy ball with ``η = h²``, ``μ = 1 − γh`` (the momentum flow's discretisation) moves the
    qk charge of the symmetric SiLU form, started at rest, by a non-vanishing amount as ``h → 0`` (it converges to
    the flow's change), while gradient descent over the same gradient-flow time drifts like ``h``; and the change
    matches ``2∫J dt`` with ``J`` integrated from eq-momentum-charge along the run."""
    loss, params, X, Y = _momentum_setup("symmetric")
    gamma, T = 2.0, 4.0

    def momentum_flow(steps):
        h = T / steps
        theta = [p.clone() for p in params]
        prev = [p.clone() for p in params]  # at rest: θ₋₁ = θ₀
        c0 = (theta[0] ** 2).sum(1) - (theta[1] ** 2).sum(1)
        J = torch.zeros_like(c0)  # J integrated by eq-momentum-charge, explicit Euler
        integral = torch.zeros_like(c0)
        for _ in range(steps):
            G = _grad(loss, theta, X, Y)
            new = [t + (1 - gamma * h) * (t - p) - h * h * g for t, p, g in zip(theta, prev, G, strict=True)]
            ua, ub = (new[0] - theta[0]) / h, (new[1] - theta[1]) / h
            integral += 2 * h * J
            J = J + h * (-gamma * J + (ua**2).sum(1) - (ub**2).sum(1))
            prev, theta = theta, new
        c = (theta[0] ** 2).sum(1) - (theta[1] ** 2).sum(1)
        return c - c0, integral

    def gradient_descent(steps):  # gradient flow time T/γ, the overdamped limit's
        lr = T / gamma / steps
        theta = [p.clone() for p in params]
        c0 = (theta[0] ** 2).sum(1) - (theta[1] ** 2).sum(1)
        for _ in range(steps):
            theta = [t - lr * g for t, g in zip(theta, _grad(loss, theta, X, Y), strict=True)]
        return (theta[0] ** 2).sum(1) - (theta[1] ** 2).sum(1) - c0

    coarse, _ = momentum_flow(400)
    fine, integral = momentum_flow(800)
    size = float(fine.abs().max())
    assert size > 1e-2  # the flow moves the charge
    assert float((coarse - fine).abs().max()) < 0.05 * size  # and the discretisation has converged to it
    assert float((integral - fine).abs().max()) < 0.05 * size  # ċ = 2J, J from eq-momentum-charge: O(h) apart
    gd_coarse, gd_fine = gradient_descent(400).abs().max(), gradient_descent(800).abs().max()
    assert float(gd_fine) < 0.6 * float(gd_coarse)  # gradient descent: drift O(h), halves with h
    assert float(gd_fine) < 0.1 * size


def test_rem_momentum_charge_heavy_ball_is_the_flow_discretised():
    """rem-momentum-charge: ``θ₊ = θ + μ(θ − θ₋) − η∇L`` with ``η = h²``, ``μ = 1 − γh`` is, divided by ``h²``,
    ``(θ₊ − 2θ + θ₋)/h² + γ(θ − θ₋)/h = −∇L``: the central second difference plus γ times the backward first
    difference (sympy, exact)."""
    theta, prev, g, h, gamma = sp.symbols("theta theta_prev g h gamma")
    nxt = theta + (1 - gamma * h) * (theta - prev) - h**2 * g
    assert sp.simplify((nxt - 2 * theta + prev) / h**2 + gamma * (theta - prev) / h + g) == 0


# ---------------------------------------------------------------------------
# rem-reglu-diagonal (chapter 12)


def test_rem_reglu_diagonal_exchange_broken_yet_gradients_agree_on_diagonal():
    """rem-reglu-diagonal: ReGLU breaks the exchange symmetry (``relu(1)·(−1) = −1 ≠ relu(−1)·1 = 0``: exchanging
    ``Q ↔ K`` changes the layer), yet at ``q_j = k_j`` its query and key gradients agree, to rounding; SwiGLU's do
    not (the control)."""
    one, minus = torch.ones(1, 1, dtype=F64), -torch.ones(1, 1, dtype=F64)
    x = torch.ones(1, 1, dtype=F64)
    V = torch.ones(1, 1, dtype=F64)
    with torch.no_grad():
        assert float(GatedMLP.from_weights(one, minus, V, "relu")(x)) == -1.0
        assert float(GatedMLP.from_weights(minus, one, V, "relu")(x)) == 0.0
    weights, data = _streams(511, 512)
    d, m, d_out, n = 4, 3, 2, 50
    Q = torch.randn(m, d, generator=weights, dtype=F64)
    V = torch.randn(m, d_out, generator=weights, dtype=F64)
    X = torch.randn(n, d, generator=data, dtype=F64)
    Y = torch.randn(n, d_out, generator=data, dtype=F64)
    for act, agree in [("relu", True), ("silu", False)]:
        layer = GatedMLP.from_weights(Q, Q.clone(), V, act)
        loss = 0.5 * ((layer(X) - Y) ** 2).sum(1).mean()
        gq, gk = torch.autograd.grad(loss, [layer.Q, layer.K])
        gap = float((gq - gk).abs().max())
        if agree:
            assert gap <= 1e-13 * float(gq.abs().max())  # rounding of sums of 50 terms
        else:
            assert gap > 1e-3 * float(gq.abs().max())


def test_rem_reglu_diagonal_units_on_the_diagonal():
    """rem-reglu-diagonal: on ``q_j = k_j`` a ReGLU unit computes ``max(a, 0)² v_j``, a symmetric ReLU unit
    ``a² v_j``, and the bilinear layer (gated, σ = id) the same as the symmetric ReLU form (reference formulas)."""
    weights, data = _streams(521, 522)
    d, m, d_out, n = 5, 4, 3, 30
    Q = torch.randn(m, d, generator=weights, dtype=F64)
    V = torch.randn(m, d_out, generator=weights, dtype=F64)
    X = torch.randn(n, d, generator=data, dtype=F64)
    a = X @ Q.T
    with torch.no_grad():
        reglu = GatedMLP.from_weights(Q, Q, V, "relu")(X)
        symmetric = BilinearMLP.from_weights(Q, Q, V, "relu")(X)
        bilinear = GatedMLP.from_weights(Q, Q, V, "identity")(X)
    tol = 1e-12 * float(((a**2) @ V.abs()).max())  # rounding of sums of m = 4 products, far inside
    assert float((reglu - a.clamp(min=0) ** 2 @ V).abs().max()) <= tol
    assert float((symmetric - (a**2) @ V).abs().max()) <= tol
    assert float((bilinear - symmetric).abs().max()) <= tol
    assert float((reglu - symmetric).abs().max()) > 1e-3  # the two ReLU layers differ on the diagonal


# ---------------------------------------------------------------------------
# prop-symmetrised-exchange (chapter 14)


def test_prop_symmetrised_exchange_symbolic():
    """prop-symmetrised-exchange (sympy): ``h(a, b) = ½[σ(a) b + σ(b) a]`` has ``h(b, a) = h(a, b)`` for an undefined
    σ, and is ``ab`` for σ = identity."""
    a, b = sp.symbols("a b", real=True)
    sigma = sp.Function("sigma")
    h = sp.Rational(1, 2) * (sigma(a) * b + sigma(b) * a)
    assert sp.expand(h.subs({a: b, b: a}, simultaneous=True) - h) == 0
    assert sp.expand(h.replace(sigma, sp.Lambda(sp.Symbol("z"), sp.Symbol("z"))) - a * b) == 0


@pytest.mark.parametrize("act", ["gelu", "silu", "tanh"])
def test_prop_symmetrised_exchange_any_subset_of_units(act):
    """prop-symmetrised-exchange: exchanging ``q_j ↔ k_j`` for a random subset of units leaves the symmetrised layer
    unchanged (to rounding: the subset's factors are recomputed by the matrix product); its parameters are the gated
    layer's; a reference ``Σ_j ½[σ(a_j) b_j + σ(b_j) a_j] v_j`` agrees; the package's exchange (all units) too."""
    weights, data = _streams(531, 532)
    d, m, d_out, n = 6, 8, 3, 40
    torch.manual_seed(533)
    layer = SymmetrisedGatedMLP(d, m, d_out, activation=act, dtype=F64)
    X = torch.randn(n, d, generator=data, dtype=F64)
    subset = torch.rand(m, generator=weights) < 0.5
    subset[0], subset[1] = True, False
    with torch.no_grad():
        swapped = SymmetrisedGatedMLP(d, m, d_out, activation=act, dtype=F64)
        swapped.Q.copy_(torch.where(subset[:, None], layer.K, layer.Q))
        swapped.K.copy_(torch.where(subset[:, None], layer.Q, layer.K))
        swapped.V.copy_(layer.V)
        out = layer(X)
        sig = {"gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu, "tanh": torch.tanh}[act]
        A, B = X @ layer.Q.T, X @ layer.K.T
        reference = (0.5 * (sig(A) * B + sig(B) * A)) @ layer.V
        tol = 1e-12 * float(out.abs().max() + 1)
        assert float((swapped(X) - out).abs().max()) <= tol
        assert float((reference - out).abs().max()) <= tol
        assert torch.equal(exchanged(layer)(X), out)
    gated = GatedMLP(d, m, d_out, activation=act, dtype=F64)
    assert [p.shape for p in layer.parameters()] == [p.shape for p in gated.parameters()]


def test_prop_symmetrised_exchange_identity_is_bilinear():
    """prop-symmetrised-exchange: for σ = identity the symmetrised layer is the bilinear layer (gated, σ = id)."""
    weights, data = _streams(541, 542)
    Q, K = (torch.randn(5, 4, generator=weights, dtype=F64) for _ in range(2))
    V = torch.randn(5, 2, generator=weights, dtype=F64)
    X = torch.randn(30, 4, generator=data, dtype=F64)
    layer = SymmetrisedGatedMLP(4, 5, 2, activation="identity", dtype=F64)
    with torch.no_grad():
        layer.Q.copy_(Q), layer.K.copy_(K), layer.V.copy_(V)
        out = layer(X)
        bilinear = GatedMLP.from_weights(Q, K, V, "identity")(X)
    assert float((out - bilinear).abs().max()) <= 1e-12 * float(bilinear.abs().max())


# ---------------------------------------------------------------------------
# rem-training-protocol (chapter 14)


@pytest.mark.parametrize("form", list(E.FORMS))
def test_rem_training_protocol_matched_width(form):
    """rem-training-protocol, item 2 (eq-matched-width): every block gets ``m = round(m₀(d + d_out)/(2Rd + d_out))``
    units (``d + d_out`` per unit for the plain MLP, so it keeps ``m₀``), at the protocol's ``m₀`` and at others."""
    kind, _, rank = E.FORMS[form]
    for m0, d, d_out in [(E.PROTOCOL["reference_width"], 8, 4), (32, 8, 8), (17, 5, 3)]:
        budget = m0 * (d + d_out)
        per_unit = d + d_out if kind == "kv" else 2 * rank * d + d_out
        expected = max(1, round(m0 * (d + d_out) / per_unit))
        assert E.width_for_budget(form, d, d_out, budget) == expected
        model = E.make_model(form, d, d_out, budget, seed=0)
        block = sum(p.numel() for p in model.block.parameters())
        assert block == expected * per_unit  # the block's actual parameter count


def test_rem_training_protocol_skip_path_and_one_schedule():
    """rem-training-protocol, items 1 and 3: every model has the affine skip path ``xSᵀ + c`` with ``c = 0`` and
    ``S ~ N(0, 1/d)``; one learning rate and one number of steps for every form (nothing tuned per form); a seed
    draws the initialisation only (two seeds, same task, different weights)."""
    d, d_out = 64, 16
    budget = 32 * (d + d_out)
    for form in E.FORMS:
        model = E.make_model(form, d, d_out, budget, seed=3)
        assert torch.equal(model.skip.bias, torch.zeros(d_out, dtype=F64))
        std = float(model.skip.weight.detach().std())
        assert abs(std * math.sqrt(d) - 1) < 0.1  # 1024 entries: the sample std is within ~2.2 % of the true one
    assert isinstance(E.PROTOCOL["lr"], float) and isinstance(E.PROTOCOL["steps"], int)
    one = E.make_model("SwiGLU", d, d_out, budget, seed=0)
    two = E.make_model("SwiGLU", d, d_out, budget, seed=1)
    assert not torch.equal(one.block.Q, two.block.Q)


# ---------------------------------------------------------------------------
# lem-lm-matched-width and rem-lm-protocol (chapter 16)


def test_lem_lm_matched_width_every_d():
    """lem-lm-matched-width: for every d from 1 to 4096, ``m = round(8d/3)`` gives ``|3md − 8d²| ≤ 3d/2`` (exact
    integers); and the package's three-matrix blocks have that width and ``3md`` parameters at the book's shape."""
    for d in range(1, 4097):
        m = round(8 * d / 3)
        assert abs(3 * m * d - 8 * d * d) * 2 <= 3 * d
    shape = lp.PROTOCOL.shape
    d = shape.n_embd
    assert shape.mlp_ratio == 4
    for form in lp.PROTOCOL.forms:
        if form.kind != "kv":
            assert lm.ffn_width(form, shape) == round(8 * d / 3)
            assert lm.ffn_parameters(form, shape) == 3 * round(8 * d / 3) * d
        else:
            assert lm.ffn_parameters(form, shape) == 8 * d * d


def test_rem_lm_protocol_is_nanogpt_baby_run():
    """rem-lm-protocol, item 1: nanoGPT's CPU baby run (README: block 64, batch 12, 4 layers, 4 heads, width 128,
    2000 iterations; train.py: AdamW β = (0.9, 0.99) for the char model, weight decay 0.1, clipping at 1, 100 warm-up
    iterations, cosine decay to a tenth of the peak rate); residual writers start at 0.02/√(2·layers).  Checked
    against nanoGPT at commit 3adf61e: README.md (the CPU command), config/train_shakespeare_char.py (beta2,
    warmup_iters, min_lr = learning_rate/10), train.py (beta1, weight_decay, grad_clip) and model.py (c_proj init)."""
    P = lp.PROTOCOL
    assert (P.shape.block_size, P.training.batch_size) == (64, 12)
    assert (P.shape.n_layer, P.shape.n_head, P.shape.n_embd) == (4, 4, 128)
    assert P.lr_sweep.iterations == P.main.iterations == 2000
    assert tuple(P.training.betas) == (0.9, 0.99)
    assert (P.training.weight_decay, P.training.grad_clip) == (0.1, 1.0)
    assert (P.training.warmup_iters, P.training.min_lr_ratio) == (100, 0.1)
    peak = 1e-3
    assert learning_rate_at(0, peak, P, 2000) < learning_rate_at(99, peak, P, 2000) <= peak  # warm-up
    assert abs(learning_rate_at(100, peak, P, 2000) - peak) < 1e-12
    assert abs(learning_rate_at(1999, peak, P, 2000) - 0.1 * peak) < 1e-8  # cosine to a tenth
    mid = 100 + (2000 - 100) // 2
    assert abs(learning_rate_at(mid, peak, P, 2000) - 0.55 * peak) < 1e-12  # half-way: (peak + low)/2
    torch.manual_seed(0)
    model = lm.GPT(P.shape, P.form("swiglu"), vocab_size=65)
    residual = 0.02 / math.sqrt(2 * P.shape.n_layer)
    for block in model.blocks:
        for tensor, std in [(block.attn.qkv.weight, 0.02), (block.attn.proj.weight, residual)]:
            assert abs(float(tensor.detach().std()) / std - 1) < 0.05  # ≥ 16384 entries: sample std within ~1.1 %
        for name, p in block.ffn.named_parameters():
            assert abs(float(p.detach().std()) / (residual if name == "V" else 0.02) - 1) < 0.05


def test_rem_lm_protocol_rates_seeds_and_primary_contrasts():
    """rem-lm-protocol, items 2, 3 and 5: the sweep trains every form once, on seed 0, at every rate of the grid;
    the main stage every form on the same seeds at one rate per form; each primary contrast pairs forms that differ
    in one respect (same σ; gated against symmetrised or symmetric)."""
    P = lp.PROTOCOL
    sweep = P.runs("lr-sweep")
    assert P.lr_sweep.seeds == (0,)
    assert {(r.form.key, r.learning_rate) for r in sweep} == {
        (f.key, lr) for f in P.forms for lr in P.lr_sweep.learning_rates
    }
    assert len(sweep) == len(P.forms) * len(P.lr_sweep.learning_rates)
    rates = {f.key: P.lr_sweep.learning_rates[i % len(P.lr_sweep.learning_rates)] for i, f in enumerate(P.forms)}
    main = P.runs("main", rates)
    assert P.main.seeds[0] == 0 and len(P.main.seeds) >= 3
    assert all(r.learning_rate == rates[r.form.key] for r in main)
    assert {(r.form.key, r.seed) for r in main} == {(f.key, s) for f in P.forms for s in P.main.seeds}
    for contrast in lp.PRIMARY_CONTRASTS:
        a, b = P.form(contrast.a), P.form(contrast.b)
        assert a.activation == b.activation and a.kind == "gated" and b.kind in ("symmetrised", "bilinear")
