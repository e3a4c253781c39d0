"""The bilinear forms: ``BilinearMLP`` of rank ``R`` by factors, ``FullBilinearMLP`` by its unit forms ``W_j``."""

from __future__ import annotations

from typing import Self

import torch

from symbreak.layers._base import (
    ActivationLike,
    DType,
    FeedForward,
    _check_factors,
    _check_floating,
    _check_size,
    _check_tensor,
    _check_values,
)

__all__ = ["BilinearMLP", "FullBilinearMLP", "rank_R_charges"]


class BilinearMLP(FeedForward):
    """The rank-``R`` form ``f(x) = σ(Σ_r (x Q^{(r)ᵀ}) ⊙ (x K^{(r)ᵀ})) V = Σ_j σ(Σ_r (x·q_{j,r})(x·k_{j,r})) v_j``.

    Parameters ``Q, K ∈ R^{R×m×d}`` (``Q[r]`` is the stack ``Q^{(r)}``; ``Q[r, j]`` is
    ``q_{j,r}``) and ``V ∈ R^{m×d_out}``.  The score of unit ``j`` is the
    quadratic form ``x W_j xᵀ`` with ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}`` (``prop-higher-rank``).
    ``rank=1`` is the symmetric rank-1 form ``Σ_j σ((x·q_j)(x·k_j)) v_j``
    (``prop-rank-one``); ``rank=d`` can express any ``W_j`` (full bilinear attention).

    The ``R·m`` query and ``R·m`` key factors come from two matrix products, one
    per stack (:meth:`factors`), not from a loop over ``r``.  Raises as
    :class:`~symbreak.layers._base.FeedForward` does for bad sizes, activations
    and inputs, and ``TypeError``/``ValueError`` for a ``rank`` that is not an
    int ≥ 1.

    Example: the symmetric rank-1 form keeps its output, bit for bit, under the exchange ``q_j ↔ k_j``
    (``thm-exchange``: its score ``(x·q_j)(x·k_j)`` is a product of two numbers, which commutes exactly)::

        >>> import torch
        >>> from symbreak import BilinearMLP, exchange
        >>> layer = BilinearMLP(d=4, m=8, d_out=3, rank=1, activation="gelu")
        >>> x = torch.randn(5, 4)
        >>> torch.equal(layer(x), exchange(layer)(x))
        True
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        rank: int = 1,
        activation: ActivationLike = "silu",
        *,
        dtype: DType = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self.rank = _check_size("rank", rank)
        self._init_parameters(dtype, Q=(self.rank, self.m, self.d), K=(self.rank, self.m, self.d))

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu"
    ) -> Self:
        """The layer with the given ``Q, K`` and ``V`` (copied), of ``Q``'s dtype, on its device.

        ``Q`` and ``K`` have shape ``(R, m, d)``; a 2-d ``(m, d)`` pair is read as rank 1.  It builds the layer as
        the constructor does, drawing initial weights from torch's global generator, and then overwrites them, so
        it advances that generator as a constructor call does.  Raises ``TypeError`` for a non-tensor or one that
        is not floating-point and ``ValueError`` for ``Q, K`` of different shapes or a ``V`` without ``m`` rows.
        """
        if isinstance(Q, torch.Tensor) and Q.ndim == 2:
            Q = Q.unsqueeze(0)
        if isinstance(K, torch.Tensor) and K.ndim == 2:
            K = K.unsqueeze(0)
        Q, K = _check_factors(Q, K, 3)
        rank, m, d = Q.shape
        V = _check_values(V, m)
        _check_floating(Q=Q, K=K, V=V)
        return cls(d, m, V.shape[1], rank, activation, dtype=Q.dtype)._copy_weights(Q=Q, K=K, V=V)

    def factors(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x Q^{(r)ᵀ}, x K^{(r)ᵀ})`` for every ``r``, as two ``(..., R, m)`` tensors (:meth:`_factor_products`)."""
        R, m, _ = self.Q.shape
        a, b = self._factor_products(x)
        return a.unflatten(-1, (R, m)), b.unflatten(-1, (R, m))

    def _factor_products(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [Q^{(1)}; …; Q^{(R)}]ᵀ`` and ``x [K^{(1)}; …; K^{(R)}]ᵀ``, each ``(..., R·m)``: two matrix products.

        ``Q`` and ``K`` are stored as ``(R, m, d)``, so each stack is a view
        ``(R·m, d)`` and nothing is copied per call (concatenating ``Q`` and ``K``
        into one matrix would copy ``2Rmd`` numbers per call, and per block of
        rows under ``no_grad``); the two products have the same shape, so
        exchanging ``Q`` and ``K`` exchanges the computed factors exactly.
        """
        x = self._check_input(x)
        R, m, d = self.Q.shape
        return x @ self.Q.reshape(R * m, d).T, x @ self.K.reshape(R * m, d).T

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s = Σ_r (x Q^{(r)ᵀ}) ⊙ (x K^{(r)ᵀ})``, i.e. ``s_j = x W_j xᵀ``.

        The sum over ``r`` is accumulated with fused multiply–adds over the
        contiguous ``(..., m)`` slices (torch's reduction over a middle dimension
        is several times slower on the CPU); at ``R = 1`` it is a single product.
        When autograd records it, the backward pass (:class:`_Scores`) computes
        each stack's gradient by one broadcast product; the values are the same
        (not under ``torch.jit.trace``, which records autograd's own backward).
        """
        a, b = self._factor_products(x)
        if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad) and not torch.jit.is_tracing():
            return _Scores.apply(a, b, self.rank)
        return _scores(a, b, self.rank)

    def _intermediate_width(self) -> int:
        return 2 * self.rank * self.m

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(Σ_r (x Q^{(r)ᵀ}) ⊙ (x K^{(r)ᵀ}))``."""
        return self.activation(self.scores(x))

    def unit_forms(self) -> torch.Tensor:
        """The matrices ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``, stacked as ``(m, d, d)``."""
        return torch.einsum("rjd,rje->jde", self.Q, self.K)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", rank={self.rank}"


def _scores(a: torch.Tensor, b: torch.Tensor, R: int) -> torch.Tensor:
    """``Σ_r a_r ⊙ b_r`` for the stacks ``a = [a_1, …, a_R]`` and ``b = [b_1, …, b_R]`` (last dimension ``R·m``)."""
    m = a.shape[-1] // R
    a_r, b_r = a.unflatten(-1, (R, m)).unbind(-2), b.unflatten(-1, (R, m)).unbind(-2)
    s = a_r[0] * b_r[0]
    for r in range(1, R):
        s = torch.addcmul(s, a_r[r], b_r[r])
    return s


class _Scores(torch.autograd.Function):
    """:func:`_scores` with a backward pass of one broadcast product per stack: ``∂s/∂a_r = b_r``, ``∂s/∂b_r = a_r``.

    Autograd's own backward of the slices computes each of the ``2R`` gradients
    ``g ⊙ b_r``, ``g ⊙ a_r`` as a tensor of its own (reading ``g`` from memory
    ``2R`` times) and then stacks each stack's ``R`` into one gradient, one more
    pass over ``2Rm`` numbers per token.  This backward computes each stack's
    gradient as one product of ``g`` broadcast over ``r`` with the other
    stack, ``g[..., None, :] ⊙ b.unflatten(-1, (R, m))``, written once; it
    keeps only the two stacks.  It is made of differentiable operations, so
    it can itself be recorded (``create_graph=True``, e.g. a Hessian).
    """

    @staticmethod
    def forward(a: torch.Tensor, b: torch.Tensor, R: int) -> torch.Tensor:
        return _scores(a, b, R)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        a, b, ctx.R = inputs
        ctx.save_for_backward(a, b)

    @staticmethod
    def backward(ctx, g: torch.Tensor):
        a, b = ctx.saved_tensors
        shape, g = (ctx.R, a.shape[-1] // ctx.R), g.unsqueeze(-2)
        return (g * b.unflatten(-1, shape)).flatten(-2), (g * a.unflatten(-1, shape)).flatten(-2), None


def rank_R_charges(Q: torch.Tensor, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(C, D)`` per unit, each ``(m, R, R)``: ``C_rs = q_r·q_s − k_r·k_s`` and ``D_rs = q_r·k_s − q_s·k_r``.

    For factors ``Q, K`` of shape ``(R, m, d)`` (as ``BilinearMLP.Q``).  These are the quantities
    that gradient flow conserves in every symmetric rank-``R`` unit (``rem-rank-R-hidden-symmetry``):
    in the coordinates ``a_r = (q_r + k_r)/2``, ``b_r = (q_r − k_r)/2`` they are ``4 A Bᵀ`` split into its
    symmetric part ``C`` and antisymmetric part ``−D``.
    """
    Q, K = _check_factors(Q, K, 3)
    QQ = torch.einsum("rjd,sjd->jrs", Q, Q)
    KK = torch.einsum("rjd,sjd->jrs", K, K)
    QK = torch.einsum("rjd,sjd->jrs", Q, K)
    return QQ - KK, QK - QK.transpose(-1, -2)


def _triu_indices(d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column indices of the ``d(d+1)/2`` entries ``i ≤ j``."""
    return tuple(torch.triu_indices(d, d))  # type: ignore[return-value]


class FullBilinearMLP(FeedForward):
    """Full bilinear attention stored by its unit forms: ``f(x) = Σ_j σ(x W_j xᵀ) v_j`` (``def-bilinear-attention``).

    Evaluated as **one matrix product over quadratic features**:

    * unpacked: ``s = (x ⊗ x) Ŵᵀ`` with ``Ŵ ∈ R^{m×d²}`` the flattened ``W_j``;
    * ``packed=True``: only ``sym(W_j)`` matters (``thm-transpose``), so the score is
      ``s_j = Σ_{i≤l} c_{j,il} x_i x_l`` with ``c_{j,ii} = W_{j,ii}`` and
      ``c_{j,il} = W_{j,il} + W_{j,li}`` (``i < l``): ``d(d+1)/2`` features and
      parameters per unit instead of ``d²``.

    Parameters: ``W (m, d, d)`` or, packed, ``C (m, d(d+1)/2)``; ``V (m, d_out)``.
    :meth:`scores_einsum` is the plain per-unit formula, for checks and benchmarks.
    Raises as :class:`~symbreak.layers._base.FeedForward` does for bad sizes,
    activations and inputs, and ``TypeError`` for a ``packed`` that is not a bool.
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        activation: ActivationLike = "silu",
        *,
        packed: bool = False,
        dtype: DType = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        if not isinstance(packed, bool):
            raise TypeError(f"packed: expected a bool, got {type(packed).__name__}")
        self.packed = packed
        rows, cols = _triu_indices(self.d)
        self.register_buffer("_rows", rows, persistent=False)
        self.register_buffer("_cols", cols, persistent=False)
        if packed:
            self._init_parameters(dtype, C=(self.m, rows.numel()))
        else:
            self._init_parameters(dtype, W=(self.m, self.d, self.d))

    @classmethod
    def from_weights(
        cls, W: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu", *, packed: bool = False
    ) -> Self:
        """The layer with unit forms ``W (m, d, d)`` and values ``V (m, d_out)``; packed stores ``sym(W_j)``.

        Of ``W``'s dtype, on its device.  It builds the layer as the constructor does, drawing initial weights from
        torch's global generator, and then overwrites them, so it advances that generator as a constructor call
        does.  Raises ``TypeError`` for a non-tensor or one that is not floating-point and ``ValueError`` for a
        ``W`` that is not ``(m, d, d)`` or a ``V`` without ``m`` rows.
        """
        W = _check_tensor("W", W, 3)
        m, d, d2 = W.shape
        if d != d2:
            raise ValueError(f"W: expected shape (m, d, d), got {tuple(W.shape)}")
        V = _check_values(V, m)
        _check_floating(W=W, V=V)
        layer = cls(d, m, V.shape[1], activation, packed=packed, dtype=W.dtype).to(W.device)
        with torch.no_grad():
            if packed:
                r, c = layer._rows, layer._cols
                C = W[:, r, c] + W[:, c, r]
                C[:, r == c] /= 2
                layer.C.copy_(C)
            else:
                layer.W.copy_(W)
            layer.V.copy_(V)
        return layer

    @classmethod
    def from_bilinear(cls, layer: BilinearMLP, *, packed: bool = False) -> Self:
        """The same function as ``layer``, stored by its unit forms ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``.

        Raises ``TypeError`` when ``layer`` is not a :class:`BilinearMLP`.
        """
        if not isinstance(layer, BilinearMLP):
            raise TypeError(f"layer: expected a BilinearMLP, got {type(layer).__name__}")
        with torch.no_grad():
            return cls.from_weights(layer.unit_forms(), layer.V, layer.activation, packed=packed)

    def unit_forms(self) -> torch.Tensor:
        """``W_j`` (unpacked) or the symmetric ``sym(W_j)`` it stores (packed), as ``(m, d, d)``."""
        if not self.packed:
            return self.W
        r, c = self._rows, self._cols
        half = torch.where(r == c, 1.0, 0.5).to(self.C.dtype)
        flat_upper = r * self.d + c
        flat_lower = c * self.d + r
        S = self.C.new_zeros(self.m, self.d * self.d)
        S = S.index_copy(1, flat_upper, self.C * half)
        S = S.index_copy(1, flat_lower, self.C * half)
        return S.unflatten(1, (self.d, self.d))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``x ⊗ x`` flattened to ``d²`` features, or the ``d(d+1)/2`` products ``x_i x_l`` (``i ≤ l``) when packed."""
        x = self._check_input(x, dtype=False)
        if self.packed:
            # row i of the upper triangle is x_i · (x_i, …, x_d): d products of
            # contiguous slices, faster than gathering x at the triangle's indices
            return torch.cat([x[..., i : i + 1] * x[..., i:] for i in range(self.d)], dim=-1)
        return (x.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s_j = x W_j xᵀ`` by one matrix product over the quadratic features (in blocks of rows under no_grad)."""
        weights = self.C if self.packed else self.W.flatten(1)
        return self._in_blocks(self.features, self._check_input(x), weights.T)

    def scores_einsum(self, x: torch.Tensor) -> torch.Tensor:
        """``s_j = x W_j xᵀ`` by the plain per-unit formula ``einsum('nd,jde,ne->nj')``."""
        x = self._check_input(x)
        return torch.einsum("...d,jde,...e->...j", x, self.unit_forms(), x)

    def _intermediate_width(self) -> int:
        features = self.C.shape[1] if self.packed else self.d * self.d
        return max(features, self.m)

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x W_j xᵀ)`` for every unit."""
        return self.activation(self.scores(x))

    def extra_repr(self) -> str:
        return super().extra_repr() + f", packed={self.packed}"
