"""Files a pipeline's routes read from the repository Triton serves (a tokenizer, a chat format): a built folder, or
one published to s3://, whose files are fetched."""
from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tritonkit.publish.destination import S3Destination
from tritonkit.triton.s3url import parse_s3_url


@contextmanager
def newest_with(repository: str, models: tuple[str, ...], names: tuple[str, ...]) -> Iterator[Path | None]:
    """The folder of the newest version holding every one of `names`, of the first of `models` that has one (a
    temporary copy of those files for s3://, gone on leaving); None when none has them."""
    if not repository.startswith("s3://"):
        yield _local(Path(repository), models, names)
        return
    with tempfile.TemporaryDirectory(prefix="tritonkit-gateway-") as folder:
        yield _fetched(repository, models, names, Path(folder))


def _local(repository: Path, models: tuple[str, ...], names: tuple[str, ...]) -> Path | None:
    for model in models:
        root = repository / model
        versions = sorted(int(p.name) for p in root.iterdir() if p.name.isdigit()) if root.is_dir() else []
        for version in reversed(versions):
            if all((root / str(version) / name).is_file() for name in names):
                return root / str(version)
    return None


def _fetched(url: str, models: tuple[str, ...], names: tuple[str, ...], into: Path) -> Path | None:
    parsed = parse_s3_url(url)
    store = S3Destination(parsed.bucket, parsed.prefix, parsed.endpoint)
    keys = set(store.list())
    for model in models:
        parts = [k.split("/") for k in keys if k.startswith(f"{model}/")]
        for version in sorted({int(p[1]) for p in parts if p[1].isdigit()}, reverse=True):
            wanted = [f"{model}/{version}/{name}" for name in names]
            if all(key in keys for key in wanted):
                for key in wanted:
                    (into / Path(key).name).write_bytes(store.read(key) or b"")
                return into
    return None
