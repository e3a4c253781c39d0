"""Rounding-error bounds, so that numerical checks use derived tolerances.

With unit roundoff ``u`` (``2^-24`` in float32, ``2^-53`` in float64) and
``γ_n = n u / (1 − n u)`` (Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1), a computed dot product of length ``n`` obeys
``|fl(x·y) − x·y| ≤ γ_n |x|·|y|``.  Propagating this bound through a layer gives
an elementwise bound ``β(x)`` on ``|fl(f(x)) − f(x)|``; two computations of
the same exact function then differ by at most ``β_f(x) + β_g(x)``.

:func:`within_bound` and :func:`margin` compare a measured difference with such a bound.

Two modelling assumptions enter; both are tested in ``tests/test_numerics.py``:

* σ is Lipschitz with constant ``L = sup|σ'|`` (:attr:`Activation.lipschitz`:
  the maximum of ``|σ'|`` over a grid of spacing ``h = 10⁻⁴`` on ``[−40, 40]``,
  times ``1 + 10⁻⁶``).  Why the grid suffices.  For the piecewise-linear σ
  (identity, ReLU, leaky ReLU, abs) ``|σ'|`` takes only the slopes' values,
  each on a whole interval of the grid.  For the smooth σ the supremum is
  attained at a critical point ``z*`` of σ' (``σ''(z*) = 0``: GELU at
  ``z* = √2`` exactly, SiLU at ``z* ≈ 2.3994``, the tanh-GELU at
  ``z* ≈ 1.419``, sigmoid and tanh at ``0``) or approached at infinity
  (softplus: ``σ' < 1 = sup``, and the grid's ``σ'(40)`` rounds to 1).  A grid
  point lies within ``h/2`` of ``z*``, so by Taylor's theorem the grid
  maximum is below ``|σ'(z*)|`` by at most ``½ (h/2)² sup|σ'''|``, that is
  ``1.25·10⁻⁹ sup|σ'''|`` (``sup|σ'''|`` is about 0.78 for GELU, 0.31 for SiLU,
  1/8 for sigmoid, 2 for tanh), far inside the relative margin ``10⁻⁶``.
  Outside ``[−40, 40]`` no σ' exceeds the grid maximum: for GELU, SiLU and the
  tanh-GELU ``|σ'(z)| ≤ 1 + 41 e⁻⁴⁰ < 1 + 10⁻¹⁵`` there while their maxima
  exceed 1.09; ``|σ'|`` of sigmoid and tanh decreases in ``|z|``; softplus'
  ``σ'`` stays below ``1 ≤ L``.  The test finds ``z*`` with ``mpmath`` and
  checks ``sup|σ'| ≤ L ≤ (1 + 2·10⁻⁶) sup|σ'|`` for every registered σ.
* torch evaluates σ in float64 to within :data:`ELEMENTWISE_ULPS` units of
  roundoff of ``max(|σ(s)|, L |s|)``, except where torch replaces σ by a
  linear tail (:data:`LINEAR_TAILS`: ``F.softplus`` returns ``z`` for
  ``z > 20``, an absolute error ``log(1 + e⁻ᶻ) < e⁻²⁰``, which the bound adds
  there).  Tested against ``mpmath`` (40 digits) on the grid of step ``1/128``
  over ``[−40, 40]`` and on 1201 magnitudes from ``10⁻³⁰⁰`` to ``10⁴`` of each
  sign: the worst case is 2.2 units (sigmoid; GELU, SiLU and the tanh-GELU
  1.8, softplus 2.0 once its tail term is added), but about 10⁶ units for
  softplus just above 20 without it: there the 8-unit assumption alone fails.

A third, stated convention: the symmetric eigensolver (``torch.linalg.eigh``,
LAPACK's ``xSYEVD``) returns a decomposition that is exact for ``S + E`` with
``‖E‖₂ ≤ p(d) u ‖S‖₂``, where LAPACK bounds ``p(d)`` only as "a modestly
growing function of ``d``" (Anderson et al., *LAPACK Users' Guide*, 3rd ed.,
SIAM 1999, §4.7).  :func:`eigh_backward_error` takes ``p(d) = 64 d``; by Weyl's
theorem every computed eigenvalue is then within ``64 d u ‖S‖₂`` of an exact one.
"""

from __future__ import annotations

import math

import torch

from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, GlobalQueryMLP, KeyValueMLP

__all__ = [
    "unit_roundoff",
    "gamma",
    "forward_error_bound",
    "ELEMENTWISE_ULPS",
    "LINEAR_TAILS",
    "EIGH_GROWTH",
    "eigh_backward_error",
    "low_rank_error_tolerance",
    "real_tensor",
    "within_bound",
    "margin",
    "gate_times_score_error",
]

#: Accuracy assumed of torch's elementwise activation functions, in units of roundoff.
ELEMENTWISE_ULPS = 8

#: Activations that torch replaces by ``z`` above a threshold (``F.softplus``'s default ``threshold = 20``).
LINEAR_TAILS = {"softplus": 20.0}

#: ``p(d) / d`` in the eigensolver's backward error ``‖E‖₂ ≤ p(d) u ‖S‖₂`` (a convention; LAPACK gives no constant).
EIGH_GROWTH = 64


def unit_roundoff(dtype: torch.dtype) -> float:
    """``u = eps / 2`` of a floating dtype."""
    if not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point dtype, got {dtype}")
    return torch.finfo(dtype).eps / 2


def gamma(n: int, dtype: torch.dtype) -> float:
    """``γ_n = n u / (1 − n u)``."""
    u = unit_roundoff(dtype)
    if n * u >= 1:
        raise ValueError(f"n: expected n·u < 1 for {dtype}, got n = {n}")
    return n * u / (1 - n * u)


def _activation_bound(layer: FeedForward, s_abs: torch.Tensor, ds: torch.Tensor, sigma_abs: torch.Tensor):
    """Bound on ``|fl(σ(ŝ)) − σ(s)|`` given ``|s|``, ``|ŝ − s|`` and ``|σ(ŝ)|``."""
    L = layer.activation.lipschitz
    if L is None:
        raise ValueError(f"layer: activation {layer.activation.name!r} has no Lipschitz constant; register it")
    u = unit_roundoff(s_abs.dtype)
    bound = L * ds + ELEMENTWISE_ULPS * u * torch.maximum(sigma_abs, L * (s_abs + ds))
    tail = LINEAR_TAILS.get(layer.activation.name)
    if tail is not None:  # where torch returns ŝ itself: |ŝ − σ(ŝ)| = log(1 + e^{−ŝ}) < e^{−t}
        bound = bound + torch.where(s_abs + ds > tail, math.exp(-tail), 0.0).to(bound.dtype)
    return bound


def eigh_backward_error(d: int, dtype: torch.dtype) -> float:
    """``η = 64 d u``, the relative backward error ``‖E‖₂ / ‖S‖₂`` assumed of ``eigh`` on ``d × d`` (a convention).

    It also covers rebuilding ``S`` from the computed factors (sums of at most
    ``d`` products, ``γ_d ≈ d u``).
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d: expected an int >= 1, got {d!r}")
    return EIGH_GROWTH * d * unit_roundoff(dtype)


def low_rank_error_tolerance(d: int, dtype: torch.dtype) -> tuple[float, float]:
    """``(δ, δ²)``: how far the best-``R`` relative error ``e``, and ``e²``, move under the backward error.

    ``e(S) = ‖S − S_R‖_F / ‖S‖_F`` with ``S_R`` the best sum of ``R`` terms.
    When ``S`` moves to ``S + E`` with ``‖E‖₂ ≤ η ‖S‖₂`` (``η`` of
    :func:`eigh_backward_error`): the numerator is the distance of ``S`` to a
    closed set, hence 1-Lipschitz, and ``‖E‖_F ≤ √d ‖E‖₂ ≤ √d η ‖S‖_F =: r ‖S‖_F``;
    the denominator moves by the same ``r ‖S‖_F``.  Since ``e ≤ 1``,
    ``|e(S + E) − e(S)| ≤ 2r / (1 − r) = δ`` and ``|e² − e²| ≤ 2δ + δ²``.  A
    computation that is exact for some such ``S + E`` is within these of the
    exact value; two such computations are within twice them of each other.
    """
    r = math.sqrt(d) * eigh_backward_error(d, dtype)
    delta = 2 * r / (1 - r)
    return delta, 2 * delta + delta * delta


@torch.no_grad()
def forward_error_bound(layer: FeedForward, x: torch.Tensor, param_rel_error: float = 0.0) -> torch.Tensor:
    """Elementwise bound on ``|fl(layer(x)) − layer(x)|`` for the exact layer.

    ``param_rel_error`` adds a relative error on every stored parameter (for a
    layer whose parameters were themselves computed, e.g. ``α q_j``).
    """
    x = layer._check_input(x)
    dt = x.dtype
    u = unit_roundoff(dt)
    e = param_rel_error
    xa = x.abs()

    def dot(n: int) -> float:  # relative bound of a dot product with perturbed parameters
        g = gamma(n, dt)
        return g + e + g * e  # (1 + γ_n)(1 + e) − 1, written so that nothing is lost to 1 + tiny

    if isinstance(layer, KeyValueMLP):
        S = xa @ layer.K.abs().T
        ds = dot(layer.d) * S
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, GlobalQueryMLP):
        S = (xa @ layer.Q.abs()) @ layer.K.abs().T
        p = dot(layer.d)
        ds = (2 * p + p * p) * S  # two chained products: (1 + p)² − 1
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, BilinearMLP):
        R, m, d = layer.Q.shape
        A = xa @ layer.Q.abs().reshape(R * m, d).T
        B = xa @ layer.K.abs().reshape(R * m, d).T
        S = (A * B).unflatten(-1, (R, m)).sum(-2)
        p, g = dot(d), gamma(R + 1, dt)
        ds = (2 * p + p * p + g * (1 + p) ** 2) * S  # (1 + p)²(1 + γ_{R+1}) − 1
        h = layer.hidden(x)
        dh = _activation_bound(layer, S, ds, h.abs())
    elif isinstance(layer, GatedMLP):
        A = xa @ layer.Q.abs().T
        B = xa @ layer.K.abs().T
        a, _ = layer.factors(x)
        sa = layer.activation(a).abs()
        dsig = _activation_bound(layer, A, dot(layer.d) * A, sa)
        h = layer.hidden(x)
        dh = dsig * B * (1 + dot(layer.d)) + (sa + dsig) * dot(layer.d) * B + u * h.abs()
    else:
        raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")
    Va = layer.V.abs()
    m = layer.m
    g = gamma(m, dt)
    return (dh @ Va) * (1 + e) + (g + e + g * e) * ((h.abs() + dh) @ Va)


def real_tensor(name: str, value) -> torch.Tensor:
    """``value`` as a tensor (a real number becomes a float64 scalar); ``TypeError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (torch.Tensor, int, float)):
        raise TypeError(f"{name}: expected a tensor or a real number, got {type(value).__name__}")
    return torch.as_tensor(value, dtype=torch.float64) if not isinstance(value, torch.Tensor) else value.detach()


def within_bound(difference, bound) -> bool:
    """``True`` iff ``|difference| ≤ bound`` entry by entry (shapes broadcast)."""
    difference, bound = real_tensor("difference", difference), real_tensor("bound", bound)
    if bool((bound < 0).any()):
        raise ValueError("bound: expected non-negative entries, got a negative one")
    return bool((difference.abs() <= bound).all())


def margin(difference, bound) -> float:
    """The largest share ``|difference| / bound`` over the entries (``0/0`` counts as ``0``, ``x/0`` as ``inf``)."""
    difference, bound = real_tensor("difference", difference), real_tensor("bound", bound)
    d, b = torch.broadcast_tensors(difference.abs().double(), bound.double())
    ratio = torch.where(b > 0, d / b.clamp_min(torch.finfo(torch.float64).tiny), torch.where(d > 0, math.inf, 0.0))
    return float(ratio.max()) if ratio.numel() else 0.0


# prop-gate-times-score: the gated layer against its gate-times-score form, evaluated exactly


def _mp_gate(name: str):
    import mpmath

    gates = {
        "identity": lambda z: mpmath.mpf(1),
        "relu": lambda z: mpmath.mpf(1 if z > 0 else 0),
        "gelu": mpmath.ncdf,
        "gelu_tanh": lambda z: (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (z + mpmath.mpf("0.044715") * z**3))) / 2,
        "silu": lambda z: 1 / (1 + mpmath.exp(-z)),
    }
    if name not in gates:
        raise ValueError(f"layer: expected a gated layer with activation in {sorted(gates)}, got {name!r}")
    return gates[name]


def gate_times_score_error(layer, x, gate: str | None = None) -> torch.Tensor:
    """``|layer(x) − Σ_j s(x·q_j)(x q_jᵀ k_j xᵀ) v_j|``, the right side evaluated exactly (mpmath, 50 digits).

    ``layer`` is a float64 :class:`symbreak.GatedMLP`; the weights and inputs are
    read exactly, the gate is the published one (Φ by ``mpmath.ncdf``), and only the
    final difference is rounded, once, to float64.  Claim ``prop-gate-times-score``:
    every entry is within the layer's rounding bound.  ``gate`` names another
    activation's gate, for a control that must fail.
    """
    import mpmath

    if not isinstance(layer, GatedMLP) or layer.Q.dtype != torch.float64:
        raise TypeError(f"layer: expected a float64 GatedMLP, got {type(layer).__name__}")
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[1] != layer.d:
        raise ValueError(f"x: expected a tensor of shape (n, {layer.d}), got {getattr(x, 'shape', type(x).__name__)}")
    gate = _mp_gate(layer.activation.name if gate is None else gate)
    with torch.no_grad():
        out = layer(x.double()).tolist()
        Q, K, V, X = (t.detach().tolist() for t in (layer.Q, layer.K, layer.V, x.double()))
    errors = []
    with mpmath.workdps(50):
        for xi, oi in zip(X, out, strict=True):
            a = [mpmath.fsum(mpmath.mpf(p) * mpmath.mpf(w) for p, w in zip(xi, q, strict=True)) for q in Q]
            b = [mpmath.fsum(mpmath.mpf(p) * mpmath.mpf(w) for p, w in zip(xi, k, strict=True)) for k in K]
            h = [gate(aj) * (aj * bj) for aj, bj in zip(a, b, strict=True)]
            exact = [mpmath.fsum(hj * mpmath.mpf(vj[c]) for hj, vj in zip(h, V, strict=True)) for c in range(len(oi))]
            errors.append([float(abs(mpmath.mpf(o) - e)) for o, e in zip(oi, exact, strict=True)])
    return torch.tensor(errors, dtype=torch.float64)
