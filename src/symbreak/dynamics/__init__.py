"""Deterministic training, conserved quantities, the gradient-descent identity, Hessians, settling, flat directions.

Everything here is full-batch and deterministic: the same layer, data and
settings give the same trajectory bit for bit.

This package re-exports every public name of its modules, which import only
:mod:`symbreak.layers`, :mod:`symbreak.numerics` and each other, one way
(each module only from those listed above it):

* :mod:`._base` — argument checks and per-unit views of a layer's parameters;
* :mod:`.charges` — the conserved per-unit quantities (``norm_differences``, ``diagonal_gap``,
  ``conserved_pairs``, ``by_law``), starts on and near the diagonal (``on_diagonal``,
  ``off_diagonal``) and the one table of the rescalings each form keeps (``KEPT_RESCALINGS``,
  ``kept_rescalings``);
* :mod:`.training` — teacher data, the MSE loss, ``train`` with its optimisers, ``History``, and the
  layers chapters 11–12 train (``STUDENTS``, ``students``);
* :mod:`.identity` — the one-step gradient-descent identity of ``thm-conservation``, its rounding
  bound and its tracking along a run;
* :mod:`.drift` — charge drift over runs (``charge_drift``, ``step_sweep``, ``drift_and_allowance``,
  ``momentum_flow_settings``), the invariant diagonal's rounding allowance and its one-unit converse
  (``thm-invariant-diagonal``), log–log slopes, exponential and decay rates;
* :mod:`.hessian` — flat parameters, the autograd Hessian, the closed-form Jacobian and Hessian;
* :mod:`.floors` — rounding floors of the computed gradient, Hessian and loss;
* :mod:`.tangents` — symmetry tangents, predicted flat counts and spans, ``rescale``, ``drift_alignment``,
  parameter counts (``prop-flat-directions``);
* :mod:`.spectrum` — the flat spectrum of the Hessian (``FlatSpectrum``), unit activity, kinks, the
  curvature along a rescaling (``rescaling_sweep``);
* :mod:`.settling` — ``make_layer``, ``perturbed_copy``, ``settle``, ``settle_from_starts`` (``SettleRun``)
  and ``settle_in_halves`` (``HalvedRun``).

The private names that tests use (``_unflatten``, ``_loss_of_theta``, ``_derivative_terms``,
and ``functional_call``) are re-exported too.
"""

from __future__ import annotations

from symbreak.dynamics.charges import (
    KEPT_RESCALINGS,
    by_law,
    conserved_pairs,
    diagonal_gap,
    kept_rescalings,
    norm_differences,
    off_diagonal,
    on_diagonal,
)
from symbreak.dynamics.drift import (
    StepSweep,
    charge_drift,
    decay_rates,
    diagonal_gap_bound,
    discrete_decay_rate,
    drift_and_allowance,
    exponential_rate,
    loglog_slope,
    momentum_flow_settings,
    one_unit_gap,
    step_sweep,
)
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
from symbreak.dynamics.settling import (
    LAYER_FORMS,
    HalvedRun,
    SettleRun,
    make_layer,
    perturbed_copy,
    settle,
    settle_from_starts,
    settle_in_halves,
)
from symbreak.dynamics.spectrum import (
    FlatSpectrum,
    RescalingSweep,
    flat_spectrum,
    nearest_kink,
    rescaling_curvatures,
    rescaling_sweep,
    unit_activity,
)
from symbreak.dynamics.tangents import (
    drift_alignment,
    net_parameters,
    pair_tangents,
    predicted_flat_count,
    predicted_span,
    predicted_tangents,
    quadratic_map_dimension,
    random_alignment,
    rescale,
    rescaling_is_symmetry,
    rescaling_tangents,
    symmetry_tangents,
    transpose_tangents,
)
from symbreak.dynamics.training import OPTIMIZERS as OPTIMIZERS
from symbreak.dynamics.training import STUDENTS, History, mse, students, teacher_data, train

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
    "STUDENTS",
    "students",
    "on_diagonal",
    "off_diagonal",
    "by_law",
    "StepSweep",
    "step_sweep",
    "drift_and_allowance",
    "momentum_flow_settings",
    "decay_rates",
    "discrete_decay_rate",
    "one_unit_gap",
    "LAYER_FORMS",
    "make_layer",
    "perturbed_copy",
    "HalvedRun",
    "settle_in_halves",
    "predicted_span",
    "net_parameters",
    "quadratic_map_dimension",
    "random_alignment",
    "RescalingSweep",
    "rescaling_curvatures",
    "rescaling_sweep",
]
