"""How far the conserved quantities move over whole runs: drift, the diagonal's allowance, slopes and rates.

* :func:`charge_drift` — ``max_j |c_j(S) − c_j(0)|`` over a sweep of learning rates;
* :func:`diagonal_gap_bound` — the rounding allowance of the gap after a run on the diagonal
  (``thm-invariant-diagonal``);
* :func:`loglog_slope`, :func:`exponential_rate` — least-squares fits of a power law and an exponential.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch

from symbreak.dynamics._base import _check_layer
from symbreak.dynamics.charges import norm_differences
from symbreak.dynamics.training import History, train
from symbreak.layers import FeedForward
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
