"""symbreak.pages.ch04: chapter 4's glue blocks, printed table and figures arrange the measured errors faithfully.

The inputs are small tensors of made-up errors whose means and shares are worked
out by hand here, so that a wrong row, a wrong axis of the mean or a square of
the mean in place of the mean of squares shows.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import torch

from figure_checks import clashes
from symbreak import prose
from symbreak.approximation import best_rank_R, relative_error
from symbreak.pages import ch04

matplotlib.use("Agg")

DIMS = [2, 8, 64]


def _errors(rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


#: per d = 2, 8, 64, two draws each
GENERIC = {
    "free": _errors([[0.0, 0.2], [0.5, 0.7], [0.0, 1.0]]),
    "parallel": _errors([[0.3, 0.5], [0.8, 0.8], [0.5, 0.5]]),
    "diagonal": _errors([[0.6, 0.7], [0.9, 0.7], [0.9, 1.0]]),
}


def test_descent_values_and_text(glued):
    reached = _errors([0.5, 0.25, 0.75])
    prose.glue_all(ch04.descent_values(reached, 0.2))
    assert glued == {
        "r1-starts": "3",
        "r1-descent-range": "the 3 starts end between 0.250 and 0.750, against the minimum 0.200",
    }
    # equal at the digits shown: one number, once, and no "between 0.333 and 0.333"
    agreeing = _errors([0.3333331, 0.3334])
    assert ch04.descent_values(agreeing, 0.33331)["r1-descent-range"] == "all 2 starts end at the minimum 0.333"
    assert ch04.descent_range(agreeing, 0.33331, digits=6) == (
        "the 2 starts end between 0.333333 and 0.333400, against the minimum 0.333310"
    )
    # starts that agree with each other but not with the minimum have not reached it
    assert (
        ch04.descent_range(_errors([0.5, 0.5]), 0.25)
        == "the 2 starts end between 0.500 and 0.500, against the minimum 0.250"
    )
    assert (
        ch04.descent_text(agreeing, 0.33331)
        == "every one of the 2 starts ends at the minimum, to 3 significant digits: True"
    )
    assert ch04.descent_text(reached, 0.2).endswith("digits: False")
    with pytest.raises(ValueError, match="reached: expected a non-empty tensor"):
        ch04.descent_values(torch.zeros(0), 0.2)
    with pytest.raises(TypeError, match="formula_error: expected a float, got Tensor"):
        ch04.descent_values(reached, torch.tensor(0.2))
    with pytest.raises(TypeError, match="minimum: expected a float, got int"):
        ch04.descent_range(reached, 1)
    with pytest.raises(ValueError, match="digits: expected an int >= 1, got 0"):
        ch04.descent_range(reached, 0.2, digits=0)


def test_generic_values_means_and_shares(glued):
    """Means per row; the share at d = 64 is 64 · mean(1 − ε²): 64 · (1 + 0)/2 = 32 for errors 0 and 1."""
    prose.glue_all(ch04.generic_values(DIMS, 2, GENERIC))
    assert glued == {
        "r1-draws": "2",
        "r1-free-d2": "0.10",
        "r1-free-d8": "0.60",
        "r1-free-d64": "0.50",
        "r1-parallel-d2": "0.40",
        "r1-diagonal-d2": "0.65",
        "r1-parallel-d64": "0.50",
        "r1-diagonal-d64": "0.95",
        "r1-share-free-d64": "32.0",  # not 64 · (1 − 0.5²) = 48.0
        "r1-share-parallel-d64": "48.0",
    }


def test_generic_values_reject_bad_input():
    with pytest.raises(ValueError, match=r"dims: expected the sizes 2, 8 and 64 among them, got \[2, 8, 32\]"):
        ch04.generic_values([2, 8, 32], 2, GENERIC)
    with pytest.raises(ValueError, match=r"errors\['diagonal'\]: expected a tensor of shape \(3, draws\)"):
        ch04.generic_values(DIMS, 2, {**GENERIC, "diagonal": GENERIC["diagonal"][:2]})
    with pytest.raises(ValueError, match="draws: expected an int >= 1, got 2.0"):
        ch04.generic_values(DIMS, 2.0, GENERIC)
    with pytest.raises(TypeError, match="errors: expected a mapping"):
        ch04.generic_figure(DIMS, [GENERIC["free"]])


def test_generic_figure_plots_means_and_kept_shares():
    fig = ch04.generic_figure(DIMS, GENERIC)
    left, right = fig.axes
    free_left, free_right = left.get_lines()[0], right.get_lines()[0]
    assert free_left.get_label() == "best term, $q$ and $k$ free"
    np.testing.assert_allclose(free_left.get_xdata(), DIMS)
    np.testing.assert_allclose(free_left.get_ydata(), [0.1, 0.6, 0.5])
    # d · mean(1 − ε²): 2 · (1 + 0.96)/2, 8 · (0.75 + 0.51)/2, 64 · (1 + 0)/2
    np.testing.assert_allclose(free_right.get_ydata(), [1.96, 5.04, 32.0])
    assert [line.get_label() for line in left.get_lines()] == [
        "best term, $q$ and $k$ free",
        r"best with $q \parallel k$",
        "best with $q = k$",
    ]
    assert {round(line.get_ydata()[0], 6) for line in right.get_lines() if line.get_linestyle() == "--"} == {8, 4}


PLANTED = {
    "free": _errors([[0.0, 0.0], [0.3, 0.5]]),
    "parallel": _errors([[0.5, 0.7], [0.6, 0.6]]),
    "diagonal": _errors([[0.7, 0.7], [0.8, 0.6]]),
    "planted": _errors([[0.0, 0.0], [0.4, 0.6]]),
}


def test_planted_values(glued):
    prose.glue_all(ch04.planted_values(32, 2, [0.0, 0.5], PLANTED))
    assert glued == {
        "r1-planted-d": "32",
        "r1-planted-draws": "2",
        "r1-planted-parallel0": "0.60",
        "r1-planted-diagonal0": "0.70",
        "r1-planted-free-half": "0.40",
        "r1-planted-own-half": "0.50",
    }
    with pytest.raises(ValueError, match="noise_levels: expected levels starting at 0 and containing 0.5"):
        ch04.planted_values(32, 2, [0.1, 0.5], PLANTED)
    with pytest.raises(ValueError, match=r"errors\['planted'\]"):
        ch04.planted_values(32, 2, [0.0, 0.5], {k: v for k, v in PLANTED.items() if k != "planted"})


def test_planted_figure():
    fig = ch04.planted_figure([0.0, 0.5], PLANTED)
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert len(lines) == 4
    assert lines[-1].get_label() == "the planted term $a^\\top b$" and lines[-1].get_linestyle() == "--"
    np.testing.assert_allclose(lines[-1].get_ydata(), [0.0, 0.5])
    assert ax.get_ylim() == (0, 1)


def test_descent_values_glue_the_configuration():
    values = ch04.descent_values(torch.tensor([0.5, 0.25]), 0.25, 0.02, 1500)
    assert values["r1-descent-lr"] == (0.02, "g") and values["r1-descent-steps"] == (1500, "d")
    assert "r1-descent-lr" not in ch04.descent_values(torch.tensor([0.5]), 0.25)
    with pytest.raises(ValueError, match="lr: expected a float > 0, got 0.0"):
        ch04.descent_values(torch.tensor([0.5]), 0.25, 0.0)
    with pytest.raises(ValueError, match="steps: expected an int >= 1, got 0"):
        ch04.descent_values(torch.tensor([0.5]), 0.25, 0.02, 0)


def test_output_values():
    values = ch04.output_values(8, 32, 512, 0.9, 0.89, 0.88, torch.tensor([0.8, 1.0]))
    assert values["r1-output-units"] == (8, "d") and values["r1-output-tokens"] == (512, "d")
    assert values["r1-output-rho"] == (0.89, ".2f")
    assert values["r1-form-error"] == (pytest.approx(0.9), ".2f")
    with pytest.raises(ValueError, match="tokens: expected an int >= 1, got 0"):
        ch04.output_values(8, 32, 0, 0.9, 0.89, 0.88, torch.tensor([0.8]))
    with pytest.raises(ValueError, match="rho: expected a float >= 0"):
        ch04.output_values(8, 32, 512, 0.9, -1.0, 0.88, torch.tensor([0.8]))
    with pytest.raises(ValueError, match="form_errors: expected a non-empty tensor"):
        ch04.output_values(8, 32, 512, 0.9, 0.89, 0.88, torch.zeros(0))


def test_generic_figure_labels_stay_off_the_curves():
    """Fig. 4.1 with errors as the chapter draws them: the two limit labels sit above their lines at the right end,
    clear of every curve and marker (the label "one eigenvalue" once sat on the best term's curve near d = 6)."""
    generator = torch.Generator().manual_seed(4)
    dims, kinds = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64], {"free": [], "parallel": [], "diagonal": []}
    for d in dims:
        W = torch.randn(64, d, d, generator=generator, dtype=torch.float64)
        Q, K = best_rank_R(W, 1)
        p, n = (Q + K) / 2, (Q - K) / 2
        kinds["free"].append(relative_error(W, Q, K))
        kinds["diagonal"].append(relative_error(W, p, p))
        kinds["parallel"].append(torch.minimum(kinds["diagonal"][-1], relative_error(W, n, -n)))
    fig = ch04.generic_figure(dims, {kind: torch.stack(rows) for kind, rows in kinds.items()})
    labels = {t.get_text(): t for t in fig.axes[1].texts}
    assert labels["one eigenvalue"].get_position() == (64, 4.15) and labels["one eigenvalue"].get_ha() == "right"
    assert clashes(fig) == []
    # one legend for both panels, below them, not inside the left panel over the best term's band
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "best term, $q$ and $k$ free",
        r"best with $q \parallel k$",
        "best with $q = k$",
    ]
    assert legend.get_window_extent(fig.canvas.get_renderer()).y1 <= fig.axes[0].get_window_extent().y0


def test_parameter_math_displays_both_counts():
    from symbreak import costs

    shown = ch04.parameter_math({form: costs.parameters(form) for form in ("rank1", "full")}).data
    assert shown == (
        r"\begin{aligned} \text{rank-1}&: 2 d m + d_{\mathrm{out}} m,\\"
        r"\text{full}&: 2 d^{2} m + d_{\mathrm{out}} m \end{aligned}"
    )
    with pytest.raises(ValueError, match=r"counts: expected the keys \['full', 'rank1'\], got \['rank1'\]"):
        ch04.parameter_math({"rank1": costs.parameters("rank1")})
