"""The package installs like any other: a wheel with complete metadata and ``py.typed``, whose non-editable install
in a fresh virtual environment runs two chapters' notebooks under strict nbval with nothing from the repository; and
``.zenodo.json`` consistent with ``CITATION.cff``.

The fresh environment reaches the pinned dependencies of the project's ``.venv`` through a ``.pth`` line (no
network); the ``.venv``'s own editable ``symbreak`` is not on that path's import hooks, and the test checks that the
package imported is the wheel's.
"""

from __future__ import annotations

import email
import json
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: The two chapters run against the installed wheel: they read no file of the repository.
CHAPTERS = ("01_key_value_memory.ipynb", "03_bilinear_attention.ipynb")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    shutil.copytree(
        ROOT,
        build / "src-tree",
        ignore=shutil.ignore_patterns(".venv", "_build", "_vendor", ".git", "*.egg-info", "results", "book"),
    )
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(out),
        str(build / "src-tree"),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    (found,) = out.glob("symbreak-*.whl")
    return found


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(z.read(name))


def test_the_wheel_metadata_is_complete(wheel):
    meta = _metadata(wheel)
    assert meta["Name"] == "symbreak" and meta["Version"] == PYPROJECT["version"]
    assert meta["License-Expression"] == "MIT" and meta["Requires-Python"] == ">=3.11"
    assert meta["Description-Content-Type"] == "text/markdown" and "symbreak" in meta.get_payload()
    requires = [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r]
    assert {r.split(">=")[0] for r in requires} == {"torch", "sympy", "numpy", "scipy", "matplotlib"}
    assert all(">=" in r for r in meta.get_all("Requires-Dist")), "every dependency with a lower bound"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "symbreak/py.typed" in names and "symbreak/data/bench_reference.json" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_lower_bounds_are_the_pinned_versions():
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line)
    for spec in PYPROJECT["dependencies"] + PYPROJECT["optional-dependencies"]["book"]:
        name, bound = spec.split(">=")
        assert pins[name].startswith(bound), f"{name}: lower bound {bound}, pinned {pins[name]}"


def test_two_chapters_run_against_the_installed_wheel(wheel, tmp_path):
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    (Path(site) / "project-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    where = subprocess.run([python, "-c", "import symbreak; print(symbreak.__file__)"], capture_output=True, text=True)
    assert where.stdout.strip().startswith(site), where.stdout + where.stderr
    work = tmp_path / "reader"
    work.mkdir()
    for name in CHAPTERS:
        shutil.copy(ROOT / "book" / name, work / name)
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", work / "sanitize.cfg")
    cmd = [python, "-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with", "sanitize.cfg"]
    done = subprocess.run([*cmd, "-p", "no:cacheprovider", "-q", *CHAPTERS], cwd=work, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_zenodo_metadata_agrees_with_the_citation_file():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    zenodo = json.loads((ROOT / ".zenodo.json").read_text())
    assert zenodo["title"] == cff["title"] and zenodo["version"] == cff["version"] == PYPROJECT["version"]
    assert " ".join(zenodo["description"].split()) == " ".join(cff["abstract"].split())
    assert zenodo["license"] == cff["license"] == PYPROJECT["license"]
    assert zenodo["publication_date"] == str(cff["date-released"])
    assert [c["name"] for c in zenodo["creators"]] == [a["name"] for a in cff["authors"]]
    assert zenodo["keywords"] == cff["keywords"] == PYPROJECT["keywords"]
    ids = {r["identifier"] for r in zenodo["related_identifiers"]}
    assert cff["repository-code"] in ids and "arXiv:2606.22172" in ids
