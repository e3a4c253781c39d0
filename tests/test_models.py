"""prop-llama-t5: LLaMA's and T5 v1.1's feed-forward blocks are GatedMLP with a weight mapping.

The reference blocks are written here from their published definitions, not
imported from a model library:

* LLaMA (meta-llama ``model.py``, ``FeedForward.forward``): ``w2(F.silu(w1(x)) * w3(x))``;
* T5 v1.1 (``T5DenseGatedActDense.forward``): ``wo(gelu_new(wi_0(x)) * wi_1(x))``, where
  ``gelu_new(z) = ½ z (1 + tanh(√(2/π) (z + 0.044715 z³)))``.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from symbreak import activations
from symbreak.layers import GatedMLP
from symbreak.models import GLU_VARIANTS, from_llama, from_t5, hidden_width_llama
from symbreak.numerics import forward_error_bound

F64 = torch.float64


class LlamaFeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False, dtype=F64)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False, dtype=F64)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False, dtype=F64)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def gelu_new(z):
    return 0.5 * z * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * torch.pow(z, 3.0))))


class T5DenseGatedActDense(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.wi_0 = nn.Linear(d_model, d_ff, bias=False, dtype=F64)
        self.wi_1 = nn.Linear(d_model, d_ff, bias=False, dtype=F64)
        self.wo = nn.Linear(d_ff, d_model, bias=False, dtype=F64)

    def forward(self, hidden_states):
        hidden_gelu = gelu_new(self.wi_0(hidden_states))
        hidden_linear = self.wi_1(hidden_states)
        return self.wo(hidden_gelu * hidden_linear)


def test_prop_llama_t5_llama_block():
    """prop-llama-t5: Q = w1, K = w3, V = w2ᵀ, σ = SiLU reproduces LLaMA's block."""
    torch.manual_seed(0)
    ref = LlamaFeedForward(16, 48)
    layer = from_llama(ref.w1.weight, ref.w2.weight, ref.w3.weight)
    x = torch.randn(4, 7, 16, dtype=F64)
    with torch.no_grad():
        diff = (layer(x) - ref(x)).abs()
    # the reference is the same computation in another order: two rounding bounds
    assert bool((diff <= 2 * forward_error_bound(layer, x)).all())
    assert layer.activation.name == "silu"


def test_prop_llama_t5_t5_block():
    """prop-llama-t5: Q = wi_0, K = wi_1, V = woᵀ, σ = GELU (tanh) reproduces T5 v1.1's block."""
    torch.manual_seed(1)
    ref = T5DenseGatedActDense(12, 40)
    layer = from_t5(ref.wi_0.weight, ref.wi_1.weight, ref.wo.weight)
    x = torch.randn(3, 5, 12, dtype=F64)
    with torch.no_grad():
        diff = (layer(x) - ref(x)).abs()
    assert bool((diff <= 2 * forward_error_bound(layer, x)).all())


def test_wrong_mapping_is_detected():
    """Swapping gate and up projection gives a different function: the mapping is not arbitrary."""
    torch.manual_seed(2)
    ref = LlamaFeedForward(8, 24)
    wrong = from_llama(ref.w3.weight, ref.w2.weight, ref.w1.weight)
    x = torch.randn(16, 8, dtype=F64)
    with torch.no_grad():
        assert not bool(((wrong(x) - ref(x)).abs() <= 2 * forward_error_bound(wrong, x)).all())


def test_llama_hidden_width():
    """Published widths: LLaMA-7B (d = 4096) has 11008; Llama 3 8B (d = 4096, ffn_dim_multiplier 1.3) has 14336."""
    assert hidden_width_llama(4096) == 11008
    assert hidden_width_llama(4096, ffn_dim_multiplier=1.3) == 14336


def test_llama_hidden_width_floors_before_rounding_up():
    """The docstring's floors: ⌊8/3⌋ = 2 at d = 1 (a ceiling would give 3); ⌊1.5 · 2⌋ = 3; then up to a multiple."""
    assert hidden_width_llama(1, multiple_of=1) == 2
    assert hidden_width_llama(1, multiple_of=1, ffn_dim_multiplier=1.5) == 3
    assert hidden_width_llama(1, multiple_of=4) == 4


def test_glu_variants_are_registered():
    assert set(GLU_VARIANTS) == {"GLU", "Bilinear", "ReGLU", "GEGLU", "SwiGLU"}
    assert all(a in activations.REGISTRY for a in GLU_VARIANTS.values())


def test_bad_shapes():
    with pytest.raises(ValueError, match=r"w3: expected shape \(4, 3\) like w1, got \(5, 3\)"):
        from_llama(torch.zeros(4, 3), torch.zeros(3, 4), torch.zeros(5, 3))
    with pytest.raises(ValueError, match=r"wo: expected shape \(d_out, m=4\), got \(3, 5\)"):
        from_t5(torch.zeros(4, 3), torch.zeros(4, 3), torch.zeros(3, 5))
    with pytest.raises(ValueError, match=r"w1: expected a 2-d tensor, got shape \(24,\)"):
        from_llama(torch.ones(24), torch.zeros(3, 4), torch.zeros(4, 3))
    with pytest.raises(TypeError, match="w2: expected a 2-d torch.Tensor, got list"):
        from_llama(torch.zeros(4, 3), [[0.0]], torch.zeros(4, 3))


def test_llama_hidden_width_refuses_a_width_below_one():
    """``hidden_width_llama(-5)`` had returned 0."""
    import numpy as np

    assert hidden_width_llama(np.int64(4096)) == 11008
    with pytest.raises(ValueError, match="d: expected an int >= 1, got -5"):
        hidden_width_llama(-5)
    with pytest.raises(ValueError, match="multiple_of: expected an int >= 1, got 0"):
        hidden_width_llama(64, multiple_of=0)
    with pytest.raises(TypeError, match="d: expected a positive int, got float"):
        hidden_width_llama(64.0)
    with pytest.raises(TypeError, match="d: expected a positive int, got bool"):
        hidden_width_llama(True)


def test_from_llama_keeps_the_weights_device_and_dtype_and_the_draws():
    """The layer lives on the weights' device (meta here: no GPU) in their dtype; it draws as many numbers from
    torch's global generator as the constructor does, whatever the device."""
    m, d = 6, 4
    torch.manual_seed(0)
    GatedMLP(d, m, d, dtype=torch.float64)
    after_constructor = torch.randn(1)
    torch.manual_seed(0)
    weights = [
        torch.empty(m, d, device="meta", dtype=torch.float64),
        torch.empty(d, m, device="meta", dtype=torch.float64),
    ]
    layer = from_llama(weights[0], weights[1], weights[0])
    assert torch.equal(torch.randn(1), after_constructor)
    assert {p.device.type for p in layer.parameters()} == {"meta"}
    assert {p.dtype for p in layer.parameters()} == {torch.float64}
