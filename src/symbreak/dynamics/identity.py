"""The exact one-step gradient-descent identity of ``thm-conservation`` and its rounding bound.

* :func:`gd_identity` — both sides of
  ``c_{t+1} = (1 − ηλ)² c_t + η² (‖g_q‖² − ‖g_k‖²)`` for one step;
* :func:`gd_identity_bound` — the rounding bound on their difference;
* :func:`track_gd_identity` — the identity checked at every step of a run (:class:`IdentityTrack`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from symbreak.dynamics._base import _check_layer, _query_key_value
from symbreak.dynamics.charges import norm_differences
from symbreak.dynamics.training import mse, train
from symbreak.layers import BilinearMLP, FeedForward, KeyValueMLP
from symbreak.numerics import gamma


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
    ``bound[pair]`` the rounding bound of :func:`gd_identity_bound`, both ``(S, m)``.
    """

    charge: dict[str, torch.Tensor]
    residual: dict[str, torch.Tensor]
    bound: dict[str, torch.Tensor]

    def _check_pair(self, pair: str) -> str:
        if pair not in self.residual:
            raise ValueError(f"pair: expected one of {list(self.residual)}, got {pair!r}")
        return pair

    def worst_ratio(self, pair: str) -> float:
        """``max_{t,j} |residual| / bound``: at most 1 where the law holds."""
        pair = self._check_pair(pair)
        return float((self.residual[pair].abs() / self.bound[pair]).max())


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
    for _ in range(steps):
        grads = pair_gradients(layer, X, Y)
        before = copy.deepcopy(layer)
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
    )
