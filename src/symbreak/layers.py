"""The feed-forward forms of the book, as ``torch.nn.Module`` s named as in the maths.

A token is a row ``x ∈ R^{1×d}``; every layer maps ``(..., d) → (..., d_out)``
without biases.  Unit ``j`` has a key ``k_j`` and a query ``q_j`` (rows of
``K, Q ∈ R^{m×d}``) and a value ``v_j`` (row of ``V ∈ R^{m×d_out}``).

* :class:`KeyValueMLP` — ``σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j``;
* :class:`BilinearMLP` — ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``, the rank-``R``
  bilinear form; ``rank=1`` is the symmetric rank-1 form;
* :class:`GatedMLP` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``, the gated MLP.

Each layer exposes :meth:`hidden` (the coefficients ``h`` with output
``h V``) and can be built from given tensors with ``from_weights``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from symbreak.activations import Activation, resolve

__all__ = ["FeedForward", "KeyValueMLP", "GlobalQueryMLP", "BilinearMLP", "FullBilinearMLP", "GatedMLP"]

ActivationLike = str | Activation | Callable[[torch.Tensor], torch.Tensor]


def _check_size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected a positive int, got {type(value).__name__} ({value!r})")
    if value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value}")
    return value


def _check_tensor(name: str, value: object, ndim: int) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if value.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(value.shape)}")
    return value


def _init(shape: tuple[int, ...], fan_in: int, dtype: torch.dtype | None) -> nn.Parameter:
    """A parameter with entries ``N(0, 1/fan_in)``, drawn from torch's global generator."""
    return nn.Parameter(torch.randn(shape, dtype=dtype) / math.sqrt(fan_in))


# A block of the batch in FeedForward.forward holds about this many intermediate
# numbers: 2^22 float32 numbers are 16 MiB, within the last-level cache of
# current CPUs.
_BLOCK_NUMBERS = 2**22


def _records_gradients(layer: nn.Module, x: torch.Tensor) -> bool:
    """Whether autograd may record an evaluation of ``layer`` at ``x``: whenever gradient mode is on.

    Only ``torch.no_grad``/``torch.inference_mode`` is taken as proof that it
    does not: inside ``torch.func`` transforms the parameters that carry the
    gradient are not the module's own, so their ``requires_grad`` cannot be asked.
    """
    return torch.is_grad_enabled()


class FeedForward(nn.Module):
    """Common part of the forms: sizes, activation, the value map and input checks."""

    d: int
    m: int
    d_out: int
    V: nn.Parameter

    def __init__(self, d: int, m: int, d_out: int | None, activation: ActivationLike) -> None:
        super().__init__()
        self.d = _check_size("d", d)
        self.m = _check_size("m", m)
        self.d_out = self.d if d_out is None else _check_size("d_out", d_out)
        self.activation = resolve(activation)

    def _check_input(self, x: object) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x: expected a torch.Tensor, got {type(x).__name__}")
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x: expected last dimension d = {self.d}, got shape {tuple(x.shape)}")
        return x

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """The memory coefficients ``h(x) ∈ R^{...×m}``; the output is ``h(x) V``."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``h(x) V``.

        Under ``torch.no_grad`` (or ``torch.inference_mode``) a large batch is
        evaluated in blocks of rows whose intermediate tensors
        (``_intermediate_width`` numbers per token) fit in about 16 MiB, so they
        stay in the processor's cache between the matrix products and the
        elementwise work.  Every row is computed by the same operations either
        way; only the batch is cut.
        """
        return self._in_blocks(lambda rows: self.hidden(rows) @ self.V, x, self.d_out)

    def _in_blocks(self, fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, width: int) -> torch.Tensor:
        """``fn(x)`` for a row-wise ``fn`` with ``width`` outputs per token, in cache-sized blocks under no_grad."""
        rows = max(1, _BLOCK_NUMBERS // self._intermediate_width())
        tokens = math.prod(x.shape[:-1]) if isinstance(x, torch.Tensor) else 0
        if tokens <= rows or _records_gradients(self, x):
            return fn(x)
        flat = self._check_input(x).reshape(tokens, self.d)
        out = torch.cat([fn(block) for block in flat.split(rows)])
        return out.reshape(*x.shape[:-1], width)

    def _intermediate_width(self) -> int:
        """Numbers per token of the widest intermediate tensor of :meth:`hidden` (``m`` unless overridden)."""
        return self.m

    def extra_repr(self) -> str:
        return f"d={self.d}, m={self.m}, d_out={self.d_out}, activation={self.activation.name!r}"


def _check_values(V: torch.Tensor, m: int) -> torch.Tensor:
    V = _check_tensor("V", V, 2)
    if V.shape[0] != m:
        raise ValueError(f"V: expected shape (m={m}, d_out), got {tuple(V.shape)}")
    return V


class KeyValueMLP(FeedForward):
    """The standard MLP as key–value memory: ``σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j``.

    Parameters ``K ∈ R^{m×d}`` (keys, rows ``k_j``) and ``V ∈ R^{m×d_out}``
    (values, rows ``v_j``).
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        activation: ActivationLike = "relu",
        *,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self.K = _init((self.m, self.d), self.d, dtype)
        self.V = _init((self.m, self.d_out), self.m, dtype)

    @classmethod
    def from_weights(cls, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "relu") -> KeyValueMLP:
        """The layer with the given keys ``K (m, d)`` and values ``V (m, d_out)`` (copied)."""
        K = _check_tensor("K", K, 2)
        m, d = K.shape
        V = _check_values(V, m)
        layer = cls(d, m, V.shape[1], activation, dtype=K.dtype)
        with torch.no_grad():
            layer.K.copy_(K)
            layer.V.copy_(V)
        return layer

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s = x Kᵀ``: the score ``x·k_j`` of every unit."""
        return self._check_input(x) @ self.K.T

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Kᵀ)``."""
        return self.activation(self.scores(x))


class GlobalQueryMLP(FeedForward):
    """A key–value memory read with a computed query: ``σ(x Q Kᵀ) V``.

    One global query map ``Q ∈ R^{d×d}`` turns the token into the query
    ``q = x Q``; keys ``K ∈ R^{m×d}`` and values ``V ∈ R^{m×d_out}`` as in
    :class:`KeyValueMLP`.  :meth:`absorbed` returns the key–value memory with
    keys ``K' = K Qᵀ`` that computes the same function (``thm-query-absorbed``).
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        activation: ActivationLike = "relu",
        *,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self.Q = _init((self.d, self.d), self.d, dtype)
        self.K = _init((self.m, self.d), self.d, dtype)
        self.V = _init((self.m, self.d_out), self.m, dtype)

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "relu"
    ) -> GlobalQueryMLP:
        """The layer with query map ``Q (d, d)``, keys ``K (m, d)`` and values ``V (m, d_out)`` (copied)."""
        K = _check_tensor("K", K, 2)
        m, d = K.shape
        Q = _check_tensor("Q", Q, 2)
        if Q.shape != (d, d):
            raise ValueError(f"Q: expected shape (d, d) = ({d}, {d}), got {tuple(Q.shape)}")
        V = _check_values(V, m)
        layer = cls(d, m, V.shape[1], activation, dtype=K.dtype)
        with torch.no_grad():
            layer.Q.copy_(Q)
            layer.K.copy_(K)
            layer.V.copy_(V)
        return layer

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


class BilinearMLP(FeedForward):
    """The rank-``R`` bilinear form ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``.

    Parameters ``Q, K ∈ R^{R×m×d}`` (``Q[r]`` is ``Q_r``; ``Q[r, j]`` is
    ``q_{j,r}``) and ``V ∈ R^{m×d_out}``.  The score of unit ``j`` is the
    quadratic form ``x W_j xᵀ`` with ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``.
    ``rank=1`` is the symmetric rank-1 form; ``rank=d`` can express any ``W_j``.

    The ``R·m`` query and ``R·m`` key factors come from one matrix product
    (:meth:`factors`), not from a loop over ``r``.
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        rank: int = 1,
        activation: ActivationLike = "silu",
        *,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self.rank = _check_size("rank", rank)
        self.Q = _init((self.rank, self.m, self.d), self.d, dtype)
        self.K = _init((self.rank, self.m, self.d), self.d, dtype)
        self.V = _init((self.m, self.d_out), self.m, dtype)

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu"
    ) -> BilinearMLP:
        """The layer with the given ``Q, K`` and ``V`` (copied).

        ``Q`` and ``K`` have shape ``(R, m, d)``; a 2-d ``(m, d)`` pair is read
        as rank 1.
        """
        if isinstance(Q, torch.Tensor) and Q.ndim == 2:
            Q = Q.unsqueeze(0)
        if isinstance(K, torch.Tensor) and K.ndim == 2:
            K = K.unsqueeze(0)
        Q = _check_tensor("Q", Q, 3)
        K = _check_tensor("K", K, 3)
        if K.shape != Q.shape:
            raise ValueError(f"K: expected the shape of Q {tuple(Q.shape)}, got {tuple(K.shape)}")
        rank, m, d = Q.shape
        V = _check_values(V, m)
        layer = cls(d, m, V.shape[1], rank, activation, dtype=Q.dtype)
        with torch.no_grad():
            layer.Q.copy_(Q)
            layer.K.copy_(K)
            layer.V.copy_(V)
        return layer

    def factors(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x Q_rᵀ, x K_rᵀ)`` for every ``r``, as two ``(..., R, m)`` tensors.

        Both come from one matrix product to ``2·R·m`` features (``Q`` and ``K``
        stacked and reshaped to ``(2·R·m, d)``), never from a loop over ``r``.
        """
        R, m, _ = self.Q.shape
        a, b = self._stacked_factors(x).unflatten(-1, (2, R, m)).unbind(-3)
        return a, b

    def _stacked_factors(self, x: torch.Tensor) -> torch.Tensor:
        """``x [Q_1; …; Q_R; K_1; …; K_R]ᵀ``, shape ``(..., 2·R·m)``: one matrix product for all factors."""
        x = self._check_input(x)
        R, m, d = self.Q.shape
        return x @ torch.cat([self.Q, self.K]).reshape(2 * R * m, d).T

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s = Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)``, i.e. ``s_j = x W_j xᵀ``.

        The sum over ``r`` is accumulated with fused multiply–adds over the
        contiguous ``(..., m)`` slices (torch's reduction over a middle dimension
        is several times slower on the CPU); at ``R = 1`` it is a single product.
        """
        R, m, _ = self.Q.shape
        # one unbind into the 2R slices, not indexing: the backward of an index
        # allocates and zero-fills a full-size gradient per slice, that of
        # unbind stacks the slices' gradients once
        slices = self._stacked_factors(x).unflatten(-1, (2 * R, m)).unbind(-2)
        s = slices[0] * slices[R]
        for r in range(1, R):
            s = torch.addcmul(s, slices[r], slices[R + r])
        return s

    def _intermediate_width(self) -> int:
        return 2 * self.rank * self.m

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ))``."""
        return self.activation(self.scores(x))

    def unit_forms(self) -> torch.Tensor:
        """The matrices ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``, stacked as ``(m, d, d)``."""
        return torch.einsum("rjd,rje->jde", self.Q, self.K)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", rank={self.rank}"


def _triu_indices(d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column indices of the ``d(d+1)/2`` entries ``i ≤ j``."""
    return tuple(torch.triu_indices(d, d))  # type: ignore[return-value]


class FullBilinearMLP(FeedForward):
    """Full bilinear attention stored by its unit forms: ``Σ_j σ(x W_j xᵀ) v_j``.

    Evaluated as **one matrix product over quadratic features**:

    * unpacked: ``s = (x ⊗ x) Ŵᵀ`` with ``Ŵ ∈ R^{m×d²}`` the flattened ``W_j``;
    * ``packed=True``: only ``sym(W_j)`` matters (``thm-transpose``), so the score is
      ``s_j = Σ_{i≤l} c_{j,il} x_i x_l`` with ``c_{j,ii} = W_{j,ii}`` and
      ``c_{j,il} = W_{j,il} + W_{j,li}`` (``i < l``): ``d(d+1)/2`` features and
      parameters per unit instead of ``d²``.

    Parameters: ``W (m, d, d)`` or, packed, ``C (m, d(d+1)/2)``; ``V (m, d_out)``.
    :meth:`scores_einsum` is the plain per-unit formula, for checks and benchmarks.
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        activation: ActivationLike = "silu",
        *,
        packed: bool = False,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        if not isinstance(packed, bool):
            raise TypeError(f"packed: expected a bool, got {type(packed).__name__}")
        self.packed = packed
        rows, cols = _triu_indices(self.d)
        self.register_buffer("_rows", rows, persistent=False)
        self.register_buffer("_cols", cols, persistent=False)
        if packed:
            self.C = _init((self.m, rows.numel()), self.d, dtype)
        else:
            self.W = _init((self.m, self.d, self.d), self.d, dtype)
        self.V = _init((self.m, self.d_out), self.m, dtype)

    @classmethod
    def from_weights(
        cls, W: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu", *, packed: bool = False
    ) -> FullBilinearMLP:
        """The layer with unit forms ``W (m, d, d)`` and values ``V (m, d_out)``; packed stores ``sym(W_j)``."""
        W = _check_tensor("W", W, 3)
        m, d, d2 = W.shape
        if d != d2:
            raise ValueError(f"W: expected shape (m, d, d), got {tuple(W.shape)}")
        V = _check_values(V, m)
        layer = cls(d, m, V.shape[1], activation, packed=packed, dtype=W.dtype)
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
    def from_bilinear(cls, layer: BilinearMLP, *, packed: bool = False) -> FullBilinearMLP:
        """The same function as ``layer``, stored by its unit forms ``W_j = Σ_r q_{j,r}ᵀ k_{j,r}``."""
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
        x = self._check_input(x)
        if self.packed:
            # row i of the upper triangle is x_i · (x_i, …, x_d): d products of
            # contiguous slices, faster than gathering x at the triangle's indices
            return torch.cat([x[..., i : i + 1] * x[..., i:] for i in range(self.d)], dim=-1)
        return (x.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``s_j = x W_j xᵀ`` by one matrix product over the quadratic features (in blocks of rows under no_grad)."""
        weights = self.C if self.packed else self.W.flatten(1)
        return self._in_blocks(lambda rows: self.features(rows) @ weights.T, x, self.m)

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


class GatedMLP(FeedForward):
    """The gated MLP ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``: σ sits on the query factor only.

    Parameters ``Q, K ∈ R^{m×d}`` and ``V ∈ R^{m×d_out}``.  With
    ``activation="silu"`` this is SwiGLU, ``"gelu"`` GEGLU, ``"relu"`` ReGLU,
    ``"sigmoid"`` GLU and ``"identity"`` the bilinear layer.
    """

    def __init__(
        self,
        d: int,
        m: int,
        d_out: int | None = None,
        activation: ActivationLike = "silu",
        *,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d, m, d_out, activation)
        self.Q = _init((self.m, self.d), self.d, dtype)
        self.K = _init((self.m, self.d), self.d, dtype)
        self.V = _init((self.m, self.d_out), self.m, dtype)

    @classmethod
    def from_weights(
        cls, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, activation: ActivationLike = "silu"
    ) -> GatedMLP:
        """The layer with the given ``Q, K (m, d)`` and ``V (m, d_out)`` (copied)."""
        Q = _check_tensor("Q", Q, 2)
        K = _check_tensor("K", K, 2)
        if K.shape != Q.shape:
            raise ValueError(f"K: expected the shape of Q {tuple(Q.shape)}, got {tuple(K.shape)}")
        m, d = Q.shape
        V = _check_values(V, m)
        layer = cls(d, m, V.shape[1], activation, dtype=Q.dtype)
        with torch.no_grad():
            layer.Q.copy_(Q)
            layer.K.copy_(K)
            layer.V.copy_(V)
        return layer

    def factors(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x Qᵀ, x Kᵀ)``: the query and key factor of every unit, from one matrix product."""
        x = self._check_input(x)
        return (x @ torch.cat([self.Q, self.K]).T).unflatten(-1, (2, self.m)).unbind(-2)

    def _intermediate_width(self) -> int:
        return 2 * self.m

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """``σ(x Qᵀ) ⊙ (x Kᵀ)``."""
        a, b = self.factors(x)
        gate = self.activation(a)
        if gate is a or _records_gradients(self, x):
            return gate * b
        return gate.mul_(b)  # nothing is kept for a backward pass: reuse σ(a)'s memory
