"""How Triton 2.51 reads a model repository: model names, configs, which versions exist and load, the backend fields
it fills in.

Mirrors triton-inference-server/core r24.10: `VersionsToLoad` (model_lifecycle.cc) and
`AutoCompleteBackendFields` (model_config_utils.cc), which the server runs on every config, with
auto-complete disabled too. Nothing here reads model-file contents; that is the backends' job at load time.
"""
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format

from tritonkit.triton.model_config import pb

#: Model sub-folders Triton never reads as versions.
NOT_VERSIONS = ("warmup", "initial_state", "configs")
#: Files in a model folder that Triton does not load (tritonkit's smoke samples, the config itself).
NOT_LOADED = {"golden", "config.pbtxt"}
NAME_FIX = "use letters, digits, '_', '-' and '.'"
#: What `std::stoll` accepts: leading white space, a sign, digits; anything after the digits is ignored.
_STOLL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")
_INT64 = 2**63

#: Backends Triton fills in from file names, in its order: (backend, default file, platform, entry must be a folder?).
_AUTOFILL: tuple[tuple[str, str, str, bool | None], ...] = (
    ("tensorrt", "model.plan", "tensorrt_plan", False),
    ("onnxruntime", "model.onnx", "onnxruntime_onnx", None),  # a large ONNX model may be a folder
    ("openvino", "model.xml", "", None),
    ("pytorch", "model.pt", "pytorch_libtorch", False),
    ("python", "model.py", "", None),
)
#: Platforms and the backend and default model file Triton gives each.
PLATFORMS = {"tensorflow_graphdef": ("tensorflow", "model.graphdef"),
             "tensorflow_savedmodel": ("tensorflow", "model.savedmodel"), "tensorrt_plan": ("tensorrt", "model.plan"),
             "onnxruntime_onnx": ("onnxruntime", "model.onnx"), "pytorch_libtorch": ("pytorch", "model.pt")}
_TF_PLATFORMS = {"tensorflow_savedmodel": ("model.savedmodel", True), "tensorflow_graphdef": ("model.graphdef", False)}
#: Backends whose model file Triton's backend loads from `<version>/<default_model_filename>`.
FILE_BACKENDS = frozenset({"tensorflow", *(entry[0] for entry in _AUTOFILL)})


def unsafe_name_reason(name: str) -> str | None:
    """Why `name` cannot be a model directory name, or None when it can."""
    if not name or not name.strip():
        return "is empty"
    if name in (".", "..") or ".." in name.split("/"):
        return "is a relative path component"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    if name != name.strip() or any(ord(ch) < 32 for ch in name):
        return "has leading/trailing spaces or control characters"
    if name.startswith("."):
        return "starts with '.', which hides it from the repository scan"
    return None


def read_config(model_dir: Path) -> pb.ModelConfig | None:
    """The model's config.pbtxt as Triton's protobuf, or None when absent or unparsable (Triton reports it)."""
    path = model_dir / "config.pbtxt"
    if not path.is_file():
        return None
    try:
        return text_format.Parse(path.read_text(), pb.ModelConfig())
    except text_format.ParseError:
        return None


def read_configs(repository: Path) -> list[pb.ModelConfig]:
    """The configs of the repository's models that parse, leniently (`config_parse` is the strict reader)."""
    return [c for c in (read_config(p.parent) for p in sorted(repository.glob("*/config.pbtxt"))) if c is not None]


def model_dirs(repository: Path) -> list[Path]:
    """The folders Triton reads as models, in name order (it skips hidden ones)."""
    return sorted(p for p in repository.iterdir() if p.is_dir() and not p.name.startswith("."))


def version_dirs(model_dir: Path) -> list[Path]:
    """The model's numbered version folders, in name order."""
    return sorted(p for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit())


@dataclass
class Versions:
    """A model folder's version folders as Triton reads them."""

    folders: list[str] = field(default_factory=list)  # every sub-folder in name order; backend fill-in reads the first
    found: dict[int, str] = field(default_factory=dict)  # version -> first folder name that gave it
    leading_zero: list[str] = field(default_factory=list)  # ignored by Triton with a log warning
    loose: dict[str, int] = field(default_factory=dict)  # '1.bak' -> 1: Triton reads the leading number, loads '1/'


def read_versions(model_dir: Path) -> Versions:
    """Version folders of `model_dir` the way VersionsToLoad reads them."""
    out = Versions(folders=sorted(p.name for p in model_dir.iterdir() if p.is_dir()))
    for sub in out.folders:
        if sub in NOT_VERSIONS:
            continue
        if len(sub) > 1 and sub.startswith("0"):
            out.leading_zero.append(sub)
            continue
        match = _STOLL.match(sub)
        if not match or not -_INT64 <= int(match.group(1)) < _INT64:
            continue  # Triton logs "fails to convert to integral number" and skips it
        version = int(match.group(1))
        out.found.setdefault(version, sub)
        if sub != str(version):
            out.loose[sub] = version
    return out


def loaded_versions(config: pb.ModelConfig, existing: Collection[int]) -> list[int]:
    """The versions Triton loads under the config's version_policy (default: latest 1), newest first."""
    newest_first = sorted(existing, reverse=True)
    policy = config.version_policy.WhichOneof("policy_choice")
    if policy == "specific":
        return [v for v in newest_first if v in set(config.version_policy.specific.versions)]
    if policy == "all":
        return newest_first
    wanted = config.version_policy.latest.num_versions if policy == "latest" else 1
    return newest_first[:wanted]


def complete_backend_fields(folder_name: str, first_folder: Path | None, config: pb.ModelConfig) -> pb.ModelConfig:
    """A copy of `config` with the platform/backend/default_model_filename Triton fills in before validating it.

    Triton looks at the first sub-folder of the model folder (in name order, whatever it is: `first_folder`,
    None when there is none or only the config is known) for a known model file, and lacking everything else
    takes the backend from a folder named `<name>.<backend>`.
    """
    c = pb.ModelConfig()
    c.CopyFrom(config)
    c.name = c.name or folder_name
    content = {p.name: p.is_dir() for p in first_folder.iterdir()} if first_folder is not None else None
    if not c.platform and c.backend in ("", "tensorflow"):
        for tf_platform, (tf_file, tf_is_dir) in _TF_PLATFORMS.items():
            by_file = not c.default_model_filename and content and content.get(tf_file) == tf_is_dir
            if c.default_model_filename == tf_file or by_file:
                c.platform = tf_platform
    if c.platform in _TF_PLATFORMS:
        c.backend = c.backend or "tensorflow"
        c.default_model_filename = c.default_model_filename or _TF_PLATFORMS[c.platform][0]
        return c
    for backend, filename, platform, is_dir in _AUTOFILL:
        if not c.backend:
            by_file = not c.platform and not c.default_model_filename and content is not None and filename in content
            if (platform and c.platform == platform) or c.default_model_filename == filename or (
                    by_file and content is not None and is_dir in (None, content[filename])):
                c.backend = backend
        if c.backend == backend:
            c.platform = c.platform or platform
            if not c.default_model_filename and not (backend == "pytorch" and c.runtime == "model.py"):
                c.default_model_filename = filename
            return c
    if not c.backend and not c.platform and not c.default_model_filename and "." in folder_name:
        c.backend = folder_name.split(".", 1)[1]
        c.default_model_filename = f"model.{c.backend}"
    return c
