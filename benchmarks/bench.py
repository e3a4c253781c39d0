"""Throughput of every form against a plain matmul of the same FLOP count, measured in the same run.

Run with ``make bench`` (2 threads).  Prints a table and writes
``_build/bench/results.json``.  The machine is noisy, so only ratios count:
each ratio is (layer matmul FLOPs / layer time) / (same FLOPs / plain matmul
time), i.e. ``t_matmul / t_layer``; 1.0 is the limit of a matmul-bound layer.
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
    score_routes,
    throughput,
)
from symbreak.layers import FullBilinearMLP
from symbreak.timing import best_time, interleaved, matmul_ratio

REFERENCE = Path(__file__).resolve().parents[1] / "src" / "symbreak" / "data" / "bench_reference.json"


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="_build/bench/results.json")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--save-reference",
        action="store_true",
        help="also store the results as the package's recorded reference (src/symbreak/data/bench_reference.json)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    a, b = torch.randn(N, D), torch.randn(D, M)
    t_mm = best_time(lambda: a @ b)
    matmul_gflops = 2 * N * D * M / t_mm / 1e9

    layers = benchmark_layers()
    # warm-up: the first seconds of a process (thread pool, allocator, page
    # faults of the first large tensors) are slower than the rest
    for layer in layers.values():
        xin = torch.randn(N, layer.d)
        for make in (forward, forward_backward):
            best_time(make(layer, xin), repeats=1, min_time=0.5)
    rows = throughput(layers, N, ratio=lambda *case, **kw: matmul_ratio(*case, **kw, repeats=RATIO_REPEATS))

    unpacked = FullBilinearMLP(D_FULL, M_FULL, activation="silu")
    packed = FullBilinearMLP.from_weights(unpacked.W.detach(), unpacked.V.detach(), "silu", packed=True)
    # interleaved, and the fastest sample of each, as in matmul_ratio: noise only adds time
    fastest = interleaved(
        score_routes(unpacked, packed, torch.randn(N, D_FULL)),
        15,
        lambda run: best_time(run, repeats=1, min_time=0.1),
    )
    t_einsum, t_features, t_packed = (fastest[k] for k in ("per-unit einsum", "x ⊗ x features", "packed features"))
    results = {
        "matmul_gflops": matmul_gflops,
        "layers": rows,
        "full_form_speedup_over_einsum": t_einsum / t_features,
        "packed_speedup_over_einsum": t_einsum / t_packed,
        "config": {
            "batch": N,
            "d": D,
            "m": M,
            "R": RANK,
            "d_full": D_FULL,
            "m_full": M_FULL,
            "threads": args.threads,
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

    print(f"plain matmul: {matmul_gflops:.1f} GFLOP/s ({args.threads} threads)")
    print(f"{'form':<7} {'pass':<17} {'GFLOP/s':>8} {'ratio':>6} {'peak MiB':>9}")
    for r in rows:
        print(f"{r['form']:<7} {r['pass']:<17} {r['gflops']:>8.1f} {r['ratio_to_matmul']:>6.2f} {r['peak_mib']:>9.1f}")
    print(f"full form, x⊗x matmul vs per-unit einsum: {results['full_form_speedup_over_einsum']:.2f}x")
    print(f"full form, packed matmul vs per-unit einsum: {results['packed_speedup_over_einsum']:.2f}x")
    print(f"wrote {out}" + (f" and {REFERENCE}" if args.save_reference else ""))
    return results


if __name__ == "__main__":
    main()
