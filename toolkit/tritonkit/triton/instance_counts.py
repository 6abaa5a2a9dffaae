"""How many instances Triton runs for a model: each group's `count`, or Triton's default where it is unset.

A config may leave `count` out (tritonkit's spec and `import` keep it so). Triton core's
SetDefaultInstanceCount (r24.10) then runs 2 instances for a KIND_CPU (or, on a node without GPUs, KIND_AUTO)
group of the onnxruntime and tensorflow backends and 1 for every other group; a model without instance
groups gets one such group. Deploy sizing and the embedded server's fallback must count what Triton runs.
"""
from tritonkit.triton.layout import PLATFORMS
from tritonkit.triton.model_config import pb

#: Backends whose CPU groups default to two instances (a platform selects its backend: `PLATFORMS`).
_TWO_ON_CPU = ("onnxruntime", "tensorflow")
_CPU_KINDS = (pb.ModelInstanceGroup.KIND_CPU, pb.ModelInstanceGroup.KIND_AUTO)


def backend_of(config: pb.ModelConfig) -> str:
    """The backend Triton runs the model with: `backend`, else the one its `platform` names."""
    return config.backend or PLATFORMS.get(config.platform, (config.platform, ""))[0]


def group_count(config: pb.ModelConfig, group: pb.ModelInstanceGroup) -> int:
    """The instances Triton starts for `group` of `config` on a node without GPUs."""
    if group.count > 0:
        return group.count
    return 2 if group.kind in _CPU_KINDS and backend_of(config) in _TWO_ON_CPU else 1


def instance_groups(config: pb.ModelConfig) -> list[pb.ModelInstanceGroup]:
    """The config's groups, or the single default group Triton gives a model without any (none for an ensemble)."""
    if config.instance_group or config.platform == "ensemble":
        return list(config.instance_group)
    return [pb.ModelInstanceGroup(kind=pb.ModelInstanceGroup.KIND_AUTO)]
