"""Which form keeps which symmetry, for which σ: the decision procedures and measurements behind the book's table.

Every verdict is reached on the *unit level*: a unit of a form contributes
``h(a, b) v`` to the output, with ``a = x·q`` and ``b = x·k`` (the two rank-1
factors) or ``s = x W xᵀ`` (the full form).  A transformation of the
parameters or of the input changes the unit's coefficient into ``h'``; the
layer keeps the symmetry for every choice of weights and inputs iff
``h' − h ≡ 0``.

The forms, each with its unit coefficient ``h`` and the transformations decided for it:

* ``kv`` — ``σ(a)``, ``a = x·k``: parity, rescaling ``(k, v)``;
* ``rank1`` — ``σ(a b)``: exchange, inverse scaling, parity, ``(k, v)``;
* ``full`` — ``σ(x W xᵀ)``: exchange (``W → Wᵀ``), parity, gauge, ``(k, v)``;
* ``gated`` — ``σ(a) b``: exchange, inverse scaling, parity, ``(k, v)``.

Modules:

* :mod:`._base` — ``FORMS``, ``SYMMETRIES``, ``KINDS`` and the ``Verdict`` record;
* :mod:`.table` — ``verdict``, ``symmetry_table``, ``exchange_decision``,
  ``inverse_scaling_decision``, ``full_identity_holds``: every cell decided, and how
  (a proof on sign cells, a matrix identity for every ``d``, a canonical form, or a
  rational counterexample);
* :mod:`.moments` — ``GH_POINTS``, ``gaussian_moment``, ``exchange_defect``, ``inverse_scaling_defect``;
* :mod:`.measure` — ``SCALE_ALPHA``, ``KV_ALPHA``, ``MEASURE_CONFIG``, ``Measurement``, ``form_layer``,
  ``measure``, ``rescale_key_value``, ``parity_class``, ``even_part_is_bilinear``: the same cells on random
  float64 layers.
"""

from __future__ import annotations

from symbreak.verdicts._base import FORMS, KINDS, SYMMETRIES, Verdict
from symbreak.verdicts._base import a as a  # the real symbols of the two factors, for tests
from symbreak.verdicts._base import b as b
from symbreak.verdicts.measure import (
    KV_ALPHA,
    MEASURE_CONFIG,
    SCALE_ALPHA,
    Measurement,
    even_part_is_bilinear,
    form_layer,
    measure,
    parity_class,
    rescale_key_value,
)
from symbreak.verdicts.moments import GH_POINTS, exchange_defect, gaussian_moment, inverse_scaling_defect
from symbreak.verdicts.table import (
    FULL_METHOD,
    exchange_decision,
    full_identity_holds,
    inverse_scaling_decision,
    symmetry_table,
    verdict,
)

__all__ = [
    "FORMS",
    "SYMMETRIES",
    "KINDS",
    "Verdict",
    "verdict",
    "symmetry_table",
    "full_identity_holds",
    "FULL_METHOD",
    "exchange_decision",
    "inverse_scaling_decision",
    "gaussian_moment",
    "exchange_defect",
    "inverse_scaling_defect",
    "Measurement",
    "form_layer",
    "parity_class",
    "even_part_is_bilinear",
    "measure",
    "rescale_key_value",
    "KV_ALPHA",
    "MEASURE_CONFIG",
    "SCALE_ALPHA",
    "GH_POINTS",
]
