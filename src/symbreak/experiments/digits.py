"""The digits runs of chapter 15: each trained block's checks within rounding, and the swap check over stored runs.

A run of the digits sweep (:mod:`symbreak.experiments.sweep`) measures, on its
trained model and its test images ``X`` (:func:`run_checks`): the ratio of the
swap ``Q ↔ K`` to the rounding bound (:func:`~symbreak.experiments.runner.swap_rounding_ratio`,
for a bilinear or gated block), whether a symmetrised control computes the same
floating-point numbers after the swap, and whether a block that is even by
``prop-parity`` gives ``B(−X) = B(X)`` bit for bit.  :func:`stored_swap_check`
gathers them from the stored records into chapter 14's :class:`SwapCheck`, so the
chapter shows the checks without the models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from symbreak.experiments.checks import SwapCheck
from symbreak.experiments.models import Model
from symbreak.experiments.runner import exchanged, swap_rounding_ratio
from symbreak.experiments.tables import exchange_groups, form_verdicts
from symbreak.layers import BilinearMLP, GatedMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

__all__ = ["CHECK_FIELDS", "run_checks", "stored_swap_check"]

#: The fields of a record that :func:`run_checks` fills (``None`` where a check does not apply to the form).
CHECK_FIELDS = ("swap_ratio", "swap_unchanged", "even")


def run_checks(model: Model, form: str, X: torch.Tensor) -> dict[str, float | bool | None]:
    """``{"swap_ratio", "swap_unchanged", "even"}`` of the trained ``model`` of ``form`` on the tokens ``X``.

    ``swap_ratio``: ``max |B'(X) − B(X)| / (β_B + β_B')`` for a bilinear or gated block (at most 1 when the block
    keeps the exchange, ``thm-exchange``); ``swap_unchanged``: whether a symmetrised control gives the same
    floating-point numbers after ``Q ↔ K`` (``prop-symmetrised-exchange``); ``even``: whether a block that is even
    by ``prop-parity`` gives ``B(−X) = B(X)`` bit for bit.  Each is ``None`` where it does not apply.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a Model, got {type(model).__name__}")
    if not isinstance(X, torch.Tensor) or X.ndim != 2 or X.shape[1] != model.block.d:
        given = getattr(X, "shape", type(X).__name__)
        raise ValueError(f"X: expected a (tokens × {model.block.d}) tensor, got {given}")
    block = model.block
    with torch.no_grad():
        ratio = swap_rounding_ratio(model, X) if isinstance(block, (BilinearMLP, GatedMLP)) else None
        unchanged = torch.equal(exchanged(block)(X), block(X)) if isinstance(block, SymmetrisedGatedMLP) else None
        even = torch.equal(block(-X), block(X)) if form_verdicts(form, ("parity",))["parity"] else None
    return {"swap_ratio": ratio, "swap_unchanged": unchanged, "even": even}


def stored_swap_check(records: Sequence[Mapping]) -> SwapCheck:
    """Chapter 14's :class:`SwapCheck` from stored records (each with :data:`CHECK_FIELDS` and its ``result``).

    The exchange-symmetric forms and the gated ones are decided by
    :func:`~symbreak.experiments.tables.exchange_groups`; ``largest_swap`` is the largest
    ``|err(swapped) − err(trained)|`` of an exchange-symmetric model.
    """
    if isinstance(records, Mapping) or not records:
        raise ValueError(f"records: expected a non-empty sequence of run records, got {records!r:.80}")
    missing = [r.get("form") for r in records if not set(CHECK_FIELDS) <= set(r)]
    if missing:
        raise ValueError(f"records: expected the fields {CHECK_FIELDS} in every record, got records of {missing[:3]}")
    symmetric, gated = exchange_groups(list(dict.fromkeys(r["form"] for r in records)))
    if not symmetric or not gated:
        raise ValueError("records: expected runs of exchange-symmetric and of gated forms, got one kind only")
    ratios = {True: [], False: []}
    for r in records:
        if r["swap_ratio"] is not None:
            ratios[r["form"] in symmetric].append(r["swap_ratio"])
    controls = [r["swap_unchanged"] for r in records if r["swap_unchanged"] is not None]
    return SwapCheck(
        n_symmetric=len(ratios[True]),
        symmetric_ratio=max(ratios[True]),
        gated_ratio=min(ratios[False]),
        even=all(r["even"] for r in records if r["even"] is not None),
        n_controls=len(controls),
        controls_unchanged=all(controls),
        largest_swap=max(abs(r["result"]["swap_change"]) for r in records if r["form"] in symmetric),
    )
