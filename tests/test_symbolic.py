"""The sympy derivations return identities that simplify to zero."""

from __future__ import annotations

import pytest
import sympy as sp

from symbreak import plotting, symbolic


@pytest.mark.parametrize("activation", [None, "relu", "silu"])
def test_def_key_value_memory_symbolic(activation):
    """def-key-value-memory: σ(x Kᵀ) V − Σ_j σ(x·k_j) v_j simplifies to the zero matrix."""
    diff = symbolic.key_value_sum_identity(3, 4, 2, activation)
    assert diff == sp.zeros(1, 2)


def test_symbols_and_shapes():
    assert symbolic.row("x", 3).shape == (1, 3)
    assert symbolic.matrix("k", 2, 3).shape == (2, 3)
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        symbolic.row("x", 0)


@pytest.mark.parametrize("activation", [None, "gelu"])
def test_thm_query_absorbed_symbolic(activation):
    """thm-query-absorbed: σ(x Q Kᵀ) V = σ(x (K Qᵀ)ᵀ) V."""
    assert symbolic.query_absorbed_identity(2, 2, 1, activation) == sp.zeros(1, 1)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_thm_static_query_symbolic(d):
    """thm-static-query: the static query e₀ on x̃ = (1, x) turns the bilinear score into x·k."""
    assert symbolic.static_query_identity(d) == 0


def test_thm_transpose_symbolic():
    """thm-transpose: x W xᵀ = x Wᵀ xᵀ = x sym(W) xᵀ."""
    assert symbolic.transpose_identity(3) == (0, 0)


@pytest.mark.parametrize("R", [1, 2])
def test_thm_gauge_symbolic(R):
    """thm-gauge: (Q_j A)(K_j A^{-T})ᵀ = Q_j K_jᵀ for symbolic invertible A."""
    assert symbolic.gauge_identity(3, R) == sp.zeros(3, 3)


def test_prop_rank_one_symbolic():
    """prop-rank-one: x (qᵀk) xᵀ = (x·q)(x·k), and the layer is σ((x Qᵀ) ⊙ (x Kᵀ)) V."""
    assert symbolic.rank_one_score_identity(4) == 0
    assert symbolic.rank_one_layer_identity(3, 2, 2) == sp.zeros(1, 2)
    assert symbolic.rank_one_layer_identity(2, 2, 1, "silu") == sp.zeros(1, 1)


@pytest.mark.parametrize("activation", [None, "relu", "silu"])
def test_prop_gated_rank_one_symbolic(activation):
    """prop-gated-rank-one: (σ(x Qᵀ) ⊙ (x Kᵀ)) V = Σ_j σ(x·q_j)(x·k_j) v_j."""
    assert symbolic.gated_layer_identity(3, 2, 2, activation) == sp.zeros(1, 2)


def test_sym_rank_one_eigenpairs_symbolic():
    """sym(qᵀk) has eigenvalues ½(q·k ± ‖q‖‖k‖) with eigenvectors q/‖q‖ ± k/‖k‖."""
    plus, minus = symbolic.sym_rank_one_eigen_identity(3)
    assert plus == sp.zeros(3, 1) and minus == sp.zeros(3, 1)


def _symbolic_modules():
    import importlib
    import pkgutil

    names = [info.name for info in pkgutil.iter_modules(symbolic.__path__)]
    return [importlib.import_module(f"symbreak.symbolic.{name}") for name in names]


def test_symbolic_package_reexports_every_public_name():
    """``symbreak.symbolic`` re-exports every public function, class and constant its modules define."""
    import inspect

    for name in symbolic.__all__:
        assert hasattr(symbolic, name), name
    for module in _symbolic_modules():
        for name, value in vars(module).items():
            if name.startswith("_") or inspect.ismodule(value):
                continue
            if getattr(value, "__module__", module.__name__) != module.__name__:
                continue  # imported from elsewhere (constants have no __module__ and count as defined here)
            assert name in symbolic.__all__, f"{module.__name__}.{name}"
            assert getattr(symbolic, name) is value, name


def test_symbolic_package_imports_one_way():
    """The modules import only ``symbreak.activations``, ``symbreak.decide`` and ``symbreak.symbolic._base``."""
    import ast
    from pathlib import Path

    allowed = {"symbreak.activations", "symbreak.decide", "symbreak.symbolic._base"}
    for module in _symbolic_modules():
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        inside = {name for name in imported if name.startswith("symbreak")}
        allowed_here = allowed - {module.__name__}
        assert inside <= allowed_here, f"{module.__name__} imports {sorted(inside - allowed_here)}"


def test_invariance_defect_keywords_default_as_flat_direction_identity():
    """prop-flat-directions: invariance_defect takes flat_direction_identity's keywords, with its defaults."""
    defect, _ = symbolic.invariance_defect("gated", "kv", "silu")
    assert defect == symbolic.flat_direction_identity("gated", "kv", "silu")[0]
    with pytest.raises(TypeError):
        symbolic.invariance_defect("gated", "kv", "silu", rnk=1)


def test_decimal_latex_writes_decimal_constants_as_decimals():
    decimal_latex, is_decimal = symbolic.decimal_latex, symbolic.is_decimal
    z = sp.Symbol("z")
    assert is_decimal(sp.Rational(44715, 10**6)) and is_decimal(sp.Rational(1, 200000))
    assert not is_decimal(sp.Rational(1, 100)) and not is_decimal(sp.Rational(1, 3000)) and not is_decimal(2)
    # leaky ReLU's even part (1 - 1/100)/2 = 99/200 stays a fraction, as its slope 1/100 does (Table 8.2)
    assert not is_decimal(sp.Rational(99, 200)) and not is_decimal(sp.Rational(1, 1000))
    # GELU (tanh)'s constant as written by Hendrycks and Gimpel, 0.044715, not 8943/200000
    assert decimal_latex(z + sp.Rational(44715, 10**6) * z**3) == "0.044715 z^{3} + z"
    assert decimal_latex(-sp.Rational(8943, 200000) * z**3) == "- 0.044715 z^{3}"
    # a decimal factor of a sum is multiplied into it
    assert decimal_latex(sp.Rational(1, 200000) * z * (8943 * z**2 + 200000)) == "z \\left(0.044715 z^{2} + 1\\right)"
    # small denominators keep their fractions
    assert decimal_latex(z / 2 + z / 100) == "\\frac{51 z}{100}"
    assert "0.044715" in plotting.formula_cell(sp.tanh(z + sp.Rational(44715, 10**6) * z**3) / 2)


def test_decimal_latex_sets_a_word_subscript_upright():
    """The book writes d_out as d_{\\mathrm{out}}; a one-letter subscript (q_j) stays italic, as sympy sets it."""
    d, d_out, q_j = sp.symbols("d d_out q_j", positive=True)
    assert symbolic.decimal_latex(d / (d + d_out)) == r"\frac{d}{d + d_{\mathrm{out}}}"
    assert symbolic.decimal_latex(q_j) == "q_{j}"
    assert symbolic.decimal_latex(sp.Symbol("alpha_out")) == r"\alpha_{\mathrm{out}}"
