"""`tritonkit rollout` / `rollback`: move running servers to published candidate versions, or back.

First, every server must answer and serve each candidate's live version (nothing changes otherwise).
Then per server, for the candidates in load order (callees first):
1. load the model with its candidate config pinned to `live + candidate` versions: the live version keeps
   answering while the candidate loads (Triton swaps a reloaded model in only once it is ready);
2. wait until that version is ready (`/v2/models/M/versions/N/ready`, not server readiness);
3. replay the candidate's golden samples pinned to the candidate version, and the golden samples of the
   ensembles that step into it (unversioned requests, which go to the newest ready version);
4. only then load it pinned to the candidate alone, which retires the old version.
Any failure loads the live config again on every server touched so far (the live version was never
unloaded, so its answers never stop) and exits non-zero with the reason. When every server has the
candidate, the destination is promoted: its config.pbtxt and model files now name the candidate, and the
manifest records it as live, so a restarted server loads what the running ones serve.
"""
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.files import sha256_bytes
from tritonkit.publish.destination import Destination
from tritonkit.publish.manifest import Manifest, pinned, require_manifest, write_manifest
from tritonkit.publish.publish import STAGING
from tritonkit.publish.triton_api import RepositoryApi
from tritonkit.smoke.checks import CheckResult, behaviour_checks
from tritonkit.smoke.clients import HttpClient
from tritonkit.triton.model_config import pb
from tritonkit.triton.model_graph import load_order, model_calls


@dataclass
class RolloutReport:
    servers: list[str]
    models: dict[str, dict[str, list[int]]] = field(default_factory=dict)   # model -> {"from": [...], "to": [...]}
    checks: list[CheckResult] = field(default_factory=list)
    rolled_back: bool = False


class RolloutFailed(TritonkitError):
    """A candidate failed to load or its checks; every server is back on the live versions."""

    exit_code = 1
    report: RolloutReport | None = None


def _materialize(dest: Destination, manifest: Manifest, model: str, into: Path) -> Path:
    """The model's golden samples as the candidate (or the live model, when there is none) has them."""
    entry = manifest.models[model]
    root = f"{model}/{STAGING}/{entry.candidate.versions[0]}/" if entry.candidate else f"{model}/"
    for key in manifest.files:
        if key.startswith(f"{root}golden/"):
            data = dest.read(key)
            if data is not None:
                target = into / model / key[len(root):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    return into / model


@dataclass(frozen=True)
class _Replays:
    """The golden replays every server gets, read from the destination once, before any server changes."""

    cases: list[tuple[str, pb.ModelConfig, Path]]  # (model, config, folder holding its golden/)
    pins: dict[str, int]                           # candidate -> its version (unpinned requests reach the newest)

    def run(self, url: str) -> list[CheckResult]:
        client = HttpClient(url, versions=self.pins)
        try:
            return [r for name, config, folder in self.cases for r in behaviour_checks(client, name, config, folder)]
        finally:
            client.close()


def _replays(dest: Destination, manifest: Manifest, live: dict[str, pb.ModelConfig], models: list[str],
             into: Path) -> _Replays:
    """Each candidate, pinned to its version, and the live ensembles that use one."""
    users = [name for name, config in live.items()
             if name not in models and config.platform == "ensemble" and set(model_calls(config)) & set(models)]
    cases = []
    for name in [*models, *users]:
        candidate = manifest.models[name].candidate
        config = text_format.Parse(candidate.config, pb.ModelConfig()) if candidate else live[name]
        cases.append((name, config, _materialize(dest, manifest, name, into)))
    pins = {m: candidate.versions[-1] for m in models if (candidate := manifest.models[m].candidate)}
    return _Replays(cases, pins)


def _restore(apis: list[RepositoryApi], manifest: Manifest, models: list[str]) -> None:
    """Every touched server back on the live versions (best effort per model: one failure does not stop the rest)."""
    for api in apis:
        for name in reversed(models):
            live = manifest.models[name].live
            try:
                api.load(name, live.served_with(live.versions))
            except TritonkitError:
                continue


def _promote(dest: Destination, manifest: Manifest, models: list[str]) -> None:
    """The destination serves the candidates from now on: model files, then config.pbtxt, then the manifest."""
    for name in models:
        entry = manifest.models[name]
        assert entry.candidate is not None, "only candidates are promoted"
        staged = f"{name}/{STAGING}/{entry.candidate.versions[0]}/"
        for key, sha in list(manifest.files.items()):
            if key.startswith(staged):
                data = dest.read(key)
                if data is not None:
                    dest.write(f"{name}/{key[len(staged):]}", data, sha)
                    manifest.files[f"{name}/{key[len(staged):]}"] = sha
        config = entry.candidate.config.encode()
        sha = sha256_bytes(config)
        dest.write(f"{name}/config.pbtxt", config, sha)
        manifest.files[f"{name}/config.pbtxt"] = sha
        entry.live, entry.candidate = entry.candidate, None
    write_manifest(dest, manifest)


def _roll_one(api: RepositoryApi, manifest: Manifest, todo: list[str], replays: _Replays, report: RolloutReport,
              say: Callable[[str], None], timeout: float) -> None:
    """One server: candidates loaded beside the live versions, checked, then served alone; raises on any failure."""
    for name in todo:
        entry = manifest.models[name]
        assert entry.candidate is not None, "todo holds candidates only"
        say(f"{api.url}: loading {name} version {entry.candidate.versions} next to {entry.live.versions}")
        api.load(name, entry.candidate.served_with(sorted({*entry.live.versions, *entry.candidate.versions})))
        for version in entry.candidate.versions:
            api.wait_version_ready(name, version, timeout)
    say(f"{api.url}: checking the candidates against their golden samples")
    checks = replays.run(api.url)
    report.checks += checks
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        first = failed[0]
        raise RolloutFailed(api.url, first.model, f"candidate failed its check {first.check}: {first.detail}",
                            "every server is back on the live version; fix the model, build and publish again")
    for name in todo:
        candidate = manifest.models[name].candidate
        assert candidate is not None, "todo holds candidates only"
        say(f"{api.url}: retiring {name} version {manifest.models[name].live.versions}")
        api.load(name, candidate.served_with(candidate.versions))


def _preflight(apis: list[RepositoryApi], manifest: Manifest, todo: list[str]) -> None:
    """Every server answers and serves the live version of every candidate, checked before any server changes:
    a server that is down, reads another repository or never loaded the model would otherwise be found only
    after the servers before it had switched (and been switched back)."""
    for api in apis:
        for name in todo:
            for version in manifest.models[name].live.versions:
                if not api.version_ready(name, version):
                    raise TritonkitError(api.url, name, f"live version {version} is not ready on this server, so it "
                                         "cannot be rolled forward", "roll out to servers that serve DEST's live "
                                         "versions (started on DEST, explicit model control); no server was changed")


def rollout(dest: Destination, servers: list[str], *, models: list[str] | None = None,
            admin_key_env: str = "TRITON_ADMIN_KEY", timeout: float = 300.0,
            progress: Callable[[str], None] | None = None) -> RolloutReport:
    """Rolls every candidate (or those in `models`) out to every server, or none of them anywhere."""
    manifest = require_manifest(dest)
    unknown = sorted(set(models or []) - set(manifest.models))
    if unknown:
        raise TritonkitError(dest.url, "--models", f"not published here: {', '.join(unknown)}",
                             f"choose among {', '.join(sorted(manifest.models))}")
    live = {name: text_format.Parse(entry.live.config, pb.ModelConfig()) for name, entry in manifest.models.items()}
    todo = [m for m in load_order(live) if manifest.models[m].candidate and (not models or m in models)]
    report = RolloutReport(servers=servers)
    report.models = {m: {"from": manifest.models[m].live.versions,
                         "to": manifest.models[m].candidate.versions}  # type: ignore[union-attr]
                     for m in todo}
    say = progress or (lambda _: None)
    apis = [RepositoryApi(url, admin_key_env, timeout) for url in servers]
    _preflight(apis, manifest, todo)
    touched: list[RepositoryApi] = []
    with tempfile.TemporaryDirectory(prefix="tritonkit-rollout-") as tmp:
        replays = _replays(dest, manifest, live, todo, Path(tmp))
        for api in apis:
            touched.append(api)
            try:
                _roll_one(api, manifest, todo, replays, report, say, timeout)
            except TritonkitError as exc:
                say(f"rolling back {', '.join(todo)} on {len(touched)} server(s)")
                _restore(touched, manifest, todo)
                report.rolled_back = True
                failure = exc if isinstance(exc, RolloutFailed) else cast(RolloutFailed, RolloutFailed.of(exc.problems))
                failure.report = report
                raise failure from exc
    if todo:
        _promote(dest, manifest, todo)
    return report


def rollback(server: str, model: str, version: int, *, admin_key_env: str = "TRITON_ADMIN_KEY",
             timeout: float = 300.0) -> None:
    """Serves `version` of `model` alone, with the config the server runs it with now (the version must exist in its
    repository)."""
    api = RepositoryApi(server, admin_key_env, timeout)
    try:
        api.load(model, pinned(api.config(model), [version]))
    except TritonkitError as exc:
        if "at least one version must be available" not in exc.problem:  # Triton's words for a version it cannot find
            raise
        raise TritonkitError(api.url, "--to", f"{model} has no version {version} in the server's model repository",
                             "pick a version published there (the current version keeps serving)") from exc
    api.wait_version_ready(model, version, timeout)
