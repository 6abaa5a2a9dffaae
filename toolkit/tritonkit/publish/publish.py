"""`tritonkit publish`: a built repository to a destination as new, never-overwritten model versions.

Order makes every intermediate state safe for a server reading the destination:
1. the pending journal (the version numbers chosen, so a rerun resumes into them);
2. new version folders and, for models already live, their other files (golden/, warmup/) staged under
   `<model>/.tritonkit/<version>/` (Triton ignores non-numeric folders);
3. a model new to the destination gets its other files, then `config.pbtxt` last;
4. the manifest, whose presence marks the publish complete.
A model already live keeps its `config.pbtxt`, which pins `version_policy` to the live versions: a server
that restarts or reloads keeps serving them until `tritonkit rollout` loads the candidate (the candidate
config is in the manifest) and promotes it.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.model_config import pb
from tritonkit.publish.destination import Destination, sha256_bytes, sha256_file
from tritonkit.publish.manifest import (
    MANIFEST,
    PENDING,
    Manifest,
    ModelEntry,
    Release,
    pinned,
    read_manifest,
    read_pending,
    write_manifest,
    write_pending,
)
from tritonkit.validate.repository_check import validate_repository

STAGING = ".tritonkit"
_VERSION_KEY = re.compile(r"^([^/]+)/(\d+)/")


@dataclass(frozen=True)
class Item:
    """One object to put: from a local file or from bytes."""

    key: str
    sha: str
    size: int
    path: Path | None = None
    data: bytes | None = None


@dataclass
class Plan:
    """What a publish writes, phase by phase, and the manifest it ends with."""

    phases: list[list[Item]]
    manifest: Manifest
    releases: dict[str, Release]          # models published now, with their destination versions
    unchanged: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    destination: str
    published: dict[str, list[int]]
    live: dict[str, list[int]]
    unchanged: list[str]
    uploaded: int
    skipped: int
    bytes_uploaded: int
    verified: bool | None = None


def _selected(config: pb.ModelConfig, local: list[int]) -> list[int]:
    """The local versions the built config's own policy loads."""
    policy = config.version_policy
    if policy.HasField("specific"):
        return [v for v in local if v in set(policy.specific.versions)]
    if policy.HasField("all"):
        return local
    return local[-(policy.latest.num_versions or 1):]


def _model_files(model_dir: Path) -> tuple[dict[int, list[Path]], list[Path]]:
    """Files per numeric version folder, and the model's other files (config.pbtxt excluded)."""
    versions: dict[int, list[Path]] = {}
    extras: list[Path] = []
    for entry in sorted(model_dir.iterdir()):
        if entry.name == "config.pbtxt" or entry.name == "__pycache__":
            continue
        if entry.is_dir() and entry.name.isdigit():
            versions[int(entry.name)] = sorted(p for p in entry.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        elif entry.is_dir():
            extras += sorted(p for p in entry.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        elif entry.is_file():
            extras.append(entry)
    return versions, extras


def _fingerprint(config: pb.ModelConfig, model_dir: Path, versions: dict[int, list[Path]], extras: list[Path],
                 hashes: dict[Path, str]) -> str:
    """Identity of a model's content, independent of the version numbers it is published under."""
    unpinned = pb.ModelConfig()
    unpinned.CopyFrom(config)
    unpinned.ClearField("version_policy")
    digest = hashlib.sha256(text_format.MessageToString(unpinned).encode())
    for ordinal, local in enumerate(sorted(versions)):
        for path in versions[local]:
            digest.update(f"v{ordinal}/{path.relative_to(model_dir / str(local)).as_posix()}\0{hashes[path]}\n".encode())
    for path in extras:
        digest.update(f"{path.relative_to(model_dir).as_posix()}\0{hashes[path]}\n".encode())
    return digest.hexdigest()


def _highest_versions(listing: dict[str, int], manifest: Manifest) -> dict[str, int]:
    """Highest version number per model anywhere at the destination (files or manifest)."""
    highest: dict[str, int] = {}
    for key in listing:
        match = _VERSION_KEY.match(key)
        if match:
            highest[match[1]] = max(highest.get(match[1], 0), int(match[2]))
    for name, entry in manifest.models.items():
        for release in (entry.live, entry.candidate):
            if release:
                highest[name] = max([highest.get(name, 0), *release.versions])
    return highest


def _foreign_live(dest: Destination, name: str, highest: int) -> Release | None:
    """A model at the destination that tritonkit did not publish: its config serves its highest version."""
    text = dest.read(f"{name}/config.pbtxt")
    return Release([highest], text.decode(), "") if text is not None and highest else None


def plan_publish(repository: Path, dest: Destination, listing: dict[str, int]) -> Plan:
    configs = validate_repository(repository)
    # the listing says whether there is a manifest or journal to read (saves two round trips on a fresh prefix)
    manifest = (read_manifest(dest) if MANIFEST in listing else None) or Manifest()
    pending = read_pending(dest) if PENDING in listing else {}
    highest = _highest_versions(listing, manifest)
    staged: list[Item] = []
    new_extras: list[Item] = []
    new_configs: list[Item] = []
    releases: dict[str, Release] = {}
    unchanged: list[str] = []
    for name, config in sorted(configs.items()):
        model_dir = repository / name
        versions, extras = _model_files(model_dir)
        hashes = {p: sha256_file(p) for p in [*extras, *(p for files in versions.values() for p in files)]}
        fingerprint = _fingerprint(config, model_dir, versions, extras, hashes)
        entry = manifest.models.get(name)
        if entry is None and f"{name}/config.pbtxt" in listing:
            live = _foreign_live(dest, name, highest.get(name, 0))
            entry = ModelEntry(live=live) if live else None
        if entry and fingerprint in (entry.live.fingerprint, entry.candidate.fingerprint if entry.candidate else None):
            unchanged.append(name)
            continue
        local = sorted(versions)
        resumed = pending.get(name)
        if resumed and resumed.fingerprint == fingerprint and len(resumed.versions) == len(local):
            numbers = resumed.versions  # the interrupted run's versions: finish them, skipping what is there
        else:
            numbers = list(range(highest.get(name, 0) + 1, highest.get(name, 0) + 1 + len(local)))
        mapping = dict(zip(local, numbers))
        served = [mapping[v] for v in _selected(config, local)]
        release = Release(served, text_format.MessageToString(pinned(config, served)), fingerprint)
        releases[name] = release
        for v in local:
            if not versions[v]:  # an ensemble's empty folder: Triton on S3 needs the folder object itself
                staged.append(Item(f"{name}/{mapping[v]}/", sha256_bytes(b""), 0, data=b""))
            for path in versions[v]:
                rel = path.relative_to(model_dir / str(v)).as_posix()
                staged.append(Item(f"{name}/{mapping[v]}/{rel}", hashes[path], path.stat().st_size, path=path))
        extra_root = f"{name}/{STAGING}/{numbers[0]}" if entry else name
        for path in extras:
            item = Item(f"{extra_root}/{path.relative_to(model_dir).as_posix()}", hashes[path], path.stat().st_size, path=path)
            (staged if entry else new_extras).append(item)
        if entry:
            manifest.models[name] = ModelEntry(live=entry.live, candidate=release)
        else:
            manifest.models[name] = ModelEntry(live=release)
            data = release.config.encode()
            new_configs.append(Item(f"{name}/config.pbtxt", sha256_bytes(data), len(data), data=data))
    for item in [*staged, *new_extras, *new_configs]:
        manifest.files[item.key] = item.sha
    return Plan([staged, new_extras, new_configs], manifest, releases, unchanged)


def _put(dest: Destination, item: Item) -> None:
    if item.path is not None:
        dest.upload(item.key, item.path, item.sha)
    else:
        dest.write(item.key, item.data or b"", item.sha)


def _already_there(dest: Destination, listing: dict[str, int], item: Item) -> bool:
    """Uploaded by an earlier (interrupted) run with the right content: same size, then same sha256."""
    return listing.get(item.key) == item.size and dest.sha256(item.key) == item.sha


ProgressFn = Callable[[int, int, int, int], None]


def publish(repository: Path, dest: Destination, *, jobs: int = 8, progress: ProgressFn | None = None) -> Outcome:
    """Publishes `repository` to `dest`; rerunning after an interruption completes the same publish."""
    if not repository.is_dir():
        raise TritonkitError(str(repository), "", "model repository not found", "build it first (tritonkit build) or pass --repository DIR")
    listing = dest.list()
    plan = plan_publish(repository, dest, listing)
    items = [item for phase in plan.phases for item in phase]
    total_bytes = sum(i.size for i in items)
    done = {"files": 0, "bytes": 0, "uploaded": 0, "uploaded_bytes": 0}
    lock = threading.Lock()

    def one(item: Item) -> None:
        uploaded = not _already_there(dest, listing, item)
        if uploaded:
            _put(dest, item)
        with lock:
            done["uploaded"] += uploaded
            done["uploaded_bytes"] += item.size if uploaded else 0
            done["files"] += 1
            done["bytes"] += item.size
            if progress:
                progress(done["files"], len(items), done["bytes"], total_bytes)

    if plan.releases:
        write_pending(dest, plan.releases)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for phase in plan.phases:  # each phase completes before the next begins
                list(pool.map(one, phase))
        write_manifest(dest, plan.manifest)
        dest.delete(PENDING)
    return Outcome(destination=dest.url, published={n: r.versions for n, r in plan.releases.items()},
                   live={n: e.live.versions for n, e in plan.manifest.models.items()}, unchanged=plan.unchanged,
                   uploaded=done["uploaded"], skipped=len(items) - done["uploaded"], bytes_uploaded=done["uploaded_bytes"])


def verify(dest: Destination) -> list[str]:
    """Re-reads every file the manifest lists and returns the keys whose bytes are missing or differ."""
    manifest = read_manifest(dest)
    if manifest is None:
        raise TritonkitError(dest.url, "", "nothing published here (no manifest)", "run tritonkit publish first")

    present = dest.list()

    def bad(key: str) -> str | None:
        if key.endswith("/"):
            return None if key in present else key
        data = dest.read(key)
        return None if data is not None and sha256_bytes(data) == manifest.files[key] else key

    with ThreadPoolExecutor(max_workers=8) as pool:
        return sorted(k for k in pool.map(bad, manifest.files) if k)
