"""The verdicts of the book's experiments (chapters 13–16), read from the notebooks' stored outputs.

:data:`EXPERIMENTS` names each verdict where its chapter glued it; :func:`experiments` reads them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from symbreak.evidence.notebooks import _notebooks

__all__ = ["EXPERIMENTS", "Experiment", "experiments"]


@dataclass(frozen=True)
class Experiment:
    """A verdict of an experiment: ``chapter`` (notebook stem), what it compares, the glued key that holds the
    verdict (or a text with glued keys in braces, ``"{a} of {b}"``) and the table that shows its numbers."""

    chapter: str
    question: str
    key: str
    table: str


def _contrasts():
    from symbreak.language import PRIMARY_CONTRASTS

    return PRIMARY_CONTRASTS


#: The verdicts of the experiments, each where its chapter glued it.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "13_flat_directions",
        "zero-loss minima whose flat dimension matches the prediction",
        "{flat-zero-cases-match} of {flat-cases}",
        "tbl-flat-zero-loss",
    ),
    Experiment(
        "13_flat_directions",
        "noisy minima, of those that settled, whose flat dimension matches the prediction",
        "{flat-noisy-match} of {flat-noisy-settled}",
        "tbl-flat-noisy",
    ),
    *(
        Experiment("14_training_comparison", f"{question}, {task}", f"{prefix}{key}-{suffix}", table)
        for prefix, table, tasks in (
            ("", "tbl-matched-pairs", (("teacher", "bilinear teacher"), ("odd", "odd target"))),
            ("lr-", "tbl-lowrank-primary", (("quad", "full-rank quadratic"), ("odd", "quadratic + odd"))),
        )
        for suffix, task in tasks
        for key, question in (
            ("p1", "P1: gated against symmetric rank-1, same σ"),
            ("p2", "P2: the bilinear layer against the nonlinear gated forms"),
            ("control", "control: GEGLU and SwiGLU against their symmetrised forms"),
        )
    ),
    Experiment("15_digits", "P1: gated against symmetric rank-1, same σ (digits)", "p1", "tbl-matched-pairs-digits"),
    Experiment(
        "15_digits",
        "P2: the bilinear layer against the nonlinear gated forms (digits)",
        "p2",
        "tbl-matched-pairs-digits",
    ),
    Experiment(
        "15_digits",
        "control: GEGLU and SwiGLU against their symmetrised forms (digits)",
        "control",
        "tbl-matched-pairs-digits",
    ),
    *(
        Experiment(
            "16_language_model",
            f"{c.name}: {c.question} (language model)",
            f"lm-{c.name.lower()}-verdict",
            "tbl-lm-primary",
        )
        for c in _contrasts()
    ),
)


def _glued(path: Path) -> dict[str, str]:
    """The values a notebook glued, as their stored Markdown or plain text."""
    values = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            data = out.get("data", {})
            text = data.get("application/papermill.record/text/markdown") or data.get(
                "application/papermill.record/text/plain"
            )
            if name and text is not None:
                values[name] = "".join(text).strip().strip("'")
    return values


def experiments(root: str | Path) -> list[tuple[Experiment, str]]:
    """Each of :data:`EXPERIMENTS` with its verdict as its chapter's stored outputs give it."""
    glued = {path.stem: _glued(path) for path in _notebooks(Path(root))}
    out = []
    for e in EXPERIMENTS:
        keys = re.findall(r"\{([\w-]+)\}", e.key) or [e.key]
        values = glued.get(e.chapter, {})
        absent = [k for k in keys if k not in values]
        if absent:
            raise ValueError(f"EXPERIMENTS: {e.chapter} glued no {absent}")
        text = e.key if "{" in e.key else "{" + e.key + "}"
        out.append((e, re.sub(r"\{([\w-]+)\}", lambda m, v=values: v[m.group(1)], text)))
    return out
