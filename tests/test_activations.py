"""The activation registry: torch and sympy agree; the properties are decided correctly."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch

from symbreak import activations as A

# Ground truth from the definitions, written independently of the decision procedure.
LINEAR = {"identity"}
ODD = {"identity", "tanh"}
POSITIVELY_HOMOGENEOUS = {"identity", "relu", "leaky_relu", "abs"}


def test_registry_holds_the_book_activations():
    assert A.names() == [
        "identity",
        "relu",
        "leaky_relu",
        "gelu",
        "gelu_tanh",
        "silu",
        "sigmoid",
        "tanh",
        "softplus",
        "abs",
    ]


@pytest.mark.parametrize("name", A.names())
def test_torch_function_matches_sympy_expression(name):
    act = A.get(name)
    grid = np.linspace(-6, 6, 241)
    f = sp.lambdify(A.z, act.expr, modules=["scipy", "numpy"])
    expected = np.broadcast_to(np.asarray(f(grid), dtype=np.float64), grid.shape)
    got = act(torch.tensor(grid, dtype=torch.float64)).numpy()
    # float64 evaluations of the same function; 64 ulps of the magnitude covers both libraries' error
    tol = 64 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(expected))
    assert np.all(np.abs(got - expected) <= tol)


@pytest.mark.parametrize("name", A.names())
def test_properties_are_decided_and_correct(name):
    act = A.get(name)
    assert act.is_linear == (name in LINEAR)
    assert act.is_odd == (name in ODD)
    assert act.is_positively_homogeneous == (name in POSITIVELY_HOMOGENEOUS)
    for decision in (act.linearity, act.oddness, act.positive_homogeneity):
        assert decision.method == ("proof" if decision.holds else "counterexample")


@pytest.mark.parametrize("name", sorted(set(A.names()) - LINEAR))
def test_linearity_counterexample_is_a_real_counterexample(name):
    act = A.get(name)
    w = act.linearity.witness[A.z]
    lhs = act(torch.tensor(float(w), dtype=torch.float64))
    rhs = float(w) * act(torch.tensor(1.0, dtype=torch.float64))
    assert abs(float(lhs - rhs)) > 1e-6


def test_lipschitz_constants():
    assert A.get("sigmoid").lipschitz == pytest.approx(0.25, rel=1e-5)
    assert A.get("relu").lipschitz == pytest.approx(1.0, rel=1e-5)
    # sup |silu'| = 1.0998 (attained at z ≈ 2.3994), sup |gelu'| = 1.1289 (z = √2)
    assert A.get("silu").lipschitz == pytest.approx(1.0998, abs=1e-4)
    # gelu'(z) = Φ(z) + z φ(z) has its maximum where gelu''(z) = (2 − z²) φ(z) = 0, at z = √2
    root2 = math.sqrt(2)
    gelu_sup = 0.5 * (1 + math.erf(1.0)) + root2 * math.exp(-1) / math.sqrt(2 * math.pi)
    assert A.get("gelu").lipschitz == pytest.approx(gelu_sup, rel=2e-6)
    for name in A.names():
        act = A.get(name)
        s = torch.linspace(-10, 10, 20001, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(act(s).sum(), s)
        assert float(g.abs().max()) <= act.lipschitz


def test_unknown_name_is_a_value_error_naming_the_argument():
    with pytest.raises(ValueError, match=r"activation: expected one of .* got 'swish'"):
        A.get("swish")


def test_non_string_name_is_a_type_error():
    with pytest.raises(TypeError, match="activation: expected"):
        A.get(3)
    with pytest.raises(TypeError, match="activation: expected"):
        A.resolve(3.0)


def test_callable_resolves_with_undefined_expression():
    act = A.resolve(torch.sin)
    assert act(torch.tensor(0.5)) == torch.sin(torch.tensor(0.5))
    assert act.lipschitz is None


def test_every_registered_activation_has_a_display_name():
    """One book name per registry entry, the code's names unchanged: ``leaky_relu`` reads "leaky ReLU"."""
    assert set(A.DISPLAY_NAMES) == set(A.names())
    assert A.display_name("leaky_relu") == "leaky ReLU" and A.display_name("gelu_tanh") == "GELU (tanh)"
    assert A.display_name(A.get("abs")) == "$|z|$"  # maths, as the prose writes it
    assert A.display_name("abs", plain=True) == "|z|"  # for printed text
    assert A.display_name(A.resolve(torch.sin)) == "sin"  # a user's callable keeps its own name
    assert not any("_" in name for name in A.DISPLAY_NAMES.values())  # no registry identifier shows through
    with pytest.raises(ValueError, match=r"activation: expected one of .* got 'swish'"):
        A.display_name("swish")
