"""symbreak.pages.ch08: chapter 8's listings, glue blocks, tables and figure have the shape the chapter pastes.

Expected values are written down from the chapter's statements (which σ is odd or
even, which cells of the symmetry table hold), not from the functions under test.
"""

from __future__ import annotations

import pytest
import sympy as sp
from matplotlib.figure import Figure

from figure_checks import clashes
from symbreak.decide import Decision
from symbreak.dynamics import History
from symbreak.pages import ch08
from symbreak.plotting import FAMILY_COLOURS
from symbreak.verdicts import FORMS, SYMMETRIES, Measurement, Verdict, symmetry_table, verdict

SIGMA_CLASS = {"identity": "odd", "relu": "neither", "tanh": "odd", "abs": "even"}


def _parity():
    return {(form, n): verdict(form, "parity", n) for form in FORMS for n in SIGMA_CLASS}


def test_parity_listing_is_one_verdict_line():
    """The classes are in the prose and every verdict in tbl-symmetries: one line, not a list of σ."""
    assert ch08.parity_listing(SIGMA_CLASS, _parity()) == (
        "gated form: 2 of 4 σ refuted, each at a rational point (a, b): True"  # ReLU and |z|, neither odd
    )
    # the gated verdict's point (a, b) does refute σ(−a)(−b) = σ(a) b for ReLU
    point = _parity()["gated", "relu"].decision.witness
    a, b = (float(point[sp.Symbol(s, real=True)]) for s in "ab")
    assert max(-a, 0.0) * (-b) != max(a, 0.0) * b
    with pytest.raises(TypeError, match="sigma_class: expected a non-empty mapping"):
        ch08.parity_listing({}, _parity())


def test_parity_names_and_table():
    assert ch08.parity_names(SIGMA_CLASS) == {"odd-names": "identity and tanh", "even-names": "$|z|$"}
    measured = {(form, n): "even" for form in FORMS for n in SIGMA_CLASS}
    header, rows = ch08.parity_table(SIGMA_CLASS, measured)
    assert header == ["σ", "σ itself", "standard MLP", "symmetric rank-1", "full bilinear", "gated"]
    assert rows[3] == ["$|z|$", "even", "even", "even", "even", "even"]
    with pytest.raises(TypeError, match="sigma_class: expected a mapping"):
        ch08.parity_names(["identity"])


def test_half_names_and_parts_table():
    decisions = {"relu": Decision(True, "proof"), "sigmoid": Decision(False, "counterexample", {sp.Symbol("z"): 1})}
    assert ch08.half_names(decisions) == {"half-names": "ReLU"}
    header, rows = ch08.parts_table(decisions, {"relu": True, "sigmoid": False})
    assert len(header) == 5 and [row[0] for row in rows] == ["ReLU", "sigmoid"]
    z = sp.Symbol("z", real=True)
    assert rows[0][1:] == [f"${sp.latex(sp.Abs(z) / 2)}$", f"${sp.latex(z / 2)}$", "yes (proof)", "yes"]
    assert rows[1][3:] == ["no\u00a0$(z = 1)$", "no"]
    assert rows[1][1] == "$\\frac{1}{2}$"  # the even part of the logistic function is 1/2
    # its odd part tanh(z/2)/2: the inner fraction on the line, not a fraction inside a fraction
    assert rows[1][2] == r"$\frac{\tanh{\left(z/2 \right)}}{2}$"


def _histories():
    return {
        "even": History(steps=[0, 10], loss=[4.0, 2.0]),
        "gated": History(steps=[0, 10], loss=[4.0, 0.5]),
        "plain": History(steps=[0, 10], loss=[4.0, 1.0]),
    }


def test_floor_listings_values_and_figure():
    histories = _histories()
    values = ch08.floor_values(histories, floor=1.0, zero_loss=4.0)
    assert values == {
        "floor-ratio": (0.25, ".3f"),
        "final-even": (0.5, ".3f"),
        "final-gated": (0.125, ".3f"),
        "final-plain": (0.25, ".3f"),
    }
    # the values are glued for the caption; the listing is one verdict: even 0.5 ≥ 0.25, but plain 0.25 is not below
    assert (
        ch08.loss_listing(histories, 1.0, 4.0) == "the even student ends above the floor, the 2 others below it: False"
    )
    assert ch08.loss_listing(histories, 1.5, 4.0).endswith(": True")  # floor 0.375: 0.5 above, 0.125 and 0.25 below
    fig = ch08.floor_figure(histories, 1.0, 4.0)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and len(ax.lines) == 4
    assert list(ax.lines[1].get_ydata()) == [1.0, 0.125] and list(ax.lines[3].get_ydata()) == [0.25, 0.25]
    assert [line.get_color() for line in ax.lines[:3]] == [FAMILY_COLOURS[f] for f in ("symmetric", "gated", "kv")]
    assert ax.get_legend() is None and len(fig.legends) == 1 and clashes(fig) == []
    with pytest.raises(ValueError, match="zero_loss: expected a loss > 0"):
        ch08.floor_values(histories, 1.0, 0.0)
    with pytest.raises(ValueError, match="histories: expected 3 students"):
        ch08.floor_values({"even": histories["even"]}, 1.0, 4.0)


def test_parameter_listing_counts_parameters():
    from symbreak import GatedMLP

    same = {"a": GatedMLP(4, 3, 2), "b": GatedMLP(4, 3, 2)}  # 3 · 4 · 3 + 3 · 2 = 30 parameters each
    assert ch08.parameter_listing(same) == "the 2 students have the same number of parameters: True"
    assert ch08.parameter_listing(same | {"c": GatedMLP(4, 4, 2)}).endswith(": False")


def test_symmetry_table_texts_count_what_the_chapter_states():
    """For identity and ReLU (48 cells): 8 n/a (the plain MLP has parity and the (k, v) rescaling only);
    the full form's 5 score identities × 2 σ are matrix identities; the sign-cell proofs are ReLU's
    (k, v) rescaling of the plain, rank-1 and full forms and its gated α > 0 cell (4); the 6
    counterexamples are the plain MLP's parity (2) and ReLU's gated exchange, α < 0, parity, gauge;
    the other 20 holding cells are canonical forms."""
    table = symmetry_table(["identity", "relu"])
    values = ch08.symmetry_values(table)
    assert values == {
        "cells-total": 48,
        "cells-proof": 4,
        "cells-matrix": 10,
        "full-identities": 5,
        "cells-canonical": 20,
        "cells-counterexample": 6,
        "cells-na": 8,
        "n-activations": 2,
        "proof-names": "ReLU",
    }  # no lists of the σ that keep a symmetry: the text reads them from the table instead of repeating it
    assert ch08.symmetry_summary(table) == "every applicable cell of the 48 decided: True"
    key = next(k for k, v in table.items() if v.kind == "proof")
    undecided = dict(table) | {key: Verdict(*key, holds=None, method="undecided", kind="proof")}
    assert ch08.symmetry_summary(undecided).endswith(": False")
    header, rows = ch08.symmetry_rows(table)
    assert header == ch08.TABLE_HEADER and len(header) == 1 + len(SYMMETRIES)
    assert len(rows) == len(FORMS) * 3 and rows[0] == ["**standard MLP**", *[""] * 6]
    assert rows[2] == ["ReLU", "—", "—", "—", "✗", "—", "✓"]
    assert rows[-1] == ["ReLU", "✗", "✓", "✗", "✗", "✗", "✓°"]
    header, grid = ch08.symmetry_grid(table)  # the same cells, one row per symmetry, exceptions named
    assert (
        header == ["symmetry", "standard MLP", "symmetric rank\u20111", "full bilinear", "gated"]
        and [row[0] for row in grid] == ch08.TABLE_HEADER[1:]
    )
    nb = "\u00a0"  # a no-break space: a symbol keeps its first word, a name is not split
    assert grid[0][1] == "—" and grid[3][1] == f"✗{nb}every{nb}σ"
    assert [row[2] for row in grid] == [f"✓{nb}every{nb}σ"] * 6
    # gated, identity kept and relu broken in four rows: a tie, so the first σ's verdict comes first
    broken = f"✓ but ✗{nb}ReLU"
    assert [row[4] for row in grid] == [broken, f"✓{nb}every{nb}σ", broken, broken, broken, f"✓{nb}every{nb}σ"]


def test_student_values():
    from symbreak import GatedMLP, KeyValueMLP

    students = {"a": GatedMLP(4, 3, 2), "b": GatedMLP(4, 3, 2)}
    assert ch08.student_values(students, {"steps": 300}) == {"student-params": "30", "config-steps": "300"}
    with pytest.raises(ValueError, match=r"students: expected one common parameter count, got \[18, 30\]"):
        ch08.student_values({"a": GatedMLP(4, 3, 2), "b": KeyValueMLP(4, 3, 2)}, {})


def test_proof_names_are_joined_with_and():
    table = symmetry_table(["identity", "relu", "leaky_relu", "abs"])
    assert ch08.symmetry_values(table)["proof-names"] == "ReLU and leaky ReLU"


def test_symmetry_grid_does_not_split_a_name():
    # gated, exchange: kept by identity only (thm-exchange), a tie of one against one
    _, grid = ch08.symmetry_grid(symmetry_table(["identity", "leaky_relu"]))
    assert grid[0][4] == "✓ but ✗\u00a0leaky\u00a0ReLU"


def test_config_values():
    assert ch08.config_values({"n_steps": 300, "lr": 3e-2, "name": "adam"}) == {
        "config-n-steps": "300",
        "config-lr": "0.03",
        "config-name": "adam",
    }
    assert ch08.config_values({"gauge_alpha": -0.6, "shift": -2}) == {
        "config-gauge-alpha": "−0.6",
        "config-shift": "−2",
    }
    with pytest.raises(TypeError, match=r"config\['x'\]: expected an int, float or str, got list"):
        ch08.config_values({"x": [1]})


def test_measured_rows_and_values():
    measured = {(form, s, n): None for form in FORMS for s in SYMMETRIES for n in ("relu",)}
    measured["gated", "exchange", "relu"] = Measurement(0.9123, False, 9.0)
    measured["gated", "scale_pos", "relu"] = Measurement(1e-16, True, 0.01)
    measured["gated", "parity", "relu"] = Measurement(1.5, False, 40.0)
    header, rows = ch08.measured_rows(measured)
    assert header == ch08.TABLE_HEADER
    assert rows[-1] == ["ReLU", "**0.91**", "within", "—", "**1.50**", "—", "—"]
    assert ch08.measured_values(measured, 0.25) == {
        "smallest-broken-change": (0.9123, ".2f"),
        "kept-fraction": "25\u00a0%",
        "elementwise-ulps": 8,  # the assumptions in words and numbers, not numerics.ELEMENTWISE_ULPS
        "softplus-linear-tail": (20.0, "g"),
    }
    with pytest.raises(ValueError, match="measured: expected at least one broken symmetry"):
        ch08.measured_values({("kv", "parity", "relu"): None}, 0.25)
