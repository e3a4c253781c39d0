"""Chapters 1–2: the key–value memory, the absorbed query and the static query as sympy identities.

Claims ``def-key-value-memory``, ``thm-query-absorbed`` (with remarks
``rem-singular-query`` and ``rem-query-redundancy``) and ``thm-static-query``.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation
from symbreak.symbolic._base import _check_size, apply, integer_matrix, matrix, row, sigma_function, simplify_matrix


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


def singular_query(d: int, r: int, seed: int = 0, bound: int = 3) -> tuple[sp.Matrix, sp.Matrix]:
    """An integer query map ``Q = A Bᵀ`` of rank exactly ``r`` and an integer basis ``N`` of its left null space.

    ``A, B ∈ Z^{d×r}`` come from :func:`integer_matrix` (seeds ``seed, seed + 1, …``
    until ``rank Q = r``).  The ``d − r`` rows of ``N ∈ Z^{(d−r)×d}`` span
    ``{n ∈ R^{1×d} : n Q = 0}``, the directions a global query ``x Q`` does not
    see; for ``r = d`` ``N`` is the empty ``0 × d`` matrix.  Remark
    ``rem-singular-query`` of ``thm-query-absorbed``.
    """
    _check_size("d", d)
    _check_size("r", r)
    if r > d:
        raise ValueError(f"r: expected a rank 1 <= r <= d = {d}, got {r}")
    for attempt in range(100):
        A = integer_matrix(d, r, seed + 2 * attempt, bound)
        B = integer_matrix(d, r, seed + 2 * attempt + 1, bound)
        Q = A * B.T
        if Q.rank() == r:
            break
    else:  # pragma: no cover - a rank-deficient draw 100 times in a row
        raise RuntimeError(f"singular_query: no rank-{r} draw for d = {d}, seed = {seed}")
    rows = []
    for v in Q.T.nullspace():
        scale = sp.ilcm(*[sp.Rational(e).q for e in v])
        w = v * scale
        rows.append(list(w / sp.igcd(*[int(e) for e in w])))
    N = sp.Matrix(rows) if rows else sp.zeros(0, d)
    return Q, N


def singular_query_identity(d: int, r: int, m: int, seed: int = 0) -> sp.Matrix:
    """``K' Nᵀ`` with ``K' = K Qᵀ``, for symbolic keys ``K ∈ R^{m×d}`` and ``(Q, N) = singular_query(d, r, seed)``.

    Remark ``rem-singular-query``: every absorbed key ``k'_j = k_j Qᵀ`` is
    orthogonal to the left null space of ``Q`` (``k'_j nᵀ = k_j (n Q)ᵀ = 0``), so
    the ``m`` keys lie in the ``r``-dimensional space ``col(Q)ᵀ``.  The returned
    ``m × (d − r)`` matrix is zero.
    """
    _check_size("d", d)
    _check_size("r", r)
    _check_size("m", m)
    if r >= d:
        raise ValueError(f"r: expected a rank 1 <= r < d = {d} (Q singular), got {r}")
    Q, N = singular_query(d, r, seed)
    K = matrix("k", m, d)
    return (K * Q.T * N.T).applyfunc(sp.expand)


def query_gauge_identity(d: int, m: int) -> sp.Matrix:
    """``(K A^{-T})(Q A)ᵀ − K Qᵀ`` for symbolic ``Q ∈ R^{d×d}``, ``K ∈ R^{m×d}`` and invertible ``A ∈ R^{d×d}``.

    Remark ``rem-query-redundancy`` of ``thm-query-absorbed``: the absorbed keys
    ``K' = K Qᵀ``, and so the layer ``σ(x Q Kᵀ) V``, do not change under
    ``(Q, K) → (Q A, K A^{-T})``; the returned ``m × d`` matrix is zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    Q, K, A = matrix("Q", d, d), matrix("k", m, d), matrix("a", d, d)
    return simplify_matrix((K * A.inv().T) * (Q * A).T - K * Q.T)


def absorption_jacobian(Q: sp.Matrix, K: sp.Matrix) -> sp.Matrix:
    """The Jacobian of the entries of ``K' = K Qᵀ`` with respect to the entries of ``(Q, K)``, at ``(Q, K)``.

    ``K'`` is bilinear in ``(Q, K)`` (``dK' = dK Qᵀ + K dQᵀ``), so the matrix is
    exact: ``m d`` rows (the entries of ``K'``, row by row) and ``d² + m d``
    columns (those of ``Q``, then of ``K``, row by row).  Remark
    ``rem-query-redundancy``: at an invertible ``Q`` its rank is ``m d``, so the
    set of ``(Q, K)`` giving the same ``K'`` has dimension ``d²`` there.
    """
    for name, M in (("Q", Q), ("K", K)):
        if not isinstance(M, sp.MatrixBase):
            raise TypeError(f"{name}: expected a sympy Matrix, got {type(M).__name__}")
    d = Q.rows
    if Q.shape != (d, d) or d == 0:
        raise ValueError(f"Q: expected a non-empty square matrix, got shape {Q.shape}")
    if K.cols != d or K.rows == 0:
        raise ValueError(f"K: expected shape (m, d = {d}) with m >= 1, got {K.shape}")
    Qs, Ks = matrix("Q", d, d), matrix("k", K.rows, d)
    absorbed = Ks * Qs.T
    J = absorbed.reshape(K.rows * d, 1).jacobian(list(Qs) + list(Ks))
    return J.subs({**dict(zip(Qs, Q, strict=True)), **dict(zip(Ks, K, strict=True))})


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


def static_query_affine_identity(d: int) -> tuple[sp.Matrix, sp.Expr]:
    """``(x̃ Q_j − a, x̃ Q_j K_jᵀ x̃ᵀ − (b + x·k))`` for a query map that reads only the constant feature.

    ``x̃ = (1, x)``; ``Q_j ∈ R^{(d+1)×(d+1)}`` has a symbolic first row ``a`` and
    zeros below it (it reads only ``x̃_0 = 1``), ``K_j ∈ R^{(d+1)×(d+1)}`` is
    symbolic, and ``(b, k) = a K_jᵀ`` with ``b ∈ R``, ``k ∈ R^{1×d}``.  Claim
    ``thm-static-query``: the query ``x̃ Q_j`` is the constant row ``a`` and the
    bilinear score is the affine function ``b + x·k``; both returned
    differences are zero.
    """
    _check_size("d", d)
    x = row("x", d)
    xt = augment(x)
    a = row("a", d + 1)
    Qj = sp.Matrix.vstack(a, sp.zeros(d, d + 1))
    Kj = matrix("k", d + 1, d + 1)
    w = a * Kj.T
    b, k = w[0, 0], w[0, 1:]
    score = (xt * Qj * Kj.T * xt.T)[0, 0]
    return (xt * Qj - a).applyfunc(sp.expand), sp.expand(score - b - x.dot(k))


def static_key_identity(d: int, activation: str | Activation | None = None) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """The three differences of claim ``rem-static-key`` on ``x̃ = (1, x)``, each zero.

    With ``e₀ = (1, 0, …, 0)`` and ``k̃ = (b, k)``: the symmetric rank-1 unit with
    static query, ``σ((x̃·e₀)(x̃·k̃)) − σ(b + x·k)``; the gated unit with static
    query, ``σ(x̃·e₀)(x̃·k̃) − σ(1)(b + x·k)`` (affine in ``x``); the gated unit with
    static key, ``σ(x̃·k̃)(x̃·e₀) − σ(b + x·k)`` (the MLP's unit).  ``σ`` is an
    undefined function when ``activation`` is None.
    """
    _check_size("d", d)
    x, k = row("x", d), row("k", d)
    b = sp.Symbol("b", real=True)
    xt, kt = augment(x), sp.Matrix.hstack(sp.Matrix([[b]]), k)
    e0 = sp.Matrix([[1] + [0] * d])
    sigma = sigma_function(activation)
    query, key = xt.dot(e0), xt.dot(kt)
    score = b + x.dot(k)
    return (
        sp.simplify(sigma(sp.expand(query * key)) - sigma(score)),
        sp.simplify(sigma(query) * key - sigma(1) * score),
        sp.simplify(sigma(key) * query - sigma(score)),
    )
