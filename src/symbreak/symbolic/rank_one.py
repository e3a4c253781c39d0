"""Chapter 4: the symmetric rank-1 form, the spectrum of ``sym(qᵀk)``, its polarization and best rank-1 term.

Claims ``prop-rank-one`` and ``prop-rank-one-reach``.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation
from symbreak.symbolic._base import _check_size, apply, matrix, row, sigma_function, simplify_matrix, sym


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


def sym_rank_one_spectrum_identity(d: int) -> tuple[sp.Expr, sp.Expr]:
    """``(tr S − (λ₊ + λ₋), ‖S‖_F² − (λ₊² + λ₋²))`` for ``S = sym(qᵀk)``, ``λ± = ½(q·k ± ‖q‖‖k‖)``.

    Claim ``prop-rank-one-reach``: both simplify to 0.  Since ``λ±`` are
    eigenvalues of ``S`` (:func:`sym_rank_one_eigen_identity`), the other
    ``d − 2`` eigenvalues ``μ_i`` satisfy ``Σ μ_i = 0`` and ``Σ μ_i² = 0``, so
    they vanish and ``rank S ≤ 2``.
    """
    _check_size("d", d)
    S, (lp, lm) = sym_rank_one_eigenvalues(d)
    trace = sp.expand(S.trace() - (lp + lm))
    frobenius = sp.expand(sum(e**2 for e in S) - (lp**2 + lm**2))
    return sp.simplify(trace), sp.simplify(frobenius)


def rank_one_polarization_identity(d: int) -> tuple[sp.Matrix, sp.Expr]:
    """``(sym(qᵀk) − (aᵀa − bᵀb), (x·q)(x·k) − ((x·a)² − (x·b)²))`` with ``q = a + b``, ``k = a − b``.

    For symbolic rows ``a, b, x ∈ R^{1×d}``.  Claim ``prop-rank-one-reach``:
    both vanish (a zero ``d × d`` matrix and 0), so one rank-1 term is the
    difference of two terms on the diagonal ``q = k``; the substitution is
    invertible (``a = (q + k)/2``, ``b = (q − k)/2``).  The score identity is
    ``st = ¼(s + t)² − ¼(s − t)²`` for the factors ``s = x·q``, ``t = x·k``.
    """
    _check_size("d", d)
    a, b, x = row("a", d), row("b", d), row("x", d)
    q, k = a + b, a - b
    matrix_part = (sym(q.T * k) - (a.T * a - b.T * b)).applyfunc(sp.expand)
    score_part = sp.expand(x.dot(q) * x.dot(k) - (x.dot(a) ** 2 - x.dot(b) ** 2))
    return matrix_part, score_part


def rank_one_truncation_identity(d: int) -> sp.Expr:
    """``‖S − S'‖_F² − (‖S‖_F² − 2p·uSuᵀ + 2n·wSwᵀ + p²(u·u)² + n²(w·w)² − 2pn(u·w)²)``, ``S' = p uᵀu − n wᵀw``.

    For a symbolic symmetric ``S ∈ R^{d×d}``, symbolic rows ``u, w`` and reals
    ``p, n``.  Claim ``prop-rank-one-reach``: the expansion is exact (the
    result is 0).  For orthonormal ``u, w`` it reads
    ``‖S‖_F² − 2p·uSuᵀ + 2n·wSwᵀ + p² + n²``, whose minimum over ``p, n ≥ 0``
    gives the error of the best rank-1 term.
    """
    _check_size("d", d)
    S = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"s_{min(i, j) + 1}{max(i, j) + 1}", real=True))
    u, w = row("u", d), row("w", d)
    p, n = sp.symbols("p n", real=True)
    approx = p * u.T * u - n * w.T * w
    lhs = sum(e**2 for e in S - approx)
    uSu, wSw = (u * S * u.T)[0, 0], (w * S * w.T)[0, 0]
    rhs = sum(e**2 for e in S) - 2 * p * uSu + 2 * n * wSw
    rhs += p**2 * u.dot(u) ** 2 + n**2 * w.dot(w) ** 2 - 2 * p * n * u.dot(w) ** 2
    return sp.expand(lhs - rhs)


def gaussian_quadratic_moment_identity(d: int) -> sp.Expr:
    """``E[(x A xᵀ)(x B xᵀ)] − (2⟨sym A, sym B⟩_F + tr A · tr B)`` for ``x ~ N(0, I_d)`` and symbolic ``A, B``.

    The expectation is taken monomial by monomial from the moments of independent standard
    normals, ``E[x_a^k] = (k − 1)!!`` for even ``k`` and 0 for odd ``k``, not from Isserlis'
    pairing formula that the identity restates.  Lemma ``lem-gaussian-quadratic-moments``: 0.
    """
    _check_size("d", d)
    x, A, B = row("x", d), matrix("a", d, d), matrix("b", d, d)
    product = sp.Poly(sp.expand((x * A * x.T)[0, 0] * (x * B * x.T)[0, 0]), *x)
    expectation = sp.Integer(0)
    for powers, coefficient in product.terms():
        if all(p % 2 == 0 for p in powers):
            expectation += coefficient * sp.prod([sp.factorial2(p - 1) for p in powers])
    inner = sum(sym(A)[i, j] * sym(B)[i, j] for i in range(d) for j in range(d))
    return sp.expand(expectation - (2 * inner + A.trace() * B.trace()))
