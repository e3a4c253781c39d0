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
    D,
    M,
    N,
    check_results,
    forward,
    forward_backward,
    matmul_flops,
    processor,
)
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, KeyValueMLP
from symbreak.timing import best_time, matmul_ratio, peak_mib

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

    x = torch.randn(N, D)
    a, b = torch.randn(N, D), torch.randn(D, M)
    t_mm = best_time(lambda: a @ b)
    matmul_gflops = 2 * N * D * M / t_mm / 1e9

    layers = {
        "kv": KeyValueMLP(D, M, activation="relu"),
        "rank1": BilinearMLP(D, M, rank=1, activation="silu"),
        "rankR": BilinearMLP(D, M, rank=RANK, activation="silu"),
        "gated": GatedMLP(D, M, activation="silu"),
        "full": FullBilinearMLP(D_FULL, M_FULL, activation="silu", packed=True),
    }
    # warm-up: the first seconds of a process (thread pool, allocator, page
    # faults of the first large tensors) are slower than the rest
    for form, layer in layers.items():
        xin = x if form != "full" else torch.randn(N, D_FULL)
        for make in (forward, forward_backward):
            best_time(make(layer, xin), repeats=1, min_time=0.5)
    rows = []
    for form, layer in layers.items():
        xin = x if form != "full" else torch.randn(N, D_FULL)
        flops = matmul_flops(form, layer, N)
        k = layer.d if form != "full" else (D_FULL * (D_FULL + 1)) // 2
        for pass_name, make, factor in (("forward", forward, 1), ("forward+backward", forward_backward, 3)):
            run = make(layer, xin)
            ratio, t_layer = matmul_ratio(run, N, flops, k, backward=factor == 3, repeats=21)
            rows.append(
                {
                    "form": form,
                    "pass": pass_name,
                    "gflops": factor * flops / t_layer / 1e9,
                    "ratio_to_matmul": ratio,
                    "peak_mib": peak_mib(run),
                }
            )

    xf = torch.randn(N, D_FULL)
    unpacked = FullBilinearMLP(D_FULL, M_FULL, activation="silu")
    packed = FullBilinearMLP.from_weights(unpacked.W.detach(), unpacked.V.detach(), "silu", packed=True)
    with torch.no_grad():  # interleaved, as for the ratios
        einsum_runs, feature_runs, packed_runs = [], [], []
        for _ in range(15):
            einsum_runs.append(best_time(lambda: unpacked.scores_einsum(xf), repeats=1, min_time=0.1))
            feature_runs.append(best_time(lambda: unpacked.scores(xf), repeats=1, min_time=0.1))
            packed_runs.append(best_time(lambda: packed.scores(xf), repeats=1, min_time=0.1))
        # the fastest sample of each, as in matmul_ratio: noise only adds time
        t_einsum, t_features, t_packed = (min(r) for r in (einsum_runs, feature_runs, packed_runs))
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
