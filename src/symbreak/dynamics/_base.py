"""Shared argument checks and per-unit views of a layer's parameters for the dynamics modules."""

from __future__ import annotations

import torch

from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP


def _check_layer(layer: object) -> FeedForward:
    if not isinstance(layer, FeedForward):
        raise TypeError(f"layer: expected a symbreak layer, got {type(layer).__name__}")
    return layer


def _check_data(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> None:
    if not isinstance(X, torch.Tensor) or not isinstance(Y, torch.Tensor):
        raise TypeError(f"X, Y: expected torch.Tensors, got {type(X).__name__} and {type(Y).__name__}")
    if X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected shape (n, d = {layer.d}), got {tuple(X.shape)}")
    if Y.shape != (X.shape[0], layer.d_out):
        raise ValueError(f"Y: expected shape (n = {X.shape[0]}, d_out = {layer.d_out}), got {tuple(Y.shape)}")


def _query_key_value(layer: FeedForward) -> dict[str, torch.Tensor]:
    """Per-unit parameter blocks as ``(m, …)`` tensors: ``q``, ``k`` (``(m, R·d)`` at rank R), ``v``."""
    if isinstance(layer, BilinearMLP):
        return {
            "q": layer.Q.permute(1, 0, 2).flatten(1),
            "k": layer.K.permute(1, 0, 2).flatten(1),
            "v": layer.V,
        }
    if isinstance(layer, GatedMLP):
        return {"q": layer.Q, "k": layer.K, "v": layer.V}
    if isinstance(layer, KeyValueMLP):
        return {"k": layer.K, "v": layer.V}
    raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")


def _unit_factors(layer: FeedForward, X: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-sample factors of every unit: ``a`` (``x·q``), ``b`` (``x·k``), ``s`` (the σ argument), as needed."""
    with torch.no_grad():
        if isinstance(layer, BilinearMLP):
            a, b = layer.factors(X)  # (n, R, m)
            return {"a": a, "b": b, "s": (a * b).sum(-2)}
        if isinstance(layer, GatedMLP):
            a, b = layer.factors(X)  # (n, m)
            return {"a": a, "b": b, "s": a}
        if isinstance(layer, KeyValueMLP):
            return {"s": X @ layer.K.T}
    raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")


def _block_vector(layer: FeedForward, parts: dict[str, torch.Tensor]) -> torch.Tensor:
    """A flat parameter-space vector with ``parts[name]`` in parameter ``name`` and zeros elsewhere."""
    return torch.cat(
        [parts.get(name, torch.zeros_like(p)).detach().reshape(-1) for name, p in layer.named_parameters()]
    )
