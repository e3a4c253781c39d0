"""Numbers and tables as text: Markdown pipe tables, formulas in table cells and scientific notation."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import sympy as sp
from sympy.printing.precedence import PRECEDENCE

from symbreak.symbolic.cells import DecimalLatexPrinter, is_decimal

#: A cell that is a number: a sign, digits with separators, an exponent, a range ``0.44–1.04``, an interval
#: ``± …``, a unit or a percentage, or a bound such as ``< 0.001``; a column of such cells (blanks and "—" aside)
#: is right-aligned.
_DECIMAL = r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
_NUMBER = re.compile(
    rf"^(?:[<>≤≥] ?)?[−+-]?{_DECIMAL}(?:–[−+-]?{_DECIMAL})?(?: ?± ?(?:< ?)?{_DECIMAL})?"
    r"(?:[ \u00a0]?(?:%|×|ms|µs|ns|s|MB|GB|GB/s|GFLOP/s))?$"
)

#: A number set as maths: ``$-1$``, ``$0.5$``, ``$2.0 \times 10^{12}$``, ``$10^{-3}$``.
_MATHS_NUMBER = re.compile(r"^\$[−+-]?(?:\d[\d,]*(?:\.\d+)?(?: ?\\times ?10\^\{[−+-]?\d+\})?|10\^\{[−+-]?\d+\})\$$")
#: Bold around a whole cell (a value picked out in its column, as the chosen rate of Table 16.2).
_BOLD = re.compile(r"^\*\*(.*)\*\*$")

#: The spaces a line must not break at: around "±", after a bound sign ("< 0.001", "≤ $10^{-12}$") and
#: before a percent sign ("± 95 %").
_JOINS = re.compile(r"(?<=[<>≤≥±]) | (?=[±%])")
#: A hyphen used as a minus sign: before a digit, not inside a word or number ("-0.03", not "1e-04" or "rank-4").
_MINUS = re.compile(r"(?<![\w.)\]−-])-(?=\d)")

__all__ = ["markdown_table", "constant_columns", "long_table_for_pdf", "scientific", "formula_cell"]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown pipe table (for :func:`symbreak.prose.glue_text` and ``{glue:md}``).

    Every cell is a string; a ``|`` inside a cell is escaped as ``\\|``.  A column whose every cell is a number
    (:data:`_NUMBER`, or a number set as maths, :data:`_MATHS_NUMBER`, either of them perhaps in bold; blank and
    "—" cells aside, at least one number) is right-aligned, so its digits line up.
    In the body a number and its ``±`` interval, and a bound sign and what follows it, are joined by no-break
    spaces, so that neither the HTML nor the PDF splits them over two lines; a hyphen used as a minus sign
    (``-0.03``) becomes the minus sign ``−``.  Maths (between dollars) and code (between backticks) are left as
    they are.
    """
    if isinstance(header, str) or not header or not all(isinstance(h, str) for h in header):
        raise TypeError(f"header: expected a non-empty sequence of str, got {header!r}")
    n = len(header)
    for i, r in enumerate(rows):
        if isinstance(r, str) or len(r) != n:
            raise ValueError(f"rows[{i}]: expected {n} cells like the header, got {r!r}")
        if not all(isinstance(cell, str) for cell in r):
            raise TypeError(f"rows[{i}]: expected str cells, got {[type(cell).__name__ for cell in r]}")

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    def text(part: str) -> str:
        # outside code spans: a hyphen before a number is a minus sign
        pieces = part.split("`")
        return "`".join(_MINUS.sub("−", p) if i % 2 == 0 else p for i, p in enumerate(pieces))

    def joined(cell: str) -> str:
        # a number and its interval, or a bound and its number, stay on one line (HTML and PDF); maths between
        # dollars is left as it is (it does not break inside, and TeX reads its spaces itself)
        parts = cell.split("$")
        return "$".join(text(_JOINS.sub("\u00a0", p)) if i % 2 == 0 else p for i, p in enumerate(parts))

    def numeric(j: int) -> bool:
        cells = [_BOLD.sub(r"\1", r[j].strip()) for r in rows if r[j].strip() not in ("", "—")]
        return bool(cells) and all(_NUMBER.match(c) or _MATHS_NUMBER.match(c) for c in cells)

    rule = "|" + "|".join("---:" if numeric(j) else "---" for j in range(n)) + "|"
    return "\n".join([line([joined(c) for c in header]), rule, *(line([joined(c) for c in r]) for r in rows)])


#: Cells that say a column does not apply to a row; :func:`constant_columns` passes over them.
_NOT_APPLICABLE = ("", "—")


def constant_columns(
    header: Sequence[str], rows: Sequence[Sequence[str]], among: Sequence[str]
) -> tuple[list[str], list[list[str]], str]:
    """The table without those of its columns ``among`` that say the same in every row, and those columns as a
    phrase for the caption.

    A column (named by its header in ``among``) is constant if at least two rows have a cell there that is
    neither blank nor "—" and all those cells are equal; such a column leaves the table, and the phrase names
    it with its value, ``"$\\varepsilon_{\\mathrm{fl}} < 10^{-12}$; $\\tau < 10^{-10}$"`` (a header and a value
    that are both maths are joined into one formula).  The phrase is ``""`` if no column is constant.
    """
    header = list(header)
    if isinstance(among, str) or not among or any(name not in header for name in among):
        raise ValueError(f"among: expected headers of the table {header}, got {among!r}")
    rows = [list(r) for r in rows]
    for i, r in enumerate(rows):
        if len(r) != len(header):
            raise ValueError(f"rows[{i}]: expected {len(header)} cells like the header, got {r!r}")
    constant, phrases = [], []
    for j, name in enumerate(header):
        applied = [r[j] for r in rows if r[j].strip() not in _NOT_APPLICABLE]
        if name in among and len(applied) >= 2 and len(set(applied)) == 1:
            value = applied[0]
            constant.append(j)
            both_maths = name.endswith("$") and value.startswith("$")
            phrases.append(f"{name[:-1]} {value[1:]}" if both_maths else f"{name} {value}")
    kept = [j for j in range(len(header)) if j not in constant]
    return [header[j] for j in kept], [[r[j] for j in kept] for r in rows], "; ".join(phrases)


def scientific(value: float, *, digits: int = 1, latex: bool = False, bare_power: bool = True) -> str:
    """``value`` to ``digits`` significant digits in scientific notation, for table cells and prose.

    ``"3e-16"``, ``"2.5e+03"`` (Python's ``e`` format), or ``"$3 \\times 10^{-16}$"``, ``"$2.5 \\times 10^{3}$"``,
    ``"$10^{-13}$"`` with ``latex`` (for :func:`symbreak.prose.glue_text`: prose shows no e-notation); zero is ``"0"``.
    A power of ten is bare, as a stated bound is written (``"below $10^{-14}$"``); with ``bare_power=False`` it keeps
    its mantissa, ``"$1 \\times 10^{-4}$"``, as a measured value beside ``"$8 \\times 10^{-4}$"`` in a column is.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"value: expected a real number, got {type(value).__name__}")
    if not np.isfinite(value):
        raise ValueError(f"value: expected a finite number, got {value!r}")
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise TypeError(f"digits: expected an int, got {type(digits).__name__}")
    if digits < 1:
        raise ValueError(f"digits: expected at least 1 significant digit, got {digits}")
    if value == 0:
        return "0"
    text = f"{float(value):.{digits - 1}e}"
    if not latex:
        return text
    mantissa, exponent = text.split("e")
    if int(exponent) == 0:  # "$2.5$", not "$2.5 \\times 10^{0}$"
        return f"${mantissa}$"
    if bare_power and mantissa in ("1", "-1"):  # a power of ten: "$10^{-13}$", not "$1 \\times 10^{-13}$"
        return f"${mantissa[:-1]}10^{{{int(exponent)}}}$"
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


def long_table_for_pdf(table: str, widths: Sequence[int]) -> str:
    """A MyST ``{table}`` directive (with a ``:class:`` line) as the PDF should set a long table of text: a
    ``longtable`` that breaks across pages, with columns of the given relative ``widths``, ragged right, in small
    type.  The HTML ignores the raw LaTeX and the ``tabularcolumns`` it adds."""
    if not isinstance(table, str) or not table.startswith(":::{table}") or "\n:class: " not in table:
        raise ValueError(f"table: expected a {{table}} directive with a :class: line, got {str(table)[:40]!r}")
    if isinstance(widths, str) or not widths or not all(type(w) is int and w > 0 for w in widths):  # no bool
        raise ValueError(f"widths: expected positive int relative widths, got {widths!r}")
    total = sum(widths)
    columns = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{{total}}}" for w in widths)
    table = table.replace("\n:class: ", "\n:class: longtable ", 1)
    raw = "```{{raw}} latex\n{}\n```\n"
    return (
        raw.format("\\begingroup\\small")
        + f"\n```{{tabularcolumns}} {columns}\n```\n\n{table}\n"
        + raw.format("\\endgroup")
    )


class _CellPrinter(DecimalLatexPrinter):
    """sympy's LaTeX with no fraction inside a fraction, and decimal constants as decimals, for :func:`formula_cell`."""

    def __init__(self) -> None:
        super().__init__({"long_frac_ratio": 2})  # a long numerator over a short denominator: "\frac{z}{2} …"
        self._in_fraction = False

    def _slash(self, numer: sp.Expr, denom: sp.Expr) -> str:
        sign = "- " if numer.could_extract_minus_sign() else ""
        numer = -numer if sign else numer
        top = self.parenthesize(numer, PRECEDENCE["Mul"], strict=True)  # a sum in brackets
        return f"{sign}{top}/{self.parenthesize(denom, PRECEDENCE['Mul'])}"  # a sum or a product in brackets

    def _print_Rational(self, expr: sp.Rational) -> str:
        if self._in_fraction and expr.q != 1 and not is_decimal(expr):
            return self._slash(sp.Integer(expr.p), sp.Integer(expr.q))
        return super()._print_Rational(expr)

    def _print_Mul(self, expr: sp.Expr) -> str:
        numer, denom = sp.fraction(expr, exact=True)
        if denom == 1 or is_decimal(expr.as_coeff_Mul()[0]):
            return super()._print_Mul(expr)
        if self._in_fraction:
            return self._slash(numer, denom)
        self._in_fraction = True
        try:
            return super()._print_Mul(expr)
        finally:
            self._in_fraction = False


def formula_cell(expr: sp.Expr) -> str:
    """``expr`` as the maths of a table cell (between dollars), with no fraction inside a fraction.

    Inline, a fraction's numerator and denominator are set smaller than the text, and those of a fraction inside it
    smaller again, too small to read (GELU's gate ``erf(√2 z / 2) / 2`` had its ``√2 z`` at five points in the
    PDF).  So a long numerator over a short denominator is split off (``\\frac{z}{2} \\tanh(…)``, sympy's
    ``long_frac_ratio=2``), and a fraction that is still inside another one, or inside what was split off, is
    written on the line with a slash: ``\\frac{\\tanh{\\left(z/2 \\right)}}{2}``.  Only the layout differs from
    sympy's ``latex(expr)``: the expression is the same.
    """
    if not isinstance(expr, sp.Basic):
        raise TypeError(f"expr: expected a sympy expression, got {type(expr).__name__}")
    return f"${_CellPrinter().doprint(expr)}$"
