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

import contextlib
import copy
import math
from collections.abc import Iterator, Sequence
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
    "plain_budget",
    "train_seeds",
    "Comparison",
    "compare_seeds",
    "torch_threads",
    "final_decrease",
    "swap_rounding_ratio",
    "interval_text",
    "summary_rows",
    "budget_rows",
    "PROTOCOL",
    "welch_difference",
    "ranking",
    "difference_rows",
    "form_verdicts",
    "odd_target_parts",
    "odd_target_floor",
    "training_error",
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
    return _evaluate(task, form, seed, model, losses[-1])


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


# --- Seeds trained together, checkpoints and tables (chapter 14) -----------------------------------------------


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


def _check_steps(steps: object, checkpoints: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps!r}")
    for c in checkpoints:
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= steps:
            raise ValueError(f"checkpoints: expected ints in [1, steps = {steps}], got {c!r}")
    return steps, tuple(sorted(set(checkpoints) | {steps}))


def _evaluate(task: Task, form: str, seed: int, model: Model, train_loss: float) -> Result:
    """The :class:`Result` of a trained ``model``: test metric and swap test, exactly as :func:`run` measures them."""
    metric = _metric(model, task.X_test, task.Y_test, task.classification)
    swap = None
    if isinstance(model.block, (BilinearMLP, GatedMLP)):
        swapped = copy.deepcopy(model)
        swapped.block = exchange(model.block)
        swap = _metric(swapped, task.X_test, task.Y_test, task.classification) - metric
    n_params = sum(p.numel() for p in model.parameters())
    return Result(task.name, form, seed, model.block.m, n_params, train_loss, metric, swap)


def train_seeds(
    task: Task,
    form: str,
    seeds: Sequence[int],
    *,
    budget: int,
    steps: int,
    lr: float,
    checkpoints: Sequence[int] = (),
) -> tuple[dict[int, list[Result]], np.ndarray, list[Model]]:
    """Train one model of ``form`` per seed, all seeds in one batched computation.

    The models are those of :func:`make_model` (same seeds, same
    initialisation); their parameters are stacked along a leading seed axis
    and evaluated with ``torch.vmap``.  The loss minimised is
    ``Σ_s L_s(θ_s)``, whose gradient with respect to ``θ_s`` is ``∇L_s(θ_s)``,
    and Adam acts entry by entry, so in exact arithmetic every seed follows
    :func:`train_model` step for step; only the rounding of the batched
    kernels may differ.

    Returns ``(results, losses, models)``: ``results[c]`` holds one
    :class:`Result` per seed measured after ``c`` steps, for every ``c`` in
    ``checkpoints`` and for ``c = steps``; ``losses[s, t]`` is seed ``s``'s
    training loss at step ``t``; ``models`` are the trained models.
    """
    steps, points = _check_steps(steps, checkpoints)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: expected at least one seed, got none")
    models = [make_model(form, task.d, task.d_out, budget, s) for s in seeds]
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def forward(p: dict, b: dict, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(base, (p, b), (x,))

    def loss_of(out: torch.Tensor) -> torch.Tensor:
        if task.classification:
            return nn.functional.cross_entropy(out, task.Y_train.squeeze(-1))
        return ((out - task.Y_train) ** 2).mean()

    batched = torch.vmap(forward, in_dims=(0, 0, None))
    per_seed_loss = torch.vmap(loss_of)
    opt = torch.optim.Adam(list(params.values()), lr=lr)
    history = torch.empty(steps, len(seeds), dtype=torch.float64)
    results: dict[int, list[Result]] = {}
    for t in range(1, steps + 1):
        opt.zero_grad(set_to_none=True)
        losses = per_seed_loss(batched(params, buffers, task.X_train))
        losses.sum().backward()
        opt.step()
        history[t - 1] = losses.detach()
        if t in points:
            with torch.no_grad():
                for i, model in enumerate(models):
                    for name, p in model.named_parameters():
                        p.copy_(params[name][i])
            results[t] = [
                _evaluate(task, form, s, model, float(history[t - 1, i]))
                for i, (s, model) in enumerate(zip(seeds, models, strict=True))
            ]
    return results, history.T.numpy().copy(), models


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the ``with`` block under ``torch.set_num_threads(threads)``, restored afterwards; ``None`` changes nothing.

    The book's kernels are small: on one thread they are fastest, and on a
    busy machine several threads per process oversubscribe the cores, which
    slows them down many times over.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads: expected None or an int >= 1, got {threads!r}")
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_seeds` measured.

    ``results[c]``: every (task, form, seed) :class:`Result` after ``c`` steps;
    ``curves[(task, form)]``: training losses, shape ``(seeds, steps)``;
    ``models[(task, form, seed)]``: the trained models; ``budgets[task]``: the
    parameter budget of the blocks on that task.
    """

    results: dict[int, list[Result]]
    curves: dict[tuple[str, str], np.ndarray]
    models: dict[tuple[str, str, int], Model]
    budgets: dict[str, int]


def compare_seeds(
    tasks: Sequence[Task],
    forms: Sequence[str],
    seeds: Sequence[int],
    *,
    reference_width: int,
    steps: int,
    lr: float,
    checkpoints: Sequence[int] = (),
    threads: int | None = None,
) -> Comparison:
    """Every (task, form) with all ``seeds`` trained together (:func:`train_seeds`).

    The budget on each task is :func:`plain_budget` (a plain MLP of width
    ``reference_width``).  ``threads`` sets ``torch.set_num_threads`` for the
    duration of the call (restored afterwards); ``None`` leaves it alone.
    """
    if len(seeds) < 2:
        raise ValueError(f"seeds: expected at least 2 seeds for an interval, got {len(seeds)}")
    for form in forms:
        _form(form)
    _, points = _check_steps(steps, checkpoints)
    with torch_threads(threads):
        results: dict[int, list[Result]] = {c: [] for c in points}
        curves, models, budgets = {}, {}, {}
        for task in tasks:
            budgets[task.name] = plain_budget(task, reference_width)
            for form in forms:
                res, losses, trained = train_seeds(
                    task, form, seeds, budget=budgets[task.name], steps=steps, lr=lr, checkpoints=checkpoints
                )
                for c in points:
                    results[c].extend(res[c])
                curves[(task.name, form)] = losses
                models.update({(task.name, form, s): m for s, m in zip(seeds, trained, strict=True)})
    return Comparison(results, curves, models, budgets)


def final_decrease(losses: np.ndarray, fraction: float = 0.1) -> float:
    """How much the seed-mean training loss ``L̄_t`` still fell over the last ``fraction`` of the steps.

    Returns ``(L̄_{T−k} − L̄_T) / L̄_{T−k}`` with ``T`` the number of steps and
    ``k = max(1, round(fraction · T))``: 0 on a plateau, 1 when the loss was
    still dropping to zero.
    """
    values = np.asarray(losses, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"losses: expected shape (seeds, steps) with steps >= 2, got {values.shape}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction: expected a number in (0, 1), got {fraction!r}")
    mean = values.mean(axis=0)
    k = max(1, round(fraction * mean.size))
    return float((mean[-1 - k] - mean[-1]) / mean[-1 - k])


def swap_rounding_ratio(model: Model, X: torch.Tensor) -> float:
    """``max |g(X) − f(X)| / (β_f(X) + β_g(X))`` for the block ``f`` of ``model`` and its exchange ``g``.

    ``β`` is :func:`symbreak.numerics.forward_error_bound`.  When ``f`` is
    exchange-symmetric the two compute the same exact function, so the ratio is
    at most 1 (``thm-exchange``); a ratio above 1 means the exchange changed the
    function.
    """
    from symbreak.numerics import forward_error_bound

    if not isinstance(model, Model) or not isinstance(model.block, (BilinearMLP, GatedMLP)):
        raise TypeError(f"model: expected a Model with a BilinearMLP or GatedMLP block, got {type(model).__name__}")
    swapped = exchange(model.block)
    with torch.no_grad():
        difference = (swapped(X) - model.block(X)).abs()
    bound = forward_error_bound(model.block, X) + forward_error_bound(swapped, X)
    return float((difference / bound).max())


def interval_text(mean: float, half: float, fmt: str = ".3f", scale: float = 1.0, suffix: str = "") -> str:
    """``"{scale·mean} ± {scale·half}{suffix}"``, both numbers formatted by ``fmt``.

    A ``+`` in ``fmt`` signs the mean only; a mean that rounds to zero is shown
    as zero, without the sign of a negative rounding error (``-0.000``).
    """
    text = f"{scale * mean:{fmt}}"
    if float(text) == 0:
        text = f"{0.0:{fmt}}"
    return f"{text} ± {scale * half:{fmt.replace('+', '')}}{suffix}"


def summary_rows(
    results: Sequence[Result],
    tasks: Sequence[str],
    forms: Sequence[str],
    field: str = "test_metric",
    formats: dict[str, tuple[str, float, str]] | None = None,
    level: float = 0.95,
) -> list[list[str]]:
    """One row per form: its name, then ``mean ± half-width`` of ``field`` on each task (:func:`summarise`).

    ``formats[task] = (fmt, scale, suffix)`` formats a task's cells with
    :func:`interval_text` (default ``(".3f", 1.0, "")``); a (task, form) without
    values (the swap test of a plain MLP) reads ``—``.
    """
    summary = summarise(results, field, level)
    formats = formats or {}
    rows = []
    for form in forms:
        row = [form]
        for task in tasks:
            if (task, form) in summary:
                mean, half, _ = summary[(task, form)]
                row.append(interval_text(mean, half, *formats.get(task, (".3f", 1.0, ""))))
            else:
                row.append("—")
        rows.append(row)
    return rows


def budget_rows(results: Sequence[Result], tasks: Sequence[str], forms: Sequence[str]) -> list[list[str]]:
    """One row per form: its name, then the hidden width ``m`` and the model's parameter count on each task."""
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for r in results:
        seen.setdefault((r.task, r.form), (r.width, r.parameters))
    rows = []
    for form in forms:
        row = [form]
        for task in tasks:
            if (task, form) not in seen:
                raise ValueError(f"results: expected a result for ({task!r}, {form!r}), found none")
            m, p = seen[(task, form)]
            row += [str(m), f"{p:,}"]
        rows.append(row)
    return rows


#: The protocol of the book's comparison (chapters 14 and 15), fixed once for every form and task:
#: plain-MLP reference width ``m₀`` of the budget (:func:`plain_budget`), full-batch Adam steps and learning
#: rate, the earlier checkpoint, the seeds, and one torch thread (small kernels; no oversubscription).
PROTOCOL: dict[str, object] = {
    "reference_width": 32,
    "steps": 200,
    "lr": 1e-2,
    "checkpoints": (50,),
    "seeds": (0, 1, 2, 3, 4),
    "threads": 1,
}


def welch_difference(
    results: Sequence[Result], task: str, form_a: str, form_b: str, field: str = "test_metric", level: float = 0.95
) -> tuple[float, float, float]:
    """``(mean_a − mean_b, half-width, ν)``: the difference of two forms' means of ``field`` on ``task``.

    The interval is Welch's: ``half = t_{ν, (1+level)/2} · √(s_a²/n_a + s_b²/n_b)`` with the
    Welch–Satterthwaite degrees of freedom
    ``ν = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))``.
    """
    samples = []
    for form in (form_a, form_b):
        values = [getattr(r, field) for r in results if r.task == task and r.form == form]
        if len(values) < 2 or any(v is None for v in values):
            raise ValueError(f"results: expected at least 2 values of {field!r} for ({task!r}, {form!r}), got {values}")
        samples.append(np.asarray(values, dtype=float))
    a, b = samples
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        return float(a.mean() - b.mean()), 0.0, float("inf")
    nu = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = float(stats.t.ppf((1 + level) / 2, nu) * math.sqrt(va + vb))
    return float(a.mean() - b.mean()), half, float(nu)


def ranking(results: Sequence[Result], task: str, forms: Sequence[str], field: str = "test_metric") -> list[str]:
    """The ``forms`` ordered by their mean ``field`` on ``task``, smallest (best) first."""
    summary = summarise(results, field)
    missing = [f for f in forms if (task, f) not in summary]
    if missing:
        raise ValueError(f"results: expected values of {field!r} on {task!r} for {missing}, found none")
    return sorted(forms, key=lambda f: summary[(task, f)][0])


def difference_rows(
    results: Sequence[Result],
    tasks: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    fmt: str = "+.3f",
    field: str = "test_metric",
    scale: float = 1.0,
    level: float = 0.95,
) -> list[list[str]]:
    """One row per pair ``(a, b)``: ``"a − b"``, then :func:`welch_difference` on each task as ``"Δ ± half"``."""
    rows = []
    for form_a, form_b in pairs:
        row = [f"{form_a} − {form_b}"]
        for task in tasks:
            diff, half, _ = welch_difference(results, task, form_a, form_b, field, level)
            row.append(f"{scale * diff:{fmt}} ± {scale * half:{fmt.lstrip('+')}}")
        rows.append(row)
    return rows


def form_verdicts(form: str, symmetries: Sequence[str] = ("exchange", "scale_pos", "parity")) -> dict[str, bool | None]:
    """Which of ``symmetries`` the block of ``form`` keeps for all weights and inputs (:mod:`symbreak.verdicts`).

    A rank-1 block is the verdicts' ``"rank1"`` form, a rank-``R > 1`` block
    the ``"full"`` form (its scores are quadratic forms ``x W_j xᵀ``, for which
    the verdicts hold for every ``W_j``), a gated block ``"gated"`` and a plain
    MLP ``"kv"`` (which has no query: exchange and inverse scaling are ``None``).
    """
    from symbreak.verdicts import verdict

    kind, act, rank = _form(form)
    table_form = {"kv": "kv", "gated": "gated", "bilinear": "rank1" if rank == 1 else "full"}[kind]
    return {s: verdict(table_form, s, act).holds for s in symmetries}


def odd_target_parts(
    *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0
) -> tuple[FullBilinearMLP, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The pieces of :func:`make_task`'s ``"odd target"``: ``(teacher, U, mean, std)``.

    The target of a token is ``y(x) = (T(x) + tanh(x U) − mean) / std``, with the
    even teacher ``T`` (full bilinear attention) and the odd part ``tanh(x U)``;
    ``mean`` and ``std`` are the training-set statistics.  The draws repeat
    :func:`make_task`'s, so the same arguments give the same target.
    """
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n_train + n_test, d, generator=g, dtype=torch.float64)
    W = torch.randn(16, d, d, generator=g, dtype=torch.float64) / d
    V = torch.randn(16, 4, generator=g, dtype=torch.float64) / 4
    teacher = FullBilinearMLP.from_weights(W, V, activation="silu")
    U = torch.randn(d, 4, generator=g, dtype=torch.float64) / math.sqrt(d)
    with torch.no_grad():
        Y = teacher(X) + torch.tanh(X @ U)  # on every token, as make_task computes it
    return teacher, U, Y[:n_train].mean(0), Y[:n_train].std(0)


def odd_target_floor(
    *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0, samples: int = 100_000, sample_seed: int = 1
) -> float:
    """The error no model ``even block + affine map`` can beat on the odd target, relative to the target variance.

    For ``x ~ N(0, I_d)`` and any model ``f(x) = e(x) + x Sᵀ + c`` with ``e`` even, the
    target's odd part is ``y_o(x) = tanh(x U) / std`` and the model's odd part is
    ``x Sᵀ``, so (``cor-parity-comparison``)
    ``E‖y − f‖² ≥ min_S E‖y_o(x) − x Sᵀ‖²``.  Returned: that minimum, by least
    squares on ``samples`` Gaussian tokens drawn from ``sample_seed``, divided by
    the variance of the target's entries on the same tokens (the normalisation of
    the test metric).
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 10 * d:
        raise ValueError(f"samples: expected an int >= 10·d = {10 * d}, got {samples!r}")
    teacher, U, mean, std = odd_target_parts(n_train=n_train, n_test=n_test, d=d, seed=seed)
    g = torch.Generator().manual_seed(sample_seed)
    X = torch.randn(samples, d, generator=g, dtype=torch.float64)
    with torch.no_grad():
        odd = torch.tanh(X @ U) / std
        Y = (teacher(X) + torch.tanh(X @ U) - mean) / std
    S = torch.linalg.lstsq(X, odd).solution
    return float(((odd - X @ S) ** 2).mean() / Y.var())


def training_error(model: Model, task: Task) -> float:
    """The model's error on its own training set, measured as the test metric is (error rate or MSE / variance)."""
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a Model, got {type(model).__name__}")
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    return _metric(model, task.X_train, task.Y_train, task.classification)
