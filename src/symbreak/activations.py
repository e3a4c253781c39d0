"""The activation registry: one source for the torch function and the sympy expression.

Each registered activation ``σ`` carries

* ``torch_fn`` — the elementwise function applied by the layers;
* ``expr`` — the same function as a sympy expression in the real symbol :data:`z`;

and the properties the book uses, decided from ``expr`` by
:func:`symbreak.decide.decide_zero` (a proof, or a rational counterexample),
never typed in:

* *linear*: ``σ(z) = c z`` with ``c = σ(1)``;
* *odd*: ``σ(−z) = −σ(z)``;
* *positively homogeneous* (of degree 1): ``σ(α z) = α σ(z)`` for every ``α > 0``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp
import torch
import torch.nn.functional as F

from symbreak.decide import Decision, decide_zero

__all__ = [
    "Activation",
    "REGISTRY",
    "z",
    "get",
    "names",
    "resolve",
    "DISPLAY_NAMES",
    "display_name",
]

#: The real variable of every activation's sympy expression.
z = sp.Symbol("z", real=True)
_alpha = sp.Symbol("alpha", positive=True)

#: Slope of ``leaky_relu`` on the negative half-line (PyTorch's default).
LEAKY_SLOPE = sp.Rational(1, 100)
#: The cubic coefficient of the tanh approximation of GELU (Hendrycks & Gimpel).
GELU_TANH_COEFF = sp.Rational(44715, 1_000_000)


@dataclass(frozen=True, eq=False)
class Activation:
    """An elementwise nonlinearity ``σ`` with its torch function and sympy expression."""

    name: str
    torch_fn: Callable[[torch.Tensor], torch.Tensor]
    expr: sp.Expr
    description: str = ""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.torch_fn(x)

    def sym(self, arg: sp.Expr) -> sp.Expr:
        """``σ(arg)`` as a sympy expression."""
        return self.expr.subs(z, arg)

    @cached_property
    def linearity(self) -> Decision:
        """Decision on ``σ(z) − σ(1) z ≡ 0``."""
        return decide_zero(self.expr - self.expr.subs(z, 1) * z, (z,))

    @cached_property
    def oddness(self) -> Decision:
        """Decision on ``σ(−z) + σ(z) ≡ 0``."""
        return decide_zero(self.sym(-z) + self.expr, (z,))

    @cached_property
    def positive_homogeneity(self) -> Decision:
        """Decision on ``σ(α z) − α σ(z) ≡ 0`` for all real ``z`` and ``α > 0``."""
        return decide_zero(self.sym(_alpha * z) - _alpha * self.expr, (z,))

    @cached_property
    def lipschitz(self) -> float | None:
        """``L = sup_z |σ'(z)|``, for rounding-error bounds (:mod:`symbreak.numerics`).

        The derivative is taken by sympy and evaluated in float64 on a grid of
        spacing ``10⁻⁴`` over ``[−40, 40]`` (every registered σ' has its
        extremum near the origin and is constant to float64 precision beyond
        ``|z| = 40``); a relative margin of ``10⁻⁶`` covers the grid spacing.
        That this bounds the supremum is proven in :mod:`symbreak.numerics` (the
        grid gap from a bound on ``σ'''``, and the tails outside ``[−40, 40]``) and
        checked against mpmath by ``tests/test_numerics.py``.
        ``None`` for a callable without a sympy expression.
        """
        if self.expr.atoms(sp.core.function.AppliedUndef):
            return None
        deriv = sp.lambdify(z, sp.diff(self.expr, z), modules=[{"Heaviside": _heaviside}, "scipy", "numpy"])
        grid = np.linspace(-40.0, 40.0, 800_001)
        values = np.broadcast_to(np.asarray(deriv(grid), dtype=np.float64), grid.shape)
        return float(np.max(np.abs(values)) * (1 + 1e-6))

    @property
    def is_linear(self) -> bool:
        """Whether ``σ(z) = c z`` for a constant ``c`` (decided once by sympy)."""
        return bool(self.linearity)

    @property
    def is_odd(self) -> bool:
        """Whether ``σ(−z) = −σ(z)`` for every real ``z`` (decided once by sympy)."""
        return bool(self.oddness)

    @property
    def is_positively_homogeneous(self) -> bool:
        """Whether ``σ(αz) = α σ(z)`` for every ``α > 0`` and real ``z`` (decided once by sympy)."""
        return bool(self.positive_homogeneity)

    def __repr__(self) -> str:
        return f"Activation({self.name!r}, σ(z) = {sp.sstr(self.expr)})"


def _heaviside(x: np.ndarray, h0: float = 0.5) -> np.ndarray:
    return np.heaviside(x, h0)


def _leaky(x: torch.Tensor) -> torch.Tensor:
    return F.leaky_relu(x, negative_slope=float(LEAKY_SLOPE))


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


#: Every activation of the book by its registry id (``"relu"``, ``"gelu_tanh"``, ...): its :class:`Activation`, the
#: function in torch and in sympy with its properties.
REGISTRY: dict[str, Activation] = {
    a.name: a
    for a in [
        Activation("identity", _identity, z, "the identity; with it the gated form is a bilinear layer"),
        Activation("relu", F.relu, sp.Max(0, z), "rectified linear unit"),
        Activation("leaky_relu", _leaky, sp.Max(0, z) + LEAKY_SLOPE * sp.Min(0, z), "leaky ReLU, slope 1/100"),
        Activation("gelu", F.gelu, z / 2 * (1 + sp.erf(z / sp.sqrt(2))), "Gaussian error linear unit, z Φ(z)"),
        Activation(
            "gelu_tanh",
            _gelu_tanh,
            z / 2 * (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (z + GELU_TANH_COEFF * z**3))),
            "GELU, tanh approximation",
        ),
        Activation("silu", F.silu, z / (1 + sp.exp(-z)), "sigmoid-weighted linear unit (Swish-1)"),
        Activation("sigmoid", torch.sigmoid, 1 / (1 + sp.exp(-z)), "logistic sigmoid"),
        Activation("tanh", torch.tanh, sp.tanh(z), "hyperbolic tangent"),
        Activation("softplus", F.softplus, sp.log(1 + sp.exp(z)), "softplus, log(1 + e^z)"),
        Activation("abs", torch.abs, sp.Abs(z), "absolute value"),
    ]
}


def names() -> list[str]:
    """The registered activation names, in registry order."""
    return list(REGISTRY)


def get(name: str) -> Activation:
    """The registered activation called ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"activation: expected a registered name (str), got {type(name).__name__}")
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"activation: expected one of {names()}, got {name!r}") from None


def resolve(activation: str | Activation | Callable[[torch.Tensor], torch.Tensor]) -> Activation:
    """An :class:`Activation` from a registry name, an Activation, or a torch callable.

    A bare callable has no sympy expression; its ``expr`` is an undefined
    function ``σ(z)``, so properties that need the expression are undecided.
    """
    if isinstance(activation, Activation):
        return activation
    if isinstance(activation, str):
        return get(activation)
    if callable(activation):
        fn_name = getattr(activation, "__name__", type(activation).__name__)
        return Activation(fn_name, activation, sp.Function("sigma")(z), "user-supplied callable")
    raise TypeError(
        f"activation: expected a registered name, an Activation or a callable, got {type(activation).__name__}"
    )


#: The name a reader sees for each registered activation (tables, legends, prose); the registry's keys stay
#: the code's names.  ``|z|`` is maths, as the book writes it (:func:`symbreak.plotting.markdown_table` escapes
#: its bars in a table cell; matplotlib's mathtext reads it too).
DISPLAY_NAMES: dict[str, str] = {
    "identity": "identity",
    "relu": "ReLU",
    "leaky_relu": "leaky ReLU",
    "gelu": "GELU",
    "gelu_tanh": "GELU (tanh)",
    "silu": "SiLU",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
    "softplus": "softplus",
    "abs": "$|z|$",
}


def display_name(activation: str | Activation, *, plain: bool = False) -> str:
    """The book's name for a registered activation (:data:`DISPLAY_NAMES`): ``"leaky_relu"`` → ``"leaky ReLU"``.

    With ``plain`` the name is for printed text, without the dollars of its maths (``"|z|"``).  A name outside
    the registry raises ``ValueError``, as :func:`get` does; an :class:`Activation` is named by its ``name``, and
    an unregistered one (a user-supplied callable) keeps that name.
    """
    if isinstance(activation, Activation):
        shown = DISPLAY_NAMES.get(activation.name, activation.name)
    else:
        shown = DISPLAY_NAMES[get(activation).name]
    return shown.replace("$", "") if plain else shown
