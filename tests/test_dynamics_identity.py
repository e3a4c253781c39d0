"""symbreak.dynamics.identity: the one-step identity's arguments and the worst ratio of a track.

The claim ``thm-conservation`` itself (the identity within its rounding bound, along runs) is
tested in ``tests/test_ch11_conservation.py``.
"""

from __future__ import annotations

import pytest
import torch

from helpers import small_layer
from symbreak import dynamics as D
from symbreak.layers import KeyValueMLP

F64 = torch.float64


def _data(seed: int, d: int = 4, d_out: int = 2, n: int = 64):
    torch.manual_seed(seed + 1)
    teacher = KeyValueMLP(d, 6, d_out, activation="gelu", dtype=F64)
    return D.teacher_data(teacher, d, n, seed=seed)


def test_gd_identity_rejects_an_unknown_pair():
    X, Y = _data(0)
    with pytest.raises(ValueError, match="pair: expected 'qk' or 'kv'"):
        D.gd_identity(small_layer("gated", "silu"), X, Y, lr=0.1, pair="qv")


def test_worst_ratio_is_the_largest_residual_over_its_bound():
    residual = torch.tensor([[1e-16, -3e-16], [2e-16, 0.0]], dtype=F64)
    bound = torch.tensor([[1e-15, 1e-15], [1e-16, 1e-15]], dtype=F64)
    track = D.IdentityTrack({"qk": torch.zeros(3, 2, dtype=F64)}, {"qk": residual}, {"qk": bound})
    assert track.worst_ratio("qk") == pytest.approx(2.0, rel=1e-15)  # 2e-16 / 1e-16
    with pytest.raises(ValueError, match=r"pair: expected one of \['qk'\], got 'kv'"):
        track.worst_ratio("kv")


def test_track_records_every_pair_of_a_memory():
    """A key–value memory has only the kv charge; the track has one row per step and one column per unit."""
    X, Y = _data(1)
    torch.manual_seed(2)
    track = D.track_gd_identity(small_layer("kv", "relu"), X, Y, lr=0.05, steps=3)
    assert set(track.residual) == set(track.bound) == {"kv"}
    assert track.charge["kv"].shape == (4, 3) and track.residual["kv"].shape == (3, 3)
    assert track.worst_ratio("kv") <= 1.0  # ReLU: the memory keeps ‖k_j‖² − ‖v_j‖² (thm-conservation)
