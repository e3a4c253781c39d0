"""Chapter 8's glued values, tables, printed listings and figure: parity and the symmetry table.

The chapter's checks stay in its notebook; this module only arranges what
:mod:`symbreak.symbolic.parity`, :mod:`symbreak.verdicts` and the training of
:mod:`symbreak.dynamics` compute:

* :func:`parity_listing`, :func:`parity_names` and :func:`parity_table` — the
  verdict on the gated parity verdicts, the parity of σ, and ``tbl-parity``;
* :func:`half_names` and :func:`parts_table` — ``tbl-parity-parts``;
* :func:`parameter_listing`, :func:`loss_listing`, :func:`floor_values` and
  :func:`floor_figure` — the three students against the parity floor;
* :func:`symmetry_summary`, :func:`symmetry_rows`, :func:`symmetry_values`,
  :func:`measured_rows` and :func:`measured_values` — ``tbl-symmetries`` and
  ``tbl-symmetries-measured``.

Functions ending in ``_rows``/``_table`` return ``(header, rows)`` for
:func:`symbreak.prose.glue_table`, those ending in ``_values``/``_names`` a glue
block for :func:`symbreak.prose.glue_all`, ``_listing``/``_summary`` printed text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy as sp
from matplotlib.figure import Figure

from symbreak.activations import display_name
from symbreak.coarse import percent
from symbreak.decide import Decision
from symbreak.dynamics import History
from symbreak.numerics import ELEMENTWISE_ULPS, LINEAR_TAILS
from symbreak.plotting import FAMILY_COLOURS, figure, formula_cell, legend_below
from symbreak.prose import listed
from symbreak.symbolic import decision_text, parity_parts
from symbreak.verdicts import FORMS, KINDS, SYMMETRIES, Measurement, Verdict

__all__ = [
    "TABLE_HEADER",
    "symmetry_grid",
    "STUDENT_KEYS",
    "parity_listing",
    "parity_names",
    "parity_table",
    "half_names",
    "parts_table",
    "parameter_listing",
    "loss_listing",
    "floor_values",
    "floor_figure",
    "symmetry_summary",
    "symmetry_rows",
    "symmetry_values",
    "measured_rows",
    "measured_values",
    "config_values",
    "student_values",
]

#: The header of ``tbl-symmetries`` and ``tbl-symmetries-measured``, one column per symmetry.
TABLE_HEADER = [
    "σ",
    r"exchange $q_j \leftrightarrow k_j$",
    r"inverse scaling, $\alpha > 0$",
    r"inverse scaling, $\alpha < 0$",
    r"parity $x \to -x$",
    r"gauge $GL(R)$",
    r"rescaling $(k_j, v_j)$, $\alpha > 0$",
]
#: Glue keys of the three students' final losses, in the order the chapter trains them.
STUDENT_KEYS = ("final-even", "final-gated", "final-plain")


def _of_class(sigma_class: Mapping[str, str], which: str) -> list[str]:
    """The activations whose decided parity is ``which``, in the order of ``sigma_class``."""
    if not isinstance(sigma_class, Mapping):
        raise TypeError(f"sigma_class: expected a mapping activation → parity, got {type(sigma_class).__name__}")
    return [name for name, parity in sigma_class.items() if parity == which]


def parity_listing(sigma_class: Mapping[str, str], parity: Mapping[tuple[str, str], Verdict]) -> str:
    """One verdict line on the gated parity verdicts: how many σ refute it, and whether each refutation has a
    rational point ``(a, b)`` and no verdict is undecided.

    ``sigma_class`` names the activations (its values, the parity of σ, are glued by :func:`parity_names`);
    ``parity`` maps ``(form, σ)`` to :func:`symbreak.verdicts.verdict` of the parity, of which the gated ones are
    read.  Neither the classes nor the verdicts are listed: the prose names the classes and ``tbl-symmetries``
    shows every verdict and how it was reached.
    """
    if not isinstance(sigma_class, Mapping) or not sigma_class:
        raise TypeError(f"sigma_class: expected a non-empty mapping activation → parity, got {sigma_class!r}")
    gated = [parity["gated", name] for name in sigma_class]
    refuted = [v for v in gated if v.holds is False]
    rational = all(
        v.decision.witness and all(sp.sympify(c).is_Rational for c in v.decision.witness.values()) for v in refuted
    )
    decided = all(v.holds is not None for v in gated) and rational
    return f"gated form: {len(refuted)} of {len(gated)} σ refuted, each at a rational point (a, b): {decided}"


def parity_names(sigma_class: Mapping[str, str]) -> dict[str, str]:
    """The glue block ``odd-names`` and ``even-names``, by their display names, each a list as a sentence."""
    return {
        "odd-names": listed([display_name(n) for n in _of_class(sigma_class, "odd")]),
        "even-names": listed([display_name(n) for n in _of_class(sigma_class, "even")]),
    }


def parity_table(
    sigma_class: Mapping[str, str], measured_class: Mapping[tuple[str, str], str]
) -> tuple[list[str], list[list[str]]]:
    """``tbl-parity``: per σ, its decided parity and the measured class of each form of ``FORMS``."""
    header = ["σ", "σ itself", *FORMS.values()]
    rows = [[display_name(n), sigma_class[n], *(measured_class[form, n] for form in FORMS)] for n in sigma_class]
    return header, rows


def half_names(odd_part_is_half: Mapping[str, Decision]) -> dict[str, str]:
    """The glue block ``half-names``: the σ for which ``σ(z) − σ(−z) = z`` is proved, by their display names."""
    return {"half-names": listed([display_name(n) for n, decision in odd_part_is_half.items() if decision.holds])}


def parts_table(
    odd_part_is_half: Mapping[str, Decision], even_part_measured: Mapping[str, bool]
) -> tuple[list[str], list[list[str]]]:
    """``tbl-parity-parts``: ``σ_e`` and ``σ_o`` in LaTeX, the decision of ``σ(z) − σ(−z) = z`` (headed
    ``σ_o(z) = z/2``), the measurement; each σ by its book name (:func:`~symbreak.activations.display_name`).

    The parts come from :func:`symbreak.symbolic.parity_parts` (``simplified=True``),
    written by :func:`symbreak.plotting.formula_cell` (no fraction inside a
    fraction); the decision in words from :func:`symbreak.symbolic.decision_text`;
    the last column says whether ``G(X) + G(−X)`` was measured equal to the
    bilinear layer.
    """
    header = [
        "σ",
        r"$\sigma_e(z)$",
        r"$\sigma_o(z)$",
        r"$\sigma_o(z) = z/2$",  # σ(z) − σ(−z) = z, in the column's terms and narrower
        "measured: $G(X) + G(-X)$ is the bilinear layer",
    ]
    rows = [
        [
            display_name(n),
            *(formula_cell(part) for part in parity_parts(n, simplified=True)),
            decision_text(decision),
            "yes" if even_part_measured[n] else "no",
        ]
        for n, decision in odd_part_is_half.items()
    ]
    return header, rows


def parameter_listing(students: Mapping[str, object]) -> str:
    """One verdict line: whether every student has the same number of parameters (the prose quotes the number)."""
    if not isinstance(students, Mapping) or not students:
        raise TypeError(f"students: expected a non-empty mapping of names to layers, got {students!r}")
    counts = {sum(p.numel() for p in s.parameters()) for s in students.values()}
    return f"the {len(students)} students have the same number of parameters: {len(counts) == 1}"


def _final(histories: Mapping[str, History], zero_loss: float) -> dict[str, float]:
    """Each student's last recorded loss over the loss of the zero prediction."""
    if not zero_loss > 0:
        raise ValueError(f"zero_loss: expected a loss > 0, got {zero_loss!r}")
    return {name: h.loss[-1] / zero_loss for name, h in histories.items()}


def loss_listing(histories: Mapping[str, History], floor: float, zero_loss: float) -> str:
    """One verdict line: whether the first student (the even one) ends at or above the floor and every other one
    below it.  The floor and the final losses, over the loss of the zero prediction, are glued by
    :func:`floor_values` for the figure's caption, not printed as well."""
    final = list(_final(histories, zero_loss).values())
    if len(final) < 2:
        raise ValueError(f"histories: expected the even student and at least one other, got {len(final)}")
    level = floor / zero_loss
    holds = final[0] >= level and all(value < level for value in final[1:])
    return f"the even student ends above the floor, the {len(final) - 1} others below it: {holds}"


def floor_values(histories: Mapping[str, History], floor: float, zero_loss: float) -> dict[str, tuple[float, str]]:
    """The glue block ``floor-ratio`` and :data:`STUDENT_KEYS` (the students in training order), three decimals."""
    final = _final(histories, zero_loss)
    if len(final) != len(STUDENT_KEYS):
        raise ValueError(f"histories: expected {len(STUDENT_KEYS)} students (even, gated, plain), got {len(final)}")
    values = {"floor-ratio": (floor / zero_loss, ".3f")}
    values.update({key: (value, ".3f") for key, value in zip(STUDENT_KEYS, final.values(), strict=True)})
    return values


def floor_figure(histories: Mapping[str, History], floor: float, zero_loss: float) -> Figure:
    """fig-parity-floor: each student's loss over the loss of the zero prediction, against the Adam step, log scale.

    The students come in the order of :data:`STUDENT_KEYS` (even, gated, plain), each in its family's colour; the
    dashed line is the floor, the share of the target's energy in its odd part; the legend is below the axes (inside,
    it covered the gated student's descent).
    """
    fig, axes = figure(width=6.4, height=3.6)
    ax = axes[0]
    families = ("symmetric", "gated", "kv")
    for (name, history), family in zip(histories.items(), families, strict=True):
        ys = [loss / zero_loss for loss in history.loss]
        ax.plot(history.steps, ys, lw=1.5, label=name, color=FAMILY_COLOURS[family])
    ax.axhline(floor / zero_loss, color="black", ls="--", lw=1.0, label="floor: odd part of the target")
    ax.set_yscale("log")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss / loss of the zero prediction")
    legend_below(fig, ax, ncol=2)
    return fig


def _activations(table: Mapping[tuple[str, str, str], object]) -> list[str]:
    """The activations of a table keyed by ``(form, symmetry, σ)``, in order of appearance."""
    return list(dict.fromkeys(act for (_, _, act) in table))


def _grouped_rows(table: Mapping[tuple[str, str, str], object], cell: Callable[[object], str]) -> list[list[str]]:
    """One bold row per form of ``FORMS``, then one row per σ with ``cell`` of each symmetry's entry."""
    rows = []
    for form, label in FORMS.items():
        rows.append([f"**{label}**", *([""] * len(SYMMETRIES))])
        rows += [[display_name(n), *(cell(table[form, s, n]) for s in SYMMETRIES)] for n in _activations(table)]
    return rows


def _counts(table: Mapping[tuple[str, str, str], Verdict]) -> dict[str, int]:
    """The number of cells of each kind of :data:`symbreak.verdicts.KINDS`, in that order."""
    kinds = [v.kind for v in table.values()]
    return {k: kinds.count(k) for k in KINDS}


def symmetry_summary(table: Mapping[tuple[str, str, str], Verdict]) -> str:
    """One verdict line: every cell that applies is decided (a proof, an identity or a counterexample), and every
    cell that does not is marked so.

    The counts of cells by kind are glued for the prose (:func:`symmetry_values`), and which σ keep which symmetry
    is shown by the table itself (:func:`symmetry_rows`); neither is printed again.
    """
    decided = all((v.holds is None) == (v.kind == "n/a") for v in table.values())
    return f"every applicable cell of the {len(table)} decided: {decided}"


def symmetry_rows(table: Mapping[tuple[str, str, str], Verdict]) -> tuple[list[str], list[list[str]]]:
    """``tbl-symmetries``: ✓, ✗ or — (:attr:`symbreak.verdicts.Verdict.symbol`) for every cell."""
    return TABLE_HEADER, _grouped_rows(table, lambda v: v.symbol)


def _unbroken(text: str) -> str:
    """``text`` with no-break spaces: a name, or a verdict symbol with its first word, is not split over lines."""
    return text.replace(" ", "\u00a0")


def _grid_cell(verdicts: Mapping[str, Verdict]) -> str:
    """One cell of :func:`symmetry_grid`: the symbol that most σ get, then each other symbol with its σ.

    A line may break only after "but" and between names, never inside a name or after a symbol.
    """
    by_symbol: dict[str, list[str]] = {}
    for name, v in verdicts.items():
        by_symbol.setdefault({True: "✓", False: "✗", None: "—"}[v.holds], []).append(_unbroken(display_name(name)))
    ordered = sorted(by_symbol, key=lambda sym: -len(by_symbol[sym]))
    if len(ordered) == 1:
        return ordered[0] if ordered[0] == "—" else _unbroken(f"{ordered[0]} every σ")
    rest = "; ".join(_unbroken(f"{sym} ") + ", ".join(by_symbol[sym]) for sym in ordered[1:])
    return f"{ordered[0]} but {rest}"


def symmetry_grid(table: Mapping[tuple[str, str, str], Verdict]) -> tuple[list[str], list[list[str]]]:
    """``tbl-symmetry-grid``: one row per symmetry, one column per form; a cell gives the verdict that most
    activations get (✓ kept, ✗ broken, — not applicable) and names the activations with another one.

    Rows are symmetries so that the four form columns are wide enough for the names they list; a form's
    name keeps its hyphen unbroken (U+2011), so "rank-1" is not split over two lines of the header.
    """
    names = _activations(table)
    rows = [
        [label, *(_grid_cell({n: table[form, s, n] for n in names}) for form in FORMS)]
        for s, label in zip(SYMMETRIES, TABLE_HEADER[1:], strict=True)
    ]
    return ["symmetry", *(label.replace("-", "\u2011") for label in FORMS.values())], rows


def symmetry_values(table: Mapping[tuple[str, str, str], Verdict]) -> dict[str, object]:
    """The glue block of ``tbl-symmetries``: the counts of cells by kind and the σ that keep a symmetry.

    ``cells-total``; ``cells-proof`` (proofs on sign cells), ``cells-matrix`` (the full form's
    matrix identities) and ``full-identities`` (how many distinct symmetries they are),
    ``cells-canonical`` (canonical forms), ``cells-counterexample``, ``cells-na``, ``n-activations``;
    and ``proof-names``, the σ with a proof on sign cells somewhere in the table, by their display names.
    (Which σ keep which symmetry in the gated form is read from ``tbl-symmetry-grid``, not repeated in words.)
    """
    counts = _counts(table)
    values: dict[str, object] = {
        "cells-total": len(table),
        "cells-proof": counts["proof"],
        "cells-matrix": counts["matrix identity"],
        "full-identities": len({s for (_, s, _), v in table.items() if v.kind == "matrix identity"}),
        "cells-canonical": counts["canonical form"],
        "cells-counterexample": counts["counterexample"],
        "cells-na": counts["n/a"],
        "n-activations": len(_activations(table)),
    }
    names = _activations(table)
    proved = [display_name(n) for n in names if any(v.kind == "proof" for (_, _, act), v in table.items() if act == n)]
    values["proof-names"] = listed(proved)
    return values


def student_values(students: Mapping[str, object], config: Mapping[str, object]) -> dict[str, str]:
    """The glue block ``student-params`` (the students' common parameter count) and :func:`config_values`.

    Raises ``ValueError`` unless every student has the same number of parameters.
    """
    counts = {sum(p.numel() for p in s.parameters()) for s in students.values()}
    if len(counts) != 1:
        raise ValueError(f"students: expected one common parameter count, got {sorted(counts)}")
    return {"student-params": str(counts.pop()), **config_values(config)}


def config_values(config: Mapping[str, object]) -> dict[str, str]:
    """The configured values the chapter's prose quotes, each glued under ``config-<key>`` as text.

    Keys with underscores become dashes (``n_steps`` → ``config-n-steps``); a value is
    shown with ``str``, a float without a trailing zero (``0.03``, ``1.7``), a negative number with a true
    minus (``−0.6``).
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config: expected a mapping of names to values, got {type(config).__name__}")
    out = {}
    for key, value in config.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(f"config[{key!r}]: expected an int, float or str, got {type(value).__name__}")
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        if isinstance(value, (int, float)):
            shown = shown.replace("-", "−")  # the book's minus: α = −0.6, not -0.6
        out["config-" + str(key).replace("_", "-")] = shown
    return out


def _shown(m: Measurement | None) -> str:
    if m is None:
        return "—"
    return "within" if m.within_rounding else f"**{m.change:.2f}**"


def measured_rows(measured: Mapping[tuple[str, str, str], Measurement | None]) -> tuple[list[str], list[list[str]]]:
    """``tbl-symmetries-measured``: *within*, the relative change in bold where broken, or — where not applicable."""
    return TABLE_HEADER, _grouped_rows(measured, _shown)


def measured_values(measured: Mapping[tuple[str, str, str], Measurement | None], kept_fraction: float) -> dict:
    """The glue block ``smallest-broken-change`` (two decimals), ``kept-fraction`` (the stated share, in %), and the
    two numbers of the assumptions a bold entry rests on: ``elementwise-ulps``
    (:data:`symbreak.numerics.ELEMENTWISE_ULPS`) and ``softplus-linear-tail``, where torch's softplus turns into
    ``z`` (:data:`symbreak.numerics.LINEAR_TAILS`)."""
    broken = [m.change for m in measured.values() if m is not None and not m.within_rounding]
    if not broken:
        raise ValueError("measured: expected at least one broken symmetry, got none")
    return {
        "smallest-broken-change": (min(broken), ".2f"),
        "kept-fraction": percent(kept_fraction),
        "elementwise-ulps": ELEMENTWISE_ULPS,
        "softplus-linear-tail": (LINEAR_TAILS["softplus"], "g"),
    }
