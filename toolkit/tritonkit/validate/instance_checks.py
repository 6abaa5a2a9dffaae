"""`instance_group` as Triton 2.51 normalizes and checks it (NormalizeInstanceGroup, ValidateInstanceGroup).

Only what the config decides: which GPUs exist is a fact of the serving machine. A `count` below 1
is no error (Triton replaces it with the backend's default), nor is an empty `instance_group`.
"""
import re

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

_KIND = pb.ModelInstanceGroup
_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")  # what std::stoi accepts
_INT32_MAX = 2**31 - 1


def check_instances(name: str, c: pb.ModelConfig, platform: str | None) -> list[Finding]:
    """Findings on each instance group of a non-ensemble model (`platform`: Triton's filled-in one, None if unknown)."""
    if c.HasField("ensemble_scheduling"):
        return []
    found: list[Finding] = []
    for i, g in enumerate(c.instance_group):
        where = f"instance_group[{i}]"
        gpus = list(g.gpus)
        if g.kind in (_KIND.KIND_CPU, _KIND.KIND_MODEL) and gpus:
            kind = _KIND.Kind.Name(g.kind)
            found.append(Finding(name, f"{where}.gpus", f"kind {kind} but gpus {gpus} are listed",
                                 "remove gpus or use kind KIND_GPU"))
        elif any(gpu < 0 for gpu in gpus):
            auto = ", so Triton turns the KIND_AUTO group into KIND_CPU with gpus, which it refuses"
            meaning = "is no GPU id" + ("" if g.kind == _KIND.KIND_GPU else auto)
            found.append(Finding(name, f"{where}.gpus", f"{min(gpus)} {meaning}", "list GPU ids >= 0"))
        if g.profile and platform not in (None, "tensorrt_plan"):
            found.append(Finding(name, f"{where}.profile", "profiles are only supported by TensorRT models "
                                 "(platform tensorrt_plan)", "remove profile"))
        elif g.profile:
            bad = [p for p in g.profile if not _is_profile_index(p)]
            if bad:
                found.append(Finding(name, f"{where}.profile", f"'{bad[0]}' is not a non-negative integer",
                                     "give TensorRT profile indexes such as \"0\""))
    return found


def _is_profile_index(text: str) -> bool:
    """Whether std::stoi reads a non-negative int from `text` (it ignores trailing characters)."""
    match = _INT_PREFIX.match(text)
    return match is not None and 0 <= int(match.group(1)) <= _INT32_MAX
