"""Exchange and inverse scaling: which forms keep them, for which activations.

"Unchanged" means equal as exact functions: the computed outputs differ by no
more than the derived rounding bound of :mod:`symbreak.numerics`.  "Broken"
means a witness input where they differ by more than that bound.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import (
    ACTIVATIONS,
    equal_within_rounding,
    exceeds_rounding,
    inputs,
    nonzero_alpha,
    positive_alpha,
    seeds,
    sizes,
    transform_error,
)
from symbreak import activations as A
from symbreak.decide import decide_zero
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP, SymmetrisedGatedMLP
from symbreak.numerics import gamma
from symbreak.symmetry import (
    Change,
    compare_outputs,
    exchange,
    exchange_change_ratio,
    gauge,
    inverse_scale,
    output_change,
)

F64 = torch.float64
a_, b_ = sp.symbols("a b", real=True)
beta_ = sp.Symbol("beta", nonzero=True)


def _scalar_gated(act: str, a: float, b: float) -> tuple[GatedMLP, torch.Tensor]:
    """A one-unit gated layer and an input with x·q = a and x·k = b, so the output is σ(a) b."""
    Q = torch.tensor([[a, 0.0]], dtype=F64)
    K = torch.tensor([[b, 0.0]], dtype=F64)
    V = torch.ones(1, 1, dtype=F64)
    return GatedMLP.from_weights(Q, K, V, activation=act), torch.tensor([[1.0, 0.0]], dtype=F64)


@given(d=sizes, m=sizes, rank=st.integers(1, 3), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_exchange_bilinear_form_keeps_exchange(d, m, rank, seed, act):
    """thm-exchange: the symmetric (and rank-R) bilinear form is unchanged by Q ↔ K, for every σ."""
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)
    assert equal_within_rounding(layer, exchange(layer), inputs(seed, 8, d))


@given(d=sizes, m=sizes, rank=st.integers(1, 3), seed=seeds, act=st.sampled_from(ACTIVATIONS), alpha=nonzero_alpha)
def test_thm_inverse_scaling_bilinear_form_keeps_it_for_every_alpha(d, m, rank, seed, act, alpha):
    """thm-inverse-scaling: (q_j, k_j) → (α q_j, k_j/α) leaves the bilinear form unchanged, any α ≠ 0, any σ."""
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)
    units = list(range(0, m, 2))
    assert equal_within_rounding(layer, inverse_scale(layer, alpha, units), inputs(seed, 8, d), transform_error(F64, 1))


@given(d=sizes, m=sizes, seed=seeds)
def test_thm_exchange_gated_identity_keeps_exchange(d, m, seed):
    """thm-exchange: with σ linear the gated form is the bilinear layer and keeps the exchange symmetry."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, activation="identity", dtype=F64)
    assert equal_within_rounding(layer, exchange(layer), inputs(seed, 8, d))


@pytest.mark.parametrize("act", [n for n in ACTIVATIONS if not A.get(n).is_linear])
def test_thm_exchange_gated_nonlinear_breaks_exchange(act):
    """thm-exchange: for every nonlinear σ there are a, b with σ(a) b ≠ σ(b) a; the gated layer shows it."""
    decision = decide_zero(A.get(act).sym(a_) * b_ - A.get(act).sym(b_) * a_, (a_, b_))
    assert decision.holds is False
    layer, x = _scalar_gated(act, float(decision.witness[a_]), float(decision.witness[b_]))
    assert exceeds_rounding(layer, exchange(layer), x)


@given(seed=seeds, alpha=positive_alpha, d=sizes, m=sizes)
def test_thm_inverse_scaling_relu_gating_keeps_positive_alpha(seed, alpha, d, m):
    """thm-inverse-scaling: ReGLU is unchanged by inverse scaling with α > 0."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, activation="relu", dtype=F64)
    assert equal_within_rounding(layer, inverse_scale(layer, alpha), inputs(seed, 8, d), transform_error(F64, 1))


@pytest.mark.parametrize("alpha", [-0.5, -1.0, -3.0])
def test_thm_inverse_scaling_relu_gating_breaks_negative_alpha(alpha):
    """thm-inverse-scaling: ReGLU changes under α < 0: relu(α)/α · 1 = 0 ≠ relu(1) · 1."""
    layer, x = _scalar_gated("relu", 1.0, 1.0)
    assert exceeds_rounding(layer, inverse_scale(layer, alpha), x, transform_error(F64, 1))


@pytest.mark.parametrize("act", [n for n in ACTIVATIONS if not A.get(n).is_positively_homogeneous])
def test_thm_inverse_scaling_non_homogeneous_gating_breaks_it(act):
    """thm-inverse-scaling: a non-homogeneous σ has α > 0, z with σ(αz) ≠ α σ(z); gating with it breaks the symmetry."""
    decision = A.get(act).positive_homogeneity
    assert decision.holds is False
    alpha = float(next(v for s, v in decision.witness.items() if s.name == "alpha"))
    layer, x = _scalar_gated(act, float(decision.witness[A.z]), 1.0)
    assert exceeds_rounding(layer, inverse_scale(layer, alpha), x, transform_error(F64, 1))


@given(
    seed=seeds,
    d=sizes,
    m=sizes,
    act=st.sampled_from(ACTIVATIONS),
    perm=st.permutations(range(3)),
    exps=st.lists(st.integers(-2, 2), min_size=3, max_size=3),
    signs=st.lists(st.sampled_from([-1.0, 1.0]), min_size=3, max_size=3),
)
def test_thm_gauge_exact_representable_A(seed, d, m, act, perm, exps, signs):
    """thm-gauge: (Q_j, K_j) → (Q_j A, K_j A⁻ᵀ) leaves the layer unchanged.

    A = D P with D a diagonal of signed powers of two and P a permutation: A
    and A⁻¹ are exact in floating point, so the transformed parameters carry
    no rounding and the outputs must agree within the layer's rounding bound.
    """
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=3, activation=act, dtype=F64)
    D = torch.diag(torch.tensor([s * 2.0**e for s, e in zip(signs, exps, strict=True)], dtype=F64))
    A_ = D @ torch.eye(3, dtype=F64)[list(perm)]
    assert equal_within_rounding(layer, gauge(layer, A_), inputs(seed, 8, d))


@given(seed=seeds, d=sizes, m=sizes, rank=st.integers(1, 3))
def test_thm_gauge_general_A_keeps_unit_forms(seed, d, m, rank):
    """thm-gauge: for a general invertible A, W_j = Q_j K_jᵀ is unchanged.

    Tolerance: each new q, k is a length-R sum (error γ_R relative to
    |A||q|, |A⁻¹||k|); the change of W_j is then bounded by
    (2γ_R + γ_R²)·(|A||Q_j|)(|A⁻¹||K_j|)ᵀ plus the rounding γ_R of both products.
    """
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=rank, dtype=F64)
    A_ = torch.eye(rank, dtype=F64) + 0.5 * torch.randn(rank, rank, dtype=F64)
    if torch.linalg.matrix_rank(A_) < rank:
        return
    new = gauge(layer, A_)
    g = gamma(rank + 2, F64)  # a length-R sum, its product, and the inverse's own relative error
    Ainv = torch.linalg.inv(A_)
    Qa = torch.einsum("rs,rjd->sjd", A_.abs(), layer.Q.detach().abs())
    Ka = torch.einsum("sr,rjd->sjd", Ainv.abs(), layer.K.detach().abs())
    cond = float(torch.linalg.cond(A_))
    bound = (4 * g + 2 * rank * 2.0**-53 * cond) * torch.einsum("rjd,rje->jde", Qa, Ka) + 1e-300
    bound = bound + 2 * g * torch.einsum("rjd,rje->jde", layer.Q.detach().abs(), layer.K.detach().abs())
    assert bool(((new.unit_forms() - layer.unit_forms()).abs() <= bound).all())


def test_transformations_do_not_mutate():
    layer = GatedMLP(3, 4)
    Q, K = layer.Q.detach().clone(), layer.K.detach().clone()
    exchange(layer)
    inverse_scale(layer, 2.0)
    assert torch.equal(layer.Q, Q) and torch.equal(layer.K, K)
    bil = BilinearMLP(3, 4, rank=2)
    Qb = bil.Q.detach().clone()
    gauge(bil, torch.tensor([[2.0, 1.0], [0.0, 1.0]], dtype=torch.float64))
    assert torch.equal(bil.Q, Qb)


def test_exchange_swaps_parameters():
    layer = GatedMLP(3, 4)
    new = exchange(layer)
    assert torch.equal(new.Q, layer.K) and torch.equal(new.K, layer.Q) and torch.equal(new.V, layer.V)


def test_inverse_scale_selected_units_only():
    layer = BilinearMLP(3, 4)
    new = inverse_scale(layer, 2.0, units=[1])
    assert torch.equal(new.Q[0, 1], 2 * layer.Q[0, 1]) and torch.equal(new.Q[0, 0], layer.Q[0, 0])
    assert torch.equal(new.K[0, 1], layer.K[0, 1] / 2)


def test_output_change_is_relative_frobenius():
    layer = KeyValueMLP(3, 4, activation="identity")
    other = KeyValueMLP.from_weights(layer.K.detach(), 2 * layer.V.detach(), activation="identity")
    x = torch.randn(5, 3)
    assert output_change(layer, other, x) == pytest.approx(1.0, rel=1e-6)


def test_bad_arguments():
    layer = GatedMLP(3, 4)
    with pytest.raises(ValueError, match="alpha: expected a finite non-zero real number, got 0"):
        inverse_scale(layer, 0)
    with pytest.raises(TypeError, match="alpha: expected a real number, got str"):
        inverse_scale(layer, "2")
    with pytest.raises(ValueError, match=r"units: expected indices in \[0, 4\), got 7"):
        inverse_scale(layer, 2.0, units=[7])
    with pytest.raises(TypeError, match="layer: expected a BilinearMLP, GatedMLP or SymmetrisedGatedMLP"):
        exchange(KeyValueMLP(3, 4))
    with pytest.raises(TypeError, match="layer: expected a BilinearMLP or GatedMLP"):
        inverse_scale(SymmetrisedGatedMLP(3, 4), 2.0)
    with pytest.raises(TypeError, match=r"units: expected ints in \[0, 4\), got bool"):
        inverse_scale(layer, 2.0, units=True)
    with pytest.raises(TypeError, match="alpha: expected a real number, got bool"):
        inverse_scale(layer, True)
    with pytest.raises(ValueError, match=r"A: expected shape \(rank, rank\) = \(1, 1\), got \(2, 2\)"):
        gauge(BilinearMLP(3, 4), torch.eye(2))
    with pytest.raises(ValueError, match="A: expected an invertible matrix"):
        gauge(BilinearMLP(3, 4, rank=2), torch.zeros(2, 2))
    with pytest.raises(TypeError, match="before: expected a symbreak layer"):
        output_change(torch.nn.Linear(3, 3), layer, torch.randn(2, 3))


def test_compare_outputs_reglu_exchange_by_hand():
    """One ReGLU unit with x·q = 1, x·k = −1: σ(1)(−1) = −1 before and σ(−1)·1 = 0 after ``Q ↔ K``."""
    layer, x = _scalar_gated("relu", 1.0, -1.0)
    change = compare_outputs(layer, exchange(layer), x)
    assert change.before.tolist() == [[-1.0]] and change.after.tolist() == [[0.0]]
    assert not change.within and change.outside == 1.0
    assert change.relative == 1.0 and change.largest == 1.0
    C, F = change.squared_norms()
    assert C.tolist() == [1.0] and F.tolist() == [1.0]


@given(d=sizes, m=sizes, seed=seeds)
def test_compare_outputs_identity_gating_keeps_exchange(d, m, seed):
    """thm-exchange with σ = id: the gated layer and its exchange agree within β_f + β_f' on every entry."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, activation="identity", dtype=F64)
    change = compare_outputs(layer, exchange(layer), inputs(seed, 8, d))
    assert change.within and change.outside == 0.0 and change.margin <= 1.0


@pytest.mark.parametrize("alpha", [-4.0, -1.5, -0.25])
def test_compare_outputs_at_the_reflected_input(alpha):
    """prop-inverse-scaling-defect: for ReLU, the layer scaled by α < 0 at x is the layer at −x.

    Compared at the same x instead, the two differ beyond rounding (ReGLU breaks α < 0).
    """
    torch.manual_seed(3)
    layer = GatedMLP(5, 7, activation="relu", dtype=F64)
    x = inputs(4, 64, 5)
    scaled = inverse_scale(layer, alpha)
    error = transform_error(F64, 1)
    assert compare_outputs(layer, scaled, -x, x_after=x, after_param_error=error).within
    assert not compare_outputs(layer, scaled, x, after_param_error=error).within


def test_change_shares_and_norms_by_hand():
    """before (3, 4), after (3, 5), bound (0.5, 0.5): one of two entries outside, margin 1/0.5 = 2."""
    before, after, bound = (torch.tensor([v], dtype=F64) for v in ([3.0, 4.0], [3.0, 5.0], [0.5, 0.5]))
    change = Change(before, after, bound)
    assert change.difference.tolist() == [[0.0, 1.0]]
    assert change.outside == 0.5 and change.margin == 2.0 and not change.within
    assert change.relative == pytest.approx(1 / 5, rel=1e-15)  # ‖(0, 1)‖ / ‖(3, 4)‖
    assert change.largest == pytest.approx(1 / 4, rel=1e-15)  # max |difference| / max |before|


def test_change_bad_input():
    one = torch.ones(2, 3)
    with pytest.raises(TypeError, match="after: expected a torch.Tensor, got list"):
        Change(one, [1.0], one)
    with pytest.raises(
        ValueError, match=r"before, after, bound: expected one shape, got \(\(2, 3\), \(3,\), \(2, 3\)\)"
    ):
        Change(one, torch.ones(3), one)
    with pytest.raises(ValueError, match="before: the output is identically zero"):
        _ = Change(torch.zeros(2, 3), one, one).relative
    with pytest.raises(TypeError, match="after: expected a symbreak layer, got Linear"):
        compare_outputs(GatedMLP(3, 4), torch.nn.Linear(3, 3), torch.randn(2, 3))


# ---------------------------------------------------------------------------
# exchange_change_ratio (prop-exchange-defect-scale)


def _mp_ratio(sigma, s):
    """2(1 − E[z σ(sz)]² / E[σ(sz)²]) by mpmath's adaptive quadrature, split at the kink 0 (an independent method)."""
    with mpmath.workdps(30):
        density = lambda z: mpmath.exp(-(z**2) / 2) / mpmath.sqrt(2 * mpmath.pi)  # noqa: E731
        square = mpmath.quad(lambda z: sigma(s * z) ** 2 * density(z), [-mpmath.inf, 0, mpmath.inf])
        cross = mpmath.quad(lambda z: z * sigma(s * z) * density(z), [-mpmath.inf, 0, mpmath.inf])
        return float(2 * (1 - cross**2 / square))


@pytest.mark.parametrize("s", [0.25, 1.0, 4.0])
def test_prop_exchange_defect_scale_ratio_against_mpmath(s):
    """prop-exchange-defect-scale: r_σ(s) against mpmath quadrature of σ written from its source (SiLU z/(1+e^{−z}),
    GELU z Φ(z), sigmoid); 1e-10 is a stated convention, far below the figure's resolution."""
    formulas = {
        "silu": lambda z: z / (1 + mpmath.exp(-z)),
        "gelu": lambda z: z * (1 + mpmath.erf(z / mpmath.sqrt(2))) / 2,
        "sigmoid": lambda z: 1 / (1 + mpmath.exp(-z)),
    }
    for name, f in formulas.items():
        assert exchange_change_ratio(name, [s])[0] == pytest.approx(_mp_ratio(f, mpmath.mpf(s)), abs=1e-10)


def test_prop_exchange_defect_scale_homogeneous_and_linear():
    """prop-exchange-defect-scale, part 1: ReLU's ratio is 1, |z|'s is 2 (even), the identity's 0, at every scale."""
    scales = [2.0**-6, 0.3, 1.0, 7.0, 2.0**8]
    for name, value in (("relu", 1.0), ("abs", 2.0), ("identity", 0.0)):
        assert exchange_change_ratio(name, scales) == pytest.approx([value] * len(scales), abs=1e-12)


def test_prop_exchange_defect_scale_limits():
    """prop-exchange-defect-scale, parts 2 and 3: SiLU, GELU → 0 (s → 0) and → 1 (s → ∞); sigmoid → 2 and 2 − 2/π.

    Small s, by hand: σ(z) = z/2 + e(z) with e even, so E[z σ(sz)] = s/2 and r = 2E[e²]/(s²/4 + E[e²]); e(x) ≈ x²/4
    (SiLU) or x²/√(2π) (GELU) gives r ≈ 3s²/2 and 12 s²/π.
    """
    small, large = 1e-3, 2.0**10
    silu, gelu, sig = (exchange_change_ratio(n, [small, large]) for n in ("silu", "gelu", "sigmoid"))
    assert silu[0] == pytest.approx(1.5 * small**2, rel=1e-3)
    assert gelu[0] == pytest.approx(12 * small**2 / math.pi, rel=1e-3)
    assert silu[1] == pytest.approx(1.0, abs=1e-5) and gelu[1] == pytest.approx(1.0, abs=1e-5)
    assert sig[0] == pytest.approx(2.0, abs=1e-5)
    assert sig[1] == pytest.approx(2 - 2 / math.pi, abs=2e-3)  # the approach is of order 1/s


def test_exchange_change_ratio_bad_arguments():
    with pytest.raises(ValueError, match="scales: expected a non-empty sequence of finite numbers > 0"):
        exchange_change_ratio("relu", [0.0])
    with pytest.raises(ValueError, match="scales: expected a non-empty sequence"):
        exchange_change_ratio("relu", [])


def test_exchange_swaps_q_and_k_of_the_symmetrised_control_and_keeps_its_output():
    """The control keeps the exchange symmetry (chapter 14): exchange takes it, swaps Q and K, and the output does
    not change by a bit (it had raised TypeError)."""
    layer = SymmetrisedGatedMLP(4, 6, 3, activation="silu")
    swapped = exchange(layer)
    x = torch.randn(7, 4)
    assert type(swapped) is SymmetrisedGatedMLP
    assert torch.equal(swapped.Q, layer.K) and torch.equal(swapped.K, layer.Q)
    assert not torch.equal(layer.Q, layer.K)
    assert torch.equal(swapped(x), layer(x))


def test_inverse_scale_takes_numpy_and_other_real_numbers():
    """``units=np.int64(1)`` had raised "not iterable", ``alpha=np.float32(2.0)`` "expected a real number"."""
    import fractions

    import numpy as np

    layer = GatedMLP(3, 4)
    by_int = inverse_scale(layer, 2.0, units=1)
    assert torch.equal(inverse_scale(layer, 2.0, units=np.int64(1)).Q, by_int.Q)
    assert torch.equal(inverse_scale(layer, 2.0, units=[np.int64(1)]).K, by_int.K)
    assert torch.equal(inverse_scale(layer, np.float32(2.0)).Q, inverse_scale(layer, 2.0).Q)
    assert torch.equal(inverse_scale(layer, fractions.Fraction(1, 2)).K, inverse_scale(layer, 0.5).K)
