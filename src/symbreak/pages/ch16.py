"""Chapter 16's tables and glued values: the corpus, the forms, the sweep, the comparison, Shazeer, nanoGPT.

Every number comes from :mod:`symbreak.language` — the corpus, the protocol,
and the stored results through :mod:`symbreak.language.compare` — and is
formatted here at three decimals of a loss in nats (the runs are stored, so
the numbers are the same on every processor).  Each ``glue_*`` function glues
what one cell of the chapter shows; none prints a table as text.  The wording (numbers as the tables print
them, counts in words, the verdict sentences, the plays' titles) is :mod:`symbreak.pages.ch16_wording`'s, and
the chapter's figure is in :mod:`symbreak.pages.ch16_figures`.
"""

from __future__ import annotations

from symbreak.activations import display_name
from symbreak.coarse import percent_of
from symbreak.language import compare as C
from symbreak.language.corpus import Corpus
from symbreak.language.model import INIT_STD, ffn_parameters, ffn_width, make_model
from symbreak.language.protocol import BASELINE, PRIMARY_CONTRASTS, Protocol
from symbreak.language.reference import NANOGPT_BABY, SHAZEER_STEPS
from symbreak.pages import ch16_wording as wording
from symbreak.prose import glue_all, glue_table, listed

__all__ = [
    "KIND_NAMES",
    "glue_corpus",
    "glue_protocol",
    "glue_forms",
    "glue_sweep",
    "glue_comparison",
    "glue_primary",
    "glue_references",
]

#: How the chapter names each kind of feed-forward block.
KIND_NAMES = {
    "kv": "standard MLP",
    "bilinear": "symmetric rank-1",
    "gated": "gated",
    "symmetrised": "symmetrised gated",
}


def glue_corpus(corpus: Corpus, protocol: Protocol) -> None:
    """Glue the plays per split, their sizes in characters and the vocabulary."""
    sizes = corpus.sizes()
    glue_all(
        {
            "lm-source": protocol.corpus.source.replace("==", " "),
            "lm-n-plays": sum(len(v) for v in corpus.plays.values()),
            "lm-n-train-plays": len(corpus.plays["train"]),
            "lm-n-validation-plays": len(corpus.plays["validation"]),
            "lm-n-test-plays": len(corpus.plays["test"]),
            "lm-validation-plays": listed([f"*{wording.play_title(n)}*" for n in corpus.plays["validation"]]),
            "lm-test-plays": listed([f"*{wording.play_title(n)}*" for n in corpus.plays["test"]]),
            "lm-train-chars": sizes["train"],
            "lm-validation-chars": sizes["validation"],
            "lm-test-chars": sizes["test"],
            "lm-total-mb": (sum(sizes.values()) / 1e6, ".1f"),
            "lm-vocabulary": len(corpus.vocabulary),
        }
    )


def glue_protocol(protocol: Protocol) -> None:
    """Glue every configured value the protocol remark quotes (shape, training, evaluation, stages, contrasts)."""
    s, t, e = protocol.shape, protocol.training, protocol.evaluation
    rates = protocol.lr_sweep.learning_rates
    glue_all(
        {
            "lm-n-layer": s.n_layer,
            "lm-n-head": s.n_head,
            "lm-n-embd": s.n_embd,
            "lm-block-size": s.block_size,
            "lm-mlp-ratio": s.mlp_ratio,
            "lm-plain-width": s.mlp_ratio * s.n_embd,
            "lm-batch-size": t.batch_size,
            "lm-iterations": protocol.main.iterations,
            "lm-tokens-per-run": protocol.main.iterations * t.batch_size * s.block_size,
            "lm-warmup": t.warmup_iters,
            "lm-min-lr-ratio": (t.min_lr_ratio, "g"),
            "lm-beta1": (t.betas[0], "g"),
            "lm-beta2": (t.betas[1], "g"),
            "lm-weight-decay": (t.weight_decay, "g"),
            "lm-grad-clip": (t.grad_clip, "g"),
            "lm-eval-interval": e.interval,
            "lm-curve-batches": e.curve_batches,
            "lm-final-batches": e.final_batches,
            "lm-final-chars": e.final_batches * t.batch_size * s.block_size,
            "lm-rates": ", ".join(f"{r:g}" for r in rates),
            "lm-n-rates": len(rates),
            "lm-n-forms": len(protocol.forms),
            "lm-sweep-runs": len(protocol.runs("lr-sweep")),
            "lm-n-seeds": len(protocol.main.seeds),
            "lm-seeds": ", ".join(str(x) for x in protocol.main.seeds),
            "lm-n-primary": len(PRIMARY_CONTRASTS),
            "lm-alpha": (C.ALPHA, "g"),
            "lm-baseline": protocol.form(BASELINE).name,
            "lm-protocol-name": protocol.name,
            "lm-init-std": (INIT_STD, "g"),
            "lm-shazeer-steps": SHAZEER_STEPS[0],
            "lm-primary-list": "\n".join(
                f"- **{c.name}**: {protocol.form(c.a).name} − {protocol.form(c.b).name}"
                f" — {wording.question_maths(c.question)}"
                for c in PRIMARY_CONTRASTS
            ),
        }
    )


def glue_forms(protocol: Protocol, vocabulary_size: int) -> None:
    """Glue ``lm-forms-table``: per form its kind, σ, width, block and model parameters (counted on the built model),
    and the difference of its block's parameters from the standard MLP's ("—" for a standard MLP)."""
    s = protocol.shape
    plain = ffn_parameters(protocol.form(BASELINE), s)
    rows, totals = [], []
    for form in protocol.forms:
        n_ffn = ffn_parameters(form, s)
        total = sum(p.numel() for p in make_model(s, form, vocabulary_size, 0).parameters())
        totals.append(total)
        cells = [KIND_NAMES[form.kind], display_name(form.activation), str(ffn_width(form, s)), f"{n_ffn:,}"]
        versus = "—" if form.kind == "kv" else percent_of((n_ffn - plain) / plain, "+.1f")  # a standard MLP: itself
        rows.append([form.name, *cells, versus, f"{total:,}"])
    header = ["form", "block", "σ", "width $m$", "block parameters", "vs standard MLP", "model parameters"]
    glue_table("lm-forms-table", header, rows)
    gated = next(f for f in protocol.forms if f.kind != "kv")
    glue_all(
        {
            "lm-params-min": min(totals),
            "lm-params-max": max(totals),
            "lm-plain-block": plain,
            "lm-width": ffn_width(gated, s),
            "lm-block-params": ffn_parameters(gated, s),
        }
    )


def glue_sweep(records: list[dict], protocol: Protocol) -> None:
    """Glue ``lm-sweep-table`` (validation loss per form and rate, the chosen one in bold), the edge counts and
    ``lm-edge``: for how many forms the chosen rate is an end of the grid, and which, at which end."""
    grid = C.sweep_grid(records, protocol)
    rates = protocol.lr_sweep.learning_rates
    rows, ends = [], {"top": (rates[-1], []), "bottom": (rates[0], [])}
    for form in protocol.forms:
        row = grid[form.key]
        best = min(row, key=lambda lr: (row[lr], lr))
        next((fs for rate, fs in ends.values() if rate == best), []).append(form.name)
        rows.append(
            [form.name] + [f"**{wording.loss(row[lr])}**" if lr == best else wording.loss(row[lr]) for lr in rates]
        )
    glue_table("lm-sweep-table", ["form"] + [f"{lr:g}" for lr in rates], rows)
    edge = [f for _, fs in ends.values() for f in fs]
    where = "; ".join(f"{listed(fs)} at the {end}, {rate:g}" for end, (rate, fs) in ends.items() if fs)
    glue_all(
        {
            "lm-edge-count": len(edge),
            "lm-top-edge-count": len(ends["top"][1]),
            "lm-edge-forms": listed(edge) if edge else "none",
            "lm-top-rate": (rates[-1], "g"),
            "lm-edge": f"for {len(edge) or 'none'} of the {len(rows)} forms" + (f": {where}" if edge else ""),
        }
    )


#: The gated forms whose readings against the standard GELU MLP §16.8 names (``lm-gated-vs-baseline``), in its order.
_NAMED_GATED = ("swiglu", "geglu")


def glue_comparison(records: list[dict], protocol: Protocol) -> list[C.FormSummary]:
    """Glue ``lm-comparison-table`` and per-form values ``lm-test-<key>``; return the summaries."""
    summaries = C.form_summaries(records, protocol)
    rows, values = [], {}
    for s in summaries:
        diff = "—" if s.versus_baseline is None else wording.interval(*s.versus_baseline[:2], sign=True)
        losses = [
            wording.interval(*s.validation),
            wording.interval(*s.test),
            diff,
            "baseline" if s.reading is None else s.reading,
        ]
        rows.append([s.form.name, f"{s.learning_rate:g}", *losses])
        values[f"lm-test-{s.form.key}"] = wording.loss(s.test.mean)
        values[f"lm-validation-{s.form.key}"] = wording.loss(s.validation.mean)
        values[f"lm-reading-{s.form.key}"] = s.reading or "baseline"
    gated = {s.form.name: s.reading for key in _NAMED_GATED for s in summaries if s.form.key == key}
    values["lm-gated-vs-baseline"] = wording.each_reads(gated)  # "SwiGLU is *level*, GEGLU *better*"
    header = ["form", "rate", "validation loss", "test loss", f"Δ test vs {protocol.form(BASELINE).name}", "reading"]
    glue_table("lm-comparison-table", header, rows)
    ranked = sorted(summaries, key=lambda s: s.test.mean)
    widest = max(summaries, key=lambda s: s.test.half_width)
    counts = {w: sum(s.reading == w for s in summaries) for w in ("better", "level", "worse")}
    values |= {
        "lm-best-form": ranked[0].form.name,
        "lm-worst-form": ranked[-1].form.name,
        "lm-range": wording.loss(ranked[-1].test.mean - ranked[0].test.mean),
        "lm-largest-half": wording.loss(widest.test.half_width),
        "lm-widest-form": widest.form.name,
        "lm-n-better": counts["better"],
        "lm-n-level": counts["level"],
        "lm-n-worse": counts["worse"],
    }
    runs = C.main_runs(records, protocol)
    gaps = []
    for key, rs in runs.items():
        losses = C.final_losses(rs, "validation")
        median = sorted(losses)[len(losses) // 2]
        gaps += [
            (v - median, protocol.form(key).name, r["seed"], v, median, r["learning_rate"])
            for r, v in zip(rs, losses, strict=True)
        ]
    gap, name, seed, value, median, rate = max(gaps)
    values |= {
        "lm-outlier-gap": wording.loss(gap),
        "lm-outlier-form": name,
        "lm-outlier-seed": seed,
        "lm-outlier-loss": wording.loss(value),
        "lm-outlier-median": wording.loss(median),
        "lm-outlier-rate": (rate, "g"),
    }
    glue_all(values)
    return summaries


def glue_primary(records: list[dict], protocol: Protocol) -> list[C.ContrastResult]:
    """Glue ``lm-primary-table`` (Δ ± Welch, p, Holm's p, verdict), ``lm-<name>-verdict`` and the sentences
    ``lm-primary-resolved`` (:func:`resolved_sentence`), ``lm-exchange-readings`` (the contrasts against a
    symmetrised control, :func:`read_together`) and ``lm-gated-readings`` (against the symmetric rank-1 form, per σ,
    :func:`read_for_each`) and ``lm-verdicts``, every primary verdict in one sentence for the opener and the summary
    (:func:`~symbreak.pages.ch16_wording.verdicts`); return the results."""
    results = C.primary_results(records, protocol)
    rows, values = [], {}
    for r in results:
        c = r.contrast
        difference = wording.interval(r.welch.difference, r.welch.half_width, sign=True)
        pair = f"{protocol.form(c.a).name} − {protocol.form(c.b).name}"
        rows.append([c.name, pair, difference, wording.p_text(r.welch.p_value), wording.p_text(r.p_holm), r.reading])
        values[f"lm-{c.name.lower()}-verdict"] = r.reading
        values[f"lm-{c.name.lower()}-difference"] = difference
    glue_table("lm-primary-table", ["", "contrast", "Δ test loss", "p", "p (Holm)", "verdict"], rows)
    values["lm-n-primary-resolved"] = sum(r.reading != "level" for r in results)
    values["lm-primary-resolved"] = wording.resolved_sentence(values["lm-n-primary-resolved"], len(results))
    against = {r.contrast: protocol.form(r.contrast.b).kind for r in results}
    values["lm-exchange-readings"] = wording.read_together(
        [r.reading for r in results if against[r.contrast] == "symmetrised"]
    )
    values["lm-gated-readings"] = wording.read_for_each(
        {
            display_name(protocol.form(r.contrast.a).activation): r.reading
            for r in results
            if against[r.contrast] == "bilinear"
        }
    )
    exchange = {protocol.form(r.contrast.a).name: r.reading for r in results if against[r.contrast] == "symmetrised"}
    gated = {protocol.form(r.contrast.a).name: r.reading for r in results if against[r.contrast] == "bilinear"}
    values["lm-verdicts"] = wording.verdicts(values["lm-primary-resolved"], exchange, gated)
    glue_all(values)
    return results


def _wall_minutes(records: list[dict]) -> float:
    return sum(r["wall_time_s"] for r in records if "reused_from" not in r) / 60


def _reading_cell(c: C.ShazeerComparison) -> str:
    """The last cell of ``shazeer-table``: the reading here of the difference from the ReLU MLP, his in brackets
    (``"level (his: better)"``); ``"better (new)"`` for a form he did not have; ``baseline``, ``not run here``."""
    if c.our_reading is None:
        return c.agreement
    return f"{c.our_reading} ({'new' if c.his_reading is None else f'his: {c.his_reading}'})"


def glue_references(records: list[dict], protocol: Protocol, train_chars: int) -> None:
    """Glue the baseline beside nanoGPT's (``train_chars``: our training characters), the sweep's cost (training
    runs per stage; ``lm-main-reused``: main-stage results copied from a sweep run), and ``shazeer-table``."""
    sweep = [r for r in records if r["stage"] == "lr-sweep" and r["form_key"] == BASELINE]
    at_ref = [r for r in sweep if r["learning_rate"] == NANOGPT_BABY.learning_rate]
    base = next(s for s in C.form_summaries(records, protocol) if s.form.key == BASELINE)
    runs = [r for r in records if "reused_from" not in r]
    values = {
        "lm-nanogpt-loss": (NANOGPT_BABY.validation_loss, ".2f"),
        "lm-nanogpt-rate": (NANOGPT_BABY.learning_rate, "g"),
        "lm-nanogpt-vocabulary": NANOGPT_BABY.vocabulary,
        "lm-nanogpt-eval-batches": NANOGPT_BABY.eval_batches,
        "lm-train-ratio": (train_chars / NANOGPT_BABY.train_chars, ".1f"),
        "lm-baseline-at-ref": wording.loss(at_ref[0]["final"]["validation"]) if at_ref else "not run",
        "lm-baseline-chosen": wording.interval(*base.validation),
        "lm-baseline-rate": (base.learning_rate, "g"),
        "lm-runs-total": len(runs),
        "lm-results-total": len(records),
        "lm-main-runs": sum(1 for r in runs if r["stage"] == "main"),
        "lm-main-reused": len(records) - len(runs),
        "lm-wall-hours": (_wall_minutes(records) / 60, ".1f"),
        "lm-run-minutes": (_wall_minutes(records) / max(1, len(runs)), ".1f"),
        "lm-tokens-per-s": (sum(r["tokens_per_s"] for r in runs) / max(1, len(runs)), ",.0f"),
    }
    rows, counts = [], {"agrees": 0, "level here": 0, "disagrees": 0}
    for c in C.shazeer_rows(records, protocol):
        his = "—" if c.his_difference is None else f"{c.his_difference:+.3f}".replace("-", "\u2212")
        ours = "—" if c.our_difference is None else wording.interval(*c.our_difference[:2], sign=True)
        rows.append(
            [
                "—" if c.row is None else c.row.name.removeprefix("FFN_"),
                "—" if c.row is None else f"{c.row.steps_65k:.3f}",
                his,
                "not run" if c.ours is None else c.ours.form.name,
                "—" if c.ours is None else wording.interval(*c.ours.test),
                ours,
                _reading_cell(c),
            ]
        )
        counts[c.agreement] = counts.get(c.agreement, 0) + 1
    header = [
        "Shazeer's form",
        "his loss",
        "his Δ vs ReLU",
        "form here",
        "test loss here",
        "Δ vs MLP (ReLU) here",
        "reading here (his)",
    ]
    glue_table("shazeer-table", header, rows)
    values |= {f"lm-shazeer-{k.replace(' ', '-')}": v for k, v in counts.items()}
    verbs = {"agrees": ("differs", "differ"), "level here": ("is", "are"), "disagrees": ("differs", "differ")}
    values |= {f"lm-shazeer-{k.replace(' ', '-')}-verb": wording.counted(counts[k], *v) for k, v in verbs.items()}
    values["lm-shazeer-order"] = wording.shazeer_order(counts)
    glue_all(values)
