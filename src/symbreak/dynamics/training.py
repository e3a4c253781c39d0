"""Deterministic full-batch training: teacher data, the MSE loss, the optimisers and the recorded history.

* :func:`teacher_data` — inputs ``X ~ N(0, 1)`` and targets ``Y = teacher(X)``;
* :data:`STUDENTS`, :func:`students` — the layers chapters 11–12 train, by label;
* :func:`train` — gradient descent (optionally with coupled weight decay ``λ``:
  ``θ ← θ − η(∇L + λθ)``), heavy-ball momentum or Adam, recording a
  :class:`History`.

The same layer, data and settings give the same trajectory bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import torch
from torch import nn

from symbreak.dynamics._base import _check_layer
from symbreak.dynamics.charges import diagonal_gap, norm_differences, on_diagonal
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP

OPTIMIZERS = ("gd", "momentum", "adam")


def teacher_data(
    teacher: Callable[[torch.Tensor], torch.Tensor],
    d: int,
    n: int,
    seed: int,
    dtype: torch.dtype = torch.float64,
    *,
    unit_mean_square: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``X ∈ R^{n×d}`` with i.i.d. ``N(0, 1)`` entries drawn from ``seed``, and ``Y = teacher(X)``.

    With ``unit_mean_square``, the teacher's values ``V`` are first divided in place by
    ``sqrt(mean(Y²))`` (the mean over all ``n·d_out`` entries of ``Y = teacher(X)``), and the
    targets recomputed, so that they have unit mean square; the teacher must have a ``V``.
    """
    if n < 1 or d < 1:
        raise ValueError(f"n, d: expected ints >= 1, got n={n}, d={d}")
    if unit_mean_square and not isinstance(getattr(teacher, "V", None), torch.Tensor):
        raise TypeError(f"teacher: expected a layer with values V for unit_mean_square, got {type(teacher).__name__}")
    X = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    with torch.no_grad():
        Y = teacher(X)
        if unit_mean_square:
            teacher.V.div_(Y.pow(2).mean().sqrt())
            Y = teacher(X)
    return X, Y.detach()


#: The layers chapters 11–12 train, label → ``(form, σ)`` with the form names of
#: :mod:`symbreak.verdicts`: ``"rank1"`` the symmetric rank-1 form ``σ((x·q_j)(x·k_j)) v_j``
#: (``BilinearMLP`` of rank 1), ``"gated"`` the gated form ``σ(x·q_j)(x·k_j) v_j``
#: (``GatedMLP``), ``"kv"`` the key–value memory ``σ(x·k_j) v_j`` (``KeyValueMLP``).
STUDENTS = MappingProxyType(
    {
        "symmetric ReLU": ("rank1", "relu"),
        "symmetric GELU": ("rank1", "gelu"),
        "symmetric SiLU": ("rank1", "silu"),
        "bilinear": ("rank1", "identity"),
        "ReGLU": ("gated", "relu"),
        "GEGLU": ("gated", "gelu"),
        "SwiGLU": ("gated", "silu"),
        "ReLU MLP": ("kv", "relu"),
    }
)
_FORM_CLASSES = {"rank1": BilinearMLP, "gated": GatedMLP, "kv": KeyValueMLP}


def students(
    d: int,
    m: int,
    d_out: int,
    *,
    labels: Sequence[str] | None = None,
    diagonal: bool = False,
    dtype: torch.dtype = torch.float64,
) -> dict[str, FeedForward]:
    """Fresh layers of :data:`STUDENTS`, label → layer, drawn in order from torch's global generator.

    Each has ``d`` inputs, ``m`` units and ``d_out`` outputs.  ``labels`` selects and orders
    them (default: every label; with ``diagonal``, every label whose form has queries).  With
    ``diagonal`` every key is set to its query, ``k_j = q_j`` (:func:`on_diagonal`; no new draw).
    """
    if labels is None:
        labels = [label for label, (form, _) in STUDENTS.items() if not (diagonal and form == "kv")]
    if isinstance(labels, str):
        raise TypeError(f"labels: expected a sequence of labels, got the str {labels!r}")
    layers = {}
    for label in labels:
        if label not in STUDENTS:
            raise ValueError(f"labels: expected labels among {list(STUDENTS)}, got {label!r}")
        form, activation = STUDENTS[label]
        if form == "rank1":
            layer = BilinearMLP(d, m, d_out, rank=1, activation=activation, dtype=dtype)
        else:
            layer = _FORM_CLASSES[form](d, m, d_out, activation=activation, dtype=dtype)
        layers[label] = on_diagonal(layer) if diagonal else layer
    return layers


def mse(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """``L = (1/2n) Σ_i ‖f(x_i) − y_i‖²``."""
    return 0.5 * ((layer(X) - Y) ** 2).sum() / X.shape[0]


@dataclass
class History:
    """What :func:`train` recorded, one row per recorded step (step 0 is the start)."""

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    qk: list[torch.Tensor] = field(default_factory=list)
    kv: list[torch.Tensor] = field(default_factory=list)
    gap: list[float] = field(default_factory=list)

    def as_tensor(self, name: str) -> torch.Tensor:
        """A recorded per-unit quantity (``"qk"`` or ``"kv"``) stacked as ``(records, m)``."""
        if name not in ("qk", "kv"):
            raise ValueError(f"name: expected 'qk' or 'kv', got {name!r}")
        values = getattr(self, name)
        if not values:
            raise ValueError(f"name: {name!r} was not recorded for this layer")
        return torch.stack(values)


def _record(history: History, layer: FeedForward, step: int, loss: float, gnorm: float) -> None:
    history.steps.append(step)
    history.loss.append(loss)
    history.grad_norm.append(gnorm)
    diffs = norm_differences(layer)
    history.kv.append(diffs["kv"].clone())
    if "qk" in diffs:
        history.qk.append(diffs["qk"].clone())
        history.gap.append(diagonal_gap(layer))


def train(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    lr: float,
    steps: int,
    weight_decay: float = 0.0,
    optimizer: str = "gd",
    momentum: float = 0.9,
    betas: tuple[float, float] = (0.9, 0.999),
    record_every: int = 1,
) -> History:
    """Train ``layer`` in place on ``(X, Y)`` with the MSE loss; return the recorded :class:`History`.

    ``"gd"``: ``θ ← θ − η(∇L + λθ)``.  ``"momentum"``: heavy ball,
    ``b ← μ b + ∇L + λθ``, ``θ ← θ − η b``.  ``"adam"``: ``torch.optim.Adam``
    with L2 decay ``λ`` added to the gradient.
    """
    layer = _check_layer(layer)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer: expected one of {list(OPTIMIZERS)}, got {optimizer!r}")
    if not lr > 0:
        raise ValueError(f"lr: expected a positive learning rate, got {lr}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps: expected an int >= 0, got {steps!r}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay: expected a number >= 0, got {weight_decay}")
    if record_every < 1:
        raise ValueError(f"record_every: expected an int >= 1, got {record_every}")
    params = list(layer.parameters())
    if optimizer == "gd":
        opt = torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    elif optimizer == "momentum":
        opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    else:
        opt = torch.optim.Adam(params, lr=lr, betas=betas, weight_decay=weight_decay)
    history = History()
    for step in range(steps + 1):
        opt.zero_grad(set_to_none=True)
        loss = mse(layer, X, Y)
        loss.backward()
        if step % record_every == 0 or step == steps:
            gnorm = float(torch.sqrt(sum((p.grad**2).sum() for p in params)))
            _record(history, layer, step, float(loss.detach()), gnorm)
        if step < steps:
            opt.step()
    opt.zero_grad(set_to_none=True)
    return history
