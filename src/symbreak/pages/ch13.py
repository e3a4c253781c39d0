"""Chapter 13 (flat directions): its set-up, tables, glued values and figures, from results the dynamics layer measures.

Each function arranges what the chapter's visible cells computed (spectra, settling runs, sweeps); none checks anything.

* :func:`setup` — seeds, print precision and one torch thread;
* :func:`glue_prediction_table` — the predicted rescalings and flat count per form and σ;
* :func:`glue_zero_loss`, :func:`glue_spectra_figure` — the zero-loss measurements;
* :func:`glue_pairs`, :func:`glue_noisy` — the relative curvature along every rescaling; the noisy critical points;
* :func:`glue_starts`, :func:`glue_settling_figure` — the random starts;
* :func:`case_phrase`, :data:`RESCALINGS` — a case and a rescaling as the prose and the printed lines name them;
* :func:`glue_sharpness`, :func:`glue_sharpness_figure` — loss and sharpness along a rescaling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from symbreak.activations import display_name
from symbreak.coarse import below_share, percent
from symbreak.dynamics.settling import HalvedRun, SettleRun, make_layer
from symbreak.dynamics.spectrum import FlatSpectrum, RescalingSweep, unit_activity
from symbreak.dynamics.tangents import (
    net_parameters,
    predicted_span,
    predicted_tangents,
    quadratic_map_dimension,
    random_alignment,
)
from symbreak.layers import FeedForward
from symbreak.numerics import ELEMENTWISE_ULPS
from symbreak.pages.ch12 import below_power, power_of_ten
from symbreak.pages.ch13_figures import (
    check_mapping,
    check_runs,
    glue_settling_figure,
    glue_sharpness_figure,
    glue_spectra_figure,
)
from symbreak.plotting import scientific
from symbreak.prose import all_or_count, glue_all, glue_table
from symbreak.repro import setup as _seed_setup

__all__ = [
    "KINDS",
    "ACTIVATIONS",
    "setup",
    "glue_prediction_table",
    "glue_zero_loss",
    "glue_spectra_figure",
    "glue_pairs",
    "glue_noisy",
    "case_phrase",
    "RESCALINGS",
    "glue_starts",
    "glue_settling_figure",
    "glue_sharpness",
    "glue_sharpness_figure",
]

#: How the prediction table names each kind of tangent of :func:`predicted_tangents` (``{-}``: a sign, also in a
#: figure's mathtext, which would set ``,-k`` as a binary minus).
KINDS = {
    "qk": "$(q_j,{-}k_j)$",
    "kv": "$(k_j,{-}v_j)$",
    "qv": "$(q_j,{-}v_j)$",
    "gauge": "$GL(R)$",
    "transpose": "transpose",
}
ACTIVATIONS = {name: display_name(name) for name in ("relu", "gelu", "silu", "identity")}  #: its columns' headings
_PAIRS = ("qk", "kv", "qv")
#: Each rescaling by the book's name for it (chapters 7 and 8), for printed lines.
RESCALINGS = {"qk": "inverse scaling of (qⱼ, kⱼ)", "kv": "rescaling of (kⱼ, vⱼ)", "qv": "rescaling of (qⱼ, vⱼ)"}

#: The last column of the random-starts table: :func:`drift_alignment` of the last move, as the chapter defines it.
DRIFT_HEADER = r"$\lVert\Pi\Delta\theta\rVert/\lVert\Delta\theta\rVert$"


def _measured(value: float) -> str:
    """A measured value in LaTeX at one significant digit, ``"$1 \\times 10^{-4}$"`` beside ``"$8 \\times 10^{-4}$"``
    (a bare ``"$10^{-4}$"`` is how the chapter writes a stated bound: ``"below $10^{-14}$"``)."""
    return scientific(value, latex=True, bare_power=False)


def _kind(kind: str, layer: FeedForward) -> str:
    """A kind of tangent as the prediction table names it; the gauge group with the layer's rank, ``$GL(2)$``."""
    return f"$GL({layer.rank})$" if kind == "gauge" else KINDS[kind]


def case_phrase(label: str) -> str:
    """A case's label, its Part V name (:func:`symbreak.pages.ch11.form_name`), as a sentence names it: a gated form by
    its own name, "ReGLU" → "ReGLU"; a family and its σ as a layer, "MLP (ReLU)" → "the MLP (ReLU) layer"."""
    return f"the {label} layer" if "(" in label else label


_SPECTRUM_HEADER = ["$k$", "count", r"$\varepsilon_{\mathrm{fl}}$", r"$\tau$", r"$\lvert\lambda_{k+1}\rvert$"]
#: The columns of those tables that are verdicts against stated bounds, said once in the caption where constant.
_STATED = [*_SPECTRUM_HEADER[2:4], r"$\max\lVert\hat H\xi\rVert$", r"$\sin\theta_{\max}$"]


def _spectrum_cells(spec: FlatSpectrum, floor_below: float, tau_below: float) -> list[str]:
    """``k``, the count, ``ε_fl`` and ``τ`` against the stated powers of ten (not their digits), ``|λ_{k+1}|``."""
    bounds = below_power(spec.grad_floor, floor_below), below_power(spec.threshold, tau_below)
    return [str(spec.predicted), str(spec.count), *bounds, _measured(spec.next_eigenvalue)]


def setup(seed: int = 0) -> torch.Generator:
    """:func:`symbreak.repro.setup` ``(seed)``, then one torch thread (tiny tensors); returns the inputs' generator."""
    generator = _seed_setup(seed=seed)
    torch.set_num_threads(1)
    return generator


def glue_prediction_table(layers: Mapping[tuple[str, str], FeedForward]) -> None:
    """Glue ``flat-prediction-table``: per form (row) and activation (column), the predicted kinds and count per unit.

    ``layers`` maps ``(form heading, activation)`` to a layer; a pair missing from it is shown as "—".  A cell lists
    the kinds of :func:`predicted_tangents` and :func:`predicted_span` divided by ``m``."""
    if not isinstance(layers, Mapping) or not layers:
        raise TypeError(f"layers: expected a non-empty mapping (form, activation) → layer, got {type(layers).__name__}")
    for key, layer in layers.items():
        if not (isinstance(key, tuple) and len(key) == 2 and key[1] in ACTIVATIONS):
            raise ValueError(f"layers: expected keys (form heading, one of {list(ACTIVATIONS)}), got {key!r}")
        if not isinstance(layer, FeedForward):
            raise TypeError(f"layers[{key!r}]: expected a symbreak layer, got {type(layer).__name__}")
    rows = []
    for form in dict.fromkeys(form for form, _ in layers):
        cells = []
        for layer in (layers.get((form, act)) for act in ACTIVATIONS):
            kinds = ", ".join(_kind(k, layer) for k in predicted_tangents(layer)) if layer is not None else ""
            cells.append("—" if layer is None else f"{kinds or 'none'}: {predicted_span(layer) // layer.m}")
        rows.append([form, *cells])
    glue_table("flat-prediction-table", ["form", *ACTIVATIONS.values()], rows)


def glue_zero_loss(
    results: Mapping[str, FlatSpectrum],
    problems: Mapping[str, tuple[FeedForward, torch.Tensor, torch.Tensor]],
    *,
    d: int,
    m: int,
    d_out: int,
    n: int,
    perturbation: float,
    tangent_share: float,
    angle_share: float,
    floor_below: float,
    tau_below: float,
    separation: float,
) -> None:
    """Glue ``flat-zero-loss-table`` and the values the zero-loss section quotes (sizes, counts, bounds, shares).

    ``results`` are the spectra of the settled students, ``problems`` the students with their data
    (label → ``(student, X, Y)``); the table states which share of its bound each rounding-sized
    ratio stays below, and which stated power of ten (``floor_below``, ``tau_below``) ``ε_fl`` and
    ``τ`` stay below, never their digits.  ``separation`` is the stated least ratio ``|λ_{k+1}|/τ``.
    """
    results = check_mapping("results", results, FlatSpectrum, "labels to FlatSpectrum")
    if set(problems) != set(results):
        raise ValueError(f"problems: expected the labels of results {list(results)}, got {list(problems)}")
    stated = {"floor_below": floor_below, "tau_below": tau_below, "separation": separation}
    stated = {f"flat-{n.replace('_', '-')}": power_of_ten(v, n) for n, v in stated.items()}  # each a power of ten
    rows = []
    for label, spec in results.items():
        shares = [r / b for r, b in zip(spec.tangent_residuals, spec.tangent_bounds, strict=True)]
        tangent = below_share(max(shares), tangent_share) if shares else "—"
        angle = below_share(spec.sin_angle / spec.sin_bound, angle_share) if spec.predicted else "—"
        rows.append([label, str(spec.parameters), *_spectrum_cells(spec, floor_below, tau_below), tangent, angle])
    header = ["case", "$P$", *_SPECTRUM_HEADER, *_STATED[2:]]
    glue_table("flat-zero-loss-table", header, rows, constants="flat-zero-loss-constants", among=_STATED)
    specs = list(results.values())
    activity = [float(unit_activity(student, X)[0].min()) for student, X, _ in problems.values()]
    with torch.random.fork_rng(devices=[]):  # a layer only counted: the global stream stays where it was
        three_units = make_layer("symmetric", "identity", d, 3, d_out)
    glue_all(
        {
            "flat-d": d,
            "flat-m": m,
            "flat-dout": d_out,
            "flat-n": n,
            "flat-N": n * d_out,
            "flat-P-min": min(s.parameters for s in specs),
            "flat-P-max": max(s.parameters for s in specs),
            "flat-perturbation": perturbation,
            "flat-cases": len(specs),
            "flat-zero-cases-match": sum(s.count == s.predicted for s in specs),
            "flat-zero-cases-in": all_or_count(sum(s.count == s.predicted for s in specs), len(specs)),
            "flat-zero-min-next": _measured(min(s.next_eigenvalue for s in specs)),
            "flat-zero-active": (min(activity), ".2f"),
            "flat-tangent-share": percent(tangent_share),
            "flat-angle-share": percent(angle_share),
            "flat-ulps": ELEMENTWISE_ULPS,
            "flat-quadratic-dim": quadratic_map_dimension(d, d_out),
            "flat-identity-three": net_parameters(three_units),
            **stated,
        }
    )


def glue_pairs(curvatures: Mapping[str, Mapping[str, tuple[bool, list[float]]]], flat_below: float) -> None:
    """Glue ``flat-pairs-table``, ``flat-gated-qk-min`` and ``flat-below`` from :func:`rescaling_curvatures` per case.

    A cell shows, in bold, the verdict that the largest ratio over the units is below the stated
    ``flat_below`` where the rescaling is a symmetry; otherwise the smallest ratio over the units.
    ``flat-gated-qk-min`` is the smallest ratio along a ``(q_j, −k_j)`` that is not a symmetry.
    """
    if not isinstance(curvatures, Mapping) or not curvatures:
        what = type(curvatures).__name__
        raise TypeError(f"curvatures: expected a non-empty mapping label → pair → (symmetry, ratios), got {what}")
    rows, curved_qk = [], []
    for label, pairs in curvatures.items():
        cells = []
        for pair in _PAIRS:
            if pair not in pairs:
                cells.append("—")
                continue
            symmetry, ratios = pairs[pair]
            if symmetry:  # the verdict against the stated bound, or the largest ratio where it fails
                shown = "below " + scientific(flat_below, latex=True) if max(ratios) < flat_below else None
                cells.append(f"**{shown or _measured(max(ratios))}**")
            else:
                cells.append(_measured(min(ratios)))
                if pair == "qk":
                    curved_qk.append(min(ratios))
        rows.append([label, *cells])
    glue_table("flat-pairs-table", ["case", KINDS["qk"], KINDS["kv"], KINDS["qv"]], rows)
    if not curved_qk:
        raise ValueError("curvatures: expected at least one (q_j, -k_j) rescaling that is not a symmetry, got none")
    glue_all({"flat-gated-qk-min": _measured(min(curved_qk)), "flat-below": scientific(flat_below, latex=True)})


def glue_noisy(
    runs: Mapping[str, HalvedRun],
    noisy: Mapping[str, tuple[FlatSpectrum, FeedForward, torch.Tensor, torch.Tensor]],
    *,
    noise: float,
    budget: int,
    zero_kink: float,
    floor_below: float,
    tau_below: float,
) -> None:
    """Glue ``flat-noisy-table`` and the noisy section's values: settled, matching and minima counts, the kinks.

    ``runs`` are the :func:`settle_in_halves` runs of every case, ``noisy`` the settled ones with
    their spectra (label → ``(spectrum, layer, X, Y)``); ``zero_kink`` is the smallest
    :func:`nearest_kink` at the zero-loss minima; ``floor_below`` and ``tau_below`` as in :func:`glue_zero_loss`.
    """
    runs = check_mapping("runs", runs, HalvedRun, "labels to HalvedRun")
    if not set(noisy) <= set(runs):
        raise ValueError(f"noisy: expected labels among those of runs {list(runs)}, got {list(noisy)}")
    rows = []
    for label, run in runs.items():
        steps = len(run.norms) - 1
        if label not in noisy:
            stalled = f"no ({steps}); $\\lVert\\nabla L\\rVert$ = {_measured(run.norms[-1])}"
            rows.append([label, f"{run.loss:.4f}", stalled, "", "", "", "", ""])
            continue
        cells = _spectrum_cells(noisy[label][0], floor_below, tau_below)
        rows.append([label, f"{run.loss:.4f}", f"yes ({steps})", *cells])
    header = ["case", "loss", "settled (steps)", *_SPECTRUM_HEADER]
    glue_table("flat-noisy-table", header, rows, constants="flat-noisy-constants", among=_STATED[:2])
    kinks = {label: run.kinks for label, run in runs.items() if label not in noisy}
    spectra = [spec for spec, *_ in noisy.values()]
    glue_all(
        {
            "flat-noise": noise,
            "flat-noisy-budget": budget,
            "flat-noisy-settled": len(noisy),
            "flat-noisy-match": sum(spec.count == spec.predicted for spec in spectra),
            "flat-noisy-minima": sum(spec.is_minimum for spec in spectra),
            "flat-noisy-unsettled": " and ".join(map(case_phrase, kinks)) if kinks else "none",
            "flat-noisy-kinks": " and ".join(  # "from 7e-5 to 4e-6 for ReGLU and from …"
                f"from {_measured(a)} to {_measured(b)} for {case_phrase(label)}" for label, (a, b) in kinks.items()
            ),
            "flat-zero-kink": _measured(zero_kink),
        }
    )


def _loss_text(loss: float, zero_below: float) -> str:
    """The loss in LaTeX at two significant digits (``"2.5 \\times 10^{-2}"``), or "below" ``zero_below``."""
    if loss < zero_below:
        return f"below {scientific(zero_below, latex=True)}"
    return scientific(loss, digits=2, latex=True)


def glue_starts(
    runs_by_form: Mapping[str, Sequence[SettleRun]],
    spectra: Mapping[tuple[str, int], FlatSpectrum],
    *,
    zero_below: float,
    steps: int,
    tail: int,
) -> None:
    """Glue ``flat-starts-table`` and the random-starts section's values: counts, the drifting run, its shares.

    ``spectra`` holds the :func:`flat_spectrum` of each settled run, keyed ``(form, seed)``.  The
    drifting run is the unsettled run with the largest :func:`drift_alignment`; the reference
    share is :func:`random_alignment` of the first run's layer.
    """
    runs_by_form = check_runs(runs_by_form)
    missing = [(label, r.seed) for label, runs in runs_by_form.items() for r in runs if r.settled]
    missing = [key for key in missing if key not in spectra]
    if missing:
        raise ValueError(f"spectra: expected the spectrum of every settled run (form, seed), missing {missing}")
    rows = []
    for label, runs in runs_by_form.items():
        for run in runs:
            theta0, _, theta1 = run.theta_norms
            if run.settled:
                spec = spectra[label, run.seed]
                outcome = f"yes ({len(run.norms) - 1}); count {spec.count} of $k$ = {spec.predicted}"
            else:
                outcome = f"no; $\\lVert\\nabla L\\rVert$ = {_measured(run.norms[-1])}"
            drift = "" if run.alignment is None else f"{run.alignment:.2f}"
            loss = _loss_text(run.loss, zero_below)
            rows.append([label, str(run.seed), outcome, loss, f"{theta0:.1f} → {theta1:.1f}", drift])
    header = ["form", "seed", "settled (steps)", "loss", r"$\lVert\theta\rVert$ start → end", DRIFT_HEADER]
    glue_table("flat-starts-table", header, rows)
    all_runs = [run for runs in runs_by_form.values() for run in runs]
    drifting = [(label, run) for label, runs in runs_by_form.items() for run in runs if run.alignment is not None]
    if not drifting:
        raise ValueError("runs_by_form: expected at least one run that drifted without settling, got none")
    label, run = max(drifting, key=lambda item: item[1].alignment)
    others = sorted(r.alignment for _, r in drifting if r is not run)
    starts = {len(runs) for runs in runs_by_form.values()}
    if len(starts) != 1:
        raise ValueError(f"runs_by_form: expected the same number of starts for every form, got {sorted(starts)}")
    glue_all(
        {
            "flat-start-steps": steps,
            "flat-start-seeds": starts.pop(),
            "flat-start-tail": tail,
            "flat-start-settled": sum(run.settled for run in all_runs),
            "flat-start-total": len(all_runs),
            "flat-start-random-alignment": (random_alignment(all_runs[0].layer), ".2f"),
            "flat-start-drift-run": f"{case_phrase(label)} (seed {run.seed})",
            "flat-start-drift-share": (run.alignment, ".2f"),
            "flat-start-drift-norms": f"{run.theta_norms[0]:.1f} to {run.theta_norms[2]:.1f}",
            "flat-start-other-shares": ", ".join(f"{a:.2f}" for a in others),
            "flat-start-nonzero": _nonzero_settled(runs_by_form, spectra, zero_below),
        }
    )


def _nonzero_settled(
    runs_by_form: Mapping[str, Sequence[SettleRun]], spectra: Mapping[tuple[str, int], FlatSpectrum], zero_below: float
) -> str:
    """A sentence on the settled runs whose loss is not below ``zero_below``: each a minimum (no eigenvalue below
    ``−τ``, :attr:`FlatSpectrum.is_minimum`) or a saddle (with how many eigenvalues below ``−τ``)."""
    said = []
    for label, runs in runs_by_form.items():
        for run in (r for r in runs if r.settled and not r.loss < zero_below):
            spec = spectra[label, run.seed]
            below = int((spec.eigenvalues < -spec.threshold).sum())
            kind = "a local minimum, as far as rounding can tell (no eigenvalue below $-\\tau$)"
            if below:
                kind = f"a saddle point ({below} eigenvalue{'s' * (below > 1)} below $-\\tau$)"
            loss = scientific(run.loss, digits=2, latex=True)
            said.append(f"{case_phrase(label)} (seed {run.seed}) settles at a loss of {loss}, not zero: at {kind}")
    if not said:
        return "Every start that settles reaches zero loss."
    text = "; ".join(said)
    return text[0].upper() + text[1:] + "."


def glue_sharpness(symmetric: RescalingSweep, gated: RescalingSweep, control: RescalingSweep) -> None:
    """Glue the change of sharpness along two symmetries and of the loss along a rescaling that is not one.

    ``flat-dinh-ratio`` and ``flat-dinh-ratio-gated``: :attr:`RescalingSweep.sharpness_ratio` of
    ``symmetric`` and ``gated``, sweeps along a symmetry; ``flat-dinh-control``:
    :attr:`RescalingSweep.loss_ratio` of ``control``, a sweep along a rescaling that is not one.
    """
    for name, sweep in (("symmetric", symmetric), ("gated", gated), ("control", control)):
        if not isinstance(sweep, RescalingSweep):
            raise TypeError(f"{name}: expected a RescalingSweep, got {type(sweep).__name__}")
    glue_all(
        {
            "flat-dinh-ratio": (symmetric.sharpness_ratio, ".0f"),
            "flat-dinh-ratio-gated": (gated.sharpness_ratio, ".0f"),
            "flat-dinh-control": (control.loss_ratio, ".1f"),
        }
    )
