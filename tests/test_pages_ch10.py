"""Chapter 10's page module (``symbreak.pages.ch10``): its tables, glue blocks, printed lines and figure."""

from __future__ import annotations

import pytest
import sympy as sp

from symbreak import benchmark, costs
from symbreak.pages import ch10

FORMS = list(benchmark.COST_FORMS)


def _rows(table: str) -> list[list[str]]:
    """The body rows of a Markdown pipe table, as lists of cells."""
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in table.splitlines()[2:]]


def test_cost_tables_have_one_row_per_form_and_the_proofs_gated_flops(glued):
    assert ch10.glue_cost_tables() == "cost tables: 8 forms × 4 formulas"
    storage, flops = _rows(glued["cost-table-storage"]), _rows(glued["cost-table-flops"])
    assert [r[0] for r in storage] == [r[0] for r in flops] == list(ch10.FORM_NAMES.values())
    assert glued["cost-table-flops"].splitlines()[0] == "| form | FLOPs per token | in matrix products |"
    # the proof: the gated form computes 2m factors (4md), one product per unit (m) and the product with V
    d, m, d_out = costs.d, costs.m, costs.d_out
    names = {d_out: r"d_{\mathrm{out}}"}
    gated = flops[list(ch10.FORM_NAMES).index("gated")]
    assert gated[1] == "$" + sp.latex(sp.factor(4 * m * d + m + 2 * m * d_out), symbol_names=names) + "$"
    assert gated[2] == "$" + sp.latex(sp.factor(4 * m * d + 2 * m * d_out), symbol_names=names) + "$"
    # the packed full form, m d(d+1)/2 + m d_out parameters: its denominator on the line, not a tiny inline fraction
    packed = storage[list(ch10.FORM_NAMES).index("full_packed")]
    assert packed[1] == r"$m \left(d^{2} + d + 2 d_{\mathrm{out}}\right)/2$"
    assert packed[2] == r"$\left(d^{2} + d + 4 m\right)/2$"
    assert not any(r"\frac" in cell for row in storage + flops for cell in row)


def _counts() -> dict[str, benchmark.CostCount]:
    return {f: benchmark.CostCount(10 + i, 10 + i, 100 * i, 100 * i, 5 + i) for i, f in enumerate(FORMS)}


def test_count_table_lines_up_formulas_and_counts(glued):
    ch10.glue_count_table(_counts())
    table = glued["cost-count-table"]
    assert table.splitlines()[0] == "| form | parameters: formula | stored | matmul FLOPs: formula | counted |"
    rows = _rows(table)
    assert rows[1] == ["global query", "11", "11", "100", "100"]  # the book's name of the form, not its key
    assert [r[0] for r in rows] == list(ch10.FORM_NAMES.values())
    with pytest.raises(TypeError, match="counts: expected CostCount values"):
        ch10.glue_count_table({"kv": (1, 2)})


def test_memory_table_has_the_formula_and_one_column_per_measurement(glued):
    kept = {"SiLU": {f: 5.0 + i for i, f in enumerate(FORMS)}, "ReLU": {f: 0.5 for f in FORMS}}
    ch10.glue_memory_table(_counts(), kept, d=6, m=10, R=3)
    table = glued["cost-memory-table"]
    assert table.splitlines()[0] == "| form | formula | kept, SiLU | kept, ReLU |"
    assert _rows(table)[1] == ["global query", "6", "6", "0.5"]
    assert (glued["cost-check-d"], glued["cost-check-m"], glued["cost-check-R"]) == ("6", "10", "3")
    with pytest.raises(ValueError, match=r"kept\['ReLU'\]: expected the forms"):
        ch10.glue_memory_table(_counts(), {"ReLU": {"kv": 1.0}}, d=6, m=10, R=3)


def test_degree_table_rows(glued):
    slopes = {f: 2.0 + i / 1000 for i, f in enumerate(FORMS)}
    ch10.glue_degree_table(slopes, units_per_width=4, rank=4)
    rows = {r[0]: r[1:] for r in _rows(glued["cost-degree-table"])}
    # one formula a heading (no "params: $d$" that a PDF column wraps), in the order of growth_degrees
    heads = "| form | $\\deg_d P$ | $\\deg_m P$ | $\\deg_R P$ | $\\deg_d F$ | $\\deg_m F$ | $\\deg_R F$ |"
    assert glued["cost-degree-table"].startswith(heads + " $\\deg_d F$ at $m = 4d$ | counted, fitted slope |\n")
    # kv: md + m d_out parameters, 2md + 2m d_out FLOPs, 16d² at m = 4d
    assert rows["standard MLP"] == ["1", "1", "0", "1", "1", "0", "2", "2.00"]
    # packed full form: m d(d+1)/2 + m d_out parameters; cubic at m = 4d
    assert rows["full, packed $\\mathrm{sym}(W_j)$"] == ["2", "1", "0", "2", "1", "0", "3", "2.01"]
    assert (glued["cost-slope-kv"], glued["cost-slope-packed"]) == ("2.00", "2.01")
    with pytest.raises(ValueError, match="slopes: expected the keys"):
        ch10.glue_degree_table({"kv": 2.0}, units_per_width=4, rank=4)


def _growth() -> benchmark.Growth:
    """Times exactly proportional to size**degree, so that every slope is its degree."""
    seconds, degrees, slopes = {}, {}, {}
    for size, (values, _) in benchmark.GROWTH_SWEEPS.items():
        for form in benchmark.GROWTH_FORMS if size != "R" else ("rankR",):
            degree = 3 if (size, form) == ("d", "full_packed") else 2 if size == "d" else 1
            seconds[size, form] = [1e-9 * v**degree for v in values]
            degrees[size, form], slopes[size, form] = degree, float(degree)
    return benchmark.Growth(seconds, degrees, slopes)


def test_growth_figure_draws_every_curve_and_one_reference_line_per_degree(glued):
    lines = ch10.glue_growth_figure(_growth()).splitlines()
    assert lines[0] == "standard MLP  vs d: slope 2.00, degree 2"
    assert lines[3] == "full, packed  vs d: slope 3.00, degree 3"
    assert lines[-1] == "rank-R        vs R: slope 1.00, degree 1"  # printed text, not the legend's mathtext
    left, middle, right = glued["fig-cost-growth"].axes
    labels = [line.get_label() for line in left.get_lines()]
    assert labels == ["standard MLP", "gated MLP", "rank-$R$", "full, packed", "slope 2", "slope 3"]
    assert [line.get_label() for line in right.get_lines()] == ["rank-$R$", "slope 1"]
    # one legend for the figure: a degree's reference line has one style in every panel, and degrees differ
    style = {}
    for ax in (left, middle, right):
        for line in ax.get_lines():
            if line.get_label().startswith("slope"):
                assert style.setdefault(line.get_label(), line.get_linestyle()) == line.get_linestyle()
    assert len(set(style.values())) == len(style) >= 3
    # thin and black: no reference line takes the grey of the standard MLP's family
    for ax in (left, middle, right):
        for line in ax.get_lines():
            guide = line.get_label().startswith("slope")
            assert (line.get_color() == "black" and line.get_linewidth() < 1.0) == guide
    # the reference line of degree 3 passes through the last point of the packed full form
    packed, slope3 = left.get_lines()[3], left.get_lines()[5]
    assert slope3.get_ydata()[-1] == pytest.approx(packed.get_ydata()[-1])
    assert slope3.get_ydata()[0] == pytest.approx(packed.get_ydata()[-1] * (16 / 128) ** 3)
    # in µs per token, as fig-cost-scaling: the measured seconds times 10⁶
    growth = _growth()
    assert list(packed.get_ydata()) == pytest.approx([1e6 * t for t in growth.seconds["d", "full_packed"]])
    assert {ax.get_ylabel() for ax in (left, middle, right)} == {"µs per token"}
    # plain tick labels on the time axis ("2", "5", "10"), not "2×10⁰" (review 8)
    for ax in (left, middle, right):
        assert all("10^" not in t.get_text() for t in ax.get_yticklabels() if t.get_text())
    with pytest.raises(TypeError, match="growth: expected a symbreak.benchmark.Growth, got dict"):
        ch10.glue_growth_figure({})


def test_growth_figure_axis_labels_name_the_fixed_sizes_of_the_sweeps(glued, monkeypatch):
    """The x-axis labels of fig-cost-growth take the fixed sizes from ``benchmark.GROWTH_SWEEPS``, not typed values."""
    sweeps = {
        "d": ((8, 16), lambda v: (v, 2 * v, 3)),
        "m": ((32, 64), lambda v: (24, v, 3)),
        "R": ((1, 2), lambda v: (40, 96, v)),
    }
    monkeypatch.setattr(benchmark, "GROWTH_SWEEPS", sweeps)
    ch10.glue_growth_figure(_growth())
    labels = [ax.get_xlabel() for ax in glued["fig-cost-growth"].axes]
    assert labels == ["model width $d$ ($m = 2d$)", "units $m$ ($d = 24$)", "terms $R$ ($d = 40$, $m = 96$)"]
    values = ch10.growth_values(256, 3)
    assert (values["growth-m-d"], values["growth-R-d"], values["growth-R-m"]) == (24, 40, 96)


def test_full_counts_and_route_table(glued):
    flops = {"per-unit einsum": 270336, "x ⊗ x features": 262144, "packed features": 135168}
    text = ch10.glue_full_counts(flops, {"unpacked": 1000, "packed": 528}, sp.Rational(1, 2))
    assert glued["full-einsum-flops"] == "270,336" and glued["full-packed-share"] == "0.528"
    assert text.splitlines()[0] == "per-unit einsum  matmul FLOPs per token: 270,336"
    assert text.splitlines()[-1] == "packed / unpacked = 1/2"
    lines = ch10.glue_route_table({"per-unit einsum": 4e-3, "x ⊗ x features": 2e-3}).splitlines()
    assert lines[1] == "|---|---:|---:|" and lines[3] == "| $x\\otimes x$ features | 2.000 | 2.00× |"
    assert glued["cost-route-table"].splitlines()[2] == "| per-unit einsum | 4.000 | 1.00× |"
    with pytest.raises(ValueError, match="seconds: expected the keys"):
        ch10.glue_route_table({"packed features": 1e-3})


def test_growth_values_read_the_sweeps():
    """The configured values that the growth paragraph and caption of chapter 10 quote."""
    values = ch10.growth_values(256, 3)
    assert values == {"growth-tokens": 256, "growth-repeats": 3, "growth-m-d": 64, "growth-R-d": 64, "growth-R-m": 256}
    with pytest.raises(ValueError, match="repeats: expected an int >= 1, got 0"):
        ch10.growth_values(256, 0)
