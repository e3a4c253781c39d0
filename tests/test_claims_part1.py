"""Unit tests for statements of chapters 1–5 that the chapter test files did not assert.

``rem-kv-vs-softmax`` (chapter 1), ``rem-query-redundancy`` and item 3 of ``rem-singular-query`` (chapter 2), and
item 4 of ``prop-bilinear-expressivity`` (chapter 3).  Weights and inputs come from separate generators; the
reference computations are written out here, not taken from the package.  Tolerances: layer comparisons use the
rounding bound ``β(x)`` of :func:`symbreak.numerics.forward_error_bound` for each computation; the few conventions
are stated where they are used.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from symbreak.layers import BilinearMLP, GlobalQueryMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma

F64 = torch.float64


def _generators(seed: int) -> tuple[torch.Generator, torch.Generator]:
    """Two independent streams: one for weights, one for inputs."""
    return torch.Generator().manual_seed(1000 + seed), torch.Generator().manual_seed(2000 + seed)


# --- rem-kv-vs-softmax -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rem_kv_vs_softmax_no_normalisation(seed):
    """rem-kv-vs-softmax, item 1: softmax weights over the slots are positive, sum to one and compete (changing one
    key changes every other weight), while the memory's coefficients σ(x·k_j) are computed unit by unit (changing
    one key leaves every other coefficient bit for bit) and their sums vary from token to token.

    Tolerance for the softmax sums and for a weight's relative change: 10⁻¹² (a convention, about 5000 u, far above
    the rounding of 10 exponentials and their quotients at scores of size ≲ 10, far below the departure of any
    unnormalised read-out); the competition is checked at the tokens where unit 0's weight moved by over 10⁻⁶.
    """
    gen_w, gen_x = _generators(seed)
    d, m = 8, 10
    K = torch.randn(m, d, generator=gen_w, dtype=F64)
    V = torch.randn(m, 3, generator=gen_w, dtype=F64)
    x = torch.randn(64, d, generator=gen_x, dtype=F64)
    memory = KeyValueMLP.from_weights(K, V, "relu")
    moved = K.clone()
    moved[0] += torch.randn(d, generator=gen_w, dtype=F64)  # another key for unit 0 only
    other = KeyValueMLP.from_weights(moved, V, "relu")

    def softmax(s):  # written out: exp(s_j) / Σ_l exp(s_l), shifted by the row maximum
        e = torch.exp(s - s.max(-1, keepdim=True).values)
        return e / e.sum(-1, keepdim=True)

    with torch.no_grad():
        h, h_other = memory.hidden(x), other.hidden(x)
        scores = torch.stack([x @ K[j] for j in range(m)], -1)  # unit by unit
        w, w_other = softmax(scores), softmax(torch.stack([x @ moved[j] for j in range(m)], -1))
    assert bool((w > 0).all())
    assert float((w.sum(-1) - 1).abs().max()) <= 1e-12
    moved_tokens = (w_other[:, 0] - w[:, 0]).abs() > 1e-6  # where unit 0's own weight moved
    assert int(moved_tokens.sum()) >= len(x) // 2
    relative = (w_other[moved_tokens, 1:] / w[moved_tokens, 1:] - 1).abs()
    assert bool((relative > 1e-12).all())  # there, every other weight moves too: the units compete
    assert torch.equal(h_other[:, 1:], h[:, 1:])  # no other coefficient does
    assert bool((h[scores < 0] == 0).all()) and bool((scores < 0).any())  # ReLU: exact zeros
    sums = h.sum(-1)
    assert float(sums.max() - sums.min()) > 0.1  # not normalised: the sums differ between tokens


@pytest.mark.parametrize(("seed", "act"), [(0, "relu"), (1, "gelu"), (2, "silu")])
def test_rem_kv_vs_softmax_static_slots(seed, act):
    """rem-kv-vs-softmax, item 2: the keys and values are parameters, the same for every input, so a token's output
    depends on that token alone: evaluated in a batch, alone, or with the other tokens of the batch replaced, it is
    the same within the rounding bounds; only the query (the token) changes with the input."""
    gen_w, gen_x = _generators(10 + seed)
    d, m = 6, 12
    memory = KeyValueMLP.from_weights(
        torch.randn(m, d, generator=gen_w, dtype=F64), torch.randn(m, 4, generator=gen_w, dtype=F64), act
    )
    x = torch.randn(32, d, generator=gen_x, dtype=F64)
    others = torch.cat([x[:1], torch.randn(31, d, generator=gen_x, dtype=F64)])  # same first token, new others
    with torch.no_grad():
        bound = 2 * forward_error_bound(memory, x[:1])
        batch, alone, replaced = memory(x)[:1], memory(x[:1]), memory(others)[:1]
        K_before = memory.K.clone()
        memory(torch.randn(8, d, generator=gen_x, dtype=F64))
    assert bool(((batch - alone).abs() <= bound).all())
    assert bool(((replaced - alone).abs() <= bound).all())
    assert torch.equal(memory.K, K_before)  # reading the memory does not change its slots


# --- rem-query-redundancy ----------------------------------------------------------------------


def _exact_invertible(d: int, gen: torch.Generator) -> torch.Tensor:
    """``A = D P``: a diagonal of signed powers of two times a permutation, so ``Q A`` and ``K A^{-T}`` are exact."""
    exponents = torch.randint(-3, 4, (d,), generator=gen).to(F64)
    signs = torch.where(torch.rand(d, generator=gen) < 0.5, -1.0, 1.0).to(F64)
    return torch.diag(signs * 2.0**exponents) @ torch.eye(d, dtype=F64)[torch.randperm(d, generator=gen)]


@pytest.mark.parametrize(("seed", "act"), [(0, "gelu"), (1, "relu"), (2, "tanh"), (3, "softplus")])
def test_rem_query_redundancy_layer_unchanged_in_floating_point(seed, act):
    """rem-query-redundancy, item 1, on the layer: (Q, K) → (Q A, K A^{-T}) leaves σ(x Q Kᵀ) V unchanged within the
    two rounding bounds, for an exactly representable invertible A; the control (Q A, K), without the compensating
    change of the keys, changes the output beyond them."""
    gen_w, gen_x = _generators(20 + seed)
    d, m = 6, 16
    Q, K = torch.randn(2, d, d, generator=gen_w, dtype=F64)[0], torch.randn(m, d, generator=gen_w, dtype=F64)
    V = torch.randn(m, 3, generator=gen_w, dtype=F64)
    A = _exact_invertible(d, gen_w)
    A_inv_T = torch.linalg.inv(A).T
    assert torch.equal(A @ A_inv_T.T, torch.eye(d, dtype=F64))  # the inverse is exact
    layer = GlobalQueryMLP.from_weights(Q, K, V, act)
    changed = GlobalQueryMLP.from_weights(Q @ A, K @ A_inv_T, V, act)
    control = GlobalQueryMLP.from_weights(Q @ A, K, V, act)
    x = torch.randn(64, d, generator=gen_x, dtype=F64)
    with torch.no_grad():
        assert torch.equal(changed.Q, Q @ A) and torch.equal(changed.K * 1, K @ A_inv_T)
        keys_bound = 2 * gamma(d, F64) * K.abs() @ Q.abs().T  # each K' = K Qᵀ, computed, is within γ_d |K||Q|ᵀ
        assert bool(((changed.absorbed().K - layer.absorbed().K).abs() <= keys_bound).all())  # the same K'
        bound = forward_error_bound(layer, x) + forward_error_bound(changed, x)
        assert bool(((changed(x) - layer(x)).abs() <= bound).all())
        control_bound = forward_error_bound(layer, x) + forward_error_bound(control, x)
        assert bool(((control(x) - layer(x)).abs() > control_bound).any())


# --- rem-singular-query, item 3 ----------------------------------------------------------------


@pytest.mark.parametrize(("seed", "act"), [(0, "relu"), (1, "gelu"), (2, "tanh"), (3, "identity"), (4, "sigmoid")])
def test_rem_singular_query_item3_proper_subset(seed, act):
    """rem-singular-query, item 3: for a rank-r query map Q (r < d) and a non-constant σ, the one-unit memory with a
    key k, k·n ≠ 0 for some n with n Q = 0, is non-constant along x = t n / (k·n), where it is σ(t) v; every layer
    σ(x Q Kᵀ) V with this Q (random K, V) is constant along n within its rounding bounds.

    The left null space is found here with sympy from Q = A Bᵀ (integer A, B), not by the package's
    ``singular_query``.  Q is scaled by 1/8 and the inputs lie on a grid of 1/8, so x + t n is exact.
    """
    gen_w, gen_x = _generators(30 + seed)
    d, r = 5, 2
    A, B = (torch.randint(-3, 4, (d, r), generator=gen_w) for _ in range(2))
    Q_int = sp.Matrix(A.tolist()) * sp.Matrix(B.tolist()).T
    if Q_int.rank() != r:
        pytest.skip("the draw has rank below r")  # not reached for these seeds
    n_sym = Q_int.T.nullspace()[0]
    n_sym = n_sym * sp.ilcm(*[sp.fraction(v)[1] for v in n_sym])  # integer entries
    assert (n_sym.T * Q_int).is_zero_matrix
    n = torch.tensor([float(v) for v in n_sym], dtype=F64)
    Q = torch.tensor(Q_int.tolist(), dtype=F64) / 8
    k = n + torch.randn(d, generator=gen_w, dtype=F64) / 4
    kn = float(k @ n)
    assert kn != 0
    v = torch.tensor([[1.0, -2.0]], dtype=F64)
    unit = KeyValueMLP.from_weights(k[None], v, act)
    t = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=F64)
    line = t[:, None] * n / kn
    with torch.no_grad():
        along = unit(line)
        sigma_t = unit.activation(t)[:, None] * v  # σ(t) v, the value the remark's proof names
        # the line t n / (k·n) is itself rounded, which β does not cover: 10⁻¹² more (a convention, ~5000 u)
        assert bool(((along - sigma_t).abs() <= forward_error_bound(unit, line) + 1e-12).all())
        assert float((along - along[2]).abs().max()) > 1e-3  # not constant along the line
        x = torch.round(8 * torch.randn(16, d, generator=gen_x, dtype=F64)) / 8
        for _ in range(4):
            layer = GlobalQueryMLP.from_weights(
                Q, torch.randn(8, d, generator=gen_w, dtype=F64), torch.randn(8, 2, generator=gen_w, dtype=F64), act
            )
            for step in (-3.0, 1.0, 2.0):
                shifted = x + step * n
                bound = forward_error_bound(layer, x) + forward_error_bound(layer, shifted)
                assert bool(((layer(shifted) - layer(x)).abs() <= bound).all())


# --- prop-bilinear-expressivity, item 4 --------------------------------------------------------


def _tilde(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.ones(len(x), 1, dtype=x.dtype), x], 1)


def _second_difference(f, x: torch.Tensor, step: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``f(x + h) − 2 f(x) + f(x − h)`` on ``x̃``, and a bound on its rounding: the three layers' bounds plus the two
    rounded additions of the combination (γ₂ of the sum of the absolute values)."""
    points = [_tilde(x + step), _tilde(x), _tilde(x - step)]
    values = [f(p) for p in points]
    bounds = [forward_error_bound(f, p) for p in points]
    combined = values[0] - 2 * values[1] + values[2]
    size = values[0].abs() + 2 * values[1].abs() + values[2].abs() + bounds[0] + 2 * bounds[1] + bounds[2]
    return combined, bounds[0] + 2 * bounds[1] + bounds[2] + gamma(2, F64) * size


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prop_bilinear_expressivity_item4_relu_not_piecewise_linear(seed):
    """prop-bilinear-expressivity, item 4 (ReLU): on x̃ = (1, x) the full-form unit W = diag(0, I_d) computes
    relu(‖x‖²) v = ‖x‖² v, whose second difference along any u is 2h²‖u‖² v ≠ 0 everywhere, while a ReLU key–value
    memory on x̃ has zero second difference wherever no unit's score changes sign on the segment (checked at the
    points where none does, at least half of the draws).  Tolerances: the rounding bounds of the layers and of the
    combination; ‖x‖² v as reference carries γ_{d+1} relative to ‖x‖²|v|."""
    gen_w, gen_x = _generators(40 + seed)
    d, m = 4, 12
    D = d + 1
    W = torch.diag(torch.tensor([0.0] + [1.0] * d, dtype=F64))
    v = torch.randn(1, 3, generator=gen_w, dtype=F64)
    Q = torch.eye(D, dtype=F64)[:, None, :]  # q_{j,r} = e_r
    full = BilinearMLP.from_weights(Q, W[:, None, :].clone(), v, "relu")  # k_{j,r} = W[r]
    memory = KeyValueMLP.from_weights(
        torch.randn(m, D, generator=gen_w, dtype=F64), torch.randn(m, 3, generator=gen_w, dtype=F64), "relu"
    )
    x = torch.randn(256, d, generator=gen_x, dtype=F64)
    u = torch.randn(256, d, generator=gen_x, dtype=F64)
    h = 1 / 16
    with torch.no_grad():
        squares = (x * x).sum(-1, keepdim=True)
        reference = squares * v
        slack = forward_error_bound(full, _tilde(x)) + gamma(D, F64) * squares * v.abs()
        assert bool(((full(_tilde(x)) - reference).abs() <= slack).all())

        second, bound = _second_difference(full, x, h * u)
        exact = 2 * h**2 * (u * u).sum(-1, keepdim=True) * v
        assert bool(((second - exact).abs() <= bound + gamma(D + 3, F64) * exact.abs()).all())
        assert bool((exact.abs() > bound + gamma(D + 3, F64) * exact.abs()).all())  # nonzero beyond rounding

        ends = [_tilde(x + h * u) @ memory.K.T, _tilde(x - h * u) @ memory.K.T]
        one_piece = ((ends[0] > 0) == (ends[1] > 0)).all(-1)  # scores linear on the segment: no sign change
        assert int(one_piece.sum()) >= len(x) // 2
        second, bound = _second_difference(memory, x, h * u)
        assert bool((second[one_piece].abs() <= bound[one_piece]).all())
