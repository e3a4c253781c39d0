"""Run records on disk: one JSON file written atomically, with the versions, the git commit and a configuration hash.

The small-task sweep (:mod:`symbreak.experiments.sweep`) and the language-model
runner (:mod:`symbreak.language.runner`, whose ``configuration_hash`` is
:func:`digest`) store their runs with these.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["digest", "versions", "commit", "write_record"]

_REPO = Path(__file__).resolve().parents[3]


def digest(data: dict) -> str:
    """The first 16 hex digits of the SHA-256 of ``data`` as canonical JSON (sorted keys, no spaces, ASCII)."""
    if not isinstance(data, dict):
        raise TypeError(f"data: expected a dict, got {type(data).__name__}")
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def versions(names: tuple[str, ...] = ("torch", "numpy", "symbreak")) -> dict[str, str]:
    """``{"python": …, name: version}`` for each installed distribution of ``names`` (``"unknown"`` if absent)."""
    return {"python": platform.python_version(), **{name: _version(name) for name in names}}


def commit() -> str:
    """``git describe --always --dirty --abbrev=40`` of the repository (``"unknown"`` without git)."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=40"],
            cwd=_REPO,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def write_record(path: str | os.PathLike, record: dict) -> Path:
    """Write ``record`` as JSON to ``path`` through a temporary file in the same folder and ``os.replace``.

    A reader sees the old file or the complete new one, never a part; a non-finite
    float is refused (``allow_nan=False``), as JSON has none.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n")
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return target
