"""Chapter 3: full bilinear attention, the transpose and gauge symmetries of its scores, and their dimension.

Claims ``def-bilinear-attention``, ``thm-transpose`` and ``thm-gauge``.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation
from symbreak.symbolic._base import _check_size, apply, matrix, row, sigma_function, simplify_matrix, sym


def bilinear_attention_identity(
    d: int, m: int, d_out: int, R: int | None = None, activation: str | Activation | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """The definition of full bilinear attention against the quadratic form and the stacked layer.

    Unit ``j`` has a query map ``Q_j`` and a key map ``K_j ∈ R^{d×R}`` with
    symbolic entries (``R = d`` by default: the full form), ``W_j = Q_j K_jᵀ``
    and value ``v_j``.  ``Q^{(r)}, K^{(r)} ∈ R^{m×d}`` stack the ``r``-th columns: row
    ``j`` of ``Q^{(r)}`` is ``q_{j,r} = ((Q_j)_{:,r})ᵀ``.  Returns the two ``1 × d_out``
    differences

    * ``Σ_j σ((x Q_j)·(x K_j)) v_j − Σ_j σ(x W_j xᵀ) v_j`` and
    * ``Σ_j σ(x W_j xᵀ) v_j − σ(Σ_r (x Q^{(r)}ᵀ) ⊙ (x K^{(r)}ᵀ)) V``.

    Claim ``def-bilinear-attention``: the query–key dot product of unit ``j`` is
    the quadratic form ``x W_j xᵀ``, and the layer is the stacked rank-``R`` form
    that ``BilinearMLP`` computes; both differences are zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    R = d if R is None else _check_size("R", R)
    x, V = row("x", d), matrix("v", m, d_out)
    maps = [(matrix(f"q{j + 1}", d, R), matrix(f"k{j + 1}", d, R)) for j in range(m)]
    sigma = sigma_function(activation)
    dot_form, quadratic_form = sp.zeros(1, d_out), sp.zeros(1, d_out)
    for j, (Qj, Kj) in enumerate(maps):
        dot_form += sigma(((x * Qj) * (x * Kj).T)[0, 0]) * V.row(j)
        quadratic_form += sigma((x * (Qj * Kj.T) * x.T)[0, 0]) * V.row(j)
    scores = sp.zeros(1, m)
    for r in range(R):
        Q_r = sp.Matrix([list(Qj[:, r].T) for Qj, _ in maps])
        K_r = sp.Matrix([list(Kj[:, r].T) for _, Kj in maps])
        scores += (x * Q_r.T).multiply_elementwise(x * K_r.T)
    stacked = apply(activation, scores) * V

    def expanded(M: sp.Matrix) -> sp.Matrix:
        return M.applyfunc(sp.expand)

    return (
        simplify_matrix(expanded(dot_form) - expanded(quadratic_form)),
        simplify_matrix(expanded(quadratic_form) - expanded(stacked)),
    )


def transpose_identity(d: int) -> tuple[sp.Expr, sp.Expr]:
    """``(x W xᵀ − x Wᵀ xᵀ, x W xᵀ − x sym(W) xᵀ)`` for symbolic ``W ∈ R^{d×d}``.

    Claim ``thm-transpose``: both simplify to 0, so a quadratic score sees only
    ``sym(W)``.
    """
    x, W = row("x", d), matrix("w", d, d)
    s = (x * W * x.T)[0, 0]
    return sp.expand(s - (x * W.T * x.T)[0, 0]), sp.expand(s - (x * sym(W) * x.T)[0, 0])


def score_dimension_identity(d: int) -> sp.Integer:
    """``rank(J) − d(d+1)/2``, where ``J`` is the matrix of the linear map ``W ↦ x W xᵀ``.

    ``x W xᵀ`` is a quadratic polynomial in ``x ∈ R^{1×d}`` whose ``d(d+1)/2``
    coefficients (of ``x_a x_b``, ``a ≤ b``) are linear in the ``d²`` entries of
    ``W ∈ R^{d×d}``; ``J`` is that ``d(d+1)/2 × d²`` coefficient matrix.  Claim
    ``thm-transpose``: the result is 0, so distinct ``sym(W)`` give distinct
    scores, the scores of one unit form a space of dimension exactly
    ``d(d+1)/2``, and the kernel (dimension ``d(d−1)/2``) is the antisymmetric
    matrices.
    """
    _check_size("d", d)
    x, W = row("x", d), matrix("w", d, d)
    score = sp.Poly(sp.expand((x * W * x.T)[0, 0]), *x)
    coefficients = [score.coeff_monomial(x[a] * x[b]) for a in range(d) for b in range(a, d)]
    J = sp.Matrix([[sp.diff(c, w) for w in W] for c in coefficients])
    return sp.Integer(J.rank()) - sp.Integer(d * (d + 1) // 2)


def gauge_identity(d: int, R: int) -> sp.Matrix:
    """``(Q_j A)(K_j A^{-T})ᵀ − Q_j K_jᵀ`` for symbolic ``Q_j, K_j ∈ R^{d×R}`` and ``A ∈ GL(R)``.

    Claim ``thm-gauge``: the zero ``d × d`` matrix (for every invertible ``A``).
    """
    Qj, Kj, A = matrix("q", d, R), matrix("k", d, R), matrix("a", R, R)
    return simplify_matrix((Qj * A) * (Kj * A.inv().T).T - Qj * Kj.T)


def expressivity_routes(activation: str | Activation) -> dict[str, object]:
    """The facts behind ``prop-bilinear-expressivity`` for one activation ``σ``, and the route each part takes.

    Returns a dict with

    * ``"even_score"``: ``(−x) W (−x)ᵀ − x W xᵀ`` for a symbolic ``W ∈ R^{3×3}`` (0: every full
      bilinear attention layer is even, for every σ);
    * ``"even_sigma"``: the :class:`~symbreak.decide.Decision` on ``σ(−z) − σ(z) ≡ 0`` (a witness
      ``z₀`` with ``σ(z₀) ≠ σ(−z₀)`` when σ is not even);
    * ``"homogeneous"``: whether ``σ(αz) = ασ(z)`` for all ``α > 0`` is proven;
    * ``"growth"``: ``(lim σ(s)/s, lim σ(−s)/s)`` as ``s → +∞``;
    * ``"poles"``: for σ a rational function of exponentials, the real parts of its pole families
      (the zeros of its denominator) and its numerator at the first pole ``w₀``, else ``None``;
    * ``"memory_not_bilinear"``: ``"parity"``, ``"homogeneity"`` or ``None`` (no route);
    * ``"bilinear_not_memory"``: ``"homogeneity"``, ``"growth"``, ``"poles"`` or ``None``.
    """
    from symbreak.activations import resolve, z
    from symbreak.decide import decide_zero

    sigma = resolve(activation)
    x, W = row("x", 3), matrix("w", 3, 3)
    even_score = sp.expand(((-x) * W * (-x).T)[0, 0] - (x * W * x.T)[0, 0])
    even_sigma = decide_zero(sigma.sym(-z) - sigma.expr, (z,))
    homogeneous = sigma.positive_homogeneity.holds is True
    s, w = sp.Symbol("s", positive=True), sp.Symbol("w")
    growth = (sp.limit(sigma.sym(s) / s, s, sp.oo), sp.limit(sigma.sym(-s) / s, s, sp.oo))
    poles = None
    numerator, denominator = sp.fraction(sp.together(sigma.sym(w).rewrite(sp.exp)))
    if denominator.has(sp.exp):
        zeros = sp.solveset(denominator, w, sp.S.Complexes)
        families = zeros.args if isinstance(zeros, sp.Union) else (zeros,)
        if all(isinstance(f, sp.ImageSet) for f in families):
            n = sp.Symbol("n", integer=True)
            pole = families[0].lamda.expr.subs(families[0].lamda.variables[0], 0)
            real_parts = [sp.simplify(sp.re(f.lamda.expr.subs(f.lamda.variables[0], n))) for f in families]
            there = sp.simplify(numerator.subs(w, pole))
            poles = {"real_parts": real_parts, "first_pole": pole, "numerator_there": there}
    finite = all(g.is_finite for g in growth)
    memory_route = "parity" if even_sigma.holds is False else ("homogeneity" if homogeneous else None)
    if homogeneous:
        bilinear_route = "homogeneity"
    elif finite and growth[0] != 0:
        bilinear_route = "growth"
    elif poles and all(r == 0 for r in poles["real_parts"]) and poles["numerator_there"] != 0:
        bilinear_route = "poles" if poles["first_pole"] != 0 else None  # t₀ = √w₀ must lie off the real line
    else:
        bilinear_route = None
    return {
        "even_score": even_score,
        "even_sigma": even_sigma,
        "homogeneous": homogeneous,
        "growth": growth,
        "poles": poles,
        "memory_not_bilinear": memory_route,
        "bilinear_not_memory": bilinear_route,
    }
