"""Checks of one model's config on its own, with Triton 2.51's meaning; rule groups live in their own modules."""
from tritonkit.triton.layout import NAME_FIX, unsafe_name_reason
from tritonkit.triton.model_config import pb
from tritonkit.validate.backend_checks import check_backend, resolved_platform_backend
from tritonkit.validate.batch_io_checks import check_batch_io
from tritonkit.validate.findings import Finding
from tritonkit.validate.instance_checks import check_instances
from tritonkit.validate.io_checks import check_io
from tritonkit.validate.scheduling_checks import check_scheduling
from tritonkit.validate.sequence_checks import check_sequence
from tritonkit.validate.warmup_checks import check_warmup


def check_model(name: str, c: pb.ModelConfig) -> list[Finding]:
    resolved = resolved_platform_backend(c)
    platform = None if resolved is None else resolved[0]
    found = _check_identity(name, c)
    found += check_backend(name, c, resolved)
    found += check_scheduling(name, c)
    found += check_sequence(name, c)
    found += check_io(name, c, platform)
    found += check_batch_io(name, c)
    found += check_instances(name, c, platform)
    found += check_warmup(name, c)
    return found


def _check_identity(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    reason = unsafe_name_reason(name)
    if reason:
        found.append(Finding(name, "name", f"model name {name!r} {reason}", NAME_FIX))
    if c.platform == "ensemble":
        if not c.HasField("ensemble_scheduling"):
            found.append(Finding(name, "ensemble_scheduling", "platform 'ensemble' without ensemble_scheduling",
                                 "add ensemble_scheduling.step entries"))
        if len(c.instance_group):
            found.append(Finding(name, "instance_group", "an ensemble has no instances of its own",
                                 "remove instance_group from the ensemble and set it on the composing models"))
    elif c.HasField("ensemble_scheduling"):
        found.append(Finding(name, "platform", "ensemble_scheduling needs platform 'ensemble'",
                             "set platform: ensemble"))
    return found
