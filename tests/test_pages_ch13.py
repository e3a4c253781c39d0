"""symbreak.pages.ch13: chapter 13's tables, glued values and figures, from results with known values."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from matplotlib.colors import to_hex

from figure_checks import clashes
from symbreak.dynamics.settling import HalvedRun, SettleRun, make_layer
from symbreak.dynamics.spectrum import FlatSpectrum, RescalingSweep
from symbreak.layers import BilinearMLP
from symbreak.pages import ch13
from symbreak.plotting import FAMILY_COLOURS

F64 = torch.float64


def _spectrum(**changes) -> FlatSpectrum:
    """A spectrum with round numbers: k = 3 of P = 20 counted, τ = 1e-10, next eigenvalue 2e-3."""
    values = dict(
        parameters=20,
        predicted=3,
        count=3,
        threshold=1e-10,
        eigenvalues=torch.tensor([1e-13, -2e-13, 3e-13, 2e-3, 0.5], dtype=F64),
        next_eigenvalue=2e-3,
        grad_norm=1e-13,
        grad_floor=1e-12,
        hessian_bound=1e-12,
        hessian_norm=0.5,
        tangent_residuals=[1e-13, 2e-13],
        tangent_bounds=[1e-10, 1e-10],
        sin_angle=1e-6,
        sin_bound=1e-4,
        hessian=torch.eye(20, dtype=F64),
    )
    return FlatSpectrum(**{**values, **changes})


def _lines(table: str) -> list[str]:
    return table.splitlines()[2:]


def test_setup_seeds_and_uses_one_thread():
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        generator = ch13.setup(seed=3)
        assert isinstance(generator, torch.Generator) and torch.get_num_threads() == 1
        first = torch.randn(2)
        ch13.setup(seed=3)
        assert torch.equal(torch.randn(2), first)  # the global stream restarts from the seed
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def test_prediction_table_lists_kinds_and_counts_per_unit(glued):
    """The proposition's counts per unit: standard MLP with ReLU 1 (k_j, −v_j), gated SiLU 1, symmetric ReLU 2,
    rank 2 SiLU 6, its gauge group named with the layer's rank, GL(2) (review: not GL(R))."""
    torch.manual_seed(0)
    layers = {
        ("standard MLP", "relu"): make_layer("key-value", "relu", 5, 3, 2),
        ("gated", "silu"): make_layer("gated", "silu", 5, 3, 2),
        ("symmetric rank-1", "relu"): make_layer("symmetric", "relu", 5, 3, 2),
        ("symmetric rank-2", "silu"): make_layer("symmetric", "silu", 5, 3, 2, rank=2),
    }
    ch13.glue_prediction_table(layers)
    table = glued["flat-prediction-table"]
    assert table.splitlines()[0] == "| form | ReLU | GELU | SiLU | identity |"
    assert _lines(table) == [
        "| standard MLP | $(k_j,{-}v_j)$: 1 | — | — | — |",
        "| gated | — | — | $(k_j,{-}v_j)$: 1 | — |",
        "| symmetric rank-1 | $(q_j,{-}k_j)$, $(q_j,{-}v_j)$: 2 | — | — | — |",
        "| symmetric rank-2 | — | — | $GL(2)$, transpose: 6 | — |",
    ]
    with pytest.raises(ValueError, match="layers: expected keys"):
        ch13.glue_prediction_table({("gated", "tanh"): layers["gated", "silu"]})
    with pytest.raises(TypeError, match="layers: expected a non-empty mapping"):
        ch13.glue_prediction_table({})


def test_zero_loss_glue(glued):
    torch.manual_seed(1)
    student = make_layer("key-value", "relu", 4, 3, 2)
    X = torch.randn(50, 4, generator=torch.Generator().manual_seed(2), dtype=F64)
    Y = torch.zeros(50, 2, dtype=F64)
    b = _spectrum(predicted=0, count=1, tangent_residuals=[], tangent_bounds=[], threshold=1e-12)
    results = {"a": _spectrum(), "b": b}
    problems = {"a": (student, X, Y), "b": (student, X, Y)}
    sizes = dict(d=4, m=3, d_out=2, n=50, perturbation=0.05, tangent_share=0.01, angle_share=0.5)
    bounds = dict(floor_below=1e-11, tau_below=1e-10)
    ch13.glue_zero_loss(results, problems, **sizes, **bounds, separation=1e7)
    # ε_fl is below 1e-11 in both rows, so it leaves the table for the caption; τ differs and stays
    header = "| case | $P$ | $k$ | count | $\\tau$ | $\\lvert\\lambda_{k+1}\\rvert$ |"
    assert glued["flat-zero-loss-table"].splitlines()[0].startswith(header)
    assert glued["flat-zero-loss-constants"].endswith(r": $\varepsilon_{\mathrm{fl}} < 10^{-11}$.")
    # 2e-13 / 1e-10 = 0.2 % < 1 %; 1e-6 / 1e-4 = 1 % < 50 %; ε_fl and τ only against the stated powers of ten
    shares = "below 1\u00a0% of the bound | below 50\u00a0% of the bound |"
    assert _lines(glued["flat-zero-loss-table"]) == [
        r"| a | 20 | 3 | 3 | $\geq 10^{-10}$ | $2 \times 10^{-3}$ | " + shares,
        "| b | 20 | 0 | 1 | $< 10^{-10}$ | $2 \\times 10^{-3}$ | — | — |",
    ]
    active = torch.relu(X @ student.K.detach().T) != 0  # by hand: the share of inputs each unit is active on
    expected = {
        "flat-d": "4",
        "flat-N": "100",
        "flat-P-min": "20",
        "flat-cases": "2",
        "flat-zero-cases-match": "1",
        "flat-zero-cases-in": "1 of the 2",
        "flat-floor-below": "$10^{-11}$",
        "flat-tau-below": "$10^{-10}$",
        "flat-separation": "$10^{7}$",
        "flat-zero-min-next": r"$2 \times 10^{-3}$",
        "flat-tangent-share": "1\u00a0%",
        "flat-angle-share": "50\u00a0%",
        "flat-zero-active": f"{float(active.double().mean(0).min()):.2f}",
        "flat-quadratic-dim": "20",
        "flat-identity-three": "24",  # 3 (2·4 + 2) parameters − 3·2 symmetry directions
        "flat-perturbation": "0.05",
    }
    assert {name: glued[name] for name in expected} == expected
    assert not any(name in glued for name in ("flat-zero-max-tau", "flat-zero-min-gap"))  # no measured τ in prose
    with pytest.raises(ValueError, match="problems: expected the labels of results"):
        ch13.glue_zero_loss(results, {"a": problems["a"]}, **sizes, **bounds, separation=1e7)
    with pytest.raises(ValueError, match="tau_below: expected a power of ten, got 3e-10"):
        ch13.glue_zero_loss(results, problems, **sizes, floor_below=1e-11, tau_below=3e-10, separation=1e7)


def test_pairs_glue(glued):
    curvatures = {
        "MLP (ReLU)": {"kv": (True, [1e-16, 3e-16])},
        "gated": {"qk": (False, [2e-2, 5e-3]), "kv": (True, [2e-15]), "qv": (False, [3e-2])},
        "loose": {"qk": (True, [1e-16, 4e-13]), "kv": (False, [7e-3]), "qv": (False, [8e-3, 9e-3])},
    }
    ch13.glue_pairs(curvatures, 1e-14)
    assert _lines(glued["flat-pairs-table"]) == [
        "| MLP (ReLU) | — | **below $10^{-14}$** | — |",
        "| gated | $5 \\times 10^{-3}$ | **below $10^{-14}$** | $3 \\times 10^{-2}$ |",
        "| loose | **$4 \\times 10^{-13}$** | $7 \\times 10^{-3}$ | $8 \\times 10^{-3}$ |",
    ]
    assert {k: glued[k] for k in ("flat-gated-qk-min", "flat-below")} == {
        "flat-gated-qk-min": r"$5 \times 10^{-3}$",
        "flat-below": "$10^{-14}$",
    }
    with pytest.raises(ValueError, match="at least one \\(q_j, -k_j\\) rescaling that is not a symmetry"):
        ch13.glue_pairs({"MLP (ReLU)": curvatures["MLP (ReLU)"]}, 1e-14)


def test_noisy_glue(glued):
    layer = make_layer("gated", "silu", 4, 3, 2)
    runs = {
        "ok": HalvedRun(layer, [1.0, 1e-3, 1e-14], 1e-13, 0.004912, (0.2, 0.1)),
        "stuck": HalvedRun(layer, [1.0, 2e-3, 2e-3], 1e-13, 0.01, (6.6e-5, 3.8e-6)),
    }
    noisy = {"ok": (_spectrum(eigenvalues=torch.tensor([-1.0], dtype=F64)), layer, None, None)}
    ch13.glue_noisy(runs, noisy, noise=0.1, budget=40, zero_kink=1.2e-3, floor_below=1e-12, tau_below=1e-9)
    assert _lines(glued["flat-noisy-table"]) == [  # ε_fl = 1e-12 is not below 1e-12; τ = 1e-10 is below 1e-9
        "| ok | 0.0049 | yes (2) | 3 | 3 | $\\geq 10^{-12}$ | $< 10^{-9}$ | $2 \\times 10^{-3}$ |",
        "| stuck | 0.0100 | no (2); $\\lVert\\nabla L\\rVert$ = $2 \\times 10^{-3}$ |  |  |  |  |  |",
    ]
    assert {k: v for k, v in glued.items() if k != "flat-noisy-table"} == {
        "flat-noise": "0.1",
        "flat-noisy-budget": "40",
        "flat-noisy-settled": "1",
        "flat-noisy-match": "1",
        "flat-noisy-minima": "0",  # an eigenvalue −1 far below −τ
        "flat-noisy-unsettled": "stuck",
        "flat-noisy-kinks": r"from $7 \times 10^{-5}$ to $4 \times 10^{-6}$ for stuck",
        "flat-zero-kink": "$1 \\times 10^{-3}$",  # measured: its mantissa kept, as beside "2 × 10⁻³"
        "flat-noisy-constants": "",  # one settled row: no column says the same in two rows
    }
    with pytest.raises(ValueError, match="noisy: expected labels among those of runs"):
        ch13.glue_noisy(
            {"ok": runs["ok"]}, {"other": noisy["ok"]}, noise=0.1, budget=40, zero_kink=1e-3, floor_below=1, tau_below=1
        )


def _starts():
    torch.manual_seed(4)
    layer = BilinearMLP(4, 3, 2, activation="silu", dtype=F64)  # P = 30, 2m = 6 rescaling directions
    runs = [
        SettleRun(501, layer, [1.0, 0.5, 1e-2], 1e-13, 2.5e-2, (3.31, 3.0, 6.66), 0.92),
        SettleRun(502, layer, [1.0, 1e-14], 1e-13, 1e-25, (2.9, 3.0, 3.1), None),
        SettleRun(503, layer, [1.0, 2e-2], 1e-13, 1.4e-3, (2.3, 2.5, 2.8), 0.08),
    ]
    gated = [dataclasses.replace(runs[2], alignment=0.5), runs[1], dataclasses.replace(runs[0], alignment=0.3)]
    return {"symmetric": runs, "gated": gated}


def test_starts_glue_says_what_a_settled_point_with_nonzero_loss_is(glued):
    """Review: a start that settles at a loss that is not zero is a critical point other than the teacher's; the
    sentence says which kind, from its spectrum: a minimum (no eigenvalue below −τ) or a saddle (how many)."""
    runs = _starts()
    runs["gated"][1] = dataclasses.replace(runs["gated"][1], seed=503, loss=1.3e-3)
    minimum = _spectrum()  # every eigenvalue ≥ −τ
    spectra = {("symmetric", 502): _spectrum(), ("gated", 503): minimum}
    ch13.glue_starts(runs, spectra, zero_below=1e-20, steps=100, tail=30)
    assert glued["flat-start-nonzero"] == (
        r"Gated (seed 503) settles at a loss of $1.3 \times 10^{-3}$, not zero: at a local minimum, as far as"
        r" rounding can tell (no eigenvalue below $-\tau$)."
    )
    glued.clear()  # the fixture keeps a name's first text
    saddle = _spectrum(eigenvalues=torch.tensor([1e-13, -2e-13, 3e-13, -2e-3, 0.5], dtype=F64))
    ch13.glue_starts(runs, {**spectra, ("gated", 503): saddle}, zero_below=1e-20, steps=100, tail=30)
    assert glued["flat-start-nonzero"].endswith(r"not zero: at a saddle point (1 eigenvalue below $-\tau$).")


def test_case_phrase_names_each_case_as_prose_does():
    """The cases' labels, Part V's names, in a sentence: a list of named forms, never "MLP (ReLU) and ReGLU"."""
    phrases = {
        "MLP (ReLU)": "the MLP (ReLU) layer",
        "ReGLU": "ReGLU",
        "symmetric (SiLU)": "the symmetric (SiLU) layer",
        "bilinear (σ = id)": "the bilinear (σ = id) layer",
        "symmetric rank-2 (SiLU)": "the symmetric rank-2 (SiLU) layer",
        "symmetric": "symmetric",
    }
    assert {label: ch13.case_phrase(label) for label in phrases} == phrases
    assert set(ch13.RESCALINGS) == {"qk", "kv", "qv"} and "qk" not in " ".join(ch13.RESCALINGS.values())


def test_noisy_glue_names_unsettled_cases_as_a_list(glued):
    layer = make_layer("gated", "silu", 4, 3, 2)
    stuck = HalvedRun(layer, [1.0, 2e-3, 2e-3], 1e-13, 0.01, (6.6e-5, 3.8e-6))
    runs = {"MLP (ReLU)": stuck, "ReGLU": dataclasses.replace(stuck, kinks=(5.5e-4, 4.2e-6))}
    ch13.glue_noisy(runs, {}, noise=0.1, budget=40, zero_kink=1e-5, floor_below=1e-12, tau_below=1e-10)
    assert glued["flat-noisy-unsettled"] == "the MLP (ReLU) layer and ReGLU"
    assert glued["flat-noisy-kinks"] == (
        r"from $7 \times 10^{-5}$ to $4 \times 10^{-6}$ for the MLP (ReLU) layer"
        r" and from $6 \times 10^{-4}$ to $4 \times 10^{-6}$ for ReGLU"
    )


def test_starts_glue(glued):
    runs = _starts()
    spectra = {("symmetric", 502): _spectrum(), ("gated", 502): _spectrum(count=4)}
    ch13.glue_starts(runs, spectra, zero_below=1e-20, steps=100, tail=30)
    rows = _lines(glued["flat-starts-table"])
    # review 9: the last column is ‖ΠΔθ‖/‖Δθ‖ (not a share of the squared norm), and its header says so
    assert (
        glued["flat-starts-table"]
        .splitlines()[0]
        .endswith(r"| $\lVert\Pi\Delta\theta\rVert/\lVert\Delta\theta\rVert$ |")
    )
    assert rows[:2] == [
        "| symmetric | 501 | no; $\\lVert\\nabla L\\rVert$ = $1 \\times 10^{-2}$ | $2.5 \\times 10^{-2}$ | 3.3 → 6.7 "
        "| 0.92 |",
        "| symmetric | 502 | yes (1); count 3 of $k$ = 3 | below $10^{-20}$ | 2.9 → 3.1 |  |",
    ]
    assert (
        rows[4] == "| gated | 502 | yes (1); count 4 of $k$ = 3 | below $10^{-20}$ | 2.9 → 3.1 |  |" and len(rows) == 6
    )
    assert {k: v for k, v in glued.items() if k != "flat-starts-table"} == {
        "flat-start-steps": "100",
        "flat-start-seeds": "3",
        "flat-start-tail": "30",
        "flat-start-settled": "2",
        "flat-start-total": "6",
        "flat-start-random-alignment": f"{(6 / 30) ** 0.5:.2f}",
        "flat-start-drift-run": "symmetric (seed 501)",
        "flat-start-drift-share": "0.92",
        "flat-start-drift-norms": "3.3 to 6.7",
        "flat-start-other-shares": "0.08, 0.30, 0.50",
        "flat-start-nonzero": "Every start that settles reaches zero loss.",
    }
    with pytest.raises(ValueError, match="the same number of starts for every form"):
        ch13.glue_starts(
            {"symmetric": runs["symmetric"], "gated": runs["gated"][:1]}, spectra, zero_below=1e-20, steps=1, tail=1
        )
    with pytest.raises(ValueError, match="at least one run that drifted"):
        ch13.glue_starts({"s": [runs["symmetric"][1]]}, {("s", 502): _spectrum()}, zero_below=1e-20, steps=1, tail=1)
    with pytest.raises(
        ValueError, match=r"spectra: expected the spectrum of every settled run .* \[\('gated', 502\)\]"
    ):
        ch13.glue_starts(runs, {("symmetric", 502): _spectrum()}, zero_below=1e-20, steps=1, tail=1)
    with pytest.raises(TypeError, match="runs_by_form: expected non-empty lists of SettleRun"):
        ch13.glue_settling_figure({"s": []})


def test_sharpness_glue_and_figures(glued):
    sweeps = {
        "sym": RescalingSweep("qk", [0.1, 1.0, 10.0], [0.5, 0.5, 0.5], [4.0, 1.0, 400.0], True),
        "gated": RescalingSweep("kv", [0.1, 1.0, 10.0], [0.5, 0.5, 0.5], [2.0, 1.0, 50.0], True),
        "control": RescalingSweep("qk", [0.1, 1.0, 10.0], [0.6, 0.5, 1.3], [2.0, 1.0, 5.0], False),
    }
    ch13.glue_sharpness(*sweeps.values())
    assert glued == {
        "flat-dinh-ratio": "400",
        "flat-dinh-ratio-gated": "50",
        "flat-dinh-control": "2.6",
    }
    forms = {"sym": "symmetric (SiLU)", "gated": "SwiGLU", "control": "SwiGLU"}
    ch13.glue_sharpness_figure([0.1, 1.0, 10.0], sweeps, forms)
    fig = glued["fig-flat-sharpness"]
    assert len(fig.axes) == 2 and [line.get_linestyle() for line in fig.axes[1].get_lines()] == ["-", "--", ":"]
    # each curve in its family's colour (review 8: the two SwiGLU curves had been orange and the bilinear green)
    colours = [to_hex(line.get_color()) for line in fig.axes[1].get_lines()]
    assert colours == [FAMILY_COLOURS["symmetric"], FAMILY_COLOURS["gated"], FAMILY_COLOURS["gated"]]
    with pytest.raises(ValueError, match="forms: expected curve labels"):
        ch13.glue_sharpness_figure([0.1, 1.0, 10.0], sweeps, {"other": "SwiGLU"})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(sweeps)
    assert clashes(fig) == []  # the legend below the panels, clear of the axis labels
    ch13.glue_settling_figure(_starts())
    fig = glued["fig-flat-settling"]
    assert [ax.get_title() for ax in fig.axes] == ["symmetric", "gated"]
    assert len(fig.axes[0].get_lines()) == 4  # three runs and the floor tick of the settled one
    # one legend below both panels, none inside: a seed keeps its colour in both panels
    assert [ax.get_legend() for ax in fig.axes] == [None, None] and clashes(fig) == []
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["seed 501", "seed 502", "seed 503", "settled", "not settled", "rounding floor"]
    colours = [[line.get_color() for line in ax.get_lines() if line.get_color() != "k"] for ax in fig.axes]
    by_seed = [
        dict(zip([r.seed for r in runs], c, strict=True)) for runs, c in zip(_starts().values(), colours, strict=True)
    ]
    assert by_seed[0] == by_seed[1] and len(set(by_seed[0].values())) == 3
    ch13.glue_spectra_figure({"a": _spectrum(), "b": _spectrum(predicted=0, count=0)})
    strip, spectrum = glued["fig-flat-spectra"].axes
    assert [t.get_text() for t in strip.get_yticklabels()] == ["a, k = 3", "b, k = 0"]
    # review: the counted eigenvalues are not drawn as points at a made-up |λ|; the strip gives their count
    assert [t.get_text() for t in strip.texts] == ["×3", "none"] and strip.get_xticks().size == 0
    shown = [c.get_offsets() for c in spectrum.collections]
    assert sum(len(o) for o in shown) == 2 * 2 and all(o[:, 0].min() > 1e-10 for o in shown if len(o))
    assert clashes(glued["fig-flat-spectra"]) == []
    with pytest.raises(TypeError, match="control: expected a RescalingSweep"):
        ch13.glue_sharpness(sweeps["sym"], sweeps["gated"], None)
