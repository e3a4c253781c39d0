"""Chapter 8: the parity ``x → −x``, the even and odd parts of σ, the diagonal split and the loss split.

Claims ``prop-parity`` and ``cor-parity-comparison`` and remarks
``rem-parity-parts`` and ``rem-diagonal-split``.
"""

from __future__ import annotations

import functools

import sympy as sp

from symbreak.activations import Activation, resolve, z
from symbreak.decide import decide_zero
from symbreak.symbolic._base import (
    _check_size,
    _rank_R_layer,
    _rank_R_weights,
    apply,
    matrix,
    row,
    sigma_function,
    simplify_matrix,
)

#: The even parts ``σ_e`` that ``rem-parity-parts`` states in closed form, by activation.
STATED_EVEN_PARTS: dict[str, sp.Expr] = {
    "relu": sp.Abs(z) / 2,
    "gelu": z / 2 * sp.erf(z / sp.sqrt(2)),
    "silu": z / 2 * sp.tanh(z / 2),
}
#: Forms whose parity ``prop-parity`` predicts: the standard MLP, the symmetric rank-1, full and gated forms.
PARITY_FORMS = ("kv", "rank1", "full", "gated")


def parity_parts(activation: str | Activation | None = None, *, simplified: bool = False) -> tuple[sp.Expr, sp.Expr]:
    """``(σ_e, σ_o)``: the even and the odd part of σ, as expressions in the registry's real symbol ``z``.

    ``σ_e(z) = (σ(z) + σ(−z))/2`` and ``σ_o(z) = (σ(z) − σ(−z))/2``, so that
    ``σ = σ_e + σ_o``; σ is even iff ``σ_o ≡ 0`` and odd iff ``σ_e ≡ 0`` (decide
    either with :func:`symbreak.decide.decide_zero`).  With ``activation=None``
    σ is an undefined function.  ``simplified`` rewrites each part with ``|z|``
    and simplifies it (for display).  Claims ``prop-parity`` and ``rem-parity-parts``.
    """
    if not isinstance(simplified, bool):
        raise TypeError(f"simplified: expected a bool, got {type(simplified).__name__}")
    sigma = sigma_function(activation)
    parts = (sigma(z) + sigma(-z)) / 2, (sigma(z) - sigma(-z)) / 2
    if simplified:
        return tuple(sp.simplify(part.rewrite(sp.Abs)) for part in parts)  # type: ignore[return-value]
    return parts


def even_part_identity(activation: str) -> sp.Expr:
    """``σ_e(z)`` minus its closed form in rem-parity-parts, simplified: ``0`` for ReLU, GELU and SiLU.

    The stated forms (:data:`STATED_EVEN_PARTS`) are ``σ_e(z) = |z|/2`` for ReLU,
    ``(z/2) erf(z/√2)`` for GELU and ``(z/2) tanh(z/2)`` for SiLU.  Raises
    ``ValueError`` for an activation without a stated form.
    """
    if activation not in STATED_EVEN_PARTS:
        raise ValueError(f"activation: expected one of {list(STATED_EVEN_PARTS)}, got {activation!r}")
    difference = parity_parts(activation)[0] - STATED_EVEN_PARTS[activation]
    return sp.simplify(difference.rewrite(sp.exp).rewrite(sp.Abs))


def sigma_parity(activation: str | Activation) -> str:
    """``"odd"``, ``"even"`` or ``"neither"``: whether ``σ_e ≡ 0`` or ``σ_o ≡ 0``, decided in that order.

    The parts are those of :func:`parity_parts`, each decided by
    :func:`symbreak.decide.decide_zero` (a proof, or a rational counterexample);
    the decision is cached per activation.  Claim ``prop-parity``.
    """
    return _sigma_parity(resolve(activation))


@functools.cache
def _sigma_parity(sigma: Activation) -> str:
    even_part, odd_part = parity_parts(sigma)
    if decide_zero(even_part, (z,)).holds:
        return "odd"
    return "even" if decide_zero(odd_part, (z,)).holds else "neither"


def predicted_parity(form: str, activation: str | Activation) -> str:
    """The parity of a bias-free layer of ``form`` with σ that ``prop-parity`` predicts from :func:`sigma_parity`.

    ``"rank1"`` and ``"full"``, ``σ(Σ_r (x Q^{(r)}ᵀ) ⊙ (x K^{(r)}ᵀ)) V``: ``"even"`` for
    every σ (quadratic scores); ``"gated"``, ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``: ``"even"``
    for an odd σ, ``"odd"`` for an even one, else ``"neither"``; ``"kv"``,
    ``σ(x Kᵀ) V``: the parity of σ itself.  Raises ``ValueError`` for another form.
    """
    if form not in PARITY_FORMS:
        raise ValueError(f"form: expected one of {list(PARITY_FORMS)}, got {form!r}")
    if form in ("rank1", "full"):
        return "even"
    of_sigma = sigma_parity(activation)
    if form == "kv":
        return of_sigma
    return {"odd": "even", "even": "odd"}.get(of_sigma, "neither")


def rank_R_parity_identity(d: int, m: int, d_out: int, R: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``f(−x) − f(x)`` for the rank-``R`` form ``f(x) = σ(Σ_r (x Q^{(r)}ᵀ) ⊙ (x K^{(r)}ᵀ)) V`` with symbolic weights.

    ``Q_r, K_r ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}`` have symbolic entries and σ is
    undefined by default, so the identity is checked for every σ at once.  The
    score of unit ``j`` is the quadratic form ``Σ_r (x·q_{j,r})(x·k_{j,r}) = x W_j xᵀ``;
    ``R = 1`` is the symmetric rank-1 form and ``R = d`` the full form.  Claim
    ``prop-parity``: the returned ``1 × d_out`` matrix is zero.
    """
    x, V, Qs, Ks = _rank_R_weights(d, m, d_out, R)
    return simplify_matrix(_rank_R_layer(activation, -x, Qs, Ks, V) - _rank_R_layer(activation, x, Qs, Ks, V))


def diagonal_split_identity(d: int, m: int, d_out: int, activation: str | Activation | None = "identity") -> sp.Matrix:
    """``σ((xQᵀ)⊙(xKᵀ)) V − σ((xCᵀ)⊙(xCᵀ)) V₂``: a rank-1 layer against ``2m`` units on the diagonal.

    ``Q, K ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}`` are symbolic; ``C = [A; B]`` stacks
    ``A = (Q + K)/2`` and ``B = (Q − K)/2`` and ``V₂ = [V; −V]``, so unit ``j`` of
    the right-hand layer has query = key ``a_j`` and value ``v_j``, unit ``m + j``
    has query = key ``b_j`` and value ``−v_j``.  Since
    ``(x·q_j)(x·k_j) = (x·a_j)² − (x·b_j)²``, the returned ``1 × d_out`` matrix is
    zero for σ = identity (the bilinear layer, where the gated and the symmetric
    form coincide).  For a nonlinear σ the split holds for the scores only and the
    difference is not zero.  Remark ``rem-diagonal-split``.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    C = sp.Matrix.vstack((Q + K) / 2, (Q - K) / 2)
    V2 = sp.Matrix.vstack(V, -V)
    rank_one = apply(activation, (x * Q.T).multiply_elementwise(x * K.T).applyfunc(sp.expand)) * V
    diagonal = apply(activation, (x * C.T).multiply_elementwise(x * C.T).applyfunc(sp.expand)) * V2
    return simplify_matrix(rank_one.applyfunc(sp.expand) - diagonal.applyfunc(sp.expand))


def parity_loss_split_identity(d_out: int) -> sp.Expr:
    """``½(‖y₊ − f‖² + ‖y₋ − f‖²) − (‖y_e − f‖² + ‖y_o‖²)`` for symbolic rows ``y₊, y₋, f ∈ R^{1×d_out}``.

    ``y₊ = y(x)`` and ``y₋ = y(−x)`` are the targets at two opposite inputs, ``f``
    the common prediction of an even model there, ``y_e = (y₊ + y₋)/2`` and
    ``y_o = (y₊ − y₋)/2`` the even and odd parts of the target.  Claim
    ``cor-parity-comparison``: the expanded difference is 0, so on a sample closed
    under ``x → −x`` the mean squared error of an even model is its error against
    ``y_e`` plus the mean of ``‖y_o‖²``, whatever the model.
    """
    _check_size("d_out", d_out)
    yp, ym, f = row("y_p", d_out), row("y_m", d_out), row("f", d_out)
    ye, yo = (yp + ym) / 2, (yp - ym) / 2

    def sq(r: sp.Matrix) -> sp.Expr:
        return r.dot(r)

    return sp.expand((sq(yp - f) + sq(ym - f)) / 2 - (sq(ye - f) + sq(yo)))


#: Symmetries whose full-form cell :func:`full_score_identity` reduces to a matrix identity.
FULL_SYMMETRIES = ("exchange", "scale_pos", "scale_neg", "parity", "gauge", "kv_scale")
#: The sizes ``d`` at which the score identities are also expanded entry by entry.
FULL_ENTRYWISE_SIZES = (2, 3, 4)


def full_score_identity(symmetry: str, d: int | None = None) -> sp.Expr | sp.MatrixExpr:
    """The identity behind the full form's cell of ``symmetry``: zero iff the cell holds for every σ.

    A unit of the full form has the coefficient ``σ(x Q_j K_jᵀ xᵀ)`` with
    ``Q_j, K_j ∈ R^{d×d}`` (rank ``R = d``).  The returned expression is

    * ``"exchange"`` — ``x K Qᵀ xᵀ − x Q Kᵀ xᵀ``, the score after ``Q ↔ K`` minus the score;
    * ``"parity"`` — ``(−x) Q Kᵀ (−x)ᵀ − x Q Kᵀ xᵀ``;
    * ``"scale_pos"``, ``"scale_neg"`` — ``(Q A)(K A^{-T})ᵀ − Q Kᵀ`` with ``A = α I_d``, ``α`` a
      symbol of that sign (the gauge with ``A = α I_d`` is inverse scaling of every factor);
    * ``"gauge"`` — ``(Q A)(K A^{-T})ᵀ − Q Kᵀ`` for an invertible ``A ∈ GL(d)``;
    * ``"kv_scale"`` — ``x Q (α K)ᵀ xᵀ − α x Q Kᵀ xᵀ`` (``α > 0``): rescaling the key map
      multiplies the score by α, so the cell reduces to ``σ(α s)/α = σ(s)``.

    With ``d=None`` the matrices are sympy matrix symbols of a symbolic size ``d``, so
    a zero is a proof for every ``d``; there the exchange identity is returned with its
    first score transposed, ``(x K Qᵀ xᵀ)ᵀ − x Q Kᵀ xᵀ`` (a ``1 × 1`` matrix is its own
    transpose, which sympy does not apply to matrix symbols).  With an integer ``d``
    the entries are real symbols and the scalar identity is expanded (``"gauge"``, whose
    entrywise form needs a symbolic inverse, only with ``d=None``).
    """
    if symmetry not in FULL_SYMMETRIES:
        raise ValueError(f"symmetry: expected one of {list(FULL_SYMMETRIES)}, got {symmetry!r}")
    if d is None:
        return _full_score_identity_symbolic(symmetry)
    _check_size("d", d)
    if symmetry == "gauge":
        raise ValueError("d: expected None for the gauge (an identity of matrix symbols), got an int")
    x, Q, K = row("x", d), matrix("q", d, d), matrix("k", d, d)
    alpha = sp.Symbol("alpha", negative=True) if symmetry == "scale_neg" else sp.Symbol("alpha", positive=True)
    if symmetry in ("scale_pos", "scale_neg"):
        A = alpha * sp.eye(d)
        return simplify_matrix((Q * A) * (K * A.inv().T).T - Q * K.T)
    score = (x * Q * K.T * x.T)[0, 0]
    after = {
        "exchange": (x * K * Q.T * x.T)[0, 0],
        "parity": ((-x) * Q * K.T * (-x).T)[0, 0],
        "kv_scale": (x * Q * (alpha * K).T * x.T)[0, 0],
    }[symmetry]
    return sp.expand(after - (alpha * score if symmetry == "kv_scale" else score))


def is_zero_identity(expr: sp.Expr | sp.MatrixBase | sp.MatrixExpr) -> bool:
    """Whether an identity returned by :func:`full_score_identity` is zero (a scalar, matrix or matrix symbol)."""
    if isinstance(expr, sp.MatrixBase):
        return bool(expr.is_zero_matrix)
    return bool(expr == 0 or getattr(expr, "is_ZeroMatrix", False))


def _full_score_identity_symbolic(symmetry: str) -> sp.MatrixExpr:
    """:func:`full_score_identity` with matrix symbols of symbolic size ``d``."""
    n = sp.Symbol("d", integer=True, positive=True)
    x, Q, K, A = sp.MatrixSymbol("x", 1, n), sp.MatrixSymbol("Q", n, n), sp.MatrixSymbol("K", n, n), None
    if symmetry == "gauge":
        A = sp.MatrixSymbol("A", n, n)
    elif symmetry in ("scale_pos", "scale_neg"):
        alpha = sp.Symbol("alpha", negative=True) if symmetry == "scale_neg" else sp.Symbol("alpha", positive=True)
        A = alpha * sp.Identity(n)
    if A is not None:
        return sp.simplify((Q * A) * (K * A.inverse().T).T - Q * K.T)
    score = x * Q * K.T * x.T
    if symmetry == "exchange":
        return sp.simplify((x * K * Q.T * x.T).T - score)
    if symmetry == "parity":
        return sp.simplify((-x) * Q * K.T * (-x).T - score)
    alpha = sp.Symbol("alpha", positive=True)
    return sp.simplify(x * Q * (alpha * K).T * x.T - alpha * score)
