"""Runs every semantic check over a set of parsed configs."""
from collections.abc import Collection, Mapping

from tritonkit.triton.model_config import pb
from tritonkit.validate.bls_checks import check_bls
from tritonkit.validate.ensemble_checks import check_ensembles
from tritonkit.validate.findings import Finding
from tritonkit.validate.model_checks import check_model


def semantic_findings(configs: dict[str, pb.ModelConfig], unknown: frozenset[str] = frozenset(),
                      versions: Mapping[str, Collection[int]] | None = None) -> list[Finding]:
    """Per-model findings first, then cross-model ones, in repository order (`unknown`, `versions`: see
    check_ensembles). Findings of severity "warning" are reported but do not fail validate or build."""
    found: list[Finding] = []
    for name, config in configs.items():
        found += check_model(name, config)
    found += check_ensembles(configs, unknown, versions)
    found += check_bls(configs, unknown)
    return found
