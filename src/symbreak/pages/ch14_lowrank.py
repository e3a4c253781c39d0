"""Chapter 14's low-rank comparison, read from the stored runs of ``make experiments-small``: tables, glue, figure.

Every number comes from the stored records (:func:`symbreak.experiments.sweep.load_small`)
or from the targets they were made on (:func:`symbreak.experiments.lowrank.make_lowrank_task`,
drawn again from the same seeds); every verdict word from :mod:`symbreak.experiments.readings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from symbreak.coarse import snap_log
from symbreak.experiments import (
    EXPLORATORY,
    PRIMARY,
    Result,
    Task,
    interval_text,
    pair_tests,
    summarise,
    width_for_budget,
)
from symbreak.experiments.lowrank import block_floor, least_squares_error, make_lowrank_task
from symbreak.experiments.sweep import chosen_rates, projections, results_at
from symbreak.pages.ch14_stats import _cell, family_styles, phrase
from symbreak.plotting import figure, glue_figure, interval_dots
from symbreak.prose import glue_all, glue_table

__all__ = [
    "regime_values",
    "baselines",
    "glue_convex",
    "glue_regime",
    "glue_baselines",
    "glue_lowrank",
    "lowrank_figure",
]


def _shape(protocol: Mapping[str, object]) -> dict[str, int]:
    return {k: int(protocol[k]) for k in ("d", "d_out", "n_train", "n_val", "n_test")}


def regime_values(protocol: Mapping[str, object]) -> dict[str, object]:
    """The configured values of the low-rank protocol and the regime's numbers (``3md`` against ``d_out d(d+1)/2``)."""
    d, d_out, m0 = int(protocol["d"]), int(protocol["d_out"]), int(protocol["reference_width"])
    budget = m0 * (d + d_out)
    m = width_for_budget("SwiGLU", d, d_out, budget)
    return {
        "lr-d": d,
        "lr-d-out": d_out,
        "lr-m0": m0,
        "lr-budget": budget,
        "lr-m": m,
        "lr-3md": 3 * m * d,
        "lr-quadratic-dim": d_out * d * (d + 1) // 2,
        "lr-rank-bound": 2 * m,
        "lr-mlp-rank-bound": m0,
        "lr-features": 1 + d + d * (d + 1) // 2,
        "lr-n-train": int(protocol["n_train"]),
        "lr-n-val": int(protocol["n_val"]),
        "lr-n-test": int(protocol["n_test"]),
        "lr-n-seeds": len(protocol["seeds"]),
        "lr-n-forms": len(protocol["forms"]),
        "lr-grid": ", ".join(f"{lr:g}" for lr in protocol["learning_rates"]),
        "lr-max-steps": int(protocol["max_steps"]),
        "lr-eval-every": int(protocol["eval_every"]),
        "lr-patience": int(protocol["patience"]),
        "lr-patience-steps": int(protocol["patience"]) * int(protocol["eval_every"]),
    }


def glue_regime(protocol: Mapping[str, object]) -> str:
    """Glue :func:`regime_values`; return them one per line."""
    values = regime_values(protocol)
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())


def baselines(protocol: Mapping[str, object], task: str) -> dict[str, list[float]]:
    """Per seed: the least-squares test errors (quadratic, affine) and every form's floor (``thm-lowrank-floor``)."""
    d, d_out, m0 = int(protocol["d"]), int(protocol["d_out"]), int(protocol["reference_width"])
    out: dict[str, list[float]] = {"least squares [1, x, x_a x_b]": [], "least squares [1, x]": []}
    for seed in protocol["seeds"]:
        test, _, target = make_lowrank_task(task, seed=seed, **_shape(protocol))
        out["least squares [1, x, x_a x_b]"].append(least_squares_error(test, quadratic=True))
        out["least squares [1, x]"].append(least_squares_error(test, quadratic=False))
        for form in protocol["forms"]:
            m = width_for_budget(form, d, d_out, m0 * (d + d_out))
            out.setdefault(form, []).append(block_floor(target, projections(form), m))
    return out


def _mean_text(values: Sequence[float]) -> str:
    v = np.asarray(values)
    return f"{v.mean():.3f} (range {v.min():.3f}–{v.max():.3f})"


def glue_baselines(protocol: Mapping[str, object], task: str) -> str:
    """Glue ``lowrank-baselines-table`` and the floors and least-squares errors as text; return them."""
    found = baselines(protocol, task)
    ls_q, ls_a = found.pop("least squares [1, x, x_a x_b]"), found.pop("least squares [1, x]")
    mlp = next(f for f in protocol["forms"] if projections(f) == 1)
    gated = next(f for f in protocol["forms"] if projections(f) == 2)
    rows = [
        ["least squares on [1, x, x_a x_b] (train), test error", _mean_text(ls_q)],
        ["least squares on [1, x] (train), test error", _mean_text(ls_a)],
        [f"floor of {mlp}'s block (rank ≤ m₀, m₀ units)", _mean_text(found[mlp])],
        ["floor of every rank-1, gated and symmetrised block (rank ≤ 2m, m units)", _mean_text(found[gated])],
    ]
    glue_table("lowrank-baselines-table", ["quantity (relative to the target variance)", "mean over seeds"], rows)
    values = {
        "lr-ls-quadratic": "zero up to rounding" if max(ls_q) < 1e-20 else f"{float(np.mean(ls_q)):.3f}",
        "lr-ls-affine": f"{float(np.mean(ls_a)):.3f}",
        "lr-floor-mlp": f"{float(np.mean(found[mlp])):.3f}",
        "lr-floor-gated": f"{float(np.mean(found[gated])):.3f}",
    }
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())


def _selected(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], key: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in records:
        if rates[(r["task"], r["form"])] == r["learning_rate"]:
            out.setdefault(r["form"], []).append(r[key])
    return out


def glue_lowrank(records: Sequence[Mapping], protocol: Mapping[str, object], task: str) -> str:
    """Glue the comparison table, the primary (Holm) and exploratory tables and their verdict phrases; return them."""
    forms = list(protocol["forms"])
    rates = chosen_rates(records)
    final = results_at(records, rates)
    summary, floors = summarise(final), baselines(protocol, task)
    best, early = _selected(records, rates, "best_step"), _selected(records, rates, "stopped_early")
    rows = []
    for form in forms:
        mean, half, _ = summary[(task, form)]
        rows.append(
            [
                form,
                str(next(r.width for r in final if r.form == form)),
                f"{rates[(task, form)]:g}",
                f"{int(np.median(best[form]))}",
                f"{sum(early[form])}/{len(early[form])}",
                interval_text(mean, half),
                f"{np.mean(floors[form]):.3f}",
            ]
        )
    header = ["form", "m", "η (validation)", "median best step", "stopped early", "test error ± 95 %", "floor"]
    glue_table("lowrank-table", header, rows)
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    tests = pair_tests(final, [task], primary, corrected=True)
    explore = pair_tests(final, [task], EXPLORATORY, corrected=False)
    header = ["pair", "Δ ± 95 %", "p (Holm)", "verdict"]
    glue_table("lowrank-primary-table", header, [[f"{t.a} − {t.b}", *_cell(t, "+.3f", 1.0)] for t in tests])
    header = ["pair", "Δ ± 95 %", "p", "verdict"]
    glue_table("lowrank-exploratory-table", header, [[f"{t.a} − {t.b}", *_cell(t, "+.3f", 1.0)] for t in explore])
    values: dict[str, object] = {"lr-n-primary": len(tests), "lr-n-runs": len(records)}
    for family, pairs in PRIMARY.items():
        words = {f"against {t.b}" if family == "P2" else f"for {t.a}": t.word for t in tests if (t.a, t.b) in pairs}
        values[f"lr-{family.lower()}"] = phrase(words)
    for t in explore:
        if t.b == "bilinear (σ = id)":
            values[f"lr-{t.a.split()[0].lower()}-vs-bilinear"] = t.word
    gap = [summary[(task, f)][0] - float(np.mean(floors[f])) for f in forms]
    values["lr-gap-min"] = f"{min(gap):.2f}"
    values["lr-stopped-early"] = f"{sum(r['stopped_early'] for r in records)} of {len(records)}"
    values["lr-best-three"] = ", ".join(sorted(forms, key=lambda f: summary[(task, f)][0])[:3])
    train = [float(np.mean([r.train_loss for r in final if r.form == f])) for f in forms]
    values["lr-train-range"] = f"{min(train):.2f} and {max(train):.2f}"
    grid = (min(protocol["learning_rates"]), max(protocol["learning_rates"]))
    edge = [f for f in forms if rates[(task, f)] in grid]
    values["lr-at-edge"] = f"for {len(edge)} of the {len(forms)} forms" + (f" ({', '.join(edge)})" if edge else "")
    values["lr-stage-cpu"] = f"{sum(r['wall_s'] for r in records) / 60:.0f}"
    glue_all(values)
    lines = [f"{t.a} − {t.b}: {t.word}" for t in tests] + ["exploratory:"]
    return "\n".join(lines + [f"   {t.a} − {t.b}: {t.word}" for t in explore])


def lowrank_figure(records: Sequence[Mapping], protocol: Mapping[str, object], task: str, name: str = "fig-lowrank"):
    """Glue ``name``: left, mean best validation error against η per form; right, test error at the chosen η
    with its 95 % interval beside the form's floor.  Returns ``(fig, axes)``."""
    forms = list(protocol["forms"])
    grid = list(protocol["learning_rates"])
    rates = chosen_rates(records)
    summary, floors = summarise(results_at(records, rates)), baselines(protocol, task)
    fig, axes = figure(ncols=2, width=11.0, height=4.8)
    val: dict[str, dict[float, list[float]]] = {}
    for r in records:
        val.setdefault(r["form"], {}).setdefault(r["learning_rate"], []).append(r["validation"])
    styles = family_styles(forms)
    for form in forms:
        colour, ls = styles[form]
        means = snap_log([np.mean(val[form][lr]) for lr in grid])
        axes[0].plot(grid, means, color=colour, ls=ls, marker="o", ms=3, lw=1, label=form)
    axes[0].set_xscale("log")
    axes[0].set_xticks(grid, [f"{lr:g}" for lr in grid])
    axes[0].minorticks_off()
    axes[0].set_xlabel("learning rate η")
    axes[0].set_ylabel("best validation error (MSE / variance)")
    axes[0].legend(fontsize=6, ncol=2)
    series = {
        "test error at the chosen η": (
            snap_log([summary[(task, f)][0] for f in forms]),
            snap_log([summary[(task, f)][1] for f in forms]),
        ),
        "floor of the block": (snap_log([float(np.mean(floors[f])) for f in forms]), [0.0] * len(forms)),
    }
    interval_dots(axes[1], forms, series, xlabel="test error (MSE / variance)")
    fig.tight_layout()
    glue_figure(name, fig)
    return fig, axes


def glue_convex(tasks: Sequence[Task], final: Sequence[Result], form: str = "bilinear (σ = id)") -> str:
    """Glue ``cv-ls-teacher`` and ``cv-ls-odd`` (least squares on ``[1, x, x_a x_b]`` on the first comparison's
    tasks) and ``cv-match``: whether they equal ``form``'s mean test errors to three decimals; return them."""
    summary = summarise(final)
    values, same = {}, []
    for task, key in zip(tasks, ("cv-ls-teacher", "cv-ls-odd"), strict=True):
        ls = least_squares_error(task)
        values[key] = f"{ls:.3f}"
        same.append(f"{ls:.3f}" == f"{summary[(task.name, form)][0]:.3f}")
    values["cv-match"] = "the same to three decimals as" if all(same) else "not the same to three decimals as"
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())
