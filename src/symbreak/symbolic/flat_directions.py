"""Chapter 13: a symmetry's tangent is a null direction of the loss Hessian at a critical point.

Claim ``prop-flat-directions``, for one unit of the key–value, the symmetric
(rank R) and the gated form at one symbolic point.
"""

from __future__ import annotations

import sympy as sp

from symbreak.activations import Activation
from symbreak.symbolic._base import _check_size, matrix, row, sigma_function

#: The forms whose flat directions the module counts, by their names in its functions' ``form`` argument.
FLAT_FORMS = ("key-value", "symmetric", "gated")


class _SigmaThird(sp.Function):
    """The third derivative of an arbitrary smooth σ (no further derivative is needed)."""


class _SigmaSecond(sp.Function):
    """The second derivative of an arbitrary smooth σ."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaThird(self.args[0])


class _SigmaPrime(sp.Function):
    """The derivative of an arbitrary smooth σ."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaSecond(self.args[0])


class _Sigma(sp.Function):
    """An arbitrary smooth σ whose derivatives are functions of the same argument.

    Differentiating ``σ(u)`` gives ``σ'(u) ∂u`` directly; an undefined sympy
    function would give ``Subs`` objects, which are slow to expand.
    """

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _SigmaPrime(self.args[0])


def _flat_unit_loss(
    form: str, activation: str | Activation | None, d: int, d_out: int, rank: int, piece: bool
) -> tuple[sp.Expr, dict[str, sp.Matrix]]:
    """The loss ``ℓ = ½‖f(x) − y‖²`` of one unit at one symbolic point ``(x, y)``, and its parameter blocks."""
    if form not in FLAT_FORMS:
        raise ValueError(f"form: expected one of {list(FLAT_FORMS)}, got {form!r}")
    _check_size("d", d)
    _check_size("d_out", d_out)
    _check_size("rank", rank)
    if rank > 1 and form != "symmetric":
        raise ValueError(f"rank: expected 1 for the {form} form (rank R is a symmetric form), got {rank}")
    if piece:
        slope = sp.Symbol("c", real=True)

        def sigma(arg: sp.Expr) -> sp.Expr:
            return slope * arg

    elif activation is None:
        sigma = _Sigma
    else:
        sigma = sigma_function(activation)
    x, y, v = row("x", d), row("y", d_out), row("v", d_out)
    if form == "key-value":
        k = row("k", d)
        coefficient = sigma((x * k.T)[0, 0])
        blocks = {"k": k, "v": v}
    elif form == "gated":
        q, k = row("q", d), row("k", d)
        coefficient = sigma((x * q.T)[0, 0]) * (x * k.T)[0, 0]
        blocks = {"q": q, "k": k, "v": v}
    else:
        Q, K = matrix("q", rank, d), matrix("k", rank, d)
        score = sum((x * Q.row(r).T)[0, 0] * (x * K.row(r).T)[0, 0] for r in range(rank))
        coefficient = sigma(score)
        blocks = {"q": Q, "k": K, "v": v}
    residual = coefficient * v - y
    return sp.Rational(1, 2) * sum(e**2 for e in residual), blocks


def _flat_generator_field(blocks: dict[str, sp.Matrix], generator: str, rank: int) -> dict[sp.Symbol, sp.Expr]:
    """The tangent ``ξ = Aθ`` of a one-parameter symmetry, as parameter → component."""
    field: dict[sp.Symbol, sp.Expr] = {}

    def put(block: sp.Matrix, values: sp.Matrix) -> None:
        for symbol, value in zip(block, values, strict=True):
            field[symbol] = field.get(symbol, 0) + value

    parts = generator.split("-") if isinstance(generator, str) else []
    if generator in ("qk", "kv", "qv"):
        first, second = generator
        if first not in blocks or second not in blocks:
            raise ValueError(f"generator: {generator!r} needs blocks {first} and {second}, the form has {list(blocks)}")
        put(blocks[first], blocks[first])
        put(blocks[second], -blocks[second])
    elif len(parts) == 3 and parts[0] in ("gauge", "tq", "tk") and parts[1].isdigit() and parts[2].isdigit():
        if "q" not in blocks:
            raise ValueError(f"generator: {generator!r} needs queries and keys, the form has {list(blocks)}")
        r, s_ = int(parts[1]) - 1, int(parts[2]) - 1
        if not (0 <= r < rank and 0 <= s_ < rank) or (parts[0] != "gauge" and r >= s_):
            raise ValueError(f"generator: expected 1 <= r, s <= rank = {rank} (r < s for tq, tk), got {generator!r}")
        Q, K = blocks["q"], blocks["k"]
        if parts[0] == "gauge":  # δq_s = q_r, δk_r = −k_s
            put(Q.row(s_), Q.row(r))
            put(K.row(r), -K.row(s_))
        elif parts[0] == "tq":  # δq_r = k_s, δq_s = −k_r
            put(Q.row(r), K.row(s_))
            put(Q.row(s_), -K.row(r))
        else:  # δk_r = q_s, δk_s = −q_r
            put(K.row(r), Q.row(s_))
            put(K.row(s_), -Q.row(r))
    else:
        expected = "'qk', 'kv', 'qv', 'gauge-r-s', 'tq-r-s' or 'tk-r-s' (1-based r, s)"
        raise ValueError(f"generator: expected {expected}, got {generator!r}")
    return field


def _flat_setup(
    form: str, generator: str, activation: str | Activation | None, d: int, d_out: int, rank: int, piece: bool
) -> tuple[list[sp.Symbol], dict[sp.Symbol, sp.Expr], list[sp.Expr], sp.Expr]:
    """``(θ, ξ, ∇ℓ, ∇ℓ·ξ)``: the parameters, the tangent, the gradient and the expanded invariance defect."""
    loss, blocks = _flat_unit_loss(form, activation, d, d_out, rank, piece)
    field = _flat_generator_field(blocks, generator, rank)
    params = [s for block in blocks.values() for s in block]
    grad = [sp.diff(loss, p) for p in params]
    defect = sp.expand(sum(g * field.get(p, 0) for g, p in zip(grad, params, strict=True)))
    return params, field, grad, defect


def invariance_defect(
    form: str, generator: str, activation: str | Activation | None = None, **options: int | bool
) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    """``(∇ℓ·ξ, variables)``: the rate of change of ``ℓ`` along ``ξ = Aθ``, ready for ``decide_zero``.

    Arguments as in :func:`flat_direction_identity` (the keywords ``d``,
    ``d_out``, ``rank`` and ``piece``, with its defaults); the variables are all free
    symbols (the point and the parameters).  The generator is an infinitesimal
    symmetry of the loss iff the expression vanishes identically.
    """
    *_, defect = _flat_setup(form, generator, activation, **{**flat_direction_identity.__kwdefaults__, **options})
    return defect, tuple(sorted(defect.free_symbols, key=lambda s: s.name))


def flat_direction_identity(
    form: str,
    generator: str,
    activation: str | Activation | None = None,
    *,
    d: int = 2,
    d_out: int = 1,
    rank: int = 1,
    piece: bool = False,
) -> tuple[sp.Expr, sp.Matrix]:
    """``(∇ℓ·ξ, ∇²ℓ ξ + Aᵀ∇ℓ)`` for one unit at one point, with ``ξ = Aθ`` the tangent of ``generator``.

    ``ℓ = ½‖f(x) − y‖²`` with symbolic ``x ∈ R^{1×d}``, ``y ∈ R^{1×d_out}`` and
    the parameters of one unit of ``form`` (``"key-value"``, ``"symmetric"`` — at
    ``rank`` R — or ``"gated"``).  ``generator``: ``"qk"``, ``"kv"``, ``"qv"``
    (rescale the first block against the second), ``"gauge-r-s"``
    (``δq_s = q_r``, ``δk_r = −k_s``) or, for ``r < s``, ``"tq-r-s"``
    (``δq_r = k_s``, ``δq_s = −k_r``) and ``"tk-r-s"`` (``δk_r = q_s``,
    ``δk_s = −q_r``).  With ``activation=None`` σ is an arbitrary smooth
    function; with ``piece=True`` it is one linear piece ``c z`` (a real symbol
    ``c``): on each open sign cell of its argument a positively homogeneous σ
    is of this form.  Both entries are expanded, not simplified.

    The first entry is the invariance defect; where the generator is a symmetry
    it is identically 0, and then so is the second, its gradient (claim
    ``prop-flat-directions``: ``H ξ = −Aᵀ∇ℓ``, which vanishes at a critical point).
    """
    params, field, grad, defect = _flat_setup(form, generator, activation, d, d_out, rank, piece)
    rows = []
    for a, g_a in zip(params, grad, strict=True):
        hess_xi = sum(sp.diff(g_a, p) * field.get(p, 0) for p in params)
        a_t_grad = sum(sp.diff(field.get(p, 0), a) * g for p, g in zip(params, grad, strict=True))
        rows.append(sp.expand(hess_xi + a_t_grad))
    return defect, sp.Matrix(rows)
