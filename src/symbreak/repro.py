"""Deterministic set-up for notebooks and tests: seeds, print precision, threads.

Every notebook starts with :func:`setup`, so its stored outputs are what the
code produces on a re-run.
"""

from __future__ import annotations

import random

import numpy as np
import torch

__all__ = ["setup", "seed_everything", "inputs_seed", "PRINT_PRECISION"]

#: Significant digits printed by torch and numpy in the book.
PRINT_PRECISION = 6


#: Distinguishes the stream of :func:`inputs_seed` from the global streams (any fixed word would do).
_INPUTS_STREAM = 0x1D5EED


def inputs_seed(seed: int) -> int:
    """The seed of the inputs' generator: derived from ``seed`` through NumPy's ``SeedSequence``.

    The global torch generator (seeded with ``seed`` itself) draws the layers' weights; the generator
    seeded with this number draws the inputs, so inputs never repeat the weights' random numbers.
    """
    words = np.random.SeedSequence([seed, _INPUTS_STREAM]).generate_state(2, dtype=np.uint32)
    return int(words[0]) << 32 | int(words[1])


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's, NumPy's and torch's global generators with ``seed``; return the inputs' generator.

    The returned generator is seeded with :func:`inputs_seed` ``(seed)``: an independent stream, not the
    global one from which layers draw their weights.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: expected an int, got {type(seed).__name__} ({seed!r})")
    if seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(inputs_seed(seed))


def setup(seed: int = 0, precision: int = PRINT_PRECISION) -> torch.Generator:
    """Seed every generator, fix print precision, use deterministic torch kernels.

    The last is process-wide: it calls ``torch.use_deterministic_algorithms(True)``, which stays on for the whole
    Python process (an operation without a deterministic kernel then raises) until it is turned off again.
    Returns the inputs' generator of :func:`seed_everything`: draw inputs from it, weights from the
    global generator, so that the two are independent streams.
    """
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 1:
        raise ValueError(f"precision: expected an int >= 1, got {precision!r}")
    torch.set_printoptions(precision=precision, sci_mode=False)
    np.set_printoptions(precision=precision, suppress=True)
    torch.use_deterministic_algorithms(True)
    return seed_everything(seed)
