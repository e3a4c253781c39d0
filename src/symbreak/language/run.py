"""The command line of the sweep: ``python -m symbreak.language.run --stage lr-sweep|main --results DIR --jobs N``.

``--tiny`` runs the tiny protocol (``TINY`` of :mod:`symbreak.language.protocol`, seconds) instead of the
book's; ``--backend`` names a joblib backend (``loky``, the default, or ``dask``/``ray`` where installed
and configured); ``--replace-stale`` redoes results made under another run configuration instead of refusing them.
"""

from __future__ import annotations

import argparse
import sys

from joblib import parallel_config

from symbreak.language.protocol import PROTOCOL, STAGES, TINY
from symbreak.language.results import load_results, summarise
from symbreak.language.runner import run_stage

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run one stage; print the summary of what the folder now holds for it."""
    parser = argparse.ArgumentParser(prog="python -m symbreak.language.run", description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=STAGES, required=True)
    parser.add_argument("--results", default="results/language", help="results folder (default results/language)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1; -1: one per core)")
    parser.add_argument("--tiny", action="store_true", help="the tiny protocol, for a check in seconds")
    parser.add_argument("--backend", default=None, help="joblib backend (default: joblib's, local processes)")
    parser.add_argument("--replace-stale", action="store_true", help="redo results of another protocol")
    args = parser.parse_args(argv)
    protocol = TINY if args.tiny else PROTOCOL
    with parallel_config(backend=args.backend) if args.backend else _nothing():
        done = run_stage(
            protocol, args.stage, args.results, jobs=args.jobs, stale="replace" if args.replace_stale else "error"
        )
    print(f"{protocol.name} {args.stage} (protocol {protocol.digest()}): {len(done)} runs done now")
    records = load_results(args.results, protocol, stage=args.stage)
    for form, (mean, half, n, lr) in summarise(records, protocol, "validation", stage=args.stage).items():
        print(f"  {form:22s} validation {mean:.4f} ± {half:.4f} (n = {n}, lr {lr})")
    return 0


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(main())
