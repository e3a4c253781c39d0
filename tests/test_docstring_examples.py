"""The examples in the docstrings of the public layers and symmetries (what the API reference shows) run and print
what they say.  Each module's examples run in a fresh namespace after torch's global generator is seeded, so the
random layers are reproducible; the printed verdicts do not depend on the draw."""

from __future__ import annotations

import doctest

import pytest
import torch

import symbreak.layers.bilinear
import symbreak.layers.gated
import symbreak.layers.memory
import symbreak.symmetry

MODULES = [symbreak.layers.gated, symbreak.layers.bilinear, symbreak.layers.memory, symbreak.symmetry]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    torch.manual_seed(20260622)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, module.__name__) if t.examples]
    assert tests, f"{module.__name__}: no docstring examples"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{module.__name__}: {runner.failures} failing docstring examples (see the output)"
