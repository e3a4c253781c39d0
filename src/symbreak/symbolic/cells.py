"""Decisions, activations and counterexamples rendered as the cells of the chapters' Markdown tables."""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE as _PRECEDENCE

from symbreak.activations import Activation, display_name, resolve
from symbreak.decide import Decision

__all__ = [
    "decision_text",
    "activation_properties",
    "SHOWN_DIGITS",
    "counterexample_cells",
    "DecimalLatexPrinter",
    "decimal_latex",
    "is_decimal",
]


def is_decimal(r: object) -> bool:
    """Whether ``r`` is a rational whose denominator divides a power of ten and is above 1000: a decimal constant of
    more than three places, such as GELU (tanh)'s ``0.044715``.  A shorter one stays a fraction, as the book writes
    it: leaky ReLU's slope is ``1/100``, so its even part is ``99|z|/200``, not ``0.495|z|``."""
    if not isinstance(r, sp.Rational) or r.q <= 1000:
        return False
    q = int(r.q)
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def _spread_decimal(e: sp.Basic) -> bool:
    return e.is_Mul and is_decimal(e.as_coeff_Mul()[0]) and sum(a.is_Add for a in e.args) == 1


def _spread(e: sp.Expr) -> sp.Expr:
    coeff, rest = e.as_coeff_Mul()
    total = next(a for a in rest.as_ordered_factors() if a.is_Add)
    others = [a for a in rest.as_ordered_factors() if a is not total]
    return sp.Mul(sp.expand(coeff * total), *others)


class DecimalLatexPrinter(LatexPrinter):
    """sympy's LaTeX, with a rational for which :func:`is_decimal` holds written as the decimal it was defined as
    (GELU (tanh)'s ``0.044715`` prints as ``0.044715``, not as the fraction ``8943/200000``), and a symbol whose
    subscript is a word set upright, as the book writes it: ``d_out`` is ``d_{\\mathrm{out}}``, not ``d_{out}``
    (the product of three italic letters)."""

    def doprint(self, expr: sp.Basic) -> str:
        """Print ``expr`` with a decimal coefficient multiplied into the one sum it multiplies (``0.000005 (8943
        z^2 + 200000)`` is ``0.044715 z^2 + 1``)."""
        return super().doprint(expr.replace(_spread_decimal, _spread))

    @staticmethod
    def _text(r: sp.Rational) -> str:
        exact = sp.Float(r, 30)
        return f"{exact:.30f}".rstrip("0")

    def _print_Symbol(self, expr: sp.Symbol, style: str = "plain") -> str:
        base, _, sub = expr.name.partition("_")
        if base and len(sub) > 1 and sub.isalpha():
            return f"{self._print(sp.Symbol(base))}_{{\\mathrm{{{sub}}}}}"
        return super()._print_Symbol(expr, style=style)

    def _print_Rational(self, expr: sp.Rational) -> str:
        return self._text(expr) if is_decimal(expr) else super()._print_Rational(expr)

    def _print_Mul(self, expr: sp.Expr) -> str:
        coeff, rest = expr.as_coeff_Mul()
        if is_decimal(coeff) and rest != 1:
            sign = "- " if coeff < 0 else ""
            return f"{sign}{self._text(abs(coeff))} {self.parenthesize(rest, _PRECEDENCE['Mul'], strict=True)}"
        return super()._print_Mul(expr)


def decimal_latex(expr: sp.Basic) -> str:
    """``expr`` in LaTeX by :class:`DecimalLatexPrinter`."""
    return DecimalLatexPrinter().doprint(expr)


def decision_text(decision: Decision) -> str:
    """A :class:`~symbreak.decide.Decision` in words, for a Markdown table with inline LaTeX.

    ``"yes (proof)"`` when the identity is proved, ``"no $(z = -1)$"`` with the point
    of the rational counterexample when it is refuted, ``"undecided"`` otherwise.  The point is one formula
    with its parentheses, joined to "no" by a no-break space (U+00A0), so that a narrow table cell breaks the
    text nowhere inside it.
    """
    if not isinstance(decision, Decision):
        raise TypeError(f"decision: expected a symbreak.decide.Decision, got {type(decision).__name__}")
    if decision.holds is True:
        return "yes (proof)"
    if decision.holds is False:
        point = ", ".join(f"{sp.latex(s)} = {sp.latex(v)}" for s, v in decision.witness.items())
        return f"no\u00a0$({point})$"
    return "undecided"


def activation_properties(activation: str | Activation) -> list[str]:
    """Table cells for σ: the book's name, the registry name (code), ``σ(z)`` in LaTeX, and the decided linear /
    odd / positively homogeneous.

    The three properties are the registry's decisions (``σ(z) = σ(1) z``,
    ``σ(−z) = −σ(z)``, ``σ(α z) = α σ(z)`` for ``α > 0``), rendered by
    :func:`decision_text`.
    """
    sigma = resolve(activation)
    return [
        display_name(sigma),
        f"`{sigma.name}`",
        f"${decimal_latex(sigma.expr)}$",
        decision_text(sigma.linearity),
        decision_text(sigma.oddness),
        decision_text(sigma.positive_homogeneity),
    ]


#: Significant digits of the certified value in :func:`counterexample_cells`.
SHOWN_DIGITS = 12


def counterexample_cells(expr: sp.Expr, decision: Decision) -> list[str]:
    """Table cells for a decision on ``expr ≡ 0``: verdict, witness, exact value there, its decimal value.

    ``["yes (proof)", "—", "—", "—"]`` for a proof; for a counterexample the
    rational point, ``expr`` there simplified exactly (LaTeX) and the decision's
    value, checked against ``expr`` there to 45 digits and shown to
    ``SHOWN_DIGITS`` significant digits (inline LaTeX, a true minus sign; a
    rational value with a finite decimal expansion within those digits is shown
    without trailing zeros, ``−0.99``, any other value with all of them).
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
    text = str(sp.N(exact, SHOWN_DIGITS))
    if exact.is_Rational and sp.Rational(text) == exact:  # a finite decimal: no trailing zeros
        text = text.rstrip("0").rstrip(".")
    return ["no (counterexample)", witness, f"${decimal_latex(exact)}$", f"${text}$"]
