"""Publish to a local S3 endpoint (moto server), serve from s3:// on the embedded Triton, roll out under load.

One server and one bucket for the module (2 cores): the stages run in order inside one test, because each
needs the state the previous one left (published versions, the live one on the server).
A tiny project: `scale` (Python, Y = X * K) behind an ensemble `pipeline`, so every version gives a
different, known answer.
"""
from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO_ROOT, require
from tests.publish.project import BUCKET, FAKE, PREFIX, build_version, cli

boto3 = require("boto3", "pip install 'tritonkit[publish]'")
moto_server = require("moto.server", "pip install 'moto[server]'")
httpclient = require("tritonclient.http", "pip install tritonclient[http]")
grpcclient = require("tritonclient.grpc", "pip install tritonclient[grpc]")

pytestmark = [pytest.mark.server, pytest.mark.slow]


def ask(client: httpclient.InferenceServerClient, model: str = "pipeline") -> float:
    tensor = httpclient.InferInput("X", [1, 1], "FP32")
    tensor.set_data_from_numpy(np.ones((1, 1), np.float32))
    return float(client.infer(model, [tensor]).as_numpy("Y")[0, 0])


class Traffic:
    """Clients sending requests without pause: one records answers in order, the others add load; all count failures."""

    def __init__(self, url: str, load_threads: int = 3) -> None:
        self.url, self.answers, self.failures = url, [], []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i == 0,)) for i in range(1 + load_threads)]

    def _run(self, record: bool) -> None:
        client = httpclient.InferenceServerClient(self.url)
        while not self.stop.is_set():
            try:
                answer = ask(client)
                if record:
                    self.answers.append(answer)
            except Exception as exc:  # noqa: BLE001 - every failed request is counted and shown
                self.failures.append(str(exc)[:200])
        client.close()

    def __enter__(self) -> Traffic:
        for t in self.threads:
            t.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.5)
        self.stop.set()
        for t in self.threads:
            t.join()

    def switches(self) -> list[float]:
        """The answers with consecutive repeats collapsed: [old, new] means one clean switch."""
        return [a for i, a in enumerate(self.answers) if i == 0 or a != self.answers[i - 1]]


def manifest_at(s3: dict[str, str], prefix: str) -> dict:
    body = boto3.client("s3", endpoint_url=s3["endpoint"]).get_object(
        Bucket=BUCKET, Key=f"{prefix}/.tritonkit-publish.json"
    )["Body"]
    return json.loads(body.read())


def manifest(s3: dict[str, str]) -> dict:
    return manifest_at(s3, PREFIX)


def keys(s3: dict[str, str]) -> set[str]:
    client = boto3.client("s3", endpoint_url=s3["endpoint"])
    return {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix=PREFIX).get("Contents", [])}


def test_publish_serve_rollout_rollback_from_s3(s3: dict[str, str], tmp_path: Path) -> None:
    from tritonkit.serve.server import EmbeddedServer

    project = tmp_path / "project"
    outputs: list[str] = []  # every line the commands printed, searched for credentials at the end

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        result = cli(*args, cwd=project)
        outputs.extend([result.stdout, result.stderr])
        return result

    # 1. first publish: version 1 of both models, config.pbtxt last, manifest marks it complete
    build_version(project, k=1.0, expected=1.0)
    first = run("publish", s3["dest"], "--endpoint-url", s3["endpoint"], "--verify", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["published"] == {"pipeline": [1], "scale": [1]} and report["verified"] is True
    assert report["triton_repository"] == s3["triton"]
    assert f"{PREFIX}/pipeline/1/" in keys(s3)  # the ensemble's empty version folder exists as an object
    again = run("publish", s3["dest"], "--endpoint-url", s3["endpoint"], "--json")
    assert json.loads(again.stdout)["unchanged"] == ["pipeline", "scale"] and json.loads(again.stdout)["uploaded"] == 0

    # 2. the embedded Triton reads s3:// itself (explicit model control) and smoke passes
    with EmbeddedServer(s3["triton"], work_dir=tmp_path / ".tritonkit", log_path=tmp_path / "triton.log") as server:
        smoke = run("smoke", "-r", "model_repository", "--url", server.http_url, "--grpc-url", server.grpc_url)
        assert smoke.returncode == 0, smoke.stdout + smoke.stderr
        client = httpclient.InferenceServerClient(server.http_url)
        assert ask(client) == 1.0

        # 3. a changed model rolls out under continuous traffic: no failed request, one switch 1 -> 2
        build_version(project, k=2.0, expected=2.0)
        second = run("publish", s3["dest"], "--endpoint-url", s3["endpoint"], "--json")
        # golden samples are part of a model's content: the ensemble's changed expectation makes it a new version too
        assert json.loads(second.stdout)["published"] == {"pipeline": [2], "scale": [2]}, second.stdout
        assert ask(client) == 1.0  # published is not live: the server still serves version 1
        with Traffic(server.http_url) as traffic:
            rolled = run("rollout", s3["dest"], "--endpoint-url", s3["endpoint"], "--server", server.http_url, "--json")
        assert rolled.returncode == 0, rolled.stdout + rolled.stderr
        assert traffic.failures == [] and traffic.switches() == [1.0, 2.0], (traffic.failures[:3], traffic.switches())
        assert len(traffic.answers) > 20
        assert not client.is_model_ready("scale", "1") and client.is_model_ready("scale", "2")
        assert manifest(s3)["models"]["scale"]["live"]["versions"] == [2]  # promoted: a restart serves 2

        # 4. a version failing its golden samples is rolled back; the old version never stops answering
        build_version(project, k=30.0, expected=3.0)
        run("publish", s3["dest"], "--endpoint-url", s3["endpoint"])
        with Traffic(server.http_url) as traffic:
            bad = run("rollout", s3["dest"], "--endpoint-url", s3["endpoint"], "--server", server.http_url)
        assert bad.returncode == 1 and "candidate failed its check" in bad.stderr, bad.stderr
        assert traffic.failures == [] and traffic.switches()[-1] == 2.0 and set(traffic.switches()) <= {2.0, 30.0}
        assert ask(client) == 2.0 and not client.is_model_ready("scale", "3")
        assert manifest(s3)["models"]["scale"]["live"]["versions"] == [2]

        # 5. a publish killed mid-upload leaves the served version and the manifest alone; a rerun finishes it
        build_version(project, k=4.0, expected=4.0, pad_mb=48)
        before = manifest(s3)
        proc = subprocess.Popen([sys.executable, "-m", "tritonkit", "publish", s3["dest"], "--endpoint-url",
                                 s3["endpoint"],
                                 "--jobs", "1"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while f"{PREFIX}/scale/4/model.py" not in keys(s3) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        outputs.extend([out, err])
        assert proc.returncode == -signal.SIGKILL, "the publish finished before it could be interrupted"
        assert f"{PREFIX}/scale/4/pad.bin" not in keys(s3) and not any("pending" in k for k in keys(s3))  # no journal
        assert manifest(s3) == before and ask(client) == 2.0
        resumed = run("publish", s3["dest"], "--endpoint-url", s3["endpoint"], "--verify", "--json")
        assert resumed.returncode == 0, resumed.stderr
        done = json.loads(resumed.stdout)
        # the versions the killed run chose (above the manifest's 3) are reused, not skipped to 5
        assert (
            done["published"] == {"pipeline": [4], "scale": [4]} and done["skipped"] >= 1 and done["verified"] is True
        )
        assert {k for k in keys(s3) if k.startswith(f"{PREFIX}/scale/4/")} == {
            f"{PREFIX}/{k}" for k in manifest(s3)["files"] if k.startswith("scale/4/")}
        assert ask(client) == 2.0

        # 6. rollback on its own: back to version 1
        back = run("rollback", "scale", "--to", "1", "--server", server.http_url)
        assert back.returncode == 0, back.stderr
        assert ask(client) == 1.0 and not client.is_model_ready("scale", "2")
        client.close()

    # no credential in any output, log or generated file
    texts = outputs + [(tmp_path / "triton.log").read_text(errors="replace")]
    texts += [p.read_text(errors="replace") for p in project.rglob("*") if p.is_file() and p.suffix != ".bin"]
    for secret in (FAKE["AWS_ACCESS_KEY_ID"], FAKE["AWS_SECRET_ACCESS_KEY"]):
        assert not any(secret in text for text in texts)
    client_s3 = boto3.client("s3", endpoint_url=s3["endpoint"])
    for key in keys(s3):
        if not key.endswith((".bin", "/")):
            body = client_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode(errors="replace")
            assert FAKE["AWS_SECRET_ACCESS_KEY"] not in body and FAKE["AWS_ACCESS_KEY_ID"] not in body


def test_rollout_to_two_servers_with_restricted_repository_api(s3: dict[str, str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers that restrict their model-repository API, as production ones should: rollout without the key is
    refused in one line and changes nothing; with TRITON_ADMIN_KEY both servers switch; a second server that
    refuses the key has the first rolled back under traffic. The key is in no output or log."""
    from tritonkit.serve.server import EmbeddedServer

    key, other_key = secrets.token_hex(16), secrets.token_hex(16)
    monkeypatch.setenv("TRITON_ADMIN_KEY", key)
    monkeypatch.setenv("OTHER_ADMIN_KEY", other_key)
    project = tmp_path / "project"
    dest = [f"s3://{BUCKET}/fleet", "--endpoint-url", s3["endpoint"]]
    repository = s3["triton"].rsplit("/", 1)[0] + "/fleet"
    outputs: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        result = cli(*args, cwd=project)
        outputs.extend([result.stdout, result.stderr])
        return result

    def server(name: str, key_env: str) -> EmbeddedServer:
        return EmbeddedServer(repository, work_dir=tmp_path / ".tritonkit", log_path=tmp_path / f"{name}.log",
                              admin_key_env=key_env)

    build_version(project, k=1.0, expected=1.0)
    assert run("publish", *dest).returncode == 0
    with ExitStack() as stack:
        a, b = (stack.enter_context(server(n, "TRITON_ADMIN_KEY")) for n in ("a", "b"))
        clients = [httpclient.InferenceServerClient(s.http_url) for s in (a, b)]
        # the restriction is real on both protocols: no key, no load; the key in each protocol's header, load
        with pytest.raises(Exception, match="admin-key"):
            clients[0].load_model("scale")
        grpc = grpcclient.InferenceServerClient(a.grpc_url)
        with pytest.raises(Exception, match="admin-key"):
            grpc.load_model("scale")
        grpc.load_model("scale", headers={"triton-grpc-protocol-admin-key": key})
        grpc.close()
        clients[0].load_model("scale", headers={"admin-key": key})

        build_version(project, k=2.0, expected=2.0)
        assert run("publish", *dest).returncode == 0
        monkeypatch.delenv("TRITON_ADMIN_KEY")
        refused = run("rollout", *dest, "--server", a.http_url, "--server", b.http_url)
        problems = [line for line in refused.stderr.splitlines() if "load failed" in line]
        assert refused.returncode == 1 and len(problems) == 1, refused.stderr
        assert "restricts its model-repository API: set TRITON_ADMIN_KEY" in problems[0]
        assert [ask(c) for c in clients] == [1.0, 1.0] and manifest_at(s3, "fleet")["models"]["scale"]["live"][
            "versions"
        ] == [1]

        monkeypatch.setenv("TRITON_ADMIN_KEY", key)
        rolled = run("rollout", *dest, "--server", a.http_url, "--server", b.http_url, "--json")
        assert rolled.returncode == 0, rolled.stdout + rolled.stderr
        assert json.loads(rolled.stdout)["models"]["scale"] == {"from": [1], "to": [2]}
        assert [ask(c) for c in clients] == [2.0, 2.0]
        assert not any(c.is_model_ready("scale", "1") for c in clients)

        # the second server wants another key: the first has switched to version 3 by then and goes back to 2
        clients.pop().close()
        b.stop()
        c = stack.enter_context(server("c", "OTHER_ADMIN_KEY"))
        build_version(project, k=3.0, expected=3.0)
        assert run("publish", *dest).returncode == 0
        with Traffic(a.http_url) as traffic:
            failed = run("rollout", *dest, "--server", a.http_url, "--server", c.http_url)
        assert failed.returncode == 1 and f"{c.http_url}: scale: load failed" in failed.stderr, failed.stderr
        assert f"{a.http_url}: retiring scale version [2]" in failed.stderr  # the first had fully switched
        assert traffic.failures == [] and traffic.switches() == [2.0, 3.0, 2.0], (
            traffic.failures[:3],
            traffic.switches(),
        )
        assert ask(clients[0]) == 2.0 and not clients[0].is_model_ready("scale", "3")
        assert ask(httpclient.InferenceServerClient(c.http_url)) == 2.0
        assert manifest_at(s3, "fleet")["models"]["scale"]["live"]["versions"] == [2]
        clients[0].close()

    texts = outputs + [(tmp_path / f"{n}.log").read_text(errors="replace") for n in ("a", "b", "c")]
    assert not any(k in text for text in texts for k in (key, other_key))



def test_rollout_checks_every_server_before_changing_any(s3: dict[str, str], tmp_path: Path) -> None:
    """A server that is down, or that does not serve a candidate's live version, is found before the first server
    loads anything: one line, exit 2, no server switched and switched back."""
    from tritonkit.serve.ports import choose_ports
    from tritonkit.serve.server import EmbeddedServer

    project = tmp_path / "project"
    dest = [f"s3://{BUCKET}/preflight", "--endpoint-url", s3["endpoint"]]
    build_version(project, k=1.0, expected=1.0)
    assert cli("publish", *dest, cwd=project).returncode == 0
    down = f"127.0.0.1:{choose_ports('127.0.0.1', {'http': None})['http']}"  # free: nothing listens there
    with EmbeddedServer(s3["triton"].rsplit("/", 1)[0] + "/preflight", work_dir=tmp_path / ".tritonkit",
                        log_path=tmp_path / "triton.log") as server:
        build_version(project, k=2.0, expected=2.0)
        assert cli("publish", *dest, cwd=project).returncode == 0
        client = httpclient.InferenceServerClient(server.http_url)

        second_down = cli("rollout", *dest, "--server", server.http_url, "--server", down, cwd=project)
        assert second_down.returncode == 2 and second_down.stderr.strip().splitlines() == [
            f"{down}: server does not answer (URLError); check --server HOST:PORT (Triton's HTTP endpoint) and that it "
            "runs"
        ], second_down.stderr

        client.unload_model("pipeline")  # this server does not serve pipeline's live version
        missing = cli("rollout", *dest, "--server", server.http_url, cwd=project)
        assert missing.returncode == 2 and missing.stderr.strip().splitlines() == [
            f"{server.http_url}: pipeline: live version 1 is not ready on this server, so it cannot be rolled forward; "
            "roll out to servers that serve DEST's live versions (started on DEST, explicit model control); "
            "no server was changed"], missing.stderr
        assert ask(client, "scale") == 1.0 and not client.is_model_ready("scale", "2")
        client.close()
    assert "loading: scale:2" not in (tmp_path / "triton.log").read_text()  # version 2 was never loaded


def test_rollback_to_a_version_the_server_lacks_is_one_line(s3: dict[str, str], tmp_path: Path) -> None:
    """Triton refuses a version its repository lacks ('at least one version must be available...\\n'): the line
    names --to and the version, and the current version keeps answering."""
    from tritonkit.serve.server import EmbeddedServer

    project = tmp_path / "project"
    build_version(project, k=1.0, expected=1.0)
    assert cli("publish", f"s3://{BUCKET}/rollback", "--endpoint-url", s3["endpoint"], cwd=project).returncode == 0
    with EmbeddedServer(s3["triton"].rsplit("/", 1)[0] + "/rollback", work_dir=tmp_path / ".tritonkit",
                        log_path=tmp_path / "triton.log") as server:
        result = cli("rollback", "scale", "--to", "7", "--server", server.http_url, cwd=project)
        assert result.returncode == 2 and result.stderr.strip().splitlines() == [
            f"{server.http_url}: --to: scale has no version 7 in the server's model repository; "
            "pick a version published there (the current version keeps serving)"], result.stderr
        client = httpclient.InferenceServerClient(server.http_url)
        assert ask(client, "scale") == 1.0
        client.close()

def test_local_folder_publish_verify_catches_tampering(tmp_path: Path) -> None:
    """A folder destination: the same staging and manifest; --verify re-reads files and names a changed one."""
    project = tmp_path / "project"
    build_version(project, k=1.0, expected=1.0)
    dest = tmp_path / "published"
    first = cli("publish", str(dest), "--verify", "--json", cwd=project)
    assert first.returncode == 0, first.stderr
    assert (dest / "scale" / "1" / "model.py").is_file() and (dest / "pipeline" / "1").is_dir()
    config = (dest / "scale" / "config.pbtxt").read_text()
    assert "specific" in config and "versions: 1" in config
    original = (dest / "scale" / "1" / "model.py").read_bytes()
    (dest / "scale" / "1" / "model.py").write_text("tampered")
    checked = cli("publish", str(dest), "--verify", "--json", cwd=project)  # put back from the build, then verified
    assert checked.returncode == 0 and json.loads(checked.stdout)["repaired"] == ["scale/1/model.py"], checked.stderr
    assert (dest / "scale" / "1" / "model.py").read_bytes() == original and json.loads(checked.stdout)[
        "verified"
    ] is True

    # what an interrupted publish of other content leaves: a version folder above the manifest's (no config serves it)
    (dest / "scale" / "2").mkdir()
    (dest / "scale" / "2" / "model.py").write_text("half of another model")
    (dest / "scale" / "2" / "left_over.bin").write_bytes(b"x" * 10)
    build_version(project, k=2.0, expected=2.0)
    second = cli("publish", str(dest), "--verify", "--json", cwd=project)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["published"] == {"pipeline": [2], "scale": [2]}  # the folder's number reused
    assert sorted(p.name for p in (dest / "scale" / "2").iterdir()) == ["model.py"]  # the left-over file removed
    assert "K = 2.0" in (dest / "scale" / "2" / "model.py").read_text()
    assert "versions: 1" in (dest / "scale" / "config.pbtxt").read_text()  # the live config untouched until rollout

    plain = cli("publish", str(dest), cwd=project)  # nothing new: still the hint, copyable as it is
    assert plain.returncode == 0, plain.stderr
    [hint] = [line for line in plain.stdout.splitlines() if line.startswith("serve it with: tritonserver ")]
    assert hint.endswith(f"--model-repository={dest} --model-control-mode=explicit '--load-model=*'"), hint

    # version 1's file is not in this build (K = 2.0): publish cannot put it back, --verify names it
    (dest / "scale" / "1" / "model.py").write_text("K = 1.5 tampered")
    checked = cli("publish", str(dest), "--verify", cwd=project)
    assert checked.returncode == 2 and "scale/1/model.py" in checked.stderr, checked.stderr


def test_publish_without_repository_is_one_line(tmp_path: Path) -> None:
    result = cli("publish", str(tmp_path / "out"), "--repository", str(tmp_path / "missing"), cwd=REPO_ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "model repository not found" in result.stderr


@pytest.mark.parametrize("command", [("publish",), ("rollout", "--server", "127.0.0.1:1")])
def test_an_endpoint_url_boto3_cannot_parse_is_one_line(command: tuple[str, ...], tmp_path: Path) -> None:
    """botocore raises ValueError ("Invalid endpoint") for a URL without a scheme: one located line, not a traceback."""
    result = cli(command[0], f"s3://{BUCKET}/{PREFIX}", "--endpoint-url", "127.0.0.1:9000", *command[1:], cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        f"s3://{BUCKET}/{PREFIX}: --endpoint-url: not a URL: '127.0.0.1:9000'; "
        "write it as SCHEME://HOST[:PORT], e.g. http://127.0.0.1:9000"], result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written
