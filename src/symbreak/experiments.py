"""The parameter-matched comparison of the forms (E5): tasks, models, runner and statistics.

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

Training is full-batch Adam for a fixed number of steps from a seeded
initialisation: the same configuration gives the same numbers, bit for bit.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from scipy import stats
from torch import nn

from symbreak.layers import BilinearMLP, FeedForward, FullBilinearMLP, GatedMLP, KeyValueMLP
from symbreak.symmetry import exchange

__all__ = [
    "FORMS",
    "TASKS",
    "Task",
    "Model",
    "Result",
    "width_for_budget",
    "make_task",
    "make_model",
    "train_model",
    "run",
    "compare",
    "summarise",
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
    "symmetric rank-4 (SiLU)": ("bilinear", "silu", 4),
}

#: The tasks: name → what is measured on the test set.
TASKS: dict[str, str] = {
    "digits": "test error rate (classification of scikit-learn's 8×8 digits)",
    "bilinear teacher": "test MSE / variance (teacher: full bilinear attention, SiLU)",
    "odd target": "test MSE / variance (teacher plus an odd component)",
}


@dataclass(frozen=True)
class Task:
    """Standardised train and test data of one task."""

    name: str
    X_train: torch.Tensor
    Y_train: torch.Tensor
    X_test: torch.Tensor
    Y_test: torch.Tensor
    classification: bool

    @property
    def d(self) -> int:
        return self.X_train.shape[1]

    @property
    def d_out(self) -> int:
        return self.Y_train.shape[1] if not self.classification else int(self.Y_train.max()) + 1


def _split(X: torch.Tensor, Y: torch.Tensor, n_train: int, seed: int):
    perm = torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(seed))
    return X[perm[:n_train]], Y[perm[:n_train]], X[perm[n_train:]], Y[perm[n_train:]]


def make_task(name: str, *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0) -> Task:
    """Build task ``name`` deterministically from ``seed``.

    * ``"digits"``: scikit-learn's bundled 8×8 digits (1797 images, 64 features,
      10 classes), standardised with the training statistics; ``n_train``
      training images, the rest for testing (``d`` is ignored).
    * ``"bilinear teacher"``: ``x ~ N(0, I_d)``, ``y = T(x)`` with ``T`` a random
      full bilinear attention layer (rank ``d``, SiLU, 16 units, ``d_out = 4``).
    * ``"odd target"``: the same teacher plus ``tanh(x U)`` with a random
      ``U ∈ R^{d×4}``, an odd function of ``x``.
    """
    if name not in TASKS:
        raise ValueError(f"name: expected one of {list(TASKS)}, got {name!r}")
    g = torch.Generator().manual_seed(seed)
    if name == "digits":
        from sklearn.datasets import load_digits

        data = load_digits()
        X = torch.tensor(data.data, dtype=torch.float64)
        Y = torch.tensor(data.target, dtype=torch.long).unsqueeze(-1)
        Xtr, Ytr, Xte, Yte = _split(X, Y, n_train, seed)
        mean, std = Xtr.mean(0), Xtr.std(0).clamp(min=1e-3)
        return Task(name, (Xtr - mean) / std, Ytr, (Xte - mean) / std, Yte, True)
    X = torch.randn(n_train + n_test, d, generator=g, dtype=torch.float64)
    W = torch.randn(16, d, d, generator=g, dtype=torch.float64) / d
    V = torch.randn(16, 4, generator=g, dtype=torch.float64) / 4
    teacher = FullBilinearMLP.from_weights(W, V, activation="silu")
    with torch.no_grad():
        Y = teacher(X)
        if name == "odd target":
            U = torch.randn(d, 4, generator=g, dtype=torch.float64) / math.sqrt(d)
            Y = Y + torch.tanh(X @ U)
        Y = (Y - Y[:n_train].mean(0)) / Y[:n_train].std(0)
    return Task(name, X[:n_train], Y[:n_train], X[n_train:], Y[n_train:], False)


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


def _loss(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, classification: bool) -> torch.Tensor:
    out = model(X)
    if classification:
        return nn.functional.cross_entropy(out, Y.squeeze(-1))
    return ((out - Y) ** 2).mean()


def _metric(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, classification: bool) -> float:
    """Test error rate (classification) or MSE relative to the target variance (regression)."""
    with torch.no_grad():
        out = model(X)
        if classification:
            return float((out.argmax(-1) != Y.squeeze(-1)).double().mean())
        return float(((out - Y) ** 2).mean() / Y.var())


def train_model(model: Model, task: Task, *, steps: int, lr: float) -> list[float]:
    """Full-batch Adam on the training set; returns the training loss per step."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = _loss(model, task.X_train, task.Y_train, task.classification)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@dataclass(frozen=True)
class Result:
    """One trained model: its test metric, and the swap test."""

    task: str
    form: str
    seed: int
    width: int
    parameters: int
    train_loss: float
    test_metric: float
    swap_change: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def run(task: Task, form: str, seed: int, *, budget: int, steps: int, lr: float) -> Result:
    """Train one model of ``form`` on ``task`` from ``seed``; measure its test metric and the swap test.

    The swap test exchanges ``Q ↔ K`` in the trained block and reports the
    change of the test metric, ``metric(swapped) − metric(trained)`` (``None``
    for the plain MLP, which has no query).
    """
    model = make_model(form, task.d, task.d_out, budget, seed)
    losses = train_model(model, task, steps=steps, lr=lr)
    metric = _metric(model, task.X_test, task.Y_test, task.classification)
    swap = None
    if isinstance(model.block, (BilinearMLP, GatedMLP)):
        swapped = copy.deepcopy(model)
        swapped.block = exchange(model.block)
        swap = _metric(swapped, task.X_test, task.Y_test, task.classification) - metric
    n_params = sum(p.numel() for p in model.parameters())
    return Result(task.name, form, seed, model.block.m, n_params, losses[-1], metric, swap)


def compare(
    tasks: Sequence[Task], forms: Sequence[str], seeds: Sequence[int], *, budget: int, steps: int, lr: float
) -> list[Result]:
    """Every (task, form, seed) combination, in that order."""
    if len(seeds) < 2:
        raise ValueError(f"seeds: expected at least 2 seeds for an interval, got {len(seeds)}")
    return [run(t, f, s, budget=budget, steps=steps, lr=lr) for t in tasks for f in forms for s in seeds]


def summarise(results: Sequence[Result], field: str = "test_metric", level: float = 0.95) -> dict:
    """``{(task, form): (mean, half-width of the t-interval, n)}`` of ``field`` over seeds.

    The interval is ``mean ± t_{n−1, (1+level)/2} · s / √n``.
    """
    groups: dict[tuple[str, str], list[float]] = {}
    for r in results:
        value = getattr(r, field)
        if value is not None:
            groups.setdefault((r.task, r.form), []).append(value)
    out = {}
    for key, values in groups.items():
        v = np.asarray(values, dtype=float)
        n = len(v)
        half = float(stats.t.ppf((1 + level) / 2, n - 1) * v.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        out[key] = (float(v.mean()), half, n)
    return out
