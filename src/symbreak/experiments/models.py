"""The models compared (E5): the forms, their widths at a common parameter budget, and the shared skip path.

Every model is ``f(x) = x Sᵀ + c + block(x)``: the **same** affine skip path
``S ∈ R^{d_out×d}``, ``c ∈ R^{d_out}`` for every form, plus the form's block.
Without the shared path the comparison would measure parity (``prop-parity``):
the symmetric and full bilinear blocks are even in ``x`` and could not fit an
odd target at all.

The hidden width ``m`` of each block is chosen so that the block has as close
as possible to a common parameter budget (as Shazeer's 2/3 rule does for
GLU variants): ``m = round(budget / per_unit)``, with per-unit costs
``d + d_out`` (plain MLP), ``2d + d_out`` (rank 1 and gated) and
``2Rd + d_out`` (rank R).
"""

from __future__ import annotations

import torch
from torch import nn

from symbreak.experiments.tasks import Task
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP

__all__ = ["FORMS", "MATCHED_PAIRS", "Model", "width_for_budget", "make_model", "plain_budget"]


#: The forms compared: name → (layer kind, activation, rank).
FORMS: dict[str, tuple[str, str, int]] = {
    "MLP (ReLU)": ("kv", "relu", 1),
    "MLP (GELU)": ("kv", "gelu", 1),
    "symmetric (ReLU)": ("bilinear", "relu", 1),
    "symmetric (GELU)": ("bilinear", "gelu", 1),
    "symmetric (SiLU)": ("bilinear", "silu", 1),
    "bilinear (σ = id)": ("gated", "identity", 1),
    "ReGLU": ("gated", "relu", 1),
    "GEGLU": ("gated", "gelu", 1),
    "SwiGLU": ("gated", "silu", 1),
    "symmetric rank-4 (SiLU)": ("bilinear", "silu", 4),
}

#: The matched pairs ``(a, b)`` that predictions P1 and P2 of chapter 14 compare: each gated form against the
#: symmetric rank-1 form with the same ``σ`` (P1: same width and parameters, only the place of ``σ`` differs),
#: and the bilinear layer (``σ`` = identity, exchange-symmetric) against each nonlinear gated form (P2).
MATCHED_PAIRS: tuple[tuple[str, str], ...] = (
    ("ReGLU", "symmetric (ReLU)"),
    ("GEGLU", "symmetric (GELU)"),
    ("SwiGLU", "symmetric (SiLU)"),
    ("bilinear (σ = id)", "ReGLU"),
    ("bilinear (σ = id)", "GEGLU"),
    ("bilinear (σ = id)", "SwiGLU"),
)


def width_for_budget(form: str, d: int, d_out: int, budget: int) -> int:
    """The hidden width ``m`` whose block has closest to ``budget`` parameters (at least 1)."""
    kind, _, rank = _form(form)
    per_unit = {"kv": d + d_out, "gated": 2 * d + d_out, "bilinear": 2 * rank * d + d_out}[kind]
    return max(1, round(budget / per_unit))


def _form(form: str) -> tuple[str, str, int]:
    if form not in FORMS:
        raise ValueError(f"form: expected one of {list(FORMS)}, got {form!r}")
    return FORMS[form]


class Model(nn.Module):
    """``f(x) = x Sᵀ + c + block(x)``: the shared affine skip path plus the form's block."""

    def __init__(self, block: FeedForward, d_out: int) -> None:
        super().__init__()
        self.block = block
        self.skip = nn.Linear(block.d, d_out, dtype=block.V.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x W_skip + b + f(x)``: the affine skip path plus the feed-forward block ``f``."""
        return self.skip(x) + self.block(x)


def make_model(form: str, d: int, d_out: int, budget: int, seed: int) -> Model:
    """A model of ``form`` with the block's width matched to ``budget``, initialised from ``seed`` (float64)."""
    kind, act, rank = _form(form)
    m = width_for_budget(form, d, d_out, budget)
    torch.manual_seed(seed)
    if kind == "kv":
        block = KeyValueMLP(d, m, d_out, activation=act, dtype=torch.float64)
    elif kind == "gated":
        block = GatedMLP(d, m, d_out, activation=act, dtype=torch.float64)
    else:
        block = BilinearMLP(d, m, d_out, rank=rank, activation=act, dtype=torch.float64)
    return Model(block, d_out)


def plain_budget(task: Task, reference_width: int) -> int:
    """The parameter budget ``m₀ (d + d_out)`` of a plain MLP block of width ``m₀ = reference_width`` on ``task``.

    With this budget the plain MLP has width exactly ``m₀``; a rank-1 or gated
    block gets ``m ≈ m₀ (d + d_out) / (2d + d_out)`` units (Shazeer's rule: 2/3
    of ``m₀`` when ``d_out = d``) and a rank-``R`` block
    ``m ≈ m₀ (d + d_out) / (2Rd + d_out)`` (:func:`width_for_budget`).
    """
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    if isinstance(reference_width, bool) or not isinstance(reference_width, int) or reference_width < 1:
        raise ValueError(f"reference_width: expected an int >= 1, got {reference_width!r}")
    return reference_width * (task.d + task.d_out)
