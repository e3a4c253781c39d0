"""The symmetrised gated control ``SymmetrisedGatedMLP``: ``½[σ(x Qᵀ) ⊙ (x Kᵀ) + σ(x Kᵀ) ⊙ (x Qᵀ)] V``.

The gated MLP puts σ on the query factor only, which breaks the exchange
symmetry ``q_j ↔ k_j``.  Averaging the gated unit with its exchanged copy gives a
form with the same σ, the same parameters ``Q, K ∈ R^{m×d}``, ``V ∈ R^{m×d_out}``
and the same cost order, which **keeps** the exchange symmetry exactly: the
clean control for "breaking exchange helps".

It subclasses :class:`~symbreak.layers._base.FeedForward`, not
:class:`~symbreak.layers.gated.GatedMLP`, so that no code written for the gated
form (a rounding bound, the swap test) applies to it by accident.
"""

from __future__ import annotations

import torch

from symbreak.layers._base import ActivationLike, DType, FeedForward
from symbreak.layers.gated import GatedMLP

__all__ = ["SymmetrisedGatedMLP"]


class SymmetrisedGatedMLP(FeedForward):
    """The symmetrised gated unit ``h = ½[σ(a) ⊙ b + σ(b) ⊙ a]`` with ``a = x Qᵀ``, ``b = x Kᵀ``; output ``h V``.

    Parameters ``Q, K ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}``, initialised and
    named as in :class:`~symbreak.layers.gated.GatedMLP` (same constructor).
    Exchanging ``Q ↔ K`` leaves the function unchanged for every σ; with
    ``activation="identity"`` it is the bilinear layer ``(a ⊙ b) V``.
    """

    def __init__(
        self, d: int, m: int, d_out: int | None = None, activation: ActivationLike = "silu", *, dtype: DType = None
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self._init_parameters(dtype, Q=(self.m, self.d), K=(self.m, self.d))

    # The gated form's own methods, which read only ``Q``, ``K``, ``V`` and ``m``: the intermediate width
    # ``2m``, the layer from given tensors ``Q, K (m, d)`` and ``V (m, d_out)`` (copied; ``from_weights``
    # builds this class) and the factors ``(x Qᵀ, x Kᵀ)`` from two products of the same shape.
    _intermediate_width = GatedMLP._intermediate_width
    from_weights = GatedMLP.__dict__["from_weights"]
    factors = GatedMLP.factors

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``½[σ(x Qᵀ) ⊙ (x Kᵀ) + σ(x Kᵀ) ⊙ (x Qᵀ)]``.

        Exchanging ``Q`` and ``K`` exchanges the computed factors exactly
        (:meth:`factors`: two products of the same shape), and the two products are added in one rounding
        (``fl(u + w) = fl(w + u)``), so the computed result does not change
        by a single bit.
        """
        a, b = self.factors(x)
        return 0.5 * (self.activation(a) * b + self.activation(b) * a)
