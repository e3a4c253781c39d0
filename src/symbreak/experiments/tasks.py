"""The tasks of the comparison (E5): digits, the bilinear teacher and the odd target, built from a seed.

The odd target adds an odd part ``tanh(x U)`` to the even teacher; its pieces
and the error floor that no ``even block + affine map`` can beat are here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from symbreak.layers import FullBilinearMLP

__all__ = ["TASKS", "DIGITS_STD_FLOOR", "DIGITS_IMAGES", "Task", "make_task", "make_digits_split", "digits_dropped"]
__all__ += ["odd_target_parts", "odd_target_floor"]


#: The tasks: name → what is measured on the test set.
TASKS: dict[str, str] = {
    "digits": "test error rate (classification of scikit-learn's 8×8 digits)",
    "bilinear teacher": "test MSE / variance (teacher: full bilinear attention, SiLU)",
    "odd target": "test MSE / variance (teacher plus an odd component)",
}


@dataclass(frozen=True)
class Task:
    """Standardised train and test data of one task."""

    name: str
    X_train: torch.Tensor
    Y_train: torch.Tensor
    X_test: torch.Tensor
    Y_test: torch.Tensor
    classification: bool

    @property
    def d(self) -> int:
        """The input width ``d``."""
        return self.X_train.shape[1]

    @property
    def d_out(self) -> int:
        """The output width: the number of targets, or of classes for a classification task."""
        return self.Y_train.shape[1] if not self.classification else int(self.Y_train.max()) + 1


#: The floor of the digits' pixel standard deviation in the standardisation: one grey level (intensities 0–16).
DIGITS_STD_FLOOR = 1.0


def _split(X: torch.Tensor, Y: torch.Tensor, n_train: int, seed: int):
    perm = torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(seed))
    return X[perm[:n_train]], Y[perm[:n_train]], X[perm[n_train:]], Y[perm[n_train:]]


def make_task(name: str, *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0) -> Task:
    """Build task ``name`` deterministically from ``seed``.

    * ``"digits"``: scikit-learn's bundled 8×8 digits (1797 images, 64 features,
      10 classes), standardised with the training statistics; ``n_train``
      training images, the rest for testing (``d`` is ignored).  The pixels that
      are constant on the training images are dropped (:func:`digits_dropped`):
      standardised, they are 0 on every training image, so their weights get no
      gradient and would only add their random initial values on a test image.
      The standard deviation is floored at :data:`DIGITS_STD_FLOOR`, one grey
      level: the intensities are integers 0–16, and dividing a pixel lit on a
      handful of training images by its tiny spread would make it a feature of
      size ~100 on a test image.
    * ``"bilinear teacher"``: ``x ~ N(0, I_d)``, ``y = T(x)`` with ``T`` a random
      full bilinear attention layer (rank ``d``, SiLU, 16 units, ``d_out = 4``).
    * ``"odd target"``: the same teacher plus ``tanh(x U)`` with a random
      ``U ∈ R^{d×4}``, an odd function of ``x``.
    """
    if name not in TASKS:
        raise ValueError(f"name: expected one of {list(TASKS)}, got {name!r}")
    g = torch.Generator().manual_seed(seed)
    if name == "digits":
        from sklearn.datasets import load_digits

        data = load_digits()
        X = torch.tensor(data.data, dtype=torch.float64)
        Y = torch.tensor(data.target, dtype=torch.long).unsqueeze(-1)
        Xtr, Ytr, Xte, Yte = _split(X, Y, n_train, seed)
        keep = Xtr.std(0) > 0  # a pixel constant on the training images: its weights would never be trained
        Xtr, Xte = Xtr[:, keep], Xte[:, keep]
        mean, std = Xtr.mean(0), Xtr.std(0).clamp(min=DIGITS_STD_FLOOR)
        return Task(name, (Xtr - mean) / std, Ytr, (Xte - mean) / std, Yte, True)
    X = torch.randn(n_train + n_test, d, generator=g, dtype=torch.float64)
    W = torch.randn(16, d, d, generator=g, dtype=torch.float64) / d
    V = torch.randn(16, 4, generator=g, dtype=torch.float64) / 4
    teacher = FullBilinearMLP.from_weights(W, V, activation="silu")
    with torch.no_grad():
        Y = teacher(X)
        if name == "odd target":
            U = torch.randn(d, 4, generator=g, dtype=torch.float64) / math.sqrt(d)
            Y = Y + torch.tanh(X @ U)
        Y = (Y - Y[:n_train].mean(0)) / Y[:n_train].std(0)
    return Task(name, X[:n_train], Y[:n_train], X[n_train:], Y[n_train:], False)


#: How many images scikit-learn's digits data set has.
DIGITS_IMAGES = 1797


def make_digits_split(*, n_train: int, n_val: int, n_test: int, seed: int) -> tuple[Task, Task, int]:
    """``(train/test task, train/validation task, masked)``: the digits split in three parts drawn from ``seed``.

    A permutation of the 1797 images from ``torch.Generator().manual_seed(10_000 + seed)`` (a generator of the
    split's own, separate from torch's global one that draws a model's weights) gives ``n_train`` training,
    ``n_val`` validation and ``n_test`` test images.  Every pixel is standardised with the training statistics,
    its standard deviation floored at :data:`DIGITS_STD_FLOOR`; the ``masked`` pixels that are constant on the
    training images are set to 0 on every image, so that ``d = 64`` for every seed and a weight that no training
    image moves never multiplies a lit test pixel.
    """
    for name, value, low in (("n_train", n_train, 2), ("n_val", n_val, 1), ("n_test", n_test, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}: expected an int >= {low}, got {value!r}")
    if n_train + n_val + n_test > DIGITS_IMAGES:
        raise ValueError(
            f"n_train, n_val, n_test: expected at most {DIGITS_IMAGES} images in all, got {n_train + n_val + n_test}"
        )
    from sklearn.datasets import load_digits

    data = load_digits()
    X = torch.tensor(data.data, dtype=torch.float64)
    Y = torch.tensor(data.target, dtype=torch.long).unsqueeze(-1)
    perm = torch.randperm(DIGITS_IMAGES, generator=torch.Generator().manual_seed(10_000 + seed))
    parts = [perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val : n_train + n_val + n_test]]
    std = X[parts[0]].std(0)
    keep = (std > 0).to(X.dtype)
    Z = (X - X[parts[0]].mean(0)) / std.clamp(min=DIGITS_STD_FLOOR) * keep
    (Xtr, Xva, Xte), (Ytr, Yva, Yte) = [Z[i] for i in parts], [Y[i] for i in parts]
    return Task("digits", Xtr, Ytr, Xte, Yte, True), Task("digits", Xtr, Ytr, Xva, Yva, True), int((std == 0).sum())


def digits_dropped(*, n_train: int = 600, seed: int = 0) -> tuple[int, int]:
    """``(dropped, floored)``: how many of the 64 digit pixels :func:`make_task` drops (constant on the training
    images) and how many of the others have a training standard deviation below :data:`DIGITS_STD_FLOOR`."""
    from sklearn.datasets import load_digits

    X = torch.tensor(load_digits().data, dtype=torch.float64)
    Xtr = _split(X, X, n_train, seed)[0]
    std = Xtr.std(0)
    return int((std == 0).sum()), int(((std > 0) & (std < DIGITS_STD_FLOOR)).sum())


def odd_target_parts(
    *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0
) -> tuple[FullBilinearMLP, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The pieces of :func:`make_task`'s ``"odd target"``: ``(teacher, U, mean, std)``.

    The target of a token is ``y(x) = (T(x) + tanh(x U) − mean) / std``, with the
    even teacher ``T`` (full bilinear attention) and the odd part ``tanh(x U)``;
    ``mean`` and ``std`` are the training-set statistics.  The draws repeat
    :func:`make_task`'s, so the same arguments give the same target.
    """
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n_train + n_test, d, generator=g, dtype=torch.float64)
    W = torch.randn(16, d, d, generator=g, dtype=torch.float64) / d
    V = torch.randn(16, 4, generator=g, dtype=torch.float64) / 4
    teacher = FullBilinearMLP.from_weights(W, V, activation="silu")
    U = torch.randn(d, 4, generator=g, dtype=torch.float64) / math.sqrt(d)
    with torch.no_grad():
        Y = teacher(X) + torch.tanh(X @ U)  # on every token, as make_task computes it
    return teacher, U, Y[:n_train].mean(0), Y[:n_train].std(0)


def odd_target_floor(
    *, n_train: int = 600, n_test: int = 600, d: int = 8, seed: int = 0, samples: int = 100_000, sample_seed: int = 1
) -> float:
    """The error no model ``even block + affine map`` can beat on the odd target, relative to the target variance.

    For ``x ~ N(0, I_d)`` and any model ``f(x) = e(x) + x Sᵀ + c`` with ``e`` even, the
    target's odd part is ``y_o(x) = tanh(x U) / std`` and the model's odd part is
    ``x Sᵀ``, so (``cor-parity-comparison``)
    ``E‖y − f‖² ≥ min_S E‖y_o(x) − x Sᵀ‖²``.  Returned: that minimum, by least
    squares on ``samples`` Gaussian tokens drawn from ``sample_seed``, divided by
    the variance of the target's entries on the same tokens (the normalisation of
    the test metric).
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 10 * d:
        raise ValueError(f"samples: expected an int >= 10·d = {10 * d}, got {samples!r}")
    teacher, U, mean, std = odd_target_parts(n_train=n_train, n_test=n_test, d=d, seed=seed)
    g = torch.Generator().manual_seed(sample_seed)
    X = torch.randn(samples, d, generator=g, dtype=torch.float64)
    with torch.no_grad():
        odd = torch.tanh(X @ U) / std
        Y = (teacher(X) + torch.tanh(X @ U) - mean) / std
    S = torch.linalg.lstsq(X, odd).solution
    return float(((odd - X @ S) ** 2).mean() / Y.var())
