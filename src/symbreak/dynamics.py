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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.func import functional_call

from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.numerics import gamma

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
    "conserved_pairs",
    "gd_identity_bound",
    "IdentityTrack",
    "track_gd_identity",
    "charge_drift",
    "loglog_slope",
    "exponential_rate",
    "diagonal_gap_bound",
    "residual_jacobian",
    "closed_form_hessian",
    "gradient_rounding_floor",
    "hessian_rounding_bound",
    "settle",
    "pair_tangents",
    "transpose_tangents",
    "rescaling_is_symmetry",
    "nearest_kink",
    "predicted_tangents",
    "predicted_flat_count",
    "unit_activity",
    "FlatSpectrum",
    "flat_spectrum",
    "rescale",
    "loss_rounding_bound",
    "drift_alignment",
    "rescaling_tangents",
    "SettleRun",
    "settle_from_starts",
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


# ---------------------------------------------------------------------------
# Conservation laws and the invariant diagonal: predictions, rounding bounds, sweeps and fits
# (chapters 11 and 12: thm-conservation, thm-invariant-diagonal)


def conserved_pairs(layer: FeedForward) -> dict[str, bool]:
    """Per pair, whether ``thm-conservation`` says gradient flow conserves its norm difference.

    ``"qk"`` (``‖q_j‖² − ‖k_j‖²``) is conserved where the loss is invariant under
    ``q_j → α q_j``, ``k_j → k_j/α`` (``α > 0``): always for ``BilinearMLP`` (every
    σ; at rank ``R`` the sum over ``r``), for ``GatedMLP`` iff σ is positively
    homogeneous.  ``"kv"`` (``‖k_j‖² − ‖v_j‖²``) is conserved where the loss is
    invariant under ``k_j → α k_j``, ``v_j → v_j/α``: always for ``GatedMLP``
    (linear in ``k_j`` and in ``v_j``), for ``BilinearMLP`` and ``KeyValueMLP``
    iff σ is positively homogeneous.  A ``KeyValueMLP`` has no ``"qk"`` entry.
    """
    layer = _check_layer(layer)
    homogeneous = layer.activation.is_positively_homogeneous
    if isinstance(layer, BilinearMLP):
        return {"qk": True, "kv": homogeneous}
    if isinstance(layer, GatedMLP):
        return {"qk": homogeneous, "kv": True}
    if isinstance(layer, KeyValueMLP):
        return {"kv": homogeneous}
    raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")


def _value_and_slope(layer: FeedForward, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``σ(s)`` and ``σ'(s)`` elementwise, the slope by autograd (as training computes it)."""
    z = s.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        value = layer.activation(z)
        (slope,) = torch.autograd.grad(value.sum(), z)
    return value.detach(), slope.detach()


@torch.no_grad()
def _cross_term_magnitude(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """``Z_j``, the sum over inputs of the magnitudes the cross term's rounding errors are proportional to.

    With ``r_i = (f(x_i) − y_i)/n``, ``δ_ij = r_i·v_j``, ``W_ij = |r_i|·|v_j|``,
    ``P_ij = |x_i|·|q_j| ≥ |a_ij|``, ``K_ij = |x_i|·|k_j| ≥ |b_ij|`` and bounds
    ``D_a ≥ |∂_a φ|``, ``D_b ≥ |∂_b φ|`` on the unit coefficient's partial
    derivatives (``σ'(ab)`` times ``K`` resp. ``P`` for the symmetric form;
    ``|σ'(a)| K`` and ``|σ(a)|`` for the gated form; ``|σ'(b)|`` for the memory):
    ``Z_j = Σ_i |δ_ij| (D_a P + D_b K)_ij + W_ij (D_b K + |φ|)_ij``.
    """
    n = X.shape[0]
    residual = (layer(X) - Y) / n
    delta = (residual @ layer.V.T).abs()
    W = residual.abs() @ layer.V.abs().T
    Xa = X.abs()
    if isinstance(layer, KeyValueMLP):
        K = Xa @ layer.K.abs().T
        phi, slope = _value_and_slope(layer, X @ layer.K.T)
        Da, P, Db = torch.zeros_like(K), torch.zeros_like(K), slope.abs()
    else:
        if isinstance(layer, BilinearMLP):
            if layer.rank != 1:
                raise ValueError(
                    f"layer: expected a BilinearMLP of rank 1 for the rounding bound, got rank {layer.rank}"
                )
            Qm, Km = layer.Q[0], layer.K[0]
        else:
            Qm, Km = layer.Q, layer.K
        A, B = X @ Qm.T, X @ Km.T
        P, K = Xa @ Qm.abs().T, Xa @ Km.abs().T
        if isinstance(layer, BilinearMLP):
            phi, slope = _value_and_slope(layer, A * B)
            Da, Db = slope.abs() * K, slope.abs() * P
        else:
            sig, slope = _value_and_slope(layer, A)
            phi, Da, Db = sig * B, slope.abs() * K, sig.abs()
    return (delta * (Da * P + Db * K) + W * (Db * K + phi.abs())).sum(0)


def _identity_bound(
    before: FeedForward,
    after: FeedForward,
    grads: dict[str, torch.Tensor],
    X: torch.Tensor,
    Y: torch.Tensor,
    lr: float,
    weight_decay: float,
    pair: str,
) -> torch.Tensor:
    first, second = pair[0], pair[1]
    old, new = _query_key_value(before), _query_key_value(after)
    if first not in old:
        raise ValueError(f"pair: {pair!r} needs queries, and a {type(before).__name__} has none")
    dt = X.dtype
    n, d = X.shape
    length = max(old[first].shape[-1], old[second].shape[-1])
    decay = lr * weight_decay
    update = torch.zeros(before.m, dtype=dt)
    norm_old, norm_new, norm_grad = (torch.zeros(before.m, dtype=dt) for _ in range(3))
    for name in (first, second):
        w, g, w_new = old[name].detach().abs(), grads[name].abs(), new[name].detach().abs()
        # the rounded update θ' = fl(θ − η fl(g + λθ)) is within γ_4 (|θ| + η|g| + ηλ|θ|) of the exact one,
        # and |θ̂'² − θ'²| ≤ e (2|θ̂'| + e) for an error e
        e = gamma(4, dt) * ((1 + decay) * w + lr * g)
        update = update + (e * (2 * w_new + e)).sum(-1)
        norm_old, norm_new, norm_grad = (
            norm_old + (w**2).sum(-1),
            norm_new + (w_new**2).sum(-1),
            norm_grad + (g**2).sum(-1),
        )
    # ĉ_{t+1} (a sum of squares of ``length`` terms, then a difference) and the predicted value
    # (1 − ηλ)² ĉ_t + η² (Σ ĝ_a² − Σ ĝ_b²), each coefficient and operation rounded
    sums = gamma(length + 1, dt) * norm_new
    sums = sums + gamma(length + 6, dt) * 2 * ((1 + decay) ** 2 * norm_old + lr**2 * norm_grad)
    # the cross term −2η(1 − ηλ)(a·ĝ_a − b·ĝ_b), zero in exact arithmetic where the law holds: the sums over
    # the n inputs, the two factors' dot products of length d (twice), δ's of length d_out, and 4 products
    cross = 2 * lr * abs(1 - decay) * gamma(n + 2 * d + before.d_out + 4, dt) * _cross_term_magnitude(before, X, Y)
    return update + sums + cross


def gd_identity_bound(
    layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, *, lr: float, weight_decay: float = 0.0, pair: str = "qk"
) -> torch.Tensor:
    """Per unit, a bound on ``|ĉ_{t+1} − ((1 − ηλ)² ĉ_t + η²(‖ĝ_a‖² − ‖ĝ_b‖²))|`` from rounding alone.

    Valid where the law of ``pair`` holds (``thm-conservation``); there the two
    sides of :func:`gd_identity` differ only by rounding, and by at most this.
    With ``γ_k = k u/(1 − k u)`` (:func:`symbreak.numerics.gamma`) it is the sum of

    * the rounding of the update ``θ' = θ − η(ĝ + λθ)``: each entry within
      ``e = γ_4 (|θ| + η|ĝ| + ηλ|θ|)``, so each ``θ'²`` within ``e(2|θ̂'| + e)``;
    * the rounding of the three norm differences and of the prediction:
      ``γ_{D+1}(‖a'‖² + ‖b'‖²) + 2γ_{D+6}((1 + ηλ)²(‖a‖² + ‖b‖²) + η²(‖ĝ_a‖² + ‖ĝ_b‖²))``,
      ``D`` the longer block;
    * the cross term ``2η|1 − ηλ| |a·ĝ_a − b·ĝ_b|``, zero for exact gradients; the
      computed gradients make it at most ``2η|1 − ηλ| γ_{n+2d+d_out+4} Z_j``
      (:func:`_cross_term_magnitude`), because the identity ``a∂_aφ = b∂_bφ``
      (or ``b∂_bφ = φ``) is applied by autograd to the same computed factors on
      both sides, so only the factors' own rounding and the final sums remain.

    A first-order bound (products of two γ's are dropped), evaluated with the
    computed quantities.  ``layer`` is not changed.  Rank-1 layers only.
    """
    if pair not in ("qk", "kv"):
        raise ValueError(f"pair: expected 'qk' or 'kv', got {pair!r}")
    grads = pair_gradients(layer, X, Y)
    stepped = copy.deepcopy(layer)
    train(stepped, X, Y, lr=lr, steps=1, weight_decay=weight_decay)
    return _identity_bound(layer, stepped, grads, X, Y, lr, weight_decay, pair)


@dataclass
class IdentityTrack:
    """The one-step identity of ``thm-conservation`` checked at every step of a GD run, per pair.

    ``charge[pair]`` is ``ĉ_t`` for ``t = 0, …, S`` as ``(S + 1, m)``;
    ``residual[pair]`` is ``ĉ_{t+1} − (1 − ηλ)² ĉ_t − η²(‖ĝ_a‖² − ‖ĝ_b‖²)`` and
    ``bound[pair]`` the rounding bound of :func:`gd_identity_bound`, both ``(S, m)``;
    ``scale`` is ``‖θ_t‖²`` (all parameters) for ``t = 0, …, S − 1``.
    """

    charge: dict[str, torch.Tensor]
    residual: dict[str, torch.Tensor]
    bound: dict[str, torch.Tensor]
    scale: torch.Tensor

    def _check_pair(self, pair: str) -> str:
        if pair not in self.residual:
            raise ValueError(f"pair: expected one of {list(self.residual)}, got {pair!r}")
        return pair

    def worst_ratio(self, pair: str) -> float:
        """``max_{t,j} |residual| / bound``: at most 1 where the law holds."""
        pair = self._check_pair(pair)
        return float((self.residual[pair].abs() / self.bound[pair]).max())

    def worst_relative(self, pair: str) -> float:
        """``max_{t,j} |residual| / (u ‖θ_t‖²)``: the residual in units of roundoff of the parameters' size."""
        pair = self._check_pair(pair)
        u = torch.finfo(self.scale.dtype).eps / 2
        return float((self.residual[pair].abs() / self.scale.unsqueeze(-1)).max() / u)


def track_gd_identity(
    layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, *, lr: float, steps: int, weight_decay: float = 0.0
) -> IdentityTrack:
    """Train ``layer`` in place for ``steps`` GD steps, checking the one-step identity at each (every pair it has)."""
    layer = _check_layer(layer)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps!r}")
    pairs = list(norm_differences(layer))
    charge = {p: [norm_differences(layer)[p]] for p in pairs}
    residual: dict[str, list[torch.Tensor]] = {p: [] for p in pairs}
    bound: dict[str, list[torch.Tensor]] = {p: [] for p in pairs}
    scale = []
    for _ in range(steps):
        grads = pair_gradients(layer, X, Y)
        before = copy.deepcopy(layer)
        scale.append(sum((p.detach() ** 2).sum() for p in before.parameters()))
        train(layer, X, Y, lr=lr, steps=1, weight_decay=weight_decay)
        after = norm_differences(layer)
        for p in pairs:
            a, b = p[0], p[1]
            predicted = (1 - lr * weight_decay) ** 2 * charge[p][-1] + lr**2 * (
                (grads[a] ** 2).sum(-1) - (grads[b] ** 2).sum(-1)
            )
            residual[p].append(after[p] - predicted)
            bound[p].append(_identity_bound(before, layer, grads, X, Y, lr, weight_decay, p))
            charge[p].append(after[p])
    return IdentityTrack(
        {p: torch.stack(v) for p, v in charge.items()},
        {p: torch.stack(v) for p, v in residual.items()},
        {p: torch.stack(v) for p, v in bound.items()},
        torch.stack(scale),
    )


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


# ---------------------------------------------------------------------------
# Flat directions in closed form (prop-flat-directions): Jacobian, Hessian, rounding floors, spectra


def _sigma_derivatives(layer: FeedForward, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(σ(s), σ'(s), σ''(s))`` elementwise, by automatic differentiation of the layer's activation."""
    s = s.detach().requires_grad_(True)
    with torch.enable_grad():
        s0 = layer.activation(s)
        (s1,) = torch.autograd.grad(s0.sum(), s, create_graph=True)
        if s1.requires_grad:
            (s2,) = torch.autograd.grad(s1.sum(), s, allow_unused=True)
            s2 = torch.zeros_like(s) if s2 is None else s2
        else:  # σ' does not depend on s (identity, or a piecewise-linear σ): σ'' = 0
            s2 = torch.zeros_like(s)
    return s0.detach(), s1.detach(), s2.detach()


def _check_data(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> None:
    if not isinstance(X, torch.Tensor) or not isinstance(Y, torch.Tensor):
        raise TypeError(f"X, Y: expected torch.Tensors, got {type(X).__name__} and {type(Y).__name__}")
    if X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected shape (n, d = {layer.d}), got {tuple(X.shape)}")
    if Y.shape != (X.shape[0], layer.d_out):
        raise ValueError(f"Y: expected shape (n = {X.shape[0]}, d_out = {layer.d_out}), got {tuple(Y.shape)}")


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


def residual_jacobian(layer: FeedForward, X: torch.Tensor, *, absolute: bool = False) -> torch.Tensor:
    """``J = ∂ vec f(X) / ∂θ`` in closed form, ``(n·d_out, P)``, rows ``(i, o)``, columns as :func:`flat_params`.

    With ``u_{ij}`` the σ argument of unit ``j`` at ``x_i``:

    * key–value memory: ``∂f_o/∂k_{j} = σ'(x·k_j) v_{jo} x``, ``∂f_o/∂v_{jo'} = σ(x·k_j) δ_{oo'}``;
    * rank ``R`` (``s_j = Σ_r a_{jr} b_{jr}``): ``∂f_o/∂q_{j,r} = σ'(s_j) b_{jr} v_{jo} x``,
      ``∂f_o/∂k_{j,r} = σ'(s_j) a_{jr} v_{jo} x``, ``∂f_o/∂v_{jo'} = σ(s_j) δ_{oo'}``;
    * gated: ``∂f_o/∂q_j = σ'(a_j) b_j v_{jo} x``, ``∂f_o/∂k_j = σ(a_j) v_{jo} x``,
      ``∂f_o/∂v_{jo'} = σ(a_j) b_j δ_{oo'}``.

    With ``absolute=True`` every factor is replaced by its absolute value: the
    matrix ``|J|`` that bounds the rounding of computed derivatives.
    """
    layer = _check_layer(layer)
    if not isinstance(X, torch.Tensor) or X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected a tensor of shape (n, d = {layer.d}), got {getattr(X, 'shape', X)!r}")
    f = _unit_factors(layer, X)
    s0, s1, _ = _sigma_derivatives(layer, f["s"])
    mag = torch.abs if absolute else (lambda t: t)
    V = mag(layer.V.detach())
    x = mag(X)
    n, d_out = X.shape[0], layer.d_out
    eye = torch.eye(d_out, dtype=X.dtype)
    # every block is (coefficient per sample and unit) × v_{jo} × x_l, formed by broadcasting
    Vt = V.T  # (d_out, m)
    blocks = []
    if isinstance(layer, BilinearMLP):
        g = mag(s1).unsqueeze(1)  # (n, 1, m)
        for factor in (mag(f["b"]), mag(f["a"])):  # Q then K: (n, R, m)
            coef = (g * factor)[:, None, :, :, None]  # (n, 1, R, m, 1)
            blocks.append(coef * Vt[None, :, None, :, None] * x[:, None, None, None, :])
        coeff = mag(s0)
    elif isinstance(layer, GatedMLP):
        for c in (mag(s1 * f["b"]), mag(s0)):  # Q then K: (n, m)
            blocks.append(c[:, None, :, None] * Vt[None, :, :, None] * x[:, None, None, :])
        coeff = mag(s0 * f["b"])
    else:
        blocks.append(mag(s1)[:, None, :, None] * Vt[None, :, :, None] * x[:, None, None, :])
        coeff = mag(s0)
    blocks.append(coeff[:, None, :, None] * eye[None, :, None, :])  # V: (n, d_out, m, d_out)
    return torch.cat([blk.reshape(n * d_out, -1) for blk in blocks], dim=1)


def _place_diagonal_units(block: torch.Tensor, unit_axes: tuple[int, int]) -> torch.Tensor:
    """Embed ``block`` (unit index ``j`` on the first axis) into a tensor with ``j`` on both ``unit_axes``."""
    m = block.shape[0]
    rest = list(block.shape[1:])
    shape = rest[:]
    shape.insert(unit_axes[0], m)
    shape.insert(unit_axes[1], m)
    out = block.new_zeros(shape)
    idx = torch.arange(m)
    index: list[object] = [slice(None)] * len(shape)
    index[unit_axes[0]] = idx
    index[unit_axes[1]] = idx
    out[tuple(index)] = block
    return out


def closed_form_hessian(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    absolute: bool = False,
    gauss_newton: bool = True,
    residuals: torch.Tensor | None = None,
) -> torch.Tensor:
    """The Hessian of ``L = (1/2n) Σ_i ‖f(x_i) − y_i‖²`` in closed form: ``H = (JᵀJ + Σ_{i,o} r_{io} ∇²f_o(x_i)) / n``.

    ``J`` is :func:`residual_jacobian` and ``r = f(X) − Y``; the second-order
    part couples only parameters of the same unit ``j``.  With ``c_{ij} =
    Σ_o r_{io} v_{jo}`` and ``s_j`` the σ argument, its non-zero blocks are

    * rank ``R``: ``(q_{j,r}, q_{j,r'})``: ``Σ_i c_{ij} σ''(s_j) b_{jr} b_{jr'} xᵀx``;
      ``(k, k)`` alike with ``a``; ``(q_{j,r}, k_{j,r'})``:
      ``Σ_i c_{ij} (σ''(s_j) b_{jr} a_{jr'} + σ'(s_j) δ_{rr'}) xᵀx``;
      ``(q_{j,r}, v_{jo})``: ``Σ_i r_{io} σ'(s_j) b_{jr} x``, ``(k_{j,r}, v_{jo})`` alike with ``a``;
    * gated: ``(q_j, q_j)``: ``Σ_i c_{ij} σ''(a_j) b_j xᵀx``; ``(q_j, k_j)``: ``Σ_i c_{ij} σ'(a_j) xᵀx``;
      ``(q_j, v_{jo})``: ``Σ_i r_{io} σ'(a_j) b_j x``; ``(k_j, v_{jo})``: ``Σ_i r_{io} σ(a_j) x``;
    * key–value memory: ``(k_j, k_j)``: ``Σ_i c_{ij} σ''(x·k_j) xᵀx``; ``(k_j, v_{jo})``: ``Σ_i r_{io} σ'(x·k_j) x``.

    With ``absolute=True`` every product (and each of the two terms of the
    ``(q, k)`` block) is taken in absolute value: the majorant
    ``(|J|ᵀ|J| + Σ |r_{io}| |∇²f_o(x_i)|) / n`` that bounds the rounding of a computed Hessian.
    With ``gauss_newton=False`` only the second-order part ``Σ_{i,o} r_{io} ∇²f_o(x_i) / n`` is
    returned (computed directly, not as a difference of two Hessians); ``residuals`` (shape
    ``(n, d_out)``) replaces ``r = f(X) − Y`` in it.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    n = X.shape[0]
    if residuals is not None and (not isinstance(residuals, torch.Tensor) or residuals.shape != Y.shape):
        raise ValueError(
            f"residuals: expected a tensor of shape {tuple(Y.shape)}, got {getattr(residuals, 'shape', residuals)!r}"
        )
    mag = torch.abs if absolute else (lambda t: t)
    with torch.no_grad():
        r = mag(layer(X) - Y if residuals is None else residuals)
    f = _unit_factors(layer, X)
    s0, s1, s2 = _sigma_derivatives(layer, f["s"])
    V = layer.V.detach()
    c = r @ mag(V).T if absolute else r @ V.T  # (n, m)
    x = mag(X)
    xx = x[:, :, None] * x[:, None, :]
    m, d, d_out = layer.m, layer.d, layer.d_out
    if isinstance(layer, BilinearMLP):
        R = layer.rank
        a, b = mag(f["a"]), mag(f["b"])
        w2, w1 = c * mag(s2), c * mag(s1)
        # Z_b[i, j, (r, l)] = b_{irj} x_{il}, Z_a alike: every block is a weighted sum over i of outer products
        Zb = (b.permute(0, 2, 1)[..., None] * x[:, None, None, :]).reshape(n, m, R * d)
        Za = (a.permute(0, 2, 1)[..., None] * x[:, None, None, :]).reshape(n, m, R * d)
        qq = torch.einsum("ija,ijb->jab", Zb * w2[..., None], Zb).reshape(m, R, d, R, d)
        kk = torch.einsum("ija,ijb->jab", Za * w2[..., None], Za).reshape(m, R, d, R, d)
        eye_r = torch.eye(R, dtype=X.dtype)
        xwx = torch.einsum("ij,ilk->jlk", w1, xx)
        qk = torch.einsum("ija,ijb->jab", Zb * w2[..., None], Za).reshape(m, R, d, R, d)
        qk = qk + eye_r[None, :, None, :, None] * xwx[:, None, :, None, :]
        qv = torch.einsum("ija,io->jao", Zb * mag(s1)[..., None], r).reshape(m, R, d, d_out)
        kv = torch.einsum("ija,io->jao", Za * mag(s1)[..., None], r).reshape(m, R, d, d_out)
        # place unit-diagonal blocks: parameter layout (r, j, l) for Q and K, (j, o) for V
        QQ = _place_diagonal_units(qq, (1, 4)).reshape(R * m * d, R * m * d)
        KK = _place_diagonal_units(kk, (1, 4)).reshape(R * m * d, R * m * d)
        QK = _place_diagonal_units(qk, (1, 4)).reshape(R * m * d, R * m * d)
        QV = _place_diagonal_units(qv, (1, 3)).reshape(R * m * d, m * d_out)
        KV = _place_diagonal_units(kv, (1, 3)).reshape(R * m * d, m * d_out)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat(
            [
                torch.cat([QQ, QK, QV], 1),
                torch.cat([QK.T, KK, KV], 1),
                torch.cat([QV.T, KV.T, VV], 1),
            ]
        )
    elif isinstance(layer, GatedMLP):
        a, b = f["a"], f["b"]
        qq = torch.einsum("ij,ilk->jlk", c * mag(s2 * b), xx)
        qk = torch.einsum("ij,ilk->jlk", c * mag(s1), xx)
        qv = torch.einsum("ijl,io->jlo", mag(s1 * b)[..., None] * x[:, None, :], r)
        kv = torch.einsum("ijl,io->jlo", mag(s0)[..., None] * x[:, None, :], r)
        QQ = _place_diagonal_units(qq, (0, 2)).reshape(m * d, m * d)
        QK = _place_diagonal_units(qk, (0, 2)).reshape(m * d, m * d)
        QV = _place_diagonal_units(qv, (0, 2)).reshape(m * d, m * d_out)
        KV = _place_diagonal_units(kv, (0, 2)).reshape(m * d, m * d_out)
        KK = X.new_zeros(m * d, m * d)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat(
            [
                torch.cat([QQ, QK, QV], 1),
                torch.cat([QK.T, KK, KV], 1),
                torch.cat([QV.T, KV.T, VV], 1),
            ]
        )
    else:
        kk = torch.einsum("ij,ilk->jlk", c * mag(s2), xx)
        kv = torch.einsum("ijl,io->jlo", mag(s1)[..., None] * x[:, None, :], r)
        KK = _place_diagonal_units(kk, (0, 2)).reshape(m * d, m * d)
        KV = _place_diagonal_units(kv, (0, 2)).reshape(m * d, m * d_out)
        VV = X.new_zeros(m * d_out, m * d_out)
        S = torch.cat([torch.cat([KK, KV], 1), torch.cat([KV.T, VV], 1)])
    if not gauss_newton:
        return S / n
    J = residual_jacobian(layer, X, absolute=absolute)
    return (J.T @ J + S) / n


def _derivative_terms(layer: FeedForward, n: int) -> int:
    """``M = n·d_out + 6(R·d + m) + 3·ELEMENTWISE_ULPS``: the length that ``γ_M`` charges a computed derivative.

    Every entry of ``∇L`` and of ``∇²L`` is a sum over the ``n·d_out``
    residual indices of products of at most six computed factors (entries of
    ``x``, ``σ``, ``σ'`` or ``σ''`` at a score, value entries, residuals); each
    factor is a dot product of length at most ``R·d`` (a score) or ``m`` (an
    output), and σ and its derivatives are taken as accurate to
    ``ELEMENTWISE_ULPS`` units of roundoff, the assumption of
    :mod:`symbreak.numerics`.
    """
    from symbreak.numerics import ELEMENTWISE_ULPS

    R = getattr(layer, "rank", 1)
    return n * layer.d_out + 6 * (R * layer.d + layer.m) + 3 * ELEMENTWISE_ULPS


def gradient_rounding_floor(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``ε_fl = ‖ |J|ᵀ (β + γ_M |r|) ‖₂ / n``: how far a computed ``‖∇L‖`` can be from the exact one.

    ``∇L = Jᵀ r / n``; ``β`` is :func:`symbreak.numerics.forward_error_bound`
    (the rounding of ``f(X)``, hence of ``r``), and ``γ_M`` with ``M`` from
    :func:`_derivative_terms` covers the rounding of the products and of the sum
    (a first-order bound).  A computed gradient norm below ``ε_fl`` is zero to
    working precision.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    g = gamma(_derivative_terms(layer, n), X.dtype)
    with torch.no_grad():
        r = (layer(X) - Y).abs()
        beta = forward_error_bound(layer, X)
    Ja = residual_jacobian(layer, X, absolute=True)
    return float(torch.linalg.vector_norm(Ja.T @ (beta + g * r).reshape(-1)) / n)


def hessian_rounding_bound(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor) -> float:
    """``η_H = γ_M ‖H_abs‖₂ + ‖S_β‖₂``: a bound on ``‖Ĥ − H‖₂`` for a computed Hessian ``Ĥ``.

    ``H_abs`` is :func:`closed_form_hessian` with ``absolute=True`` (every
    product in absolute value), so each computed entry is within ``γ_M`` of its
    exact value relative to it; ``S_β = Σ_{i,o} β_{io} |∇²f_o(x_i)| / n`` adds
    the rounding ``β`` of the residuals (:func:`symbreak.numerics.forward_error_bound`)
    in the second-order part.  A first-order bound, like :func:`gradient_rounding_floor`.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    g = gamma(_derivative_terms(layer, n), X.dtype)
    with torch.no_grad():
        beta = forward_error_bound(layer, X)
    H_abs = closed_form_hessian(layer, X, Y, absolute=True)
    # the second-order part with the residuals replaced by β, computed directly: a difference of two
    # Hessians would leave the rounding of their Gauss–Newton parts in it
    S_beta = closed_form_hessian(layer, X, Y, absolute=True, gauss_newton=False, residuals=beta)
    return g * float(torch.linalg.matrix_norm(H_abs, ord=2)) + float(torch.linalg.matrix_norm(S_beta, ord=2))


def settle(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    *,
    steps: int = 200,
    damping: float = 1e-3,
    curvature: str = "newton",
) -> list[float]:
    """Damped Newton steps until the gradient reaches its rounding floor; returns ``‖∇L‖`` along the way.

    ``θ ← θ − (C + μ I)⁻¹ ∇L`` with ``C`` the exact Hessian :func:`closed_form_hessian`
    (``curvature="newton"``) or the Gauss–Newton matrix ``JᵀJ/n``
    (``"gauss-newton"``: the iteration of :func:`levenberg_marquardt`, with the
    closed-form Jacobian).  ``μ`` is divided by 10 after a step that lowers the
    loss — or lowers ``‖∇L‖`` while raising the loss by at most twice
    :func:`loss_rounding_bound`, since near a critical point the decrease of
    the loss is below its rounding — and multiplied by 10 after any other step
    (which is undone), or when ``C + μ I`` is not positive definite;
    ``μ ≥ 10⁻¹⁰ ‖C‖₂``.  The
    Gauss–Newton matrix ignores the residual term ``Σ r ∇²f / n`` of the
    Hessian, so at a critical point with non-zero loss it converges only
    linearly, if at all; the exact Hessian converges quadratically.

    Stops once ``‖∇L‖ = ‖Jᵀ r‖ / n`` is at most :func:`gradient_rounding_floor`,
    or after ``steps`` steps.  Returns ``‖∇L‖`` before each step and at the end;
    ``layer`` is updated in place.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps: expected an int >= 0, got {steps!r}")
    if not damping > 0:
        raise ValueError(f"damping: expected a positive number, got {damping!r}")
    if curvature not in ("newton", "gauss-newton"):
        raise ValueError(f"curvature: expected 'newton' or 'gauss-newton', got {curvature!r}")
    n = X.shape[0]
    theta = flat_params(layer)
    mu = damping
    norms: list[float] = []

    def state() -> tuple[float, torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            r = (layer(X) - Y).reshape(-1)
        J = residual_jacobian(layer, X)
        return float(0.5 * (r**2).sum() / n), J.T @ r / n, J

    loss, g, J = state()
    floor = gradient_rounding_floor(layer, X, Y)
    while True:
        norms.append(float(g.norm()))
        if norms[-1] <= 100 * floor:  # near the floor: recompute it at the current θ
            floor = gradient_rounding_floor(layer, X, Y)
        if norms[-1] <= floor or len(norms) > steps:
            break
        C = closed_form_hessian(layer, X, Y) if curvature == "newton" else J.T @ J / n
        mu_min = 1e-10 * float(torch.linalg.matrix_norm(C, ord=2))
        eye = torch.eye(C.shape[0], dtype=C.dtype)
        factor, info = torch.linalg.cholesky_ex(C + max(mu, mu_min) * eye)
        if int(info) != 0:  # not positive definite: more damping, same point
            mu = max(mu, mu_min) * 10
            continue
        step = torch.cholesky_solve(g.unsqueeze(1), factor).squeeze(1)
        set_flat_params(layer, theta - step)
        new_loss, new_g, new_J = state()
        # near a critical point the decrease of the loss drops below its rounding: then a step
        # that lowers the gradient norm and raises the loss by no more than rounding is taken too
        accept = new_loss <= loss or (
            float(new_g.norm()) < norms[-1] and new_loss - loss <= 2 * loss_rounding_bound(layer, X, Y)
        )
        if accept:
            theta, loss, g, J, mu = theta - step, new_loss, new_g, new_J, max(mu / 10, 1e-15)
        else:
            set_flat_params(layer, theta)
            mu = max(mu, mu_min) * 10
    return norms


def pair_tangents(layer: FeedForward, pair: str) -> list[torch.Tensor]:
    """Per unit ``j``, the tangent of rescaling a pair of blocks: ``"qk"`` → ``(q_j, −k_j)``, ``"kv"``, ``"qv"``.

    The vector has ``θ``'s entries of the first block of unit ``j`` (all ``r`` at
    rank ``R``), minus those of the second, and zeros elsewhere — whether or not
    the rescaling is a symmetry of ``layer`` (compare :func:`symmetry_tangents`).
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    names = {"q": "Q", "k": "K", "v": "V"}
    out = []
    for j in range(layer.m):
        parts = {}
        for sign, key in ((1.0, pair[0]), (-1.0, pair[1])):
            p = layer.get_parameter(names[key])
            mask = torch.zeros_like(p)
            if isinstance(layer, BilinearMLP) and key in "qk":
                mask[:, j] = sign * p[:, j].detach()
            else:
                mask[j] = sign * p[j].detach()
            parts[names[key]] = mask
        out.append(_block_vector(layer, parts))
    return out


def rescaling_is_symmetry(layer: FeedForward, pair: str) -> bool:
    """Whether rescaling ``pair`` of each unit (``"qk"``, ``"kv"``, ``"qv"``) leaves ``layer``'s function unchanged.

    By ``prop-flat-directions``, part 2: ``"qk"`` for the rank-``R`` form (the gauge
    element ``α I``) and for the gated form with a positively homogeneous σ;
    ``"kv"`` for the gated form, and for the others with a positively
    homogeneous σ; ``"qv"`` for the rank-``R`` and gated forms with a
    positively homogeneous σ.  Decided from the activation's registry properties.
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    homogeneous = layer.activation.is_positively_homogeneous
    if pair == "qk":
        return isinstance(layer, BilinearMLP) or homogeneous
    if pair == "kv":
        return isinstance(layer, GatedMLP) or homogeneous
    return homogeneous


def transpose_tangents(layer: BilinearMLP) -> list[torch.Tensor]:
    """The ``R(R−1)`` generators per unit that the transpose symmetry adds to ``GL(R)`` at rank ``R``.

    The score ``Σ_r a_r b_r`` (``a_r = x·q_{j,r}``, ``b_r = x·k_{j,r}``) is kept by
    the orthogonal group ``O(R, R)`` of dimension ``R(2R−1)``; besides the ``R²``
    generators of ``GL(R)`` it has, for each ``r < s``,
    ``δq_{j,r} = k_{j,s}``, ``δq_{j,s} = −k_{j,r}`` and
    ``δk_{j,r} = q_{j,s}``, ``δk_{j,s} = −q_{j,r}``; both change ``W_j`` by an
    antisymmetric matrix only.  Empty at ``R = 1``.
    """
    if not isinstance(layer, BilinearMLP):
        raise TypeError(f"layer: expected a BilinearMLP, got {type(layer).__name__}")
    R = layer.rank
    Q, K = layer.Q.detach(), layer.K.detach()
    out = []
    for j in range(layer.m):
        for r in range(R):
            for s_ in range(r + 1, R):
                dq = torch.zeros_like(Q)
                dq[r, j], dq[s_, j] = K[s_, j], -K[r, j]
                out.append(_block_vector(layer, {"Q": dq}))
                dk = torch.zeros_like(K)
                dk[r, j], dk[s_, j] = Q[s_, j], -Q[r, j]
                out.append(_block_vector(layer, {"K": dk}))
    return out


def predicted_tangents(layer: FeedForward) -> dict[str, list[torch.Tensor]]:
    """:func:`symmetry_tangents` together with :func:`transpose_tangents` (kind ``"transpose"``) at rank ``R > 1``."""
    out = symmetry_tangents(layer)
    if isinstance(layer, BilinearMLP) and layer.rank > 1:
        out["transpose"] = transpose_tangents(layer)
    return out


def predicted_flat_count(layer: FeedForward) -> int:
    """The number of flat directions the rescaling symmetries force, per the formula of ``prop-flat-directions``.

    ``m·c`` with ``c`` per unit: key–value memory ``[σ pos. homogeneous]``;
    rank ``R``: ``R(2R−1) + [σ pos. homogeneous]``; gated: ``1 + [σ pos. homogeneous]``
    (a linear σ adds ``(q_j, −k_j)``, which is the difference of the other two).
    """
    layer = _check_layer(layer)
    h = int(layer.activation.is_positively_homogeneous)
    if isinstance(layer, KeyValueMLP):
        per_unit = h
    elif isinstance(layer, BilinearMLP):
        per_unit = layer.rank * (2 * layer.rank - 1) + h
    elif isinstance(layer, GatedMLP):
        per_unit = 1 + h
    else:
        raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")
    return layer.m * per_unit


def unit_activity(layer: FeedForward, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per unit: the fraction of inputs with ``h_j(x) ≠ 0``, and its share ``rms_x |h_j(x)| ‖v_j‖ / max_l (…)``.

    A unit is *dead* on ``X`` when the first is 0; a share near 0 means it
    hardly contributes.
    """
    layer = _check_layer(layer)
    with torch.no_grad():
        h = layer.hidden(layer._check_input(X))
        active = (h != 0).to(X.dtype).mean(0)
        size = h.pow(2).mean(0).sqrt() * torch.linalg.vector_norm(layer.V, dim=1)
    return active, size / size.max()


def nearest_kink(layer: FeedForward, X: torch.Tensor) -> float:
    """``min_{i,j} |u_{ij}| / ū_{ij}``: how close any input comes to a kink of σ, relative to the scale of its argument.

    ``u_{ij}`` is the argument of σ for unit ``j`` at ``x_i`` (``x·k_j``, ``x·q_j``
    for the gated form, ``Σ_r (x·q_{j,r})(x·k_{j,r})`` at rank ``R``) and ``ū_{ij}``
    its Cauchy–Schwarz bound (``‖x‖‖k_j‖``, ``‖x‖‖q_j‖``, ``‖x‖² Σ_r ‖q_{j,r}‖‖k_{j,r}‖``).
    For a σ with a kink at 0 (ReLU) the loss is twice differentiable only where
    this is positive; a value at rounding level means a point sits on a kink.
    """
    layer = _check_layer(layer)
    if not isinstance(X, torch.Tensor) or X.ndim != 2 or X.shape[1] != layer.d:
        raise ValueError(f"X: expected a tensor of shape (n, d = {layer.d}), got {getattr(X, 'shape', X)!r}")
    u = _unit_factors(layer, X)["s"].abs()
    xn = torch.linalg.vector_norm(X, dim=1, keepdim=True)
    with torch.no_grad():
        if isinstance(layer, BilinearMLP):
            weights = (torch.linalg.vector_norm(layer.Q, dim=-1) * torch.linalg.vector_norm(layer.K, dim=-1)).sum(0)
            scale = xn**2 * weights
        elif isinstance(layer, GatedMLP):
            scale = xn * torch.linalg.vector_norm(layer.Q, dim=-1)
        else:
            scale = xn * torch.linalg.vector_norm(layer.K, dim=-1)
    return float((u / scale).min())


@dataclass
class FlatSpectrum:
    """The Hessian spectrum at a (near-)critical point against the predicted flat directions.

    ``eigenvalues`` are sorted by absolute value; ``count`` of them lie in
    ``[−threshold, threshold]``; ``predicted`` is the dimension of the span of the
    predicted tangents; ``next_eigenvalue`` is the smallest ``|λ|`` above the
    threshold; ``tangent_residuals[i] = ‖Ĥ ξ_i‖`` with bound ``tangent_bounds[i]``;
    ``sin_angle`` is the sine of the largest principal angle between the span of
    the tangents and the eigenvectors of the ``predicted`` smallest ``|λ|``, with
    the Davis–Kahan bound ``sin_bound``; ``hessian`` is the symmetrised ``Ĥ``.
    """

    parameters: int
    predicted: int
    count: int
    threshold: float
    eigenvalues: torch.Tensor
    next_eigenvalue: float
    grad_norm: float
    grad_floor: float
    hessian_bound: float
    hessian_norm: float
    tangent_residuals: list[float]
    tangent_bounds: list[float]
    sin_angle: float
    sin_bound: float
    hessian: torch.Tensor


def flat_spectrum(
    layer: FeedForward,
    X: torch.Tensor,
    Y: torch.Tensor,
    tangents: list[torch.Tensor] | None = None,
    hessian: torch.Tensor | None = None,
) -> FlatSpectrum:
    """Count the near-zero eigenvalues of ``Ĥ = loss_hessian`` and compare them with the predicted tangents.

    The exact gradient norm is at most the computed one plus :func:`gradient_rounding_floor`
    ``ε_fl``, hence at most ``ε = max(‖∇L‖, ε_fl) + ε_fl`` — which is ``2 ε_fl`` at a point
    settled to the floor, a bound that does not move with the rounding of the computed norm.  A
    tangent ``ξ = Aθ`` of a symmetry with ``‖A‖₂ = 1`` has ``‖H ξ‖ ≤ ε``.  If the
    ``t`` tangents span ``k`` dimensions with ``k``-th singular value ``s_k``, an
    orthonormal basis ``U`` of their span has ``‖Ĥ U‖₂ ≤ δ = √t ε / s_k + η_H``
    (``η_H`` from :func:`hessian_rounding_bound`), and then ``Ĥ`` has at least
    ``k`` eigenvalues in ``[−2δ, 2δ]`` (Weyl).  The threshold adds the
    eigensolver's backward error ``P u ‖Ĥ‖₂``: ``τ = 2δ + P u ‖Ĥ‖₂``.

    ``tangents`` default to :func:`predicted_tangents`; ``hessian`` to
    :func:`loss_hessian` (pass :func:`closed_form_hessian` to save time).
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import unit_roundoff

    if tangents is None:
        tangents = [xi for vectors in predicted_tangents(layer).values() for xi in vectors]
    H = loss_hessian(layer, X, Y) if hessian is None else hessian
    if H.shape != (flat_params(layer).numel(),) * 2:
        raise ValueError(f"hessian: expected shape (P, P) with P = {flat_params(layer).numel()}, got {tuple(H.shape)}")
    H = (H + H.T) / 2
    P = H.shape[0]
    u = unit_roundoff(H.dtype)
    hnorm = float(torch.linalg.matrix_norm(H, ord=2))
    grad, floor = gradient_norm(layer, X, Y), gradient_rounding_floor(layer, X, Y)
    eps = max(grad, floor) + floor
    eta = hessian_rounding_bound(layer, X, Y)
    evals, evecs = torch.linalg.eigh(H)
    order = evals.abs().argsort()
    evals, evecs = evals[order], evecs[:, order]
    if tangents:
        Xi = torch.stack(tangents, 1)
        Uxi, sv, _ = torch.linalg.svd(Xi, full_matrices=False)
        k = int((sv > max(Xi.shape) * torch.finfo(H.dtype).eps * sv[0]).sum())
        U = Uxi[:, :k]
        delta = len(tangents) ** 0.5 * eps / float(sv[k - 1]) + eta
        residuals = [float((H @ xi).norm()) for xi in tangents]
        bounds = [eps + (eta + P * u * hnorm) * float(xi.norm()) for xi in tangents]
    else:
        k, U, delta, residuals, bounds = 0, H.new_zeros(P, 0), eta, [], []
    tau = 2 * delta + P * u * hnorm
    count = int((evals.abs() <= tau).sum())
    above = evals.abs()[evals.abs() > tau]
    nxt = float(above[0]) if above.numel() else float("inf")
    if k:
        null = evecs[:, :k]
        sin = float(torch.linalg.matrix_norm(null - U @ (U.T @ null), ord=2))
        HU = H @ U
        resid = float(torch.linalg.matrix_norm(HU - U @ (U.T @ HU), ord=2))
        gap = float(evals.abs()[k]) - float(torch.linalg.matrix_norm(HU, ord=2)) if k < P else float("inf")
        # Davis–Kahan, plus the eigensolver's error in the computed eigenvectors (P u ‖Ĥ‖₂ / gap)
        sin_bound = (resid + P * u * hnorm) / gap if gap > 0 else float("inf")
    else:
        sin, sin_bound = 0.0, 0.0
    return FlatSpectrum(
        parameters=P,
        predicted=k,
        count=count,
        threshold=tau,
        eigenvalues=evals,
        next_eigenvalue=nxt,
        grad_norm=grad,
        grad_floor=floor,
        hessian_bound=eta,
        hessian_norm=hnorm,
        tangent_residuals=residuals,
        tangent_bounds=bounds,
        sin_angle=sin,
        sin_bound=sin_bound,
        hessian=H,
    )


def rescale(layer: FeedForward, pair: str, alpha: float, units: int | list[int] | None = None) -> FeedForward:
    """A copy of ``layer`` with the first block of ``pair`` multiplied by ``α`` and the second divided by ``α``.

    ``pair`` is ``"qk"`` (the inverse scaling of :func:`symbreak.symmetry.inverse_scale`),
    ``"kv"`` or ``"qv"``; ``units`` selects the units (default: all).  The copy
    computes the same function exactly when the rescaling is a symmetry of the form.
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha == 0 or alpha != alpha:
        raise ValueError(f"alpha: expected a non-zero real number, got {alpha!r}")
    idx = list(range(layer.m)) if units is None else ([units] if isinstance(units, int) else list(units))
    for j in idx:
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < layer.m:
            raise ValueError(f"units: expected indices in [0, {layer.m}), got {j!r}")
    new = copy.deepcopy(layer)
    names = {"q": "Q", "k": "K", "v": "V"}
    with torch.no_grad():
        for key, divide in ((pair[0], False), (pair[1], True)):
            p = new.get_parameter(names[key])
            block = p[:, idx] if isinstance(new, BilinearMLP) and key in "qk" else p[idx]
            block = block / alpha if divide else block * alpha
            if isinstance(new, BilinearMLP) and key in "qk":
                p[:, idx] = block
            else:
                p[idx] = block
    return new


def loss_rounding_bound(layer: FeedForward, X: torch.Tensor, Y: torch.Tensor, param_rel_error: float = 0.0) -> float:
    """A bound on ``|L̂ − L|`` for the computed loss: ``Σ (|r| β + β²/2) / n + γ_{N+2} L̂``, ``N = n·d_out``.

    ``β`` is :func:`symbreak.numerics.forward_error_bound` (with
    ``param_rel_error`` for parameters that were themselves computed), so the
    exact residuals are within ``β`` of the computed ones; ``γ_{N+2}`` covers
    squaring, summing and the division by ``2n``.
    """
    layer = _check_layer(layer)
    _check_data(layer, X, Y)
    from symbreak.numerics import forward_error_bound, gamma

    n = X.shape[0]
    with torch.no_grad():
        r = (layer(X) - Y).abs()
        beta = forward_error_bound(layer, X, param_rel_error)
        loss = float(0.5 * (r**2).sum() / n)
        spread = float((r * beta + beta**2 / 2).sum() / n)
    return spread + gamma(n * layer.d_out + 2, X.dtype) * loss


def drift_alignment(before: torch.Tensor, after: torch.Tensor, tangents: list[torch.Tensor]) -> float:
    """``‖Π Δθ‖ / ‖Δθ‖``: the share of the move ``Δθ = after − before`` in the span of ``tangents``.

    ``Π`` is the orthogonal projector onto that span.

    1 for a move along the span, about ``√(k/P)`` for a random direction in ``P``
    dimensions against a ``k``-dimensional span.
    """
    for name, t in (("before", before), ("after", after)):
        if not isinstance(t, torch.Tensor) or t.ndim != 1:
            raise TypeError(f"{name}: expected a 1-d tensor of parameters, got {getattr(t, 'shape', type(t).__name__)}")
    if before.shape != after.shape:
        raise ValueError(f"after: expected the shape of before {tuple(before.shape)}, got {tuple(after.shape)}")
    if not tangents:
        raise ValueError("tangents: expected at least one tangent vector, got none")
    delta = after - before
    size = float(delta.norm())
    if size == 0:
        raise ValueError("after: equals before, so the move has no direction")
    U, sv, _ = torch.linalg.svd(torch.stack(tangents, 1), full_matrices=False)
    U = U[:, sv > max(U.shape) * torch.finfo(U.dtype).eps * sv[0]]
    return float((U @ (U.T @ delta)).norm()) / size


def rescaling_tangents(layer: FeedForward) -> list[torch.Tensor]:
    """Every unit-wise rescaling tangent of ``layer`` (:func:`pair_tangents` of each pair), symmetry or not."""
    layer = _check_layer(layer)
    pairs = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    return [xi for p in pairs for xi in pair_tangents(layer, p)]


@dataclass
class SettleRun:
    """One start of :func:`settle_from_starts`.

    ``norms``: ``‖∇L‖`` along the whole run; ``floor``: the rounding floor at the
    end; ``theta_norms``: ``‖θ‖`` at the start, where the last ``tail`` steps
    began, and at the end; ``alignment``: :func:`drift_alignment` of the move
    made in those last steps with :func:`rescaling_tangents` (None if the run
    settled, or if every one of those steps was rejected).
    """

    seed: int
    layer: FeedForward
    norms: list[float]
    floor: float
    loss: float
    theta_norms: tuple[float, float, float]
    alignment: float | None

    @property
    def settled(self) -> bool:
        """Whether ``‖∇L‖`` reached its rounding floor."""
        return self.norms[-1] <= self.floor


def settle_from_starts(
    build: Callable[[], FeedForward],
    X: torch.Tensor,
    Y: torch.Tensor,
    seeds: list[int],
    *,
    steps: int = 120,
    tail: int = 40,
) -> list[SettleRun]:
    """For each seed: ``torch.manual_seed(seed)``, ``layer = build()``, then :func:`settle` for ``steps`` steps.

    The run is split in two calls, ``steps − tail`` and ``tail`` steps (each
    starting with the initial damping), so that the move made in the last
    ``tail`` steps can be compared with the rescaling directions.
    """
    if not 0 < tail <= steps:
        raise ValueError(f"tail: expected 0 < tail <= steps = {steps}, got {tail}")
    runs = []
    for seed in seeds:
        torch.manual_seed(seed)
        layer = _check_layer(build())
        start = float(flat_params(layer).norm())
        norms = settle(layer, X, Y, steps=steps - tail)
        before = flat_params(layer)
        floor = gradient_rounding_floor(layer, X, Y)
        alignment = None
        if norms[-1] > floor:
            norms = norms[:-1] + settle(layer, X, Y, steps=tail)
            floor = gradient_rounding_floor(layer, X, Y)
            after = flat_params(layer)
            if norms[-1] > floor and not torch.equal(before, after):
                alignment = drift_alignment(before, after, rescaling_tangents(layer))
        with torch.no_grad():
            loss = float(mse(layer, X, Y))
        theta = (start, float(before.norm()), float(flat_params(layer).norm()))
        runs.append(SettleRun(seed, layer, norms, floor, loss, theta, alignment))
    return runs
