"""symbreak.pages.ch11, ch11_figures: chapter 11's tables, glued values and figures, from results with known values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch

from figure_checks import clashes
from symbreak.decide import Decision
from symbreak.dynamics import STUDENTS, History, StepSweep
from symbreak.pages import ch11, ch11_figures
from symbreak.plotting import FAMILY_COLOURS, SIGMA_LINESTYLES
from symbreak.symbolic.conservation import GeneratorCheck

F64 = torch.float64


def _rows(table: str) -> list[list[str]]:
    """The body rows of a Markdown pipe table, as lists of cells."""
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()[2:]]


LAWS = {"sym": {"qk": True, "kv": False}, "mem": {"kv": True}}


def test_power_of_ten_says_a_power_of_ten_and_refuses_anything_else():
    assert ch11._power_of_ten(1e-8) == "$10^{-8}$" and ch11._power_of_ten(100.0) == "$10^{2}$"
    with pytest.raises(ValueError, match="a power of ten"):
        ch11._power_of_ten(2e-8)


def test_generator_table(glued):
    generators = {
        "sym": {"qk": GeneratorCheck(True, True), "kv": GeneratorCheck(False, True)},
        "mem": {"kv": GeneratorCheck(True, False)},
    }
    ch11.glue_generator_table(generators, LAWS)
    table = glued["generator-table"]
    assert table.splitlines()[0].startswith("| layer | charge |")
    assert _rows(table) == [
        ["sym", ch11.PAIRS["qk"], "yes", "yes", "law"],
        ["sym", ch11.PAIRS["kv"], "no", "yes", "—"],
        ["mem", ch11.PAIRS["kv"], "yes", "no", "law"],
    ]


def test_euler_table_shows_the_defect_and_the_decision(glued):
    """Display names; E in the proof's forms (no fraction in a cell); ReLU's z H(z) − max(0, z) simplified to 0."""
    z = sp.Symbol("z", real=True)
    no = Decision(False, "counterexample", {z: sp.Integer(1)}, sp.Float(0.2))
    decisions = {"identity": Decision(True, "proof"), "relu": Decision(True, "proof"), "gelu": no, "silu": no}
    ch11.glue_euler_table(decisions)
    rows = _rows(glued["euler-table"])
    assert rows[0] == ["identity", "$0$", "yes (proof)"]  # z·1 − z
    assert rows[1] == ["ReLU", "$0$", "yes (proof)"]  # z·1 − z for z > 0, z·0 − 0 for z < 0: no Heaviside θ shown
    assert rows[2] == ["GELU", r"$z^{2} \phi{\left(z \right)}$", "no\u00a0$(z = 1)$"]  # z² φ(z)
    assert rows[3][:2] == ["SiLU", r"$z^{2} \left(1 - s{\left(z \right)}\right) s{\left(z \right)}$"]
    assert "frac" not in glued["euler-table"].split("\n", 2)[2]  # no fraction in the body


def test_euler_table_checks_the_proof_form(monkeypatch, glued):
    """A proof form that is not E(z) is refused: z² φ(z) with φ twice the normal density."""
    z, phi = sp.Symbol("z", real=True), sp.Function("phi")
    wrong = {"gelu": (z**2 * phi(z), {phi(z): 2 * sp.exp(-(z**2) / 2) / sp.sqrt(2 * sp.pi)})}
    monkeypatch.setattr(ch11, "_PROOF_FORMS", wrong)
    with pytest.raises(ValueError, match="gelu: the proof's form"):
        ch11.glue_euler_table({"gelu": Decision(True, "proof")}, names=["gelu"])


def test_student_names():
    """What a reader sees for each student; the labels of STUDENTS stay the code's keys."""
    assert ch11.student_name("symmetric SiLU") == "symmetric (SiLU)"
    assert ch11.student_name("bilinear") == "bilinear (σ = id)" and ch11.student_name("SwiGLU") == "SwiGLU"
    assert ch11.student_name("ReLU MLP") == "MLP (ReLU)"
    assert ch11.shown("symmetric GELU, kv (no law)") == "symmetric (GELU), $c^{kv}_j$ (no law)"  # no "kv"
    assert ch11.shown("gradient descent") == "gradient descent"  # not a student: as it is
    assert len({ch11.student_name(label) for label in STUDENTS}) == len(STUDENTS)
    with pytest.raises(ValueError, match="label: expected one of"):
        ch11.student_name("symmetric tanh")


def test_form_names():
    """Part V's names (Notation): from experiments.models.FORMS where it has the form, else built the same way."""
    assert ch11.form_name("key-value", "relu") == "MLP (ReLU)" and ch11.form_name("kv", "silu") == "MLP (SiLU)"
    assert ch11.form_name("symmetric", "silu") == "symmetric (SiLU)" and ch11.form_name("gated", "silu") == "SwiGLU"
    assert ch11.form_name("gated", "identity") == "bilinear (σ = id)"
    assert ch11.form_name("symmetric", "identity") == "symmetric (σ = id)"
    assert ch11.form_name("symmetric", "silu", 2) == "symmetric rank-2 (SiLU)"
    assert ch11.form_name("symmetric", "silu", 4) == "symmetric rank-4 (SiLU)"  # FORMS's own entry
    with pytest.raises(ValueError, match="form: expected one of"):
        ch11.form_name("full", "relu")


def test_track_and_train_settings(glued):
    ch11.glue_track_setting(
        d=4, d_out=2, n=64, m=4, teacher_m=6, lr=0.1, weight_decay=0.01, steps=1250, teacher_seed=1, student_seed=0
    )
    ch11.glue_train_setting(lr=0.05, steps=300)
    assert glued["track-lr"] == "0.1" and glued["track-wd"] == "0.01" and glued["d-out"] == "2"
    assert glued["track-steps"] == "1,250"
    assert glued["teacher-seed"] == "1" and glued["student-seed"] == "0"  # review 9: Table 11.4's one draw of each
    assert glued["train-time"] == "15" and glued["train-steps"] == "300"


def test_identity_table(glued):
    worst = {"sym": {"qk": 0.2, "kv": 2512.0}, "mem": {"kv": 0.7}}
    ch11.glue_identity_table(worst, LAWS, law_share=0.5)
    assert _rows(glued["identity-table"]) == [
        ["sym", ch11.PAIRS["qk"], "law", "yes", "below 50\u00a0% of the bound"],
        ["sym", ch11.PAIRS["kv"], "—", "no", "$2.5 \\times 10^{3}$ times the bound"],
        ["mem", ch11.PAIRS["kv"], "law", "yes", "not below 50\u00a0% of the bound"],
    ]
    assert glued["law-share"] == "50\u00a0%"
    assert glued["broken-ratio"] == r"$2.5 \times 10^{3}$"


def _history(charges: dict[str, list[list[float]]], grad_norm: list[float]) -> History:
    steps = list(range(len(grad_norm)))
    tensors = {k: [torch.tensor(row, dtype=F64) for row in v] for k, v in charges.items()}
    return History(steps=steps, loss=[1.0] * len(steps), grad_norm=grad_norm, **tensors)


def test_drift_table(glued):
    """Drift 0.2 against the allowance 0.1²(3² + 4²) = 0.25: ratio 0.8; drift 0.5, ratio 2."""
    sym = _history({"qk": [[1.0, 2.0], [1.1, 2.0], [1.2, 1.9]], "kv": [[0.0], [0.3], [0.5]]}, [3.0, 4.0, 5.0])
    ch11.glue_drift_table({"ReLU MLP": sym}, {"ReLU MLP": {"qk": True, "kv": False}}, lr=0.1)
    assert _rows(glued["drift-table"]) == [  # the ratio to three significant digits
        ["MLP (ReLU)", ch11.PAIRS["qk"], "law", "$2.00 \\times 10^{-1}$", "0.800"],
        ["MLP (ReLU)", ch11.PAIRS["kv"], "—", "$5.00 \\times 10^{-1}$", "2.00"],
    ]
    assert glued["law-drift-ratio"] == "0.80" and glued["broken-drift-ratio"] == "2.00"


def test_charges_figure(glued):
    """One panel per charge, one line per layer that has the charge: the largest change over units after the first
    step, against time; each line labelled at its end in its family's colour, "(no law)" where none is predicted."""
    sym = _history({"qk": [[1.0, 1.0], [1.5, 0.75], [2.0, 1.25]], "kv": [[0.0], [0.25], [4.0]]}, [1.0, 1.0, 1.0])
    mem = _history({"kv": [[1.0], [1.125], [1.0625]]}, [1.0, 1.0, 1.0])
    laws = {"symmetric GELU": {"qk": True, "kv": False}, "ReLU MLP": {"kv": True}}
    ch11_figures.charges_figure({"symmetric GELU": sym, "ReLU MLP": mem}, laws, lr=0.5)
    top, bottom = glued["fig-charges-in-training"].axes
    (line,) = top.get_lines()
    assert np.allclose(line.get_xdata(), [0.5, 1.0]) and np.allclose(line.get_ydata(), [0.5, 1.0])
    assert [t.get_text() for t in top.texts] == ["symmetric (GELU)"]
    assert [t.get_text() for t in bottom.texts] == ["symmetric (GELU), no law", "MLP (ReLU)"]
    assert np.allclose(bottom.get_lines()[0].get_ydata(), [0.25, 4.0])
    assert np.allclose(bottom.get_lines()[1].get_ydata(), [0.125, 0.0625])
    assert [t.get_color() for t in bottom.texts] == [FAMILY_COLOURS["symmetric"], FAMILY_COLOURS["kv"]]
    assert top.get_yscale() == "log" and clashes(glued["fig-charges-in-training"]) == []


def test_student_styles_are_family_colour_and_sigma_style():
    """Every student's colour is its family's and its line style its σ's; bilinear (σ = id) has its own colour."""
    styles = ch11_figures.student_styles()
    assert set(styles) == set(STUDENTS)
    assert styles["bilinear"] == (FAMILY_COLOURS["bilinear"], SIGMA_LINESTYLES["identity"])
    assert styles["SwiGLU"] == (FAMILY_COLOURS["gated"], SIGMA_LINESTYLES["silu"])
    assert styles["symmetric GELU"] == (FAMILY_COLOURS["symmetric"], SIGMA_LINESTYLES["gelu"])
    assert styles["ReLU MLP"] == (FAMILY_COLOURS["kv"], SIGMA_LINESTYLES["relu"])


def _sweep(one_step, fixed_time, slopes=(2.0, 1.0)) -> StepSweep:
    return StepSweep([10, 20], [0.1, 0.05], list(one_step), list(fixed_time), *slopes)


def test_step_sweeps_glue_and_figure(glued):
    sweeps = {
        "a (law)": _sweep([4e-3, 1e-3], [2e-2, 1e-2], (2.0001, 1.17)),
        "b (no law)": _sweep([3e-2, 1.5e-2], [0.3, 0.3], (1.004, 0.0)),
    }
    ch11.glue_step_sweeps(sweeps, duration=1.0)
    assert glued["slopes-law-one"] == "2.000" and glued["slopes-law-fixed"] == "1.17"
    assert glued["slopes-broken-one"] == "1.00" and glued["slopes-broken-fixed"] == "0.00"
    assert glued["sweep-lrs"] == "0.1, 0.05" and glued["duration"] == "1"
    ch11_figures.drift_figure(sweeps)
    left, right = glued["fig-drift-vs-step"].axes
    reference = left.get_lines()[-1]  # slope 2, a third below the first law case: 4e-3/3 · (η/0.1)²
    assert np.allclose(reference.get_ydata(), [4e-3 / 3, 4e-3 / 3 / 4])
    assert np.allclose(right.get_lines()[-1].get_ydata(), [2e-2 / 3, 2e-2 / 3 / 2])
    with pytest.raises(ValueError, match="sweeps: expected keys ending in"):
        ch11.glue_step_sweeps({"a": _sweep([1, 1], [1, 1])}, duration=1.0)


def test_step_sweeps_name_the_layers(glued):
    """The chapter's four cases over its five step sizes: book names in the legend, minus signs in the prose."""
    steps = [10, 20, 40, 80, 160]
    lrs = [1 / s for s in steps]

    def sweep(one, fixed, slopes):
        return StepSweep(
            steps, lrs, [one * lr ** slopes[0] for lr in lrs], [fixed * lr ** slopes[1] for lr in lrs], *slopes
        )

    sweeps = {
        "symmetric SiLU, qk (law)": sweep(2.0, 0.2, (2.0, 1.0)),
        "SwiGLU, kv (law)": sweep(0.08, 0.06, (2.0, 1.0)),
        "symmetric SiLU, kv (no law)": sweep(0.01, 0.03, (1.3, 0.3)),
        "SwiGLU, qk (no law)": sweep(0.04, 0.05, (1.2, -0.04)),
    }
    ch11.glue_step_sweeps(sweeps, duration=1.0)
    assert glued["slopes-broken-fixed"] == "0.30 and −0.04"  # the minus sign U+2212 in the prose
    ch11_figures.drift_figure(sweeps)
    fig = glued["fig-drift-vs-step"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:2] == ["symmetric (SiLU), $c^{qk}_j$ (law)", "SwiGLU, $c^{kv}_j$ (law)"]
    # one colour per family (the figure style's), law and no law by line style and marker
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    symmetric, gated = FAMILY_COLOURS["symmetric"], FAMILY_COLOURS["gated"]
    law, broken = lines["symmetric (SiLU), $c^{qk}_j$ (law)"], lines["symmetric (SiLU), $c^{kv}_j$ (no law)"]
    assert law.get_color() == broken.get_color() == symmetric
    assert lines["SwiGLU, $c^{qk}_j$ (no law)"].get_color() == gated != symmetric
    assert (law.get_linestyle(), law.get_marker()) == ("-", "o")
    assert (broken.get_linestyle(), broken.get_marker(), broken.get_fillstyle()) == (":", "^", "none")
    assert clashes(fig) == []


def test_weight_decay_glue_and_figure(glued):
    rates = {("sym", "qk"): [0.5, 0.51], ("gated", "kv"): [0.502]}
    ch11.glue_weight_decay(rates, 0.50125, weight_decay=0.25, lr=0.02, steps=300, unbalance=3.0)
    assert glued["wd-rate-min"] == "1.0000" and glued["wd-rate-max"] == "1.0200"
    assert glued["wd-rate-discrete"] == "1.0025" and glued["wd-lambda"] == "0.25" and glued["unbalance"] == "3"
    history = History(
        steps=[0, 5, 10], qk=[torch.tensor([2.0, -1.0], dtype=F64) * math.exp(-0.5 * s * 0.02) for s in (0, 5, 10)]
    )
    decays = {("symmetric SiLU", "qk"): history, ("SwiGLU", "qk"): history}
    ch11_figures.weight_decay_figure(decays, weight_decay=0.25, lr=0.02)
    ax = glued["fig-weight-decay"].axes[0]
    assert ax.get_title() == "symmetric (SiLU), $c^{qk}_j$" and ax.get_yscale() == "log"
    assert clashes(glued["fig-weight-decay"]) == []
    solid, dashed = ax.get_lines()[2:4]  # the second unit: |c| = 1 · e^{−2λt}, and its prediction
    assert np.allclose(dashed.get_ydata(), np.exp(-0.5 * np.array([0.0, 0.1, 0.2])), rtol=1e-3)
    assert np.allclose(solid.get_ydata(), dashed.get_ydata(), rtol=1e-3)


def test_optimizers_glue_and_figure(glued):
    keys = ["gradient descent", "heavy ball, μ = 0.5", "heavy ball, μ = 0.9", "momentum flow, κ = 2", "Adam"]
    drifts = {k: [0.2 / (i + 1), 0.1 / (i + 1), 0.05 / (i + 1)] for i, k in enumerate(keys)}
    slopes = {k: -1.0 + 0.25 * i for i, k in enumerate(keys)}
    ch11.glue_optimizers(drifts, slopes, momenta=(0.5, 0.9), damping=2.0, adam_duration=0.2, steps=[10, 20, 40])
    assert glued["hb-mus"] == "0.5 and 0.9" and glued["mf-kappa"] == "2" and glued["sweep-steps"] == "10, 20, 40"
    assert glued["slope-gd"] == "−1.00" and glued["slope-adam"] == "0.00"  # the minus sign U+2212
    assert glued["drift-gd"] == r"$5.0 \times 10^{-2}$" and glued["drift-hb1"] == r"$2.5 \times 10^{-2}$"
    # review 9: Adam's settings, read from the code (train's betas, torch's eps), not typed in the prose
    assert glued["adam-betas"] == "(0.9, 0.999)" and glued["adam-eps"] == "$10^{-8}$"
    assert glued["adam-duration"] == "0.2"
    ch11_figures.optimizer_figure(drifts, [10, 20, 40])
    reference = glued["fig-optimizer-drift"].axes[0].get_lines()[-1]
    assert np.allclose(reference.get_ydata(), [0.2, 0.1, 0.05])  # slope −1 through (10, 0.2)
    fig = glued["fig-optimizer-drift"]  # one legend, below the axes: inside, it covered the gradient-descent curve
    assert fig.axes[0].get_legend() is None and len(fig.legends) == 1 and clashes(fig) == []
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [*keys, "slope −1"]
    with pytest.raises(ValueError, match="drifts: expected 5 optimisers"):
        ch11.glue_optimizers(
            dict(list(drifts.items())[:4]), slopes, momenta=(0.5,), damping=2.0, adam_duration=0.2, steps=[1]
        )
