"""Every cell of the symmetry table decided: a unit's coefficient identity, proved, refuted or canonical.

A unit of a form contributes ``h(a, b) v`` to the output, with ``a = x·q`` and
``b = x·k`` (the two rank-1 factors) or ``s = x W xᵀ`` (the full form).  A
transformation changes the coefficient into ``h'``; the layer keeps the symmetry
for every choice of weights and inputs iff ``h' − h ≡ 0``, decided by
:func:`symbreak.decide.decide_zero`.  Where ``h' − h`` is already ``0`` as sympy
writes it, the cell is counted as a *canonical form*, not as a proof.  The full
form's cells are matrix identities of its score for every ``d``
(:func:`symbreak.symbolic.parity.full_score_identity`).
"""

from __future__ import annotations

import functools

import sympy as sp

from symbreak.activations import Activation, resolve
from symbreak.decide import Decision, decide_zero
from symbreak.symbolic.parity import FULL_ENTRYWISE_SIZES, full_score_identity, is_zero_identity
from symbreak.verdicts._base import (
    FORMS,
    SYMMETRIES,
    Verdict,
    _check_form,
    _check_symmetry,
    a,
    alpha_neg,
    alpha_pos,
    b,
)

#: The method of a full-form cell whose score identity holds.
FULL_METHOD = "matrix identity (every d; expanded at d = 2, 3, 4; every σ)"


def _unit_identity(form: str, symmetry: str, sigma: Activation) -> tuple[sp.Expr, tuple[sp.Symbol, ...]] | None:
    """``(h' − h, variables)`` for the unit of ``form`` (not the full form) under ``symmetry``; None when n/a."""
    s = sigma.sym
    if form == "kv":
        after = {"parity": s(-a), "kv_scale": s(alpha_pos * a) / alpha_pos}.get(symmetry)
        return None if after is None else (after - s(a), (a,))
    if form == "rank1":
        h = s(a * b)
        after = {
            "exchange": s(b * a),
            "scale_pos": s((alpha_pos * a) * (b / alpha_pos)),
            "scale_neg": s((alpha_neg * a) * (b / alpha_neg)),
            "parity": s((-a) * (-b)),
            "kv_scale": s(a * (alpha_pos * b)) / alpha_pos,
        }.get(symmetry)
        return None if after is None else (after - h, (a, b))
    h = s(a) * b
    after = {
        "exchange": s(b) * a,
        "scale_pos": s(alpha_pos * a) * b / alpha_pos,
        "scale_neg": s(alpha_neg * a) * b / alpha_neg,
        "parity": s(-a) * (-b),
        "kv_scale": s(a) * (alpha_pos * b) / alpha_pos,
    }.get(symmetry)
    return None if after is None else (after - h, (a, b))


@functools.cache
def full_identity_holds(symmetry: str) -> bool:
    """Whether the full form's score identity of ``symmetry`` is zero for matrix symbols and at ``d = 2, 3, 4``.

    :func:`symbreak.symbolic.parity.full_score_identity` for a symbolic ``d`` (every
    ``d`` at once) and, except for the gauge, expanded entry by entry at each size
    of ``FULL_ENTRYWISE_SIZES`` of :mod:`symbreak.symbolic.parity`.
    """
    _check_symmetry(symmetry)
    sizes = () if symmetry == "gauge" else FULL_ENTRYWISE_SIZES
    return all(is_zero_identity(full_score_identity(symmetry, d)) for d in (None, *sizes))


def _decided(form: str, symmetry: str, name: str, expr: sp.Expr, variables, suffix: str = "") -> Verdict:
    """The verdict on ``expr ≡ 0``: a canonical form when sympy already writes it as 0, else decide_zero."""
    if expr == 0:
        return Verdict(form, symmetry, name, True, "canonical form" + suffix, Decision(True, "proof"), "canonical form")
    decision = decide_zero(expr, variables)
    kind = {True: "proof", False: "counterexample"}.get(decision.holds, "n/a")
    return Verdict(form, symmetry, name, decision.holds, decision.method + suffix, decision, kind)


def verdict(form: str, symmetry: str, activation: str | Activation) -> Verdict:
    """Decide whether ``form`` keeps ``symmetry`` with activation σ, for all weights and inputs.

    Verdicts are cached per ``(form, symmetry, σ)``: each is a theorem about σ.
    """
    return _verdict(_check_form(form), _check_symmetry(symmetry), resolve(activation))


@functools.cache
def _verdict(form: str, symmetry: str, sigma: Activation) -> Verdict:
    name = sigma.name
    if symmetry == "gauge" and form in ("rank1", "gated"):  # at rank 1, GL(1) is inverse scaling by every α ≠ 0
        pos, neg = verdict(form, "scale_pos", sigma), verdict(form, "scale_neg", sigma)
        failed = next((v for v in (pos, neg) if not v.holds), None)
        if failed is None:
            kind = "canonical form" if pos.kind == neg.kind == "canonical form" else "proof"
            return Verdict(form, symmetry, name, True, "GL(1): both inverse scalings", pos.decision, kind)
        method = "counterexample (GL(1): " + failed.symmetry + ")"
        return Verdict(form, symmetry, name, False, method, failed.decision, "counterexample")
    if form == "full":
        if not full_identity_holds(symmetry):
            return Verdict(form, symmetry, name, None, "undecided")
        if symmetry != "kv_scale":  # the score, hence σ of it, is unchanged: every σ
            return Verdict(form, symmetry, name, True, FULL_METHOD, Decision(True, "proof"), "matrix identity")
        s = sp.Symbol("s", real=True)  # the score x W xᵀ takes every real value, and becomes α s
        expr = sigma.sym(alpha_pos * s) / alpha_pos - sigma.sym(s)
        return _decided(form, symmetry, name, expr, (s,), " (score → α s: a matrix identity)")
    identity = _unit_identity(form, symmetry, sigma)
    if identity is None:
        return Verdict(form, symmetry, name, None, "n/a")
    return _decided(form, symmetry, name, *identity)


def symmetry_table(activations: list[str]) -> dict[tuple[str, str, str], Verdict]:
    """Every cell ``(form, symmetry, activation)`` of the table, decided."""
    return {(form, sym, act): verdict(form, sym, act) for form in FORMS for sym in SYMMETRIES for act in activations}


def exchange_decision(activation: str | Activation) -> Decision:
    """Decision on ``σ(a) b − σ(b) a ≡ 0`` (``thm-exchange``)."""
    sigma = resolve(activation)
    return decide_zero(sigma.sym(a) * b - sigma.sym(b) * a, (a, b))


def inverse_scaling_decision(activation: str | Activation, sign: int) -> Decision:
    """Decision on ``σ(α z) − α σ(z) ≡ 0`` for every ``α`` of the given sign (``thm-inverse-scaling``)."""
    if sign not in (1, -1):
        raise ValueError(f"sign: expected +1 or -1, got {sign!r}")
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    al = alpha_pos if sign == 1 else alpha_neg
    return decide_zero(sigma.sym(al * z) - al * sigma.sym(z), (z,))
