"""The moto S3 server (its own thread, a free loopback port) that publish and serve-from-s3 tests write to."""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.conftest import require
from tests.publish.project import BUCKET, FAKE, PREFIX


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A moto S3 server on a free loopback port holding the bucket; fake credentials in the environment."""
    boto3 = require("boto3", "pip install 'tritonkit[publish]'")
    moto_server = require("moto.server", "pip install 'moto[server]'")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {k: os.environ.get(k) for k in FAKE}
    os.environ.update(FAKE)
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
    try:
        yield {"endpoint": endpoint, "triton": f"s3://{host}:{port}/{BUCKET}/{PREFIX}", "dest": f"s3://{BUCKET}/{PREFIX}"}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
