"""The low-rank tasks of chapter 14: full-rank quadratic targets, their floor (Eckart–Young) and the least-squares fit.

A target output is ``y_o(x) = (x A_o xᵀ − tr A_o + odd · tanh(x u_o)) / s_o`` for
``x ~ N(0, I_d)``, with ``A_o`` a random symmetric ``d × d`` matrix (full rank with
probability 1), ``u_o ∈ R^d`` and ``s_o`` the exact population standard deviation,
so every output has mean 0 and variance 1 *in the population*.

The floor (``thm-lowrank-floor``): a model whose block has ``m`` units, each a
function of ``r`` projections ``x P_j`` of the input (``r = 1`` for the standard MLP,
``r = 2`` for the symmetric rank-1, gated and symmetrised blocks, ``r = 2R`` for
rank ``R``), plus any affine map, has expected squared error on output ``o`` at least
``2 Σ_{i > rm} λ_(i)(A_o)² / s_o²`` (eigenvalues ordered by decreasing ``|λ|``):
:func:`rank_floor`.  The least-squares fit on the features ``[1, x, x_a x_b]``
(:func:`quadratic_features`, :func:`least_squares_error`) is the unconstrained
quadratic model the blocks are measured against.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from symbreak.experiments.tasks import Task

__all__ = [
    "LOWRANK_TASKS",
    "LowRankTarget",
    "make_target",
    "make_lowrank_task",
    "rank_floor",
    "span_floor",
    "block_floor",
    "second_chaos",
    "quadratic_features",
    "least_squares_error",
    "tanh_second_moment",
]

#: The low-rank tasks: name → amplitude of the odd part ``tanh(x u_o)`` (before standardisation).
LOWRANK_TASKS: dict[str, float] = {"full-rank quadratic": 0.0, "quadratic + odd": 1.0}


@functools.lru_cache(maxsize=8)
def _hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``nodes`` points and weights of probabilists' Gauss–Hermite quadrature, read-only: worked out once (an
    eigenvalue problem of size ``nodes``, which chapter 14 asked for 480 times, 4 s of its run)."""
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    z.flags.writeable = w.flags.writeable = False
    return z, w


def tanh_second_moment(scale: float, nodes: int = 80) -> float:
    """``E tanh(scale · z)²`` for ``z ~ N(0, 1)`` by Gauss–Hermite quadrature with ``nodes`` nodes."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale >= 0):
        raise ValueError(f"scale: expected a finite number >= 0, got {scale!r}")
    z, w = _hermite_rule(nodes)
    return float((w * np.tanh(scale * z) ** 2).sum() / math.sqrt(2 * math.pi))


@dataclass(frozen=True)
class LowRankTarget:
    """The target's parts: ``A`` (``d_out × d × d``, symmetric), ``U`` (``d × d_out``), the odd amplitude and
    the exact standard deviations ``s`` of the outputs."""

    A: torch.Tensor
    U: torch.Tensor
    odd: float
    s: torch.Tensor

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        """``y(X)``, one row per token."""
        quad = torch.einsum("nd,ode,ne->no", X, self.A, X) - torch.diagonal(self.A, dim1=1, dim2=2).sum(-1)
        return (quad + self.odd * torch.tanh(X @ self.U)) / self.s


def make_target(d: int, d_out: int, odd: float, generator: torch.Generator) -> LowRankTarget:
    """A random target: ``A_o = (G + Gᵀ) / (2√d)`` with ``G`` standard normal, ``u_o ~ N(0, I/d)``.

    Its population variance is exact: ``Var y_o = 2‖A_o‖_F² + odd² E tanh(x u_o)²`` (the two parts
    are uncorrelated, one even and one odd in ``x``; ``E(x A xᵀ − tr A)² = 2‖A‖_F²``).
    """
    for name, value in (("d", d), ("d_out", d_out)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
    G = torch.randn(d_out, d, d, generator=generator, dtype=torch.float64)
    A = (G + G.transpose(1, 2)) / (2 * math.sqrt(d))
    U = torch.randn(d, d_out, generator=generator, dtype=torch.float64) / math.sqrt(d)
    var = 2 * (A**2).sum((1, 2))
    odd_var = torch.tensor([tanh_second_moment(float(u)) for u in torch.linalg.norm(U, dim=0)], dtype=torch.float64)
    return LowRankTarget(A, U, float(odd), torch.sqrt(var + odd**2 * odd_var))


def make_lowrank_task(
    name: str, *, d: int, d_out: int, n_train: int, n_val: int, n_test: int, seed: int
) -> tuple[Task, Task, LowRankTarget]:
    """``(train/test task, train/validation task, target)`` of task ``name``, all drawn from ``seed``.

    The seed draws the target (teacher) and the tokens from one generator of its own
    (``torch.Generator().manual_seed(10_000 + seed)``), separate from torch's global
    generator that draws a model's weights.  No empirical standardisation: the
    target is standardised exactly in the population (:func:`make_target`).
    """
    if name not in LOWRANK_TASKS:
        raise ValueError(f"name: expected one of {list(LOWRANK_TASKS)}, got {name!r}")
    g = torch.Generator().manual_seed(10_000 + seed)
    target = make_target(d, d_out, LOWRANK_TASKS[name], g)
    X = torch.randn(n_train + n_val + n_test, d, generator=g, dtype=torch.float64)
    Y = target(X)
    tr, va = slice(0, n_train), slice(n_train, n_train + n_val)
    te = slice(n_train + n_val, None)
    test = Task(name, X[tr], Y[tr], X[te], Y[te], False)
    val = Task(name, X[tr], Y[tr], X[va], Y[va], False)
    return test, val, target


def rank_floor(target: LowRankTarget, rank: int) -> float:
    """``(1/d_out) Σ_o 2 Σ_{i > rank} λ_(i)(A_o)² / s_o²``: the mean over outputs of the floor of ``thm-lowrank-floor``.

    Relative to the target's population variance (1 per output).  ``rank`` is
    ``r·m``, the number of projections of the input the block can use.
    """
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        raise ValueError(f"rank: expected an int >= 0, got {rank!r}")
    lam = torch.linalg.eigvalsh(target.A)  # (d_out, d), ascending
    tail = torch.sort(lam.abs(), dim=-1, descending=True).values[:, rank:]
    return float((2 * (tail**2).sum(-1) / target.s**2).mean())


def _standardised_forms(target: LowRankTarget) -> torch.Tensor:
    return target.A / target.s[:, None, None]


def span_floor(target: LowRankTarget, units: int) -> float:
    """``(2/d_out) Σ_{i > units} μ_i``, ``μ`` the eigenvalues of the Gram matrix ``⟨A_o/s_o, A_p/s_p⟩_F`` (descending).

    The floor of ``thm-lowrank-floor`` from the block's ``m = units`` shared hidden units: every output's
    second-chaos form lies in the span of the ``m`` units' forms ``C_j``, and no ``m``-dimensional space of
    matrices is closer to the ``A_o`` than their first ``m`` principal components.
    """
    if isinstance(units, bool) or not isinstance(units, int) or units < 0:
        raise ValueError(f"units: expected an int >= 0, got {units!r}")
    F = _standardised_forms(target).flatten(1)
    mu = torch.sort(torch.linalg.eigvalsh(F @ F.T), descending=True).values[units:]
    return float(2 * mu.clamp(min=0).sum() / F.shape[0])


def block_floor(target: LowRankTarget, projections: int, units: int) -> float:
    """The larger of :func:`rank_floor` at ``projections · units`` and :func:`span_floor` at ``units``."""
    return max(rank_floor(target, projections * units), span_floor(target, units))


def second_chaos(values: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """``½ mean_n h(x_n) (x_nᵀ x_n − I)``: the Monte Carlo estimate of the form ``C`` of ``h``'s second-chaos part.

    For ``x ~ N(0, I_d)`` the projection of ``h`` onto the functions ``x B xᵀ − tr B`` is ``x C xᵀ − tr C`` with
    ``C = ½ E[h(x)(xᵀx − I)]``; ``values`` holds ``h(x_n)`` (one row per token, a column per function).
    """
    if values.ndim != 2 or X.ndim != 2 or values.shape[0] != X.shape[0]:
        raise ValueError(f"values, X: expected (n, k) and (n, d) tensors, got {tuple(values.shape)}, {tuple(X.shape)}")
    outer = X[:, :, None] * X[:, None, :] - torch.eye(X.shape[1], dtype=X.dtype)
    return 0.5 * torch.einsum("nk,nde->kde", values, outer) / X.shape[0]


def quadratic_features(X: torch.Tensor) -> torch.Tensor:
    """``[1, x, x_a x_b (a ≤ b)]``: ``1 + d + d(d+1)/2`` features per token."""
    if not isinstance(X, torch.Tensor) or X.ndim != 2:
        raise ValueError(f"X: expected a 2-d tensor (tokens × d), got {getattr(X, 'shape', type(X).__name__)}")
    a, b = torch.triu_indices(X.shape[1], X.shape[1])
    return torch.cat([torch.ones_like(X[:, :1]), X, X[:, a] * X[:, b]], dim=1)


def least_squares_error(task: Task, quadratic: bool = True) -> float:
    """Test MSE / variance of the least-squares fit on the training set of ``[1, x, x_a x_b]`` (or ``[1, x]``)."""
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")

    def feats(X):
        return quadratic_features(X) if quadratic else torch.cat([torch.ones_like(X[:, :1]), X], dim=1)

    coef = torch.linalg.lstsq(feats(task.X_train), task.Y_train, driver="gelsd").solution
    residual = feats(task.X_test) @ coef - task.Y_test
    return float((residual**2).mean() / task.Y_test.var())
