"""``make bench``'s script (``benchmarks/bench.py``) end to end at ``--tiny`` sizes: what it writes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from symbreak import benchrecord

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_writes_both_ratios_with_spreads_the_peak_and_the_scaling(tmp_path, capsys):
    out = tmp_path / "results.json"
    returned = _bench().main(["--tiny", "--threads", "1", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(returned))
    benchrecord.check_results(written)  # every row: ratio_to_own_products with _min and _max, share_of_peak, ...
    assert written["peak_gflops"] > 0 and written["config"]["ratio_rounds"] == 2
    assert set(written["scaling"]) == {"n", "d", "m", "R"}
    assert "own products: median [min, max] of 2 interleaved rounds" in capsys.readouterr().out


def test_tiny_run_cannot_replace_the_record():
    with pytest.raises(SystemExit):
        _bench().main(["--tiny", "--save-reference"])
