"""The publish manifest at the destination root: which versions are live, which wait for rollout, every file's sha256.

`.tritonkit-publish.json` is written last, so its presence marks a complete publish. There is no
separate journal: version folders above the ones the manifest names can only be an interrupted publish's
(no config.pbtxt serves them), so a rerun reuses their numbers (publish.py).
"""
import json
import time
from dataclasses import asdict, dataclass, field

from google.protobuf import text_format

from tritonkit import __version__
from tritonkit.errors import TritonkitError
from tritonkit.files import sha256_bytes
from tritonkit.publish.destination import Destination
from tritonkit.triton.model_config import pb

MANIFEST = ".tritonkit-publish.json"
FORMAT = 1


def pinned(config: pb.ModelConfig, versions: list[int]) -> pb.ModelConfig:
    """A copy of `config` whose `version_policy` names exactly `versions`."""
    out = pb.ModelConfig()
    out.CopyFrom(config)
    out.version_policy.Clear()
    out.version_policy.specific.versions.extend(versions)
    return out


@dataclass
class Release:
    """Versions of one model published together, the config that serves them, and what they were built from."""

    versions: list[int]
    config: str
    fingerprint: str

    def served_with(self, versions: list[int]) -> pb.ModelConfig:
        """This release's config loading `versions` (e.g. the live ones and a candidate side by side)."""
        return pinned(text_format.Parse(self.config, pb.ModelConfig()), versions)


@dataclass
class ModelEntry:
    """`live`: what config.pbtxt at the destination serves. `candidate`: published, waiting for `tritonkit rollout`."""

    live: Release
    candidate: Release | None = None


@dataclass
class Manifest:
    models: dict[str, ModelEntry] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    published_at: str = ""

    def to_json(self) -> bytes:
        payload = {"format": FORMAT, "tool": f"tritonkit {__version__}", "published_at": self.published_at,
                   "models": {name: asdict(entry) for name, entry in sorted(self.models.items())},
                   "files": dict(sorted(self.files.items()))}
        return json.dumps(payload, indent=1).encode()


def _release(raw: dict) -> Release:
    return Release(versions=[int(v) for v in raw["versions"]], config=raw["config"], fingerprint=raw["fingerprint"])


def read_manifest(dest: Destination) -> Manifest | None:
    """The destination's manifest, or None when nothing was published there yet."""
    raw = dest.read(MANIFEST)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        models = {name: ModelEntry(live=_release(e["live"]),
                                   candidate=_release(e["candidate"]) if e.get("candidate") else None)
                  for name, e in data["models"].items()}
        return Manifest(models=models, files=dict(data["files"]), published_at=data.get("published_at", ""))
    except (ValueError, KeyError, TypeError) as exc:
        raise TritonkitError(f"{dest.url}/{MANIFEST}", "", f"unreadable publish manifest ({exc})",
                             "it is written only by tritonkit publish/rollout; "
                             "restore it or publish to a new prefix") from exc


def require_manifest(dest: Destination) -> Manifest:
    """The destination's manifest; rollout and verify have nothing to work on without one."""
    manifest = read_manifest(dest)
    if manifest is None:
        raise TritonkitError(dest.url, "", "nothing published here (no manifest)", "run tritonkit publish first")
    return manifest


def write_manifest(dest: Destination, manifest: Manifest) -> None:
    manifest.published_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    data = manifest.to_json()
    dest.write(MANIFEST, data, sha256_bytes(data))
