"""Chapter 4's glued values and figures: how well one rank-1 term approximates a form.

The chapter's checks and experiments stay in its notebook (the errors come from
:func:`symbreak.approximation.relative_error` of the best terms); this module only
arranges the measured relative errors:

* :func:`parameter_math` — the parameter counts of the symmetric rank-1 and the full form, displayed;
* :func:`descent_range`, :func:`descent_values` and :func:`descent_text` — gradient descent against the minimum
  (``descent_range`` also words chapter 9's descent);
* :func:`output_values` — the output change of the rank-1 layer against its Gaussian prediction;
* :func:`generic_values` and :func:`generic_figure` — Gaussian forms;
* :func:`planted_values` and :func:`planted_figure` — a planted term plus noise.

An ``errors`` mapping holds one tensor of relative errors per kind of term, ``"free"``
(the best term), ``"parallel"`` (best with ``q ∥ k``) and ``"diagonal"`` (best with
``q = k``), and for the planted forms also ``"planted"`` (the planted term itself);
each has one row per size or noise level and one column per draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp
import torch
from IPython.display import Math
from matplotlib.figure import Figure

from symbreak import symbolic
from symbreak.plotting import figure, legend_below, mean_band

__all__ = [
    "parameter_math",
    "descent_range",
    "descent_values",
    "descent_text",
    "output_values",
    "generic_values",
    "generic_figure",
    "planted_values",
    "planted_figure",
]

#: The book's names of the forms whose parameter counts :func:`parameter_math` displays.
_COUNTED = {"rank1": "rank-1", "full": "full"}


def parameter_math(counts: Mapping[str, sp.Expr]) -> Math:
    """The parameter counts ``{"rank1": …, "full": …}`` (formulas of :func:`symbreak.costs.parameters`) as two
    aligned lines, ``rank-1: …`` and ``full: …``."""
    if not isinstance(counts, Mapping) or set(counts) != set(_COUNTED):
        got = sorted(counts) if isinstance(counts, Mapping) else type(counts).__name__
        raise ValueError(f"counts: expected the keys {sorted(_COUNTED)}, got {got}")
    lines = [rf"\text{{{name}}}&: {symbolic.decimal_latex(counts[form])}" for form, name in _COUNTED.items()]
    return Math(r"\begin{aligned} " + r",\\".join(lines) + r" \end{aligned}")


#: Legend label and marker of each kind of term, in the order drawn.
_TERMS = {
    "free": ("best term, $q$ and $k$ free", "o"),
    "parallel": (r"best with $q \parallel k$", "s"),
    "diagonal": ("best with $q = k$", "^"),
}


def _errors(errors: Mapping[str, torch.Tensor], rows: int, kinds: Sequence[str]) -> None:
    """Check that ``errors`` has a 2-d tensor with ``rows`` rows for each of ``kinds``."""
    if not isinstance(errors, Mapping):
        raise TypeError(f"errors: expected a mapping kind → tensor, got {type(errors).__name__}")
    for kind in kinds:
        value = errors.get(kind)
        if not isinstance(value, torch.Tensor) or value.ndim != 2 or value.shape[0] != rows:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(f"errors[{kind!r}]: expected a tensor of shape ({rows}, draws), got {shape}")


def _count(name: str, value: object) -> int:
    """Check that ``value`` is an int >= 1 (a size or a number of draws)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    return value


def _significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros kept: ``0.67034 → "0.670"``."""
    return f"{value:#.{digits}g}"


def descent_range(reached: torch.Tensor, minimum: float, digits: int = 3) -> str:
    """Where gradient descent ended against the minimum, in words, each number once to ``digits`` significant digits.

    ``"all 16 starts end at the minimum 0.670"`` where the largest and the smallest error of ``reached`` (one per
    start) both round to the minimum's digits, else ``"the 16 starts end between 0.670 and 0.712, against the minimum
    0.670"``.  The prose follows it with the equation of the minimum (``… of (4.5)``).
    """
    if not isinstance(reached, torch.Tensor) or reached.numel() == 0:
        raise ValueError(f"reached: expected a non-empty tensor of relative errors, got {reached!r}")
    if isinstance(minimum, bool) or not isinstance(minimum, float):
        raise TypeError(f"minimum: expected a float, got {type(minimum).__name__}")
    _count("digits", digits)
    low, high, best = (_significant(v, digits) for v in (reached.min().item(), reached.max().item(), minimum))
    n = reached.numel()
    if low == high == best:
        return f"all {n} starts end at the minimum {best}"
    return f"the {n} starts end between {low} and {high}, against the minimum {best}"


def descent_values(
    reached: torch.Tensor, formula_error: float, lr: float | None = None, steps: int | None = None
) -> dict[str, object]:
    """The glue block of the descent: ``r1-starts`` and ``r1-descent-range``, the words of :func:`descent_range`
    for the errors after descent against the minimum of eq-rank-one-best, ``formula_error``.

    With ``lr`` and ``steps`` (the configured step size and number of steps) also ``r1-descent-lr`` and
    ``r1-descent-steps``.
    """
    if isinstance(formula_error, bool) or not isinstance(formula_error, float):
        raise TypeError(f"formula_error: expected a float, got {type(formula_error).__name__}")
    values: dict[str, object] = {
        "r1-starts": (reached.numel(), "d"),
        "r1-descent-range": descent_range(reached, formula_error),
    }
    if lr is not None:
        if isinstance(lr, bool) or not isinstance(lr, float) or not lr > 0:
            raise ValueError(f"lr: expected a float > 0, got {lr!r}")
        values["r1-descent-lr"] = (lr, "g")
    if steps is not None:
        values["r1-descent-steps"] = (_count("steps", steps), "d")
    return values


def output_values(
    units: int, width: int, tokens: int, change: float, rho: float, diagonal: float, form_errors: torch.Tensor
) -> dict[str, object]:
    """The glue block of the output comparison: sizes, measured change, ``ρ``, its diagonal part, the form error.

    ``r1-output-units``, ``r1-output-d`` and ``r1-output-tokens`` (the configured sizes);
    ``r1-output-change``, ``r1-output-rho``, ``r1-output-diagonal`` and ``r1-form-error``
    (the mean of ``form_errors``), two decimals.
    """
    sizes = {"units": units, "width": width, "tokens": tokens}
    for name, value in sizes.items():
        _count(name, value)
    for name, value in (("change", change), ("rho", rho), ("diagonal", diagonal)):
        if isinstance(value, bool) or not isinstance(value, float) or not value >= 0:
            raise ValueError(f"{name}: expected a float >= 0, got {value!r}")
    if not isinstance(form_errors, torch.Tensor) or form_errors.numel() == 0:
        raise ValueError(f"form_errors: expected a non-empty tensor of relative errors, got {form_errors!r}")
    return {
        "r1-output-units": (units, "d"),
        "r1-output-d": (width, "d"),
        "r1-output-tokens": (tokens, "d"),
        "r1-output-change": (change, ".2f"),
        "r1-output-rho": (rho, ".2f"),
        "r1-output-diagonal": (diagonal, ".2f"),
        "r1-form-error": (form_errors.mean().item(), ".2f"),
    }


def descent_text(reached: torch.Tensor, formula_error: float, digits: int = 3) -> str:
    """One verdict line: whether every start ends at the minimum ``formula_error``, to ``digits`` significant digits
    (the words of :func:`descent_range`), without the digits themselves, which the prose quotes once."""
    at_minimum = descent_range(reached, formula_error, digits).startswith("all ")
    return (
        f"every one of the {reached.numel()} starts ends at the minimum, to {digits} significant digits: {at_minimum}"
    )


def generic_values(dims: Sequence[int], draws: int, errors: Mapping[str, torch.Tensor]) -> dict[str, object]:
    """The glue block of the Gaussian forms: ``r1-draws``, mean errors at ``d = 2, 8, 64``, shares at ``d = 64``.

    ``r1-free-d2|d8|d64``, ``r1-parallel-d2|d64``, ``r1-diagonal-d2|d64`` are mean relative
    errors (two decimals); ``r1-share-free-d64`` and ``r1-share-parallel-d64`` the mean
    share kept times ``d``, ``64 · (1 − ε²)`` (one decimal).  ``dims`` must contain 2, 8 and 64.
    """
    dims = list(dims)
    missing = sorted({2, 8, 64} - set(dims))
    if missing:
        raise ValueError(f"dims: expected the sizes 2, 8 and 64 among them, got {dims} (missing {missing})")
    _errors(errors, len(dims), _TERMS)
    draws = _count("draws", draws)

    def mean(kind: str, d: int) -> tuple[float, str]:
        return errors[kind][dims.index(d)].mean().item(), ".2f"

    def share(kind: str) -> tuple[float, str]:
        return 64 * (1 - errors[kind][dims.index(64)] ** 2).mean().item(), ".1f"

    values: dict[str, object] = {"r1-draws": (draws, "d")}
    values.update({f"r1-free-d{d}": mean("free", d) for d in (2, 8, 64)})
    for d in (2, 64):
        values[f"r1-parallel-d{d}"] = mean("parallel", d)
        values[f"r1-diagonal-d{d}"] = mean("diagonal", d)
    values["r1-share-free-d64"] = share("free")
    values["r1-share-parallel-d64"] = share("parallel")
    return values


def generic_figure(dims: Sequence[int], errors: Mapping[str, torch.Tensor]) -> Figure:
    """fig-rank-one-generic: each kind of term's relative error (left) and ``d (1 − ε²)`` (right) against ``d``."""
    _errors(errors, len(dims), _TERMS)
    fig, axes = figure(ncols=2, width=7.6, height=3.3)
    for kind, (label, marker) in _TERMS.items():
        mean_band(axes[0], dims, errors[kind].numpy(), label=label, marker=marker)
        kept = torch.tensor(dims, dtype=errors[kind].dtype)[:, None] * (1 - errors[kind] ** 2)
        mean_band(axes[1], dims, kept.numpy(), label=label, marker=marker)
    axes[0].set_ylabel(r"relative error $\varepsilon$")
    axes[0].set_ylim(0, 1)
    axes[1].set_ylabel(r"share kept times $d$:  $d\,(1-\varepsilon^2)$")
    # large-d limits (see the chapter): eigenvalues of square 2d at the semicircle edges, ‖sym W‖² ≈ d²/2
    for limit in (8, 4):
        axes[1].axhline(limit, color="0.35", ls="--", lw=1.0)
    axes[1].text(64, 8.15, "two eigenvalues", fontsize=9, va="bottom", ha="right")
    # at the right end, like "two eigenvalues": between the two restricted terms below and the best term above
    axes[1].text(64, 4.15, "one eigenvalue", fontsize=9, va="bottom", ha="right")
    axes[1].set_ylim(0, 9.5)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks([2, 4, 8, 16, 32, 64], labels=["2", "4", "8", "16", "32", "64"])
        ax.set_xlabel("input width $d$")
    # one legend for both panels, below them: inside the left panel it covered the band of the best term
    legend_below(fig, axes[0], ncol=3)
    return fig


def planted_values(
    d: int, draws: int, noise_levels: Sequence[float], errors: Mapping[str, torch.Tensor]
) -> dict[str, object]:
    """The glue block of the planted forms: sizes, the restricted terms at ``η = 0``, best and planted at ``η = 0.5``.

    ``r1-planted-d`` and ``r1-planted-draws``; ``r1-planted-parallel0`` and
    ``r1-planted-diagonal0`` (mean errors at the first noise level, ``η = 0``);
    ``r1-planted-free-half`` and ``r1-planted-own-half`` (mean errors of the best and
    of the planted term at ``η = 0.5``), two decimals.
    """
    levels = list(noise_levels)
    if not levels or levels[0] != 0 or 0.5 not in levels:
        raise ValueError(f"noise_levels: expected levels starting at 0 and containing 0.5, got {levels}")
    _errors(errors, len(levels), [*_TERMS, "planted"])
    d, draws = _count("d", d), _count("draws", draws)
    half = levels.index(0.5)
    return {
        "r1-planted-d": (d, "d"),
        "r1-planted-draws": (draws, "d"),
        "r1-planted-parallel0": (errors["parallel"][0].mean().item(), ".2f"),
        "r1-planted-diagonal0": (errors["diagonal"][0].mean().item(), ".2f"),
        "r1-planted-free-half": (errors["free"][half].mean().item(), ".2f"),
        "r1-planted-own-half": (errors["planted"][half].mean().item(), ".2f"),
    }


def planted_figure(noise_levels: Sequence[float], errors: Mapping[str, torch.Tensor]) -> Figure:
    """fig-rank-one-planted: the relative error of each kind of term and of the planted one against ``η``."""
    _errors(errors, len(noise_levels), [*_TERMS, "planted"])
    fig, axes = figure(width=6.4, height=3.8)
    for kind, (label, marker) in _TERMS.items():
        mean_band(axes[0], noise_levels, errors[kind].numpy(), label=label, marker=marker)
    planted = "the planted term $a^\\top b$"
    mean_band(axes[0], noise_levels, errors["planted"].numpy(), label=planted, marker="", linestyle="--")
    axes[0].set_xlabel(r"noise level $\eta = \|\mathrm{sym}(N)\|_F \,/\, \|\mathrm{sym}(a^\top b)\|_F$")
    axes[0].set_ylabel("relative error of one term")
    axes[0].set_ylim(0, 1)
    axes[0].legend(fontsize=9, loc="lower right")
    return fig
