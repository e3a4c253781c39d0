"""The feed-forward forms of the book, as ``torch.nn.Module`` s named as in the maths.

A token is a row ``x ∈ R^{1×d}``; every layer maps ``(..., d) → (..., d_out)``
without biases.  Unit ``j`` has a key ``k_j`` and a query ``q_j`` (rows of
``K, Q ∈ R^{m×d}``) and a value ``v_j`` (row of ``V ∈ R^{m×d_out}``).

* :class:`KeyValueMLP` — ``σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j``;
* :class:`BilinearMLP` — ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``, the rank-``R``
  bilinear form; ``rank=1`` is the symmetric rank-1 form;
* :class:`GatedMLP` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``, the gated MLP.

Each layer exposes :meth:`hidden` (the coefficients ``h`` with output
``h V``) and can be built from given tensors with ``from_weights``.

This package re-exports every public name of its modules, which import only
:mod:`symbreak.activations` and :mod:`._base`:

* :mod:`._base` — ``FeedForward``, the argument checks, initialization and blocked evaluation;
* :mod:`.memory` — ``KeyValueMLP`` and ``GlobalQueryMLP``, the key–value memories;
* :mod:`.bilinear` — ``BilinearMLP`` (rank ``R``, by factors) and ``FullBilinearMLP`` (by unit forms);
* :mod:`.gated` — ``GatedMLP``.
"""

from __future__ import annotations

from symbreak.layers._base import FeedForward
from symbreak.layers.bilinear import BilinearMLP, FullBilinearMLP
from symbreak.layers.gated import GatedMLP
from symbreak.layers.memory import GlobalQueryMLP, KeyValueMLP

__all__ = ["FeedForward", "KeyValueMLP", "GlobalQueryMLP", "BilinearMLP", "FullBilinearMLP", "GatedMLP"]
