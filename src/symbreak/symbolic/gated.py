"""Chapter 5: the gated MLP as a sum of units, against the symmetric rank-1 form and the published blocks.

Claims ``prop-gated-rank-one`` and ``prop-llama-t5``.
"""

from __future__ import annotations

import sympy as sp

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
