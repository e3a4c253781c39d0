"""The full form's fast paths (x ⊗ x features, symmetric packing) give the plain formula's outputs."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, inputs, seeds, sizes
from symbreak.approximation import sym
from symbreak.layers import BilinearMLP, FullBilinearMLP
from symbreak.numerics import gamma

F64 = torch.float64


def _score_bound(layer: FullBilinearMLP, x: torch.Tensor) -> torch.Tensor:
    """Both evaluations are sums of d² products x_i W_il x_l: each within γ_{d²+2} Σ|x_i||W_il||x_l|."""
    xa = x.abs()
    return 2 * gamma(layer.d**2 + 2, F64) * torch.einsum("nd,jde,ne->nj", xa, layer.unit_forms().abs(), xa)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS), packed=st.booleans())
def test_feature_matmul_equals_plain_formula(d, m, seed, act, packed):
    """thm-transpose (packing) and the x ⊗ x fast path: scores equal x W_j xᵀ within rounding."""
    torch.manual_seed(seed)
    layer = FullBilinearMLP(d, m, activation=act, packed=packed, dtype=F64)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        diff = (layer.scores(x) - layer.scores_einsum(x)).abs()
        assert bool((diff <= _score_bound(layer, x)).all())


@given(d=sizes, m=sizes, rank=st.integers(1, 3), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_packed_and_unpacked_compute_the_bilinear_layer(d, m, rank, seed, act):
    """def-bilinear-attention: the full form built from a rank-R layer is that layer; packing keeps it."""
    torch.manual_seed(seed)
    bil = BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        for packed in (False, True):
            full = FullBilinearMLP.from_bilinear(bil, packed=packed)
            # scores: each side within γ_{d²+2R+2} of Σ_r |x·q||x·k|-type sums ≤ the |x||W||x| form of |Q||K|
            xa = x.abs()
            absW = torch.einsum("rjd,rje->jde", bil.Q.abs(), bil.K.abs())
            sb = 2 * gamma(d * d + 2 * rank + 2, F64) * torch.einsum("nd,jde,ne->nj", xa, absW, xa)
            assert bool(((full.scores(x) - bil.scores(x)).abs() <= sb).all())


def test_packed_halves_parameters_and_stores_sym():
    torch.manual_seed(0)
    W = torch.randn(5, 6, 6, dtype=F64)
    V = torch.randn(5, 6, dtype=F64)
    full = FullBilinearMLP.from_weights(W, V, activation="relu")
    packed = FullBilinearMLP.from_weights(W, V, activation="relu", packed=True)
    assert packed.C.shape == (5, 21) and full.W.shape == (5, 6, 6)
    torch.testing.assert_close(packed.unit_forms(), sym(W), rtol=0, atol=4 * 2.0**-53 * float(W.abs().max()))


def test_bad_input():
    with pytest.raises(ValueError, match=r"W: expected shape \(m, d, d\), got \(2, 3, 4\)"):
        FullBilinearMLP.from_weights(torch.zeros(2, 3, 4), torch.zeros(2, 3))
    with pytest.raises(TypeError, match="packed: expected a bool"):
        FullBilinearMLP(3, 2, packed=1)
    with pytest.raises(TypeError, match="layer: expected a BilinearMLP"):
        FullBilinearMLP.from_bilinear(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="x: expected last dimension d = 3"):
        FullBilinearMLP(3, 2)(torch.zeros(4, 2))
