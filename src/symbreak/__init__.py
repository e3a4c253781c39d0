"""symbreak: gated MLPs as symmetry-broken rank-1 bilinear attention.

The shared package of the companion book to Breslow (2026), arXiv:2606.22172.
Modules, each with one job:

* :mod:`symbreak.activations` — the activation registry (torch and sympy);
* :mod:`symbreak.decide` — exact decisions of real identities (proof or counterexample);
* :mod:`symbreak.layers` — ``KeyValueMLP``, ``BilinearMLP``, ``GatedMLP``;
* :mod:`symbreak.symmetry` — exchange, inverse scaling, gauge, output change;
* :mod:`symbreak.symbolic` — the derivations as sympy identities;
* :mod:`symbreak.costs` — parameters, FLOPs and memory as formulas;
* :mod:`symbreak.numerics` — rounding-error bounds for derived tolerances;
* :mod:`symbreak.plotting` — the book's figure style;
* :mod:`symbreak.repro` — seeds and print precision.
"""

from importlib import metadata as _metadata

from symbreak.activations import REGISTRY, Activation
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.repro import setup
from symbreak.symmetry import exchange, gauge, inverse_scale, output_change

try:  # the version is defined once, in pyproject.toml
    __version__ = _metadata.version("symbreak")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
    __version__ = "unknown"

__all__ = [
    "REGISTRY",
    "Activation",
    "KeyValueMLP",
    "BilinearMLP",
    "GatedMLP",
    "exchange",
    "inverse_scale",
    "gauge",
    "output_change",
    "setup",
    "__version__",
]
