"""Decide whether a real expression vanishes identically.

A claim such as "``σ(a) b − σ(b) a = 0`` for all real ``a, b``" is decided in
two ways, exactly where possible:

* **proof** — every free variable ``z`` is split by sign, ``z = +t``, ``z = −t``
  (``t > 0``) and ``z = 0``, so that ``Max``, ``Min``, ``Abs`` and
  ``Heaviside`` resolve; the expression is then simplified on each of the
  ``3^n`` sign cells.  If every cell simplifies to ``0`` the identity holds;
* **counterexample** — otherwise a point with rational coordinates is searched
  at which the expression is provably non-zero (exactly, or by an evaluation
  to 50 significant digits whose error bound excludes zero).

The result says which of the two happened, so the book can print the method
beside every verdict.  If neither succeeds, the verdict is ``None``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

__all__ = ["Decision", "decide_zero", "RATIONAL_GRID"]

#: Rational probe points for counterexamples, small to large, both signs.
RATIONAL_GRID: tuple[sp.Rational, ...] = tuple(
    sp.Rational(p, q)
    for p, q in [(1, 1), (-1, 1), (2, 1), (-2, 1), (1, 2), (-1, 2), (3, 1), (-3, 1), (1, 3), (-1, 3), (5, 2), (-5, 2)]
)


@dataclass(frozen=True)
class Decision:
    """The verdict on ``expr ≡ 0`` and how it was reached.

    ``holds`` is ``True`` (proved), ``False`` (refuted by ``witness``) or
    ``None`` (undecided).  ``method`` is ``"proof"``, ``"counterexample"`` or
    ``"undecided"``.  ``witness`` maps each variable to a rational value and
    ``value`` is the expression there (exact, or a 50-digit number).
    """

    holds: bool | None
    method: str
    witness: dict[sp.Symbol, sp.Rational] = field(default_factory=dict)
    value: sp.Expr | None = None

    def __bool__(self) -> bool:  # a Decision is used as a truth value only when decided
        if self.holds is None:
            raise ValueError("Decision is undecided; inspect .holds instead of using it as a bool")
        return self.holds


def _is_provably_nonzero(value: sp.Expr) -> tuple[bool, sp.Expr]:
    """Return (True, v) when ``value`` is provably non-zero, with ``v`` the exact or 50-digit value.

    A rational value is exact.  Otherwise sympy's ``evalf`` evaluates the
    expression to 50 significant digits with its adaptive-precision arithmetic,
    which raises the working precision until those digits are certain; a
    magnitude above ``10⁻⁴⁰`` is therefore non-zero.
    """
    value = sp.sympify(value)
    if value.is_Rational:
        return (value != 0), value
    approx = value.evalf(50)
    if approx.is_Rational:
        return (approx != 0), approx
    if approx.is_Number and abs(approx) > sp.Float("1e-40"):
        return True, approx
    return False, approx


def _admissible(symbol: sp.Symbol, value: sp.Rational) -> bool:
    """Whether ``value`` is compatible with the assumptions declared on ``symbol``."""
    if symbol.is_positive and not value > 0:
        return False
    if symbol.is_negative and not value < 0:
        return False
    return not (symbol.is_nonzero and value == 0)


def _sign_cells(expr: sp.Expr, variables: tuple[sp.Symbol, ...]):
    """Yield ``expr`` restricted to every sign cell of ``variables``."""
    positives = [sp.Symbol(f"_{v.name}_pos", positive=True) for v in variables]
    for signs in itertools.product((1, -1, 0), repeat=len(variables)):
        subs = {v: s * t for v, s, t in zip(variables, signs, positives, strict=True)}
        yield expr.subs(subs, simultaneous=True)


def decide_zero(
    expr: sp.Expr,
    variables: tuple[sp.Symbol, ...] | list[sp.Symbol],
    *,
    grid: tuple[sp.Rational, ...] = RATIONAL_GRID,
) -> Decision:
    """Decide whether ``expr = 0`` for all real ``variables`` and all admissible parameters.

    ``variables`` are split by sign for the proof.  Other free symbols of
    ``expr`` are parameters: they stay symbolic, with their sympy assumptions
    (``positive=True``, ``negative=True``, ``nonzero=True``), in the proof, and
    take grid values that respect those assumptions in the counterexample search.
    """
    variables = tuple(variables)
    if not variables:
        raise ValueError("variables: expected at least one sympy Symbol, got an empty sequence")
    for v in variables:
        if not isinstance(v, sp.Symbol):
            raise TypeError(f"variables: expected sympy Symbols, got {type(v).__name__} ({v!r})")
    expr = sp.sympify(expr)
    free = variables + tuple(sorted(expr.free_symbols - set(variables), key=lambda s: s.name))
    allowed = {v: [g for g in grid if _admissible(v, g)] for v in free}
    # A refutation is cheap and a failed proof attempt is not, so look for a
    # counterexample first; a grid on which the expression vanishes everywhere
    # sends us to the proof.
    for point in itertools.product(*(allowed[v] for v in free)):
        witness = dict(zip(free, point, strict=True))
        nonzero, value = _is_provably_nonzero(expr.subs(witness))
        if nonzero:
            return Decision(False, "counterexample", witness, value)
    if all(sp.simplify(cell) == 0 for cell in _sign_cells(expr, variables)):
        return Decision(True, "proof")
    return Decision(None, "undecided")


def as_fraction(value: sp.Rational) -> Fraction:
    """A sympy rational as a :class:`fractions.Fraction` (for printing witnesses)."""
    return Fraction(int(value.p), int(value.q))
