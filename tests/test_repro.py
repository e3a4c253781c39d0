"""Seeding makes draws repeatable; bad arguments are rejected."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from symbreak.repro import seed_everything, setup


def test_setup_repeats_draws():
    setup(3)
    a = (torch.randn(4), np.random.rand(2))
    setup(3)
    b = (torch.randn(4), np.random.rand(2))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    torch.use_deterministic_algorithms(False)


def test_returned_generator_is_seeded():
    g1, g2 = seed_everything(5), seed_everything(5)
    assert torch.equal(torch.randn(3, generator=g1), torch.randn(3, generator=g2))


def test_bad_seed():
    with pytest.raises(ValueError, match="seed: expected an int >= 0, got -1"):
        seed_everything(-1)
    with pytest.raises(TypeError, match="seed: expected an int, got float"):
        seed_everything(1.5)
