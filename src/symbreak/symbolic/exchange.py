"""Chapter 6: the exchange ``q_j ↔ k_j``, its defect on each sign quadrant and the defect's Gaussian mean.

Claims ``thm-exchange``, ``prop-relu-exchange``, ``prop-exchange-defect``,
``prop-exchange-defect-scale`` and remark ``rem-gelu-defect``.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve
from symbreak.symbolic._base import _check_size, apply, matrix, row, sigma_function


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


def exchange_scale_identity() -> list[sp.Expr]:
    """``[D_σ(s u, s w) − s D_{σ_s}(u, w), σ(s u)(s w) − s σ_s(u) w]`` for an undefined σ, ``σ_s(z) = σ(s z)``: both 0.

    The step of ``prop-exchange-defect-scale`` that moves the factor scale ``s``
    into the activation: the defect and the gated coefficient at factors of scale
    ``s`` are ``s`` times those of ``σ_s`` at standard factors.
    """
    s, u, w = sp.symbols("s u w", real=True)
    sigma = sp.Function("sigma")
    sigma_s = sp.Lambda(sp.Symbol("t", real=True), sigma(s * sp.Symbol("t", real=True)))
    defect, (a, b) = exchange_unit_difference()
    at_scale = defect.subs({a: s * u, b: s * w}, simultaneous=True)
    scaled = s * (sigma_s(u) * w - sigma_s(w) * u)
    return [sp.expand(at_scale - scaled), sp.expand(sigma(s * u) * (s * w) - s * sigma_s(u) * w)]


def _half_line_mean(expr: sp.Expr, z: sp.Symbol) -> sp.Expr:
    """``E[expr(z)]``, ``z ~ N(0, 1)``, exactly, for an ``expr`` that is a polynomial on each open half-line."""
    t = sp.Symbol("t", positive=True)
    density = sp.exp(-(t**2) / 2) / sp.sqrt(2 * sp.pi)
    halves = [sp.simplify(expr.subs(z, sign * t)) for sign in (1, -1)]
    if not all(h.is_polynomial(t) for h in halves):
        raise ValueError(f"expr: expected a polynomial on each half-line, got {expr}")
    return sp.simplify(sum(sp.integrate(h * density, (t, 0, sp.oo)) for h in halves))


def exchange_ratio_limits() -> dict[str, sp.Expr]:
    """The limits of ``r_σ(s) = 2(1 − E[z σ_s]² / E[σ_s²])`` in ``prop-exchange-defect-scale``, exactly.

    ``r`` does not change when ``σ_s`` is multiplied by a constant, so each limit
    is ``2(1 − E[z f]² / E[f²])`` for the pointwise limit ``f`` of ``σ_s`` scaled:
    ``"z g(z), s → ∞"``: ``f = max(z, 0)``; ``"z g(z), s → 0"``: ``f = z/2``;
    ``"sigmoid, s → 0"``: ``f = 1/2``; ``"sigmoid, s → ∞"``: ``f = H(z)``.
    Expected: ``1``, ``0``, ``2`` and ``2 − 2/π``.
    """
    z = sp.Symbol("z", real=True)
    targets = {
        "z g(z), s → ∞": sp.Max(z, 0),
        "z g(z), s → 0": z / 2,
        "sigmoid, s → 0": sp.Rational(1, 2) + 0 * z,
        "sigmoid, s → ∞": sp.Heaviside(z),
    }
    return {
        key: sp.simplify(2 * (1 - _half_line_mean(z * f, z) ** 2 / _half_line_mean(f**2, z)))
        for key, f in targets.items()
    }
