"""S3 repository URLs: both spellings resolve to the same bucket, prefix and endpoint, and Triton gets its own form."""
from __future__ import annotations

import pytest

from tritonkit.errors import TritonkitError
from tritonkit.triton.s3url import S3Url, parse_s3_url


@pytest.fixture(autouse=True)
def _no_endpoint_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)


def test_tritons_host_port_form_carries_the_endpoint() -> None:
    url = parse_s3_url("s3://127.0.0.1:9000/models/prod/")
    assert url == S3Url("models", "prod", "http://127.0.0.1:9000")
    assert url.for_triton == "s3://127.0.0.1:9000/models/prod" and url.plain == "s3://models/prod"
    assert parse_s3_url("s3://https://minio.lan:9443/models").for_triton == "s3://https://minio.lan:9443/models"


def test_a_plain_url_takes_the_endpoint_from_the_option_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_s3_url("s3://models/prod").for_triton == "s3://models/prod"  # AWS itself
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    assert parse_s3_url("s3://models/prod").for_triton == "s3://127.0.0.1:9000/models/prod"
    monkeypatch.setenv(
        "AWS_ENDPOINT_URL_S3", "https://storage.example.com"
    )  # the S3-specific one wins; 443 made explicit
    assert parse_s3_url("s3://models/prod").for_triton == "s3://https://storage.example.com:443/models/prod"
    assert parse_s3_url("s3://models/prod", "http://10.0.0.5:9000").for_triton == "s3://10.0.0.5:9000/models/prod"


@pytest.mark.parametrize(("url", "endpoint", "line"), [
    ("s3://127.0.0.1:99999/models/prod", None,
     "s3://127.0.0.1:99999/models/prod: port 99999 is outside 1-65535; write it as s3://HOST:PORT/BUCKET/PREFIX"),
    ("s3://127.0.0.1:9000/models", "http://127.0.0.1:9001",
     "s3://127.0.0.1:9000/models: --endpoint-url: the URL names the endpoint http://127.0.0.1:9000, --endpoint-url "
     "http://127.0.0.1:9001; give the endpoint once: s3://BUCKET/PREFIX --endpoint-url URL"),
    ("s3:///prod", None, "s3:///prod: no bucket in the S3 URL; write it as s3://BUCKET/PREFIX"),
])
def test_bad_urls_are_one_line(url: str, endpoint: str | None, line: str) -> None:
    with pytest.raises(TritonkitError) as caught:
        parse_s3_url(url, endpoint)
    assert [p.line() for p in caught.value.problems] == [line]
