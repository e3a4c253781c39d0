"""Chapters 11–12: the conservation laws of one unit under gradient flow and descent, and the invariant diagonal.

Claims ``thm-conservation`` and ``thm-invariant-diagonal``.  A unit of form
``"kv"``, ``"rank1"`` or ``"gated"`` contributes ``φ(a, b) v`` with
``a = x·q``, ``b = x·k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symbreak.activations import Activation
from symbreak.decide import Decision, decide_zero
from symbreak.symbolic._base import _check_size, row, sigma_function

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


@dataclass(frozen=True)
class GeneratorCheck:
    """What :func:`generator_checks` found for one pair of one unit: two exact sympy comparisons.

    ``vanishes``: the generator ``A·∇_A f − B·∇_B f`` is identically zero (the law holds);
    ``equals_defect``: it equals ``δ(x·q, x·k) v`` (the chain rule of ``thm-conservation``, part 4).
    """

    vanishes: bool
    equals_defect: bool


def generator_checks(
    form: str, activation: str | Activation | None = None, d: int = 2, d_out: int = 1
) -> dict[str, GeneratorCheck]:
    """Per charge pair of ``form`` (``"qk"``, ``"kv"``; the key–value memory has only ``"kv"``), the two checks.

    For one unit ``f = φ(x·q, x·k) v`` with symbolic ``x, q, k ∈ R^{1×d}``, ``v ∈ R^{1×d_out}``
    and σ = ``activation`` (undefined by default), :func:`rescaling_generator` gives the generator
    ``A·∇_A f − B·∇_B f`` of the pair's scaling and ``δ v``; claim ``thm-conservation``: the
    generator is ``≡ 0`` exactly where the law holds, and equals ``δ v`` for every σ.
    """
    _check_unit_form(form)
    checks = {}
    for pair in _CHARGE_PAIRS[form]:
        generator, predicted = rescaling_generator(form, pair, d, d_out, activation)
        zero = sp.zeros(1, d_out)
        checks[pair] = GeneratorCheck(generator == zero, sp.expand(generator - predicted) == zero)
    return checks


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


def euler_decision(activation: str | Activation | None = None) -> Decision:
    """Whether ``E(z) = z σ'(z) − σ(z) ≡ 0`` for all real ``z``, decided by :func:`symbreak.decide.decide_zero`.

    Claims ``thm-conservation`` and ``thm-invariant-diagonal``: a proof on each sign cell of ``z``
    exactly for the positively homogeneous σ (:func:`euler_defect`), a rational counterexample otherwise.
    """
    defect, z = euler_defect(activation)
    return decide_zero(defect, (z,))


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
