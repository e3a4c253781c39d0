"""The claims-to-evidence index: for every labelled statement of the book, what stands behind it.

The index is read from the repository itself, never typed: the notebooks of ``book/`` and the unit tests of
``tests/`` (:mod:`symbreak.evidence.notebooks`).  For each labelled ``prf:`` statement (definition, theorem,
proposition, lemma, corollary, remark) it records

* its **proof**: a ``prf:proof`` block after it, before the next statement;
* its **symbolic** and **numerical checks**: the visible code cells after a paragraph that starts
  ``**Symbolically`` or ``**Numerically`` (or ``Symbolically,`` / ``Numerically,``), up to the next statement or
  ``##`` section, named by the package's public functions and classes they call;
* its **unit tests**: the test functions of ``tests/`` whose name or docstring carries the label (hyphens or
  underscores), leaving out the tests of how the book shows it (of ``pages``, ``report``, the built PDF, …);
* the **figures and tables that show it**: a named figure or table (a ``{glue:figure}``, or a ``:::{table}`` or
  ``:::{figure}``) shows a statement when its caption (or a table's cells) refers to the statement (``{prf:ref}``)
  or to an equation numbered in the statement's text (``{eq}``), when the statement's text refers to it
  (``{numref}``), or when it stands among the statement's checks (after a ``**Symbolically`` or ``**Numerically``
  paragraph of the statement, before the next statement or ``##`` section: the figure or table of the check's
  output).  Prose near a figure does not count (a section's prose refers to many statements), nor does a figure
  whose caption refers to another that shows the statement ("the unit scale of Fig. 6.2" is a comparison, not the
  same result): where a figure shows a statement by none of these rules, the way to say so is a ``{prf:ref}`` of
  it in the caption.

Two MyST comments in a notebook's Markdown (invisible in the book) and a cell tag adjust what the layout says:

* ``% checks of <label>`` — the checks that follow belong to ``<label>`` (the checks of a theorem written after a
  remark that follows it, say);
* a code cell tagged ``not-a-check`` (the set-up of the next experiment, say) is not a check of anything;
* ``% <label>: no <kind>: <reason>`` — ``<label>`` has no evidence of that kind (``proof``, ``symbolic check``,
  ``numerical check``, ``unit test``), for the stated reason.  A definition needs no proof.  A label the reason
  names (``prop-exchange-defect``, ``fig-kv-coefficients``, ``eq-kv-memory``) is printed as a numbered reference;
  one that names nothing of the book stops the page's generation.

:func:`missing` lists the statements that lack a kind of evidence without a reason (a test asserts there are
none); :func:`render` writes the index page (:mod:`symbreak.evidence.page`), with the reasons as notes after each
table and one more table: the verdicts of the experiments (chapters 13–16, :mod:`symbreak.evidence.runs`), read
from the notebooks' stored outputs, where the chapters glued them.  The book's build writes the page; so does
``python -m symbreak.evidence`` run in the repository's root.
"""

from __future__ import annotations

from symbreak.evidence.notebooks import KINDS, Statement, book_labels, collect, missing
from symbreak.evidence.page import index_tables, linked, render, write
from symbreak.evidence.runs import EXPERIMENTS, Experiment, experiments

__all__ = ["KINDS", "EXPERIMENTS", "Statement", "Experiment", "collect", "missing", "experiments", "index_tables"]
__all__ += ["render", "write", "linked", "book_labels"]
