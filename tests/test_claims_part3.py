"""Unit tests for statements of chapters 6–10 whose remaining claims no other test asserted.

* ``rem-gate-temperature`` — the identity σ(αz)/α = z s(αz) in float64, and the three limits of the defect D(α)
  for GELU and SiLU (the existing test of Chapter 7 covers SiLU only, at α → +∞ and α → 0);
* ``rem-single-alpha`` — the log-periodic example evaluated in float64: σ(2ⁿz) = 2ⁿσ(z), oddness, a refuted
  α = 3, the oscillation of σ(z)/z at 0, and why the second point z = 2^{1/4} of the remark's argument is needed.

Every reference formula is written here from the text of the remark (``math`` and ``scipy``), not taken from the
package; inputs come from random streams of their own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate

from symbreak import REGISTRY, symbolic
from symbreak import verdicts as V

F64 = torch.float64
U = 2.0**-53  # unit roundoff of float64


def _gate(name: str, u: float) -> float:
    """The gate s of σ(z) = z s(z), written from the remark: the logistic sigmoid (SiLU) or Φ (GELU)."""
    if name == "silu":
        return 1 / (1 + math.exp(-u)) if u >= 0 else math.exp(u) / (1 + math.exp(u))
    return 0.5 * math.erfc(-u / math.sqrt(2))


def _phi(z: float) -> float:
    return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


#: The limits of σ(αz)/α = z s(αz) that the remark names, as α → −∞, 0, +∞.
_LIMITS = {"minus": lambda z: min(z, 0.0), "zero": lambda z: z / 2, "plus": lambda z: max(z, 0.0)}
#: s′(0): the largest slope of each gate, so |s(αz) − ½| ≤ s′(0)|α||z|.
_SLOPE_AT_ZERO = {"silu": 0.25, "gelu": 1 / math.sqrt(2 * math.pi)}


def _gaussian_mean(f, scale: float = 1.0) -> tuple[float, float]:
    """∫ f(z) φ(z) dz by scipy's quad, split at 0 and at ±10/scale (where a sharp gate turns): value and error."""
    cut = min(10.0 / scale, 10.0)
    total, error = 0.0, 0.0
    for a, b in ((-math.inf, -cut), (-cut, 0.0), (0.0, cut), (cut, math.inf)):
        value, err = integrate.quad(lambda z: f(z) * _phi(z), a, b, epsabs=1e-14, epsrel=1e-12, limit=200)
        total, error = total + value, error + err
    return total, error


@pytest.mark.parametrize("name", ["silu", "gelu"])
def test_rem_gate_temperature_identity_in_float64(name):
    """rem-gate-temperature: the registry's σ(αz)/α equals z s(αz) with s written independently, in float64.

    Both sides are a few roundings of a number of modulus at most |z|, so the stated tolerance is 64u|z|.
    """
    z = torch.randn(2000, generator=torch.Generator().manual_seed(6106), dtype=F64) * 3
    signs = torch.randint(0, 2, (2000,), generator=torch.Generator().manual_seed(6107)) * 2 - 1
    alpha = signs * 2.0 ** torch.empty(2000, dtype=F64).uniform_(-6, 6, generator=torch.Generator().manual_seed(6108))
    left = REGISTRY[name](alpha * z) / alpha
    right = torch.tensor(
        [zi * _gate(name, ai * zi) for zi, ai in zip(z.tolist(), alpha.tolist(), strict=True)], dtype=F64
    )
    assert ((left - right).abs() <= 64 * U * z.abs()).all()


@pytest.mark.parametrize("name", ["silu", "gelu"])
def test_rem_gate_temperature_three_limits_of_the_defect(name):
    """rem-gate-temperature: D(α) → E[(min(z, 0) − σ)²], E[(z/2 − σ)²], E[(max(z, 0) − σ)²] as α → −∞, 0, +∞.

    D(α) = E[(z s(αz) − σ(z))²] (part 1 of the proposition on the inverse-scaling defect, with
    eq-gate-temperature) and each limit are integrated by scipy's quad.  With f_α = z s(αz) and f the limit,
    |f_α + f − 2σ| ≤ 4|z|, so
    |D(α) − D_lim| ≤ 4 E[z² |s(αz) − s_lim|]: that is 4 E[z² s(−|α||z|)] at both ends (a gate with s(−u) = 1 − s(u))
    and at most 4 s′(0)|α| E|z|³ = 8 s′(0)|α| √(2/π) near 0.  The test takes |α| = 64 and 2⁻²⁰, where these bounds
    are far below the gaps between the three limits, so a wrong limit cannot pass.
    """
    sigma = lambda z: z * _gate(name, z)  # noqa: E731
    limits = {
        key: _gaussian_mean(lambda z, lim=lim: (lim(z) - sigma(z)) ** 2) for key, lim in _LIMITS.items()
    }  # key → (value, quad's error)
    big, small = 64.0, 2.0**-20
    tail, tail_error = _gaussian_mean(lambda z: z * z * _gate(name, -big * abs(z)), scale=big)
    bounds = {"minus": 4 * tail + 4 * tail_error, "plus": 4 * tail + 4 * tail_error}
    bounds["zero"] = 8 * _SLOPE_AT_ZERO[name] * small * math.sqrt(2 / math.pi)
    at = {"minus": -big, "zero": small, "plus": big}
    for key, alpha in at.items():
        defect, error = _gaussian_mean(lambda z, a=alpha: (z * _gate(name, a * z) - sigma(z)) ** 2, scale=abs(alpha))
        limit, limit_error = limits[key]
        assert abs(defect - limit) <= bounds[key] + error + limit_error, (name, key)
    values = sorted(value for value, _ in limits.values())
    assert min(b - a for a, b in zip(values, values[1:], strict=False)) > 100 * max(bounds.values())


@pytest.mark.parametrize("name", ["silu", "gelu"])
@pytest.mark.parametrize("alpha", [-4.0, -0.25, 0.25, 4.0])
def test_rem_gate_temperature_package_quadrature_at_the_plotted_ends(name, alpha):
    """rem-gate-temperature (fig-scaling-defect): the package's Gauss–Hermite D(α) at the ends of the plotted range
    agrees with scipy's quad of E[(z s(αz) − σ(z))²].

    Tolerance: a relative 10⁻⁴, a convention far below the four decimals the chapter quotes and the figure's
    resolution.  It is not rounding-tight: at |α| = 4 the 160-node Gauss–Hermite rule is off by about 2·10⁻⁵ of the
    value (GELU, α = 4: 0.0141729957 against 0.0141732580 by scipy's quad and by mpmath), because the integrand turns
    on a scale 1/|α| near 0, where the rule has few nodes.
    """
    sigma = lambda z: z * _gate(name, z)  # noqa: E731
    reference, error = _gaussian_mean(lambda z: (z * _gate(name, alpha * z) - sigma(z)) ** 2, scale=abs(alpha))
    assert reference > 1e-3
    assert abs(V.inverse_scaling_defect(name, alpha) - reference) <= 1e-4 * reference + error


def _log_periodic(z: np.ndarray) -> np.ndarray:
    """σ(z) = z (2 + sin(2π log₂|z|)), σ(0) = 0, written from the remark."""
    z = np.asarray(z, dtype=np.float64)
    out = np.zeros_like(z)
    nz = z != 0
    out[nz] = z[nz] * (2 + np.sin(2 * np.pi * np.log2(np.abs(z[nz]))))
    return out


def test_rem_single_alpha_in_float64():
    """rem-single-alpha: the example in float64 — the package's function is the remark's formula; σ(2ⁿz) = 2ⁿσ(z)
    for n = −5 … 5 (relative to 2ⁿ|z|, within 10⁻¹², a few roundings of a sine of an argument below 2π·45); σ is odd
    bit for bit; α = 3 changes σ by more than |z|/10 somewhere."""
    z = np.random.default_rng(6109).standard_normal(4000) * np.exp(np.random.default_rng(6110).uniform(-20, 20, 4000))
    package = symbolic.log_periodic_activation(base=2)
    assert np.allclose(package(torch.tensor(z, dtype=F64)).numpy(), _log_periodic(z), rtol=1e-12, atol=0)
    for n in range(-5, 6):
        scaled = _log_periodic(2.0**n * z)
        assert np.all(np.abs(scaled - 2.0**n * _log_periodic(z)) <= 1e-12 * 2.0**n * np.abs(z)), n
    assert np.array_equal(_log_periodic(-z), -_log_periodic(z))
    assert np.max(np.abs(_log_periodic(3 * z) - 3 * _log_periodic(z)) / np.abs(z)) > 0.1


def test_rem_single_alpha_no_derivative_at_zero_and_second_point_needed():
    """rem-single-alpha: σ(z)/z takes the values 3 and 1 at z = 2^{−k+1/4} and 2^{−k+3/4} for every k, so it has no
    limit at 0 (no derivative); and α = √2 passes the remark's condition at z = 1 but fails at z = 2^{1/4}, which is
    why the argument for G_σ = {±2ⁿ} needs both points.  Tolerance 10⁻¹² (a few roundings)."""
    k = np.arange(1, 41, dtype=np.float64)
    for offset, value in ((0.25, 3.0), (0.75, 1.0)):
        z = 2.0 ** (-k + offset)
        assert np.allclose(_log_periodic(z) / z, value, rtol=0, atol=1e-12)
    alpha = math.sqrt(2)
    at_one = _log_periodic(np.array([alpha]))[0] - alpha * _log_periodic(np.array([1.0]))[0]
    assert abs(at_one) <= 1e-12
    w = 2.0**0.25
    at_quarter = _log_periodic(np.array([alpha * w]))[0] - alpha * _log_periodic(np.array([w]))[0]
    assert abs(at_quarter) > 1.0  # exactly 2^{3/4}·(1 − 3) in exact arithmetic
