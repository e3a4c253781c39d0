"""Deterministic set-up for notebooks and tests: seeds, print precision, threads.

Every notebook starts with :func:`setup`, so its stored outputs are what the
code produces on a re-run.
"""

from __future__ import annotations

import random

import numpy as np
import torch

__all__ = ["setup", "seed_everything", "PRINT_PRECISION"]

#: Significant digits printed by torch and numpy in the book.
PRINT_PRECISION = 6


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's, NumPy's and torch's global generators with ``seed``; return a torch generator seeded alike."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: expected an int, got {type(seed).__name__} ({seed!r})")
    if seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def setup(seed: int = 0, precision: int = PRINT_PRECISION) -> torch.Generator:
    """Seed every generator, fix print precision, use deterministic torch kernels.

    Returns a torch generator seeded with ``seed`` for explicit use.
    """
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 1:
        raise ValueError(f"precision: expected an int >= 1, got {precision!r}")
    torch.set_printoptions(precision=precision, sci_mode=False)
    np.set_printoptions(precision=precision, suppress=True)
    torch.use_deterministic_algorithms(True)
    return seed_everything(seed)
