"""Symbolic rows, matrices and σ: the building blocks that every derivation of the book shares.

Entries are real symbols (``x_i``, ``k_{ij}`` …); σ is a registered activation
or, by default, an undefined function, so that an identity built from these
blocks is checked for every σ at once.  Integer matrices give exact test points.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation, resolve


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


def sym(W: sp.Matrix) -> sp.Matrix:
    """``sym(W) = (W + Wᵀ)/2``."""
    return (W + W.T) / 2


def integer_matrix(rows: int, cols: int, seed: int, bound: int = 3) -> sp.Matrix:
    """A ``rows × cols`` matrix of integers drawn uniformly from ``{−bound, …, bound}`` with ``seed``.

    An exact test point: ranks and null spaces of such matrices are computed
    without rounding.
    """
    _check_size("rows", rows)
    _check_size("cols", cols)
    _check_size("bound", bound)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    import numpy as np

    values = np.random.default_rng(seed).integers(-bound, bound + 1, size=(rows, cols))
    return sp.Matrix(rows, cols, lambda i, j: sp.Integer(int(values[i, j])))


def _rank_R_weights(
    d: int, m: int, d_out: int, R: int
) -> tuple[sp.Matrix, sp.Matrix, list[sp.Matrix], list[sp.Matrix]]:
    """``(x, V, [Q^{(1)} … Q^{(R)}], [K^{(1)} … K^{(R)}])``: the symbolic input, values and factors of a rank-R layer.

    ``x ∈ R^{1×d}``, ``V ∈ R^{m×d_out}`` and ``Q^{(r)}, K^{(r)} ∈ R^{m×d}`` (row ``j`` of
    ``Q^{(r)}`` is ``q_{j,r}``), each size checked to be an int >= 1.
    """
    _check_size("d", d)
    _check_size("m", m)
    _check_size("d_out", d_out)
    _check_size("R", R)
    x, V = row("x", d), matrix("v", m, d_out)
    Qs = [matrix(f"q{r + 1}", m, d) for r in range(R)]
    Ks = [matrix(f"k{r + 1}", m, d) for r in range(R)]
    return x, V, Qs, Ks


def _rank_R_layer(
    activation: str | Activation | None, t: sp.Matrix, Qs: list[sp.Matrix], Ks: list[sp.Matrix], V: sp.Matrix
) -> sp.Matrix:
    """``σ(Σ_r (t Q^{(r)}ᵀ) ⊙ (t K^{(r)}ᵀ)) V``: the rank-R form at the input ``t``, its scores expanded inside σ."""
    scores = sp.zeros(1, V.rows)
    for Q_r, K_r in zip(Qs, Ks, strict=True):
        scores += (t * Q_r.T).multiply_elementwise(t * K_r.T)
    return apply(activation, scores.applyfunc(sp.expand)) * V
