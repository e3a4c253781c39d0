"""symbreak.pages.ch05: chapter 5's listing, tables, glued values and figure, from results given to it.

Glue goes to a dictionary instead of a kernel; printed text is captured.  The
values the functions glue are checked against numbers worked out here by hand.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from figure_checks import clashes
from symbreak.activations import REGISTRY
from symbreak.decide import Decision
from symbreak.pages import ch05
from symbreak.plotting import formula_cell
from symbreak.symbolic import parity_parts
from symbreak.symbolic.gated import GATES
from symbreak.symmetry import Change

F64 = torch.float64
a, b = sp.symbols("a b", real=True)


def _change(before, after, bound) -> Change:
    return Change(*(torch.tensor([v], dtype=F64) for v in (before, after, bound)))


def test_show_decisions_prints_one_verdict_line(capsys):
    """The points are not listed (chapter 6's table shows them): one line, counting proofs and counterexamples."""
    decisions = {"identity": Decision(True, "proof"), "relu": Decision(False, "counterexample", {a: 1, b: -1}, -1)}
    decisions["gelu"] = Decision(False, "counterexample", {a: sp.Rational(1, 2), b: -1}, -1)
    ch05.show_decisions(decisions)
    assert capsys.readouterr().out.splitlines() == [
        "every σ decided, 1 by a proof and 2 by a counterexample at a rational point: True",
    ]
    ch05.show_decisions({"relu": Decision(False, "counterexample", {a: sp.Float(0.5), b: -1}, -1)})
    assert capsys.readouterr().out.endswith(": False\n"), "a point that is not rational fails the verdict"
    ch05.show_decisions({"relu": Decision(None, "undecided")})
    assert capsys.readouterr().out.endswith(": False\n"), "an undecided σ fails the verdict"


def test_show_placements_prints_the_shares_and_glues_nothing(glued, capsys):
    """Bilinear: no entry beyond the bound; the others 2 of 4 and 1 of 4 entries.  The prose does not repeat the
    printed shares, so none is glued; each line names the columns the prose names, outside and relative."""
    changes = {
        "Bilinear": _change([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.1] * 4),
        "GLU": _change([1.0, 2.0, 1.0, 1.0], [2.0, 0.0, 1.0, 1.0], [0.1] * 4),
        "ReGLU": _change([4.0, 1.0, 1.0, 1.0], [4.0, 1.0, 1.0, 3.0], [0.1] * 4),
    }
    ch05.show_placements(changes)
    assert glued == {}
    lines = capsys.readouterr().out.splitlines()
    # largest: GLU max |Δ| = 2 over max |before| = 2; ReGLU 2 / 4
    assert lines == [
        "fraction of outputs beyond the rounding bound; largest difference / largest output:",
        "Bilinear: outside   0.0\u00a0%; relative below 10⁻¹⁴",
        "     GLU: outside  50.0\u00a0%; relative 1.00",
        "   ReGLU: outside  25.0\u00a0%; relative 0.50",
    ]


def test_show_glu_family_table_and_properties(glued, capsys):
    ch05.show_glu_family()
    table = glued["glu-family-table"].splitlines()
    assert table[0] == "| variant | σ | `activation` | σ(z) | linear | odd | positively homogeneous |"
    assert table[4].startswith("| ReGLU | ReLU | `relu` | ")  # the book's name and the registry's
    assert [row.split(" | ")[0] for row in table[2:]] == ["| GLU", "| Bilinear", "| ReGLU", "| GEGLU", "| SwiGLU"]
    assert table[3].endswith("| yes (proof) | yes (proof) | yes (proof) |")  # the identity: all three
    # GEGLU's σ(z) = z (erf(√2 z/2) + 1)/2, with no fraction inside a fraction
    assert table[5].split(" | ")[3] == r"$\frac{z}{2} \left(\operatorname{erf}{\left(\sqrt{2} z/2 \right)} + 1\right)$"
    assert glued["gelu-tanh-properties"].startswith("linear no\u00a0$(")
    assert capsys.readouterr().out == ""  # the table is shown once, not printed as well


def test_show_llama7b_parameters(glued, capsys):
    """3 · 11008 · 4096 / (2 · 16384 · 4096) = 33024 / 32768 = 1.0078125."""
    ch05.show_llama7b_parameters()
    assert glued == {"llama7b-d": "4,096", "llama7b-m": "11,008", "llama7b-param-ratio": "1.0078"}
    assert capsys.readouterr().out == ""  # the prose quotes the ratio; it is not printed as well


def test_show_published_glues_the_width_and_prints_every_block(glued, capsys):
    same = _change([1.0, -2.0], [1.0, -2.0], [1e-15, 1e-15])
    swapped = _change([1.0, -2.0], [0.0, -1.0], [1e-15, 1e-15])  # largest 1 / 2
    ch05.show_published({"LLaMA (SwiGLU)": same, "T5 v1.1 (GEGLU)": same, "LLaMA, w1 and w3 swapped": swapped}, 192)
    assert glued == {"llama-small-m": "192"}  # the shares are printed, not repeated in the prose
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "           LLaMA (SwiGLU):   0.0\u00a0%; below 10⁻¹⁴",
        "          T5 v1.1 (GEGLU):   0.0\u00a0%; below 10⁻¹⁴",
        " LLaMA, w1 and w3 swapped: 100.0\u00a0%; 0.50",
    ]


def test_show_asymmetry(glued, capsys):
    asymmetry = {"identity": (0.0, 0.0), "relu": (0.0, 9.0), "gelu": (0.0, 8.97571), "silu": (0.0, 8.14634)}
    ch05.show_asymmetry(asymmetry, torch.arange(241))
    assert glued["grid-points"] == "241"
    assert not any(key.startswith("asym-gated-") for key in glued), "the table's values are not glued twice"
    assert glued["asymmetry-table"].splitlines()[3] == "| ReLU | 0.0000 | 9.0000 |"
    assert capsys.readouterr().out == ""  # the table is shown once, not printed as well


def test_figure_gated_vs_symmetric(glued):
    grid = torch.linspace(-3, 3, 7, dtype=F64)
    A, B = torch.meshgrid(grid, grid, indexing="xy")
    maps = {name: (A * B, torch.relu(A) * B) for name in ch05.SHOWN}
    ch05.figure_gated_vs_symmetric(maps)
    fig = glued["fig-gated-vs-symmetric"]
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 12 and titles[1] == r"$\sigma(a)\,b$" and titles[9].startswith("SiLU: ")
    assert clashes(fig) == []  # the titles of neighbouring panels do not meet


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="decisions: expected a non-empty mapping, got list"):
        ch05.show_decisions([])
    with pytest.raises(TypeError, match=r"changes\['GLU'\]: expected a Change, got float"):
        ch05.show_placements({"Bilinear": _change([1.0], [1.0], [1.0]), "GLU": 0.5})
    with pytest.raises(ValueError, match="changes: expected the variant 'Bilinear' and at least one other"):
        ch05.show_placements({"GLU": _change([1.0], [1.0], [1.0])})
    with pytest.raises(ValueError, match="m: expected an int >= 1, got 0"):
        ch05.show_published({label: _change([1.0], [1.0], [1.0]) for label in ch05.PUBLISHED}, 0)
    with pytest.raises(ValueError, match="asymmetry: expected the activations"):
        ch05.show_asymmetry({"relu": (0.0, 1.0)}, torch.arange(3))
    with pytest.raises(ValueError, match="maps: expected the activations"):
        ch05.figure_gated_vs_symmetric({"relu": (torch.ones(2, 2), torch.ones(2, 2))})


def _gate_inputs(abs_low=-1.0):
    from symbreak.symbolic.gated import GATES

    factorised = {name: Decision(True, "proof") for name in GATES}
    ranges = {name: (0.0, 1.0) for name in GATES}
    ranges["abs"] = (abs_low, 1.0)
    return factorised, ranges


def _nested_fraction(tex: str) -> bool:
    """Whether a ``\\frac`` of ``tex`` has another ``\\frac`` in its numerator or denominator."""
    for start in (i + len("\\frac") for i in range(len(tex)) if tex.startswith("\\frac", i)):
        end, depth = start, 0
        for _ in range(2):  # the end of the second braced argument
            while True:
                depth += {"{": 1, "}": -1}.get(tex[end], 0)
                end += 1
                if depth == 0:
                    break
        if "\\frac" in tex[start:end]:
            return True
    return False


def test_formula_cell_has_no_fraction_inside_a_fraction():
    z = sp.Symbol("z", real=True)
    assert _nested_fraction(sp.latex(sp.tanh(z / 2) / 2)), "the check sees sympy's nested fraction"
    assert formula_cell(sp.tanh(z / 2) / 2) == r"$\frac{\tanh{\left(z/2 \right)}}{2}$"
    # a long numerator is split off; what stays inside is written on the line, with brackets where needed
    assert formula_cell(z * sp.tanh(z / 2) / 2) == r"$\frac{z}{2} \tanh{\left(z/2 \right)}$"
    assert formula_cell(1 / (1 + 1 / z)) == r"$\frac{1}{1 + 1/z}$"
    assert formula_cell(sp.tanh(z / (2 * sp.pi)) / 3) == r"$\frac{1}{3} \tanh{\left(z/\left(2 \pi\right) \right)}$"
    assert formula_cell(z / 2) == f"${sp.latex(z / 2)}$" and formula_cell(sp.Integer(3)) == "$3$"
    cells = [formula_cell(g) for g in GATES.values()] + [formula_cell(s.expr) for s in REGISTRY.values()]
    cells += [formula_cell(p) for n in REGISTRY for p in parity_parts(n, simplified=True)]
    assert not [c for c in cells if _nested_fraction(c)]
    with pytest.raises(TypeError, match="expr: expected a sympy expression, got str"):
        formula_cell("z/2")


def test_show_gates_table_and_lists(glued, capsys):
    """Every registered σ gets a row; abs's gate (−1 on the sample) is outside [0, 1]; sigmoid, softplus have none."""
    ch05.show_gates(*_gate_inputs())
    table = glued["gate-table"].splitlines()
    assert table[0] == "| σ | `activation` | σ(0) = 0 | gate s(z) | σ(z) = z·s(z) | s(z) ∈ [0, 1] |"
    assert len(table) == 2 + 10
    assert "| sigmoid | `sigmoid` | no | — | no gate exists | — |" in table
    assert glued["gates-outside"] == "$|z|$"
    assert glued["gates-without"] == "sigmoid and softplus"
    assert "ReLU" in glued["gates-in-unit-interval"] and "|z|" not in glued["gates-in-unit-interval"]
    assert capsys.readouterr().out == ""  # the table is shown once, not printed as well


def test_show_gates_rejects_missing_activations():
    factorised, ranges = _gate_inputs()
    del factorised["relu"]
    with pytest.raises(ValueError, match="factorised, ranges: expected the activations"):
        ch05.show_gates(factorised, ranges)
    with pytest.raises(TypeError, match="ranges: expected a non-empty mapping, got list"):
        ch05.show_gates(_gate_inputs()[0], [])


def test_show_fits_verdicts(glued, capsys):
    """residual 2.0 ≥ bound 1.9 (5 % of 38): holds; residual 1.0 < bound 2.0 − 1e-9·40: fails; relu exact."""
    fits = {
        "silu": {"residual": 2.0, "bound": 1.9, "target": 38.0},
        "gelu": {"residual": 1.0, "bound": 2.0, "target": 40.0},
        "relu": {"residual": 1e-12, "bound": 0.0, "target": 50.0},
    }
    ch05.show_fits(fits)
    assert glued["fit-bound-silu"] == "5.0\u00a0%" and glued["fit-bound-gelu"] == "5.0\u00a0%"
    # the residual too, so that the prose can tell the bound from the residual: 2/38, 1/40
    assert glued["fit-residual-silu"] == "5.3\u00a0%" and glued["fit-residual-gelu"] == "2.5\u00a0%"
    assert glued["fit-holds"] == "the residual of GELU falls below its bound"
    assert glued["fit-relu-exact"] == "The ReLU control fits exactly"  # starts its sentence
    assert capsys.readouterr().out.splitlines() == [
        "SiLU, GELU: every residual at least its lower bound: False",
        "ReLU: residual below 10⁻⁹ of the target: True",
    ]
    fits["gelu"]["residual"] = 3.0
    fits["relu"]["residual"] = 1.0
    glued.clear()
    ch05.show_fits(fits)
    assert glued["fit-holds"] == "every residual respects its bound"
    assert glued["fit-relu-exact"] == "The ReLU control does not fit exactly"
    assert not any(key.startswith("fit-holds-") for key in glued), "verdicts glued in words, not as yes/no"
    with pytest.raises(ValueError, match="fits: expected 'relu' and at least one other activation"):
        ch05.show_fits({"silu": fits["silu"]})
