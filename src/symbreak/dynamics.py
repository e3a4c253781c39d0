"""Deterministic training on given data, the quantities the symmetries conserve, and Hessian helpers.

Everything here is full-batch and deterministic: the same layer, data and
settings give the same trajectory bit for bit.

* :func:`teacher_data` — inputs ``X ~ N(0, 1)`` and targets ``Y = teacher(X)``;
* :func:`train` — gradient descent (optionally with coupled weight decay ``λ``:
  ``θ ← θ − η(∇L + λθ)``), heavy-ball momentum or Adam, recording a
  :class:`History`;
* :func:`norm_differences` — per unit ``‖q_j‖² − ‖k_j‖²`` (``"qk"``) and
  ``‖k_j‖² − ‖v_j‖²`` (``"kv"``), summed over ``r`` at rank ``R``;
* :func:`gd_identity` — both sides of the exact one-step identity
  ``c_{t+1} = (1 − ηλ)² c_t + η² (‖g_q‖² − ‖g_k‖²)`` (``thm-conservation``);
* :func:`flat_params`, :func:`loss_hessian`, :func:`levenberg_marquardt`,
  :func:`symmetry_tangents` — the measurement of flat directions
  (``prop-flat-directions``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.func import functional_call

from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP

__all__ = [
    "teacher_data",
    "mse",
    "History",
    "train",
    "norm_differences",
    "pair_gradients",
    "gd_identity",
    "diagonal_gap",
    "flat_params",
    "set_flat_params",
    "loss_hessian",
    "gradient_norm",
    "levenberg_marquardt",
    "symmetry_tangents",
]

OPTIMIZERS = ("gd", "momentum", "adam")


def _check_layer(layer: object) -> FeedForward:
    if not isinstance(layer, FeedForward):
        raise TypeError(f"layer: expected a symbreak layer, got {type(layer).__name__}")
    return layer


def teacher_data(
    teacher: Callable[[torch.Tensor], torch.Tensor], d: int, n: int, seed: int, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """``X ∈ R^{n×d}`` with i.i.d. ``N(0, 1)`` entries drawn from ``seed``, and ``Y = teacher(X)``."""
    if n < 1 or d < 1:
        raise ValueError(f"n, d: expected ints >= 1, got n={n}, d={d}")
    X = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    with torch.no_grad():
        Y = teacher(X)
    return X, Y.detach()


def mse(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """``L = (1/2n) Σ_i ‖f(x_i) − y_i‖²``."""
    return 0.5 * ((layer(X) - Y) ** 2).sum() / X.shape[0]


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


def norm_differences(layer: FeedForward) -> dict[str, torch.Tensor]:
    """Per unit: ``"qk"``: ``‖q_j‖² − ‖k_j‖²`` (not for a KeyValueMLP) and ``"kv"``: ``‖k_j‖² − ‖v_j‖²``."""
    blocks = _query_key_value(_check_layer(layer))
    sq = {name: (w.detach() ** 2).sum(-1) for name, w in blocks.items()}
    out = {"kv": sq["k"] - sq["v"]}
    if "q" in sq:
        out["qk"] = sq["q"] - sq["k"]
    return out


def diagonal_gap(layer: BilinearMLP | GatedMLP) -> float:
    """``max_j ‖q_j − k_j‖_∞``: the distance from the diagonal ``{q_j = k_j}`` (``thm-invariant-diagonal``)."""
    blocks = _query_key_value(_check_layer(layer))
    if "q" not in blocks:
        raise TypeError("layer: expected a form with queries (BilinearMLP or GatedMLP), got a KeyValueMLP")
    return float((blocks["q"] - blocks["k"]).detach().abs().max())


def pair_gradients(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> dict[str, torch.Tensor]:
    """Raw loss gradients per unit block: ``{"q": g_q, "k": g_k, "v": g_v}`` as ``(m, …)`` tensors."""
    layer = _check_layer(layer)
    layer.zero_grad(set_to_none=True)
    mse(layer, X, Y).backward()
    grads = {}
    for name, p in layer.named_parameters():
        grads[name] = p.grad.detach().clone()
    layer.zero_grad(set_to_none=True)
    shadow = copy.deepcopy(layer)
    with torch.no_grad():
        for name, p in shadow.named_parameters():
            p.copy_(grads[name])
    return {k: v.detach() for k, v in _query_key_value(shadow).items()}


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


def gd_identity(
    layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, *, lr: float, weight_decay: float = 0.0, pair: str = "qk"
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(c_{t+1}, (1 − ηλ)² c_t + η² (‖g_a‖² − ‖g_b‖²))`` per unit, for one GD step on a copy of ``layer``.

    ``pair`` is ``"qk"`` (``c = ‖q‖² − ‖k‖²``) or ``"kv"`` (``c = ‖k‖² − ‖v‖²``).
    The two agree exactly (up to rounding) whenever the loss is invariant under
    the inverse scaling of that pair; ``layer`` is not changed.
    """
    if pair not in ("qk", "kv"):
        raise ValueError(f"pair: expected 'qk' or 'kv', got {pair!r}")
    first, second = pair[0], pair[1]
    c_t = norm_differences(layer)[pair]
    g = pair_gradients(layer, X, Y)
    predicted = (1 - lr * weight_decay) ** 2 * c_t + lr**2 * ((g[first] ** 2).sum(-1) - (g[second] ** 2).sum(-1))
    stepped = copy.deepcopy(layer)
    train(stepped, X, Y, lr=lr, steps=1, weight_decay=weight_decay)
    return norm_differences(stepped)[pair], predicted


# ---------------------------------------------------------------------------
# Hessian helpers


def flat_params(layer: nn.Module) -> torch.Tensor:
    """All parameters concatenated in ``named_parameters`` order (a detached copy)."""
    return torch.cat([p.detach().reshape(-1) for p in layer.parameters()])


def _unflatten(layer: nn.Module, theta: torch.Tensor) -> dict[str, torch.Tensor]:
    out, i = {}, 0
    for name, p in layer.named_parameters():
        out[name] = theta[i : i + p.numel()].view_as(p)
        i += p.numel()
    if i != theta.numel():
        raise ValueError(f"theta: expected {i} entries, got {theta.numel()}")
    return out


def set_flat_params(layer: nn.Module, theta: torch.Tensor) -> None:
    """Write ``theta`` (as from :func:`flat_params`) into ``layer``'s parameters."""
    with torch.no_grad():
        for name, value in _unflatten(layer, theta).items():
            layer.get_parameter(name).copy_(value)


def _loss_of_theta(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    def loss(theta: torch.Tensor) -> torch.Tensor:
        out = functional_call(layer, _unflatten(layer, theta), (X,))
        return 0.5 * ((out - Y) ** 2).sum() / X.shape[0]

    return loss


def loss_hessian(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """The full Hessian ``∇²L(θ)`` of the MSE loss in the flat parameters, ``(P, P)``."""
    return torch.autograd.functional.hessian(_loss_of_theta(layer, X, Y), flat_params(layer))


def gradient_norm(layer: nn.Module, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``‖∇L(θ)‖₂``."""
    theta = flat_params(layer).requires_grad_(True)
    (g,) = torch.autograd.grad(_loss_of_theta(layer, X, Y)(theta), theta)
    return float(g.norm())


def levenberg_marquardt(
    layer: nn.Module, X: torch.Tensor, Y: torch.Tensor, *, steps: int = 50, damping: float = 1e-3
) -> list[float]:
    """Damped Gauss–Newton steps on the residuals ``r = f(X) − Y``; returns the gradient norm after each step.

    ``θ ← θ − (JᵀJ + μ I)⁻¹ Jᵀ r / n`` with ``J = ∂r/∂θ``; ``μ`` is multiplied by
    10 after a step that raises the loss (which is then undone) and divided
    by 10 after one that lowers it.  ``layer`` is updated in place.
    """
    n = X.shape[0]

    def residuals(theta: torch.Tensor) -> torch.Tensor:
        return (functional_call(layer, _unflatten(layer, theta), (X,)) - Y).reshape(-1)

    theta = flat_params(layer)
    loss = float(0.5 * (residuals(theta) ** 2).sum() / n)
    mu = damping
    norms = []
    for _ in range(steps):
        J = torch.autograd.functional.jacobian(residuals, theta)
        r = residuals(theta).detach()
        JtJ = J.T @ J / n
        g = J.T @ r / n
        # μ is kept above 10⁻¹⁰ ‖JᵀJ‖: the symmetry directions make JᵀJ singular, and an
        # undamped solve would amplify rounding along them into large, useless steps
        floor = 1e-10 * float(torch.linalg.matrix_norm(JtJ, ord=2))
        step = torch.linalg.solve(JtJ + max(mu, floor) * torch.eye(JtJ.shape[0], dtype=JtJ.dtype), g)
        candidate = theta - step
        new_loss = float(0.5 * (residuals(candidate) ** 2).sum() / n)
        if new_loss <= loss:
            theta, loss, mu = candidate, new_loss, max(mu / 10, 1e-15)
        else:
            mu *= 10
        set_flat_params(layer, theta)
        norms.append(gradient_norm(layer, X, Y))
    return norms


def _block_vector(layer: FeedForward, parts: dict[str, torch.Tensor]) -> torch.Tensor:
    """A flat parameter-space vector with ``parts[name]`` in parameter ``name`` and zeros elsewhere."""
    return torch.cat(
        [parts.get(name, torch.zeros_like(p)).detach().reshape(-1) for name, p in layer.named_parameters()]
    )


def symmetry_tangents(layer: FeedForward) -> dict[str, list[torch.Tensor]]:
    """The tangent vectors of the one-parameter rescaling symmetries of ``layer``, per kind.

    * ``"qk"``: ``(q_j, −k_j)`` — inverse scaling of query and key (symmetric rank-1 form, every σ;
      gated form with linear σ);
    * ``"gauge"``: at rank ``R > 1``, the ``R²`` generators ``E_rs`` of ``GL(R)`` per unit,
      ``δq_{j,s} = q_{j,r}``, ``δk_{j,r} = −k_{j,s}`` (every σ);
    * ``"kv"``: ``(k_j, −v_j)`` — gated forms (linear in ``k_j`` and ``v_j``), and the
      key–value memory when σ is positively homogeneous;
    * ``"qv"``: ``(q_j, −v_j)`` — when σ is positively homogeneous (bilinear and gated forms).

    Which kinds apply is decided from the activation's properties (registry).
    """
    layer = _check_layer(layer)
    homogeneous = layer.activation.is_positively_homogeneous
    out: dict[str, list[torch.Tensor]] = {}

    def unit(name: str, j: int) -> torch.Tensor:
        p = layer.get_parameter(name)
        mask = torch.zeros_like(p)
        if isinstance(layer, BilinearMLP) and name in ("Q", "K"):
            mask[:, j] = p[:, j]
        else:
            mask[j] = p[j]
        return mask

    units = range(layer.m)
    if isinstance(layer, KeyValueMLP):
        if homogeneous:
            out["kv"] = [_block_vector(layer, {"K": unit("K", j), "V": -unit("V", j)}) for j in units]
        return out
    if isinstance(layer, BilinearMLP):
        if layer.rank == 1:
            out["qk"] = [_block_vector(layer, {"Q": unit("Q", j), "K": -unit("K", j)}) for j in units]
        else:  # the generators E_rs of GL(R): δq_{j,s} = q_{j,r}, δk_{j,r} = −k_{j,s}
            R = layer.rank
            gens = []
            for j in units:
                for r in range(R):
                    for s_ in range(R):
                        dq, dk = torch.zeros_like(layer.Q), torch.zeros_like(layer.K)
                        dq[s_, j] = layer.Q[r, j].detach()
                        dk[r, j] = -layer.K[s_, j].detach()
                        gens.append(_block_vector(layer, {"Q": dq, "K": dk}))
            out["gauge"] = gens
        if homogeneous:
            out["qv"] = [_block_vector(layer, {"Q": unit("Q", j), "V": -unit("V", j)}) for j in units]
        return out
    out["kv"] = [_block_vector(layer, {"K": unit("K", j), "V": -unit("V", j)}) for j in units]
    if homogeneous:
        out["qv"] = [_block_vector(layer, {"Q": unit("Q", j), "V": -unit("V", j)}) for j in units]
    if layer.activation.is_linear:  # σ(z) = c z: the gated unit c(x·q)(x·k) also rescales q against k
        out["qk"] = [_block_vector(layer, {"Q": unit("Q", j), "K": -unit("K", j)}) for j in units]
    return out
