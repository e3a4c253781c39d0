"""Diagrams drawn from text: a chain of boxed stages joined by labelled arrows."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["chain_diagram"]


def chain_diagram(ax, stages: Sequence[tuple[str, str]], steps: Sequence[str]) -> None:
    """A top-to-bottom chain of stages ``(title, formula)`` joined by arrows labelled ``steps``."""
    n = len(stages)
    if len(steps) != n - 1:
        raise ValueError(f"steps: expected {n - 1} labels for {n} stages, got {len(steps)}")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, n - 0.5)
    ax.invert_yaxis()
    ax.axis("off")
    box = {"boxstyle": "round,pad=0.45", "fc": "#eef3fb", "ec": "#4a6fa5"}
    for i, (title, formula) in enumerate(stages):
        ax.text(0.2, i, title, ha="center", va="center", fontsize=11, weight="bold", bbox=box)
        ax.text(0.42, i, formula, ha="left", va="center", fontsize=12)
    for i, label in enumerate(steps):
        ax.annotate("", xy=(0.2, i + 0.72), xytext=(0.2, i + 0.28), arrowprops={"arrowstyle": "->", "lw": 1.4})
        ax.text(0.23, i + 0.5, label, ha="left", va="center", fontsize=11, style="italic", color="#333333")
