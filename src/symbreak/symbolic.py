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
    "rank_R_layer_identity",
    "rank_d_full_form_identity",
    "rank_R_polarization_identity",
    "inertia",
    "rank_R_form_dimension",
    "rank_R_form_jacobian",
    "gated_rank_R_identity",
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
    "exchange_unit_difference",
    "exchange_layer_difference",
    "QUADRANTS",
    "exchange_by_quadrant",
    "exchange_defect_expansion",
    "exchange_defect_direct",
    "gelu_exchange_defect",
    "counterexample_cells",
    "parity_parts",
    "rank_R_parity_identity",
    "diagonal_split_identity",
    "parity_loss_split_identity",
    "gated_symmetric_layer_difference",
    "linear_gated_block_identity",
    "decision_text",
    "activation_properties",
    "inverse_scaling_layer_identity",
    "scaling_defect",
    "positive_homogeneity_certificate",
    "piecewise_linear_scaling_cells",
    "piecewise_linear_scaling_defect",
    "one_sided_derivatives",
    "scaling_group",
    "log_periodic_activation",
    "gate_temperature_identity",
    "charge_defect",
    "rescaling_generator",
    "gd_norm_identity",
    "gd_step_identity",
    "euler_defect",
    "diagonal_gradient_difference",
    "FLAT_FORMS",
    "invariance_defect",
    "flat_direction_identity",
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


def _nonzero_number(name: str, value: object) -> sp.Expr:
    """``value`` as an exact non-zero sympy number, or a clear error naming ``name``."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, (numbers.Real, sp.Expr)):
        raise TypeError(f"{name}: expected a non-zero real number, got {type(value).__name__} ({value!r})")
    number = sp.nsimplify(value) if isinstance(value, float) else sp.sympify(value)
    if not (number.is_number and number.is_real):
        raise TypeError(f"{name}: expected a non-zero real number, got {value!r}")
    if number == 0:
        raise ValueError(f"{name}: expected a non-zero real number, got {value!r}")
    return number


def inverse_scaling_layer_identity(
    d: int, m: int, d_out: int, activation: str | Activation | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """Both forms under the inverse scaling ``q_j → α_j q_j``, ``k_j → k_j / α_j`` of every unit.

    For symbolic ``x ∈ R^{1×d}``, ``Q, K ∈ R^{m×d}``, ``V ∈ R^{m×d_out}`` and one
    non-zero real symbol ``α_j`` per unit, with ``a_j = x·q_j``, ``b_j = x·k_j``,
    returns the two ``1 × d_out`` matrices

    * ``σ((x Q'ᵀ) ⊙ (x K'ᵀ)) V − σ((x Qᵀ) ⊙ (x Kᵀ)) V`` (the symmetric rank-1 form) and
    * ``(σ(x Q'ᵀ) ⊙ (x K'ᵀ)) V − (σ(x Qᵀ) ⊙ (x Kᵀ)) V − Σ_j (σ(α_j a_j)/α_j − σ(a_j)) b_j v_j``
      (the gated form, minus the predicted change of its unit coefficients).

    Claim ``thm-inverse-scaling``, parts 1 and 2: both are zero, for every σ when
    ``activation`` is None (an undefined function σ).
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)
    alphas = sp.symbols(f"alpha_1:{m + 1}", real=True, nonzero=True)
    D = sp.diag(*alphas)
    Q2, K2 = D * Q, D.inv() * K
    sigma = sigma_function(activation)
    a, b = x * Q.T, x * K.T
    a2, b2 = x * Q2.T, x * K2.T
    symmetric = apply(activation, a2.multiply_elementwise(b2)) * V - apply(activation, a.multiply_elementwise(b)) * V
    gated = apply(activation, a2).multiply_elementwise(b2) * V - apply(activation, a).multiply_elementwise(b) * V
    predicted = sp.zeros(1, d_out)
    for j, al in enumerate(alphas):
        predicted += (sigma(al * a[0, j]) / al - sigma(a[0, j])) * b[0, j] * V.row(j)
    return simplify_matrix(symmetric.applyfunc(sp.expand)), simplify_matrix((gated - predicted).applyfunc(sp.expand))


def scaling_defect(
    activation: str | Activation | None = None, alpha: float | sp.Expr | None = None
) -> tuple[sp.Expr, tuple[sp.Symbol]]:
    """``(σ(α z) − α σ(z), (z,))``: the condition of ``thm-inverse-scaling`` for one ``α``, ready for ``decide_zero``.

    ``alpha`` is a non-zero real number (exact: an int, a ``fractions.Fraction`` or a
    sympy number; a float is converted with ``nsimplify``), or None for a non-zero
    real symbol ``α``.  The gated layer is unchanged by the inverse scaling with
    this ``α`` for all weights and inputs iff the expression vanishes for all
    real ``z``.
    """
    z = sp.Symbol("z", real=True)
    al = sp.Symbol("alpha", real=True, nonzero=True) if alpha is None else _nonzero_number("alpha", alpha)
    sigma = sigma_function(activation)
    return sigma(al * z) - al * sigma(z), (z,)


def _two_slopes(c_plus: sp.Expr, c_minus: sp.Expr, arg: sp.Expr) -> sp.Expr:
    """``c₊ max(arg, 0) + c₋ min(arg, 0)``."""
    return c_plus * sp.Max(arg, 0) + c_minus * sp.Min(arg, 0)


def positive_homogeneity_certificate(activation: str | Activation | None = None) -> sp.Matrix:
    """The substitutions that prove "positively homogeneous ⇒ two slopes" (``thm-inverse-scaling`` (i)).

    With ``H(α, z) = σ(α z) − α σ(z)``, ``c₊ = σ(1)``, ``c₋ = −σ(−1)``,
    ``P(z) = c₊ max(z, 0) + c₋ min(z, 0)`` and a positive symbol ``t``, returns
    the ``1 × 3`` matrix

    ``[σ(t) − P(t) − H(t, 1),  σ(−t) − P(−t) − H(t, −1),  σ(0) − P(0) + H(2, 0)]``,

    which is zero: on each sign cell of ``z`` the deviation ``σ(z) − P(z)`` is a
    value of ``H`` at some ``α > 0``, so it vanishes when ``H`` does.
    """
    sigma = sigma_function(activation)
    t = sp.Symbol("t", positive=True)

    def H(al: sp.Expr, arg: sp.Expr) -> sp.Expr:
        return sigma(al * arg) - al * sigma(arg)

    c_plus, c_minus = sigma(sp.Integer(1)), -sigma(sp.Integer(-1))

    def P(arg: sp.Expr) -> sp.Expr:
        return _two_slopes(c_plus, c_minus, arg)

    zero = sp.Integer(0)
    cells = [
        sigma(t) - P(t) - H(t, sp.Integer(1)),
        sigma(-t) - P(-t) - H(t, sp.Integer(-1)),
        sigma(zero) - P(zero) + H(sp.Integer(2), zero),
    ]
    return sp.Matrix([[sp.simplify(c) for c in cells]])


def piecewise_linear_scaling_cells() -> sp.Matrix:
    """Three identities of the two-slope activation ``P(z) = c₊ max(z, 0) + c₋ min(z, 0)``, on every sign cell.

    For real symbols ``c₊, c₋``, rows:

    1. ``P(α z) − α P(z)`` with ``α > 0`` (``P`` is positively homogeneous);
    2. ``P(z) + P(−z) − (c₊ − c₋)|z|`` (``P`` is odd iff ``c₊ = c₋``);
    3. ``P(α z)/α − P(z) + (c₊ − c₋)|z|`` with ``α < 0`` (the change of a gated
       unit's coefficient, ``prop-inverse-scaling-defect``);

    columns: the cells ``z = t > 0``, ``z = −t < 0``, ``z = 0``.  Every entry is
    simplified; the ``3 × 3`` matrix is zero (``thm-inverse-scaling``).
    """
    c_plus, c_minus = sp.symbols("c_+ c_-", real=True)
    z = sp.Symbol("z", real=True)
    t = sp.Symbol("t", positive=True)
    a_pos, a_neg = sp.Symbol("alpha", positive=True), sp.Symbol("alpha", negative=True)

    def P(arg: sp.Expr) -> sp.Expr:
        return _two_slopes(c_plus, c_minus, arg)

    rows = [
        P(a_pos * z) - a_pos * P(z),
        P(z) + P(-z) - (c_plus - c_minus) * sp.Abs(z),
        P(a_neg * z) / a_neg - P(z) + (c_plus - c_minus) * sp.Abs(z),
    ]
    return sp.Matrix([[sp.simplify(r.subs(z, cell)) for cell in (t, -t, sp.Integer(0))] for r in rows])


def piecewise_linear_scaling_defect() -> tuple[sp.Expr, sp.Expr]:
    """``D(α) = E[(P(α z)/α − P(z))²]`` for ``z ~ N(0, 1)`` and the two-slope ``P``, against its closed form.

    ``P(z) = c₊ max(z, 0) + c₋ min(z, 0)`` with real symbols ``c₊, c₋``; the
    expectation is integrated exactly on each half-line.  Returns
    ``(D(α) for α > 0,  D(α) − (c₊ − c₋)² for α < 0)``; claim
    ``prop-inverse-scaling-defect``: both are 0.
    """
    c_plus, c_minus = sp.symbols("c_+ c_-", real=True)
    z = sp.Symbol("z", real=True)
    t = sp.Symbol("t", positive=True)
    density = sp.exp(-(t**2) / 2) / sp.sqrt(2 * sp.pi)

    def defect(al: sp.Symbol) -> sp.Expr:
        expr = (_two_slopes(c_plus, c_minus, al * z) / al - _two_slopes(c_plus, c_minus, z)) ** 2
        halves = [sp.simplify(expr.subs(z, s * t)) for s in (1, -1)]
        return sp.simplify(sum(sp.integrate(h * density, (t, 0, sp.oo)) for h in halves))

    a_pos, a_neg = sp.Symbol("alpha", positive=True), sp.Symbol("alpha", negative=True)
    return defect(a_pos), sp.simplify(defect(a_neg) - (c_plus - c_minus) ** 2)


def one_sided_derivatives(activation: str | Activation) -> tuple[sp.Expr, sp.Expr]:
    """``(σ'(0⁺), σ'(0⁻))``, the one-sided derivatives of σ at 0, from its sympy expression.

    On each half-line σ is written without ``Max``/``Min``/``Abs`` (``z = t`` and
    ``z = −t`` with ``t > 0``), differentiated, and the derivative's limit at
    ``t → 0⁺`` is taken: ``σ'(0⁺) = lim (d/dt) σ(t)`` and
    ``σ'(0⁻) = −lim (d/dt) σ(−t)``.  By the mean value theorem these are the
    one-sided derivatives whenever σ is continuous at 0 and the limits exist (every
    registered σ).  σ is differentiable at 0 iff they are equal and finite
    (``cor-inverse-scaling-single-alpha``).
    """
    sigma = resolve(activation)
    if sigma.expr.atoms(sp.core.function.AppliedUndef):
        raise ValueError(f"activation: expected one with a sympy expression, got the callable {sigma.name!r}")
    t = sp.Symbol("t", positive=True)
    right = sp.limit(sp.diff(sigma.sym(t), t), t, 0, "+")
    left = -sp.limit(sp.diff(sigma.sym(-t), t), t, 0, "+")
    return sp.simplify(right), sp.simplify(left)


def scaling_group(activation: str | Activation) -> str:
    """The group ``G_σ = {α ≠ 0 : σ(α z) = α σ(z) for all z}`` in LaTeX, decided from σ's expression.

    By ``thm-inverse-scaling`` and ``cor-inverse-scaling-single-alpha``:
    ``\\mathbb{R}\\setminus\\{0\\}`` if σ is linear; ``(0, \\infty)`` if σ is
    positively homogeneous but not linear; otherwise, if σ is differentiable at
    0, ``\\{1, -1\\}`` when σ is odd and ``\\{1\\}`` when it is not.  The
    properties are the registry's decisions and :func:`one_sided_derivatives`;
    ``"undecided"`` when one of them is undecided or σ is neither positively
    homogeneous nor differentiable at 0 (the theorem then leaves ``G_σ`` open).
    """
    sigma = resolve(activation)
    linear, homogeneous = sigma.linearity.holds, sigma.positive_homogeneity.holds
    if linear is None or homogeneous is None:
        return "undecided"
    if linear:
        return r"\mathbb{R}\setminus\{0\}"
    if homogeneous:
        return r"(0, \infty)"
    right, left = one_sided_derivatives(sigma)
    if not (right.is_finite and left.is_finite and sp.simplify(right - left) == 0):
        return "undecided"
    odd = sigma.oddness.holds
    if odd is None:
        return "undecided"
    return r"\{1, -1\}" if odd else r"\{1\}"


def log_periodic_activation(base: int = 2) -> Activation:
    """``σ(z) = z (2 + sin(2π log_base |z|))``, ``σ(0) = 0``: a single ``α = base`` of inverse scaling, and no more.

    Remark ``rem-single-alpha``: ``σ(base · z) = base · σ(z)`` and σ is odd, so the
    gated form with this σ keeps inverse scaling for ``α = ±base^n``, ``n ∈ Z``;
    σ is continuous and Lipschitz (``|σ'| ≤ 3 + 2π/ln(base)`` away from 0) but
    not differentiable at 0, which ``cor-inverse-scaling-single-alpha`` requires.
    Returned as an unregistered :class:`~symbreak.activations.Activation` (torch
    function and sympy expression).
    """
    if isinstance(base, bool) or not isinstance(base, int) or base < 2:
        raise ValueError(f"base: expected an int >= 2, got {base!r}")
    import math

    import torch

    from symbreak.activations import z

    expr = sp.Piecewise((0, sp.Eq(z, 0)), (z * (2 + sp.sin(2 * sp.pi * sp.log(sp.Abs(z), base))), True))
    scale = 2 * math.pi / math.log(base)

    def fn(u: torch.Tensor) -> torch.Tensor:
        magnitude = u.abs()
        safe = torch.where(magnitude > 0, magnitude, torch.ones_like(magnitude))
        return torch.where(magnitude > 0, u * (2 + torch.sin(scale * torch.log(safe))), torch.zeros_like(u))

    return Activation(f"log_periodic_{base}", fn, expr, f"z(2 + sin(2π log_{base}|z|)), a single scaling α = {base}")


def gate_temperature_identity() -> tuple[sp.Matrix, sp.Matrix]:
    """SiLU and GELU under inverse scaling: ``σ(α z)/α = z s(α z)`` with a gate ``s`` from 0 to 1.

    For a non-zero real symbol ``α`` returns

    * the ``1 × 2`` matrix ``[silu(α z)/α − z·sigmoid(α z),  gelu(α z)/α − z Φ(α z)]``,
      with the registry's SiLU, GELU and sigmoid and ``Φ(u) = (1 + erf(u/√2))/2``;
    * the ``2 × 3`` matrix of the gates' limits ``s(−∞), s(0), s(+∞)`` minus
      ``(0, ½, 1)``, rows sigmoid and ``Φ``.

    Remark ``rem-gate-temperature``: both are zero, so inverse scaling turns SiLU
    into Swish with ``β = α`` and GELU into ``z Φ(α z)``, which tend to ReLU
    (``α → +∞``), ``z/2`` (``α → 0``) and ``min(z, 0)`` (``α → −∞``).
    """
    z = sp.Symbol("z", real=True)
    u = sp.Symbol("u", real=True)
    al = sp.Symbol("alpha", real=True, nonzero=True)
    silu, gelu, sigmoid = resolve("silu"), resolve("gelu"), resolve("sigmoid")
    Phi = (1 + sp.erf(u / sp.sqrt(2))) / 2
    identities = sp.Matrix(
        [[silu.sym(al * z) / al - z * sigmoid.sym(al * z), gelu.sym(al * z) / al - z * Phi.subs(u, al * z)]]
    )
    gates = [sigmoid.sym(u), Phi]
    limits = sp.Matrix([[sp.limit(g, u, -sp.oo), g.subs(u, 0), sp.limit(g, u, sp.oo)] for g in gates])
    return simplify_matrix(identities), simplify_matrix(limits - sp.Matrix([[0, sp.Rational(1, 2), 1]] * 2))


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


def rank_R_layer_identity(d: int, m: int, d_out: int, R: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``Σ_j σ(x W_j xᵀ) v_j − σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` with ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``.

    For symbolic ``x ∈ R^{1×d}``, ``Q_r, K_r ∈ R^{m×d}`` (row ``j`` of ``Q_r`` is
    ``q_{j,r}``), ``r = 1 … R``, and ``V ∈ R^{m×d_out}``; each ``W_j`` is formed
    explicitly as a sum of ``R`` outer products.  Claim ``prop-higher-rank``:
    the ``1 × d_out`` difference is zero (for every σ when ``activation`` is None).
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    _check_size("R", R)
    x, V = row("x", d), matrix("v", m, d_out)
    Qs = [matrix(f"q{r + 1}", m, d) for r in range(R)]
    Ks = [matrix(f"k{r + 1}", m, d) for r in range(R)]
    sigma = sigma_function(activation)
    unit_sum = sp.zeros(1, d_out)
    for j in range(m):
        W = sp.zeros(d, d)
        for Q_r, K_r in zip(Qs, Ks, strict=True):
            W += Q_r.row(j).T * K_r.row(j)
        unit_sum += sigma(sp.expand((x * W * x.T)[0, 0])) * V.row(j)
    scores = sp.zeros(1, m)
    for Q_r, K_r in zip(Qs, Ks, strict=True):
        scores += (x * Q_r.T).multiply_elementwise(x * K_r.T)
    stacked = apply(activation, scores.applyfunc(sp.expand)) * V
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
    _check_size("d", d)
    _check_size("R", R)
    Qs, Ks = matrix("q", R, d), matrix("k", R, d)
    S = sp.zeros(d, d)
    for r in range(R):
        S += sym(Qs.row(r).T * Ks.row(r))
    entries = sp.Matrix([S[a, b] for a in range(d) for b in range(a, d)])
    J = entries.jacobian(list(Qs) + list(Ks))
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


# ---------------------------------------------------------------------------
# Parity x → −x (chapter 8: prop-parity, rem-parity-parts, rem-diagonal-split, cor-parity-comparison)


def parity_parts(activation: str | Activation | None = None) -> tuple[sp.Expr, sp.Expr]:
    """``(σ_e, σ_o)``: the even and the odd part of σ, as expressions in the registry's real symbol ``z``.

    ``σ_e(z) = (σ(z) + σ(−z))/2`` and ``σ_o(z) = (σ(z) − σ(−z))/2``, so that
    ``σ = σ_e + σ_o``; σ is even iff ``σ_o ≡ 0`` and odd iff ``σ_e ≡ 0`` (decide
    either with :func:`symbreak.decide.decide_zero`).  With ``activation=None``
    σ is an undefined function.  Claims ``prop-parity`` and ``rem-parity-parts``.
    """
    from symbreak.activations import z

    sigma = sigma_function(activation)
    return (sigma(z) + sigma(-z)) / 2, (sigma(z) - sigma(-z)) / 2


def rank_R_parity_identity(d: int, m: int, d_out: int, R: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``f(−x) − f(x)`` for the rank-``R`` form ``f(x) = σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` with symbolic weights.

    ``Q_r, K_r ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}`` have symbolic entries and σ is
    undefined by default, so the identity is checked for every σ at once.  The
    score of unit ``j`` is the quadratic form ``Σ_r (x·q_{j,r})(x·k_{j,r}) = x W_j xᵀ``;
    ``R = 1`` is the symmetric rank-1 form and ``R = d`` the full form.  Claim
    ``prop-parity``: the returned ``1 × d_out`` matrix is zero.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    _check_size("R", R)
    x, V = row("x", d), matrix("v", m, d_out)
    Qs = [matrix(f"q{r + 1}", m, d) for r in range(R)]
    Ks = [matrix(f"k{r + 1}", m, d) for r in range(R)]

    def layer(t: sp.Matrix) -> sp.Matrix:
        scores = sp.zeros(1, m)
        for Q_r, K_r in zip(Qs, Ks, strict=True):
            scores += (t * Q_r.T).multiply_elementwise(t * K_r.T)
        return apply(activation, scores.applyfunc(sp.expand)) * V

    return simplify_matrix(layer(-x) - layer(x))


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


# ---------------------------------------------------------------------------
# thm-exchange: the exchange q_j ↔ k_j (chapter 6)


def exchange_unit_difference(
    activation: str | Activation | None = None,
) -> tuple[sp.Expr, tuple[sp.Symbol, sp.Symbol]]:
    """``(D(a, b), (a, b))``, ``D(a, b) = σ(a) b − σ(b) a``: a gated unit's coefficient before minus after ``q ↔ k``.

    ``a = x·q_j`` and ``b = x·k_j`` are real symbols, returned so that the
    expression can be decided with :func:`symbreak.decide.decide_zero` (the same
    expression that :func:`symbreak.verdicts.exchange_decision` decides).  Claim
    ``thm-exchange``: ``D ≡ 0`` iff ``σ(z) = σ(1) z``.
    """
    a, b = sp.symbols("a b", real=True)
    sigma = sigma_function(activation)
    return sigma(a) * b - sigma(b) * a, (a, b)


def exchange_layer_difference(
    form: str, d: int, m: int, d_out: int, activation: str | Activation | None = None
) -> sp.Matrix:
    """The layer with ``Q`` and ``K`` exchanged minus the layer, for symbolic ``x``, ``Q, K ∈ R^{m×d}``, ``V``.

    ``form="rank1"``: ``σ((x Kᵀ) ⊙ (x Qᵀ)) V − σ((x Qᵀ) ⊙ (x Kᵀ)) V``;
    ``form="gated"``: ``(σ(x Kᵀ) ⊙ (x Qᵀ)) V − (σ(x Qᵀ) ⊙ (x Kᵀ)) V``.
    Claim ``thm-exchange``: the ``1 × d_out`` difference is zero for the
    symmetric rank-1 form with every σ (``activation=None``: an undefined σ), and
    for the gated form iff σ is linear.
    """
    if form not in ("rank1", "gated"):
        raise ValueError(f"form: expected 'rank1' or 'gated', got {form!r}")
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    x, Q, K, V = row("x", d), matrix("q", m, d), matrix("k", m, d), matrix("v", m, d_out)

    def layer(Qs: sp.Matrix, Ks: sp.Matrix) -> sp.Matrix:
        a, b = x * Qs.T, x * Ks.T
        if form == "rank1":
            return apply(activation, a.multiply_elementwise(b)) * V
        return apply(activation, a).multiply_elementwise(b) * V

    # expand acts inside σ as well, so equal arguments cancel without a (slow) simplify
    return (layer(K, Q) - layer(Q, K)).applyfunc(sp.expand)


#: The four open sign quadrants ``(sign a, sign b)`` of the factor plane, in the order of the book.
QUADRANTS: tuple[tuple[int, int], ...] = ((1, 1), (-1, -1), (1, -1), (-1, 1))


def exchange_by_quadrant(activation: str | Activation | None = None) -> dict[tuple[int, int], sp.Expr]:
    """``D(a, b) = σ(a) b − σ(b) a`` on each open quadrant ``(sign a, sign b)`` of :data:`QUADRANTS`, simplified.

    On a quadrant ``Max``, ``Min``, ``Abs`` and ``Heaviside`` resolve, so a
    piecewise-linear σ gives a polynomial.  Claim ``prop-relu-exchange``: for
    ReLU the result is ``0`` on ``(+, +)`` and ``(−, −)``, ``a b`` on ``(+, −)``
    and ``−a b`` on ``(−, +)``.
    """
    expr, (a, b) = exchange_unit_difference(activation)
    t, w = sp.symbols("t w", positive=True)
    cells = {}
    for sa, sb in QUADRANTS:
        on_cell = sp.simplify(expr.subs({a: sa * t, b: sb * w}, simultaneous=True))
        cells[(sa, sb)] = sp.expand(on_cell.subs({t: sa * a, w: sb * b}, simultaneous=True))
    return cells


def exchange_defect_expansion(activation: str | Activation | None = None) -> sp.Expr:
    """``D(a, b)² − (b² σ(a)² + a² σ(b)² − 2 (a σ(a)) (b σ(b)))``, expanded.

    Claim ``prop-exchange-defect``: zero for every σ (``activation=None``); each
    term on the right is a product of a function of ``a`` and a function of
    ``b``, so for independent ``a, b ~ N(0, 1)`` its mean factorises and
    ``E[D²] = 2(E[σ(z)²] − E[z σ(z)]²)``.
    """
    expr, (a, b) = exchange_unit_difference(activation)
    sigma = sigma_function(activation)
    split = b**2 * sigma(a) ** 2 + a**2 * sigma(b) ** 2 - 2 * (a * sigma(a)) * (b * sigma(b))
    return sp.expand(expr**2 - split)


def exchange_defect_direct(activation: str | Activation) -> sp.Expr:
    """``E[D(a, b)²]`` for independent ``a, b ~ N(0, 1)``, integrated directly over the plane, exactly.

    The plane is split into the four quadrants of :func:`exchange_by_quadrant`;
    on each, ``D²`` must be a polynomial (σ polynomial on each half-line:
    ``identity``, ``relu``, ``leaky_relu``, ``abs``), and sympy integrates it
    against ``φ(a) φ(b)``, ``φ(z) = e^{−z²/2}/√(2π)``.  Claim
    ``prop-exchange-defect``: equals ``2(E[σ²] − E[z σ]²)``.
    """
    sigma = resolve(activation)
    a, b = sp.symbols("a b", real=True)
    t, w = sp.symbols("t w", positive=True)
    density = sp.exp(-(t**2 + w**2) / 2) / (2 * sp.pi)
    total = sp.Integer(0)
    for (sa, sb), cell in exchange_by_quadrant(sigma).items():
        square = sp.expand(cell.subs({a: sa * t, b: sb * w}, simultaneous=True) ** 2)
        if not square.is_polynomial(t, w):
            raise ValueError(
                f"activation: expected a σ that is a polynomial on each half-line (e.g. 'relu'), got {sigma.name!r}"
            )
        total += sp.integrate(sp.integrate(square * density, (t, 0, sp.oo)), (w, 0, sp.oo))
    return sp.simplify(total)


def _mean_by_antiderivative(integrand: sp.Expr, antiderivative: sp.Expr, z: sp.Symbol) -> tuple[sp.Expr, sp.Expr]:
    """``(∫ integrand dz over R, residual)``: ``F(∞) − F(−∞)`` and ``F' − integrand`` (0 when ``F`` is right).

    Every ``F`` used here is a polynomial in ``erf`` of a multiple of ``z`` or in
    ``e^{−z²}``, so its values at ``±∞`` are sympy's ``erf(±∞) = ±1`` and ``e^{−∞} = 0``.
    """
    residual = sp.simplify(sp.diff(antiderivative, z) - integrand)
    value = antiderivative.subs(z, sp.oo) - antiderivative.subs(z, -sp.oo)
    if not value.is_finite:
        raise ValueError(f"antiderivative: expected finite limits at ±∞, got {value}")
    return sp.simplify(value), residual


def gelu_exchange_defect() -> tuple[sp.Expr, list[sp.Expr]]:
    """``(D_GELU, residuals)``: the exact ``E[D²] = 2(E[σ²] − E[zσ]²)`` for ``σ(z) = z Φ(z)``, and its checks.

    With ``φ`` the standard normal density and ``Φ`` its distribution function,
    Stein's identity ``E[z g(z)] = E[g'(z)]`` (integration by parts: ``(−g φ)' =
    (z g − g') φ``) gives ``E[zσ] = E[Φ] + E[z φ] = 1/2``, ``E[σ²] = E[Φ²] +
    2 E[z Φ φ]`` and ``E[z Φ φ] = E[φ²] − E[z Φ φ]``; the remaining means are
    ``E[Φ] = [Φ²/2] = 1/2``, ``E[Φ²] = [Φ³/3] = 1/3``, ``E[zφ] = [−φ²/2] = 0``
    and ``E[φ²] = ∫ φ³ = 1/(2π√3)``.  So ``D = 1/6 + 1/(π√3)``.  ``residuals``
    holds ``F' − integrand`` for every antiderivative used, the boundary terms
    ``[−g φ]`` of the three Stein steps (through the bounds ``|z| φ`` and
    ``φ²``), and the registry's GELU minus ``z Φ``: all zero.  Remark
    ``rem-gelu-defect``.
    """
    z = sp.Symbol("z", real=True)
    phi = sp.exp(-(z**2) / 2) / sp.sqrt(2 * sp.pi)
    Phi = (1 + sp.erf(z / sp.sqrt(2))) / 2
    c = sp.sqrt(sp.Rational(3, 2))
    mean_Phi, r1 = _mean_by_antiderivative(Phi * phi, Phi**2 / 2, z)
    mean_Phi2, r2 = _mean_by_antiderivative(Phi**2 * phi, Phi**3 / 3, z)
    mean_z_phi, r3 = _mean_by_antiderivative(z * phi * phi, -(phi**2) / 2, z)
    phi3_antiderivative = sp.sqrt(sp.pi) / (2 * c) * sp.erf(c * z) / (2 * sp.pi) ** sp.Rational(3, 2)
    mean_phi2, r4 = _mean_by_antiderivative(phi**3, phi3_antiderivative, z)
    residuals = [r1, r2, r3, r4]
    # Stein: ∫ (z g − g') φ = [−g φ] = 0; since 0 ≤ Φ ≤ 1, |g φ| ≤ |z| φ for g = zΦ, zΦ² and ≤ φ² for g = Φ φ
    bound_limits = {
        bound: sum(sp.Abs(sp.limit(bound, z, end)) for end in (sp.oo, -sp.oo)) for bound in (z * phi, phi**2)
    }
    for g, bound in ((z * Phi, z * phi), (z * Phi**2, z * phi), (Phi * phi, phi**2)):
        residuals.append(sp.expand(sp.diff(-g * phi, z) - (z * g - sp.diff(g, z)) * phi))
        residuals.append(bound_limits[bound])
    residuals.append(sp.simplify(resolve("gelu").expr - z * Phi))
    mean_z_sigma = mean_Phi + mean_z_phi
    mean_z_Phi_phi = mean_phi2 / 2
    mean_sigma2 = mean_Phi2 + 2 * mean_z_Phi_phi
    return sp.simplify(2 * (mean_sigma2 - mean_z_sigma**2)), residuals


def counterexample_cells(expr: sp.Expr, decision: Decision) -> list[str]:
    """Table cells for a decision on ``expr ≡ 0``: verdict, witness, exact value there, 50-digit value.

    ``["yes (proof)", "—", "—", "—"]`` for a proof; for a counterexample the
    rational point, ``expr`` there simplified exactly (LaTeX) and the decision's
    certified value to 50 significant digits, as inline code with the digits
    after the point in groups of ten (so that a narrow table cell can wrap them).
    """
    if not isinstance(expr, sp.Expr):
        raise TypeError(f"expr: expected a sympy expression, got {type(expr).__name__}")
    if not isinstance(decision, Decision):
        raise TypeError(f"decision: expected a symbreak.decide.Decision, got {type(decision).__name__}")
    if decision.holds is True:
        return ["yes (proof)", "—", "—", "—"]
    if decision.holds is None:
        return ["undecided", "—", "—", "—"]
    witness = ", ".join(f"${sp.latex(s)} = {sp.latex(v)}$" for s, v in decision.witness.items())
    exact = sp.simplify(expr.subs(decision.witness))
    digits = sp.N(exact, 50)
    if sp.Abs(digits - sp.N(decision.value, 50)) > sp.Float("1e-45"):
        raise ValueError(f"decision: its value {decision.value} is not expr at its witness ({digits})")
    text = str(digits)
    whole, _, fraction = text.lstrip("-").partition(".")
    groups = " ".join(fraction[i : i + 10] for i in range(0, len(fraction), 10))
    sign = "-" if text.startswith("-") else ""
    return ["no (counterexample)", witness, f"${sp.latex(exact)}$", f"`{sign}{whole}.{groups}`"]


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


# ---------------------------------------------------------------------------
# Part V: conservation laws and the invariant diagonal (thm-conservation, thm-invariant-diagonal)

_UNIT_FORMS = ("kv", "rank1", "gated")
_CHARGE_PAIRS = {"kv": ("kv",), "rank1": ("qk", "kv"), "gated": ("qk", "kv")}


def _check_unit_form(form: str, pair: str | None = None) -> str:
    if form not in _UNIT_FORMS:
        raise ValueError(f"form: expected one of {list(_UNIT_FORMS)}, got {form!r}")
    if pair is not None and pair not in _CHARGE_PAIRS[form]:
        raise ValueError(f"pair: expected one of {list(_CHARGE_PAIRS[form])} for form {form!r}, got {pair!r}")
    return form


def _unit_coefficient(form: str, activation: str | Activation | None, a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``φ(a, b)``: ``σ(b)`` (``kv``, ``b = x·k``), ``σ(a b)`` (``rank1``) or ``σ(a) b`` (``gated``)."""
    sigma = sigma_function(activation)
    if form == "kv":
        return sigma(b)
    return sigma(a * b) if form == "rank1" else sigma(a) * b


def _heaviside_expand(e: sp.Expr) -> sp.Expr:
    """``e`` with ``Max``/``Min`` written through ``Heaviside`` (so ``z H(z) − Max(0, z)`` cancels), expanded."""
    return sp.expand(e.rewrite(sp.Heaviside))


def charge_defect(form: str, pair: str, activation: str | Activation | None = None) -> tuple[sp.Expr, tuple]:
    """The rate at which a unit breaks the conservation law of ``pair``, on the unit level, and its variables.

    A unit contributes ``φ(a, b) v`` with ``a = x·q``, ``b = x·k`` (:func:`_unit_coefficient`).
    ``pair = "qk"``: ``a ∂_a φ − b ∂_b φ`` (the generator of ``q → α q``, ``k → k/α``);
    ``pair = "kv"``: ``b ∂_b φ − φ`` (the generator of ``k → α k``, ``v → v/α``).
    Claim ``thm-conservation``: the law of ``pair`` holds for every loss iff this
    vanishes for all real ``a, b``.  Returns ``(expr, (a, b))``, or ``(expr, (b,))``
    for the key–value memory, ready for :func:`symbreak.decide.decide_zero`.
    """
    _check_unit_form(form, pair)
    a, b = sp.symbols("a b", real=True)
    phi = _unit_coefficient(form, activation, a, b)
    if pair == "qk":
        expr = a * sp.diff(phi, a) - b * sp.diff(phi, b)
    else:
        expr = b * sp.diff(phi, b) - phi
    return expr, ((b,) if form == "kv" else (a, b))


def rescaling_generator(
    form: str, pair: str, d: int, d_out: int, activation: str | Activation | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """``(A·∇_A f − B·∇_B f,  δ(x·q, x·k) v)`` for one unit ``f = φ(x·q, x·k) v`` of ``form``.

    ``(A, B)`` is ``(q, k)`` for ``pair = "qk"`` and ``(k, v)`` for ``"kv"``;
    ``δ`` is :func:`charge_defect`.  Symbolic ``x, q, k ∈ R^{1×d}``,
    ``v ∈ R^{1×d_out}``.  Claim ``thm-conservation``: the two ``1 × d_out``
    matrices are equal for every σ (the chain rule reduces the layer to the
    unit), and the first is zero exactly where the law holds.
    """
    _check_unit_form(form, pair)
    _check_size("d", d)
    _check_size("d_out", d_out)
    x, q, k, v = row("x", d), row("q", d), row("k", d), row("v", d_out)
    f = _unit_coefficient(form, activation, x.dot(q), x.dot(k)) * v
    blocks = {"q": q, "k": k, "v": v}
    A, B = blocks[pair[0]], blocks[pair[1]]
    generator = sp.zeros(1, d_out)
    for o in range(d_out):
        generator[o] = sum(w * sp.diff(f[o], w) for w in A) - sum(w * sp.diff(f[o], w) for w in B)
    defect, variables = charge_defect(form, pair, activation)
    values = {variables[-1]: x.dot(k)}
    if len(variables) == 2:
        values[variables[0]] = x.dot(q)
    predicted = defect.subs(values, simultaneous=True) * v
    return generator.applyfunc(_heaviside_expand), predicted.applyfunc(_heaviside_expand)


def gd_norm_identity(d: int) -> sp.Expr:
    """``c' − (1 − ηλ)² c − η²(‖g_a‖² − ‖g_b‖²) + 2η(1 − ηλ)(a·g_a − b·g_b)``, expanded.

    For symbolic rows ``a, b, g_a, g_b ∈ R^{1×d}`` and reals ``η, λ``, with
    ``c = ‖a‖² − ‖b‖²`` and ``c'`` the same after one step of gradient descent
    with coupled weight decay, ``a' = (1 − ηλ) a − η g_a``, ``b' = (1 − ηλ) b − η g_b``.
    Claim ``thm-conservation``: the result is 0, so the one-step identity
    ``c' = (1 − ηλ)² c + η²(‖g_a‖² − ‖g_b‖²)`` holds exactly when ``a·g_a = b·g_b``.
    """
    _check_size("d", d)
    a, b, ga, gb = row("a", d), row("b", d), row("g_a", d), row("g_b", d)
    eta, lam = sp.symbols("eta lambda", real=True)
    a1, b1 = (1 - eta * lam) * a - eta * ga, (1 - eta * lam) * b - eta * gb
    c0, c1 = a.dot(a) - b.dot(b), a1.dot(a1) - b1.dot(b1)
    cross = a.dot(ga) - b.dot(gb)
    return sp.expand(
        c1 - (1 - eta * lam) ** 2 * c0 - eta**2 * (ga.dot(ga) - gb.dot(gb)) + 2 * eta * (1 - eta * lam) * cross
    )


def _unit_loss(form: str, d: int, d_out: int, activation: str | Activation | None):
    """``(L, x, q, k, v, y)`` with ``L = ½‖φ(x·q, x·k) v − y‖²`` for one unit and one input."""
    x, q, k, v, y = row("x", d), row("q", d), row("k", d), row("v", d_out), row("y", d_out)
    r = _unit_coefficient(form, activation, x.dot(q), x.dot(k)) * v - y
    return r.dot(r) / 2, x, q, k, v, y


def gd_step_identity(form: str, pair: str, d: int, d_out: int, activation: str | Activation | None = None) -> sp.Expr:
    """``c' − (1 − ηλ)² c − η²(‖g_a‖² − ‖g_b‖²)`` for one gradient step on one unit's loss.

    ``L = ½‖φ(x·q, x·k) v − y‖²`` with symbolic ``x, q, k ∈ R^{1×d}``,
    ``v, y ∈ R^{1×d_out}``; ``g`` are its exact gradients and the step is
    ``θ' = (1 − ηλ) θ − η g``.  Claim ``thm-conservation``: the result
    (simplified) is 0 where the law of ``pair`` holds; otherwise it is
    ``−2η(1 − ηλ)`` times the unit's charge defect times ``(φ v − y)·v``.
    """
    _check_unit_form(form, pair)
    _check_size("d", d)
    _check_size("d_out", d_out)
    L, x, q, k, v, y = _unit_loss(form, d, d_out, activation)
    eta, lam = sp.symbols("eta lambda", positive=True)
    blocks = {"q": q, "k": k, "v": v}
    A, B = blocks[pair[0]], blocks[pair[1]]
    gA, gB = A.applyfunc(lambda w: sp.diff(L, w)), B.applyfunc(lambda w: sp.diff(L, w))
    A1, B1 = (1 - eta * lam) * A - eta * gA, (1 - eta * lam) * B - eta * gB
    c0, c1 = A.dot(A) - B.dot(B), A1.dot(A1) - B1.dot(B1)
    return _heaviside_expand(c1 - (1 - eta * lam) ** 2 * c0 - eta**2 * (gA.dot(gA) - gB.dot(gB)))


def euler_defect(activation: str | Activation | None = None) -> tuple[sp.Expr, sp.Symbol]:
    """``(z σ'(z) − σ(z), z)``: the defect of Euler's identity for degree-1 homogeneity.

    Claims ``thm-invariant-diagonal`` and ``thm-conservation``: it vanishes for all
    real ``z`` iff σ is positively homogeneous of degree 1 (ReLU, leaky ReLU,
    abs, the identity); it is the gated unit's gradient mismatch on the diagonal
    ``q = k`` and the rate at which the gated form breaks ``‖q‖² − ‖k‖²``.
    """
    z = sp.Symbol("z", real=True)
    sigma = sigma_function(activation)
    return z * sp.diff(sigma(z), z) - sigma(z), z


def diagonal_gradient_difference(
    form: str, d: int, d_out: int, activation: str | Activation | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """``(g_q − g_k at k = q,  predicted)`` for one unit and one input, ``L = ½‖φ(x·q, x·k) v − y‖²``.

    ``form`` is ``"rank1"`` (predicted 0: ``φ`` is symmetric in its factors)
    or ``"gated"`` (predicted ``((φ v − y)·v) (z σ'(z) − σ(z))|_{z = x·q} x``).
    Claim ``thm-invariant-diagonal``: the two ``1 × d`` matrices are equal, so
    gradient descent keeps ``q = k`` for the symmetric form with every σ and for
    the gated form iff the Euler defect vanishes.
    """
    if form not in ("rank1", "gated"):
        raise ValueError(f"form: expected 'rank1' or 'gated', got {form!r}")
    _check_size("d", d)
    _check_size("d_out", d_out)
    L, x, q, k, v, y = _unit_loss(form, d, d_out, activation)
    g_q, g_k = q.applyfunc(lambda w: sp.diff(L, w)), k.applyfunc(lambda w: sp.diff(L, w))
    on_diagonal = dict(zip(k, q, strict=True))
    difference = (g_q - g_k).subs(on_diagonal, simultaneous=True)
    if form == "rank1":
        predicted = sp.zeros(1, d)
    else:
        defect, z = euler_defect(activation)
        a = x.dot(q)
        residual = (_unit_coefficient(form, activation, a, a) * v - y).dot(v)
        predicted = residual * defect.subs(z, a) * x
    return difference.applyfunc(_heaviside_expand), predicted.applyfunc(_heaviside_expand)


# ---------------------------------------------------------------------------
# prop-flat-directions: a symmetry's tangent is a null direction of the Hessian at a critical point

FLAT_FORMS = ("key-value", "symmetric", "gated")


class _SigmaThird(sp.Function):
    """The third derivative of an arbitrary smooth σ (no further derivative is needed)."""


class _SigmaSecond(sp.Function):
    """The second derivative of an arbitrary smooth σ."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaThird(self.args[0])


class _SigmaPrime(sp.Function):
    """The derivative of an arbitrary smooth σ."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaSecond(self.args[0])


class _Sigma(sp.Function):
    """An arbitrary smooth σ whose derivatives are functions of the same argument.

    Differentiating ``σ(u)`` gives ``σ'(u) ∂u`` directly; an undefined sympy
    function would give ``Subs`` objects, which are slow to expand.
    """

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaPrime(self.args[0])


def _flat_unit_loss(
    form: str, activation: str | Activation | None, d: int, d_out: int, rank: int, piece: bool
) -> tuple[sp.Expr, dict[str, sp.Matrix]]:
    """The loss ``ℓ = ½‖f(x) − y‖²`` of one unit at one symbolic point ``(x, y)``, and its parameter blocks."""
    if form not in FLAT_FORMS:
        raise ValueError(f"form: expected one of {list(FLAT_FORMS)}, got {form!r}")
    _check_size("d", d)
    _check_size("d_out", d_out)
    _check_size("rank", rank)
    if rank > 1 and form != "symmetric":
        raise ValueError(f"rank: expected 1 for the {form} form (rank R is a symmetric form), got {rank}")
    if piece:
        slope = sp.Symbol("c", real=True)

        def sigma(arg: sp.Expr) -> sp.Expr:
            return slope * arg

    elif activation is None:
        sigma = _Sigma
    else:
        sigma = sigma_function(activation)
    x, y, v = row("x", d), row("y", d_out), row("v", d_out)
    if form == "key-value":
        k = row("k", d)
        coefficient = sigma((x * k.T)[0, 0])
        blocks = {"k": k, "v": v}
    elif form == "gated":
        q, k = row("q", d), row("k", d)
        coefficient = sigma((x * q.T)[0, 0]) * (x * k.T)[0, 0]
        blocks = {"q": q, "k": k, "v": v}
    else:
        Q, K = matrix("q", rank, d), matrix("k", rank, d)
        score = sum((x * Q.row(r).T)[0, 0] * (x * K.row(r).T)[0, 0] for r in range(rank))
        coefficient = sigma(score)
        blocks = {"q": Q, "k": K, "v": v}
    residual = coefficient * v - y
    return sp.Rational(1, 2) * sum(e**2 for e in residual), blocks


def _flat_generator_field(blocks: dict[str, sp.Matrix], generator: str, rank: int) -> dict[sp.Symbol, sp.Expr]:
    """The tangent ``ξ = Aθ`` of a one-parameter symmetry, as parameter → component."""
    field: dict[sp.Symbol, sp.Expr] = {}

    def put(block: sp.Matrix, values: sp.Matrix) -> None:
        for symbol, value in zip(block, values, strict=True):
            field[symbol] = field.get(symbol, 0) + value

    parts = generator.split("-") if isinstance(generator, str) else []
    if generator in ("qk", "kv", "qv"):
        first, second = generator
        if first not in blocks or second not in blocks:
            raise ValueError(f"generator: {generator!r} needs blocks {first} and {second}, the form has {list(blocks)}")
        put(blocks[first], blocks[first])
        put(blocks[second], -blocks[second])
    elif len(parts) == 3 and parts[0] in ("gauge", "tq", "tk") and parts[1].isdigit() and parts[2].isdigit():
        if "q" not in blocks:
            raise ValueError(f"generator: {generator!r} needs queries and keys, the form has {list(blocks)}")
        r, s_ = int(parts[1]) - 1, int(parts[2]) - 1
        if not (0 <= r < rank and 0 <= s_ < rank) or (parts[0] != "gauge" and r >= s_):
            raise ValueError(f"generator: expected 1 <= r, s <= rank = {rank} (r < s for tq, tk), got {generator!r}")
        Q, K = blocks["q"], blocks["k"]
        if parts[0] == "gauge":  # δq_s = q_r, δk_r = −k_s
            put(Q.row(s_), Q.row(r))
            put(K.row(r), -K.row(s_))
        elif parts[0] == "tq":  # δq_r = k_s, δq_s = −k_r
            put(Q.row(r), K.row(s_))
            put(Q.row(s_), -K.row(r))
        else:  # δk_r = q_s, δk_s = −q_r
            put(K.row(r), Q.row(s_))
            put(K.row(s_), -Q.row(r))
    else:
        expected = "'qk', 'kv', 'qv', 'gauge-r-s', 'tq-r-s' or 'tk-r-s' (1-based r, s)"
        raise ValueError(f"generator: expected {expected}, got {generator!r}")
    return field


def _flat_setup(
    form: str, generator: str, activation: str | Activation | None, d: int, d_out: int, rank: int, piece: bool
) -> tuple[list[sp.Symbol], dict[sp.Symbol, sp.Expr], list[sp.Expr]]:
    loss, blocks = _flat_unit_loss(form, activation, d, d_out, rank, piece)
    field = _flat_generator_field(blocks, generator, rank)
    params = [s for block in blocks.values() for s in block]
    return params, field, [sp.diff(loss, p) for p in params]


def invariance_defect(
    form: str,
    generator: str,
    activation: str | Activation | None = None,
    *,
    d: int = 2,
    d_out: int = 1,
    rank: int = 1,
    piece: bool = False,
) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    """``(∇ℓ·ξ, variables)``: the rate of change of ``ℓ`` along ``ξ = Aθ``, ready for ``decide_zero``.

    Arguments as in :func:`flat_direction_identity`; the variables are all free
    symbols (the point and the parameters).  The generator is an infinitesimal
    symmetry of the loss iff the expression vanishes identically.
    """
    params, field, grad = _flat_setup(form, generator, activation, d, d_out, rank, piece)
    defect = sp.expand(sum(g * field.get(p, 0) for g, p in zip(grad, params, strict=True)))
    return defect, tuple(sorted(defect.free_symbols, key=lambda s: s.name))


def flat_direction_identity(
    form: str,
    generator: str,
    activation: str | Activation | None = None,
    *,
    d: int = 2,
    d_out: int = 1,
    rank: int = 1,
    piece: bool = False,
) -> tuple[sp.Expr, sp.Matrix]:
    """``(∇ℓ·ξ, ∇²ℓ ξ + Aᵀ∇ℓ)`` for one unit at one point, with ``ξ = Aθ`` the tangent of ``generator``.

    ``ℓ = ½‖f(x) − y‖²`` with symbolic ``x ∈ R^{1×d}``, ``y ∈ R^{1×d_out}`` and
    the parameters of one unit of ``form`` (``"key-value"``, ``"symmetric"`` — at
    ``rank`` R — or ``"gated"``).  ``generator``: ``"qk"``, ``"kv"``, ``"qv"``
    (rescale the first block against the second), ``"gauge-r-s"``
    (``δq_s = q_r``, ``δk_r = −k_s``) or, for ``r < s``, ``"tq-r-s"``
    (``δq_r = k_s``, ``δq_s = −k_r``) and ``"tk-r-s"`` (``δk_r = q_s``,
    ``δk_s = −q_r``).  With ``activation=None`` σ is an arbitrary smooth
    function; with ``piece=True`` it is one linear piece ``c z`` (a real symbol
    ``c``): on each open sign cell of its argument a positively homogeneous σ
    is of this form.  Both entries are expanded, not simplified.

    The first entry is the invariance defect; where the generator is a symmetry
    it is identically 0, and then so is the second, its gradient (claim
    ``prop-flat-directions``: ``H ξ = −Aᵀ∇ℓ``, which vanishes at a critical point).
    """
    params, field, grad = _flat_setup(form, generator, activation, d, d_out, rank, piece)
    defect = sp.expand(sum(g * field.get(p, 0) for g, p in zip(grad, params, strict=True)))
    rows = []
    for a, g_a in zip(params, grad, strict=True):
        hess_xi = sum(sp.diff(g_a, p) * field.get(p, 0) for p in params)
        a_t_grad = sum(sp.diff(field.get(p, 0), a) * g for p, g in zip(params, grad, strict=True))
        rows.append(sp.expand(hess_xi + a_t_grad))
    return defect, sp.Matrix(rows)
