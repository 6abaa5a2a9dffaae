"""S3 repository URLs in the two spellings tritonkit accepts, and the one Triton is given.

`s3://BUCKET/PREFIX` takes its endpoint apart: `--endpoint-url`, else `AWS_ENDPOINT_URL_S3` /
`AWS_ENDPOINT_URL` (as boto3 reads them), else AWS itself. Triton's own form
`s3://[http://|https://]HOST:PORT/BUCKET/PREFIX` carries a custom endpoint in the URL; it is the only way
to point Triton at one, since its S3 client reads no endpoint from the environment.
"""
import os
import re
from dataclasses import dataclass

from tritonkit.errors import TritonkitError

#: Triton's custom-endpoint form (core's S3 file system takes HOST:PORT right after `s3://`; HTTP unless `https://`).
_TRITON_FORM = re.compile(r"s3://(?:(https?)://)?([0-9A-Za-z.\-]+):(\d+)(?:/(.*))?")
#: boto3's environment settings for a custom S3 endpoint, most specific first.
ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


@dataclass(frozen=True)
class S3Url:
    """A bucket and prefix, and the endpoint that serves them (None: AWS S3)."""

    bucket: str
    prefix: str
    endpoint: str | None = None

    @property
    def plain(self) -> str:
        """`s3://BUCKET/PREFIX`, what boto3 and the AWS CLI take."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def for_triton(self) -> str:
        """The `--model-repository` value: Triton's host:port form when the endpoint is not AWS's."""
        if not self.endpoint:
            return self.plain
        scheme, _, rest = self.endpoint.partition("://")
        host = rest.split("/", 1)[0]
        if ":" not in host:  # Triton's form needs a port
            host += ":443" if scheme == "https" else ":80"
        return f"s3://{'https://' if scheme == 'https' else ''}{host}/{self.bucket}/{self.prefix}".rstrip("/")


def parse_s3_url(url: str, endpoint_url: str | None = None) -> S3Url:
    """`url` in either spelling; an endpoint both in the URL and in `endpoint_url` must be the same one."""
    triton = _TRITON_FORM.fullmatch(url)
    if triton:
        scheme, host, port, rest = triton[1] or "http", triton[2], triton[3], triton[4] or ""
        if not 1 <= int(port) <= 65535:
            raise TritonkitError(url, "", f"port {port} is outside 1-65535", "write it as s3://HOST:PORT/BUCKET/PREFIX")
        endpoint: str | None = f"{scheme}://{host}:{port}"
        if endpoint_url and endpoint_url.rstrip("/") != endpoint:
            raise TritonkitError(url, "--endpoint-url", f"the URL names the endpoint {endpoint}, --endpoint-url "
                                 f"{endpoint_url}", "give the endpoint once: s3://BUCKET/PREFIX --endpoint-url URL")
    else:
        rest = url[len("s3://"):]
        endpoint = endpoint_url or next((os.environ[name] for name in ENDPOINT_ENV if os.environ.get(name)), None)
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise TritonkitError(url, "", "no bucket in the S3 URL", "write it as s3://BUCKET/PREFIX")
    return S3Url(bucket, prefix.strip("/"), endpoint)
