"""Two ceilings for a layer's speed: its own matrix products (overhead) and the machine's measured peak (roofline).

A feed-forward form of the book is two matrix products with elementwise work
between them: ``A = x W₁ᵀ`` (``W₁`` stacks the factors' rows: ``K`` for the
standard MLP, ``[Q; K]`` for the gated and rank-1 forms, every ``Q^{(r)}`` and
``K^{(r)}`` for rank ``R``; the quadratic features times ``C`` for the packed
full form), then ``h = φ(A)``, then ``h V``.  Two yardsticks say how fast it
could be:

* **overhead** (:func:`own_products`): the same two
  products on the same shapes, with no elementwise work, in the pass timed
  (forward, or forward and the backward's four gradient products), each the
  faster of an unblocked and a row-blocked evaluation; the ratio
  ``t_products / t_layer`` is 1.0 when no time is lost outside the products;
* **roofline** (:func:`peak_gflops`, :func:`copy_bandwidth`,
  :func:`elementwise_bytes`): the best float32 GEMM rate over a few shapes at
  the thread count used, and the bandwidth of a copy, against which a layer's
  achieved FLOP/s and the bytes its elementwise work moves are read.

Ratios come with their spread: min, median and max of the paired ratios of
interleaved rounds (:class:`Spread`).  Timers are arguments, so a test can pass
a fake one.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, KeyValueMLP
from symbreak.layers._base import _BLOCK_NUMBERS  # the layers' blocks of rows: the blocked yardstick cuts the same

__all__ = [
    "PEAK_SHAPES",
    "COPY_NUMBERS",
    "Spread",
    "spread",
    "product_shapes",
    "own_products",
    "paired_ratios",
    "peak_gflops",
    "copy_bandwidth",
    "elementwise_bytes",
]

#: The GEMM shapes ``(n, k, p)`` of :func:`peak_gflops`: two squares, the benchmark's products unblocked
#: (``x [Q; K]ᵀ`` at d = 256, 2m = 2048 and ``h V`` at m = 1024) and in blocks of rows (2048 and 512 rows).
PEAK_SHAPES = (
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 256, 2048),
    (4096, 1024, 256),
    (2048, 256, 1024),
    (512, 256, 4096),
    (2048, 1024, 256),
)
#: Numbers in the tensor :func:`copy_bandwidth` copies: as many as a block of the layers holds (16 MiB in float32).
COPY_NUMBERS = _BLOCK_NUMBERS


@dataclass(frozen=True)
class Spread:
    """The minimum, median and maximum of a set of measured ratios."""

    min: float
    median: float
    max: float


def spread(values: Sequence[float]) -> Spread:
    """:class:`Spread` of ``values`` (a non-empty sequence of numbers)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"values: expected a non-empty sequence of numbers, got {values!r}")
    return Spread(min(values), statistics.median(values), max(values))


def product_shapes(layer: torch.nn.Module) -> tuple[tuple[int, int], tuple[int, int]]:
    """The inner and outer widths ``((k₁, p₁), (k₂, p₂))`` of the layer's two products per token.

    ``x W₁ᵀ`` is ``(n × k₁) @ (k₁ × p₁)`` and ``h V`` is ``(n × m) @ (m × d_out)``:
    ``k₁ = d`` and ``p₁`` the number of factors (``m``, ``2m``, ``2Rm``), or for the
    full form ``k₁`` its number of quadratic features and ``p₁ = m``.
    """
    if isinstance(layer, KeyValueMLP):
        first = (layer.d, layer.m)
    elif isinstance(layer, GatedMLP):
        first = (layer.d, 2 * layer.m)
    elif isinstance(layer, BilinearMLP):
        first = (layer.d, 2 * layer.rank * layer.m)
    elif isinstance(layer, FullBilinearMLP):
        first = ((layer.C if layer.packed else layer.W.flatten(1)).shape[1], layer.m)
    else:
        raise TypeError(
            f"layer: expected a KeyValueMLP, GatedMLP, BilinearMLP or FullBilinearMLP, got {type(layer).__name__}"
        )
    return first, (layer.m, layer.d_out)


def own_products(layer: torch.nn.Module, n: int, backward: bool = False) -> dict[str, Callable[[], object]]:
    """Closures evaluating only ``layer``'s two matrix products on ``n`` tokens, unblocked and row-blocked.

    Forward: ``A = X W₁ᵀ`` and ``H V`` with ``X, W₁, H, V`` random of the layer's
    shapes (:func:`product_shapes`), under ``torch.no_grad``.  With
    ``backward=True`` each closure also back-propagates to all four operands
    (the products ``g W₁``, ``gᵀ X``, ``g Vᵀ``, ``Hᵀ g`` a layer's backward does).
    The blocked closure cuts the batch into the layer's blocks of rows (about
    2^22 intermediate numbers) and, backward, accumulates the weight gradients.
    Returns ``{"unblocked": …, "blocked": …}``; the operands come from torch's global generator.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    (k1, p1), (m, d_out) = product_shapes(layer)
    X, W1, H, V = torch.randn(n, k1), torch.randn(p1, k1), torch.randn(n, m), torch.randn(m, d_out)
    rows = max(1, _BLOCK_NUMBERS // max(p1, m))
    if not backward:

        def unblocked():
            with torch.no_grad():
                return X @ W1.T, H @ V

        def blocked():
            with torch.no_grad():
                return [(xb @ W1.T, hb @ V) for xb, hb in zip(X.split(rows), H.split(rows), strict=True)]

        return {"unblocked": unblocked, "blocked": blocked}
    gA, gO = torch.randn(n, p1), torch.randn(n, d_out)
    leaves = [t.requires_grad_(True) for t in (X, W1, H, V)]

    def unblocked_backward():
        for t in leaves:
            t.grad = None
        torch.autograd.backward([X @ W1.T, H @ V], [gA, gO])

    def blocked_backward():
        # what a blocked layer's backward does by hand: per block, the input
        # gradients, and the weight gradients accumulated (addmm into one buffer)
        with torch.no_grad():
            gW1, gV = torch.zeros_like(W1), torch.zeros_like(V)
            gX, gH = torch.empty_like(X), torch.empty_like(H)
            for i in range(0, n, rows):
                xb, hb, ga, go = X[i : i + rows], H[i : i + rows], gA[i : i + rows], gO[i : i + rows]
                _ = xb @ W1.T, hb @ V
                torch.mm(ga, W1, out=gX[i : i + rows])
                torch.mm(go, V.T, out=gH[i : i + rows])
                torch.addmm(gW1, ga.T, xb, out=gW1)
                torch.addmm(gV, hb.T, go, out=gV)
        return gX, gW1, gH, gV

    return {"unblocked": unblocked_backward, "blocked": blocked_backward}


def paired_ratios(
    run: Callable[[], object],
    products: Mapping[str, Callable[[], object]],
    rounds: int,
    timer: Callable[[Callable[[], object]], float],
) -> tuple[Spread, float]:
    """``(spread of t_products / t_run, fastest t_run)`` over ``rounds`` interleaved rounds.

    Each round times ``run`` and every closure of ``products`` once (``timer(f)``
    is one sample in seconds), in turn; the yardstick of a round is its fastest
    product closure (the better of unblocked and blocked), and the round's ratio
    is that time over ``run``'s.  Pairing within a round gives both sides the same moment of a shared machine.
    """
    if not callable(run):
        raise TypeError(f"run: expected a callable, got {type(run).__name__}")
    if not isinstance(products, Mapping) or not products or not all(callable(f) for f in products.values()):
        raise TypeError(f"products: expected a non-empty mapping of names to callables, got {products!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds: expected an int >= 1, got {rounds!r}")
    ratios, fastest = [], float("inf")
    for _ in range(rounds):
        t_run = timer(run)
        t_products = min(timer(f) for f in products.values())
        ratios.append(t_products / t_run)
        fastest = min(fastest, t_run)
    return spread(ratios), fastest


def peak_gflops(
    timer: Callable[[Callable[[], object]], float], shapes: Sequence[tuple[int, int, int]] = PEAK_SHAPES
) -> float:
    """The machine's float32 GEMM peak: the best rate ``2nkp / t`` in GFLOP/s over ``shapes``, at the current threads.

    ``timer(run)`` returns seconds per call (e.g. ``best_time``); the operands come from torch's global generator.
    """
    if not callable(timer):
        raise TypeError(f"timer: expected a callable run -> seconds, got {type(timer).__name__}")
    if not shapes or not all(len(s) == 3 and all(isinstance(v, int) and v >= 1 for v in s) for s in shapes):
        raise ValueError(f"shapes: expected a non-empty sequence of (n, k, p) positive ints, got {shapes!r}")
    best = 0.0
    for n, k, p in shapes:
        a, b = torch.randn(n, k), torch.randn(k, p)
        best = max(best, 2 * n * k * p / timer(lambda a=a, b=b: a @ b) / 1e9)
    return best


def copy_bandwidth(timer: Callable[[Callable[[], object]], float], numbers: int = COPY_NUMBERS) -> float:
    """Bytes read and written per second by ``out.copy_(x)`` of ``numbers`` float32 numbers, in GB/s."""
    if not callable(timer):
        raise TypeError(f"timer: expected a callable run -> seconds, got {type(timer).__name__}")
    if isinstance(numbers, bool) or not isinstance(numbers, int) or numbers < 1:
        raise ValueError(f"numbers: expected an int >= 1, got {numbers!r}")
    x, out = torch.randn(numbers), torch.empty(numbers)
    return 2 * 4 * numbers / timer(lambda: out.copy_(x)) / 1e9


# matrix products: their bytes are the GEMM's, accounted by the FLOP side of the roofline
_PRODUCTS = {"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.mv", "aten.dot"}


def elementwise_bytes(run: Callable[[], object], n: int) -> int:
    """Bytes per token that the work outside the matrix products of ``run()`` reads and writes.

    Counted call by call at torch's dispatcher: every operation other than a
    matrix product or a view (an output that aliases an input without writing
    it) adds the bytes of its tensor inputs and outputs, each read or written
    once.  ``n`` is the number of tokens ``run`` evaluates; the total is divided by it (integer division).
    """
    if not callable(run):
        raise TypeError(f"run: expected a callable, got {type(run).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    total = [0]

    def nbytes(value: object) -> int:
        if isinstance(value, torch.Tensor):
            return value.numel() * value.element_size()
        if isinstance(value, (list, tuple)):
            return sum(nbytes(v) for v in value)
        return 0

    class _Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            returns = func._schema.returns
            view = bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)
            if str(func.overloadpacket) not in _PRODUCTS and not view:
                # an ``out=`` tensor is written once: counted as the output, not also as an argument
                inputs = [v for k, v in (kwargs or {}).items() if k != "out"]
                total[0] += nbytes(list(args)) + nbytes(inputs) + nbytes(out)
            return out

    with _Counter():
        run()
    return total[0] // n
