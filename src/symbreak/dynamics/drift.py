"""How far the conserved quantities move over whole runs: drift, the diagonal's allowance, slopes and rates.

* :func:`charge_drift` — ``max_j |c_j(S) − c_j(0)|`` over a sweep of learning rates, and
  :func:`step_sweep` (:class:`StepSweep`) — after one step and over a fixed training time;
* :func:`drift_and_allowance` — a recorded run's drift and its allowance ``η² Σ_t ‖∇L_t‖²``;
* :func:`momentum_flow_settings` — heavy ball as a discretised momentum flow;
* :func:`diagonal_gap_bound` — the rounding allowance of the gap after a run on the diagonal
  (``thm-invariant-diagonal``), and :func:`one_unit_gap` — the converse's one-unit construction;
* :func:`loglog_slope`, :func:`exponential_rate` — least-squares fits of a power law and an exponential;
  :func:`decay_rates`, :func:`discrete_decay_rate` — fitted and predicted decay under weight decay.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from symbreak.dynamics._base import _check_layer
from symbreak.dynamics.charges import norm_differences
from symbreak.dynamics.training import History, train
from symbreak.layers import FeedForward, GatedMLP
from symbreak.numerics import gamma


def charge_drift(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    lrs: Sequence[float],
    steps: Sequence[int],
    pair: str,
    optimizer: str = "gd",
    momenta: float | Sequence[float] = 0.9,
    weight_decay: float = 0.0,
) -> list[float]:
    """``max_j |c_j(S_i) − c_j(0)|`` after training a copy of ``layer`` for ``steps[i]`` steps at ``lrs[i]``.

    One run per ``i``, each from the same start (``layer`` is not changed), with
    :func:`train`'s ``optimizer``; ``momenta`` is the heavy-ball ``μ``, one for all
    runs or one per run.  ``pair`` is ``"qk"`` or ``"kv"``.
    """
    layer = _check_layer(layer)
    if pair not in ("qk", "kv"):
        raise ValueError(f"pair: expected 'qk' or 'kv', got {pair!r}")
    if len(lrs) != len(steps):
        raise ValueError(f"steps: expected one step count per learning rate ({len(lrs)}), got {len(steps)}")
    mus = [float(momenta)] * len(lrs) if isinstance(momenta, (int, float)) else list(momenta)
    if len(mus) != len(lrs):
        raise ValueError(f"momenta: expected one μ or one per learning rate ({len(lrs)}), got {len(mus)}")
    drifts = []
    for lr, n_steps, mu in zip(lrs, steps, mus, strict=True):
        run = copy.deepcopy(layer)
        start = norm_differences(run)[pair]
        train(
            run,
            X,
            Y,
            lr=lr,
            steps=n_steps,
            optimizer=optimizer,
            momentum=mu,
            weight_decay=weight_decay,
            record_every=max(n_steps, 1),
        )
        drifts.append(float((norm_differences(run)[pair] - start).abs().max()))
    return drifts


def _positive_ints(name: str, values: Sequence[int]) -> list[int]:
    values = list(values)
    if not values or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in values):
        raise ValueError(f"{name}: expected a non-empty sequence of ints >= 1, got {values!r}")
    return values


@dataclass
class StepSweep:
    """The drift of one charge against the step size ``η_i = T/S_i`` (:func:`step_sweep`).

    ``one_step[i]`` is ``max_j |c_j(1) − c_j(0)|`` after one step of ``η_i``, ``fixed_time[i]``
    is ``max_j |c_j(S_i) − c_j(0)|`` after ``S_i`` steps (training time ``T``), both from the
    same start; the slopes are their log–log slopes against ``η`` (:func:`loglog_slope`).
    """

    steps: list[int]
    lrs: list[float]
    one_step: list[float]
    fixed_time: list[float]
    one_step_slope: float
    fixed_time_slope: float


def step_sweep(
    layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, *, duration: float, steps: Sequence[int], pair: str
) -> StepSweep:
    """The charge ``pair`` of ``layer`` after one step and after a fixed training time ``T = S η``, per ``S``.

    ``η = T/S`` for each ``S`` of ``steps``; gradient descent without weight decay, each run
    from the same start (:func:`charge_drift`; ``layer`` is not changed).  Claim
    ``thm-conservation``: for a conserved charge one step drifts by ``O(η²)`` (slope 2) and a
    fixed time by ``O(η)`` (slope 1); for a broken one, slopes 1 and 0.
    """
    steps = _positive_ints("steps", steps)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not duration > 0:
        raise ValueError(f"duration: expected a real number > 0, got {duration!r}")
    lrs = [duration / s for s in steps]
    one_step = charge_drift(layer, X, Y, lrs=lrs, steps=[1] * len(lrs), pair=pair)
    fixed_time = charge_drift(layer, X, Y, lrs=lrs, steps=steps, pair=pair)
    return StepSweep(steps, lrs, one_step, fixed_time, loglog_slope(lrs, one_step), loglog_slope(lrs, fixed_time))


def drift_and_allowance(history: History, pair: str, *, lr: float) -> tuple[float, float]:
    """``(max_j |c_j(S) − c_j(0)|, η² Σ_{t<S} ‖∇L(θ_t)‖²)`` for a gradient-descent run recorded at every step.

    By the one-step identity of ``thm-conservation`` with ``λ = 0``, a conserved charge moves over
    the run by exactly ``η² Σ_t (‖g_a‖² − ‖g_b‖²)``, which is at most the allowance.
    """
    if not history.steps or history.steps != list(range(len(history.steps))):
        raise ValueError(f"history: expected a run recorded at every step, got steps {history.steps[:4]}…")
    if not lr > 0:
        raise ValueError(f"lr: expected a positive learning rate, got {lr}")
    charge = history.as_tensor(pair)
    drift = (charge[-1] - charge[0]).abs().max().item()
    return drift, lr**2 * sum(g**2 for g in history.grad_norm[:-1])


def momentum_flow_settings(steps: Sequence[int], damping: float) -> tuple[list[float], list[float]]:
    """``(η_i, μ_i)`` that make heavy ball the momentum flow ``θ̈ + γθ̇ = −∇L`` over ``S_i`` steps.

    The time step is ``h = γ/S`` (so that the overdamped limit ``θ̇ = −∇L/γ`` covers gradient-flow
    time 1), with ``η = h²`` and ``μ = 1 − γh`` (``rem-momentum-charge``); ``damping`` is ``γ``.
    """
    steps = _positive_ints("steps", steps)
    if isinstance(damping, bool) or not isinstance(damping, (int, float)) or not damping > 0:
        raise ValueError(f"damping: expected a real number > 0, got {damping!r}")
    h = [damping / s for s in steps]
    return [x * x for x in h], [1 - damping * x for x in h]


def _paired_series(names: str, x: Sequence[float], y: Sequence[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` and ``y`` as float64 vectors, checked to be 1-d, of equal length and at least 2 long."""
    xs = torch.as_tensor(x, dtype=torch.float64)
    ys = torch.as_tensor(y, dtype=torch.float64)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.numel() < 2:
        raise ValueError(
            f"{names}: expected two 1-d sequences of equal length >= 2, got {tuple(xs.shape)} and {tuple(ys.shape)}"
        )
    return xs, ys


def _least_squares_slope(u: torch.Tensor, v: torch.Tensor) -> float:
    """The slope of the least-squares line ``v ≈ p u + c``."""
    u0 = u - u.mean()
    return float((u0 * (v - v.mean())).sum() / (u0**2).sum())


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope ``p`` of ``log y ≈ p log x + c`` (``y ∝ x^p``)."""
    xs, ys = _paired_series("x, y", x, y)
    if not bool((xs > 0).all() and (ys > 0).all()):
        raise ValueError("x, y: expected positive values for a log–log fit")
    return _least_squares_slope(xs.log(), ys.log())


def exponential_rate(t: Sequence[float], c: Sequence[float]) -> float:
    """The rate ``ρ`` of the least-squares fit ``log|c(t)| ≈ log|c(0)| − ρ t`` (``c ∝ e^{−ρ t}``)."""
    ts, cs = _paired_series("t, c", t, c)
    if not bool((cs > 0).all() or (cs < 0).all()):
        raise ValueError("c: expected values of one sign (an exponential never crosses zero)")
    return -_least_squares_slope(ts, cs.abs().log())


def decay_rates(history: History, pair: str, *, lr: float) -> list[float]:
    """Per unit, the fitted decay rate :func:`exponential_rate` of ``c_j(t)``, ``t = s η``, along a recorded run.

    Claim ``thm-conservation``: under coupled weight decay ``λ`` a conserved charge decays like
    ``e^{−2λt}``; gradient descent gives :func:`discrete_decay_rate` plus the ``η²`` term.
    """
    if not lr > 0:
        raise ValueError(f"lr: expected a positive learning rate, got {lr}")
    time = [s * lr for s in history.steps]
    charge = history.as_tensor(pair)
    return [exponential_rate(time, charge[:, j]) for j in range(charge.shape[1])]


def discrete_decay_rate(lr: float, weight_decay: float) -> float:
    """``−2 ln(1 − ηλ)/η = 2λ + ηλ² + O(η²λ³)``: the decay of ``c`` per unit of time from ``(1 − ηλ)²`` per step."""
    if not lr > 0 or not 0 < lr * weight_decay < 1:
        raise ValueError(f"lr, weight_decay: expected η > 0 and 0 < ηλ < 1, got η={lr}, λ={weight_decay}")
    return -2 * math.log(1 - lr * weight_decay) / lr


def diagonal_gap_bound(layer: FeedForward, X: torch.Tensor, history: History, *, lr: float) -> float:
    """The rounding allowance for :func:`diagonal_gap` after a GD run started on ``q_j = k_j``.

    Claim ``thm-invariant-diagonal``.

    Exact arithmetic keeps the gap at 0; in floating point the computed ``ĝ_q``
    and ``ĝ_k`` may differ by rounding, so per step the gap may grow by
    ``2u‖θ‖_∞`` (the two rounded updates) plus ``2η γ_N max_t ‖∇L_t‖`` with
    ``N = n·d`` the length of the gradient's sums (the bound of the package's
    test of ``thm-invariant-diagonal``); over the run's ``S`` steps, ``S`` times that.
    ``θ`` is the layer after the run, the gradient norms come from ``history``.
    """
    layer = _check_layer(layer)
    if not history.grad_norm:
        raise ValueError("history: expected a recorded run, got an empty History")
    dt = X.dtype
    theta = max(float(p.detach().abs().max()) for p in layer.parameters())
    per_step = 2 * (torch.finfo(dt).eps / 2) * theta + 2 * lr * gamma(X.shape[0] * X.shape[1], dt) * max(
        history.grad_norm
    )
    return history.steps[-1] * per_step


def one_unit_gap(z0: float, *, lr: float, activation: str, v: float = 1.0, y: float = 0.0) -> float:
    """The gap ``|q' − k'|`` after one GD step of one gated unit started on the diagonal at ``q = k = z0``.

    The converse construction of ``thm-invariant-diagonal``: ``d = m = d_out = 1``, one input
    ``x = 1``, value ``v``, target ``y``, σ = ``activation``, in float64.  The proof predicts
    ``η |r v E(z0)|`` with ``r = σ(z0) z0 v − y`` and ``E(z) = z σ'(z) − σ(z)``.
    """
    for name, value in (("z0", z0), ("v", v), ("y", y)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")

    def one(value: float) -> torch.Tensor:
        return torch.tensor([[value]], dtype=torch.float64)

    unit = GatedMLP.from_weights(one(z0), one(z0), one(v), activation)
    return train(unit, one(1.0), one(y), lr=lr, steps=1).gap[1]
