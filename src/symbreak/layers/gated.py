"""The gated MLP ``GatedMLP``: ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``, σ on the query factor only (SwiGLU, GEGLU, …)."""

from __future__ import annotations

import torch

from symbreak.layers._base import ActivationLike, DType, FeedForward, _check_factors, _check_values, _records_gradients

__all__ = ["GatedMLP"]


class GatedMLP(FeedForward):
    """The gated MLP ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``: σ sits on the query factor only.

    Parameters ``Q, K ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}``.  With
    ``activation="silu"`` this is SwiGLU, ``"gelu"`` GEGLU, ``"relu"`` ReGLU,
    ``"sigmoid"`` GLU and ``"identity"`` the bilinear layer.
    """

    def __init__(
        self, d: int, m: int, d_out: int | None = None, activation: ActivationLike = "silu", *, dtype: DType = None
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self._init_parameters(dtype, Q=(self.m, self.d), K=(self.m, self.d))

    def _intermediate_width(self) -> int:
        return 2 * self.m

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu"
    ) -> GatedMLP:
        """The layer with the given ``Q, K (m, d)`` and ``V (m, d_out)`` (copied)."""
        Q, K = _check_factors(Q, K, 2)
        m, d = Q.shape
        V = _check_values(V, m)
        return cls(d, m, V.shape[1], activation, dtype=Q.dtype)._copy_weights(Q=Q, K=K, V=V)

    def factors(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x Qᵀ, x Kᵀ)``: the query and key factor of every unit, from one matrix product."""
        x = self._check_input(x)
        return (x @ torch.cat([self.Q, self.K]).T).unflatten(-1, (2, self.m)).unbind(-2)

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Qᵀ) ⊙ (x Kᵀ)``."""
        a, b = self.factors(x)
        gate = self.activation(a)
        if gate is a or _records_gradients(self, x):
            return gate * b
        return gate.mul_(b)  # nothing is kept for a backward pass: reuse σ(a)'s memory
