"""No stored output of the book shows a raw repr (``Matrix(``, ``tensor(``, a Python dict ``{'``),
e-notation (``1e-14``) or a percentage spaced otherwise than the book's ``"25 %"`` (a no-break space,
:data:`symbreak.coarse.PERCENT_SIGN`), and no printed line writes a subscript as plain text (``W_j``, ``∇_q``).

A symbolic result is shown rendered (LaTeX) or as one verdict line (:mod:`symbreak.report`); a
measurement as a table, a figure or a verdict. This reads every notebook's stored outputs, printed
text, displayed text, markdown and glued (papermill) records, and names the notebook, the cell and
the offending snippet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
RAW_REPRS = ("Matrix(", "tensor(", "{'")
#: Number styles the book does not print (:func:`symbreak.coarse.magnitude`, :func:`symbreak.coarse.percent_of`).
STYLE_FAULTS = {"e-notation": re.compile(r"\b\d+(?:\.\d+)?[eE][+-]?\d+\b"), "unspaced %": re.compile(r"\d%")}
#: A fault of text that the book sets as prose or in a table (glued values, Markdown and LaTeX outputs), where a
#: line may break: a percent sign after an ordinary space, which a line can break before.  A printed line is
#: preformatted (it never breaks), so this one is not asked of it.
PROSE_FAULTS = {"% after a breaking space": re.compile(r"\d %")}
#: The longest printed line that the PDF's code column (about 104 characters of its monospace font at
#: the output size) shows without wrapping; a convention with a margin of a few characters.
PRINTED_WIDTH = 100
#: A subscript written as plain text (TeX-like source) in a printed line: a lone letter, ∇ or a Greek letter, not
#: part of a longer word, then ``_`` and a letter, digit or ``{`` (``W_j``, ``∇_q``, ``η_H``, ``q_{j,r}``). Printed
#: lines write the object as the prose does, in Unicode the PDF's code font has (``Wⱼᵀ``, ``qᵣ·kₛ``, ``eᵢ``) or in
#: words; identifiers such as ``best_rank_R`` or ``gelu_new`` are words and pass.
PLAIN_SUBSCRIPT = re.compile(r"(?<!\w)[A-Za-z\u0391-\u03a9\u03b1-\u03c9\u03d1\u03d5\u03f5∇]_[A-Za-z0-9{]")
# Notebooks allowed to keep raw reprs for now (chapters 14-16 only, by name); none need it today.
EXCLUDED: tuple[str, ...] = ()


def _texts(output: dict, printed: bool = True) -> list[str]:
    """Every text a reader (or a glue reference) can see in one stored output (without printed lines if not
    ``printed``)."""
    texts = []
    if output.get("output_type") == "stream" and printed:
        texts.append("".join(output.get("text", "")))
    for kind, value in output.get("data", {}).items():
        if kind in ("text/plain", "text/markdown", "text/latex") or ("papermill" in kind and "image/" not in kind):
            texts.append(
                value if isinstance(value, str) else "".join(value) if isinstance(value, list) else json.dumps(value)
            )
    return texts


def raw_reprs(notebook: dict) -> list[tuple[int, str]]:
    """``(cell index, snippet)`` for every raw repr in the stored outputs of ``notebook``."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            for text in _texts(output):
                for pattern in RAW_REPRS:
                    at = text.find(pattern)
                    if at >= 0:
                        found.append((index, text[max(0, at - 40) : at + 60]))
    return found


def style_faults(notebook: dict) -> list[tuple[int, str, str]]:
    """``(cell index, fault, snippet)`` for every number of the stored outputs in a style of :data:`STYLE_FAULTS`."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            for faults, printed in ((STYLE_FAULTS, True), (PROSE_FAULTS, False)):
                for text in _texts(output, printed):
                    for fault, pattern in faults.items():
                        for m in pattern.finditer(text):
                            found.append((index, fault, text[max(0, m.start() - 30) : m.end() + 10]))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_numbers_in_stored_outputs_are_in_the_book_style(path):
    found = style_faults(json.loads(path.read_text()))
    assert not found, "\n".join(f"{path.name} cell {index}: {fault}: {snippet!r}" for index, fault, snippet in found)


def long_lines(notebook: dict) -> list[tuple[int, int]]:
    """``(cell index, length)`` for every printed line longer than :data:`PRINTED_WIDTH`."""
    return [
        (index, len(line))
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream"
        for line in "".join(output.get("text", "")).splitlines()
        if len(line) > PRINTED_WIDTH
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_printed_lines_fit_the_pdf_code_column(path):
    found = long_lines(json.loads(path.read_text()))
    assert not found, "\n".join(
        f"{path.name} cell {i}: a printed line of {n} > {PRINTED_WIDTH} characters" for i, n in found
    )


def plain_subscripts(notebook: dict) -> list[tuple[int, str]]:
    """``(cell index, printed line)`` for every printed line with a plain-text subscript (:data:`PLAIN_SUBSCRIPT`)."""
    return [
        (index, line)
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream"
        for line in "".join(output.get("text", "")).splitlines()
        if PLAIN_SUBSCRIPT.search(line)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_printed_lines_write_no_subscript_as_plain_text(path):
    found = plain_subscripts(json.loads(path.read_text()))
    assert not found, "\n".join(f"{path.name} cell {i}: a plain-text subscript in {line!r}" for i, line in found)


def test_the_subscript_check_can_fail():
    lines = [
        "Wⱼᵀ: True; sym(Wⱼ); qᵣ·kₛ − qₛ·kᵣ; (qⱼ, −kⱼ); eᵢ; γₘ\n",
        "best_rank_R, gelu_new, diagonal_gap, ab_c, 2_j, a _b, a__b\n",
        "W_jᵀ: True\n",
        "sym(W_j)\n",
        "q_{j,r}ᵀ k_{j,r}\n",
        "symmetric form: ∇_q − ∇_k\n",
        "within 2 η_H\n",
        "control shift e_i\n",
        "(q_j, −k_j)\n",
        "q_j1 + t·k_j2\n",
    ]
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": "$W_j$ in prose is fine"},
            {"cell_type": "code", "source": "W_j = 1", "outputs": [{"output_type": "stream", "text": lines}]},
            {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {"text/latex": "$h_j$"}}]},
        ]
    }
    assert plain_subscripts(notebook) == [(1, line.rstrip("\n")) for line in lines[2:]]


def test_the_width_check_can_fail():
    text = ["x" * PRINTED_WIDTH + "\n", "y" * (PRINTED_WIDTH + 1)]
    notebook = {
        "cells": [{"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}]
    }
    assert long_lines(notebook) == [(0, PRINTED_WIDTH + 1)]


def test_the_style_check_can_fail():
    def cell(text):
        return {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}

    def glued(text):
        return {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {"text/markdown": text}}]}

    cells = [cell("below 10⁻¹⁴; 25 %"), cell("below 1e-14"), cell("outside 100.0%"), cell("2.5E+03")]
    notebook = {"cells": [*cells, glued("25\u00a0%"), glued("25 %")]}
    assert [(index, fault) for index, fault, _ in style_faults(notebook)] == [
        (1, "e-notation"),
        (2, "unspaced %"),
        (3, "e-notation"),
        (5, "% after a breaking space"),
    ]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in EXCLUDED], ids=lambda p: p.name)
def test_no_raw_repr_in_stored_outputs(path):
    found = raw_reprs(json.loads(path.read_text()))
    assert not found, "\n".join(
        f"{path.name} cell {index}: raw repr in a stored output: {snippet!r}" for index, snippet in found
    )


def test_the_check_can_fail():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": "Matrix( in prose is fine"},
            {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]},
            {
                "cell_type": "code",
                "outputs": [{"output_type": "execute_result", "data": {"text/plain": "Matrix([[0, 0]])"}}],
            },
            {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": "tensor([1.])"}]},
            {
                "cell_type": "code",
                "outputs": [
                    {"output_type": "display_data", "data": {"application/papermill.record/text/plain": "{'a': 1}"}}
                ],
            },
        ]
    }
    assert [index for index, _ in raw_reprs(notebook)] == [2, 3, 4]


def test_excluded_notebooks_are_chapters_14_to_16_that_still_need_it():
    for name in EXCLUDED:
        assert name[:2] in ("14", "15", "16"), f"{name}: only chapters 14-16 may be excluded"
        assert raw_reprs(json.loads((ROOT / "book" / name).read_text())), f"{name}: excluded but has no raw repr"
