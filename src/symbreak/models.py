"""Published gated feed-forward blocks mapped onto the book's ``Q, K, V``.

* LLaMA (Touvron et al.; ``meta-llama`` ``model.py``): ``w2(silu(w1(x)) * w3(x))``
  with ``nn.Linear`` weights ``w1, w3 ∈ R^{m×d}``, ``w2 ∈ R^{d×m}``.  So
  ``Q = w1``, ``K = w3``, ``V = w2ᵀ`` and σ = SiLU (SwiGLU).
* T5 v1.1 (``T5DenseGatedActDense``): ``wo(act(wi_0(x)) * wi_1(x))`` with the
  tanh approximation of GELU as ``act``.  So ``Q = wi_0``, ``K = wi_1``,
  ``V = woᵀ`` and σ = ``gelu_tanh`` (GEGLU).

An ``nn.Linear`` with weight ``A`` computes ``x Aᵀ``, which is why the gate and
up projections are ``Q`` and ``K`` as they stand, and the down projection is
transposed.

:data:`GLU_VARIANTS` names the activation of each member of the GLU family
(Shazeer 2020, Table 1).
"""

from __future__ import annotations

import torch

from symbreak.layers import GatedMLP
from symbreak.layers._base import _check_size

__all__ = ["GLU_VARIANTS", "from_llama", "from_t5", "hidden_width_llama"]

#: Shazeer's names for the gated forms, and the registered activation of each.
GLU_VARIANTS: dict[str, str] = {
    "GLU": "sigmoid",
    "Bilinear": "identity",
    "ReGLU": "relu",
    "GEGLU": "gelu",
    "SwiGLU": "silu",
}


def _check_pair(w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor, names: tuple[str, str, str]):
    for name, w in zip(names, (w_gate, w_up, w_down), strict=True):
        if not isinstance(w, torch.Tensor):
            raise TypeError(f"{name}: expected a 2-d torch.Tensor, got {type(w).__name__}")
        if w.ndim != 2:
            raise ValueError(f"{name}: expected a 2-d tensor, got shape {tuple(w.shape)}")
    m, d = w_gate.shape
    if w_up.shape != (m, d):
        raise ValueError(f"{names[1]}: expected shape {(m, d)} like {names[0]}, got {tuple(w_up.shape)}")
    if w_down.shape[1] != m:
        raise ValueError(f"{names[2]}: expected shape (d_out, m={m}), got {tuple(w_down.shape)}")


def from_llama(w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor) -> GatedMLP:
    """The LLaMA block ``w2(silu(w1(x)) * w3(x))`` as ``GatedMLP(Q=w1, K=w3, V=w2ᵀ, silu)``."""
    _check_pair(w1, w3, w2, ("w1", "w3", "w2"))
    return GatedMLP.from_weights(w1, w3, w2.T, activation="silu")


def from_t5(wi_0: torch.Tensor, wi_1: torch.Tensor, wo: torch.Tensor) -> GatedMLP:
    """The T5 v1.1 block ``wo(gelu_tanh(wi_0(x)) * wi_1(x))`` as ``GatedMLP(Q=wi_0, K=wi_1, V=woᵀ, gelu_tanh)``."""
    _check_pair(wi_0, wi_1, wo, ("wi_0", "wi_1", "wo"))
    return GatedMLP.from_weights(wi_0, wi_1, wo.T, activation="gelu_tanh")


def hidden_width_llama(d: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> int:
    """LLaMA's hidden width: ``h = ⌊2/3 · 4d⌋``, ``h = ⌊multiplier · h⌋``, then ``⌈h / multiple_of⌉ · multiple_of``.

    The two floors and the ceiling are those of LLaMA's reference code (``int`` twice, then rounding
    up to a multiple); 11008 for ``d = 4096``.  ``d`` and ``multiple_of`` are positive ints (``TypeError`` for
    another type, ``ValueError`` for one below 1).
    """
    d = _check_size("d", d)
    multiple_of = _check_size("multiple_of", multiple_of)
    hidden = int(2 * 4 * d / 3)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)
