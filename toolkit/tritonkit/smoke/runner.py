"""Runs every smoke check against one server for the chosen protocols."""
from __future__ import annotations

from pathlib import Path

from tritonclient.grpc import model_config_pb2 as pb

from tritonkit.smoke import checks
from tritonkit.smoke.checks import CheckResult
from tritonkit.smoke.clients import open_client
from tritonkit.smoke.target import Target
from tritonkit.validate.repository_check import validate_repository


def run_smoke(repository: Path, target: Target, protocols: list[str], progress=None) -> list[CheckResult]:
    """All rows, protocol by protocol; a dead server stops that protocol's checks after the first row."""
    configs: dict[str, pb.ModelConfig] = validate_repository(repository)
    results: list[CheckResult] = []
    for protocol in protocols:
        client = open_client(protocol, target.http_url if protocol == "http" else target.grpc_url)
        try:
            results.append(checks.check_server(client))
            if results[-1].status == "fail":
                continue
            for name, config in configs.items():
                if progress:
                    progress(f"{protocol}: {name}")
                results.append(checks.check_model_ready(client, name))
                if results[-1].status == "fail":
                    continue
                results.append(checks.check_config(client, name, config))
                results.append(checks.check_metadata(client, name, config))
                results += checks.behaviour_checks(client, name, config, repository / name)
            target_model = checks.pick_negative_target(configs)
            results += checks.negative_checks(client, target_model, configs.get(target_model) if target_model else None)
        finally:
            client.close()
    return results
