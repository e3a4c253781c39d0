"""The book's derivations as sympy functions that return the identity to be checked.

Each ``*_identity`` function builds both sides of a claimed equation from
explicit symbolic matrices (entries ``x_i``, ``k_{j,i}`` …) and returns their
difference; the claim holds when that difference simplifies to zero.  The
activation is either a registered one or, by default, an undefined function
``σ``, so that the identity is checked for every σ at once.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve

__all__ = [
    "row",
    "matrix",
    "apply",
    "augment",
    "sigma_function",
    "simplify_matrix",
    "sym",
    "key_value_sum_identity",
    "query_absorbed_identity",
    "static_query_identity",
    "transpose_identity",
    "gauge_identity",
    "rank_one_score_identity",
    "rank_one_layer_identity",
    "gated_layer_identity",
    "sym_rank_one_eigenvalues",
    "sym_rank_one_eigen_identity",
]


def _check_size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    return value


def row(name: str, n: int) -> sp.Matrix:
    """The symbolic row vector ``(name_1, …, name_n)`` of real entries."""
    _check_size("n", n)
    return sp.Matrix([list(sp.symbols(f"{name}_1:{n + 1}", real=True))])


def matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    """The symbolic ``rows × cols`` matrix with real entries ``name_{i,j}``."""
    _check_size("rows", rows)
    _check_size("cols", cols)
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def sigma_function(activation: str | Activation | None = None):
    """``σ`` as a map on sympy expressions: an undefined function ``σ`` when ``activation`` is None."""
    if activation is None:
        f = sp.Function("sigma")
        return lambda e: f(e)
    return resolve(activation).sym


def apply(activation: str | Activation | None, M: sp.Matrix) -> sp.Matrix:
    """``σ`` applied elementwise to ``M``."""
    f = sigma_function(activation)
    return M.applyfunc(f)


def simplify_matrix(M: sp.Matrix) -> sp.Matrix:
    """Every entry of ``M`` simplified."""
    return M.applyfunc(sp.simplify)


def key_value_sum_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``σ(x Kᵀ) V − Σ_j σ(x·k_j) v_j`` for symbolic ``x ∈ R^{1×d}``, ``K ∈ R^{m×d}``, ``V ∈ R^{m×d_out}``.

    Claim ``def-key-value-memory``: the matrix form of the MLP is the sum over
    memory units; the returned ``1 × d_out`` matrix is zero.
    """
    x, K, V = row("x", d), matrix("k", m, d), matrix("v", m, d_out)
    sigma = sigma_function(activation)
    matrix_form = apply(activation, x * K.T) * V
    unit_sum = sp.zeros(1, d_out)
    for j in range(m):
        unit_sum += sigma(x.dot(K.row(j))) * V.row(j)
    return simplify_matrix(matrix_form - unit_sum)


def query_absorbed_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``σ(x Q Kᵀ) V − σ(x K'ᵀ) V`` with ``K' = K Qᵀ``, for symbolic ``Q ∈ R^{d×d}``.

    Claim ``thm-query-absorbed``: the difference is the zero ``1 × d_out`` matrix.
    """
    x, Q, K, V = row("x", d), matrix("Q", d, d), matrix("k", m, d), matrix("v", m, d_out)
    with_query = apply(activation, (x * Q) * K.T) * V
    absorbed = apply(activation, x * (K * Q.T).T) * V
    return simplify_matrix(with_query - absorbed)


def augment(x: sp.Matrix) -> sp.Matrix:
    """``x̃ = (1, x)``: the token with a constant feature prepended."""
    return sp.Matrix.hstack(sp.ones(1, 1), x)


def static_query_identity(d: int) -> sp.Expr:
    """``x̃ W xᵀ̃ − x·k`` for the static query ``q = e₀`` and key map reading ``(0, k)``.

    Claim ``thm-static-query``: with ``x̃ = (1, x)``, ``Q = e₀ᵀ e₀`` (a query map
    that reads only the constant feature, so the query is ``e₀`` for every
    ``x``) and ``K`` whose first column is ``(0, k)ᵀ``, the bilinear score
    ``x̃ Q Kᵀ x̃ᵀ`` equals ``x·k``.  The returned expression simplifies to 0.
    """
    x, k = row("x", d), row("k", d)
    xt = augment(x)
    e0 = sp.Matrix([[1] + [0] * d])
    Q = e0.T * e0
    K = sp.zeros(d + 1, d + 1)
    K[:, 0] = sp.Matrix.hstack(sp.zeros(1, 1), k).T
    score = (xt * Q * K.T * xt.T)[0, 0]
    return sp.simplify(score - x.dot(k))


def sym(W: sp.Matrix) -> sp.Matrix:
    """``sym(W) = (W + Wᵀ)/2``."""
    return (W + W.T) / 2


def transpose_identity(d: int) -> tuple[sp.Expr, sp.Expr]:
    """``(x W xᵀ − x Wᵀ xᵀ, x W xᵀ − x sym(W) xᵀ)`` for symbolic ``W ∈ R^{d×d}``.

    Claim ``thm-transpose``: both simplify to 0, so a quadratic score sees only
    ``sym(W)``.
    """
    x, W = row("x", d), matrix("w", d, d)
    s = (x * W * x.T)[0, 0]
    return sp.expand(s - (x * W.T * x.T)[0, 0]), sp.expand(s - (x * sym(W) * x.T)[0, 0])


def gauge_identity(d: int, R: int) -> sp.Matrix:
    """``(Q_j A)(K_j A^{-T})ᵀ − Q_j K_jᵀ`` for symbolic ``Q_j, K_j ∈ R^{d×R}`` and ``A ∈ GL(R)``.

    Claim ``thm-gauge``: the zero ``d × d`` matrix (for every invertible ``A``).
    """
    Qj, Kj, A = matrix("q", d, R), matrix("k", d, R), matrix("a", R, R)
    return simplify_matrix((Qj * A) * (Kj * A.inv().T).T - Qj * Kj.T)


def rank_one_score_identity(d: int) -> sp.Expr:
    """``x (qᵀ k) xᵀ − (x·q)(x·k)``.  Claim ``prop-rank-one``: simplifies to 0."""
    x, q, k = row("x", d), row("q", d), row("k", d)
    return sp.expand((x * (q.T * k) * x.T)[0, 0] - x.dot(q) * x.dot(k))


def rank_one_layer_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j σ(x q_jᵀ k_j xᵀ) v_j − σ((x Qᵀ) ⊙ (x Kᵀ)) V``.

    Claim ``prop-rank-one``: the full bilinear layer with ``W_j = q_jᵀ k_j`` is
    the symmetric rank-1 form; the ``1 × d_out`` difference is zero.
    """
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    sigma = sigma_function(activation)
    full = sp.zeros(1, d_out)
    for j in range(m):
        full += sigma((x * Q.row(j).T * K.row(j) * x.T)[0, 0]) * V.row(j)
    rank_one = apply(activation, (x * Q.T).multiply_elementwise(x * K.T)) * V
    return simplify_matrix(full.applyfunc(sp.expand) - rank_one.applyfunc(sp.expand))


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


def sym_rank_one_eigenvalues(d: int) -> tuple[sp.Matrix, tuple[sp.Expr, sp.Expr]]:
    """``sym(qᵀk)`` for symbolic ``q, k ∈ R^{1×d}`` and its two non-zero eigenvalues.

    ``λ± = ½ (q·k ± ‖q‖ ‖k‖)``.  The identity behind ``prop-rank-one``'s remark:
    ``sym(qᵀk) uᵀ = λ± uᵀ`` for ``u = q/‖q‖ ± k/‖k‖``.
    """
    q, k = row("q", d), row("k", d)
    nq, nk = sp.sqrt(q.dot(q)), sp.sqrt(k.dot(k))
    lam_plus = (q.dot(k) + nq * nk) / 2
    lam_minus = (q.dot(k) - nq * nk) / 2
    return sym(q.T * k), (lam_plus, lam_minus)


def sym_rank_one_eigen_identity(d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """``S uᵀ − λ± uᵀ`` for ``S = sym(qᵀk)``, ``u = q/‖q‖ ± k/‖k‖``: both simplify to zero vectors."""
    q, k = row("q", d), row("k", d)
    nq, nk = sp.sqrt(q.dot(q)), sp.sqrt(k.dot(k))
    S, (lp, lm) = sym_rank_one_eigenvalues(d)
    up = (q / nq + k / nk).T
    um = (q / nq - k / nk).T
    return simplify_matrix(S * up - lp * up), simplify_matrix(S * um - lm * um)
