"""Decisions, activations and counterexamples rendered as the cells of the chapters' Markdown tables."""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve
from symbreak.decide import Decision


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
