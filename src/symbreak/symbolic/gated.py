"""Chapter 5: the gated MLP as a sum of units, against the symmetric rank-1 form and the published blocks.

Claims ``prop-gated-rank-one`` and ``prop-llama-t5``.
"""

from __future__ import annotations

import sympy as sp
import torch

from symbreak.activations import Activation
from symbreak.symbolic._base import _check_size, apply, matrix, row, sigma_function, simplify_matrix


def gated_layer_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j σ(x·q_j)(x·k_j) v_j − (σ(x Qᵀ) ⊙ (x Kᵀ)) V``.

    Claim ``prop-gated-rank-one``: the gated MLP is a sum over units of the same
    two rank-1 factors ``x·q_j`` and ``x·k_j``, with σ on the first; the
    ``1 × d_out`` difference is zero.
    """
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    sigma = sigma_function(activation)
    unit_sum = sp.zeros(1, d_out)
    for j in range(m):
        unit_sum += sigma(x.dot(Q.row(j))) * x.dot(K.row(j)) * V.row(j)
    gated = apply(activation, x * Q.T).multiply_elementwise(x * K.T) * V
    return simplify_matrix(unit_sum - gated)


def gated_symmetric_unit_difference(
    activation: str | Activation | None = None,
) -> tuple[sp.Expr, tuple[sp.Symbol, sp.Symbol]]:
    """``(σ(a) b − σ(a b), (a, b))``: the gated unit's coefficient minus the symmetric rank-1 unit's.

    ``a = x·q_j`` and ``b = x·k_j`` are the two rank-1 factors of unit ``j``, real
    symbols returned beside the expression so that it can be decided with
    :func:`symbreak.decide.decide_zero`.  Claim ``prop-gated-rank-one``: the
    expression vanishes for all real ``a, b`` iff ``σ(z) = σ(1) z``.
    """
    a, b = sp.symbols("a b", real=True)
    sigma = sigma_function(activation)
    return sigma(a) * b - sigma(a * b), (a, b)


def gated_symmetric_layer_difference(
    d: int, m: int, d_out: int, activation: str | Activation | None = None
) -> sp.Matrix:
    """``(σ(x Qᵀ) ⊙ (x Kᵀ)) V − σ((x Qᵀ) ⊙ (x Kᵀ)) V`` for symbolic ``x``, ``Q, K ∈ R^{m×d}``, ``V ∈ R^{m×d_out}``.

    The gated MLP minus the symmetric rank-1 form with the same weights.
    Claim ``prop-gated-rank-one``: the ``1 × d_out`` difference is zero for
    ``σ = identity`` (both are the bilinear layer ``Σ_j (x·q_j)(x·k_j) v_j``).
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    a, b = x * Q.T, x * K.T
    gated = apply(activation, a).multiply_elementwise(b) * V
    symmetric = apply(activation, a.multiply_elementwise(b)) * V
    return simplify_matrix(gated.applyfunc(sp.expand) - symmetric.applyfunc(sp.expand))


def linear_gated_block_identity(
    d: int, m: int, d_out: int, activation: str | Activation | None = None, *, swap_gate_up: bool = False
) -> sp.Matrix:
    """``w_down(σ(w_gate(x)) ⊙ w_up(x)) − (σ(x Qᵀ) ⊙ (x Kᵀ)) V`` with ``Q = w_gate``, ``K = w_up``, ``V = w_downᵀ``.

    Each ``w(·)`` is a bias-free PyTorch ``nn.Linear`` whose weight ``A`` has
    shape ``(out, in)`` and which maps ``x`` to ``y_i = Σ_l A_{il} x_l``; the
    published side is written with these index sums, entry by entry, with
    ``w_gate, w_up ∈ R^{m×d}`` and ``w_down ∈ R^{d_out×m}``.  Claim
    ``prop-llama-t5``: the ``1 × d_out`` difference is zero (LLaMA:
    ``w_gate = w1``, ``w_up = w3``, ``w_down = w2``; T5 v1.1: ``wi_0``,
    ``wi_1``, ``wo``).  With ``swap_gate_up=True`` the wrong mapping
    ``Q = w_up``, ``K = w_gate`` is used instead, a control whose difference is
    not zero unless σ is linear.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    if not isinstance(swap_gate_up, bool):
        raise TypeError(f"swap_gate_up: expected a bool, got {type(swap_gate_up).__name__} ({swap_gate_up!r})")
    x = row("x", d)
    w_gate, w_up, w_down = matrix("g", m, d), matrix("u", m, d), matrix("w", d_out, m)
    sigma = sigma_function(activation)

    def linear(A: sp.Matrix, v: list[sp.Expr]) -> list[sp.Expr]:
        return [sum((A[i, l] * v[l] for l in range(A.cols)), sp.Integer(0)) for i in range(A.rows)]

    xs = list(x)
    hidden = [sigma(g) * u for g, u in zip(linear(w_gate, xs), linear(w_up, xs), strict=True)]
    published = sp.Matrix([linear(w_down, hidden)])
    Q, K = (w_up, w_gate) if swap_gate_up else (w_gate, w_up)
    gated = apply(activation, x * Q.T).multiply_elementwise(x * K.T) * w_down.T
    return simplify_matrix(published.applyfunc(sp.expand) - gated.applyfunc(sp.expand))


# ---------------------------------------------------------------------------
# prop-gate-times-score: σ(z) = z·s(z) turns a gated unit into a gated rank-1 score

_z = sp.Symbol("z", real=True)

#: The gate ``s`` of every registered σ with ``σ(0) = 0``, written from each activation's definition
#: (ReLU ``max(0, z)``; leaky ReLU with slope 1/100; GELU ``z Φ(z)`` of Hendrycks and Gimpel and its tanh
#: approximation; SiLU ``z·sigmoid(z)`` of Elfwing et al.), not read from the registry; ``tanh`` and ``abs``
#: have no such closed form and are written as ``σ(z)/z`` (``sign z`` for ``abs``).
GATES: dict[str, sp.Expr] = {
    "identity": sp.Integer(1),
    "relu": sp.Piecewise((1, _z > 0), (0, True)),
    "leaky_relu": sp.Piecewise((1, _z > 0), (sp.Rational(1, 100), True)),
    "gelu": (1 + sp.erf(_z / sp.sqrt(2))) / 2,
    "gelu_tanh": (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (_z + sp.Rational(44715, 10**6) * _z**3))) / 2,
    "silu": 1 / (1 + sp.exp(-_z)),
    "tanh": sp.Piecewise((sp.tanh(_z) / _z, sp.Ne(_z, 0)), (1, True)),
    "abs": sp.sign(_z),
}


def _gate_name(gate: object) -> str:
    if gate not in GATES:
        raise ValueError(f"gate: expected one of {sorted(GATES)}, got {gate!r}")
    return gate


def gate_factorisation(name: str) -> tuple[sp.Expr, tuple[sp.Symbol]]:
    """``(σ(z) − z·s(z), (z,))`` for the registered σ ``name`` and its gate ``GATES[name]``.

    Claim ``prop-gate-times-score``: the expression vanishes for all real ``z``
    (decide it with :func:`symbreak.decide.decide_zero`), so ``σ(a) b = s(a)·(a b)``.
    """
    name = _gate_name(name)
    return sigma_function(name)(_z) - _z * GATES[name], (_z,)


def vanishes_at_zero(name: str) -> bool:
    """Whether ``σ(0) = 0`` exactly for the registered σ ``name``: the condition for a gate ``s`` to exist.

    Claim ``prop-gate-times-score``: ``σ(z) = z·s(z)`` for some ``s`` iff ``σ(0) = 0``.
    """
    return sp.simplify(sigma_function(name)(sp.Integer(0))) == 0


def gate_times_score_identity(d: int, m: int, d_out: int) -> sp.Matrix:
    """``(σ(x Qᵀ) ⊙ (x Kᵀ)) V − Σ_j s(x·q_j) (x q_jᵀ k_j xᵀ) v_j`` with ``σ(z) = z·s(z)``, ``s`` undefined.

    The score on the right is the σ = id rank-1 bilinear score, the quadratic form
    of the outer product ``q_jᵀ k_j``.  Claim ``prop-gate-times-score``: the
    ``1 × d_out`` difference is zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    s = sp.Function("s")
    gated = (x * Q.T).applyfunc(lambda a: a * s(a)).multiply_elementwise(x * K.T) * V
    scored = sp.zeros(1, d_out)
    for j in range(m):
        score = (x * Q.row(j).T * K.row(j) * x.T)[0, 0]
        scored += s(x.dot(Q.row(j))) * score * V.row(j)
    return simplify_matrix(gated.applyfunc(sp.expand) - scored.applyfunc(sp.expand))


def gate_range(name: str, points) -> tuple[float, float]:
    """``(min, max)`` of the gate ``GATES[name]`` over the rational ``points`` (each ``≠ 0``), to 30 digits.

    Claim ``prop-gate-times-score``: the gates of ReLU, leaky ReLU, GELU (both
    forms), SiLU and tanh lie in ``[0, 1]``; the gate ``sign z`` of ``abs`` does not.
    """
    name = _gate_name(name)
    values = []
    for p in points:
        p = sp.Rational(p)
        if p == 0:
            raise ValueError("points: expected non-zero rationals, got 0")
        values.append(float(sp.N(GATES[name].subs(_z, p), 30)))
    if not values:
        raise ValueError("points: expected at least one point, got none")
    return min(values), max(values)


# ---------------------------------------------------------------------------
# prop-gated-vs-symmetric-classes: parity separates the gated from the symmetric rank-1 layers


def symmetric_parity_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``f(x) − f(−x)`` for the symmetric rank-1 layer ``f(x) = σ((x Qᵀ) ⊙ (x Kᵀ)) V``, symbolic weights.

    Claim ``prop-gated-vs-symmetric-classes``: zero for every σ (an undefined one
    when ``activation`` is None), every width and all weights.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)

    def f(y: sp.Matrix) -> sp.Matrix:
        return apply(activation, (y * Q.T).multiply_elementwise(y * K.T)).applyfunc(sp.expand) * V

    return simplify_matrix(f(x) - f(-x))


def gated_unit_parity_difference(activation: str | Activation | None = None) -> tuple[sp.Expr, tuple[sp.Symbol]]:
    """``(g(z) − g(−z), (z,))`` for the gated unit ``g(z) = σ(z)·z`` (``d = m = d_out = 1``, ``q = k = v = 1``).

    Claim ``prop-gated-vs-symmetric-classes``: the difference, ``z (σ(z) + σ(−z))``,
    vanishes identically iff σ is odd on ``z ≠ 0``; decide it with
    :func:`symbreak.decide.decide_zero`.
    """
    sigma = sigma_function(activation)
    return sigma(_z) * _z - sigma(-_z) * (-_z), (_z,)


def gate_complement(name: str) -> tuple[sp.Expr, tuple[sp.Symbol]]:
    """``(z (s(z) + s(−z) − 1), (z,))`` for the gate ``GATES[name]``.

    The expression vanishes for all real ``z`` iff ``s(z) + s(−z) = 1`` for all ``z ≠ 0``.

    Claim ``prop-gated-vs-symmetric-classes`` (part 3) needs it: it holds for the
    gates of ReLU, GELU (both forms) and SiLU, whose gates are distribution
    functions of symmetric laws or, for ReLU, a step.
    """
    name = _gate_name(name)
    return _z * (GATES[name] + GATES[name].subs(_z, -_z) - 1), (_z,)


def even_unit_fit(name: str, slopes: torch.Tensor, t: torch.Tensor) -> dict[str, float]:
    """The best gated layer on ``R`` with the given gate slopes for the symmetric unit ``σ(t²)``, and a lower bound.

    Least squares (float64) of ``y(t) = σ(t²)`` by ``Σ_j w_j σ(α_j t) t`` over the
    points ``t``: every gated layer ``Σ_j σ(q_j t)(k_j t) v_j`` with ``q_j`` among
    the ``slopes`` is such a combination.  ``bound`` is the lower bound of claim
    ``prop-gated-vs-symmetric-classes`` (part 3) on the residual of *every* gated
    layer, for a gate with ``s(z) + s(−z) = 1`` and points symmetric about 0:
    ``min_c (Σ_t t⁴ (s(t²) − c)²)^{1/2}`` with ``s(t²) = σ(t²)/t²``.  Returns
    ``residual``, ``bound`` and ``target`` (the norm of ``y``).
    """
    from symbreak.activations import REGISTRY

    if name not in REGISTRY:
        raise ValueError(f"name: expected one of {sorted(REGISTRY)}, got {name!r}")
    for label, v in (("slopes", slopes), ("t", t)):
        if not isinstance(v, torch.Tensor) or v.ndim != 1 or v.dtype != torch.float64 or v.numel() == 0:
            raise ValueError(f"{label}: expected a non-empty 1-d float64 tensor, got {getattr(v, 'shape', v)!r}")
    if not torch.equal(torch.sort(t).values, torch.sort(-t).values) or bool((t == 0).any()):
        raise ValueError("t: expected non-zero points symmetric about 0")
    sigma = REGISTRY[name]
    y = sigma(t**2)
    basis = sigma(t[:, None] * slopes[None, :]) * t[:, None]
    w = torch.linalg.lstsq(basis, y[:, None], driver="gelsd").solution
    residual = torch.linalg.vector_norm(basis @ w - y[:, None]).item()
    gate, weight = y / t**2, t**4
    c = (weight * gate).sum() / weight.sum()
    bound = torch.sqrt((weight * (gate - c) ** 2).sum()).item()
    return {"residual": residual, "bound": bound, "target": torch.linalg.vector_norm(y).item()}
