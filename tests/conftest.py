"""Shared test configuration: hypothesis profiles and small helpers."""

from __future__ import annotations

import os
import sys

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


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test left open, so that figures never pile up on one xdist worker."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")  # only where a test has loaded it
    if plt is not None:
        plt.close("all")


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


class _Glued(dict):
    """Glued values by name, and where each glued figure would be saved (``saved``)."""

    def __init__(self):
        super().__init__()
        self.saved: dict[str, object] = {}


@pytest.fixture
def glued(monkeypatch):
    """Record what a chapter would glue, text and figures by name, instead of sending it to a kernel.

    Patches :func:`symbreak.prose.glue_text` (through which every glued text
    passes) and ``glue_figure`` in every loaded ``symbreak.pages`` module; the
    path a figure would be saved to is in ``glued.saved[name]``.
    """
    import matplotlib.pyplot as plt

    from symbreak import prose

    store = _Glued()

    def glue_figure(name, fig, save_to=None):
        store.saved[name] = save_to
        store.setdefault(name, fig)

    monkeypatch.setattr(prose, "glue_text", lambda name, text: store.setdefault(name, text))
    for name, module in list(sys.modules.items()):
        if name.startswith("symbreak.pages.") and hasattr(module, "glue_figure"):
            monkeypatch.setattr(module, "glue_figure", glue_figure)
    yield store
    for value in store.values():
        if isinstance(value, plt.Figure):
            plt.close(value)


def swept_records(protocol, folder) -> list[dict]:
    """Both stages of a (tiny) language-model ``protocol`` run into ``folder``, read back under the protocol check."""
    from symbreak.language.results import load_results
    from symbreak.language.runner import run_stage

    for stage in ("lr-sweep", "main"):
        run_stage(protocol, stage, folder, jobs=1, progress=False)
    return load_results(folder, protocol)


def chosen_test_losses(records: list[dict], protocol, key: str) -> list[float]:
    """The stored final test losses of form ``key``'s main runs at the rate its sweep chose, by seed."""
    from symbreak.language.results import best_learning_rates

    chosen = best_learning_rates([r for r in records if r["stage"] == "lr-sweep"], protocol)[key]
    rows = [r for r in records if r["stage"] == "main" and r["form_key"] == key and r["learning_rate"] == chosen]
    return [r["final"]["test"] for r in sorted(rows, key=lambda r: r["seed"])]
