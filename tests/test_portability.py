"""Stored outputs must be what the code produces on every processor: what `make test` runs, and what it may not mask.

`make test` runs strict nbval over every notebook in three numeric environments (see the Makefile);
these tests check that the set-up keeps that promise: strict mode only, at least three distinct
environments that vary every rounding source named there, a sanitizer that masks no number, and
``NBVAL_IGNORE_OUTPUT`` only on cells that time something.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
MAKEFILE = (ROOT / "Makefile").read_text()
#: What a timing cell calls (symbreak.timing and the benchmark's timed runs).
TIMING_CALLS = re.compile(r"\b(best_time|matmul_ratio|peak_mib)\(")
#: Numbers of every form the book prints; no sanitizer pattern may match one.
NUMBERS = ["0", "7", "12", "3.14", "0.074", "1e-16", "4.6e-16", "2.0e+12", "−2", "-0.5", "100.0\u00a0%", "1,750"]


def _variables(name: str) -> dict[str, str]:
    text = subprocess.run(
        ["make", "--no-print-directory", "-s", "-C", str(ROOT), "-p", "-n", "help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(rf"^{re.escape(name)} :?= (.*)$", text, flags=re.M)
    assert match, f"the Makefile defines no {name}"
    return match.group(1)


def _environment(name: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in shlex.split(_variables(f"NUMERIC_ENV_{name}")))


def test_strict_nbval_only():
    for path in [ROOT / "Makefile", ROOT / ".ci" / "run", *sorted((ROOT / ".github").rglob("*.yml"))]:
        assert "nbval-lax" not in path.read_text(), f"{path.name} uses --nbval-lax"
    assert MAKEFILE.count("$(NBVAL)") >= 2 and "--nbval " in _variables("NBVAL") + " "


def test_three_distinct_numeric_environments_vary_every_rounding_source():
    others = _variables("NUMERIC_ENVS").split()
    names = ["native", *others]
    assert len(names) >= 3, f"expected at least three numeric environments, got {names}"
    environments = {n: _environment(n) for n in names}
    assert len({tuple(sorted(e.items())) for e in environments.values()}) == len(names), "two environments coincide"
    for variable in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "OMP_NUM_THREADS", "OPENBLAS_CORETYPE"):
        values = {e.get(variable, "native") for e in environments.values()}
        assert len(values) >= 2, f"{variable} takes one value in every environment: {values}"
    # `make execute` uses the native environment, which the others differ from
    assert "env $(NUMERIC_ENV_native) $(PY) -m jupyter nbconvert" in MAKEFILE
    # and `make test` runs the notebooks in every one of them
    test_recipe = MAKEFILE.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(NOTEBOOKS) $(NBVAL)" in test_recipe and "numeric-envs" in test_recipe


def test_sanitizer_masks_no_number():
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg")
    assert config.sections(), "the sanitizer file is empty or unreadable"
    for section in config.sections():
        regex = re.compile(config[section]["regex"])
        for number in NUMBERS:
            assert not regex.search(number), f"sanitizer [{section}] masks the number {number!r}"
            assert not regex.search(f"value {number} units"), f"sanitizer [{section}] masks {number!r} in text"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_are_ignored_only_on_timing_cells(path):
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        source = "".join(cell["source"])
        tags = {t.upper().replace("-", "_") for t in cell["metadata"].get("tags", []) if t.startswith("nbval")}
        markers = set(re.findall(r"NBVAL_\w+", source)) | tags
        if not markers:
            continue
        assert markers == {"NBVAL_IGNORE_OUTPUT"}, (
            f"{path.name} cell {i}: nbval marker {markers} (only timings may skip)"
        )
        assert TIMING_CALLS.search(source), f"{path.name} cell {i}: ignores its output but times nothing"
