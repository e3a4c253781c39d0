"""The gated MLP ``GatedMLP``: ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``, σ on the query factor only (SwiGLU, GEGLU, …)."""

from __future__ import annotations

from typing import Self

import torch

from symbreak.activations import REGISTRY
from symbreak.layers._base import (
    ActivationLike,
    DType,
    FeedForward,
    _check_factors,
    _check_floating,
    _check_values,
    _records_gradients,
    tie_terms,
)

__all__ = ["GatedMLP"]


class GatedMLP(FeedForward):
    """The gated MLP ``f(x) = (σ(x Qᵀ) ⊙ (x Kᵀ)) V = Σ_j σ(x·q_j)(x·k_j) v_j``: σ on the query factor only.

    Parameters ``Q, K ∈ R^{m×d}`` (rows ``q_j``, ``k_j``) and ``V ∈ R^{m×d_out}``
    (rows ``v_j``).  With ``activation="silu"`` this is SwiGLU, ``"gelu"`` GEGLU,
    ``"relu"`` ReGLU, ``"sigmoid"`` GLU and ``"identity"`` the bilinear layer
    ``((x Qᵀ) ⊙ (x Kᵀ)) V`` (``prop-gated-rank-one``).  :meth:`from_terms` builds
    the gated rank-``R`` form of ``prop-gated-rank-R`` as a wider gated MLP.

    Raises as :class:`~symbreak.layers._base.FeedForward` does for bad sizes,
    activations and inputs.

    Example: a SwiGLU layer, whose output the exchange ``q_j ↔ k_j`` changes (``thm-exchange``)::

        >>> import torch
        >>> from symbreak import GatedMLP, exchange, output_change
        >>> layer = GatedMLP(d=4, m=8, d_out=3, activation="silu", dtype=torch.float64)
        >>> x = torch.randn(5, 4, dtype=torch.float64)
        >>> layer(x).shape
        torch.Size([5, 3])
        >>> output_change(layer, exchange(layer), x) > 1e-3
        True
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
    ) -> Self:
        """The layer with the given ``Q, K (m, d)`` and ``V (m, d_out)`` (copied), of ``Q``'s dtype, on its device.

        It builds the layer as the constructor does, drawing initial weights from torch's global generator, and
        then overwrites them, so it advances that generator as a constructor call does.  Raises ``TypeError`` for
        a non-tensor or one that is not floating-point and ``ValueError`` for ``Q, K`` that are not 2-d of one
        shape or a ``V`` without ``m`` rows.
        """
        Q, K = _check_factors(Q, K, 2)
        m, d = Q.shape
        V = _check_values(V, m)
        _check_floating(Q=Q, K=K, V=V)
        return cls(d, m, V.shape[1], activation, dtype=Q.dtype)._copy_weights(Q=Q, K=K, V=V)

    @classmethod
    def from_terms(cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu") -> Self:
        """The gated rank-``R`` layer ``Σ_j Σ_r σ(x·q_{j,r})(x·k_{j,r}) v_j`` as a gated MLP of ``Rm`` units.

        ``Q, K ∈ R^{R×m×d}`` hold ``q_{j,r} = Q[r, j]`` and ``k_{j,r} = K[r, j]``
        (the layout of :class:`~symbreak.layers.bilinear.BilinearMLP`), ``V ∈ R^{m×d_out}``
        the values.  The ``R`` units ``(q_{j,r}, k_{j,r})`` of unit ``j`` share the
        value ``v_j`` (:func:`~symbreak.layers._base.tie_terms`), so the layer is
        ``(σ(x Q̄ᵀ) ⊙ (x K̄ᵀ)) V̄`` of eq-gated-rank-R-wide (``prop-gated-rank-R``).
        The tensors are copied; raises as :func:`~symbreak.layers._base.tie_terms`.
        """
        return cls.from_weights(*tie_terms(Q, K, V), activation)

    def factors(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x Qᵀ, x Kᵀ)``: the query and key factor of every unit, from two matrix products of the same shape.

        Not one product with ``[Q; K]``: two products of the same shapes run the
        same floating-point operations on different data, so exchanging ``Q`` and
        ``K`` exchanges the two computed factors exactly, on every processor (in
        one product a row's place in the matrix could change how the kernel
        rounds it); and their gradients are two separate tensors, so the backward
        pass does not copy them into one (the backward of splitting one product's
        output stacks the two halves: about a tenth of a training step at the
        benchmark's sizes).
        """
        x = self._check_input(x)
        return x @ self.Q.T, x @ self.K.T

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Qᵀ) ⊙ (x Kᵀ)``."""
        a, b = self.factors(x)
        gate = self.activation(a)
        if gate is a or _records_gradients(self, x) or not _fresh(self.activation) or torch.jit.is_tracing():
            return gate * b
        return gate.mul_(b)  # nothing is kept for a backward pass: reuse σ(a)'s memory


def _fresh(activation: object) -> bool:
    """Whether ``activation`` is one of the registry's (:data:`~symbreak.activations.REGISTRY`), whose value at a
    tensor other than the identity's is a new tensor that nothing else holds, so that it may be overwritten; a
    user's callable may return a tensor that a hook keeps, or one of another dtype (``z > 0``)."""
    return any(activation is registered for registered in REGISTRY.values())
