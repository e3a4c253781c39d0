"""The book's derivations as sympy functions that return the identity to be checked.

Each ``*_identity`` function builds both sides of a claimed equation from
explicit symbolic matrices (entries ``x_i``, ``k_{j,i}`` …) and returns their
difference; the claim holds when that difference simplifies to zero.  The
activation is either a registered one or, by default, an undefined function
``σ``, so that the identity is checked for every σ at once.

This package re-exports every public name of its modules, which import only
:mod:`symbreak.activations`, :mod:`symbreak.decide` and :mod:`._base`:

* :mod:`._base` — symbolic rows, matrices and σ, the shared building blocks;
* :mod:`.memory` — chapters 1–2: the key–value memory, absorbed and static queries;
* :mod:`.bilinear` — chapter 3: bilinear attention, transpose, gauge, score dimension;
* :mod:`.rank_one` — chapter 4: the symmetric rank-1 form and its reach;
* :mod:`.gated` — chapter 5: the gated MLP against the rank-1 form and published blocks;
* :mod:`.exchange` — chapter 6: the exchange ``q ↔ k`` and its defect;
* :mod:`.scaling` — chapter 7: inverse scaling, homogeneity, slopes, gate temperature;
* :mod:`.parity` — chapter 8: the parity ``x → −x`` and the diagonal split;
* :mod:`.higher_rank` — chapter 9: rank-R forms, polarization, inertia, dimension;
* :mod:`.conservation` — chapters 11–12: conservation laws and the invariant diagonal;
* :mod:`.flat_directions` — chapter 13: symmetry tangents as flat Hessian directions;
* :mod:`.cells` — decisions and counterexamples as Markdown table cells.
"""

from __future__ import annotations

from symbreak.symbolic._base import apply, integer_matrix, matrix, row, sigma_function, simplify_matrix, sym
from symbreak.symbolic.bilinear import (
    bilinear_attention_identity,
    expressivity_routes,
    gauge_identity,
    score_dimension_identity,
    transpose_identity,
)
from symbreak.symbolic.cells import (
    SHOWN_DIGITS,
    DecimalLatexPrinter,
    activation_properties,
    counterexample_cells,
    decimal_latex,
    decision_text,
    is_decimal,
)
from symbreak.symbolic.conservation import (
    GeneratorCheck,
    charge_defect,
    diagonal_gradient_difference,
    euler_decision,
    euler_defect,
    gd_norm_identity,
    gd_step_identity,
    generator_checks,
    rescaling_generator,
)
from symbreak.symbolic.exchange import (
    QUADRANTS,
    exchange_by_quadrant,
    exchange_defect_direct,
    exchange_defect_expansion,
    exchange_layer_difference,
    exchange_ratio_limits,
    exchange_scale_identity,
    exchange_unit_difference,
    gelu_exchange_defect,
)
from symbreak.symbolic.flat_directions import FLAT_FORMS, flat_direction_identity, invariance_defect
from symbreak.symbolic.gated import (
    GATES,
    even_unit_fit,
    gate_complement,
    gate_factorisation,
    gate_range,
    gate_times_score_identity,
    gated_layer_identity,
    gated_symmetric_layer_difference,
    gated_symmetric_unit_difference,
    gated_unit_parity_difference,
    linear_gated_block_identity,
    symmetric_parity_identity,
    vanishes_at_zero,
)
from symbreak.symbolic.higher_rank import (
    gated_rank_R_identity,
    gated_unit_gauge_change,
    gauge_commutation_defect,
    inertia,
    rank_d_full_form_identity,
    rank_R_charge_rates,
    rank_R_form_dimension,
    rank_R_form_jacobian,
    rank_R_layer_identity,
    rank_R_polarization_identity,
)
from symbreak.symbolic.memory import (
    absorption_jacobian,
    augment,
    key_value_sum_identity,
    query_absorbed_identity,
    query_gauge_identity,
    singular_query,
    singular_query_identity,
    static_key_identity,
    static_query_affine_identity,
    static_query_identity,
)
from symbreak.symbolic.parity import (
    FULL_ENTRYWISE_SIZES,
    FULL_SYMMETRIES,
    PARITY_FORMS,
    STATED_EVEN_PARTS,
    diagonal_split_identity,
    even_part_identity,
    full_score_identity,
    is_zero_identity,
    parity_loss_split_identity,
    parity_parts,
    predicted_parity,
    rank_R_parity_identity,
    sigma_parity,
)
from symbreak.symbolic.rank_one import (
    gaussian_quadratic_moment_identity,
    rank_one_layer_identity,
    rank_one_polarization_identity,
    rank_one_score_identity,
    rank_one_truncation_identity,
    sym_rank_one_eigen_identity,
    sym_rank_one_eigenvalues,
    sym_rank_one_spectrum_identity,
)
from symbreak.symbolic.scaling import (
    gate_temperature_identity,
    in_scaling_group,
    inverse_scaling_layer_identity,
    log_periodic_activation,
    one_sided_derivatives,
    piecewise_linear_scaling_cells,
    piecewise_linear_scaling_defect,
    positive_homogeneity_certificate,
    scaling_decision,
    scaling_defect,
    scaling_group,
)

__all__ = [
    "row",
    "matrix",
    "apply",
    "augment",
    "sigma_function",
    "simplify_matrix",
    "sym",
    "key_value_sum_identity",
    "query_absorbed_identity",
    "static_query_identity",
    "static_query_affine_identity",
    "rank_R_layer_identity",
    "rank_d_full_form_identity",
    "rank_R_polarization_identity",
    "inertia",
    "rank_R_form_dimension",
    "rank_R_form_jacobian",
    "gated_rank_R_identity",
    "integer_matrix",
    "singular_query",
    "singular_query_identity",
    "query_gauge_identity",
    "absorption_jacobian",
    "transpose_identity",
    "gauge_identity",
    "bilinear_attention_identity",
    "score_dimension_identity",
    "rank_one_score_identity",
    "rank_one_layer_identity",
    "gated_layer_identity",
    "sym_rank_one_eigenvalues",
    "sym_rank_one_eigen_identity",
    "sym_rank_one_spectrum_identity",
    "rank_one_polarization_identity",
    "rank_one_truncation_identity",
    "gated_symmetric_unit_difference",
    "exchange_unit_difference",
    "exchange_layer_difference",
    "QUADRANTS",
    "exchange_by_quadrant",
    "exchange_defect_expansion",
    "exchange_defect_direct",
    "gelu_exchange_defect",
    "SHOWN_DIGITS",
    "counterexample_cells",
    "DecimalLatexPrinter",
    "decimal_latex",
    "is_decimal",
    "parity_parts",
    "rank_R_parity_identity",
    "diagonal_split_identity",
    "parity_loss_split_identity",
    "gated_symmetric_layer_difference",
    "linear_gated_block_identity",
    "decision_text",
    "activation_properties",
    "inverse_scaling_layer_identity",
    "scaling_defect",
    "positive_homogeneity_certificate",
    "piecewise_linear_scaling_cells",
    "piecewise_linear_scaling_defect",
    "one_sided_derivatives",
    "scaling_group",
    "log_periodic_activation",
    "gate_temperature_identity",
    "charge_defect",
    "rescaling_generator",
    "gd_norm_identity",
    "gd_step_identity",
    "euler_defect",
    "diagonal_gradient_difference",
    "FLAT_FORMS",
    "invariance_defect",
    "flat_direction_identity",
    "scaling_decision",
    "in_scaling_group",
    "sigma_parity",
    "predicted_parity",
    "even_part_identity",
    "GeneratorCheck",
    "generator_checks",
    "euler_decision",
    "STATED_EVEN_PARTS",
    "PARITY_FORMS",
    "expressivity_routes",
    "exchange_scale_identity",
    "exchange_ratio_limits",
    "GATES",
    "gate_factorisation",
    "vanishes_at_zero",
    "gate_times_score_identity",
    "gate_range",
    "symmetric_parity_identity",
    "gated_unit_parity_difference",
    "gate_complement",
    "even_unit_fit",
    "gated_unit_gauge_change",
    "gauge_commutation_defect",
    "rank_R_charge_rates",
    "static_key_identity",
    "gaussian_quadratic_moment_identity",
    "FULL_SYMMETRIES",
    "FULL_ENTRYWISE_SIZES",
    "full_score_identity",
    "is_zero_identity",
]
