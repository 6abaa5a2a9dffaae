"""Runs every smoke check against one server for the chosen protocols."""
from dataclasses import replace
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.serve.state import STATE_DIR, read_state
from tritonkit.serve.stubs import events_path, read_events
from tritonkit.smoke import checks
from tritonkit.smoke.checks import CheckResult
from tritonkit.smoke.clients import open_client
from tritonkit.smoke.target import Target, same_endpoint
from tritonkit.triton.model_config import pb
from tritonkit.triton.model_graph import bls_calls, load_order
from tritonkit.validate.repository_check import validate_repository


def run_smoke(repository: Path, target: Target, protocols: list[str], progress=None,
              models: list[str] | None = None) -> list[CheckResult]:
    """All rows, protocol by protocol; a dead server stops that protocol's checks after the first row.

    `models` limits the model checks (and the bad requests) to those models; the server's own rows stay.
    Every row of a model the server runs through the onnxruntime fallback is marked `served_as`.
    """
    configs = validate_repository(repository, self_contained=False)   # checks what is served here
    checked = configs if models is None else {name: configs[name] for name in selected(models, configs, repository)}
    results: list[CheckResult] = []
    fallbacks: set[str] = set()
    for protocol in protocols:
        client = open_client(protocol, target.url(protocol))
        try:
            results.append(checks.check_server(client))
            if results[-1].status == "fail":
                continue
            for name in load_order(configs):  # callees before their callers
                if name not in checked:
                    continue
                config = configs[name]
                if progress:
                    progress(f"{protocol}: {name}")
                results.append(checks.check_model_ready(client, name))
                if results[-1].status == "fail":
                    continue
                if bls_calls(config):
                    results.append(checks.check_callees_ready(client, name, bls_calls(config)))
                    if results[-1].status == "fail":
                        continue
                config_row, fallback = checks.check_config(client, name, config)
                results.append(config_row)
                if fallback:
                    fallbacks.add(name)
                results.append(checks.check_metadata(client, name, config))
                results += checks.behaviour_checks(client, name, config, repository / name)
            target_model = checks.pick_negative_target(checked)
            results += checks.negative_checks(client, target_model, configs.get(target_model) if target_model else None)
        finally:
            client.close()
    return [replace(r, served_as=checks.FALLBACK) if r.model in fallbacks else r for r in results]


def selected(models: list[str], configs: dict[str, pb.ModelConfig], repository: Path) -> list[str]:
    """The --model names, each one a model of the repository (else one line naming the repository's models)."""
    unknown = [name for name in models if name not in configs]
    if unknown:
        raise TritonkitError(str(repository), "--model", f"no model {', '.join(repr(n) for n in unknown)} in the "
                             "repository", f"name one of: {', '.join(sorted(configs))}")
    return list(dict.fromkeys(models))


def stub_restart_rows(target: Target, project_dir: Path = Path(".")) -> list[CheckResult]:
    """One row per Python-backend stub that died while this project's `tritonkit serve` ran the target server
    (the server reloaded its model; a failed reload fails the row); nothing for a server tritonkit does not run."""
    state = read_state(project_dir / STATE_DIR)
    url = target.http_url
    if state is None or url is None or not same_endpoint(url, f"{state.host}:{state.http_port}"):
        return []
    events = read_events(events_path(Path(state.log)))
    if not events:
        return [CheckResult("stub restarts", "-", "-", "pass", "no Python-backend stub died", 0.0)]
    return [CheckResult("stub restart", e.model, "-", "pass" if e.reloaded else "fail", e.describe(), e.seconds)
            for e in events]
