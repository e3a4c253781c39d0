"""The models compared (E5): the forms, their widths at a common parameter budget, and the shared skip path.

Every model is ``f(x) = x Sᵀ + c + block(x)``: the **same** affine skip path
``S ∈ R^{d_out×d}``, ``c ∈ R^{d_out}`` for every form, plus the form's block.
Without the shared path the comparison would measure parity (``prop-parity``):
the symmetric and full bilinear blocks are even in ``x`` and could not fit an
odd target at all.

The hidden width ``m`` of each block is chosen so that the block has as close
as possible to a common parameter budget (as Shazeer's 2/3 rule does for
GLU variants): ``m = round(budget / per_unit)``, with per-unit costs
``d + d_out`` (standard MLP), ``2d + d_out`` (rank 1, gated and symmetrised
gated) and ``2Rd + d_out`` (rank R).  Every weight, the skip path's ``S``
included, is drawn from ``N(0, 1/fan-in)``; the skip path's bias ``c`` starts at 0.
"""

from __future__ import annotations

import torch
from torch import nn

from symbreak.experiments.tasks import Task
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

__all__ = [
    "FORMS",
    "PRIMARY",
    "EXPLORATORY",
    "MATCHED_PAIRS",
    "Model",
    "width_for_budget",
    "make_model",
    "plain_budget",
]


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
    "GLU (sigmoid)": ("gated", "sigmoid", 1),
    "tanh gating": ("gated", "tanh", 1),
    "symmetrised (GELU)": ("symmetrised", "gelu", 1),
    "symmetrised (SiLU)": ("symmetrised", "silu", 1),
    "symmetric rank-4 (SiLU)": ("bilinear", "silu", 4),
}

#: The primary comparisons of chapters 14–15, named before any result: ``{family: pairs (a, b)}``, each read as
#: ``a − b`` of the test error. P1: each gated form against the symmetric rank-1 form with the same ``σ`` (same
#: width and parameters, only the place of ``σ`` differs); P2: the bilinear layer (``σ`` = identity,
#: exchange-symmetric) against each nonlinear gated form; control: each gated form against its symmetrised
#: control ``½[σ(a) b + σ(b) a]`` (same ``σ``, parameters and shapes; only the exchange symmetry differs).
PRIMARY: dict[str, tuple[tuple[str, str], ...]] = {
    "P1": (("ReGLU", "symmetric (ReLU)"), ("GEGLU", "symmetric (GELU)"), ("SwiGLU", "symmetric (SiLU)")),
    "P2": (("bilinear (σ = id)", "ReGLU"), ("bilinear (σ = id)", "GEGLU"), ("bilinear (σ = id)", "SwiGLU")),
    "control": (("GEGLU", "symmetrised (GELU)"), ("SwiGLU", "symmetrised (SiLU)")),
}

#: Exploratory comparisons (no correction for multiplicity): the sigmoid GLU and tanh gating against the bilinear
#: layer (Shazeer's GLU was behind it), and each symmetrised control against the symmetric form with the same ``σ``.
EXPLORATORY: tuple[tuple[str, str], ...] = (
    ("GLU (sigmoid)", "bilinear (σ = id)"),
    ("tanh gating", "bilinear (σ = id)"),
    ("symmetrised (GELU)", "symmetric (GELU)"),
    ("symmetrised (SiLU)", "symmetric (SiLU)"),
)

#: Every pair of chapter 14's matched-pairs table: the primary comparisons, then the exploratory ones.
MATCHED_PAIRS: tuple[tuple[str, str], ...] = (*[p for pairs in PRIMARY.values() for p in pairs], *EXPLORATORY)


def width_for_budget(form: str, d: int, d_out: int, budget: int) -> int:
    """The hidden width ``m`` whose block has closest to ``budget`` parameters (at least 1)."""
    kind, _, rank = _form(form)
    per_unit = {"kv": d + d_out, "gated": 2 * d + d_out, "symmetrised": 2 * d + d_out, "bilinear": 2 * rank * d + d_out}
    per_unit = per_unit[kind]
    return max(1, round(budget / per_unit))


def _form(form: str) -> tuple[str, str, int]:
    if form not in FORMS:
        raise ValueError(f"form: expected one of {list(FORMS)}, got {form!r}")
    return FORMS[form]


class Model(nn.Module):
    """``f(x) = x Sᵀ + c + block(x)``: the shared affine skip path plus the form's block.

    ``S`` is drawn from ``N(0, 1/d)`` (fan-in ``d``, the initialisation of every
    weight of the package) from torch's global generator, after the block; ``c = 0``.
    """

    def __init__(self, block: FeedForward, d_out: int) -> None:
        super().__init__()
        self.block = block
        self.skip = nn.Linear(block.d, d_out, dtype=block.V.dtype)
        with torch.no_grad():
            self.skip.weight.copy_(torch.randn(d_out, block.d, dtype=block.V.dtype) / block.d**0.5)
            self.skip.bias.zero_()

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
    elif kind == "symmetrised":
        block = SymmetrisedGatedMLP(d, m, d_out, activation=act, dtype=torch.float64)
    else:
        block = BilinearMLP(d, m, d_out, rank=rank, activation=act, dtype=torch.float64)
    return Model(block, d_out)


def plain_budget(task: Task, reference_width: int) -> int:
    """The parameter budget ``m₀ (d + d_out)`` of a standard MLP block of width ``m₀ = reference_width`` on ``task``.

    With this budget the standard MLP has width exactly ``m₀``; a rank-1 or gated
    block gets ``m ≈ m₀ (d + d_out) / (2d + d_out)`` units (Shazeer's rule: 2/3
    of ``m₀`` when ``d_out = d``) and a rank-``R`` block
    ``m ≈ m₀ (d + d_out) / (2Rd + d_out)`` (:func:`width_for_budget`).
    """
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    if isinstance(reference_width, bool) or not isinstance(reference_width, int) or reference_width < 1:
        raise ValueError(f"reference_width: expected an int >= 1, got {reference_width!r}")
    return reference_width * (task.d + task.d_out)
