"""Every form against its own matrix products and the machine's measured peak, in the same run.

Run with ``make bench`` (2 threads).  Prints a table and writes
``_build/bench/results.json`` (format: ``symbreak.benchrecord.check_results``).
The machine is noisy, so ratios of interleaved timings count:
``ratio_to_own_products`` is ``t_products / t_layer`` against the layer's own two
matrix products on the same shapes (1.0: no time lost outside them), with its
min and max over the rounds; ``share_of_peak`` is the layer's GFLOP/s over the
best GEMM rate measured over a few shapes; ``ratio_to_matmul`` is the older
yardstick, one plain matmul of the same FLOP count.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from pathlib import Path

import torch

from symbreak.benchmark import (
    D_FULL,
    M_FULL,
    RANK,
    RATIO_REPEATS,
    D,
    M,
    N,
    benchmark_layers,
    check_results,
    forward,
    forward_backward,
    processor,
    roofline,
    score_routes,
    throughput,
)
from symbreak.layers import FullBilinearMLP
from symbreak.scaling import SCALING_SWEEPS, check_scaling, measure_scaling
from symbreak.timing import best_time, interleaved, matmul_ratio
from symbreak.yardsticks import COPY_NUMBERS, PEAK_SHAPES, copy_bandwidth, paired_ratios, peak_gflops

#: interleaved rounds per point of the scaling sweeps
SCALING_ROUNDS = 5
REFERENCE = Path(__file__).resolve().parents[1] / "src" / "symbreak" / "data" / "bench_reference.json"
#: ``--tiny``: sizes, rounds and sweeps small enough for a test of the whole script (seconds, not a measurement)
TINY = {"n": 64, "d": 16, "m": 32, "rank": 2, "d_full": 6, "m_full": 8, "rounds": 2, "min_time": 1e-3}
TINY_SWEEPS = {
    size: (values[:2], lambda v, shape=shape: tuple(min(s, 64) for s in shape(v)))
    for size, (values, shape) in SCALING_SWEEPS.items()
}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="_build/bench/results.json")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--tiny", action="store_true", help="tiny sizes and rounds: checks the script, measures nothing"
    )
    parser.add_argument(
        "--save-reference",
        action="store_true",
        help="also store the results as the package's recorded reference (src/symbreak/data/bench_reference.json)",
    )
    args = parser.parse_args(argv)
    if args.tiny and args.save_reference:
        parser.error("--tiny runs cannot be saved as the reference")
    sizes = TINY if args.tiny else {"n": N, "d": D, "m": M, "rank": RANK, "d_full": D_FULL, "m_full": M_FULL}
    rounds, scaling_rounds = (TINY["rounds"],) * 2 if args.tiny else (RATIO_REPEATS, SCALING_ROUNDS)
    min_time = TINY["min_time"] if args.tiny else 0.1
    n = sizes["n"]
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    a, b = torch.randn(n, sizes["d"]), torch.randn(sizes["d"], sizes["m"])
    t_mm = best_time(lambda: a @ b)
    matmul_gflops = 2 * n * sizes["d"] * sizes["m"] / t_mm / 1e9

    layers = benchmark_layers(sizes["d"], sizes["m"], sizes["rank"], sizes["d_full"], sizes["m_full"])
    # warm-up: the first seconds of a process (thread pool, allocator, page
    # faults of the first large tensors) are slower than the rest
    for layer in layers.values():
        xin = torch.randn(n, layer.d)
        for make in (forward, forward_backward):
            best_time(make(layer, xin), repeats=1, min_time=5 * min_time)
    sample = lambda run: best_time(run, repeats=1, min_time=min_time)  # noqa: E731 - one interleaved sample
    rows = throughput(
        layers,
        n,
        ratio=lambda *case, **kw: matmul_ratio(*case, **kw, repeats=rounds),
        overhead=lambda run, products: paired_ratios(run, products, rounds, sample),
    )
    # the peak and the bandwidth: the fastest of several samples (noise only adds time)
    fastest = lambda run: min(sample(run) for _ in range(rounds))  # noqa: E731
    peak = peak_gflops(fastest, [(64, 64, 64)] if args.tiny else PEAK_SHAPES)
    bandwidth = copy_bandwidth(fastest, 2**12 if args.tiny else COPY_NUMBERS)
    rows = roofline(rows, peak, bandwidth)
    # how time, memory and the overhead grow along the batch, d, m and R (fewer rounds per point)
    scaling = measure_scaling(
        lambda run, products: paired_ratios(run, products, scaling_rounds, sample),
        TINY_SWEEPS if args.tiny else SCALING_SWEEPS,
    )
    if not args.tiny:
        check_scaling(scaling)

    unpacked = FullBilinearMLP(sizes["d_full"], sizes["m_full"], activation="silu")
    packed = FullBilinearMLP.from_weights(unpacked.W.detach(), unpacked.V.detach(), "silu", packed=True)
    # interleaved, and the fastest sample of each, as in matmul_ratio: noise only adds time
    routes = interleaved(
        score_routes(unpacked, packed, torch.randn(n, sizes["d_full"])), 15 if rounds > 2 else 2, sample
    )
    t_einsum, t_features, t_packed = (routes[k] for k in ("per-unit einsum", "x ⊗ x features", "packed features"))
    results = {
        "matmul_gflops": matmul_gflops,
        "peak_gflops": peak,
        "copy_gbs": bandwidth,
        "layers": rows,
        "scaling": scaling,
        "full_form_speedup_over_einsum": t_einsum / t_features,
        "packed_speedup_over_einsum": t_einsum / t_packed,
        "config": {
            "batch": n,
            "d": sizes["d"],
            "m": sizes["m"],
            "R": sizes["rank"],
            "d_full": sizes["d_full"],
            "m_full": sizes["m_full"],
            "threads": args.threads,
            "ratio_rounds": rounds,
            "scaling_rounds": scaling_rounds,
            "torch": torch.__version__,
            "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
            "processor": processor(),
            "logical_cpus": os.cpu_count(),
        },
    }
    check_results(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    if args.save_reference:
        REFERENCE.write_text(json.dumps(results, indent=2) + "\n")

    print(f"plain matmul: {matmul_gflops:.1f} GFLOP/s, peak GEMM {peak:.1f} GFLOP/s, copy {bandwidth:.1f} GB/s")
    print(f"({args.threads} threads; own products: median [min, max] of {rounds} interleaved rounds)")
    print(f"{'form':<7} {'pass':<17} {'GFLOP/s':>8} {'of peak':>8} {'own products':>20} {'matmul':>7} {'MiB':>7}")
    for r in rows:
        own = f"{r['ratio_to_own_products']:.2f} [{r['ratio_to_own_products_min']:.2f}, "
        own += f"{r['ratio_to_own_products_max']:.2f}]"
        print(
            f"{r['form']:<7} {r['pass']:<17} {r['gflops']:>8.1f} {r['share_of_peak']:>8.2f} {own:>20}"
            f" {r['ratio_to_matmul']:>7.2f} {r['peak_mib']:>7.1f}"
        )
    print(f"full form, x⊗x matmul vs per-unit einsum: {results['full_form_speedup_over_einsum']:.2f}x")
    print(f"full form, packed matmul vs per-unit einsum: {results['packed_speedup_over_einsum']:.2f}x")
    print(f"wrote {out}" + (f" and {REFERENCE}" if args.save_reference else ""))
    return results


if __name__ == "__main__":
    main()
