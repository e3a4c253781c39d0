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
from symbreak.decide import Decision

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
    "static_query_affine_identity",
    "integer_matrix",
    "singular_query",
    "singular_query_identity",
    "query_gauge_identity",
    "absorption_jacobian",
    "transpose_identity",
    "gauge_identity",
    "bilinear_attention_identity",
    "score_dimension_identity",
    "rank_one_score_identity",
    "rank_one_layer_identity",
    "gated_layer_identity",
    "sym_rank_one_eigenvalues",
    "sym_rank_one_eigen_identity",
    "sym_rank_one_spectrum_identity",
    "rank_one_polarization_identity",
    "rank_one_truncation_identity",
    "gated_symmetric_unit_difference",
    "gated_symmetric_layer_difference",
    "linear_gated_block_identity",
    "decision_text",
    "activation_properties",
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


def decision_text(decision: Decision) -> str:
    """A :class:`~symbreak.decide.Decision` in words, for a Markdown table with inline LaTeX.

    ``"yes (proof)"`` when the identity is proved, ``"no ($z = -1$)"`` with the point
    of the rational counterexample when it is refuted, ``"undecided"`` otherwise.
    """
    if not isinstance(decision, Decision):
        raise TypeError(f"decision: expected a symbreak.decide.Decision, got {type(decision).__name__}")
    if decision.holds is True:
        return "yes (proof)"
    if decision.holds is False:
        witness = ", ".join(f"${sp.latex(s)} = {sp.latex(v)}$" for s, v in decision.witness.items())
        return f"no ({witness})"
    return "undecided"


def activation_properties(activation: str | Activation) -> list[str]:
    """Table cells for σ: registry name, ``σ(z)`` in LaTeX, and the decided linear / odd / positively homogeneous.

    The three properties are the registry's decisions (``σ(z) = σ(1) z``,
    ``σ(−z) = −σ(z)``, ``σ(α z) = α σ(z)`` for ``α > 0``), rendered by
    :func:`decision_text`.
    """
    sigma = resolve(activation)
    return [
        f"`{sigma.name}`",
        f"${sp.latex(sigma.expr)}$",
        decision_text(sigma.linearity),
        decision_text(sigma.oddness),
        decision_text(sigma.positive_homogeneity),
    ]


def bilinear_attention_identity(
    d: int, m: int, d_out: int, R: int | None = None, activation: str | Activation | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """The definition of full bilinear attention against the quadratic form and the stacked layer.

    Unit ``j`` has a query map ``Q_j`` and a key map ``K_j ∈ R^{d×R}`` with
    symbolic entries (``R = d`` by default: the full form), ``W_j = Q_j K_jᵀ``
    and value ``v_j``.  ``Q_r, K_r ∈ R^{m×d}`` stack the ``r``-th columns: row
    ``j`` of ``Q_r`` is ``q_{j,r} = ((Q_j)_{:,r})ᵀ``.  Returns the two ``1 × d_out``
    differences

    * ``Σ_j σ((x Q_j)·(x K_j)) v_j − Σ_j σ(x W_j xᵀ) v_j`` and
    * ``Σ_j σ(x W_j xᵀ) v_j − σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``.

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


def integer_matrix(rows: int, cols: int, seed: int, bound: int = 3) -> sp.Matrix:
    """A ``rows × cols`` matrix of integers drawn uniformly from ``{−bound, …, bound}`` with ``seed``.

    An exact test point: ranks and null spaces of such matrices are computed
    without rounding.
    """
    _check_size("rows", rows)
    _check_size("cols", cols)
    _check_size("bound", bound)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    import numpy as np

    values = np.random.default_rng(seed).integers(-bound, bound + 1, size=(rows, cols))
    return sp.Matrix(rows, cols, lambda i, j: sp.Integer(int(values[i, j])))


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
