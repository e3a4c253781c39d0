"""symbreak.pages.ch15: chapter 15's tables, glued values and figures on the digits, from hand-made results."""

from __future__ import annotations

import numpy as np
import pytest

from symbreak.experiments import FORMS, PRIMARY, PROTOCOL, Comparison, Result, SwapCheck, make_task
from symbreak.pages import ch15
from test_pages_ch14 import t_interval, table_rows  # the same table reader and t-interval

TASK = "digits"
#: The ten forms of the first edition, in their order (the synthetic results below are pinned to it); the
#: controls added for issue 15 are tested in tests/test_pages_ch14_stats.py and tests/test_experiments.py.
NAMES = [f for f in FORMS if not f.startswith(("symmetrised", "GLU", "tanh"))]
OLD_PAIRS = (*PRIMARY["P1"], *PRIMARY["P2"])  # the six pairs of the first edition
POINTS = (50, 200)
SEEDS = (0, 1, 2, 3)


def _rate(form: int, seed: int, point: int) -> float:
    """Error rates with a known order (the forms of ``FORMS`` from best to worst), a little lower after more steps."""
    return 0.02 + 0.01 * form + 0.002 * seed - (0.005 if point == POINTS[-1] else 0.0)


def _swap(form: int, seed: int) -> float | None:
    kind, act, _ = FORMS[NAMES[form]]
    if kind == "kv":
        return None
    return 0.18 + 0.02 * form + 0.001 * seed if kind == "gated" and act != "identity" else 0.0


@pytest.fixture
def comparison() -> Comparison:
    results = {
        c: [
            Result(TASK, form, s, 17, 2996, 1e-3 * (f + 1) + 1e-5 * s, _rate(f, s, c), _swap(f, s))
            for f, form in enumerate(NAMES)
            for s in SEEDS
        ]
        for c in POINTS
    }
    steps = np.arange(1, POINTS[-1] + 1)
    curves = {(TASK, f): np.stack([2.0 / (steps + s) for s in SEEDS]) for f in NAMES}
    return Comparison(results, curves, {}, {TASK: 2368})


def test_glue_setup_on_the_digits(glued):
    task = make_task(TASK)
    text = ch15.glue_setup(PROTOCOL, task, NAMES)
    assert (
        glued["side"] == "8" and glued["d"] == "60" and glued["d-out"] == "10"
    )  # 8 × 8 images less 4 constant pixels, 10 classes
    assert glued["n-train"] == "600" and glued["n-test"] == "1,197"  # 1797 images in scikit-learn's set
    assert glued["n-dropped"] == "4" and glued["n-floored"] == "13" and glued["std-floor"] == "1"
    assert glued["budget"] == f"{32 * (60 + 10):,}" and glued["lr"] == "0.01"
    assert text == "digits: 600 training and 1197 test images,\n   d = 60, 10 classes"


def test_forms_table_is_chapter_14s_with_wider_counts(glued, comparison):
    text = ch15.glue_forms(comparison.results[200], make_task(TASK), NAMES, pad=6)
    assert table_rows(glued["forms-table"])[8] == ["SwiGLU", "17", "2,996", "no", "no", "no"]
    assert glued["skip-parameters"] == "610"  # S is 10 × 60 and c has 10 entries
    assert text.splitlines()[0] == "              MLP (ReLU): m =  17, parameters =  2,996"


def test_training_glues_the_largest_error_and_loss(glued, comparison):
    errors = {(TASK, f, s): 0.0 for f in NAMES for s in SEEDS} | {(TASK, "SwiGLU", 1): 1 / 600}
    largest_loss = np.mean([1e-3 * len(NAMES) + 1e-5 * s for s in SEEDS])  # the last form has the largest loss
    for bound, verdict in ((1e-1, True), (largest_loss / 2, False)):
        text = ch15.glue_training(comparison.results[200], errors, TASK, NAMES, bound)
        assert text.splitlines() == [
            f"largest training error of {len(errors)} models: 0.2 %",
            f"every form's mean training loss below {bound:.0e}: {verdict}",
        ]
    assert glued["largest-train-error"] == "0.2" and glued["n-models"] == str(len(errors))
    assert glued["train-loss-bound"] == "1e-01"
    with pytest.raises(ValueError, match="train_errors: expected at least one"):
        ch15.glue_training(comparison.results[200], {}, TASK, NAMES, 1e-2)
    with pytest.raises(ValueError, match="loss_bound: expected a positive bound"):
        ch15.glue_training(comparison.results[200], errors, TASK, NAMES, 0.0)


def test_test_errors_in_per_cent(glued, comparison):
    text = ch15.glue_test_errors(comparison, TASK, NAMES)
    assert glued["comparison-table"].splitlines()[0] == "| form | test error, 50 steps | test error, 200 steps |"
    early, half_early = t_interval([_rate(6, s, 50) for s in SEEDS])
    final, half_final = t_interval([_rate(6, s, 200) for s in SEEDS])
    row = table_rows(glued["comparison-table"])[6]
    assert row == [
        "ReGLU",
        f"{100 * early:.1f} ± {100 * half_early:.1f} %",
        f"{100 * final:.1f} ± {100 * half_final:.1f} %",
    ]
    assert glued["best-final"] == glued["best-early"] == "MLP (ReLU), MLP (GELU), symmetric (ReLU)"
    for name, form in [("err-mlp", 1), ("err-bilinear", 5), ("err-swiglu", 8), ("err-symmetric", 4)]:
        assert glued[name] == f"{100 * np.mean([_rate(form, s, 200) for s in SEEDS]):.1f}"
    assert text.splitlines()[0] == "50 steps, best first:" and text.splitlines()[1] == "   MLP (ReLU)"


def test_swap_check(glued, comparison):
    check = SwapCheck(
        n_symmetric=25,
        symmetric_ratio=0.02,
        gated_ratio=1.77e13,
        even=True,
        n_controls=0,
        controls_unchanged=True,
        largest_swap=0.0,
    )
    ch15.glue_swap_check(check, 0.1)
    assert glued == {"n-symmetric-blocks": "25", "symmetric-share": "10 %", "gated-ratio": "1.8e+13"} | {
        "largest-symmetric-swap": "0"
    }


def test_figures_have_one_panel(glued, comparison):
    ch15.glue_loss_curves(comparison, TASK, NAMES, 50)
    (ax,) = glued["fig-digits-curves"].axes
    assert ax.get_title() == "" and ax.get_ylabel() == "training loss (cross-entropy)" and ax.get_yscale() == "log"
    ch15.glue_error_figure(comparison, TASK, NAMES)
    (ax,) = glued["fig-training-comparison-digits"].axes
    assert ax.get_xlabel() == "test error rate (%)" and ax.get_title() == TASK
    marks = ax.containers[0].lines[0].get_xdata()  # after 50 steps, in per cent
    assert np.allclose(marks, [100 * np.mean([_rate(f, s, 50) for s in SEEDS]) for f in range(len(NAMES))], rtol=1e-3)
