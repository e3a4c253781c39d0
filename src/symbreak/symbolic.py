"""The book's derivations as sympy functions that return the identity to be checked.

Each ``*_identity`` function builds both sides of a claimed equation from
explicit symbolic matrices (entries ``x_i``, ``k_{j,i}`` …) and returns their
difference; the claim holds when that difference simplifies to zero.  The
activation is either a registered one or, by default, an undefined function
``σ``, so that the identity is checked for every σ at once.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve

__all__ = ["row", "matrix", "apply", "sigma_function", "key_value_sum_identity", "simplify_matrix"]


def _check_size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    return value


def row(name: str, n: int) -> sp.Matrix:
    """The symbolic row vector ``(name_1, …, name_n)`` of real entries."""
    _check_size("n", n)
    return sp.Matrix([list(sp.symbols(f"{name}_1:{n + 1}", real=True))])


def matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    """The symbolic ``rows × cols`` matrix with real entries ``name_{i,j}``."""
    _check_size("rows", rows)
    _check_size("cols", cols)
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def sigma_function(activation: str | Activation | None = None):
    """``σ`` as a map on sympy expressions: an undefined function ``σ`` when ``activation`` is None."""
    if activation is None:
        f = sp.Function("sigma")
        return lambda e: f(e)
    return resolve(activation).sym


def apply(activation: str | Activation | None, M: sp.Matrix) -> sp.Matrix:
    """``σ`` applied elementwise to ``M``."""
    f = sigma_function(activation)
    return M.applyfunc(f)


def simplify_matrix(M: sp.Matrix) -> sp.Matrix:
    """Every entry of ``M`` simplified."""
    return M.applyfunc(sp.simplify)


def key_value_sum_identity(d: int, m: int, d_out: int, activation: str | Activation | None = None) -> sp.Matrix:
    """``σ(x Kᵀ) V − Σ_j σ(x·k_j) v_j`` for symbolic ``x ∈ R^{1×d}``, ``K ∈ R^{m×d}``, ``V ∈ R^{m×d_out}``.

    Claim ``def-key-value-memory``: the matrix form of the MLP is the sum over
    memory units; the returned ``1 × d_out`` matrix is zero.
    """
    x, K, V = row("x", d), matrix("k", m, d), matrix("v", m, d_out)
    sigma = sigma_function(activation)
    matrix_form = apply(activation, x * K.T) * V
    unit_sum = sp.zeros(1, d_out)
    for j in range(m):
        unit_sum += sigma(x.dot(K.row(j))) * V.row(j)
    return simplify_matrix(matrix_form - unit_sum)
