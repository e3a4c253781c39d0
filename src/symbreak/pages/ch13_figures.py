"""The three figures of chapter 13 (flat directions): the Hessian spectra, the random starts, the sharpness sweeps.

Each arranges results that the notebook's checks computed and glues the figure; :mod:`symbreak.pages.ch13`
re-exports them, so the chapter calls them as ``ch13.glue_…_figure``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.lines import Line2D

from symbreak.coarse import bucket_below, snap_log
from symbreak.dynamics.settling import SettleRun
from symbreak.dynamics.spectrum import FlatSpectrum, RescalingSweep
from symbreak.pages.ch14_stats import family_styles
from symbreak.plotting import figure, glue_figure, legend_below, loglog_curves, spectra_strip

__all__ = ["glue_spectra_figure", "glue_settling_figure", "glue_sharpness_figure"]

#: The colour of the counted eigenvalues and of τ (that of :func:`symbreak.plotting.spectra_strip`).
_COUNTED = "#c0392b"


def check_mapping(name: str, value: object, kind: type | tuple[type, ...], what: str) -> Mapping:
    """``value`` if it is a non-empty mapping whose values are ``kind``; else ``TypeError`` naming ``name``."""
    if not isinstance(value, Mapping) or not value:
        raise TypeError(f"{name}: expected a non-empty mapping of {what}, got {type(value).__name__}")
    for item in value.values():
        if not isinstance(item, kind):
            raise TypeError(f"{name}: expected a mapping of {what}, got a value of type {type(item).__name__}")
    return value


def check_runs(runs_by_form: object) -> Mapping[str, Sequence[SettleRun]]:
    """``runs_by_form`` if it maps each form to a non-empty list of :class:`SettleRun`; else ``TypeError``."""
    if not isinstance(runs_by_form, Mapping) or not runs_by_form:
        raise TypeError(f"runs_by_form: expected a non-empty mapping form → runs, got {type(runs_by_form).__name__}")
    for runs in runs_by_form.values():
        if not runs or not all(isinstance(run, SettleRun) for run in runs):
            raise TypeError(f"runs_by_form: expected non-empty lists of SettleRun, got {runs!r}")
    return runs_by_form


def glue_spectra_figure(results: Mapping[str, FlatSpectrum]) -> None:
    """Glue ``fig-flat-spectra``: one row of ``|λ_i|`` per case, the counted eigenvalues in a strip of their own.

    The eigenvalues at or below ``τ`` are set by rounding, so they get no position on the log axis: a narrow
    "≤ τ" strip at the left (the floor strip of Fig. 12.1) shows each row's count of them as "×count", and the
    log axis the others at four digits, with ``τ`` as a red bar."""
    results = check_mapping("results", results, FlatSpectrum, "labels to FlatSpectrum")
    fig, (strip, ax) = figure(ncols=2, width=7.6, height=5.0, sharey=True, gridspec_kw={"width_ratios": (1, 7)})
    spectra = {}
    for label, spec in results.items():
        shown, tau = bucket_below(spec.eigenvalues.numpy(), spec.threshold)
        spectra[f"{label}, k = {spec.predicted}"] = (shown[shown > 0], tau)
    spectra_strip(ax, spectra, xlabel=r"$|\lambda_i|$ above $\tau$, eigenvalues of the Hessian")
    ax.tick_params(labelleft=False, left=False)
    for row, spec in enumerate(results.values()):
        text = f"×{spec.count}" if spec.count else "none"
        strip.text(0.5, row, text, ha="center", va="center", color=_COUNTED if spec.count else "0.35")
    strip.set_xlim(0, 1)
    strip.set_xticks([])
    strip.grid(False)
    strip.set_title(r"$|\lambda_i| \leq \tau$")  # above: a label below met the first tick of the log axis
    fig.tight_layout()
    glue_figure("fig-flat-spectra", fig)


def glue_settling_figure(runs_by_form: Mapping[str, Sequence[SettleRun]]) -> None:
    """Glue ``fig-flat-settling``: ``‖∇L‖`` along each run, one panel per form, settled runs solid with their floor.

    One legend below the panels names the seeds, the line styles and the floor's tick (inside, it covered data)."""
    runs_by_form = check_runs(runs_by_form)
    fig, axes = figure(ncols=len(runs_by_form), width=7.6, height=3.4, sharey=True)
    seeds = list(dict.fromkeys(run.seed for runs in runs_by_form.values() for run in runs))
    for ax, (label, runs) in zip(axes, runs_by_form.items(), strict=True):
        for run in runs:
            # drawn at three significant digits, and no lower than the floor, below which rounding sets the norm
            shown = snap_log(np.maximum(run.norms, run.floor), 3)
            style, colour = "-" if run.settled else "--", f"C{seeds.index(run.seed)}"  # a seed's colour in every panel
            ax.semilogy(range(len(run.norms)), shown, style, lw=1.3, color=colour)
            if run.settled:
                ax.plot([len(run.norms) - 1], snap_log([run.floor], 3), "k_", ms=10)
        ax.set_title(label)
        ax.set_xlabel("damped Newton step")
    axes[0].set_ylabel(r"$\|\nabla L\|$")
    key = [(f"C{i}", "-", "", f"seed {seed}") for i, seed in enumerate(seeds)]
    key += [("0.3", "-", "", "settled"), ("0.3", "--", "", "not settled"), ("k", "", "_", "rounding floor")]
    handles = [Line2D([], [], color=c, ls=ls, marker=mark, ms=10, lw=1.3, label=t) for c, ls, mark, t in key]
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9, frameon=False)
    glue_figure("fig-flat-settling", fig)


def glue_sharpness_figure(
    alphas: Sequence[float], sweeps: Mapping[str, RescalingSweep], forms: Mapping[str, str] | None = None
) -> None:
    """Glue ``fig-flat-sharpness``: the loss (left) and the largest Hessian eigenvalue (right) against ``α``.

    ``forms`` names each curve's form by its Part V name ("symmetric (SiLU)", "SwiGLU"); the curve is drawn in its
    family's colour (:func:`symbreak.pages.ch14_stats.family_styles`), so the two SwiGLU curves share the gated
    forms' red, distinguished by line style."""
    sweeps = check_mapping("sweeps", sweeps, RescalingSweep, "curve labels to RescalingSweep")
    forms = dict(forms or {})
    if set(forms) - set(sweeps):
        raise ValueError(f"forms: expected curve labels from {list(sweeps)}, got {sorted(set(forms) - set(sweeps))}")
    colours = {label: family_styles([form])[form][0] for label, form in forms.items()}
    fig, axes = figure(ncols=2, width=7.6, height=3.4)
    shown = {"loss": {n: snap_log(s.losses) for n, s in sweeps.items()}}
    shown["top"] = {n: snap_log(s.top_eigenvalues) for n, s in sweeps.items()}
    x, xlabel, top = snap_log(alphas), r"rescaling factor $\alpha$", r"largest eigenvalue of $H$"
    loglog_curves(axes[0], x, shown["loss"], xlabel=xlabel, ylabel="loss $L$", colors=colours)
    loglog_curves(axes[1], x, shown["top"], xlabel=xlabel, ylabel=top, colors=colours)
    for ax in axes:  # distinct line styles: two of the curves nearly coincide for α < 1
        ax.get_legend().remove()
        for line, style, order in zip(ax.get_lines(), ["-", "--", ":"], [4, 3, 2], strict=False):
            line.set_linestyle(style)
            line.set_zorder(order)
    legend_below(fig, axes[0], ncol=3)  # laid out first, so that the legend stays clear of the axis labels
    glue_figure("fig-flat-sharpness", fig)
