"""`tritonkit publish`: a built repository to a destination as new, never-overwritten model versions.

Order makes every intermediate state safe for a server reading the destination:
1. new version folders and, for models already live, their other files (golden/, warmup/) staged under
   `<model>/.tritonkit/<version>/` (Triton ignores non-numeric folders); a model new to the destination
   gets its other files in place;
2. a model new to the destination gets its `config.pbtxt` as soon as the files Triton reads are there
   (Triton loads no model without one), while other files still upload: its `golden/` samples, which only
   tritonkit reads and only once the manifest names them, do not hold the config back;
3. the manifest, once everything else is there: its presence marks the publish complete.
A model already live keeps its `config.pbtxt`, which pins `version_policy` to the live versions: a server
that restarts or reloads keeps serving them until `tritonkit rollout` loads the candidate (the candidate
config is in the manifest) and promotes it.
No journal: the manifest names every version a server may load, so version folders above those were left
by an interrupted publish. A rerun publishes into the same numbers, skips files already there with the
right sha256 and removes files its content lacks. The listing and the local hashing run side by side, and
the manifest is read only when the listing shows one: on a first publish the only requests in sequence with
the uploads are the listing and the manifest write.
Before anything new is written, objects of earlier publishes that differ from the manifest are put back
from this build's bytes (repair.py).
"""
import hashlib
import re
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.files import sha256_bytes, sha256_file
from tritonkit.publish import manifest as manifests
from tritonkit.publish.destination import MULTIPART_THRESHOLD, Destination, Stored
from tritonkit.publish.manifest import MANIFEST, Manifest, ModelEntry, Release, pinned
from tritonkit.publish.repair import Source, find_damage, restore
from tritonkit.triton.layout import NOT_LOADED, loaded_versions
from tritonkit.triton.model_config import pb
from tritonkit.validate.repository_check import validate_repository

STAGING = ".tritonkit"
#: At most this many bytes of small files are held between hashing and upload; the rest are read again.
HELD_BYTES = 256 << 20
_VERSION_KEY = re.compile(r"^([^/]+)/(\d+)/")


@dataclass(frozen=True)
class Item:
    """One object to put for `model`: its bytes when held (the very bytes hashed), else read from `path`."""

    model: str
    key: str
    sha: str
    size: int
    path: Path | None = None
    data: bytes | None = None
    read_by_triton: bool = True           # a new model's config.pbtxt waits for these


@dataclass
class Plan:
    """What a publish writes and removes, and the manifest it ends with."""

    files: list[Item]                     # version files and other files, any order
    configs: dict[str, Item]              # config.pbtxt of models new to the destination, after their files
    stale: list[tuple[str, str]]          # (model, key): left in a reused version folder by an interrupted publish
    manifest: Manifest
    releases: dict[str, Release]          # models published now, with their destination versions
    unchanged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LocalModel:
    """A built model's files, their sha256 (and the bytes hashed, for files read whole), the whole's fingerprint."""

    root: Path
    config: pb.ModelConfig
    versions: dict[int, list[Path]]
    extras: list[Path]
    hashes: dict[Path, str]
    contents: dict[Path, bytes]
    fingerprint: str


@dataclass
class Outcome:
    destination: str
    published: dict[str, list[int]]
    live: dict[str, list[int]]
    unchanged: list[str]
    uploaded: int
    skipped: int
    bytes_uploaded: int
    repaired: list[str] = field(default_factory=list)   # objects that differed from the manifest, put back
    verified: bool | None = None


def _model_files(model_dir: Path) -> tuple[dict[int, list[Path]], list[Path]]:
    """Files per numeric version folder, and the model's other files (config.pbtxt excluded)."""
    versions: dict[int, list[Path]] = {}
    extras: list[Path] = []
    for entry in sorted(model_dir.iterdir()):
        if entry.name in ("config.pbtxt", "__pycache__"):
            continue
        files = sorted(p for p in entry.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        if entry.is_dir() and entry.name.isdigit():
            versions[int(entry.name)] = files
        elif entry.is_dir():
            extras += files
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
            rel = path.relative_to(model_dir / str(local)).as_posix()
            digest.update(f"v{ordinal}/{rel}\0{hashes[path]}\n".encode())
    for path in extras:
        digest.update(f"{path.relative_to(model_dir).as_posix()}\0{hashes[path]}\n".encode())
    return digest.hexdigest()


def scan(repository: Path) -> dict[str, LocalModel]:
    """Validates the built repository and hashes every model file (needs no destination: runs beside the listing).

    Files below the multipart threshold are read whole, while HELD_BYTES lasts, and uploaded from those bytes:
    one read per file, and the object's sha256 in the manifest is that of the bytes sent.
    """
    models = {}
    budget = HELD_BYTES
    for name, config in sorted(validate_repository(repository).items()):
        model_dir = repository / name
        versions, extras = _model_files(model_dir)
        hashes: dict[Path, str] = {}
        contents: dict[Path, bytes] = {}
        for path in [*extras, *(p for files in versions.values() for p in files)]:
            size = path.stat().st_size
            if size < MULTIPART_THRESHOLD and size <= budget:
                contents[path] = path.read_bytes()
                hashes[path] = sha256_bytes(contents[path])
                budget -= len(contents[path])
            else:
                hashes[path] = sha256_file(path)
        models[name] = LocalModel(model_dir, config, versions, extras, hashes, contents,
                                  _fingerprint(config, model_dir, versions, extras, hashes))
    return models


def _item(model: LocalModel, key: str, path: Path, read_by_triton: bool = True) -> Item:
    """The object `key` carrying the local file `path`: its held bytes if scan kept them."""
    data = model.contents.get(path)
    size = len(data) if data is not None else path.stat().st_size
    return Item(model.root.name, key, model.hashes[path], size, path=path, data=data, read_by_triton=read_by_triton)


def _listed_versions(listing: dict[str, Stored]) -> dict[str, int]:
    """Highest version folder per model at the destination."""
    highest: dict[str, int] = {}
    for key in listing:
        match = _VERSION_KEY.match(key)
        if match:
            highest[match[1]] = max(highest.get(match[1], 0), int(match[2]))
    return highest


def _foreign_live(dest: Destination, name: str, highest: int) -> Release | None:
    """A model at the destination that tritonkit did not publish: its config serves its highest version."""
    text = dest.read(f"{name}/config.pbtxt")
    return Release([highest], text.decode(), "") if text is not None and highest else None


def plan_publish(local: dict[str, LocalModel], dest: Destination, listing: dict[str, Stored],
                 manifest: Manifest | None) -> Plan:
    """Chooses each changed model's version numbers and the objects that carry it.

    Numbers follow the highest version the manifest names (for a model tritonkit did not publish, the
    highest at the destination): folders above that belong to an interrupted publish and are reused.
    """
    manifest = manifest or Manifest()
    highest = _listed_versions(listing)
    files: list[Item] = []
    configs: dict[str, Item] = {}
    stale: list[tuple[str, str]] = []
    releases: dict[str, Release] = {}
    unchanged: list[str] = []
    for name, model in local.items():
        entry = manifest.models.get(name)
        if entry is None and f"{name}/config.pbtxt" in listing:
            live = _foreign_live(dest, name, highest.get(name, 0))
            entry = ModelEntry(live=live) if live else None
        published = [entry.live, *([entry.candidate] if entry.candidate else [])] if entry else []
        if model.fingerprint in {r.fingerprint for r in published}:
            unchanged.append(name)
            continue
        local_versions = sorted(model.versions)
        base = max(v for r in published for v in r.versions) if published else 0
        numbers = list(range(base + 1, base + 1 + len(local_versions)))
        mapping = dict(zip(local_versions, numbers))
        served = [mapping[v] for v in sorted(loaded_versions(model.config, local_versions))]  # as the build loads
        release = Release(served, text_format.MessageToString(pinned(model.config, served)), model.fingerprint)
        releases[name] = release
        items: list[Item] = []
        for v in local_versions:
            if not model.versions[v]:  # an ensemble's empty folder: Triton on S3 needs the folder object itself
                items.append(Item(name, f"{name}/{mapping[v]}/", sha256_bytes(b""), 0, data=b""))
            for path in model.versions[v]:
                rel = path.relative_to(model.root / str(v)).as_posix()
                items.append(_item(model, f"{name}/{mapping[v]}/{rel}", path))
        roots = [f"{name}/{n}/" for n in numbers]
        if entry:
            roots.append(f"{name}/{STAGING}/{numbers[0]}/")
        extra_root = f"{name}/{STAGING}/{numbers[0]}" if entry else name
        for path in model.extras:
            inside = path.relative_to(model.root)
            items.append(_item(model, f"{extra_root}/{inside.as_posix()}", path, inside.parts[0] not in NOT_LOADED))
        planned = {item.key for item in items}  # other keys under the reused folders: an interrupted publish's
        stale += [(name, key) for key in listing if key not in planned and key.startswith(tuple(roots))]
        files += items
        if entry:
            manifest.models[name] = ModelEntry(live=entry.live, candidate=release)
        else:
            manifest.models[name] = ModelEntry(live=release)
            data = release.config.encode()
            configs[name] = Item(name, f"{name}/config.pbtxt", sha256_bytes(data), len(data), data=data)
    for item in [*files, *configs.values()]:
        manifest.files[item.key] = item.sha
    return Plan(files, configs, stale, manifest, releases, unchanged)


def _already_there(dest: Destination, listing: dict[str, Stored], item: Item) -> bool:
    """Uploaded by an earlier (interrupted) run with the right content: same size, then same sha256."""
    stored = listing.get(item.key)
    return stored is not None and stored.size == item.size and dest.sha256(item.key) == item.sha


def _sources(local: dict[str, LocalModel], manifest: Manifest) -> dict[str, Source]:
    """Every sha256 whose bytes this build has: its files, the live configs, and the empty folder marker."""
    sources = {sha256_bytes(b""): Source(0, data=b"")}
    for model in local.values():
        for path, sha in model.hashes.items():
            data = model.contents.get(path)
            sources[sha] = Source(len(data) if data is not None else path.stat().st_size, path=path, data=data)
    for entry in manifest.models.values():
        data = entry.live.config.encode()
        sources[sha256_bytes(data)] = Source(len(data), data=data)
    return sources


ProgressFn = Callable[[int, int, int, int], None]


def _write(dest: Destination, plan: Plan, listing: dict[str, Stored], pool: ThreadPoolExecutor,
           progress: ProgressFn | None) -> list[Item]:
    """Removes stale keys and puts every file, each new model's config.pbtxt once the files of that model Triton
    reads are there; returns the items actually uploaded. Nothing else waits on a barrier."""
    total = len(plan.files) + len(plan.configs)
    total_bytes = sum(i.size for i in [*plan.files, *plan.configs.values()])
    uploaded: list[Item] = []
    done = {"files": 0, "bytes": 0}

    def put(item: Item) -> Item | None:
        if _already_there(dest, listing, item):
            return None
        if item.data is not None:
            dest.write(item.key, item.data, item.sha)
        elif item.path is not None:
            dest.upload(item.key, item.path, item.sha)
        return item

    jobs: dict[Future, tuple[str, Item | None]] = {pool.submit(dest.delete, key): (m, None) for m, key in plan.stale}
    # files Triton reads first (stable: plan order within), so configs go while the others still upload
    jobs |= {pool.submit(put, i): (i.model, i) for i in sorted(plan.files, key=lambda i: not i.read_by_triton)}
    waiting = {name: sum(1 for model, item in jobs.values() if model == name and (item is None or item.read_by_triton))
               for name in plan.configs}
    jobs |= {pool.submit(put, plan.configs[n]): (n, plan.configs[n]) for n, count in waiting.items() if not count}
    pending = set(jobs)
    try:
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                model, item = jobs[future]
                result = future.result()
                if result is not None:
                    uploaded.append(result)
                if item is None:
                    continue
                done["files"] += 1
                done["bytes"] += item.size
                if progress:
                    progress(done["files"], total, done["bytes"], total_bytes)
                if model in waiting and item.read_by_triton and item is not plan.configs[model]:
                    waiting[model] -= 1
                    if not waiting[model]:  # the model's own files are all there: its config may go
                        config = pool.submit(put, plan.configs[model])
                        jobs[config] = (model, plan.configs[model])
                        pending.add(config)
    except BaseException:
        for future in pending:
            future.cancel()
        raise
    return uploaded


def publish(repository: Path, dest: Destination, *, jobs: int = 8, progress: ProgressFn | None = None) -> Outcome:
    """Publishes `repository` to `dest`; rerunning after an interruption completes the same publish."""
    if not repository.is_dir():
        raise TritonkitError(str(repository), "", "model repository not found",
                             "build it first (tritonkit build) or pass --repository DIR")
    with ThreadPoolExecutor(max_workers=max(2, jobs)) as pool:
        listed = pool.submit(dest.list)  # while the files hash here
        local = scan(repository)
        listing = listed.result()
        manifest = manifests.read_manifest(dest) if MANIFEST in listing else None  # a first publish skips it
        plan = plan_publish(local, dest, listing, manifest)
        written = {item.key for item in [*plan.files, *plan.configs.values()]}
        earlier = {k: sha for k, sha in (manifest.files if manifest else {}).items() if k not in written}
        damage = find_damage(dest, earlier, listing, _sources(local, plan.manifest), pool)
        if damage.lost:  # before anything is written
            raise TritonkitError(dest.url, "", f"{len(damage.lost)} published object(s) missing, and this build does "
                                 f"not have their content: {', '.join(damage.lost[:5])}",
                                 "build the version that published them and publish again, "
                                 "or publish to a new prefix")
        repaired = restore(dest, damage, pool)
        uploaded = _write(dest, plan, listing, pool, progress) if plan.releases else []
    if plan.releases:
        manifests.write_manifest(dest, plan.manifest)
    count = len(plan.files) + len(plan.configs) if plan.releases else 0
    return Outcome(destination=dest.url, published={n: r.versions for n, r in plan.releases.items()},
                   live={n: e.live.versions for n, e in plan.manifest.models.items()}, unchanged=plan.unchanged,
                   uploaded=len(uploaded), skipped=count - len(uploaded),
                   bytes_uploaded=sum(i.size for i in uploaded), repaired=repaired)


def verify(dest: Destination) -> list[str]:
    """Re-reads every file the manifest lists and returns the keys whose bytes are missing or differ."""
    manifest, present = manifests.require_manifest(dest), dest.list()

    def bad(key: str) -> str | None:
        if key.endswith("/"):
            return None if key in present else key
        data = dest.read(key)
        return None if data is not None and sha256_bytes(data) == manifest.files[key] else key

    with ThreadPoolExecutor(max_workers=8) as pool:
        return sorted(k for k in pool.map(bad, manifest.files) if k)
