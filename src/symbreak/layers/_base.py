"""The common part of the feed-forward forms: ``FeedForward``, the argument checks, initialization and blocking.

:class:`FeedForward` holds the sizes ``d, m, d_out``, the activation σ and the
value map ``V``, checks the input and evaluates a large batch in cache-sized
blocks of rows under ``torch.no_grad``; the forms of :mod:`symbreak.layers`
subclass it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Self

import torch
from torch import nn

from symbreak.activations import Activation, resolve

__all__ = ["FeedForward", "ActivationLike", "DType", "tie_terms"]


ActivationLike = str | Activation | Callable[[torch.Tensor], torch.Tensor]
#: The dtype of a layer's parameters; ``None`` is torch's default.
DType = torch.dtype | None


def _check_size(name: str, value: object) -> int:
    """``value`` as an ``int`` >= 1: an int or an integer-like (``numpy.int64``, by ``operator.index``), not a bool."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected a positive int, got {type(value).__name__} ({value!r})") from None
    if value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value}")
    return value


def _check_dtype(dtype: object) -> DType:
    """``dtype``: ``None`` (torch's default) or a floating-point ``torch.dtype``."""
    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"dtype: expected a floating-point torch.dtype or None, got {dtype!r}")
    return dtype


def _check_floating(**tensors: torch.Tensor) -> None:
    """Each given tensor has a floating-point dtype (the parameters it is copied into have one)."""
    for name, value in tensors.items():
        if not value.dtype.is_floating_point:
            raise TypeError(f"{name}: expected a floating-point tensor, got dtype {value.dtype}")


def _check_tensor(name: str, value: object, ndim: int) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if value.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(value.shape)}")
    return value


def _check_factors(Q: object, K: object, ndim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The query and key factors ``Q, K``, both ``ndim``-d tensors of one shape."""
    Q = _check_tensor("Q", Q, ndim)
    K = _check_tensor("K", K, ndim)
    if K.shape != Q.shape:
        raise ValueError(f"K: expected the shape of Q {tuple(Q.shape)}, got {tuple(K.shape)}")
    return Q, K


def _init(shape: tuple[int, ...], fan_in: int, dtype: DType) -> nn.Parameter:
    """A parameter with entries ``N(0, 1/fan_in)``, drawn from torch's global generator."""
    return nn.Parameter(torch.randn(shape, dtype=dtype) / math.sqrt(fan_in))


# A block of the batch in FeedForward.forward holds about this many intermediate
# numbers, whatever the dtype: 2^22 float32 numbers are 16 MiB, within the
# last-level cache of current CPUs (float64 blocks are twice that).
_BLOCK_NUMBERS = 2**22


def _records_gradients(layer: nn.Module, x: torch.Tensor) -> bool:
    """Whether autograd may record an evaluation of ``layer`` at ``x``: whenever gradient mode is on.

    Only ``torch.no_grad``/``torch.inference_mode`` is taken as proof that it
    does not: inside ``torch.func`` transforms the parameters that carry the
    gradient are not the module's own, so their ``requires_grad`` cannot be asked.
    """
    return torch.is_grad_enabled()


class FeedForward(nn.Module):
    """Common part of the forms ``f(x) = h(x) V = Σ_j h_j(x) v_j``: sizes, activation σ, values and input checks.

    A token is a row ``x ∈ R^{1×d}`` (a batch ``(..., d)``); unit ``j`` has the
    coefficient ``h_j(x)``, which each form defines (:meth:`~symbreak.layers.FeedForward.hidden`), and the
    value ``v_j``, row ``j`` of ``V ∈ R^{m×d_out}``; ``d_out`` defaults to ``d``.

    Raises ``TypeError`` for a size that is not an int or an activation that is
    neither a registered name, an :class:`~symbreak.activations.Activation` nor
    a callable, ``ValueError`` for a size below 1 or an unknown activation name,
    and, when called, ``TypeError`` for an ``x`` that is not a tensor and
    ``ValueError`` for one whose last dimension is not ``d``.
    """

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

    def _init_parameters(self, dtype: DType, **shapes: tuple[int, ...]) -> None:
        """Weights of the given shapes (fan-in ``d``), drawn in this order, then the values ``V`` (fan-in ``m``)."""
        dtype = _check_dtype(dtype)
        for name, shape in shapes.items():
            setattr(self, name, _init(shape, self.d, dtype))
        self.V = _init((self.m, self.d_out), self.m, dtype)

    def _copy_weights(self, **weights: torch.Tensor) -> Self:
        """This layer, moved to the first given tensor's device, with each given tensor copied into its parameter of
        that name (the weights were drawn on the default device, from torch's global generator, as always)."""
        self.to(next(iter(weights.values())).device)
        with torch.no_grad():
            for name, value in weights.items():
                getattr(self, name).copy_(value)
        return self

    def _check_input(self, x: object, *, dtype: bool = True) -> torch.Tensor:
        """``x``, a tensor whose last dimension is ``d``; with ``dtype``, also of the layer's dtype, unless autocast is
        on for its device (which casts it), since a matrix product with the parameters would fail anyway."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x: expected a torch.Tensor, got {type(x).__name__}")
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x: expected last dimension d = {self.d}, got shape {tuple(x.shape)}")
        if dtype and x.dtype != self.V.dtype and not torch.is_autocast_enabled(x.device.type):
            raise TypeError(f"x: expected dtype {self.V.dtype} (the layer's), got {x.dtype}")
        return x

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """The memory coefficients ``h(x) ∈ R^{...×m}``; the output is ``h(x) V``."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``h(x) V``.

        Under ``torch.no_grad`` (or ``torch.inference_mode``) a large batch is
        evaluated in blocks of rows whose intermediate tensors hold at most
        ``2^22`` numbers (``_intermediate_width`` per token): 16 MiB in float32,
        32 MiB in float64, so that in float32 they stay in the processor's cache
        between the matrix products and the elementwise work.  Every row is computed by the same operations either
        way; only the batch is cut.
        """
        return self._in_blocks(self.hidden, x, self.V)

    def _in_blocks(self, fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, right: torch.Tensor):
        """``fn(x) @ right`` for a row-wise ``fn``, in cache-sized blocks of rows under no_grad.

        Each block's product is written straight into its rows of the output
        (``out=``), so the blocks are not copied into one tensor afterwards.
        """
        rows = max(1, _BLOCK_NUMBERS // self._intermediate_width())
        tokens = math.prod(x.shape[:-1]) if isinstance(x, torch.Tensor) else 0
        if tokens <= rows or _records_gradients(self, x):
            return fn(x) @ right
        flat = self._check_input(x).reshape(tokens, self.d)
        blocks = zip(range(0, tokens, rows), flat.split(rows), strict=True)
        if torch.is_autocast_enabled(flat.device.type):
            # autocast chooses the product's dtype (the first block's tells it) and casts no product with out=
            out = None
            for start, block in blocks:
                product = fn(block) @ right
                if out is None:
                    out = torch.empty(tokens, right.shape[-1], dtype=product.dtype, device=flat.device)
                out[start : start + len(block)] = product
            return out.reshape(*x.shape[:-1], right.shape[-1])
        dtype = torch.promote_types(flat.dtype, right.dtype)
        out = torch.empty(tokens, right.shape[-1], dtype=dtype, device=flat.device)
        for start, block in blocks:
            torch.matmul(fn(block), right, out=out[start : start + len(block)])
        return out.reshape(*x.shape[:-1], right.shape[-1])

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


def tie_terms(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(Q̄, K̄, V̄)``: the ``R`` terms of ``m`` units as ``Rm`` units whose values are tied.

    ``Q, K ∈ R^{R×m×d}`` hold the rows ``q_{j,r} = Q[r, j]`` and ``k_{j,r}``, and
    ``V ∈ R^{m×d_out}`` the values ``v_j``.  Row ``(r − 1)m + j`` of
    ``Q̄, K̄ ∈ R^{Rm×d}`` is ``q_{j,r}``, ``k_{j,r}``, and ``V̄ ∈ R^{Rm×d_out}``
    stacks ``R`` copies of ``V``, so the ``R`` units ``(q_{j,r}, k_{j,r})`` of
    unit ``j`` share its value ``v_j`` (``prop-gated-rank-R``, eq-gated-rank-R-wide).

    Raises ``TypeError`` for a non-tensor and ``ValueError`` for ``Q, K`` that
    are not 3-d of one shape or a ``V`` without ``m`` rows.
    """
    Q, K = _check_factors(Q, K, 3)
    R, m, d = Q.shape
    V = _check_values(V, m)
    return Q.reshape(R * m, d), K.reshape(R * m, d), V.repeat(R, 1)
