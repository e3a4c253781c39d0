"""Chapter 7: inverse scaling ``q → α q``, ``k → k/α``, the homogeneity it needs of σ and the gate temperature.

Claims ``thm-inverse-scaling``, ``prop-inverse-scaling-defect``,
``cor-single-alpha`` and remarks ``rem-single-alpha`` and
``rem-gate-temperature``.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve
from symbreak.decide import Decision, decide_zero
from symbreak.symbolic._base import _check_size, apply, matrix, row, sigma_function, simplify_matrix


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


def scaling_decision(activation: str | Activation | None, alpha: float | sp.Expr | None = None) -> Decision:
    """Decision on ``σ(α z) − α σ(z) ≡ 0`` for all real ``z`` (:func:`scaling_defect`): is ``α`` in ``G_σ``?

    A proof on every sign cell of ``z``, or a rational counterexample
    (:func:`symbreak.decide.decide_zero`).  Claim ``thm-inverse-scaling``,
    part 2: the gated form keeps the inverse scaling by ``α`` iff it holds.
    """
    return decide_zero(*scaling_defect(activation, alpha))


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
    (``cor-single-alpha``).
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

    By ``thm-inverse-scaling`` and ``cor-single-alpha``:
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


#: Membership ``α ∈ G_σ`` for each group that :func:`scaling_group` returns.
_GROUP_MEMBERS = {
    r"\mathbb{R}\setminus\{0\}": lambda al: al != 0,
    r"(0, \infty)": lambda al: al > 0,
    r"\{1, -1\}": lambda al: al in (1, -1),
    r"\{1\}": lambda al: al == 1,
}


def in_scaling_group(group: str, alpha: float | sp.Expr) -> bool:
    """Whether the non-zero real ``α`` lies in ``group``, one of the groups ``G_σ`` of :func:`scaling_group`.

    ``ℝ∖{0}`` holds every ``α ≠ 0``, ``(0, ∞)`` every ``α > 0``, ``{1, −1}`` and
    ``{1}`` what they list (``thm-inverse-scaling``, ``cor-single-alpha``).
    """
    if group not in _GROUP_MEMBERS:
        raise ValueError(f"group: expected one of {list(_GROUP_MEMBERS)}, got {group!r}")
    return bool(_GROUP_MEMBERS[group](_nonzero_number("alpha", alpha)))


def log_periodic_activation(base: int = 2) -> Activation:
    """``σ(z) = z (2 + sin(2π log_base |z|))``, ``σ(0) = 0``: a single ``α = base`` of inverse scaling, and no more.

    Remark ``rem-single-alpha``: ``σ(base · z) = base · σ(z)`` and σ is odd, so the
    gated form with this σ keeps inverse scaling for ``α = ±base^n``, ``n ∈ Z``;
    σ is continuous and Lipschitz (``|σ'| ≤ 3 + 2π/ln(base)`` away from 0) but
    not differentiable at 0, which ``cor-single-alpha`` requires.
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
