"""symbreak.plotting.log_ticks: a log axis shows at least two labelled values, in one notation, whatever its span."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from symbreak.plotting import figure, log_ticks


@pytest.fixture
def ax():
    fig, axes = figure()
    axes[0].set_yscale("log")
    yield axes[0]
    plt.close(fig)


def _shown(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def test_less_than_a_decade_shows_one_two_five(ax):
    ax.set_ylim(0.35, 2.0)
    assert log_ticks(ax) == [0.5, 1.0, 2.0] and _shown(ax) == ["0.5", "1", "2"]
    ax.set_ylim(2.2e-5, 1.2e-4)
    assert log_ticks(ax) == [5e-5, 1e-4] and _shown(ax) == [r"$5{\times}10^{-5}$", "$10^{-4}$"]


def test_wide_spans_show_powers_of_ten_in_one_notation(ax):
    ax.set_ylim(1e-6, 1e-2)
    assert _shown(ax) != [] and log_ticks(ax) == [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    assert _shown(ax) == ["$10^{-6}$", "$10^{-5}$", "$10^{-4}$", "$10^{-3}$", "$10^{-2}$"]
    ax.set_ylim(1e-20, 1e2)
    assert log_ticks(ax, most=5) == [1e-20, 1e-15, 1e-10, 1e-5, 1.0]


def test_bad_arguments_are_named(ax):
    with pytest.raises(ValueError, match="axis: expected 'x' or 'y', got 'z'"):
        log_ticks(ax, "z")
    with pytest.raises(ValueError, match="most: expected an int of at least 2, got 1"):
        log_ticks(ax, most=1)
    ax.set_yscale("linear")
    ax.set_ylim(-1, 1)
    with pytest.raises(ValueError, match="expected a log y axis with positive limits"):
        log_ticks(ax)
