"""`publish` puts back what changed at the destination behind its back, under the same keys and versions.

moto S3 (a real S3 API: ETags, metadata, multipart uploads). The damage is what `--verify` used to find and
`publish` left in place ("published nothing new"): an object with the same size and the same sha256 metadata
but other bytes (only its ETag tells), and an object of another size.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import require
from tests.publish.project import BUCKET, build_version, cli
from tritonkit.publish.destination import s3_etag

boto3 = require("boto3", "pip install 'tritonkit[publish]'")

pytestmark = [pytest.mark.slow]


def test_publish_restores_objects_changed_behind_its_back_and_verify_passes(s3: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    repository = build_version(project, k=1.0, expected=1.0, pad_mb=9)  # pad.bin goes up in two parts
    dest = [f"s3://{BUCKET}/repair", "--endpoint-url", s3["endpoint"]]
    first = cli("publish", *dest, "--json", cwd=project)
    assert first.returncode == 0, first.stderr
    client = boto3.client("s3", endpoint_url=s3["endpoint"])

    def body(key: str) -> bytes:
        return client.get_object(Bucket=BUCKET, Key=f"repair/{key}")["Body"].read()

    manifest = json.loads(body(".tritonkit-publish.json"))
    # nothing damaged: nothing repaired, and the ETags the listing gives are the ones computed here (no download needed)
    clean = cli("publish", *dest, "--json", cwd=project)
    assert json.loads(clean.stdout)["repaired"] == [] and json.loads(clean.stdout)["uploaded"] == 0, clean.stdout
    pad = client.head_object(Bucket=BUCKET, Key="repair/scale/1/pad.bin")
    assert pad["ETag"].strip('"') == s3_etag(None, repository / "scale" / "1" / "pad.bin",
                                             multipart=True) and "-2" in pad["ETag"]

    key = "scale/1/model.py"
    original = body(key)
    head = client.head_object(Bucket=BUCKET, Key=f"repair/{key}")
    assert head["ETag"].strip('"') == s3_etag(original, None, multipart=False)
    same_size = original.replace(b"K = 1.0", b"K = 7.0")
    assert len(same_size) == len(original) and same_size != original
    for damage in (same_size, b"K = 123456.0\n"):  # same size and metadata, then another size
        client.put_object(Bucket=BUCKET, Key=f"repair/{key}", Body=damage, Metadata=head["Metadata"])
        assert client.head_object(Bucket=BUCKET, Key=f"repair/{key}")["Metadata"] == head["Metadata"]
        repaired = cli("publish", *dest, "--verify", cwd=project)
        assert repaired.returncode == 0, repaired.stderr
        assert (
            f"repaired 1 object(s) that differed from the manifest (same versions): {key}"
            in repaired.stdout.splitlines()
        )
        assert "published nothing new" in repaired.stdout and "verified:" in repaired.stdout
        assert body(key) == original
        after = json.loads(body(".tritonkit-publish.json"))
        assert (
            after["files"] == manifest["files"] and after["models"] == manifest["models"]
        )  # no new version, no renumbering

    # a damaged config.pbtxt is put back from the manifest's live config
    client.put_object(Bucket=BUCKET, Key="repair/pipeline/config.pbtxt", Body=b"max_batch_size: 8\n")
    fixed = cli("publish", *dest, "--json", cwd=project)
    assert json.loads(fixed.stdout)["repaired"] == ["pipeline/config.pbtxt"], fixed.stdout
    assert body("pipeline/config.pbtxt").decode() == manifest["models"]["pipeline"]["live"]["config"]


def test_a_missing_object_this_build_cannot_restore_is_one_line_before_anything_is_written(
        s3: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    build_version(project, k=1.0, expected=1.0)
    dest = [f"s3://{BUCKET}/lost", "--endpoint-url", s3["endpoint"]]
    assert cli("publish", *dest, cwd=project).returncode == 0
    build_version(project, k=2.0, expected=2.0)  # version 1's model.py is no longer in the build
    client = boto3.client("s3", endpoint_url=s3["endpoint"])
    client.delete_object(Bucket=BUCKET, Key="lost/scale/1/model.py")
    before = {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="lost/")["Contents"]}
    result = cli("publish", *dest, cwd=project)
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"s3://{BUCKET}/lost: 1 published object(s) missing, and this build does not have their content: "
        "scale/1/model.py; build the version that published them and publish again, or publish to a new prefix"]
    assert {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="lost/")["Contents"]} == before
