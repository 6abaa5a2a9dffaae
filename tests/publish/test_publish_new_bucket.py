"""A first publish to a bucket that does not exist yet creates it and says so in one line (moto S3: a real
NoSuchBucket until then); the next publish to it says nothing of the kind."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import require
from tests.publish.project import build_version, cli

boto3 = require("boto3", "pip install 'tritonkit[publish]'")

pytestmark = [pytest.mark.slow]
NEW = "fresh-bucket"


def test_a_missing_bucket_is_created_and_named(s3: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    build_version(project, k=1.0, expected=1.0)
    client = boto3.client("s3", endpoint_url=s3["endpoint"])
    assert NEW not in {b["Name"] for b in client.list_buckets()["Buckets"]}
    dest = [f"s3://{NEW}/prod", "--endpoint-url", s3["endpoint"]]
    first = cli("publish", *dest, "--verify", cwd=project)
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == f"created the bucket s3://{NEW} (it did not exist)"
    assert client.head_object(Bucket=NEW, Key="prod/.tritonkit-publish.json")["ContentLength"] > 0
    again = cli("publish", *dest, "--json", cwd=project)
    assert again.returncode == 0 and "created the bucket" not in again.stderr, again.stderr
    assert json.loads(again.stdout)["created_bucket"] is False
