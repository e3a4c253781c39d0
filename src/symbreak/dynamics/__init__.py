"""Deterministic training, conserved quantities, the gradient-descent identity, Hessians, settling, flat directions.

Everything here is full-batch and deterministic: the same layer, data and
settings give the same trajectory bit for bit.

This package re-exports every public name of its modules, which import only
:mod:`symbreak.layers`, :mod:`symbreak.numerics` and each other, one way
(each module only from those listed above it):

* :mod:`._base` — argument checks and per-unit views of a layer's parameters;
* :mod:`.charges` — the conserved per-unit quantities (``norm_differences``, ``diagonal_gap``,
  ``conserved_pairs``) and the one table of the rescalings each form keeps (``KEPT_RESCALINGS``,
  ``kept_rescalings``);
* :mod:`.training` — teacher data, the MSE loss, ``train`` with its optimisers, ``History``;
* :mod:`.identity` — the one-step gradient-descent identity of ``thm-conservation``, its rounding
  bound and its tracking along a run;
* :mod:`.drift` — charge drift over runs, the invariant diagonal's rounding allowance
  (``thm-invariant-diagonal``), log–log slopes and exponential rates;
* :mod:`.hessian` — flat parameters, the autograd Hessian, the closed-form Jacobian and Hessian;
* :mod:`.floors` — rounding floors of the computed gradient, Hessian and loss;
* :mod:`.tangents` — symmetry tangents, predicted flat counts, ``rescale``, ``drift_alignment``
  (``prop-flat-directions``);
* :mod:`.spectrum` — the flat spectrum of the Hessian (``FlatSpectrum``), unit activity, kinks;
* :mod:`.settling` — ``levenberg_marquardt``, ``settle`` and ``settle_from_starts`` (``SettleRun``).

The private names that tests use (``_unflatten``, ``_loss_of_theta``, ``_derivative_terms``,
and ``functional_call``) are re-exported too.
"""

from __future__ import annotations

from symbreak.dynamics.charges import KEPT_RESCALINGS, conserved_pairs, diagonal_gap, kept_rescalings, norm_differences
from symbreak.dynamics.drift import charge_drift, diagonal_gap_bound, exponential_rate, loglog_slope
from symbreak.dynamics.floors import _derivative_terms as _derivative_terms
from symbreak.dynamics.floors import gradient_rounding_floor, hessian_rounding_bound, loss_rounding_bound
from symbreak.dynamics.hessian import _loss_of_theta as _loss_of_theta
from symbreak.dynamics.hessian import _unflatten as _unflatten
from symbreak.dynamics.hessian import (
    closed_form_hessian,
    flat_params,
    gradient_norm,
    loss_hessian,
    residual_jacobian,
    set_flat_params,
)
from symbreak.dynamics.hessian import functional_call as functional_call
from symbreak.dynamics.identity import IdentityTrack, gd_identity, gd_identity_bound, pair_gradients, track_gd_identity
from symbreak.dynamics.settling import SettleRun, levenberg_marquardt, settle, settle_from_starts
from symbreak.dynamics.spectrum import FlatSpectrum, flat_spectrum, nearest_kink, unit_activity
from symbreak.dynamics.tangents import (
    drift_alignment,
    pair_tangents,
    predicted_flat_count,
    predicted_tangents,
    rescale,
    rescaling_is_symmetry,
    rescaling_tangents,
    symmetry_tangents,
    transpose_tangents,
)
from symbreak.dynamics.training import OPTIMIZERS as OPTIMIZERS
from symbreak.dynamics.training import History, mse, teacher_data, train

__all__ = [
    "teacher_data",
    "mse",
    "History",
    "train",
    "norm_differences",
    "pair_gradients",
    "gd_identity",
    "diagonal_gap",
    "flat_params",
    "set_flat_params",
    "loss_hessian",
    "gradient_norm",
    "levenberg_marquardt",
    "symmetry_tangents",
    "conserved_pairs",
    "KEPT_RESCALINGS",
    "kept_rescalings",
    "gd_identity_bound",
    "IdentityTrack",
    "track_gd_identity",
    "charge_drift",
    "loglog_slope",
    "exponential_rate",
    "diagonal_gap_bound",
    "residual_jacobian",
    "closed_form_hessian",
    "gradient_rounding_floor",
    "hessian_rounding_bound",
    "settle",
    "pair_tangents",
    "transpose_tangents",
    "rescaling_is_symmetry",
    "nearest_kink",
    "predicted_tangents",
    "predicted_flat_count",
    "unit_activity",
    "FlatSpectrum",
    "flat_spectrum",
    "rescale",
    "loss_rounding_bound",
    "drift_alignment",
    "rescaling_tangents",
    "SettleRun",
    "settle_from_starts",
]
