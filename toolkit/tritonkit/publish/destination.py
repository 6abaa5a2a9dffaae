"""Where a repository is published: a local folder or an S3 prefix, behind one small interface.

Keys are `/`-separated paths below the destination root. Every write is whole-object (S3 PUT, or a temporary file
renamed into place locally), so a reader never sees half a file, and each object carries its sha256 (S3 metadata;
recomputed locally) so a rerun can skip what is already there. S3 credentials come only from boto3's own chain
(environment, profile, instance/IRSA role); tritonkit never reads, stores or prints them.
"""
import hashlib
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tritonkit.errors import TritonkitError
from tritonkit.extras import install_extra
from tritonkit.files import sha256_bytes, sha256_file, write_atomically
from tritonkit.triton.s3url import S3Url, parse_s3_url

#: S3 object metadata key holding the sha256 of the object's bytes.
SHA_META = "sha256"
#: Files this size or larger go up in parts (s3transfer's default threshold, what `aws s3 cp/sync` uses).
MULTIPART_THRESHOLD = 8 << 20
#: The size of those parts (s3transfer's default too); an object's ETag depends on it (`upload_etag`).
PART_SIZE = 8 << 20
#: A local destination's files being written: renamed into place when whole, never listed.
TMP_PREFIX = ".tritonkit-tmp-"


@dataclass(frozen=True)
class Stored:
    """One object as the destination's listing shows it: its size and, on S3, its ETag ("" when there is none)."""

    size: int
    etag: str = ""


class Destination(Protocol):
    """What publishing and rollout need from a destination."""

    url: str

    def list(self) -> dict[str, Stored]: ...
    def sha256(self, key: str) -> str | None: ...
    def holds(self, key: str, stored: Stored, sha: str, data: bytes | None, path: Path | None) -> bool: ...
    def read(self, key: str) -> bytes | None: ...
    def write(self, key: str, data: bytes, sha: str) -> None: ...
    def upload(self, key: str, path: Path, sha: str) -> None: ...
    def delete(self, key: str) -> None: ...


class LocalDestination:
    """A folder on this machine (or a mounted volume): files renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = str(root)

    def _path(self, key: str) -> Path:
        return self.root / key

    def list(self) -> dict[str, Stored]:
        if not self.root.is_dir():
            return {}
        found = {}
        for dirpath, dirs, files in os.walk(self.root):
            rel = Path(dirpath).relative_to(self.root)
            if not files and not dirs and rel != Path("."):
                found[f"{rel.as_posix()}/"] = Stored(0)  # an empty folder, like an S3 folder marker
            for name in files:
                if not name.startswith(TMP_PREFIX):
                    found[(rel / name).as_posix()] = Stored((Path(dirpath) / name).stat().st_size)
        return found

    def holds(self, key: str, stored: Stored, sha: str, data: bytes | None, path: Path | None) -> bool:
        """A local file has no cheap content tag: it is hashed (local reads are fast)."""
        return self.sha256(key) == sha

    def sha256(self, key: str) -> str | None:
        path = self._path(key)
        if key.endswith("/"):
            return sha256_bytes(b"") if path.is_dir() else None
        return sha256_file(path) if path.is_file() else None

    def read(self, key: str) -> bytes | None:
        path = self._path(key)
        return path.read_bytes() if path.is_file() else None

    def write(self, key: str, data: bytes, sha: str) -> None:
        path = self._path(key)
        if key.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            return
        write_atomically(path, data, tmp_prefix=TMP_PREFIX)

    def upload(self, key: str, path: Path, sha: str) -> None:
        self.write(key, path.read_bytes(), sha)

    def delete(self, key: str) -> None:
        if key.endswith("/"):  # an empty folder (the listing shows no other kind)
            self._path(key).rmdir()
        else:
            self._path(key).unlink(missing_ok=True)


class S3Destination:
    """`s3://bucket/prefix` through boto3 (any S3-compatible endpoint with `endpoint_url`, e.g. MinIO)."""

    def __init__(self, bucket: str, prefix: str, endpoint_url: str | None = None) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError as exc:
            raise TritonkitError(f"s3://{bucket}/{prefix}", "", "publishing to S3 needs boto3",
                                 install_extra("publish")) from exc
        self.bucket, self.prefix = bucket, prefix.strip("/")
        self.url = f"s3://{bucket}/{self.prefix}".rstrip("/")
        self.endpoint_url = endpoint_url
        # Credentials: boto3's default chain only (env, shared profile, container/instance role, web identity).
        # A connection per parallel upload (--jobs is at most 64), so no upload waits for a free connection.
        try:
            self.client: Any = boto3.session.Session().client(
                "s3", endpoint_url=endpoint_url, config=Config(max_pool_connections=64, retries={"max_attempts": 5}))
        except ValueError as exc:  # botocore refuses an endpoint it cannot parse ("Invalid endpoint: ...")
            raise TritonkitError(self.url, "--endpoint-url", f"not a URL: {endpoint_url!r}",
                                 "write it as SCHEME://HOST[:PORT], e.g. http://127.0.0.1:9000") from exc

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def create_bucket_if_missing(self) -> bool:
        """Creates the bucket when the store says it does not exist (in the client's region), so a first publish
        works from nothing; True when it did. Any other answer (no access, a bad endpoint) is left to raise."""
        from botocore.exceptions import ClientError
        try:
            self.client.head_bucket(Bucket=self.bucket)
            return False
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket"):
                raise
        region = self.client.meta.region_name
        where = {} if region in (None, "us-east-1") else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        self.client.create_bucket(Bucket=self.bucket, **where)
        return True

    def list(self) -> dict[str, Stored]:
        # pages by hand: botocore's paginator loads its JSON model on first use (~15 ms per client)
        found: dict[str, Stored] = {}
        start = self._key("")
        more: dict[str, str] = {}
        while True:
            page = self.client.list_objects_v2(Bucket=self.bucket, Prefix=start, **more)
            for item in page.get("Contents", []):
                found[item["Key"][len(start):]] = Stored(item["Size"], item.get("ETag", "").strip('"'))
            if not page.get("IsTruncated"):
                return found
            more = {"ContinuationToken": page["NextContinuationToken"]}

    def sha256(self, key: str) -> str | None:
        from botocore.exceptions import ClientError
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError:
            return None
        return head.get("Metadata", {}).get(SHA_META)

    def holds(self, key: str, stored: Stored, sha: str, data: bytes | None, path: Path | None) -> bool:
        """The ETag the listing gave, compared with the one these bytes get (no request): one PUT's or, for an ETag
        of parts, PART_SIZE parts'. When they differ (other bytes, another part size, SSE-KMS) the object is read
        and its sha256 decides."""
        if stored.etag and stored.etag == s3_etag(data, path, multipart="-" in stored.etag):
            return True
        from botocore.exceptions import ClientError
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except ClientError:
            return False
        digest = hashlib.sha256()
        for chunk in body.iter_chunks(1 << 20):
            digest.update(chunk)
        return digest.hexdigest() == sha

    def read(self, key: str) -> bytes | None:
        from botocore.exceptions import ClientError
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise

    def write(self, key: str, data: bytes, sha: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, Metadata={SHA_META: sha})

    def upload(self, key: str, path: Path, sha: str) -> None:
        if path.stat().st_size < MULTIPART_THRESHOLD:  # one PUT, as s3transfer itself does below its threshold
            with open(path, "rb") as body:
                self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, Metadata={SHA_META: sha})
            return
        from boto3.s3.transfer import TransferConfig
        config = TransferConfig(multipart_threshold=MULTIPART_THRESHOLD, multipart_chunksize=PART_SIZE)
        self.client.upload_file(str(path), self.bucket, self._key(key), ExtraArgs={"Metadata": {SHA_META: sha}},
                                Config=config)

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))


def s3_etag(data: bytes | None, path: Path | None, multipart: bool) -> str:
    """S3's ETag for these bytes: the MD5 of one PUT, or (`multipart`) the MD5 of the PART_SIZE parts' MD5s and
    the part count, as `S3Destination.upload` sends a file from MULTIPART_THRESHOLD up."""
    if data is None:
        assert path is not None, "bytes come from memory or from a file"
        with open(path, "rb") as handle:
            return _etag(handle, multipart)
    return _etag(io.BytesIO(data), multipart)


def _etag(handle: io.BufferedIOBase, multipart: bool) -> str:
    if not multipart:
        return hashlib.file_digest(handle, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()
    parts = b"".join(hashlib.md5(chunk, usedforsecurity=False).digest()
                     for chunk in iter(lambda: handle.read(PART_SIZE), b""))
    return f"{hashlib.md5(parts, usedforsecurity=False).hexdigest()}-{len(parts) // 16}"


def open_destination(dest: str, endpoint_url: str | None = None) -> Destination:
    """`s3://bucket/prefix` (or Triton's `s3://host:port/bucket/prefix`) or a local folder path."""
    if dest.startswith("s3://"):
        url = parse_s3_url(dest, endpoint_url)
        return S3Destination(url.bucket, url.prefix, url.endpoint)
    if "://" in dest:
        raise TritonkitError(dest, "", "unsupported destination scheme", "use a local folder or s3://BUCKET/PREFIX")
    return LocalDestination(Path(dest))


def triton_url(destination: Destination) -> str:
    """The `--model-repository` value Triton needs for this destination (`s3://host:port/bucket/prefix` for a custom
    endpoint)."""
    if isinstance(destination, S3Destination):
        return S3Url(destination.bucket, destination.prefix, destination.endpoint_url).for_triton
    return destination.url


@contextmanager
def storage_errors(url: str) -> Iterator[None]:
    """Object-store and file-system failures as one-line errors (botocore's messages name no credential)."""
    try:
        yield
    except OSError as exc:
        raise TritonkitError(url, "", f"cannot write: {exc}", "check the path and its permissions") from exc
    except Exception as exc:
        if type(exc).__module__.startswith(("botocore", "boto3", "s3transfer")):
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TritonkitError(url, "", f"S3 request failed: {first}",
                                 "check the bucket, --endpoint-url and the AWS credentials "
                                 "in the environment/profile") from exc
        raise
