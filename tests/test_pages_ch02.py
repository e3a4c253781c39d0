"""symbreak.pages.ch02: chapter 2's glue blocks, printed lines and figures hold the numbers the prose quotes.

Expected values are worked out here from the layers' sizes (``md + m d_out``
parameters for the key–value memory, ``d²`` more with a global query map), not
from :mod:`symbreak.costs`.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import sympy
import torch

from figure_checks import clashes
from symbreak import costs, prose
from symbreak.pages import ch02

matplotlib.use("Agg")

LLAMA_D, LLAMA_M = 4096, 11008


def test_llama_costs_glue_block(glued):
    """gq-llama-*: 2md parameters in the memory (d_out = d), d² more with Q, d/(2m) of them; 2d² extra FLOPs of 4md."""
    values = ch02.llama_costs()
    assert list(values) == [
        "gq-llama-d",
        "gq-llama-m",
        "gq-llama-kv",
        "gq-llama-gq",
        "gq-llama-extra",
        "gq-llama-overhead",
        "gq-llama-extra-flops",
        "gq-llama-flops-overhead",
    ]
    kv = 2 * LLAMA_M * LLAMA_D
    assert values["gq-llama-kv"] == kv == 90_177_536
    assert values["gq-llama-gq"] == kv + LLAMA_D**2
    assert values["gq-llama-extra"] == LLAMA_D**2
    assert values["gq-llama-overhead"] == f"{100 * LLAMA_D / (2 * LLAMA_M):.1f}\u00a0%"
    assert values["gq-llama-extra-flops"] == 2 * LLAMA_D**2
    assert values["gq-llama-flops-overhead"] == f"{100 * 2 * LLAMA_D**2 / (4 * LLAMA_M * LLAMA_D):.1f}\u00a0%"
    prose.glue_all(values)
    # a size and its value in one piece of maths, so that no line breaks after "m ="
    assert (glued["gq-llama-d"], glued["gq-llama-m"]) == ("$d = 4{,}096$", "$m = 11{,}008$")
    assert glued["gq-llama-kv"] == "90,177,536"
    assert glued["gq-llama-extra"] == "16,777,216"
    assert glued["gq-llama-overhead"] == glued["gq-llama-flops-overhead"] == "18.6\u00a0%"


def test_model_overheads_are_d_over_2m():
    """With d_out = d the overhead d² / (2md) is d/(2m) for every model."""
    overheads = ch02.model_overheads()
    assert list(overheads) == list(costs.MODELS)
    for name, (ratio, share) in overheads.items():
        d, m = costs.MODELS[name]["d"], costs.MODELS[name]["m"]
        assert ratio == m / d
        assert share == pytest.approx(d / (2 * m), rel=1e-12)
    assert overheads["T5-base (ReLU)"] == (4.0, 0.125)


def test_overhead_values(glued):
    rho = costs.rho
    values = ch02.overhead_values(1 / (2 * rho))
    prose.glue_all(values)
    assert glued == {"gq-overhead-4d": "12.5\u00a0%"}


def test_overhead_values_reject_a_formula_with_other_symbols():
    with pytest.raises(ValueError, match=r"of_ratio: expected a sympy formula in costs.rho alone, got \['d', 'rho'\]"):
        ch02.overhead_values(costs.d / costs.rho)
    with pytest.raises(ValueError, match="of_ratio: expected a sympy formula in costs.rho alone, got float"):
        ch02.overhead_figure(0.5)


def test_overhead_figure_draws_the_curve_and_the_models():
    fig = ch02.overhead_figure(1 / (2 * costs.rho))
    (ax,) = fig.axes
    (line,) = ax.get_lines()
    x, y = line.get_data()
    assert x[0] == 1 and x[-1] == pytest.approx(16)
    np.testing.assert_allclose(y, 100 / (2 * x), rtol=1e-12)
    points = ax.collections[0].get_offsets()
    np.testing.assert_allclose(points[1], [4.0, 12.5])
    # LLaMA-7B and T5-base (GLU variants) nearly coincide: one label for both, with a leader to the pair
    labels = [t.get_text() for t in ax.texts if t.get_text()]
    assert labels == ["LLaMA-7B 18.6\u00a0%\nT5-base (GLU variants) 18.8\u00a0%", "T5-base (ReLU) 12.5\u00a0%"]
    (leader,) = (t for t in ax.texts if not t.get_text())
    np.testing.assert_allclose(leader.xy, np.mean([points[0], points[2]], axis=0))
    assert clashes(fig) == []  # no label on the curve, on a point or on another label


def test_label_groups_join_only_points_whose_markers_overlap():
    points = {"a": (2.6875, 0.186), "b": (4.0, 0.125), "c": (2.667, 0.1875), "d": (2.667, 0.25)}
    assert ch02._label_groups(points) == [["a", "c"], ["b"], ["d"]]


def test_absorption_figure_shows_agreement_and_a_blind_direction():
    """Top: one panel per rank, every coefficient pair on the diagonal; bottom: constant along nQ = 0, not along a
    column of Q."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        fig = ch02.absorption_figure(torch.Generator().manual_seed(7))
    finally:
        torch.set_default_dtype(default)
    *ranks, right = fig.axes
    assert [ax.get_title() for ax in ranks] == ["rank $Q$ = 8", "rank $Q$ = 4", "rank $Q$ = 1"]
    for ax in ranks:
        (scatter,) = ax.collections
        a, b = np.asarray(scatter.get_offsets()).T
        assert a.size == 24 * 32
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
        # each rank on its own scale: the panel spans its own coefficients, rank 1's small ones included
        assert ax.get_xlim()[1] < 1.2 * a.max()
    blind, seen = (line.get_ydata() for line in right.get_lines())
    assert np.ptp(blind) < 1e-9 * max(1.0, np.abs(blind).max())
    assert np.ptp(seen) > 0.1
    # the legend words the two directions as the caption and the control of the check do: nQ = 0 and nQ ≠ 0
    assert [line.get_label() for line in right.get_lines()] == [
        "$n$ with $nQ = 0$",
        r"$n$ with $nQ \neq 0$",
    ]
    # the panel's title words them the same way, not by the code's names (blind, seen)
    assert right.get_title() == r"rank $Q$ = 4: a direction with $nQ = 0$ and one with $nQ \neq 0$"
    assert clashes(fig) == []


def test_absorption_figure_rejects_a_seed():
    with pytest.raises(TypeError, match="generator: expected a torch.Generator, got int"):
        ch02.absorption_figure(7)


def test_overhead_math_displays_the_three_differences():
    extra = costs.overhead("global_query", base="kv")
    shown = ch02.overhead_math(extra).data
    assert shown.startswith(r"\begin{aligned}\Delta\,\text{parameters} &= ") and shown.endswith(r"\end{aligned}")
    assert shown.count(r",\\") == 2 and r"\text{FLOPs per token}" in shown and r"\text{relative}" in shown
    assert "d^{2}" in shown
    with pytest.raises(ValueError, match="extra: expected the dict of costs.overhead"):
        ch02.overhead_math({"parameters": extra["parameters"]})


def test_ratio_math_and_singular_math():
    of_ratio = costs.at_ratio(costs.overhead("global_query", base="kv")["relative"])
    shown = ch02.ratio_math(of_ratio).data
    assert shown.startswith(r"d_{\mathrm{out}} = d,\ m = \rho d: \quad \text{relative} = ")
    assert r"\rho" in shown.split("=")[-1]
    with pytest.raises(ValueError, match="of_ratio: expected a sympy formula in costs.rho alone"):
        ch02.ratio_math(costs.overhead("global_query", base="kv")["relative"])
    Q, N = sympy.Matrix([[1, 2], [2, 4]]), sympy.Matrix([[2, -1]])
    shown = ch02.singular_math(Q, N).data
    assert shown.startswith(r"\begin{aligned} Q &= ") and r",\\N &= " in shown and shown.endswith(r"\end{aligned}")
    with pytest.raises(TypeError, match="N: expected a sympy Matrix, got list"):
        ch02.singular_math(Q, [[2, -1]])
