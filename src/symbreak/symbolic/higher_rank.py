"""Chapter 9: the rank-R forms, symmetric and gated, their polarization, inertia, dimension and charges.

Claims ``prop-higher-rank``, ``prop-rank-R-reach``, ``prop-gated-rank-R`` and
remarks ``rem-rank-R-hidden-symmetry`` (with its conserved charges) and
``rem-gated-rank-R-hypotheses`` (the counterexamples).
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation
from symbreak.symbolic._base import (
    _check_size,
    _rank_R_layer,
    _rank_R_weights,
    apply,
    integer_matrix,
    matrix,
    row,
    sigma_function,
    simplify_matrix,
    sym,
)


def rank_R_layer_identity(d: int, m: int, d_out: int, R: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j σ(x W_j xᵀ) v_j − σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` with ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``.

    For symbolic ``x ∈ R^{1×d}``, ``Q_r, K_r ∈ R^{m×d}`` (row ``j`` of ``Q_r`` is
    ``q_{j,r}``), ``r = 1 … R``, and ``V ∈ R^{m×d_out}``; each ``W_j`` is formed
    explicitly as a sum of ``R`` outer products.  Claim ``prop-higher-rank``:
    the ``1 × d_out`` difference is zero (for every σ when ``activation`` is None).
    """
    x, V, Qs, Ks = _rank_R_weights(d, m, d_out, R)
    sigma = sigma_function(activation)
    unit_sum = sp.zeros(1, d_out)
    for j in range(m):
        W = sp.zeros(d, d)
        for Q_r, K_r in zip(Qs, Ks, strict=True):
            W += Q_r.row(j).T * K_r.row(j)
        unit_sum += sigma(sp.expand((x * W * x.T)[0, 0])) * V.row(j)
    stacked = _rank_R_layer(activation, x, Qs, Ks, V)
    return simplify_matrix(unit_sum - stacked)


def rank_d_full_form_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j σ(x W_j xᵀ) v_j − σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` with ``q_{j,r} = e_r``, ``k_{j,r} = W_j[r]``, ``R = d``.

    For symbolic ``W_j ∈ R^{d×d}`` (``W_j[r]`` is its ``r``-th row, ``e_r`` the
    ``r``-th unit row) and ``V ∈ R^{m×d_out}``.  Claim ``prop-higher-rank``: the
    rank-``d`` form with these factors is the full form with the arbitrary
    matrices ``W_j``; the ``1 × d_out`` difference is zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, V = row("x", d), matrix("v", m, d_out)
    Ws = [matrix(f"w{j + 1}", d, d) for j in range(m)]
    sigma = sigma_function(activation)
    full = sp.zeros(1, d_out)
    for j, W in enumerate(Ws):
        full += sigma(sp.expand((x * W * x.T)[0, 0])) * V.row(j)
    scores = sp.zeros(1, m)
    for r in range(d):
        Q_r = sp.Matrix([[1 if i == r else 0 for i in range(d)] for _ in range(m)])
        K_r = sp.Matrix([list(W.row(r)) for W in Ws])
        scores += (x * Q_r.T).multiply_elementwise(x * K_r.T)
    stacked = apply(activation, scores.applyfunc(sp.expand)) * V
    return simplify_matrix(full - stacked)


def gated_rank_R_identity(d: int, m: int, d_out: int, R: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j (σ(x Q_j) · (x K_j)) v_j − (σ(x Q̄ᵀ) ⊙ (x K̄ᵀ)) V̄``: the gated rank-``R`` form is a wider gated MLP.

    Unit ``j`` has factors ``Q_j, K_j ∈ R^{d×R}`` whose ``r``-th columns are
    ``q_{j,r}ᵀ, k_{j,r}ᵀ`` (symbolic), so ``σ(x Q_j)·(x K_j) = Σ_r σ(x·q_{j,r})(x·k_{j,r})``.
    ``Q̄, K̄ ∈ R^{Rm×d}`` stack the rows ``q_{j,r}`` in the order ``(r, j)``
    (row ``(r − 1)m + j``) and ``V̄ ∈ R^{Rm×d_out}`` repeats ``V`` ``R`` times.
    Claim ``prop-gated-rank-R``: the ``1 × d_out`` difference is zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    _check_size("R", R)
    x, V = row("x", d), matrix("v", m, d_out)
    maps = [(matrix(f"q{j + 1}", d, R), matrix(f"k{j + 1}", d, R)) for j in range(m)]
    unit_sum = sp.zeros(1, d_out)
    for j, (Qj, Kj) in enumerate(maps):
        coefficient = (apply(activation, x * Qj) * (x * Kj).T)[0, 0]
        unit_sum += coefficient * V.row(j)
    Q_bar = sp.Matrix([list(maps[j][0][:, r].T) for r in range(R) for j in range(m)])
    K_bar = sp.Matrix([list(maps[j][1][:, r].T) for r in range(R) for j in range(m)])
    V_bar = sp.Matrix.vstack(*([V] * R))
    wide = apply(activation, x * Q_bar.T).multiply_elementwise(x * K_bar.T) * V_bar
    return simplify_matrix(unit_sum.applyfunc(sp.expand) - wide.applyfunc(sp.expand))


def rank_R_polarization_identity(d: int, R: int) -> sp.Matrix:
    """``Σ_r sym(q_rᵀ k_r) − (AᵀA − BᵀB)`` with rows ``a_r = (q_r + k_r)/2``, ``b_r = (q_r − k_r)/2`` of ``A, B``.

    For symbolic ``q_r, k_r ∈ R^{1×d}``, ``r = 1 … R``.  Claim
    ``prop-rank-R-reach``: the ``d × d`` difference is zero, so a sum of ``R``
    rank-1 terms is a difference of two positive semidefinite matrices of rank
    at most ``R`` each.
    """
    _check_size("d", d)
    _check_size("R", R)
    Q, K = matrix("q", R, d), matrix("k", R, d)
    A, B = (Q + K) / 2, (Q - K) / 2
    terms = sp.zeros(d, d)
    for r in range(R):
        terms += sym(Q.row(r).T * K.row(r))
    return (terms - (A.T * A - B.T * B)).applyfunc(sp.expand)


def inertia(S: sp.Matrix) -> tuple[int, int, int]:
    """``(p, n, z)``: the numbers of positive, negative and zero eigenvalues of a rational symmetric matrix, exactly.

    All roots of the characteristic polynomial ``χ(t) = det(t I − S)`` of a
    symmetric ``S`` are real, so Descartes' rule of signs is exact: ``p`` is the
    number of sign changes of the coefficients of ``χ(t)`` and ``n`` that of
    ``χ(−t)``, after dividing out the factor ``t^z`` of the zero eigenvalues.
    """
    if not isinstance(S, sp.MatrixBase):
        raise TypeError(f"S: expected a sympy Matrix, got {type(S).__name__}")
    if S.rows != S.cols or S.rows == 0:
        raise ValueError(f"S: expected a non-empty square matrix, got shape {S.shape}")
    if not all(e.is_rational for e in S):
        raise ValueError("S: expected rational entries (no symbols, no floats), got a non-rational entry")
    if S != S.T:
        raise ValueError("S: expected a symmetric matrix, got S ≠ Sᵀ")
    t = sp.Symbol("t")
    coefficients = sp.Poly(S.charpoly(t).as_expr(), t).all_coeffs()  # highest degree first
    z = 0
    while coefficients[-1] == 0:
        coefficients.pop()
        z += 1

    def changes(cs: list[sp.Expr]) -> int:
        signs = [sp.sign(c) for c in cs if c != 0]
        return sum(1 for a, b in zip(signs, signs[1:], strict=False) if a != b)

    degree = len(coefficients) - 1
    mirrored = [c * (-1) ** (degree - i) for i, c in enumerate(coefficients)]
    return changes(coefficients), changes(mirrored), z


def rank_R_form_dimension(d: int, R: int) -> int:
    """``R(2d − 2R + 1)`` for ``2R ≤ d``, else ``d(d+1)/2``: the dimension of the scores a rank-``R`` unit reaches.

    The reachable ``sym(W)`` are the symmetric matrices with at most ``R``
    positive and ``R`` negative eigenvalues (``prop-rank-R-reach``); for
    ``2R ≤ d`` their generic members have rank ``2R``, a set of dimension
    ``2R d − R(2R − 1)``; for ``2R ≥ d`` they fill an open set of all
    ``d(d+1)/2`` symmetric matrices.
    """
    _check_size("d", d)
    _check_size("R", R)
    return R * (2 * d - 2 * R + 1) if 2 * R <= d else d * (d + 1) // 2


def _unit_form_entries(d: int, R: int) -> tuple[sp.Matrix, sp.Matrix, list[sp.Expr]]:
    """Symbolic rows ``Q, K ∈ R^{R×d}`` and the entries of ``sym(Σ_r q_rᵀ k_r)`` on and above the diagonal."""
    _check_size("d", d)
    _check_size("R", R)
    Qs, Ks = matrix("q", R, d), matrix("k", R, d)
    S = sp.zeros(d, d)
    for r in range(R):
        S += sym(Qs.row(r).T * Ks.row(r))
    return Qs, Ks, [S[a, b] for a in range(d) for b in range(a, d)]


def rank_R_form_jacobian(d: int, R: int, seed: int = 0) -> sp.Matrix:
    """The Jacobian of ``(Q, K) ↦ sym(Σ_r q_rᵀ k_r)`` at an integer point, exactly.

    Rows: the ``d(d+1)/2`` entries on or above the diagonal; columns: the
    ``2Rd`` entries of ``Q, K ∈ R^{R×d}`` (rows ``q_r, k_r``).  The point is the
    first ``(Q, K) = (integer_matrix(R, d, s), integer_matrix(R, d, s + 1))``
    with ``s = seed, seed + 2, …`` at which the ``2R`` rows of ``Q`` and ``K``
    span a space of dimension ``min(2R, d)`` (a generic point).
    Remark ``rem-rank-R-hidden-symmetry``: its rank is
    :func:`rank_R_form_dimension`, so the parameters that leave the score
    unchanged form a set of dimension ``2Rd − rank``, which is ``R(2R − 1)`` for
    ``2R ≤ d``.
    """
    Qs, Ks, entries = _unit_form_entries(d, R)
    J = sp.Matrix(entries).jacobian(list(Qs) + list(Ks))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    for attempt in range(100):
        Q0 = integer_matrix(R, d, seed + 2 * attempt)
        K0 = integer_matrix(R, d, seed + 2 * attempt + 1)
        if Q0.col_join(K0).rank() == min(2 * R, d):
            break
    else:  # pragma: no cover - 100 degenerate draws in a row
        raise RuntimeError(f"rank_R_form_jacobian: no generic point for d = {d}, R = {R}, seed = {seed}")
    point = {**dict(zip(Qs, Q0, strict=True)), **dict(zip(Ks, K0, strict=True))}
    return J.subs(point)


def _sigma(activation):
    """σ on sympy expressions: a registered name or Activation, ``None`` (undefined σ), or a callable."""
    if callable(activation) and not isinstance(activation, (str, Activation)):
        return activation
    return sigma_function(activation)


def gated_unit_gauge_change(Q: sp.Matrix, K: sp.Matrix, A: sp.Matrix, activation=None) -> sp.Expr:
    """``h_j(x; Q_j A, K_j A^{-T}) − h_j(x; Q_j, K_j)`` for a symbolic token ``x``, expanded.

    ``h_j(x) = σ(x Q_j)·(x K_j)`` is the gated rank-``R`` unit (eq-gated-rank-R), ``Q, K ∈ R^{d×R}``
    (columns ``q_{j,r}ᵀ, k_{j,r}ᵀ``), ``A ∈ R^{R×R}`` invertible; ``activation`` is a registered σ,
    ``None`` for an undefined σ, or any callable on sympy expressions (e.g. an affine σ).
    Claim ``prop-gated-rank-R`` and its counterexamples ``rem-gated-rank-R-hypotheses``.
    """
    if Q.shape != K.shape or A.shape != (Q.shape[1], Q.shape[1]):
        raise ValueError(f"A: expected shape ({Q.shape[1]}, {Q.shape[1]}) and K of shape {Q.shape}, got {A.shape}")
    if A.det() == 0:
        raise ValueError("A: expected an invertible matrix, got a singular one")
    f = _sigma(activation)
    x = row("x", Q.shape[0])

    def unit(Qj, Kj):
        return ((x * Qj).applyfunc(f) * (x * Kj).T)[0, 0]

    return sp.expand(unit(Q * A, K * A.inv().T) - unit(Q, K))


def gauge_commutation_defect(A: sp.Matrix, z: sp.Matrix, activation=None) -> sp.Matrix:
    """``σ(z A) − σ(z) A`` for a row ``z``; zero for all ``z`` iff the gauge ``A`` keeps every gated unit.

    Claim ``prop-gated-rank-R``, item 2 (for units with linearly independent columns).
    """
    f = _sigma(activation)
    return ((z * A).applyfunc(f) - z.applyfunc(f) * A).applyfunc(sp.simplify)


def rank_R_charge_rates(d: int, R: int) -> tuple[sp.Matrix, sp.Matrix]:
    """Rates of ``C = QᵀQ − KᵀK`` and ``D_rs = q_r·k_s − q_s·k_r`` under gradient flow, for every loss of ``sym(W)``.

    ``Q, K ∈ R^{R×d}`` hold the rows ``q_r, k_r`` of one unit (symbolic); the loss is an undefined function
    ``F`` of the ``d(d+1)/2`` entries of ``S = sym(Σ_r q_rᵀ k_r)`` on and above the diagonal, so it stands
    for any loss of any layer built from the unit's score.  Gradient flow ``θ̇ = −∇_θ F``; the rates are
    ``Ċ_rs = Σ_θ ∂C_rs/∂θ · θ̇``.  Remark ``rem-rank-R-hidden-symmetry``: both ``R × R`` matrices are zero.
    """
    Qs, Ks, entries = _unit_form_entries(d, R)
    loss = sp.Function("F")(*entries)
    params = list(Qs) + list(Ks)
    flow = {p: -sp.diff(loss, p) for p in params}
    C = Qs * Qs.T - Ks * Ks.T
    D = Qs * Ks.T - Ks * Qs.T  # D_rs = q_r·k_s − k_r·q_s

    def rate(M: sp.Matrix) -> sp.Matrix:
        return M.applyfunc(lambda e: sp.expand(sum(sp.diff(e, p) * flow[p] for p in params)))

    return rate(C), rate(D)
