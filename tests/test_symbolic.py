"""The sympy derivations return identities that simplify to zero."""

from __future__ import annotations

import pytest
import sympy as sp

from symbreak import symbolic


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
