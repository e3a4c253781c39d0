"""Shared test configuration: hypothesis profiles and small helpers."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, settings

# In CI every property test is derandomized (a fixed example sequence) and has
# no deadline, so a test never fails by chance or by a slow machine.
settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci"))

torch.set_default_dtype(torch.float32)


@pytest.fixture
def one_thread():
    """One intra-op thread for the ``with`` test: tiny tensors run faster so, and much faster on a loaded machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def monkeypatch_module():
    """A monkeypatch that hypothesis tests may use (function-scoped fixtures are reset per example, this one not)."""
    with pytest.MonkeyPatch.context() as mp:
        yield mp
