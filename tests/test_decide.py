"""Exact decisions of real identities: proofs by sign cells, rational counterexamples."""

from __future__ import annotations

import pytest
import sympy as sp

from symbreak.decide import decide_zero

a, b = sp.symbols("a b", real=True)
alpha = sp.Symbol("alpha", positive=True)


def test_proves_piecewise_identity():
    d = decide_zero(sp.Max(0, a) - sp.Min(0, a) - sp.Abs(a), (a,))
    assert d.holds is True and d.method == "proof"


def test_refutes_with_rational_witness():
    d = decide_zero(sp.Max(0, a) * b - sp.Max(0, b) * a, (a, b))
    assert d.holds is False and d.method == "counterexample"
    value = (sp.Max(0, a) * b - sp.Max(0, b) * a).subs(d.witness)
    assert value != 0 and all(v.is_Rational for v in d.witness.values())


def test_parameters_respect_their_assumptions():
    d = decide_zero(sp.Max(0, alpha * a) - alpha * sp.Max(0, a), (a,))
    assert d.holds is True
    beta = sp.Symbol("beta", negative=True)
    d = decide_zero(sp.Max(0, beta * a) - beta * sp.Max(0, a), (a,))
    assert d.holds is False and d.witness[beta] < 0


def test_transcendental_counterexample_is_certified():
    d = decide_zero(sp.erf(a) * b - sp.erf(b) * a, (a, b))
    assert d.holds is False and abs(d.value) > 1e-10


def test_decision_undecided_cannot_be_used_as_bool():
    from symbreak.decide import Decision

    with pytest.raises(ValueError, match="undecided"):
        bool(Decision(None, "undecided"))


def test_bad_variables():
    with pytest.raises(ValueError, match="variables"):
        decide_zero(a, ())
    with pytest.raises(TypeError, match="variables"):
        decide_zero(a, ("a",))
