"""The key–value memories: ``KeyValueMLP`` ``σ(x Kᵀ) V`` and ``GlobalQueryMLP`` ``σ(x Q Kᵀ) V``."""

from __future__ import annotations

from typing import Self

import torch

from symbreak.layers._base import ActivationLike, DType, FeedForward, _check_floating, _check_tensor, _check_values

__all__ = ["KeyValueMLP", "GlobalQueryMLP"]


class KeyValueMLP(FeedForward):
    """The standard MLP as key–value memory: ``f(x) = σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j`` (``def-key-value-memory``).

    Parameters ``K ∈ R^{m×d}`` (keys, rows ``k_j``) and ``V ∈ R^{m×d_out}``
    (values, rows ``v_j``); the default σ is ReLU.  Raises as
    :class:`~symbreak.layers._base.FeedForward` does for bad sizes, activations
    and inputs.

    Example: keys ``K`` and values ``V`` given, each output row is ``Σ_j σ(x·k_j) v_j``::

        >>> import torch
        >>> from symbreak import KeyValueMLP
        >>> K, V = torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([[2.0], [3.0]])
        >>> KeyValueMLP.from_weights(K, V)(torch.tensor([[1.0, -1.0]])).tolist()  # relu(1)·2 + relu(-1)·3
        [[2.0]]
    """

    def __init__(
        self, d: int, m: int, d_out: int | None = None, activation: ActivationLike = "relu", *, dtype: DType = None
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self._init_parameters(dtype, K=(self.m, self.d))

    @classmethod
    def from_weights(cls, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "relu") -> Self:
        """The layer with the given keys ``K (m, d)`` and values ``V (m, d_out)`` (copied), of ``K``'s dtype, on its
        device.

        It builds the layer as the constructor does, drawing initial weights from torch's global generator, and
        then overwrites them, so it advances that generator as a constructor call does.  Raises ``TypeError`` for
        a non-tensor or one that is not floating-point and ``ValueError`` for a ``K`` that is not 2-d or a ``V``
        without ``m`` rows.
        """
        K = _check_tensor("K", K, 2)
        m, d = K.shape
        V = _check_values(V, m)
        _check_floating(K=K, V=V)
        return cls(d, m, V.shape[1], activation, dtype=K.dtype)._copy_weights(K=K, V=V)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s = x Kᵀ``: the score ``x·k_j`` of every unit."""
        return self._check_input(x) @ self.K.T

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Kᵀ)``."""
        return self.activation(self.scores(x))


class GlobalQueryMLP(FeedForward):
    """A key–value memory read with a computed query: ``f(x) = σ(x Q Kᵀ) V = Σ_j σ((x Q)·k_j) v_j``.

    One global query map ``Q ∈ R^{d×d}`` turns the token into the query
    ``q = x Q``; keys ``K ∈ R^{m×d}`` and values ``V ∈ R^{m×d_out}`` as in
    :class:`KeyValueMLP`.  :meth:`absorbed` returns the key–value memory with
    keys ``K' = K Qᵀ`` that computes the same function (``thm-query-absorbed``).
    Raises as :class:`~symbreak.layers._base.FeedForward` does for bad sizes,
    activations and inputs.
    """

    def __init__(
        self, d: int, m: int, d_out: int | None = None, activation: ActivationLike = "relu", *, dtype: DType = None
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self._init_parameters(dtype, Q=(self.d, self.d), K=(self.m, self.d))

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "relu"
    ) -> Self:
        """The layer with query map ``Q (d, d)``, keys ``K (m, d)`` and values ``V (m, d_out)`` (copied), of ``K``'s
        dtype, on its device.

        It builds the layer as the constructor does, drawing initial weights from torch's global generator, and
        then overwrites them, so it advances that generator as a constructor call does.  Raises ``TypeError`` for
        a non-tensor or one that is not floating-point and ``ValueError`` for a ``K`` that is not 2-d, a ``Q`` not
        of shape ``(d, d)`` or a ``V`` without ``m`` rows.
        """
        K = _check_tensor("K", K, 2)
        m, d = K.shape
        Q = _check_tensor("Q", Q, 2)
        if Q.shape != (d, d):
            raise ValueError(f"Q: expected shape (d, d) = ({d}, {d}), got {tuple(Q.shape)}")
        V = _check_values(V, m)
        _check_floating(Q=Q, K=K, V=V)
        return cls(d, m, V.shape[1], activation, dtype=K.dtype)._copy_weights(Q=Q, K=K, V=V)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``(x Q) Kᵀ``: the query ``x Q`` against every key."""
        return (self._check_input(x) @ self.Q) @ self.K.T

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Q Kᵀ)``."""
        return self.activation(self.scores(x))

    def absorbed(self) -> KeyValueMLP:
        """The key–value memory with keys ``K' = K Qᵀ``, values ``V`` and the same σ."""
        with torch.no_grad():
            return KeyValueMLP.from_weights(self.K @ self.Q.T, self.V, self.activation)
