"""The feed-forward forms of the book, as ``torch.nn.Module`` s named as in the maths.

A token is a row ``x ∈ R^{1×d}``; every layer maps ``(..., d) → (..., d_out)``
without biases.  Unit ``j`` has a key ``k_j`` and a query ``q_j`` (rows of
``K, Q ∈ R^{m×d}``) and a value ``v_j`` (row of ``V ∈ R^{m×d_out}``).

* :class:`KeyValueMLP` — ``σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j``;
* :class:`GlobalQueryMLP` — ``σ(x Q Kᵀ) V``, a key–value memory read with the query ``x Q``;
* :class:`BilinearMLP` — ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``, the rank-``R``
  bilinear form; ``rank=1`` is the symmetric rank-1 form;
* :class:`FullBilinearMLP` — ``Σ_j σ(x W_j xᵀ) v_j``, stored by the unit forms ``W_j``;
* :class:`GatedMLP` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``, the gated MLP; ``GatedMLP.from_terms``
  builds the gated rank-``R`` form as ``Rm`` units with tied values (:func:`tie_terms`).

Each layer exposes :meth:`~symbreak.layers.FeedForward.hidden` (the coefficients ``h`` with output
``h V``) and can be built from given tensors with ``from_weights``.  ``torch.compile`` compiles every layer, and
``torch.jit.trace`` traces one, with or without gradients, at a batch that fits one block of rows (the trace keeps
the path it took); ``torch.jit.script`` cannot compile them.

This package re-exports every public name of its modules.  They import only :mod:`symbreak.activations` and
:mod:`._base`, and the control :mod:`.symmetrised` also :mod:`.gated`:

* :mod:`._base` — ``FeedForward``, the argument checks, initialization, blocked evaluation and ``tie_terms``;
* :mod:`.memory` — ``KeyValueMLP`` and ``GlobalQueryMLP``, the key–value memories;
* :mod:`.bilinear` — ``BilinearMLP`` (rank ``R``, by factors), its conserved charges ``rank_R_charges``,
  and ``FullBilinearMLP`` (by unit forms);
* :mod:`.gated` — ``GatedMLP``;
* :mod:`.symmetrised` — ``SymmetrisedGatedMLP``, the gated control that keeps the exchange symmetry.
"""

from __future__ import annotations

from symbreak.layers._base import FeedForward, tie_terms
from symbreak.layers.bilinear import BilinearMLP, FullBilinearMLP, rank_R_charges
from symbreak.layers.gated import GatedMLP
from symbreak.layers.memory import GlobalQueryMLP, KeyValueMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

__all__ = [
    "FeedForward",
    "KeyValueMLP",
    "GlobalQueryMLP",
    "BilinearMLP",
    "FullBilinearMLP",
    "GatedMLP",
    "SymmetrisedGatedMLP",
    "tie_terms",
    "rank_R_charges",
]
