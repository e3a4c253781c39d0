"""symbreak.dynamics.tangents: the tangents are orthogonal to ∇L and flat at a critical point (prop-flat-directions).

Moved verbatim from ``tests/test_dynamics.py``.
"""

from __future__ import annotations

import pytest
import torch

from helpers import CONSERVATION_CASES, small_layer
from symbreak import dynamics as D
from symbreak.layers import BilinearMLP, KeyValueMLP

F64 = torch.float64


def _data(seed: int, d: int = 4, d_out: int = 2, n: int = 64):
    torch.manual_seed(seed + 1)
    teacher = KeyValueMLP(d, 6, d_out, activation="gelu", dtype=F64)
    return D.teacher_data(teacher, d, n, seed=seed)


CASES = CONSERVATION_CASES


_layer = small_layer


@pytest.mark.parametrize(("form", "act"), [(f, a) for f, a, _ in CASES])
def test_prop_flat_directions_gradient_orthogonal_to_tangents(form, act):
    """prop-flat-directions: every predicted tangent ξ satisfies ∇L·ξ = 0 at any point (invariance)."""
    torch.manual_seed(1)
    layer = _layer(form, act)
    X, Y = _data(1)
    theta = D.flat_params(layer).requires_grad_(True)
    (g,) = torch.autograd.grad(D._loss_of_theta(layer, X, Y)(theta), theta)
    tangents = D.symmetry_tangents(layer)
    for vectors in tangents.values():
        for xi in vectors:
            assert abs(float(g @ xi)) <= 1e-13 * float(g.norm() * xi.norm()) + 1e-15


def test_prop_flat_directions_predicted_kinds():
    """Which rescalings each form has (prop-flat-directions)."""
    kinds = lambda form, act: set(D.symmetry_tangents(_layer(form, act)))  # noqa: E731
    assert kinds("rank1", "silu") == {"qk"}
    assert kinds("rank1", "relu") == {"qk", "qv"}
    assert kinds("gated", "silu") == {"kv"}
    assert kinds("gated", "relu") == {"kv", "qv"}
    assert kinds("gated", "identity") == {"kv", "qv"}, "(q_j, -k_j) is their difference, as with ReLU: not listed"
    assert kinds("kv", "gelu") == set()
    assert kinds("kv", "relu") == {"kv"}
    assert len(D.symmetry_tangents(BilinearMLP(3, 2, rank=2, dtype=F64))["gauge"]) == 2 * 4
