"""Chapter 11 (conservation laws): thm-conservation, and the helpers the chapter adds.

The facts asserted here are the chapter's claims, on the package's layers and
symbolic identities:

* ``thm-conservation`` — where the loss is invariant under the inverse scaling
  of a pair of a unit's vectors, ``a·∇_a L = b·∇_b L``; one gradient step with
  coupled weight decay gives exactly ``c' = (1 − ηλ)² c + η²(‖g_a‖² − ‖g_b‖²)``
  (in floating point: within the derived rounding bound
  :func:`symbreak.dynamics.gd_identity_bound`); ``‖q_j‖² − ‖k_j‖²`` is conserved
  by the symmetric form (every σ) and ReGLU, not by SwiGLU or GEGLU;
  ``‖k_j‖² − ‖v_j‖²`` by every gated form and by the symmetric form only for
  positively homogeneous σ; the drift is second order in ``η`` per step, first
  order over a fixed training time; weight decay makes ``c_j`` decay like
  ``exp(−2λt)``; momentum flows and Adam break the law.
"""

from __future__ import annotations

import copy
import math

import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import CONSERVATION_CASES, seeds, small_layer
from symbreak import REGISTRY, symbolic
from symbreak import dynamics as D
from symbreak.decide import decide_zero
from symbreak.layers import BilinearMLP, KeyValueMLP
from symbreak.symbolic import conservation as symbolic_conservation

F64 = torch.float64

FORMS = CONSERVATION_CASES


pytestmark = pytest.mark.usefixtures("one_thread")


_layer = small_layer


def _data(seed: int, d: int = 4, d_out: int = 2, n: int = 64):
    torch.manual_seed(seed + 1)
    teacher = KeyValueMLP(d, 6, d_out, activation="gelu", dtype=F64)
    return D.teacher_data(teacher, d, n, seed=seed)


# ---------------------------------------------------------------------------
# which pairs: the prediction, the symbolic generator and the unit-level defect agree


@pytest.mark.parametrize(("form", "act", "laws"), FORMS)
def test_thm_conservation_predicted_pairs(form, act, laws):
    """thm-conservation: conserved_pairs gives the theorem's table (symmetric: qk always; gated: kv always)."""
    assert D.conserved_pairs(_layer(form, act)) == laws


@pytest.mark.parametrize(("form", "act", "laws"), FORMS)
def test_thm_conservation_symbolic_generator(form, act, laws):
    """thm-conservation: A·∇_A f − B·∇_B f of a unit is zero exactly where the law holds, and is δ(x·q, x·k) v."""
    for pair, holds in laws.items():
        generator, predicted = symbolic.rescaling_generator(form, pair, 2, 1, act)
        assert sp.expand(generator - predicted) == sp.zeros(1, 1)
        assert (generator == sp.zeros(1, 1)) == holds


@pytest.mark.parametrize(("form", "act", "laws"), FORMS)
def test_thm_conservation_generator_checks(form, act, laws):
    """thm-conservation: generator_checks lists the form's pairs; ≡ 0 exactly where the law holds, always = δ v."""
    checks = symbolic_conservation.generator_checks(form, act)
    assert list(checks) == list(laws)
    for pair, holds in laws.items():
        assert checks[pair].vanishes == holds
        assert checks[pair].equals_defect


@pytest.mark.parametrize(("form", "pair"), [("rank1", "qk"), ("gated", "kv")])
def test_thm_conservation_generator_every_sigma(form, pair):
    """thm-conservation: with an undefined σ the generator vanishes for the symmetric qk and the gated kv pair."""
    generator, predicted = symbolic.rescaling_generator(form, pair, 2, 2)
    assert generator == sp.zeros(1, 2)
    assert predicted == sp.zeros(1, 2)


@pytest.mark.parametrize("name", ["identity", "relu", "leaky_relu", "abs", "gelu", "silu", "tanh"])
def test_thm_conservation_defects_are_euler_defects(name):
    """thm-conservation: the unit-level defects are 0 or the Euler defect z σ'(z) − σ(z) at a factor."""
    euler, z = symbolic.euler_defect(name)
    a, b = sp.symbols("a b", real=True)
    expected = {
        ("rank1", "qk"): 0,
        ("rank1", "kv"): euler.subs(z, a * b),
        ("gated", "qk"): b * euler.subs(z, a),
        ("gated", "kv"): 0,
        ("kv", "kv"): euler.subs(z, b),
    }
    for (form, pair), value in expected.items():
        defect, _ = symbolic.charge_defect(form, pair, name)
        assert sp.expand((defect - value).rewrite(sp.Heaviside)) == 0
    decision = decide_zero(euler, (z,))
    assert decision.holds == REGISTRY[name].is_positively_homogeneous


def test_thm_conservation_gd_norm_identity():
    """thm-conservation: c' − (1−ηλ)²c − η²(‖g_a‖² − ‖g_b‖²) is −2η(1−ηλ)(a·g_a − b·g_b), as polynomials."""
    assert symbolic.gd_norm_identity(3) == 0


@pytest.mark.parametrize(
    ("form", "pair", "act"), [("rank1", "qk", None), ("gated", "kv", None), ("gated", "qk", "relu")]
)
def test_thm_conservation_gd_step_identity(form, pair, act):
    """thm-conservation: one exact GD step on one unit's loss satisfies the one-step identity."""
    assert symbolic.gd_step_identity(form, pair, 2, 1, act) == 0


def test_thm_conservation_gd_step_identity_fails_for_swiglu_pair():
    """thm-conservation (control): for the gated qk pair with an undefined σ the one-step residual is not zero."""
    assert symbolic.gd_step_identity("gated", "qk", 1, 1) != 0


# ---------------------------------------------------------------------------
# the one-step identity in float64, within the derived rounding bound


@pytest.mark.parametrize(("form", "act", "laws"), FORMS)
@settings(max_examples=6)
@given(seed=seeds, lr=st.floats(1e-3, 0.3), wd=st.sampled_from([0.0, 1e-3, 0.05]))
def test_thm_conservation_identity_within_rounding_bound(form, act, laws, seed, lr, wd):
    """thm-conservation: |ĉ' − predicted| ≤ gd_identity_bound where the law holds; far above it where it does not."""
    torch.manual_seed(seed)
    layer = _layer(form, act)
    X, Y = _data(seed % 1000)
    for pair, holds in laws.items():
        actual, predicted = D.gd_identity(layer, X, Y, lr=lr, weight_decay=wd, pair=pair)
        bound = D.gd_identity_bound(layer, X, Y, lr=lr, weight_decay=wd, pair=pair)
        ratio = float(((actual - predicted).abs() / bound).max())
        if holds:
            assert ratio <= 1.0
        else:
            assert ratio > 10.0


def test_thm_conservation_track_along_a_run():
    """thm-conservation: the identity holds at every step of a run with weight decay, per unit, within the bound."""
    X, Y = _data(2)
    torch.manual_seed(3)
    layer = _layer("rank1", "silu")
    track = D.track_gd_identity(layer, X, Y, lr=0.1, steps=12, weight_decay=0.01)
    assert set(track.residual) == {"qk", "kv"}
    assert track.charge["qk"].shape == (13, 3) and track.residual["qk"].shape == (12, 3)
    assert track.worst_ratio("qk") <= 1.0
    assert track.worst_ratio("kv") > 10.0
    assert torch.equal(track.charge["qk"][-1], D.norm_differences(layer)["qk"])


def test_gd_identity_bound_is_rounding_sized():
    """The bound is a few units of roundoff of ‖θ‖², not a loose tolerance."""
    X, Y = _data(0)
    torch.manual_seed(0)
    layer = _layer("gated", "silu")
    bound = D.gd_identity_bound(layer, X, Y, lr=0.1, pair="kv")
    scale = sum(float((p.detach() ** 2).sum()) for p in layer.parameters())
    assert float(bound.max()) < 1e4 * 2.0**-53 * scale


# ---------------------------------------------------------------------------
# drift against the step, weight decay, momentum and Adam


def _pair_layers():
    torch.manual_seed(2)
    return _layer("rank1", "silu", m=4), _layer("gated", "silu", m=4)


def test_thm_conservation_drift_second_order_per_step_first_order_per_time():
    """thm-conservation: one step drifts by O(η²) (slope 2), a fixed time T = Sη by O(η) (slope 1); broken: 1 and 0."""
    X, Y = _data(0)
    symmetric, _ = _pair_layers()
    lrs = [0.02, 0.01, 0.005]
    one = D.charge_drift(symmetric, X, Y, lrs=lrs, steps=[1, 1, 1], pair="qk")
    fixed = D.charge_drift(symmetric, X, Y, lrs=lrs, steps=[25, 50, 100], pair="qk")
    broken = D.charge_drift(symmetric, X, Y, lrs=lrs, steps=[25, 50, 100], pair="kv")
    assert abs(D.loglog_slope(lrs, one) - 2.0) < 0.01
    assert 0.8 < D.loglog_slope(lrs, fixed) < 1.3
    assert abs(D.loglog_slope(lrs, broken)) < 0.2


def test_thm_conservation_weight_decay_rate():
    """thm-conservation: with coupled decay λ, c_j(t) decays at the rate −2 log(1 − ηλ)/η ≈ 2λ."""
    X, Y = _data(0)
    symmetric, swiglu = _pair_layers()
    lr, lam, steps = 0.02, 0.5, 200
    expected = -2 * math.log(1 - lr * lam) / lr
    for layer, pair in [(symmetric, "qk"), (swiglu, "kv")]:
        history = D.train(copy.deepcopy(layer), X, Y, lr=lr, steps=steps, weight_decay=lam, record_every=10)
        t = [s * lr for s in history.steps]
        c = history.as_tensor(pair)
        for j in range(c.shape[1]):
            if abs(float(c[0, j])) > 0.2:
                assert abs(D.exponential_rate(t, c[:, j]) / expected - 1) < 0.05


def test_thm_conservation_momentum_flow_and_adam_break_the_law():
    """thm-conservation, rem-momentum-charge: GD and heavy ball (fixed μ) drift less on a finer grid; a momentum flow
    (η = h², μ = 1 − γh) and Adam do not."""
    X, Y = _data(0)
    symmetric, _ = _pair_layers()
    steps = [20, 80]
    gd = D.charge_drift(symmetric, X, Y, lrs=[1.0 / s for s in steps], steps=steps, pair="qk")
    heavy = D.charge_drift(
        symmetric, X, Y, lrs=[0.1 / s for s in steps], steps=steps, pair="qk", optimizer="momentum", momenta=0.9
    )
    h = [2.0 / s for s in steps]
    flow = D.charge_drift(
        symmetric, X, Y, lrs=[x * x for x in h], steps=steps, pair="qk", optimizer="momentum",
        momenta=[1 - 2 * x for x in h],
    )  # fmt: skip
    adam = D.charge_drift(symmetric, X, Y, lrs=[0.2 / s for s in steps], steps=steps, pair="qk", optimizer="adam")
    assert gd[1] < 0.4 * gd[0]
    assert heavy[1] < 0.7 * heavy[0]
    assert flow[1] > 0.7 * flow[0]
    assert adam[1] > 0.7 * adam[0]
    assert min(flow[1], adam[1]) > 5 * gd[1]


# ---------------------------------------------------------------------------
# fits and argument checks


def test_loglog_slope_and_exponential_rate_exact_data():
    x = [0.1, 0.2, 0.4, 0.8]
    assert abs(D.loglog_slope(x, [3 * v**2 for v in x]) - 2.0) < 1e-12
    t = [0.0, 0.5, 1.0, 1.5]
    assert abs(D.exponential_rate(t, [-2 * math.exp(-0.7 * s) for s in t]) - 0.7) < 1e-12


def test_bad_arguments():
    X, Y = _data(0)
    gated = _layer("gated", "silu")
    with pytest.raises(ValueError, match="x, y: expected positive values"):
        D.loglog_slope([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="x, y: expected two 1-d sequences"):
        D.loglog_slope([1.0], [1.0])
    with pytest.raises(ValueError, match="c: expected values of one sign"):
        D.exponential_rate([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="t, c: expected two 1-d sequences"):
        D.exponential_rate([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="pair: expected 'qk' or 'kv', got 'qv'"):
        D.gd_identity_bound(gated, X, Y, lr=0.1, pair="qv")
    with pytest.raises(ValueError, match="pair: 'qk' needs queries"):
        D.gd_identity_bound(_layer("kv", "relu"), X, Y, lr=0.1, pair="qk")
    with pytest.raises(ValueError, match="layer: expected a BilinearMLP of rank 1"):
        D.gd_identity_bound(BilinearMLP(4, 3, 2, rank=2, dtype=F64), X, Y, lr=0.1)
    with pytest.raises(ValueError, match="steps: expected an int >= 1"):
        D.track_gd_identity(gated, X, Y, lr=0.1, steps=0)
    with pytest.raises(ValueError, match="steps: expected one step count per learning rate"):
        D.charge_drift(gated, X, Y, lrs=[0.1, 0.2], steps=[1], pair="qk")
    with pytest.raises(ValueError, match="momenta: expected one μ or one per learning rate"):
        D.charge_drift(gated, X, Y, lrs=[0.1], steps=[1], pair="qk", momenta=[0.9, 0.9])
    with pytest.raises(ValueError, match="pair: expected 'qk' or 'kv'"):
        D.charge_drift(gated, X, Y, lrs=[0.1], steps=[1], pair="q")
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        D.conserved_pairs(torch.nn.Linear(2, 2))
    track = D.track_gd_identity(gated, X, Y, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="pair: expected one of"):
        track.worst_ratio("qv")
    with pytest.raises(ValueError, match="form: expected one of"):
        symbolic.charge_defect("full", "qk")
    with pytest.raises(ValueError, match="pair: expected one of \\['kv'\\] for form 'kv'"):
        symbolic.charge_defect("kv", "qk")
    with pytest.raises(ValueError, match="d: expected an int >= 1"):
        symbolic.gd_norm_identity(0)
    with pytest.raises(ValueError, match="d_out: expected an int >= 1"):
        symbolic.rescaling_generator("rank1", "qk", 2, 0)
    with pytest.raises(ValueError, match="form: expected one of"):
        symbolic_conservation.generator_checks("full")
