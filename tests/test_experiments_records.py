"""Run records on disk: the hash, the versions, the commit and the atomic writer of symbreak.experiments.records."""

from __future__ import annotations

import hashlib
import json

import pytest

from symbreak.experiments import records
from symbreak.language.protocol import configuration_hash


def test_digest_is_the_sha256_of_canonical_json_and_agrees_with_the_language_runs():
    data = {"b": [1, 2.5], "a": "σ"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert records.digest(data) == hashlib.sha256(text.encode()).hexdigest()[:16] == configuration_hash(data)
    with pytest.raises(TypeError, match="data"):
        records.digest([1])


def test_versions_and_commit():
    found = records.versions(("torch", "no-such-distribution-xyz"))
    assert found["torch"] != "unknown" and found["no-such-distribution-xyz"] == "unknown" and "python" in found
    assert isinstance(records.commit(), str) and records.commit()


def test_write_record_is_atomic_and_refuses_non_finite_numbers(tmp_path):
    path = records.write_record(tmp_path / "sub" / "run.json", {"x": 1.5})
    assert json.loads(path.read_text()) == {"x": 1.5}
    with pytest.raises(ValueError):
        records.write_record(path, {"x": float("nan")})
    assert json.loads(path.read_text()) == {"x": 1.5}  # the old file is intact
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temporary file is left
